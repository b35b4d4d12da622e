"""The ``decodable`` wait policy's count by the left null space of ``B`` (issue 34, point 1:
``Code.decodable_counts``, ``codes._span``) is the definition, decode by decode: the smallest
``k`` whose first ``k`` arrivals give ``code.decode(order[:k], rng=default_rng(0)).exact``,
``n`` if none.  Random codes of the six families it serves at small ``n`` against that
definition; ``n = 256`` spot checks against the per-round bisection it replaced
(``searched_counts``); the rounds the test cannot settle, settled by the decoder; and the
recovery of the received sets it proves exact (``recovery_many``) against the decoder."""

import numpy as np
import pytest
from hypothesis import assume, given, strategies as st

import gradcode
from gradcode.codes._span import MIN_ROUNDS, UNSURE, SpanTest, searched_counts, thread_count
from gradcode.engine import (arrival_times, message_layout, parse_wait, start_models,
                             streams)
from gradcode.stragglers import parse_compute, parse_delay


def brute_force(code, order):
    """The definition: the first ``k`` that decodes exactly, ``n`` if none."""
    for k in range(1, len(order) + 1):
        if code.decode(order[:k], rng=np.random.default_rng(0)).exact:
            return k
    return len(order)


@st.composite
def small_codes(draw):
    """A code of one of the six families, ``n <= 11`` (None where the parameters are refused)."""
    family = draw(st.sampled_from(["gc-cr", "heter", "heter-group", "gc-partial", "bgc",
                                   "cyclic-mds"]))
    if family in ("heter", "heter-group"):
        speeds = draw(st.lists(st.sampled_from([1.0, 2.0, 3.0]), min_size=3, max_size=7))
        params = dict(speeds=speeds, s=draw(st.integers(0, len(speeds) - 1)),
                      k=draw(st.integers(len(speeds), 12)), seed=draw(st.integers(0, 3)))
    elif family == "gc-partial":
        n = draw(st.integers(2, 6))
        params = dict(n=n, s=draw(st.integers(0, n - 1)), alpha=draw(st.floats(1.0, 3.0)))
    elif family == "bgc":
        n = draw(st.integers(3, 10))
        params = dict(n=n, d=draw(st.integers(1, n)), seed=draw(st.integers(0, 5)))
    else:
        n = draw(st.integers(3, 11))
        params = dict(n=n, s=draw(st.integers(0, n - 1)))
        if family == "gc-cr":
            params["seed"] = draw(st.integers(0, 3))
    try:
        return gradcode.make_code(family, **params)
    except ValueError:
        return None


@given(code=small_codes(), seed=st.integers(0, 2**31))
def test_counts_are_the_definition(code, seed):
    assume(code is not None)
    assert code.span_decodes
    rng = np.random.default_rng(seed)
    orders = np.array([rng.permutation(code.n_workers) for _ in range(6)])
    counts = code.decodable_counts(orders)
    assert counts.tolist() == [brute_force(code, o) for o in orders]
    assert searched_counts(code, orders).tolist() == counts.tolist()


@given(code=small_codes(), seed=st.integers(0, 2**31))
def test_recovery_of_proven_sets_is_the_decoders(code, seed):
    """Every received set: where ``recovery_many`` answers, it is ``decode``'s answer; the set
    at the count (what the policy stops at) is answered, exact."""
    assume(code is not None)
    rng = np.random.default_rng(seed)
    n = code.n_workers
    got = rng.random((8, n)) < rng.uniform(0.3, 1.0, (8, 1))
    order = rng.permutation(n)
    k = code.decodable_counts(order)
    got[0] = np.isin(np.arange(n), order[:k])
    frac, err, exact = code.recovery_many(got)
    for r in range(len(got)):
        if not np.isnan(frac[r]):
            d = code.decode(np.flatnonzero(got[r]), rng=np.random.default_rng(0))
            assert (frac[r], exact[r]) == pytest.approx((d.recovered_fraction, d.exact), abs=1e-12)
            assert err[r] == pytest.approx(d.error, abs=1e-12)
    if brute_force(code, order) < n or code.decode(order, rng=np.random.default_rng(0)).exact:
        assert exact[0] and frac[0] == 1.0


def test_unsure_rounds_are_settled_by_the_decoder(monkeypatch):
    """A step the test leaves unsure (here: the step after the count, in every round, three
    times) is settled by decoding its set; the round runs again with that step decided."""
    code = gradcode.make_code("heter", speeds=[1, 1, 1, 2, 2, 2], s=1, k=6)
    test = SpanTest(code._span_test.f, np.abs(code.B).max(axis=1), 1e-8, code.s)
    real = SpanTest._run

    def unsure(self, order, limit, s_free, force):
        m, status, at, err = real(self, order, limit, s_free, force)
        if force.shape[1] < 3:
            status[:] = np.where(m < limit, UNSURE, status)
            at[:] = np.where(m < limit, m + 1, at)
        return m, status, at, err
    monkeypatch.setattr(SpanTest, "_run", unsure)
    rng = np.random.default_rng(0)
    orders = np.array([rng.permutation(6) for _ in range(30)])
    assert test.counts(orders, code.decode).tolist() == [brute_force(code, o) for o in orders]


@pytest.mark.parametrize("name,params,rounds", [
    ("gc-cr", dict(n=256, s=15), 3),
    ("heter", dict(speeds=[1.0] * 128 + [2.0] * 128, s=15, k=256), 2),
    ("heter-group", dict(speeds=[1.0] * 128 + [2.0] * 128, s=15, k=256), 2)])
def test_n256_counts_are_the_bisections(name, params, rounds):
    code = gradcode.make_code(name, **params)
    arrivals = np.random.default_rng(1).exponential(1.5, (rounds, code.n_workers))
    arrivals *= 1 + code.load / code.load.mean()              # faster workers hold more
    orders = np.argsort(arrivals, axis=1, kind="stable")
    counts = parse_wait("decodable").reached_at(arrivals, code)      # engine._wait.first_decodable
    assert counts.tolist() == searched_counts(code, orders).tolist()


def test_searched_counts_are_the_first_decodable_prefix():
    """Bug: ``searched_counts`` bisected over ``k`` as if ``decode(order[:k]).exact`` were
    monotone; least squares' tolerance grows with its weights, so it is not (here: 242 decodes,
    243 and 244 do not, 245 does; the bisection answered 245).  The count is the first ``k``."""
    code = gradcode.make_code("cyclic-mds", n=256, s=5)
    rng = streams(7)
    start_models(code, parse_delay("exp:1.5"), parse_compute(None), rng["delay"])
    arrivals = arrival_times(message_layout(code), parse_delay("exp:1.5"), parse_compute(None),
                             rng["delay"], 20)
    order = np.argsort(arrivals[16], kind="stable")
    exact = [code.decode(order[:k], rng=np.random.default_rng(0)).exact for k in (241, 242, 243)]
    assert exact == [False, True, False]
    assert searched_counts(code, order[None]).tolist() == [242]       # brute force: 242
    assert code.decodable_counts(order) == 242


def test_counts_take_one_order_or_rows_of_them():
    code = gradcode.make_code("gc-cr", n=6, s=2)
    assert code.decodable_counts([5, 4, 3, 2, 1, 0]) == 4
    with pytest.raises(ValueError, match="order"):
        code.decodable_counts([[0, 1, 2]])
    never = gradcode.make_code("bgc", n=6, d=2, seed=1)       # nobody holds partitions 2, 4
    assert never.decodable_counts([[0, 1, 2, 3, 4, 5]]).tolist() == [6]


@given(seed=st.integers(0, 2**31), rank=st.integers(0, 5), ndep=st.integers(1, 6),
       split=st.integers(0, 6))
def test_kept_gram_is_the_certificates_gram(seed, rank, ndep, split):
    """``_gram`` (extended step by step within a round) is ``Y^T G^+ Y`` of the certificates
    ``y_d = e_{dj[d]} - gamma_d`` on the first ``dr[d]`` pivot workers, with its Cholesky
    factor; ``_pivot_solve``'s ``c`` meets the constraints and is at least the least one."""
    from gradcode.codes._span_kernels import _cho_solve, _gram, _min_norm, _pivot_solve, gram_store
    rng = np.random.default_rng(seed)
    n, t = 14, 6
    A = rng.standard_normal((n, n + 3))
    Gp = A @ A.T
    workers = rng.permutation(n)
    ind, dj = workers[:rank], workers[rank:rank + ndep]
    dr = np.sort(rng.integers(0, rank + 1, ndep))
    dgam = np.zeros((ndep, t))
    Y = np.zeros((n, ndep))
    for d in range(ndep):
        dgam[d, :dr[d]] = rng.standard_normal(dr[d])
        Y[dj[d], d] = 1.0
        Y[ind[:dr[d]], d] = -dgam[d, :dr[d]]
    gram = gram_store(8, t)
    assert _gram(Gp, ind, dj, dr, dgam, min(split, ndep), gram)     # part of a round first
    assert _gram(Gp, ind, dj, dr, dgam, ndep, gram)
    H = Y.T @ Gp @ Y
    assert np.allclose(gram[0][:ndep, :ndep], H, rtol=1e-10, atol=1e-10 * np.abs(H).max())
    b = rng.standard_normal(ndep)
    g = b.copy()
    _cho_solve(gram[1], ndep, g)
    assert np.allclose(H @ g, b, atol=1e-6 * max(1.0, np.abs(g).max() * np.abs(H).max()))
    if rank:                                    # Z_ind = L P: P unit at its pivot columns
        L = np.tril(rng.standard_normal((rank, rank))) + 3 * np.eye(rank)
        held = L.copy()                         # the kernels hold L's diagonal inverted
        np.fill_diagonal(held, 1.0 / np.diag(L))
        pc = rng.permutation(t)[:rank]
        P = np.triu(rng.uniform(-1, 1, (rank, t)) * (rng.random((rank, t)) < 0.5), 0)
        P[:, pc] = np.triu(rng.uniform(-1, 1, (rank, rank)), 1) + np.eye(rank)
        u = rng.standard_normal(rank)
        c, c_min = np.zeros(t), np.zeros(t)
        _pivot_solve(u, rank, held, pc, P, c, np.zeros(t))
        assert np.allclose(L @ P @ c, -u, atol=1e-8 * max(1.0, np.abs(c).max()))
        if rank < t and _min_norm(u, rank, t, held, P, c_min, np.zeros(t)):
            assert np.linalg.norm(c) >= np.linalg.norm(c_min) * (1 - 1e-9)


@pytest.mark.parametrize("name,params", [
    ("heter", dict(speeds=[1.0] * 32 + [2.0] * 32, s=7, k=64)),
    ("cyclic-mds", dict(n=64, s=5))])
def test_rounds_on_two_threads_are_the_rounds_on_one(name, params, monkeypatch):
    """A batch of rounds split over threads (``codes._span``: contiguous parts taken in turn,
    the kernel writing each part's rows) gives each round's ``m``, ``status``, ``at`` and error
    bit for bit as one thread does, and the same counts and recovery."""
    code = gradcode.make_code(name, **params)
    test, n, R = code._span_test, code.n_workers, 300
    arrivals = np.random.default_rng(5).exponential(1.5, (R, n))
    arrivals *= 1 + code.load / code.load.mean()
    orders = np.argsort(arrivals, axis=1, kind="stable")
    got = np.random.default_rng(6).random((R, n)) < 0.9
    out = {}
    for threads in (1, 2):
        monkeypatch.setenv("GRADCODE_THREADS", str(threads))
        assert thread_count(R) == threads
        run = test._run(orders, np.full(R, n - 1, np.int64), test.s_free,
                        np.zeros((R, 0), np.int64))
        out[threads] = (*run, test.counts(orders, code.decode), *test.exact(got))
    assert len(set(out[1][4].tolist())) > 1                 # rounds that differ
    for one, two in zip(out[1], out[2]):
        assert one.dtype == two.dtype and np.array_equal(one, two, equal_nan=one.dtype.kind == "f")


def test_threads_from_the_environment(monkeypatch):
    monkeypatch.setenv("GRADCODE_THREADS", "3")
    assert [thread_count(R) for R in (0, 1, 2 * MIN_ROUNDS, 10 * MIN_ROUNDS)] == [1, 1, 2, 3]
    monkeypatch.setenv("GRADCODE_THREADS", "two")
    with pytest.raises(ValueError, match="GRADCODE_THREADS: expected a positive integer"):
        thread_count(100)
