"""The literature against its authors' own code, and the cyclic-mds refusal explained.

* ``rashisht1/approx_gradient_coding`` (Raviv et al. 2018; ``src/util.py``,
  ``all1_approx_tests.py``): their expander ``B = A / d``, their decoding weights ``n / (n - s)``,
  their bounds ``(lambda / d) sqrt(n s / (n - s))`` and ``sqrt(s / d)``, written below from our
  reading (``ref_*``), against gradcode's ``expander`` on the same graphs: gradcode's own graphs
  and networkx's ``random_regular_graph`` (the sampler the authors call);
* ``hwang595/ErasureHead`` (``src/approximate_coding.py``): its approximate FRC placement and
  master loop (``ref_eh_*``) against ``frc-approx``;
* cyclic-mds refuses ``n + s`` even because no real cyclic MDS code containing ``1`` exists
  there (``gradcode.codes._mds``): exhaustively over every zero set for small ``n``.
"""

import csv
from itertools import combinations

import numpy as np
import pytest

import gradcode
from gradcode.codes import _expander
from gradcode.experiments import Context
from gradcode.experiments.literature import approximate, mds


# ----------------------------------------------------------- the authors' rules (our reading)
def ref_B(edges, n, d):
    """getBapprox, expander_ver 0: symmetric 0/1 adjacency over d."""
    B = np.zeros((n, n))
    for u, v in edges:
        B[u, v] = 1
        B[v, u] = 1
    return (1.0 / d) * B


def ref_arow(completed):
    """getArowlinear: n / (n - s) on the completed workers."""
    n = len(completed)
    s = n - np.sum(completed)
    return np.array([n / (n - s + 0.0) if c else 0.0 for c in completed])


def ref_upper(B, d, s):
    """all1_approx_tests.py: lambda = max(|eigs[0]|, |eigs[-2]|) of d B, sorted."""
    n = B.shape[0]
    eigs = np.sort(np.linalg.eig(d * B)[0].real)
    lam = max(abs(eigs[0]), abs(eigs[-2]))
    return (lam / d) * np.sqrt(n * s / (n - s))


def ref_lower(d, s):
    return np.sqrt(s / d)


def _edges(code):
    return [tuple(e) for e in np.argwhere(np.triu(code.B > 0))]


def _agree(code, n, d, rng, sets=40):
    """gradcode's expander against the references on its own graph: B, weights, bound, and the
    bound holding on random straggler sets."""
    ref = ref_B(_edges(code), n, d)
    np.testing.assert_allclose(code.B, ref, rtol=0, atol=1e-15)
    for s in range(1, n // 2 + 1, max(1, n // 8)):
        upper = ref_upper(ref, d, s)
        assert code.error_bound(s) == pytest.approx(upper ** 2, rel=1e-12, abs=1e-15)
        for _ in range(sets):
            done = np.zeros(n, bool)
            done[rng.permutation(n)[:n - s]] = True
            dec = code.decode(np.flatnonzero(done))
            np.testing.assert_allclose(dec.weights, ref_arow(done), rtol=1e-15, atol=0)
            err = np.linalg.norm(ref_arow(done) @ ref - np.ones(n))
            assert dec.error == pytest.approx(err ** 2, rel=1e-12, abs=1e-15)
            assert err <= upper * (1 + 1e-12)


@pytest.mark.parametrize("n,d,seed", [(50, 3, 0), (50, 3, 7), (24, 4, 1), (30, 5, 2),
                                      (40, 8, 3), (10, 9, 0)])
def test_expander_equals_the_authors_rules_on_its_graphs(n, d, seed):
    _agree(gradcode.make_code("expander", n=n, d=d, seed=seed), n, d,
           np.random.default_rng(seed))


@pytest.mark.parametrize("n,d,seed", [(50, 3, 0), (50, 3, 1), (24, 4, 2), (30, 6, 3)])
def test_expander_equals_the_authors_rules_on_networkx_graphs(n, d, seed, monkeypatch):
    """The authors' own sampler, nx.random_regular_graph, fed to gradcode's expander."""
    nx = pytest.importorskip("networkx")
    edges = np.array(list(nx.random_regular_graph(d, n, seed=seed).edges), int)
    monkeypatch.setattr(_expander, "random_regular_graph", lambda n_, d_, rng: edges)
    code = gradcode.make_code("expander", n=n, d=d)
    assert sorted(map(tuple, np.sort(edges, axis=1))) == sorted(_edges(code))
    _agree(code, n, d, np.random.default_rng(seed))


def test_a_wrong_scaling_or_bound_would_be_caught():
    """The comparison can fail: n / |R| scaled by d (BGC's one-step) or the unsquared bound."""
    code = gradcode.make_code("expander", n=50, d=3, seed=0)
    done = np.ones(50, bool)
    done[:5] = False
    one_step = code.n_workers / (code.d * 45)
    assert not np.allclose(one_step, ref_arow(done)[done])
    assert code.error_bound(5) != pytest.approx(ref_upper(ref_B(_edges(code), 50, 3), 3, 5))


def test_the_experiments_references_are_the_tests():
    code = gradcode.make_code("expander", n=50, d=3, seed=4)
    ref = ref_B(_edges(code), 50, 3)
    np.testing.assert_array_equal(mds.authors_B(code.B, 3), ref)
    done = np.arange(50) % 7 != 0
    np.testing.assert_array_equal(mds.authors_weights(done), ref_arow(done))
    for s in (3, 5, 7):
        up, low = mds.authors_bounds(ref, 3, s)
        assert up == pytest.approx(ref_upper(ref, 3, s), rel=1e-12) and low == ref_lower(3, s)


@pytest.mark.parametrize("seed", [0, 5, 8])         # 5: G = B B^T has cond ~1e6; 8: B singular
def test_the_witness_searchs_errors_are_least_squares(seed):
    """The witness search's Schur-complement errors equal a least-squares solve's, on sets
    of every size the search meets (none to 8 stragglers)."""
    B = gradcode.make_code("expander", n=50, d=3, seed=seed).B
    error, rng = mds.lstsq_errors(B), np.random.default_rng(seed)
    for size in range(9):
        for _ in range(10):
            S = rng.permutation(50)[:size]
            assert error(S) == pytest.approx(mds.lstsq_error(B, S), rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("seed", range(3))
def test_the_worst_case_lower_bound_is_reached(seed):
    """For s = 3..7 (the authors' plot) a straggler set leaves every decoder at least
    sqrt(s / d) away: the least-squares error of the greedy search's set."""
    code = gradcode.make_code("expander", n=50, d=3, seed=seed)
    for s in range(3, 8):
        err, S = mds.worst_set(code.B, s)
        assert len(set(S)) == s and err >= ref_lower(3, s)
        R = np.setdiff1d(np.arange(50), S)
        assert code.decode(R).error >= err ** 2 - 1e-9          # its own decoder: worse


# ----------------------------------------------------------------------- ErasureHead
def ref_eh_placement(n, s):
    """Worker rank-1 in group a = (rank-1)//(s+1), place b: idx = (s+1) a + (b+i) % (s+1)."""
    B = np.zeros((n, n))
    for rank in range(1, n + 1):
        a, b = (rank - 1) // (s + 1), (rank - 1) % (s + 1)
        for i in range(s + 1):
            B[rank - 1, (s + 1) * a + (b + i) % (s + 1)] = 1
    return B


def ref_eh_master(order, n, s, num_collect, B):
    """The master's loop: until num_collect workers or every group, add the first message of
    each group; returns the decoded combination of partial gradients and who was collected."""
    groups = n // (s + 1)
    done, g, cnt_workers, cnt_groups, got = set(), np.zeros(n), 0, 0, []
    for src in order:
        if not (cnt_workers < num_collect and cnt_groups < groups):
            break
        got.append(src)
        cnt_workers += 1
        if src // (s + 1) not in done:
            done.add(src // (s + 1))
            g += B[src]
            cnt_groups += 1
    return g, got


@pytest.mark.parametrize("n,s", [(6, 1), (6, 2), (8, 3), (9, 2), (12, 3), (4, 3)])
def test_frc_approx_decodes_as_erasurehead(n, s):
    code = gradcode.make_code("frc-approx", n=n, d=s + 1)
    ref = ref_eh_placement(n, s)
    np.testing.assert_array_equal(code.B, ref)
    rng = np.random.default_rng(n * 10 + s)
    for _ in range(30):
        order = rng.permutation(n)
        for k in range(n + 1):
            g, got = ref_eh_master(order, n, s, k, ref)
            dec = code.decode(sorted(got))
            np.testing.assert_allclose(dec.recovered, g, atol=1e-12)
            assert dec.error == pytest.approx(np.sum((g - 1) ** 2), abs=1e-12)
            assert dec.exact == bool(np.allclose(g, 1))
            w, got2 = approximate.erasurehead_decode(order, n, s, k)
            assert got2 == len(got) and np.allclose(w @ ref, g)
    if n // (s + 1) >= 2:     # the comparison can fail: one-step decoding scales the sum
        g, got = ref_eh_master(np.arange(n), n, s, n, ref)     # group 0 whole, then the rest
        assert not np.allclose(code.decode(sorted(got), method="one-step").recovered, g)


def test_erasurehead_row_counts_a_changed_decoder(monkeypatch):
    rng = np.random.default_rng(0)
    assert approximate.erasurehead_differences([(8, 1)], rng)[0] == 0
    monkeypatch.setattr(approximate, "erasurehead_decode",
                        lambda order, n, s, k: (np.ones(n) * (k > 0), min(k, n)))
    assert approximate.erasurehead_differences([(8, 1)], rng)[0] > 0


# --------------------------------------------------------------- cyclic-mds: n + s even
def real_cyclic_mds_zero_sets(n, s):
    """Every zero set J of a real cyclic [n, n - s] code containing 1 (J closed under
    j -> n - j, 0 not in J) whose code is MDS (every s columns of its parity check
    independent)."""
    pairs = [j for j in range(1, n) if 2 * j < n]
    middle = [[], [n // 2]] if n % 2 == 0 else [[]]
    found = []
    for k in range(len(pairs) + 1):
        for P in combinations(pairs, k):
            for M in middle:
                J = sorted([*P, *(n - j for j in P), *M])
                if len(J) != s:
                    continue
                H = np.exp(2j * np.pi * np.outer(J, np.arange(n)) / n)
                if all(abs(np.linalg.det(H[:, list(c)])) > 1e-9
                       for c in combinations(range(n), s)):
                    found.append(J)
    return found


@pytest.mark.parametrize("n,s", [(n, s) for n in range(2, 11) for s in range(1, n)])
def test_a_real_cyclic_mds_code_containing_one_exists_iff_n_plus_s_odd(n, s):
    found = real_cyclic_mds_zero_sets(n, s)
    assert bool(found) == bool((n + s) % 2), found
    if (n + s) % 2:                                   # and gradcode's run centred at n / 2
        lo = (n - s + 1) // 2
        assert list(range(lo, lo + s)) in found
        gradcode.make_code("cyclic-mds", n=n, s=s)
    else:
        with pytest.raises(ValueError, match="n \\+ s odd"):
            gradcode.make_code("cyclic-mds", n=n, s=s)


@pytest.mark.parametrize("n,s", [(6, 2), (8, 4), (12, 6), (20, 8), (16, 2)])
def test_n_even_s_even_has_a_sine_codeword_with_s_zeros(n, s):
    """The proof's witness (n even, s even: J is s/2 pairs {j, n - j}): a combination of
    sin(2 pi j k / n) over the pairs vanishes at k = 0, n/2 and s/2 - 1 chosen k and their
    mirrors n - k, s zeros, so s columns of the parity check are dependent: not MDS."""
    rng = np.random.default_rng(n + s)
    pairs = rng.choice(np.arange(1, n // 2), s // 2, replace=False)
    ks = rng.choice(np.arange(1, n // 2), s // 2 - 1, replace=False)
    S = np.sin(2 * np.pi * np.outer(ks, pairs) / n)
    b = np.linalg.svd(S)[2][-1] if ks.size else np.ones(1)           # S b = 0, b != 0
    c = np.sin(2 * np.pi * np.outer(np.arange(n), pairs) / n) @ b
    zeros = np.flatnonzero(np.abs(c) < 1e-9)
    assert np.abs(c).max() > 1e-6 and zeros.size >= s


# --------------------------------------------------------------- the ledger rows
def _rows(path, cite="Raviv et al. 2018"):
    with open(path, newline="") as fh:
        return [r for r in csv.DictReader(fh) if r.get("paper", cite) == cite]


def test_raviv_rows_cite_the_authors_code(quick):
    """The rows of the quick run (``mds.claims``): five claims, four checks."""
    claims = _rows(quick("literature") / "claims.csv")
    sources = [c["source"] for c in claims]
    assert len(claims) == 5
    assert sources.count("code: rashisht1/approx_gradient_coding src/util.py") == 1
    assert sources.count("code: rashisht1/approx_gradient_coding all1_approx_tests.py") == 2
    assert sources.count("abstract") == 2
    lower = [c for c in claims if "sqrt(s/d)" in c["claim"]]
    assert len(lower) == 1 and lower[0]["verdict"] == "reproduced"
    assert all(c["verdict"] == "reproduced" for c in claims)
    big = [c for c in _rows(quick("literature") / "checks.csv") if "n = 64, s = 7" in c["check"]]
    assert len(big) == 1 and big[0]["verdict"] == "not reproduced"      # the counterexample


def test_raviv_rows_would_fail_on_a_wrong_code(monkeypatch):
    """A code whose weights are not n / (n - s) fails the src/util.py row."""
    got = {"B": 0.0, "w": 0.5, "bound": 0.0, "ratio": 0.5, "sets": 1, "mean": {3: 1.0}}
    ctx = Context(quick=True, seed=0, progress=False)
    assert mds._construction_row(ctx, got).verdict == "not reproduced"
    assert mds._upper_row(ctx, {**got, "ratio": 1.1}).verdict == "not reproduced"
    assert mds._degradation_row(ctx, {**got, "mean": {3: 1.0, 4: 1.0}}).verdict \
        == "not reproduced"
