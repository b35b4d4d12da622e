"""The span test's compiled kernels (``codes._span``, whose docstring gives the mathematics):
per round, the rows of ``Z`` in reverse arrival order reduced by Gaussian elimination
(``rounds``), and where a dependent row is not consistent, the least-squares decoding computed
from the certificates (``_ratio``): first from bounds on the weights' norm (``||G^+ z|| <=
||res|| / sigma_r`` and a solution on the pivot columns, whose norm bounds the least one's),
then exactly; the certificates' Gram matrix ``Y^T G^+ Y`` and its Cholesky factor are kept
between the steps of a round (``_gram``: ``O(ndep r)`` a new certificate, not ``O((r +
ndep)^2 ndep)`` a step; ``G^+``'s entries it needs gathered once a round).

Inner loops index 2-D arrays by a row index held in a scalar (``i = S[p]``, ``A[i, j]``) and
read loop-invariant entries into scalars: an index or a ``z[p]`` re-read from memory in the
innermost loop keeps LLVM from vectorising it (``_ratio``'s ``64 x 256`` accumulation of
``res`` ran ~6x slower so), and a row view (``row = A[i]``) costs an atomic reference-count
increment and decrement each time it is made (~15 % of the kernel's time at n = 256, measured
with ``perf``).  ``error_model="numpy"``: no zero-division checks (no division here is by
zero), whose exception paths kept numba from pruning the reference counts of a helper's array
arguments.  Arrays are copied by loops, not assigned to slices (``a[:k] = b``): numba's slice
assignment compiles the text of its shape error (~3 s of each process's compilation).

The rows taken so far are reduced by Gaussian elimination: pivot row ``q`` is ``P[q]`` (1 at its
pivot column ``pc[q]``, 0 at the earlier ones', at most 1 elsewhere), ``Z_ind = L P`` with ``L``
lower triangular (``L[q, :q]`` the multipliers; the pivot on the diagonal, held inverted:
``L[q, q] = 1 / pivot``, so that the solves multiply where they would divide),
``aP = L^{-1} a0_ind``.  Rows are zero-padded to a multiple of 8 entries.  A row reduced with
multipliers ``mu`` is ``z = gamma . Z_ind + x``, ``gamma = L^{-T} mu``.

The entry points (``rounds``, ``first``) release the GIL, and ``rounds`` allocates its scratch
per call and starts each round afresh (a round reads nothing an earlier one left): calls on
disjoint rows of the output arrays may run at once, from several threads (``codes._span``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: a row of ``Z`` (orthonormal columns) is independent of the rows before it where its
#: remainder is at least ``INDEPENDENT_REM`` and ``CLEAR`` times its rounding level, dependent
#: where it is within that level (``_kind``; the level is computed where the remainder is
#: below ``GAMMA_CHECK``); in between ("soft") it is taken as dependent where least squares
#: decodes either way, else the decoder decides
INDEPENDENT_REM, CLEAR, GAMMA_CHECK = 1e-8, 100.0, 1e-6
#: the kinds of row
INDEPENDENT, DEPENDENT, SOFT = 0, 1, 2
#: ``|a'| <= CONSISTENT (max |a0| + sum |gamma a0|)``: the dependent row keeps the system
#: solvable (at n = 256: at most 1e-10 where solvable, at least 1e-6 where not); above, the
#: decoding is computed (``_ratio``)
CONSISTENT = 1e-9
#: residual / tolerance at least ``MARGIN`` (at most ``1 / MARGIN``): not exact (exact); the
#: exact computation agrees with ``lstsq``'s to ~1e-8 (measured at n = 256)
MARGIN = 1.0001
#: past a step that does not decode, the pass goes on until the ratio reaches ``CONTINUE``:
#: least squares' tolerance grows with its weights, so exactness is not monotone where the
#: residual is within a few tolerances (``cyclic-mds`` at n = 256: a later step decodes after
#: ratios of at most 2.1, in 3 rounds of 60)
CONTINUE = 10.0
#: how far the least-squares weights of a set that stops decoding may outgrow the last exact
#: ones (norm; at most ~12 measured at n = 256), for the quick not-exact test
GROWTH = 100.0
#: LLVM may reorder sums and fuse multiply-adds
FAST = {"reassoc", "contract", "nsz"}
#: ``status`` of a round: decided; the decoder decides the next step
SOLVABLE, UNSURE = 0, 1
#: the most certificates whose Gram matrix (and its Cholesky factor) a round keeps between its
#: steps (``_gram``); more: formed anew at each step
MAX_GRAM = 96


@njit(cache=True, nogil=True)
def first(order, count, got):
    """``got[r, order[r, :count[r]]] = True``: the first ``count[r]`` arrivals of round ``r``."""
    for r in range(order.shape[0]):
        for j in range(count[r]):
            got[r, order[r, j]] = True


@njit(cache=True, fastmath=FAST, error_model="numpy")
def _load(Z, a0, order, last, nb, pc, P, aP, rank, X, AX, MU):
    """The next ``nb <= 4`` rows, ``order[last], order[last - 1], ..``, of ``Z`` (zero-padded
    to the width of ``X``) less their parts along the ``rank`` pivot rows
    (multipliers ``MU``; ``AX``: ``a0`` less the same combinations of ``aP``): four rows in
    lock step (independent work in flight; whole padded rows, which vectorise best)."""
    W, t = X.shape[1], Z.shape[1]
    X[:, :] = 0.0
    AX[:] = 0.0
    for b in range(nb):
        i = order[last - b]
        for j in range(t):
            X[b, j] = Z[i, j]
        AX[b] = a0[i]
    x0, x1, x2, x3 = X[0], X[1], X[2], X[3]
    for q in range(rank):
        col = pc[q]
        c0, c1, c2, c3 = x0[col], x1[col], x2[col], x3[col]
        MU[0, q], MU[1, q], MU[2, q], MU[3, q] = c0, c1, c2, c3
        for j in range(W):
            v = P[q, j]
            x0[j] -= c0 * v
            x1[j] -= c1 * v
            x2[j] -= c2 * v
            x3[j] -= c3 * v
        a = aP[q]
        AX[0], AX[1], AX[2], AX[3] = AX[0] - c0 * a, AX[1] - c1 * a, AX[2] - c2 * a, AX[3] - c3 * a
        x0[col], x1[col], x2[col], x3[col] = 0.0, 0.0, 0.0, 0.0


@njit(cache=True, fastmath=FAST, error_model="numpy")
def _eliminate(x, ax, pc, P, aP, q0, q1, mu):
    """``x`` less its parts along pivot rows ``q0 .. q1 - 1`` (multipliers into ``mu``);
    returns ``ax`` less the same combination of ``aP``."""
    for q in range(q0, q1):
        c = x[pc[q]]
        mu[q] = c
        if c != 0.0:
            for j in range(x.size):
                x[j] -= c * P[q, j]
            ax -= c * aP[q]
        x[pc[q]] = 0.0
    return ax


@njit(cache=True, fastmath=FAST, error_model="numpy")
def _norm(v, n):
    s = 0.0
    for j in range(n):
        s += v[j] * v[j]
    return np.sqrt(s)


@njit(cache=True, fastmath=FAST, error_model="numpy")
def _kind(L, rank, t, rem, noise, gam):
    """A row reduced to a remainder of norm ``rem`` with multipliers ``mu`` (in ``gam`` on
    entry) that ``rounds`` did not find clearly independent: ``DEPENDENT`` (``rem`` within the
    rounding ``noise (1 + ||gamma||)``: ``Z`` is accurate to ``noise``), ``INDEPENDENT`` (far
    above it) or ``SOFT`` (neither clearly); ``gam`` becomes ``gamma = L^{-T} mu`` (``L_r``
    the leading ``rank x rank`` part of ``L``), the combination of the pivot workers' rows the
    row came from.  By columns of ``L^T`` (rows of ``L``, contiguous): a dot product a row
    gathered ``L^T``'s entries and ran ~3.5x slower.  Two array arguments, both used to the
    end: numba then prunes their reference counts (an atomic pair each a call)."""
    for back in range(rank):
        q = rank - 1 - back
        v = gam[q] * L[q, q]
        gam[q] = v
        for p in range(q):
            gam[p] -= L[q, p] * v
    level = noise * (1.0 + _norm(gam, rank))
    kind = DEPENDENT
    if rank < t and rem > level:
        kind = INDEPENDENT if rem >= INDEPENDENT_REM and rem >= CLEAR * level else SOFT
    return kind


@njit(cache=True, fastmath=FAST, error_model="numpy")
def _pivot(x, ax, mu, i, rank, pc, P, aP, L, ind):
    """Row ``i``, reduced to ``x``, becomes pivot row ``rank`` (at its largest entry);
    returns ``|pivot|``."""
    best, col = -1.0, 0
    for j in range(x.size):
        if abs(x[j]) > best:
            best, col = abs(x[j]), j
    piv = x[col]
    inv = 1.0 / piv
    for j in range(x.size):
        P[rank, j] = x[j] * inv
    P[rank, col] = 1.0
    pc[rank], aP[rank], ind[rank] = col, ax / piv, i
    for q in range(rank):
        L[rank, q] = mu[q]
    L[rank, rank] = inv
    return abs(piv)


@njit(cache=True, fastmath=FAST, error_model="numpy")
def _quick_not_exact(Gp, a0n2, rowmax_max, rtol, k, n, rank, ind, pc, P, aP, d, dj, dr, dgam,
                     da, c):
    """The certificate of dependent row ``d`` bounds every residual below; True where that
    bound clears ``CONTINUE`` times the tolerance of weights ``GROWTH`` times the last exact
    ones' norm (a solution ``a0 + Z c`` vanishing on the rows so far)."""
    r, jd = dr[d], dj[d]
    h = Gp[jd, jd]
    for p in range(r):
        i = ind[p]
        s = -2.0 * Gp[i, jd]
        for q in range(r):
            s += dgam[d, q] * Gp[i, ind[q]]
        h += dgam[d, p] * s
    if not h > 0.0:
        return False
    for back in range(rank):                   # P[:, pc] is unit upper triangular
        p = rank - 1 - back
        s = -aP[p]
        for q in range(p + 1, rank):
            s -= P[p, pc[q]] * c[q]
        c[p] = s
    w2 = a0n2 + _norm(c, rank) ** 2
    tol = rtol * max(1.0, GROWTH * np.sqrt(n * w2) * rowmax_max)
    return abs(da[d]) / np.sqrt(h * k) > CONTINUE * tol


@njit(cache=True, fastmath=FAST, error_model="numpy")
def _forward(uind, rank, L, b):
    """``b[:rank] = L^{-1} (-u_ind)``, ``L`` lower triangular (its leading ``rank x rank``
    part); returns ``b[:rank]``."""
    for p in range(rank):
        s = -uind[p]
        for q in range(p):
            s -= L[p, q] * b[q]
        b[p] = s * L[p, p]
    return b[:rank]


@njit(cache=True, fastmath=FAST, error_model="numpy")
def _pivot_solve(uind, rank, L, pc, P, out, b):
    """``out``: a ``c`` with ``Z_ind c = L P c = -u_ind``, zero off the pivot columns (``P[:,
    pc]`` is unit upper triangular): ``||out||`` bounds the min-norm one's (``_min_norm``)."""
    b = _forward(uind, rank, L, b)
    for back in range(rank):
        p = rank - 1 - back
        s = b[p]
        for q in range(p + 1, rank):
            s -= P[p, pc[q]] * b[q]
        b[p] = s
    out[:] = 0.0
    for p in range(rank):
        out[pc[p]] = b[p]


@njit(cache=True, fastmath=FAST, error_model="numpy")
def _min_norm(uind, rank, t, L, P, out, b):
    """``out`` = the min-norm ``c`` with ``Z_ind c = L P c = -u_ind`` where ``rank < t`` (at
    ``rank = t`` it is ``_pivot_solve``'s): ``b = L^{-1} (-u_ind)``, then ``c = P^T (P
    P^T)^{-1} b`` (``P``, unit at its pivots and at most 1 elsewhere, is far better conditioned
    than ``Z_ind``); False where that fails."""
    b = _forward(uind, rank, L, b)
    out[:] = 0.0
    G = np.empty((rank, rank))
    for p in range(rank):
        for q in range(p + 1):
            s = 0.0
            for j in range(t):
                s += P[p, j] * P[q, j]
            G[p, q] = s
            G[q, p] = s
    if not _cholesky_solve(G, b):
        return False
    for p in range(rank):
        bp = b[p]
        for j in range(t):
            out[j] += bp * P[p, j]
    return True


@njit(cache=True, fastmath=FAST, error_model="numpy")
def _ratio(Z, a0, Gp, Gp2, ga0, Bpt, sigma_r, row_max, rtol, order, steps, rank, ind, L, pc, P,
           ndep, dj, dr, dgam, da, gram, work):
    """The least-squares decoding of the first ``n - steps`` arrivals, computed from the
    certificates (module docstring): ``max |w B - 1|`` over its tolerance (negative: unsure)
    and the error ``||w B - 1||^2``.  The tolerance's ``|w| rowmax`` is first bounded by
    ``||w||`` (``w = u + Z c``, ``u = a0 - G^+ z``), itself bounded first (``||G^+ z|| <=
    ||res|| / sigma_r``, ``c`` a solution on the pivot columns): a ratio of at least
    ``CONTINUE`` that way needs nothing more; then ``||u||^2`` from ``G^+ a0`` and ``G^{+2}``
    and the least ``c``; where the bounds do not decide, ``w`` is formed.  ``gram``: the
    certificates' ``Y^T G^+ Y`` and its Cholesky factor, kept between the steps of a round
    (``_gram``); ``work``: ``(S, z, res, uS, c, g, u, consts)``, buffers and ``||a0||^2``, ``max``
    and ``min`` of ``row_max`` (``work_store``)."""
    n, t = Z.shape
    k = Bpt.shape[1]
    ns = rank + ndep
    S, z, res, uS, c, g, u, consts = work
    a0n2, rmax, rmin = consts[0], consts[1], consts[2]
    for p in range(rank):
        S[p] = ind[p]
    for d in range(ndep):
        S[rank + d] = dj[d]
    z[:ns] = 0.0
    res[:] = 0.0
    if 1 < ndep <= gram[0].shape[0]:
        if not _gram(Gp, ind, dj, dr, dgam, ndep, gram):
            return -1.0, np.nan
        for d in range(ndep):
            g[d] = da[d]
        _cho_solve(gram[1], ndep, g)
        for d in range(ndep):
            z[rank + d] = g[d]
            for p in range(dr[d]):
                z[p] -= g[d] * dgam[d, p]
        for p in range(ns):
            zp, i = z[p], S[p]
            if zp != 0.0:
                for j in range(k):
                    res[j] += zp * Bpt[i, j]
    else:
        Y = np.zeros((ns, ndep))
        for d in range(ndep):
            for p in range(dr[d]):
                Y[p, d] = -dgam[d, p]
            Y[rank + d, d] = 1.0
        if not _coefficients(Gp, Bpt, S[:ns], Y, da, ndep, z, res):
            return -1.0, np.nan
    worst, err = 0.0, 0.0
    for j in range(k):
        worst, err = max(worst, abs(res[j])), err + res[j] * res[j]
    un2 = 0.0
    for p in range(ns):
        i = S[p]
        s = a0[i]
        for q in range(ns):
            s -= Gp[i, S[q]] * z[q]
        uS[p] = s
        un2 -= 2.0 * z[p] * ga0[i]
    # first by bounds: ||G^+ z|| = ||B^+T res|| <= ||res|| / sigma_r, and a c on the pivot
    # columns (the least c where rank = t; its norm bounds the least one's)
    _pivot_solve(uS, rank, L, pc, P, c, g)
    wn = np.sqrt(max(un2 + err / sigma_r**2 + a0n2, 0.0) + _norm(c, t) ** 2)
    if worst >= CONTINUE * rtol * max(1.0, rmax * np.sqrt(n - steps) * wn):
        return worst / (rtol * max(1.0, rmax * np.sqrt(n - steps) * wn)), err
    for p in range(ns):
        s2, i = 0.0, S[p]
        for q in range(ns):
            s2 += Gp2[i, S[q]] * z[q]
        un2 += z[p] * s2
    u2 = max(un2 + a0n2, 0.0)
    if rank < t and not _min_norm(uS, rank, t, L, P, c, g):
        return -2.0, np.nan
    wn = np.sqrt(u2 + _norm(c, t) ** 2)
    low = worst / (rtol * max(1.0, rmax * np.sqrt(n - steps) * wn))
    high = worst / (rtol * max(1.0, rmin * wn))
    if low >= MARGIN or high <= 1.0 / MARGIN:
        return (low if low >= MARGIN else high), err
    for i in range(n):
        u[i] = a0[i]
    for p in range(ns):
        zp, h = z[p], S[p]
        if zp != 0.0:
            for i in range(n):
                u[i] -= zp * Gp[h, i]
    mass = 0.0
    for j in range(n - steps):
        i = order[j]
        s = u[i]
        for q in range(t):
            s += Z[i, q] * c[q]
        mass += abs(s) * row_max[i]
    return worst / (rtol * max(1.0, mass)), err


@njit(cache=True)
def work_store(n, k, t, row_max, a0):
    """``_ratio``'s buffers for ``n`` workers, ``k`` partitions and ``t`` pivots, and its
    constants."""
    consts = np.array([np.sum(a0 * a0), row_max.max(), row_max.min()])
    return (np.zeros(n, np.int64), np.zeros(n), np.zeros(k), np.zeros(n), np.zeros(t),
            np.zeros(max(n, t)), np.zeros(n), consts)


@njit(cache=True)
def gram_store(nc, t):
    """``_gram``'s arrays for at most ``nc`` certificates and ``t`` pivots (a round starts with
    ``gram[3]`` zero)."""
    return (np.zeros((nc, nc)), np.zeros((nc, nc)), np.zeros((nc, t)), np.zeros(3 + nc, np.int64),
            np.zeros((t, t)), np.zeros((nc, t)))


@njit(cache=True, fastmath=FAST, error_model="numpy")
def _gram(Gp, ind, dj, dr, dgam, ndep, gram):
    """Extends ``H = Y^T G^+ Y`` (``gram[0]``: certificates ``y_d = e_{dj[d]} - gamma_d`` on the
    first ``dr[d]`` pivot workers, ``dgam[d]`` zero past them) and its Cholesky factor
    (``gram[1]``) to ``ndep`` certificates, from where the round's last call left them
    (``gram[3][0]`` done; ``gram[3][1]``: 1 where one was not positive definite):
    ``H[e, d] = G^+_{je,jd} - gamma_e . E[d] + gamma_d . (Q[e] - E[e])`` with ``E[d] =
    G^+_{dj[d],ind}`` (``gram[5]``, gathered to ``gram[3][3 + d]`` pivots) and ``Q[e] =
    G^+_{ind,ind} gamma_e`` (``gram[2]``, which keeps ``Q[e] - E[e]``), from ``G^+_{ind,ind}``
    gathered once a round (``gram[4]``, ``gram[3][2]`` pivots so far).  ``O(r^2 + ndep r)`` a
    new certificate (``r`` pivots); ``Q`` four certificates at a time and ``H`` four entries at
    a time (one pass over a row for four).  False where ``H`` is not numerically positive
    definite."""
    H, C, Q, state, GI, E = gram
    if state[1] and ndep > state[0]:
        return False
    e0 = state[0]
    if e0 >= ndep:
        return True
    r1 = dr[ndep - 1]                           # rank grows: the most pivots
    for p in range(state[2], r1):               # G^+_{ind,ind}: the new pivots
        i = ind[p]
        for q in range(p + 1):
            v = Gp[i, ind[q]]
            GI[p, q] = v
            GI[q, p] = v
    state[2] = max(state[2], r1)
    for d in range(ndep):                       # G^+_{dj[d],ind}: the new pivots
        i = dj[d]
        for q in range(state[3 + d], r1):
            E[d, q] = Gp[i, ind[q]]
        state[3 + d] = max(state[3 + d], r1)
    for e in range(e0, ndep, 4):                # Q[e] = G^+_{ind,ind} gamma_e, 4 at a time
        e1, e2, e3 = min(e + 1, ndep - 1), min(e + 2, ndep - 1), min(e + 3, ndep - 1)
        rb = dr[e3]
        for p in range(rb):
            s0 = s1 = s2 = s3 = 0.0
            for q in range(rb):
                g = GI[p, q]
                s0 += g * dgam[e, q]
                s1 += g * dgam[e1, q]
                s2 += g * dgam[e2, q]
                s3 += g * dgam[e3, q]
            Q[e, p], Q[e1, p], Q[e2, p], Q[e3, p] = s0, s1, s2, s3
    for e in range(e0, ndep):
        je, re = dj[e], dr[e]
        for q in range(re):                     # Q[e] becomes G^+_{ind,ind} gamma_e - E[e]
            Q[e, q] -= E[e, q]
        for d in range(0, e + 1, 4):            # H[e, d] = G^+_{je,jd} - gamma_e . E[d]
            d1, d2, d3 = min(d + 1, e), min(d + 2, e), min(d + 3, e)  # + gamma_d . Q[e]
            h0 = h1 = h2 = h3 = 0.0
            for q in range(re):
                f, g = Q[e, q], dgam[e, q]
                h0 += f * dgam[d, q] - g * E[d, q]
                h1 += f * dgam[d1, q] - g * E[d1, q]
                h2 += f * dgam[d2, q] - g * E[d2, q]
                h3 += f * dgam[d3, q] - g * E[d3, q]
            H[e, d], H[e, d1], H[e, d2], H[e, d3] = h0, h1, h2, h3
        for d in range(e + 1):
            h = H[e, d] + Gp[je, dj[d]]
            H[e, d] = h
            H[d, e] = h
        for d in range(e + 1):          # row e of the Cholesky factor
            s = H[e, d]
            for q in range(d):
                s -= C[e, q] * C[d, q]
            if d < e:
                C[e, d] = s / C[d, d]
            elif not s > 0.0:
                state[0], state[1] = e, 1
                return False
            else:
                C[e, e] = np.sqrt(s)
        state[0] = e + 1
    return True


@njit(cache=True, fastmath=FAST, error_model="numpy")
def _cho_solve(C, m, b):
    """``b <- (C C^T)^{-1} b`` (``C`` lower triangular, its leading ``m x m`` part)."""
    for j in range(m):
        s = b[j]
        for q in range(j):
            s -= C[j, q] * b[q]
        b[j] = s / C[j, j]
    for j in range(m - 1, -1, -1):
        for q in range(j + 1, m):
            b[j] -= C[q, j] * b[q]
        b[j] /= C[j, j]


@njit(cache=True, fastmath=FAST, error_model="numpy")
def _coefficients(Gp, Bpt, S, Y, da, ndep, z, res):
    """``z = Y g`` with ``(Y^T G^+ Y) g = a'`` (``G^+ = Bpt Bpt^T``) and the residual ``res =
    Bpt^T z`` (``w B - 1`` up to sign); one certificate: by its ``v = Bpt^T y`` (no
    gathers).  False where the system is not positive definite."""
    ns, k = S.size, Bpt.shape[1]
    if ndep == 1:
        for p in range(ns):
            yp, i = Y[p, 0], S[p]
            if yp != 0.0:
                for j in range(k):
                    res[j] += yp * Bpt[i, j]
        h = 0.0
        for j in range(k):
            h += res[j] * res[j]
        if not h > 0.0:
            return False
        g = da[0] / h
        for p in range(ns):
            z[p] = Y[p, 0] * g
        for j in range(k):
            res[j] *= g
        return True
    G = np.empty((ns, ns))
    for p in range(ns):
        i = S[p]
        for q in range(ns):
            G[p, q] = Gp[i, S[q]]
    if ns * ns * ndep > 20_000:
        H = Y.T @ (G @ Y)                               # BLAS
    else:                                               # too small for a BLAS call
        H = np.zeros((ndep, ndep))
        for p in range(ns):
            for q in range(ns):
                gq = G[p, q]
                for d in range(ndep):
                    yd = Y[p, d] * gq
                    for e in range(ndep):
                        H[d, e] += yd * Y[q, e]
    g = da[:ndep].copy()
    if not _cholesky_solve(H, g):
        return False
    for p in range(ns):
        for d in range(ndep):
            z[p] += Y[p, d] * g[d]
        zp, i = z[p], S[p]
        if zp != 0.0:
            for j in range(k):
                res[j] += zp * Bpt[i, j]
    return True


@njit(cache=True, fastmath=FAST, error_model="numpy")
def _cholesky_solve(H, b):
    """``b <- H^{-1} b`` in place by Cholesky (``H`` overwritten); False where ``H`` is not
    numerically positive definite."""
    m = b.size
    for j in range(m):
        s = H[j, j]
        for q in range(j):
            s -= H[j, q] * H[j, q]
        if not s > 0.0:
            return False
        H[j, j] = np.sqrt(s)
        for i in range(j + 1, m):
            s = H[i, j]
            for q in range(j):
                s -= H[i, q] * H[j, q]
            H[i, j] = s / H[j, j]
    _cho_solve(H, m, b)
    return True


@njit(cache=True, fastmath=FAST, nogil=True, error_model="numpy")
def rounds(Z, a0, Gp, Gp2, ga0, Bpt, sigma_r, row_max, rtol, noise, orders, limit, s_free, force,
           m_out, status_out, at_out, err_out, why_out):
    """Per round: rows of ``Z`` in reverse arrival order, at most ``limit[r]`` of them; the
    largest number ``m`` of last arrivals whose absence decodes exactly (the decoder's count
    is ``n - m``), the ``status`` (``UNSURE``: step ``at`` needs the decoder), the decoding
    error ``||w B - 1||^2`` of that set (0: solvable; NaN: unknown), and the last residual-to-
    tolerance ratio computed (``why``; NaN: none).  Step ``j`` in ``force[r]`` decodes, ``-j``
    does not (the decoder said so).  Past a step that does not decode the pass goes on while the
    ratio stays below ``CONTINUE``: the tolerance moves with the weights, so a later step may."""
    n, t = Z.shape
    k = Bpt.shape[1]
    W = -(-t // 8) * 8
    P, L, aP = np.zeros((t, W)), np.zeros((t, t)), np.zeros(t)
    pc, ind = np.zeros(t, np.int64), np.zeros(t, np.int64)
    dj, dr, dgam, da = (np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros((n, t)),
                        np.zeros(n))
    x, mu, gam, c = np.zeros(W), np.zeros(t), np.zeros(t), np.zeros(t)
    X, AX, MU = np.zeros((4, W)), np.zeros(4), np.zeros((4, t))
    nc = min(n, MAX_GRAM)
    gram = gram_store(nc, t)
    work = work_store(n, k, t, row_max, a0)
    amax, rowmax_max, a0n2 = np.abs(a0).max(), row_max.max(), float(np.sum(a0 * a0))
    for r in range(orders.shape[0]):
        rank, ndep, last_bad, min_piv, rank0 = 0, 0, -1, 1.0, 0
        gram[3][:] = 0
        m, status, at, err, why = 0, SOLVABLE, 0, 0.0, np.nan
        order, forced = orders[r], force[r]
        for step in range(1, limit[r] + 1):
            i, b = order[n - step], (step - 1) % 4
            if b == 0:
                rank0 = rank
                _load(Z, a0, order, n - step, min(4, limit[r] - step + 1), pc, P, aP, rank, X,
                      AX, MU)
            for j in range(W):
                x[j] = X[b, j]
            for q in range(rank0):
                mu[q] = MU[b, q]
            ax = _eliminate(x, AX[b], pc, P, aP, rank0, rank, mu)
            # independent where the remainder clears the rounding by the bound ||gamma|| <=
            # ||mu|| / min |pivot|; else _kind decides from gamma itself
            rem = _norm(x, W) if rank < t else 0.0
            if rank < t and rem >= GAMMA_CHECK and rem >= CLEAR * noise * (
                    1.0 + _norm(mu, rank) / min_piv):
                kind = INDEPENDENT
            else:
                for q in range(rank):
                    gam[q] = mu[q]
                kind = _kind(L, rank, t, rem, noise, gam)
            soft = False
            if kind == INDEPENDENT:
                min_piv = min(min_piv, _pivot(x, ax, mu, i, rank, pc, P, aP, L, ind))
                rank += 1
            else:               # dependent (soft: or independent by a hair, then solvable)
                scale = amax
                for q in range(rank):
                    scale += abs(mu[q] * aP[q])
                dj[ndep], dr[ndep], da[ndep] = i, rank, ax
                for q in range(t):          # zero past rank: _gram's loops run past it
                    dgam[ndep, q] = gam[q] if q < rank else 0.0
                bad = abs(ax) > CONSISTENT * scale
                soft = kind == SOFT and bad  # exact either way only if least squares says so
                last_bad = ndep if bad else last_bad
                ndep += 1
            if step in forced:
                m, err = step, np.nan
                continue
            if -step in forced:
                continue
            if step <= s_free or last_bad < 0:
                m, err = step, (0.0 if last_bad < 0 else np.nan)
                continue
            if not soft and ndep > 1 and _quick_not_exact(Gp, a0n2, rowmax_max, rtol, k, n,
                                                          rank, ind, pc, P, aP, last_bad, dj, dr,
                                                          dgam, da, c):
                break
            why, e2 = _ratio(Z, a0, Gp, Gp2, ga0, Bpt, sigma_r, row_max, rtol, order, step,
                             rank, ind, L, pc, P, ndep, dj, dr, dgam, da, gram, work)
            if why >= MARGIN and not soft:
                if why >= CONTINUE:
                    break                  # nor, by CONTINUE's margin, any later step
                continue
            if not 0.0 <= why <= 1.0 / MARGIN:
                status, at = UNSURE, step
                break
            m, err = step, e2
        m_out[r], status_out[r], at_out[r], err_out[r], why_out[r] = m, status, at, err, why
