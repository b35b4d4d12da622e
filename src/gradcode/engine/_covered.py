"""The ``covered`` wait policy's condition (``engine._wait.UntilCovered``): whether the received
workers hold every partition between them (their ``placement``), for one received set
(``covers``, the loop's test after each arrival) and for whole rounds of known arrival times
(``first_covered``, the vectorised simulator's count)."""

from __future__ import annotations

import numpy as np


def _holders(scheme) -> tuple[np.ndarray, np.ndarray] | None:
    """The workers (messages) holding each partition of ``scheme.placement``, grouped by
    partition: ``(workers, starts)``, partition ``j``'s from ``starts[j]``; None when some
    partition is held by nobody (never covered).

    >>> import gradcode
    >>> workers, starts = _holders(gradcode.make_code("gc-fr", n=4, s=1))
    >>> workers.tolist(), starts.tolist()
    ([0, 1, 0, 1, 2, 3, 2, 3], [0, 2, 4, 6])
    """
    placement = scheme.placement
    k = len(scheme.partition_sizes)
    sizes = np.fromiter((len(p) for p in placement), np.int64, len(placement))
    parts = np.concatenate([np.asarray(p, np.int64) for p in placement]) if len(placement) \
        else np.zeros(0, np.int64)
    counts = np.bincount(parts, minlength=k)
    if k == 0 or np.any(counts == 0):
        return None
    order = np.argsort(parts, kind="stable")
    workers = np.repeat(np.arange(len(placement)), sizes)[order]
    return workers, np.concatenate([[0], np.cumsum(counts)[:-1]])


def covers(scheme, rows) -> bool:
    """Whether the workers (rows of the placement) ``rows`` hold every partition of ``scheme``
    between them (``UntilCovered``'s condition).

    >>> import gradcode
    >>> code = gradcode.make_code("gc-fr", n=4, s=1)       # groups {0, 1} and {2, 3}
    >>> covers(code, [0, 1]), covers(code, [1, 2])
    (False, True)
    """
    placement = scheme.placement
    rows = np.asarray(rows, np.int64).ravel()
    held = np.zeros(len(scheme.partition_sizes), bool)
    if rows.size:
        held[np.concatenate([np.asarray(placement[i], np.int64) for i in rows])] = True
    return bool(held.size and held.all())


def first_covered(arrivals: np.ndarray, code) -> np.ndarray:
    """Per round, the smallest ``k`` whose first ``k`` arrivals (stable order) hold every
    partition of ``code.placement``, ``n`` if none does (a partition nobody holds):
    ``UntilCovered``'s ``decoded_at`` for whole rounds.  Vectorised: each partition's earliest
    holder by arrival rank, the latest of those.

    >>> import gradcode
    >>> code = gradcode.make_code("gc-fr", n=4, s=1)       # groups {0, 1} and {2, 3}
    >>> first_covered(np.array([[0.1, 0.2, 0.3, 0.4], [0.1, 0.4, 0.3, 0.2]]), code).tolist()
    [3, 2]
    """
    if code is None:
        raise ValueError("wait: 'covered' needs the code")
    arrivals = np.asarray(arrivals, float)
    if arrivals.ndim == 1:
        return int(first_covered(arrivals[None], code)[0])
    R, n = arrivals.shape
    held = _holders(code)
    if held is None or R == 0:
        return np.full(R, n, int)
    workers, starts = held
    order = np.argsort(arrivals, axis=1, kind="stable")
    rank = np.empty((R, n), np.int64)
    rank[np.arange(R)[:, None], order] = np.arange(n)
    out = np.empty(R, int)
    step = max(1, (1 << 22) // max(workers.size, 1))       # bounded memory: rounds x holders
    for a in range(0, R, step):
        earliest = np.minimum.reduceat(rank[a:a + step][:, workers], starts, axis=1)
        out[a:a + step] = earliest.max(axis=1) + 1
    return out
