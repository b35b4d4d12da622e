"""The embedded executor: logical workers as threads of this process (torch releases the GIL).

A worker's call sleeps its injected delay on a thread of its own, as a wait on a per-round event
(so ending a round cancels it), then queues for one of ``concurrency`` computing threads (those
without a delay in an order drawn afresh each round; ``Dispatcher``, shared with the torch
hosts): at most that many workers compute at once,
sharing as many model replicas (``GradientWorkers.sharing``; default ``default_concurrency``: one
on a GPU, the cores on a CPU).  A call still queued when its
round ends never computes (``WorkerStates``, shared with the Ray hosts), and a worker still
computing an earlier round answers BUSY and sits the new round out (a straggler there).
"""

from __future__ import annotations

import queue

import numpy as np
import torch

from ._base import Dispatcher, RealTimeExecutor, drain
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
        self.results: queue.Queue = queue.Queue()
        self.dispatch = Dispatcher(self.workers, self.concurrency, self.results.put)
        self.states = self.dispatch.states
        self.failures = self.dispatch.failures  # worker -> rounds left to fail (fault injection)

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
        for f in [self.dispatch.computers.submit(w.warm_up) for w in self.workers]:
            f.result()

    def submit(self, round: int, params, tasks: list, delays, skip=()) -> None:
        """Start the round on every worker not in ``skip`` (``Dispatcher``); one still computing
        an earlier round answers BUSY at once."""
        self.start_clock()
        if params is not None:            # the master steps its own: a copy, on the device, once
            params = torch.tensor(np.asarray(params), dtype=torch.float32, device=self.device)
        self.dispatch.submit(round, params, tasks, delays, self.n, skip)

    def _wait(self, timeout: float, wanted: int) -> list[Result]:
        return drain(self.results, timeout)

    def residuals(self, wanted: list) -> list:
        """Computed again on the computing threads, as the messages were (``residual``)."""
        pool = self.dispatch.computers
        done = [pool.submit(_residual, self.workers[i], r, k) for r, i, k in wanted]
        return [f.result() for f in done]

    def computing(self) -> dict[int, int]:
        return self.states.computing()

    def end_round(self, round: int) -> None:
        self.dispatch.end(round)          # queued calls never compute, sleeping ones return

    def close(self) -> None:
        self.dispatch.close()


def _residual(w, r: int, k: int):
    torch.set_num_threads(1)
    return w.residual(r, k)
