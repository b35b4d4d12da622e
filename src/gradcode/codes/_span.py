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
is first bounded by ``||w||`` (itself bounded first by ``||G^+ Y g|| <= ||B^+ Y g|| /
sigma_r`` and by a ``c`` on the pivot columns), and ``w`` formed only where the bounds do not
decide; ``Y^T G^+ Y`` and its Cholesky factor grow with the round, a certificate at a time.
With several certificates a cheaper bound may decide first (``_quick_not_exact``).  Rows within the
rounding of ``Z`` of being dependent are taken as such where least squares decodes either way.
What is still unsure the decoder settles: the round runs again with that step taken where it
decodes (``SpanTest.counts``).  The kernel answers the recovery of the sets it proves too
(``SpanTest.exact``, ``proven_recovery``: ``recovery_many`` of the codes that use it).
The compiled kernels are in ``codes._span_kernels``.

Rounds are independent: a batch of them is split into ``PARTS`` contiguous parts a thread, which
the threads take in turn as they finish one, the kernel (which releases the GIL) writing each
part's rows (``thread_count``: the cores this process may use, at most ``MAX_THREADS``, and at
least ``MIN_ROUNDS`` rounds a thread).  One part a thread left a thread idle behind another
whose rounds were dearer (a forced step, a dependent row's certificate).  The environment
variable ``GRADCODE_THREADS`` sets the number of threads instead (1: none started; a test
suite that runs a process per core sets it so).
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from ._checks import EXACT_RTOL
from ._span_kernels import SOLVABLE, UNSURE, first, rounds

#: the most cells ``n x max(n, k)`` of ``B`` (and of ``(B B^T)^+``) the span test holds
MAX_CELLS = 4_000_000
#: ``B``'s singular values below ``RANK_RTOL sigma_1`` are zero, those above ``RANK_GAP
#: sigma_1`` not; one in between: no span test (the rank is not clear-cut)
RANK_RTOL, RANK_GAP = 1e-11, 1e-8
#: steps of a round the decoder may settle before it bisects the rest
MAX_FORCED = 8
#: the most threads a batch of rounds runs on (unless ``GRADCODE_THREADS`` says), and the
#: fewest rounds a thread takes (fewer rounds: fewer threads, where the hand-off costs more
#: than it saves)
MAX_THREADS, MIN_ROUNDS = 4, 64
#: parts of a batch per thread, taken in turn (module docstring)
PARTS = 8


@dataclass(frozen=True)
class NullSpace:
    """``B``'s null-space factors (module docstring): ``Z (n, t)``, ``a0 (n,)``, ``Gp = (B
    B^T)^+ (n, n)``, ``Bpt = (B^+)^T (n, k)``; ``a0`` is None where ``1`` is not in the row
    space of ``B`` (no received set decodes); ``noise``: how far ``Z`` may be from the null
    space (``||Z^T B||_F / sigma_r``, at least ``1e-15``); ``Gp2 = Gp^2``, ``ga0 = Gp a0`` and
    ``sigma_r`` (``B``'s least nonzero singular value; bounds on the least-squares weights'
    norm)."""

    Z: np.ndarray
    a0: np.ndarray | None
    Gp: np.ndarray
    Bpt: np.ndarray
    noise: float
    Gp2: np.ndarray
    ga0: np.ndarray
    sigma_r: float = 0.0


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
                     Gp @ a0 if a0 is not None else np.zeros(n), float(Sr[-1]))


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
        first(order, count, got)
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
        """The kernel on the rows of ``order`` (``limit``, ``force``: theirs), in parts taken in
        turn by ``thread_count`` threads, the calling one among them (module docstring)."""
        f = self.f
        R = order.shape[0]
        order = np.ascontiguousarray(order, dtype=np.int64)
        limit = np.ascontiguousarray(limit, dtype=np.int64)
        force = np.ascontiguousarray(force, dtype=np.int64)
        m, status, at = np.zeros(R, np.int64), np.zeros(R, np.int8), np.zeros(R, np.int64)
        err, why = np.zeros(R), np.full(R, np.nan)    # why: the kernel's ratios, unread

        def part(a, b):
            rounds(f.Z, f.a0, f.Gp, f.Gp2, f.ga0, f.Bpt, f.sigma_r, self.row_max, self.rtol,
                   f.noise, order[a:b], limit[a:b], s_free, force[a:b], m[a:b], status[a:b],
                   at[a:b], err[a:b], why[a:b])
        threads = thread_count(R)
        cuts = np.linspace(0, R, (PARTS * threads if threads > 1 else 1) + 1).astype(np.int64)
        parts, taking = iter(zip(cuts[:-1].tolist(), cuts[1:].tolist())), threading.Lock()

        def take():
            while True:
                with taking:
                    ab = next(parts, None)
                if ab is None:
                    return
                part(*ab)
        rest = [_executor(threads - 1).submit(take) for _ in range(threads - 1)]
        if R:
            take()
        for job in rest:
            job.result()
        return m, status, at, err


def thread_count(R: int) -> int:
    """The threads a batch of ``R`` rounds runs on: ``GRADCODE_THREADS`` (a positive integer)
    if set, else the cores this process may use, at most ``MAX_THREADS``; fewer where a thread
    would take fewer than ``MIN_ROUNDS`` rounds.

    >>> thread_count(1)
    1
    """
    env = os.environ.get("GRADCODE_THREADS", "").strip()
    if env:
        cap = int(env) if env.isdigit() else 0
        if cap < 1:
            raise ValueError(f"GRADCODE_THREADS: expected a positive integer, got {env!r}")
    else:
        cores = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
        cap = min(MAX_THREADS, len(cores) if cores else os.cpu_count() or 1)
    return max(1, min(cap, R // MIN_ROUNDS))


_POOL: list = []                  # [executor, its threads], created on first use
_POOL_LOCK = threading.Lock()


def _executor(workers: int) -> ThreadPoolExecutor:
    """The module's thread pool, of at least ``workers`` threads (started as needed); a
    larger one replaces it where asked (only past ``MAX_THREADS``, through
    ``GRADCODE_THREADS``; the old one is not shut down, a caller may hold it: its idle threads
    stay until the process exits)."""
    with _POOL_LOCK:
        if not _POOL or _POOL[1] < workers:
            size = max(workers, MAX_THREADS)
            _POOL[:] = [ThreadPoolExecutor(size, thread_name_prefix="gradcode-span"), size]
        return _POOL[0]


def _forget_pool():
    """In a forked child: the parent's threads are not there; a new pool on first use."""
    global _POOL_LOCK
    _POOL.clear()
    _POOL_LOCK = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


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
    """``decodable_counts`` by decoding (every code): per arrival order, the first ``k`` with
    ``code.decode(order[:k]).exact``.  Exactness is not monotone in ``k`` (least squares'
    tolerance grows with its weights: ``cyclic-mds`` at n = 256 may decode from 242 arrivals,
    not from 243), so a bisection only finds a ``k`` that decodes (an exact code decodes from
    ``n - s``, most often not from one fewer: one decode settles it); the prefixes below it are
    decoded in turn from the least ``k`` that ``no_exact_below`` does not rule out (for a code
    decoding by ``Code.decode``'s least squares, which its proof is about; others from 1)."""
    dense = getattr(code, "least_squares_decode", False)
    out = np.empty(order.shape[0], np.int64)
    for r, o in enumerate(order):
        n = o.size
        hi = n - code.s if code.s is not None and code.n_machines == code.n_workers else n

        def decodes(k):
            return code.decode(o[:k], rng=np.random.default_rng(0)).exact
        top = hi if hi <= 1 or not decodes(hi - 1) else bisect(decodes, 1, hi - 1)
        k = no_exact_below(code, o, top - 1) + 1 if top > 2 and dense else 1
        while k < top - 1 and not decodes(k):
            k += 1
        out[r] = k if k < top - 1 else top
    return out


def no_exact_below(code, order, top: int) -> int:
    """The largest ``J <= top`` such that no first ``j <= J`` arrivals decode exactly (0: none
    proven), for a code whose ``decode`` is ``Code.decode``'s dense least squares
    (``optimal_weights``) where those sets miss more than ``s`` (an exact code, one message a
    worker; others: 0).  Proof: with ``A = B_R^T``
    (``R``: the first ``J``, independent rows) of least singular value ``delta``, every
    ``j <= J`` has a residual of at least ``d_J = dist(1, range A)`` (``||.||_2``) and
    min-norm weights of norm at most ``sqrt(k) / delta`` (rows removed: neither shrinks), so
    ``max |w B - 1| >= d_J / sqrt(k)`` exceeds the tolerance ``EXACT_RTOL max(1, |w|
    rowmax)`` by a margin.  The bound holds for every ``J`` below one it holds for: a
    bisection."""
    n, k = code.n_workers, code.n_partitions
    falls_back = code.s is not None and code.n_machines == n and top < n - code.s
    if not falls_back or top * k > MAX_CELLS or top < 1:
        return 0
    B = np.asarray(code.B, float)
    row_max = np.abs(B).max(axis=1)

    def proven(J):
        R = order[:J]
        A = B[R].T
        U, S, _ = np.linalg.svd(A, full_matrices=False)
        if S.size < J or not S[-1] > 1e-10 * S[0]:
            return False
        ones = np.ones(k)
        d = float(np.linalg.norm(ones - U @ (U.T @ ones)))
        mass = np.sqrt(k) / S[-1] * float(np.linalg.norm(row_max[R]))
        return d / np.sqrt(k) > 4.0 * EXACT_RTOL * max(1.0, mass) + 1e-12 * np.sqrt(k)
    if proven(top):
        return top
    lo, hi = 0, top - 1                  # proven(lo) (vacuous at 0); find the largest
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if proven(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


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
