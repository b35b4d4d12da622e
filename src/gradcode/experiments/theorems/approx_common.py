"""Paper 5 (Johri, Yardi, Bodas, *Approximate GC for heterogeneous nodes*): its model, eq. (2),
Prop. 1, Remarks 1-2, Lemma 1, Theorems 1-2 (and the steps of their proofs) and Sec. V's numbers,
checked by computation (``theorems``): what the checks of its sections share.

Notation as in the paper: ``n`` workers and data-sets, replication ``s`` (an ``(s-1)``-tolerant
scheme), ``m`` slow workers, ``p^`` (``p_hat``), ``p_ss``, ``p_as``; ``q = p^ p_ss + (1 - p^)
p_as``.  The paper's ``B`` has data-sets as rows; gradcode's ``code.B`` has workers as rows, so
the non-straggler matrix of received rows ``R`` is ``A = B[R].T``.  Its FRC / CRC with ``s`` are
``gc-fr(n, s=s-1)`` / ``gc-cr(n, s=s-1)`` ([2]), the circulant CRC ``isgc-cr(n, c=s)``.
Shuffling (Sec. III): worker ``j`` computes row ``perm[j]`` of ``B``.

How expectations are checked: exactly, by enumerating every straggler set ``T`` (``2^n``) with
its probability, every class set (``2^n``) and every permutation (``n!``), for ``n <= 6``
(``ctx.quick``) or ``n <= 8``, the optimal error of every received set computed here from the
pseudo-inverse (``||A A^+ 1 - 1||^2``); then by Monte Carlo of the model with gradcode's
samplers (``sample_slow``, ``sample_stragglers``, ``shuffle_permutation``) and decoder
(``code.decode(R, method="optimal").error``) on larger ``n``, within 4 standard errors.
Closed forms and gradcode's ``expected_error`` / ``non_straggler_pmf`` are compared with these
to ``close`` (relative ``TOL``, plus ``ABS`` for values near 0).

The sections' modules: ``approx_model`` (Sec. II-III), ``approx_shuffling`` (Prop. 1, Remark
1), ``approx_frc`` (Thm 1 and its proof), ``approx_crc`` (Lemma 1, Thm 2), ``approx_sec5``
(Remark 2, Sec. V).
"""

from __future__ import annotations

import itertools
from functools import lru_cache
from math import comb

import numpy as np
from scipy.stats import binom

from ...analysis import expected_error, sample_stragglers, shuffle_permutation
from ...registry import make_code
from ._framework import Tally


TOL, ABS = 1e-9, 1e-12
#: Sec. V: n = 8, s = 2, p^ = 0.3, p_ss = 0.8, p_as = 0.01, and the printed expected errors
N5, S5, P_HAT5, P_SS5, P_AS5 = 8, 2, 0.3, 0.8, 0.01
PRINTED = {"FRC": 1.976, "CRC": 0.5173}
Z = 4.0     # Monte Carlo tolerance, in standard errors


# --------------------------------------------------------------------------- codes
def fr(n: int, s: int):
    """The paper's ``(s-1)``-tolerant FRC ([2]): replication ``s``."""
    return make_code("gc-fr", n=n, s=s - 1)


def crc(n: int, s: int, seed: int = 0):
    """The paper's ``(s-1)``-tolerant CRC of [2] (Tandon's Alg. 2, random coefficients)."""
    return make_code("gc-cr", n=n, s=s - 1, seed=seed)


def circulant(n: int, s: int):
    """The circulant 0/1 CRC (row ``j`` = row 0 shifted by ``j``), as Thm 2's proof needs."""
    return make_code("isgc-cr", n=n, c=s)


def fr_params(n_max: int):
    """Every ``(n, s)`` with ``s | n``, ``n <= n_max``."""
    return [(n, s) for n in range(2, n_max + 1) for s in range(1, n + 1) if n % s == 0]


def fmt_code(code) -> str:
    """A code as the messages print it.

    >>> fmt_code(fr(4, 2))
    'gc-fr(n=4, s=1)'
    """
    if code.name == "matrix":
        return f"a {code.n_workers}-worker matrix B"
    return f"{code.name}(" + ", ".join(f"{k}={v}" for k, v in code.params.items()) + ")"


def pq_pairs(ctx, count: int):
    """``(p_ss, p_as)`` pairs: Sec. V's and random ones with ``p_ss > p_as``."""
    rng = np.random.default_rng(ctx.seed)
    out = [(P_SS5, P_AS5)]
    while len(out) < count:
        a, b = np.sort(rng.uniform(0.02, 0.95, 2))
        out.append((round(float(b), 3), round(float(a), 3)))
    return out


# --------------------------------------------------------------------------- exact machinery
def bits(masks, n: int) -> np.ndarray:
    return ((np.asarray(masks, np.int64)[:, None] >> np.arange(n)) & 1).astype(bool)


def eq2_errors(B, masks=None) -> np.ndarray:
    """err(A) = ||A A^+ 1 - 1||^2 (eq. 2 via the pseudo-inverse), ``A = B[R].T``, for each
    received-row bitmask (all ``2^n`` by default); ``k`` (all lost) for the empty set."""
    B = np.asarray(B, float)
    n, k = B.shape
    masks = np.arange(1 << n, dtype=np.int64) if masks is None else np.asarray(masks, np.int64)
    b = bits(masks, n)
    pop = b.sum(axis=1)
    out = np.empty(masks.size)
    for r in np.unique(pop):
        sel = np.flatnonzero(pop == r)
        if r == 0:
            out[sel] = k
            continue
        rows = np.nonzero(b[sel])[1].reshape(sel.size, r)
        A = np.transpose(B[rows], (0, 2, 1))                       # (sets, k, r)
        x = np.linalg.pinv(A, rcond=1e-10) @ np.ones(k)
        out[sel] = np.sum((np.einsum("skr,sr->sk", A, x) - 1.0) ** 2, axis=1)
    return out


@lru_cache(maxsize=None)
def perms(n: int) -> np.ndarray:
    return np.array(list(itertools.permutations(range(n))), dtype=np.int64)


def shuffle_average(err: np.ndarray, n: int) -> np.ndarray:
    """``Ebar[T]``: the error of the received rows averaged over all ``n!`` permutations
    (worker ``j`` computes row ``perm[j]``), for every straggler bitmask ``T``."""
    P = perms(n)
    recv = (~bits(np.arange(1 << n), n)).astype(np.int64)
    out = np.zeros(1 << n)
    for lo in range(0, len(P), 5040):
        out += err[recv @ (np.int64(1) << P[lo:lo + 5040]).T].sum(axis=1)
    return out / len(P)


def straggler_law(p) -> np.ndarray:
    """``P[T]`` for every straggler bitmask ``T``: worker ``j`` straggles w.p. ``p[j]``."""
    p = np.asarray(p, float)
    b = bits(np.arange(1 << p.size), p.size)
    return np.prod(np.where(b, p, 1.0 - p), axis=1)


def pr_enum(p) -> np.ndarray:
    """``P_r``, ``r = 0..n``: the law of the number of non-stragglers, by enumeration."""
    n = len(p)
    pop = bits(np.arange(1 << n), n).sum(axis=1)
    return np.bincount(n - pop, straggler_law(p), n + 1)


def pr_conv(n: int, m: int, p_ss: float, p_as: float) -> np.ndarray:
    """``P_r`` as ``Binomial(m, 1 - p_ss) * Binomial(n - m, 1 - p_as)``."""
    return np.convolve(binom.pmf(np.arange(m + 1), m, 1 - p_ss),
                       binom.pmf(np.arange(n - m + 1), n - m, 1 - p_as))


def pr_printed(n: int, m: int, p_ss: float, p_as: float) -> np.ndarray:
    """Thm 1's ``P_r`` exactly as printed: ``sum_{i=0}^r C(m, r'(i)) C(n-m, r-r'(i))
    pbar_ss^i p_ss^(m-i) pbar_as^(r-i) p_as^(n-m-r+i)``, ``r'(i) = min(i, m)``."""
    out = np.zeros(n + 1)
    for r in range(n + 1):
        for i in range(r + 1):
            ri = min(i, m)
            out[r] += (comb(m, ri) * comb(n - m, r - ri) * (1 - p_ss) ** i * p_ss ** (m - i)
                       * (1 - p_as) ** (r - i) * p_as ** (n - m - r + i))
    return out


def thm1(n: int, s: int, P) -> float:
    """Thm 1: ``n sum_{r=0}^{n-s} P_r C(n-s, r) / C(n, r)``."""
    return n * sum(P[r] * comb(n - s, r) / comb(n, r) for r in range(n - s + 1))


@lru_cache(maxsize=None)
def cycle_classes(n: int):
    """Cycle classes of ``F_2^n``: ``(reps, order, weight, canon)``, ``reps`` the smallest
    bitmask of each class, ``order`` its number of distinct cyclic shifts, ``canon[v]`` the
    representative of ``v``'s class."""
    masks = np.arange(1 << n, dtype=np.int64)
    full = (1 << n) - 1
    R = np.stack([((masks << t) | (masks >> (n - t))) & full for t in range(n)])
    canon = R.min(axis=0)
    reps = np.flatnonzero(canon == masks)
    order = np.full(reps.size, n)
    for t in range(n - 1, 0, -1):
        order[R[t, reps] == reps] = t
    return reps, order, bits(reps, n).sum(axis=1), canon


def thm2(B, s: int, P) -> float:
    """Thm 2: ``sum_{r=0}^{n-s} P_r sum_i e_i / C(n, r) ||A_vi A_vi^+ 1 - 1||^2`` over the
    cycle representatives ``v_i`` of weight ``r`` (their received rows: the ones of ``v_i``)."""
    n = np.asarray(B).shape[0]
    reps, order, weight, _ = cycle_classes(n)
    err = eq2_errors(B, reps)
    per_r = np.bincount(weight, order * err, n + 1)
    return float(sum(P[r] * per_r[r] / comb(n, r) for r in range(n - s + 1)))


def tolerant(B, s: int) -> bool:
    """Every received set of ``n - s + 1`` rows gives the exact gradient (so every larger)."""
    n = np.asarray(B).shape[0]
    masks = [sum(1 << j for j in R) for R in itertools.combinations(range(n), n - s + 1)]
    return bool(np.all(eq2_errors(B, masks) <= TOL))


@lru_cache(maxsize=None)
def _code_tables(key):
    code = make_code(key[0], **dict(key[1]))
    B = np.asarray(code.B, float)
    err = eq2_errors(B)
    return B, err, shuffle_average(err, B.shape[0])


def tables(code):
    """``(B, err, Ebar)`` of a ``make_code`` code (cached): dense ``B``, eq. (2) error of every
    received bitmask, its average over all permutations per straggler bitmask."""
    return _code_tables((code.name, tuple(sorted(code.params.items()))))


def exact_shuffled(code, p_worker) -> float:
    """Expected error with random shuffling, worker ``j`` straggling w.p. ``p_worker[j]``:
    ``sum_T P[T] Ebar[T]`` over all straggler sets and permutations."""
    return float(straggler_law(p_worker) @ tables(code)[2])


def exact_classes(code, p_hat, p_ss, p_as) -> float:
    """Expected error with random shuffling, classes drawn (slow w.p. ``p^``): over all class
    sets, straggler sets and permutations."""
    n = code.n_workers
    C = bits(np.arange(1 << n), n)
    pc = np.prod(np.where(C, p_hat, 1 - p_hat), axis=1)
    return float(sum(pc[c] * exact_shuffled(code, np.where(C[c], p_ss, p_as))
                     for c in range(1 << n)))


def close(a: float, b: float) -> bool:
    """``a`` and ``b`` agree to ``TOL`` relative, ``ABS`` absolute."""
    return abs(a - b) <= TOL * max(abs(a), abs(b)) + ABS


def within(x: float, mean: float, se: float) -> bool:
    """``x`` within ``Z`` standard errors ``se`` of ``mean`` (Monte Carlo against a value)."""
    return abs(x - mean) <= Z * se + TOL


def mc_error(code, slow, p_ss, p_as, samples, rng):
    """Monte Carlo of one iteration with random shuffling, through gradcode's samplers and its
    optimal decoder: ``(mean error, standard error)``."""
    n = code.n_workers
    cache, errs = {}, np.empty(samples)
    for t in range(samples):
        perm = shuffle_permutation(n, t, rng=rng)
        straggle = sample_stragglers(slow, p_ss, p_as, rng)
        rows = tuple(sorted(perm[~straggle].tolist()))
        if rows not in cache:
            cache[rows] = code.decode(list(rows), method="optimal").error
        errs[t] = cache[rows]
    return float(errs.mean()), float(errs.std(ddof=1) / np.sqrt(samples))


# --------------------------------------------------------------------------- the (n, m) model
def thm_exact_tally(code, s, m, p_ss, p_as, formula, rng) -> Tally:
    """The (n, m) model with random shuffling, slow set a random ``m``-subset: the exact
    expectation (all straggler sets and permutations) against ``formula(P)`` (``P``: the exact
    law of the number of non-stragglers) and gradcode's ``expected_error``."""
    t = Tally()
    n = code.n_workers
    slow = np.zeros(n, bool)
    slow[rng.choice(n, m, replace=False)] = True
    p = np.where(slow, p_ss, p_as)
    exact = exact_shuffled(code, p)
    closed = formula(pr_enum(p))
    ours = expected_error(code, None, p_ss, p_as, slow=slow)
    ok = close(exact, closed) and close(ours, exact)
    t.case(ok, f"{fmt_code(code)}, m = {m} (slow {np.flatnonzero(slow).tolist()}), p_ss = {p_ss}, "
          f"p_as = {p_as}: exact {exact:.9f}, formula {closed:.9f}, expected_error {ours:.9f}")
    return t


def thm_mc_tally(code, s, m, p_ss, p_as, formula, samples, rng) -> Tally:
    """The (n, m) model by Monte Carlo with gradcode's samplers and decoder against
    ``formula(P)``, ``P`` the binomial convolution."""
    t = Tally()
    n = code.n_workers
    slow = np.arange(n) < m
    mean, se = mc_error(code, slow, p_ss, p_as, samples, rng)
    want = formula(pr_conv(n, m, p_ss, p_as))
    t.case(within(mean, want, se), f"{fmt_code(code)}, m = {m}, p_ss = {p_ss}, p_as = {p_as}, "
          f"{samples} samples: Monte Carlo {mean:.4f} ± {se:.4f}, formula {want:.4f}")
    return t
