"""Straggler patterns (paper 4, Sec. 2, 2.1, App. C): conformance checkers against the
definitions written as loops, generators against checkers, enumeration against brute force,
Gilbert-Elliott statistics, the μ-rule, and parameter validation."""

from itertools import product

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from gradcode.stragglers import (AnyOf, Arbitrary, Bursty, GilbertElliott, SPerRound,
                                 enumerate_patterns, identify_stragglers)

from _sgc_reference import brute_arbitrary, brute_bursty, brute_mixture, brute_s_per_round

SETTINGS = settings(max_examples=60, deadline=None)


@st.composite
def models(draw):
    """A random small model with its definitional checker."""
    kind = draw(st.sampled_from(["s", "bursty", "arbitrary", "mixture"]))
    if kind == "s":
        s = draw(st.integers(0, 3))
        return SPerRound(s), lambda P: brute_s_per_round(P, s)
    W = draw(st.integers(1, 5))
    lam = draw(st.integers(0, 4))
    if kind == "bursty":
        B = draw(st.integers(1, W))
        return Bursty(B, W, lam), lambda P: brute_bursty(P, B, W, lam)
    N = draw(st.integers(0, W))
    if kind == "arbitrary":
        return Arbitrary(N, W, lam), lambda P: brute_arbitrary(P, N, W, lam)
    B = draw(st.integers(1, W))
    s = draw(st.integers(0, 2))
    L = W + draw(st.integers(0, 2))
    tests = [lambda w: brute_bursty(w, B, W, lam), lambda w: brute_s_per_round(w, s)]
    return AnyOf((Bursty(B, W, lam), SPerRound(s)), window=L), lambda P: brute_mixture(P, L, tests)


@st.composite
def patterns(draw, max_rounds=9, max_n=5):
    R = draw(st.integers(0, max_rounds))
    n = draw(st.integers(1, max_n))
    density = draw(st.floats(0.0, 0.6))
    seed = draw(st.integers(0, 2**32 - 1))
    return np.random.default_rng(seed).random((R, n)) < density


@SETTINGS
@given(models(), patterns())
def test_checker_agrees_with_definition(model_and_def, P):
    model, definition = model_and_def
    assert model.conforms(P) == definition(P)


@SETTINGS
@given(models(), st.integers(0, 25), st.integers(1, 7), st.floats(0.0, 1.0), st.integers(0, 2**32 - 1))
def test_generator_conforms(model_and_def, rounds, n, p, seed):
    model, definition = model_and_def
    P = model.sample(np.random.default_rng(seed), rounds, n, p=p)
    assert P.shape == (rounds, n) and P.dtype == bool
    assert model.conforms(P) and definition(P)
    if p == 0.0:
        assert not P.any()


@SETTINGS
@given(models(), patterns(max_rounds=8), st.integers(0, 2**32 - 1))
def test_allows_is_incremental_conformance(model_and_def, P, seed):
    """allows(history, row) == conforms(history + row) for every conforming history."""
    model, _ = model_and_def
    rng = np.random.default_rng(seed)
    H = model.sample(rng, P.shape[0], P.shape[1] or 1)
    row = rng.random(H.shape[1]) < 0.5
    assert model.allows(H, row) == model.conforms(np.vstack([H, row[None]]))


@pytest.mark.parametrize("model", [Bursty(2, 3, 2), Bursty(1, 2, 3), Arbitrary(1, 3, 2),
                                   SPerRound(1), AnyOf((Bursty(1, 2, 2), SPerRound(1)), window=3)],
                         ids=repr)
def test_enumeration_is_exactly_the_conforming_set(model):
    rounds, n = 3, 3
    everything = np.array(list(product([False, True], repeat=rounds * n))).reshape(-1, rounds, n)
    expected = {P.tobytes() for P in everything if model.conforms(P)}
    got = enumerate_patterns(model, rounds, n)
    assert len(got) == len(expected) == len({P.tobytes() for P in got})
    assert {P.tobytes() for P in got} == expected


def test_generators_reach_the_model_limits():
    """With p = 1 the generators fill every window up to its bound (so they exercise the
    boundary of the model, not just easy patterns)."""
    rng = np.random.default_rng(0)
    P = Bursty(2, 4, 3).sample(rng, 40, 8, p=1.0)
    distinct = [P[j:j + 4].any(0).sum() for j in range(37)]
    assert max(distinct) == 3
    assert any((P[t] & P[t + 1]).any() for t in range(39)), "no burst of length 2"
    A = Arbitrary(2, 5, 3).sample(rng, 40, 8, p=1.0)
    assert max(A[j:j + 5].sum(0).max() for j in range(36)) == 2
    S = SPerRound(3).sample(rng, 20, 8, p=1.0)
    assert (S.sum(1) == 3).all()


def test_paper_example_pattern_is_bursty():
    """The Fig. 6 pattern (worker 0 straggles in rounds 1-2, worker 1 in 2-3, worker 2 in 5,
    1-indexed) conforms to the (2, 3, 2)-bursty model; three distinct stragglers in a window or
    a burst of 3 would not."""
    P = np.zeros((6, 4), bool)
    P[[0, 1], 0] = P[[1, 2], 1] = P[4, 2] = True
    assert Bursty(2, 3, 2).conforms(P)
    Q = P.copy()
    Q[2, 3] = True                      # window 1-3 now holds workers 0, 1, 3
    assert not Bursty(2, 3, 2).conforms(Q)
    Q = P.copy()
    Q[2, 0] = True                      # worker 0 straggles 3 rounds in a row
    assert not Bursty(2, 3, 2).conforms(Q)


def test_gilbert_elliott_statistics():
    ge = GilbertElliott(p_N=0.1, p_S=0.4)
    P = ge.sample(np.random.default_rng(1), 4000, 50)
    assert ge.stationary == pytest.approx(0.2)
    assert P.mean() == pytest.approx(0.2, abs=0.01)
    stay = (P[1:] & P[:-1]).sum() / P[:-1].sum()
    start = (P[1:] & ~P[:-1]).sum() / (~P[:-1]).sum()
    assert stay == pytest.approx(1 - 0.4, abs=0.02)
    assert start == pytest.approx(0.1, abs=0.01)
    again = ge.sample(np.random.default_rng(1), 4000, 50)
    np.testing.assert_array_equal(P, again)
    first = ge.sample(np.random.default_rng(2), 3, 4, initial=[True, False, True, False])
    np.testing.assert_array_equal(first[0], [True, False, True, False])


def test_mu_rule():
    times = np.array([[1.0, 1.5, 2.0, 2.5, np.nan],
                      [2.0, 2.0, 4.0, 4.1, np.inf]])
    S = identify_stragglers(times, mu=1.0)
    np.testing.assert_array_equal(S, [[False, False, False, True, True],
                                      [False, False, False, True, True]])
    np.testing.assert_array_equal(identify_stragglers(times[0], mu=0.0),
                                  [False, True, True, True, True])
    # a round nobody returned from: everyone straggled
    np.testing.assert_array_equal(identify_stragglers([np.inf, np.nan, np.inf], mu=1.0),
                                  [True, True, True])


@pytest.mark.parametrize("make,word", [
    (lambda: Bursty(3, 2, 1), "B"),
    (lambda: Bursty(0, 2, 1), "B"),
    (lambda: Bursty(1, 2, -1), "lam"),
    (lambda: Arbitrary(4, 3, 1), "N"),
    (lambda: Arbitrary(1, 0, 1), "W"),
    (lambda: SPerRound(-1), "s"),
    (lambda: AnyOf((Bursty(1, 4, 1),), window=3), "window"),
    (lambda: AnyOf(()), "models"),
    (lambda: GilbertElliott(1.5, 0.1), "p_N"),
    (lambda: identify_stragglers([1.0, 2.0], mu=-1), "mu"),
    (lambda: Bursty(1, 2, 1).conforms(np.zeros(4)), "pattern"),
    (lambda: Bursty(1, 2, 1).conforms(np.full((2, 2), 2)), "pattern"),
    (lambda: Bursty(1, 2, 1).sample(np.random.default_rng(0), 3, 2, p=1.5), "p"),
    (lambda: Bursty(1, 2, 1).sample(0, 3, 2), "rng"),
])
def test_invalid_parameters(make, word):
    with pytest.raises(ValueError, match=rf"^{word}:"):
        make()
