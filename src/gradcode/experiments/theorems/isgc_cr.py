"""Paper 2 (IS-GC), Sec. V-A/B (cyclic repetition): Fig. 3(a) and 4, CR's conflict graph
(Thm 1), Alg. 2's greedy search (Thm 2, its proof, Thm 3), and graph decoding against every
sum of received plain sums (the abstract's claim, under the paper's decoding); real-weighted
combinations, beyond the paper, are counted by ``linear_gains`` for a check of ``isgc-recovery``
(``theorems``; see ``isgc_common``)."""

from __future__ import annotations

import numpy as np

from ...registry import make_code
from ._framework import Evidence, Tally, statement
from .isgc_algorithms import (alg2_free, alg2_pick, arrival_greedy, best_linear_recovery,
                              best_plain_sums, greedy_chains)
from .isgc_common import (alpha_fr_cr, bit, circulant, cr_alpha, cr_support, edge_set,
                          every_subset, fmt_workers, fr_cr_schemes, fr_support, graph_of,
                          independent_and_maximal, mask_of, members_of, neighbour_masks,
                          popcount, same_placement, support_of)


@statement(2, "Sec. V-A, Fig. 3(a)", "CR, n = 4, c = 2, W1 then W2, W4 received: decoding in "
                                     "arrival order keeps only W1 (g1 + g2), while dropping W1 "
                                     "gives (g2 + g3) + (g4 + g1) = g")
def _fig3a(ctx) -> Evidence:
    code = make_code("isgc-cr", n=4, c=2)
    A = graph_of(code)
    alpha = cr_alpha(4, 2)
    checks = {"arrival order keeps {W1}": arrival_greedy([0, 1, 3], A) == [0],
              "alpha(G[{W1, W2, W4}]) = 2 with {W2, W4} independent":
                  alpha[0b1011] == 2 and not A[1, 3],
              "gradcode's decoder recovers g from {W1, W2, W4}":
                  bool(np.allclose(code.decode([0, 1, 3]).recovered, 1))}
    bad = [k for k, ok in checks.items() if not ok]
    return Evidence(len(checks), len(bad), "isgc-cr(4, 2): greedy in arrival order, exact "
                    "alpha, gradcode's decode", "fails: " + "; ".join(bad) if bad else
                    "arrival order: {W1} (2 partitions); maximum {W2, W4} (4 = all)")


#: Fig. 4, as the text describes it: FR(4, 2) pairs W1-W2 and W3-W4, CR(4, 2) is the 4-cycle
FIG4_EDGES = {"FR": {(0, 1), (2, 3)}, "CR": {(0, 1), (1, 2), (2, 3), (0, 3)}}


@statement(2, "Sec. V, Fig. 4", "conflict graphs with n = 4, c = 2: FR is W1-W2, W3-W4; CR is "
                                "the cycle W1-W2-W3-W4; with W1, W2, W3 received the greedy "
                                "search finds {W1, W3} from W1 but only {W2} from W2")
def _fig4(ctx) -> Evidence:
    fr, cr = make_code("isgc-fr", n=4, c=2), make_code("isgc-cr", n=4, c=2)
    chains = greedy_chains(alg2_free(4, 2), np.array([0b0111]))[:, 0]
    checks = {"FR's edges": edge_set(graph_of(fr)) == FIG4_EDGES["FR"],
              "CR's edges": edge_set(graph_of(cr)) == FIG4_EDGES["CR"],
              "greedy from W1 gives {W1, W3}": chains[0] == 0b0101,
              "greedy from W2 gives {W2}": chains[1] == 0b0010}
    bad = [k for k, ok in checks.items() if not ok]
    return Evidence(len(checks), len(bad), "gradcode's isgc-fr(4, 2) and isgc-cr(4, 2) conflict "
                    "graphs; Alg. 2's lines 4-12 on W' = {W1, W2, W3}",
                    "fails: " + "; ".join(bad) if bad else
                    "FR: {W1W2, W3W4}; CR: 4-cycle; greedy {W1, W3} / {W2}")


def is_circulant_cr(n: int, c: int, support: np.ndarray, A: np.ndarray) -> list[str]:
    """Theorem 1 on one instance: ``support`` must be Sec. III's CR placement and ``A`` the
    circulant ``C_n^{1..c-1}``."""
    bad = []
    if not same_placement(support, cr_support(n, c)):
        bad.append("the placement is not Sec. III's CR")
    wrong = [(int(i) + 1, int(j) + 1) for i, j in np.argwhere(A != circulant(n, c))]
    if wrong:
        bad.append(f"edges differ from C_{n}^{{1..{c - 1}}} at {wrong[:3]}")
    return bad


@statement(2, "Thm 1", "the conflict graph of CR(n, c) is the circulant graph C_n^{1,...,c-1}")
def _thm1(ctx) -> Evidence:
    t = Tally()
    n_max = 24 if ctx.quick else 64
    for n in range(1, n_max + 1):
        for c in range(1, n + 1):
            code = make_code("isgc-cr", n=n, c=c)
            bad = is_circulant_cr(n, c, support_of(code), graph_of(code))
            t.count(1, bool(bad), lambda: f"CR({n}, {c}): " + "; ".join(bad))
    return t.evidence(f"gradcode's isgc-cr(n, c) for every 1 <= c <= n <= {n_max}: placement "
                      "against Sec. III's text, conflict graph against C_n^{1..c-1} (exact)",
                      "CR(7, 3) = C_7^{1,2}: every worker conflicts with 4 others")


def _cr_cases(n_max: int):
    for n in range(1, n_max + 1):
        for c in range(1, n + 1):
            yield n, c


@statement(2, "Thm 2", "CR: the greedy search of Alg. 2 (lines 4-12) from any received worker "
                       "finds a maximal independent set of G[W']")
def _thm2(ctx) -> Evidence:
    t = Tally()
    n_max = 9 if ctx.quick else 13
    for n, c in _cr_cases(n_max):
        A = graph_of(make_code("isgc-cr", n=n, c=c))
        S = every_subset(n)
        chains = greedy_chains(alg2_free(n, c), S)
        for i in range(n):
            has = bit(S, i)
            _, maximal = independent_and_maximal(chains[i][has], S[has], A)
            t.count(has.sum(), (~maximal).sum(), lambda: f"CR({n}, {c}), W' = "
                  f"{fmt_workers(S[has][~maximal][0])}, from W{i + 1}: "
                  f"{fmt_workers(chains[i][has][~maximal][0])} is not a maximal independent set")
    return t.evidence(f"every CR(n, c), n <= {n_max}, every W' and start, against gradcode's "
                      "conflict graph; line 7 read as the clockwise scan next = i + j (with i0 "
                      "moving along, as printed, it skips workers: CR(3, 1), W' = W, from W1 "
                      "{W1, W2})", _chain_example(7, 2, mask_of(1, 2, 3, 5,
                                                                                      6)))


def _chain_example(n: int, c: int, mask: int) -> str:
    chains = greedy_chains(alg2_free(n, c), np.array([mask]))[:, 0]
    alpha = cr_alpha(n, c)[mask]
    return f"CR({n}, {c}), W' = {fmt_workers(mask)} (alpha = {alpha}): " + ", ".join(
        f"from W{i + 1} {fmt_workers(chains[i])}" for i in members_of(mask))


@statement(2, "Thm 2 (proof)", "CR: the greedy search from W_i finds a largest independent set "
                               "of G[W'] among those containing W_i")
def _thm2_proof(ctx) -> Evidence:
    t = Tally()
    n_max = 9 if ctx.quick else 13
    for n, c in _cr_cases(n_max):
        A = graph_of(make_code("isgc-cr", n=n, c=c))
        alpha, closed = cr_alpha(n, c), neighbour_masks(A) | (1 << np.arange(n))
        S = every_subset(n)
        chains = greedy_chains(alg2_free(n, c), S)
        for i in range(n):
            has = bit(S, i)
            best = 1 + alpha[S[has] & ~closed[i]]
            bad = popcount(chains[i][has]) != best
            t.count(has.sum(), bad.sum(), lambda: f"CR({n}, {c}), W' = "
                  f"{fmt_workers(S[has][bad][0])}, from W{i + 1}: "
                  f"{popcount(chains[i][has][bad][:1])[0]} workers, {best[bad][0]} possible with "
                  f"W{i + 1}")
    return t.evidence(f"every CR(n, c), n <= {n_max}, every W' and start; the largest set with "
                      "W_i is 1 + alpha(G[W' - N[W_i]]) (exact)",
                      _chain_example(7, 2, mask_of(1, 2, 3, 5, 6)))


@statement(2, "Thm 3", "CR: Alg. 2 (greedy searches from the received workers among u, ..., "
                       "u + c - 1 for a random received u) returns a maximum independent set "
                       "of G[W']")
def _thm3(ctx) -> Evidence:
    t = Tally()
    n_max, n_dec = (9, 6) if ctx.quick else (13, 9)
    rng = np.random.default_rng(ctx.seed)
    for n, c in _cr_cases(n_max):
        code = make_code("isgc-cr", n=n, c=c)
        A, alpha = graph_of(code), cr_alpha(n, c)
        S = every_subset(n)
        chains = greedy_chains(alg2_free(n, c), S)
        for u in range(n):
            has = bit(S, u)
            got = popcount(alg2_pick(chains[:, has], S[has], u, c))
            bad = got != alpha[S[has]]
            t.count(has.sum(), bad.sum(), lambda: f"Alg. 2 on CR({n}, {c}), W' = "
                  f"{fmt_workers(S[has][bad][0])}, u = W{u + 1}: {got[bad][0]} workers, alpha = "
                  f"{alpha[S[has]][bad][0]}")
        frac = code.recovery_many((S[1:, None] >> np.arange(n) & 1).astype(bool))[0]
        bad = np.abs(frac * n - c * alpha[S[1:]]) > 1e-9
        t.count(S.size - 1, bad.sum(), lambda: f"gradcode isgc-cr({n}, {c}).recovery_many, W' = "
              f"{fmt_workers(S[1:][bad][0])}: {frac[bad][0] * n} partitions, c alpha = "
              f"{c * alpha[S[1:]][bad][0]}")
        if n > n_dec:
            continue
        for mask in range(1, 1 << n):
            d = code.decode(members_of(mask), rng=rng)
            m = int(sum(1 << int(v) for v in np.flatnonzero(d.weights)))
            ok = (popcount(m) == alpha[mask] and np.isin(d.weights[d.weights != 0], 1.0).all()
                  and independent_and_maximal(np.array([m]), np.array([mask]), A)[0][0])
            t.count(1, not ok, lambda: f"gradcode isgc-cr({n}, {c}).decode("
                  f"{fmt_workers(mask)}) chose {fmt_workers(m)}, alpha = {alpha[mask]}")
    return t.evidence(f"Alg. 2 from every u on every W' of every CR(n, c), n <= {n_max}; "
                      f"gradcode's isgc-cr closed form (every W', n <= {n_max}) and decoder "
                      f"(every W', n <= {n_dec}); alpha exact",
                      _chain_example(7, 3, mask_of(1, 2, 4, 5, 7)) + "; Alg. 2 from u = W1 tries "
                      "W1, W2 and keeps the first largest")


def placement_matrix(kind: str, n: int, c: int) -> np.ndarray:
    """The 0/1 ``n x n`` placement of FR or CR (Sec. III): worker ``i`` holds partition ``j``."""
    B = np.zeros((n, n), dtype=np.int64)
    sup = fr_support(n, c) if kind == "FR" else cr_support(n, c)
    B[np.repeat(np.arange(n), c), sup.ravel()] = 1
    return B


@statement(2, "Sec. V-A (abstract)", "graph decoding maximizes the recovery: adding the "
                                     "received plain sums (ĝ = Σ_{i∈I} g_i, Sec. IV) gives at "
                                     "most |I| = c·α(G[W']) partitions, and the graph decoder "
                                     "gives that many")
def _plain_sums(ctx) -> Evidence:
    t = Tally()
    n_max, n_dec = (10, 6) if ctx.quick else (12, 8)
    rng = np.random.default_rng(ctx.seed)
    for kind, n, c in fr_cr_schemes(n_max):
        best = best_plain_sums(placement_matrix(kind, n, c))
        alpha = alpha_fr_cr(kind, n, c)
        bad = best[1:] != c * alpha[1:]
        t.add(bad, lambda k: f"{kind}({n}, {c}), W' = {fmt_workers(k + 1)}: adding received "
              f"sums gives {best[k + 1]} partitions, c alpha = {c * alpha[k + 1]}")
        if n > n_dec:
            continue
        code = make_code("isgc-fr" if kind == "FR" else "isgc-cr", n=n, c=c)
        for mask in range(1, 1 << n):
            d = code.decode(members_of(mask), rng=rng)
            got = int(round(d.recovered_fraction * n))
            ok = got == best[mask] and np.isin(d.weights[d.weights != 0], 1.0).all()
            t.count(1, not ok, lambda: f"gradcode {code.name}({n}, {c})"
                    f".decode({fmt_workers(mask)}): {got} partitions, adding plain sums "
                    f"gives {best[mask]}")
    return t.evidence(f"every FR(n, c) (c | n) and CR(n, c), n <= {n_max}, every W': the most "
                      "partitions a sum of distinct received coded gradients gives with each "
                      "partition at most once (brute force over the subsets of W') against c "
                      f"alpha (exact); gradcode's graph decoder (0/1 weights) on every W' for n <= "
                      f"{n_dec}; real-weighted combinations, beyond the paper, are a check of "
                      "isgc-recovery", "CR(3, 2), W' = {W1, W2, W3}: plain sums give 2 "
                      "partitions = c alpha")


def linear_gains(n_max: int) -> tuple[int, int, str, set]:
    """Beyond the paper: real-weighted combinations of the received sums against graph
    decoding, on every FR and CR with ``n <= n_max`` and every ``W'``: ``(cases, cases where
    they recover more than c alpha, the first, the (kind, c | n) of those)``."""
    cases, gains, first, where = 0, 0, "", set()
    for kind, n, c in fr_cr_schemes(n_max):
        B = placement_matrix(kind, n, c).astype(float)
        alpha = alpha_fr_cr(kind, n, c)
        for mask in range(1, 1 << n):
            best = best_linear_recovery(B[members_of(mask)])
            cases += 1
            if best > c * alpha[mask]:
                gains += 1
                where.add((kind, n % c == 0))
                first = first or (f"{kind}({n}, {c}), W' = {fmt_workers(mask)}: a real-weighted "
                                  f"combination recovers {best} partitions, c alpha = "
                                  f"{c * alpha[mask]}" + (" ((sum of all) / c = g)"
                                                          if mask == (1 << n) - 1 else ""))
    return cases, gains, first, where
