"""Paper 2 (IS-GC), Sec. VI (hybrid repetition): HR's placement and conflict graphs (Thm 5-7,
Fig. 5, Sec. VI-B), Alg. 4's CONFLICT and the equal chances of Alg. 3 (Sec. VI-C)
(``theorems``; see ``isgc_common``; Thm 8-9 in ``isgc_hr_maximum``)."""

from __future__ import annotations

from math import comb

import numpy as np

from ...registry import make_code
from ._framework import Evidence, Tally, statement
from .isgc_algorithms import alg4_conflict, greedy_chains
from .isgc_common import (bit, conflicts, cr_support, edge_set, every_subset, fmt_hr, fr_support,
                          graph_of, groups_are_cliques, hr_configs, hr_graph, hr_groups_support,
                          hr_support, popcount, same_placement, subset_failures, support_of,
                          theorem6_range, unequal_sizes)


@statement(2, "Thm 5", "HR made of groups of CR(n0, c) (Sec. VI-A) has the conflict graph of "
                       "FR(n, n0) when n0 <= 2c - 1")
def _thm5(ctx) -> Evidence:
    t = Tally()
    n_max = 24 if ctx.quick else 48
    for n in range(1, n_max + 1):
        for groups in (g for g in range(1, n + 1) if n % g == 0):
            n0 = n // groups
            fr = graph_of(make_code("isgc-fr", n=n, c=n0))
            for c in range((n0 + 2) // 2, n0 + 1):
                mine = conflicts(hr_groups_support(n, c, groups))
                ours = graph_of(make_code("isgc-hr", n=n, c1=c, c2=0, groups=groups))
                bad = [k for k, A in (("the text's placement", mine), ("gradcode's isgc-hr(n, "
                                      "c1=c, c2=0)", ours)) if not (A == fr).all()]
                t.count(1, bool(bad), lambda: f"n = {n}, {groups} groups of CR({n0}, {c}): "
                      f"{' and '.join(bad)} differ from FR({n}, {n0})")
    return t.evidence(f"every n <= {n_max}, groups | n, c <= n0 <= 2c - 1: the NumPy placement "
                      "and gradcode's isgc-hr(n, c, 0, groups) against isgc-fr(n, n0) (exact)",
                      "n = 10, 2 groups of CR(5, 3): two disjoint K5, = FR(10, 5)")


@statement(2, "Sec. VI-A, Fig. 5", "FR(4, 2) is HR with 2 groups of CR(2, 2) (same conflict "
                                   "graph); with g = 1 group HR is CR(n, c)")
def _fig5(ctx) -> Evidence:
    t = Tally()
    n_max = 24 if ctx.quick else 48
    ok = (same_placement(hr_groups_support(4, 2, 2), fr_support(4, 2))
          and (graph_of(make_code("isgc-hr", n=4, c1=2, c2=0, groups=2))
               == graph_of(make_code("isgc-fr", n=4, c=2))).all())
    t.count(1, not ok, lambda: "FR(4, 2) and 2 groups of CR(2, 2) differ")
    for n in range(1, n_max + 1):
        for c in range(1, n + 1):
            cr = graph_of(make_code("isgc-cr", n=n, c=c))
            sup = hr_support(n, c, 0, 1)            # Fig. 7 with one group, c1 = c, c2 = 0
            ok = (conflicts(sup) == cr).all() and same_placement((sup + c) % n, cr_support(n, c))
            if n <= 2 * c - 1:                      # gradcode takes g = 1 there
                ok &= bool((graph_of(make_code("isgc-hr", n=n, c1=c, c2=0, groups=1))
                            == cr).all())
            t.count(1, not ok, lambda: f"HR(n={n}, c1={c}, c2=0, groups=1) is not CR({n}, {c})")
    return t.evidence(f"Fig. 5's pair; every 1 <= c <= n <= {n_max} with one group: the NumPy "
                      "Fig. 7 placement is CR's with the partitions renamed j -> j + c (same "
                      "conflict graph), and gradcode's isgc-hr where it takes g = 1",
                      "FR(4, 2) = 2 groups of CR(2, 2): W1, W2 hold {D1, D2}, W3, W4 {D3, D4}")


@statement(2, "Thm 6, Alg. 4",
           "HR(n, c1, c2), c1 >= 1, over Thm 6's range c <= n0 <= 2c - 1: every worker "
           "conflicts with every other of its group (the proof's conclusion), and CONFLICT(i1, "
           "i2) of Alg. 4, which returns True within a group, tells whether two workers conflict "
           "(either order)")
def _thm6_alg4(ctx) -> Evidence:
    t = Tally()
    n_max = 24 if ctx.quick else 48
    refused, failed = 0, {"Thm 6": set(), "Alg. 4": set()}
    for n, c1, c2, groups in theorem6_range(n_max):
        A, src = hr_graph(n, c1, c2, groups)
        refused += src == "numpy"
        key = n, c1, c2, groups
        if not groups_are_cliques(A, groups):
            failed["Thm 6"].add(key)
        F = alg4_conflict(n, c1, c2, groups)
        wrong = np.argwhere(np.triu(((F | F.T) & ~np.eye(n, dtype=bool)) != A))
        if wrong.size:
            failed["Alg. 4"].add(key)
        t.count(1, key in failed["Thm 6"] | failed["Alg. 4"], lambda: _thm6_case(
            key, A, wrong, F, key in failed["Thm 6"]))
    same = failed["Thm 6"] == failed["Alg. 4"]
    return t.evidence(
        f"every HR(n, c1, c2), c1 >= 1, c <= n0 <= 2c - 1, n <= {n_max} (gradcode's isgc-hr, or "
        f"the NumPy Fig. 7 placement for the {refused} it refuses), every pair of workers against "
        f"the placement's conflict graph; Alg. 4 read 0-based (1-based as printed, floor(i / n0) "
        f"puts W_n0 in the next group); Thm 6's clique property fails for "
        f"{len(failed['Thm 6'])}, Alg. 4 for {len(failed['Alg. 4'])}"
        + (", the same HR (a group is a clique iff n0 <= c + c1, row 'Thm 6 (proof)'), so one "
           "row" if same else ", not the same HR"), "")


def _thm6_case(key, A, wrong, F, thm6: bool) -> str:
    n, c1, c2, groups = key
    text = f"{fmt_hr(*key)} (n0 = {n // groups} <= 2c - 1 = {2 * (c1 + c2) - 1}): "
    if thm6:
        text += "a group is no clique, e.g. " + non_clique_pair(A, groups)
    if wrong.size:
        i, j = wrong[0]
        text += (f"{'; ' if thm6 else ''}CONFLICT(W{i + 1}, W{j + 1}) = "
                 f"{bool(F[i, j] or F[j, i])}, the placement says {bool(A[i, j])}")
    return text


def non_clique_pair(A: np.ndarray, groups: int) -> str:
    n0 = A.shape[0] // groups
    for q in range(groups):
        block = A[q * n0:(q + 1) * n0, q * n0:(q + 1) * n0] | np.eye(n0, dtype=bool)
        if not block.all():
            i, j = np.argwhere(~block)[0] + q * n0
            return f"W{i + 1} and W{j + 1} share no partition"
    return "none"


@statement(2, "Thm 6 (proof)", "HR with g >= 2 groups: every group is a clique of the conflict "
                               "graph iff n0 <= c + c1")
def _thm6_proof(ctx) -> Evidence:
    t = Tally()
    n_max = 24 if ctx.quick else 48
    for n, c1, c2, groups in theorem6_range(n_max):
        if groups == 1:
            continue
        A, _ = hr_graph(n, c1, c2, groups)
        n0 = n // groups
        ok = groups_are_cliques(A, groups) == (n0 <= c1 + c2 + c1)
        t.count(1, not ok, lambda: f"{fmt_hr(n, c1, c2, groups)}: cliques "
              f"{groups_are_cliques(A, groups)}, n0 <= c + c1 {n0 <= c1 + c2 + c1}")
    return t.evidence(f"every HR(n, c1, c2) of Thm 6's range with g >= 2 groups, n <= {n_max} "
                      "(with g = 1 the group is CR(n, c), complete for every n <= 2c - 1)",
                      "HR(12, 1, 3, groups=2): n0 = 6 > c + c1 = 5, "
                      + non_clique_pair(hr_graph(12, 1, 3, 2)[0], 2))


@statement(2, "Sec. VI-B", "when n0 = c, HR(n, c, 0) and HR(n, c - 1, 1) are the same placement")
def _hr_c0(ctx) -> Evidence:
    t = Tally()
    n_max = 24 if ctx.quick else 48
    for n in range(2, n_max + 1):
        for groups in (g for g in range(1, n) if n % g == 0):
            c = n // groups
            a = make_code("isgc-hr", n=n, c1=c, c2=0, groups=groups)
            b = make_code("isgc-hr", n=n, c1=c - 1, c2=1, groups=groups)
            ok = (same_placement(support_of(a), support_of(b))
                  and same_placement(hr_support(n, c, 0, groups), hr_support(n, c - 1, 1, groups)))
            t.count(1, not ok, lambda: f"n = {n}, groups = {groups}, c = n0 = {c}: the "
                  "placements differ")
    return t.evidence(f"every n <= {n_max}, groups | n, c = n0 >= 2: gradcode's isgc-hr and the "
                      "NumPy Fig. 7 placement, the partition set of every worker",
                      "HR(8, 4, 0, groups=2) = HR(8, 3, 1, groups=2): W2 holds "
                      + str(sorted((hr_support(8, 3, 1, 2)[1] + 1).tolist())) + " in both")


def hr_chain(n: int, c: int, groups: int) -> list[tuple[int, np.ndarray, str]]:
    """``(c1, E_HR(n, c1, c - c1), source)`` for ``c1 = c, c - 1, ..., n0 - c`` (Theorem 7)."""
    n0 = n // groups
    return [(c1, *hr_graph(n, c1, c - c1, groups)) for c1 in range(c, n0 - c - 1, -1)]


@statement(2, "Thm 7", "E_HR(n,c,0) ⊆ E_HR(n,c-1,1) ⊆ ... ⊆ E_HR(n,n0-c,2c-n0) (c <= n0 <= 2c-1)")
def _thm7(ctx) -> Evidence:
    t = Tally()
    n_max = 20 if ctx.quick else 48
    for n in range(1, n_max + 1):
        for groups in (g for g in range(1, n + 1) if n % g == 0):
            n0 = n // groups
            for c in range((n0 + 2) // 2, n0 + 1):
                chain = hr_chain(n, c, groups)
                for (c1, A, _), (_, B, _) in zip(chain, chain[1:]):
                    miss = subset_failures(A, B)
                    t.count(1, bool(miss), lambda: f"edges of {fmt_hr(n, c1, c - c1, groups)} "
                          f"missing from {fmt_hr(n, c1 - 1, c - c1 + 1, groups)}: {miss[:3]}")
    return t.evidence(f"every n <= {n_max}, groups | n, c <= n0 <= 2c - 1, every link "
                      "(gradcode's isgc-hr / isgc-cr, all accepted along the chain); exact",
                      "n = 12, groups = 2, c = 4: |E| = " + " ⊆ ".join(
                          f"{len(edge_set(A))} (c1 = {c1})" for c1, A, _ in hr_chain(12, 4, 2)))


@statement(2, "Sec. VI-B (after Thm 7)", "when n0 = c: E_FR(n,c) = E_HR(n,c,0) ⊆ ... ⊆ "
                                         "E_HR(n,0,c) = E_CR(n,c)")
def _fr_hr_cr(ctx) -> Evidence:
    t = Tally()
    n_max = 24 if ctx.quick else 48
    for n in range(1, n_max + 1):
        for groups in (g for g in range(1, n + 1) if n % g == 0):
            c = n // groups
            chain = hr_chain(n, c, groups)
            bad = []
            if not (chain[0][1] == graph_of(make_code("isgc-fr", n=n, c=c))).all():
                bad.append("E_HR(n, c, 0) != E_FR(n, c)")
            if not (chain[-1][1] == graph_of(make_code("isgc-cr", n=n, c=c))).all():
                bad.append("E_HR(n, 0, c) != E_CR(n, c)")
            bad += [f"E_HR(n, {c1}, {c - c1}) ⊄ E_HR(n, {c1 - 1}, {c - c1 + 1})"
                    for (c1, A, _), (_, B, _) in zip(chain, chain[1:]) if subset_failures(A, B)]
            t.count(1, bool(bad), lambda: f"n = {n}, c = n0 = {c}: " + "; ".join(bad))
    return t.evidence(f"every n <= {n_max}, groups | n, c = n0: gradcode's isgc-fr, isgc-hr, "
                      "isgc-cr (exact)", "n = 12, c = n0 = 4: |E| = " + " ⊆ ".join(
                          f"{len(edge_set(A))} (c1 = {c1})" for c1, A, _ in hr_chain(12, 4, 3))
                      + f" (FR(12, 4): {len(edge_set(graph_of(make_code('isgc-fr', n=12, c=4))))}"
                      f", CR(12, 4): {len(edge_set(graph_of(make_code('isgc-cr', n=12, c=4))))})")


def hr_alg3_chances(n: int, c1: int, c2: int, groups: int) -> tuple[np.ndarray, np.ndarray]:
    """Alg. 3 with Alg. 4 (a random group with received workers, its received workers as
    starts in random order, the first largest I' kept) with ``W'`` uniform among the
    ``w``-sets: ``P[w, i]`` (worker ``i`` in I) and ``Q[w, j]`` (partition ``j`` in ĝ), exact."""
    n0 = n // groups
    S = every_subset(n)[1:]
    w = popcount(S)
    chains = greedy_chains(~alg4_conflict(n, c1, c2, groups), S)
    sizes = np.array([popcount(ch) for ch in chains])
    parts = np.array([sum(1 << int(j) for j in row) for row in hr_support(n, c1, c2, groups)])
    hit = [(S & (((1 << n0) - 1) << (q * n0))) != 0 for q in range(groups)]
    n_hit = np.sum(hit, axis=0)
    P, Q = np.zeros((n + 1, n)), np.zeros((n + 1, n))
    for q in range(groups):
        members = range(q * n0, (q + 1) * n0)
        best = np.max([np.where(bit(S, i), sizes[i], -1) for i in members], axis=0)
        tops = [bit(S, i) & (sizes[i] == best) for i in members]
        n_top = np.maximum(np.sum(tops, axis=0), 1)
        for i, top in zip(members, tops):
            weight = top / n_top / np.maximum(n_hit, 1)
            held = np.zeros(S.size, dtype=np.int64)
            for k in range(n):
                held |= np.where(bit(chains[i], k), parts[k], 0)
            for k in range(n):
                P[:, k] += np.bincount(w, weights=weight * bit(chains[i], k), minlength=n + 1)
                Q[:, k] += np.bincount(w, weights=weight * bit(held, k), minlength=n + 1)
    norm = np.array([comb(n, k) for k in range(n + 1)], float)[:, None]
    return P / norm, Q / norm


@statement(2, "Sec. VI-C", "HR: with the starts of Alg. 3 randomly permuted, the gradients on "
                           "every worker have the same chance to be added into ĝ (W' uniform "
                           "among the w-sets)")
def _hr_chances(ctx) -> Evidence:
    t = Tally()
    n_max = 8 if ctx.quick else 12
    by_partition = []
    for p in hr_configs(n_max):
        P, Q = hr_alg3_chances(**p)
        bad = unequal_sizes(P)
        by_partition += [(p, w, Q[w]) for w in unequal_sizes(Q)]
        t.count(p["n"], len(bad), lambda: f"{fmt_hr(**p)}, w = {bad[0]}: P(worker in I) = "
              f"{np.round(P[bad[0]], 3).tolist()} (P(partition in ĝ) = "
              f"{np.round(Q[bad[0]], 3).tolist()})")
    part = (f"; per partition (Assumption 2) unequal in {len(by_partition)} of them, e.g. "
            f"{fmt_hr(**by_partition[0][0])}, w = {by_partition[0][1]}: P(partition in ĝ) = "
            f"{np.round(by_partition[0][2], 3).tolist()}" if by_partition else
            "; per partition equal in every case")
    return t.evidence(f"every accepted HR, n <= {n_max}, every w (cases: (HR, w)); exact over "
                      "every W', group and order of the starts (line 10 read as I' = I' ∪ "
                      "{next})" + part, "")
