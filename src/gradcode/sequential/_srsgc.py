"""SR-SGC (paper 4, Sec. 3.2, Algorithm 1) and SR-SGC-Rep (App. G, Algorithm 3).

(n, s)-GC with ``s = ceil(Bλ/(W-1+B))`` is the base scheme; in round ``t`` worker ``i`` computes
``ℓ_i(t)`` or, selectively, reattempts ``ℓ_i(t - B)``: if job ``t - B`` got ``N(t - B) < n - s``
results in its own round, the first ``n - s - N(t - B)`` workers (by index) that did not return
``ℓ_i(t - B)`` reattempt it.  Delay ``T = B``, load ``(s + 1)/n``.  Prop. 3.1: tolerates every
pattern whose every window of ``W`` rounds is (B, W, λ)-bursty or has at most ``s`` stragglers
per round (``design_model``).  The -Rep variant (needs ``(s+1) | n``) uses GC-Rep: a job decodes
once every group of ``s + 1`` workers returned it, and only workers of groups with no result
reattempt (Algorithm 3).
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from ..analysis import check_sr_sgc
from ..codes import check_int
from ..stragglers import AnyOf, Bursty, SPerRound
from ._base import (IDLE, MiniTask, ModelRuleHooks, SequentialScheme, base_gc, keyed_weights,
                    trivial_task)
from ._model_rounds import lists, model_rounds
from ._srsgc_rounds import assign_rounds, commit_rounds, lost_rounds, replay_rounds


class _SRCore(ModelRuleHooks):
    """Batched state of ``P`` instances (the compiled rounds of ``_srsgc_rounds``): ``got[t %
    (B+1)]`` = the workers that returned job ``t`` in round ``t``, ``done`` = finish rounds."""

    def __init__(self, n, B, W, s, lam, rep, jobs, track):
        self.n, self.burst, self.W, self.J, self.P = n, B, W, jobs, s.size
        self.track = track
        self.s, self.lam, self.rep, self.window, self.T = s, lam, rep, W, B
        self.spec = np.stack([n - s, s + 1 if rep else np.zeros_like(s)], 1).astype(np.int64)
        self.dims = (jobs, B)
        self.state = (np.zeros((self.P, B + 1, n), bool), np.full((self.P, jobs), -1, np.int32))
        self.done = self.state[1]

    def assign(self, r):
        out = np.empty((self.P, self.n), np.int16)
        assign_rounds(self.state, r, self.dims, self.spec, IDLE, out)
        return out[..., None]

    def advance(self, r, content, ok):
        """The round's tasks and results: ``feasible`` judges them, ``commit`` applies them."""
        return np.ascontiguousarray(content[..., 0]), np.ascontiguousarray(ok)

    def feasible(self, r, tent):
        """Only job ``r - B`` is decided in round ``r``; later ones can always be completed."""
        lost = np.zeros(self.P, bool)
        lost_rounds(self.state, r, tent[0], tent[1], self.dims, self.spec, lost)
        return ~lost

    def commit(self, r, tent):
        commit_rounds(self.state, r, tent[0], tent[1], self.dims, self.spec)

    def replay(self, stragglers, rule, base=None, which=None):
        """Rounds ``0 ..`` of pattern ``which[p]`` of ``stragglers (U, R, n)`` (default: pattern
        ``p``) through instance ``p`` at once under ``rule``, with ``base`` the core of a -Rep
        variant's base scheme (replayed alongside: under ``"model"`` its wait-outs and rounds
        not run are the variant's); the wait-out mask ``(P, R)``, instance 0's tasks
        ``(R, n, 1)`` and received results ``(R, n)`` (tracked runs; else empty), and the
        rounds not run ``(P, R)`` (``"model"`` only, ``skip``).  Under ``"model"`` only the
        finish rounds of the state are kept (``_model_rounds``, by lists of workers)."""
        R = stragglers.shape[1] if self.track else 0
        contents, oks = np.zeros((R, self.n), np.int16), np.zeros((R, self.n), bool)
        which = np.arange(self.P) if which is None else np.asarray(which, np.int64)
        if rule == "model":
            ptr, idx = lists(stragglers)
            waits, skipped = model_rounds(ptr, idx, which, self.done, self.dims, self.spec, IDLE,
                                          self.W, self.lam.astype(np.int64), base is not None,
                                          contents, oks)
        else:
            flags = (rule == "deadline", base is not None)
            waits = replay_rounds(np.ascontiguousarray(stragglers[which]), self.state,
                                  (base or self).state, self.dims, self.spec, IDLE, flags,
                                  contents, oks)
            skipped = np.zeros(waits.shape, bool)
        return waits, contents[..., None], oks, skipped

    # ------------------------------------------- the "model" rule: the authors' simulator (App. J)
    def skip(self, r):
        """Round ``r >= J`` is not run where the job due in it, ``r - B``, is already decoded
        (or no job is due): it would only carry reattempts of that job (the authors'
        ``perform_round``; for ``J < B`` they run rounds with no job due, an artefact of a
        negative index outside their parameter grid, ``W <= J``)."""
        if r < self.J:
            return np.zeros(self.P, bool)
        t0 = r - self.burst
        if t0 < 0 or t0 >= self.J:
            return np.ones(self.P, bool)
        return self.done[:, t0] >= 0

    def exempt(self, r, content, returned, late):
        """Rounds left out of later windows: every returned result was the worker's own task of
        the round (no returned reattempt) and at most ``s`` workers straggled (the authors'
        ``stragglers(..., exemption=True)``)."""
        again = (returned & (content[..., 0] == 1)).any(-1)
        return ~again & (late.sum(-1) <= self.s)

    def model_ok(self, block, free=None):
        """The authors' ``follows_straggler_model``: ``block (P, W, n)`` = the last ``W - 1``
        effective rounds and the current one; past rounds flagged in ``free (P, W-1)`` do not
        count.  At most λ distinct stragglers over the block (spatial), and no current
        straggler straggled ``B`` to ``W - 1`` rounds ago (temporal).  Prop. 3.1's
        s-stragglers-per-round alternative enters only through the exemption (``exempt``)."""
        past, cur = block[:, :-1], block[:, -1]
        if free is not None:
            past = past & ~free[:, :, None]
        spatial = (past.any(1) | cur).sum(-1) <= self.lam
        temporal = ~(past[:, :self.W - self.burst].any(1) & cur).any(-1)
        return spatial & temporal


class SRSGC(SequentialScheme):
    """SR-SGC (Sec. 3.2, Algorithm 1) with parameters ``n, B, W, lam``: ``0 < λ <= n``,
    ``W = xB + 1`` (``B`` divides ``W - 1``); ``s = ceil(Bλ/(W-1+B))``, ``T = B``,
    load ``(s+1)/n``.  ``seed`` picks the base ``gc-cr`` code's coefficients.

    Table 1 of paper 4 (n = 256, B = 2, W = 3, λ = 23): s = 12, normalized load 0.051:

    >>> import gradcode
    >>> x = gradcode.make_code("sr-sgc", n=256, B=2, W=3, lam=23)
    >>> x.s, x.T, round(float(x.load.max()), 3)
    (12, 2, 0.051)

    Example F.1 (n = 4, B = 1, W = 2, λ = 4; s = 2, load 3/4): every worker straggles in the
    paper's rounds 1, 3, 5 (0-based 0, 2, 4); jobs 2t - 1 and 2t are decoded together after
    round 2t (0-based: jobs 0 and 1 after round 1, ...), as with M-SGC at load 1/2:

    >>> from gradcode.sequential import replay
    >>> x = gradcode.make_code("sr-sgc", n=4, B=1, W=2, lam=4)
    >>> S = np.zeros((7, 4), bool)
    >>> S[[0, 2, 4]] = True
    >>> r = replay(x, S, jobs=6)
    >>> x.s, x.load.tolist(), r.finish_round.tolist(), r.waitouts.tolist()
    (2, [0.75, 0.75, 0.75, 0.75], [1, 1, 3, 3, 5, 5], [])
    >>> r.content[1, :, 0].tolist()   # round 1: 2 tasks of job 0 (reattempts, 1), 2 of job 1 (0)
    [1, 1, 0, 0]
    >>> y = gradcode.make_code("m-sgc", n=4, B=1, W=2, lam=4)
    >>> y.load.tolist(), replay(y, S, jobs=6).finish_round.tolist()
    ([0.5, 0.5, 0.5, 0.5], [1, 1, 3, 3, 5, 5])
    """

    name = "sr-sgc"
    examples = ({"n": 6, "B": 2, "W": 3, "lam": 2},
                {"n": 6, "B": 1, "W": 3, "lam": 5, "seed": 1})
    _ctor = ("n", "B", "W", "lam", "seed")
    slots = 1

    def __init__(self, n: int, B: int, W: int, lam: int, seed: int = 0):
        self._setup(n, B, W, lam, seed=check_int("seed", seed, minimum=0))

    def _setup(self, n, B, W, lam, **extra):
        n, B, W, lam = (check_int(k, v) for k, v in (("n", n), ("B", B), ("W", W), ("lam", lam)))
        s = int(check_sr_sgc(n, B, W, lam))
        if self.rep and n % (s + 1):
            raise ValueError(f"lam: {self.name} needs (s+1) | n, got s = ceil(B*lam/(W-1+B)) = {s} "
                             f"and n = {n} (B={B}, W={W}, lam={lam})")
        self._freeze(dict(n=n, B=B, W=W, lam=lam, s=s, **extra),
                     T=B, load=(s + 1) / n)                   # (s+1)/n, Sec. 3.2

    @cached_property
    def base_code(self):
        return base_gc(self.n, self.s, self._params.get("seed", 0), self.rep)

    @cached_property
    def design_model(self):
        """Prop. 3.1: every window of W rounds is (B, W, λ)-bursty or s-stragglers-per-round."""
        return AnyOf((Bursty(self.burst, self.W, self.lam), SPerRound(self.s)), window=self.W)

    def batch_key(self, rule):
        return (self.name, self.n, self.burst) + ((self.W,) if rule == "model" else ())

    def batch_params(self, rule):
        return (self.s,) + ((self.lam,) if rule == "model" else ())

    @classmethod
    def batch_core(cls, schemes, jobs, rule, track=False):
        x = schemes[0]
        s = np.array([y.s for y in schemes])
        lam = np.array([y.lam for y in schemes])
        return _SRCore(x.n, x.burst, x.W, s, lam, cls.rep, jobs, track)


    def mini_task(self, r, i, k, c):
        return trivial_task(r) if c == IDLE else MiniTask(r - self.burst * int(c), *self._rows[i])

    def job_weights(self, job, contents, oks):
        keys = [(job, int(i), 0) for i in np.flatnonzero((contents[job][:, 0] == 0) & oks[job])]
        late = job + self.burst
        if late < len(contents):
            keys += [(late, int(i), 0)
                     for i in np.flatnonzero((contents[late][:, 0] == 1) & oks[late])]
        return keyed_weights(self.base_code, keys)


class SRSGCRep(SRSGC):
    """SR-SGC-Rep (App. G, Algorithm 3): SR-SGC over GC-Rep; needs ``(s + 1) | n``.

    App. G's example: n = 6, s = 2, groups {0, 1, 2} and {3, 4, 5}; with workers 1, 2, 3 and 5
    straggling, GC-Rep still decodes (workers 0 and 4 cover both groups), GC needs reattempts:

    >>> import gradcode
    >>> from gradcode.sequential import replay
    >>> x = gradcode.make_code("sr-sgc-rep", n=6, B=1, W=2, lam=4)
    >>> x.s, x.base_code
    (2, make_code('gc-fr', n=6, s=2))
    >>> S = np.zeros((3, 6), bool)
    >>> S[0, [1, 2, 3, 5]] = True
    >>> replay(x, S, jobs=2).finish_round.tolist()
    [0, 1]
    >>> y = gradcode.make_code("sr-sgc", n=6, B=1, W=2, lam=4)
    >>> r = replay(y, S, jobs=2)
    >>> r.finish_round.tolist(), r.content[1, :, 0].tolist()   # workers 1, 2 reattempt job 0
    ([1, 1], [0, 1, 1, 0, 0, 0])
    """

    name = "sr-sgc-rep"
    examples = ({"n": 8, "B": 1, "W": 2, "lam": 2},)
    _ctor = ("n", "B", "W", "lam")
    rep = True

    def __init__(self, n: int, B: int, W: int, lam: int):
        self._setup(n, B, W, lam)
