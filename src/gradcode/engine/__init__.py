"""The round engine: one master loop for every scheme, driven by a virtual clock, local threads
or Ray (``gradcode.runtime`` brings the last two).

``Loop`` runs a round: planner -> executor -> wait policy -> planner told who returned ->
decode -> combine -> learner step -> ``Record``.  ``VirtualExecutor`` answers at the injected
arrival times on a virtual clock; the wait policies (one definition each) and the random-stream
layout (``streams``, ``decode_rng``) are shared by the simulator and the runtime, so a simulated
run and a real run of one seed inject the same delays into the same workers.  Imports neither
torch nor ray.
"""

from ._clock import STREAMS, arrival_times, decode_rng, message_layout, start_models, streams
from ._defaults import design_wait, pointless_wait, resolve_wait
from ._drive import Stopper, StopTraining, drive, jobs_for
from ._loop import Loop, RoundInfo, Step, combine
from ._accounting import WorkerAccount
from ._executor import (BackendOptions, Executor, Outcome, Result, WorkerFault, is_fault,
                        is_user_error, user_error)
from ._virtual import VirtualExecutor
from ._wait import (WAIT_HELP, All, Deadline, Fastest, FirstOf, MuRule, UntilCovered,
                    UntilDecodable, WaitPolicy, parse_wait)

__all__ = ["All", "BackendOptions", "Deadline", "Executor", "Fastest", "FirstOf", "Loop", "MuRule", "Outcome", "Result", "RoundInfo",
           "STREAMS", "Step", "StopTraining", "Stopper", "UntilCovered", "UntilDecodable", "VirtualExecutor", "WAIT_HELP", "WaitPolicy",
           "WorkerAccount", "WorkerFault", "arrival_times", "is_fault", "combine", "is_user_error", "user_error", "decode_rng", "design_wait", "drive", "jobs_for", "message_layout", "parse_wait", "pointless_wait", "resolve_wait",
           "start_models", "streams"]
