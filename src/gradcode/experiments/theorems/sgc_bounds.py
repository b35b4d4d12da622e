"""Paper 4, App. F: the lower bounds on the load of any tolerant scheme (Thm F.1, eq. 2; Thm
F.2, eq. 3), their proofs' periodic patterns, and M-SGC's optimality (Remark F.1, 3.4)
(``theorems``; see ``sgc_common``)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ...analysis import load_lower_bound_f1, load_lower_bound_f2
from ._framework import Evidence, Tally, statement
from .sgc_common import P4, TOL, arbitrary, bursty, eq1, eq2, eq3, s_printed


# ----------------------------------------------------------------- Thm F.1, F.2
def periodic_pattern(n: int, B: int, period: int, lam: int, periods: int) -> np.ndarray:
    """Fig. 8 / 9 / 10: workers ``0 .. λ-1`` straggle in the first ``B`` rounds of every period
    of ``period`` rounds (every round when ``B = period``)."""
    S = np.zeros((period * periods, n), bool)
    for k in range(periods):
        S[k * period:k * period + B, :lam] = True
    return S


def bound_from_pattern(S: np.ndarray, period: int) -> Fraction | None:
    """The proof's count: per period, ``period`` jobs share the period's non-straggling
    worker-rounds, so ``L >= period / free`` (None: no free worker-round)."""
    free = int((~S[:period]).sum())
    return Fraction(period, free) if free else None


def lower_bound_check(tally: Tally, which: str, grid, printed, library, conforms) -> None:
    """Thm F.1 / F.2 over ``grid`` of ``(n, B or N, W or W', λ)``: the proof's periodic pattern
    conforms to the model (``conforms``), its count equals the printed bound, and so does
    ``library`` (gradcode, vectorised)."""
    grid = list(grid)
    arr = np.array(grid).T
    lib = np.asarray(library(*arr), float)
    for (n, b, w, lam), got in zip(grid, lib):
        period = w - 1 + b if which == "F.1" and b < w else w
        S = periodic_pattern(n, b if b < period else period, period, lam, 3)
        if which == "F.1" and b == w:
            S = periodic_pattern(n, 1, 1, lam, 3 * w)                  # Fig. 9: always
            period = 1
        what = f"Thm {which}, n={n}, {'B' if which == 'F.1' else 'N'}={b}, W={w}, λ={lam}"
        if not conforms(S[None], n, b, w, lam)[0]:
            tally.add(["the proof's periodic pattern breaks the model"], what)
            continue
        count = bound_from_pattern(S, period)
        want = printed(n, b, w, lam)
        problems = []
        if count != want:
            problems.append(f"counting gives {count}, printed bound {want}")
        if (want is None) != np.isinf(got) or (want is not None
                                                 and abs(got - float(want)) > TOL):
            problems.append(f"gradcode {got}, printed {want}")
        tally.add(problems, what)


def consistency(tally: Tally, which: str, n_max: int) -> None:
    """Schemes the paper proves tolerant never beat Thm F.1's eq. 2 (M-SGC, eq. 1; SR-SGC,
    (s+1)/n; GC with s = λ) or Thm F.2's eq. 3 (M-SGC with N = B, W' = W+B-1; GC with
    s = λ', which tolerates λ' stragglers in any round)."""
    for n in range(1, n_max + 1):
        for W in range(2, 10):
            for B in range(1, W):
                for lam in range(0, n + 1):
                    bound = eq2(n, B, W, lam) if which == "F.1" else eq3(n, B, W + B - 1, lam)
                    loads = {"M-SGC": eq1(n, B, W, lam)}
                    if (which == "F.1" and (W - 1) % B == 0 and lam >= 1
                            and s_printed(B, W, lam) < n):
                        loads["SR-SGC"] = Fraction(s_printed(B, W, lam) + 1, n)
                    if lam < n:
                        loads["GC s = λ"] = Fraction(lam + 1, n)
                    tally.add([f"{k} load {v} below the bound {bound}" for k, v in loads.items()
                               if v < bound], f"Thm {which}: n={n}, B={B}, W={W}, λ={lam}")


@statement(P4, "Thm F.1", "any scheme tolerating the (B, W, λ)-bursty model with finite T has "
                          "load L >= (W-1+B)/(n(W-1)+B(n-λ)) if B < W, 1/(n-λ) if B = W (eq. 2)")
def thm_f1(ctx) -> Evidence:
    tally = Tally()
    n_max, W_max = (10, 6) if ctx.quick else (16, 8)
    grid = [(n, B, W, lam) for n in range(1, n_max + 1) for W in range(1, W_max + 1)
            for B in range(1, W + 1) for lam in range(0, n + 1)]
    lower_bound_check(tally, "F.1", grid, eq2, load_lower_bound_f1,
                      lambda S, n, b, w, lam: bursty(S, b, w, lam))
    consistency(tally, "F.1", 6 if ctx.quick else 10)
    S = periodic_pattern(20, 3, 6, 4, 3)
    tally.typical = (f"n=20, B=3, W=4, λ=4: Fig. 8's pattern (workers 0-3 late 3 rounds in 6) "
                     f"conforms, 6 jobs per {int((~S[:6]).sum())} free worker-rounds: bound "
                     f"{bound_from_pattern(S, 6)} = eq. 2")
    return tally.evidence(f"n <= {n_max}, 1 <= B <= W <= {W_max}, every λ: Fig. 8 / 9's periodic "
                          "pattern conforms, its counting bound = eq. 2 = load_lower_bound_f1; "
                          "M-SGC, SR-SGC and GC (s = λ) loads never below it")


@statement(P4, "Thm F.2", "any scheme tolerating the (N, W', λ')-arbitrary model with finite T "
                          "has load L >= W'/(n(W'-N)+N(n-λ')) if N < W', 1/(n-λ') if N = W' "
                          "(eq. 3)")
def thm_f2(ctx) -> Evidence:
    tally = Tally()
    n_max, W_max = (10, 6) if ctx.quick else (16, 8)
    grid = [(n, N, W, lam) for n in range(1, n_max + 1) for W in range(1, W_max + 1)
            for N in range(0, W + 1) for lam in range(0, n + 1)]
    lower_bound_check(tally, "F.2", grid, eq3, load_lower_bound_f2,
                      lambda S, n, N, w, lam: arbitrary(S, N, w, lam))
    consistency(tally, "F.2", 6 if ctx.quick else 10)
    tally.typical = "n=4, N=1, W'=2, λ'=4: Fig. 10's pattern conforms, bound 1/2"
    return tally.evidence(f"n <= {n_max}, 0 <= N <= W' <= {W_max}, every λ': Fig. 10's periodic "
                          "pattern conforms, its counting bound = eq. 3 = load_lower_bound_f2; "
                          "M-SGC (N = B, W' = W+B-1) and GC (s = λ') loads never below it")


# ----------------------------------------------------------------- Remark F.1 / 3.4
@statement(P4, "Remark F.1, 3.4", "M-SGC is optimal (eq. 1 = eq. 2, and = eq. 3 with N = B, "
                                  "W' = W+B-1) when λ = n-1 or n, and its gap to the bound "
                                  "falls as O(1/W)")
def remark_f1(ctx) -> Evidence:
    tally = Tally()
    n_max, W_max = (16, 60) if ctx.quick else (40, 400)
    for n in range(1, n_max + 1):
        for B in range(1, 6):
            W = np.arange(B + 1, W_max + 1)
            K = W - 1
            lam = np.arange(0, n + 1)[:, None]
            a = np.where(lam == n, K + B, (lam + 1) * (K + B))           # eq. 1 = a / b
            b = np.where(lam == n, n * K, n * (B + K * (lam + 1)))
            c, d = K + B, n * K + B * (n - lam)                            # eq. 2 = c / d
            e, f = W + B - 1, n * (W - 1) + B * (n - lam)                  # eq. 3, N = B
            a, b, c, d = np.broadcast_arrays(a, b, c, d)
            tally.add((c * f != e * d).ravel(), lambda k: f"n={n}, B={B}: eq. 2 != eq. 3")
            opt = np.broadcast_to((lam == n - 1) | (lam == n), a.shape)
            tally.add((a * d != c * b)[opt], lambda k: f"n={n}, B={B}: not optimal at λ >= n-1")
            tally.add((a * d < c * b).ravel(), lambda k: f"n={n}, B={B}: eq. 1 below eq. 2")
            gap = a / b - c / d                                            # O(1/W): K gap <= C
            lamf = np.minimum(lam, n - 1)
            C = B * (1 + B) * lamf * (n - lamf - 1) / (n * n * (lamf + 1))
            tally.add((K * gap > C + 1e-12).ravel(),
                      lambda k: f"n={n}, B={B}: (W-1) x gap above B(1+B)λ(n-λ-1)/(n²(λ+1))")
    tally.typical = "n=20, B=3, λ=4: (W-1) x gap -> 3·4·15/(400·5) = 0.09"
    return tally.evidence(f"exact integer comparisons, n <= {n_max}, B <= 5, W <= {W_max}, every "
                          "λ; O(1/W) as (W-1)(eq. 1 - eq. 2) <= B(1+B)λ(n-λ-1)/(n²(λ+1))")
