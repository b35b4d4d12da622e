"""What the real backends share: the wall clock, and one definition of a worker's states.

``RealTimeExecutor`` is ``engine.Executor`` on the wall clock (simpy's habit: the real-time
environment overrides how time passes, nothing else): ``poll`` waits in real time, stamps the
arrivals and counts the time spent blocked; a backend says only how to wait (``_wait``).

``WorkerStates`` says which logical workers are computing, for the local executor (in the
master's process) and for each Ray host (in the actor's): a call of round ``r`` answers BUSY
when its worker is computing; otherwise it sleeps its injected delay and then ``start``s, which
refuses once round ``r`` has ended (the call is cancelled, nothing marked); ``finish`` clears the
mark.  So a worker is busy exactly while it computes, and a call cancelled while asleep or
queued leaves no state behind.
"""

from __future__ import annotations

import abc
import queue
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..engine import Executor, Outcome, Result, WorkerFault


class RealTimeExecutor(Executor):
    """``engine.Executor`` on the wall clock."""

    def __init__(self, n: int):
        super().__init__(n)
        self.t0 = time.perf_counter()          # when the current round started

    def start_clock(self) -> None:
        self.t0 = time.perf_counter()

    def elapsed(self) -> float:
        return time.perf_counter() - self.t0

    def exclude(self, seconds: float) -> None:
        self.t0 += seconds

    def poll(self, until: float, wanted: int = 1) -> list[Result]:
        """Results that arrived by ``until`` seconds after the round started, waiting for the
        first (``wanted`` is a hint); nothing once ``until`` has passed."""
        timeout = until - self.elapsed()
        if timeout <= 0:
            return []
        t0 = time.perf_counter()
        try:
            out = self._wait(min(timeout, 1e6), max(1, wanted))
        finally:
            self.blocked_s += time.perf_counter() - t0
        now = self.elapsed()
        for res in out:
            res.arrived_s = now
        return out

    @abc.abstractmethod
    def _wait(self, timeout: float, wanted: int) -> list[Result]:
        """Wait up to ``timeout`` seconds for results (at least one), return those in."""


def drain(results: queue.Queue, timeout: float) -> list:
    """The first item of ``results`` to come within ``timeout`` seconds and every one in after
    it (none if nothing came): a real-time executor's ``_wait`` on its queue of results."""
    try:
        out = [results.get(timeout=timeout)]
    except queue.Empty:
        return []
    while True:
        try:
            out.append(results.get_nowait())
        except queue.Empty:
            return out


class WorkerStates:
    """Which workers are computing which round (module doc); thread-safe."""

    def __init__(self):
        self._lock = threading.Lock()
        self._computing: dict[int, int] = {}    # worker -> the round it computes
        self._ended = -1                         # every round up to this one is over

    def busy(self, i: int) -> bool:
        with self._lock:
            return i in self._computing

    def start(self, i: int, round: int) -> bool:
        """Worker ``i`` begins computing ``round``: False (and nothing marked) if that round is
        over or ``i`` is computing another."""
        with self._lock:
            if round <= self._ended or i in self._computing:
                return False
            self._computing[i] = round
            return True

    def finish(self, i: int) -> None:
        with self._lock:
            self._computing.pop(i, None)

    def end(self, round: int) -> None:
        """Rounds up to ``round`` are over: their calls still asleep or queued never compute."""
        with self._lock:
            self._ended = max(self._ended, round)

    def computing(self) -> dict[int, int]:
        """``{worker: round}`` of the workers computing now."""
        with self._lock:
            return dict(self._computing)


def busy(round: int, i: int) -> Result:
    return Result.without(round, i, Outcome.BUSY, "busy with an earlier round")


def cancelled(round: int, i: int) -> Result:
    return Result.without(round, i, Outcome.CANCELLED, "the round ended first")


def compute(states: WorkerStates, worker, round: int, params, task) -> Result:
    """Worker ``worker`` computes ``task`` of ``round`` if that round is still on (marked
    computing meanwhile); a raised exception is a FAILED result (carrying the exception when
    the user's model, loss or data raised it)."""
    i = worker.index
    if not states.start(i, round):
        return cancelled(round, i)
    try:
        return worker.run(round, params, task)
    except Exception as exc:                    # a failed worker is a straggler this round
        return Result.failed(round, i, exc)
    finally:
        states.finish(i)


class Dispatcher:
    """The calls of a round on the logical workers ``workers`` (index -> worker) of one process
    (module doc); each result, BUSY and cancelled ones included, goes to ``deliver``.
    ``failures`` (worker -> rounds left to fail) injects faults: the worker's next
    computations raise ``WorkerFault``."""

    def __init__(self, workers, concurrency: int, deliver):
        self.workers, self.deliver = workers, deliver
        self.states = WorkerStates()
        # a worker holds at most one thread asleep, plus one whose sleep was just cancelled
        self.sleepers = ThreadPoolExecutor(max_workers=2 * len(workers),
                                           thread_name_prefix="gc-delay")
        self.computers = ThreadPoolExecutor(max_workers=concurrency,
                                            thread_name_prefix="gc-worker")
        self.events: dict[int, threading.Event] = {}
        self.failures: dict[int, int] = {}

    def submit(self, round: int, params, tasks, delays, order, skip=()) -> None:
        """Start ``round`` on the workers of ``order`` (their indices, or ``n`` for all of
        ``0 .. n-1``) not in ``skip``, queued in an order drawn afresh each round (with fewer
        computing threads than workers, no worker is always served first); one still computing
        an earlier round answers BUSY at once."""
        ev = self.events[round] = threading.Event()
        for i in np.random.default_rng(round).permutation(order).tolist():
            if i in skip:
                continue
            if self.states.busy(i):
                self.deliver(busy(round, i))
                continue
            call = (self.workers[i], round, params, tasks[i], time.perf_counter())
            if delays[i] > 0:
                self.sleepers.submit(self._sleep, float(delays[i]), ev, call)
            else:
                self.computers.submit(self._run, *call)

    def _sleep(self, delay, ev, call):
        if not ev.wait(delay):                       # else the round is over: cancelled
            self.computers.submit(self._run, *call)

    def _run(self, w, round, params, task, t0):
        import torch
        torch.set_num_threads(1)
        if self.failures.get(w.index, 0) > 0:
            self.failures[w.index] -= 1
            w = _Failing(w)
        res = compute(self.states, w, round, params, task)
        res.seconds = time.perf_counter() - t0
        self.deliver(res)

    def end(self, round: int) -> None:
        """Rounds up to ``round`` are over: their calls asleep wake up and return, those queued
        never compute."""
        self.states.end(round)
        for r in [r for r in self.events if r <= round]:
            self.events.pop(r).set()

    def close(self) -> None:
        for ev in self.events.values():
            ev.set()
        self.sleepers.shutdown(wait=True, cancel_futures=True)
        self.computers.shutdown(wait=True, cancel_futures=True)


class _Failing:
    """Fault injection: a worker whose machine fails in its next computation."""

    def __init__(self, worker):
        self.index = worker.index

    def run(self, round, params, task):
        raise WorkerFault(f"worker {self.index}: injected fault")
