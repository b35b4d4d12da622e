"""Paper 2 (IS-GC) statements in ``theorems`` (``isgc_*``): each one's pinned quick verdict and
counterexample (checked by ``test_theorems.py``, so that a regression in gradcode or in a check
shows), the NumPy placements against gradcode's, and every check's instance test fed a
deliberately wrong instance (a check that cannot fail is a defect)."""

from __future__ import annotations

import numpy as np
import pytest

from gradcode import make_code
from gradcode.analysis import recovery_bounds
from gradcode.experiments.theorems import isgc_algorithms as alg
from gradcode.experiments.theorems import isgc_common as T
from gradcode.experiments.theorems import (isgc_bounds, isgc_cr, isgc_fr, isgc_fr_vs_cr, isgc_hr,
                                           isgc_hr_maximum)

#: the verdict each statement gets (by its ``where``)
VERDICTS = {
    "Thm 8, Thm 9 (maximum reading)": "not reproduced",
    "Thm 9": "reproduced",
    "Sec. I, Fig. 1(b)": "reproduced",
    "Sec. I, Fig. 1(d)": "reproduced",
    "Sec. IV (Fig. 2(b))": "reproduced",
    "Sec. IV, Alg. 1": "reproduced",
    "Sec. IV, V-B, VII-B": "reproduced",
    "Sec. V-A, Fig. 3(a)": "reproduced",
    "Sec. V, Fig. 4": "reproduced",
    "Thm 1": "reproduced",
    "Thm 2": "reproduced",
    "Thm 2 (proof)": "reproduced",
    "Thm 3": "reproduced",
    "Sec. V-A (abstract)": "reproduced",
    "Thm 4": "reproduced",
    "Sec. V-C": "reproduced",
    "Sec. V-C (expectation)": "reproduced",
    "Thm 5": "reproduced",
    "Sec. VI-A, Fig. 5": "reproduced",
    "Thm 6, Alg. 4": "not reproduced",
    "Thm 6 (proof)": "reproduced",
    "Sec. VI-B": "reproduced",
    "Thm 7": "reproduced",
    "Sec. VI-B (after Thm 7)": "reproduced",
    "Sec. VI-C": "not reproduced",
    "Thm 10": "reproduced",
    "Thm 10 (HR)": "not reproduced",
    "Thm 11": "reproduced",
    "Thm 12": "reproduced",
}

#: what the first counterexample of each refuted statement must show
COUNTEREXAMPLES = {
    "Thm 8, Thm 9 (maximum reading)": "HR(n=16, c1=1, c2=3, groups=4), W' = {W4, W7, W9} "
                                      "(0-based [3, 6, 8]): alpha = 2, but no maximum "
                                      "independent set holds group 2's received {W7}",
    "Thm 6, Alg. 4": "HR(n=10, c1=1, c2=2, groups=2) (n0 = 5 <= 2c - 1 = 5): a group is no "
                     "clique, e.g. W2 and W5 share no partition; CONFLICT(W2, W5) = True",
    "Sec. VI-C": "HR(n=4, c1=1, c2=1, groups=2), w = 3",
    "Thm 10 (HR)": "HR(n=6, c1=1, c2=1, groups=2), W' = {W1, W2, W3}: alpha = 1",
}


def _mask(*workers):
    return sum(1 << (w - 1) for w in workers)


# ------------------------------------------------------------------ the placements built here
def test_numpy_placements_are_gradcodes():
    for n in range(1, 13):
        for c in range(1, n + 1):
            assert T.same_placement(T.cr_support(n, c),
                                    T.support_of(make_code("isgc-cr", n=n, c=c)))
            if n % c == 0:
                assert T.same_placement(T.fr_support(n, c),
                                        T.support_of(make_code("isgc-fr", n=n, c=c)))
    for p in T.hr_configs(12):
        code = make_code("isgc-hr", **p)
        sup = T.hr_support(p["n"], p["c1"], p["c2"], p["groups"])
        assert T.same_placement(sup, T.support_of(code)), p
        assert (T.conflicts(sup) == T.graph_of(code)).all(), p


def test_hr_graph_falls_back_to_numpy_where_gradcode_refuses():
    with pytest.raises(ValueError):
        make_code("isgc-hr", n=12, c1=1, c2=3, groups=2)
    A, src = T.hr_graph(12, 1, 3, 2)
    assert src == "numpy" and (A == T.conflicts(T.hr_support(12, 1, 3, 2))).all()
    assert T.hr_graph(8, 2, 2, 2)[1] == "gradcode" and T.hr_graph(8, 0, 4, 2)[1] == "gradcode"


def test_recovery_bounds_is_the_printed_formula():
    for n in range(1, 15):
        for c in range(1, n + 1):
            for w in range(1, n + 1):
                assert recovery_bounds(n, c, w) == (min(-(-w // c), n // c), min(w, n // c))


# ------------------------------------------------------------------ each check can fail
def test_fig1b_detects_a_wrong_sum_and_a_wrong_support():
    sup = T.cr_support(4, 2)
    assert isgc_fr.fig1b_failures(isgc_fr.FIG1B_ROWS, sup) == []
    wrong = {**isgc_fr.FIG1B_ROWS, 2: [0.0, 0.0, 1.0, 2 / 3]}
    assert any("add up" in b for b in isgc_fr.fig1b_failures(wrong, sup))
    wrong = {**isgc_fr.FIG1B_ROWS, 0: [-1.0, 1.0, 0.5, 0.0], 2: [0.0, 0.0, 0.5, 1 / 3]}
    assert any("outside" in b for b in isgc_fr.fig1b_failures(wrong, sup))


def test_fig2b_detects_a_decodable_partial_sum():
    assert alg.decodable_sums(np.array([[-1.0, 1.0, 0.0, 0.0]])) == []
    assert alg.decodable_sums(np.array([[1.0, 1.0, 0.0, 0.0]])) == [[0, 1]]
    assert [0] in alg.decodable_sums(np.array([[2.0, 1.0, 0, 0], [0, 1.0, 0, 0]]))


def test_alg1_check_detects_a_conflicting_pick():
    S = np.array([_mask(2, 3)])
    pick = alg.alg1_pick(S, 4, 2)
    assert pick[0] == _mask(2, 3)
    ok_fr, _ = T.independent_and_maximal(pick, S, T.conflicts(T.fr_support(4, 2)))
    ok_cr, _ = T.independent_and_maximal(pick, S, T.conflicts(T.cr_support(4, 2)))
    assert ok_fr[0] and not ok_cr[0]


def test_chances_detect_a_biased_decoder():
    P, Q = isgc_fr.cr_chances(6, 2)
    assert T.unequal_sizes(P) == [] and T.unequal_sizes(Q) == []
    P, Q = isgc_fr.cr_chances(6, 2, random_u=False)      # u = the first received worker: biased
    assert T.unequal_sizes(P)


def test_fig3a_and_fig4_helpers():
    A = T.conflicts(T.cr_support(4, 2))
    assert alg.arrival_greedy([0, 1, 3], A) == [0]
    assert alg.arrival_greedy([1, 3, 0], A) == [1, 3]
    assert T.edge_set(T.conflicts(T.fr_support(4, 2))) == isgc_cr.FIG4_EDGES["FR"] != T.edge_set(A)
    chains = alg.greedy_chains(alg.alg2_free(4, 2), np.array([_mask(1, 2, 3)]))[:, 0]
    assert chains[0] == _mask(1, 3) and chains[1] == _mask(2)


def test_thm1_detects_a_non_circulant():
    assert isgc_cr.is_circulant_cr(7, 3, T.cr_support(7, 3), T.circulant(7, 3)) == []
    assert isgc_cr.is_circulant_cr(6, 2, T.fr_support(6, 2), T.conflicts(T.fr_support(6, 2)))
    assert isgc_cr.is_circulant_cr(7, 3, T.cr_support(7, 3), T.circulant(7, 4))


def test_thm2_detects_a_non_maximal_or_dependent_set():
    A = T.conflicts(T.cr_support(4, 2))
    S = np.array([_mask(1, 3), _mask(1, 2)])
    indep, maximal = T.independent_and_maximal(np.array([_mask(1), _mask(1, 2)]), S, A)
    assert indep.tolist() == [True, False] and maximal.tolist() == [False, False]
    # a scan that ignores conflicts (free everywhere) builds dependent sets
    S = T.every_subset(5)
    bad = alg.greedy_chains(np.ones((5, 5), bool), S)
    indep, _ = T.independent_and_maximal(bad[0][S & 1 == 1], S[S & 1 == 1],
                                         T.conflicts(T.cr_support(5, 2)))
    assert not indep.all()


def test_thm3_detects_a_single_start():
    """Fig. 4(b): starting only from u = W2 (c = 1 start instead of 2) misses alpha = 2."""
    S = np.array([_mask(1, 2, 3)])
    chains = alg.greedy_chains(alg.alg2_free(4, 2), S)
    assert T.popcount(alg.alg2_pick(chains, S, 1, 2))[0] == 2
    assert T.popcount(alg.alg2_pick(chains, S, 1, 1))[0] == 1 < T.cr_alpha(4, 2)[S[0]]


def test_plain_sums_are_graph_decoding_and_detect_a_wrong_alpha():
    """Sec. V-A under the paper's decoding: adding whole received sums gives c alpha; a
    placement with disjoint rows (or a wrong alpha) shows as a mismatch."""
    cr = isgc_cr.placement_matrix("CR", 3, 2)
    assert alg.best_plain_sums(cr).tolist() == [0, 2, 2, 2, 2, 2, 2, 2]
    fr = isgc_cr.placement_matrix("FR", 4, 2)
    assert alg.best_plain_sums(fr)[0b1111] == 4 == 2 * T.fr_alpha(4, 2)[0b1111]
    assert alg.best_plain_sums(np.eye(3, dtype=int))[0b111] == 3 > 2 * T.cr_alpha(3, 2)[0b111]
    best = alg.best_plain_sums(isgc_cr.placement_matrix("CR", 7, 3))
    assert (best == 3 * T.cr_alpha(7, 3)).all()


def test_linear_gains_are_cr_with_c_not_dividing_n():
    cases, gains, first, where = isgc_cr.linear_gains(5)
    assert cases > 0 and gains > 0 and where == {("CR", False)}
    assert first.startswith("CR(3, 2), W' = {W1, W2, W3}: a real-weighted combination "
                            "recovers 3 partitions, c alpha = 2")


def test_linear_recovery_beats_graph_decoding_on_cr_only():
    assert alg.best_linear_recovery(np.ones((1, 3))) == 3
    cr = np.zeros((3, 3))
    cr[np.repeat(np.arange(3), 2), T.cr_support(3, 2).ravel()] = 1
    assert alg.best_linear_recovery(cr) == 3 > 2 * T.cr_alpha(3, 2)[0b111]
    fr = np.zeros((4, 4))
    fr[np.repeat(np.arange(4), 2), T.fr_support(4, 2).ravel()] = 1
    assert alg.best_linear_recovery(fr) == 4 == 2 * T.fr_alpha(4, 2)[0b1111]


def test_inclusion_checks_detect_a_reversed_chain():
    small, big = T.circulant(8, 2), T.circulant(8, 3)
    assert T.subset_failures(small, big) == [] and T.subset_failures(big, small)
    chain = isgc_hr.hr_chain(12, 4, 2)
    assert [c1 for c1, _, _ in chain] == [4, 3, 2]
    assert T.subset_failures(chain[-1][1], chain[0][1])


def test_fr_vs_cr_checks_detect_the_reverse():
    f, r = T.fr_alpha(8, 2), T.cr_alpha(8, 2)
    assert (f >= r).all() and (r < f).any()
    ef, ec = isgc_fr_vs_cr.expected_alpha(f, 8), isgc_fr_vs_cr.expected_alpha(r, 8)
    assert [w for w in range(1, 9) if ef[w] > ec[w] + 1e-12] == list(range(2, 7))


def test_thm5_detects_n0_beyond_2c_minus_1():
    fr = T.conflicts(T.fr_support(8, 4))
    assert (T.conflicts(T.hr_groups_support(8, 3, 2)) == fr).all()       # n0 = 4 <= 5
    assert not (T.conflicts(T.hr_groups_support(8, 2, 2)) == fr).all()   # n0 = 4 > 3


def test_fig5_needs_the_renaming():
    sup = T.hr_support(7, 3, 0, 1)
    assert T.same_placement((sup + 3) % 7, T.cr_support(7, 3))
    assert not T.same_placement(sup, T.cr_support(7, 3))


def test_thm6_cliques():
    assert T.groups_are_cliques(T.hr_graph(8, 2, 2, 2)[0], 2)
    A = T.hr_graph(12, 1, 3, 2)[0]
    assert not T.groups_are_cliques(A, 2) and "share no partition" in isgc_hr.non_clique_pair(A, 2)
    assert (12, 1, 3, 2) in set(T.theorem6_range(12, 12))


def test_thm8_witness_meets_every_stated_condition():
    """HR(16, 1, 3, 4) (g = c = 4, n0 = 4 <= c + c1) with W4, W7, W9 received: alpha = 2 by
    {W4, W9}, but W7, group 2's only received worker, conflicts with both."""
    HR16 = isgc_hr_maximum.HR16
    assert isgc_hr_maximum.stated(HR16)
    assert not isgc_hr_maximum.stated(dict(n=12, c1=1, c2=3, groups=3))        # g = 3 < c
    code = make_code("isgc-hr", **HR16)
    A = T.graph_of(code)
    assert A[3, 6] and A[6, 8] and not A[3, 8]
    S = np.array([_mask(4, 7, 9)])
    alpha = T.alpha_of(("hr16",), A)
    closed = isgc_hr_maximum._closed(code)
    got = {q: (hit[0], with_q[0], found[0]) for q, hit, with_q, found
           in isgc_hr_maximum.alg3_sizes(HR16, S, alpha, closed)}
    assert alpha[S[0]] == 2
    assert got[1] == (True, 1, 1) and got[0][1:] == (2, 2) and got[2][1:] == (2, 2)
    assert not got[3][0]


def test_alg3_vectorised_is_the_printed_algorithm():
    rng = np.random.default_rng(3)
    for p in (dict(n=12, c1=1, c2=3, groups=3), isgc_hr_maximum.HR16):
        code = make_code("isgc-hr", **p)
        alpha = T.alpha_of(("alg3", *p.values()), T.graph_of(code))
        n, n0 = p["n"], p["n"] // p["groups"]
        S = rng.integers(1, 1 << n, 200)
        sizes = {q: found for q, _, _, found in isgc_hr_maximum.alg3_sizes(
            p, S, alpha, isgc_hr_maximum._closed(code))}
        for k, mask in enumerate(S.tolist()):
            W = T.members_of(mask)
            for q in {v // n0 for v in W}:
                printed = isgc_hr_maximum.alg3(W, q, n, n0, p["groups"], p["c1"] + p["c2"],
                                               p["c2"])
                assert len(printed) == sizes[q][k], (p, W, q)


def test_thm9_maximal_check_detects_a_dependent_chain():
    """Greedy chains that ignore the next-group conflicts of Alg. 4 are not independent."""
    p = isgc_hr_maximum.HR16
    n, n0 = p["n"], p["n"] // p["groups"]
    same_group = np.arange(n)[:, None] // n0 == np.arange(n)[None, :] // n0
    S = T.every_subset(n)
    A = T.graph_of(make_code("isgc-hr", **p))
    good = alg.greedy_chains(~alg.alg4_conflict(**p), S)
    bad = alg.greedy_chains(~same_group, S)
    has = T.bit(S, 0)
    assert T.independent_and_maximal(good[0][has], S[has], A)[1].all()
    assert not T.independent_and_maximal(bad[0][has], S[has], A)[0].all()


def test_thm12_bound_detects_a_too_small_lipschitz_constant():
    rng = np.random.default_rng(0)
    support = T.cr_support(6, 3)
    outcomes = list(isgc_bounds.thm12_steps(support, T.conflicts(support), 3, 2))
    assert abs(sum(q for q, _, _ in outcomes) - 1) < 1e-12
    assert {a for _, a, _ in outcomes} == {1, 2}
    for kind in ("least squares", "logistic"):
        losses, grads, L = isgc_bounds._problem(kind, rng, 12)
        beta = rng.normal(size=3)
        gaps, bias = isgc_bounds.thm12_gaps(losses, grads, L, outcomes, beta, (0.5, 2.0))
        assert min(gaps) >= 0 and bias < 1e-9
        gaps, _ = isgc_bounds.thm12_gaps(losses, grads, L / 100, outcomes, beta, (2.0,))
        assert min(gaps) < 0


def test_max_independent_sets():
    A = T.conflicts(T.cr_support(4, 2))
    assert isgc_bounds.max_independent_sets(A, [0, 1, 2]) == [(0, 2)]
    assert sorted(isgc_bounds.max_independent_sets(A, [0, 1, 2, 3])) == [(0, 2), (1, 3)]


def test_sec6b_detects_different_placements():
    assert T.same_placement(T.hr_support(8, 4, 0, 2), T.hr_support(8, 3, 1, 2))
    assert not T.same_placement(T.hr_support(8, 4, 0, 2), T.hr_support(8, 2, 2, 2))


def test_alg4_matches_in_gradcodes_range_only():
    for n, c1, c2, g in [(8, 2, 2, 2), (12, 1, 3, 3), (16, 1, 3, 4)]:
        F = alg.alg4_conflict(n, c1, c2, g)
        assert (((F | F.T) & ~np.eye(n, dtype=bool)) == T.hr_graph(n, c1, c2, g)[0]).all()
    F = alg.alg4_conflict(12, 1, 3, 2)
    assert not (((F | F.T) & ~np.eye(12, dtype=bool)) == T.hr_graph(12, 1, 3, 2)[0]).all()


def test_alg3_chances():
    P, Q = isgc_hr.hr_alg3_chances(4, 1, 1, 2)
    assert np.allclose(P[3], [0.625, 0.375, 0.625, 0.375]) and np.allclose(Q[3], 1)
    P, _ = isgc_hr.hr_alg3_chances(3, 2, 0, 1)       # one group: a single clique, starts uniform
    assert T.unequal_sizes(P) == []


def test_bound_failures_detect_a_wrong_alpha():
    alpha = T.cr_alpha(7, 3)
    assert isgc_bounds.bound_failures(alpha, 7, 3, "lower").size == 0
    assert isgc_bounds.bound_failures(alpha, 7, 3, "upper").size == 0
    assert isgc_bounds.bound_failures(np.minimum(alpha, 1), 7, 3, "lower").size > 0
    assert isgc_bounds.bound_failures(alpha + 1, 7, 3, "upper").size > 0
