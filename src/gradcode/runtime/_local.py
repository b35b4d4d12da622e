"""The embedded executor: logical workers as threads of this process (torch releases the GIL).

A worker's call sleeps its injected delay on a thread of its own, as a wait on a per-round event
(so ending a round cancels it), then queues for one of ``concurrency`` computing threads (those
without a delay in an order drawn afresh each round): at most that many workers compute at once,
sharing as many model replicas (``GradientWorkers.sharing``; default ``default_concurrency``: one
on a GPU, the cores on a CPU).  A call still queued when its
round ends never computes (``WorkerStates``, shared with the Ray hosts), and a worker still
computing an earlier round answers BUSY and sits the new round out (a straggler there).
"""

from __future__ import annotations

import queue
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch

from ..engine import WorkerFault
from ._base import RealTimeExecutor, WorkerStates, busy, compute, drain
from ._worker import Result, concurrency_for, map_large_buffers


class LocalExecutor(RealTimeExecutor):
    name = "local"

    def __init__(self, factory, concurrency: int | None = None):
        super().__init__(factory.n)
        map_large_buffers()
        self.concurrency = concurrency_for(factory, self.n, concurrency)
        make = factory.sharing(self.concurrency, master=True)
        self.device = torch.device(getattr(factory, "device", "cpu"))
        self.workers = [make(i) for i in range(self.n)]
        # a worker holds at most one thread asleep, plus one whose sleep was just cancelled
        self.sleepers = ThreadPoolExecutor(max_workers=2 * self.n, thread_name_prefix="gc-delay")
        self.computers = ThreadPoolExecutor(max_workers=self.concurrency,
                                            thread_name_prefix="gc-worker")
        self.results: queue.Queue = queue.Queue()
        self.states = WorkerStates()
        self.cancelled: dict[int, threading.Event] = {}
        self.failures: dict[int, int] = {}     # worker -> rounds left to fail (fault injection)

    @classmethod
    def from_config(cls, options, workers):
        """Of ``options`` (``engine.BackendOptions``) it takes ``concurrency``, and the device,
        which ``workers`` computes on."""
        ex = cls(workers, options.concurrency)
        ex.description = f"local: threads in this process, {ex.concurrency} computing at once"
        return ex

    def ping(self) -> None:
        """Warm every worker up before round 0 (its thread, its replica's first backward pass),
        so that start-up is not timed as a round (as Ray's actors start before it)."""
        for f in [self.computers.submit(w.warm_up) for w in self.workers]:
            f.result()

    def submit(self, round: int, params, tasks: list, delays, skip=()) -> None:
        """Start the round on every worker not in ``skip``; one still computing an earlier
        round answers BUSY at once."""
        self.start_clock()
        ev = self.cancelled[round] = threading.Event()
        if params is not None:            # the master steps its own: a copy, on the device, once
            params = torch.tensor(np.asarray(params), dtype=torch.float32, device=self.device)
        # queued in an order drawn afresh each round: with fewer computing threads than
        # workers, no worker is always served first
        for i in np.random.default_rng(round).permutation(self.n).tolist():
            w = self.workers[i]
            if i in skip:
                continue
            if self.states.busy(i):
                self.results.put(busy(round, i))
                continue
            call = (w, round, params, tasks[i], time.perf_counter())
            if delays[i] > 0:
                self.sleepers.submit(self._sleep, float(delays[i]), ev, call)
            else:
                self.computers.submit(self._run, *call)

    def _sleep(self, delay, ev, call):
        if not ev.wait(delay):                       # else the round is over: cancelled
            self.computers.submit(self._run, *call)

    def _run(self, w, round, params, task, t0):
        torch.set_num_threads(1)
        if self.failures.get(w.index, 0) > 0:
            self.failures[w.index] -= 1
            w = _Failing(w)
        res = compute(self.states, w, round, params, task)
        res.seconds = time.perf_counter() - t0
        self.results.put(res)

    def _wait(self, timeout: float, wanted: int) -> list[Result]:
        return drain(self.results, timeout)

    def residuals(self, wanted: list) -> list:
        """Computed again on the computing threads, as the messages were (``residual``)."""
        done = [self.computers.submit(_residual, self.workers[i], r, k) for r, i, k in wanted]
        return [f.result() for f in done]

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
        self.sleepers.shutdown(wait=True, cancel_futures=True)
        self.computers.shutdown(wait=True, cancel_futures=True)


def _residual(w, r: int, k: int):
    torch.set_num_threads(1)
    return w.residual(r, k)


class _Failing:
    """Fault injection: a worker whose machine fails in its next computation."""

    def __init__(self, worker):
        self.index = worker.index

    def run(self, round, params, task):
        raise WorkerFault(f"worker {self.index}: injected fault")
