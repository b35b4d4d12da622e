"""Paper 5, Sec. IV-B, CRC: the cycle classes of ``F_2^n`` (Lemma 1, their orders), the
invariance of the error over a class for a circulant ``B`` (Thm 2's proof) and Thm 2, for the
circulant CRC and for [2]'s (``theorems``; see ``approx_common``)."""

from __future__ import annotations

from math import comb

import numpy as np

from ...codes import from_matrix
from ._framework import Evidence, Tally, statement
from .approx_common import (N5, P_AS5, P_SS5, TOL, circulant, crc, cycle_classes, eq2_errors,
                            fmt_code, pq_pairs, thm2, thm_exact_tally, thm_mc_tally, tolerant)


# --------------------------------------------------------------------------- Lemma 1 / cycles
def mobius(k: int) -> int:
    out, p = 1, 2
    while p * p <= k:
        if k % p == 0:
            k //= p
            if k % p == 0:
                return 0
            out = -out
        p += 1
    return -out if k > 1 else out


def lemma1(n: int, r: int, e: int):
    """Lemma 1's count: the coefficient of ``x^r`` in ``(1/e) sum_{d|e} mu(e/d)
    (1 + x^(n/d))^d``, as a fraction ``(numerator, e)``."""
    num = sum(mobius(e // d) * (comb(d, r // (n // d)) if r % (n // d) == 0 else 0)
              for d in range(1, e + 1) if e % d == 0)
    return num, e


def lemma1_tally(n: int, count=lemma1) -> Tally:
    t = Tally()
    _, order, weight, _ = cycle_classes(n)
    for e in (e for e in range(1, n + 1) if n % e == 0):
        for r in range(n + 1):
            brute = int(np.sum((order == e) & (weight == r)))
            num, den = count(n, r, e)
            t.case(num == brute * den, f"n = {n}, weight r = {r}, order e = {e}: {brute} cycle "
                  f"classes, Lemma 1 gives {num}/{den}")
    return t


@statement(5, "Lemma 1", "the number N(r, e) of cycle classes of F_2^n of weight r and order e "
                         "is the coefficient of x^r in R_e(x) = (1/e) sum_{d|e} mu(e/d) "
                         "(1 + x^(n/d))^d")
def _lemma1(ctx) -> Evidence:
    n_max = 12 if ctx.quick else 18
    t = Tally()
    for n in range(1, n_max + 1):
        t.merge(lemma1_tally(n))
    _, order, weight, _ = cycle_classes(N5)
    ex = f"n = {N5}, r = 4: " + ", ".join(
        f"N(4, {e}) = {int(np.sum((order == e) & (weight == 4)))} (R_{e}: "
        f"{lemma1(N5, 4, e)[0]}/{e})" for e in (1, 2, 4, 8))
    return Evidence(t.cases, t.failures, f"every n <= {n_max}, e | n, 0 <= r <= n: the classes "
                    "found by rotating all 2^n vectors, exact integers", t.example or ex)


def cycles_tally(n: int, classes=cycle_classes) -> Tally:
    """Orders divide ``n`` and equal the class sizes; per weight ``r`` the orders add up to
    ``C(n, r)``."""
    t = Tally()
    reps, order, weight, canon = classes(n)
    size = np.bincount(canon, minlength=1 << n)[reps]
    t.case(bool(np.all(n % order == 0) and np.all(size == order)),
          f"n = {n}: {reps.size} classes, orders {sorted(set(order.tolist()))}")
    for r in range(n + 1):
        got = int(order[weight == r].sum())
        t.case(got == comb(n, r), f"n = {n}, r = {r}: sum of e_i = {got}, C(n, r) = {comb(n, r)}")
    return t


@statement(5, "Sec. IV-B", "a cycle class's order e divides n, and the cycle classes of weight r "
                           "partition the C(n, r) vectors of weight r (sum of their e_i = "
                           "C(n, r))")
def _cycles(ctx) -> Evidence:
    n_max = 12 if ctx.quick else 18
    t = Tally()
    for n in range(1, n_max + 1):
        t.merge(cycles_tally(n))
    reps, order, weight, _ = cycle_classes(N5)
    ex = (f"n = {N5}: {reps.size} cycle classes, orders {sorted(set(order.tolist()))}; weight 4: "
          f"e_i = {sorted(order[weight == 4].tolist())}, sum {order[weight == 4].sum()} = C(8, 4)")
    return Evidence(t.cases, t.failures, f"every n <= {n_max}: orders (smallest shift fixing the "
                    "vector) divide n and equal the class sizes; per weight r, exact integers",
                    t.example or ex)


# --------------------------------------------------------------------------- Thm 2
def cycle_invariance_tally(code) -> Tally:
    """Every received set of a cycle class has the same eq. (2) error."""
    t = Tally()
    n = code.n_workers
    err = eq2_errors(np.asarray(code.B, float))
    reps, order, _, canon = cycle_classes(n)
    hi = np.full(1 << n, -np.inf)
    lo = np.full(1 << n, np.inf)
    np.maximum.at(hi, canon, err)
    np.minimum.at(lo, canon, err)
    for v, e in zip(reps, order):
        if e > 1:
            t.case(hi[v] - lo[v] <= TOL * max(1, hi[v]), lambda: (
                f"{fmt_code(code)}: received sets in the cycle class of "
                f"{[j for j in range(n) if v >> j & 1]} have errors from {lo[v]:.6g} to "
                f"{hi[v]:.6g}"))
    return t


def circulants(n_max: int, rng):
    """The circulant 0/1 CRC for every ``s``, and a random real circulant, ``n <= n_max``."""
    out = []
    for n in range(2, n_max + 1):
        out += [(circulant(n, s), s) for s in range(1, n + 1)]
        row = rng.standard_normal(n) * (np.arange(n) < 3)
        out.append((from_matrix(np.array([np.roll(row, j) for j in range(n)])), 3))
    return out


@statement(5, "Thm 2 (proof)", "for a circulant B_CRC (column j+1 the cyclic shift of column j), "
                               "received sets in one cycle class have the same decoding error")
def _invariance(ctx) -> Evidence:
    n_max = 8 if ctx.quick else 12
    rng = np.random.default_rng(ctx.seed)
    t = Tally()
    for code, _ in circulants(n_max, rng):
        t.merge(cycle_invariance_tally(code))
    return t.evidence(f"isgc-cr(n, c) for every c <= n and a random real circulant (3 nonzero "
                      f"diagonals) per n <= {n_max}, every cycle class of order > 1 (eq. (2) by "
                      f"pseudo-inverse, to {TOL:g} relative)")


@statement(5, "Thm 2", "(n, m) model, random shuffling, circulant (s-1)-tolerant CRC: "
                       "E_err(CRC, n, m, s) = sum_{r=0}^{n-s} P_r sum_i e_i / C(n, r) "
                       "||A_vi A_vi^+ 1 - 1||^2 over the cycle representatives")
def _thm2(ctx) -> Evidence:
    n_max = 6 if ctx.quick else 8
    rng = np.random.default_rng(ctx.seed)
    t, skipped = Tally(), []
    for p_ss, p_as in pq_pairs(ctx, 2 if ctx.quick else 3):
        for n in range(2, n_max + 1):
            for s in range(1, n + 1):
                code = circulant(n, s)
                if not tolerant(code.B, s):
                    skipped.append((n, s))
                    continue
                for m in range(n + 1):
                    t.merge(thm_exact_tally(code, s, m, p_ss, p_as,
                                            lambda P, B=code.B, s=s: thm2(B, s, P), rng))
    mc = ((10, 2, 3, 300), (9, 3, 4, 300)) if ctx.quick else (
        (14, 2, 4, 4000), (15, 3, 5, 4000), (16, 4, 6, 3000))
    for n, s, m, samples in mc:
        code = circulant(n, s)
        ok = tolerant(code.B, s)
        t.case(ok, f"{fmt_code(code)} is {'' if ok else 'not '}{s - 1}-tolerant")
        t.merge(thm_mc_tally(code, s, m, P_SS5, P_AS5,
                             lambda P, B=code.B, s=s: thm2(B, s, P), samples, rng))
    skip = sorted(set(skipped))
    return t.evidence(f"isgc-cr(n, c=s), n <= {n_max}, every s for which it is (s-1)-tolerant "
                      f"(not: {len(skip)} (n, s), e.g. {skip[:3]}), m <= n, random slow set: "
                      f"exact (all straggler sets and n! permutations) against the formula "
                      f"(cycle representatives found here) and gradcode's expected_error, to "
                      f"{TOL:g}; Monte Carlo (gradcode's samplers, shuffles, decoder) at (n, s, "
                      f"m) = {[x[:3] for x in mc]}, within 4 se")


@statement(5, "Thm 2 (for [2]'s CRC)", "Thm 2's formula holds for the (s-1)-tolerant CRC of [2] "
                                       "(whose columns, the proof says, are cyclic shifts of one "
                                       "another)")
def _thm2_tandon(ctx) -> Evidence:
    n_max = 6 if ctx.quick else 8
    rng = np.random.default_rng(ctx.seed)
    t, broken = Tally(), Tally()
    for seed in range(2 if ctx.quick else 4):
        for n in range(3, n_max + 1):
            for s in range(2, n):
                code = crc(n, s, seed)
                broken.merge(cycle_invariance_tally(code))
                for m in (0, n // 2):
                    for p_ss, p_as in pq_pairs(ctx, 2):
                        t.merge(thm_exact_tally(code, s, m, p_ss, p_as,
                                                lambda P, B=code.B, s=s: thm2(B, s, P), rng))
    ex = t.example or t.typical
    return Evidence(t.cases, t.failures, (
        f"gc-cr(n, s-1, seed), seeds 0..{3 if not ctx.quick else 1}, 3 <= n <= {n_max}, 2 <= s "
        f"< n, m = 0 and n/2, 2 (p_ss, p_as): exact (all straggler sets and n! "
        f"permutations) against the formula with the smallest vector of each class as its "
        f"representative, to {TOL:g} relative; its B is not circulant and the error varies within "
        f"{broken.failures} of {broken.cases} cycle classes"),
        f"{ex}; e.g. {broken.example}" if broken.example else ex)
