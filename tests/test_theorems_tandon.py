"""Paper 1 (Tandon et al.)'s statements in ``theorems``: each one's verdict on a quick run, and
each check fed a deliberately wrong instance (or a wrong gradcode) to show that it can fail."""

from fractions import Fraction

import numpy as np
import pytest

import gradcode.experiments.theorems_tandon as T
from gradcode import make_code
from gradcode.experiments import Context
from gradcode.experiments.theorems import statements, verdict

QUICK = Context(quick=True, progress=False)

#: the verdict each statement gets (every one of paper 1's statements holds)
VERDICTS = {
    "General Setup, example (n = 3, s = 1)": "reproduced",
    "General Setup, example (n = 3, s = 1), gradcode": "reproduced",
    "Full Stragglers, condition (4)": "reproduced",
    "Full Stragglers, Theorem (lower bound on B's density)": "reproduced",
    "Fractional Repetition Scheme (Alg. 1)": "reproduced",
    "Fractional Repetition Scheme (Alg. 1), gradcode": "reproduced",
    "Fractional Repetition Scheme, figure (n = 6, s = 2)": "reproduced",
    "Cyclic Repetition Scheme, eq. (5) (Alg. 2)": "reproduced",
    "Cyclic Repetition Scheme, eq. (5), gradcode": "reproduced",
    "Partial Stragglers, figure (n = 3, s = 1, alpha = 2)": "reproduced",
    "Partial Stragglers": "reproduced",
}


def _mine():
    return {s.where: s for s in statements() if s.paper == 1}


def test_every_statement_is_listed():
    assert set(_mine()) == set(VERDICTS)
    assert all(len(s.claim) > 20 for s in _mine().values())


@pytest.mark.parametrize("where", sorted(VERDICTS))
def test_verdict(where):
    e = _mine()[where].check(QUICK)
    assert e.cases > 0 and e.how and e.example
    assert verdict(e) == VERDICTS[where], e


# --------------------------------------------------------------------------- the example
def test_example_fails_on_a_wrong_A():
    assert T.example_evidence(T.PAPER_A, T.PAPER_B, 1)[:2] == (4, 0)
    wrong = [row[:] for row in T.PAPER_A]
    wrong[0][2] = 1                                    # row 0 of A times B is no longer 1
    cases, failures, bad = T.example_evidence(wrong, T.PAPER_B, 1)
    assert failures == 1 and "row 0" in bad
    cases, failures, bad = T.example_evidence(T.PAPER_A[:2], T.PAPER_B, 1)   # a support lost
    assert failures == 1 and "supports" in bad


def test_example_decodings_fail_on_a_wrong_A_or_B():
    assert T.example_decodings(T.PAPER_B, T.PAPER_A, 1)[1] == 0
    wrong = [row[:] for row in T.PAPER_A]
    wrong[1] = [Fraction(1, 2), 0, Fraction(3, 2)]
    assert T.example_decodings(T.PAPER_B, wrong, 1)[1] == 1
    # a B that does not tolerate a straggler: refused by from_matrix(B, s=1)
    with pytest.raises(ValueError):
        T.example_decodings(np.eye(3), T.PAPER_A, 1)


# --------------------------------------------------------------------------- condition (4)
def test_spans_ones():
    assert T.spans_ones(np.array([[0.5, 1, 0], [0, 1, -1]]))
    assert not T.spans_ones(np.array([[1.0, 1, 0], [0, 1, 1]]))
    stack = np.array([[[1.0, 1, 1], [0, 0, 1]], [[1.0, 0, 0], [0, 1, 0]]])
    assert T.spans_ones(stack).tolist() == [True, False]


def test_condition4_sees_both_sides_and_a_wrong_is_robust(monkeypatch):
    inst = list(T.condition4_instances(np.random.default_rng(1), 40, 5))
    cases, failures, robust, total, _ = T.condition4_evidence(inst)
    assert failures == 0 and 0 < robust < total == 40
    monkeypatch.setattr(T, "is_robust", lambda B, s: True)
    cases, failures, robust, total, bad = T.condition4_evidence(inst)
    assert failures == total - robust and "is_robust" in bad


# --------------------------------------------------------------------------- the Theorem
def test_density_violations_counts_a_b_beating_the_bound():
    n, s = 6, 2
    Bs = np.stack([T.fr_matrix(n, s), T.cyclic_support(n, s)])
    assert not T.density_violations(Bs, s).any()
    # weight s + 1 against a (false) bound s + 2: both satisfy (4), so both are flagged
    assert T.density_violations(Bs, s, bound=s + 2).tolist() == [True, True]
    # unequal row weights are outside the Theorem's hypothesis
    uneven = np.array([[[1, 1, 1], [1, 1, 1], [1, 0, 0]]])
    assert T.satisfies_4(uneven, 1).tolist() == [True]
    assert not T.density_violations(uneven, 1, bound=4).any()


def test_supports_exhaustive():
    P = T.supports_exhaustive(4, 2)
    assert P.shape == (126, 4, 4) and np.all(P.sum(axis=2) == 2)


# --------------------------------------------------------------------------- FR
def test_fr_check_fails_on_a_wrong_B():
    assert T.fr_evidence(T.fr_matrix(6, 2), 6, 2)[1] == 0
    cases, failures, bad = T.fr_evidence(T.cyclic_support(6, 2), 6, 2)
    assert failures > 0 and "A_I B" in bad
    B = T.fr_matrix(6, 2)
    B[0, 0] = 2                                        # a worker not sending the plain sum
    assert T.fr_evidence(B, 6, 2)[1] > 0


def test_code_decodes_fails_on_a_wrong_code():
    assert T.code_decodes(make_code("gc-fr", n=6, s=2), T.fr_matrix(6, 2), 2)[1] == 0
    isgc = make_code("isgc-cr", n=5, c=2)            # plain sums, not robust for odd n
    assert T.code_decodes(isgc, np.array(isgc.B), 1)[1] > 0
    # gc-fr checked against another B than its own
    assert T.code_decodes(make_code("gc-fr", n=6, s=2), T.cyclic_support(6, 2), 2)[1] > 0


def test_fr_statements_fail_on_a_wrong_gc_fr(monkeypatch):
    real = make_code
    monkeypatch.setattr(T, "make_code", lambda name, **p: real(name, **{**p, "s": p["n"] - 1}))
    where = "Fractional Repetition Scheme (Alg. 1), gradcode"
    assert verdict(_mine()[where].check(QUICK)) == "not reproduced"
    monkeypatch.setattr(T, "make_code", lambda name, **p: real(name, n=6, s=1))
    where = "Fractional Repetition Scheme, figure (n = 6, s = 2)"
    assert verdict(_mine()[where].check(QUICK)) == "not reproduced"


# --------------------------------------------------------------------------- CR
def test_alg2_matches_the_paper_and_its_check_can_fail():
    rng = np.random.default_rng(0)
    B, H = T.alg2(7, 3, rng)
    assert np.array_equal(B != 0, T.cyclic_support(7, 3) == 1)
    assert np.allclose(np.diag(B), 1) and np.allclose(H @ np.ones(7), 0)
    assert T.alg2_evidence(B, H, 7, 3)[1] == 0
    # an H without the column making H 1 = 0: the rows no longer span 1
    H2 = rng.standard_normal((3, 7))
    B2 = np.zeros((7, 7))
    for i in range(7):
        j = (i + np.arange(4)) % 7
        B2[i, j] = np.concatenate([[1.0], -np.linalg.solve(H2[:, j[1:]], H2[:, j[0]])])
    cases, failures, bad = T.alg2_evidence(B2, H2, 7, 3)
    assert failures == cases                           # every set of n - s rows misses 1
    B3 = B.copy()
    B3[2, 3] += 0.5                                    # one coefficient off
    assert 0 < T.alg2_evidence(B3, H, 7, 3)[1] < cases


def test_cr_gradcode_fails_on_a_wrong_gc_cr(monkeypatch):
    real = make_code
    monkeypatch.setattr(T, "make_code",
                        lambda name, n, s, seed=0: real("isgc-cr", n=n, c=s + 1))
    e = _mine()["Cyclic Repetition Scheme, eq. (5), gradcode"].check(QUICK)
    assert verdict(e) == "not reproduced" and e.failures > 0


# --------------------------------------------------------------------------- partial
def test_partial_split():
    assert T.partial_split(3, 1, Fraction(2)) == (Fraction(2, 9), Fraction(2, 9),
                                                 Fraction(4, 9))
    a, coded, load = T.partial_split(12, 1, Fraction(6, 5))
    assert Fraction(6, 5) * a == load                  # the straggler's naive time
    assert 1 - 12 * a == Fraction(1, 11)              # the replicated share (alpha-1)/(alpha+s)


def test_partial_figure_fails_on_another_alpha(monkeypatch):
    real = make_code
    monkeypatch.setattr(T, "make_code",
                        lambda name, **p: real(name, **({**p, "alpha": 3} if "alpha" in p else p)))
    e = _mine()["Partial Stragglers, figure (n = 3, s = 1, alpha = 2)"].check(QUICK)
    assert e.failures == 1 and "gc-partial" in e.example


def test_partial_check_fails_beyond_alpha():
    rng = np.random.default_rng(0)
    code = make_code("gc-partial", n=5, s=2, alpha=1.5)
    assert T.partial_evidence(code, 5, 2, 1.5, np.array([1.5, 1.2]), rng)[1] == 0
    cases, failures, bad = T.partial_evidence(code, 5, 2, 1.5, np.array([1.6]), rng)
    assert failures == cases - 1 and "not decoded" in bad
    # a scheme balanced for another alpha: the balance fails
    other = make_code("gc-partial", n=5, s=2, alpha=2.0)
    cases, failures, bad = T.partial_evidence(other, 5, 2, 1.5, np.array([1.5]), rng)
    assert failures >= 1 and "naive" in bad
