"""gc-partial: Tandon's partial-straggler scheme (paper 1, "Partial Stragglers")."""

from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gradcode import make_code
from gradcode.analysis import is_robust, normalized_load

SETTINGS = settings(max_examples=25, deadline=None)


@st.composite
def partial_params(draw, max_n=6):
    n = draw(st.integers(1, max_n))
    s = draw(st.integers(0, n - 1))
    alpha = draw(st.floats(1.0, 10.0, allow_nan=False))
    return n, s, alpha


def test_paper_figure_n3_s1_alpha2():
    """Paper 1's figure: n = 3, s = 1, alpha = 2 -> each worker gets 4/9 of the data."""
    code = make_code("gc-partial", n=3, s=1, alpha=2)
    assert code.naive_fraction == pytest.approx(2 / 3)
    assert code.n_workers == code.n_partitions == 6
    assert code.sender.tolist() == [0, 1, 2, 0, 1, 2]
    np.testing.assert_allclose(code.partition_sizes, [2 / 9] * 3 + [1 / 9] * 3)
    np.testing.assert_allclose(normalized_load(code), [4 / 9] * 3)
    np.testing.assert_allclose(code.machine_load, [4 / 9] * 3)
    # naive messages are uncoded single partitions; coded messages hold s + 1 = 2 partitions
    assert [p.tolist() for p in code.placement[:3]] == [[0], [1], [2]]
    assert all(p.size == 2 and p.min() >= 3 for p in code.placement[3:])


@SETTINGS
@given(partial_params())
def test_load_balances_the_two_speeds(params):
    """x = (s+1)/(alpha+s): a straggler's naive part takes as long as a fast naive + coded part."""
    n, s, alpha = params
    code = make_code("gc-partial", n=n, s=s, alpha=alpha)
    x = code.naive_fraction
    assert alpha * x / n == pytest.approx(x / n + (s + 1) * (1 - x) / n)
    assert code.partition_sizes.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(normalized_load(code), (x + (s + 1) * (1 - x)) / n)


@SETTINGS
@given(partial_params())
def test_exact_with_all_naive_and_n_minus_s_coded(params):
    n, s, alpha = params
    code = make_code("gc-partial", n=n, s=s, alpha=alpha)
    naive = list(range(n))
    for k in range(n - s, n + 1):
        for coded in combinations(range(n, 2 * n), k):
            received = naive + list(coded)
            dec = code.decode(received)
            assert dec.exact, received
            assert dec.method == "gc-partial"
            np.testing.assert_allclose(dec.recovered, 1.0, atol=1e-8)
            outside = np.setdiff1d(np.arange(2 * n), received)
            assert np.all(dec.weights[outside] == 0)


@SETTINGS
@given(partial_params(), st.data())
def test_missing_naive_message_is_not_exact(params, data):
    n, s, alpha = params
    code = make_code("gc-partial", n=n, s=s, alpha=alpha)
    lost = data.draw(st.integers(0, n - 1))
    received = [i for i in range(2 * n) if i != lost]      # every coded message arrived
    dec = code.decode(received)
    assert not dec.exact
    assert dec.weights[lost] == 0
    assert dec.recovered[lost] == 0                          # only message `lost` holds it
    np.testing.assert_allclose(np.delete(dec.recovered, lost), 1.0, atol=1e-8)
    # the block decoder is optimal: same recovery as least squares over all messages
    np.testing.assert_allclose(dec.recovered, code.decode(received, method="optimal").recovered,
                               atol=1e-8)


@SETTINGS
@given(partial_params(), st.data())
def test_too_many_coded_missing_falls_back_to_least_squares(params, data):
    n, s, alpha = params
    if s == n - 1:
        return                                               # cannot miss more than n - 1
    code = make_code("gc-partial", n=n, s=s, alpha=alpha)
    k = data.draw(st.integers(0, n - s - 1))                 # fewer than n - s coded messages
    coded = data.draw(st.permutations(range(n, 2 * n)))[:k]
    received = list(range(n)) + list(coded)
    dec = code.decode(received)
    assert not dec.exact
    assert np.all(dec.weights[np.setdiff1d(np.arange(2 * n), received)] == 0)
    ref = code.decode(received, method="optimal")
    np.testing.assert_allclose(dec.weights, ref.weights, atol=1e-8)


def test_coded_block_is_gc_cr_and_robust():
    n, s = 7, 2
    code = make_code("gc-partial", n=n, s=s, alpha=1.5)
    np.testing.assert_allclose(code.B[n:, n:], make_code("gc-cr", n=n, s=s, seed=0).B)
    np.testing.assert_array_equal(code.B[:n, :n], np.eye(n))
    assert not code.B[:n, n:].any() and not code.B[n:, :n].any()
    assert is_robust(code.B[n:, n:], s=s)
    assert not is_robust(code)                               # a lost naive message is fatal


def test_empty_and_rng_contract():
    code = make_code("gc-partial", n=4, s=1, alpha=3.0)
    dec = code.decode([])
    assert not dec.exact and not dec.weights.any()
    assert code.decode(range(8), rng=np.random.default_rng(1)).exact
    with pytest.raises(ValueError, match="^rng:"):
        code.decode(range(8), rng=1)
    with pytest.raises(ValueError, match="^received:"):
        code.decode([8])


@SETTINGS
@given(partial_params())
def test_make_code_round_trip(params):
    n, s, alpha = params
    code = make_code("gc-partial", n=n, s=s, alpha=alpha)
    again = make_code("gc-partial", **code.params)
    assert again.params == code.params == {"n": n, "s": s, "alpha": alpha}
    np.testing.assert_array_equal(again.B, code.B)
    np.testing.assert_array_equal(again.sender, code.sender)
    np.testing.assert_array_equal(make_code(**code.describe()).B, code.B)
    assert again.describe() == {"name": "gc-partial", **code.params}


@pytest.mark.parametrize("params, name", [
    ({"n": 3, "s": 1, "alpha": 0.5}, "alpha"),
    ({"n": 3, "s": 1, "alpha": float("nan")}, "alpha"),
    ({"n": 3, "s": 1, "alpha": float("inf")}, "alpha"),
    ({"n": 3, "s": 1, "alpha": "2"}, "alpha"),
    ({"n": 3, "s": 1, "alpha": True}, "alpha"),
    ({"n": 3, "s": 3, "alpha": 2.0}, "s"),
    ({"n": 3, "s": -1, "alpha": 2.0}, "s"),
    ({"n": 0, "s": 0, "alpha": 2.0}, "n"),
])
def test_validation(params, name):
    with pytest.raises(ValueError, match=f"^{name}:") as err:
        make_code("gc-partial", **params)
    assert repr(params[name]) in str(err.value) or str(params[name]) in str(err.value)
