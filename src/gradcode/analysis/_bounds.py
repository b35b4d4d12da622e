"""Bounds and checks on codes: IS-GC recovery bounds (paper 2, Thm 10-11), robustness
(Condition 1: paper 1, eq. 4; paper 3, (C1)), per-machine loads and float32 precision loss.
"""

from __future__ import annotations

import math
from itertools import combinations

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


def _straggler_sets(code: Code, s: int, trials: int, rng: np.random.Generator):
    """Sets of missing rows for up to ``s`` straggling machines: all when few; else the full
    set, runs of ``s`` consecutive machines at up to ``trials // 2`` evenly spaced starts (the
    structured sets where real-coefficient codes have their largest weights), then uniform
    sets of exactly ``s``."""
    sender = code.sender
    if code.n_machines == code.n_workers:
        last = np.arange(code.n_workers)
    else:  # a partial straggler still delivers its first message(s); it loses its last one
        last = np.array([np.flatnonzero(sender == m).max() for m in range(code.n_machines)])
    m = last.size
    total = sum(math.comb(m, j) for j in range(s + 1))
    if total <= trials:
        sets = [np.array(S, dtype=int) for j in range(s + 1) for S in combinations(range(m), j)]
        sets = [sets[i % total] for i in range(trials)]
    else:
        starts = np.unique(np.linspace(0, m - 1, max(1, (trials - 1) // 2)).astype(int))
        sets = [np.zeros(0, int)] + [(o + np.arange(s)) % m for o in starts]
        sets += [rng.choice(m, size=s, replace=False) for _ in range(trials - len(sets))]
    return [last[S] for S in sets]


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


def _messages(code: Code, G: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(messages, full gradient)``: ``B G`` and ``sum_j g_j`` (``(L,)`` per message); for a
    sliced code each ``g_j`` cut into ``m`` zero-padded slices, ``(m, L)`` the full gradient."""
    m = int(code.slices)
    if m == 1:
        return code.B @ G, G.sum(axis=0)
    L = -(-G.shape[1] // m)
    cut = np.pad(G, ((0, 0), (0, m * L - G.shape[1]))).reshape(len(G), m, L)
    return np.einsum("iju,jul->il", code.encoding, cut), cut.sum(axis=0)


def wire_errors(code: Code, straggler_sets, gradients: np.ndarray) -> np.ndarray:
    """Per straggler set (rows of ``B`` missing), the relative error of the decoded gradient
    when the messages ``B g`` go on the wire as float32 and the master decodes them in float64,
    against the same decoding of float64 messages: ``||w fl32(B g) - w B g|| / ||w B g||`` (0
    where the decoding is 0).  ``gradients``: the partial gradients ``(k, dim)``.  A code
    sending coded slices (``slices = m > 1``): each ``g_j`` cut into ``m`` zero-padded slices,
    worker ``i`` sending ``sum_{j,u} E[i, j, u] g_j^(u)``, slice ``u`` decoded by ``W[:, u]``.

    >>> from gradcode import make_code
    >>> from gradcode.analysis import wire_errors
    >>> G = np.random.default_rng(0).standard_normal((8, 16))
    >>> errs = wire_errors(make_code("gc-cr", n=8, s=2), [[0, 1], [3, 7]], G)
    >>> errs.shape, bool(errs.max() < 1e-6)
    ((2,), True)
    """
    coded, _ = _messages(code, np.asarray(gradients, float))
    rounded = coded.astype(np.float32).astype(np.float64)
    everyone = np.arange(code.n_workers)
    out = []
    for S in straggler_sets:
        w = np.asarray(code.decode(np.setdiff1d(everyone, S)).weights)
        est64, est32 = w.T @ coded, w.T @ rounded     # (L,) or, sliced, (m, L)
        ref = float(np.linalg.norm(est64))
        out.append(float(np.linalg.norm(est32 - est64)) / ref if ref > 0 else 0.0)
    return np.array(out)


def float32_error(code: Code, rng: np.random.Generator | None = None, trials: int = 200,
                  dim: int = 64, gradients: np.ndarray | None = None) -> dict[str, float]:
    """Worst relative error of the decoded gradient with float32 on the wire, against float64.

    The runtime's wire (issue 22): a worker encodes ``(B g)_i`` in float64 and sends it rounded
    to float32; the master decodes in float64.  For ``trials`` straggler sets of at most
    ``code.s`` straggling machines (every set when there are at most ``trials``, else the full
    set, runs of ``s`` consecutive machines and uniform sets of exactly ``s``; ``s = 0`` for
    codes without ``s``; a machine with several messages, e.g. gc-partial, loses only its last
    one: paper 1's partial-straggler model) and partial gradients ``g_j`` (``gradients``, ``(k, dim)``, or fresh
    standard normal ones): ``float32_rel_error`` is ``||w fl32(B g) - w B g|| / ||w B g||``, the
    wire's error against the same decoding of float64 messages; ``float64_rel_error`` the
    decoder's own error ``||w B g - sum_j g_j|| / sum_j ||g_j||`` (~1e-15 for an exact code).

    >>> from gradcode import make_code
    >>> from gradcode.analysis import float32_error
    >>> err = float32_error(make_code("gc-cr", n=8, s=2), np.random.default_rng(0), trials=20)
    >>> round(err["max_abs_B"], 3), err["float32_rel_error"] < 1e-6
    (0.565, True)
    >>> err["float64_rel_error"] < 1e-12
    True
    """
    trials = check_int("trials", trials, minimum=1)
    dim = check_int("dim", dim, minimum=1)
    rng = check_rng(rng)
    everyone = np.arange(code.n_workers)
    err32 = err64 = 0.0
    for missing in _straggler_sets(code, code.s or 0, trials, rng):
        G = rng.standard_normal((code.n_partitions, dim)) if gradients is None else gradients
        err32 = max(err32, float(wire_errors(code, [missing], G)[0]))
        w = np.asarray(code.decode(np.setdiff1d(everyone, missing), rng=rng).weights)
        coded, full = _messages(code, G)
        scale = float(np.linalg.norm(G, axis=1).sum())
        err64 = max(err64, float(np.linalg.norm(w.T @ coded - full)) / scale)
    return {"max_abs_B": code.max_coefficient, "float32_rel_error": err32,
            "float64_rel_error": err64}
