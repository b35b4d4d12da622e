"""Paper 3, Sec. V (the group-based coding scheme): why groups (reason (2)), Alg. 2
(FindAllGroups, PruneGroups), eq. 8, Thm 6 and its proof, and Example 2, against gradcode's
``heter-group`` (``theorems``; see ``heter_common``)."""

from __future__ import annotations

from itertools import combinations

import numpy as np

from ...analysis import completion_time, is_robust
from ...registry import make_code
from ._framework import Evidence, Tally, statement
from .heter_common import (EX2, TOL, cached_code, condition1, eq6_support, fmt_instance,
                           fmt_sizes, integer_instances, quotas, random_speed_instances,
                           robust_fails, spans_one, straggler_sets)
from .heter_optimality import thm5_fails
from .heter_robustness import has_p1, has_p2, lemma2_B


def needs_all_fails(B, s: int) -> str:
    """Sec. V, reason (2): no set of fewer than ``m - s`` workers spans ``1``."""
    B = np.asarray(B, dtype=float)
    m = B.shape[0]
    for r in range(1, m - s):
        for I in combinations(range(m), r):
            if spans_one(B[list(I)]):
                return f"workers {[i + 1 for i in I]} (1-based) span 1: {r} < m - s = {m - s}"
    return ""


@statement(3, "Sec. V (2)", "recovering g from Alg. 1's B needs m - s workers: no fewer than "
                            "m - s workers have 1 in their span")
def _needs_all(ctx) -> Evidence:
    t = Tally()
    nondegenerate = 0
    first_nd = ""
    for speeds, s, k in integer_instances(ctx, n_random=0):
        code = cached_code("heter", speeds, s, k, ctx.seed)
        bad = needs_all_fails(code.B, s)
        t.count(1, bool(bad),
                lambda: f"{fmt_instance(speeds, s, k)}, n = {code.allocation.tolist()}: {bad}")
        if bad and code.allocation.min() >= 2 and k >= len(speeds) - s:
            nondegenerate += 1
            first_nd = first_nd or (f"{fmt_instance(speeds, s, k)}, n = "
                                    f"{code.allocation.tolist()}: {bad}")
    tail = f"; with every n_i >= 2 and k >= m - s: {first_nd}" if first_nd else ""
    return Evidence(t.cases, t.failures, f"heter on {fmt_sizes(ctx)}, every worker set of size "
                    f"< m - s ({nondegenerate} counterexamples have every n_i >= 2 and k >= "
                    "m - s)", t.example + tail)


def exact_covers(support) -> set[tuple[int, ...]]:
    """Condition (*) by enumeration: every set of workers (holding something) whose partition
    sets are pairwise disjoint and cover all ``k`` partitions, as sorted 0-based tuples."""
    S = np.asarray(support) != 0
    m, k = S.shape
    rows = [i for i in range(m) if S[i].any()]
    size = S.sum(axis=1)
    out = set()
    for r in range(1, len(rows) + 1):
        for G in combinations(rows, r):
            if size[list(G)].sum() == k and S[list(G)].any(axis=0).all():
                out.add(G)
    return out


def pairwise_disjoint(groups) -> bool:
    """Condition (**) (read as in Example 2: no two groups share a worker)."""
    seen: set[int] = set()
    for g in groups:
        if seen & set(g):
            return False
        seen |= set(g)
    return True


def group_instances(ctx):
    return integer_instances(ctx, n_random=4 if ctx.quick else 20, m_random=(6, 10)) \
        + random_speed_instances(ctx)


def groups_fail(support, candidates, retained) -> str:
    """Alg. 2: ``candidates`` are exactly the sets of workers meeting (*) (FindAllGroups);
    ``retained`` are candidates, pairwise disjoint (**), and keep every candidate that meets no
    other (PruneGroups only drops a group intersecting the most others)."""
    want = exact_covers(support)
    got = {tuple(sorted(g)) for g in candidates}
    if got != want:
        return f"groups found {sorted(got)}, condition (*) holds for {sorted(want)}"
    kept = {tuple(sorted(g)) for g in retained}
    if not kept <= want or not pairwise_disjoint(kept):
        return f"retained {sorted(kept)} are not pairwise-disjoint groups"
    alone = {g for g in want if all(not set(g) & set(h) for h in want if h != g)}
    if not alone <= kept:
        return f"pruned {sorted(alone - kept)}, which meet no other group"
    return ""


@statement(3, "Alg. 2", "FindAllGroups finds every set of workers whose partitions are disjoint "
                        "and cover D (*); PruneGroups leaves pairwise-disjoint groups (**)")
def _alg2(ctx) -> Evidence:
    t = Tally()
    with_groups = 0
    for speeds, s, k in group_instances(ctx):
        code = cached_code("heter-group", speeds, s, k, ctx.seed)
        bad = groups_fail(code.B != 0, code.candidate_groups, code.groups)
        with_groups += len(code.candidate_groups) > 0
        t.count(1, bool(bad), lambda: f"{fmt_instance(speeds, s, k)}: {bad}")
    return t.evidence(f"heter-group on {fmt_sizes(ctx)}, random integer-quota (m <= 10) and "
                      f"random-speed instances ({with_groups} with groups): found groups vs "
                      "every worker set",
                      "Example 2: G1 = {W1,W2,W3}, G2 = {W3,W4}, G3 = {W2,W5} found, G1 pruned")


def eq8_fails(code, s: int) -> str:
    """Eq. 8 for each retained group ``G``: ``a = 1_G`` has ``a B = 1`` exactly and
    ``||a||_0 <= m - s``; gradcode's decoder from exactly ``G`` returns ``a``."""
    m = code.B.shape[0]
    for g in code.groups:
        a = np.zeros(m)
        a[list(g)] = 1.0
        if not np.array_equal(a @ code.B, np.ones(code.B.shape[1])) or len(g) > m - s:
            return f"group {list(g)}: a B = {(a @ code.B).tolist()}, |G| = {len(g)}"
        d = code.decode(list(g))
        if not d.exact or np.abs(d.weights - a).max() > TOL:
            return f"group {list(g)}: decoder weights {d.weights.tolist()}"
    return ""


@statement(3, "Eq. 8", "for each group G_i, a_i = 1_{G_i} decodes: a_i B = 1 and "
                       "||a_i||_0 <= m - s")
def _eq8(ctx) -> Evidence:
    t = Tally()
    for speeds, s, k in group_instances(ctx):
        code = cached_code("heter-group", speeds, s, k, ctx.seed)
        if not code.groups:
            continue
        bad = eq8_fails(code, s)
        t.count(len(code.groups), bool(bad), lambda: f"{fmt_instance(speeds, s, k)}: {bad}")
    return t.evidence("every retained group of heter-group on the instances of Alg. 2: a B = 1 "
                      "exactly, |G| <= m - s, decoding from G alone",
                      "Example 2: G2 = {W3, W4}, G3 = {W2, W5}")


@statement(3, "Thm 6", "Alg. 3's B (group-based) is robust to any s stragglers (with "
                       "probability 1)")
def _thm6(ctx) -> Evidence:
    rng = np.random.default_rng(ctx.seed)
    t = Tally()
    typical = ""
    for speeds, s, k in group_instances(ctx):
        code = cached_code("heter-group", speeds, s, k, ctx.seed)
        m = len(speeds)
        sets = [S for r in range(s + 1) for S in straggler_sets(rng, m, r, 200)]
        bad = robust_fails(code, s, sets)
        t.count(1, bool(bad),
                lambda: f"{fmt_instance(speeds, s, k)}, groups {list(code.groups)}: {bad}")
        if not bad and 1 <= len(code.groups) <= s and not typical:
            typical = (f"{fmt_instance(speeds, s, k)}, groups {list(code.groups)} (0-based): "
                       f"robust on {len(sets)} straggler sets")
    return t.evidence("heter-group on the instances of Alg. 2: is_robust, Condition 1 and exact "
                      "decoding for every straggler set of size <= s (at most 200 sampled per "
                      "size)", typical)


def prune(found) -> list[tuple[int, ...]]:
    """PruneGroups (Alg. 2, lines 23-27) as printed: while (**) fails (read pairwise, as Example
    2 does), drop the group that intersects the most others; the paper names no tie-break: the
    first such group in sorted order.

    >>> prune({(0, 1, 2), (2, 3), (1, 4)})          # Example 2, 0-based: G1 meets both others
    [(1, 4), (2, 3)]
    """
    P = sorted(found)
    while not pairwise_disjoint(P):
        meets = [sum(bool(set(g) & set(h)) for h in P if h != g) for g in P]
        P.pop(meets.index(max(meets)))
    return P


def alg3_matrix(support, groups, rng) -> tuple[np.ndarray, np.ndarray]:
    """Alg. 3 as the paper's text builds it: ``B_E = 1`` on the support of the workers in
    ``groups``; ``B_Ē`` (the other rows) by Alg. 1, i.e. the proof of Lemma 2 (``lemma2_B``)
    with ``C`` uniform on (0, 1) (Lemma 3) of ``(s' + 1) x |Ē|``, ``s' + 1`` the holders per
    partition outside the groups (redrawn until it has (P1)-(P2)).  Returns ``(B, Ē)``."""
    S = np.asarray(support) != 0
    inside = sorted({w for g in groups for w in g})
    out = np.setdiff1d(np.arange(S.shape[0]), inside)
    B = S.astype(float)
    holders = S[out].sum(axis=0)
    if out.size and holders.min() == holders.max() > 0:
        for _ in range(20):
            C = rng.uniform(0.0, 1.0, (int(holders[0]), out.size))
            if has_p1(C) and has_p2(C):
                break
        B[out] = lemma2_B(C, S[out])
    return B, out


def thm6_proof_fails(B, groups, s: int) -> str:
    """The proof of Thm 6 on ``B`` with ``P`` pairwise-disjoint ``groups``: each group decodes
    (eq. 8: ``1_G B = 1``); ``B_Ē`` holds ``s + 1 - P`` copies of each partition and is robust to
    ``s - P`` stragglers (Condition 1); hence ``B`` is robust to ``s`` (Condition 1).  ``""``
    when every step holds, else the first that fails."""
    B = np.asarray(B, dtype=float)
    m, k = B.shape
    out = np.setdiff1d(np.arange(m), sorted({w for g in groups for w in g}))
    P = len(groups)
    for g in groups:
        a = np.zeros(m)
        a[list(g)] = 1.0
        if not np.array_equal(a @ B, np.ones(k)):
            return f"group {list(g)}: 1_G B = {(a @ B).round(3).tolist()} != 1"
    holders = (B[out] != 0).sum(axis=0)
    if P <= s and not np.all(holders == s + 1 - P):
        return f"holders outside the groups {holders.tolist()} != s + 1 - P = {s + 1 - P}"
    S = condition1(B[out], s - P) if P <= s else None
    if S is not None:
        return f"B_E-bar: 1 not in the span without workers {[int(out[i]) for i in S]}"
    S = condition1(B, s)
    if S is not None:
        return f"B: 1 not in the span without workers {list(S)}"
    return ""


@statement(3, "Thm 6 (proof)", "Alg. 3's B (support eq. 6, groups by Alg. 2, 1 on the groups, "
                               "B_E-bar by Alg. 1): each group decodes (eq. 8), B_E-bar is robust "
                               "to s - P stragglers, hence B is robust to s")
def _thm6_proof(ctx) -> Evidence:
    rng = np.random.default_rng(ctx.seed)
    t = Tally()
    typical = ""
    for speeds, s, k in integer_instances(ctx, n_random=4 if ctx.quick else 20,
                                          m_random=(6, 10)):
        support = eq6_support(np.rint(quotas(speeds, s, k)).astype(int), k)
        groups = prune(exact_covers(support))
        if not groups:
            continue
        B, out = alg3_matrix(support, groups, rng)
        bad = thm6_proof_fails(B, groups, s)
        t.count(1, bool(bad), lambda: f"{fmt_instance(speeds, s, k)}, groups {groups}: {bad}")
        if not bad and (speeds, s, k) == EX2:
            typical = (f"Example 2: groups {groups} (0-based), B_E-bar = rows {out.tolist()} "
                       f"robust to s - P = {s - len(groups)}, B to s = {s}")
    return t.evidence(f"B built from the paper's text (not gradcode's) on {fmt_sizes(ctx)} and "
                      "random integer-quota instances (m 6-10) where Alg. 2 finds a group; "
                      "Condition 1 on every straggler set (exhaustive)", typical)


@statement(3, "Sec. V (text)", "B_E-bar can be constructed by Alg. 1 under s = m - P stragglers "
                               "(each partition then needs m - P + 1 holders outside the groups)")
def _m_minus_p(ctx) -> Evidence:
    t = Tally()
    for speeds, s, k in group_instances(ctx):
        code = cached_code("heter-group", speeds, s, k, ctx.seed)
        m, P = len(speeds), len(code.groups)
        if not 1 <= P <= s:
            continue
        holders = (code.B[code.outside] != 0).sum(axis=0)
        t.count(1, not np.all(holders == m - P + 1), lambda: (
            f"{fmt_instance(speeds, s, k)}, P = {P}: {holders.min()} holders per partition "
            f"outside the groups, Alg. 1 for s = m - P = {m - P} needs {m - P + 1}; s - P = "
            f"{s - P} (Thm 6's proof) fits"))
    return t.evidence("heter-group instances of Alg. 2 with 1 <= P <= s groups (so Alg. 1 runs "
                      "on B_E-bar): holders per partition among the workers outside the groups")


@statement(3, "Sec. V (after Thm 6)", "the group-based code is also optimal for problem (4): "
                                      "T(B) = (s+1) k / sum_i c_i")
def _group_optimal(ctx) -> Evidence:
    t = Tally()
    for speeds, s, k in integer_instances(ctx, n_random=4 if ctx.quick else 20,
                                          m_random=(6, 10)):
        bad = thm5_fails(cached_code("heter-group", speeds, s, k, ctx.seed), speeds, s, k)
        t.count(1, bool(bad), lambda: f"{fmt_instance(speeds, s, k)}: {bad}")
    return t.evidence(f"heter-group on {fmt_sizes(ctx)} and random (integer quotas); T(B) by "
                      "completion_time and by eq. 3 here", "Example 2's speeds: T(B) = 1")


#: Example 2 as printed (W1..W7 x D1..D4): the support, and B with 1 for the workers in groups
#: and -1 standing for the printed stars (entries Alg. 1 computes)
EXAMPLE2_SUPPORT = np.array([[1, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1], [1, 1, 1, 0],
                             [1, 1, 0, 1], [1, 0, 1, 1], [0, 1, 1, 1]])
EXAMPLE2_B = np.array([[-1, -1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1], [1, 1, 1, 0],
                       [1, 1, 0, 1], [-1, 0, -1, -1], [0, -1, -1, -1]])
#: the groups of Example 2 (1-based): G1 = {W1, W2, W3}, G2 = {W3, W4}, G3 = {W2, W5}; G1 pruned
EXAMPLE2_FOUND = {(1, 2, 3), (3, 4), (2, 5)}
EXAMPLE2_KEPT = {(3, 4), (2, 5)}


def example2_fails(support=EXAMPLE2_SUPPORT, B_printed=EXAMPLE2_B, found=EXAMPLE2_FOUND,
                   kept=EXAMPLE2_KEPT, seeds=range(5)):
    """Example 2's facts, one list entry per failed fact.  Speeds ``c = n`` (row sizes of the
    support: the paper gives none) and ``s + 1 = 4`` holders per partition."""
    support = np.asarray(support)
    n = support.sum(axis=1)
    s, k = int(support[:, 0].sum()) - 1, support.shape[1]
    bad, checked = [], 2
    if not np.array_equal(eq6_support(n, k), support):
        bad.append(f"eq. 6 for n = {n.tolist()} gives {eq6_support(n, k).tolist()}")
    if exact_covers(support) != {tuple(i - 1 for i in g) for g in found}:
        bad.append(f"condition (*) holds for {sorted(exact_covers(support))} (0-based)")
    stars = np.asarray(B_printed) == -1
    for seed in seeds:
        code = make_code("heter-group", speeds=n.tolist(), s=s, k=k, seed=seed)
        B = code.B
        checked += 5
        one = lambda G: {tuple(sorted(int(w) + 1 for w in g)) for g in G}   # noqa: E731
        if not np.array_equal((B != 0).astype(int), support):
            bad.append(f"seed {seed}: support {(B != 0).astype(int).tolist()}")
        if one(code.candidate_groups) != set(found) or one(code.groups) != set(kept):
            bad.append(f"seed {seed}: groups found {sorted(one(code.candidate_groups))}, kept "
                       f"{sorted(one(code.groups))}")
        if not np.array_equal(np.where(stars, 0, B), np.where(stars, 0, B_printed)) or \
                not np.all(B[stars] != 0):
            bad.append(f"seed {seed}: B = {B.round(3).tolist()}")
        if not is_robust(code) or condition1(B, s) is not None:
            bad.append(f"seed {seed}: not robust to s = {s}")
        if abs(completion_time(code, n.tolist()) - (s + 1) * k / n.sum()) > TOL:
            bad.append(f"seed {seed}: T(B) = {completion_time(code, n.tolist())}")
    return checked, bad


@statement(3, "Example 2", "the 7x4 support: groups G1 = {W1,W2,W3}, G2 = {W3,W4}, G3 = {W2,W5} "
                           "found, G1 pruned; B has 1 on W2-W5 and Alg. 1's entries elsewhere")
def _example2(ctx) -> Evidence:
    checked, bad = example2_fails()
    return Evidence(checked, len(bad), "eq. 6 with n = row sizes and condition (*) on the printed "
                    "support; heter-group with speeds n, s = 3, k = 4 (seeds 0-4) vs the printed "
                    "support, groups and B; robust (exhaustive) and T(B) = 1",
                    "; ".join(bad) or "groups (3,4), (2,5) kept (1-based); B as printed")
