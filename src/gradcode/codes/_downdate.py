"""Compiled recovery of many received sets at once for decoders without a closed form
(``Code.recovery_many``, the vectorised simulator's decoding): least squares by downdating the
full set, and the scaled received sum.

Least squares (paper 5, eq. 2; ``optimal_weights``): round ``t`` misses the workers ``D``
(received ``R``, ``w_D = 0``); its recovered vector ``w B = P_R 1`` (the projection of ``1`` on
the row space of ``B_R``) is unique even where ``w`` is not, and the decoder's ``w`` is the
min-norm one.  With ``B = U_r S_r V_r^T`` (rank ``r``), ``Z = U[:, r:]`` (``n x z``: the left
null space, ``z = n - r``), ``B^+`` its pseudo-inverse, ``u = (B^+)^T 1`` (the full set's
min-norm weights), ``p = B^T u = P_B 1`` and ``H = (B B^T)^+``, every received set is a
downdate of the full one (``K = H + alpha Z Z^T``, positive definite)::

    x = argmin { x^T H_DD x - 2 u_D . x : Z_D^T x = 0 }     (|D| x |D|: K_DD x + Z_D l = u_D)
    w = u - H[:, D] x - Z l,     w B = p - B^+[:, D] x,     ||w B - 1||^2 = ||1 - p||^2 + u_D . x

(``null(B_R)``'s part of the row space is ``B^+`` of the vectors on ``D`` orthogonal to
``Z_D``).  ``z = 0`` (full row rank, e.g. ``bgc``): ``x = H_DD^{-1} u_D``, ``l`` empty.
``|D| <= z`` and ``Z_D`` of full row rank (e.g. ``gc-cr``'s matrix missing at most ``s``):
``x = 0``, ``w B = p`` and ``l = Z_D^T (Z_D Z_D^T)^{-1} u_D``.  O(|D|^3 + (n + k) |D|) a round.

The solve is refined once (corrected semi-normal equations: the residual's part along
``B^+[:, D]``, read from the same rows), which makes ``w B`` about as accurate as a QR of
``B^+[:, D]`` would (``H_DD``'s condition number is ``kappa(B)^2``).  A round is answered only
where its answer is trusted, else it is NaN (the decoder runs):

* the rank of ``B_R`` is clear-cut: ``Z_D``'s smallest singular value ``s`` (bounded below by
  the trace of its Gram matrix's inverse, from the Cholesky factor; by an SVD where that Gram
  matrix is too ill-conditioned to tell) is well above the rounding of its estimate and of
  ``Z``, and ``kappa_R = kappa(B) / s`` (above ``B_R``'s condition number over its nonzero
  singular values: Cauchy interlacing and the CS decomposition of ``[U_r Z]``) is 100 times
  below the ``1 / (eps max(n, k))`` at which ``lstsq`` cuts a singular value off;
* an exact round is exact by a margin the decoder's own rounding (bounded by
  ``16 eps ||B|| ||w||``, and its error by ``1e-13``) cannot cross;
* a round that is not exact is so by a factor 2 of the tolerance, with ``kappa_R <= 1e6`` (its
  fraction and error then agree with ``lstsq``'s to 1e-12: both are about as accurate as a QR,
  and the error is insensitive to first order).

``w``'s norm and mass decide only near the tolerance: a bound from ``x`` and the column norms
of ``K`` first, ``w`` itself where that does not settle it.

Scaled sum (``expander``, ``stochastic-gc``): ``w = scale_t 1_R``, partition ``j`` recovers
``scale_t`` times its received holders' coefficients (the column sums less the missing rows'
when few are missing); a round whose exactness is within a hair of the tolerance goes to the
decoder.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

#: the most cells ``n x k`` of ``B`` (and ``n x n`` of ``H``) the least-squares factors hold;
#: above, ``optimal_weights`` runs LSQR, which this does not reproduce
MAX_CELLS = 4_000_000
#: ``B``'s singular values below ``RANK_RTOL sigma_1`` are zero (rank ``r``) ...
RANK_RTOL = 1e-13
#: ... and those above it at least ``sigma_1 / MAX_KAPPA`` (else: no fast path)
MAX_KAPPA = 1e8
#: the condition bound ``kappa_R`` above which only exact rounds are answered here
MAX_KAPPA_INEXACT = 1e6
#: LLVM may reorder sums (vectorised reductions) and fuse multiply-adds; NaN and infinities keep
#: their meaning (the positive-definiteness tests rely on them)
FAST = {"reassoc", "contract", "nsz"}
EPS = float(np.finfo(float).eps)


@dataclass(frozen=True)
class LeastSquares:
    """The full set's least-squares factors of ``B`` (module docstring): ``K`` ``(n, n)``, ``Kn``
    (the norms of ``K``'s columns), ``Bpt = (B^+)^T`` ``(n, k)``, ``Z`` ``(n, z)`` and ``Zt`` its
    transpose, ``u`` ``(n,)``, ``p`` ``(k,)``, ``kappa`` (``sigma_1 / sigma_r``) and ``sigma``
    (``sigma_1 = ||B||``)."""

    K: np.ndarray
    Kn: np.ndarray
    Bpt: np.ndarray
    Z: np.ndarray
    Zt: np.ndarray
    u: np.ndarray
    p: np.ndarray
    kappa: float
    sigma: float


def least_squares_factors(B) -> LeastSquares | None:
    """``LeastSquares`` of ``B`` (dense or sparse ``(n, k)``), or None where ``B`` is too large
    (``MAX_CELLS``), zero, or its rank is not clear-cut (``RANK_RTOL``, ``MAX_KAPPA``).

    >>> f = least_squares_factors(np.array([[1.0, 1, 0], [0, 1, 1], [1, 1, 1], [1, 2, 1]]))
    >>> f.Z.shape, f.p.round(12).tolist()          # rank 3 of 4 rows; 1 is in the row space
    ((4, 1), [1.0, 1.0, 1.0])
    """
    n, k = B.shape
    if n * max(n, k) > MAX_CELLS or n == 0 or k == 0:
        return None
    B = np.asarray(B.toarray() if hasattr(B, "toarray") else B, float)
    U, S, Vt = np.linalg.svd(B, full_matrices=n > k)
    if S.size == 0 or not S[0] > 0.0:
        return None
    r = int(np.count_nonzero(S > RANK_RTOL * S[0]))
    if S[r - 1] < S[0] / MAX_KAPPA:
        return None
    Ur, Sr, Vr, Z = U[:, :r], S[:r], Vt[:r].T, np.ascontiguousarray(U[:, r:])
    ones = np.ones(k)
    Bpt = np.ascontiguousarray((Ur / Sr) @ Vr.T)
    K = np.ascontiguousarray((Ur / Sr**2) @ Ur.T + (Z @ Z.T) / (Sr[0] * Sr[-1]))
    u = Bpt @ ones
    return LeastSquares(K, np.linalg.norm(K, axis=0), Bpt, Z, np.ascontiguousarray(Z.T), u,
                        Vr @ (Vr.T @ ones), float(Sr[0] / Sr[-1]), float(Sr[0]))


def least_squares_recovery(f: LeastSquares, got, row_max, sizes, rtol: float,
                           exact_only: bool = False):
    """``recovery_many``'s ``(recovered_fraction, decode_error, exact)`` of least-squares
    decoding (``optimal_weights``) for each row of ``got`` (``(rounds, n)`` bool) from the
    factors ``f``; NaN, NaN, False where the decoder must run (module docstring), and where the
    round is not exact if ``exact_only`` (a decoder that does something else then).
    ``row_max``: ``max_j |B_ij|`` per row; ``sizes``: the partitions' shares; ``rtol``: the
    exactness tolerance (``EXACT_RTOL``, as ``codes.exact_within``).

    >>> B = np.array([[1.0, 1, 0], [0, 1, 1], [1, 0, 1]])
    >>> got = np.array([[1, 1, 1], [1, 1, 0], [0, 0, 0]], bool)
    >>> f = least_squares_factors(B)
    >>> frac, err, exact = least_squares_recovery(f, got, np.ones(3), np.ones(3) / 3, 1e-8)
    >>> frac.round(6).tolist(), err.round(6).tolist(), exact.tolist()
    ([1.0, 0.777778, 0.0], [0.0, 0.333333, 3.0], [True, False, False])
    """
    got = np.ascontiguousarray(got, dtype=bool)
    R = got.shape[0]
    frac, err, exact = np.full(R, np.nan), np.full(R, np.nan), np.zeros(R, bool)
    row_max, sizes = _writable(row_max), _writable(sizes)
    args = (f.K, f.Kn, f.Bpt, f.Z, f.Zt, f.u, f.p, row_max, sizes, f.kappa, f.sigma,
            float(rtol), bool(exact_only))
    given = np.full(R, np.nan)
    if R:
        _least_squares_rounds(got, *args, given, np.empty((0, f.Z.shape[1])), frac, err, exact)
    again = np.flatnonzero(given == -2.0)     # Gram matrices too ill-conditioned to tell
    if again.size:
        lam = np.zeros((again.size, f.Z.shape[1]))
        for q, t in enumerate(again):
            given[t] = _wide_svd(f.Z, f.u, np.flatnonzero(~got[t]), lam[q])
        out = [x[again] for x in (frac, err, exact)]
        _least_squares_rounds(got[again], *args, given[again], lam, *out)
        frac[again], err[again], exact[again] = out
    return frac, err, exact


def _wide_svd(Z, u, D, lam) -> float:
    """``_wide`` by an SVD of ``Z_D`` (``|D| <= z``), for rounds whose Gram matrix is too
    ill-conditioned to tell: ``lam`` (in place) and ``1 / s_min(Z_D)^2``, or -1."""
    U, S, Vt = np.linalg.svd(Z[D], full_matrices=False)
    if not S[-1] > 0.0:
        return -1.0
    lam[:] = Vt.T @ ((U.T @ u[D]) / S)
    return float(1.0 / S[-1] ** 2)


# ------------------------------------------------------------------ small dense kernels
@njit(cache=True)
def _cholesky(A, m):
    """In place: the lower triangle of ``A[:m, :m]`` becomes its Cholesky factor ``L``, with
    ``1 / L_jj`` on the diagonal (no division in the solves); False where ``A`` is not
    (numerically) positive definite.  Right-looking: the updates run along rows."""
    v = np.empty(m)
    for j in range(m):
        s = A[j, j]
        if not s > 0.0:
            return False
        d = 1.0 / np.sqrt(s)
        A[j, j] = d
        for i in range(j + 1, m):
            A[i, j] *= d
            v[i] = A[i, j]
        for i in range(j + 1, m):
            a = v[i]
            for q in range(j + 1, i + 1):
                A[i, q] -= a * v[q]
    return True


@njit(cache=True, inline="always")
def _zt(Z, D, m, x, out):
    """``out <- Z_D^T x[:m]``: the rows ``D[:m]`` of ``Z`` against ``x``."""
    for c in range(Z.shape[1]):
        s = 0.0
        for a in range(m):
            s += Z[D[a], c] * x[a]
        out[c] = s


@njit(cache=True, fastmath=FAST)
def _cho_solve(L, m, b):
    """In place ``b <- (L L^T)^{-1} b`` (``L`` from ``_cholesky``, ``m x m``)."""
    for i in range(m):
        s = b[i]
        for q in range(i):
            s -= L[i, q] * b[q]
        b[i] = s * L[i, i]
    for i in range(m - 1, -1, -1):
        s = b[i]
        for q in range(i + 1, m):
            s -= L[q, i] * b[q]
        b[i] = s * L[i, i]


@njit(cache=True)
def _inverse_trace(L, m, M):
    """``trace((L L^T)^{-1}) = ||L^{-1}||_F^2`` (``>= 1 / lambda_min``, and close to it where
    one eigenvalue is small) for ``L`` from ``_cholesky``; ``M`` (``m x m`` at least) holds
    ``L^{-1}``, row by row."""
    total = 0.0
    for i in range(m):
        M[i, :i] = 0.0
        for q in range(i):
            a = L[i, q]
            for j in range(q + 1):
                M[i, j] -= a * M[q, j]
        d = L[i, i]
        for j in range(i):
            M[i, j] *= d
            total += M[i, j] * M[i, j]
        M[i, i] = d
        total += d * d
    return total


@njit(cache=True, fastmath=FAST)
def _sub_rows(Bpt, D, m, x, rec):
    """``rec -= sum_a x_a Bpt[D_a]`` (four rows a pass: fewer passes over ``rec``)."""
    a = 0
    while a + 4 <= m:
        r0, r1, r2, r3 = Bpt[D[a]], Bpt[D[a + 1]], Bpt[D[a + 2]], Bpt[D[a + 3]]
        x0, x1, x2, x3 = x[a], x[a + 1], x[a + 2], x[a + 3]
        for j in range(rec.size):
            rec[j] -= x0 * r0[j] + x1 * r1[j] + x2 * r2[j] + x3 * r3[j]
        a += 4
    for b in range(a, m):
        r0, x0 = Bpt[D[b]], x[b]
        for j in range(rec.size):
            rec[j] -= x0 * r0[j]


@njit(cache=True, fastmath=FAST)
def _dot_rows(Bpt, D, m, rec, y):
    """``y_a = Bpt[D_a] . rec`` (four rows a pass: independent sums)."""
    a = 0
    while a + 4 <= m:
        r0, r1, r2, r3 = Bpt[D[a]], Bpt[D[a + 1]], Bpt[D[a + 2]], Bpt[D[a + 3]]
        s0, s1, s2, s3 = 0.0, 0.0, 0.0, 0.0
        for j in range(rec.size):
            v = rec[j]
            s0 += r0[j] * v
            s1 += r1[j] * v
            s2 += r2[j] * v
            s3 += r3[j] * v
        y[a], y[a + 1], y[a + 2], y[a + 3] = s0, s1, s2, s3
        a += 4
    for b in range(a, m):
        r0, s0 = Bpt[D[b]], 0.0
        for j in range(rec.size):
            s0 += r0[j] * rec[j]
        y[b] = s0


@njit(cache=True, fastmath=FAST)
def _stats(rec, sizes):
    """``(max |rec - 1|, ||rec - 1||^2, sizes . clip(rec, 0, 1))``."""
    worst, e, covered = 0.0, 0.0, 0.0
    for j in range(rec.size):
        d = rec[j] - 1.0
        worst = max(worst, abs(d))
        e += d * d
        covered += sizes[j] * min(max(rec[j], 0.0), 1.0)
    return worst, e, covered


# ------------------------------------------------------------------ least squares, per round
@njit(cache=True)
def _wide(Z, u, D, m, G, M, col, lam):
    """``|D| <= z``: ``x = 0``, ``lam = Z_D^T (Z_D Z_D^T)^{-1} u_D``.  Returns
    ``trace((Z_D Z_D^T)^{-1}) >= 1 / s_min(Z_D)^2``, or -1 where its Cholesky factor fails."""
    z = Z.shape[1]
    At = np.empty((z, m))                     # Z_D^T: G = Z_D Z_D^T by rows
    for a in range(m):
        for c in range(z):
            At[c, a] = Z[D[a], c]
    for a in range(m):
        G[a, :m] = 0.0
        for c in range(z):
            s = At[c, a]
            for b in range(a + 1):
                G[a, b] += s * At[c, b]
    if not _cholesky(G, m):
        return -1.0
    inv = _inverse_trace(G, m, M)
    for a in range(m):
        col[a] = u[D[a]]
    _cho_solve(G, m, col)
    _zt(Z, D, m, col, lam)
    return inv


@njit(cache=True)
def _tall(K, Bpt, Z, u, p, D, m, G, M, Kd, F, x, lam, y, mu, rec):
    """``|D| > z``: the constrained solve of the module docstring (``x``, ``lam``) and
    ``rec = p - B^+[:, D] x``, refined once (the same solve for the residual's part
    ``B^+[:, D]^T rec``: corrected semi-normal equations, about as accurate as a QR of
    ``B^+[:, D]``; ``x`` and ``lam``, which only decide the weights' mass, are not refined).
    Returns ``trace((Z_D^T Z_D)^{-1}) >= 1 / s_min(Z_D)^2`` (0 for ``z = 0``), or -1 where a
    factor is not positive definite."""
    z, k = Z.shape[1], p.size
    inv = 0.0
    if z:
        G[:z, :z] = 0.0                       # Z_D^T Z_D, a row of Z_D at a time
        for i in range(m):
            r = Z[D[i]]
            for a in range(z):
                s = r[a]
                for b in range(a + 1):
                    G[a, b] += s * r[b]
        if not _cholesky(G, z):
            return -1.0
        inv = _inverse_trace(G, z, M)
    for a in range(m):
        for b in range(a + 1):
            Kd[a, b] = K[D[a], D[b]]
    if not _cholesky(Kd, m):
        return -1.0
    S = Kd[m:m + z]                          # Z_D^T K_DD^{-1} Z_D (spare rows of Kd)
    for c in range(z):
        for a in range(m):
            F[c, a] = Z[D[a], c]
        _cho_solve(Kd, m, F[c])
        for e in range(c + 1):
            s = 0.0
            for a in range(m):
                s += Z[D[a], c] * F[e, a]
            S[c, e] = s
    if z and not _cholesky(S, z):
        return -1.0
    for a in range(m):
        x[a] = u[D[a]]
    for j in range(rec.size):       # loops: a slice assignment compiles numba's error text
        rec[j] = p[j]
    for step in range(2):                     # the solve, then one step of refinement
        v, multiplier = (x, lam) if step == 0 else (y, mu)
        if step:
            _dot_rows(Bpt, D, m, rec, y)
        _constrained(Kd, F, S, Z, D, m, v, multiplier)
        _sub_rows(Bpt, D, m, v, rec)
    return inv


@njit(cache=True)
def _constrained(Kd, F, S, Z, D, m, x, lam):
    """In place ``x <- argmin {y^T K_DD y - 2 x . y : Z_D^T y = 0}`` and ``lam`` its
    multiplier (``K_DD y + Z_D lam = x``), from the factors of ``_tall``."""
    z = F.shape[0]
    _cho_solve(Kd, m, x)
    _zt(Z, D, m, x, lam)
    if z:
        _cho_solve(S, z, lam)
        for c in range(z):
            for a in range(m):
                x[a] -= F[c, a] * lam[c]


@njit(cache=True)
def _weights(K, Zt, u, D, m, x, lam, z, row_max, w):
    """The weights ``w = u - K[:, D] x - Z lam`` (0 on ``D``); returns ``(mass, ||w||^2)``
    with ``mass = |w| . row_max``."""
    for j in range(w.size):
        w[j] = u[j]
    for a in range(m):
        for j in range(w.size):
            w[j] -= x[a] * K[D[a], j]
    for c in range(z):
        for j in range(w.size):
            w[j] -= lam[c] * Zt[c, j]
    for a in range(D.size):
        w[D[a]] = 0.0
    mass, norm2 = 0.0, 0.0
    for j in range(w.size):
        mass += abs(w[j]) * row_max[j]
        norm2 += w[j] * w[j]
    return mass, norm2


@njit(cache=True)
def _verdict(worst, norm, mass_lo, mass_up, kappa_R, sigma, rtol, exact_only, final):
    """1: exact, 0: not exact, -1: the decoder must run, -2: undecided until the weights' norm
    (``norm``, an upper bound on ``||w||``) and mass (between ``mass_lo`` and ``mass_up``) are
    known better (``final``: they are ``w``'s own)."""
    rho = 16.0 * EPS * sigma * norm           # lstsq's rounding, bounded
    if rho <= 3e-7 and worst + rho <= 0.5 * rtol * max(1.0, 0.5 * mass_lo):
        return 1
    if (not exact_only and kappa_R <= MAX_KAPPA_INEXACT
            and worst > 2.0 * rtol * max(1.0, mass_up)):
        return 0
    return -1 if final else -2


@njit(cache=True)
def _clear(inv, floor, kappa, kappa_cut, s_floor):
    """Whether ``Z_D``'s smallest singular value ``s`` (``1 / s^2 <= inv``) is clearly not 0:
    ``s^2`` above ``floor`` (the rounding of its estimate), ``s`` above ``s_floor`` (the
    rounding of ``Z`` itself), and ``kappa_R = kappa / s`` below ``kappa_cut`` (where lstsq
    would cut a singular value of ``B_R`` off)."""
    return inv <= 0.0 or (inv * floor <= 1.0 and inv * s_floor * s_floor <= 1.0
                          and kappa * np.sqrt(inv) <= kappa_cut)


@njit(cache=True)
def _least_squares_rounds(got, K, Kn, Bpt, Z, Zt, u, p, row_max, sizes, kappa, sigma, rtol,
                          exact_only, given, given_lam, frac, err, exact):
    """Per round ``t``: ``frac``, ``err``, ``exact`` where trusted (module docstring).  A round
    with ``|D| <= z`` whose Gram matrix cannot tell ``Z_D``'s rank gets ``given[t] = -2``: the
    caller runs it again with ``given[t] = 1 / s_min^2`` and its ``given_lam[t]`` from an SVD."""
    T, n = got.shape
    k, z = p.size, Z.shape[1]
    kappa_cut, s_floor = 0.01 / (EPS * max(n, k)), 1e3 * EPS * kappa * np.sqrt(n)
    D = np.empty(n, np.int64)
    x, y, col, w, lam, mu = (np.empty(n), np.empty(n), np.empty(n), np.empty(n), np.empty(z),
                             np.empty(z))
    rec, F = np.empty(k), np.empty((z, n))
    G, M = np.empty((max(z, 1), max(z, 1))), np.empty((max(z, 1), max(z, 1)))
    Kd = np.empty((z, 0))
    uu, rnorm, zero, final = 0.0, 0.0, T - T, T >= 0       # (zero, final: not literals)
    for i in range(n):
        uu += u[i] * u[i]
        rnorm += row_max[i] * row_max[i]
    rnorm = 1.01 * np.sqrt(rnorm)
    p_worst, p_e, p_covered = _stats(p, sizes)
    for t in range(T):
        m = zero                              # not the literal 0: one compiled version
        for i in range(n):
            if not got[t, i]:
                D[m] = i
                m += 1
        if m == n:                            # nothing received: zero weights
            frac[t], err[t], exact[t] = 0.0, float(k), k == 0
            continue
        lam[:] = 0.0
        mx = zero                             # the entries of x in use
        floor = 1e3 * EPS * m * z             # the rounding of a Gram matrix's eigenvalues
        if m == 0:
            inv = 0.0
        elif m <= z and given[t] == given[t]:     # an SVD's: its own rounding is of s itself
            inv, floor = given[t], (1e3 * EPS) ** 2 * m * z
            for c in range(lam.size):
                lam[c] = given_lam[t, c]
        elif m <= z:
            inv = _wide(Z, u, D, m, G, M, col, lam)
            if not (inv >= 0.0 and _clear(inv, floor, kappa, kappa_cut, s_floor)):
                given[t] = -2.0
                continue
        else:
            if Kd.shape[1] < m:
                Kd = np.empty((m + z, m))
            inv = _tall(K, Bpt, Z, u, p, D, m, G, M, Kd, F, x, lam, y, mu, rec)
            mx = m
        if not (inv >= 0.0 and _clear(inv, floor, kappa, kappa_cut, s_floor)):
            continue
        worst, e, covered = _stats(rec, sizes) if mx else (p_worst, p_e, p_covered)
        kappa_R = kappa * np.sqrt(inv) if inv > 0.0 else kappa
        norm = 0.0                            # ||w|| <= ||u|| + sum |x_a| ||K[:, D_a]|| + ||lam||
        for a in range(mx):
            norm += abs(x[a]) * Kn[D[a]]
        ll = 0.0
        for c in range(z):
            ll += lam[c] * lam[c]
        norm += np.sqrt(uu) + np.sqrt(ll)
        v = _verdict(worst, norm, 0.0, norm * rnorm, kappa_R, sigma, rtol, exact_only,
                     not final)
        if v == -2:
            mass, norm2 = _weights(K, Zt, u, D[:m], mx, x, lam, z, row_max, w)
            v = _verdict(worst, np.sqrt(norm2), mass, mass, kappa_R, sigma, rtol,
                         exact_only, final)
        if v == 1:
            frac[t], err[t], exact[t] = 1.0, e, True
        elif v == 0:
            frac[t], err[t], exact[t] = covered, e, False


# ------------------------------------------------------------------------ scaled sum
@njit(cache=True, fastmath=FAST)
def _scaled_sum_rounds(got, indptr, indices, data, colsum, row_max, sizes, scale, rtol,
                       frac, err, exact):
    T, n = got.shape
    k = colsum.size
    rec = np.empty(k)
    for t in range(T):
        m = 0
        for i in range(n):
            m += not got[t, i]
        few = 2 * m < n
        for j in range(k):
            rec[j] = colsum[j] if few else 0.0
        mass = 0.0
        for i in range(n):
            if got[t, i]:
                mass += row_max[i]
            if got[t, i] != few:
                for q in range(indptr[i], indptr[i + 1]):
                    rec[indices[q]] += data[q] if not few else -data[q]
        c = scale[t]
        mass *= abs(c)
        worst, e, covered, big = 0.0, 0.0, 0.0, 0.0
        for j in range(k):
            v = c * rec[j]
            d = v - 1.0
            worst = max(worst, abs(d))
            big = max(big, abs(v))
            e += d * d
            covered += sizes[j] * min(max(v, 0.0), 1.0)
        tol = rtol * max(1.0, mass)
        if abs(worst - tol) <= 1e-6 * tol + 1e-13 * (1.0 + big):
            continue                          # within a hair of the tolerance: the decoder
        exact[t] = worst <= tol
        frac[t] = 1.0 if exact[t] else covered
        err[t] = e


def scaled_sum_rounds(B, got, scale, row_max, sizes, rtol: float):
    """``recovery_many``'s ``(recovered_fraction, decode_error, exact)`` of the decoder
    ``w = scale_t 1_R`` for each row ``t`` of ``got`` (``B`` CSR ``(n, k)``, ``row_max`` its
    rows' largest ``|B_ij|``, ``sizes`` the partitions' shares, ``rtol`` the exactness
    tolerance); NaN, NaN, False where the round's exactness is within a hair of the tolerance
    (the decoder decides).

    >>> import scipy.sparse as sp
    >>> B = sp.csr_array(np.array([[1.0, 1, 0], [0, 1, 1], [1, 0, 1]]) / 2)
    >>> got = np.array([[1, 1, 1], [1, 1, 0]], bool)
    >>> out = scaled_sum_rounds(B, got, np.array([1.0, 1.5]), np.full(3, 0.5), np.ones(3) / 3,
    ...                         1e-8)
    >>> frac, err, exact = out
    >>> frac.round(6).tolist(), err.round(6).tolist(), exact.tolist()
    ([1.0, 0.833333], [0.0, 0.375], [True, False])
    """
    got = np.ascontiguousarray(got, dtype=bool)
    R = got.shape[0]
    frac, err, exact = np.full(R, np.nan), np.full(R, np.nan), np.zeros(R, bool)
    if R:
        colsum = np.asarray(B.sum(axis=0), float).ravel()
        _scaled_sum_rounds(got, B.indptr.astype(np.int64), B.indices.astype(np.int64),
                           _writable(B.data), colsum, _writable(row_max), _writable(sizes),
                           _writable(scale), float(rtol), frac, err, exact)
    return frac, err, exact


def _writable(x) -> np.ndarray:
    """A writable float copy of ``x``: numba compiles a kernel once per argument types, and a
    read-only array (a code's: codes are immutable) is another type than a writable one, so the
    kernels were compiled twice where callers of both kinds met (13 s on 2 cores)."""
    return np.array(x, float)
