"""Paper 2 (IS-GC) worked examples and theorems on small cases.

The paper's figures are not in the markdown; each example is checked as its text describes it
(worker W_i of the paper is our index i-1, partition D_j is our column j-1).
"""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import gradcode


def edges(G):
    G = G.tocoo()
    return {(int(a), int(b)) for a, b in zip(G.row, G.col) if a < b}


def test_fig1c_is_sgd_recovers_only_what_arrived():
    # Fig. 1(c): IS-SGD with s = 2 stragglers (W2, W4) recovers g1 + g3.
    d = gradcode.make_code("ignore", n=4).decode([0, 2])
    np.testing.assert_array_equal(d.recovered, [1, 0, 1, 0])


def test_fig1b_gc_example_rows_sum_to_the_gradient():
    # Fig. 1(b): (-g1 + g2) + (g3 + g4/3) + (2 g4/3 + 2 g1) = g1 + .. + g4 from W1, W3, W4.
    B = np.array([[-1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1 / 3], [2, 0, 0, 2 / 3]])
    d = gradcode.from_matrix(B).decode([0, 2, 3])
    np.testing.assert_allclose(d.weights, [1, 0, 1, 1])
    assert d.exact


def test_fig1d_isgc_full_gradient_from_two_workers():
    # Fig. 1(d): with IS-GC (c = 2), two available workers recover g1 + .. + g4.
    code = gradcode.make_code("isgc-cr", n=4, c=2)
    for received in ([0, 2], [1, 3]):
        d = code.decode(received)
        assert d.exact and set(np.flatnonzero(d.weights)) == set(received)


def test_fig2_placements():
    # Fig. 2(a) FR, n = 4, c = 2: W1, W2 hold D1, D2 and W3, W4 hold D3, D4.
    fr = gradcode.make_code("isgc-fr", n=4, c=2)
    assert [p.tolist() for p in fr.placement] == [[0, 1], [0, 1], [2, 3], [2, 3]]
    # Fig. 2(b) CR, n = 4: W_i holds D_i and D_{i+1 mod n}.
    cr = gradcode.make_code("isgc-cr", n=4, c=2)
    assert [sorted(p.tolist()) for p in cr.placement] == [[0, 1], [1, 2], [2, 3], [0, 3]]


def test_fig3_greedy_in_arrival_order_is_not_optimal():
    # Fig. 3: W1 arrives first, then W2 and W4; keeping W1 would block both, the decoder drops
    # it and adds W2 + W4 = g2 + g3 + g4 + g1.
    code = gradcode.make_code("isgc-cr", n=4, c=2)
    for seed in range(20):
        d = code.decode([0, 1, 3], rng=np.random.default_rng(seed))
        assert d.exact
        np.testing.assert_array_equal(d.weights, [0, 1, 0, 1])


def test_fig4_conflict_graphs():
    # Fig. 4: n = k = 4, c = 2; FR: W1-W2 and W3-W4; CR: the 4-cycle.
    assert edges(gradcode.make_code("isgc-fr", n=4, c=2).conflict_graph) == {(0, 1), (2, 3)}
    assert edges(gradcode.make_code("isgc-cr", n=4, c=2).conflict_graph) == {
        (0, 1), (1, 2), (2, 3), (0, 3)}


def test_fig4b_text_example_start_matters():
    # Sec. V-B: receiving W1, W2, W3 (n = 4, c = 2) the maximum set is {W1, W3}.
    code = gradcode.make_code("isgc-cr", n=4, c=2)
    for seed in range(20):
        d = code.decode([0, 1, 2], rng=np.random.default_rng(seed))
        np.testing.assert_array_equal(d.weights, [1, 0, 1, 0])


@pytest.mark.parametrize("n,c", [(n, c) for n in range(1, 13) for c in range(1, n + 1)])
def test_theorem1_cr_conflict_graph_is_circulant(n, c):
    expected = {(i, j) for i in range(n) for j in range(i + 1, n) if min(j - i, n - j + i) < c}
    assert edges(gradcode.make_code("isgc-cr", n=n, c=c).conflict_graph) == expected


@pytest.mark.parametrize("n,c", [(4, 2), (6, 2), (6, 3), (8, 2), (8, 4), (12, 3)])
def test_theorem4_edge_inclusions(n, c):
    chain = [edges(gradcode.make_code("isgc-fr", n=n, c=c).conflict_graph)]
    chain += [edges(gradcode.make_code("isgc-cr", n=n, c=cc).conflict_graph) for cc in range(c, n + 1)]
    for small, big in zip(chain, chain[1:]):
        assert small <= big


@pytest.mark.parametrize("n,c,groups", [(8, 3, 2), (12, 3, 3), (10, 3, 2), (12, 4, 2), (6, 2, 2)])
def test_theorem5_hr_with_c2_zero_has_the_fr_conflict_graph(n, c, groups):
    n0 = n // groups
    assert c <= n0 <= 2 * c - 1
    hr = gradcode.make_code("isgc-hr", n=n, c1=c, c2=0, groups=groups)
    fr = gradcode.make_code("isgc-fr", n=n, c=n0)
    assert edges(hr.conflict_graph) == edges(fr.conflict_graph)


@pytest.mark.parametrize("n,c,groups", [(8, 4, 2), (12, 4, 3), (15, 3, 5), (16, 4, 4)])
def test_theorem7_hr_spectrum_between_fr_and_cr(n, c, groups):
    # E_HR(n,c,0) ⊆ E_HR(n,c-1,1) ⊆ ... over the valid c1; with n0 = c the ends are FR and CR.
    n0 = n // groups
    chain = []
    for c1 in range(c, 0, -1):
        try:
            chain.append(edges(gradcode.make_code("isgc-hr", n=n, c1=c1, c2=c - c1,
                                                  groups=groups).conflict_graph))
        except ValueError:
            break
    assert len(chain) >= 2
    for small, big in zip(chain, chain[1:]):
        assert small <= big
    if n0 == c:
        assert chain[0] == edges(gradcode.make_code("isgc-fr", n=n, c=c).conflict_graph)
        assert chain[-1] <= edges(gradcode.make_code("isgc-cr", n=n, c=c).conflict_graph)


def test_hr_c_equals_n0_placements_coincide():
    # Sec. VI-B: when n0 = c, HR(n, c, 0) and HR(n, c-1, 1) place the same partitions.
    a = gradcode.make_code("isgc-hr", n=8, c1=4, c2=0, groups=2)
    b = gradcode.make_code("isgc-hr", n=8, c1=3, c2=1, groups=2)
    np.testing.assert_array_equal(a.B, b.B)


def test_hr_alg3_not_maximum_case_is_rejected_with_reason():
    with pytest.raises(ValueError, match="clique"):
        gradcode.make_code("isgc-hr", n=12, c1=1, c2=3, groups=2)


@pytest.mark.parametrize("name,params", [("isgc-fr", dict(n=6, c=3)), ("isgc-cr", dict(n=7, c=3)),
                                         ("isgc-hr", dict(n=8, c1=2, c2=2, groups=2))])
def test_every_partition_equally_likely(name, params):
    # Sec. IV / V-B: ties broken at random so each partition is equally likely in g-hat.
    code = gradcode.make_code(name, **params)
    rng = np.random.default_rng(1)
    trials = 3000
    counts = np.zeros(code.n_partitions)
    for _ in range(trials):
        counts += code.decode(range(code.n_workers), rng=rng).recovered
    p = counts / trials
    sd = np.sqrt(p.mean() * (1 - p.mean()) / trials)
    assert p.max() - p.min() < 8 * sd + 1e-12, p


def test_sec5_greedy_order_matters_alg2_still_maximum():
    # CR(n=7, c=2) with W3 missing: the maximum is floor(n/c) = 3 (Thm 11's bound, attained).
    code = gradcode.make_code("isgc-cr", n=7, c=2)
    d = code.decode([0, 1, 3, 4, 5, 6], rng=np.random.default_rng(0))
    assert d.weights.sum() == 3


def test_large_n_decoders_are_fast_and_valid():
    rng = np.random.default_rng(0)
    for code in (gradcode.make_code("isgc-cr", n=10_000, c=3),
                 gradcode.make_code("isgc-hr", n=10_000, c1=2, c2=1, groups=2_500),
                 gradcode.make_code("isgc-fr", n=10_000, c=4)):
        received = np.flatnonzero(rng.random(10_000) < 0.7)
        d = code.decode(received, rng=rng)
        assert set(np.unique(d.recovered)) <= {0.0, 1.0}
        assert np.all(d.weights[np.setdiff1d(np.arange(10_000), received)] == 0)


IS_GC_SMALL = [("isgc-cr", dict(n=n, c=c)) for n, c in
               [(1, 1), (5, 1), (6, 2), (7, 3), (8, 4), (9, 5), (10, 3), (10, 10)]] + [
    ("isgc-fr", dict(n=8, c=2)), ("isgc-fr", dict(n=9, c=3)),
    ("isgc-hr", dict(n=6, c1=1, c2=1, groups=3)), ("isgc-hr", dict(n=8, c1=1, c2=2, groups=2)),
    ("isgc-hr", dict(n=9, c1=2, c2=1, groups=3)), ("isgc-hr", dict(n=10, c1=2, c2=2, groups=2)),
    ("isgc-hr", dict(n=10, c1=1, c2=1, groups=5))]


@pytest.mark.parametrize("name,params", IS_GC_SMALL)
def test_vectorised_is_gc_recovery_exhaustive(name, params):
    """``recovery_many`` (the simulator's compiled IS-GC path) recovers ``c alpha(G[S])``
    partitions of the conflict graph for every received set S."""
    from gradcode.analysis import independence_numbers
    code = gradcode.make_code(name, **params)
    n, c = code.n_workers, code.c
    alpha = independence_numbers(code.conflict_graph.toarray() != 0)
    masks = np.arange(1 << n)
    got = (masks[:, None] >> np.arange(n)) & 1 == 1
    frac, err, exact = code.recovery_many(got)
    np.testing.assert_allclose(frac * n, alpha * c)
    np.testing.assert_allclose(err, n - alpha * c)
    np.testing.assert_array_equal(exact, alpha * c == n)


@given(name=st.sampled_from(["isgc-cr", "isgc-hr"]), n=st.integers(11, 300), data=st.data())
@settings(max_examples=60, deadline=None)
def test_vectorised_is_gc_recovery_matches_the_decoder(name, n, data):
    if name == "isgc-cr":
        code = gradcode.make_code(name, n=n, c=data.draw(st.integers(1, n)))
    else:                       # the accepted range: c <= n0 <= min(c + c1, 2c - 1), c1 >= 1
        valid = [(g, c1, c - c1) for g in range(1, n + 1) if n % g == 0
                 for c in range(2, n // g + 1) for c1 in range(1, c + 1)
                 if n // g <= min(c + c1, 2 * c - 1)]
        g, c1, c2 = data.draw(st.sampled_from(valid))
        code = gradcode.make_code(name, n=n, c1=c1, c2=c2, groups=g)
    seed = data.draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    got = rng.random((6, n)) < rng.random((6, 1))
    want = [code.decode(np.flatnonzero(g), rng=rng).recovered.sum() if g.any() else 0
            for g in got]
    np.testing.assert_allclose(code.recovery_many(got)[0] * n, want)
