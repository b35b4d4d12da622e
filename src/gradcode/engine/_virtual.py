"""The virtual executor: workers answer at the injected arrival times on a virtual clock; nothing
sleeps.  With ``workers`` (objects with ``run(round, params, task) -> Result``, e.g. the
runtime's PyTorch workers) a received worker's coded gradient is computed in-process when the
master takes it; without, results carry no vectors (the simulator).  A worker's real compute
time is not modelled, so no worker is ever busy here: this executor is the prediction the real
backends are tested against (``engine._executor`` has the contract).
"""

from __future__ import annotations

import numpy as np

from ._executor import Executor, Result


class VirtualExecutor(Executor):
    """``n`` workers answering at their injected delays on a virtual clock (module docstring);
    ``workers[i].run(round, params, task) -> Result`` computes worker ``i``'s result when taken.

    >>> from gradcode.engine import Result
    >>> class Scale:                                       # a worker: params times its index
    ...     def __init__(self, i):
    ...         self.i = i
    ...     def run(self, round, params, task):
    ...         return Result(round, self.i, [params * self.i], [0.0])
    >>> ex = VirtualExecutor(2, [Scale(0), Scale(1)])
    >>> ex.submit(0, np.ones(2), [[None], [None]], delays=[1.0, 0.5])
    >>> [(r.worker, r.coded[0].tolist(), r.arrived_s) for r in ex.poll(2.0, wanted=2)]
    [(1, [1.0, 1.0], 0.5), (0, [0.0, 0.0], 1.0)]
    >>> ex.elapsed()                                       # the clock is at the last arrival
    1.0
    """
    name = "virtual"

    def __init__(self, n: int, workers=None):
        super().__init__(n)
        self.workers = workers
        self._queue: list[tuple[float, int]] = []
        self._clock = 0.0

    @classmethod
    def from_config(cls, options, workers):
        """The runtime's ``virtual`` backend: ``workers(i)`` computes in this process, one at a
        time (so all share one replica: ``sharing(1)``); of ``options`` it takes the device
        only, which ``workers`` already computes on."""
        make = workers.sharing(1)
        ex = cls(workers.n, [make(i) for i in range(workers.n)])
        ex.description = ("virtual: the injected delays on a virtual clock, gradients in this "
                          "process")
        return ex

    def submit(self, round: int, params, tasks, delays, skip=()) -> None:
        delays = np.asarray(delays, float)
        order = np.argsort(delays, kind="stable")          # ties: lowest worker index first
        self._queue = [(float(delays[i]), int(i)) for i in order if int(i) not in skip]
        self._queue.reverse()                              # pop() takes the earliest
        self._round, self._params, self._tasks, self._clock = round, params, tasks, 0.0

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
            res = Result.failed(self._round, i, exc)
        res.seconds = res.arrived_s = t
        return res

    def elapsed(self) -> float:
        return self._clock

    def residuals(self, wanted: list) -> list:
        if self.workers is None:
            return super().residuals(wanted)
        return [self.workers[i].residual(r, k) for r, i, k in wanted]

    def end_round(self, round: int) -> None:
        self._queue = []

    def close(self) -> None:
        self._queue = []
