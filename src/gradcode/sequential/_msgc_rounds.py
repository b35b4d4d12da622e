"""Compiled rounds of M-SGC and M-SGC-Rep (paper 4, Sec. 3.3, Algorithm 2; App. G): one round of
one instance (``_assign``, ``_lost``, ``_commit``), the same for ``P`` instances (what the
round-by-round planner calls), and the replay of whole straggler patterns under the
``"deadline"`` and ``"never"`` wait-out rules (``replay_rounds``) and the ``"model"`` rule
(``model_rounds``; ``gradcode.sequential.Planner``), instance after instance.

State of one instance, a ring by job ``t % S`` (``S = W - 1 + B`` slots; slot ``k`` of round
``r`` belongs to job ``r - k``): ``miss (S, n)`` failed D1 attempts not yet recovered per worker,
``gfail (S,)`` some D2 group could not be decoded, ``have (S, n, K)`` which of its ``K = W - 1``
D1 chunks each worker delivered (tracked runs only: it names the chunk a worker reattempts),
``done (J,)`` the round each job was decoded in (-1: not yet).  ``state`` is the tuple of those
arrays for ``P`` instances (leading axis ``P``); ``spec (P, 3)`` holds per instance the results
a D2 group needs (``n - λ``; GC-Rep: one per group), the GC-Rep group size (0 for GC) and
whether ``λ = n`` (no D2); ``dims = (J, K, track)``.

A round with results ``ok (n,)``: in slot ``k < K`` each worker computes its ``k``-th D1 chunk,
missing where it straggled; in a slot ``k >= K`` a worker missing a D1 chunk reattempts it and
the others send their coded result of D2 group ``k - K``.  A job is decoded once no D1 chunk is
missing and every D2 group decoded.  ``_lost`` answers the deadline rule's question without
changing the state: with these results, would a job in flight be lost even if nobody straggled
afterwards?  Some worker misses more D1 chunks than reattempt rounds are left, a D2 group failed,
or the workers missing nothing cannot decode the next one (a worker sends a coded result iff it
misses no D1 chunk).  ``_commit`` then applies the results finally received, in place.

Self-contained (``_decodes`` and ``_received`` also live in ``_srsgc_rounds``; the content codes
of ``gradcode.sequential._base`` come in as ``codes = (IDLE, CODED, REATT)``): numba's on-disk
cache does not notice edits to another file.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def _decodes(mask, need, size):
    """Whether the results ``mask (n,)`` decode one instance: at least ``need`` of them
    (``size = 0``: GC), or one in every group of ``size`` workers (GC-Rep)."""
    if size == 0:
        got = 0
        for w in range(mask.size):
            got += mask[w]
        return got >= need
    for g in range(0, mask.size, size):
        w, end = g, min(g + size, mask.size)
        while w < end and not mask[w]:
            w += 1
        if w == end:
            return False
    return True


@njit(cache=True)
def _received(late, ok):
    """``ok = ~late`` (in place); whether anyone is late."""
    anyone = False
    for w in range(late.size):
        ok[w] = not late[w]
        anyone |= late[w]
    return anyone


@njit(cache=True)
def _first_missing(row):
    """The first D1 chunk not delivered (``argmin``: 0 when all were)."""
    for c in range(row.size):
        if not row[c]:
            return c
    return 0


@njit(cache=True)
def _assign(st, r, dims, spec, codes, out):
    """Algorithm 2's tasks of round ``r``, ``out (n, S)``: fixed D1 chunks in slots ``k < K``,
    then a reattempt of the first missing D1 chunk, or else the coded D2 result."""
    miss, have = st[0], st[2]
    J, K, track = dims
    S, n = miss.shape
    idle, coded, reatt = codes
    if spec[2]:
        coded = idle
    for k in range(S):
        t = r - k
        if t < 0 or t >= J:
            out[:, k] = idle
        elif k < K:
            out[:, k] = k
        else:
            e = t % S
            for w in range(n):
                if miss[e, w] == 0:
                    out[w, k] = coded
                else:
                    out[w, k] = _first_missing(have[e, w]) if track else reatt


@njit(cache=True)
def _slot(src, dst, k, K, ok, sent):
    """Slot ``k``'s missing D1 chunks per worker after the round into ``dst`` (``src`` before;
    ``dst`` may be ``src``; ``k = 0``: a new job), and in a slot ``k >= K`` who sent a coded
    result (``sent``).  ``(most chunks a worker misses, coded results, workers missing none)``."""
    most, got, zero = 0, 0, 0
    for w in range(ok.size):
        if k >= K:
            again = src[w] > 0
            sent[w] = ok[w] & (not again)
            got += sent[w]
            m = src[w] - (ok[w] & again)
        else:
            m = (src[w] if k > 0 else 0) + (not ok[w])
        dst[w] = m
        most = max(most, m)
        zero += m == 0
    return most, got, zero


@njit(cache=True)
def _ready(m, spec, buf):
    """Whether the workers missing no D1 chunk would decode the next D2 group (GC-Rep)."""
    for w in range(m.size):
        buf[w] = m[w] == 0
    return _decodes(buf, spec[0], spec[1])


@njit(cache=True)
def _verdict(sent, k, K, S, failed, prev, spec, counts):
    """Job in slot ``k`` after the round (``counts`` what ``_slot`` returned, ``failed``: a D2
    group failed before, ``prev`` its finish round so far): ``(failed, decoded now)``."""
    full = spec[2] != 0
    if k >= K and not full:
        failed |= not (counts[1] >= spec[0] if spec[1] == 0 else _decodes(sent, spec[0], spec[1]))
    fin = prev < 0 and not failed and counts[0] == 0 and k >= K - 1 and (full or k == S - 1)
    return failed, fin


@njit(cache=True)
def _doomed(m, k, K, S, failed, spec, counts, buf):
    """A job not decoded in slot ``k`` cannot be completed even with no straggler from now on."""
    if failed or counts[0] > S - 1 - max(k, K - 1):
        return True
    if k == S - 1 or spec[2] != 0:
        return False
    return not (counts[2] >= spec[0] if spec[1] == 0 else _ready(m, spec, buf))


@njit(cache=True)
def _lost(st, r, ok, dims, spec, scratch):
    """With results ``ok`` in round ``r``, some job in flight would be lost (the state is not
    changed)."""
    miss, gfail, done = st[0], st[1], st[3]
    J, K, _ = dims
    S = miss.shape[0]
    m, sent, buf = scratch
    for k in range(max(0, r - J + 1), min(S - 1, r) + 1):
        t = r - k
        e = t % S
        counts = _slot(miss[e], m, k, K, ok, sent)
        failed, fin = _verdict(sent, k, K, S, k > 0 and gfail[e], done[t], spec, counts)
        if done[t] < 0 and not fin and _doomed(m, k, K, S, failed, spec, counts, buf):
            return True
    return False


@njit(cache=True)
def _delivered(have, task, ok, sent, k, K):
    """Which D1 chunks arrived (tracked runs): slot ``k``'s chunk, or the reattempted one."""
    for w in range(ok.size):
        if k < K:
            have[w, k] = ok[w]
        elif ok[w] and not sent[w] and 0 <= task[w, k] < K:
            have[w, task[w, k]] = True


@njit(cache=True)
def _commit(st, r, task, ok, dims, spec, scratch):
    """Apply round ``r``'s results ``ok`` (tasks ``task (n, S)``, read in tracked runs only);
    jobs decoded now finish at ``r``."""
    miss, gfail, have, done = st
    J, K, track = dims
    S = miss.shape[0]
    sent = scratch[1]
    for k in range(max(0, r - J + 1), min(S - 1, r) + 1):
        t = r - k
        e = t % S
        counts = _slot(miss[e], miss[e], k, K, ok, sent)
        failed, fin = _verdict(sent, k, K, S, k > 0 and gfail[e], done[t], spec, counts)
        gfail[e] = failed
        if fin:
            done[t] = r
        if track:
            if k == 0:
                have[e] = False
            _delivered(have[e], task, ok, sent, k, K)


@njit(cache=True)
def _at(state, p):
    return state[0][p], state[1][p], state[2][p], state[3][p]


@njit(cache=True)
def _scratch(miss):
    n = miss.shape[-1]
    return np.zeros(n, miss.dtype), np.zeros(n, np.bool_), np.zeros(n, np.bool_)


@njit(cache=True)
def assign_rounds(state, r, dims, spec, codes, out):
    """``_assign`` for every instance: ``out (P, n, S)``."""
    for p in range(out.shape[0]):
        _assign(_at(state, p), r, dims, spec[p], codes, out[p])


@njit(cache=True)
def lost_rounds(state, r, ok, dims, spec, lost):
    """``_lost`` for every instance: ``ok (P, n)``, ``lost (P,)``."""
    scratch = _scratch(state[0])
    for p in range(ok.shape[0]):
        lost[p] = _lost(_at(state, p), r, ok[p], dims, spec[p], scratch)


@njit(cache=True)
def commit_rounds(state, r, tasks, ok, dims, spec):
    """``_commit`` for every instance: ``tasks (P, n, S)``, ``ok (P, n)``."""
    scratch = _scratch(state[0])
    for p in range(ok.shape[0]):
        _commit(_at(state, p), r, tasks[p], ok[p], dims, spec[p], scratch)


@njit(cache=True)
def replay_rounds(S, state, base, dims, spec, codes, rule, contents, oks):
    """Play ``S (P, R, n)`` (True: straggler) through every instance from round 0; the wait-out
    mask ``(P, R)``.  ``rule = (deadline, shadow)``: the deadline rule (else ``"never"``);
    whether ``base`` is the state of the base scheme of a -Rep variant, replayed alongside (GC
    instead of GC-Rep) with its own wait-outs, which are the variant's too.  Tracked runs
    (``dims[2]``) write instance 0's tasks and received results into ``contents (R, n, S)`` and
    ``oks (R, n)``; untracked ones skip the tasks (the counts do not depend on them)."""
    P, R, n = S.shape
    J, K, track = dims
    T = state[0].shape[1] - 1
    deadline, shadow = rule
    bdims = (J, K, 0)
    scratch = _scratch(state[0])
    spare = np.empty((n, T + 1), np.int16)
    everyone, ok = np.ones(n, np.bool_), np.ones(n, np.bool_)
    waits = np.zeros((P, R), np.bool_)
    for p in range(P):
        st = _at(state, p)
        bst = _at(base, p) if shadow else st
        bspec = spec[p].copy()
        bspec[1] = 0
        for r in range(R):
            checked = _received(S[p, r], ok) and deadline and r < J + T
            task = contents[r] if track and p == 0 else spare
            if track:
                _assign(st, r, dims, spec[p], codes, task)
            wait = checked and _lost(st, r, ok, dims, spec[p], scratch)
            if shadow:
                lost = checked and _lost(bst, r, ok, bdims, bspec, scratch)
                _commit(bst, r, spare, everyone if lost else ok, bdims, bspec, scratch)
                wait |= lost
            _commit(st, r, task, everyone if wait else ok, dims, spec[p], scratch)
            waits[p, r] = wait
            if track and p == 0:
                got = everyone if wait else ok
                for i in range(got.size):      # a loop: a row assigned compiles numba's error text
                    oks[r, i] = got[i]
    return waits


# ------------------------------------------------------------- the "model" wait-out rule
@njit(cache=True)
def _model_ok(ring, r, B, W, lam, count, rows):
    """Prop. 3.2 on the effective rows of rounds ``r - L + 1 .. r`` (``ring (L, n)``, round ``q``
    in row ``q % L``, ``L = W + B - 1 = T + 1``; rows of rounds before 0 all False), as
    ``stragglers.bursty_ok | stragglers.arbitrary_ok``: the block is (B, L, λ)-arbitrary (at
    most λ distinct stragglers, none in more than ``B`` rounds) or (B, W, λ)-bursty (in each of
    its ``B`` windows of ``W`` rounds at most λ distinct stragglers, none straggling in two
    rounds ``B`` or more apart).  ``count (n,)``, ``rows (L,)``: scratch."""
    L, n = ring.shape
    for j in range(L):
        rows[j] = (r + 1 + j) % L                   # round r - L + 1 + j
    count[:] = 0
    for j in range(L):
        row = ring[rows[j]]
        for w in range(n):
            count[w] += row[w]
    distinct, most = 0, 0
    for w in range(n):
        distinct += count[w] > 0
        most = max(most, count[w])
    if most <= B and distinct <= lam:
        return True
    for a in range(L - W + 1):                       # the windows, oldest first
        count[:] = 0
        for j in range(W):
            row = ring[rows[a + j]]
            for w in range(n):
                count[w] |= row[w]
            for i in range(j - B + 1):               # rows B or more rounds earlier
                past = ring[rows[a + i]]
                for w in range(n):
                    if row[w] & past[w]:
                        return False
        distinct = 0
        for w in range(n):
            distinct += count[w]
        if distinct > lam:
            return False
    return True


@njit(cache=True)
def model_rounds(S, state, dims, spec, codes, model, lam, contents, oks):
    """``replay_rounds`` under the ``"model"`` rule: round ``r < J + T`` with stragglers is a
    wait-out iff, added to the effective pattern (earlier wait-outs cleared), they break Prop.
    3.2 on the last ``T + 1`` rounds (``_model_ok``; ``model = (B, W)``, ``lam (P,)``).  The
    rule reads no state, so a -Rep variant's wait-outs, its base scheme's, are its own."""
    P, R, n = S.shape
    J, K, track = dims
    L = state[0].shape[1]
    B, W = model
    scratch = _scratch(state[0])
    spare = np.empty((n, L), np.int16)
    everyone, ok = np.ones(n, np.bool_), np.ones(n, np.bool_)
    ring = np.zeros((L, n), np.bool_)
    count, rows = np.zeros(n, np.int64), np.zeros(L, np.int64)
    waits = np.zeros((P, R), np.bool_)
    for p in range(P):
        st = _at(state, p)
        ring[:] = False
        for r in range(R):
            checked = _received(S[p, r], ok) and r < J + L - 1
            task = contents[r] if track and p == 0 else spare
            if track:
                _assign(st, r, dims, spec[p], codes, task)
            row = ring[r % L]
            for w in range(n):                      # (a slice assignment allocates)
                row[w] = S[p, r, w]
            wait = checked and not _model_ok(ring, r, B, W, lam[p], count, rows)
            if wait:
                row[:] = False
            _commit(st, r, task, everyone if wait else ok, dims, spec[p], scratch)
            waits[p, r] = wait
            if track and p == 0:
                got = everyone if wait else ok
                for i in range(got.size):      # a loop: a row assigned compiles numba's error text
                    oks[r, i] = got[i]
    return waits
