"""Paper 2 (IS-GC), Sec. VII-A: the bounds on the recovered gradients, ``α(G[W'])`` between
``min(⌈w/c⌉, ⌊n/c⌋)`` and ``min(w, ⌊n/c⌋)`` (Thm 10-11; ``gradcode.analysis.recovery_bounds``)
(``theorems``; see ``isgc_common``)."""

from __future__ import annotations

import numpy as np

from ...analysis import recovery_bounds
from ._framework import Evidence, Tally, statement
from .isgc_common import (alpha_fr_cr, alpha_of, cr_alpha, every_subset, fmt_hr, fmt_workers,
                          fr_cr_schemes, hr_graph, popcount, theorem6_range)


def bound_failures(alpha: np.ndarray, n: int, c: int, side: str) -> np.ndarray:
    """The received sets (bit masks) where Theorem 10 (``side="lower"``) or 11 (``"upper"``)
    fails: ``alpha(G[W']) >= min(ceil(w / c), floor(n / c))`` / ``<= min(w, floor(n / c))``."""
    S = every_subset(n)[1:]
    w = popcount(S).astype(int)
    if side == "lower":
        return S[alpha[S] < np.minimum(-(-w // c), n // c)]
    return S[alpha[S] > np.minimum(w, n // c)]


def _bounds_agree(n: int, c: int) -> list[int]:
    """The sizes ``w`` where gradcode's ``recovery_bounds`` is not the printed formula."""
    return [w for w in range(1, n + 1)
            if tuple(recovery_bounds(n, c, w)) != (min(-(-w // c), n // c), min(w, n // c))]


def _bound_check(ctx, side: str, schemes: str) -> Evidence:
    t = Tally()
    n_max = 10 if ctx.quick else 14
    tight = True
    configs = ([(k, n, c, None) for k, n, c in fr_cr_schemes(n_max)] if schemes == "FR, CR" else [])
    if schemes != "FR, CR" or side == "upper":
        configs += [("HR", n, c1 + c2, (c1, c2, g)) for n, c1, c2, g in theorem6_range(n_max)]
    for kind, n, c, hr in configs:
        if kind == "HR":
            A, _ = hr_graph(n, *hr)
            alpha = alpha_of(("hr", n, *hr), A)
            name = fmt_hr(n, *hr)
        else:
            alpha, name = alpha_fr_cr(kind, n, c), f"{kind}({n}, {c})"
        bad = bound_failures(alpha, n, c, side)
        t.count(2 ** n - 1, bad.size, lambda: f"{name}, W' = {fmt_workers(bad[0])}: alpha = "
              f"{alpha[bad[0]]}, bound " + ("min(ceil(w/c), floor(n/c)) = " if side == "lower"
                                            else "min(w, floor(n/c)) = ")
              + str(min(-(-popcount(bad[0]) // c), n // c) if side == "lower"
                    else min(popcount(bad[0]), n // c)))
        if kind != "HR":
            mism = _bounds_agree(n, c)
            t.count(n, len(mism), lambda: f"gradcode's recovery_bounds({n}, {c}, {mism[0]}) = "
                  f"{recovery_bounds(n, c, mism[0])}, not the printed formula")
            w = popcount(every_subset(n)[1:])
            ext = [alpha[1:][w == k].min() if side == "lower" else alpha[1:][w == k].max()
                   for k in range(1, n + 1)]
            want = [min(-(-k // c), n // c) if side == "lower" else min(k, n // c)
                    for k in range(1, n + 1)]
            tight &= ext == want
    return t.evidence(f"every {schemes}" + (" (and every HR of Thm 6's range)"
                                            if schemes == "FR, CR" and side == "upper" else "")
                      + f", n <= {n_max}, every W' (exact alpha); gradcode's recovery_bounds "
                      "against the printed formula" + ("; FR and CR attain it for every w"
                                                       if tight and schemes == "FR, CR" else ""),
                      _bound_example(7, 3, 4))


def _bound_example(n: int, c: int, w: int) -> str:
    alpha = cr_alpha(n, c)[1:][popcount(every_subset(n)[1:]) == w]
    lo, hi = recovery_bounds(n, c, w)
    return (f"CR({n}, {c}), w = {w}: alpha(G[W']) from {alpha.min()} to {alpha.max()}, "
            f"bounds [{lo}, {hi}]")


@statement(2, "Thm 10", "FR and CR: α(G[W']) >= min(⌈w/c⌉, ⌊n/c⌋) for every W' of w workers")
def _thm10(ctx) -> Evidence:
    return _bound_check(ctx, "lower", "FR, CR")


@statement(2, "Thm 10 (HR)", "HR(n, c1, c2), c = c1 + c2: α(G[W']) >= min(⌈w/c⌉, ⌊n/c⌋), the "
                             "bound of FR and CR")
def _thm10_hr(ctx) -> Evidence:
    return _bound_check(ctx, "lower", "HR of Thm 6's range")


@statement(2, "Thm 11", "FR, CR and HR: α(G[W']) <= min(w, ⌊n/c⌋) for every W' of w workers")
def _thm11(ctx) -> Evidence:
    return _bound_check(ctx, "upper", "FR, CR")
