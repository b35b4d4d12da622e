"""Hybrid repetition HR(n, c1, c2) with ``groups`` groups (paper 2, Sec. VI, Alg. 3-4)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ._base import Code, check_int, check_size
from ._conflict import circular_greedy


class ISGCHR(Code):
    """IS-GC over hybrid repetition: ``c = c1 + c2`` partitions per worker.

    Workers and partitions split into ``groups`` groups of ``n0 = n / groups``.  Worker
    ``p = q n0 + l`` holds the bottom ``c1`` rows of the in-group cyclic table (partitions
    ``q n0 + (l - c1 .. l - 1 mod n0)``) and the top ``c2`` rows of CR(n, c)
    (partitions ``p .. p + c2 - 1 mod n``), Fig. 7.  Decoded by Alg. 3 with CONFLICT of Alg. 4.

    Accepted parameters: ``c1 >= 1`` (``c1 = 0`` is ``isgc-cr``) and
    ``c <= n0 <= min(c + c1, 2c - 1)``.
    Theorem 6 states ``c <= n0 <= 2c - 1``, but its proof (every group a clique) and with it the
    maximality of Alg. 3 need ``n0 <= c + c1``; outside that a group is not a clique and Alg. 3 can
    miss the maximum (e.g. HR(12, 1, 3, groups=2)), so those parameters are rejected.
    """

    name = "isgc-hr"

    def __init__(self, n: int, c1: int, c2: int, groups: int):
        n = check_int("n", n, minimum=1)
        c1 = check_int("c1", c1, minimum=1)
        c2 = check_int("c2", c2, minimum=0)
        groups = check_int("groups", groups, minimum=1, maximum=n)
        if n % groups:
            raise ValueError(f"groups: isgc-hr needs groups to divide n={n}, got groups={groups}")
        n0, c = n // groups, c1 + c2
        if not c <= n0:
            raise ValueError(f"c1, c2: isgc-hr needs c1 + c2 <= n/groups = {n0}, got c1 + c2 = {c}")
        if not n0 <= min(c + c1, 2 * c - 1):
            raise ValueError(
                f"groups: isgc-hr needs n/groups <= min(c + c1, 2c - 1) = {min(c + c1, 2 * c - 1)} "
                f"(every group a clique, so "
                f"Alg. 3 decodes a maximum set), got n/groups = {n0}; use more groups or larger c1")
        check_size(self.name, n * c)
        self._set(c1=c1, c2=c2, c=c, n0=n0, groups=groups)
        p = np.arange(n)
        q, l = p // n0, p % n0
        upper = q[:, None] * n0 + (l[:, None] + np.arange(n0 - c1, n0)) % n0
        lower = (p[:, None] + np.arange(c2)) % n
        sup = np.hstack([upper, lower])
        B = sp.csr_array((np.ones(n * c), (np.repeat(p, c), sup.ravel())), shape=(n, n))
        # Alg. 4 as a monotone reach: a tail worker (l >= n0 - c2 + 1) conflicts with the next
        # group up to p + c - 1, any other only within its own group.
        self._set(_reach=np.where(l >= n0 - c2 + 1, p + c, (q + 1) * n0))
        super().__init__(B, {"n": n, "c1": c1, "c2": c2, "groups": groups})

    def _decode(self, received, rng):
        groups_hit = np.unique(received // self.n0)
        q = groups_hit[rng.integers(groups_hit.size)]
        starts = received[received // self.n0 == q]
        chosen = circular_greedy(received, self.n_workers, self._reach, starts, rng)
        w = np.zeros(self.n_workers)
        w[chosen] = 1.0
        return w
