"""Compiled whole-round form of the wait policies (the vectorised simulator's stop and receive).

A policy whose stop is a minimum of *order terms* of the round's arrival times (``WaitPolicy.terms``:
the ``k``-th earliest arrival, a multiple of the earliest, a constant) is applied to a chunk of
rounds by one compiled pass per round: O(n) selection instead of a sort, then the received mask
with ``cap`` and ties broken by worker index (``WaitPolicy.received``).  It computes the same
numbers as ``WaitPolicy.bound`` on the sorted arrivals (the same floating-point operations), which
tests/test_contract_paths.py checks against the loop.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def _kth(buf, k):
    """The ``k``-th smallest (0-based) of ``buf`` (reordered in place): Hoare selection."""
    lo, hi = 0, buf.size - 1
    while lo < hi:
        pivot = buf[(lo + hi) // 2]
        i, j = lo, hi
        while i <= j:
            while buf[i] < pivot:
                i += 1
            while buf[j] > pivot:
                j -= 1
            if i <= j:
                buf[i], buf[j] = buf[j], buf[i]
                i += 1
                j -= 1
        if k <= j:
            hi = j
        elif k >= i:
            lo = i
        else:
            return buf[k]
    return buf[k]


@njit(cache=True)
def _select(row, k, buf, guess):
    """The ``k``-th smallest (0-based) of ``row``.  ``guess = [lo, hi]`` brackets it (the last
    round's answer plus or minus a margin): one branch-free pass counts what lies below ``lo`` and
    gathers what lies in ``[lo, hi]``, a selection finishes in the few gathered; a full selection
    on a copy where the bracket misses.  The margin adapts (about 32 values gathered), so rounds
    of similar arrivals cost about one pass each; the answer never depends on the guess."""
    n = row.size
    lo, hi = guess[0], guess[1]
    below, between = 0, 0
    for i in range(n):
        v = row[i]
        below += v < lo
        buf[between] = v
        between += (v >= lo) & (v <= hi)
    if below <= k < below + between:
        t = _kth(buf[:between], k - below)
        half = (hi - lo) / 2 * (0.5 if between > 64 else 1.0 if between > 16 else 2.0)
    else:
        for i in range(n):           # a loop: a slice assignment compiles numba's error text
            buf[i] = row[i]
        t = _kth(buf[:n], k)
        half = max(2 * (hi - lo) if hi > lo else 0.0, 0.05 * abs(t), 1e-12)
    guess[0], guess[1] = t - half, t + half
    return t


@njit(cache=True)
def _stop_received(arr, orders, scales, consts, cap, stop, got):
    R, n = arr.shape
    buf = np.empty(n + 1)
    guesses = np.empty((orders.size, 2))
    guesses[:, 0], guesses[:, 1] = np.inf, -np.inf            # no guess yet: a miss
    for r in range(R):
        row = arr[r]
        lo, hi = row[0], row[0]
        for i in range(1, n):
            v = row[i]
            lo = min(lo, v)
            hi = max(hi, v)
        t = hi
        for c in consts:
            t = min(t, c)
        for a in scales:
            t = min(t, a * lo)
        for o in range(orders.size):
            k = orders[o]
            if k == n:
                t = min(t, hi)
            elif k == 1:
                t = min(t, lo)
            else:
                t = min(t, _select(row, k - 1, buf, guesses[o]))
        stop[r] = t
        taken = 0
        for i in range(n):
            ok = row[i] <= t
            got[r, i] = ok
            taken += ok
        if taken > cap:                  # ties at the stop: the lowest indices first
            room = cap
            for i in range(n):
                if row[i] < t:
                    room -= 1
            for i in range(n):
                if row[i] == t:
                    got[r, i] = room > 0
                    room -= 1


def stop_and_received(arrivals: np.ndarray, terms, cap: int) -> tuple[np.ndarray, np.ndarray]:
    """``(stop, got)`` for rounds of ``arrivals (R, n)`` under a policy's order ``terms``
    (``[("order", k) | ("first", a) | ("const", seconds), ...]``: the stop is the least of the
    ``k``-th earliest arrival, ``a`` times the earliest, the constant, and the last arrival) taking
    at most ``cap`` arrivals (ties by worker index).

    >>> arrivals = np.array([[0.3, 0.1, 2.0, 0.7], [0.1, 0.1, 0.1, 0.9]])
    >>> stop, got = stop_and_received(arrivals, [("order", 2)], cap=2)     # fastest:2
    >>> stop.tolist(), got.astype(int).tolist()
    ([0.3, 0.1], [[1, 1, 0, 0], [1, 1, 0, 0]])
    >>> stop_and_received(arrivals, [("first", 2.0), ("const", 0.5)], cap=4)[0].tolist()
    [0.2, 0.2]
    """
    arr = np.ascontiguousarray(arrivals, dtype=float)
    R, n = arr.shape
    kinds = {"order": [], "first": [], "const": []}
    for kind, value in terms:
        kinds[kind].append(value)
    stop, got = np.empty(R), np.empty((R, n), bool)
    _stop_received(arr, np.array(kinds["order"], np.int64), np.array(kinds["first"], float),
                   np.array(kinds["const"], float), int(cap), stop, got)
    return stop, got
