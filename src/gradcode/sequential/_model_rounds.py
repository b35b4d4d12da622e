"""Compiled replay of SR-SGC and SR-SGC-Rep (paper 4, Sec. 3.2, Algorithms 1 and 3) under the
``"model"`` wait-out rule, the authors' trace simulator (App. J; ``gradcode.sequential.Planner``),
by lists of workers: a round costs what its stragglers and reattempts do, not ``n``.

The dynamics are those of ``_srsgc_rounds`` (``_assign``, ``_commit``) with every mask replaced
by the sorted list of the workers outside it.  Job ``t``'s *missing* list ``M_t`` is the workers
that did not return it in its own round: its effective stragglers and the workers reattempting
job ``t - B`` instead (the complement of ``got``).  With ``m = |M_t|`` and ``need = n - s``:

* job ``t`` decodes in its own round iff ``m <= s`` (GC; GC-Rep: no group of ``s + 1`` workers
  lies wholly in ``M_t``);
* in round ``t + B`` the first ``need - (n - m)`` workers of ``M_t`` by index (GC-Rep: of the
  groups wholly in ``M_t``) reattempt it, and it decodes iff ``n - m`` plus the reattempts
  returned reach ``need`` (GC-Rep: every group wholly in ``M_t`` has a reattempt returned).

The rule's window (``_model_ok``) keeps, per round of the last ``W - 1``, its effective
stragglers as a list and whether it counts.  Straggler patterns come in as lists too: ``idx``
the stragglers of pattern ``u``'s round ``r`` in ``idx[ptr[u, r]:ptr[u, r + 1]]`` (``lists``),
instance ``p`` playing pattern ``which[p]``.  Self-contained (numba's on-disk cache does not
notice edits to another file); the helpers are inlined (calls cost more than their work).
"""

from __future__ import annotations

import numpy as np
from numba import njit


def lists(stragglers: np.ndarray):
    """``(ptr (U, R + 1), idx)``: the stragglers of every round of ``stragglers (U, R, n)`` as
    sorted worker lists (module docstring).

    >>> S = np.array([[[0, 1, 1], [0, 0, 0], [1, 0, 0]]], bool)
    >>> ptr, idx = lists(S)
    >>> ptr.tolist(), idx.tolist()
    ([[0, 2, 2, 3]], [1, 2, 0])
    """
    U, R, n = stragglers.shape
    count = stragglers.sum(-1, dtype=np.int64).ravel()
    ptr = np.concatenate([[0], np.cumsum(count)]).astype(np.int64)
    starts = ptr[:-1].reshape(U, R)
    ptr = np.concatenate([starts, ptr[R::R][:, None]], axis=1)
    idx = (np.flatnonzero(stragglers) % n).astype(np.int32)
    return ptr, idx


@njit(cache=True, inline="always")
def _decodes(miss, m, need, size, n):
    """Whether the workers outside ``miss[:m]`` (sorted) decode one (n, s)-GC instance: at least
    ``need`` of them (``size = 0``), or one in every group of ``size`` workers (GC-Rep)."""
    if size == 0:
        return n - m >= need
    i = 0
    while i < m:
        g = (miss[i] // size) * size
        end = min(g + size, n)
        j = i
        while j < m and miss[j] < end:
            j += 1
        if j - i == end - g:
            return False
        i = j
    return True


@njit(cache=True, inline="always")
def _reattempts(miss, m, need, size, n, out):
    """Job ``t0``'s reattempts in round ``t0 + B`` (Algorithm 1, 3): ``out[:k]``, ``k`` returned;
    the first ``need - (n - m)`` of ``miss[:m]`` (GC-Rep: of the groups wholly in it)."""
    budget = need - (n - m)
    k = 0
    if size == 0:
        k = max(0, min(budget, m))
        for a in range(k):                       # (a slice assignment allocates)
            out[a] = miss[a]
        return k
    i = 0
    while i < m and k < budget:
        g = (miss[i] // size) * size
        end = min(g + size, n)
        j = i
        while j < m and miss[j] < end:
            j += 1
        if j - i == end - g:
            for a in range(i, j):
                if k < budget:
                    out[k] = miss[a]
                    k += 1
        i = j
    return k


@njit(cache=True, inline="always")
def _assign(run, r, J, B, need, size, n):
    """Round ``r``'s reattempts (of job ``r - B``) into ``run[2]``; their number."""
    M, Mn, again = run[0], run[1], run[2]
    t0 = r - B
    if 0 <= t0 < J:
        e = t0 % (B + 1)
        return _reattempts(M[e], Mn[e], need, size, n, again)
    return 0


@njit(cache=True, inline="always")
def _commit(run, done, r, J, B, need, size, n, k, late, nl, marks, stamp):
    """Apply round ``r`` (``run[2][:k]`` reattempting job ``r - B``, effective stragglers
    ``late[:nl]``, marked ``marks[0] == stamp``): job ``r - B`` decoded now if it was not yet,
    job ``r``'s missing list and whether its own round decodes it."""
    M, Mn, again = run[0], run[1], run[2]
    lmark, rmark = marks[0], marks[1]
    t0 = r - B
    if 0 <= t0 < J and done[t0] < 0:
        e = t0 % (B + 1)
        miss, m = M[e], Mn[e]
        if size == 0:
            got = n - m
            for a in range(k):
                got += lmark[again[a]] != stamp
            fin = got >= need
        else:
            for a in range(k):
                if lmark[again[a]] != stamp:
                    rmark[again[a]] = stamp
            fin = _covered(miss, m, size, n, rmark, stamp)
        if fin:
            done[t0] = r
    if r < J:
        e = r % (B + 1)
        Mn[e] = _merge(late, nl, again, k, M[e])
        done[r] = r if _decodes(M[e], Mn[e], need, size, n) else -1


@njit(cache=True, inline="always")
def _covered(miss, m, size, n, rmark, stamp):
    """Every group of ``size`` workers wholly in ``miss[:m]`` has a returned reattempt."""
    i = 0
    while i < m:
        g = (miss[i] // size) * size
        end = min(g + size, n)
        j, hit = i, False
        while j < m and miss[j] < end:
            hit |= rmark[miss[j]] == stamp
            j += 1
        if j - i == end - g and not hit:
            return False
        i = j
    return True


@njit(cache=True, inline="always")
def _merge(a, na, b, nb, out):
    """The sorted union of ``a[:na]`` and ``b[:nb]`` (both sorted) into ``out``; its size."""
    i = j = k = 0
    while i < na or j < nb:
        if j == nb or (i < na and a[i] < b[j]):
            out[k] = a[i]
            i += 1
        elif i == na or b[j] < a[i]:
            out[k] = b[j]
            j += 1
        else:
            out[k] = a[i]
            i += 1
            j += 1
        k += 1
    return k


@njit(cache=True, inline="always")
def _model_ok(win, r, B, lam, late, nl, marks, stamp):
    """The authors' ``follows_straggler_model`` for round ``r``'s stragglers ``late[:nl]``:
    ``win = (rows (W, n), sizes (W,), free (W,))`` the effective stragglers of rounds
    ``r - W + 1 .. r - 1`` (round ``q`` in row ``q % W``) and which of them do not count.  At
    most λ distinct stragglers over the block, and none of ``late`` straggled in a counted
    round ``r - W + 1 .. r - B``."""
    rows, sizes, free = win
    W = rows.shape[0]
    seen, early = marks[2], marks[3]
    distinct = 0
    for d in range(1, W):
        q = (r - d + W) % W
        if free[q]:
            continue
        for a in range(sizes[q]):
            w = rows[q, a]
            if seen[w] != stamp:
                seen[w] = stamp
                distinct += 1
            if d >= B:
                early[w] = stamp
    for a in range(nl):
        w = late[a]
        if early[w] == stamp:
            return False
        distinct += seen[w] != stamp
    return distinct <= lam


@njit(cache=True, inline="always")
def _window(win, q, late, nl, again, k, s, marks, stamp):
    """Round ``q``'s row of the window: its effective stragglers ``late[:nl]`` (none in a round
    not run), and whether it does not count later: no reattempt returned, at most ``s``
    stragglers."""
    rows, sizes, free = win
    for a in range(nl):
        rows[q, a] = late[a]
    sizes[q] = nl
    back = False
    for a in range(k):
        back |= marks[0][again[a]] != stamp
    free[q] = not back and nl <= s


@njit(cache=True, inline="always")
def _run(n, B):
    """One run's lists: missing lists by job ``t % (B + 1)``, their sizes, this round's
    reattempts."""
    return (np.zeros((B + 1, n), np.int32), np.zeros(B + 1, np.int64), np.zeros(n, np.int32))


@njit(cache=True, inline="always")
def _track(task, oks, r, J, idle, again, k, late, nl):
    """Instance 0's tasks (0: job ``r``, 1: reattempt of job ``r - B``) and received results."""
    task[:] = 0 if r < J else idle
    for a in range(k):
        task[again[a]] = 1
    oks[:] = True
    for a in range(nl):
        oks[late[a]] = False


@njit(cache=True)
def model_rounds(ptr, idx, which, done, dims, spec, idle, W, lam, shadow, contents, oks):
    """Play pattern ``which[p]`` (``ptr``, ``idx``: ``lists``) through instance ``p`` from round
    0 under the ``"model"`` rule, filling ``done (P, J)``: round ``r < J + B`` with stragglers
    is a wait-out iff it is run and ``_model_ok`` fails on the deciding run's window; round
    ``r >= J`` is not run where the deciding run's job ``r - B`` is decoded or none is due.
    With ``shadow`` the deciding run is the base scheme's (GC for GC-Rep: ``spec[p, 1] = 0``),
    played alongside.  ``spec (P, 2)``: ``need = n - s`` and the GC-Rep group size (0: GC);
    ``dims = (J, B)``; tracked runs (``contents (R, n)``, ``oks (R, n)``) record instance 0's
    tasks and received results.  The wait-out and not-run masks ``(P, R)``."""
    P, R = which.size, ptr.shape[1] - 1
    n = oks.shape[1]
    J, B = dims
    track = contents.shape[0] > 0
    own, base = _run(n, B), _run(n, B)
    bdone = np.zeros(J, np.int32)
    win = (np.zeros((W, n), np.int32), np.zeros(W, np.int64), np.zeros(W, np.bool_))
    marks = np.full((4, n), -1, np.int64)
    none = np.zeros(0, np.int32)
    waits, skipped = np.zeros((P, R), np.bool_), np.zeros((P, R), np.bool_)
    stamp = 0
    for p in range(P):
        need, size = spec[p, 0], spec[p, 1]
        decide, ddone = (base, bdone) if shadow else (own, done[p])
        win[1][:] = 0
        win[2][:] = False
        ddone[:] = -1
        for r in range(R):
            stamp += 1
            late = idx[ptr[which[p], r]:ptr[which[p], r + 1]]
            k = _assign(own, r, J, B, need, size, n)
            kd = _assign(base, r, J, B, need, 0, n) if shadow else k
            t0 = r - B
            skip = r >= J and not (0 <= t0 < J and ddone[t0] < 0)
            wait = (late.size > 0 and r < J + B and not skip
                    and not _model_ok(win, r, B, lam[p], late, late.size, marks, stamp))
            eff = none if wait else late
            for w in eff:
                marks[0][w] = stamp
            if shadow:
                _commit(base, bdone, r, J, B, need, 0, n, kd, eff, eff.size, marks, stamp)
            _commit(own, done[p], r, J, B, need, size, n, k, eff, eff.size, marks, stamp)
            _window(win, r % W, eff, 0 if skip else eff.size, decide[2], kd, n - need, marks,
                    stamp)
            waits[p, r], skipped[p, r] = wait, skip
            if track and p == 0:
                _track(contents[r], oks[r], r, J, idle, own[2], k, eff, eff.size)
    return waits, skipped
