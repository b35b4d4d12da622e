"""Bitar, Wootters, El Rouayheb, "Stochastic gradient coding for straggler mitigation in
distributed learning" (2020): the rows of ``stochastic-gc``, all of them the project's checks.

Only the abstract could be found ("an approximate gradient coding scheme called Stochastic
Gradient Coding (SGC), which works when the stragglers are random"); it states no number and no
statement we can test, and no authors' code was found.  ``gradcode.codes._stochastic`` derives
the code, its decoder and the identities below from the definition stated in the issue, so
every row is a ``Check``.  Every verdict is computed, exactly: each worker a straggler
independently with probability ``p``, every one of the ``2^n`` straggler patterns ``S`` weighted
by ``p^|S| (1 - p)^(n - |S|)``, decoded by the code's own decoder (``1 / (d (1 - p))`` times the
received sum):

* unbiasedness, ``E[w B] = 1``: the largest ``|E[w B]_j - 1|`` over the codes of ``CASES`` is at
  most 1e-12;
* the decoding error ``E||w B - 1||^2 = k p / (d (1 - p))`` (each partition's coefficient is
  ``Binomial(d, 1 - p) / (d (1 - p))``): one row per case, within a relative 1e-9.
"""

from __future__ import annotations

import numpy as np

from ...registry import make_code
from .. import Check, holds

CITE = "Bitar et al. 2020"
#: (n, d, p) of the codes enumerated (2^n patterns each); the seed is the context's
CASES = ((8, 2, 0.2), (10, 3, 0.3), (9, 1, 0.1), (6, 6, 0.5), (10, 5, 0.8))
QUICK_CASES = CASES[:3]
TOL = 1e-12
#: relative tolerance of the error rows (an exact identity, up to rounding)
GAP = 1e-9


def moments(ctx) -> list[tuple[tuple, np.ndarray, float, float]]:
    """``((n, d, p), E[w B], E||w B - 1||^2, k p / (d (1 - p)))`` per case, the expectations by
    enumeration (``StochasticGC.moments``)."""
    out = []
    for n, d, p in QUICK_CASES if ctx.quick else CASES:
        code = make_code("stochastic-gc", n=n, d=d, p=p, seed=ctx.seed)
        mean, err = code.moments()
        out.append(((n, d, p), mean, err, code.expected_error))
    return out


def claims(ctx) -> list[Check]:
    """The rows (module docstring), all checks: unbiasedness, then the error formula per case.

    >>> from gradcode.experiments import Context
    >>> rows = claims(Context(quick=True, seed=0, progress=False))
    >>> [c.verdict for c in rows]
    ['reproduced', 'reproduced', 'reproduced', 'reproduced']
    """
    got = moments(ctx)
    bias = max(float(np.abs(mean - 1.0).max()) for _, mean, _, _ in got)
    cases = ", ".join(f"({n}, {d}, {p:g})" for (n, d, p), *_ in got)
    rows = [Check(
        "stochastic-gc: unbiasedness (ours)", "the decoded gradient is unbiased under "
        "independent stragglers of probability p: E[w B] = 1 with w = 1 / (d (1 - p))"
        " on every received worker",
        "E[w B] = 1", f"max |E[w B] - 1| = {bias:.1e}", holds(bias <= TOL),
        f"rule: exact expectation over all 2^n straggler patterns of stochastic-gc (n, d, p) = "
        f"{cases} at most {TOL:g} from 1; the statement is the issue's, the paper's text was not "
        "available")]
    for (n, d, p), _, err, formula in got:
        gap = abs(err - formula) / max(formula, TOL)
        rows.append(Check(
            "stochastic-gc: decoding error (ours)",
            f"E||w B - 1||^2 = k p / (d (1 - p)) (n = k = {n}, d = {d}, "
            f"p = {p:g})", formula, err, holds(gap <= GAP),
            f"rule: exact expectation over all 2^n straggler patterns within a relative {GAP:g} "
            f"of the formula (gap {gap:.1e}); the formula is derived from the definition "
            "(Binomial(d, 1 - p) received holders per partition)", fmt="{:.10g}"))
    for c in rows:
        c.paper = CITE
    return rows
