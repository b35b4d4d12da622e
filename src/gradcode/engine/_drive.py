"""Running a loop for many rounds: how many jobs a run of ``rounds`` rounds holds, the round
after round driver (records, the per-round callback, divergence), and the SIGTERM / Ctrl-C
catcher that ends a run after its current round."""

from __future__ import annotations

import math

from ..records import Record
from ._loop import Loop


def jobs_for(scheme, rounds: int) -> int:
    """Jobs in a run of ``rounds`` rounds: ``rounds - T`` (paper 4: job ``t`` is decoded by
    round ``t + T``); ValueError naming ``rounds`` when a sequential scheme gets none.

    >>> import gradcode
    >>> jobs_for(gradcode.make_code("isgc-cr", n=4, c=2), 10)       # T = 0: a job per round
    10
    >>> jobs_for(gradcode.make_code("sr-sgc", n=6, B=2, W=3, lam=2), 10)   # T = 2
    8
    """
    T = int(scheme.T)
    if T and rounds <= T:
        raise ValueError(f"rounds: {scheme.name} decodes job t by round t + T (T = {T}), so rounds "
                         f"= jobs + T must be at least {T + 1}, got {rounds}")
    return rounds - T


class StopTraining(Exception):
    """Raised by an ``on_round`` callback to end a run cleanly after the round it was given (early
    stopping): the round is kept, checkpointed and written with the run's outputs, ``train``
    returns normally (``TrainResult.stopped``), and ``--resume`` continues the run.

    >>> StopTraining("the held-out loss stopped falling").args[0]
    'the held-out loss stopped falling'
    """


def drive(loop: Loop, rounds: int, *, start: int = 0, elapsed: float = 0.0, on_round=None,
          stop=None):
    """Run rounds ``start .. rounds - 1``; ``(records, interrupted, diverged)``.
    ``on_round(r, record, info)`` after each round (write it, checkpoint, update a progress
    bar).  Ctrl-C ends the run with the finished rounds kept (``interrupted`` True); so does
    ``stop()`` turning true after a round (``Stopper``: SIGTERM, or Ctrl-C caught to finish the
    round), and a learner whose loss is no longer finite (``diverged``: that round, else
    None).  ``StopTraining`` raised by ``on_round`` ends it after that round, neither
    interrupted nor diverged: ``loop.stopped`` then holds the exception.

    >>> import gradcode
    >>> from gradcode.engine import VirtualExecutor, parse_wait, start_models, streams
    >>> from gradcode.stragglers import Compute, parse_delay
    >>> code = gradcode.make_code("isgc-cr", n=4, c=2)
    >>> delay, compute, rng = parse_delay("exp:1"), Compute(0.5), streams(0)["delay"]
    >>> start_models(code, delay, compute, rng)
    >>> loop = Loop(code, code.planner(5), VirtualExecutor(4), parse_wait("fastest:2"),
    ...             delay, compute, rng)
    >>> done = []
    >>> records, interrupted, diverged = drive(loop, 5,
    ...                                        on_round=lambda r, rec, info: done.append(r))
    >>> len(records), interrupted, diverged, done
    (5, False, None, [0, 1, 2, 3, 4])
    >>> [rec.workers_arrived for rec in records]
    [2, 2, 2, 2, 2]
    >>> drive(loop, 8, start=5, stop=lambda: True)          # told to stop before round 5
    ([], True, None)
    """
    records: list[Record] = []
    try:
        for r in range(start, rounds):
            if stop is not None and stop():
                return records, True, None
            rec, info = loop.round(r)
            elapsed += rec.time_s
            rec.elapsed_s = elapsed
            records.append(rec)
            if on_round is not None:
                try:
                    on_round(r, rec, info)
                except StopTraining as exc:
                    loop.stopped = exc
                    loop.log(f"round {r}: stopped by on_round"
                             + (f": {exc}" if str(exc) else ""))
                    return records, False, None
            if (loop.learner is not None and getattr(loop.learner, "measures_loss", True)
                    and not math.isfinite(rec.loss)):
                loop.log(f"round {r}: the loss is not finite: training diverged; "
                         "try a smaller learning rate")
                return records, False, r
    except KeyboardInterrupt:
        return records, True, None
    return records, False, None


class Stopper:
    """``with Stopper() as stop:`` -- ``stop()`` turns true once the process receives SIGTERM
    (what ``timeout``, schedulers and ``kill`` send) or Ctrl-C, so that ``drive`` finishes the
    round and ends the run (``signal`` says which: ``"SIGTERM"`` or ``"Ctrl-C"``); a second
    Ctrl-C stops at once (KeyboardInterrupt).  The previous handlers are restored on exit.
    Outside the main thread (where no handler can be installed) it never turns true.

    >>> import signal
    >>> with Stopper() as stop:
    ...     before = stop()
    ...     signal.raise_signal(signal.SIGINT)       # Ctrl-C: noted, not raised
    ...     print(before, stop(), stop.signal)
    False True Ctrl-C
    """

    def __init__(self):
        self.signal = None
        self._old: dict = {}

    def __call__(self) -> bool:
        return self.signal is not None

    def __enter__(self):
        import signal
        import threading
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGINT):
                self._old[sig] = signal.signal(sig, self._received)
        return self

    def _received(self, signum, frame):
        import signal
        if signum == signal.SIGINT and self.signal == "Ctrl-C":
            raise KeyboardInterrupt                  # the second Ctrl-C: now
        self.signal = self.signal or ("Ctrl-C" if signum == signal.SIGINT else "SIGTERM")

    def __exit__(self, *exc):
        import signal
        for sig, old in self._old.items():
            signal.signal(sig, old)
