"""One contract suite over every code: the decode contract of ``Code.decode``.

Exhaustive over all received sets for the small codes of ``_codes.SMALL_CODES``; hypothesis over
random parameters and received sets beyond.
"""

from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, strategies as st

import gradcode
from gradcode.codes._base import EXACT_RTOL

from _codes import SMALL_CODES, available

CODES = available(SMALL_CODES)


def all_subsets(n):
    for r in range(n + 1):
        yield from combinations(range(n), r)


def independence_numbers(adj: np.ndarray) -> dict[int, int]:
    """alpha(G[S]) for every vertex subset S (bitmask), by the recursion over the lowest vertex."""
    n = adj.shape[0]
    nbr = [sum(1 << j for j in range(n) if adj[i, j]) for i in range(n)]
    alpha = [0] * (1 << n)
    for S in range(1, 1 << n):
        v = (S & -S).bit_length() - 1
        alpha[S] = max(alpha[S & ~(1 << v)], 1 + alpha[S & ~(1 << v) & ~nbr[v]])
    return alpha


def check_decoding(code, received, d):
    B = code.B
    n = code.n_workers
    outside = np.setdiff1d(np.arange(n), received)
    assert d.weights.shape == (n,)
    assert np.all(d.weights[outside] == 0), "weights outside received"
    np.testing.assert_allclose(d.recovered, d.weights @ B, atol=1e-9)
    scale = max(1.0, float(np.abs(d.weights) @ np.abs(B).max(axis=1)))
    assert d.exact == bool(np.all(np.abs(d.weights @ B - 1) <= EXACT_RTOL * scale))


@pytest.mark.parametrize("cid,code", CODES, ids=[c[0] for c in CODES])
def test_contract_exhaustive(cid, code):
    n = code.n_workers
    assert n <= 10
    rng = np.random.default_rng(0)
    B = code.B
    assert B.shape == (code.n_workers, code.n_partitions)
    assert np.isclose(code.partition_sizes.sum(), 1.0)
    rebuilt = gradcode.make_code(**code.describe())
    np.testing.assert_array_equal(rebuilt.B, B)
    sum_code = code.name.startswith("isgc") or code.name == "ignore"
    if sum_code:
        alpha = independence_numbers(code.conflict_graph.toarray() != 0)
    for received in all_subsets(n):
        R = np.array(received, dtype=int)
        d = code.decode(received, rng=rng)
        check_decoding(code, R, d)
        o = code.decode(received, method="optimal")
        check_decoding(code, R, o)
        assert o.error <= d.error + 1e-7, "optimal decoder worse than the scheme's own"
        if code.s is not None and n - len(received) <= code.s:
            senders = getattr(code, "sender", None)
            if senders is None:
                assert d.exact, f"{code!r} not exact with {n - len(received)} <= s missing"
        if sum_code:
            assert set(np.unique(d.weights)) <= {0.0, 1.0}
            assert set(np.unique(np.round(d.recovered, 12))) <= {0.0, 1.0}, "partition counted twice"
            mask = sum(1 << i for i in received)
            assert int(d.weights.sum()) == alpha[mask], "not a maximum independent set"
        if not received:
            assert not d.weights.any()


@st.composite
def code_and_received(draw):
    kind = draw(st.sampled_from(["gc-fr", "gc-cr", "isgc-fr", "isgc-cr", "isgc-hr", "ignore"]))
    if kind in ("gc-fr", "isgc-fr"):
        c = draw(st.integers(1, 6))
        n = c * draw(st.integers(1, 8))
        code = gradcode.make_code(kind, n=n, **({"s": c - 1} if kind == "gc-fr" else {"c": c}))
    elif kind == "gc-cr":
        n = draw(st.integers(2, 40))
        code = gradcode.make_code(kind, n=n, s=draw(st.integers(0, min(n - 1, 8))),
                                  seed=draw(st.integers(0, 5)))
    elif kind == "isgc-cr":
        n = draw(st.integers(1, 60))
        code = gradcode.make_code(kind, n=n, c=draw(st.integers(1, n)))
    elif kind == "isgc-hr":
        c1 = draw(st.integers(1, 4))
        c2 = draw(st.integers(0, 4))
        c = c1 + c2
        n0 = draw(st.integers(c, min(c + c1, 2 * c - 1)))
        groups = draw(st.integers(1, 6))
        code = gradcode.make_code(kind, n=n0 * groups, c1=c1, c2=c2, groups=groups)
    else:
        code = gradcode.make_code(kind, n=draw(st.integers(1, 30)))
    n = code.n_workers
    missing = draw(st.sets(st.integers(0, n - 1), max_size=n))
    received = sorted(set(range(n)) - missing)
    return code, received


@given(code_and_received(), st.integers(0, 2**32 - 1))
def test_contract_random(cr, seed):
    code, received = cr
    rng = np.random.default_rng(seed)
    d = code.decode(received, rng=rng)
    check_decoding(code, np.array(received, dtype=int), d)
    o = code.decode(received, method="optimal")
    assert o.error <= d.error + 1e-6
    if code.s is not None and code.n_workers - len(received) <= code.s:
        assert d.exact
    if code.name.startswith("isgc") or code.name == "ignore":
        assert set(np.unique(np.round(d.recovered, 12))) <= {0.0, 1.0}
        best, proven = gradcode.codes.max_independent_set(code.conflict_graph,
                                                          np.array(received, int), rng)
        if proven:
            assert d.weights.sum() == len(best)


def test_empty_received_gives_zero_weights():
    for _, code in CODES:
        d = code.decode([])
        assert not d.weights.any() and not d.exact


@pytest.mark.parametrize("bad,msg", [([7], "received"), ([-1], "received"), ([0.5], "received")])
def test_bad_received(bad, msg):
    code = gradcode.make_code("gc-cr", n=5, s=1)
    with pytest.raises(ValueError, match=msg):
        code.decode(bad)


def test_bad_method_and_rng():
    code = gradcode.make_code("isgc-cr", n=5, c=2)
    with pytest.raises(ValueError, match="method"):
        code.decode([0], method="magic")
    with pytest.raises(ValueError, match="rng"):
        code.decode([0], rng=3)


@pytest.mark.parametrize("name,params,word", [
    ("gc-fr", dict(n=6, s=3), "s"), ("gc-cr", dict(n=4, s=4), "s"), ("isgc-fr", dict(n=6, c=4), "c"),
    ("isgc-cr", dict(n=3, c=0), "c"), ("isgc-hr", dict(n=12, c1=1, c2=3, groups=2), "groups"),
    ("isgc-hr", dict(n=8, c1=2, c2=2, groups=3), "groups"), ("uncoded", dict(n=0), "n"),
    ("gc-cr", dict(n=5, s=1.5), "s"), ("nope", dict(n=3), "name"), ("gc-cr", dict(n=5), "s"),
    ("gc-cr", dict(n=5, s=1, t=2), "t"),
])
def test_invalid_parameters_name_the_parameter(name, params, word):
    with pytest.raises(ValueError, match=rf"^{word}\b"):
        gradcode.make_code(name, **params)


def test_decode_is_reproducible_with_rng():
    code = gradcode.make_code("isgc-cr", n=12, c=3)
    R = [0, 1, 2, 4, 5, 7, 8, 10]
    a = code.decode(R, rng=np.random.default_rng(5)).weights
    b = code.decode(R, rng=np.random.default_rng(5)).weights
    np.testing.assert_array_equal(a, b)
