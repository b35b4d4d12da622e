"""Charles, Papailiopoulos, Ellenberg, "Approximate gradient coding via sparse random graphs"
(2017, arXiv:1711.06771): the ledger rows of ``bgc`` and ``frc-approx``.

The paper's text was not available to us (``gradcode.codes`` -- ``bgc``, ``frc-approx`` -- says
so): the statements checked are those of issue 22 and of the codes' docstrings, derived from
the definitions, so no row cites a theorem number.  Every verdict is computed:

* one-step decoding ``w = n / (d r) 1_R`` is unbiased over uniformly random straggler sets of a
  fixed size: exhaustively, ``E_R[w B] = colsum(B) / d`` (all ones for FRC), and over ``B`` too
  for BGC (Monte Carlo over seeds: ``E[colsum] = d``);
* its mean squared error equals the closed form of ``gradcode.codes`` (BGC: a hypergeometric
  variance plus the bias; FRC: ``n (n - d)(n - r) / (d r (n - 1))``), exhaustively;
* optimal (least-squares) decoding is never worse than one-step, on every received set;
* FRC is exact iff every group has a survivor, with error ``d`` per group without one;
* the headline: the decoding error of approximate codes falls as the load ``d`` grows (mean
  optimal error over random straggler sets, ``ranks``).
"""

from __future__ import annotations

from itertools import combinations

import numpy as np

from ...codes import make_code
from .. import Claim, holds, ranks, within

CITE = "Charles et al. 2017"
#: small codes decoded on every received set: (name, params)
SMALL = (("bgc", {"n": 8, "d": 3, "seed": 0}), ("bgc", {"n": 8, "d": 3, "seed": 1}),
         ("bgc", {"n": 7, "d": 2, "seed": 5}), ("frc-approx", {"n": 8, "d": 2}),
         ("frc-approx", {"n": 8, "d": 4}), ("frc-approx", {"n": 6, "d": 3}))
TOL = 1e-9


def _sets(n: int, r: int) -> list[np.ndarray]:
    return [np.array(R, int) for R in combinations(range(n), r)]


def _one_step_stats(code) -> tuple[float, float]:
    """Over every received set of every size ``1..n``: the largest ``|E_R[w B] - colsum / d|``
    (one-step decoding's bias for this ``B``) and the largest relative gap between the mean
    squared error and its closed form (``_mse_formula``)."""
    n, d, m = code.n_workers, code.d, code.B.sum(axis=0)
    bias = gap = 0.0
    for r in range(1, n + 1):
        decs = [code.decode(R, method="one-step") for R in _sets(n, r)]
        mean = np.mean([x.recovered for x in decs], axis=0)
        bias = max(bias, float(np.abs(mean - m / d).max()))
        err, formula = np.mean([x.error for x in decs]), _mse_formula(n, d, r, m)
        gap = max(gap, abs(err - formula) / max(formula, 1e-12))
    return bias, gap


def _mse_formula(n: int, d: int, r: int, m: np.ndarray) -> float:
    """``sum_j c^2 r (m_j/n)(1 - m_j/n)(n - r)/(n - 1) + (m_j/d - 1)^2``, ``c = n / (d r)``."""
    c = n / (d * r)
    var = r * (m / n) * (1 - m / n) * (n - r) / max(n - 1, 1)
    return float(np.sum(c ** 2 * var + (m / d - 1) ** 2))


def _unbiased_rows(stats) -> list[Claim]:
    bias = max(b for (_, _), (b, _) in stats)
    frc = max(b for (name, _), (b, _) in stats if name == "frc-approx")
    return [Claim(
        "one-step decoding", "one-step decoding (the received sum times n / (d r)) is unbiased "
        "over uniformly random straggler sets of a fixed size: E_R[w B] = colsum(B) / d, all "
        "ones for FRC", "E[g^] = g", f"max |E_R[w B] - colsum/d| = {bias:.1e} (FRC: |.. - 1| = "
        f"{frc:.1e})", holds(bias <= TOL, qualitative=False),
        f"rule: exact expectation over every received set of every size r = 1..n of "
        f"{len(stats)} codes ({_names(stats)}) within {TOL:g}; the paper's text was not "
        "available, the statement is issue 22's", paper=CITE)]


def _names(stats) -> str:
    return ", ".join(f"{name}({', '.join(f'{k}={v}' for k, v in p.items())})"
                     for (name, p), _ in stats)


def _over_b_row(ctx) -> Claim:
    """BGC over its own randomness: the mean of ``colsum(B) / d`` over many seeds is 1."""
    n, d, seeds = 10, 2, 200 if ctx.quick else 2000
    cols = np.concatenate([make_code("bgc", n=n, d=d, seed=s).B.sum(axis=0)
                           for s in range(seeds)]) / d
    mean, se = float(cols.mean()), float(cols.std() / np.sqrt(cols.size))
    return Claim(
        "one-step decoding", "BGC's one-step decoding is unbiased over the code and the "
        "stragglers together: E_B[colsum(B)] = d (each entry Bernoulli(d/n))", 1.0, mean,
        within(mean, 1 - 4 * se, 1 + 4 * se, qualitative=False),
        f"rule: mean of colsum(B)/d over {seeds} seeds of bgc(n={n}, d={d}) within 4 standard "
        f"errors ({se:.2g}) of 1", paper=CITE, fmt="{:.4f}")


def _mse_rows(stats) -> list[Claim]:
    rows = []
    for name, what in (("bgc", "sum_j c^2 r (m_j/n)(1 - m_j/n)(n - r)/(n - 1) + (m_j/d - 1)^2, "
                        "c = n/(d r), m = colsum(B)"), ("frc-approx", "n (n - d)(n - r) / "
                                                         "(d r (n - 1))")):
        mine = [(key, s) for key, s in stats if key[0] == name]
        gap = max(g for _, (_, g) in mine)
        rows.append(Claim(
            "one-step decoding", f"{name}: the mean squared error of one-step decoding over "
            f"uniformly random straggler sets of size n - r is {what}", "closed form",
            f"max relative gap {gap:.1e}", holds(gap <= TOL, qualitative=False),
            f"rule: exhaustive mean over every received set of each size r = 1..n equals the "
            f"closed form within {TOL:g} ({_names(mine)}); the closed form is gradcode.codes' "
            "derivation (the paper's text was not available)", paper=CITE))
    return rows


def _optimal_row() -> Claim:
    """Least squares against one-step on every received set (of every size) of ``SMALL``."""
    worse, total = 0, 0
    for name, p in SMALL:
        code = make_code(name, **p)
        n = code.n_workers
        for r in range(1, n + 1):
            for R in _sets(n, r):
                opt = code.decode(R, method="optimal").error
                worse += opt > code.decode(R, method="one-step").error + TOL
                total += 1
    return Claim(
        "optimal decoding", "optimal (least-squares) decoding is never worse than one-step "
        "decoding", "error_opt <= error_one-step on every set", f"{worse} of {total} sets worse",
        holds(worse == 0, qualitative=False), f"rule: no received set (every set of every size "
        f"of the {len(SMALL)} small codes) where least squares exceeds one-step by {TOL:g}",
        paper=CITE)


def _frc_row() -> Claim:
    """FRC's own decoder on every received set: exact iff every group survives, error ``d``
    per group without a survivor."""
    bad, total = 0, 0
    for p in ({"n": 8, "d": 2}, {"n": 8, "d": 4}, {"n": 6, "d": 3}, {"n": 9, "d": 3}):
        code, n, d = make_code("frc-approx", **p), p["n"], p["d"]
        for r in range(n + 1):
            for R in _sets(n, r):
                dead = n // d - len(np.unique(R // d))
                dec = code.decode(R)
                bad += dec.exact != (dead == 0) or abs(dec.error - d * dead) > TOL
                total += 1
    return Claim(
        "frc-approx", "FRC decodes exactly iff every group of d workers has a survivor; "
        "otherwise its error is d x (groups without a survivor)", "exact iff every group "
        "survives; error = d x dead groups", f"{bad} of {total} sets differ",
        holds(bad == 0, qualitative=False), "rule: every received set of frc-approx with (n, d) "
        "= (8, 2), (8, 4), (6, 3), (9, 3), its own decoder", paper=CITE)


def decay(ctx, name: str, n: int, ds, stragglers: int, sets: int) -> dict:
    """Mean optimal decoding error of ``name`` at each ``d`` in ``ds`` over ``sets`` random
    straggler sets of size ``stragglers`` (the same sets at every ``d``; BGC: a fresh seed per
    set, so the mean is over the code's randomness too).

    >>> from gradcode.experiments import Context
    >>> errs = decay(Context(progress=False), "frc-approx", 8, (2, 4), 4, 50)
    >>> errs[2] > errs[4]
    True
    """
    rng = np.random.default_rng([ctx.seed, 22, n])
    drawn = [np.sort(rng.choice(n, n - stragglers, replace=False)) for _ in range(sets)]
    out = {}
    for d in ds:
        codes = ([make_code("bgc", n=n, d=d, seed=i) for i in range(sets)] if name == "bgc"
                 else [make_code(name, n=n, d=d)] * sets)
        out[d] = float(np.mean([c.decode(R, method="optimal").error
                                for c, R in zip(codes, drawn)]))
    return out


def _decay_rows(ctx) -> list[Claim]:
    n, sets = 24, 100 if ctx.quick else 1000
    ds, s = (1, 2, 3, 4, 6), n // 2
    rows = []
    for name in ("bgc", "frc-approx"):
        errs = decay(ctx, name, n, ds, s, sets)
        rows.append(Claim(
            "headline", f"{name}: the decoding error of approximate gradient codes decays as "
            "the load d grows", "falls with d", " > ".join(f"{errs[d]:.3g} (d={d})" for d in ds),
            ranks(errs, sorted(ds, reverse=True)),
            f"rule: mean optimal decoding error over {sets} random sets of {s} stragglers out "
            f"of n = {n} (the same sets at every d) strictly falls along d = "
            f"{', '.join(map(str, ds))}", paper=CITE))
    return rows


def claims(ctx) -> list[Claim]:
    """The rows of Charles et al. 2017 (module docstring).

    >>> from gradcode.experiments import Context
    >>> rows = claims(Context(quick=True, progress=False))
    >>> len(rows), {c.paper for c in rows}
    (8, {'Charles et al. 2017'})
    """
    stats = [((name, p), _one_step_stats(make_code(name, **p))) for name, p in SMALL]
    return (_unbiased_rows(stats) + [_over_b_row(ctx)] + _mse_rows(stats)
            + [_optimal_row(), _frc_row()] + _decay_rows(ctx))
