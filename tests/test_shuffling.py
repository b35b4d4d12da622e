"""Paper 5: heterogeneous straggler model, shuffling and expected optimal decoding error.

Closed forms (Thm 1, Thm 2) against exhaustive enumeration; enumeration against a direct sum
over straggler patterns and over permutations; Monte Carlo against enumeration; validation.
"""

from itertools import combinations, permutations, product
from math import comb

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import gradcode
from gradcode import from_matrix, make_code
from gradcode.analysis._shuffling import (
    _cycle_classes, expected_error, non_straggler_pmf, sample_slow, sample_stragglers,
    shuffle_permutation)

FR_CODES = [("gc-fr", dict(n=4, s=1)), ("gc-fr", dict(n=6, s=2)), ("gc-fr", dict(n=8, s=1)),
            ("gc-fr", dict(n=9, s=2)), ("isgc-fr", dict(n=8, c=4)), ("uncoded", dict(n=5))]
CIRCULANT_CODES = [("isgc-cr", dict(n=5, c=2)), ("isgc-cr", dict(n=7, c=3)),
                   ("isgc-cr", dict(n=8, c=2)), ("isgc-cr", dict(n=9, c=4))]
PROBS = [(0.3, 0.8, 0.01), (0.5, 0.6, 0.2), (0.0, 1.0, 0.3), (1.0, 0.45, 0.0), (0.2, 1.0, 1.0)]


def code_of(entry):
    name, params = entry
    return make_code(name, **params)


def weighted_circulant():
    """Circulant with unequal, signed entries: not FR, so only Thm 2 applies."""
    row = np.array([2.0, -1.0, 0.5, 0.0, 0.0, 0.0, 0.0])
    return from_matrix(np.stack([np.roll(row, i) for i in range(7)]))


def brute_force(code, p_worker):
    """sum over all straggler patterns of prod(prob) * err, err by ``Code.decode``."""
    n = code.n_workers
    total = 0.0
    for straggles in product([False, True], repeat=n):
        straggles = np.array(straggles)
        prob = np.prod(np.where(straggles, p_worker, 1 - p_worker))
        if prob:
            total += prob * code.decode(np.flatnonzero(~straggles), method="optimal").error
    return total


# ----------------------------------------------------------------------- closed == exact
@pytest.mark.parametrize("entry", FR_CODES + CIRCULANT_CODES, ids=str)
@pytest.mark.parametrize("probs", PROBS, ids=str)
def test_closed_equals_exact_shuffled(entry, probs):
    code = code_of(entry)
    n = code.n_workers
    for slow in (None, [0], list(range(n // 2)), list(range(n))):
        closed = expected_error(code, *probs, slow=slow, method="closed")
        exact = expected_error(code, *probs, slow=slow, method="exact")
        assert closed == pytest.approx(exact, abs=1e-9), slow


@pytest.mark.parametrize("entry", FR_CODES, ids=str)
@pytest.mark.parametrize("shuffle", [False, "cyclic"])
def test_fr_closed_equals_exact_unshuffled(entry, shuffle):
    code = code_of(entry)
    for probs in PROBS:
        for slow in (None, [1], [0, 1, 3]):
            kw = dict(shuffle=shuffle, slow=slow)
            assert expected_error(code, *probs, **kw, method="closed") == pytest.approx(
                expected_error(code, *probs, **kw, method="exact"), abs=1e-9)


def test_weighted_circulant_uses_thm2():
    code = weighted_circulant()
    for probs in PROBS:
        for slow in (None, [2, 5]):
            assert expected_error(code, *probs, slow=slow, method="closed") == pytest.approx(
                expected_error(code, *probs, slow=slow, method="exact"), abs=1e-9)
    # Thm 2 needs every received set of a size to be equally likely
    with pytest.raises(ValueError, match=r"^method: 'closed' needs"):
        expected_error(code, None, 0.8, 0.1, shuffle=False, slow=[2], method="closed")


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(FR_CODES + CIRCULANT_CODES), st.floats(0, 1), st.floats(0, 1),
       st.floats(0, 1), st.sets(st.integers(0, 4)), st.booleans())
def test_closed_equals_exact_random(entry, p_slow, p_ss, p_as, slow, given_slow):
    code = code_of(entry)
    slow = sorted(i for i in slow if i < code.n_workers) if given_slow else None
    assert expected_error(code, p_slow, p_ss, p_as, slow=slow, method="closed") == pytest.approx(
        expected_error(code, p_slow, p_ss, p_as, slow=slow, method="exact"), abs=1e-9)


@settings(max_examples=25, deadline=None)
@given(st.sampled_from([(4, 1), (6, 1), (6, 2), (9, 2), (8, 3)]), st.data(),
       st.floats(0, 1), st.floats(0, 1))
def test_fr_thm1_hypergeometric(ns, data, p_ss, p_as):
    """FR, (n, m) model: E = n P(a fixed group of a rows all straggle), the group's workers being
    a uniform a-subset, k of them slow with hypergeometric probability (independent of P_r)."""
    n, s = ns
    a = s + 1
    m = data.draw(st.integers(0, n))
    expect = n * sum(comb(m, k) * comb(n - m, a - k) / comb(n, a) * p_ss ** k * p_as ** (a - k)
                     for k in range(a + 1))
    code = make_code("gc-fr", n=n, s=s)
    got = expected_error(code, None, p_ss, p_as, slow=range(m), method="closed")
    assert got == pytest.approx(expect, abs=1e-12)


def test_paper_n8_example():
    """Sec. V: n = 8, s = 2 (replication), p^ = 0.3, p_ss = 0.8, p_as = 0.01.  The paper prints
    1.976 (FRC) and 0.5173 (CRC); the model gives n q^2 = 0.488072 and 0.624412."""
    q = 0.3 * 0.8 + 0.7 * 0.01
    fr = expected_error(make_code("gc-fr", n=8, s=1), 0.3, 0.8, 0.01)
    cr = expected_error(make_code("isgc-cr", n=8, c=2), 0.3, 0.8, 0.01)
    assert fr == pytest.approx(8 * q ** 2, abs=1e-12)
    assert cr == pytest.approx(0.624412321667, abs=1e-9)
    assert expected_error(make_code("isgc-cr", n=8, c=2), 0.3, 0.8, 0.01,
                          method="exact") == pytest.approx(cr, abs=1e-12)


# ----------------------------------------------------------------------- exact == direct sums
UNSHUFFLED = [("gc-cr", dict(n=6, s=2)), ("gc-cr", dict(n=5, s=1, seed=3)),
              ("isgc-cr", dict(n=6, c=3)), ("gc-fr", dict(n=6, s=1)),
              ("heter", dict(speeds=[1, 2, 3, 4, 4], s=1, k=7))]


@pytest.mark.parametrize("entry", UNSHUFFLED, ids=str)
def test_unshuffled_against_direct_enumeration(entry):
    try:
        code = code_of(entry)
    except ModuleNotFoundError:
        pytest.skip("code not available yet")
    n = code.n_workers
    for p_ss, p_as in [(0.8, 0.05), (0.5, 0.3), (1.0, 0.0)]:
        for slow in ([0], [1, 3], list(range(n))):
            p_worker = np.where(np.isin(np.arange(n), slow), p_ss, p_as)
            direct = brute_force(code, p_worker)
            for method in ("auto", "exact"):
                got = expected_error(code, None, p_ss, p_as, shuffle=False, slow=slow,
                                     method=method)
                assert got == pytest.approx(direct, abs=1e-9), (slow, method)


@pytest.mark.parametrize("entry", [("gc-cr", dict(n=5, s=2)), ("isgc-cr", dict(n=5, c=2)),
                                   ("gc-fr", dict(n=4, s=1)), ("gc-cr", dict(n=4, s=1, seed=2))],
                         ids=str)
def test_shuffle_is_average_over_permutations(entry):
    """Random shuffling == the mean over all n! assignments (worker j computes row perm[j]) of
    the unshuffled error; cyclic shuffling == the mean over the n cyclic assignments."""
    code = code_of(entry)
    n, B = code.n_workers, code.B
    slow, probs = [0, 2], (None, 0.7, 0.1)
    perms = list(permutations(range(n)))
    unshuffled = {p: expected_error(from_matrix(B[list(p)]), *probs, shuffle=False, slow=slow,
                                    method="exact") for p in perms}
    shuffled = expected_error(code, *probs, slow=slow, method="exact")
    assert shuffled == pytest.approx(np.mean(list(unshuffled.values())), abs=1e-9)
    assert expected_error(code, *probs, slow=slow) == pytest.approx(shuffled, abs=1e-9)
    cyclic = [tuple(shuffle_permutation(n, t, "cyclic")) for t in range(n)]
    assert expected_error(code, *probs, shuffle="cyclic", slow=slow, method="exact") == \
        pytest.approx(np.mean([unshuffled[p] for p in cyclic]), abs=1e-9)


def test_class_average_is_shuffle_invariant():
    """slow=None: iid stragglers with q, equal to the mean over slow sets of the unshuffled
    error weighted by p^m (1 - p)^(n - m)."""
    code = make_code("gc-cr", n=5, s=1)
    p_slow, p_ss, p_as = 0.3, 0.9, 0.05
    mixed = sum(p_slow ** len(S) * (1 - p_slow) ** (5 - len(S))
                * expected_error(code, None, p_ss, p_as, shuffle=False, slow=S)
                for r in range(6) for S in combinations(range(5), r))
    for shuffle in (True, False, "cyclic"):
        assert expected_error(code, p_slow, p_ss, p_as, shuffle=shuffle) == pytest.approx(
            mixed, abs=1e-9)


# ----------------------------------------------------------------------- empty received set
@pytest.mark.parametrize("entry", [("gc-cr", dict(n=6, s=2)), ("isgc-cr", dict(n=6, c=2)),
                                   ("gc-fr", dict(n=6, s=1)), ("uncoded", dict(n=4))], ids=str)
@pytest.mark.parametrize("method", ["auto", "closed", "exact", "mc"])
def test_empty_received_set_costs_n_partitions(entry, method):
    code = code_of(entry)
    if method == "closed" and entry[0] == "gc-cr":        # a random B: no closed form, says so
        with pytest.raises(ValueError, match="method: 'closed' needs"):
            expected_error(code, 0.4, 1.0, 1.0, shuffle=True, method=method)
        return
    for shuffle, slow in [(True, None), (True, [1]), (False, [0, 3])]:
        got = expected_error(code, 0.4, 1.0, 1.0, shuffle=shuffle, slow=slow, method=method,
                             rng=np.random.default_rng(0), samples=50)
        assert got == pytest.approx(code.n_partitions, abs=1e-9)


def test_deterministic_received_set():
    """p_ss = 1, p_as = 0 without shuffling: exactly the slow workers straggle."""
    code = make_code("gc-cr", n=7, s=2)
    for slow in ([0, 1, 2], [0, 3, 5], [1, 2, 4, 6]):
        want = code.decode(np.setdiff1d(np.arange(7), slow), method="optimal").error
        assert want > 1e-3
        for method in ("exact", "mc"):
            got = expected_error(code, None, 1.0, 0.0, shuffle=False, slow=slow, method=method,
                                 rng=np.random.default_rng(1), samples=20)
            assert got == pytest.approx(want, abs=1e-9)


# ----------------------------------------------------------------------- Monte Carlo
MC_CASES = [("gc-cr", dict(n=7, s=2), True, None), ("gc-cr", dict(n=7, s=2), False, [0, 1, 2]),
            ("gc-fr", dict(n=6, s=2), True, [0, 1, 2]), ("gc-fr", dict(n=6, s=2), False, [0, 1, 2]),
            ("gc-fr", dict(n=6, s=2), "cyclic", [0, 1, 2]), ("isgc-cr", dict(n=8, c=2), True, None)]


@pytest.mark.parametrize("name,params,shuffle,slow", MC_CASES, ids=str)
def test_monte_carlo_matches_exact(name, params, shuffle, slow):
    """0 <= err <= k, so Var(err) <= k E[err]: the standard error is <= sqrt(k E / N)."""
    code = make_code(name, **params)
    N, probs = 40_000, (0.3, 0.8, 0.05)
    exact = expected_error(code, *probs, shuffle=shuffle, slow=slow, method="exact")
    mc = expected_error(code, *probs, shuffle=shuffle, slow=slow, method="mc",
                        rng=np.random.default_rng(12345), samples=N)
    assert abs(mc - exact) <= 4 * np.sqrt(code.n_partitions * exact / N)


def test_monte_carlo_reproducible_and_auto_for_large_n():
    code = make_code("gc-cr", n=16, s=2)
    a = expected_error(code, 0.3, 0.8, 0.05, rng=np.random.default_rng(7), samples=300)
    b = expected_error(code, 0.3, 0.8, 0.05, method="mc", rng=np.random.default_rng(7),
                       samples=300)
    assert a == b
    assert a != expected_error(code, 0.3, 0.8, 0.05, method="mc", rng=np.random.default_rng(8),
                               samples=300)


# ----------------------------------------------------------------------- model pieces
@pytest.mark.parametrize("n,m", [(1, 0), (1, 1), (5, 2), (6, 0), (6, 6), (7, 3)])
def test_non_straggler_pmf(n, m):
    p_ss, p_as = 0.7, 0.15
    p = np.array([p_ss] * m + [p_as] * (n - m))
    direct = np.zeros(n + 1)
    for straggles in product([False, True], repeat=n):
        straggles = np.array(straggles)
        direct[n - straggles.sum()] += np.prod(np.where(straggles, p, 1 - p))
    np.testing.assert_allclose(non_straggler_pmf(n, m, p_ss, p_as), direct, atol=1e-12)


def test_remark2_mixture_is_binomial():
    n, p_slow, p_ss, p_as = 8, 0.3, 0.8, 0.01
    q = p_slow * p_ss + (1 - p_slow) * p_as
    mix = sum(comb(n, m) * p_slow ** m * (1 - p_slow) ** (n - m)
              * non_straggler_pmf(n, m, p_ss, p_as) for m in range(n + 1))
    binom = [comb(n, r) * (1 - q) ** r * q ** (n - r) for r in range(n + 1)]
    np.testing.assert_allclose(mix, binom, atol=1e-14)


@pytest.mark.parametrize("n", range(1, 13))
def test_cycle_classes_match_lemma1(n):
    """Lemma 1: N(r, e) = [x^r] (1/e) sum_{d | e} mu(e/d) (1 + x^(n/d))^d."""
    def mu(k):
        out, p = 1, 2
        while k > 1:
            if k % p == 0:
                k //= p
                if k % p == 0:
                    return 0
                out = -out
            p += 1
        return out

    reps, order, weight = _cycle_classes(n)
    for e in (d for d in range(1, n + 1) if n % d == 0):
        poly = np.zeros(n + 1, dtype=object)
        for d in (d for d in range(1, e + 1) if e % d == 0):
            for j in range(d + 1):
                poly[j * n // d] += mu(e // d) * comb(d, j)
        counts = np.bincount(weight[order == e], minlength=n + 1)
        assert [c * e for c in counts] == list(poly), e
    assert np.bincount(weight, order).tolist() == [comb(n, r) for r in range(n + 1)]


def test_shuffle_permutation():
    for t in (0, 3, 11):
        np.testing.assert_array_equal(shuffle_permutation(5, t, "cyclic"), (np.arange(5) + t) % 5)
    p1 = shuffle_permutation(6, 0, rng=np.random.default_rng(3))
    p2 = shuffle_permutation(6, 0, rng=np.random.default_rng(3))
    np.testing.assert_array_equal(p1, p2)
    assert sorted(p1) == list(range(6))
    rng = np.random.default_rng(0)
    counts = np.zeros((4, 4))
    for t in range(4000):
        counts[np.arange(4), shuffle_permutation(4, t, rng=rng)] += 1
    assert np.all(np.abs(counts - 1000) < 5 * np.sqrt(1000 * 0.75))   # uniform worker -> row


def test_samplers():
    rng = np.random.default_rng(5)
    assert abs(sample_slow(20_000, 0.3, rng).mean() - 0.3) < 5 * np.sqrt(0.21 / 20_000)
    slow = np.arange(20_000) < 5_000
    s = sample_stragglers(slow, 0.8, 0.1, rng)
    assert s.shape == slow.shape and s.dtype == bool
    assert abs(s[slow].mean() - 0.8) < 5 * np.sqrt(0.16 / 5_000)
    assert abs(s[~slow].mean() - 0.1) < 5 * np.sqrt(0.09 / 15_000)


# ----------------------------------------------------------------------- validation
CODE = make_code("gc-cr", n=8, s=1)


@pytest.mark.parametrize("kwargs,pattern", [
    (dict(p_slow=1.5), r"^p_slow: expected a probability in \[0, 1\], got 1\.5"),
    (dict(p_slow=None), r"^p_slow: expected a probability in \[0, 1\].*got None"),
    (dict(p_ss=-0.1), r"^p_ss: expected a probability in \[0, 1\], got -0\.1"),
    (dict(p_as=2), r"^p_as: expected a probability in \[0, 1\], got 2"),
    (dict(p_as=float("nan")), r"^p_as: expected a probability in \[0, 1\], got nan"),
    (dict(slow=[0, 9]), r"^slow: worker indices must be in \[0, 7\], got \[9\]"),
    (dict(slow=[-1]), r"^slow: worker indices must be in \[0, 7\], got \[-1\]"),
    (dict(slow=[0.5]), r"^slow: expected integer worker indices, got \[0\.5\]"),
    (dict(slow=np.ones(3, bool)), r"^slow: expected a boolean mask of length 8, got shape"),
    (dict(shuffle="sideways"), r"^shuffle: expected True, False, 'random' or 'cyclic', got"),
    (dict(method="fast"), r"^method: expected one of .*, got 'fast'"),
    (dict(method="closed"), r"^method: 'closed' needs an FR-structured B"),
    (dict(method="mc", samples=0), r"^samples: expected an integer >= 1, got 0"),
    (dict(method="mc", rng=1), r"^rng: expected a numpy.random.Generator"),
])
def test_bad_inputs(kwargs, pattern):
    args = dict(p_slow=0.3, p_ss=0.8, p_as=0.01) | kwargs
    with pytest.raises(ValueError, match=pattern):
        expected_error(CODE, **args)


def test_bad_inputs_other():
    with pytest.raises(ValueError, match=r"^method: 'exact' .* <= 20, got 21"):
        expected_error(make_code("gc-fr", n=21, s=2), 0.3, 0.8, 0.1, method="exact")
    with pytest.raises(ValueError, match=r"^code: expected a gradcode Code"):
        expected_error(np.eye(3), 0.3, 0.8, 0.1)
    with pytest.raises(ValueError, match=r"^kind: expected 'random' or 'cyclic', got 'x'"):
        shuffle_permutation(4, 0, "x")
    with pytest.raises(ValueError, match=r"^n: expected an integer >= 1, got 0"):
        shuffle_permutation(0, 0)
    with pytest.raises(ValueError, match=r"^iteration: expected an integer >= 0, got -1"):
        shuffle_permutation(4, -1, "cyclic")
    with pytest.raises(ValueError, match=r"^p_ss: expected a probability in \[0, 1\], got 1\.2"):
        sample_stragglers(np.zeros(3, bool), 1.2, 0.1, np.random.default_rng())
    with pytest.raises(ValueError, match=r"^p_slow: expected a probability in \[0, 1\], got -1"):
        sample_slow(3, -1, np.random.default_rng())


def test_exported():
    assert gradcode.analysis.expected_error is expected_error
    assert gradcode.analysis.shuffle_permutation is shuffle_permutation
