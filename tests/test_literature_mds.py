"""Raviv, Tamo, Tandon, Dimakis (ICML 2018, arXiv 1707.03858): ``cyclic-mds`` and ``expander``.

Only the paper's abstract could be read (no worked example of its text is reproduced here): the
checks are of the constructions as derived in ``gradcode/codes/_mds.py`` and ``_expander.py``:

* cyclic-mds decodes exactly from EVERY set of ``n - s`` workers (exhaustive, all valid
  ``(n, s)`` with ``n <= 10``), ``B`` is built from a real BCH codeword of weight ``s + 1``;
* the decoding-weight magnitude against ``gc-cr``, measured (scale-free: ``max|w| max|B|``);
* the expander's error bound ``(lambda / d)^2 n s / (n - s)`` on random straggler sets;
* hypothesis properties of both.
"""

from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import gradcode

SMALL_MDS = [(n, s) for n in range(1, 11) for s in range(n) if s == 0 or (n + s) % 2]


def worst_weight(code, straggler_sets):
    """``max |w| * max |B|`` over the straggler sets: the decoded gradient's worst amplification,
    independent of how ``B`` is scaled."""
    B, n = code.B, code.n_workers
    worst = max(np.abs(code.decode(np.setdiff1d(np.arange(n), S)).weights).max()
                for S in straggler_sets)
    return worst * np.abs(B).max()


# ----------------------------------------------------------------------------- cyclic-mds
@pytest.mark.parametrize("n,s", SMALL_MDS)
def test_cyclic_mds_decodes_from_every_n_minus_s_workers(n, s):
    code = gradcode.make_code("cyclic-mds", n=n, s=s)
    assert code.s == s and code.B.shape == (n, n)
    for K in combinations(range(n), n - s):
        d = code.decode(K)
        assert d.exact and d.method == "cyclic-mds", K
        np.testing.assert_allclose(d.weights @ code.B, 1.0, atol=1e-9)
    assert gradcode.from_matrix(code.B, s=s).s == s          # the independent robustness check


@pytest.mark.parametrize("n,s", [(n, s) for n, s in SMALL_MDS if s >= 1] + [(31, 6), (40, 9)])
def test_cyclic_mds_is_a_real_bch_code(n, s):
    """Rows are the cyclic shifts of ``g`` (support ``i..i+s``, as gc-cr), ``g`` vanishes on the
    ``s`` consecutive roots of unity centred at ``n / 2``, rank ``n - s``, ``1`` in the span."""
    code = gradcode.make_code("cyclic-mds", n=n, s=s)
    B, g = code.B, code.g
    assert g.shape == (s + 1,) and np.all(g != 0) and np.abs(g).max() == 1.0
    for i in range(n):
        np.testing.assert_array_equal(np.roll(B[0], i), B[i])
    np.testing.assert_array_equal(B != 0, gradcode.make_code("gc-cr", n=n, s=s).B != 0)
    lo = (n - s + 1) // 2
    roots = np.exp(2j * np.pi * np.arange(lo, lo + s) / n)
    assert np.abs(np.polyval(g[::-1], roots)).max() < 1e-9 * 2 ** s
    assert abs(np.polyval(g[::-1], 1.0)) > 1e-9                      # 1 is not a zero
    assert np.linalg.matrix_rank(B) == n - s
    w = np.linalg.lstsq(B.T, np.ones(n), rcond=None)[0]
    np.testing.assert_allclose(w @ B, 1.0, atol=1e-9)


@pytest.mark.parametrize("params,word", [
    (dict(n=6, s=2), "s"), (dict(n=7, s=3), "s"), (dict(n=5, s=5), "s"), (dict(n=0, s=0), "n"),
    (dict(n=5, s=-1), "s"), (dict(n=5, s=2.0), "s"), (dict(n=5, s=2, seed=1), "seed"),
])
def test_cyclic_mds_invalid_parameters_name_the_parameter(params, word):
    with pytest.raises(ValueError, match=rf"^{word}\b"):
        gradcode.make_code("cyclic-mds", **params)


@pytest.mark.parametrize("n,s", [(7, 2), (9, 2), (8, 3), (10, 3), (9, 4), (11, 4), (10, 5)])
def test_cyclic_mds_weights_smaller_than_gc_cr_at_small_n(n, s):
    """Measured, every straggler set of size ``s``: at these sizes cyclic-mds's worst decoding
    weight (times max|B|) is below gc-cr's for each of three seeds of gc-cr's random ``C``."""
    sets = list(combinations(range(n), s))
    mds = worst_weight(gradcode.make_code("cyclic-mds", n=n, s=s), sets)
    for seed in range(3):
        assert mds < worst_weight(gradcode.make_code("gc-cr", n=n, s=s, seed=seed), sets)


@pytest.mark.parametrize("n,s", [(64, 7), (65, 8)])
def test_cyclic_mds_weights_blow_up_on_consecutive_stragglers(n, s):
    """Measured, the other side: at larger ``n`` a block of ``s`` consecutive stragglers leaves a
    Vandermonde-like system on clustered roots of unity; cyclic-mds's weights then exceed
    gc-cr's (whose local search bounds its B) by orders of magnitude.  The decoding is still
    exact in float64."""
    mds = gradcode.make_code("cyclic-mds", n=n, s=s)
    cr = gradcode.make_code("gc-cr", n=n, s=s)
    block = [np.arange(s)]
    assert worst_weight(mds, block) > 100 * worst_weight(cr, block)
    assert mds.decode(np.arange(s, n)).exact


@pytest.mark.parametrize("n,s", [(256, 15), (128, 9), (257, 8)])
def test_cyclic_mds_refuses_what_float64_cannot_decode(n, s):
    """Beyond that, ``s`` consecutive stragglers leave ``w B`` visibly off ``1`` in float64
    (n = 256, s = 15: weights ~1e11, off by ~0.7): refused, naming ``s``; gc-cr builds."""
    with pytest.raises(ValueError, match=r"^s: cyclic-mds with .* numerically unstable"):
        gradcode.make_code("cyclic-mds", n=n, s=s)
    cr = gradcode.make_code("gc-cr", n=n, s=s)
    assert cr.decode(np.arange(s, n)).exact


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 30), st.data())
def test_cyclic_mds_property_any_s_stragglers(n, data):
    s = data.draw(st.sampled_from([s for s in range(n) if s == 0 or (n + s) % 2]))
    code = gradcode.make_code("cyclic-mds", n=n, s=s)
    missing = data.draw(st.sets(st.integers(0, n - 1), max_size=s))
    received = sorted(set(range(n)) - missing)
    d = code.decode(received)
    assert d.exact and np.all(d.weights[list(missing)] == 0)
    frac, err, exact = code.recovery_many(np.isin(np.arange(n), received)[None])
    assert exact[0] and frac[0] == 1.0


# ------------------------------------------------------------------------------- expander
@pytest.mark.parametrize("n,d,seed", [(8, 3, 0), (10, 4, 2), (9, 2, 1), (50, 5, 0), (64, 6, 3),
                                      (101, 8, 7), (12, 11, 0)])
def test_expander_graph_is_simple_d_regular(n, d, seed):
    code = gradcode.make_code("expander", n=n, d=d, seed=seed)
    A = code.B * d
    assert set(np.unique(A)) <= {0.0, 1.0} and not np.diag(A).any()
    np.testing.assert_array_equal(A, A.T)
    np.testing.assert_array_equal(A.sum(axis=0), d)
    np.testing.assert_allclose(code.load, d / n)
    lam = code.spectral_lambda
    assert 0 <= lam <= d
    eig = np.linalg.eigvalsh(A)
    assert np.isclose(eig[-1], d) and np.isclose(lam, max(-eig[0], eig[-2]))


@pytest.mark.parametrize("n,d,seed", [(50, 5, 0), (64, 6, 3), (101, 8, 7), (200, 10, 1)])
def test_expander_error_bound_on_random_straggler_sets(n, d, seed):
    """``||w B - 1||^2 <= (lambda / d)^2 n s / (n - s)`` for the fixed scaling, on 30 random
    straggler sets of each size; least squares never worse; random regular graphs expand."""
    code = gradcode.make_code("expander", n=n, d=d, seed=seed)
    assert code.spectral_lambda < d                      # connected, not bipartite: a gap
    rng = np.random.default_rng(seed)
    for s in (1, n // 10, n // 4, n // 2):
        bound = code.error_bound(s)
        for _ in range(30):
            received = np.sort(rng.choice(n, n - s, replace=False))
            own = code.decode(received)
            assert own.error <= bound * (1 + 1e-9) + 1e-12
            assert code.decode(received, method="optimal").error <= own.error + 1e-9
            np.testing.assert_allclose(own.weights[received], n / (n - s))


def test_expander_bound_grows_with_stragglers_and_shrinks_with_degree():
    small = gradcode.make_code("expander", n=100, d=4, seed=0)
    large = gradcode.make_code("expander", n=100, d=16, seed=0)
    assert small.error_bound(10) < small.error_bound(30) < small.error_bound(60)
    assert large.error_bound(30) < small.error_bound(30)
    assert large.spectral_lambda / 16 < small.spectral_lambda / 4


def test_expander_seed_draws_the_graph():
    a, b = (gradcode.make_code("expander", n=20, d=4, seed=k).B for k in (0, 1))
    assert not np.array_equal(a, b)
    np.testing.assert_array_equal(a, gradcode.make_code("expander", n=20, d=4, seed=0).B)


@pytest.mark.parametrize("params,word", [
    (dict(n=5, d=3), "d"), (dict(n=5, d=5), "d"), (dict(n=5, d=0), "d"), (dict(n=1, d=1), "n"),
    (dict(n=6, d=2, seed=-1), "seed"), (dict(n=6, d=2.5), "d"), (dict(n=6), "d"),
])
def test_expander_invalid_parameters_name_the_parameter(params, word):
    with pytest.raises(ValueError, match=rf"^{word}\b"):
        gradcode.make_code("expander", **params)


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 40), st.data())
def test_expander_property_bound_holds(n, data):
    d = data.draw(st.sampled_from([d for d in range(1, n) if (n * d) % 2 == 0]))
    code = gradcode.make_code("expander", n=n, d=d, seed=data.draw(st.integers(0, 20)))
    missing = data.draw(st.sets(st.integers(0, n - 1), max_size=n - 1))
    received = sorted(set(range(n)) - missing)
    assert code.decode(received).error <= code.error_bound(len(missing)) * (1 + 1e-9) + 1e-12
