"""Every decoder that claims "maximum" or "optimal" is checked against an exact search.

Sum codes (``isgc-fr``, ``isgc-cr``, ``isgc-hr``, sum-code ``matrix``): the decoded workers are
received, pairwise conflict-free, and as many as ``alpha(G[W'])``, the independence number of
the conflict graph on the received workers, computed for every subset at once by a bitmask
recursion.  Every received set of every accepted configuration up to n = 8 here, up to n = 14
in ``make test-all`` (and four configurations at n = 18-20); random sets up to n = 200 against
an integer program (scipy's HiGHS).
Least-squares decoders (``method="optimal"``, ``gc-partial``'s own, ``heter-group`` beyond ``s``
stragglers): their error equals an independent least-squares solve.
"""
import itertools

import numpy as np
import pytest
import scipy.optimize
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import gradcode
from gradcode.analysis import independence_numbers as alpha_of_every_subset
from gradcode.experiments.theorems.isgc_common import hr_configs


# ----------------------------------------------------------------------------- exact search
def alpha_by_integer_program(G, vertices) -> int:
    """Independence number of ``G[vertices]``: max sum x, x_i + x_j <= 1 on edges, x binary."""
    vertices = np.asarray(vertices)
    H = sp.coo_array(sp.csr_array(G)[vertices][:, vertices])
    edges = [(i, j) for i, j in zip(H.row, H.col) if i < j]
    m = vertices.size
    if not edges:
        return m
    A = np.zeros((len(edges), m))
    for k, (i, j) in enumerate(edges):
        A[k, i] = A[k, j] = 1
    res = scipy.optimize.milp(-np.ones(m), integrality=np.ones(m), bounds=(0, 1),
                              constraints=scipy.optimize.LinearConstraint(A, -np.inf, 1))
    assert res.status == 0, res.message
    return int(round(-res.fun))


def check_maximum(code, received, alpha, rng):
    d = code.decode(received, rng=rng)
    chosen = np.flatnonzero(d.weights)
    assert set(chosen) <= set(received), (received, chosen)
    assert np.all(np.isin(d.weights[chosen], [1.0])), "a sum code decodes with 0/1 weights"
    assert d.recovered.max() <= 1.0 + 1e-12, f"conflicting workers chosen from {received}"
    assert chosen.size == alpha, (code, received, chosen.tolist(), alpha)


# ----------------------------------------------------------------------------- configurations
def sum_code_configs(n_max, n_min=1):
    for n in range(n_min, n_max + 1):
        for c in range(1, n + 1):
            yield "isgc-cr", dict(n=n, c=c)
            if n % c == 0:
                yield "isgc-fr", dict(n=n, c=c)
    for params in hr_configs(n_max, n_min):
        yield "isgc-hr", params


def every_subset_is_maximum(name, params):
    code = gradcode.make_code(name, **params)
    n = code.n_workers
    alpha = alpha_of_every_subset(code.conflict_graph)
    rng = np.random.default_rng(0)
    for mask in range(1, 1 << n):
        received = [i for i in range(n) if mask >> i & 1]
        check_maximum(code, received, alpha[mask], rng)


# ----------------------------------------------------------------------------- paper 2, Thm 8
HR16 = dict(n=16, c1=1, c2=3, groups=4)
COUNTEREXAMPLES = [([1, 4, 5, 7, 11, 14], 3), ([7, 10, 12], 2), ([2, 5, 7, 10, 12], 3)]


@pytest.mark.parametrize("received, alpha", COUNTEREXAMPLES)
def test_hr_counterexamples_decode_a_maximum_set_under_every_seed(received, alpha):
    code = gradcode.make_code("isgc-hr", **HR16)
    assert alpha_by_integer_program(code.conflict_graph, received) == alpha
    for seed in range(64):
        check_maximum(code, received, alpha, np.random.default_rng(seed))


@pytest.mark.parametrize("received, alpha", COUNTEREXAMPLES)
def test_paper_alg3_misses_the_maximum_theorem_8_is_false(received, alpha):
    """Paper 2's Alg. 3 (``method="alg3"``) started in some group finds fewer workers: the
    group's received workers hold no vertex of any maximum independent set."""
    code = gradcode.make_code("isgc-hr", **HR16)
    sizes = {int(np.count_nonzero(code.decode(received, method="alg3",
                                              rng=np.random.default_rng(seed)).weights))
             for seed in range(64)}
    assert sizes == {alpha - 1, alpha}
    # the witness of Theorem 8's failure: worker 10's group {8..11} meets W' only in 10, and no
    # maximum independent set of G[{7, 10, 12}] holds 10
    G = code.conflict_graph
    assert G[7, 10] and G[10, 12] and not G[7, 12]


def test_alg3_is_a_named_method_and_others_are_refused():
    code = gradcode.make_code("isgc-hr", **HR16)
    assert code.decode([7, 10, 12], method="alg3").method == "alg3"
    with pytest.raises(ValueError, match="method: expected one of"):
        code.decode([7, 10, 12], method="alg2")
    with pytest.raises(ValueError, match="method"):
        gradcode.make_code("isgc-cr", n=4, c=2).decode([0], method="alg3")


# ----------------------------------------------------------------------------- HR's structure
@pytest.mark.parametrize("params", list(hr_configs(20)), ids=str)
def test_hr_conflict_graph_is_the_overlap_graph_of_its_arcs(params):
    """The decoder's model: worker p covers the circular arc [p, reach(p)), reach monotone, and
    two workers conflict iff their arcs overlap (the claim the docstring's proof rests on)."""
    code = gradcode.make_code("isgc-hr", **params)
    n = code.n_workers
    reach = code._reach
    assert np.all(np.diff(reach) >= 0) and np.all(reach > np.arange(n))

    def covers(p, x):   # arc of p covers position x (mod n)
        return (x - p) % n < reach[p] - p
    arcs = np.array([[u != v and (covers(u, v) or covers(v, u)) for v in range(n)]
                     for u in range(n)])
    assert np.array_equal(arcs, code.conflict_graph.toarray() != 0)


# ----------------------------------------------------------------------------- exhaustive
#: configurations beyond n = 10 where paper 2's Alg. 3 misses the maximum (Theorem 8 fails)
HARD = [("isgc-hr", dict(n=12, c1=1, c2=3, groups=3)),
        pytest.param("isgc-hr", dict(n=16, c1=1, c2=3, groups=4), marks=pytest.mark.slow)]


#: n = 9 and 10 (~23 s of CPU) in ``make test-all``, with n = 11-14 below
@pytest.mark.parametrize("name, params", list(sum_code_configs(8)) + HARD + [
    pytest.param(*config, marks=pytest.mark.slow) for config in sum_code_configs(10, n_min=9)],
    ids=str)
def test_sum_decoders_are_maximum_on_every_received_set(name, params):
    every_subset_is_maximum(name, params)


@pytest.mark.slow
@pytest.mark.parametrize("name, params", list(sum_code_configs(14, n_min=11)), ids=str)
def test_sum_decoders_are_maximum_on_every_received_set_up_to_14(name, params):
    every_subset_is_maximum(name, params)


def test_matrix_sum_code_decodes_exactly_when_a_worker_holds_everything():
    """Rows of different weights: the largest set of conflict-free workers ({1, 2}, 2 of 3
    partitions) is not the best decoding; worker 0 alone holds every partition."""
    code = gradcode.from_matrix([[1, 1, 1], [1, 0, 0], [0, 1, 0]], s=0)
    d = code.decode([0, 1, 2])
    assert d.exact and np.allclose(d.weights, [1.0, 0.0, 0.0])
    assert code.decode([1, 2]).recovered.tolist() == [1.0, 1.0, 0.0]


def best_recovery_of_every_subset(code) -> np.ndarray:
    """For every bitmask of received workers: the largest share of the data a sum decoder can
    recover (a maximum-weight independent set, weights = each row's share), or 1 when least
    squares decodes exactly.  Exhaustive over the independent sets."""
    n = code.n_workers
    share = code.B @ code.partition_sizes
    G = code.conflict_graph.toarray() != 0
    best = np.zeros(1 << n)
    for mask in range(1, 1 << n):
        v = mask.bit_length() - 1
        rest = mask & ~(1 << v)
        without_nbrs = rest & ~sum(1 << u for u in range(n) if G[v, u])
        best[mask] = max(best[rest], share[v] + best[without_nbrs])
    for mask in range(1, 1 << n):
        received = [i for i in range(n) if mask >> i & 1]
        if lstsq_error(code.B, received) < 1e-18:
            best[mask] = 1.0
    return best


@pytest.mark.slow
@pytest.mark.parametrize("name, params", [
    ("isgc-cr", dict(n=20, c=3)), ("isgc-fr", dict(n=20, c=4)),
    ("isgc-hr", dict(n=20, c1=1, c2=3, groups=5)), ("isgc-hr", dict(n=18, c1=2, c2=1, groups=6))],
    ids=str)
def test_sum_decoders_are_maximum_on_every_received_set_at_n_20(name, params):
    every_subset_is_maximum(name, params)


@pytest.mark.parametrize("seed", range(6))
def test_matrix_sum_code_decoder_is_best_on_every_received_set(seed):
    """``from_matrix`` with a 0/1 ``B`` of uneven rows and partition sizes: exact whenever least
    squares is, else a maximum-weight independent set (exact branch and bound on components of
    at most 64 workers)."""
    rng = np.random.default_rng(seed)
    n = 8
    B = (rng.random((n, n)) < 0.3).astype(float)
    B[np.arange(n), rng.integers(n, size=n)] = 1.0            # every worker holds something
    B[rng.integers(n, size=n), np.arange(n)] = 1.0            # every partition is held
    sizes = rng.dirichlet(np.ones(n)) if seed % 2 else None
    code = gradcode.from_matrix(B, partition_sizes=sizes)
    best = best_recovery_of_every_subset(code)
    for mask in range(1, 1 << n):
        received = [i for i in range(n) if mask >> i & 1]
        d = code.decode(received, rng=rng)
        assert set(np.flatnonzero(d.weights)) <= set(received)
        got = 1.0 if d.exact else float(np.clip(d.recovered, 0, 1) @ code.partition_sizes)
        if not d.exact:
            assert np.isin(d.weights, [0.0, 1.0]).all() and d.recovered.max() <= 1 + 1e-12
        assert got == pytest.approx(best[mask], abs=1e-9), (received, d.weights.tolist())


# ----------------------------------------------------------------------------- random, large n
@st.composite
def large_sum_code_and_received(draw):
    name = draw(st.sampled_from(["isgc-cr", "isgc-fr", "isgc-hr"]))
    if name == "isgc-hr":
        c1 = draw(st.integers(1, 4))
        c2 = draw(st.integers(0, 4))
        c = c1 + c2
        n0 = draw(st.integers(c, min(c + c1, 2 * c - 1)))
        groups = draw(st.integers(max(1, 20 // n0), 200 // n0))
        params = dict(n=n0 * groups, c1=c1, c2=c2, groups=groups)
    else:
        c = draw(st.integers(1, 8))
        n = c * draw(st.integers(max(1, 20 // c), 200 // c))
        params = dict(n=n, c=c)
    seed = draw(st.integers(0, 2**32 - 1))
    return name, params, seed


@settings(max_examples=60)
@given(large_sum_code_and_received())
def test_sum_decoders_are_maximum_on_random_received_sets_up_to_n_200(case):
    name, params, seed = case
    code = gradcode.make_code(name, **params)
    rng = np.random.default_rng(seed)
    received = np.flatnonzero(rng.random(code.n_workers) < rng.uniform(0.2, 0.9))
    if received.size == 0:
        return
    check_maximum(code, received, alpha_by_integer_program(code.conflict_graph, received), rng)


# ----------------------------------------------------------------------------- least squares
def lstsq_error(B, received):
    """min_w ||w B_R - 1||^2 by an independent dense solve."""
    B_R = np.asarray(B)[received]
    w, *_ = np.linalg.lstsq(B_R.T, np.ones(B_R.shape[1]), rcond=None)
    return float(np.sum((w @ B_R - 1.0) ** 2))


LEAST_SQUARES_CODES = [("gc-cr", dict(n=6, s=2)), ("gc-fr", dict(n=6, s=1)),
                       ("isgc-hr", dict(n=8, c1=2, c2=1, groups=2)),
                       ("heter-group", dict(speeds=[1, 1, 2, 2, 3], s=1, k=10)),
                       ("heter", dict(speeds=[1, 2, 2, 3, 4], s=2, k=12)),
                       ("gc-partial", dict(n=4, s=1, alpha=2.0))]


@pytest.mark.parametrize("name, params", LEAST_SQUARES_CODES, ids=str)
def test_optimal_decoding_is_least_squares_on_every_received_set(name, params):
    """Paper 5, eq. 2: ``method="optimal"`` attains min_w ||w B - 1||^2 over every received set;
    so does ``gc-partial``'s own decoder (block-diagonal B: the claim of its docstring), and an
    exact code's own decoder within ``s`` stragglers is exact (error 0)."""
    code = gradcode.make_code(name, **params)
    n = code.n_workers
    for r in range(1, n + 1):
        for received in itertools.combinations(range(n), r):
            best = lstsq_error(code.B, list(received))
            assert code.decode(received, method="optimal").error == pytest.approx(best, abs=1e-9)
            own = code.decode(received)
            if name == "gc-partial":
                assert own.error == pytest.approx(best, abs=1e-9), received
            elif code.s is not None and n - r <= code.s:
                assert own.exact and own.error == pytest.approx(0.0, abs=1e-9), received
