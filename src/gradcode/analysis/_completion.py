"""Worst-case completion time of a gradient code on heterogeneous workers (paper 3, Sec. III-C).

Worker ``i`` with throughput ``c_i`` (partitions per unit time) finishes at
``t_i = ||b_i||_0 / c_i``.  For stragglers ``S`` the task completes at ``T(B, S) = t_{j*}``,
``j*`` the first worker (in order of ``t_i``) such that ``1`` lies in the span of the rows of the
non-stragglers among the first ``j*``; eq. (3): ``T(B) = max_{|S| <= s} T(B, S)``.
"""

from __future__ import annotations

from itertools import combinations
from math import comb

import numpy as np

from ..codes import check_int, check_speeds, exact_within

#: default bound on the number of straggler sets ``C(m, s)`` enumerated by ``completion_time``
MAX_PATTERNS = 20_000


def _spans_one(rows: np.ndarray) -> bool:
    """Whether the all-ones vector lies in the row span of ``rows`` (least-squares residual)."""
    if rows.shape[0] == 0:
        return False
    k = rows.shape[1]
    x, *_ = np.linalg.lstsq(rows.T, np.ones(k), rcond=None)
    return bool(exact_within(x @ rows - 1.0, float(np.abs(x) @ np.abs(rows).max(axis=1))))


def _pattern_time(B: np.ndarray, t: np.ndarray, levels: np.ndarray, alive: np.ndarray) -> float:
    """``T(B, S)`` with ``alive`` = not in ``S``: the smallest level ``tau`` of ``t`` such that
    the alive rows with ``t_i <= tau`` span ``1`` (binary search: the span only grows with tau).
    Independent of how ties in ``t`` are ordered.  ``inf`` when even all alive rows fail."""
    if not _spans_one(B[alive]):
        return float("inf")
    lo, hi = 0, levels.size - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if _spans_one(B[alive & (t <= levels[mid])]):
            hi = mid
        else:
            lo = mid + 1
    return float(levels[lo])


def completion_time(code, speeds, s: int | None = None, *,
                    max_patterns: int = MAX_PATTERNS) -> float:
    """``T(B)`` of paper 3, eq. (3): the worst case over straggler sets ``|S| <= s`` of ``T(B, S)``.

    ``code``: a ``Code`` (its dense ``B`` is used) or a 2-D matrix ``B``; ``speeds``: the
    throughputs ``c_i`` (in partitions of this code per unit time; a sequence or a string like
    ``"1,2,3"``); ``s``: defaults to ``code.s``.  ``T(B, S)`` only grows when ``S`` grows, so only
    the ``C(m, min(s, m))`` sets of exactly that size are enumerated, exhaustively; more than
    ``max_patterns`` of them raise ``ValueError`` (no sampling: a sample would understate the
    worst case).  ``inf`` when some straggler set leaves ``1`` outside the span (not robust).
    Each pattern costs ``O(log m)`` least-squares solves.

    Paper 3, Example 1: throughputs ``c = [1, 2, 3, 4, 4]``, one straggler, ``k = 7``
    partitions; heter gives worker ``i`` ``n_i = c_i`` partitions, so every worker finishes at
    ``t_i = 1`` and ``T(B) = 1``, the lower bound ``k (s + 1) / sum_i c_i = 14 / 14``.

    >>> from gradcode import make_code
    >>> from gradcode.analysis import completion_time
    >>> code = make_code("heter", speeds="1,2,3,4,4", s=1, k=7)
    >>> (code.B != 0).sum(axis=1).tolist()
    [1, 2, 3, 4, 4]
    >>> completion_time(code, "1,2,3,4,4")
    1.0
    """
    B = np.asarray(getattr(code, "B", code), dtype=float)
    if B.ndim != 2 or 0 in B.shape:
        raise ValueError(f"code: expected a Code or a non-empty 2-D matrix B, got shape {B.shape}")
    m = B.shape[0]
    c = check_speeds(speeds)
    if c.size != m:
        raise ValueError(f"speeds: expected {m} throughputs (one per worker), got {c.size}")
    if s is None:
        s = getattr(code, "s", None)
        if s is None:
            raise ValueError("s: the code tolerates no fixed number of stragglers; "
                             "pass s, got None")
    s = check_int("s", s, minimum=0, maximum=m)
    max_patterns = check_int("max_patterns", max_patterns, minimum=1)
    if comb(m, s) > max_patterns:
        raise ValueError(f"s: completion_time enumerates C({m}, {s}) = {comb(m, s)} straggler "
                         f"sets, more than max_patterns={max_patterns}; got s={s}")
    t = np.count_nonzero(B, axis=1) / c
    levels = np.unique(t)
    worst = 0.0
    for S in combinations(range(m), s):
        alive = np.ones(m, dtype=bool)
        alive[list(S)] = False
        worst = max(worst, _pattern_time(B, t, levels, alive))
        if worst == float("inf"):
            break
    return worst
