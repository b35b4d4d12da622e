"""Paper 2 (IS-GC), Sec. VI-C, Theorems 8 and 9: HR's Alg. 3 (with Alg. 4's CONFLICT) finds a
maximum independent set of ``G[W']`` from any single group (``theorems``; see ``isgc_common``).

Checked on the placement of Fig. 7 (``make_code("isgc-hr", ...)``, whose conflict graph
``tests/test_maximum_decoders.py`` proves equal to Alg. 4's rule) over every accepted parameter
set up to a size, with every received set ``W'``, against the exact independence numbers.
"""

from __future__ import annotations

import numpy as np

from ...analysis import independence_numbers
from ...codes import make_code
from ._framework import Evidence, Tally, statement
from .isgc_common import hr_configs, members_of


#: HR(16, 1, 3, groups=4): where the issue found Theorem 8's counterexamples
HR16 = dict(n=16, c1=1, c2=3, groups=4)


def _configs(ctx):
    return [*hr_configs(10 if ctx.quick else 12), HR16]


def _closed_neighbourhoods(G) -> list[int]:
    n = G.shape[0]
    return [(1 << v) | sum(1 << int(u) for u in G.indices[G.indptr[v]:G.indptr[v + 1]])
            for v in range(n)]


@statement(2, "Thm 8", "HR: for every group, some maximum independent set of G[W'] holds one of "
                       "the group's received workers (so Alg. 3 may start its greedy searches "
                       "in any single group)")
def _thm8(ctx) -> Evidence:
    t = Tally()
    for params in _configs(ctx):
        code = make_code("isgc-hr", **params)
        n, n0 = params["n"], params["n"] // params["groups"]
        alpha = independence_numbers(code.conflict_graph)
        closed = _closed_neighbourhoods(code.conflict_graph)
        S = np.arange(1 << n, dtype=np.int64)
        for q in range(params["groups"]):
            group = sum(1 << v for v in range(q * n0, (q + 1) * n0))
            hit = (S & group) != 0
            best_with = np.zeros(S.size, dtype=np.int16)   # largest independent set using W-hat
            for v in range(q * n0, (q + 1) * n0):
                has = (S >> v & 1) == 1
                best_with = np.where(has, np.maximum(best_with, 1 + alpha[S & ~closed[v]]),
                                     best_with)
            bad = hit & (best_with < alpha)
            w = int(S[np.argmax(bad)])
            t.count(hit.sum(), bad.sum(), lambda: (
                f"HR(n={n}, c1={params['c1']}, c2={params['c2']}, groups={params['groups']}), "
                f"W' = {members_of(w)} (0-based): alpha = {alpha[w]}, but group {q}'s received "
                f"workers {members_of(w & group)} are in no independent set of that size"))
    return t.evidence(f"every accepted HR up to n = {10 if ctx.quick else 12} and HR(16, 1, 3, "
                      "4), every received set and group (exact search)")


def alg3(W: list[int], q: int, n: int, n0: int, groups: int, c: int, c2: int) -> list[int]:
    """Paper 2's Alg. 3 with CONFLICT of Alg. 4, as printed (0-based workers; the clockwise scan
    visits ``i + 1, ..., i + n - 1`` mod n), from the received workers of group ``q``."""
    def conflict(i1, i2):
        g1, g2 = i1 // n0, i2 // n0
        if g1 == g2:
            return True
        return (g2 - g1) % groups == 1 and i1 % n0 >= n0 - c2 + 1 and (i2 - i1) % n < c

    received = set(W)
    best: list[int] = []
    for i in sorted(v for v in W if v // n0 == q):
        chosen, i0 = [i], i
        for j in range(1, n):
            nxt = (i + j) % n
            if nxt in received and not conflict(i0, nxt) and not conflict(nxt, i):
                i0 = nxt
                chosen.append(nxt)
        if len(chosen) > len(best):
            best = chosen
    return best


@statement(2, "Thm 9", "HR: Alg. 3 with CONFLICT of Alg. 4 finds a maximum independent set of "
                       "G[W'] (from whichever group it starts in)")
def _thm9(ctx) -> Evidence:
    t = Tally()
    configs = [*hr_configs(8 if ctx.quick else 10), dict(n=12, c1=1, c2=3, groups=3)]
    for params in configs:
        code = make_code("isgc-hr", **params)
        n, groups = params["n"], params["groups"]
        n0, c = n // groups, params["c1"] + params["c2"]
        alpha = independence_numbers(code.conflict_graph)
        for mask in range(1, 1 << n):
            W = members_of(mask)
            for q in sorted({v // n0 for v in W}):
                found = len(alg3(W, q, n, n0, groups, c, params["c2"]))
                t.count(1, found < alpha[mask], lambda: (
                    f"HR(n={n}, c1={params['c1']}, c2={params['c2']}, groups={groups}), "
                    f"W' = {W} (0-based), started in group {q}: {found} workers, "
                    f"alpha = {alpha[mask]}"))
    return t.evidence(f"every accepted HR up to n = {8 if ctx.quick else 10} and HR(12, 1, 3, 3), "
                      "every received set and starting group")
