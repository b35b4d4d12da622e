"""Scripted workers for the executor contract suite: each logical worker computes for a set
number of real seconds (a sleep, so it is busy meanwhile), raises, or returns NaN in the rounds a
``Script`` names.  A ``Script`` is the worker factory every executor takes (``script(i)`` is
worker ``i``); Ray ships it by value (``register``)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from gradcode.engine import Outcome, Result, WorkerFault


@dataclass(frozen=True)
class Script:
    n: int
    seconds: float = 0.0                              # every gradient's compute time
    slow: dict = field(default_factory=dict)          # (worker, round) -> compute seconds
    raises: frozenset = frozenset()                   # (worker, round): run raises
    nan: frozenset = frozenset()                      # (worker, round): a non-finite result

    def __call__(self, i: int) -> "ScriptedWorker":
        return ScriptedWorker(i, self)

    # what the Ray backend asks of a worker factory: this one ships as it is
    def only(self, indices):
        return self

    def shipped(self, put):
        return self

    def landed(self, get):
        return self

    def sharing(self, size, master=False):
        return self


class ScriptedWorker:
    def __init__(self, index: int, script: Script):
        self.index, self.script = index, script

    def warm_up(self) -> None:
        pass

    def run(self, round: int, params, task) -> Result:
        s, key = self.script, (self.index, round)
        seconds = s.slow.get(key, s.seconds)
        if seconds:
            time.sleep(seconds)                       # really computing: busy meanwhile
        if key in s.raises:
            raise WorkerFault(f"worker {self.index}: scripted fault in round {round}")
        value = np.nan if key in s.nan else float(self.index)
        res = Result(round, self.index, [np.full(3, value)] * len(task), [0.0] * len(task))
        if key in s.nan:
            res.status = Outcome.NONFINITE
        return res


def register() -> None:
    """Let Ray's actors unpickle this module's classes without importing ``tests``."""
    import sys

    import ray
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
