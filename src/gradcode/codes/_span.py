"""Whether received sets decode exactly, by the left null space of ``B`` (issue 34): the
``decodable`` wait policy's count (``Code.decodable_counts``) without decoding.

The solutions of ``w B = 1`` are ``w = a0 + Z c``: ``Z`` (``n x t``) an orthonormal basis of the
left null space ``{y : y B = 0}`` and ``a0 = (B^+)^T 1`` the min-norm solution (none: ``1`` is
not in the row space, no set decodes).  The received set ``R`` (missing ``D``) decodes exactly
iff some solution vanishes on ``D``: ``a0_D + Z_D c = 0`` is solvable.  Rows of ``Z`` are taken
in reverse arrival order, ``D`` growing from the last arrival, and reduced by Gaussian
elimination with a pivot per row (its largest entry; ``O(t^2)`` a row, ``O(|D| t^2)`` a
round): a row independent of the rows before it keeps the system solvable (a new unknown
direction); a dependent one, ``z_i = gamma . z_prev``, iff ``a'_i = a0_i - gamma . a0_prev``
is 0.  Solvable sets are closed under subsets, so one pass finds the count.  An exact code's own
decoder serves the first ``s`` missing workers (``Code.decode``): those steps decode whatever
the rows say.

The decoder's exactness is a tolerance (``exact_within``): least squares is exact when
``|w B - 1| <= EXACT_RTOL max(1, |w| rowmax)``, which a set that is not solvable may meet (large
weights; ``cyclic-mds`` at n = 256) and a solvable one fail.  So where a dependent row has ``a'``
not ~0, the least-squares decoding is computed from the certificates ``Y`` (one per dependent
row: ``e_i - gamma`` on ``D``, orthogonal to ``Z``; ``B^+ Y`` spans ``null(B_R)``'s part of the
row space): ``w B - 1 = -B^+ Y g`` with ``(Y^T G^+ Y) g = (a'_d)`` (``G^+ = (B B^T)^+``) and the
min-norm ``w = a0 - G^+ Y g + Z c`` that vanishes on ``D``.  Its residual over its tolerance
decides, by a factor ``MARGIN`` either way (it agrees with ``lstsq``'s to ~1e-8); the tolerance
is first bounded by ``||w||``, and ``w`` formed only where the bounds do not decide.  With
several certificates a cheaper bound may decide first (``_quick_not_exact``).  Rows within the
rounding of ``Z`` of being dependent are taken as such where least squares decodes either way.
What is still unsure the decoder settles: the round runs again with that step taken where it
decodes (``SpanTest.counts``).  The kernel answers the recovery of the sets it proves too
(``SpanTest.exact``, ``proven_recovery``: ``recovery_many`` of the codes that use it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

#: the most cells ``n x max(n, k)`` of ``B`` (and of ``(B B^T)^+``) the span test holds
MAX_CELLS = 4_000_000
#: ``B``'s singular values below ``RANK_RTOL sigma_1`` are zero, those above ``RANK_GAP
#: sigma_1`` not; one in between: no span test (the rank is not clear-cut)
RANK_RTOL, RANK_GAP = 1e-11, 1e-8
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
#: steps of a round the decoder may settle before it bisects the rest
MAX_FORCED = 8


@dataclass(frozen=True)
class NullSpace:
    """``B``'s null-space factors (module docstring): ``Z (n, t)``, ``a0 (n,)``, ``Gp = (B
    B^T)^+ (n, n)``, ``Bpt = (B^+)^T (n, k)``; ``a0`` is None where ``1`` is not in the row
    space of ``B`` (no received set decodes); ``noise``: how far ``Z`` may be from the null
    space (``||Z^T B||_F / sigma_r``, at least ``1e-15``); ``Gp2 = Gp^2`` and ``ga0 = Gp a0``
    (bounds on the least-squares weights' norm)."""

    Z: np.ndarray
    a0: np.ndarray | None
    Gp: np.ndarray
    Bpt: np.ndarray
    noise: float
    Gp2: np.ndarray
    ga0: np.ndarray


def null_space(B) -> NullSpace | None:
    """``NullSpace`` of the dense ``B (n, k)``, or None where ``B`` is too large
    (``MAX_CELLS``), zero, or has a rank or a span of ``1`` that is not clear-cut.

    >>> f = null_space(np.array([[1.0, 0], [0, 1], [1, 1]]))   # w = (1, 1, 0) + c (1, 1, -1)
    >>> f.Z.shape, (f.a0 @ [[1.0, 0], [0, 1], [1, 1]]).round(12).tolist()
    ((3, 1), [1.0, 1.0])
    """
    n, k = B.shape
    if n * max(n, k) > MAX_CELLS or n == 0 or k == 0:
        return None
    B = np.asarray(B, float)
    U, S, Vt = np.linalg.svd(B, full_matrices=True)
    if S.size == 0 or not S[0] > 0.0:
        return None
    r = int(np.count_nonzero(S > RANK_RTOL * S[0]))
    if S[r - 1] < RANK_GAP * S[0]:
        return None
    Ur, Sr, Vr = U[:, :r], S[:r], Vt[:r].T
    ones = np.ones(k)
    miss = float(np.abs(ones - Vr @ (Vr.T @ ones)).max())
    if 1e-9 < miss < 1e-5:
        return None
    Bpt = np.ascontiguousarray((Ur / Sr) @ Vr.T)
    Z = np.ascontiguousarray(U[:, r:])
    noise = max(1e-15, float(np.linalg.norm(Z.T @ B)) / Sr[-1])
    a0 = Bpt @ ones if miss <= 1e-9 else None
    Gp = np.ascontiguousarray((Ur / Sr**2) @ Ur.T)
    return NullSpace(Z, a0, Gp, Bpt, noise, np.ascontiguousarray((Ur / Sr**4) @ Ur.T),
                     Gp @ a0 if a0 is not None else np.zeros(n))


class SpanTest:
    """The span test of one code: ``counts(order, decode)`` (``decodable_counts``) and
    ``exact(got)`` (whether received sets are proven to decode exactly, and their decoding
    error), from ``NullSpace`` factors, the rows' ``row_max``, the decoder's ``rtol`` and
    ``s_free`` (steps the own decoder serves: an exact code's ``s``).  The received sets the
    last ``counts`` call proved are remembered, so that the recovery of the same rounds
    (``exact(got, rows)`` with those rounds' rows of ``got``) does not test them again.

    >>> from gradcode import make_code
    >>> code = make_code("gc-cr", n=6, s=2)
    >>> test = SpanTest(null_space(code.B), np.abs(code.B).max(axis=1), 1e-8, 2)
    >>> test.counts(np.array([[5, 4, 3, 2, 1, 0]]), code.decode).tolist()   # any 4 decode
    [4]
    >>> proven, err = test.exact(np.array([[1, 1, 1, 1, 0, 0], [1, 1, 1, 0, 0, 0]], bool))
    >>> proven.tolist(), err.tolist()[0]
    ([True, False], 0.0)
    """

    def __init__(self, f: NullSpace, row_max, rtol: float, s_free: int):
        self.f, self.row_max, self.rtol = f, np.asarray(row_max, float), float(rtol)
        self.s_free = int(s_free)
        self._memo = (np.zeros((0, 0), np.uint8), np.zeros(0))

    def counts(self, order: np.ndarray, decode) -> np.ndarray:
        """Per row of ``order (R, n)`` (arrival orders), the smallest ``k`` whose first ``k``
        decode exactly; ``decode(received, rng=...)`` (the code's) settles the steps the test
        leaves unsure, and the round runs again with that step decided."""
        order = np.ascontiguousarray(order, dtype=np.int64)
        R, n = order.shape
        self._memo = (np.zeros((0, 0), np.uint8), np.zeros(0))
        if self.f.a0 is None:
            return np.full(R, n, np.int64)
        limit, force = np.full(R, n - 1, np.int64), np.zeros((R, 0), np.int64)
        m, status, at, err = self._run(order, limit, self.s_free, force)
        rows = np.flatnonzero(status == UNSURE)
        for _ in range(MAX_FORCED):
            if rows.size == 0:
                break
            step = at[rows]                     # its set: the first n - step arrivals
            ok = np.array([decode(order[r, :n - j], rng=np.random.default_rng(0)).exact
                           for r, j in zip(rows, step)], bool)
            force = np.concatenate([force, np.zeros((R, 1), np.int64)], axis=1)
            force[rows, -1] = np.where(ok, step, -step)
            m[rows], status[rows], at[rows], err[rows] = self._run(order[rows], limit[rows],
                                                                   self.s_free, force[rows])
            rows = rows[status[rows] == UNSURE]
        count = n - m
        for r in rows:                          # still unsure: the decoder, by bisection
            count[r] = bisect(lambda j: decode(order[r, :j], rng=np.random.default_rng(0))
                              .exact, 1, int(count[r]))
            err[r] = np.nan
        self._remember(order, count, np.where(m > 0, err, np.nan))
        return count

    def _remember(self, order, count, err):
        got = np.zeros(order.shape, bool)
        _first(order, count, got)
        self._memo = (np.packbits(got, axis=1), err)

    def exact(self, got: np.ndarray, rows=None) -> tuple[np.ndarray, np.ndarray]:
        """For ``rows`` of ``got (R, n)`` (all by default): whether the received set is proven
        to decode exactly (as remembered from ``counts`` for that round, else tested: the
        missing workers last), and its decoding error ``||w B - 1||^2`` (NaN where not)."""
        got = np.asarray(got, bool)
        rows = np.arange(got.shape[0]) if rows is None else np.asarray(rows, np.int64)
        n = got.shape[1]
        err = np.full(rows.size, np.nan)
        if self.f.a0 is None or rows.size == 0:
            return np.zeros(rows.size, bool), err
        packed, known = self._memo
        if packed.shape[0] == got.shape[0]:
            same = np.all(np.packbits(got[rows], axis=1) == packed[rows], axis=1)
            err[same] = known[rows[same]]
        todo = np.flatnonzero(np.isnan(err))
        if todo.size:
            sub = got[rows[todo]]
            order = np.argsort(~sub, axis=1, kind="stable")        # received first
            limit = (n - np.count_nonzero(sub, axis=1)).astype(np.int64)
            m, status, _, e = self._run(order, limit, 0, np.zeros((todo.size, 0), np.int64))
            err[todo] = np.where((m == limit) & (status == SOLVABLE), e, np.nan)
        return ~np.isnan(err), err

    def _run(self, order, limit, s_free, force):
        f = self.f
        R = order.shape[0]
        m, status, at = np.zeros(R, np.int64), np.zeros(R, np.int8), np.zeros(R, np.int64)
        err, why = np.zeros(R), np.full(R, np.nan)    # why: the kernel's ratios, unread
        if R:
            _rounds(f.Z, f.a0, f.Gp, f.Gp2, f.ga0, f.Bpt, self.row_max, self.rtol, f.noise,
                    np.ascontiguousarray(order, dtype=np.int64), limit, s_free,
                    np.ascontiguousarray(force), m, status, at, err, why)
        return m, status, at, err


def bisect(decodes, lo: int, hi: int) -> int:
    """The smallest ``j`` in ``[lo, hi]`` with ``decodes(j)``, given ``decodes(hi)`` and that
    ``decodes`` is monotone.

    >>> bisect(lambda j: j >= 5, 1, 9)
    5
    """
    while lo < hi:
        mid = (lo + hi) // 2
        if decodes(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


def searched_counts(code, order: np.ndarray) -> np.ndarray:
    """``decodable_counts`` by decoding (every code): per arrival order, a bisection of
    ``code.decode(order[:k]).exact`` over ``k`` (an exact code decodes from ``n - s``, and most
    often not from one fewer: one decode settles it)."""
    out = np.empty(order.shape[0], np.int64)
    rng = np.random.default_rng(0)
    for r, o in enumerate(order):
        n = o.size
        hi = n - code.s if code.s is not None and code.n_machines == code.n_workers else n

        def decodes(k):
            return code.decode(o[:k], rng=rng).exact
        out[r] = hi if hi <= 1 or not decodes(hi - 1) else bisect(decodes, 1, hi - 1)
    return out


def proven_recovery(test: SpanTest | None, got, frac, err, exact):
    """``recovery_many``'s answer completed where the decoder would run (NaN) and ``test``
    proves the received set exact: fraction 1 and the decoding error (0 where the set is
    solvable: the decoder's is rounding)."""
    todo = np.flatnonzero(np.isnan(frac))
    if test is not None and todo.size:
        proven, e = test.exact(got, todo)
        ok = todo[proven]
        frac[ok], err[ok], exact[ok] = 1.0, e[proven], True
    return frac, err, exact


# ------------------------------------------------------------------ compiled kernels
@njit(cache=True)
def _first(order, count, got):
    """``got[r, order[r, :count[r]]] = True``: the first ``count[r]`` arrivals of round ``r``."""
    for r in range(order.shape[0]):
        for j in range(count[r]):
            got[r, order[r, j]] = True


# The rows of ``Z`` taken so far are reduced by Gaussian elimination: pivot row ``q`` is
# ``P[q]`` (1 at its pivot column ``pc[q]``, 0 at the earlier ones', at most 1 elsewhere),
# ``Z_ind = L P`` with ``L`` lower triangular (``L[q, q]`` the pivot, ``L[q, :q]`` the
# multipliers), ``aP = L^{-1} a0_ind``.  Rows are zero-padded to a multiple of 8 entries.
# A row reduced with multipliers ``mu`` is ``z = gamma . Z_ind + x``, ``gamma = L^{-T} mu``.

@njit(cache=True, fastmath=FAST)
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
        p = P[q]
        for j in range(W):
            v = p[j]
            x0[j] -= c0 * v
            x1[j] -= c1 * v
            x2[j] -= c2 * v
            x3[j] -= c3 * v
        a = aP[q]
        AX[0], AX[1], AX[2], AX[3] = AX[0] - c0 * a, AX[1] - c1 * a, AX[2] - c2 * a, AX[3] - c3 * a
        x0[col], x1[col], x2[col], x3[col] = 0.0, 0.0, 0.0, 0.0


@njit(cache=True, fastmath=FAST)
def _eliminate(x, ax, pc, P, aP, q0, q1, mu):
    """``x`` less its parts along pivot rows ``q0 .. q1 - 1`` (multipliers into ``mu``);
    returns ``ax`` less the same combination of ``aP``."""
    for q in range(q0, q1):
        c = x[pc[q]]
        mu[q] = c
        if c != 0.0:
            p = P[q]
            for j in range(x.size):
                x[j] -= c * p[j]
            ax -= c * aP[q]
        x[pc[q]] = 0.0
    return ax


@njit(cache=True, fastmath=FAST)
def _gamma(L, r, mu, out):
    """``out[:r] = L_r^{-T} mu[:r]`` (``L_r`` the leading ``r x r`` part of ``L``): the
    combination of the first ``r`` pivot workers' rows that a reduced row came from."""
    for p in range(r - 1, -1, -1):
        s = mu[p]
        for q in range(p + 1, r):
            s -= L[q, p] * out[q]
        out[p] = s / L[p, p]


@njit(cache=True, fastmath=FAST)
def _norm(v, n):
    s = 0.0
    for j in range(n):
        s += v[j] * v[j]
    return np.sqrt(s)


@njit(cache=True, fastmath=FAST)
def _kind(L, rank, t, x, mu, noise, min_piv, gam):
    """A row reduced to ``x``: ``INDEPENDENT``, ``DEPENDENT`` (``||x||`` within the rounding
    ``noise (1 + ||gamma||)``: ``Z`` is accurate to ``noise``) or ``SOFT`` (neither clearly);
    ``||gamma||`` estimated by ``||mu|| / min |pivot|`` where that clears the row."""
    if rank == t:
        return DEPENDENT
    rem = _norm(x, x.size)
    if rem >= GAMMA_CHECK and rem >= CLEAR * noise * (1.0 + _norm(mu, rank) / min_piv):
        return INDEPENDENT
    _gamma(L, rank, mu, gam)
    level = noise * (1.0 + _norm(gam, rank))
    if rem <= level:
        return DEPENDENT
    return INDEPENDENT if rem >= INDEPENDENT_REM and rem >= CLEAR * level else SOFT


@njit(cache=True, fastmath=FAST)
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
    L[rank, rank] = piv
    return abs(piv)


@njit(cache=True, fastmath=FAST)
def _quick_not_exact(Gp, a0n2, rowmax_max, rtol, k, n, rank, ind, L, pc, P, aP, d, dj, dr, dmu,
                     da, gam, c):
    """The certificate of dependent row ``d`` bounds every residual below; True where that
    bound clears ``CONTINUE`` times the tolerance of weights ``GROWTH`` times the last exact
    ones' norm (a solution ``a0 + Z c`` vanishing on the rows so far)."""
    r = dr[d]
    _gamma(L, r, dmu[d], gam)
    h = Gp[dj[d], dj[d]]
    for p in range(r):
        h -= 2.0 * gam[p] * Gp[ind[p], dj[d]]
        for q in range(r):
            h += gam[p] * gam[q] * Gp[ind[p], ind[q]]
    if not h > 0.0:
        return False
    for p in range(rank - 1, -1, -1):          # P[:, pc] is unit upper triangular
        s = -aP[p]
        for q in range(p + 1, rank):
            s -= P[p, pc[q]] * c[q]
        c[p] = s
    w2 = a0n2 + _norm(c, rank) ** 2
    tol = rtol * max(1.0, GROWTH * np.sqrt(n * w2) * rowmax_max)
    return abs(da[d]) / np.sqrt(h * k) > CONTINUE * tol


@njit(cache=True, fastmath=FAST)
def _min_norm(uind, rank, t, L, pc, P, out):
    """``out`` = the min-norm ``c`` with ``Z_ind c = L P c = -u_ind``: ``b = L^{-1} (-u_ind)``,
    then ``P c = b`` by back substitution where ``P`` is square, else ``c = P^T (P P^T)^{-1} b``
    (``P``, unit at its pivots and at most 1 elsewhere, is far better conditioned than
    ``Z_ind``); False where that fails."""
    b = np.empty(rank)
    for p in range(rank):
        s = -uind[p]
        for q in range(p):
            s -= L[p, q] * b[q]
        b[p] = s / L[p, p]
    out[:] = 0.0
    if rank == t:
        for p in range(rank - 1, -1, -1):
            s = b[p]
            for q in range(p + 1, rank):
                s -= P[p, pc[q]] * out[pc[q]]
            out[pc[p]] = s
        return True
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
        for j in range(t):
            out[j] += b[p] * P[p, j]
    return True


@njit(cache=True, fastmath=FAST)
def _ratio(Z, a0, Gp, Gp2, ga0, Bpt, row_max, rtol, order, steps, rank, ind, L, pc, P, ndep,
           dj, dr, dmu, da):
    """The least-squares decoding of the first ``n - steps`` arrivals, computed from the
    certificates (module docstring): ``max |w B - 1|`` over its tolerance (negative: unsure)
    and the error ``||w B - 1||^2``.  The tolerance's ``|w| rowmax`` is first bounded by
    ``||w||`` (``w = u + Z c``, ``u = a0 - G^+ z``: ``||u||^2`` from ``G^+ a0`` and ``G^{+2}``);
    where the bounds do not decide, ``w`` is formed."""
    n, t = Z.shape
    k = Bpt.shape[1]
    ns = rank + ndep
    S = np.empty(ns, np.int64)
    Y = np.zeros((ns, ndep))
    col = np.empty(max(rank, 1))
    for p in range(rank):
        S[p] = ind[p]
    for d in range(ndep):
        S[rank + d] = dj[d]
        _gamma(L, dr[d], dmu[d], col)
        for p in range(dr[d]):
            Y[p, d] = -col[p]
        Y[rank + d, d] = 1.0
    z, res = np.zeros(ns), np.zeros(k)
    if not _coefficients(Gp, Bpt, S, Y, da, ndep, z, res):
        return -1.0, np.nan
    worst, err = 0.0, 0.0
    for j in range(k):
        worst, err = max(worst, abs(res[j])), err + res[j] * res[j]
    uS, un2 = np.empty(ns), 0.0
    for p in range(ns):
        s, s2 = a0[S[p]], 0.0
        for q in range(ns):
            s -= Gp[S[p], S[q]] * z[q]
            s2 += Gp2[S[p], S[q]] * z[q]
        uS[p] = s
        un2 += z[p] * (s2 - 2.0 * ga0[S[p]])
    c = np.empty(t)
    if not _min_norm(uS, rank, t, L, pc, P, c):
        return -2.0, np.nan
    wn = np.sqrt(max(un2 + np.sum(a0 * a0), 0.0) + np.sum(c * c))
    low = worst / (rtol * max(1.0, row_max.max() * np.sqrt(n - steps) * wn))
    high = worst / (rtol * max(1.0, row_max.min() * wn))
    if low >= MARGIN or high <= 1.0 / MARGIN:
        return (low if low >= MARGIN else high), err
    u = a0.copy()
    for p in range(ns):
        if z[p] != 0.0:
            for i in range(n):
                u[i] -= z[p] * Gp[S[p], i]
    mass = 0.0
    for j in range(n - steps):
        i = order[j]
        s = u[i]
        for q in range(t):
            s += Z[i, q] * c[q]
        mass += abs(s) * row_max[i]
    return worst / (rtol * max(1.0, mass)), err


@njit(cache=True, fastmath=FAST)
def _coefficients(Gp, Bpt, S, Y, da, ndep, z, res):
    """``z = Y g`` with ``(Y^T G^+ Y) g = a'`` (``G^+ = Bpt Bpt^T``) and the residual ``res =
    Bpt^T z`` (``w B - 1`` up to sign); one certificate: by its ``v = Bpt^T y`` (no
    gathers).  False where the system is not positive definite."""
    ns, k = S.size, Bpt.shape[1]
    if ndep == 1:
        for p in range(ns):
            if Y[p, 0] != 0.0:
                for j in range(k):
                    res[j] += Y[p, 0] * Bpt[S[p], j]
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
        row = Gp[S[p]]
        for q in range(ns):
            G[p, q] = row[S[q]]
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
        if z[p] != 0.0:
            for j in range(k):
                res[j] += z[p] * Bpt[S[p], j]
    return True


@njit(cache=True, fastmath=FAST)
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
    for j in range(m):
        for q in range(j):
            b[j] -= H[j, q] * b[q]
        b[j] /= H[j, j]
    for j in range(m - 1, -1, -1):
        for q in range(j + 1, m):
            b[j] -= H[q, j] * b[q]
        b[j] /= H[j, j]
    return True


@njit(cache=True, fastmath=FAST)
def _rounds(Z, a0, Gp, Gp2, ga0, Bpt, row_max, rtol, noise, orders, limit, s_free, force, m_out,
            status_out, at_out, err_out, why_out):
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
    dj, dr, dmu, da = (np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros((n, t)),
                       np.zeros(n))
    x, mu, gam, c = np.zeros(W), np.zeros(t), np.zeros(t), np.zeros(t)
    X, AX, MU = np.zeros((4, W)), np.zeros(4), np.zeros((4, t))
    amax, rowmax_max, a0n2 = np.abs(a0).max(), row_max.max(), float(np.sum(a0 * a0))
    for r in range(orders.shape[0]):
        rank, ndep, last_bad, min_piv, rank0 = 0, 0, -1, 1.0, 0
        m, status, at, err, why = 0, SOLVABLE, 0, 0.0, np.nan
        for step in range(1, limit[r] + 1):
            i, b = orders[r, n - step], (step - 1) % 4
            if b == 0:
                rank0 = rank
                _load(Z, a0, orders[r], n - step, min(4, limit[r] - step + 1), pc, P, aP,
                      rank, X, AX, MU)
            x[:] = X[b]
            mu[:rank0] = MU[b, :rank0]
            ax = _eliminate(x, AX[b], pc, P, aP, rank0, rank, mu)
            kind = _kind(L, rank, t, x, mu, noise, min_piv, gam)
            soft = False
            if kind == INDEPENDENT:
                min_piv = min(min_piv, _pivot(x, ax, mu, i, rank, pc, P, aP, L, ind))
                rank += 1
            else:               # dependent (soft: or independent by a hair, then solvable)
                scale = amax
                for q in range(rank):
                    scale += abs(mu[q] * aP[q])
                dj[ndep], dr[ndep], da[ndep] = i, rank, ax
                dmu[ndep, :rank] = mu[:rank]
                bad = abs(ax) > CONSISTENT * scale
                soft = kind == SOFT and bad  # exact either way only if least squares says so
                last_bad = ndep if bad else last_bad
                ndep += 1
            if step in force[r]:
                m, err = step, np.nan
                continue
            if -step in force[r]:
                continue
            if step <= s_free or last_bad < 0:
                m, err = step, (0.0 if last_bad < 0 else np.nan)
                continue
            if not soft and ndep > 1 and _quick_not_exact(Gp, a0n2, rowmax_max, rtol, k, n,
                                                          rank, ind, L, pc, P, aP, last_bad, dj,
                                                          dr, dmu, da, gam, c):
                break
            why, e2 = _ratio(Z, a0, Gp, Gp2, ga0, Bpt, row_max, rtol, orders[r], step, rank,
                             ind, L, pc, P, ndep, dj, dr, dmu, da)
            if why >= MARGIN and not soft:
                if why >= CONTINUE:
                    break                  # nor, by CONTINUE's margin, any later step
                continue
            if not 0.0 <= why <= 1.0 / MARGIN:
                status, at = UNSURE, step
                break
            m, err = step, e2
        m_out[r], status_out[r], at_out[r], err_out[r], why_out[r] = m, status, at, err, why
