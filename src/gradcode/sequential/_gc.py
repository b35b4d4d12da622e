"""``gc-seq``: (n, s)-GC used round by round (paper 4, Sec. 3.1), the baseline with ``T = 0``:
job ``t`` is computed in round ``t`` by all workers and decoded from any ``n - s`` results."""

from __future__ import annotations

from functools import cached_property

import numpy as np

from ..analysis import sgc_load
from ..codes import Code, check_int, result_weights
from ..stragglers import SPerRound, s_per_round_ok
from ._base import (IDLE, MiniTask, ModelRuleHooks, Recovery, SequentialScheme, base_gc,
                    keyed_weights, trivial_task)


class _GCCore(ModelRuleHooks):
    """Batched state: only the finish round of each job (nothing carries over between rounds)."""

    window, T = 1, 0

    def __init__(self, n: int, s: np.ndarray, jobs: int):
        self.n, self.P, self.J, self.s = n, s.size, jobs, s
        self.rec = Recovery(n, s, rep=False)
        self.done = np.full((self.P, jobs), -1, np.int32)

    def assign(self, r):
        return np.full((self.P, self.n, 1), 0 if r < self.J else IDLE, np.int16)

    def advance(self, r, content, ok):
        return self.rec.ok(ok) if r < self.J else None

    def feasible(self, r, tent):
        return np.ones(self.P, bool) if tent is None else tent

    def commit(self, r, tent):
        if tent is not None:
            self.done[:, r] = np.where(tent, r, -1)

    def model_ok(self, block, free=None):
        return s_per_round_ok(block, self.s)

    def replay(self, stragglers, rule, base=None, which=None):
        """Rounds ``0 ..`` of pattern ``which[p]`` of ``stragglers (U, R, n)`` (default: pattern
        ``p``) through instance ``p`` at once under any ``rule``, nothing carrying over between
        rounds: job ``r < J`` decodes iff round ``r`` has at most ``s`` stragglers, and the
        ``"deadline"`` and ``"model"`` rules both wait out the other rounds ``r < J``.  As
        ``_MCore.replay``: wait-outs, instance 0's tasks and received results, rounds not run
        (none)."""
        which = np.arange(self.P) if which is None else which
        P, (_, R, n), J = self.P, stragglers.shape, self.J
        bad = stragglers.sum(-1)[which] > self.s[:, None]               # (P, R)
        waits = bad & (np.arange(R) < J) if rule != "never" else np.zeros((P, R), bool)
        self.done[:] = np.where(bad[:, :J] & ~waits[:, :J], -1, np.arange(J))
        contents = np.zeros((R, n, 1), np.int16)
        contents[J:] = IDLE
        oks = ~stragglers[which[0]] | waits[0][:, None]
        return waits, contents, oks, np.zeros((P, R), bool)


class GCSeq(SequentialScheme):
    """(n, s)-GC round by round (Sec. 3.1): ``T = 0``, load ``(s+1)/n``; tolerates any pattern
    of the s-stragglers-per-round model.  ``seed`` picks the base ``gc-cr`` code's coefficients.

    >>> import gradcode
    >>> from gradcode.sequential import replay
    >>> x = gradcode.make_code("gc-seq", n=256, s=15)      # paper 4's Table 1: GC, s = 15
    >>> x.T, round(float(x.load.max()), 3)
    (0, 0.062)
    >>> x = gradcode.make_code("gc-seq", n=4, s=1)
    >>> S = np.zeros((3, 4), bool)
    >>> S[0, 1] = S[1, 2] = S[2, [0, 3]] = True            # round 2: 2 stragglers > s
    >>> r = replay(x, S, jobs=3)
    >>> r.finish_round.tolist(), r.waitouts.tolist()       # round 2 waited out
    ([0, 1, 2], [2])
    """

    name = "gc-seq"
    examples = ({"n": 5, "s": 2}, {"n": 4, "s": 0, "seed": 2})
    _ctor = ("n", "s", "seed")
    T = 0
    slots = 1

    def __init__(self, n: int, s: int, seed: int = 0):
        n = check_int("n", n, minimum=1)
        s = check_int("s", s, minimum=0, maximum=n - 1)
        seed = check_int("seed", seed, minimum=0)
        self._freeze(dict(n=n, s=s, seed=seed), load=sgc_load("gc-seq", n, s=s))

    @cached_property
    def base_code(self):
        return base_gc(self.n, self.s, self.seed, rep=False)

    @cached_property
    def design_model(self):
        return SPerRound(self.s)

    def batch_key(self, rule):
        return (self.name, self.n)

    def batch_params(self, rule):
        return (self.s,)

    @classmethod
    def batch_core(cls, schemes, jobs, rule, track=False):
        return _GCCore(schemes[0].n, np.array([x.s for x in schemes]), jobs)


    def mini_task(self, r, i, k, c):
        return trivial_task(r) if c == IDLE else MiniTask(r, *self._rows[i])

    def job_weights(self, job, contents, oks):
        got = np.flatnonzero((contents[job][:, 0] == 0) & oks[job])
        return keyed_weights(self.base_code, [(job, int(i), 0) for i in got])


class _CodeCore(_GCCore):
    """Any single-round code: job ``r`` decodes iff the received set decodes exactly."""

    def __init__(self, code, jobs: int, P: int):
        self.n, self.P, self.J, self.code = code.n_workers, P, jobs, code
        self.s = np.full(P, code.s or 0)
        self.done = np.full((P, jobs), -1, np.int32)

    replay = None                            # round by round: the code's own decoder

    def advance(self, r, content, ok):
        if r >= self.J:
            return None
        return np.array([self.code.decode(np.flatnonzero(o), rng=np.random.default_rng(0)).exact
                         for o in ok])


class SingleRound(SequentialScheme):
    """A single-round code (``gradcode.Code``) as the ``T = 0`` case of the planner contract:
    job ``t`` is computed in round ``t`` by every worker (its row of ``B``) and decoded by the
    code's own decoder when that is exact; the design model is s-stragglers-per-round with the
    code's ``s`` (0 if it has none).  Built by ``gradcode.sequential.single_round(code)``.

    >>> import gradcode
    >>> x = single_round(gradcode.make_code("gc-cr", n=4, s=1))
    >>> isinstance(x, SingleRound), x.T, x.load.tolist(), x.design_model
    (True, 0, [0.5, 0.5, 0.5, 0.5], SPerRound(s=1))
    >>> x.describe()
    {'name': 'single-round', 'code': {'name': 'gc-cr', 'n': 4, 's': 1, 'seed': 0}}
    """

    name = "single-round"
    T = 0
    slots = 1

    def __init__(self, code):
        self._freeze(dict(code=code, n=code.n_workers), load=code.load)

    @property
    def base_code(self):
        return self.code

    @property
    def slices(self) -> int:
        """The code's: a sliced code's mini-tasks carry ``(d, slices)`` coefficient rows."""
        return self.code.slices

    @cached_property
    def design_model(self):
        return SPerRound(self.code.s or 0)

    def describe(self):
        return {"name": self.name, "code": self.code.describe()}

    def __repr__(self):
        return f"single_round({self.code!r})"

    def __eq__(self, other):
        return isinstance(other, SingleRound) and other.code is self.code

    def __hash__(self):
        return hash((self.name, id(self.code)))

    def batch_key(self, rule):
        return (self.name, id(self.code))

    def batch_params(self, rule):
        return ()

    @classmethod
    def batch_core(cls, schemes, jobs, rule, track=False):
        return _CodeCore(schemes[0].code, jobs, len(schemes))


    mini_task = GCSeq.mini_task

    def job_weights(self, job, contents, oks):
        got = np.flatnonzero((contents[job][:, 0] == 0) & oks[job])
        w = self.code.decode(got, rng=np.random.default_rng(0)).weights
        return result_weights(job, got, w[got])


def single_round(code) -> SingleRound:
    """Wrap a single-round ``gradcode.Code`` as a ``T = 0`` sequential scheme (planner, replay).

    >>> import gradcode
    >>> from gradcode.sequential import replay
    >>> x = single_round(gradcode.make_code("gc-cr", n=4, s=1))
    >>> S = np.zeros((3, 4), bool)
    >>> S[1, 2] = S[2, [0, 1]] = True
    >>> r = replay(x, S, jobs=3)             # job t decoded in round t; round 2 waited out
    >>> r.finish_round.tolist(), r.waitouts.tolist()
    ([0, 1, 2], [2])
    >>> sorted(r.gradient_weights(1))        # (round, worker, slot) of the results decoded
    [(1, 0, 0), (1, 1, 0), (1, 3, 0)]
    """
    if not isinstance(code, Code):
        raise ValueError(f"code: expected a gradcode.Code, got {type(code).__name__}")
    return SingleRound(code)
