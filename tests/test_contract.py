"""One contract suite over every scheme.

The scheme protocol of every registered name (``_codes.ALL_SCHEMES``, checked against the
registry): ``n_workers``, ``sender``, ``n_machines``, ``partition_sizes``, ``load``, ``T``,
``planner``, immutability and the ``make_code(**describe())`` round trip.  The decode contract of
``Code.decode``: exhaustive over all received sets for the small codes of ``_codes.SMALL_CODES``;
hypothesis over random parameters and received sets beyond.
"""

from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, strategies as st

import gradcode
from gradcode.analysis import independence_numbers
from gradcode.codes import EXACT_RTOL, Code
from gradcode.registry import CODES as REGISTERED

from gradcode.protocol import Planner, Scheme, WaitOut

from _codes import ALL_SCHEMES, SMALL_CODES, available

CODES = available(SMALL_CODES)
SCHEMES = available(ALL_SCHEMES)


def all_subsets(n):
    for r in range(n + 1):
        yield from combinations(range(n), r)


def check_decoding(code, received, d):
    B = code.B
    n = code.n_workers
    outside = np.setdiff1d(np.arange(n), received)
    if code.slices > 1:
        return check_sliced_decoding(code, outside, d)
    assert d.weights.shape == (n,)
    assert np.all(d.weights[outside] == 0), "weights outside received"
    np.testing.assert_allclose(d.recovered, d.weights @ B, atol=1e-9)
    scale = max(1.0, float(np.abs(d.weights) @ np.abs(B).max(axis=1)))
    assert d.exact == bool(np.all(np.abs(d.weights @ B - 1) <= EXACT_RTOL * scale))


def check_sliced_decoding(code, outside, d):
    """A code sending ``m = slices`` coded slices: ``(n, m)`` weights, ``recovered`` the diagonal
    blocks of ``W^T E`` averaged over slices, ``exact`` iff ``W^T E = I`` per partition."""
    n, m = code.n_workers, code.slices
    assert d.weights.shape == (n, m) and code.encoding.shape == (n, code.n_partitions, m)
    assert np.all(d.weights[outside] == 0), "weights outside received"
    M = np.einsum("iu,ijv->ujv", d.weights, code.encoding)         # (m, k, m)
    np.testing.assert_allclose(d.recovered, np.einsum("uju->j", M) / m, atol=1e-9)
    res = M - np.eye(m)[:, None, :]
    scale = max(1.0, float((np.abs(d.weights).T @ np.abs(code.encoding).reshape(n, -1).max(1)).max()))
    assert d.exact == bool(np.all(np.abs(res) <= EXACT_RTOL * scale))
    assert d.error == pytest.approx(float(np.mean(np.sum(res ** 2, axis=(1, 2)))), abs=1e-9)
    np.testing.assert_array_equal(code.B != 0, np.abs(code.encoding).sum(axis=2) != 0)


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
        for method in code.methods:                     # a paper's decoder kept by name
            m = code.decode(received, method=method, rng=rng)
            check_decoding(code, R, m)
            assert m.method == method
            assert o.error <= m.error + 1e-7, f"optimal decoder worse than {method}"
        if code.s is not None and n - len(received) <= code.s:
            if code.n_machines == code.n_workers:    # gc-partial's s counts machines
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


@given(st.integers(1, 9), st.integers(1, 9), st.integers(0, 2**32 - 1), st.booleans())
def test_optimal_weights_is_least_squares_on_scipys_rows(n, k, seed, duplicates):
    """``optimal_weights`` reads the received rows of ``B`` off its CSR arrays: bit for bit the
    least squares on SciPy's ``B[R].toarray()``, repeated rows and a ``B`` holding duplicate
    entries (not canonical: SciPy's rows) included."""
    import scipy.sparse as sp
    rng = np.random.default_rng(seed)
    dense = np.where(rng.random((n, k)) < 0.5, rng.standard_normal((n, k)), 0.0)
    B = sp.csr_array(dense)
    if duplicates:
        i, j = np.nonzero(dense)
        B = sp.csr_array((np.r_[dense[i, j] / 2, dense[i, j] / 2], (np.r_[i, i], np.r_[j, j])),
                         shape=(n, k))
        B.has_canonical_format = False
    R = np.sort(rng.integers(0, n, rng.integers(1, n + 1)))
    want, *_ = np.linalg.lstsq(B[R].toarray().T, np.ones(k), rcond=None)
    got = gradcode.codes.optimal_weights(B, R)
    expected = np.zeros(n)
    expected[R] = want
    assert np.array_equal(got, expected)


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


# ----------------------------------------------------------------------------- scheme protocol
def test_cases_cover_the_registry():
    """Every registered name has a case here: a new scheme fails until it is added to
    ``_codes.ALL_SCHEMES`` (and so runs through this suite)."""
    covered = {name for name, _ in ALL_SCHEMES}
    assert covered == set(REGISTERED), (
        f"registered without a contract case: {sorted(set(REGISTERED) - covered)}; "
        f"cases of unregistered names: {sorted(covered - set(REGISTERED))}")
    assert {c.name for _, c in SCHEMES} == set(REGISTERED)


def _public_arrays(x):
    """Every public ndarray a scheme holds (attributes and the arrays of its protocol)."""
    for key in ("sender", "partition_sizes", "load", "placement", "B"):
        getattr(x, key, None)                      # compute the cached ones
    for key, v in vars(x).items():
        if key.startswith("_"):
            continue
        for a in (v if isinstance(v, tuple) else (v,)):
            if isinstance(a, np.ndarray):
                yield key, a


@pytest.mark.parametrize("cid,x", SCHEMES, ids=[c[0] for c in SCHEMES])
def test_protocol(cid, x):
    n = x.n_workers
    assert isinstance(n, int) and n >= 1
    assert x.sender.shape == (n,) and np.issubdtype(x.sender.dtype, np.integer)
    assert x.n_machines == int(x.sender.max()) + 1
    assert set(np.unique(x.sender)) == set(range(x.n_machines))      # every machine sends
    if x.name != "gc-partial":
        np.testing.assert_array_equal(x.sender, np.arange(n))       # one message per worker
    else:
        assert x.n_machines < n
    assert np.isclose(np.sum(x.partition_sizes), 1.0) and np.all(x.partition_sizes > 0)
    assert isinstance(x, Scheme)                                       # gradcode.protocol
    assert x.load.shape == (n,) and not x.load.flags.writeable         # per message, always
    assert np.all((0 < x.load) & (x.load <= 1))
    assert isinstance(x.T, int) and x.T >= 0
    assert isinstance(x.slices, int) and x.slices >= 1                 # 1: the whole gradient
    assert all(isinstance(r, WaitOut) for r in x.waitout_rules)
    assert x.examples and all(gradcode.make_code(x.name, **p) for p in x.examples)
    if isinstance(x, Code):
        assert x.T == 0 and x.B.shape == (n, x.n_partitions)
        assert x.machine_load.shape == (x.n_machines,)
        assert np.isclose(x.machine_load.sum(), np.asarray(x.load).sum())
    planner = x.planner(2)                        # tasks per worker in round 0
    assert isinstance(planner, Planner) and len(planner.assign(0)) == n
    assert (planner.rule is None) == (not x.waitout_rules)
    for rule in x.waitout_rules:                  # a rule is a value; its name is accepted too
        assert x.planner(2, rule).rule is rule is x.planner(2, str(rule)).rule
    if not x.waitout_rules:
        with pytest.raises(ValueError, match="^waitout"):
            x.planner(2, "deadline")                  # no wait-out rule: every round stands alone


@pytest.mark.parametrize("cid,x", SCHEMES, ids=[c[0] for c in SCHEMES])
def test_describe_round_trip(cid, x):
    d = x.describe()
    assert d["name"] == x.name and set(d) - {"name"} <= set(x.params)
    y = gradcode.make_code(**d)
    assert type(y) is type(x) and y.describe() == d
    np.testing.assert_array_equal(y.partition_sizes, x.partition_sizes)
    np.testing.assert_array_equal(y.load, x.load)
    if isinstance(x, Code):
        np.testing.assert_array_equal(y.B, x.B)
        assert y.s == x.s
    else:
        assert y == x and y.T == x.T and y.params == x.params


@pytest.mark.parametrize("cid,x", SCHEMES, ids=[c[0] for c in SCHEMES])
def test_immutable(cid, x):
    before = x.describe()
    for key in ("s", "T", "n_workers", "sender", "load", "partition_sizes", "name", "anything"):
        with pytest.raises(AttributeError):
            setattr(x, key, 3)
    with pytest.raises(AttributeError):
        del x.T
    for key, a in _public_arrays(x):
        assert not a.flags.writeable, f"{key} is writeable"
    if isinstance(x, Code):
        assert not x.B_sparse.data.flags.writeable
    params = x.params                              # a copy: changing it changes nothing
    for key, v in params.items():
        if isinstance(v, list):
            v.append(7)
        params[key] = None
    d = x.describe()
    d["name"] = "other"
    assert x.describe() == before and gradcode.make_code(**before).describe() == before


def test_describe_params_of_sequential_schemes_are_the_constructors():
    """``params`` holds derived values (SR-SGC's ``s``); ``describe()`` only what make_code takes;
    the paper's burst length ``B`` is a parameter, and the attribute ``burst``."""
    x = gradcode.make_code("sr-sgc", n=6, B=2, W=3, lam=2)
    assert x.params == {"n": 6, "B": 2, "W": 3, "lam": 2, "s": 1, "seed": 0}
    assert x.describe() == {"name": "sr-sgc", "n": 6, "B": 2, "W": 3, "lam": 2, "seed": 0}
    assert x.burst == 2 and not hasattr(x, "B")


def test_from_matrix_is_registered():
    B = [[1, 1, 0], [0, 1, 1], [1, 0, 1]]
    code = gradcode.from_matrix(B, s=0, partition_sizes=[0.5, 0.25, 0.25])
    assert code.describe() == {"name": "matrix", "B": [[1.0, 1.0, 0.0], [0.0, 1.0, 1.0],
                                                       [1.0, 0.0, 1.0]],
                               "s": 0, "partition_sizes": [0.5, 0.25, 0.25]}
    again = gradcode.make_code("matrix", B=np.array(B), s=0, partition_sizes=[0.5, 0.25, 0.25])
    assert again.describe() == code.describe()
    np.testing.assert_array_equal(again.load, [0.75, 0.5, 0.75])
    assert "partition_sizes" not in gradcode.from_matrix(B).describe()     # uniform: left out


@pytest.mark.parametrize("B,s,bad", [
    ([[1, 1, 0], [0, 1, 1], [1, 0, 1]], 1, [0]),          # no two rows span the ones
    (gradcode.make_code("gc-cr", n=6, s=1).B, 2, None),     # built for 1, not 2
    (gradcode.make_code("gc-fr", n=6, s=2).B, 2, "ok"),
    (gradcode.make_code("gc-fr", n=6, s=1).B, 2, [0, 1]),   # a whole group of two missing
    (gradcode.make_code("gc-fr", n=60, s=1).B, 2, None),    # C(60, 2) sets: all checked
])
def test_from_matrix_checks_the_declared_s(B, s, bad):
    """A declared ``s`` is checked (issue 19): a wrong one made the fast simulator report every
    round exact while the real run decoded 67 % of them; the refusal names a straggler set."""
    if bad == "ok":
        assert gradcode.from_matrix(B, s=s).s == s
        return
    with pytest.raises(ValueError, match=r"^s: B does not tolerate .* without workers \[") as e:
        gradcode.from_matrix(B, s=s)
    if bad is not None:
        assert f"without workers {bad} " in str(e.value)


def test_decode_without_rng_is_reproducible():
    """``decode`` without ``rng`` breaks IS-GC's ties with a fixed stream: the README's example
    gives the same weights in every call and every process (issue 19)."""
    import subprocess
    import sys
    code = gradcode.make_code("isgc-cr", n=8, c=2)
    first = code.decode([0, 1, 2, 4, 5, 7]).weights
    assert all(np.array_equal(code.decode([0, 1, 2, 4, 5, 7]).weights, first) for _ in range(20))
    prog = ("import gradcode; print(gradcode.make_code('isgc-cr', n=8, c=2)"
            ".decode([0, 1, 2, 4, 5, 7]).weights.tolist())")
    runs = {subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True,
                           check=True).stdout for _ in range(3)}
    assert runs == {str(first.tolist()) + "\n"}


@pytest.mark.parametrize("params,word", [
    (dict(B=[1, 2]), "B"), (dict(B=[["a"]]), "B"), (dict(B=[[1, np.nan]]), "B"),
    (dict(B=[[1, 1]], s=1), "s"), (dict(B=[[1, 1]], partition_sizes=[1.0]), "partition_sizes"),
    (dict(B=[[1, 1]], partition_sizes=[0.7, 0.7]), "partition_sizes"),
    (dict(B=[[1, 1]], partition_sizes=[1.5, -0.5]), "partition_sizes"),
])
def test_matrix_invalid_parameters_name_the_parameter(params, word):
    with pytest.raises(ValueError, match=rf"^{word}\b"):
        gradcode.make_code("matrix", **params)


@pytest.mark.parametrize("cid,code", CODES, ids=[c[0] for c in CODES])
def test_recovery_many_is_decode_where_it_answers(cid, code):
    """The vectorised outcome (the simulator's fast path) equals ``decode``'s, row by row,
    wherever it has a closed form (NaN elsewhere: the decoder runs)."""
    n = code.n_workers
    got = np.array([[(m >> i) & 1 for i in range(n)] for m in range(1 << n)], bool)
    frac, err, exact = code.recovery_many(got)
    assert frac.shape == err.shape == exact.shape == (1 << n,)
    rng = np.random.default_rng(0)
    for row, f, e, x in zip(got, frac, err, exact):
        if np.isnan(f):
            assert np.isnan(e) and not x
            continue
        d = code.decode(np.flatnonzero(row), rng=rng)
        assert (d.exact, d.recovered_fraction) == (x, pytest.approx(f, abs=1e-12))
        assert d.error == pytest.approx(e, abs=1e-9)
        assert not x or f == 1.0
    with pytest.raises(ValueError, match="^got"):
        code.recovery_many(np.ones((2, n + 1), bool))


@pytest.mark.slow
def test_large_gc_cr_builds_with_a_bounded_search(monkeypatch):
    """gc-cr n = 3000, s = 100 took minutes to build (issue 19; now ~4 s here): the local search
    that shrinks max|B| is bounded by REFINE_FLOPS as well as REFINE_STEPS.  Counted, not timed:
    its systems solved, and the smaller codes keep every step (so the same B)."""
    from gradcode.codes import _auxiliary as aux
    calls = []
    columns = aux._columns
    monkeypatch.setattr(aux, "_columns", lambda C, S: calls.append(len(S)) or columns(C, S))
    code = gradcode.make_code("gc-cr", n=3000, s=100)
    steps = len(calls) - 1
    assert steps <= aux.REFINE_FLOPS / 101 ** 4 and sum(calls) <= 3000 + steps * 101
    assert code.s == 100 and np.isfinite(code.B_sparse.data).all()
    calls.clear()
    gradcode.make_code("gc-cr", n=256, s=15)
    assert len(calls) - 1 == aux.REFINE_STEPS
