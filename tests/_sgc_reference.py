"""Straightforward reference implementations for paper 4 (an oracle for the tests and the
baseline of benchmarks/bench_sequential.py): the straggler models' definitions of Sec. 2.1 as
loops over windows, and Algorithms 1-3 as per-worker loops over Python sets, one round at a time.
The deadline wait-out rule is checked by brute force: copy the state, play the next T rounds
without stragglers, see whether every job in flight is decoded in time.
"""

from __future__ import annotations

import copy
from collections import defaultdict

import numpy as np


# ----------------------------------------------------------------------------- Sec. 2.1 by definition
def _windows(P, W):
    R = P.shape[0]
    for j in range(max(R - W + 1, 1)):
        yield P[j:j + W]


def brute_bursty(P, B, W, lam):
    for win in _windows(P, W):
        if len({i for t in range(len(win)) for i in np.flatnonzero(win[t])}) > lam:
            return False
        for i in range(P.shape[1]):
            rounds = np.flatnonzero(win[:, i])
            if rounds.size and rounds[-1] - rounds[0] > B - 1:
                return False
    return True


def brute_arbitrary(P, N, W, lam):
    for win in _windows(P, W):
        if len({i for t in range(len(win)) for i in np.flatnonzero(win[t])}) > lam:
            return False
        if any(win[:, i].sum() > N for i in range(P.shape[1])):
            return False
    return True


def brute_s_per_round(P, s):
    return all(row.sum() <= s for row in P)


def brute_mixture(P, L, tests):
    """Every window of L rounds satisfies one of ``tests`` (functions of the window)."""
    return all(any(f(win) for f in tests) for win in _windows(P, L))


def design_tests(name, p):
    """(window, tests) of a scheme's design model (Prop. 3.1 / 3.2), by definition."""
    B, W, lam = p.get("B"), p.get("W"), p.get("lam")
    if name == "gc-seq":
        return 1, [lambda w: brute_s_per_round(w, p["s"])]
    if name.startswith("sr-sgc"):
        s = -(-B * lam // (W - 1 + B))
        return W, [lambda w: brute_bursty(w, B, W, lam), lambda w: brute_s_per_round(w, s)]
    return W + B - 1, [lambda w: brute_bursty(w, B, W, lam),
                       lambda w: brute_arbitrary(w, B, W + B - 1, lam)]


# ----------------------------------------------------------------------------- the algorithms
class RefGC:
    """(n, s)-GC round by round (Sec. 3.1)."""

    def __init__(self, n, s, J):
        self.n, self.s, self.J, self.T = n, s, J, 0
        self.results = defaultdict(set)               # job -> workers whose result arrived

    def prune(self, r):
        """Forget jobs past their deadline (keeps copies small)."""
        for d in self.__dict__.values():
            if isinstance(d, defaultdict):
                for t in [t for t in d if t < r - self.T]:
                    del d[t]

    def assign(self, r):
        return [[r if r < self.J else None] for _ in range(self.n)]

    def apply(self, r, tasks, returned):
        for i in range(self.n):
            if returned[i] and tasks[i][0] is not None:
                self.results[tasks[i][0]].add(i)

    def decodable(self, t):
        return len(self.results[t]) >= self.n - self.s


class RefSR(RefGC):
    """SR-SGC, Algorithm 1; with ``rep`` SR-SGC-Rep, Algorithm 3 (groups of s + 1)."""

    def __init__(self, n, B, W, lam, J, rep=False):
        s = -(-B * lam // (W - 1 + B))
        super().__init__(n, s, J)
        self.B, self.T, self.rep, self.W, self.lam = B, B, rep, W, lam
        self.own = defaultdict(set)                   # returned ℓ_i(t) in round t itself

    def assign(self, r):
        n, s, t0 = self.n, self.s, r - self.B
        tasks = []
        delta = len(self.own[t0]) if 0 <= t0 < self.J else n
        for i in range(n):
            job = r if r < self.J else None
            if 0 <= t0 < self.J:
                g = i // (s + 1)
                group_done = self.rep and any(j // (s + 1) == g for j in self.own[t0])
                if not group_done and delta < n - s and i not in self.own[t0]:
                    job, delta = t0, delta + 1
            tasks.append([job])
        return tasks

    def apply(self, r, tasks, returned):
        super().apply(r, tasks, returned)
        for i in range(self.n):
            if returned[i] and tasks[i][0] == r:
                self.own[r].add(i)

    def decodable(self, t):
        if self.rep:
            return all(any(i // (self.s + 1) == g for i in self.results[t])
                       for g in range(self.n // (self.s + 1)))
        return super().decodable(t)


class RefM:
    """M-SGC, Algorithm 2 (``rep``: M-SGC-Rep, GC-Rep D2 groups of λ + 1)."""

    def __init__(self, n, B, W, lam, J, rep=False):
        self.n, self.B, self.W, self.lam, self.J, self.rep = n, B, W, lam, J, rep
        self.K, self.T = W - 1, W - 2 + B
        self.d1 = defaultdict(lambda: [set() for _ in range(n)])
        self.coded = defaultdict(lambda: [set() for _ in range(B)])

    def assign(self, r):
        tasks = []
        for i in range(self.n):
            row = []
            for k in range(self.K + self.B):
                t = r - k
                if not 0 <= t < self.J:
                    row.append(None)
                elif k < self.K:
                    row.append(("d1", k))
                elif len(self.d1[t][i]) == self.K:
                    row.append(("coded", k - self.K) if self.lam < self.n else None)
                else:
                    row.append(("d1", min(set(range(self.K)) - self.d1[t][i])))
            tasks.append(row)
        return tasks

    def apply(self, r, tasks, returned):
        for i in range(self.n):
            if not returned[i]:
                continue
            for k, task in enumerate(tasks[i]):
                if task is None:
                    continue
                kind, x = task
                if kind == "d1":
                    self.d1[r - k][i].add(x)
                else:
                    self.coded[r - k][x].add(i)

    prune = RefGC.prune

    def _group_ok(self, got):
        if self.rep:
            size = self.lam + 1
            return all(any(i // size == g for i in got) for g in range(self.n // size))
        return len(got) >= self.n - self.lam

    def decodable(self, t):
        if any(len(self.d1[t][i]) < self.K for i in range(self.n)):
            return False
        return self.lam == self.n or all(self._group_ok(g) for g in self.coded[t])


def make_ref(name, p, J):
    if name == "gc-seq":
        return RefGC(p["n"], p["s"], J)
    cls = RefSR if name.startswith("sr-sgc") else RefM
    return cls(p["n"], p["B"], p["W"], p["lam"], J, rep=name.endswith("-rep"))


# ----------------------------------------------------------------------------- the master loop
def _nontrivial(tasks):
    return any(x is not None for row in tasks for x in row)


def _feasible(state, r, tasks, returned):
    """Would every job in flight be decoded in time if nobody straggled after round r?"""
    trial = copy.deepcopy(state)
    trial.apply(r, tasks, returned)
    finish = {}
    lo, hi = max(0, r - trial.T), min(r, trial.J - 1)
    for t in range(lo, hi + 1):
        if trial.decodable(t):
            finish[t] = r
    for q in range(r + 1, r + trial.T + 1):
        trial.apply(q, trial.assign(q), [True] * trial.n)
        for t in range(lo, hi + 1):
            if t not in finish and trial.decodable(t):
                finish[t] = q
    return all(t in finish and finish[t] <= t + trial.T for t in range(lo, hi + 1))


def _authors_sr_ok(late, hist, free, B, W, lam):
    """The authors' SR-SGC check (App. J, their ``follows_straggler_model``): over the last
    W - 1 rounds ``hist`` (exempt rounds ``free`` left out) and the current stragglers ``late``,
    at most λ distinct stragglers, and no current straggler late B .. W-1 rounds ago."""
    past = [h for h, f in zip(hist, free) if not f]
    spatial = set(np.flatnonzero(late))
    for h in past:
        spatial |= set(np.flatnonzero(h))
    if len(spatial) > lam:
        return False
    old = [h for h, f in zip(hist[:max(0, len(hist) - B + 1)], free) if not f]
    return not any((h & late).any() for h in old)


def ref_replay(name, p, S, J, rule="deadline"):
    """(finish_round (J,), wait-out rounds, tasks per round) by the straightforward master.
    Rule ``"model"`` for SR-SGC (and -Rep, which follows its base scheme replayed alongside):
    the authors' simulator (App. J; tests/test_appj.py): a round ``r >= J`` whose due job already
    has n - s results of its own round is not run, and past rounds without returned reattempts
    and with at most s stragglers are left out of the bursty check."""
    state = make_ref(name, p, J)
    shadow = make_ref(name[:-4], p, J) if name.endswith("-rep") and rule in ("deadline", "model") \
        else None
    window, tests = design_tests(name[:-4] if name.endswith("-rep") else name, p)
    authors = rule == "model" and name.startswith("sr-sgc")
    finish = np.full(J, -1)
    waits, history, all_tasks = [], np.zeros((0, S.shape[1]), bool), []
    lates, frees = [], []
    for r in range(S.shape[0]):
        tasks = state.assign(r)
        all_tasks.append(tasks)
        stasks = shadow.assign(r) if shadow else None
        returned = list(~S[r])
        wait = base_wait = skip = False
        if shadow and rule == "deadline" and S[r].any() and _nontrivial(stasks):
            base_wait = not _feasible(shadow, r, stasks, returned)
        if rule == "deadline" and S[r].any():
            wait = base_wait or (_nontrivial(tasks) and not _feasible(state, r, tasks, returned))
        elif authors:
            dec, dtasks = (shadow, stasks) if shadow else (state, tasks)
            t0 = r - dec.B
            skip = r >= J and (t0 < 0 or len(dec.own[t0]) >= dec.n - dec.s)
            late = S[r] & (not skip)
            wait = bool(late.any()) and r < J + state.T and not _authors_sr_ok(
                late, lates[-(dec.W - 1):], frees[-(dec.W - 1):], dec.B, dec.W, dec.lam)
            eff = late & (not wait)
            again = any(not eff[i] and dtasks[i][0] == t0 for i in range(dec.n))
            lates.append(eff)
            frees.append(not again and eff.sum() <= dec.s)
        elif rule == "model" and S[r].any() and r < J + state.T:
            block = np.vstack([history[max(0, len(history) - window + 1):], S[r][None]])
            wait = not brute_mixture(block, window, tests)
        if shadow:                      # the base scheme alongside, with its own decisions
            shadow.apply(r, stasks, [True] * len(returned) if base_wait or wait else returned)
        if wait:
            waits.append(r)
            returned = [True] * len(returned)
        state.apply(r, tasks, returned)
        history = np.vstack([history[-window:], ~np.array(returned)])
        for t in range(max(0, r - state.T), min(r, J - 1) + 1):
            if finish[t] < 0 and state.decodable(t):
                finish[t] = r
        state.prune(r)
        if shadow:
            shadow.prune(r)
    return finish, np.array(waits, int), all_tasks
