"""Paper 3 (heterogeneity-aware gradient coding): what the checks of its sections share
(``theorems``): eq. 5-6, Condition 1, the instances.

Notation of paper 3: ``m`` workers with throughputs ``c_i``, ``k`` partitions, ``s`` stragglers,
``n_i`` partitions on worker ``i`` (eq. 5), support (eq. 6-7), encoding matrix ``B``, auxiliary
matrix ``C`` of ``(s+1) x m`` with (P1)-(P2), decoding by ``lam C / sum(lam)`` (Lemma 2), groups
(conditions (*), (**); Alg. 2-3) and the worst-case completion time ``T(B)`` (eq. 3).

The mathematics is recomputed with NumPy from the paper's formulas (eq. 5's quotas, eq. 6's
support, the proof of Lemma 2's ``B``, Condition 1 by least squares, eq. 3 by enumerating every
straggler set, exact covers by enumerating every worker set) and compared with what gradcode
builds: ``make_code("heter" | "heter-group" | "gc-cr")``, ``from_matrix``, ``analysis.is_robust``
and ``analysis.completion_time``.  Instances: every allocation ``n`` with ``1 <= n_i <= k`` and
``sum n_i = k(s+1)`` up to a size (speeds ``c = 0.7 n``: eq. 5's quotas are then the integers
``n_i``, the paper's assumption), and random larger ones from ``default_rng(ctx.seed)``.
Floats are compared with the relative tolerance ``TOL``; 0/1 matrices and integers exactly.

The sections' modules: ``heter_allocation`` (eq. 5-7, Example 1), ``heter_robustness`` (Lemma
1-3, Alg. 1, Thm 4), ``heter_optimality`` (eq. 3, Thm 5), ``heter_groups`` (Sec. V).
"""

from __future__ import annotations

from functools import lru_cache
from itertools import combinations, product
from math import comb

import numpy as np

from ...analysis import is_robust
from ...registry import make_code


#: relative tolerance of every floating-point comparison (span tests, ``C B = 1``, times)
TOL = 1e-9
#: scale of the speeds of the exhaustive instances (``c = SCALE n``: non-integer speeds whose
#: eq. 5 quotas are the integers ``n_i``)
SCALE = 0.7


# ---------------------------------------------------------------- eq. 5, 6, Condition 1
def allocations(m: int, s: int, k: int):
    """Every ``n`` with ``1 <= n_i <= k`` and ``sum n_i = k(s+1)`` (eq. 5 with integer quotas)."""
    for n in product(range(1, k + 1), repeat=m):
        if sum(n) == k * (s + 1):
            yield n


def random_allocation(rng, m: int, s: int, k: int) -> tuple[int, ...]:
    """A random ``n`` with ``1 <= n_i <= k``, ``sum n_i = k(s+1)`` (needs ``m <= k(s+1)``)."""
    n = np.ones(m, dtype=int)
    for _ in range(k * (s + 1) - m):
        n[rng.choice(np.flatnonzero(n < k))] += 1
    return tuple(int(x) for x in n)


def quotas(speeds, s: int, k: int) -> np.ndarray:
    """Eq. 5: ``n_i = k(s+1) c_i / sum_j c_j`` (real numbers)."""
    c = np.asarray(speeds, dtype=float)
    return k * (s + 1) * c / c.sum()


def eq6_copies(n, k: int) -> list[list[int]]:
    """Eq. 6 as printed, 1-based: worker ``i`` gets ``D_{(n'_i + l) mod k}``, ``l = 1..n_i``,
    ``n'_i = sum_{j<i} n_j`` (``D_0`` read as ``D_k``); the partitions of each worker, with
    repetitions kept."""
    out, start = [], 0
    for ni in n:
        out.append([((start + l) % k) or k for l in range(1, ni + 1)])
        start += ni
    return out


def eq6_support(n, k: int) -> np.ndarray:
    """``supp(B)`` of eq. 7 (0/1, ``m x k``) from eq. 6."""
    S = np.zeros((len(n), k), dtype=int)
    for i, parts in enumerate(eq6_copies(n, k)):
        S[i, [p - 1 for p in parts]] = 1
    return S


def spans_one(M) -> bool:
    """Whether ``1_{1 x k}`` lies in the row span of ``M`` (least squares, relative ``TOL``)."""
    M = np.asarray(M, dtype=float)
    if M.shape[0] == 0:
        return False
    one = np.ones(M.shape[1])
    a = np.linalg.lstsq(M.T, one, rcond=None)[0]
    scale = max(1.0, float(np.abs(a) @ np.abs(M).max(axis=1)))
    return bool(np.abs(a @ M - one).max() <= TOL * scale)


def condition1(B, s: int, sets=None) -> tuple[int, ...] | None:
    """Condition 1: ``1 in span{b_i : i in I}`` for every ``|I| = m - s``.  Returns the first
    straggler set ``[m] - I`` that violates it (``None``: it holds); ``sets``: the straggler sets
    to try (default: all ``C(m, s)``)."""
    B = np.asarray(B, dtype=float)
    m = B.shape[0]
    for S in (combinations(range(m), s) if sets is None else sets):
        keep = np.setdiff1d(np.arange(m), S)
        if not spans_one(B[keep]):
            return tuple(int(x) for x in S)
    return None


def straggler_sets(rng, m: int, s: int, limit: int) -> list[tuple[int, ...]]:
    """All ``C(m, s)`` straggler sets when at most ``limit``, else ``limit`` random ones."""
    if comb(m, s) <= limit:
        return list(combinations(range(m), s))
    return [tuple(sorted(rng.choice(m, s, replace=False).tolist())) for _ in range(limit)]


def robust_fails(code, s: int, sets) -> str:
    """Robust to any ``s`` stragglers three ways: ``is_robust``, Condition 1 by least squares on
    ``sets``, and gradcode's decoder exact on each of them.

    >>> robust_fails(make_code("heter", speeds=[1, 2, 3], s=1, k=3), 1, [(0,), (1,), (2,)])
    ''
    """
    B = code.B
    m = B.shape[0]
    if not is_robust(code, s=s):
        return "is_robust says no"
    S = condition1(B, s, sets)
    if S is not None:
        return f"1 not in the span without workers {list(S)}"
    for S in sets:
        if not code.decode(np.setdiff1d(np.arange(m), S)).exact:
            return f"decoding without {list(S)} is not exact"
    return ""


# --------------------------------------------------------------------------- instances
@lru_cache(maxsize=None)
def cached_code(name: str, speeds: tuple[float, ...], s: int, k: int, seed: int):
    """``make_code(name, speeds=..., s=..., k=..., seed=...)``, built once per argument set."""
    return make_code(name, speeds=list(speeds), s=s, k=k, seed=seed)


#: the instances of Examples 1 and 2 (Example 2 gives no speeds: c = n, its row sizes)
EX1 = ((1.0, 2.0, 3.0, 4.0, 4.0), 1, 7)
EX2 = ((2.0, 1.0, 1.0, 3.0, 3.0, 3.0, 3.0), 3, 4)


def integer_instances(ctx, small=None, n_random=None, m_random=None):
    """``(speeds, s, k)`` with integer eq. 5 quotas: Examples 1-2, every allocation
    up to ``small = (m, k)`` (speeds ``SCALE n``) and ``n_random`` random ones with ``m`` in
    ``m_random``."""
    M, K = small or ((4, 3) if ctx.quick else (5, 4))
    out = [EX1, EX2] + [(tuple(SCALE * x for x in n), s, k)
           for m in range(1, M + 1) for s in range(m) for k in range(1, K + 1)
           for n in allocations(m, s, k)]
    rng = np.random.default_rng(ctx.seed)
    lo, hi = m_random or ((6, 9) if ctx.quick else (6, 14))
    for _ in range(n_random if n_random is not None else (6 if ctx.quick else 80)):
        m = int(rng.integers(lo, hi + 1))
        s = int(rng.integers(1, 4))
        k = int(rng.integers(-(-m // (s + 1)), 2 * m + 1))
        scale = float(rng.uniform(0.2, 5.0))
        out.append((tuple(scale * x for x in random_allocation(rng, m, s, k)), s, k))
    return out


def random_speed_instances(ctx, count=None):
    """``(speeds, s, k)`` with random speeds (eq. 5's quotas not integers: gradcode rounds)."""
    rng = np.random.default_rng(ctx.seed + 1)
    out = []
    for _ in range(count if count is not None else (6 if ctx.quick else 80)):
        m = int(rng.integers(3, 10 if ctx.quick else 14))
        s = int(rng.integers(0, min(3, m - 1) + 1))
        k = int(rng.integers(1, 2 * m + 1))
        out.append((tuple(float(x) for x in rng.uniform(0.5, 4.0, m)), s, k))
    return out


def fmt_instance(speeds, s, k) -> str:
    """An instance as the messages print it.

    >>> fmt_instance((1.0, 2.0), 1, 3)
    'speeds [1.0, 2.0], s = 1, k = 3'
    """
    return f"speeds {[round(float(x), 3) for x in speeds]}, s = {s}, k = {k}"


def fmt_sizes(ctx) -> str:
    """What ``integer_instances(ctx)`` enumerates, as the messages print it."""
    M, K = (4, 3) if ctx.quick else (5, 4)
    return f"Examples 1-2, every n (1 <= n_i <= k, sum k(s+1)) for m <= {M}, k <= {K}"
