"""Paper 5, Sec. IV, FRC: Thm 1 (the expected error with random shuffling) and the steps of its
proof (uniform received sets, the error given ``r`` non-stragglers, ``P_r``) (``theorems``; see
``approx_common``)."""

from __future__ import annotations

import itertools
from math import comb, factorial

import numpy as np
from scipy.stats import norm

from ...analysis import non_straggler_pmf, shuffle_permutation
from ._framework import Evidence, Tally, statement
from .approx_common import (ABS, N5, P_AS5, P_SS5, S5, TOL, bits, close, eq2_errors, fr,
                            fr_params, perms, pq_pairs, pr_conv, pr_enum, pr_printed, thm1,
                            thm_exact_tally, thm_mc_tally)


# --------------------------------------------------------------------------- Thm 1 (proof)
def uniform_tally(n, r, draws, rng, perm_fn=None) -> Tally:
    """Given ``r`` non-stragglers (workers ``0..r-1``), the received row set of a shuffle drawn
    by ``perm_fn`` is uniform over the ``C(n, r)`` row sets: every cell within a Bonferroni
    bound (two-sided 1e-3 over the cells)."""
    t = Tally()
    perm_fn = perm_fn or (lambda n, it, rng: shuffle_permutation(n, it, rng=rng))
    cells = {R: 0 for R in itertools.combinations(range(n), r)}
    for it in range(draws):
        R = tuple(sorted(perm_fn(n, it, rng)[:r].tolist()))
        cells[R] += 1
    p = 1 / len(cells)
    se = np.sqrt(p * (1 - p) / draws)
    zmax = norm.isf(5e-4 / len(cells))
    worst = max(cells, key=lambda R: abs(cells[R] / draws - p))
    f = cells[worst] / draws
    t.case(abs(f - p) <= zmax * se, f"n = {n}, r = {r}, {draws} shuffles: row set {list(worst)} "
          f"drawn {f:.4f}, uniform {p:.4f} (se {se:.4f}, bound {zmax:.2f} se)")
    return t


@statement(5, "Thm 1 (proof)", "with random shuffling, given r non-stragglers all C(n, r) "
                               "non-straggler matrices (received row sets) are equally likely, "
                               "whatever the classes")
def _uniform(ctx) -> Evidence:
    n_max = 6 if ctx.quick else 8
    t = Tally()
    for n in range(2, n_max + 1):
        P = perms(n)
        pop = bits(np.arange(1 << n), n).sum(axis=1)
        for T in range(1 << n):                     # straggler set: the received rows
            recv = ~bits([T], n)[0]
            r = int(recv.sum())
            masks = (np.int64(1) << P[:, recv]).sum(axis=1)
            counts = np.bincount(masks, minlength=1 << n)
            want = factorial(r) * factorial(n - r)
            ok = np.all(counts[pop == r] == want) and counts[pop != r].sum() == 0
            t.case(bool(ok), f"n = {n}, non-stragglers {np.flatnonzero(recv).tolist()}: each "
                  f"of the C({n}, {r}) row sets from {want} of the {n}! permutations")
    rng = np.random.default_rng(ctx.seed)
    draws = 4000 if ctx.quick else 60_000
    for n, r in ((8, 3), (6, 2), (10, 9)):
        t.merge(uniform_tally(n, r, draws, rng))
    return t.evidence(f"exact: every straggler set, every n <= {n_max}, counts over all n! "
                      f"permutations (integers); Monte Carlo of gradcode's shuffle_permutation, "
                      f"(n, r) = (8, 3), (6, 2), (10, 9), {draws} draws, every row set within a "
                      "Bonferroni bound")


def fr_conditional_tally(n, s, formula=lambda n, s, r: n * comb(n - s, r) / comb(n, r)) -> Tally:
    """FRC: the mean of eq. (2)'s error over the ``C(n, r)`` received sets of size ``r`` against
    ``formula(n, s, r)``, every ``r``."""
    t = Tally()
    B = np.asarray(fr(n, s).B, float)
    err = eq2_errors(B)
    pop = bits(np.arange(1 << n), n).sum(axis=1)
    mean = np.bincount(pop, err, n + 1) / np.bincount(pop, minlength=n + 1)
    for r in range(n + 1):
        want = formula(n, s, r)
        t.case(close(mean[r], want), f"FRC n = {n}, s = {s}, r = {r}: mean "
              f"error {mean[r]:.6g}, formula {want:.6g}")
    return t


@statement(5, "Thm 1 (proof; [8, Thm 6] corrected)", "FRC: given r non-stragglers, the expected "
                                                     "error over the equally likely C(n, r) "
                                                     "sets is n C(n-s, r) / C(n, r) (not [8]'s "
                                                     "n C(n-s, s-r) / C(n, r))")
def _fr_conditional(ctx) -> Evidence:
    n_max = 8 if ctx.quick else 12
    t, wrong8 = Tally(), Tally()
    for n, s in fr_params(n_max):
        t.merge(fr_conditional_tally(n, s))
        wrong8.merge(fr_conditional_tally(
            n, s, lambda n, s, r: n * comb(n - s, s - r) / comb(n, r) if s >= r else 0.0))
    err = eq2_errors(fr(N5, S5).B)
    pop = bits(np.arange(1 << N5), N5).sum(axis=1)
    mean = np.bincount(pop, err) / np.bincount(pop)
    ex = (f"FRC n = 8, s = 2, r = 0..8: mean error {np.round(mean, 4).tolist()}, n C(n-s, r) / "
          f"C(n, r) = {[round(N5 * comb(6, r) / comb(8, r), 4) for r in range(9)]}")
    return Evidence(t.cases, t.failures, f"eq. (2) by pseudo-inverse over every received set, FRC "
                    f"with s | n, n <= {n_max}, every r; [8]'s printed form fails at "
                    f"{wrong8.failures} of those {wrong8.cases} (n, s, r), e.g. {wrong8.example}",
                    t.example or ex)


def zero_error_tally(n, s, r_from) -> Tally:
    """FRC: every received set with at least ``r_from`` rows has error 0."""
    t = Tally()
    B = np.asarray(fr(n, s).B, float)
    err = eq2_errors(B)
    pop = bits(np.arange(1 << n), n).sum(axis=1)
    for mask in np.flatnonzero(pop >= r_from):
        t.case(err[mask] <= TOL, lambda: (
            f"FRC n = {n}, s = {s}: r = {pop[mask]} >= n - s = {n - s} non-stragglers "
            f"{[j for j in range(n) if mask >> j & 1]} (one whole group straggles): error "
            f"{err[mask]:.6g}"))
    return t


@statement(5, "Thm 1 (proof)", "FRC: when r >= n - s the decoding error is zero")
def _zero_error(ctx) -> Evidence:
    n_max = 8 if ctx.quick else 12
    t = Tally()
    for n, s in sorted(fr_params(n_max), key=lambda x: (x[1] in (1, x[0]), x)):
        t.merge(zero_error_tally(n, s, n - s))
    return t.evidence(f"FRC with s | n, n <= {n_max}, every received set of >= n - s rows "
                      f"(error <= {TOL:g}); the formula of Thm 1 keeps the r = n - s term, "
                      "rightly")


def pr_tally(n, m, p_ss, p_as, formula=pr_printed) -> Tally:
    """``formula(n, m, p_ss, p_as)`` against the law of the number of non-stragglers (exact
    enumeration for n <= 10, else the binomial convolution), every r."""
    t = Tally()
    slow = np.arange(n) < m
    truth = pr_enum(np.where(slow, p_ss, p_as)) if n <= 10 else pr_conv(n, m, p_ss, p_as)
    got = formula(n, m, p_ss, p_as)
    diff = np.abs(got - truth) - TOL * np.maximum(np.abs(got), np.abs(truth))
    r = int(np.argmax(diff))
    t.case(diff[r] <= ABS, f"n = {n}, m = {m}, p_ss = {p_ss}, p_as = {p_as}: P_{r} = {got[r]:.6g}"
          f", the probability of {r} non-stragglers is {truth[r]:.6g}; the P_r sum to "
          f"{got.sum():.6f}")
    return t


@statement(5, "Thm 1 (P_r)", "P_r = sum_{i=0}^r C(m, r'(i)) C(n-m, r-r'(i)) pbar_ss^i "
                             "p_ss^(m-i) pbar_as^(r-i) p_as^(n-m-r+i), r'(i) = min(i, m), is the "
                             "probability of r non-stragglers with m slow workers")
def _pr(ctx) -> Evidence:
    n_max = 8 if ctx.quick else 10
    t, ours = Tally(), Tally()
    ns = [N5, *(n for n in range(1, n_max + 1) if n != N5)]
    for p_ss, p_as in pq_pairs(ctx, 3):
        for n in ns:
            for m in range(n + 1):
                t.merge(pr_tally(n, m, p_ss, p_as))
    for p_ss, p_as in pq_pairs(ctx, 3):
        for n in ns:
            for m in range(n + 1):
                ours.merge(pr_tally(n, m, p_ss, p_as, non_straggler_pmf))
    return t.evidence(f"the printed sum against enumeration of all 2^n straggler sets, every "
                      f"n <= {n_max}, m <= n, 3 (p_ss, p_as), to {TOL:g} relative; gradcode's "
                      f"non_straggler_pmf (i from max(0, r-n+m) to min(r, m)) agrees in "
                      f"{ours.cases - ours.failures} of {ours.cases}")


# --------------------------------------------------------------------------- Thm 1
@statement(5, "Thm 1", "(n, m) model, random shuffling: E_err(FRC, n, m, s) = n sum_{r=0}^{n-s} "
                       "P_r C(n-s, r) / C(n, r)")
def _thm1(ctx) -> Evidence:
    n_max = 6 if ctx.quick else 8
    rng = np.random.default_rng(ctx.seed)
    t = Tally()
    for p_ss, p_as in pq_pairs(ctx, 2 if ctx.quick else 3):
        for n, s in fr_params(n_max):
            for m in range(n + 1):
                t.merge(thm_exact_tally(fr(n, s), s, m, p_ss, p_as,
                                        lambda P, n=n, s=s: thm1(n, s, P), rng))
    mc = ((12, 3, 4, 300), (12, 2, 5, 300)) if ctx.quick else (
        (24, 4, 7, 4000), (20, 2, 6, 4000), (16, 4, 8, 4000))
    for n, s, m, samples in mc:
        t.merge(thm_mc_tally(fr(n, s), s, m, P_SS5, P_AS5,
                             lambda P, n=n, s=s: thm1(n, s, P), samples, rng))
    return t.evidence(f"exact (all straggler sets, all n! permutations, eq. (2) by pseudo-inverse)"
                      f" for every s | n, n <= {n_max}, m <= n, random slow set, "
                      f"{2 if ctx.quick else 3} (p_ss, p_as), against the formula and gradcode's "
                      f"expected_error (to {TOL:g} relative); Monte Carlo (gradcode's samplers, "
                      f"shuffles and decoder) at (n, s, m) = {[x[:3] for x in mc]}, within 4 se")
