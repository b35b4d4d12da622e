"""Paper 3 (heterogeneity-aware GC)'s statements in ``theorems`` (``heter_*``): each one's pinned
verdict (checked by ``test_theorems.py``), and each check fed a deliberately wrong instance (or
a wrong gradcode) to show it can fail."""

from types import SimpleNamespace

import numpy as np

from gradcode import from_matrix, make_code
from gradcode.experiments.theorems import heter_allocation as allocation
from gradcode.experiments.theorems import heter_common as H
from gradcode.experiments.theorems import heter_groups as groups
from gradcode.experiments.theorems import heter_optimality as optimality
from gradcode.experiments.theorems import heter_robustness as robustness

#: the verdict each statement gets
VERDICTS = {
    "Eq. 5": "reproduced",
    "Sec. IV-A (eq. 6)": "reproduced",
    "Eq. 6-7": "reproduced",
    "Example 1": "reproduced",
    "Lemma 1": "reproduced",
    "Lemma 2": "reproduced",
    "Lemma 3": "reproduced",
    "Alg. 1": "reproduced",
    "Thm 4": "reproduced",
    "Eq. 3": "reproduced",
    "Thm 5": "reproduced",
    "Thm 5 (proof)": "reproduced",
    # Alg. 1's B is constant over partitions with the same holders, so fewer than m - s workers
    # can decode (n = [1, 1, 1, 1], s = 1, k = 2: workers 1-2; also n = [2, 2, 2, 2], k = 4)
    "Sec. V (2)": "not reproduced",
    "Alg. 2": "reproduced",
    "Eq. 8": "reproduced",
    "Thm 6": "reproduced",
    "Thm 6 (proof)": "reproduced",
    # the text's "s = m - P" is a typo for s - P (Thm 6's proof)
    "Sec. V (text)": "not reproduced",
    "Sec. V (after Thm 6)": "reproduced",
    "Example 2": "reproduced",
}


# --------------------------------------------------------------------------- eq. 5-7, Example 1
def test_allocation_check_fails_on_a_wrong_allocation():
    code = make_code("heter", speeds=[1, 2, 3, 4, 4], s=1, k=7)
    assert allocation.allocation_fails([1, 2, 3, 4, 4], 1, 7, code.allocation, code.B) == ""
    assert "eq. 5 gives" in allocation.allocation_fails([1, 2, 3, 4, 4], 1, 7, [2, 1, 3, 4, 4],
                                                        code.B)
    assert "not integers" in allocation.allocation_fails([1, 1, 1], 1, 2, [2, 1, 1], code.B)


def test_eq6_check_fails_when_a_worker_gets_more_than_k():
    assert allocation.eq6_fails((1, 2, 3, 4, 4), 7) == ""
    assert "twice" in allocation.eq6_fails((3, 1), 2)                # n_1 = 3 > k = 2


def test_eq6_support_is_example1_and_not_a_shifted_one():
    assert np.array_equal(H.eq6_support((1, 2, 3, 4, 4), 7), allocation.EXAMPLE1)
    assert not np.array_equal(H.eq6_support((2, 1, 3, 4, 4), 7), allocation.EXAMPLE1)


def test_example1_check_fails_on_a_wrong_matrix():
    checked, bad = allocation.example1_fails(allocation.EXAMPLE1, seeds=[0])
    assert checked == 4 and bad == []
    wrong = allocation.EXAMPLE1.copy()
    wrong[0, :2] = [0, 1]
    assert len(allocation.example1_fails(wrong, seeds=[0])[1]) == 2   # eq. 5-6, heter's support


# --------------------------------------------------------------------------- Lemma 1-3, Alg. 1
def test_lemma1_check_fails_with_a_wrong_is_robust(monkeypatch):
    B = [[1, 0], [0, 1], [1, 0]]                             # not robust to 1 straggler
    assert robustness.lemma1_fails(B, 1) == ""
    monkeypatch.setattr(robustness, "is_robust", lambda B, s: True)
    assert "is_robust True" in robustness.lemma1_fails(B, 1)


def test_p1_p2_fail_on_bad_auxiliary_matrices():
    rng = np.random.default_rng(0)
    C = rng.uniform(0, 1, (2, 5))
    assert robustness.has_p1(C) and robustness.has_p2(C)
    C1 = C.copy()
    C1[:, 1] = 2 * C1[:, 0]                                  # two dependent columns
    assert not robustness.has_p1(C1)
    C2 = C.copy()
    C2[:, 3] = [0.5, 0.5]                                    # lam = (1, -1) sums to 0
    assert robustness.has_p1(C2) and not robustness.has_p2(C2)


def test_lemma2_check_fails_on_a_wrong_B():
    rng = np.random.default_rng(1)
    support = H.eq6_support((1, 2, 3, 4, 4), 7)
    C = rng.uniform(0, 1, (2, 5))
    B = robustness.lemma2_B(C, support)
    assert robustness.lambda_decoding_fails(C, B, 1) == ""
    wrong = B.copy()
    wrong[3, 6] *= 1.5
    assert "C B != 1" in robustness.lambda_decoding_fails(C, wrong, 1)


def test_robust_check_fails_on_a_non_robust_code():
    assert H.robust_fails(make_code("heter", speeds=[1, 2, 3], s=1, k=3), 1,
                          [(0,), (1,), (2,)]) == ""
    assert "is_robust" in H.robust_fails(from_matrix([[1, 0], [0, 1], [1, 0]]), 1,
                                         [(0,), (1,), (2,)])


# --------------------------------------------------------------------------- eq. 3, Thm 5
def test_worst_time_by_hand():
    assert optimality.worst_time(np.eye(2), [1, 2], 0) == 1.0         # t = (1, 0.5): both needed
    assert optimality.worst_time(np.eye(2), [1, 2], 1) == np.inf
    B = [[1, 1], [1, 0], [0, 1]]                             # worker 0 alone, or 1 and 2
    assert optimality.worst_time(B, [4, 1, 1], 0) == 0.5
    assert optimality.worst_time(B, [4, 1, 1], 1) == 1.0


def test_eq3_check_fails_with_a_wrong_completion_time(monkeypatch):
    B = [[1, 1], [1, 0], [0, 1]]
    assert optimality.eq3_fails(B, [4, 1, 1], 1) == ("", 1.0)
    monkeypatch.setattr(optimality, "completion_time", lambda B, c, s: 0.5)
    assert "completion_time 0.5" in optimality.eq3_fails(B, [4, 1, 1], 1)[0]


def test_thm5_check_fails_on_mismatched_speeds():
    code = make_code("heter", speeds=[1, 1, 2], s=1, k=4)
    assert optimality.thm5_fails(code, [1, 1, 2], 1, 4) == ""
    assert "T(B) =" in optimality.thm5_fails(code, [2, 1, 1], 1, 4)


def test_lower_bound_check_fails_when_a_time_beats_it(monkeypatch):
    B = [[1, 1], [1, 1]]
    assert optimality.lower_bound_fails(B, [1.0, 1.0], 1) == ""
    monkeypatch.setattr(optimality, "worst_time", lambda B, c, s: 0.1)
    assert "< (s+1)k/sum c" in optimality.lower_bound_fails(B, [1.0, 1.0], 1)


def test_needs_all_check():
    fails = make_code("heter", speeds=[1, 1, 1, 1], s=1, k=2)
    assert "workers [1, 2]" in groups.needs_all_fails(fails.B, 1)
    assert groups.needs_all_fails(make_code("heter", speeds=[1, 2, 3, 4, 4], s=1, k=7).B, 1) == ""


# --------------------------------------------------------------------------- Sec. V: groups
def test_groups_check_fails_on_missing_or_overlapping_groups():
    code = make_code("heter-group", speeds=[2, 1, 1, 3, 3, 3, 3], s=3, k=4)
    support = code.B != 0
    assert groups.groups_fail(support, code.candidate_groups, code.groups) == ""
    assert "condition (*)" in groups.groups_fail(support, code.candidate_groups[:2], code.groups)
    assert "pairwise" in groups.groups_fail(support, code.candidate_groups,
                                            [(0, 1, 2), (2, 3)])
    both = np.ones((2, 2), dtype=bool)                      # two workers, each a group
    assert "meet no other" in groups.groups_fail(both, [(0,), (1,)], [(0,)])


def test_eq8_check_fails_on_a_group_without_unit_coefficients():
    code = make_code("heter-group", speeds=[2, 1, 1, 3, 3, 3, 3], s=3, k=4)
    assert groups.eq8_fails(code, 3) == ""
    B = code.B.copy()
    B[2, 3] = 2.0                                           # W3's coefficient in G2
    fake = SimpleNamespace(B=B, groups=code.groups, decode=from_matrix(B).decode)
    assert "a B =" in groups.eq8_fails(fake, 3)


def test_thm6_proof_matrix_is_built_from_the_text_and_its_check_can_fail():
    rng = np.random.default_rng(0)
    support = groups.EXAMPLE2_SUPPORT
    found = groups.exact_covers(support)
    kept = groups.prune(found)
    assert kept == [(1, 4), (2, 3)]                          # Example 2: G1 pruned (0-based)
    B, out = groups.alg3_matrix(support, kept, rng)
    assert out.tolist() == [0, 5, 6]
    assert np.array_equal(B[[1, 2, 3, 4]], support[[1, 2, 3, 4]])   # B_E = 1, as printed
    assert np.array_equal(B != 0, support != 0)
    assert groups.thm6_proof_fails(B, kept, 3) == ""
    wrong = B.copy()
    wrong[3, 0] = 2.0                                        # G2 = {W3, W4} no longer sums to 1
    assert "1_G B" in groups.thm6_proof_fails(wrong, kept, 3)
    wrong = B.copy()
    wrong[5] = wrong[0, 0] * (wrong[5] != 0)                 # B_E-bar loses Alg. 1's C B = 1
    assert "B_E-bar" in groups.thm6_proof_fails(wrong, kept, 3)
    unpruned = sorted(found)                                 # (**) fails: G1 meets G2, G3
    assert "holders outside" in groups.thm6_proof_fails(
        groups.alg3_matrix(support, unpruned, rng)[0], unpruned, 3)


def test_example2_check_fails_on_a_wrong_matrix():
    checked, bad = groups.example2_fails(seeds=[0])
    assert checked == 7 and bad == []
    wrong = groups.EXAMPLE2_B.copy()
    wrong[3, 0] = 0                                         # W4 printed without D1
    assert len(groups.example2_fails(B_printed=wrong, seeds=[0])[1]) == 1
    assert len(groups.example2_fails(kept={(1, 2, 3)}, seeds=[0])[1]) == 1
