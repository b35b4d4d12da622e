"""Paper 2 (IS-GC): its decoding algorithms as the text prints them, run on every received set
at once (bit masks): the greedy search of Alg. 2-3, Alg. 1's and Alg. 2's picks, Alg. 4's
CONFLICT, decoding in arrival order, and linear decoding for comparison (``theorems``; see
``isgc_common``)."""

from __future__ import annotations

import numpy as np

from .isgc_common import bit, every_subset, popcount


def greedy_chains(free: np.ndarray, S: np.ndarray) -> np.ndarray:
    """Lines 4-12 of Alg. 2 (and of Alg. 3) from every start ``i`` over every received set of
    ``S`` at once: ``chains[i]`` is ``I'`` grown from ``i`` (meaningful where ``S`` holds
    ``i``).  The scan visits ``next = i + j mod n``, ``j = 1, ..., n-1``, and takes ``next``
    when it is received, ``free[i0, next]`` (no conflict with the last one taken, ``i0``) and
    ``free[next, i]`` (none with the start).  (Printed, line 7 reads ``(i0 + j - 1) mod n + 1``
    with ``i0`` moving along, which would skip workers; the proofs scan clockwise.)"""
    n = free.shape[0]
    chains = np.zeros((n, S.size), dtype=np.int64)
    for i in range(n):
        i0 = np.full(S.size, i)
        chosen = np.full(S.size, 1 << i, dtype=np.int64)
        for j in range(1, n):
            nxt = (i + j) % n
            ok = bit(S, nxt) & free[i0, nxt] & free[nxt, i]
            i0 = np.where(ok, nxt, i0)
            chosen |= ok.astype(np.int64) << nxt
        chains[i] = chosen
    return chains


def alg2_free(n: int, c: int) -> np.ndarray:
    """Alg. 2's test of line 8: ``d(x, y) >= c``, the distance on the circle."""
    x = np.arange(n)
    d = np.abs(x[:, None] - x)
    return np.minimum(d, n - d) >= c


def alg2_pick(chains: np.ndarray, S: np.ndarray, u: int, c: int) -> np.ndarray:
    """Alg. 2's answer from the random vertex ``u`` (lines 2-3, 13-15): the first largest
    ``I'`` over the starts ``W' ∩ {u, ..., u+c-1}``, taken in that order."""
    n = chains.shape[0]
    best = np.zeros(S.size, dtype=np.int16)
    pick = np.zeros(S.size, dtype=np.int64)
    for v in range(min(c, n)):
        k = (u + v) % n
        size = popcount(chains[k])
        better = bit(S, k) & (size > best)
        best = np.where(better, size, best)
        pick = np.where(better, chains[k], pick)
    return pick


def alg1_pick(S: np.ndarray, n: int, c: int) -> np.ndarray:
    """Alg. 1 (FR): one received worker of every group that has one (here the group's first;
    the algorithm draws it at random, which changes neither size nor independence)."""
    pick = np.zeros(S.size, dtype=np.int64)
    for q in range(n // c):
        got = S & (((1 << c) - 1) << (q * c))
        pick |= got & -got
    return pick


def alg4_conflict(n: int, c1: int, c2: int, groups: int) -> np.ndarray:
    """CONFLICT(i1, i2) of Alg. 4 for every ordered pair, read 0-based (``g = floor(i / n0)``,
    ``j1 = i1 mod n0``): the same group, or ``i2`` in the next group with ``j1 >= n0 - c2 + 1``
    and ``(i2 - i1) mod n < c``."""
    n0, c = n // groups, c1 + c2
    i1, i2 = np.arange(n)[:, None], np.arange(n)[None, :]
    same = i1 // n0 == i2 // n0
    nxt = ((i2 // n0 - i1 // n0) % groups == 1) & (i1 % n0 >= n0 - c2 + 1) & ((i2 - i1) % n < c)
    return same | nxt


def arrival_greedy(order: list[int], A: np.ndarray) -> list[int]:
    """Decoding by the received sequence (Sec. V-A): keep a worker iff it conflicts with none
    kept so far."""
    kept: list[int] = []
    for v in order:
        if not A[v, kept].any():
            kept.append(v)
    return kept


def best_plain_sums(B: np.ndarray) -> np.ndarray:
    """Sec. IV-V's decoding by adding plain sums, by brute force: for every received set
    ``W'`` (bit mask), the most partitions that a sum of distinct received coded gradients
    (rows of the 0/1 placement ``B``, coefficients 0 or 1) can give with every partition at
    most once, ``ĝ = sum_{i in I} g_i``.

    >>> best_plain_sums(np.array([[1, 1, 0], [0, 1, 1], [1, 0, 1]])).tolist()
    [0, 2, 2, 2, 2, 2, 2, 2]
    """
    n = B.shape[0]
    S = every_subset(n)
    counts = (S[:, None] >> np.arange(n) & 1) @ np.asarray(B, dtype=np.int64)
    best = np.where(counts.max(axis=1, initial=0) <= 1, counts.sum(axis=1), 0)
    for v in range(n):                       # the best over every subset of each W'
        has = bit(S, v)
        best[has] = np.maximum(best[has], best[S[has] ^ (1 << v)])
    return best


def best_linear_recovery(R: np.ndarray) -> int:
    """The largest ``|I|`` with ``ĝ = sum_{i in I} g_i`` a linear combination of the received
    coded gradients (rows of ``R``): ``1_I`` in the row space, residual below 1e-9."""
    return max(map(len, decodable_sums(R)), default=0)


def decodable_sums(R: np.ndarray) -> list[list[int]]:
    """Every non-empty ``I`` whose ``ĝ = sum_{i in I} g_i`` is a linear combination of the rows
    of ``R`` (to 1e-9), as 0-based partition lists."""
    n = R.shape[1]
    _, s, Vt = np.linalg.svd(R, full_matrices=False)
    V = Vt[s > 1e-9 * max(s.max(initial=0), 1)]
    ind = (every_subset(n)[1:, None] >> np.arange(n) & 1).astype(float)
    ok = np.abs(ind - (ind @ V.T) @ V).max(axis=1) < 1e-9
    return [np.flatnonzero(row).tolist() for row in ind[ok]]
