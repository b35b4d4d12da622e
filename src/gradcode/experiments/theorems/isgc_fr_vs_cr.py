"""Paper 2 (IS-GC), Sec. V-C: the tradeoff between FR and CR: the conflict graphs' inclusions
(Thm 4) and the independence numbers compared, per received set and in expectation
(``theorems``; see ``isgc_common``)."""

from __future__ import annotations

import numpy as np

from ...registry import make_code
from ._framework import Evidence, Tally, statement
from .isgc_common import (cr_alpha, edge_set, every_subset, fmt_workers, fr_alpha, graph_of,
                          mask_of, popcount, subset_failures)


@statement(2, "Thm 4", "E_FR(n,c) ⊆ E_CR(n,c) ⊆ E_CR(n,c+1) ⊆ ... ⊆ E_CR(n,n) (printed with ⊂)")
def _thm4(ctx) -> Evidence:
    t = Tally()
    n_max = 30 if ctx.quick else 80
    equal = 0
    for n in range(1, n_max + 1):
        cr = [None] + [graph_of(make_code("isgc-cr", n=n, c=c)) for c in range(1, n + 1)]
        links = [(f"CR({n}, {c})", cr[c], f"CR({n}, {c + 1})", cr[c + 1]) for c in range(1, n)]
        links += [(f"FR({n}, {c})", graph_of(make_code("isgc-fr", n=n, c=c)), f"CR({n}, {c})",
                   cr[c]) for c in range(1, n + 1) if n % c == 0]
        for a, A, b, B in links:
            miss = subset_failures(A, B)
            equal += bool((A == B).all())
            t.count(1, bool(miss), lambda: f"edges of {a} missing from {b}: {miss[:3]}")
    return t.evidence(f"gradcode's conflict graphs, every link for every n <= {n_max} (exact); "
                      f"{equal} links are equalities (both empty for c = 1, both complete for "
                      "c > n/2), so the printed ⊂ holds only as ⊆", "n = 8: |E| = " + ", ".join(
                          f"{len(edge_set(graph_of(make_code(k, n=8, c=c))))} ({k[5:].upper()}, "
                          f"c = {c})"
                          for k, c in (("isgc-fr", 2), ("isgc-cr", 2), ("isgc-cr", 3),
                                       ("isgc-cr", 4), ("isgc-cr", 5))))


@statement(2, "Sec. V-C", "FR recovers at least as much as CR from any workers: "
                          "α(G_FR(n,c)[W']) ≥ α(G_CR(n,c)[W']) for every W' (printed >)")
def _fr_vs_cr(ctx) -> Evidence:
    t = Tally()
    n_max = 12 if ctx.quick else 16
    ties = 0
    for n in range(1, n_max + 1):
        for c in (c for c in range(1, n + 1) if n % c == 0):
            f, r = fr_alpha(n, c)[1:], cr_alpha(n, c)[1:]
            bad = f < r
            ties += int((f == r).sum())
            t.count(f.size, bad.sum(), lambda: f"n = {n}, c = {c}, W' = "
                  f"{fmt_workers(np.flatnonzero(bad)[0] + 1)}: FR {f[bad][0]} < CR {r[bad][0]}")
    return t.evidence(f"every n <= {n_max}, c | n, every W' (exact); equality in {ties} of "
                      f"{t.cases} (e.g. every |W'| = 1), so the printed strict > fails there",
                      f"n = 8, c = 2, W' = {fmt_workers(mask_of(2, 3, 6, 7))}: FR "
                      f"{fr_alpha(8, 2)[mask_of(2, 3, 6, 7)]} > CR "
                      f"{cr_alpha(8, 2)[mask_of(2, 3, 6, 7)]}")


def expected_alpha(alpha: np.ndarray, n: int) -> np.ndarray:
    """``E[alpha(G[W'])]`` for ``W'`` uniform among the ``w``-sets, ``w = 0..n``."""
    w = popcount(every_subset(n))
    return np.bincount(w, weights=alpha, minlength=n + 1) / np.bincount(w, minlength=n + 1)


@statement(2, "Sec. V-C (expectation)", "α(G[W']) in FR is expected to be higher than in CR: "
                                        "E_FR ≥ E_CR for every |W'| = w, higher for some w "
                                        "(1 < c < n)")
def _fr_vs_cr_mean(ctx) -> Evidence:
    t = Tally()
    n_max = 12 if ctx.quick else 16
    pattern = True
    for n in range(3, n_max + 1):
        for c in (c for c in range(2, n) if n % c == 0):
            ef, ec = expected_alpha(fr_alpha(n, c), n), expected_alpha(cr_alpha(n, c), n)
            lower = [w for w in range(1, n + 1) if ef[w] < ec[w] - 1e-12]
            higher = [w for w in range(1, n + 1) if ef[w] > ec[w] + 1e-12]
            pattern &= higher == list(range(2, n - c + 1))
            t.count(n, len(lower) + (not higher), lambda: f"n = {n}, c = {c}: " + (
                f"w = {lower[0]}: E_FR = {ef[lower[0]]:.4f} < E_CR = {ec[lower[0]]:.4f}"
                if lower else "E_FR = E_CR for every w"))
    return t.evidence(f"every n <= {n_max}, 1 < c < n, c | n, every w (cases: (n, c, w)); exact "
                      "means over all w-sets; higher exactly for 2 <= w <= n - c"
                      + ("" if pattern else " except some (n, c)"),
                      "n = 8, c = 2, w = 4: E_FR = {:.4f} > E_CR = {:.4f}".format(
                          expected_alpha(fr_alpha(8, 2), 8)[4], expected_alpha(cr_alpha(8, 2),
                                                                               8)[4]))
