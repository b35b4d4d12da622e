"""Sequential gradient coding (paper 4): coding across workers *and* rounds.

The master computes gradients ``g(0..J-1)``; job ``t`` starts in round ``t`` and must be decoded
by the end of round ``t + T``.  Schemes (through ``gradcode.make_code``):

* ``gc-seq`` (n, s): (n, s)-GC round by round, ``T = 0`` (Sec. 3.1);
* ``sr-sgc`` (n, B, W, lam): Algorithm 1, ``T = B`` (Sec. 3.2, Prop. 3.1);
* ``m-sgc`` (n, B, W, lam): Algorithm 2, ``T = W - 2 + B`` (Sec. 3.3, Prop. 3.2, Remark 3.2);
* ``sr-sgc-rep``, ``m-sgc-rep``: the same over GC-Rep (App. G, Algorithm 3).

Each scheme is a small immutable object of the scheme protocol of ``gradcode.Code``
(``n_workers``, ``sender``, ``n_machines``, ``partition_sizes``, ``load``, ``T``, ``describe()``,
``planner``) with ``params``, ``base_code``, ``design_model``, ``conforms``; the paper's burst
length ``B`` is the attribute ``burst`` (``.B`` is only ever a coding matrix).
``scheme.planner(jobs)`` is the master-side round planner (``Planner``: assign / waitout /
report / decodable; wait-out rules ``WAITOUT_RULES``, checked by ``check_rule``); ``replay``
runs a straggler pattern through it, ``replay_many`` many patterns or parameter sets at once.
``single_round(code)`` (or ``code.planner(jobs)``) drives any single-round code through the same
contract (the ``T = 0`` case).
"""

from ._base import MiniTask, SequentialScheme
from ._gc import GCSeq, SingleRound, single_round
from ._msgc import MSGC, MSGCRep
from ._planner import WAITOUT_RULES, Planner, check_rule
from ._replay import Pipeline, Replay, ReplaySummary, pipeline, replay, replay_many
from ._srsgc import SRSGC, SRSGCRep

__all__ = ["GCSeq", "MSGC", "MSGCRep", "MiniTask", "Pipeline", "Planner", "Replay",
           "ReplaySummary", "SRSGC", "SRSGCRep", "SequentialScheme", "SingleRound",
           "WAITOUT_RULES", "check_rule", "pipeline", "replay", "replay_many", "single_round"]
