"""Paper 1 (Tandon et al.)'s statements in ``theorems``: each one's pinned verdict (checked by
``test_theorems.py``), and each check fed a deliberately wrong instance (or a wrong gradcode) to
show that it can fail."""

import dataclasses
from fractions import Fraction

import numpy as np
import pytest

from gradcode import make_code
from gradcode.experiments import Context
from gradcode.experiments.theorems import (statements, tandon_common, tandon_cr, tandon_fr,
                                           tandon_full, tandon_partial, tandon_setup, verdict)

QUICK = Context(quick=True, progress=False)

#: the verdict each statement gets (every one of paper 1's statements holds); one row per
#: statement, checked on the paper's construction and on gradcode's, which must equal it
VERDICTS = {
    "General Setup, example (n = 3, s = 1)": "reproduced",
    "Full Stragglers, condition (4)": "reproduced",
    "Full Stragglers, Theorem (lower bound on B's density)": "reproduced",
    "Fractional Repetition Scheme (Alg. 1)": "reproduced",
    "Fractional Repetition Scheme, figure (n = 6, s = 2)": "reproduced",
    "Cyclic Repetition Scheme, eq. (5) (Alg. 2)": "reproduced",
    "Partial Stragglers, figure (n = 3, s = 1, alpha = 2)": "reproduced",
    "Partial Stragglers": "reproduced",
}


def _check(where):
    (s,) = [s for s in statements() if s.paper == 1 and s.where == where]
    return s.check(QUICK)


# --------------------------------------------------------------------------- the example
def test_example_fails_on_a_wrong_A():
    A, B = tandon_setup.PAPER_A, tandon_setup.PAPER_B
    t = tandon_setup.example_tally(A, B, 1)
    assert (t.cases, t.failures) == (4, 0)
    wrong = [row[:] for row in A]
    wrong[0][2] = 1                                    # row 0 of A times B is no longer 1
    t = tandon_setup.example_tally(wrong, B, 1)
    assert t.failures == 1 and "row 0" in t.example
    t = tandon_setup.example_tally(A[:2], B, 1)      # a support lost
    assert t.failures == 1 and "supports" in t.example


def test_example_decodings_fail_on_a_wrong_A_or_B():
    A, B = tandon_setup.PAPER_A, tandon_setup.PAPER_B
    assert tandon_setup.example_decodings(B, A, 1).failures == 0
    wrong = [row[:] for row in A]
    wrong[1] = [Fraction(1, 2), 0, Fraction(3, 2)]
    assert tandon_setup.example_decodings(B, wrong, 1).failures == 1
    # a B that does not tolerate a straggler: refused by from_matrix(B, s=1)
    with pytest.raises(ValueError):
        tandon_setup.example_decodings(np.eye(3), A, 1)


def test_example_row_fails_on_a_wrong_gradcode(monkeypatch):
    """The one row of the example fails when gradcode's decoder does, the printed A and B
    being right."""
    real = tandon_setup.from_matrix

    class Shifted:                       # gradcode's decoder returning another weight vector
        def __init__(self, B, s=None):
            self.code = real(B, s=s)

        def decode(self, received):
            d = self.code.decode(received)
            w = d.weights.copy()
            w[received[0]] += 1e-3
            return dataclasses.replace(d, weights=w)
    assert verdict(_check("General Setup, example (n = 3, s = 1)")) == "reproduced"
    monkeypatch.setattr(tandon_setup, "from_matrix", Shifted)
    e = _check("General Setup, example (n = 3, s = 1)")
    assert verdict(e) == "not reproduced" and "gradcode's weights" in e.example


# --------------------------------------------------------------------------- condition (4)
def test_spans_ones():
    assert tandon_common.spans_ones(np.array([[0.5, 1, 0], [0, 1, -1]]))
    assert not tandon_common.spans_ones(np.array([[1.0, 1, 0], [0, 1, 1]]))
    stack = np.array([[[1.0, 1, 1], [0, 0, 1]], [[1.0, 0, 0], [0, 1, 0]]])
    assert tandon_common.spans_ones(stack).tolist() == [True, False]


def test_condition4_sees_both_sides_and_a_wrong_is_robust(monkeypatch):
    inst = list(tandon_full.condition4_instances(np.random.default_rng(1), 40, 5))
    t, robust, total = tandon_full.condition4_tally(inst)
    assert t.failures == 0 and 0 < robust < total == 40
    monkeypatch.setattr(tandon_full, "is_robust", lambda B, s: True)
    t, robust, total = tandon_full.condition4_tally(inst)
    assert t.failures == total - robust and "is_robust" in t.example


# --------------------------------------------------------------------------- the Theorem
def test_density_violations_counts_a_b_beating_the_bound():
    n, s = 6, 2
    Bs = np.stack([tandon_common.fr_matrix(n, s), tandon_common.cyclic_support(n, s)])
    assert not tandon_full.density_violations(Bs, s).any()
    # weight s + 1 against a (false) bound s + 2: both satisfy (4), so both are flagged
    assert tandon_full.density_violations(Bs, s, bound=s + 2).tolist() == [True, True]
    # unequal row weights are outside the Theorem's hypothesis
    uneven = np.array([[[1, 1, 1], [1, 1, 1], [1, 0, 0]]])
    assert tandon_full.satisfies_4(uneven, 1).tolist() == [True]
    assert not tandon_full.density_violations(uneven, 1, bound=4).any()


def test_supports_exhaustive():
    P = tandon_full.supports_exhaustive(4, 2)
    assert P.shape == (126, 4, 4) and np.all(P.sum(axis=2) == 2)


# --------------------------------------------------------------------------- FR
def test_fr_check_fails_on_a_wrong_B():
    assert tandon_fr.fr_tally(tandon_common.fr_matrix(6, 2), 6, 2).failures == 0
    t = tandon_fr.fr_tally(tandon_common.cyclic_support(6, 2), 6, 2)
    assert t.failures > 0 and "A_I B" in t.example
    B = tandon_common.fr_matrix(6, 2)
    B[0, 0] = 2                                        # a worker not sending the plain sum
    assert tandon_fr.fr_tally(B, 6, 2).failures > 0


def test_code_decodes_fails_on_a_wrong_code():
    fr, cyclic = tandon_common.fr_matrix(6, 2), tandon_common.cyclic_support(6, 2)
    assert tandon_common.code_decodes(make_code("gc-fr", n=6, s=2), fr, 2).failures == 0
    isgc = make_code("isgc-cr", n=5, c=2)            # plain sums, not robust for odd n
    assert tandon_common.code_decodes(isgc, np.array(isgc.B), 1).failures > 0
    # gc-fr checked against another B than its own
    assert tandon_common.code_decodes(make_code("gc-fr", n=6, s=2), cyclic, 2).failures > 0


def test_fr_statements_fail_on_a_wrong_gc_fr_or_a_wrong_b_fr(monkeypatch):
    real = make_code
    monkeypatch.setattr(tandon_fr, "make_code",
                        lambda name, **p: real(name, **{**p, "s": p["n"] - 1}))
    e = _check("Fractional Repetition Scheme (Alg. 1)")
    assert verdict(e) == "not reproduced" and "gc-fr" in e.example
    monkeypatch.setattr(tandon_fr, "make_code", real)
    # the construction from the text wrong (and gc-fr compared with it): the row fails too
    monkeypatch.setattr(tandon_fr, "fr_matrix", lambda n, s: tandon_common.cyclic_support(n, s))
    assert verdict(_check("Fractional Repetition Scheme (Alg. 1)")) == "not reproduced"
    monkeypatch.undo()
    monkeypatch.setattr(tandon_fr, "make_code", lambda name, **p: real(name, n=6, s=1))
    assert verdict(_check("Fractional Repetition Scheme, figure (n = 6, s = 2)")) \
        == "not reproduced"


# --------------------------------------------------------------------------- CR
def test_alg2_matches_the_paper_and_its_check_can_fail():
    rng = np.random.default_rng(0)
    B, H = tandon_cr.alg2(7, 3, rng)
    assert np.array_equal(B != 0, tandon_common.cyclic_support(7, 3) == 1)
    assert np.allclose(np.diag(B), 1) and np.allclose(H @ np.ones(7), 0)
    assert tandon_cr.alg2_tally(B, H, 7, 3).failures == 0
    # an H without the column making H 1 = 0: the rows no longer span 1
    H2 = rng.standard_normal((3, 7))
    B2 = np.zeros((7, 7))
    for i in range(7):
        j = (i + np.arange(4)) % 7
        B2[i, j] = np.concatenate([[1.0], -np.linalg.solve(H2[:, j[1:]], H2[:, j[0]])])
    t = tandon_cr.alg2_tally(B2, H2, 7, 3)
    assert t.failures == t.cases                       # every set of n - s rows misses 1
    B3 = B.copy()
    B3[2, 3] += 0.5                                    # one coefficient off
    assert 0 < tandon_cr.alg2_tally(B3, H, 7, 3).failures < t.cases


def test_cr_row_fails_on_a_wrong_gc_cr(monkeypatch):
    real = make_code
    assert tandon_cr.gc_cr_tally(real("gc-cr", n=7, s=3), 7, 3).failures == 0
    monkeypatch.setattr(tandon_cr, "make_code",
                        lambda name, n, s, seed=0: real("isgc-cr", n=n, c=s + 1))
    e = _check("Cyclic Repetition Scheme, eq. (5) (Alg. 2)")
    assert verdict(e) == "not reproduced" and e.failures > 0


def test_gc_cr_tally_fails_off_alg2():
    """gc-cr's decoder on other B's with CR's support (5): plain sums (rank n - s, 1 in the
    span, but their H is not MDS, so Alg. 2 cannot give them) and generic values (rank n)."""
    code = make_code("gc-cr", n=6, s=2)

    class Other:                                 # gc-cr's decoder, another B
        def __init__(self, B):
            self.B = B

        def decode(self, received):
            return code.decode(received)
    sums = tandon_common.cyclic_support(6, 2).astype(float)
    assert tandon_common.rank(sums) == 4
    t = tandon_cr.gc_cr_tally(Other(sums), 6, 2)
    assert t.failures > 0 and "not MDS" in t.example
    generic = sums * np.random.default_rng(0).uniform(1, 2, (6, 6))
    t = tandon_cr.gc_cr_tally(Other(generic), 6, 2)
    assert t.failures > 0 and "rank 6" in t.example
    assert not tandon_cr.is_mds(np.array([[1.0, 1, 0, -2], [1.0, 1, -1, -1]]))


# --------------------------------------------------------------------------- partial
def test_partial_split():
    assert tandon_partial.partial_split(3, 1, Fraction(2)) == (Fraction(2, 9), Fraction(2, 9),
                                                               Fraction(4, 9))
    a, coded, load = tandon_partial.partial_split(12, 1, Fraction(6, 5))
    assert Fraction(6, 5) * a == load                  # the straggler's naive time
    assert 1 - 12 * a == Fraction(1, 11)              # the replicated share (alpha-1)/(alpha+s)


def test_partial_figure_fails_on_another_alpha(monkeypatch):
    real = make_code
    monkeypatch.setattr(tandon_partial, "make_code",
                        lambda name, **p: real(name, **({**p, "alpha": 3} if "alpha" in p else p)))
    e = _check("Partial Stragglers, figure (n = 3, s = 1, alpha = 2)")
    assert e.failures == 1 and "gc-partial" in e.example


def test_partial_check_fails_beyond_alpha():
    rng = np.random.default_rng(0)
    code = make_code("gc-partial", n=5, s=2, alpha=1.5)
    assert tandon_partial.partial_tally(code, 5, 2, 1.5, np.array([1.5, 1.2]), rng).failures == 0
    t = tandon_partial.partial_tally(code, 5, 2, 1.5, np.array([1.6]), rng)
    assert t.failures == t.cases - 1 and "not decoded" in t.example
    # a scheme balanced for another alpha: the balance fails
    other = make_code("gc-partial", n=5, s=2, alpha=2.0)
    t = tandon_partial.partial_tally(other, 5, 2, 1.5, np.array([1.5]), rng)
    assert t.failures >= 1 and "naive" in t.example
