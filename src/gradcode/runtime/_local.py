"""The embedded executor: logical workers as threads of this process (torch releases the GIL).

Injected delays are waits on a per-round event, so ending a round cancels them; a worker still
computing an earlier round answers BUSY and sits the new round out (a straggler there).  Which
worker computes is ``WorkerStates``' (shared with the Ray hosts).
"""

from __future__ import annotations

import queue
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import torch

from ..engine import WorkerFault
from ._base import RealTimeExecutor, WorkerStates, busy, compute
from ._worker import Result


class LocalExecutor(RealTimeExecutor):
    name = "local"

    def __init__(self, workers: list, threads: int | None = None):
        super().__init__(len(workers))
        self.workers = workers
        # a worker holds at most one thread computing, plus one whose sleep was just cancelled
        self.pool = ThreadPoolExecutor(max_workers=threads or 2 * self.n,
                                       thread_name_prefix="gc-worker")
        self.results: queue.Queue = queue.Queue()
        self.states = WorkerStates()
        self.cancelled: dict[int, threading.Event] = {}
        self.failures: dict[int, int] = {}     # worker -> rounds left to fail (fault injection)

    @classmethod
    def from_config(cls, cfg, workers):
        return (cls([workers(i) for i in range(workers.n)], getattr(cfg, "threads", None)),
                "local: threads in this process")

    def ping(self) -> None:
        """Warm every worker up before round 0 (its thread, its replica's first backward pass),
        so that start-up is not timed as a round (as Ray's actors start before it)."""
        for f in [self.pool.submit(w.warm_up) for w in self.workers]:
            f.result()

    def submit(self, round: int, params, tasks: list, delays, skip=()) -> None:
        """Start the round on every worker not in ``skip``; one still computing an earlier
        round answers BUSY at once."""
        self.start_clock()
        ev = self.cancelled[round] = threading.Event()
        params = params.copy() if params is not None else None   # the master steps its copy
        for i, w in enumerate(self.workers):
            if i in skip:
                continue
            if self.states.busy(i):
                self.results.put(busy(round, i))
                continue
            self.pool.submit(self._run, w, round, params, tasks[i], float(delays[i]), ev)

    def _run(self, w, round, params, task, delay, ev):
        torch.set_num_threads(1)
        t0 = time.perf_counter()
        if delay > 0 and ev.wait(delay):
            return                                   # round over: the straggler is cancelled
        if self.failures.get(w.index, 0) > 0:
            self.failures[w.index] -= 1
            w = _Failing(w)
        res = compute(self.states, w, round, params, task)
        res.seconds = time.perf_counter() - t0
        self.results.put(res)

    def _wait(self, timeout: float, wanted: int) -> list[Result]:
        try:
            out = [self.results.get(timeout=timeout)]
        except queue.Empty:
            return []
        while True:
            try:
                out.append(self.results.get_nowait())
            except queue.Empty:
                return out

    def residuals(self, wanted: list) -> list:
        return [self.workers[i].residual(r, k) for r, i, k in wanted]

    def computing(self) -> dict[int, int]:
        return self.states.computing()

    def end_round(self, round: int) -> None:
        self.states.end(round)                       # queued calls of the round never compute
        ev = self.cancelled.pop(round, None)
        if ev is not None:
            ev.set()                                 # sleeping ones wake up and return

    def close(self) -> None:
        for ev in self.cancelled.values():
            ev.set()
        self.pool.shutdown(wait=True, cancel_futures=True)


class _Failing:
    """Fault injection: a worker whose machine fails in its next computation."""

    def __init__(self, worker):
        self.index = worker.index

    def run(self, round, params, task):
        raise WorkerFault(f"worker {self.index}: injected fault")
