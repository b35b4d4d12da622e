"""Paper 3: heter-aware (Sec. IV) and group-based (Sec. V) codes, and the completion time (3)."""

from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from gradcode import from_matrix, make_code
from gradcode.analysis import completion_time
from gradcode.codes import _heterogeneous as het
from gradcode.codes._heterogeneous import (Heter, HeterGroup, find_groups, group_decode,
                                           group_encode, heter_allocation, heter_support,
                                           prune_groups)

# Example 1: c = [1, 2, 3, 4, 4], s = 1, k = 7
EX1_SUPPORT = np.array([[1, 0, 0, 0, 0, 0, 0],
                        [0, 1, 1, 0, 0, 0, 0],
                        [0, 0, 0, 1, 1, 1, 0],
                        [1, 1, 1, 0, 0, 0, 1],
                        [0, 0, 0, 1, 1, 1, 1]], dtype=bool)
# Example 2: 7 workers, 4 partitions, every partition on 4 workers (s = 3)
EX2_SUPPORT = np.array([[1, 1, 0, 0],
                        [0, 0, 1, 0],
                        [0, 0, 0, 1],
                        [1, 1, 1, 0],
                        [1, 1, 0, 1],
                        [1, 0, 1, 1],
                        [0, 1, 1, 1]], dtype=bool)


def straggler_sets(m, s):
    for r in range(s + 1):
        yield from combinations(range(m), r)


def assert_exact_within_s(code):
    m, B = code.n_workers, code.B
    for S in straggler_sets(m, code.s):
        received = np.setdiff1d(np.arange(m), S)
        d = code.decode(received)
        assert d.method == code.name, "the scheme's own decoder must be used within s"
        assert not d.weights[list(S)].any()
        assert d.exact                          # |w B - 1| <= EXACT_RTOL * scale of the terms
        np.testing.assert_allclose(d.weights @ B, 1.0, rtol=0, atol=1e-6)


def is_exact_cover(support, group):
    return bool(np.all(support[list(group)].sum(axis=0) == 1))


def brute_completion_time(B, c, s):
    """Eq. (3) literally: workers sorted by t_i, every |S| <= s, rank test for 1 in the span."""
    m = B.shape[0]
    t = np.count_nonzero(B, axis=1) / np.asarray(c, float)
    order = np.argsort(t, kind="stable")
    worst = 0.0
    for S in straggler_sets(m, s):
        T = np.inf
        for j in range(1, m + 1):
            rows = [i for i in order[:j] if i not in S]
            if rows:
                R = B[rows]
                rank = lambda M: np.linalg.matrix_rank(M, tol=1e-9 * max(1.0, np.abs(M).max()))
                if rank(np.vstack([R, np.ones(B.shape[1])])) == rank(R):
                    T = t[order[j - 1]]
                    break
        worst = max(worst, T)
    return worst


# ------------------------------------------------------------------------ paper examples
def test_example1_allocation_and_support():
    code = Heter([1, 2, 3, 4, 4], s=1, k=7)
    np.testing.assert_array_equal(code.allocation, [1, 2, 3, 4, 4])
    np.testing.assert_array_equal(code.B != 0, EX1_SUPPORT)
    np.testing.assert_array_equal(heter_support([1, 2, 3, 4, 4], 7), EX1_SUPPORT)
    assert code.s == 1
    assert_exact_within_s(code)
    # Thm 5: every worker finishes at k(s+1)/sum(c) = 1
    assert completion_time(code, [1, 2, 3, 4, 4]) == pytest.approx(1.0)


def test_example1_group_code():
    code = HeterGroup([1, 2, 3, 4, 4], s=1, k=7)
    # {W1, W2, W5} and {W3, W4} cover D exactly once each and are disjoint: P = s + 1
    assert code.groups == ((0, 1, 4), (2, 3))
    assert code.outside.size == 0 and code.C is None
    np.testing.assert_array_equal(code.B, EX1_SUPPORT.astype(float))
    assert_exact_within_s(code)
    d = code.decode([0, 1, 3, 4])            # W3 straggles: G1 = {W1, W2, W5} arrived
    np.testing.assert_array_equal(d.weights, [1, 1, 0, 0, 1])


def test_example2_find_and_prune_groups():
    groups = find_groups(EX2_SUPPORT)
    # G1 = {W1, W2, W3}, G2 = {W3, W4}, G3 = {W2, W5} (0-based), and no other group
    assert sorted(groups) == [(0, 1, 2), (1, 4), (2, 3)]
    assert sorted(prune_groups(groups)) == [(1, 4), (2, 3)]


def test_example2_construction_and_decoding():
    gc = group_encode(EX2_SUPPORT, 3, np.random.default_rng(0))
    assert sorted(gc.groups) == [(1, 4), (2, 3)]
    np.testing.assert_array_equal(gc.outside, [0, 5, 6])
    # entries of W2..W5 are 1; the others keep the support and are solved by Alg. 1 (s - P = 1)
    np.testing.assert_array_equal(gc.B[1:5], EX2_SUPPORT[1:5].astype(float))
    np.testing.assert_array_equal(gc.B != 0, EX2_SUPPORT)
    assert not np.all(gc.B[[0, 5, 6]][EX2_SUPPORT[[0, 5, 6]]] == 1.0)
    assert gc.C.shape == (2, 3)
    for S in straggler_sets(7, 3):
        received = np.setdiff1d(np.arange(7), S)
        w = group_decode(gc, received)
        assert not w[list(S)].any()
        np.testing.assert_allclose(w @ gc.B, 1.0, rtol=0, atol=1e-9)
    np.testing.assert_array_equal(group_decode(gc, [0, 1, 4, 5]), [0, 1, 0, 0, 1, 0, 0])


def test_group_encode_rejects_bad_support():
    with pytest.raises(ValueError, match=r"^support: .*s\+1=3"):
        group_encode(EX2_SUPPORT, 2, np.random.default_rng(0))


# ------------------------------------------------------------------------ group search bound
FR_SUPPORT = np.repeat(np.eye(4, dtype=bool), 3, axis=0)   # 12 workers, 3 per partition: 81 groups


def test_find_groups_complete_and_bounded():
    full = find_groups(FR_SUPPORT)
    assert len(full) == 81 and len(set(full)) == 81
    assert all(is_exact_cover(FR_SUPPORT, g) for g in full)
    few = find_groups(FR_SUPPORT, max_nodes=6)
    assert 0 < len(few) < 81 and set(few) <= set(full)
    assert len(find_groups(FR_SUPPORT, max_groups=5)) == 5
    assert find_groups(FR_SUPPORT, max_nodes=0) == []


@pytest.mark.parametrize("budget", [0, 1, 2])
def test_heter_group_exact_under_search_budget(monkeypatch, budget):
    speeds, s, k = [1, 1, 1, 1, 1, 1], 2, 3      # allocation 1 each: many groups
    full = HeterGroup(speeds, s, k)
    monkeypatch.setattr(het, "MAX_SEARCH_NODES", budget)
    code = HeterGroup(speeds, s, k)
    assert set(code.candidate_groups) < set(full.candidate_groups)
    assert_exact_within_s(code)
    if budget == 0:      # no groups: exactly the heter code
        np.testing.assert_array_equal(code.B, Heter(speeds, s, k).B)


# ------------------------------------------------------------------------ validation, params
@pytest.mark.parametrize("kwargs,param", [
    (dict(speeds=[], s=0, k=1), "speeds"),
    (dict(speeds=[1, -1], s=0, k=1), "speeds"),
    (dict(speeds=[1, 0], s=0, k=1), "speeds"),
    (dict(speeds="1,x,3", s=0, k=1), "speeds"),
    (dict(speeds=[[1, 2]], s=0, k=1), "speeds"),
    (dict(speeds=[1, np.inf], s=0, k=1), "speeds"),
    (dict(speeds=[1, 2, 3], s=3, k=2), "s"),       # k(s+1) > m k
    (dict(speeds=[1, 2, 3], s=-1, k=2), "s"),
    (dict(speeds=[1, 2, 3], s=1, k=0), "k"),
    (dict(speeds=[1, 2, 3], s=1, k=2.5), "k"),
    (dict(speeds=[1, 2, 3], s=1, k=2, seed=-1), "seed"),
])
@pytest.mark.parametrize("name", ["heter", "heter-group"])
def test_validation(name, kwargs, param):
    with pytest.raises(ValueError, match=rf"^{param}: expected .*, got "):
        make_code(name, **kwargs)


@pytest.mark.parametrize("name", ["heter", "heter-group"])
def test_params_rebuild_and_string_speeds(name):
    code = make_code(name, speeds="1, 2,3,4,4", s=1, k=7, seed=3)
    assert code.params == {"speeds": [1.0, 2.0, 3.0, 4.0, 4.0], "s": 1, "k": 7, "seed": 3}
    assert all(type(x) is float for x in code.params["speeds"])
    np.testing.assert_array_equal(make_code(code.name, **code.params).B, code.B)
    np.testing.assert_array_equal(make_code(name, speeds=np.array([1, 2, 3, 4, 4]), s=1, k=7,
                                            seed=3).B, code.B)
    assert not np.array_equal(make_code(name, speeds=[1, 2, 3, 4, 4], s=2, k=7, seed=3).B != 0,
                              code.B != 0)


def test_allocation_caps_at_k():
    # quota of the fast worker 6 * 50/52 > k = 3: capped, excess split 1.5 / 1.5, rounded
    np.testing.assert_array_equal(heter_allocation([1, 1, 50], 1, 3), [2, 1, 3])
    np.testing.assert_array_equal(heter_allocation([1, 2, 3], 2, 5), [5, 5, 5])


# ------------------------------------------------------------------------ completion time
def test_completion_time_edges():
    code = Heter([1, 2, 3, 4, 4], s=1, k=7)
    assert completion_time(code, [1, 2, 3, 4, 4], s=0) <= completion_time(code, [1, 2, 3, 4, 4])
    assert completion_time(make_code("uncoded", n=3), [1, 1, 1], s=1) == np.inf
    assert completion_time(make_code("uncoded", n=3), "1,2,4") == pytest.approx(1.0)
    with pytest.raises(ValueError, match="^s: "):
        completion_time(from_matrix(np.eye(3)), [1, 1, 1])
    with pytest.raises(ValueError, match="^speeds: expected 5"):
        completion_time(code, [1, 2, 3])
    with pytest.raises(ValueError, match="^s: .*max_patterns=20000"):
        completion_time(make_code("gc-cr", n=30, s=5), np.ones(30))


@st.composite
def heter_cases(draw, max_m=6, max_s=3, max_k=8):
    m = draw(st.integers(2, max_m))
    speeds = draw(st.lists(st.floats(0.25, 8.0), min_size=m, max_size=m))
    s = draw(st.integers(0, min(m - 1, max_s)))
    k = draw(st.integers(1, max_k))
    return speeds, s, k, draw(st.integers(0, 5))


@settings(max_examples=30, deadline=None)
@given(heter_cases(max_m=5, max_s=2, max_k=5))
def test_completion_time_matches_brute_force(case):
    speeds, s, k, seed = case
    for code in (Heter(speeds, s, k, seed), HeterGroup(speeds, s, k, seed),
                 make_code("gc-cr", n=len(speeds), s=s, seed=seed)):
        expected = brute_completion_time(code.B, speeds, s)
        assert completion_time(code, speeds) == pytest.approx(expected)


# ------------------------------------------------------------------------ properties
@settings(max_examples=30, deadline=None)
@given(heter_cases())
def test_heter_properties(case):
    speeds, s, k, seed = case
    c, m = np.asarray(speeds), len(speeds)
    n = heter_allocation(speeds, s, k)
    assert n.sum() == k * (s + 1) and n.min() >= 0 and n.max() <= k
    quota = k * (s + 1) * c / c.sum()
    if quota.max() <= k:                       # no capping: largest-remainder rounding of eq. 5
        assert np.all(np.abs(n - quota) < 1)
    for code in (Heter(speeds, s, k, seed), HeterGroup(speeds, s, k, seed)):
        support = code.B != 0
        np.testing.assert_array_equal(support, heter_support(n, k))
        np.testing.assert_array_equal(support.sum(axis=1), n)
        np.testing.assert_array_equal(support.sum(axis=0), s + 1)   # s+1 distinct workers
        assert_exact_within_s(code)
    g = HeterGroup(speeds, s, k, seed)
    workers = [i for i in range(m) if n[i]]
    brute = {tuple(G) for r in range(1, len(workers) + 1) for G in combinations(workers, r)
             if is_exact_cover(support, G)}
    assert set(g.candidate_groups) == brute and len(g.candidate_groups) == len(brute)
    assert set(g.groups) <= brute
    members = [w for G in g.groups for w in G]
    assert len(members) == len(set(members)), "retained groups must be pairwise disjoint"
    np.testing.assert_array_equal(g.B[members], support[members].astype(float))


@st.composite
def integral_cases(draw):
    """Speeds with integral quotas k(s+1)c_i/sum(c) = n_i <= k (paper 3's assumption), k = m."""
    m = draw(st.integers(2, 6))
    s = draw(st.integers(0, min(m - 1, 3)))
    extra = m * (s + 1) - m                    # n_i >= 1, at most m - 1 extra units each
    slots = draw(st.permutations(range(m * (m - 1))))[:extra]
    n = np.ones(m, dtype=int)
    np.add.at(n, [x // (m - 1) for x in slots], 1)
    return n, s, draw(st.floats(0.5, 3.0))


@settings(max_examples=30, deadline=None)
@given(integral_cases())
def test_theorem5_optimal_and_beats_cyclic(case):
    n, s, f = case
    m = n.size
    speeds = n * f
    heter = Heter(speeds, s, m)
    np.testing.assert_array_equal(heter.allocation, n)
    bound = (s + 1) * m / speeds.sum()          # lower bound of Thm 5's proof, any robust B
    cyclic = make_code("gc-cr", n=m, s=s)
    T_cyc = completion_time(cyclic, speeds)
    assert completion_time(heter, speeds) == pytest.approx(bound)
    assert completion_time(HeterGroup(speeds, s, m), speeds) == pytest.approx(bound)
    assert T_cyc >= bound * (1 - 1e-12)
    if np.ptp(n) > 0:                           # heterogeneous: cyclic waits for the slowest
        assert completion_time(heter, speeds) < T_cyc * (1 - 1e-9)


@settings(max_examples=30, deadline=None)
@given(heter_cases(max_m=6, max_s=3, max_k=1))
def test_rounded_heter_not_slower_than_cyclic(case):
    """Beyond Thm 5's integrality: with k = m, largest-remainder rounding keeps
    n_i / c_i <= (s+1) / min(c) <= T(cyclic) (cyclic must wait for its slowest worker)."""
    speeds, s, _, seed = case
    m = len(speeds)
    c = np.asarray(speeds)
    heter = Heter(speeds, s, m, seed)
    assert np.max(heter.allocation / c) <= (s + 1) / c.min() * (1 + 1e-12)
    T_cyc = completion_time(make_code("gc-cr", n=m, s=s, seed=seed), speeds)
    assert T_cyc >= (s + 1) / c.min() * (1 - 1e-12)
    assert completion_time(heter, speeds) <= T_cyc * (1 + 1e-12)
    assert completion_time(HeterGroup(speeds, s, m, seed), speeds) <= T_cyc * (1 + 1e-12)
