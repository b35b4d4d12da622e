"""Bounds and checks on codes: IS-GC recovery bounds (paper 2, Thm 10-11), robustness
(Condition 1: paper 1, eq. 4; paper 3, (C1)) and per-machine loads.
"""

from __future__ import annotations


import numpy as np
import scipy.sparse as sp

from ..codes import (ROBUST_EXHAUSTIVE_LIMIT, ROBUST_RTOL, Code, check_int, check_rng,
                     straggler_set_not_tolerated)


def recovery_bounds(n: int, c: int, w: int) -> tuple[int, int]:
    """``(lower, upper)`` bounds on ``alpha(G[W'])`` for ``|W'| = w`` received workers.

    Paper 2, Thm 10: ``alpha(G[W']) >= min(ceil(w / c), floor(n / c))``;
    Thm 11: ``alpha(G[W']) <= min(w, floor(n / c))``; IS-GC then recovers ``c * alpha`` of the
    ``n`` partitions.  Both hold (and are attained) for FR(n, c) and CR(n, c).

    For HR(n, c1, c2) with ``groups`` groups the paper states the same bounds with
    ``c = c1 + c2``, but the lower bound fails when ``n0 = n / groups > c``: every group is a
    clique (proof of Thm 6), so ``W'`` inside one group gives ``alpha = 1``
    (e.g. HR(6, 1, 1, groups=2), ``W' = {0, 1, 2}``: ``1 < min(ceil(3/2), 3) = 2``).
    Pass ``c = n0`` for HR: the bounds then hold and are attained (checked exhaustively for
    ``n <= 10``).

    >>> from gradcode import make_code
    >>> from gradcode.analysis import recovery_bounds
    >>> recovery_bounds(8, 2, 3)
    (2, 3)
    >>> float(make_code("isgc-cr", n=8, c=2).decode([0, 1, 2]).recovered.sum())   # c alpha = 2*2
    4.0
    """
    n = check_int("n", n, minimum=1)
    c = check_int("c", c, minimum=1, maximum=n)
    w = check_int("w", w, minimum=0, maximum=n)
    cap = n // c
    return min(-(-w // c), cap), min(w, cap)


def _as_code(code, s):
    if isinstance(code, Code):
        return code.B_sparse, (code.s if s is None else s)
    B = sp.csr_array(np.asarray(code, dtype=float)) if not sp.issparse(code) else sp.csr_array(code)
    return B, s


def is_robust(code, s: int | None = None, samples: int | None = None,
              rng: np.random.Generator | None = None) -> bool:
    """Condition 1 (paper 1, eq. 4; paper 3, (C1)): ``1 in span{B_i : i in I}`` for every set
    ``I`` of ``n - s`` workers, i.e. ``B`` tolerates any ``s`` stragglers exactly.

    ``code``: a ``Code`` (``s`` defaults to ``code.s``) or a matrix ``B`` (then ``s`` is required).
    Rows index *messages*: for gc-partial the condition fails as soon as a naive message may be
    lost; check its coded block ``B[n:, n:]`` instead.

    Straggler sets: all ``C(n, s)`` of them when ``C(n, s) <= limit`` (``limit = samples``, or
    ``ROBUST_EXHAUSTIVE_LIMIT = 5000`` when ``samples`` is None) -- then ``True`` is a proof;
    otherwise ``limit`` sets drawn uniformly with ``rng`` -- then ``True`` only means no sampled
    set violates the condition (``False`` is always a certificate).  Only sets of exactly ``s``
    stragglers are needed: a superset of rows spans at least as much.

    Span test: least squares ``w = argmin ||w B_I - 1||`` (min-norm); ``1`` is in the span iff
    ``max |w B_I - 1| <= ROBUST_RTOL * max(1, sum_i |w_i| max_j |B_ij|)``.

    >>> from gradcode import make_code
    >>> from gradcode.analysis import is_robust
    >>> is_robust([[0.5, 1, 0], [0, 1, -1], [0.5, 0, 1]], s=1)     # paper 1's example
    True
    >>> is_robust(make_code("gc-cr", n=6, s=2)), is_robust(make_code("isgc-cr", n=5, c=2), s=1)
    (True, False)
    """
    B, s = _as_code(code, s)
    n = B.shape[0]
    if s is None:
        raise ValueError("s: expected the number of stragglers (the code has no s), got None")
    s = check_int("s", s, minimum=0, maximum=n - 1)
    if samples is not None:
        samples = check_int("samples", samples, minimum=1)
    limit = ROBUST_EXHAUSTIVE_LIMIT if samples is None else samples
    rng = check_rng(rng)

    return straggler_set_not_tolerated(B, s, limit, rng) is None


def normalized_load(code: Code) -> np.ndarray:
    """Fraction of the dataset each machine computes on (paper 4, eq. 1).

    ``code.load`` per row of ``B``; codes whose rows are messages (``code.sender``, e.g.
    gc-partial) are summed per sending machine, so gc-partial gives
    ``x / n + (s + 1)(1 - x) / n`` with ``x = (s + 1) / (alpha + s)`` (paper 1: 4/9 for
    ``n = 3, s = 1, alpha = 2``).

    >>> from gradcode import make_code
    >>> from gradcode.analysis import normalized_load
    >>> normalized_load(make_code("gc-partial", n=3, s=1, alpha=2)).round(4).tolist()   # 4/9
    [0.4444, 0.4444, 0.4444]
    >>> normalized_load(make_code("gc-cr", n=8, s=2)).tolist()[:3]                    # (s+1)/n
    [0.375, 0.375, 0.375]
    """
    return np.array(code.machine_load, dtype=float)


def independence_numbers(G):
    """``alpha[S]``: the independence number of ``G[S]`` for every bitmask ``S`` of the ``n <=
    24`` vertices of ``G`` (an exact search: ``alpha(S) = max(alpha(S - v), 1 + alpha(S - N[v]))``
    with ``v`` the highest vertex of ``S``, all subsets at once, in O(2^n) NumPy work).

    The exact search behind the maximality proofs of the IS-GC decoders
    (``tests/test_maximum_decoders.py``) and paper 2's Theorem 8 in the ledger.

    >>> import gradcode
    >>> G = gradcode.make_code("isgc-cr", n=4, c=2).conflict_graph   # the 4-cycle (Fig. 4(b))
    >>> alpha = independence_numbers(G)
    >>> int(alpha[0b1111]), int(alpha[0b0111]), int(alpha[0b0011])
    (2, 2, 1)
    """
    G = sp.csr_array(G)
    n = G.shape[0]
    alpha = np.zeros(1 << n, dtype=np.int8)
    masks = np.arange(1 << n, dtype=np.int64)
    for v in range(n):
        lower = masks[: 1 << v]
        nbrs = sum(1 << int(u) for u in G.indices[G.indptr[v]:G.indptr[v + 1]] if u < v)
        alpha[1 << v: 2 << v] = np.maximum(alpha[lower], 1 + alpha[lower & ~nbrs])
    return alpha
