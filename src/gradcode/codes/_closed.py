"""Compiled closed forms of the IS-GC decoders' recovery for many received sets at once
(``Code.recovery_many``, the vectorised simulator's decoding).

* fractional repetition (paper 2, Alg. 1): one worker of every group that has one;
* circular arcs (paper 2, Alg. 2-4): CR and HR conflict graphs are overlap graphs of arcs
  ``[p, reach(p))`` with a monotone reach; the maximum independent set of the received workers
  is the largest greedy chain ("next received worker at or after the reach") grown from a few
  starts: for CR the received workers among the ``c`` positions after the first received one
  (Thm 2-3), for HR the received workers of group 0 and the first received one after it
  (``ISGCHR``'s docstring).  O(n) per round.

Each is checked against the codes' own decoders on every received set of small codes
(tests/test_maximum_decoders.py, tests/test_contract.py).
"""

from __future__ import annotations

import numpy as np
from numba import njit


def covered_outcome(covered: np.ndarray, n: int):
    """``recovery_many``'s ``(recovered_fraction, decode_error, exact)`` of an IS-GC decoding
    that recovers ``covered`` of ``n`` equal partitions.

    >>> [x.tolist() for x in covered_outcome(np.array([8, 6]), 8)]
    [[1.0, 0.75], [0.0, 2.0], [True, False]]
    """
    return covered / n, (n - covered).astype(float), covered == n


@njit(cache=True)
def _groups_hit(got, c, out):
    R, n = got.shape
    for r in range(R):
        hit = 0
        for g in range(0, n, c):
            for i in range(g, g + c):
                if got[r, i]:
                    hit += 1
                    break
        out[r] = hit


def groups_hit(got: np.ndarray, c: int) -> np.ndarray:
    """Per row of ``got (R, n)``, the number of consecutive groups of ``c`` workers with a
    received worker (``c`` divides ``n``).

    >>> groups_hit(np.array([[1, 0, 0, 0, 0, 1], [0, 0, 0, 0, 0, 0]], bool), 2).tolist()
    [2, 0]
    """
    got = np.ascontiguousarray(got, dtype=bool)
    out = np.empty(got.shape[0], np.int64)
    _groups_hit(got, int(c), out)
    return out


@njit(cache=True)
def _arc_mis_sizes(got, reach, window, anchored, out):
    """Per row: the chain from the first start is followed once, far enough for every start
    (``members``, with ``index`` marking its positions); the chain from any other start is
    followed only until it meets that one (greedy chains never cross, they merge), then counts
    the shared members within its own limit."""
    R, n = got.shape
    nxt = np.empty(4 * n, np.int64)
    index = np.full(4 * n, -1, np.int64)
    members = np.empty(4 * n, np.int64)
    starts = np.empty(window + 1, np.int64)
    for r in range(R):
        row = got[r]
        u = -1
        for q in range(n):
            if row[q]:
                u = q
                break
        if u < 0:
            out[r] = 0
            continue
        after = u + n
        for q in range(n - 1, -1, -1):
            if row[q]:
                after = q
            nxt[q] = after
        for q in range(n, 4 * n):
            nxt[q] = nxt[q - n] + n
        a = 0 if anchored else u
        m = 0
        for p in range(a, a + window):
            if row[p % n]:
                starts[m] = p
                m += 1
        if nxt[a + window] < a + n:
            starts[m] = nxt[a + window]
            m += 1
        # the first start's chain, up to the last start's limit
        last = starts[m - 1] + n
        L, cur = 0, starts[0]
        while True:
            members[L], index[cur] = cur, L
            L += 1
            rc = reach[cur]
            if rc >= nxt.size or nxt[rc] >= nxt.size or reach[nxt[rc]] > last:
                break
            cur = nxt[rc]
        best = 0
        for j in range(m):
            i, limit, steps, cur = starts[j], starts[j] + n, 1, starts[j]
            while index[cur] < 0:
                rc = reach[cur]
                if rc >= nxt.size or nxt[rc] >= nxt.size or reach[nxt[rc]] > limit:
                    break
                cur = nxt[rc]
                steps += 1
            k = index[cur]
            if k >= 0:                     # merged: the shared members within ``limit``
                lo, hi = k, L - 1              # (their reach grows along the chain)
                while lo < hi:
                    mid = (lo + hi + 1) // 2
                    if reach[members[mid]] <= limit:
                        lo = mid
                    else:
                        hi = mid - 1
                steps += lo - k
            best = max(best, steps)
        for k in range(L):
            index[members[k]] = -1
        out[r] = best


def arc_mis_sizes(got: np.ndarray, reach: np.ndarray, window: int, anchored: bool) -> np.ndarray:
    """``alpha(G[W'])`` per row of ``got (R, n)`` for the circular-arc conflict graph of
    ``reach`` (worker ``p`` conflicts clockwise up to ``reach[p] - 1``, monotone): the largest
    greedy chain from the received workers in ``window`` positions from the first received one
    (``anchored=False``, CR) or from position 0 (``anchored=True``, HR's group 0), and from the
    first received one after that window (module docstring).

    CR(8, 2) (``reach = p + 2``): workers 0, 1, 2, 4, 5 received hold 3 non-conflicting ones.

    >>> got = np.zeros((1, 8), bool); got[0, [0, 1, 2, 4, 5]] = True
    >>> arc_mis_sizes(got, np.arange(8) + 2, window=2, anchored=False).tolist()
    [3]
    """
    got = np.ascontiguousarray(got, dtype=bool)
    out = np.empty(got.shape[0], np.int64)
    n = got.shape[1]
    reach = np.asarray(reach, np.int64)
    unwrapped = (reach[None, :] + n * np.arange(4)[:, None]).ravel()     # positions 0 .. 4n - 1
    _arc_mis_sizes(got, unwrapped, int(window), bool(anchored), out)
    return out
