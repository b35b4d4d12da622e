"""Paper 2 (IS-GC): its theorems, algorithms and worked examples checked by computation
(``theorems``).

The placements are built here with NumPy from the paper's text (FR and CR of Sec. III, the
groups of CR of Sec. VI-A, the general HR(n, c1, c2) of Fig. 7: the bottom ``c1`` rows of the
in-group cyclic table over the top ``c2`` rows of CR(n, c)) and compared with gradcode's
``isgc-fr``, ``isgc-cr`` and ``isgc-hr``; where gradcode refuses a parameter set the paper's
statement covers (``isgc-hr`` accepts ``c <= n0 <= min(c + c1, 2c - 1)``), the NumPy placement
stands in.  Checked: the conflict graphs (Thm 1, 4, 5, 7; Fig. 4, 5), the range of Thm 6 and the
clique claim of its proof, Alg. 1-4 (Thm 2, 3, 8, 9: maximal and maximum independent sets,
equal chances), the bounds of Thm 10-11 (``gradcode.analysis.recovery_bounds``), FR against CR
(Sec. V-C) and the worked examples of Fig. 1, 2(b), 3 and 4.  Every received set ``W'`` is
enumerated on small ``n`` (the independence numbers of all subsets at once, exact).

HR's Theorems 8 and 9 are checked on the placement of Fig. 7 (``make_code("isgc-hr", ...)``,
whose conflict graph ``tests/test_maximum_decoders.py`` proves equal to Alg. 4's rule) over every
accepted parameter set up to a size, with every received set ``W'``.
"""

from __future__ import annotations

import itertools
from math import comb

import numpy as np

from ..analysis import recovery_bounds
from ..codes import make_code
from .theorems import Evidence, independence_numbers, statement


def hr_configs(n_max: int):
    """Every ``isgc-hr`` parameter set gradcode accepts with ``n <= n_max`` (paper 2's
    Theorem 6 range where every group is a clique: ``c <= n0 <= min(c + c1, 2c - 1)``)."""
    for n in range(1, n_max + 1):
        for groups in (g for g in range(1, n + 1) if n % g == 0):
            n0 = n // groups
            for c1 in range(1, n0 + 1):
                for c2 in range(0, n0 + 1 - c1):
                    c = c1 + c2
                    if c <= n0 <= min(c + c1, 2 * c - 1):
                        yield dict(n=n, c1=c1, c2=c2, groups=groups)


#: HR(16, 1, 3, groups=4): where the issue found Theorem 8's counterexamples
HR16 = dict(n=16, c1=1, c2=3, groups=4)


def _configs(ctx):
    return [*hr_configs(10 if ctx.quick else 12), HR16]


def _closed_neighbourhoods(G) -> list[int]:
    n = G.shape[0]
    return [(1 << v) | sum(1 << int(u) for u in G.indices[G.indptr[v]:G.indptr[v + 1]])
            for v in range(n)]


def _members(mask: int) -> list[int]:
    return [i for i in range(mask.bit_length()) if mask >> i & 1]


@statement(2, "Thm 8", "HR: for every group, some maximum independent set of G[W'] holds one of "
                       "the group's received workers (so Alg. 3 may start its greedy searches "
                       "in any single group)")
def _thm8(ctx) -> Evidence:
    cases = failures = 0
    example = ""
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
            cases += int(hit.sum())
            failures += int(bad.sum())
            if bad.any() and not example:
                w = int(S[np.argmax(bad)])
                example = (f"HR(n={n}, c1={params['c1']}, c2={params['c2']}, "
                           f"groups={params['groups']}), W' = {_members(w)} (0-based): "
                           f"alpha = {alpha[w]}, but group {q}'s received workers "
                           f"{_members(w & group)} are in no independent set of that size")
    return Evidence(cases, failures, f"every accepted HR up to n = {10 if ctx.quick else 12} "
                    "and HR(16, 1, 3, 4), every received set and group (exact search)", example)


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
    cases = failures = 0
    example = ""
    configs = [*hr_configs(8 if ctx.quick else 10), dict(n=12, c1=1, c2=3, groups=3)]
    for params in configs:
        code = make_code("isgc-hr", **params)
        n, groups = params["n"], params["groups"]
        n0, c = n // groups, params["c1"] + params["c2"]
        alpha = independence_numbers(code.conflict_graph)
        for mask in range(1, 1 << n):
            W = _members(mask)
            for q in sorted({v // n0 for v in W}):
                found = len(alg3(W, q, n, n0, groups, c, params["c2"]))
                cases += 1
                if found < alpha[mask]:
                    failures += 1
                    example = example or (
                        f"HR(n={n}, c1={params['c1']}, c2={params['c2']}, groups={groups}), "
                        f"W' = {W} (0-based), started in group {q}: {found} workers, "
                        f"alpha = {alpha[mask]}")
    return Evidence(cases, failures, f"every accepted HR up to n = {8 if ctx.quick else 10} and "
                    "HR(12, 1, 3, 3), every received set and starting group", example)

