"""Hybrid repetition HR(n, c1, c2) with ``groups`` groups (paper 2, Sec. VI, Alg. 3-4)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ._base import Code
from ._checks import check_int, check_size
from ._closed import arc_mis_sizes, covered_outcome
from ._conflict import circular_greedy


class ISGCHR(Code):
    """IS-GC over hybrid repetition: ``c = c1 + c2`` partitions per worker.

    Workers and partitions split into ``groups`` groups of ``n0 = n / groups``.  Worker
    ``p = q n0 + l`` holds the bottom ``c1`` rows of the in-group cyclic table (partitions
    ``q n0 + (l - c1 .. l - 1 mod n0)``) and the top ``c2`` rows of CR(n, c)
    (partitions ``p .. p + c2 - 1 mod n``), Fig. 7.

    Decoding (``method=None``) returns a **maximum** independent set of ``G[W']``: in the
    accepted range the conflict graph is the overlap graph of the circular arcs
    ``[p, reach(p))``, ``reach(p) = p + c`` for a tail worker (``l >= n0 - c2 + 1``, which
    conflicts into the next group, Alg. 4) and ``(q + 1) n0`` otherwise (a group is a clique);
    the reach is monotone, so from any chosen start the greedy "next received worker at or after
    the reach" is maximum among the sets holding that start.  Every maximum set either holds one
    of the received workers of a group ``q`` (they are the arcs over the group's last position)
    or none of them, and then (exchange argument) one holding the first received worker after
    group ``q``: greedy chains from those ``|W' ∩ group q| + 1`` starts, the largest kept (ties
    at random), cost O(|W'| log |W'|) in all.  Proved by ``tests/test_maximum_decoders.py``: the
    arc model equals ``conflict_graph(B)`` for every accepted configuration up to n = 20, and the
    decoded set is as large as an exact search finds on every received set of every accepted
    configuration up to n = 10 (14 in ``make test-all``, and HR(16, 1, 3, 4), HR(18, 2, 1, 6),
    HR(20, 1, 3, 5)), and on random sets up to n = 200.

    ``method="alg3"`` is the paper's Alg. 3 with CONFLICT of Alg. 4 as printed: chains only from
    the received workers of one random group.  It is not maximum: Theorem 8 (some maximum set
    meets every group's received workers) is false.  In HR(16, 1, 3, groups=4) with
    ``W' = {7, 10, 12}``, 7 ~ 10 ~ 12 is a path, the only maximum set is {7, 12}, and Alg. 3
    started in worker 10's group finds 1 worker (``W' = {1, 4, 5, 7, 11, 14}``: 2 instead of 3).

    Accepted parameters: ``c1 >= 1`` (``c1 = 0`` is ``isgc-cr``) and
    ``c <= n0 <= min(c + c1, 2c - 1)``.
    Theorem 6 states ``c <= n0 <= 2c - 1``, but its proof (every group a clique) needs
    ``n0 <= c + c1``; outside that a group is not a clique (e.g. HR(12, 1, 3, groups=2)), the
    arc model above fails, and those parameters are rejected.

    HR(6, 1, 1, groups=2): a worker's in-group partition and its own; received workers 0, 2, 3
    hold {0, 2}, {1, 2}, {3, 5}, and at most two of them are disjoint.

    >>> from gradcode import make_code
    >>> code = make_code("isgc-hr", n=6, c1=1, c2=1, groups=2)
    >>> [p.tolist() for p in code.placement]
    [[0, 2], [0, 1], [1, 2], [3, 5], [3, 4], [4, 5]]
    >>> d = code.decode([0, 2, 3])
    >>> int(d.weights.sum()), round(d.recovered_fraction, 3)
    (2, 0.667)
    """

    name = "isgc-hr"
    decoder = "decodes a maximum partial sum from any workers"
    examples = ({"n": 8, "c1": 2, "c2": 2, "groups": 2}, {"n": 8, "c1": 1, "c2": 3, "groups": 2},
                {"n": 9, "c1": 2, "c2": 1, "groups": 3}, {"n": 10, "c1": 3, "c2": 1, "groups": 2},
                {"n": 10, "c1": 2, "c2": 1, "groups": 2})

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

    methods = ("alg3",)

    def recovery_many(self, got):
        """``c alpha(G[W'])`` partitions: the decoder's chains for many received sets at once
        (group 0's received workers and the first received one after it)."""
        got = self._check_got(got)
        n, c = self.n_workers, self.c
        return covered_outcome(arc_mis_sizes(got, self._reach, self.n0, True) * c, n)

    def _decode(self, received, rng):
        starts, q = self._group_starts(received, rng)
        after = received[received >= (q + 1) * self.n0]
        first_after = after[:1] if after.size else received[:1]     # wraps around the circle
        return self._chains(received, np.union1d(starts, first_after), rng)

    def _decode_method(self, method, received, rng):
        """Paper 2's Alg. 3 as printed (not maximum: see the class docstring)."""
        return self._chains(received, self._group_starts(received, rng)[0], rng)

    def _group_starts(self, received, rng):
        """The received workers of a random group that has some (Alg. 3, line 2), and the group."""
        groups_hit = np.unique(received // self.n0)
        q = groups_hit[rng.integers(groups_hit.size)]
        return received[received // self.n0 == q], q

    def _chains(self, received, starts, rng):
        """0/1 weights on the largest greedy chain grown from ``starts``."""
        w = np.zeros(self.n_workers)
        w[circular_greedy(received, self.n_workers, self._reach, starts, rng)] = 1.0
        return w
