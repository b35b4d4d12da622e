"""The master-side round planner (paper 4, Sec. 2: rounds, tasks, decoding by round t + T) and
its wait-out rule (Remark 2.3).

Contract, driven the same way by the simulator and a real runtime::

    planner = scheme.planner(jobs=J)
    for r in range(J + scheme.T):
        tasks = planner.assign(r)              # per worker: list of MiniTask(job, partitions, coefficients)
        returned = ...                         # workers back by the round's deadline (e.g. μ-rule)
        if planner.waitout(r, returned):       # would these stragglers break a job?
            returned = everyone                # ... then wait for all of them
        planner.report(r, returned)
        for job, weights in planner.decodable(r).items():
            ...                                # sum(w * result[(round, worker, slot)]) = g(job)

Wait-out rules (``waitout=``), each judged on what effectively happened (earlier wait-out rounds
count as rounds without stragglers):

* ``"deadline"`` (default): round ``r`` is a wait-out iff, with its stragglers' results lost,
  some job ``t`` could no longer be decoded by round ``t + T`` even if no worker straggled after
  ``r``.  The master thus waits only when, given the past, it must; and since every pattern of the
  design model (Prop. 3.1, 3.2) is tolerated, such patterns never cause a wait-out.
  A -Rep variant (App. G) waits out wherever its base scheme does (the base scheme is replayed
  alongside on the same stragglers, with its own decisions) and otherwise only where its own check
  says a job would be lost.  M-SGC-Rep never needs the latter (same D1 dynamics as M-SGC, and
  GC-Rep decodes whenever GC does), so its wait-outs are exactly M-SGC's.  SR-SGC-Rep rarely does:
  Algorithm 3 must take reattempts from the uncovered group itself where Algorithm 1 takes any
  worker, so outside the design model it can lose a job SR-SGC keeps (see the tests).  No online
  rule lets a -Rep variant skip some of its base's wait-outs and still never wait out where the
  base would not: a skipped wait-out leaves results missing that the base has, and a later
  straggler can then force a wait-out the base does not need.
* ``"model"``: the authors' simpler rule (App. J, their trace simulator): a wait-out iff the
  round's stragglers, added to the effective pattern, break the scheme's straggler model.
  GC: at most ``s`` stragglers.  M-SGC: Prop. 3.2 on the last ``T + 1`` rounds ((B, W, λ)-bursty
  OR (B, W+B-1, λ)-arbitrary); the authors' ``multiplexed_sgc.py`` checks the bursty model only,
  so where a round is arbitrary but not bursty they wait out and we do not.  SR-SGC exactly as
  the authors' ``selective_repeat_sgc.py`` (``_SRCore.model_ok``): the (B, W, λ)-bursty check
  over the last ``W`` rounds, where a past round in which no worker returned a reattempt and at
  most ``s`` workers straggled does not count; and a round ``r >= J`` whose due job ``r - B``
  is already decoded (or that has none) is not run at all (``Run.skipped``: no tasks, no
  stragglers, no time charged by the runtime estimate).  The -Rep variants follow their base
  scheme: it is replayed alongside, and its wait-outs (and skipped rounds) are theirs.
* ``"never"``: no wait-outs; jobs that cannot be decoded get ``finish_round = -1``.

Rounds after the last deadline (``r >= J + T``, nothing left to compute) are never wait-outs.
``Run.skipped`` (rule ``"model"`` only) lists, per round, the instances for which the round is
not run.

The planner drives a scheme through its public protocol only (``T``, ``n``, ``rep``,
``batch_core``, ``mini_task``, ``job_weights``: see ``SequentialScheme``), so that this module
imports none of the schemes' modules: the schemes import it (``scheme.planner(jobs)``).
"""

from __future__ import annotations

import math

import numpy as np

from ..codes import check_int
from ..protocol import WaitOut

WAITOUT_RULES = tuple(WaitOut)


def check_rule(waitout) -> WaitOut:
    """The wait-out rule ``waitout`` names (``gradcode.protocol.WaitOut``), else ValueError
    naming it.

    >>> check_rule("model")
    <WaitOut.MODEL: 'model'>
    >>> check_rule("sometimes")
    Traceback (most recent call last):
    ValueError: waitout: expected one of deadline, model, never, got 'sometimes'
    """
    return WaitOut.parse(waitout)


class Run:
    """The planner state machine for ``P`` instances at once (a batched core, one rule).  A -Rep
    scheme under the deadline or the model rule carries a ``shadow`` run of its base scheme,
    driven by the same stragglers and its own decisions (under ``"model"`` the -Rep's wait-outs
    and rounds not run are the base's).  ``skipped[r]``: the instances for which round ``r`` is
    not run (``"model"``, SR-SGC)."""

    def __init__(self, core, rule: str, track: bool, shadow: "Run | None" = None):
        self.core, self.rule, self.track, self.shadow = core, rule, track, shadow
        keep = core.window - 1 if rule == "model" else 0
        self.hist = np.zeros((core.P, keep, core.n), bool)
        # which past rounds of ``hist`` do not count (``core.exempt``: SR-SGC's, App. J)
        self.free = np.zeros((core.P, keep), bool)
        self.next, self.content, self.cache, self.raw = 0, None, None, None
        self.contents, self.oks = [], []
        self.skip, self.skipped = None, []

    def assign(self, r: int) -> np.ndarray:
        if r != self.next:
            raise ValueError(f"round: rounds go in order; expected {self.next}, got {r}")
        self.content, self.cache, self.raw = self.core.assign(r), None, None
        self.skip = np.zeros(self.core.P, bool)
        if self.shadow is not None:
            self.shadow.assign(r)
            if self.rule == "model":
                self.skip = self.shadow.skip.copy()
        elif self.rule == "model":
            self.skip = self.core.skip(r)
        return self.content

    def _assigned(self, r: int) -> None:
        if self.content is None or r != self.next:
            raise ValueError(f"round: assign({r}) must come before waitout/report of round {r}")

    def waitout(self, r: int, returned: np.ndarray) -> np.ndarray:
        self._assigned(r)
        late = ~returned
        wait = late.any(-1)
        if self.rule == "never" or r >= self.core.J + self.core.T or not wait.any():
            wait[:] = False
        elif self.rule == "model" and self.shadow is not None:
            wait[:] = False                          # the base scheme's decisions (below)
        elif self.rule == "model":
            block = np.concatenate([self.hist, (late & ~self.skip[:, None])[:, None]], axis=1)
            wait &= ~self.core.model_ok(block, self.free) & ~self.skip
        else:
            tent = self.core.advance(r, self.content, returned)
            self.cache = (returned.copy(), tent)
            wait &= ~self.core.feasible(r, tent)
        if self.shadow is not None:
            base = self.shadow.waitout(r, returned)
            self.raw = returned | base[:, None]
            wait |= base
        return wait

    def report(self, r: int, returned: np.ndarray) -> None:
        self._assigned(r)
        if self.cache is not None and np.array_equal(self.cache[0], returned):
            tent = self.cache[1]
        else:
            tent = self.core.advance(r, self.content, returned)
        self.core.commit(r, tent)
        late = ~returned & ~self.skip[:, None]
        if self.free.shape[1]:
            free = self.core.exempt(r, self.content, returned, late)
            self.free = np.concatenate([self.free[:, 1:], free[:, None]], axis=1)
        if self.hist.shape[1]:
            self.hist = np.concatenate([self.hist[:, 1:], late[:, None]], axis=1)
        self.skipped.append(self.skip)
        if self.track:
            self.contents.append(self.content[0])
            self.oks.append(returned[0].copy())
        if self.shadow is not None:
            self.shadow.report(r, returned if self.raw is None else self.raw)
        self.next, self.content, self.cache = r + 1, None, None

    def drive(self, stragglers: np.ndarray, which=None, compiled: bool = True) -> np.ndarray:
        """Play pattern ``which[p]`` of ``stragglers (U, R, n)`` (True: straggler; default:
        pattern ``p``) through instance ``p`` from round 0; the wait-out mask ``(P, R)``.  A
        core with a whole-pattern replay (``core.replay``: GC, M-SGC, SR-SGC, compiled) plays
        every rule in one call (with the shadow's core alongside), the same rounds as
        ``assign`` / ``waitout`` / ``report`` round by round, which other cores use, and all
        with ``compiled=False`` (the reference the tests compare against)."""
        whole = getattr(self.core, "replay", None) if compiled else None
        if whole is not None and self.next == 0:
            base = None if self.shadow is None else self.shadow.core
            waits, contents, oks, skipped = whole(stragglers, self.rule, base, which)
            for run in (self, self.shadow):
                if run is not None:
                    run.next, run.skipped = waits.shape[1], list(skipped.T)
            if self.track:
                self.contents, self.oks = contents, oks
            return waits
        if which is not None:
            stragglers = stragglers[np.asarray(which)]
        P, R, _ = stragglers.shape
        waits = np.zeros((P, R), bool)
        for r in range(R):
            self.assign(r)
            returned = ~stragglers[:, r]
            waits[:, r] = self.waitout(r, returned)
            self.report(r, returned | waits[:, r, None])
        return waits


def make_run(schemes, jobs: int, rule: str, track: bool) -> Run:
    """A run for schemes of one class and structure (the first one's)."""
    cls = type(schemes[0])
    shadow = None
    if cls.rep and rule in ("deadline", "model"):
        base = cls.__mro__[1]                       # the -Rep variant's base scheme class
        shadow = Run(base.batch_core(schemes, jobs, rule), rule, track=False)
    return Run(cls.batch_core(schemes, jobs, rule, track), rule, track, shadow)


def as_returned(returned, n: int) -> np.ndarray:
    """A boolean ``(n,)`` mask from a mask or from worker indices."""
    a = np.asarray(list(returned) if not isinstance(returned, np.ndarray) else returned)
    if a.dtype == bool:
        if a.shape != (n,):
            raise ValueError(f"returned: expected a boolean mask of shape ({n},), got {a.shape}")
        return a.copy()
    if a.size and (not np.issubdtype(a.dtype, np.integer) or a.min() < 0 or a.max() >= n):
        raise ValueError(f"returned: expected worker indices in [0, {n - 1}], got {a.tolist()}")
    mask = np.zeros(n, bool)
    mask[a.astype(int)] = True
    return mask


class Planner:
    """Master-side stateful round planner for one scheme and ``jobs`` jobs (module docstring).

    ``assign(r)`` the tasks of round ``r``; ``waitout(r, returned)`` whether the master must wait
    for everyone; ``report(r, returned)`` the workers whose results arrived (returns the jobs
    decodable after round ``r``); ``decodable(r)`` those jobs with their weights; ``weights(t)``
    the weights of any finished job; ``finish_round`` per job (-1 while not decoded).

    The contract of the module docstring, driven by paper 4's Fig. 6 (M-SGC, n = 4, B = 2,
    W = 3, λ = 2; the stragglers in 0-based rounds):

    >>> import gradcode
    >>> x = gradcode.make_code("m-sgc", n=4, B=2, W=3, lam=2)
    >>> S = np.zeros((9, 4), bool)        # Fig. 6's stragglers, 0-based rounds (paper: 1-6)
    >>> S[[0, 1], 0] = S[[1, 2], 1] = S[4, 2] = True
    >>> planner = x.planner(jobs=6)
    >>> decoded = {}
    >>> for r in range(planner.rounds):
    ...     tasks = planner.assign(r)                      # tasks[i]: worker i's mini-tasks
    ...     returned = np.flatnonzero(~S[r])
    ...     if planner.waitout(r, returned):
    ...         returned = np.arange(x.n)
    ...     _ = planner.report(r, returned)
    ...     decoded.update(planner.decodable(r))
    >>> planner.finish_round.tolist(), planner.waitouts, len(decoded[1])
    ([3, 4, 5, 6, 7, 8], [], 12)
    """

    def __init__(self, scheme, jobs: int, waitout: str = "deadline"):
        self.scheme = scheme
        self.jobs = check_int("jobs", jobs, minimum=1)
        self.rule = check_rule(waitout)
        self._run = make_run([scheme], self.jobs, self.rule, track=True)
        self.waitouts: list[int] = []          # rounds whose waitout() answer was True
        self._wait: tuple[int, bool] | None = None

    @property
    def rounds(self) -> int:
        """Rounds needed to finish every job: ``jobs + T``."""
        return self.jobs + self.scheme.T

    def extended(self, jobs: int) -> "Planner":
        """This run's planner for ``jobs`` jobs (at least ``self.jobs``), at the same round: a
        planner for the longer run, told the rounds reported so far again (what it decides
        before round ``self.jobs`` does not depend on the number of jobs).  Only while no round
        from ``self.jobs`` on was reported: those rounds finished this run's last jobs, where a
        longer run starts new ones (``train`` keeps a checkpoint of round ``jobs`` for this)."""
        jobs = check_int("jobs", jobs, minimum=self.jobs)
        if self._run.next > self.jobs:
            raise ValueError(f"jobs: the run is past round {self.jobs}, where its last jobs "
                             "finish; extend it from a checkpoint of an earlier round")
        longer = Planner(self.scheme, jobs, self.rule)
        for r, returned in enumerate(self._run.oks):
            longer.assign(r)
            longer.waitout(r, returned)
            longer.report(r, returned)
        longer.waitouts = list(self.waitouts)
        return longer

    @property
    def finish_round(self) -> np.ndarray:
        return self._run.core.done[0].copy()

    def assign(self, r: int) -> list[list]:
        """Round ``r``'s tasks: per worker, its list of ``MiniTask`` (one per slot)."""
        content = self._run.assign(check_int("round", r, minimum=0))[0]
        task = self.scheme.mini_task
        return [[task(r, i, k, int(c)) for k, c in enumerate(row)] for i, row in enumerate(content)]

    def waitout(self, r: int, returned) -> bool:
        wait = bool(self._run.waitout(r, as_returned(returned, self.scheme.n)[None])[0])
        self._wait = (r, wait)
        return wait

    def report(self, r: int, returned) -> list[int]:
        self._run.report(r, as_returned(returned, self.scheme.n)[None])
        if self._wait == (r, True):
            self.waitouts.append(r)
        return np.flatnonzero(self._run.core.done[0] == r).tolist()

    def decodable(self, r: int | None = None) -> dict[int, dict[tuple[int, int, int], float]]:
        """``{job: weights}`` for the jobs decoded at the end of round ``r`` (default: the last
        reported round)."""
        r = self._run.next - 1 if r is None else r
        return {int(t): self.weights(int(t)) for t in np.flatnonzero(self._run.core.done[0] == r)}

    # ------------------------------------------------ what the engine's loop asks as well
    decoding = None                          # (single-round planners: the round's Decoding)

    def loads(self, r: int):
        """Each worker's normalized load in round ``r``: the scheme's, every round (App. J)."""
        return self.scheme.load

    def rows(self, returned) -> np.ndarray:
        """The task rows the ``returned`` workers computed: their own."""
        return np.asarray(returned, np.int64)

    def decodes(self, r: int, returned) -> bool:
        """Whether ``returned`` suffices in round ``r``: no wait-out needed (``decodable``)."""
        return not self.waitout(r, returned)

    def due(self, r: int) -> tuple[float, float, bool]:
        """``(recovered_fraction, decode_error, exact)`` of the job due in round ``r`` (job
        ``r - T``): all or nothing; NaN in the first ``T`` rounds, when none is due."""
        t = r - self.scheme.T
        if t < 0:
            return math.nan, math.nan, False
        if self._run.core.done[0, t] >= 0:
            return 1.0, 0.0, True
        return 0.0, float(self.scheme.n_partitions), False

    def recovered(self, job: int) -> np.ndarray:
        """Per data chunk, what a decoded job's combination holds: every chunk."""
        return np.ones(self.scheme.n_partitions)

    def weights(self, job: int) -> dict[tuple[int, int, int], float]:
        """``{(round, worker, slot): coefficient}`` over returned mini-task results whose
        combination is the sum of all partial gradients of ``job``."""
        job = check_int("job", job, minimum=0, maximum=self.jobs - 1)
        if self._run.core.done[0, job] < 0:
            raise ValueError(f"job: job {job} is not decoded")
        return self.scheme.job_weights(job, self._run.contents, self._run.oks)
