"""Charles, Papailiopoulos, Ellenberg, "Approximate gradient coding via sparse random graphs"
(2017, arXiv:1711.06771): the rows of ``bgc`` and ``frc-approx``.

The paper's text was not available to us (``gradcode.codes._approximate`` says so), so its
statements cannot be claims here: what ``gradcode.codes`` derives from the codes' definitions
(issue 22) is checked as the project's own ``Check`` rows.  The one Claim is approximate FRC
against the authors' code of its follow-up, ErasureHead (Wang, Charles, Papailiopoulos 2019;
``hwang595/ErasureHead`` ``src/approximate_coding.py``, commit 22e792f): there the ``n`` workers
form groups of ``s + 1``, every worker of a group holds the group's ``s + 1`` partitions
(``idx = (s+1) a + (b + i) % (s+1)``) and sends the plain sum of their gradients, and the master
adds the first message it receives from each group, unscaled, until it has ``num_collect``
workers or every group (``erasurehead_*``, written from our reading, none of it copied).  Our
``frc-approx`` must give the same ``B`` and the same decoded sum on every received set (its own
decoder takes a random survivor of each group: the same sum).

Checks (every verdict computed):

* one-step decoding ``w = n / (d r) 1_R`` is unbiased over uniformly random straggler sets of a
  fixed size: exhaustively, ``E_R[w B] = colsum(B) / d`` (all ones for FRC), and over ``B`` too
  for BGC (Monte Carlo over seeds: ``E[colsum] = d``);
* its mean squared error equals the closed form of ``gradcode.codes`` (BGC: a hypergeometric
  variance plus the bias; FRC: ``n (n - d)(n - r) / (d r (n - 1))``), exhaustively;
* optimal (least-squares) decoding is never worse than one-step, on every received set;
* the decoding error of approximate codes falls as the load ``d`` grows (mean optimal error
  over random straggler sets, ``ranks``).
"""

from __future__ import annotations

from itertools import combinations

import numpy as np

from ...registry import make_code
from .. import Check, Claim, holds, ranks, within

CITE = "Charles et al. 2017"
ERASUREHEAD = "Wang et al. 2019 (ErasureHead)"
EH_SOURCE = "code: hwang595/ErasureHead src/approximate_coding.py"
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
    return [Check(
        "frc-approx, bgc: one-step decoding (ours)",
        "one-step decoding (the received sum times n / (d r)) is unbiased "
        "over uniformly random straggler sets of a fixed size: E_R[w B] = colsum(B) / d, all "
        "ones for FRC", "E[g^] = g", f"max |E_R[w B] - colsum/d| = {bias:.1e} (FRC: |.. - 1| = "
        f"{frc:.1e})", holds(bias <= TOL),
        f"rule: exact expectation over every received set of every size r = 1..n of "
        f"{len(stats)} codes ({_names(stats)}) within {TOL:g}; the paper's text was not "
        "available, the statement is issue 22's")]


def _names(stats) -> str:
    return ", ".join(f"{name}({', '.join(f'{k}={v}' for k, v in p.items())})"
                     for (name, p), _ in stats)


def _over_b_row(ctx) -> Claim:
    """BGC over its own randomness: the mean of ``colsum(B) / d`` over many seeds is 1."""
    n, d, seeds = 10, 2, 200 if ctx.quick else 2000
    cols = np.concatenate([make_code("bgc", n=n, d=d, seed=s).B.sum(axis=0)
                           for s in range(seeds)]) / d
    mean, se = float(cols.mean()), float(cols.std() / np.sqrt(cols.size))
    return Check(
        "bgc: one-step decoding (ours)",
        "BGC's one-step decoding is unbiased over the code and the "
        "stragglers together: E_B[colsum(B)] = d (each entry Bernoulli(d/n))", 1.0, mean,
        within(mean, 1 - 4 * se, 1 + 4 * se),
        f"rule: mean of colsum(B)/d over {seeds} seeds of bgc(n={n}, d={d}) within 4 standard "
        f"errors ({se:.2g}) of 1", fmt="{:.4f}")


def _mse_rows(stats) -> list[Claim]:
    rows = []
    for name, what in (("bgc", "sum_j c^2 r (m_j/n)(1 - m_j/n)(n - r)/(n - 1) + (m_j/d - 1)^2, "
                        "c = n/(d r), m = colsum(B)"), ("frc-approx", "n (n - d)(n - r) / "
                                                         "(d r (n - 1))")):
        mine = [(key, s) for key, s in stats if key[0] == name]
        gap = max(g for _, (_, g) in mine)
        rows.append(Check(
            f"{name}: one-step decoding (ours)",
            f"{name}: the mean squared error of one-step decoding over "
            f"uniformly random straggler sets of size n - r is {what}", "closed form",
            f"max relative gap {gap:.1e}", holds(gap <= TOL),
            f"rule: exhaustive mean over every received set of each size r = 1..n equals the "
            f"closed form within {TOL:g} ({_names(mine)}); the closed form is gradcode.codes' "
            "derivation (the paper's text was not available)"))
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
    return Check(
        "frc-approx, bgc: optimal decoding (ours)",
        "optimal (least-squares) decoding is never worse than one-step "
        "decoding", "error_opt <= error_one-step on every set", f"{worse} of {total} sets worse",
        holds(worse == 0), f"rule: no received set (every set of every size "
        f"of the {len(SMALL)} small codes) where least squares exceeds one-step by {TOL:g}")


def erasurehead_B(n: int, s: int) -> np.ndarray:
    """ErasureHead's placement: worker ``rank - 1`` (group ``a``, place ``b`` in it) holds
    partitions ``(s+1) a + (b + i) % (s+1)``, ``i = 0..s``, and sends their plain sum.

    >>> erasurehead_B(4, 1).astype(int).tolist()
    [[1, 1, 0, 0], [1, 1, 0, 0], [0, 0, 1, 1], [0, 0, 1, 1]]
    """
    B = np.zeros((n, n))
    for worker in range(n):
        a, b = divmod(worker, s + 1)
        for i in range(s + 1):
            B[worker, (s + 1) * a + (b + i) % (s + 1)] = 1.0
    return B


def erasurehead_decode(order, n: int, s: int, num_collect: int) -> tuple[np.ndarray, int]:
    """ErasureHead's master on workers arriving in ``order``: the first message of each group
    is added (weight 1), until ``num_collect`` workers or every group has arrived; ``(weights,
    workers collected)``.

    >>> w, got = erasurehead_decode([3, 2, 0, 1], 4, 1, 4)
    >>> w.tolist(), got
    ([1.0, 0.0, 0.0, 1.0], 3)
    """
    w, groups, got = np.zeros(n), set(), 0
    for worker in order:
        if got >= num_collect or len(groups) == n // (s + 1):
            break
        got += 1
        if worker // (s + 1) not in groups:
            groups.add(worker // (s + 1))
            w[worker] = 1.0
    return w, got


def erasurehead_differences(cases, rng) -> tuple[int, int]:
    """``(received sets where frc-approx's decoded sum or error differs from ErasureHead's,
    sets)``: every arrival count ``num_collect`` of a random arrival order, per code."""
    bad = total = 0
    for n, s in cases:
        code, ref = make_code("frc-approx", n=n, d=s + 1), erasurehead_B(n, s)
        bad += not np.array_equal(code.B, ref)
        for _ in range(20):
            order = rng.permutation(n)
            for k in range(n + 1):
                w, got = erasurehead_decode(order, n, s, k)
                mine = code.decode(np.sort(order[:got]))
                bad += not (np.allclose(mine.recovered, w @ ref, rtol=0, atol=TOL)
                            and abs(mine.error - np.sum((w @ ref - 1) ** 2)) <= TOL)
                total += 1
    return bad, total


def _erasurehead_row(ctx) -> Claim:
    cases = ((8, 1), (8, 3), (6, 2), (9, 2), (12, 3))
    bad, total = erasurehead_differences(cases, np.random.default_rng([ctx.seed, 22, 9]))
    return Claim(
        EH_SOURCE, "approximate FRC: groups of s + 1 workers holding the same s + 1 "
        "partitions, each sending their plain sum; the master adds the first message of each "
        "group, unscaled (exact iff every group has a survivor)",
        "B and the decoded sum as ErasureHead's", f"{bad} of {total} received sets differ",
        holds(bad == 0),
        "rule: frc-approx (d = s + 1) has ErasureHead's B, and its own decoder's w B and error "
        "equal ErasureHead's master on the workers it collected (every count num_collect = "
        f"0..n of 20 random arrival orders) within {TOL:g}, (n, s) = "
        f"{', '.join(map(str, cases))}", paper=ERASUREHEAD, kind="statement",
        setting="stand-in: (n, s) of our choosing; the decoding rule read from the authors' "
        "code, without its MPI cluster")


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
        rows.append(Check(
            f"{name}: error against load (ours)",
            f"{name}: the decoding error of approximate gradient codes decays as "
            "the load d grows", "falls with d", " > ".join(f"{errs[d]:.3g} (d={d})" for d in ds),
            ranks(errs, sorted(ds, reverse=True)),
            f"rule: mean optimal decoding error over {sets} random sets of {s} stragglers out "
            f"of n = {n} (the same sets at every d) strictly falls along d = "
            f"{', '.join(map(str, ds))}; the paper's text was not available"))
    return rows


def claims(ctx) -> list[Claim]:
    """The rows of Charles et al. 2017 (module docstring): our checks, and the one claim
    (ErasureHead's decoding).

    >>> from gradcode.experiments import Context
    >>> rows = claims(Context(quick=True, progress=False))
    >>> [(c.paper, c.verdict) for c in rows if type(c) is Claim], len(rows)
    ([('Wang et al. 2019 (ErasureHead)', 'reproduced')], 8)
    """
    stats = [((name, p), _one_step_stats(make_code(name, **p))) for name, p in SMALL]
    rows = (_unbiased_rows(stats) + [_over_b_row(ctx)] + _mse_rows(stats)
            + [_optimal_row(), _erasurehead_row(ctx)] + _decay_rows(ctx))
    for c in rows:
        c.paper = c.paper or CITE
    return rows
