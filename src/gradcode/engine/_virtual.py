"""The virtual executor: workers answer at the injected arrival times on a virtual clock; nothing
sleeps.  With ``workers`` (objects with ``run(round, params, task) -> Result``, e.g. the
runtime's PyTorch workers) a received worker's coded gradient is computed in-process when the
master takes it; without, results carry no vectors (the simulator).

The executor contract the loop drives (the local and Ray executors keep it too):
``submit(round, params, tasks, delays, skip) -> busy workers``; ``poll(until, wanted)`` the
next results that arrived by ``until`` seconds after the round started (at most ``wanted`` of
them, at least one unless ``until`` passed with none); ``elapsed()`` seconds since the round
started; ``end_round(round)``; ``close()``; ``blocked_s`` (time spent waiting on workers) and
``notes`` (what the master should log).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Result:
    """What a worker sends back: one coded vector (and coded loss) per mini-task."""
    round: int
    worker: int
    coded: list            # ndarray per mini-task (None: nothing computed, e.g. the simulator)
    loss: list             # coded loss sums per mini-task
    seconds: float = 0.0
    error: str | None = None
    finite: bool = True    # False: non-finite values, an erasure (flagged by the worker)
    arrived_s: float = 0.0 # seconds after the round started that the master received it


class VirtualExecutor:
    name = "virtual"

    def __init__(self, n: int, workers=None):
        self.n, self.workers = n, workers
        self.blocked_s = 0.0
        self.notes: list[str] = []
        self._queue: list[tuple[float, int]] = []
        self._clock = 0.0

    def ping(self) -> None:
        """Nothing to start."""

    def where(self) -> dict[str, list[int]]:
        """``{node: its workers}``: every worker on the virtual clock of this process."""
        return {"virtual": list(range(self.n))}

    nodes_seen = {"virtual"}

    def submit(self, round: int, params, tasks, delays, skip=()) -> list[int]:
        delays = np.asarray(delays, float)
        order = np.argsort(delays, kind="stable")          # ties: lowest worker index first
        self._queue = [(float(delays[i]), int(i)) for i in order if int(i) not in skip]
        self._queue.reverse()                              # pop() takes the earliest
        self._round, self._params, self._tasks, self._clock = round, params, tasks, 0.0
        return []

    def poll(self, until: float, wanted: int = 1) -> list[Result]:
        out = []
        while self._queue and self._queue[-1][0] <= until and len(out) < max(1, wanted):
            t, i = self._queue.pop()
            self._clock = t
            out.append(self._result(i, t))
        if not out:
            self._clock = max(self._clock, until) if np.isfinite(until) else self._clock
        return out

    def _result(self, i: int, t: float) -> Result:
        task = self._tasks[i]
        if self.workers is None:
            return Result(self._round, i, [None] * len(task), [0.0] * len(task), seconds=t,
                          arrived_s=t)
        try:
            res = self.workers[i].run(self._round, self._params, task)
        except Exception as exc:                           # a failed worker is a straggler
            res = Result(self._round, i, [], [], error=f"{type(exc).__name__}: {exc}")
        res.seconds = res.arrived_s = t
        return res

    def elapsed(self) -> float:
        return self._clock

    def end_round(self, round: int) -> None:
        self._queue = []

    def close(self) -> None:
        self._queue = []
