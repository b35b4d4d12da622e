"""Paper 3, the completion time: eq. 3 (``T(B)``, Sec. III-C) computed here by definition, and
Sec. IV-B's Thm 5 (Alg. 1 attains the lower bound ``(s+1) k / sum c``) with its proof's bound
(``theorems``; see ``heter_common``)."""

from __future__ import annotations

from itertools import combinations, product

import numpy as np

from ...analysis import completion_time
from ...registry import make_code
from ._framework import Evidence, Tally, statement
from .heter_common import (TOL, cached_code, condition1, fmt_instance, fmt_sizes,
                           integer_instances, random_speed_instances, spans_one)


def worst_time(B, speeds, s: int) -> float:
    """Eq. 3 by definition: ``t_i = ||b_i||_0 / c_i``; for every ``S`` with ``|S| <= s``,
    ``T(B, S)`` is the least ``t_j`` such that ``1`` is in the span of the non-stragglers with
    ``t_i <= t_j`` (``inf`` if none); ``T(B)`` the largest over ``S``."""
    B = np.asarray(B, dtype=float)
    m = B.shape[0]
    t = (B != 0).sum(axis=1) / np.asarray(speeds, dtype=float)
    levels = np.unique(t)
    memo: dict[tuple[int, ...], bool] = {}

    def spans(rows):
        if rows not in memo:
            memo[rows] = spans_one(B[list(rows)])
        return memo[rows]

    worst = 0.0
    for size in range(min(s, m) + 1):
        for S in combinations(range(m), size):
            alive = np.ones(m, dtype=bool)
            alive[list(S)] = False
            T = next((float(lv) for lv in levels
                      if spans(tuple(np.flatnonzero(alive & (t <= lv)).tolist()))), np.inf)
            worst = max(worst, T)
    return worst


def eq3_fails(B, speeds, s: int) -> tuple[str, float]:
    """``completion_time`` vs eq. 3 computed here (``worst_time``): ``("", T)`` when equal."""
    ours, want = completion_time(B, speeds, s), worst_time(B, speeds, s)
    if ours == want or abs(ours - want) <= TOL * abs(want):
        return "", want
    return (f"B = {np.asarray(B).round(3).tolist()}, s = {s}, c = {np.round(speeds, 3).tolist()}:"
            f" completion_time {ours}, eq. 3 {want}"), want


@statement(3, "Eq. 3", "T(B) = max over |S| <= s of t_{j*}, j* the first worker (by t_i = "
                       "||b_i||_0 / c_i) whose non-straggler rows up to it span 1 "
                       "(gradcode's completion_time)")
def _eq3(ctx) -> Evidence:
    rng = np.random.default_rng(ctx.seed)
    t = Tally()
    finite = 0
    mats = []
    for _ in range(60 if ctx.quick else 600):
        m, k = int(rng.integers(2, 7)), int(rng.integers(1, 5))
        B = rng.integers(-1, 2, size=(m, k)) * rng.integers(1, 3, size=(m, k))
        mats.append((B, int(rng.integers(0, m)), rng.uniform(0.5, 4.0, m)))
    for speeds, s, k in random_speed_instances(ctx):
        mats.append((cached_code("heter", speeds, s, k, ctx.seed).B, s, np.array(speeds)))
        mats.append((cached_code("heter", speeds, s, k, ctx.seed).B, s,
                     rng.uniform(0.5, 4.0, len(speeds))))
    typical = ""
    for B, s, c in mats:
        bad, T = eq3_fails(B, c, s)
        t.count(1, bool(bad), bad)
        finite += np.isfinite(T)
        if not bad and np.isfinite(T) and len(set(np.round(c, 9))) == len(c) and s >= 1:
            typical = typical or (f"B = {np.asarray(B).round(2).tolist()}, s = {s}, c = "
                                  f"{np.round(c, 2).tolist()}: T(B) = {T:.4g}")
    return t.evidence(f"random integer B (m 2-6, k 1-4) and heter B with random speeds ({finite} "
                      "of them robust): eq. 3 over every |S| <= s", typical)


def thm5_fails(code, speeds, s: int, k: int) -> str:
    """``T(B) = (s+1) k / sum c`` by ``completion_time`` and by eq. 3 here."""
    bound = (s + 1) * k / sum(speeds)
    T1, T2 = completion_time(code, list(speeds), s), worst_time(code.B, speeds, s)
    if max(abs(T1 - bound), abs(T2 - bound)) > TOL * bound:
        return f"T(B) = {T1} (completion_time), {T2} (eq. 3), (s+1)k/sum c = {bound}"
    return ""


@statement(3, "Thm 5", "Alg. 1's B is optimal for problem (4): T(B) = (s+1) k / sum_i c_i, "
                       "every worker finishing together")
def _thm5(ctx) -> Evidence:
    t = Tally()
    for speeds, s, k in integer_instances(ctx):
        bad = thm5_fails(cached_code("heter", speeds, s, k, ctx.seed), speeds, s, k)
        t.count(1, bool(bad), lambda: f"{fmt_instance(speeds, s, k)}: {bad}")
    return t.evidence(f"heter on {fmt_sizes(ctx)} and random larger (integer quotas as the "
                      "theorem assumes); T(B) by completion_time and by eq. 3 here",
                      "speeds [1, 2, 3, 4, 4], s = 1, k = 7: T(B) = 1")


def lower_bound_fails(B, speeds, s: int) -> str:
    """The proof of Thm 5: ``T(B) >= (s+1) k / sum c`` whenever ``B`` satisfies Condition 1
    (``T(B)`` finite); ``""`` also when ``B`` is not robust."""
    B = np.asarray(B, dtype=float)
    T = worst_time(B, speeds, s)
    bound = (s + 1) * B.shape[1] / float(np.sum(speeds))
    if np.isfinite(T) and T < bound * (1 - TOL):
        return f"B = {B.round(3).tolist()}, c = {np.round(speeds, 3).tolist()}, s = {s}: " \
               f"T(B) = {T} < (s+1)k/sum c = {bound}"
    return ""


@statement(3, "Thm 5 (proof)", "every B satisfying Condition 1 has T(B) >= (s+1) k / sum_i c_i "
                               "(the lower bound Alg. 1 attains)")
def _thm5_bound(ctx) -> Evidence:
    rng = np.random.default_rng(ctx.seed)
    t = Tally()
    shapes = [(3, 2)] if ctx.quick else [(3, 2), (3, 3), (4, 2)]
    mats, typical = [], ""
    for m, k in shapes:
        for bits in product((0, 1), repeat=m * k):
            S = np.array(bits).reshape(m, k)
            if S.any(axis=0).all():
                mats += [S, S * rng.standard_normal((m, k))]   # 0/1 and generic coefficients
    for n in range(3, 7 if ctx.quick else 10):
        for s in range(n):
            mats += [make_code("gc-cr", n=n, s=s).B, make_code("gc-fr", n=n, s=s).B] \
                if n % (s + 1) == 0 else [make_code("gc-cr", n=n, s=s).B]
    for B in mats:
        m = B.shape[0]
        for s in range(m):
            if condition1(B, s) is not None:
                continue
            for c in (rng.uniform(0.5, 3.0, m), rng.integers(1, 4, m).astype(float)):
                bad = lower_bound_fails(B, c, s)
                t.count(1, bool(bad), bad)
                if not bad and B.shape == (3, 2) and s == 1 and not typical:
                    typical = (f"B = {np.round(B, 2).tolist()}, s = 1, c = "
                               f"{np.round(c, 2).tolist()}: T(B) = {worst_time(B, c, s):.4g} "
                               f">= {2 * 2 / c.sum():.4g}")
    return t.evidence(f"every support of shape {shapes} with 0/1 and with random coefficients, "
                      "and gc-cr/gc-fr, for every s they tolerate and two speed vectors each; "
                      "T(B) by eq. 3 here", typical)
