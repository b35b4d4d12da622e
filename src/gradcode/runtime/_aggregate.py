"""Per-host aggregation, the host's side (issue 33; the contract: ``engine.Executor.combine``).

A host process holding several logical workers (a Ray actor, a torch process) keeps its
workers' coded vectors of the round (``Held.notice``) and sends the master a notice, the
``Result`` without its vectors; once the master has decoded, it asks for ``sum_i w_i m_i`` over
the vectors it uses (``Held.combine``), accumulated here in float64 and sent in the wire dtype,
or in float64 where the master decodes in float64 (``wide``: weights of both signs, or float32
rounding to bound: then a sum's residual is ``sum w e`` over its vectors' residuals, which the
master fetches per worker as it does for whole vectors, ``Loop._wire``).  Only the last round
started is kept (the master combines a round before it starts the next).

>>> import numpy as np
>>> from gradcode.engine import Result
>>> held = Held()
>>> held.start(0)
>>> m = np.array([1.0, 2.0], np.float32)
>>> note = held.notice(Result(0, 3, [m, 2 * m], [0.5, 1.0]))
>>> note.coded, note.loss                        # what goes to the master
([None, None], [0.5, 1.0])
>>> s = held.combine(0, [(3, 0, 1.0), (3, 1, -0.25)], wide=False)
>>> s.tolist(), s.dtype
([0.5, 1.0], dtype('float32'))
>>> held.start(1)                                # round 0 forgotten
>>> held.combine(0, [(3, 0, 1.0)], wide=False)
Traceback (most recent call last):
...
LookupError: this host keeps no vector of round 0
"""

from __future__ import annotations

import threading
from dataclasses import replace

import numpy as np

from ..engine import Outcome


def group_by_host(weights: dict, owner: list) -> dict[int, list]:
    """``weights`` (``(worker, k) -> w``) grouped by the host ``owner[worker]`` holding each
    vector: ``{host: [(worker, k, w), ...]}``, what the master asks each host to sum.

    >>> group_by_host({(0, 0): 0.5, (1, 0): 1.0, (2, 0): -1.0}, owner=[0, 1, 0])
    {0: [(0, 0, 0.5), (2, 0, -1.0)], 1: [(1, 0, 1.0)]}
    """
    out: dict[int, list] = {}
    for (i, k), w in weights.items():
        out.setdefault(owner[i], []).append((i, k, w))
    return out


class Held:
    """The coded vectors of one host's workers in the round under way (module doc);
    thread-safe."""

    def __init__(self, wire=None):
        self.wire = None if wire is None else np.dtype(wire)    # None: the vectors' own dtype
        self._lock = threading.Lock()
        self._round = -1
        self._vectors: dict[int, list] = {}      # worker -> its coded vectors of ``_round``

    def start(self, round: int) -> None:
        """Round ``round`` starts: the vectors of earlier rounds are forgotten."""
        with self._lock:
            if round > self._round:
                self._round, self._vectors = round, {}

    def notice(self, res):
        """``res`` as it goes to the master: an arrived result without its vectors (kept here
        if of the round under way); any other result as it is."""
        if res.status is not Outcome.ARRIVED or not any(v is not None for v in res.coded):
            return res
        with self._lock:
            if res.round == self._round:          # (a late one: the master drops it anyway)
                self._vectors[res.worker] = res.coded
        return replace(res, coded=[None] * len(res.coded))

    def combine(self, round: int, terms, wide: bool) -> np.ndarray:
        """``sum w m`` over ``terms`` (``(worker, k, w)`` each: mini-task ``k`` of the worker's
        vectors of ``round``), accumulated in float64; in float64 if ``wide``, else in the wire
        dtype (or the vectors')."""
        with self._lock:
            if round != self._round:
                raise LookupError(f"this host keeps no vector of round {round}")
            vectors = dict(self._vectors)
        acc, dtype = None, None
        for i, k, w in terms:
            if i not in vectors or k >= len(vectors[i]) or vectors[i][k] is None:
                raise LookupError(f"this host keeps no vector of worker {i} in round {round}")
            v = vectors[i][k]
            dtype = v.dtype
            if acc is None:
                acc = np.multiply(v, float(w), dtype=np.float64)
            else:
                acc += float(w) * v.astype(np.float64, copy=False)
        if acc is None:
            raise LookupError("combine: no vector asked for")
        out = np.dtype(np.float64) if wide else self.wire or dtype
        return acc if acc.dtype == out else acc.astype(out)
