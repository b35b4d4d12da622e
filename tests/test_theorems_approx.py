"""Paper 5's statements (``theorems``, ``approx_*``): each pinned verdict (checked by
``test_theorems.py``), and each check fed a deliberately wrong instance, to show it can fail."""

from __future__ import annotations

from math import comb

import numpy as np
import pytest
from scipy.stats import binom

from gradcode import from_matrix, make_code
from gradcode.analysis import non_straggler_pmf, sample_stragglers, shuffle_permutation
from gradcode.experiments.theorems import approx_common as T
from gradcode.experiments.theorems import approx_crc as crc
from gradcode.experiments.theorems import approx_frc as frc
from gradcode.experiments.theorems import approx_model as model
from gradcode.experiments.theorems import approx_sec5 as sec5
from gradcode.experiments.theorems import approx_shuffling as shuffling

#: the verdict each statement gets, by its check's name
VERDICTS = {
    "_model": "reproduced",
    "_eq2": "reproduced",
    "_holders": "reproduced",
    "_prop1_none": "reproduced",
    "_prop1_shuffle": "not reproduced",
    "_prop1_average": "reproduced",
    "_remark1": "reproduced",
    "_uniform": "reproduced",
    "_fr_conditional": "reproduced",
    "_zero_error": "not reproduced",
    "_pr": "not reproduced",
    "_thm1": "reproduced",
    "_lemma1": "reproduced",
    "_cycles": "reproduced",
    "_invariance": "reproduced",
    "_thm2": "reproduced",
    "_thm2_tandon": "not reproduced",
    "_remark2": "reproduced",
    "_remark2_printed": "not reproduced",
    "_sec5_frc": "not reproduced",
    "_sec5_crc": "not reproduced",
}
RNG = lambda: np.random.default_rng(0)  # noqa: E731


# --------------------------------------------------------------------------- wrong instances
def test_model_catches_a_wrong_sampler():
    swapped = lambda slow, p_ss, p_as, rng: sample_stragglers(slow, p_as, p_ss, rng)  # noqa
    assert model.model_tally(0.3, 0.8, 0.01, 2000, RNG()).failures == 0
    assert model.model_tally(0.3, 0.8, 0.01, 2000, RNG(), straggler_fn=swapped).failures > 0
    biased = lambda n, p, rng: rng.random(n) < p + 0.05  # noqa: E731
    assert model.model_tally(0.3, 0.8, 0.01, 2000, RNG(), slow_fn=biased).failures > 0


def test_eq2_catches_a_non_optimal_decoder():
    code = make_code("isgc-cr", n=8, c=2)
    assert model.eq2_tally(code).failures == 0
    assert model.eq2_tally(code, method=None).failures > 0     # IS-GC's own decoder


def test_eq2_errors_by_hand():
    # paper 1's example: B rows (workers) [0.5, 1, 0], [0, 1, -1], [0.5, 0, 1]
    B = np.array([[0.5, 1, 0], [0, 1, -1], [0.5, 0, 1]])
    err = T.eq2_errors(B)
    assert err[0] == 3 and np.allclose(err[[3, 5, 6, 7]], 0)
    # FRC(4, s=2): rows 0 and 1 hold partitions 0, 1; without rows 2, 3 two partitions are lost
    assert np.isclose(T.eq2_errors(T.fr(4, 2).B, [0b0011])[0], 2)


def test_holders_catches_a_wrong_replication():
    assert model.holders_tally(T.fr(6, 2), 2).failures == 0
    assert model.holders_tally(T.fr(6, 2), 3).failures > 0
    assert model.holders_tally(T.crc(6, 3), 2).failures > 0


def test_prop1_none_catches_a_wrong_formula():
    assert shuffling.miss_none_tally(T.fr(4, 2), 0.8, 0.01).failures == 0
    wrong = lambda k, s, p_ss, p_as: p_ss ** k * p_as ** (s - k + 1)  # noqa: E731
    assert shuffling.miss_none_tally(T.fr(4, 2), 0.8, 0.01, wrong).failures > 0


def test_prop1_mc_catches_a_wrong_value():
    args = (12, 2, 0.3, 0.7, 0.15, 150, 20)
    t = shuffling.miss_mc_tally(*args, RNG(), shuffle=True)
    assert t.cases == 1 and t.failures == 0
    q = 0.3 * 0.7 + 0.7 * 0.15
    assert shuffling.miss_mc_tally(*args, RNG(), shuffle=True, value=1.5 * q ** 2).failures == 1
    assert shuffling.miss_mc_tally(*args, RNG(), shuffle=False).failures == 0
    assert shuffling.shuffled_miss_tally(T.fr(4, 2), 0.3, 0.8, 0.01, given_k=False).failures == 0
    assert shuffling.shuffled_miss_tally(T.fr(4, 2), 0.3, 0.8, 0.01, given_k=False,
                                 value=0.247 ** 2 * 1.01).failures > 0


def test_prop1_shuffle_counterexample_by_hand():
    """FRC(4, s=2), holders of data-set 0 both active (k = 0), workers 2, 3 slow w.p. 0.3: a
    shuffle gives data-set 0 a uniformly random pair of workers."""
    cond, total = shuffling.miss_shuffled(T.fr(4, 2), 0.3, 0.8, 0.01)
    q = 0.3 * 0.8 + 0.7 * 0.01
    by_hand = (0.01 ** 2 + 4 * 0.01 * q + q ** 2) / 6
    assert cond[0, 0][0] == pytest.approx(by_hand, rel=1e-12)
    assert abs(by_hand - q ** 2) > 0.04
    assert total[0] == pytest.approx(q ** 2, rel=1e-12)
    t = shuffling.shuffled_miss_tally(T.fr(4, 2), 0.3, 0.8, 0.01, given_k=True)
    assert t.cases == t.failures == 4 * 3          # every data-set, k_i = 0, 1, 2


def test_remark1_catches_a_non_cyclic_support_and_no_shuffle():
    assert shuffling.cyclic_tally(T.fr(6, 2), 0.8, 0.01).failures == 0
    B = np.zeros((4, 4))
    for i, holders in enumerate(([0, 1], [0, 2], [2, 3], [1, 3])):
        B[holders, i] = 1
    assert shuffling.cyclic_tally(from_matrix(B), 0.8, 0.01).failures > 0
    identity = lambda n, it: np.arange(n)  # noqa: E731
    assert shuffling.cyclic_tally(T.fr(6, 2), 0.8, 0.01, perm_fn=identity).failures > 0


def test_uniform_catches_a_cyclic_shuffle():
    assert frc.uniform_tally(6, 2, 3000, RNG()).failures == 0
    cyclic = lambda n, it, rng: shuffle_permutation(n, int(rng.integers(n)), kind="cyclic")  # noqa
    assert frc.uniform_tally(6, 2, 3000, RNG(), perm_fn=cyclic).failures > 0


def test_fr_conditional_catches_the_uncorrected_form():
    assert frc.fr_conditional_tally(6, 2).failures == 0
    wrong = lambda n, s, r: n * comb(n - s, s - r) / comb(n, r) if s >= r else 0.0  # noqa
    assert frc.fr_conditional_tally(6, 2, wrong).failures > 0


def test_zero_error_threshold():
    assert frc.zero_error_tally(6, 2, 6 - 2 + 1).failures == 0       # (s-1)-tolerance
    t = frc.zero_error_tally(6, 2, 6 - 2)                             # the proof's r >= n - s
    assert t.failures == 3                                          # one whole group lost


def test_pr_printed_and_corrected():
    assert frc.pr_tally(8, 3, 0.8, 0.01, non_straggler_pmf).failures == 0
    assert frc.pr_tally(8, 3, 0.8, 0.01, T.pr_conv).failures == 0
    assert frc.pr_tally(8, 0, 0.8, 0.01).failures == 1                # as printed
    assert T.pr_printed(8, 0, 0.8, 0.01).sum() == pytest.approx(1.002532, abs=1e-6)
    assert T.pr_printed(8, 8, 0.8, 0.01) == pytest.approx(T.pr_conv(8, 8, 0.8, 0.01))
    wrong = lambda n, m, p_ss, p_as: T.pr_conv(n, m, p_as, p_ss)  # noqa: E731
    assert frc.pr_tally(8, 3, 0.8, 0.01, wrong).failures == 1


def test_thm1_catches_a_wrong_formula():
    code, good = T.fr(6, 2), lambda P: T.thm1(6, 2, P)
    assert T.thm_exact_tally(code, 2, 3, 0.8, 0.01, good, RNG()).failures == 0
    upto = lambda P: 6 * sum(P[r] * comb(4, r) / comb(6, r) for r in range(4))  # noqa: E731
    assert T.thm_exact_tally(code, 2, 3, 0.8, 0.01, upto, RNG()).failures == 1   # r < n - s
    assert T.thm_mc_tally(code, 2, 3, 0.8, 0.01, good, 400, RNG()).failures == 0
    off = lambda P: T.thm1(6, 2, P) + 0.3  # noqa: E731
    assert T.thm_mc_tally(code, 2, 3, 0.8, 0.01, off, 400, RNG()).failures == 1


def test_lemma1_catches_a_wrong_count():
    assert crc.lemma1_tally(12).failures == 0
    no_mobius = lambda n, r, e: (sum(comb(d, r // (n // d)) if r % (n // d) == 0 else 0  # noqa
                                     for d in range(1, e + 1) if e % d == 0), e)
    assert crc.lemma1_tally(12, no_mobius).failures > 0
    assert crc.lemma1(6, 2, 3) == (3, 3)     # 110110, 101101, 011011: one class of order 3


def test_cycles_catches_wrong_orders():
    assert crc.cycles_tally(9).failures == 0
    reps, order, weight, canon = T.cycle_classes(9)
    fake = lambda n: (reps, np.full_like(order, 9), weight, canon)  # noqa: E731
    assert crc.cycles_tally(9, fake).failures > 0


def test_invariance_holds_for_circulants_only():
    assert crc.cycle_invariance_tally(T.circulant(8, 3)).failures == 0
    assert crc.cycle_invariance_tally(T.crc(6, 2)).failures > 0


def test_thm2_catches_a_wrong_formula():
    code = T.circulant(6, 2)
    good = lambda P: T.thm2(code.B, 2, P)  # noqa: E731
    assert T.thm_exact_tally(code, 2, 3, 0.8, 0.01, good, RNG()).failures == 0
    short = lambda P: T.thm2(code.B, 3, P)  # noqa: E731    drops the r = n - s term
    assert T.thm_exact_tally(code, 2, 3, 0.8, 0.01, short, RNG()).failures == 1
    tandon = T.crc(6, 2)
    assert T.thm_exact_tally(tandon, 2, 3, 0.8, 0.01, lambda P: T.thm2(tandon.B, 2, P),
                             RNG()).failures == 1


def test_remark2_catches_a_wrong_average():
    code = T.fr(4, 2)
    good = lambda P: T.thm1(4, 2, P)  # noqa: E731
    assert sec5.remark2_exact_tally(code, 0.3, 0.8, 0.01, good).failures == 0
    assert sec5.remark2_exact_tally(code, 0.3, 0.8, 0.01, lambda P: 1.1 * good(P)).failures == 1
    other = binom.pmf(np.arange(5), 4, 0.5)                # P_m of another p^
    assert sec5.remark2_exact_tally(code, 0.3, 0.8, 0.01, good, pm=other).failures == 1
    assert sec5.remark2_printed_tally(code, 0.3, 0.8, 0.01).failures == 5   # no sum over m


def test_remark2_monte_carlo_catches_a_wrong_average():
    """The simulated model (classes drawn and kept, stragglers, shuffles, gradcode's decoder)
    against Remark 2's sum: the right P_m passes, P_m of p^ = 0.6 does not."""
    args = (T.fr(8, 2), 0.3, 0.8, 0.01, lambda P: T.thm1(8, 2, P))
    assert sec5.remark2_mc_tally(*args, 300, 4, RNG()).failures == 0
    other = binom.pmf(np.arange(9), 8, 0.6)
    assert sec5.remark2_mc_tally(*args, 300, 4, RNG(), pm=other).failures == 1
    assert sec5.remark2_formula(8, 0.3, 0.8, 0.01, args[-1]) == pytest.approx(
        8 * (0.3 * 0.8 + 0.7 * 0.01) ** 2, rel=1e-9)         # = n q^2: Sec. V's FRC value


def test_sec5_values():
    v = sec5.sec5_values(2)
    q = 0.3 * 0.8 + 0.7 * 0.01
    for route in v["FRC"].values():
        assert route == pytest.approx(8 * q ** 2, abs=1e-9)
    assert v["FRC"]["exact"] == pytest.approx(0.488072, abs=1e-6)
    assert v["CRC"]["exact"] == pytest.approx(0.624412, abs=1e-6)
    assert 8 * q == pytest.approx(T.PRINTED["FRC"], abs=1e-12)       # the printed FRC number
    assert all(x > v["FRC"]["exact"] for x in v["CRC [2]"])
