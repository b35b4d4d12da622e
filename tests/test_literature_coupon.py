"""``bcc`` (Li, Kalan, Avestimehr, Soltanolkotabi 2018), the ``covered`` wait policy, and
``stochastic-gc`` (Bitar, Wootters, El Rouayheb 2020).

The papers' texts were not available (see ``gradcode.codes._coupon`` and ``_stochastic``): the
codes follow the definitions of the issue, and what is checked are properties of those
definitions, derived in the modules' docstrings:

* bcc: the placement (one uniformly random batch per worker, seeded, a batch may be held by
  nobody), its decoder (error ``r`` per batch not covered, exact iff all covered), the closed
  form ``recovery_many``; the expected number of arrivals until every batch is covered, ``b H_b``
  (coupon collection; exactly ``E[T | T <= n]`` with ``n`` workers), by enumeration and by
  Monte Carlo with a CLT tolerance;
* ``covered``: its whole-round form against a brute-force search, against the loop, and equal
  to ``decodable`` for bcc;
* stochastic-gc: the balanced placement (``d`` per row and column), unbiasedness and the
  decoding error ``k p / (d (1 - p))`` exactly, enumerating every straggler pattern;
* hypothesis over random parameters, straggler sets and arrival times;
* the ledger rows of ``gradcode.experiments.literature.coupon`` / ``.stochastic``.
"""

from itertools import combinations, product

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import gradcode
from gradcode.codes._coupon import batches_covered, expected_waited, harmonic
from gradcode.codes._stochastic import expected_error, is_unbiased, pattern_moments
from gradcode.engine import WAIT_HELP, UntilCovered, parse_wait
from gradcode.engine._wait import covers, first_covered
from gradcode.sim import simulate

HYP = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def subsets(n):
    for r in range(n + 1):
        for R in combinations(range(n), r):
            yield np.array(R, int)


def uncovered_batches(code, R):
    return code.b - np.unique(code.batches[R]).size


# ====================================================================================== bcc
def test_bcc_placement():
    code = gradcode.make_code("bcc", n=12, r=3, seed=4)
    assert code.b == 4 and code.r == 3 and code.s is None and code.is_sum_code
    assert code.params == {"n": 12, "r": 3, "seed": 4}
    np.testing.assert_array_equal(code.batches, np.random.default_rng(4).integers(0, 4, 12))
    for i, q in enumerate(code.batches):
        assert code.placement[i].tolist() == list(range(3 * q, 3 * q + 3))
    np.testing.assert_allclose(code.load, 3 / 12)
    assert not code.batches.flags.writeable
    again = gradcode.make_code("bcc", n=12, r=3, seed=4)
    np.testing.assert_array_equal(again.B, code.B)
    assert not np.array_equal(gradcode.make_code("bcc", n=12, r=3, seed=5).batches, code.batches)


def test_bcc_batches_are_uniform():
    """Every worker's batch is uniform on ``0 .. b - 1``: frequencies within 5 sigma."""
    b, M = 5, 400
    draws = np.concatenate([gradcode.make_code("bcc", n=10, r=2, seed=s).batches for s in range(M)])
    freq = np.bincount(draws, minlength=b) / draws.size
    assert np.all(np.abs(freq - 1 / b) < 5 * np.sqrt((1 / b) * (1 - 1 / b) / draws.size))


@pytest.mark.parametrize("params,word", [
    ({"n": 0, "r": 1}, "n"), ({"n": 6, "r": 0}, "r"), ({"n": 6, "r": 4}, "r"),
    ({"n": 6, "r": 7}, "r"), ({"n": 6, "r": 2, "seed": -1}, "seed"), ({"n": 6, "r": 2.0}, "r"),
    ({"n": 6}, "r")])
def test_bcc_invalid_parameters_name_the_parameter(params, word):
    with pytest.raises(ValueError, match=f"^{word}:"):
        gradcode.make_code("bcc", **params)


@pytest.mark.parametrize("params", [{"n": 6, "r": 2}, {"n": 8, "r": 2, "seed": 3},
                                    {"n": 6, "r": 3, "seed": 1}, {"n": 4, "r": 1, "seed": 0},
                                    {"n": 8, "r": 4, "seed": 2}])
def test_bcc_decoder_exhaustive(params):
    """Error ``r`` per batch without a received worker, exact iff none; the optimum as well;
    the weights are 0/1, one per covered batch."""
    code = gradcode.make_code("bcc", **params)
    rng = np.random.default_rng(0)
    for R in subsets(code.n_workers):
        dead = uncovered_batches(code, R)
        d = code.decode(R, rng=rng)
        assert d.error == code.r * dead and d.exact == (dead == 0)
        assert d.recovered_fraction == pytest.approx((code.b - dead) / code.b, abs=1e-12)
        assert set(np.unique(d.weights)) <= {0.0, 1.0}
        assert np.count_nonzero(d.weights) == np.unique(code.batches[R]).size
        assert code.decode(R, method="optimal").error == pytest.approx(d.error, abs=1e-9)


def test_bcc_a_batch_held_by_nobody_is_kept():
    """With ``n = b`` a batch held by nobody is likely (``1 - b!/b^b``); it is not re-drawn and
    the code is never exact, even with every worker."""
    code = next(c for c in (gradcode.make_code("bcc", n=4, r=1, seed=s) for s in range(50))
                if not c.covers_all)
    np.testing.assert_array_equal(code.batches,
                                  np.random.default_rng(code.params["seed"]).integers(0, 4, 4))
    everyone = code.decode(range(4))
    assert not everyone.exact
    assert everyone.error == 4 - np.unique(code.batches).size
    assert UntilCovered().stop(np.array([0.1, 0.2, 0.3, 0.4]), code) == 0.4   # until the last


@HYP
@given(st.integers(1, 30), st.data())
def test_bcc_recovery_many_is_decode(n, data):
    r = data.draw(st.sampled_from([k for k in range(1, n + 1) if n % k == 0]))
    code = gradcode.make_code("bcc", n=n, r=r, seed=data.draw(st.integers(0, 1000)))
    got = np.array(data.draw(st.lists(st.lists(st.booleans(), min_size=n, max_size=n),
                                      min_size=1, max_size=6)), bool)
    frac, err, exact = code.recovery_many(got)
    for row, f, e, x in zip(got, frac, err, exact):
        d = code.decode(np.flatnonzero(row))
        assert (d.exact, d.error) == (x, pytest.approx(e, abs=1e-12))
        assert d.recovered_fraction == pytest.approx(f, abs=1e-12)
    np.testing.assert_array_equal(batches_covered(got, code.batches, code.b),
                                  [np.unique(code.batches[row]).size for row in got])


# ------------------------------------------------------------------------ coupon collection
def test_harmonic_and_b_h_b():
    assert harmonic(0) == 0.0 and harmonic(3) == pytest.approx(11 / 6, abs=1e-15)
    for b in (1, 2, 5, 8, 30):
        assert expected_waited(b) == pytest.approx(b * sum(1 / i for i in range(1, b + 1)),
                                                   rel=1e-14)


@pytest.mark.parametrize("b,n", [(1, 3), (2, 2), (2, 5), (3, 3), (3, 6), (4, 7)])
def test_expected_waited_with_n_workers_by_enumeration(b, n):
    """``E[T | T <= n]`` over every one of the ``b^n`` equally likely label sequences."""
    times = []
    for seq in product(range(b), repeat=n):
        seen = set()
        for m, q in enumerate(seq, 1):
            seen.add(q)
            if len(seen) == b:
                times.append(m)
                break
    assert expected_waited(b, n) == pytest.approx(np.mean(times), rel=1e-12)
    assert expected_waited(b, n) <= expected_waited(b) + 1e-12


def test_expected_waited_converges_to_b_h_b():
    """The gap ``b H_b - E[T | T <= n]`` is at most ``b (n + b)(1 - 1/b)^n`` (module docstring)."""
    for b, n in [(8, 100), (8, 200), (8, 400), (4, 60)]:
        gap = expected_waited(b) - expected_waited(b, n)
        assert -1e-9 <= gap <= b * (n + b) * (1 - 1 / b) ** n + 1e-9


def test_bcc_waits_b_h_b_arrivals_by_monte_carlo():
    """n = 400 workers, b = 8 batches (r = 50): over random codes and uniformly random arrival
    orders (iid exponential delays), the mean number of arrivals until every batch is covered
    (``first_covered``, the ``covered`` policy's count), over the codes covering every batch, is
    ``b H_b`` within 5 standard errors (the coupon collector's variance
    ``b^2 sum 1/i^2 - b H_b``); finite n moves it by under 1e-19 here."""
    n, r, M = 400, 50, 3000
    b = n // r
    rng = np.random.default_rng(2024)
    waited = []
    for seed in range(M):
        code = gradcode.make_code("bcc", n=n, r=r, seed=seed)
        if code.covers_all:
            waited.append(first_covered(rng.exponential(1.0, n), code))
    var = b**2 * sum(1 / i**2 for i in range(1, b + 1)) - expected_waited(b)
    se = np.sqrt(var / len(waited))
    assert len(waited) == M                        # P(a batch held by nobody) < 1e-22
    assert abs(np.mean(waited) - expected_waited(b)) < 5 * se
    assert abs(expected_waited(b) - expected_waited(b, n)) < 1e-12


# ================================================================================ covered
def test_parse_covered():
    assert parse_wait("covered") == UntilCovered() and "covered" in WAIT_HELP
    p = parse_wait("covered|fastest:3")
    assert p.needs_code and not p.needs_planner and p.policies == (UntilCovered(),
                                                                    parse_wait("fastest:3"))
    assert parse_wait("decodable|covered").needs_planner
    with pytest.raises(ValueError, match="^wait"):
        parse_wait("covered:2")
    with pytest.raises(ValueError, match="^wait: 'covered' needs the code"):
        UntilCovered().stop(np.array([0.1, 0.2]))


def brute_covered_count(code, arrivals):
    order = np.argsort(arrivals, kind="stable")
    for k in range(1, len(order) + 1):
        if covers(code, order[:k]):
            return k
    return len(order)


@st.composite
def code_and_arrivals(draw):
    name = draw(st.sampled_from(["bcc", "stochastic-gc", "gc-fr", "gc-cr", "bgc", "uncoded"]))
    n = draw(st.integers(1, 12))
    seed = draw(st.integers(0, 50))
    divisors = [k for k in range(1, n + 1) if n % k == 0]
    params = {"bcc": lambda: dict(r=draw(st.sampled_from(divisors)), seed=seed),
              "stochastic-gc": lambda: dict(d=draw(st.integers(1, n)), p=0.25, seed=seed),
              "gc-fr": lambda: dict(s=draw(st.sampled_from(divisors)) - 1),
              "gc-cr": lambda: dict(s=draw(st.integers(0, n - 1)), seed=seed),
              "bgc": lambda: dict(d=draw(st.integers(1, n)), seed=seed),
              "uncoded": lambda: {}}[name]()
    code = gradcode.make_code(name, n=n, **params)
    rounds = draw(st.integers(1, 4))
    times = st.floats(0, 3, allow_nan=False).map(lambda x: round(x, 1))     # ties too
    arr = np.array(draw(st.lists(st.lists(times, min_size=n, max_size=n), min_size=rounds,
                                 max_size=rounds)))
    return code, arr


@HYP
@given(code_and_arrivals())
def test_covered_whole_rounds_are_the_brute_force(case):
    code, arr = case
    count = first_covered(arr, code)
    want = [brute_covered_count(code, a) for a in arr]
    np.testing.assert_array_equal(count, want)
    stop, got = UntilCovered().stop_received(arr, code)
    for a, k, s, g in zip(arr, count, stop, got):
        assert s == np.sort(a)[k - 1]
        assert covers(code, np.flatnonzero(g)) or not covers(code, range(code.n_workers))
        assert first_covered(a, code) == k                 # one round as a 1-d array


@pytest.mark.parametrize("name,params", [("bcc", dict(n=12, r=3, seed=1)),
                                         ("bcc", dict(n=8, r=2, seed=3)),
                                         ("stochastic-gc", dict(n=9, d=2, p=0.3, seed=4)),
                                         ("frc-approx", dict(n=8, d=2))])
@pytest.mark.parametrize("wait", ["covered", "covered|fastest:5", "covered|deadline:1.0"])
def test_covered_fast_path_is_the_loop(name, params, wait):
    code = gradcode.make_code(name, **params)
    kw = dict(compute="load:0.5", seed=3)
    fast = simulate(code, "exp:1", wait, 40, **kw).records
    loop = simulate(code, "exp:1", wait, 40, fast=False, **kw).records
    for a, b in zip(fast, loop):
        assert (a.time_s, a.workers_arrived, a.exact) == (pytest.approx(b.time_s, rel=1e-12),
                                                          b.workers_arrived, b.exact)


def test_covered_is_decodable_for_bcc():
    """bcc decodes exactly iff its received workers cover every batch: the two policies stop
    at the same arrival in every round."""
    code = gradcode.make_code("bcc", n=20, r=4, seed=7)
    assert code.covers_all
    a = simulate(code, "shexp:0.2,1", "covered", 200, seed=1).records
    b = simulate(code, "shexp:0.2,1", "decodable", 200, seed=1).records
    assert [r.time_s for r in a] == [r.time_s for r in b]
    assert all(r.exact for r in a)


def test_covered_runs_a_sequential_scheme_under_any_rule():
    """The coverage condition asks no planner: ``waitout='never'`` is allowed (``decodable``
    is refused there)."""
    x = gradcode.make_code("gc-seq", n=5, s=2)
    res = simulate(x, "exp:1", "covered", 10, waitout="never")
    assert len(res.records) == 10
    with pytest.raises(ValueError, match="^wait"):
        simulate(x, "exp:1", "decodable", 10, waitout="never")


# ========================================================================== stochastic-gc
def test_stochastic_placement_is_balanced_and_seeded():
    for n, d, seed in [(7, 3, 0), (10, 1, 2), (6, 6, 1), (12, 4, 9)]:
        code = gradcode.make_code("stochastic-gc", n=n, d=d, p=0.1, seed=seed)
        assert code.is_sum_code and code.s is None
        np.testing.assert_array_equal(code.B.sum(axis=0), d)
        np.testing.assert_array_equal(code.B.sum(axis=1), d)
        np.testing.assert_allclose(code.load, d / n)
        again = gradcode.make_code("stochastic-gc", n=n, d=d, p=0.1, seed=seed)
        np.testing.assert_array_equal(again.B, code.B)
    assert not np.array_equal(gradcode.make_code("stochastic-gc", n=12, d=4, p=0.1, seed=1).B,
                              gradcode.make_code("stochastic-gc", n=12, d=4, p=0.1, seed=2).B)


@pytest.mark.parametrize("params,word", [
    ({"n": 0, "d": 1, "p": 0.1}, "n"), ({"n": 5, "d": 0, "p": 0.1}, "d"),
    ({"n": 5, "d": 6, "p": 0.1}, "d"), ({"n": 5, "d": 2, "p": 1.0}, "p"),
    ({"n": 5, "d": 2, "p": -0.1}, "p"), ({"n": 5, "d": 2, "p": float("nan")}, "p"),
    ({"n": 5, "d": 2, "p": "0.1"}, "p"), ({"n": 5, "d": 2, "p": True}, "p"),
    ({"n": 5, "d": 2, "p": 0.1, "seed": -2}, "seed"), ({"n": 5, "d": 2}, "p")])
def test_stochastic_invalid_parameters_name_the_parameter(params, word):
    with pytest.raises(ValueError, match=f"^{word}:"):
        gradcode.make_code("stochastic-gc", **params)


@pytest.mark.parametrize("n,d,p", [(4, 1, 0.3), (5, 2, 0.2), (6, 3, 0.5), (7, 2, 0.05),
                                   (8, 4, 0.7), (6, 6, 0.9), (5, 2, 0.0)])
def test_stochastic_unbiased_and_error_formula_exactly(n, d, p):
    """Every one of the ``2^n`` straggler patterns, weighted ``p^|S| (1 - p)^(n - |S|)``:
    ``E[w B] = 1`` and ``E||w B - 1||^2 = k p / (d (1 - p))``, within 1e-12."""
    code = gradcode.make_code("stochastic-gc", n=n, d=d, p=p, seed=n + d)
    mean, err = pattern_moments(code)
    np.testing.assert_allclose(mean, 1.0, rtol=0, atol=1e-12)
    assert err == pytest.approx(n * p / (d * (1 - p)), rel=1e-12, abs=1e-12)
    assert code.expected_error == expected_error(n, d, p) and is_unbiased(code)


@HYP
@given(st.integers(1, 9), st.data())
def test_stochastic_moments_for_random_parameters(n, data):
    d = data.draw(st.integers(1, n))
    p = data.draw(st.floats(0, 0.95, allow_nan=False))
    code = gradcode.make_code("stochastic-gc", n=n, d=d, p=p, seed=data.draw(st.integers(0, 99)))
    mean, err = pattern_moments(code)
    np.testing.assert_allclose(mean, 1.0, rtol=0, atol=1e-12)
    assert err == pytest.approx(n * p / (d * (1 - p)), rel=1e-12, abs=1e-12)


@HYP
@given(st.integers(1, 30), st.data())
def test_stochastic_decoder_and_closed_form(n, data):
    d = data.draw(st.integers(1, n))
    p = data.draw(st.sampled_from([0.0, 0.1, 0.5, 2 / 3]))
    code = gradcode.make_code("stochastic-gc", n=n, d=d, p=p, seed=data.draw(st.integers(0, 99)))
    got = np.array(data.draw(st.lists(st.lists(st.booleans(), min_size=n, max_size=n),
                                      min_size=1, max_size=5)), bool)
    frac, err, exact = code.recovery_many(got)
    for row, f, e, x in zip(got, frac, err, exact):
        R = np.flatnonzero(row)
        dec = code.decode(R)
        np.testing.assert_allclose(dec.weights[R], 1 / (d * (1 - p)))
        np.testing.assert_allclose(dec.recovered, code.B[R].sum(axis=0) / (d * (1 - p)),
                                   atol=1e-12)
        assert (dec.exact, dec.error) == (x, pytest.approx(e, abs=1e-9))
        assert dec.recovered_fraction == pytest.approx(f, abs=1e-12)
        assert code.decode(R, method="optimal").error <= dec.error + 1e-7
    if p == 0.0:
        assert code.decode(range(n)).exact                 # no stragglers expected: 1/d each


def test_stochastic_error_by_monte_carlo():
    """n = 20 (too many patterns to enumerate): iid stragglers of probability p, the closed
    form's error over 20000 patterns is ``k p / (d (1 - p))`` within 5 standard errors."""
    n, d, p = 20, 3, 0.25
    code = gradcode.make_code("stochastic-gc", n=n, d=d, p=p, seed=1)
    rng = np.random.default_rng(11)
    errs = code.recovery_many(rng.random((20000, n)) >= p)[1]
    se = errs.std() / np.sqrt(errs.size)
    assert abs(errs.mean() - expected_error(n, d, p)) < 5 * se


# ================================================================================ ledger
def _claims(module):
    import importlib
    from gradcode.experiments import Context
    try:
        mod = importlib.import_module(f"gradcode.experiments.literature.{module}")
    except ModuleNotFoundError as e:          # the package is someone else's to create
        pytest.skip(f"gradcode.experiments.literature not importable: {e}")
    return mod.claims(Context(quick=True, seed=0, progress=False))


@pytest.mark.parametrize("module", ["coupon", "stochastic"])
def test_ledger_rows(module):
    from gradcode.experiments import Claim
    from gradcode.experiments import Check
    rows = _claims(module)
    assert rows and all(isinstance(c, Claim) and c.measured for c in rows)
    for c in rows:                  # our derivations (b H_b, k p / (d (1 - p))): checks
        c.row()
        assert c.verdict == "reproduced" or c.why
    checks = [c for c in rows if isinstance(c, Check)]
    assert checks and all(c.verdict == "reproduced" for c in checks), [
        (c.claim, c.verdict, c.reason()) for c in checks]
    claims = [c for c in rows if not isinstance(c, Check)]
    if module == "stochastic":      # nothing but the abstract, which states nothing testable
        assert not claims
    else:                           # the abstract's "up to 85.4 %", judged by its number
        assert [(c.source, c.paper_value, c.tol) for c in claims] == [("abstract", 85.4, 0.2)]
        assert claims[0].verdict == "reproduced" and 68 < claims[0].ours < 103
