"""Paper 2 (IS-GC), Sec. I-IV: the introduction's worked examples (Fig. 1(b), 1(d), 2(b)), FR's
Alg. 1 and the equal chances of Alg. 1-2 (Assumption 2) (``theorems``; see ``isgc_common``)."""

from __future__ import annotations

import itertools
from math import comb

import numpy as np

from ...registry import make_code
from ._framework import Evidence, Tally, statement
from .isgc_algorithms import alg1_pick, alg2_free, alg2_pick, decodable_sums, greedy_chains
from .isgc_common import (bit, cr_support, every_subset, fmt_workers, fr_alpha, fr_cr_schemes,
                          graph_of, independent_and_maximal, members_of, popcount, support_of,
                          unequal_sizes)


#: Fig. 1(b): the coded gradients printed for W1, W3 and W4 (CR, n = 4, c = 2; 0-based keys)
FIG1B_ROWS = {0: [-1.0, 1.0, 0.0, 0.0], 2: [0.0, 0.0, 1.0, 1 / 3], 3: [2.0, 0.0, 0.0, 2 / 3]}


def fig1b_failures(rows: dict, support: np.ndarray) -> list[str]:
    """What is wrong with Fig. 1(b)'s sum: the rows must add up to ``g`` (all ones, to 1e-12)
    and each may only use its worker's partitions."""
    bad = []
    total = np.sum(list(rows.values()), axis=0)
    if np.abs(total - 1).max() > 1e-12:
        bad.append(f"the rows add up to {np.round(total, 6).tolist()}, not g")
    for w, r in rows.items():
        if not set(np.flatnonzero(r).tolist()) <= set(support[w].tolist()):
            bad.append(f"W{w + 1}'s row {r} uses partitions outside {support[w].tolist()}")
    return bad


@statement(2, "Sec. I, Fig. 1(b)", "GC, n = 4, c = 2, W2 straggling: (-g1 + g2) + (g3 + g4/3) "
                                   "+ (2/3 g4 + 2 g1) = g, each coded gradient from its "
                                   "worker's own CR partitions")
def _fig1b(ctx) -> Evidence:
    bad = fig1b_failures(FIG1B_ROWS, support_of(make_code("isgc-cr", n=4, c=2)))
    return Evidence(1 + len(FIG1B_ROWS), len(bad),
                    "the printed coefficients of W1, W3, W4 summed, and their supports against "
                    "isgc-cr(4, 2)'s placement", "; ".join(bad) or
                    "the rows sum to (1, 1, 1, 1) on W1 = {D1, D2}, W3 = {D3, D4}, W4 = {D4, D1}")


@statement(2, "Sec. I, Fig. 1(d)", "IS-GC (CR, n = 4, c = 2) recovers g1 + ... + g4 from two "
                                   "workers (W1, W3) where IS-SGD recovers g1 + g3; W1 "
                                   "conflicts with W2 (both hold g2)")
def _fig1d(ctx) -> Evidence:
    code = make_code("isgc-cr", n=4, c=2)
    checks = {
        "W1 ~ W2 in isgc-cr(4, 2)'s conflict graph": bool(graph_of(code)[0, 1]),
        "isgc-cr(4, 2) decodes g from {W1, W3}": bool(np.allclose(code.decode([0, 2]).recovered,
                                                                  1)),
        "IS-SGD ('ignore', n = 4) recovers g1 + g3 from {W1, W3}":
            make_code("ignore", n=4).decode([0, 2]).recovered.tolist() == [1, 0, 1, 0]}
    bad = [k for k, ok in checks.items() if not ok]
    return Evidence(len(checks), len(bad), "gradcode's isgc-cr(4, 2) and ignore(4) on the "
                    "figure's two workers", "fails: " + "; ".join(bad) if bad else
                    "isgc-cr recovers (1, 1, 1, 1), ignore (1, 0, 1, 0)")


@statement(2, "Sec. IV (Fig. 2(b))", "with GC's non-1 coefficients (CR, n = 4, c = 2) no "
                                     "ĝ = Σ_{i∈I} g_i (I ≠ ∅) can be decoded from fewer than "
                                     "3 workers")
def _fig2b(ctx) -> Evidence:
    t = Tally()
    sets = [("printed Fig. 1(b)", W, np.array([FIG1B_ROWS[w] for w in W]))
            for k in (1, 2) for W in itertools.combinations(FIG1B_ROWS, k)]
    seeds = range(10 if ctx.quick else 100)
    for seed in seeds:
        B = make_code("gc-cr", n=4, s=1, seed=seed).B
        sets += [(f"gc-cr(4, s=1, seed={seed})", W, B[list(W)])
                 for k in (1, 2) for W in itertools.combinations(range(4), k)]
    for name, W, R in sets:
        I = decodable_sums(R)
        t.count(1, bool(I), lambda: f"{name}: {fmt_workers(sum(1 << w for w in W))} decode "
              f"ĝ over partitions {[i + 1 for i in I[0]]}")
    return t.evidence(f"every 1 or 2 of the printed rows of W1, W3, W4 and of gradcode's gc-cr"
                      f"(4, s=1) for seeds 0..{len(seeds) - 1}, every I (least squares, 1e-9)",
                      "no single worker or pair decodes any partial sum")


@statement(2, "Sec. IV, Alg. 1", "FR: Alg. 1 (one random received worker from every group "
                                 "hit) returns a maximum independent set of G[W']")
def _alg1(ctx) -> Evidence:
    t = Tally()
    n_max, n_dec = (12, 6) if ctx.quick else (16, 9)
    rng = np.random.default_rng(ctx.seed)
    for n in range(1, n_max + 1):
        for c in (c for c in range(1, n + 1) if n % c == 0):
            code = make_code("isgc-fr", n=n, c=c)
            A, alpha = graph_of(code), fr_alpha(n, c)
            S = every_subset(n)[1:]
            pick = alg1_pick(S, n, c)
            indep, _ = independent_and_maximal(pick, S, A)
            bad = ~indep | (popcount(pick) != alpha[S])
            t.count(S.size, bad.sum(), lambda: f"FR({n}, {c}), W' = "
                  f"{fmt_workers(S[bad][0])}: Alg. 1 picks {fmt_workers(pick[bad][0])}, alpha = "
                  f"{alpha[S[bad][0]]}")
            if n > n_dec:
                continue
            for mask in S.tolist():             # gradcode's decoder, which implements Alg. 1
                d = code.decode(members_of(mask), rng=rng)
                chosen = np.flatnonzero(d.weights)
                m = int(sum(1 << int(v) for v in chosen))
                ok = (np.isin(d.weights[chosen], 1.0).all() and chosen.size == alpha[mask]
                      and independent_and_maximal(np.array([m]), np.array([mask]), A)[0][0])
                t.count(1, not ok, lambda: f"gradcode isgc-fr({n}, {c}).decode("
                      f"{fmt_workers(mask)}) chose {fmt_workers(m)}, alpha = {alpha[mask]}")
    return t.evidence(f"every FR(n, c), c | n, n <= {n_max}, every W' (Alg. 1 on bit masks); "
                      f"gradcode's isgc-fr decoder on every W' for n <= {n_dec}; alpha exact",
                      "FR(4, 2), W' = {W1, W2, W3}: {W1, W3}, alpha = 2")


def fr_chances(n: int, c: int) -> tuple[np.ndarray, np.ndarray]:
    """Alg. 1 with ``W'`` uniform among the ``w``-sets: ``P[w, i]`` that worker ``i`` is in I,
    ``Q[w, j]`` that partition ``j`` is in ĝ (exact)."""
    S = every_subset(n)[1:]
    w = popcount(S)
    P, Q = np.zeros((n + 1, n)), np.zeros((n + 1, n))
    for i in range(n):
        q = i // c
        in_group = popcount(S & (((1 << c) - 1) << (q * c)))
        P[:, i] = np.bincount(w, weights=bit(S, i) / np.maximum(in_group, 1), minlength=n + 1)
        Q[:, i] = np.bincount(w, weights=in_group > 0, minlength=n + 1)
    norm = np.array([comb(n, k) for k in range(n + 1)], float)[:, None]
    return P / norm, Q / norm


def cr_chances(n: int, c: int, random_u: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Alg. 2 (``u`` uniform in ``W'``, or the first received worker when not ``random_u``)
    with ``W'`` uniform among the ``w``-sets: ``P[w, i]`` (worker ``i`` in I), ``Q[w, j]``
    (partition ``j`` in ĝ), exact."""
    S = every_subset(n)[1:]
    w = popcount(S)
    chains = greedy_chains(alg2_free(n, c), S)
    parts = np.array([sum(1 << int(j) for j in row) for row in cr_support(n, c)], np.int64)
    P, Q = np.zeros((n + 1, n)), np.zeros((n + 1, n))
    first = S & -S
    for u in range(n):
        weight = bit(S, u) / w if random_u else (first == 1 << u).astype(float)
        pick = alg2_pick(chains, S, u, c)
        held = np.zeros(S.size, dtype=np.int64)
        for i in range(n):
            held |= np.where(bit(pick, i), parts[i], 0)
        for i in range(n):
            P[:, i] += np.bincount(w, weights=weight * bit(pick, i), minlength=n + 1)
            Q[:, i] += np.bincount(w, weights=weight * bit(held, i), minlength=n + 1)
    norm = np.array([comb(n, k) for k in range(n + 1)], float)[:, None]
    return P / norm, Q / norm


@statement(2, "Sec. IV, V-B, VII-B", "with W' uniform among the w-sets, Alg. 1 (FR) and Alg. 2 "
                                     "(CR, random u) put every worker in I and every partition "
                                     "in ĝ with the same probability (Assumption 2)")
def _chances(ctx) -> Evidence:
    t = Tally()
    n_max = 9 if ctx.quick else 12
    for kind, n, c in fr_cr_schemes(n_max):
        P, Q = fr_chances(n, c) if kind == "FR" else cr_chances(n, c)
        bad = sorted(set(unequal_sizes(P)) | set(unequal_sizes(Q)))
        t.count(n, len(bad), lambda: f"{kind}({n}, {c}), w = {bad[0]}: P(worker in I) = "
              f"{np.round(P[bad[0]], 4).tolist()}, P(partition in ĝ) = "
              f"{np.round(Q[bad[0]], 4).tolist()}")
    return t.evidence(f"every FR(n, c) (c | n) and CR(n, c), n <= {n_max}, every w (cases: "
                      "(scheme, w)); exact over every W' and every u (1e-9)",
                      "CR(8, 3), w = 4: P(worker in I) = {:.4f} for each, P(partition in ĝ) = "
                      "{:.4f}".format(*(x[4].mean() for x in cr_chances(8, 3))))
