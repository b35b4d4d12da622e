"""Paper 2 (IS-GC), Sec. VI-C, Theorems 8 and 9: HR's Alg. 3 (with Alg. 4's CONFLICT) and the
independent sets of ``G[W']`` it finds from a single group (``theorems``; see ``isgc_common``).

Two rows, one per reading of Theorem 9, each with its own evidence:

- ``Thm 8, Thm 9 (maximum reading)``: Theorem 8 (some maximum independent set meets the received
  workers of every group) and Theorem 9 read as "maximum", which is what Alg. 3 needs from
  Theorem 8 (started in one random group, it returns a maximum independent set).  One search
  checks both on every received set and group; Alg. 3 misses ``α`` exactly where Theorem 8
  fails, so the two are one row.
- ``Thm 9``: Theorem 9 as printed, "a *maximal* independent set": every greedy chain of Alg. 3
  is an independent set of ``G[W']`` that no received worker can join.

Checked on the placement of Fig. 7 (``make_code("isgc-hr", ...)``, whose conflict graph
``tests/test_maximum_decoders.py`` proves equal to Alg. 4's rule) over every accepted parameter
set up to a size and HR(16, 1, 3, 4), with every received set ``W'``, against the exact
independence numbers.  The stated conditions: ``c <= n0 <= 2c - 1`` (Thm 6), ``n0 <= c + c1``
(every group a clique, Thm 6's proof) and ``c <= g`` (the proofs of Thm 7 and 9); the
counterexample shown is the first that meets them all.
"""

from __future__ import annotations

import numpy as np

from ...analysis import independence_numbers
from ...registry import make_code
from ._framework import Evidence, Tally, statement
from .isgc_algorithms import alg4_conflict, greedy_chains
from .isgc_common import (bit, every_subset, fmt_hr, fmt_workers, graph_of, hr_configs,
                          independent_and_maximal, members_of, neighbour_masks, popcount)


#: HR(16, 1, 3, groups=4): g = c = 4, n0 = 4 <= c + c1: Theorem 8 fails within every condition
HR16 = dict(n=16, c1=1, c2=3, groups=4)


def _configs(ctx):
    return [*hr_configs(10 if ctx.quick else 12), HR16]


def stated(p: dict) -> bool:
    """Whether HR ``p`` meets every condition the text states: ``c <= n0 <= min(c + c1,
    2c - 1)`` (every accepted HR does) and ``c <= g`` (the proofs of Theorems 7 and 9)."""
    n0, c = p["n"] // p["groups"], p["c1"] + p["c2"]
    return c <= n0 <= min(c + p["c1"], 2 * c - 1) and c <= p["groups"]


def alg3_sizes(p: dict, S: np.ndarray, alpha: np.ndarray, closed: list[int]):
    """For every group ``q`` of HR ``p`` and every received set of ``S``: whether the group has
    a received worker (``hit``), the largest independent set of ``G[W']`` through one of them
    (``with_q``: Theorem 8 holds iff it is ``alpha``) and the size of Alg. 3's answer started in
    ``q`` (``alg3``: the largest greedy chain from the group's received workers)."""
    n, n0 = p["n"], p["n"] // p["groups"]
    chains = greedy_chains(~alg4_conflict(n, p["c1"], p["c2"], p["groups"]), S)
    sizes = popcount(chains)
    for q in range(p["groups"]):
        hit = np.zeros(S.size, bool)
        with_q = np.zeros(S.size, np.int16)
        alg3 = np.zeros(S.size, np.int16)
        for v in range(q * n0, (q + 1) * n0):
            has = bit(S, v)
            hit |= has
            with_q = np.where(has, np.maximum(with_q, 1 + alpha[S & ~closed[v]]), with_q)
            alg3 = np.where(has, np.maximum(alg3, sizes[v]), alg3)
        yield q, hit, with_q, alg3


def _closed(code) -> list[int]:
    """``N[v]``: ``v`` and its neighbours, as bit masks."""
    A = graph_of(code)
    return [int(m) | (1 << v) for v, m in enumerate(neighbour_masks(A))]


def _group_mask(p: dict, q: int) -> int:
    n0 = p["n"] // p["groups"]
    return ((1 << n0) - 1) << (q * n0)


def _thm8_case(p: dict, W: int, q: int, alpha: int, found: int) -> str:
    return (f"{fmt_hr(**p)}, W' = {fmt_workers(W)} (0-based {members_of(W)}): alpha = {alpha}, "
            f"but no maximum independent set holds group {q + 1}'s received "
            f"{fmt_workers(W & _group_mask(p, q))}; Alg. 3 started there finds {found}")


@statement(2, "Thm 8, Thm 9 (maximum reading)",
           "HR: for every group, some maximum independent set of G[W'] holds one of the group's "
           "received workers (Thm 8), so Alg. 3 with CONFLICT of Alg. 4, started in any one "
           "group, finds a maximum independent set of G[W'] (Thm 9 read as 'maximum')")
def _thm8_thm9_maximum(ctx) -> Evidence:
    within, beyond = Tally(), Tally()
    count = {"thm8": 0, "alg3": 0, "alg3 only": 0}
    for p in _configs(ctx):
        code = make_code("isgc-hr", **p)
        alpha = independence_numbers(code.conflict_graph)
        S = every_subset(p["n"])
        t = within if stated(p) else beyond
        fails, found = [], []
        for q, hit, with_q, alg3_q in alg3_sizes(p, S, alpha, _closed(code)):
            f8, f3 = hit & (with_q < alpha), hit & (alg3_q < alpha)
            count["thm8"] += int(f8.sum())
            count["alg3"] += int(f3.sum())
            count["alg3 only"] += int((f3 & ~f8).sum())
            fails.append(f8 | f3)
            found.append(alg3_q)
            t.count(hit.sum(), 0)
        fails = np.array(fails)
        if fails.any():                           # the first failing W' in mask order
            k = int(np.argmax(fails.any(axis=0)))
            q = int(np.argmax(fails[:, k]))
            t.count(0, fails.sum(), lambda: _thm8_case(p, int(S[k]), q, int(alpha[k]),
                                                       int(found[q][k])))
    same = count["alg3 only"] == 0 and count["alg3"] == count["thm8"]
    stated_failures = within.failures
    return within.merge(beyond).evidence(
        f"every accepted HR up to n = {10 if ctx.quick else 12} and HR(16, 1, 3, 4), every "
        "received set W' and group (cases: (W', group)), exact alpha; Thm 8 fails in "
        f"{count['thm8']}, Alg. 3 finds fewer than alpha in {count['alg3']}, "
        + ("the same cases" if same else f"{count['alg3 only']} of them where Thm 8 holds")
        + f"; {stated_failures} of the failures meet every stated condition (c <= n0 <= "
        "min(c + c1, 2c - 1), c <= g): the counterexample shown is their first")


@statement(2, "Thm 9", "HR: the greedy search of Alg. 3 with CONFLICT of Alg. 4 finds a maximal "
                       "independent set of G[W'] (the word printed: no received worker can be "
                       "added), from every start")
def _thm9_maximal(ctx) -> Evidence:
    t = Tally()
    for p in _configs(ctx):
        code = make_code("isgc-hr", **p)
        A = graph_of(code)
        S = every_subset(p["n"])
        chains = greedy_chains(~alg4_conflict(p["n"], p["c1"], p["c2"], p["groups"]), S)
        for i in range(p["n"]):
            has = bit(S, i)
            indep, maximal = independent_and_maximal(chains[i][has], S[has], A)
            t.add(~maximal, lambda k: f"{fmt_hr(**p)}, W' = {fmt_workers(S[has][k])}, from "
                  f"W{i + 1}: {fmt_workers(chains[i][has][k])} is "
                  + ("not independent" if not indep[k] else "not maximal"))
    return t.evidence(
        f"every accepted HR up to n = {10 if ctx.quick else 12} and HR(16, 1, 3, 4), every W' "
        "and every start (every chain Alg. 3 can return), against the conflict graph of the "
        "placement: independent and maximal; Alg. 3's answer is not always maximum (row 'Thm "
        "8, Thm 9 (maximum reading)')",
        _maximal_example())


def _maximal_example() -> str:
    """Alg. 3 on HR(16, 1, 3, 4), W' = {W4, W7, W9}: a maximal set that is not maximum."""
    W = 1 << 3 | 1 << 6 | 1 << 8
    chains = greedy_chains(~alg4_conflict(**HR16), np.array([W]))[:, 0]
    return ("HR(16, 1, 3, 4), W' = {W4, W7, W9} (alpha = 2): " + ", ".join(
        f"from W{i + 1} {fmt_workers(chains[i])}" for i in members_of(W)))


def alg3(W: list[int], q: int, n: int, n0: int, groups: int, c: int, c2: int) -> list[int]:
    """Paper 2's Alg. 3 with CONFLICT of Alg. 4, as printed (0-based workers; the clockwise scan
    visits ``i + 1, ..., i + n - 1`` mod n), from the received workers of group ``q``: one
    received set at a time, a reference for the vectorised ``alg3_sizes``."""
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
