"""``bgc`` and ``frc-approx``: Charles, Papailiopoulos, Ellenberg, "Approximate gradient coding via
sparse random graphs" (2017, arXiv:1711.06771).

The paper's text could not be found (see ``gradcode.codes._approximate``): the codes follow the
definitions of issue 22, and what is checked here are properties of those definitions, derived in
the module's docstrings, not numbered results of the paper:

* the placements (Bernoulli(d/n) entries, seeded; FRC's n/d groups of d);
* one-step decoding ``w = n / (d r) 1_R``: its expectation over uniformly random straggler sets of
  each size (``colsum(B) / d``: all ones for FRC), its mean squared error (a hypergeometric
  variance), exhaustively;
* optimal decoding: never worse than one-step, at least the number of partitions no received
  worker holds, exactly that for FRC (``d`` per group without a survivor), so FRC is exact
  whenever every group has a survivor, with probability ``(1 - p^d)^(n/d)`` under iid stragglers;
* hypothesis over random parameters and straggler sets.
"""

from itertools import combinations
from math import comb

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import gradcode
from gradcode.codes._approximate import bernoulli_rows, row_probability

EXAMPLES = [("bgc", {"n": 6, "d": 2}), ("bgc", {"n": 8, "d": 3, "seed": 2}),
            ("bgc", {"n": 7, "d": 1, "seed": 5}), ("frc-approx", {"n": 6, "d": 2}),
            ("frc-approx", {"n": 6, "d": 3}), ("frc-approx", {"n": 8, "d": 4}),
            ("frc-approx", {"n": 5, "d": 1})]
IDS = [f"{name}{sorted(p.items())}" for name, p in EXAMPLES]
HYP = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def subsets(n, r):
    return [np.array(R, int) for R in combinations(range(n), r)]


def one_step(code, R):
    return code.decode(R, method="one-step")


def uncovered(code, R):
    """Partitions that no received worker holds (recovered 0 by any decoder)."""
    return int(np.count_nonzero(code.B[R].sum(axis=0) == 0))


# ------------------------------------------------------------------------------ placements
def test_bgc_is_seeded_and_every_worker_computes():
    a, b = gradcode.make_code("bgc", n=30, d=3, seed=4), gradcode.make_code("bgc", n=30, d=3, seed=4)
    np.testing.assert_array_equal(a.B, b.B)
    assert not np.array_equal(a.B, gradcode.make_code("bgc", n=30, d=3, seed=5).B)
    assert set(np.unique(a.B)) <= {0.0, 1.0} and a.is_sum_code
    assert np.all(a.B.sum(axis=1) >= 1)
    np.testing.assert_allclose(a.load, a.B.sum(axis=1) / 30)
    assert a.s is None and a.methods == ("one-step",) and a.params == {"n": 30, "d": 3, "seed": 4}


def test_bgc_entries_are_bernoulli_d_over_n():
    """Every entry is 1 with probability ``d / n``; every row is nonzero: iid Bernoulli(``q``)
    entries given a nonzero row, ``q / (1 - (1 - q)^n) = d / n`` (``row_probability``)."""
    n, d = 200, 4
    B = gradcode.make_code("bgc", n=n, d=d, seed=0).B
    p = d / n
    assert abs(B.mean() - p) < 5 * np.sqrt(p * (1 - p) / n**2)
    for n, d in [(6, 1), (6, 2), (7, 3), (5, 5)]:
        q = row_probability(n, d)
        if 1 < d < n:
            assert q / (1 - (1 - q) ** n) == pytest.approx(d / n, rel=1e-12)
        draws = np.stack([bernoulli_rows(n, d, np.random.default_rng(s)) for s in range(2000)])
        assert draws.any(axis=2).all()
        freq = draws.mean(axis=(0, 1))                      # per column: d / n
        assert np.all(np.abs(freq - d / n) < 5 * np.sqrt(d / n * (1 - d / n) / (2000 * n)) + 1e-12)
        sums = draws.sum(axis=2).ravel()                    # a binomial conditioned on >= 1
        if 0 < q < 1:
            p1 = n * q * (1 - q) ** (n - 1) / (1 - (1 - q) ** n)
            assert abs(np.mean(sums == 1) - p1) < 5 * np.sqrt(p1 * (1 - p1) / sums.size)
        elif q == 0:
            assert np.all(sums == 1)                         # d = 1: one partition each


def test_bgc_one_step_is_unbiased_over_b():
    """``E_B[colsum(B)] = d``: with the stragglers' expectation ``colsum(B) / d``, one-step
    decoding is unbiased over the code and the stragglers together."""
    n, d = 10, 2
    cols = np.concatenate([gradcode.make_code("bgc", n=n, d=d, seed=s).B.sum(axis=0)
                           for s in range(2000)]) / d
    assert abs(cols.mean() - 1) < 5 * cols.std() / np.sqrt(cols.size)


def test_frc_groups():
    code = gradcode.make_code("frc-approx", n=6, d=2)
    assert code.B.astype(int).tolist() == [[1, 1, 0, 0, 0, 0], [1, 1, 0, 0, 0, 0],
                                           [0, 0, 1, 1, 0, 0], [0, 0, 1, 1, 0, 0],
                                           [0, 0, 0, 0, 1, 1], [0, 0, 0, 0, 1, 1]]
    np.testing.assert_allclose(code.load, 2 / 6)
    assert code.methods == ("one-step",) and code.s is None


@pytest.mark.parametrize("name,params,word", [
    ("bgc", {"n": 0, "d": 1}, "n"), ("bgc", {"n": 4, "d": 5}, "d"), ("bgc", {"n": 4, "d": 0}, "d"),
    ("bgc", {"n": 4, "d": 2, "seed": -1}, "seed"), ("bgc", {"n": 4, "d": 2.0}, "d"),
    ("frc-approx", {"n": 6, "d": 4}, "d"), ("frc-approx", {"n": 6, "d": 7}, "d"),
    ("frc-approx", {"n": 6.5, "d": 2}, "n"), ("frc-approx", {"n": 6}, "d")])
def test_invalid_parameters_name_the_parameter(name, params, word):
    with pytest.raises(ValueError, match=f"^{word}:"):
        gradcode.make_code(name, **params)


# ------------------------------------------------------------------- one-step decoding
@pytest.mark.parametrize("name,params", EXAMPLES, ids=IDS)
def test_one_step_weights_are_a_fixed_scaling_of_the_received_sum(name, params):
    code = gradcode.make_code(name, **params)
    n, d = code.n_workers, code.d
    for R in ([0], [0, 2], list(range(n))):
        w = one_step(code, R).weights
        np.testing.assert_allclose(w[R], n / (d * len(R)))
        assert not np.delete(w, R).any()
    assert not one_step(code, []).weights.any()


@pytest.mark.parametrize("name,params", EXAMPLES, ids=IDS)
def test_one_step_expectation_over_random_stragglers(name, params):
    """Averaged over every received set of size ``r``: ``colsum(B) / d`` (FRC: exactly 1)."""
    code = gradcode.make_code(name, **params)
    n, d = code.n_workers, code.d
    colsum = code.B.sum(axis=0)
    for r in range(1, n + 1):
        mean = np.mean([one_step(code, R).recovered for R in subsets(n, r)], axis=0)
        np.testing.assert_allclose(mean, colsum / d, atol=1e-12)
        if name == "frc-approx":
            np.testing.assert_allclose(mean, 1.0, atol=1e-12)


@pytest.mark.parametrize("name,params", EXAMPLES, ids=IDS)
def test_one_step_mean_squared_error_over_random_stragglers(name, params):
    """``E[err] = sum_j c^2 r (m_j/n)(1 - m_j/n)(n - r)/(n - 1) + (m_j/d - 1)^2`` with
    ``c = n / (d r)``, ``m = colsum(B)``; FRC: ``n (n - d)(n - r) / (d r (n - 1))``."""
    code = gradcode.make_code(name, **params)
    n, d = code.n_workers, code.d
    m = code.B.sum(axis=0)
    for r in range(1, n + 1):
        c = n / (d * r)
        var = r * (m / n) * (1 - m / n) * (n - r) / (n - 1)
        formula = float(np.sum(c**2 * var + (m / d - 1) ** 2))
        mean = np.mean([one_step(code, R).error for R in subsets(n, r)])
        assert mean == pytest.approx(formula, rel=1e-9, abs=1e-12)
        if name == "frc-approx":
            assert formula == pytest.approx(n * (n - d) * (n - r) / (d * r * (n - 1)), abs=1e-12)


def test_frc_one_step_is_exact_exactly_when_the_groups_are_balanced():
    code = gradcode.make_code("frc-approx", n=8, d=2)
    for r in range(1, 9):
        for R in subsets(8, r):
            share = np.bincount(R // 2, minlength=4)
            assert one_step(code, R).exact == bool(np.all(share * 8 == 2 * r))


@pytest.mark.parametrize("name", ["bgc", "frc-approx"])
def test_full_replication_decodes_from_any_worker(name):
    code = gradcode.make_code(name, n=5, d=5)
    assert np.all(code.B == 1)
    for r in range(1, 6):
        for R in subsets(5, r):
            assert one_step(code, R).exact and code.decode(R).exact


def test_no_straggler_frc_one_step_is_exact_bgc_is_colsum_over_d():
    frc = gradcode.make_code("frc-approx", n=6, d=3)
    assert one_step(frc, range(6)).exact
    bgc = gradcode.make_code("bgc", n=8, d=3, seed=2)
    np.testing.assert_allclose(one_step(bgc, range(8)).recovered, bgc.B.sum(axis=0) / 3)


# -------------------------------------------------------------------- optimal decoding
@pytest.mark.parametrize("name,params", EXAMPLES, ids=IDS)
def test_optimal_between_uncovered_and_one_step(name, params):
    code = gradcode.make_code(name, **params)
    n = code.n_workers
    for r in range(n + 1):
        for R in subsets(n, r):
            opt = code.decode(R, method="optimal").error
            own = code.decode(R).error
            assert uncovered(code, R) - 1e-9 <= opt <= one_step(code, R).error + 1e-9
            assert opt <= own + 1e-9 and own <= n + 1e-9


@pytest.mark.parametrize("params", [{"n": 6, "d": 2}, {"n": 6, "d": 3}, {"n": 8, "d": 4},
                                    {"n": 9, "d": 3}])
def test_frc_optimal_error_is_d_per_group_without_a_survivor(params):
    code = gradcode.make_code("frc-approx", **params)
    n, d = code.n_workers, code.d
    for r in range(n + 1):
        for R in subsets(n, r):
            dead = n // d - len(np.unique(R // d))
            for method in (None, "optimal"):
                dec = code.decode(R, method=method)
                assert dec.error == pytest.approx(d * dead, abs=1e-9)
                assert dec.exact == (dead == 0)
            if n - r <= d - 1:                      # any d - 1 stragglers
                assert code.decode(R).exact


@pytest.mark.parametrize("p", [0.1, 0.3, 0.6])
def test_frc_is_exact_with_probability_of_every_group_surviving(p):
    """iid stragglers with probability ``p``: ``P(exact) = (1 - p^d)^(n/d)``, exhaustively."""
    code = gradcode.make_code("frc-approx", n=8, d=2)
    total = 0.0
    for r in range(9):
        for R in subsets(8, r):
            if code.decode(R).exact:
                total += (1 - p) ** r * p ** (8 - r)
    assert total == pytest.approx((1 - p**2) ** 4, rel=1e-12)


# -------------------------------------------------------------------------- hypothesis
@st.composite
def instances(draw):
    name = draw(st.sampled_from(["bgc", "frc-approx"]))
    n = draw(st.integers(1, 24))
    if name == "frc-approx":
        d = draw(st.sampled_from([k for k in range(1, n + 1) if n % k == 0]))
        params = {"n": n, "d": d}
    else:
        params = {"n": n, "d": draw(st.integers(1, n)), "seed": draw(st.integers(0, 1000))}
    received = draw(st.lists(st.integers(0, n - 1), unique=True, max_size=n))
    return gradcode.make_code(name, **params), np.array(sorted(received), int)


@HYP
@given(instances())
def test_random_instances(case):
    code, R = case
    n, d = code.n_workers, code.d
    assert np.all(code.B.sum(axis=1) >= 1)
    one = one_step(code, R)
    opt = code.decode(R, method="optimal")
    counts = code.B[R].sum(axis=0)
    c = n / (d * R.size) if R.size else 0.0
    np.testing.assert_allclose(one.recovered, c * counts, atol=1e-12)
    assert uncovered(code, R) - 1e-7 <= opt.error <= one.error + 1e-7
    if code.name == "frc-approx":
        dead = n // d - len(np.unique(R // d))
        assert code.decode(R).error == pytest.approx(d * dead, abs=1e-9)
        assert opt.error == pytest.approx(d * dead, abs=1e-7)


@HYP
@given(st.integers(8, 80), st.data())
def test_bgc_fast_path_is_its_least_squares_decoder(n, data):
    """The simulator's ``recovery_many`` (normal equations by Cholesky where well conditioned)
    equals ``decode`` (lstsq) on random rounds."""
    d = data.draw(st.integers(1, n))
    code = gradcode.make_code("bgc", n=n, d=d, seed=data.draw(st.integers(0, 1000)))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    got = rng.random((12, n)) < rng.uniform(0.5, 1.0, (12, 1))
    frac, err, exact = code.recovery_many(got)
    for g, f, e, x in zip(got, frac, err, exact):
        if np.isnan(f):
            continue
        dec = code.decode(np.flatnonzero(g))
        assert (dec.exact, dec.recovered_fraction) == (x, pytest.approx(f, abs=1e-9))
        assert dec.error == pytest.approx(e, rel=1e-7, abs=1e-9)


def test_bgc_fast_path_answers_at_the_issues_scale():
    """n = 256, d = 16: every round in closed form, by Woodbury up to n / 4 = 64 missing and by
    Cholesky beyond, equal to lstsq's (a fast path that always fell back to the decoder would
    pass the equality test above and speed nothing up)."""
    code = gradcode.make_code("bgc", n=256, d=16)
    rng = np.random.default_rng(0)
    got = np.ones((16, 256), bool)
    for row, missing in zip(got, np.linspace(0, 120, 16).astype(int)):
        row[rng.choice(256, missing, replace=False)] = False
    frac, err, exact = code.recovery_many(got)
    assert not np.isnan(frac).any()
    for g, f, e in zip(got, frac, err):
        dec = code.decode(np.flatnonzero(g))
        assert dec.recovered_fraction == pytest.approx(f, abs=1e-10)
        assert dec.error == pytest.approx(e, rel=1e-9)


@HYP
@given(st.integers(2, 12), st.data())
def test_random_size_r_averages(n, data):
    """FRC over every received set of one random size ``r``: one-step recovers 1 on average, with
    mean squared error ``n (n - d)(n - r) / (d r (n - 1))`` (one-step decoding of each set)."""
    d = data.draw(st.sampled_from([k for k in range(1, n + 1) if n % k == 0]))
    r = data.draw(st.integers(1, n))
    code = gradcode.make_code("frc-approx", n=n, d=d)
    got = np.zeros((comb(n, r), n), bool)
    for i, R in enumerate(subsets(n, r)):
        got[i, R] = True
    recovered = n / (d * r) * (got.astype(float) @ code.B)
    np.testing.assert_allclose(recovered.mean(axis=0), 1.0, atol=1e-12)
    err = np.array([one_step(code, np.flatnonzero(g)).error for g in got])
    assert err.mean() == pytest.approx(n * (n - d) * (n - r) / (d * r * (n - 1)), abs=1e-9)


# --------------------------------------------------------------------------------- the CLI
@pytest.mark.parametrize("args", [["list"], ["code", "bgc", "--n", "6", "--d", "2"],
                                  ["code", "frc-approx", "--n", "6", "--d", "3"]])
def test_cli_shows_them(args, capsys):
    from gradcode.cli import main
    assert main(args) in (0, None)
    out = capsys.readouterr().out
    assert ("bgc" in out and "frc-approx" in out) if args == ["list"] else "6 workers" in out
