"""Recovery bounds (paper 2, Thm 10-11), Condition 1 (paper 1, eq. 4), loads, float32 error."""

from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradcode
from gradcode import make_code
from gradcode.analysis import float32_error, is_robust, normalized_load, recovery_bounds

SETTINGS = settings(max_examples=30, deadline=None)


def independence_number(code, W) -> int:
    """alpha(G[W]) by brute force over all subsets of W (no graph library; n <= 10)."""
    S = (np.asarray(code.B) != 0).astype(int)
    adj = (S @ S.T) > 0                                    # conflict: a shared partition
    W = list(W)
    nbr = [sum(1 << b for b, v in enumerate(W) if v != u and adj[u, v]) for u in W]
    best = 0
    for mask in range(1 << len(W)):
        size = bin(mask).count("1")
        if size <= best:
            continue
        if all(not (mask >> a & 1) or not (nbr[a] & mask) for a in range(len(W))):
            best = size
    return best


def is_code_params(n):
    """Every valid (code, c) with n workers: FR (c | n), CR (any c), HR (c := n0 = n / groups)."""
    out = [(make_code("isgc-cr", n=n, c=c), c) for c in range(1, n + 1)]
    out += [(make_code("isgc-fr", n=n, c=c), c) for c in range(1, n + 1) if n % c == 0]
    for groups in range(1, n + 1):
        for c1 in range(1, n + 1):
            for c2 in range(n):
                try:
                    code = make_code("isgc-hr", n=n, c1=c1, c2=c2, groups=groups)
                except ValueError:
                    continue
                out.append((code, code.n0))
    return out


@st.composite
def code_and_workers(draw):
    n = draw(st.integers(1, 10))
    code, c = draw(st.sampled_from(is_code_params(n)))
    W = draw(st.sets(st.integers(0, n - 1)))
    return code, c, sorted(W)


@SETTINGS
@given(code_and_workers())
def test_thm10_thm11_hold(args):
    code, c, W = args
    lower, upper = recovery_bounds(code.n_workers, c, len(W))
    a = independence_number(code, W)
    assert lower <= a <= upper, (code, W)
    # the scheme's own decoder (Alg. 1-3) finds a maximum independent set
    dec = code.decode(W, rng=np.random.default_rng(0))
    assert int(dec.weights.sum()) == a


@pytest.mark.parametrize("n", [4, 5, 6, 7, 8, 9, pytest.param(10, marks=pytest.mark.slow)])
def test_bounds_attained(n):
    """Every received set up to n = 9 (n = 10, 6 s of CPU, in ``make test-all``)."""
    for code, c in is_code_params(n):
        for w in range(n + 1):
            lower, upper = recovery_bounds(n, c, w)
            values = [independence_number(code, W) for W in combinations(range(n), w)]
            assert min(values) == lower and max(values) == upper, (code, w)


def test_hr_bounds_need_group_size():
    """Paper 2 states Thm 10 for HR with c = c1 + c2; it fails when n0 = n / groups > c."""
    code = make_code("isgc-hr", n=6, c1=1, c2=1, groups=2)    # c = 2, n0 = 3
    W = [0, 1, 2]                                             # one group, a clique
    assert independence_number(code, W) == 1
    assert recovery_bounds(6, 2, 3)[0] == 2                   # the paper's bound, violated
    assert recovery_bounds(6, 3, 3) == (1, 2)                 # with c = n0 it holds


def test_recovery_bounds_values_and_validation():
    assert recovery_bounds(10, 3, 5) == (2, 3)
    assert recovery_bounds(10, 3, 0) == (0, 0)
    assert recovery_bounds(12, 3, 12) == (4, 4)
    assert recovery_bounds(7, 7, 3) == (1, 1)
    for args, name in [((0, 1, 0), "n"), ((4, 5, 1), "c"), ((4, 2, 5), "w"), ((4, 0, 1), "c")]:
        with pytest.raises(ValueError, match=f"^{name}:"):
            recovery_bounds(*args)


# ------------------------------------------------------------------ Condition 1
@pytest.mark.parametrize("name, params", [
    ("gc-fr", {"n": 6, "s": 2}), ("gc-fr", {"n": 8, "s": 1}), ("gc-cr", {"n": 7, "s": 3}),
    ("gc-cr", {"n": 10, "s": 4, "seed": 3}), ("gc-cr", {"n": 5, "s": 0}),
])
def test_exact_codes_are_robust(name, params):
    code = make_code(name, **params)
    assert is_robust(code)
    if code.s + 1 < code.n_workers:
        assert not is_robust(code, s=code.s + 1)             # one straggler too many


def test_gc_partial_coded_block_is_robust():
    code = make_code("gc-partial", n=6, s=2, alpha=2.5)
    assert is_robust(code.B[6:, 6:], s=2)
    assert not is_robust(code)                               # naive messages are irreplaceable


def test_non_robust_matrix():
    assert not is_robust(np.eye(4), s=1)
    assert is_robust(gradcode.from_matrix(np.eye(4), s=0))
    # robust except for one straggler set: {0, 1} must not both straggle
    B = np.array([[1, 0, 0], [1, 0, 0], [0, 1, 1], [0, 1, 1], [0, 1, 1]], float)
    assert is_robust(B, s=1)
    assert not is_robust(B, s=2)


def test_sampled_robustness():
    code = make_code("gc-cr", n=30, s=3)                     # C(30, 3) = 4060 > 200
    assert is_robust(code, samples=200, rng=np.random.default_rng(0))
    assert not is_robust(code, s=4, samples=20, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="^s:"):
        is_robust(np.eye(3))
    with pytest.raises(ValueError, match="^rng:"):
        is_robust(code, rng=0)


def test_tandon_n3_example():
    """Paper 1's example: A B = 1 (eq. 3); row A_i decodes when supp(A_i) survives."""
    A = np.array([[0, 1, 2], [1, 0, 1], [2, -1, 0]], float)
    B = np.array([[0.5, 1, 0], [0, 1, -1], [0.5, 0, 1]])
    np.testing.assert_allclose(A @ B, np.ones((3, 3)))
    code = gradcode.from_matrix(B, s=1)
    assert is_robust(code)
    for received in combinations(range(3), 2):
        row = next(a for a in A if set(np.flatnonzero(a)) == set(received))
        dec = code.decode(received)
        assert dec.exact
        np.testing.assert_allclose(dec.weights, row, atol=1e-12)
    for received in combinations(range(3), 1):
        assert not code.decode(received).exact


# ------------------------------------------------------------------ loads, float32
def test_normalized_load():
    np.testing.assert_allclose(normalized_load(make_code("gc-cr", n=8, s=2)), 3 / 8)
    np.testing.assert_allclose(normalized_load(make_code("isgc-fr", n=6, c=3)), 1 / 2)
    np.testing.assert_allclose(normalized_load(make_code("gc-partial", n=3, s=1, alpha=2)), 4 / 9)
    assert normalized_load(make_code("gc-partial", n=5, s=1, alpha=2)).shape == (5,)


def test_float32_error():
    rng = np.random.default_rng(0)
    cr = float32_error(make_code("gc-cr", n=16, s=3), rng=rng)
    assert cr["float32_rel_error"] < 1e-5
    assert cr["float64_rel_error"] < 1e-10
    assert cr["max_abs_B"] == make_code("gc-cr", n=16, s=3).max_coefficient
    un = float32_error(make_code("uncoded", n=16), rng=rng)
    assert 1e-9 < un["float32_rel_error"] < 1e-6             # float32 rounding, ~1e-7
    assert un["float64_rel_error"] < 1e-14 and un["max_abs_B"] == 1.0
    part = float32_error(make_code("gc-partial", n=6, s=2, alpha=2.0), rng=rng, trials=50)
    assert part["float64_rel_error"] < 1e-10                 # stragglers lose coded messages only
    assert part["float32_rel_error"] < 1e-5
    # a non-exact decoder shows its own error in float64 as well
    ig = float32_error(make_code("ignore", n=4), rng=rng, trials=5)
    assert ig["float64_rel_error"] < 1e-14                   # s = None: nobody straggles
