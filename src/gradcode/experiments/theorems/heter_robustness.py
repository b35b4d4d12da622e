"""Paper 3, robustness to any ``s`` stragglers: Lemma 1 (Condition 1), Lemma 2-3 (the auxiliary
matrix ``C`` with (P1)-(P2) and its decoder ``lam C / sum(lam)``), Alg. 1 (gradcode's ``heter``)
and Thm 4 (``theorems``; see ``heter_common``)."""

from __future__ import annotations

from itertools import combinations, product

import numpy as np

from ...analysis import is_robust
from ...codes import from_matrix
from ...registry import make_code
from ._framework import Evidence, Tally, statement
from .heter_common import (TOL, cached_code, condition1, eq6_support, fmt_instance, fmt_sizes,
                           integer_instances, quotas, random_speed_instances, robust_fails,
                           straggler_sets)


def lemma1_fails(B, s: int) -> str:
    """Lemma 1 for one ``(B, s)``: robust to any ``s`` stragglers (every ``m - s`` workers
    decode exactly with a linear decoder: gradcode's least-squares one, ``method="optimal"``)
    iff Condition 1 (here by least squares) iff ``is_robust``; ``""`` when the three agree."""
    B = np.asarray(B, dtype=float)
    m = B.shape[0]
    code = from_matrix(B)
    c1 = condition1(B, s) is None
    dec = all(code.decode(np.setdiff1d(np.arange(m), S), method="optimal").exact
              for S in combinations(range(m), s))
    gc = is_robust(B, s=s)
    if c1 == dec == gc:
        return ""
    return (f"B = {B.astype(int).tolist()}, s = {s}: Condition 1 {c1}, every m - s decode "
            f"{dec}, is_robust {gc}")


@statement(3, "Lemma 1", "B is robust to any s stragglers iff 1_{1 x k} is in the span of the "
                         "rows of every m - s workers (Condition 1)")
def _lemma1(ctx) -> Evidence:
    rng = np.random.default_rng(ctx.seed)
    t = Tally()
    robust = 0
    mats = [np.array(x).reshape(3, 2) for x in product((0, 1), repeat=6)]
    mats += [rng.integers(-1, 2, size=(int(rng.integers(3, 6)), int(rng.integers(1, 4))))
             for _ in range(15 if ctx.quick else 400)]
    typical = ""
    for B in mats:
        for s in range(B.shape[0]):
            bad = lemma1_fails(B, s)
            t.count(1, bool(bad), bad)
            ok = condition1(B, s) is None
            robust += ok
            if ok and s >= 1 and B.shape[0] >= 4 and not typical:
                typical = f"B = {B.tolist()}, s = {s}: robust all three ways"
    return t.evidence("every 0/1 3x2 B and random B in {-1,0,1}^{m x k} (m 3-5, k 1-3), every "
                      f"s < m ({robust} robust): Condition 1 vs exact linear decoding from "
                      "every m - s workers (from_matrix, least squares) vs is_robust", typical)


def has_p1(C) -> bool:
    """(P1): any ``s+1`` columns of ``C`` are linearly independent (condition number below
    ``1 / TOL``)."""
    C = np.asarray(C, dtype=float)
    r, m = C.shape
    blocks = np.array([C[:, list(J)] for J in combinations(range(m), r)])
    return bool(np.all(np.linalg.cond(blocks) < 1 / TOL))


def has_p2(C) -> bool:
    """(P2): for any ``s`` columns ``C'`` and nonzero ``lam`` with ``lam C' = 0``,
    ``sum(lam) != 0`` (``C'`` of rank ``s`` by (P1): ``lam`` is its unit left null vector, and
    ``|sum(lam)| > TOL``)."""
    C = np.asarray(C, dtype=float)
    r, m = C.shape
    if r == 1:
        return True                              # s = 0: every nonzero scalar lam qualifies
    blocks = np.array([C[:, list(J)] for J in combinations(range(m), r - 1)])
    lam = np.linalg.svd(blocks, full_matrices=True)[0][:, :, -1]
    return bool(np.all(np.abs(lam.sum(axis=1)) > TOL))


def lemma2_B(C, support) -> np.ndarray:
    """The proof of Lemma 2: column ``i`` of ``B`` is ``C_i^{-1} 1`` on the ``s+1`` rows of
    column ``i`` of the support (``C_i``: the columns of ``C`` of those workers)."""
    C = np.asarray(C, dtype=float)
    S = np.asarray(support) != 0
    B = np.zeros(S.shape)
    for i in range(S.shape[1]):
        rows = np.flatnonzero(S[:, i])
        B[rows, i] = np.linalg.solve(C[:, rows], np.ones(C.shape[0]))
    return B


def lam_weights(C, stragglers) -> np.ndarray:
    """Lemma 2's decoder: ``w = lam C / sum(lam)`` with ``lam C_S = 0`` (the min-norm ``lam``
    with ``sum(lam) = 1``; unique when ``|S| = s``), zero on ``S``."""
    C = np.asarray(C, dtype=float)
    S = list(stragglers)
    M = np.vstack([C[:, S].T, np.ones((1, C.shape[0]))])
    rhs = np.zeros(M.shape[0])
    rhs[-1] = 1.0
    lam = np.linalg.lstsq(M, rhs, rcond=None)[0]
    w = lam @ C
    w[S] = 0.0
    return w


def decodes(w, B) -> bool:
    """``w B = 1`` within ``TOL`` relative to ``|w| max|B|``."""
    B = np.asarray(B, dtype=float)
    scale = max(1.0, float(np.abs(w) @ np.abs(B).max(axis=1)))
    return bool(np.abs(w @ B - 1.0).max() <= TOL * scale)


def lambda_decoding_fails(C, B, s: int, sets=None) -> str:
    """Lemma 2's claim for ``(C, B)``: ``C B = 1`` and, for every straggler set of size ``s``,
    ``lam C / sum(lam)`` (zero on it) decodes ``B``.  ``""`` when it holds, else what fails."""
    C, B = np.asarray(C, dtype=float), np.asarray(B, dtype=float)
    scale = max(1.0, float(np.abs(C).max() * np.abs(B).sum(axis=0).max()))
    if np.abs(C @ B - 1).max() > TOL * scale:
        return f"C B != 1 (off by {np.abs(C @ B - 1).max():.2g})"
    for S in (combinations(range(B.shape[0]), s) if sets is None else sets):
        if not decodes(lam_weights(C, S), B):
            return f"lam C / sum(lam) fails without workers {list(S)}"
    return ""


@statement(3, "Lemma 2", "for C in R^{(s+1) x m} with (P1)-(P2), the B with support (7) and "
                         "C B = 1 (C_i^{-1} 1 per column) satisfies Condition 1: lam C / sum(lam) "
                         "with lam C_S = 0 decodes without any s workers S")
def _lemma2(ctx) -> Evidence:
    rng = np.random.default_rng(ctx.seed)
    t = Tally()
    skipped = 0
    for speeds, s, k in integer_instances(ctx):
        n = np.rint(quotas(speeds, s, k)).astype(int)
        support = eq6_support(n, k)
        C = rng.uniform(0.0, 1.0, (s + 1, len(n)))           # the paper's draw (Lemma 3)
        if not (has_p1(C) and has_p2(C)):
            skipped += 1
            continue
        B = lemma2_B(C, support)
        bad = lambda_decoding_fails(C, B, s, straggler_sets(rng, len(n), s, 400))
        if not bad and not np.array_equal(B != 0, support != 0):
            bad = "supp(B) differs from (7)"
        t.count(1, bool(bad), lambda: f"{fmt_instance(speeds, s, k)}: {bad}")
    return t.evidence(f"C uniform on (0,1) with (P1)-(P2) ({skipped} draws without them "
                      f"skipped), B built as in the proof, {fmt_sizes(ctx)} and random larger; "
                      "every straggler set (at most 400 sampled)",
                      "speeds [1, 2, 3, 4, 4], s = 1, k = 7")


@statement(3, "Lemma 3", "C in R^{(s+1) x m} with entries i.i.d. uniform on (0,1) has (P1) and "
                         "(P2) with probability 1")
def _lemma3(ctx) -> Evidence:
    rng = np.random.default_rng(ctx.seed)
    t = Tally()
    draws = 3 if ctx.quick else 30
    M = 9 if ctx.quick else 12
    for m in range(1, M + 1):
        for s in range(min(m, 5)):
            for _ in range(draws):
                C = rng.uniform(0.0, 1.0, (s + 1, m))
                p1, p2 = has_p1(C), has_p2(C)
                t.count(1, not (p1 and p2), lambda: f"m = {m}, s = {s}: (P1) {p1}, (P2) {p2}")
    return t.evidence(f"{draws} draws per m <= {M}, s <= 4: every s+1 columns (condition number "
                      "< 1e9) and every s columns (|sum lam| > 1e-9 for the unit lam)",
                      f"C uniform of shape {C.shape}: (P1), (P2) hold")


@statement(3, "Alg. 1", "Alg. 1 (gradcode's heter, and gc-cr built the same way): its C has "
                        "(P1)-(P2), C B = 1, and lam C / sum(lam) is the decoder for any s "
                        "stragglers")
def _alg1(ctx) -> Evidence:
    rng = np.random.default_rng(ctx.seed)
    t = Tally()
    codes = [(fmt_instance(*inst), cached_code("heter", *inst, ctx.seed), inst[1])
             for inst in integer_instances(ctx) + random_speed_instances(ctx)]
    codes += [(f"gc-cr n = {n}, s = {s}", make_code("gc-cr", n=n, s=s), s)
              for n in range(2, 6 if ctx.quick else 13) for s in range(n)]
    typical = ""
    for name, code, s in codes:
        B, C = code.B, code.C
        bad = "" if has_p1(C) and has_p2(C) else "C lacks (P1)-(P2)"
        sets = straggler_sets(rng, B.shape[0], s, 50)
        bad = bad or lambda_decoding_fails(C, B, s, sets)
        for S in sets if not bad else ():
            keep = np.setdiff1d(np.arange(B.shape[0]), S)
            d = code.decode(keep)
            w = lam_weights(C, S)
            if not d.exact or np.abs(d.weights - w).max() > 1e-6 * max(1, np.abs(w).max()):
                bad = f"without {list(S)}: decode gives {d.weights.round(4).tolist()}, " \
                      f"lam C / sum(lam) = {w.round(4).tolist()}"
                break
        t.count(1, bool(bad), lambda: f"{name}: {bad}")
        if not bad and code.n_workers >= 8 and s >= 2:
            typical = (f"{name}: max |C B - 1| = {np.abs(C @ B - 1).max():.1g}, decoder = "
                       f"lam C / sum(lam) on {len(sets)} straggler sets")
    return t.evidence(f"heter on {fmt_sizes(ctx)}, random larger and random speeds; gc-cr n <= "
                      f"{5 if ctx.quick else 12}; up to 50 straggler sets of size s each "
                      "(decoder weights vs lam C / sum(lam) within 1e-6)", typical)


@statement(3, "Thm 4", "Alg. 1's B is robust to any s stragglers (with probability 1)")
def _thm4(ctx) -> Evidence:
    rng = np.random.default_rng(ctx.seed)
    t = Tally()
    typical = ""
    typical_sets: list = []
    for speeds, s, k in integer_instances(ctx) + random_speed_instances(ctx):
        code = cached_code("heter", speeds, s, k, ctx.seed)
        sets = straggler_sets(rng, len(speeds), s, 400)
        bad = robust_fails(code, s, sets)
        t.count(1, bool(bad), lambda: f"{fmt_instance(speeds, s, k)}: {bad}")
        if not bad and len(sets) >= len(typical_sets):
            typical_sets = sets
            typical = f"{fmt_instance(speeds, s, k)}: robust on all {len(sets)} straggler sets"
    return t.evidence(f"heter on {fmt_sizes(ctx)}, random larger and random speeds: is_robust, "
                      "Condition 1 and exact decoding on every straggler set of size s (at most "
                      "400 sampled); gradcode draws C normal, not uniform on (0,1) (the paper's "
                      "draw is checked under Lemma 2)", typical)
