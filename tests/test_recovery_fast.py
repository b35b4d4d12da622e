"""Issue 34: the compiled recovery of codes without a closed form (``codes._downdate``) is their
decoder's, round by round: least squares by downdating the full set (``bgc``, ``matrix``; random
dense, sparse 0/1 and rank-deficient ``B``, few and many workers missing) and the scaled received
sum (``expander``, ``stochastic-gc``).  Recovered fraction, error and exactness agree to 1e-12
(as tests/_results.same_records asks of the simulator) wherever the fast path answers (it may
leave a round, NaN, to the decoder); spot checks at n = 256 for the benchmarked codes, where it
answers every round."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from threadpoolctl import threadpool_limits

import gradcode
from gradcode.codes import EXACT_RTOL, from_matrix
from gradcode.codes._downdate import least_squares_factors, least_squares_recovery
from gradcode.sim import simulate

from _results import same_records


def agree(code, got, out, method=None) -> float:
    """Every round of ``got`` that ``out = (frac, err, exact)`` answers is ``code.decode``'s;
    returns the share of rounds answered."""
    frac, err, exact = out
    with threadpool_limits(1):                # lstsq of one small matrix: one BLAS thread
        for t in np.flatnonzero(~np.isnan(frac)):
            d = code.decode(np.flatnonzero(got[t]), method=method)
            assert frac[t] == pytest.approx(d.recovered_fraction, rel=1e-12, abs=1e-12), t
            assert err[t] == pytest.approx(d.error, rel=1e-12, abs=1e-12), t
            assert bool(exact[t]) == d.exact, t
    return float(np.mean(~np.isnan(frac))) if len(frac) else 1.0


def random_matrix(kind: str, n: int, k: int, rng) -> np.ndarray:
    """A random ``(n, k)`` ``B``: dense Gaussian, sparse 0/1, rank-deficient (a product through
    ``r < min(n, k)``), or with repeated rows."""
    if kind == "dense":
        return rng.standard_normal((n, k))
    if kind == "sparse01":
        B = (rng.random((n, k)) < 0.4).astype(float)
        B[np.arange(n), rng.integers(k, size=n)] = 1.0          # nobody holds nothing
        return B
    if kind == "low-rank":
        r = int(rng.integers(1, max(2, min(n, k))))
        return rng.standard_normal((n, r)) @ rng.standard_normal((r, k))
    B = rng.standard_normal((n, k))                             # "repeated"
    B[n // 2:] = B[: n - n // 2]
    return B


def random_received(n: int, rounds: int, rng) -> np.ndarray:
    """``(rounds, n)`` received sets: few missing (at most 3) and many (half or more), the
    empty and the full set among them."""
    got = np.ones((rounds, n), bool)
    for t in range(rounds):
        miss = rng.integers(0, min(3, n) + 1) if t % 2 else rng.integers(n // 2, n + 1)
        got[t, rng.choice(n, miss, replace=False)] = False
    got[0], got[-1] = False, True
    return got


@given(st.sampled_from(["dense", "sparse01", "low-rank", "repeated"]), st.integers(1, 12),
       st.integers(1, 12), st.integers(0, 2**32 - 1))
def test_least_squares_downdate_is_the_optimal_decoder(kind, n, k, seed):
    rng = np.random.default_rng(seed)
    B = random_matrix(kind, n, k, rng)
    code = from_matrix(B)
    f = least_squares_factors(B)
    if f is None:                             # no clear-cut rank: every round to the decoder
        return
    got = random_received(n, 8, rng)
    out = least_squares_recovery(f, got, code._row_max, code.partition_sizes, EXACT_RTOL)
    agree(code, got, out, method="optimal")


@given(st.sampled_from(["dense", "sparse01", "low-rank", "repeated"]), st.integers(1, 10),
       st.integers(1, 10), st.integers(0, 2**32 - 1), st.booleans())
def test_matrix_code_recovery_is_its_decoder(kind, n, k, seed, with_s):
    """A matrix code's own decoder: least squares, or for a sum code without ``s`` least squares
    only where exact (the conflict-graph decoder otherwise, left to the decoder here)."""
    rng = np.random.default_rng(seed)
    B = random_matrix(kind, n, k, rng)
    code = from_matrix(B)
    if with_s and kind == "dense" and n > k:
        code = from_matrix(B, s=1)            # any n - 1 >= k generic rows span everything
    got = random_received(n, 8, rng)
    agree(code, got, code.recovery_many(got))


@pytest.mark.parametrize("seed", range(4))
def test_well_conditioned_rounds_are_all_answered(seed):
    """Generic B (full row rank, or rank-deficient with a generic left null space): the fast
    path answers every round, few missing or many."""
    rng = np.random.default_rng(seed)
    for B in (rng.standard_normal((10, 14)),
              rng.standard_normal((12, 8)) @ rng.standard_normal((8, 14))):
        code = from_matrix(B)
        got = random_received(B.shape[0], 10, rng)
        assert agree(code, got, code.recovery_many(got)) == 1.0


@given(st.integers(3, 12), st.integers(1, 4), st.integers(0, 50), st.integers(0, 2**32 - 1))
def test_scaled_sum_is_the_decoder(n, d, seed, got_seed):
    rng = np.random.default_rng(got_seed)
    codes = [gradcode.make_code("stochastic-gc", n=n, d=min(d, n), p=float(rng.random()) * 0.9,
                                seed=seed)]
    if (n * d) % 2 == 0 and d < n:
        codes.append(gradcode.make_code("expander", n=n, d=d, seed=seed))
    for code in codes:
        got = random_received(n, 8, rng)
        assert agree(code, got, code.recovery_many(got)) == 1.0


def test_bgc_recovery_at_small_d_is_its_decoder():
    """Small ``d``: repeated rows make ``B`` rank-deficient (the left null space path)."""
    rng = np.random.default_rng(3)
    for n, d, seed in [(12, 2, 0), (12, 3, 1), (16, 2, 4), (8, 8, 0)]:
        code = gradcode.make_code("bgc", n=n, d=d, seed=seed)
        got = random_received(n, 12, rng)
        agree(code, got, code.recovery_many(got))


# ------------------------------------------------------------------------- n = 256 spot checks
N = 256
SPOT = {"bgc": dict(name="bgc", n=N, d=16), "expander": dict(name="expander", n=N, d=16),
        "stochastic-gc": dict(name="stochastic-gc", n=N, d=16, p=0.06)}


@pytest.mark.parametrize("name", ["bgc", "expander", "stochastic-gc", "matrix"])
def test_benchmarked_codes_at_n_256(name):
    """``fastest:241`` (15 missing) and 40 missing: every round answered, each the decoder's.
    (``matrix`` is gc-cr's ``B`` without ``s``, rank n - s: the left null space path; with
    ``s = 15`` its rounds missing at most 15 are ``Code.recovery_many``'s closed form.)"""
    with threadpool_limits(1):
        code = (gradcode.make_code("matrix", B=gradcode.make_code("gc-cr", n=N, s=15).B)
                if name == "matrix" else gradcode.make_code(**SPOT[name]))
    rng = np.random.default_rng(1)
    got = np.ones((4, N), bool)
    for t, miss in enumerate([15, 15, 15, 40]):
        got[t, rng.choice(N, miss, replace=False)] = False
    assert agree(code, got, code.recovery_many(got)) == 1.0


@pytest.mark.parametrize("name", ["bgc", "matrix"])
def test_simulator_at_n_256_is_the_loop(name):
    """The simulator's fast path (``fastest:241``) against its per-round loop, record for record."""
    with threadpool_limits(1):
        code = (gradcode.make_code("matrix", B=gradcode.make_code("gc-cr", n=N, s=15).B)
                if name == "matrix" else gradcode.make_code(**SPOT[name]))
        runs = [simulate(code, "exp:1.5", "fastest:241", 6, seed=3, fast=fast).records
                for fast in (True, False)]
    same_records(*runs)


def test_kernels_compile_once_for_read_only_and_writable_arguments():
    """A code's arrays are read-only (codes are immutable), the doctests' and users' writable:
    numba types the two differently, and each kind of caller compiled the kernels again (13 s
    for ``_least_squares_rounds`` on 2 cores; the doctest paid it in every test run)."""
    from gradcode.codes import _downdate

    code = from_matrix(np.array([[1.0, 1, 0], [0, 1, 1], [1, 0, 1]]))
    assert not code.partition_sizes.flags.writeable
    got = np.array([[1, 1, 1], [1, 1, 0]], bool)
    f = least_squares_factors(code.B)
    for row_max, sizes in ((code._row_max, code.partition_sizes),
                           (np.ones(3), np.full(3, 1 / 3))):
        least_squares_recovery(f, got, row_max, sizes, EXACT_RTOL)
    assert len(_downdate._least_squares_rounds.signatures) == 1
    for row_max, sizes in ((code._row_max, code.partition_sizes),
                           (np.ones(3), np.full(3, 1 / 3))):
        _downdate.scaled_sum_rounds(code.B_sparse, got, np.ones(2), row_max, sizes, EXACT_RTOL)
    assert len(_downdate._scaled_sum_rounds.signatures) == 1
