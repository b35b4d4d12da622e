"""Paper 5, Sec. II-III: the straggler model against gradcode's samplers, eq. (2) (the optimal
decoding error) against gradcode's decoder, and the replication of [2]'s FRC and CRC
(``theorems``; see ``approx_common``)."""

from __future__ import annotations

import numpy as np

from ...analysis import sample_slow, sample_stragglers
from ...codes import from_matrix
from ._framework import Evidence, Tally, statement
from .approx_common import (P_AS5, P_HAT5, P_SS5, TOL, bits, circulant, crc, eq2_errors, fmt_code,
                            fr, within)


# --------------------------------------------------------------------------- Sec. II
def model_tally(p_hat, p_ss, p_as, draws, rng, slow_fn=sample_slow,
                straggler_fn=sample_stragglers, n: int = 10) -> Tally:
    """Sec. II's model against the samplers: class and straggling frequencies, independence
    across workers and iterations, each within 4 standard errors of the model's value."""
    t = Tally()
    slow = np.array([slow_fn(n, p_hat, rng) for _ in range(draws)])
    mask = np.arange(n) < n // 2                       # workers 0..n/2-1 slow
    it = straggler_fn(np.tile(mask, (draws, 1)), p_ss, p_as, rng)   # (iterations, workers)

    def freq(x, p, what):
        x = np.asarray(x, float)
        se = np.sqrt(p * (1 - p) / x.size)
        t.case(within(x.mean(), p, se), f"{what}: {x.mean():.4f} vs {p:.4f} (se {se:.1e}, "
              f"p^ = {p_hat}, p_ss = {p_ss}, p_as = {p_as})")

    freq(slow, p_hat, "share of slow workers")
    freq(slow[:, 0] & slow[:, 1], p_hat ** 2, "workers 0 and 1 both slow")
    freq(it[:, mask], p_ss, "a slow worker straggles")
    freq(it[:, ~mask], p_as, "an active worker straggles")
    freq(it[:, 0] & it[:, -1], p_ss * p_as, "a slow and an active worker both straggle")
    freq(it[:-1:2, 0] & it[1::2, 0], p_ss ** 2, "a slow worker straggles in two iterations")
    return t


@statement(5, "Sec. II (model)", "a worker is slow w.p. p^ independently of the others; in "
                                 "every iteration a slow worker straggles w.p. p_ss, an active "
                                 "one w.p. p_as, independently")
def _model(ctx) -> Evidence:
    draws = 3000 if ctx.quick else 60_000
    rng = np.random.default_rng(ctx.seed)
    t = Tally()
    for p_hat, p_ss, p_as in ((P_HAT5, P_SS5, P_AS5), (0.5, 0.6, 0.2), (0.1, 0.95, 0.3)):
        t.merge(model_tally(p_hat, p_ss, p_as, draws, rng))
    return t.evidence(f"gradcode's sample_slow / sample_stragglers, n = 10, {draws} draws of "
                      "each, 3 parameter sets: 6 frequencies each within 4 standard errors")


# --------------------------------------------------------------------------- eq. (2)
def eq2_tally(code, method: str = "optimal") -> Tally:
    """``code.decode(R, method).error`` against ``||A A^+ 1 - 1||^2`` for every received set
    ``R``; also its weights: supported on ``R`` and giving that error."""
    t = Tally()
    B = np.asarray(code.B, float)
    n = B.shape[0]
    ref = eq2_errors(B)
    for mask in range(1 << n):
        R = [j for j in range(n) if mask >> j & 1]
        d = code.decode(R, method=method)
        w = np.asarray(d.weights)
        own = float(np.sum((w @ B - 1.0) ** 2))
        off = np.abs(np.delete(w, R)).max(initial=0.0)
        t.case(abs(d.error - ref[mask]) <= TOL * max(1.0, ref[mask]) and abs(own - d.error)
              <= TOL * max(1.0, own) and off == 0.0,
              f"{fmt_code(code)}, R = {R}: decode error {d.error:.6g}, ||A A^+ 1 - 1||^2 = "
              f"{ref[mask]:.6g}, ||w B - 1||^2 = {own:.6g}")
    return t


@statement(5, "Sec. II, eq. (2)", "the optimal decoding error of a non-straggler matrix A is "
                                  "err(A) = min_x ||A x - 1_n||^2 = ||A A^+ 1_n - 1_n||^2")
def _eq2(ctx) -> Evidence:
    n = 6 if ctx.quick else 9
    rng = np.random.default_rng(ctx.seed)
    G = rng.standard_normal((n, n)) * (rng.random((n, n)) < 0.4)
    codes = [fr(n - n % 2, 2), fr(n - n % 3, 3), crc(n, 2, seed=1), crc(n - 1, 3, seed=2),
             circulant(n - 1, 3), from_matrix(G)]
    t = Tally()
    for code in codes:
        t.merge(eq2_tally(code))
    return t.evidence(f"gradcode's decode(R, method='optimal') on FRC, [2]'s CRC, circulant CRC "
                      f"and a random sparse B (n <= {n}), every received set R: its error and its "
                      f"weights' ||w B - 1||^2 against the pseudo-inverse, to {TOL:g} relative")


# --------------------------------------------------------------------------- Sec. III
def holders_tally(code, s: int) -> Tally:
    """Every data-set held by exactly ``s`` workers; every ``r >= n - s + 1`` received rows give
    the exact gradient (error 0)."""
    t = Tally()
    B = np.asarray(code.B, float)
    n = B.shape[0]
    held = (B != 0).sum(axis=0)
    for i, h in enumerate(held):
        t.case(h == s, f"{fmt_code(code)}: data-set {i} held by {h} workers, s = {s}")
    err = eq2_errors(B)
    pop = bits(np.arange(1 << n), n).sum(axis=1)
    for mask in np.flatnonzero(pop >= n - s + 1):
        t.case(err[mask] <= TOL, lambda: f"{fmt_code(code)}, received rows "
              f"{[j for j in range(n) if mask >> j & 1]}: error {err[mask]:.3g}, s = {s}")
    return t


@statement(5, "Sec. II-III", "in the (s-1)-tolerant FRC and CRC of [2] every data-set is assigned "
                             "to exactly s workers, and any r >= n - s + 1 non-stragglers give "
                             "the exact gradient")
def _holders(ctx) -> Evidence:
    n_max = 7 if ctx.quick else 10
    t = Tally()
    for n in range(2, n_max + 1):
        for s in range(1, n + 1):
            if n % s == 0:
                t.merge(holders_tally(fr(n, s), s))
            t.merge(holders_tally(crc(n, s, seed=n + s), s))
    return t.evidence(f"gc-fr (s | n) and gc-cr (seed n + s), every n <= {n_max}, 1 <= s <= n: "
                      "column supports, and every received set of >= n - s + 1 rows (error <= "
                      f"{TOL:g})")
