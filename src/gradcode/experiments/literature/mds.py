"""Raviv, Tamo, Tandon, Dimakis, "Gradient coding from cyclic MDS codes and expander graphs" (ICML
2018, arXiv 1707.03858): the ledger rows of ``cyclic-mds`` and ``expander``.

The paper's text could not be read here, only its abstract; the expander code is checked against
the authors' own code, ``rashisht1/approx_gradient_coding`` (commit 2ee0c0c): ``src/util.py``
builds ``B = A / d`` for the adjacency matrix ``A`` of a random ``d``-regular graph
(``getBapprox``) and decodes by the weights ``n / (n - s)`` on the workers that returned
(``getArowlinear``); ``all1_approx_tests.py`` (``n = 50``, ``d = 3``, ``s = 3..7``) plots the
upper bound ``(lambda / d) sqrt(n s / (n - s))`` on ``||a B - 1||`` (``lambda = max(|eig_min|,
|eig_2|)`` of ``d B``) and the worst-case lower bound ``sqrt(s / d)``.  The references below
(``authors_*``) are written from our reading of that code (none of it copied).  Claims:

* (``src/util.py``) our ``B`` and one-step weights equal the authors' on the same graphs (our
  random ``d``-regular sampler; their ``B`` rebuilt from the same adjacency), to rounding;
* (``all1_approx_tests.py``) the upper bound: our bound equals theirs (squared) and no random
  straggler set of their setting exceeds it;
* (``all1_approx_tests.py``) the lower bound: for every ``s`` a straggler set whose
  least-squares error (so every decoder's) reaches ``sqrt(s / d)``, found by a witness
  search (greedy and beam, refined by swaps: a failure to find one is no counterexample);
* (abstract) graceful degradation: the error grows with the number of stragglers;
* (abstract) gradient codes from cyclic MDS codes: exact from every set of ``n - s`` workers
  (exhaustive, small ``n``; ``n + s`` odd, the only real case: ``gradcode.codes._mds``).

Checks (ours, not the paper's): cyclic-mds's decoding weights against ``gc-cr``'s, small ``n``
and the counterexample ``n = 64, s = 7`` (``s`` consecutive stragglers: weights ~1e6), and the
expander against the Bernoulli code (``bgc``) at equal load.
"""

from __future__ import annotations

from itertools import combinations, product

import numpy as np

from ...registry import make_code
from .. import Check, Claim, holds

CITE = "Raviv et al. 2018"
REPO = "code: rashisht1/approx_gradient_coding"
#: the authors' setting (all1_approx_tests.py): n, d, the straggler counts s
AUTHORS = (50, 3, (3, 4, 5, 6, 7))
#: a stand-in for their graphs: gradcode's sampler instead of networkx's random_regular_graph
GRAPHS = ("stand-in: gradcode's random d-regular graphs (seeds 0..) for networkx's "
          "random_regular_graph; the authors' B built from the same adjacency")
#: (n, s) where the weights are compared exhaustively (every straggler set of size s)
SMALL_WEIGHTS = ((7, 2), (9, 2), (8, 3), (10, 3), (9, 4), (11, 4), (10, 5))
LARGE = (64, 7)                      # the counterexample: s consecutive stragglers
ROUNDING = 1e-12


def _sizes(ctx) -> dict:
    """Graphs and random straggler sets per ``s`` (the authors: 10 graphs, 100 sets)."""
    return {"graphs": 4 if ctx.quick else 10, "sets": 30 if ctx.quick else 100}


# --------------------------------------------------------------------- the authors' rules
def authors_B(adjacency: np.ndarray, d: int) -> np.ndarray:
    """``getBapprox`` (expander_ver 0): 1 at ``(u, v)`` and ``(v, u)`` for every edge, over
    ``d``.

    >>> authors_B(np.array([[0, 1], [1, 0]]), 1).tolist()
    [[0.0, 1.0], [1.0, 0.0]]
    """
    B = np.zeros(adjacency.shape)
    for u, v in np.argwhere(np.triu(adjacency != 0)):
        B[u, v] = B[v, u] = 1.0
    return B / d


def authors_weights(completed: np.ndarray) -> np.ndarray:
    """``getArowlinear``: ``n / (n - s)`` on every worker that returned, 0 elsewhere.

    >>> authors_weights(np.array([True, False, True, True])).tolist()
    [1.3333333333333333, 0.0, 1.3333333333333333, 1.3333333333333333]
    """
    n, s = completed.size, completed.size - int(np.sum(completed))
    return np.where(completed, n / (n - s + 0.0), 0.0)


def authors_bounds(B: np.ndarray, d: int, s: int) -> tuple[float, float]:
    """``(upper, lower)`` of ``all1_approx_tests.py``: ``(lambda / d) sqrt(n s / (n - s))``
    with ``lambda = max(|eig_min|, |eig_2|)`` of ``d B``, and ``sqrt(s / d)``.

    >>> [round(b, 6) for b in authors_bounds((np.ones((4, 4)) - np.eye(4)) / 3, 3, 2)]
    [0.666667, 0.816497]
    """
    n = B.shape[0]
    eigs = np.sort(np.linalg.eigvals(d * B).real)
    lam = max(abs(eigs[0]), abs(eigs[-2]))
    return float((lam / d) * np.sqrt(n * s / (n - s))), float(np.sqrt(s / d))


def lstsq_error(B: np.ndarray, stragglers) -> float:
    """``||a B - 1||`` of the least-squares decoder (the best of any) without ``stragglers``."""
    R = np.setdiff1d(np.arange(B.shape[0]), list(stragglers))
    a = np.linalg.lstsq(B[R].T, np.ones(B.shape[1]), rcond=None)[0]
    return float(np.linalg.norm(a @ B[R] - 1.0))


def lstsq_errors(B: np.ndarray):
    """``lstsq_error(B, .)`` for the many small straggler sets of a witness search.  Where
    ``G = B B^T`` is invertible and well conditioned, the least-squares weights come from the
    Schur complement of the stragglers' block of ``H = G^{-1}``, ``O(n |S|)`` a set plus one
    ``a B``, instead of a least-squares solve: ``a_R = G_RR^{-1} b_R`` with ``b = B 1`` and
    ``G_RR^{-1} = H_RR - H_RS H_SS^{-1} H_SR``; elsewhere ``lstsq_error`` itself.

    >>> from gradcode import make_code
    >>> B = make_code("expander", n=12, d=3, seed=1).B
    >>> abs(lstsq_errors(B)([0, 5, 7]) - lstsq_error(B, [0, 5, 7])) < 1e-12
    True
    """
    G = B @ B.T
    if np.linalg.cond(G) > 1e8:
        return lambda stragglers: lstsq_error(B, stragglers)
    H, b = np.linalg.inv(G), B.sum(axis=1)
    Hb = H @ b

    def error(stragglers) -> float:
        S = np.asarray(list(stragglers), dtype=np.int64)
        a = Hb - H[:, S] @ b[S]                               # H[:, R] b_R
        if S.size:
            a -= H[:, S] @ np.linalg.solve(H[np.ix_(S, S)], a[S])
            a[S] = 0.0
        return float(np.linalg.norm(a @ B - 1.0))
    return error


def worst_set(B: np.ndarray, s: int, width: int = 8) -> tuple[float, list[int]]:
    """A bad straggler set of size ``s``: the worse of two searches, each then improved by
    swapping one straggler for one received worker while that raises the error (a witness
    search, not exhaustive): a greedy one (add, while they fit, the holders of the partition
    whose loss raises the least-squares error most, then single workers the same way) and a
    beam of ``width`` sets grown one worker at a time; ``(its error, the set)``.

    >>> from gradcode import make_code
    >>> err, S = worst_set(make_code("expander", n=10, d=3, seed=0).B, 3)
    >>> len(S), err >= 1.0          # the three holders of one partition: it is lost
    (3, True)
    """
    error, n = lstsq_errors(B), B.shape[0]
    return max((_swapped(error, n, S) for S in (_greedy(B, s, error), _beam(n, s, width, error))),
               key=lambda found: found[0])


def _greedy(B: np.ndarray, s: int, error) -> list[int]:
    n, S = B.shape[0], []
    while len(S) < s:
        groups = [[int(i) for i in np.flatnonzero(B[:, j]) if i not in S] for j in range(n)]
        groups = [g for g in groups if g and len(S) + len(g) <= s] or [
            [i] for i in range(n) if i not in S]
        S += max(groups, key=lambda g: error(S + g))
    return S


def _beam(n: int, s: int, width: int, error) -> list[int]:
    beam = [()]
    for _ in range(s):
        grown = {tuple(sorted((*S, i))) for S in beam for i in range(n) if i not in S}
        beam = sorted(grown, key=lambda S: -error(S))[:width]
    return list(beam[0])


def _swapped(error, n: int, S: list[int]) -> tuple[float, list[int]]:
    err = error(S)
    improved = True
    while improved:
        improved = False
        for k, i in product(range(len(S)), range(n)):
            if i in S:
                continue
            T = S[:k] + [i] + S[k + 1:]
            e = error(T)
            if e > err + 1e-12:
                S, err, improved = T, e, True
                break
    return err, S


# --------------------------------------------------------------------- the expander code
def _graphs(ctx) -> list:
    n, d, _ = AUTHORS
    return [make_code("expander", n=n, d=d, seed=seed) for seed in range(_sizes(ctx)["graphs"])]


def authors_comparison(ctx) -> dict:
    """Over the authors' setting (``AUTHORS``) on our graphs and random straggler sets: the
    largest ``|B - B_ref|``, ``|w - w_ref|``, ``|our bound - theirs^2| / theirs^2`` and
    ``||a B - 1|| / upper``, the mean error per ``s`` and the sets used."""
    n, d, ss = AUTHORS
    rng = np.random.default_rng([ctx.seed, 18, 1])
    out = {"B": 0.0, "w": 0.0, "bound": 0.0, "ratio": 0.0, "sets": 0,
           "mean": {s: [] for s in ss}}
    for code in _graphs(ctx):
        ref = authors_B(code.B, d)
        out["B"] = max(out["B"], float(np.abs(code.B - ref).max()))
        for s in ss:
            upper, _ = authors_bounds(ref, d, s)
            out["bound"] = max(out["bound"], abs(code.error_bound(s) / upper ** 2 - 1))
            for _ in range(_sizes(ctx)["sets"]):
                done = np.zeros(n, bool)
                done[rng.permutation(n)[:n - s]] = True
                w_ref, ours = authors_weights(done), code.decode(np.flatnonzero(done))
                out["w"] = max(out["w"], float(np.abs(ours.weights - w_ref).max()))
                err = float(np.linalg.norm(w_ref @ ref - 1.0))
                out["ratio"] = max(out["ratio"], err / upper)
                out["mean"][s].append(np.sqrt(ours.error))
                out["sets"] += 1
    out["mean"] = {s: float(np.mean(v)) for s, v in out["mean"].items()}
    return out


def _setting_text(ctx) -> str:
    n, d, ss = AUTHORS
    return (f"n = {n}, d = {d}, s = {ss[0]}..{ss[-1]} (all1_approx_tests.py), "
            f"{_sizes(ctx)['graphs']} graphs x {_sizes(ctx)['sets']} random sets per s")


def _construction_row(ctx, got) -> Claim:
    return Claim(
        f"{REPO} src/util.py", "the expander code is B = A/d, A the adjacency matrix of a random "
        "d-regular graph (getBapprox), decoded by the weights n/(n - s) on the n - s workers "
        "that returned (getArowlinear)", "B = A/d, w = n/(n - s)",
        f"max |B - B_ref| = {got['B']:.1e}, max |w - w_ref| = {got['w']:.1e}",
        holds(got["B"] <= ROUNDING and got["w"] <= ROUNDING),
        f"rule: expander's B and its own decoder's weights equal the authors' rules (rebuilt "
        f"from the same adjacency) within {ROUNDING:g}, {_setting_text(ctx)}",
        paper=CITE, kind="statement", setting=GRAPHS)


def _upper_row(ctx, got) -> Claim:
    return Claim(
        f"{REPO} all1_approx_tests.py", "the linear decoder's error ||aB - 1|| with s "
        "stragglers is at most (lambda/d) sqrt(ns/(n - s)), lambda = max(|eig_min|, |eig_2|) "
        "of the adjacency matrix", "||aB - 1|| <= bound",
        f"max error / bound = {got['ratio']:.3f} over {got['sets']} sets; our bound = theirs^2 "
        f"to {got['bound']:.1e}", holds(got["ratio"] <= 1 + 1e-9 and got["bound"] <= 1e-9),
        f"rule: no random straggler set exceeds the authors' bound, and expander's error_bound "
        f"(the squared error's) is its square within 1e-9; {_setting_text(ctx)}",
        paper=CITE, kind="statement", setting=GRAPHS)


def _lower_row(ctx) -> Claim:
    n, d, ss = AUTHORS
    ratios = {s: min(worst_set(code.B, s)[0] / authors_bounds(code.B, d, s)[1]
                     for code in _graphs(ctx)) for s in ss}
    return Claim(
        f"{REPO} all1_approx_tests.py", "worst case lower bound: some set of s stragglers "
        "leaves an error of at least sqrt(s/d) (plotted as 'Lower Bound (worst case)')",
        "error >= sqrt(s/d)", "; ".join(f"s={s}: {r:.4f}" for s, r in ratios.items()),
        holds(min(ratios.values()) >= 1.0),
        "rule: on every graph and s, a straggler set found by a witness search (greedy by "
        "whole neighbourhoods of partitions, then single workers, and a beam of 8 sets, each "
        "improved by single swaps; not exhaustive) whose least-squares error, the least of "
        "any decoder, is at least "
        f"sqrt(s/d); ours: the smallest such error / sqrt(s/d) over the graphs; "
        f"{_setting_text(ctx)}", paper=CITE, kind="statement", setting=GRAPHS)


def _degradation_row(ctx, got) -> Claim:
    mean = got["mean"]
    return Claim(
        "abstract", "graceful degradation: the l2 error of the approximate gradient grows with "
        "the number of stragglers (the abstract: 'a decreasing function of the number of "
        "stragglers', read as the approximation's quality)", "error rises with s",
        " < ".join(f"{e:.3g} (s={s})" for s, e in mean.items()),
        holds(all(a < b for a, b in zip(list(mean.values()), list(mean.values())[1:]))),
        f"rule: the mean error ||w B - 1|| of expander's own (linear) decoder strictly rises "
        f"along s = {', '.join(map(str, mean))}; {_setting_text(ctx)}",
        paper=CITE, kind="direction", setting=GRAPHS)


# --------------------------------------------------------------------- cyclic-mds
def worst_weight(code, straggler_sets) -> float:
    """``max |w| max |B|`` over the straggler sets (the decoded gradient's worst amplification,
    free of how ``B`` is scaled).

    >>> from gradcode import make_code
    >>> worst_weight(make_code("cyclic-mds", n=5, s=2), [[0, 1]]) > 1
    True
    """
    n = code.n_workers
    worst = max(float(np.abs(code.decode(np.setdiff1d(np.arange(n), S)).weights).max())
                for S in straggler_sets)
    return worst * float(np.abs(code.B).max())


def _exact_row(ctx) -> Claim:
    """Every set of ``n - s`` workers of every valid ``(n, s)``, ``n <= 9`` (quick) / ``11``."""
    top = 9 if ctx.quick else 11
    pairs = [(n, s) for n in range(2, top + 1) for s in range(1, n) if (n + s) % 2]
    bad = total = 0
    for n, s in pairs:
        code = make_code("cyclic-mds", n=n, s=s)
        for K in combinations(range(n), n - s):
            bad += not code.decode(K).exact
            total += 1
    return Claim(
        "abstract", "gradient codes from cyclic MDS codes: with s + 1 partitions per worker, "
        "the full gradient from any n - s workers", "any n - s", f"{total - bad} of {total} "
        "sets exact", holds(bad == 0),
        f"rule: every set of n - s workers of every (n, s) with n + s odd, 2 <= n <= {top} "
        f"({len(pairs)} codes), decoded exactly (|w B - 1| within the exactness tolerance)",
        paper=CITE, kind="statement",
        setting="stand-in: our real BCH construction, from the definition (the paper's text "
        "was not read); n + s odd only, since no real cyclic MDS code containing 1 exists for "
        "n + s even")


def _small_weights_row() -> Check:
    ratios = {}
    for n, s in SMALL_WEIGHTS:
        sets = list(combinations(range(n), s))
        mds = worst_weight(make_code("cyclic-mds", n=n, s=s), sets)
        ratios[(n, s)] = max(mds / worst_weight(make_code("gc-cr", n=n, s=s, seed=seed), sets)
                             for seed in range(3))
    worst = max(ratios, key=ratios.get)
    return Check(
        "cyclic-mds vs gc-cr (ours: the abstract claims no conditioning)", "cyclic-mds's "
        "decoding weights below gc-cr's (Tandon et al.'s random construction), small n",
        "smaller weights", f"max ratio {ratios[worst]:.2f} at (n, s) = {worst}",
        holds(ratios[worst] < 1),
        "rule: max |w| max |B| over every straggler set of size s, cyclic-mds below gc-cr's "
        f"for each of 3 seeds of gc-cr, at (n, s) = {', '.join(map(str, SMALL_WEIGHTS))}")


def _large_weights_row() -> Check:
    n, s = LARGE
    mds_code = make_code("cyclic-mds", n=n, s=s)
    mds = worst_weight(mds_code, [np.arange(s)])
    cr = worst_weight(make_code("gc-cr", n=n, s=s), [np.arange(s)])
    exact = mds_code.decode(np.arange(s, n)).exact
    return Check(
        "cyclic-mds vs gc-cr (ours: the abstract claims no conditioning)", f"cyclic-mds's "
        f"decoding weights at most gc-cr's at larger n (n = {n}, s = {s}, the {s} consecutive "
        f"stragglers 0..{s - 1})", "smaller weights", f"{mds:.2g} vs gc-cr {cr:.2g}",
        holds(mds <= cr),
        f"rule: cyclic-mds's max |w| max |B| at most gc-cr's on this straggler set.  Measured "
        f"{mds / cr:.3g} x gc-cr's: with s consecutive stragglers the decoder inverts a "
        "Vandermonde-like system on clustered roots of unity, ill-conditioned as n and s grow "
        f"(still {'exact' if exact else 'NOT exact'} in float64 here; gradcode refuses the "
        "(n, s) where it is not, e.g. n = 256, s = 15); gc-cr's local search bounds its B")


def _random_sets(rng, n: int, s: int, count: int) -> list[np.ndarray]:
    return [np.sort(rng.choice(n, n - s, replace=False)) for _ in range(count)]


def _versus_bgc(ctx, method) -> dict:
    """Mean error of expander and bgc at ``d = 2, 4, 6`` (n = 24, 6 stragglers), the same
    random sets; bgc a fresh seed per set."""
    n, s, count = 24, 6, 100 if ctx.quick else 1000
    rng = np.random.default_rng([ctx.seed, 18, 2])
    sets = _random_sets(rng, n, s, count)
    out = {}
    for d in (2, 4, 6):
        exp = make_code("expander", n=n, d=d, seed=ctx.seed)     # its own decoder: one-step
        e = np.mean([exp.decode(R, method=None if method == "one-step" else method).error
                     for R in sets])
        b = np.mean([make_code("bgc", n=n, d=d, seed=i).decode(R, method=method).error
                     for i, R in enumerate(sets)])
        out[d] = (float(e), float(b))
    return out


def _versus_rows(ctx) -> list[Check]:
    rows = []
    for method, how in (("one-step", "both decoded by the fixed scaling (one-step)"),
                        ("optimal", "both decoded by least squares")):
        errs = _versus_bgc(ctx, method)
        rows.append(Check(
            "expander vs bgc (ours: no paper compares them)", f"at equal load d/n the "
            f"expander code's error below the Bernoulli code's (Charles et al. 2017), {how}",
            "expander < bgc", "; ".join(f"d={d}: {e:.3g} vs {b:.3g}"
                                        for d, (e, b) in errs.items()),
            holds(all(e < b for e, b in errs.values())),
            "rule: mean error over the same random sets of 6 stragglers of n = 24 below "
            "bgc's (a fresh bgc seed per set) at every d = 2, 4, 6"))
    return rows


def claims(ctx) -> list[Claim]:
    """The rows of Raviv et al. 2018 (module docstring): the claims, then our checks (five
    claims and four checks; ``gradcode reproduce literature`` writes them, and
    tests/test_literature_authors.py reads them from its quick run)."""
    got = authors_comparison(ctx)
    rows = [_construction_row(ctx, got), _upper_row(ctx, got), _lower_row(ctx),
            _degradation_row(ctx, got), _exact_row(ctx), _small_weights_row(),
            _large_weights_row(), *_versus_rows(ctx)]
    for c in rows:
        c.paper = CITE
    return rows
