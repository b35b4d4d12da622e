"""Compiled rounds of SR-SGC and SR-SGC-Rep (paper 4, Sec. 3.2, Algorithm 1; App. G, Algorithm
3): one round of one instance (``_assign``, ``_lost``, ``_commit``), the same for ``P``
instances (what the round-by-round planner calls), and the replay of whole straggler patterns
under the ``"deadline"`` and ``"never"`` wait-out rules (``gradcode.sequential.Planner``),
instance after instance.

State of one instance: ``got (B + 1, n)``, a ring by job ``t % (B + 1)``, the workers that
returned job ``t`` in round ``t``, and ``done (J,)`` the round each job was decoded in (-1: not
yet).  ``state`` is that pair for ``P`` instances (leading axis ``P``); ``spec (P, 2)`` holds per
instance the results the base code needs (``n - s``) and the GC-Rep group size (0 for GC);
``dims = (J, B)``.

In round ``r`` worker ``i`` computes its task of job ``r`` (content 0) or reattempts job
``t0 = r - B`` (content 1): if job ``t0`` got fewer than ``n - s`` results in its own round, the
first ``n - s - N(t0)`` workers by index that did not return it (GC-Rep: of the groups with no
result) reattempt it.  Job ``r`` decodes now from its own results, job ``t0`` from its own and
the reattempts; ``_lost`` answers the deadline rule's question (job ``t0``, the only one whose
deadline is round ``r``, would not decode) without changing the state.

Self-contained (``_decodes`` and ``_received`` also live in ``_msgc_rounds``; the content code
``IDLE`` of ``gradcode.sequential._base`` comes in as ``idle``): numba's on-disk cache does not
notice edits to another file.
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
def _candidates(got, size, cand):
    """Who may reattempt a job: the workers that did not return it (GC-Rep: every worker of a
    group with no result)."""
    if size == 0:
        for w in range(got.size):
            cand[w] = not got[w]
        return
    for g in range(0, got.size, size):
        end = min(g + size, got.size)
        hit = got[g:end].any()
        cand[g:end] = not hit


@njit(cache=True)
def _assign(st, r, dims, spec, idle, out, cand):
    """Algorithm 1 (3) tasks of round ``r``, ``out (n,)``: job ``r`` (0), or a reattempt of job
    ``r - B`` (1) by the first candidates, as many as its results fall short of ``n - s``."""
    got = st[0]
    J, B = dims
    out[:] = 0 if r < J else idle
    t0 = r - B
    if 0 <= t0 < J:
        g = got[t0 % (B + 1)]
        budget = spec[0] - g.sum()
        _candidates(g, spec[1], cand)
        for w in range(out.size):
            if budget <= 0:
                break
            if cand[w]:
                out[w] = 1
                budget -= 1


@njit(cache=True)
def _late_job(got, task, ok, spec, buf):
    """Whether job ``r - B`` decodes from its own round's results ``got`` and the reattempts."""
    for w in range(ok.size):
        buf[w] = got[w] | (ok[w] & (task[w] == 1))
    return _decodes(buf, spec[0], spec[1])


@njit(cache=True)
def _lost(st, r, task, ok, dims, spec, buf):
    """With results ``ok`` in round ``r``, job ``r - B`` would not be decoded by its deadline
    (the state is not changed)."""
    J, B = dims
    t0 = r - B
    return 0 <= t0 < J and not _late_job(st[0][t0 % (B + 1)], task, ok, spec, buf)


@njit(cache=True)
def _commit(st, r, task, ok, dims, spec, buf):
    """Apply round ``r``'s results ``ok``: job ``r``'s own results, and job ``r - B`` decoded
    now if it was not yet."""
    got, done = st
    J, B = dims
    t0 = r - B
    if 0 <= t0 < J and done[t0] < 0 and _late_job(got[t0 % (B + 1)], task, ok, spec, buf):
        done[t0] = r
    mine = got[r % (B + 1)]
    if r < J:
        for w in range(ok.size):
            mine[w] = ok[w] & (task[w] == 0)
        done[r] = r if _decodes(mine, spec[0], spec[1]) else -1
    else:
        mine[:] = False


@njit(cache=True)
def _at(state, p):
    return state[0][p], state[1][p]


@njit(cache=True)
def assign_rounds(state, r, dims, spec, idle, out):
    """``_assign`` for every instance: ``out (P, n)``."""
    cand = np.zeros(out.shape[1], np.bool_)
    for p in range(out.shape[0]):
        _assign(_at(state, p), r, dims, spec[p], idle, out[p], cand)


@njit(cache=True)
def lost_rounds(state, r, tasks, ok, dims, spec, lost):
    """``_lost`` for every instance: ``tasks, ok (P, n)``, ``lost (P,)``."""
    buf = np.zeros(ok.shape[1], np.bool_)
    for p in range(ok.shape[0]):
        lost[p] = _lost(_at(state, p), r, tasks[p], ok[p], dims, spec[p], buf)


@njit(cache=True)
def commit_rounds(state, r, tasks, ok, dims, spec):
    """``_commit`` for every instance: ``tasks, ok (P, n)``."""
    buf = np.zeros(ok.shape[1], np.bool_)
    for p in range(ok.shape[0]):
        _commit(_at(state, p), r, tasks[p], ok[p], dims, spec[p], buf)


@njit(cache=True)
def replay_rounds(S, state, base, dims, spec, idle, rule, contents, oks):
    """Play ``S (P, R, n)`` (True: straggler) through every instance from round 0; the wait-out
    mask ``(P, R)``.  ``rule = (deadline, shadow)``: the deadline rule (else ``"never"``);
    whether ``base`` is the state of the base scheme of a -Rep variant, replayed alongside (GC
    instead of GC-Rep) with its own wait-outs, which are the variant's too.  ``contents (R, n)``
    and ``oks (R, n)`` of size 0, or instance 0's tasks and received results (tracked runs)."""
    P, R, n = S.shape
    J, B = dims
    deadline, shadow = rule
    track = contents.shape[0] > 0
    buf, cand = np.zeros(n, np.bool_), np.zeros(n, np.bool_)
    spare, btask = np.empty(n, np.int16), np.empty(n, np.int16)
    everyone, ok = np.ones(n, np.bool_), np.ones(n, np.bool_)
    waits = np.zeros((P, R), np.bool_)
    for p in range(P):
        st = _at(state, p)
        bst = _at(base, p) if shadow else st
        bspec = spec[p].copy()
        bspec[1] = 0
        for r in range(R):
            checked = _received(S[p, r], ok) and deadline and r < J + B
            task = contents[r] if track and p == 0 else spare
            _assign(st, r, dims, spec[p], idle, task, cand)
            wait = checked and _lost(st, r, task, ok, dims, spec[p], buf)
            if shadow:
                _assign(bst, r, dims, bspec, idle, btask, cand)
                lost = checked and _lost(bst, r, btask, ok, dims, bspec, buf)
                _commit(bst, r, btask, everyone if lost else ok, dims, bspec, buf)
                wait |= lost
            _commit(st, r, task, everyone if wait else ok, dims, spec[p], buf)
            waits[p, r] = wait
            if track and p == 0:
                got = everyone if wait else ok
                for i in range(got.size):      # a loop: a row assigned compiles numba's error text
                    oks[r, i] = got[i]
    return waits
