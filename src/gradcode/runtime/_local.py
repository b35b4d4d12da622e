"""The embedded executor: logical workers as threads of this process (torch releases the GIL).

Injected delays are waits on a per-round event, so ending a round cancels them; a worker still
computing an earlier round is busy and sits the new round out (it is a straggler there).
"""

from __future__ import annotations

import queue
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import torch

from ._worker import GradientWorker, Result


class LocalExecutor:
    name = "local"

    def __init__(self, workers: list[GradientWorker], threads: int | None = None):
        self.workers = workers
        self.n = len(workers)
        self.pool = ThreadPoolExecutor(max_workers=threads or self.n, thread_name_prefix="gc-worker")
        self.results: queue.Queue = queue.Queue()
        self.busy = [None] * self.n
        self.cancelled: dict[int, threading.Event] = {}
        self.failures: dict[int, int] = {}     # worker -> rounds left to fail (fault injection)
        self.sleeping = [False] * self.n
        self.blocked_s = 0.0                   # time spent blocked waiting for workers
        self.t0 = time.perf_counter()          # when the current round started
        self.notes: list[str] = []             # what the master should log (nothing here)

    def ping(self) -> None:
        """Warm every worker up before round 0 (its thread, its replica's first backward pass),
        so that start-up is not timed as a round (as Ray's actors start before it)."""
        for f in [self.pool.submit(w.warm_up) for w in self.workers]:
            f.result()

    def where(self) -> dict[str, list[int]]:
        """``{node: its workers}``: every worker in this process."""
        return {"local": list(range(self.n))}

    nodes_seen = {"local"}

    def submit(self, round: int, params, tasks: list, delays, skip=()) -> list[int]:
        """Start the round on every idle worker not in ``skip``; returns the busy ones (still
        computing an earlier round: stragglers this round)."""
        self.t0 = time.perf_counter()
        ev = self.cancelled[round] = threading.Event()
        params = params.copy()                       # the master steps its copy meanwhile
        busy = []
        for i, w in enumerate(self.workers):
            if i in skip:
                continue
            f = self.busy[i]
            if f is not None and not f.done():
                busy.append(i)
                continue
            self.busy[i] = self.pool.submit(self._run, w, round, params, tasks[i], float(delays[i]), ev)
        return busy

    def _run(self, w, round, params, task, delay, ev):
        torch.set_num_threads(1)
        t0 = time.perf_counter()
        self.sleeping[w.index] = True
        cancelled = delay > 0 and ev.wait(delay)
        self.sleeping[w.index] = False
        if cancelled:
            return                                   # round over: the straggler is cancelled
        try:
            if self.failures.get(w.index, 0) > 0:
                self.failures[w.index] -= 1
                raise RuntimeError(f"worker {w.index}: injected fault")
            res = w.run(round, params, task)
        except Exception as exc:                     # a failed worker is a straggler this round
            res = Result(round, w.index, [], [], error=f"{type(exc).__name__}: {exc}")
        res.seconds = time.perf_counter() - t0
        self.results.put(res)

    def elapsed(self) -> float:
        return time.perf_counter() - self.t0

    def poll(self, until: float, wanted: int = 1) -> list[Result]:
        """Every finished result, waiting until ``until`` seconds after the round started for
        the first (``wanted`` is a hint the in-process queue does not need); nothing once
        ``until`` has passed."""
        t0 = time.perf_counter()
        timeout = until - (t0 - self.t0)
        if timeout <= 0:
            return []
        try:
            out = [self.results.get(timeout=min(timeout, 1e6))]
        except queue.Empty:
            return []
        finally:
            self.blocked_s += time.perf_counter() - t0
        while True:
            try:
                out.append(self.results.get_nowait())
            except queue.Empty:
                now = self.elapsed()
                for res in out:
                    res.arrived_s = now
                return out

    def end_round(self, round: int) -> None:
        ev = self.cancelled.pop(round, None)
        if ev is not None:
            ev.set()
        for i, f in enumerate(self.busy):            # let cancelled sleepers return, so that
            if f is not None and self.sleeping[i]:   # only a worker still computing is busy
                try:
                    f.result(timeout=0.05)
                except Exception:
                    pass

    def close(self) -> None:
        for ev in self.cancelled.values():
            ev.set()
        self.pool.shutdown(wait=True, cancel_futures=True)
