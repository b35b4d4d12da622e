"""Replaying a straggler pattern through a scheme's planner (paper 4, Sec. 2), one pattern with
every task and decoding weight (``replay``) or many at once with finish rounds and wait-outs only
(``replay_many``, vectorised over instances), and multi-model pipelining (Remark 2.1, App. I).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..codes import check_int
from ..stragglers import check_pattern
from ._base import SequentialScheme
from ._planner import Run, check_rule, make_run


def _check(scheme, jobs, rounds):
    if not isinstance(scheme, SequentialScheme):
        raise ValueError(f"scheme: expected a sequential scheme (make_code('m-sgc', ...)), "
                         f"got {type(scheme).__name__}")
    jobs = check_int("jobs", jobs, minimum=1)
    if rounds < jobs + scheme.T:
        raise ValueError(f"stragglers: {scheme.name} with jobs={jobs} needs at least "
                         f"jobs + T = {jobs + scheme.T} rounds, got {rounds}")
    return jobs


class _Tasks(Sequence):
    """``tasks[r][i]``: worker ``i``'s task in round ``r`` (list of MiniTask), built on access."""

    def __init__(self, scheme, contents):
        self._scheme, self._contents = scheme, contents

    def __len__(self):
        return len(self._contents)

    def __getitem__(self, r):
        if isinstance(r, slice):
            return [self[x] for x in range(*r.indices(len(self)))]
        r = range(len(self))[r]
        task = self._scheme.mini_task
        return [[task(r, i, k, int(c)) for k, c in enumerate(row)]
                for i, row in enumerate(self._contents[r])]


class Replay:
    """The result of ``replay``: ``finish_round (J,)`` (round job ``t`` was decoded, at most
    ``t + T``; -1 if never, only with ``waitout="never"``), ``waitouts`` (rounds in which the
    master waited for everyone), ``effective`` (the pattern with those rounds cleared),
    ``tasks[r][i]``, ``gradient_weights(t)`` and ``skipped`` (rounds not run: only under
    ``"model"``, SR-SGC's rounds ``r >= J`` whose due job is already decoded).

    Paper 4's Fig. 6 (M-SGC, n = 4, B = 2, W = 3, λ = 2), and the same pattern with worker 3
    straggling in round 2 too: three distinct stragglers in a window of W = 3 rounds, outside
    the design model, so that round is waited out (rule ``"deadline"``):

    >>> import gradcode
    >>> x = gradcode.make_code("m-sgc", n=4, B=2, W=3, lam=2)
    >>> S = np.zeros((9, 4), bool)        # Fig. 6's stragglers, 0-based rounds (paper: 1-6)
    >>> S[[0, 1], 0] = S[[1, 2], 1] = S[4, 2] = True
    >>> r = replay(x, S, jobs=6)
    >>> r.finish_round.tolist(), r.waitouts.tolist(), r.content.shape
    ([3, 4, 5, 6, 7, 8], [], (9, 4, 4))
    >>> w = r.gradient_weights(1)                 # job 1: 8 D1 chunks, 4 coded D2 results
    >>> len(w), sorted(k for k, v in w.items() if k[2] == 2 and v == 1.0)
    (12, [(3, 0, 2), (3, 1, 2)])
    >>> S[2, 3] = True
    >>> r = replay(x, S, jobs=6)
    >>> r.waitouts.tolist(), r.effective[2].tolist()
    ([2], [False, False, False, False])
    """

    def __init__(self, scheme, jobs, stragglers, run: Run, waits: np.ndarray):
        self.scheme, self.jobs, self.waitout_rule = scheme, jobs, run.rule
        self.stragglers = stragglers
        self.finish_round = run.core.done[0].copy()
        self.waitouts = np.flatnonzero(waits)
        self.skipped = np.flatnonzero([k[0] for k in run.skipped]) if run.skipped else \
            np.zeros(0, np.int64)
        self._contents, self._oks = run.contents, run.oks
        self.tasks = _Tasks(scheme, self._contents)

    @property
    def effective(self) -> np.ndarray:
        out = self.stragglers.copy()
        out[self.waitouts] = False
        out[self.skipped] = False
        return out

    @property
    def content(self) -> np.ndarray:
        """Compact assignment ``(rounds, n, slots)`` (codes in ``gradcode.sequential._base``)."""
        return np.stack(self._contents)

    def gradient_weights(self, t: int) -> dict[tuple[int, int, int], float]:
        """``{(round, worker, slot): coefficient}`` over returned mini-task results whose
        combination equals the sum of all partial gradients of job ``t``."""
        t = check_int("t", t, minimum=0, maximum=self.jobs - 1)
        if self.finish_round[t] < 0:
            raise ValueError(f"t: job {t} was not decoded (waitout='{self.waitout_rule}')")
        return self.scheme.job_weights(t, self._contents, self._oks)


def replay(scheme: SequentialScheme, stragglers, jobs: int, waitout: str = "deadline") -> Replay:
    """Replay ``stragglers (rounds, n)`` (True = straggler, ``rounds >= jobs + T``) through
    ``scheme``'s planner with the wait-out rule ``waitout`` (see ``gradcode.sequential.Planner``:
    ``"deadline"``, ``"model"`` or ``"never"``); job ``t`` starts in round ``t``.

    Paper 4's Fig. 6: M-SGC (n = 4, B = 2, W = 3, λ = 2), worker 0 straggling in the paper's
    rounds 1-2, worker 1 in 2-3 and worker 2 in 5 (1-indexed); job 2 is decoded after round 5,
    i.e. 0-based job 1 after round 4, from reattempted D1 chunks and coded D2 results:

    >>> import gradcode
    >>> x = gradcode.make_code("m-sgc", n=4, B=2, W=3, lam=2)
    >>> S = np.zeros((9, 4), bool)        # Fig. 6's stragglers, 0-based rounds (paper: 1-6)
    >>> S[[0, 1], 0] = S[[1, 2], 1] = S[4, 2] = True
    >>> r = replay(x, S, jobs=6)
    >>> int(r.finish_round[1]), r.waitouts.tolist()
    (4, [])
    >>> m = r.tasks[3][1][2]                  # worker 1's slot 2 in round 3: g_2 of job 1 again
    >>> m.job, m.partitions.tolist()
    (1, [2])

    With rule ``"never"`` nothing is waited out and a job that cannot be decoded gets -1:

    >>> S[2, [0, 3]] = True                   # 4 distinct stragglers in rounds 0-2
    >>> replay(x, S, jobs=6, waitout="never").finish_round.tolist()
    [-1, -1, -1, 6, 7, 8]
    """
    rule = check_rule(waitout)
    S = check_pattern(stragglers, getattr(scheme, "n", None), "stragglers")
    jobs = _check(scheme, jobs, S.shape[0])
    run = make_run([scheme], jobs, rule, track=True)
    waits = run.drive(S[None])
    return Replay(scheme, jobs, S, run, waits[0])


@dataclass(frozen=True)
class ReplaySummary:
    """``replay_many`` result for ``P`` (scheme, pattern) pairs: ``finish_round (P, J)``, the
    wait-out mask ``waitout (P, rounds)`` and the mask of rounds not run ``skipped (P, rounds)``
    (see ``Replay.skipped``).

    >>> import gradcode
    >>> x = gradcode.make_code("gc-seq", n=4, s=1)
    >>> pats = np.zeros((2, 3, 4), bool)
    >>> pats[1, 2, [0, 3]] = True                 # pattern 1: 2 stragglers in round 2
    >>> res = replay_many(x, pats, jobs=3)
    >>> res.finish_round.tolist(), res.waitouts.tolist()
    ([[0, 1, 2], [0, 1, 2]], [0, 1])
    >>> res.waitout[1].tolist(), bool(res.skipped.any())
    ([False, False, True], False)
    """

    finish_round: np.ndarray
    waitout: np.ndarray
    skipped: np.ndarray | None = None

    @property
    def waitouts(self) -> np.ndarray:
        """Number of wait-out rounds per pair."""
        return self.waitout.sum(1)


def replay_many(schemes, stragglers, jobs: int, waitout: str = "deadline") -> ReplaySummary:
    """Replay many (scheme, pattern) pairs at once, vectorised over pairs.

    ``schemes``: one scheme or a sequence of ``P``; ``stragglers``: one pattern ``(R, n)`` for
    all, an array ``(P, R, n)``, or a sequence of ``P`` patterns (the same array object may
    repeat).  Pairs whose dynamics coincide run once: schemes of one name, ``n`` and structure
    are batched, and under ``"deadline"`` SR-SGC depends on ``(B, W, λ)`` only through ``s``.

    M-SGC (n = 8, B = 1, W = 2) on 100 random patterns of 12 rounds (each worker straggling
    with probability 0.1 per round): the larger λ, the fewer rounds waited out:

    >>> import gradcode
    >>> rng = np.random.default_rng(0)
    >>> pats = rng.random((100, 12, 8)) < 0.1
    >>> [int(replay_many(gradcode.make_code("m-sgc", n=8, B=1, W=2, lam=lam), pats,
    ...                  jobs=11).waitouts.sum()) for lam in (1, 2, 4)]
    [361, 177, 74]

    Several schemes on one pattern:

    >>> xs = [gradcode.make_code("sr-sgc", n=8, B=1, W=2, lam=lam) for lam in (1, 2, 4)]
    >>> replay_many(xs, pats[0], jobs=11).waitouts.tolist()
    [0, 0, 0]
    """
    rule = check_rule(waitout)
    one = isinstance(schemes, SequentialScheme)
    if one:
        schemes = [schemes]
    schemes = list(schemes)
    if isinstance(stragglers, np.ndarray) and stragglers.ndim == 3:
        pats, pid = list(stragglers), list(range(len(stragglers)))
    elif isinstance(stragglers, (list, tuple)):
        ids: dict[int, int] = {}
        pid = [ids.setdefault(id(p), len(ids)) for p in stragglers]
        pats = [None] * len(ids)
        for p, i in zip(stragglers, pid):
            pats[i] = p
    else:
        pats, pid = [stragglers], None
    P = max(len(schemes), len(pid) if pid is not None else 1)
    if one:
        schemes = schemes * P
    pid = [0] * P if pid is None else pid
    if len(schemes) != P or len(pid) != P:
        raise ValueError(f"stragglers: expected one pattern or {len(schemes)}, got {len(pid)}")
    n = schemes[0].n
    pats = [check_pattern(p, n, "stragglers") for p in pats]
    R = pats[0].shape[0]
    if any(p.shape != (R, n) for p in pats):
        raise ValueError("stragglers: every pattern needs the same (rounds, n) shape")
    for x in schemes:
        _check(x, jobs, R)
    jobs = int(jobs)
    unique: dict[tuple, int] = {}
    where = [unique.setdefault((x.batch_key(rule), x.batch_params(rule), p), len(unique))
             for x, p in zip(schemes, pid)]
    first = {}
    for x, u in zip(schemes, where):
        first.setdefault(u, x)
    finish = np.zeros((len(unique), jobs), np.int32)
    waits = np.zeros((len(unique), R), bool)
    skipped = np.zeros((len(unique), R), bool)
    groups: dict[tuple, list[tuple[int, int]]] = {}
    for (key, _, p), u in unique.items():
        groups.setdefault(key, []).append((u, p))
    for members in groups.values():
        us = [u for u, _ in members]
        reps = [first[u] for u in us]
        run = make_run(reps, jobs, rule, track=False)
        ids, which = np.unique([p for _, p in members], return_inverse=True)
        waits[us] = run.drive(np.stack([pats[p] for p in ids]), which.ravel())
        finish[us] = run.core.done
        skipped[us] = np.stack(run.skipped, 1)
    where = np.array(where)
    return ReplaySummary(finish[where], waits[where], skipped[where])


@dataclass(frozen=True)
class Pipeline:
    """``M`` models trained concurrently (Remark 2.1, App. I): job ``M i + j`` is iteration ``i``
    of model ``j``, so a model's next iteration starts ``M`` rounds after the last one; valid for
    a scheme with delay ``T <= M - 1``.

    >>> p = Pipeline(M=4)
    >>> [p.job(0, i) for i in range(3)], p.model(6), p.iteration(6)
    ([0, 4, 8], 2, 1)
    >>> p.model(np.arange(8)).tolist()
    [0, 1, 2, 3, 0, 1, 2, 3]
    """

    M: int

    def job(self, model: int, iteration: int) -> int:
        return self.M * iteration + model

    def model(self, job) -> np.ndarray | int:
        return np.asarray(job) % self.M if np.ndim(job) else int(job) % self.M

    def iteration(self, job) -> np.ndarray | int:
        return np.asarray(job) // self.M if np.ndim(job) else int(job) // self.M


def pipeline(scheme: SequentialScheme, M: int) -> Pipeline:
    """The interleaving of ``M`` models for ``scheme``; ValueError unless ``T <= M - 1``.

    App. I's example: SR-SGC (B = 2, W = 3, λ = 23; T = 2) with M = 4 models; model 0's jobs
    start in rounds 0, 4, 8 (the paper's 1, 5, 9), each decoded by round t + T, before the
    model's next job starts:

    >>> import gradcode
    >>> x = gradcode.make_code("sr-sgc", n=256, B=2, W=3, lam=23)
    >>> p = pipeline(x, M=4)
    >>> [(p.job(0, i), p.job(0, i) + x.T) for i in range(3)]
    [(0, 2), (4, 6), (8, 10)]
    >>> pipeline(x, M=2)
    Traceback (most recent call last):
    ValueError: M: pipelining sr-sgc (T = 2) needs T <= M - 1, got M=2
    """
    M = check_int("M", M, minimum=1)
    if scheme.T > M - 1:
        raise ValueError(f"M: pipelining {scheme.name} (T = {scheme.T}) needs T <= M - 1, got M={M}")
    return Pipeline(M)
