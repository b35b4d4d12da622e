"""M-SGC (paper 4, Sec. 3.3, Algorithm 2, Remark 3.2) and M-SGC-Rep (App. G).

Data (Sec. 3.3.2): ``(W-1+B) n`` chunks of unequal size.  D1 = chunks ``0 .. (W-1)n - 1`` of size
``(λ+1)/(n(B+(W-1)(λ+1)))``, worker ``i`` storing ``i(W-1) .. (i+1)(W-1) - 1``; D2 = ``B`` groups
of ``n`` chunks of size ``1/(n(B+(W-1)(λ+1)))``, each group an (n, λ)-GC instance (worker ``i``
stores ``(W-1+j)n + [i : i+λ]*`` of group ``j``).  For ``λ = n`` there is no D2 and the D1 chunks
have size ``1/((W-1)n)`` (Remark 3.2).

Algorithm 2: each round every worker performs ``W - 1 + B`` mini-tasks; slot ``k`` belongs to job
``r - k`` (diagonal interleaving).  Slots ``k < W - 1`` compute the worker's ``k``-th D1 chunk
(fixed); slots ``k >= W - 1`` reattempt the first D1 chunk of job ``r - k`` the master still
lacks, or, when it has them all, return the worker's coded result of D2 group ``k - (W-1)``
(nothing for ``λ = n``).  Delay ``T = W - 2 + B``.  Prop. 3.2: tolerates every pattern that is
(B, W, λ)-bursty or (B, W+B-1, λ)-arbitrary; since job ``t`` only sees rounds ``t .. t+T``, the
``design_model`` asks this of every window of ``T + 1`` rounds.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from ..analysis import sgc_load
from ..codes import check_int, readonly
from ..stragglers import AnyOf, Arbitrary, Bursty, arbitrary_ok, bursty_ok
from ._base import (CODED, IDLE, REATT, MiniTask, ModelRuleHooks, SequentialScheme, base_gc,
                    keyed_weights, trivial_task)
from ._msgc_rounds import (assign_rounds, commit_rounds, lost_rounds, model_rounds,
                           replay_rounds)

_CODES = (IDLE, CODED, REATT)                 # content codes, for the compiled rounds


class _MCore(ModelRuleHooks):
    """Batched state of ``P`` instances, by job in flight (ring by ``t % (T+1)``): ``miss`` =
    failed D1 attempts not yet recovered per worker, ``have`` = which D1 chunks arrived (tracked
    runs only), ``gfail`` = some D2 group could not be decoded, ``done`` = finish rounds (the
    compiled rounds of ``_msgc_rounds``).  A worker reattempts in slot ``k >= W-1`` iff
    ``miss > 0`` (Algorithm 2), so the D1 dynamics are counts; identities are only needed to
    name the reattempted chunk."""

    def __init__(self, n, B, W, lam, rep, jobs, track):
        self.n, self.burst, self.W, self.J, self.P = n, B, W, jobs, lam.size
        self.lam, self.rep, self.track = lam, rep, track
        self.K, self.S = W - 1, W - 1 + B
        self.T, self.window = self.S - 1, self.S
        s = np.minimum(lam, n - 1)                 # D2: an (n, λ)-GC (GC-Rep) per group
        size = s + 1 if rep else np.zeros_like(s)
        self.spec = np.stack([n - s, size, lam >= n], 1).astype(np.int64)
        self.dims = (jobs, self.K, int(track))
        P, S, K = self.P, self.S, self.K
        self.state = (np.zeros((P, S, n), np.int8 if K < 127 else np.int32),
                      np.zeros((P, S), bool),
                      np.zeros((P, S, n, K) if track else (P, 0, 0, 0), bool),
                      np.full((P, jobs), -1, np.int32))
        self.done = self.state[3]

    def assign(self, r):
        out = np.empty((self.P, self.n, self.S), np.int16)
        assign_rounds(self.state, r, self.dims, self.spec, _CODES, out)
        return out                                                  # (P, n, slots)

    def advance(self, r, content, ok):
        """The round's tasks and results: ``feasible`` judges them, ``commit`` applies them."""
        return content, np.ascontiguousarray(ok)

    def feasible(self, r, tent):
        """No job in flight is lost if nobody straggles after round ``r``."""
        lost = np.zeros(self.P, bool)
        lost_rounds(self.state, r, tent[1], self.dims, self.spec, lost)
        return ~lost

    def commit(self, r, tent):
        commit_rounds(self.state, r, tent[0], tent[1], self.dims, self.spec)

    def replay(self, stragglers, rule, base=None, which=None):
        """Rounds ``0 ..`` of pattern ``which[p]`` of ``stragglers (U, R, n)`` (default: pattern
        ``p``) through instance ``p`` at once under ``rule``, with ``base`` the core of a -Rep
        variant's base scheme (replayed alongside under ``"deadline"``; under ``"model"`` the
        variant's wait-outs, the base's, are its own: ``model_ok`` reads no state); the wait-out
        mask ``(P, R)``, instance 0's tasks ``(R, n, slots)`` and received results ``(R, n)``
        (tracked runs; else empty), and the rounds not run ``(P, R)`` (none)."""
        R = stragglers.shape[1] if self.track else 0
        contents = np.zeros((R, self.n, self.S), np.int16)
        oks = np.zeros((R, self.n), bool)
        S = np.ascontiguousarray(stragglers if which is None else stragglers[which])
        if rule == "model":
            waits = model_rounds(S, self.state, self.dims, self.spec, _CODES,
                                 (self.burst, self.W), self.lam.astype(np.int64), contents, oks)
        else:
            flags = (rule == "deadline", base is not None)
            waits = replay_rounds(S, self.state, (base or self).state, self.dims, self.spec,
                                  _CODES, flags, contents, oks)
        return waits, contents, oks, np.zeros(waits.shape, bool)

    def model_ok(self, block, free=None):
        """The ``"model"`` rule's check: Prop. 3.2 on the last ``T + 1`` effective rounds,
        (B, W, λ)-bursty OR (B, W+B-1, λ)-arbitrary.  The authors' simulator
        (``multiplexed_sgc.py``, ``follows_straggler_model``) checks the bursty model alone (at
        most λ distinct stragglers over the last W rounds, none straggling again B .. W-1 rounds
        later) and charges all ``J + T`` rounds: where a round is arbitrary but not bursty they
        wait out and we do not, so our M-SGC estimate can be lower than theirs."""
        return (bursty_ok(block, self.burst, self.W, self.lam)
                | arbitrary_ok(block, self.burst, self.W + self.burst - 1, self.lam))


class MSGC(SequentialScheme):
    """M-SGC (Sec. 3.3.2, Algorithm 2) with parameters ``n, B, W, lam``: ``0 <= λ <= n``,
    ``0 < B < W``; ``T = W - 2 + B``, load eq. 1.  ``seed`` picks the base ``gc-cr`` code's
    coefficients (the (n, λ)-GC of the D2 groups).

    Paper 4's example of Sec. 3.3.1 (n = 4, B = 2, W = 3, λ = 2): 16 chunks, D1 of 3/32 of
    the data each, D2 of 1/32; worker 0 stores D0, D1, D8, D9, D10, D12, D13, D14:

    >>> import gradcode
    >>> x = gradcode.make_code("m-sgc", n=4, B=2, W=3, lam=2)
    >>> x.T, x.slots, x.load.tolist(), (x.partition_sizes * 32).round().astype(int).tolist()
    (3, 4, [0.375, 0.375, 0.375, 0.375], [3, 3, 3, 3, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1])
    >>> x.placement[0].tolist()
    [0, 1, 8, 9, 10, 12, 13, 14]

    On Fig. 6's straggler pattern, a (2, 3, 2)-bursty one, every job is decoded with delay
    ``T = 3`` and no wait-out; job 1 (the paper's job 2) after round 4 (the paper's round 5):

    >>> from gradcode.sequential import replay
    >>> S = np.zeros((9, 4), bool)        # Fig. 6's stragglers, 0-based rounds (paper: 1-6)
    >>> S[[0, 1], 0] = S[[1, 2], 1] = S[4, 2] = True
    >>> x.conforms(S)
    True
    >>> r = replay(x, S, jobs=6)
    >>> r.finish_round.tolist(), r.waitouts.tolist()
    ([3, 4, 5, 6, 7, 8], [])

    Table 1 of paper 4 (n = 256, B = 1, W = 2, λ = 27): normalized load 0.008.

    >>> round(float(gradcode.make_code("m-sgc", n=256, B=1, W=2, lam=27).load.max()), 3)
    0.008
    """

    name = "m-sgc"
    examples = ({"n": 4, "B": 2, "W": 3, "lam": 2}, {"n": 4, "B": 1, "W": 2, "lam": 4})
    _ctor = ("n", "B", "W", "lam", "seed")

    def __init__(self, n: int, B: int, W: int, lam: int, seed: int = 0):
        self._setup(n, B, W, lam, seed=check_int("seed", seed, minimum=0))

    def _setup(self, n, B, W, lam, **extra):
        n, B, W, lam = (check_int(k, v) for k, v in (("n", n), ("B", B), ("W", W), ("lam", lam)))
        load = sgc_load("m-sgc", n, B, W, lam)                # validates (Sec. 3.3)
        if self.rep and (lam >= n or n % (lam + 1)):
            raise ValueError(f"lam: {self.name} needs (lam+1) | n, got lam={lam}, n={n}")
        self._freeze(dict(n=n, B=B, W=W, lam=lam, **extra), T=W - 2 + B, slots=W - 1 + B,
                     load=load)

    @cached_property
    def base_code(self):
        """The (n, λ)-GC (or GC-Rep) of every D2 group; None for ``λ = n`` (no D2)."""
        if self.lam == self.n:
            return None
        return base_gc(self.n, self.lam, self._params.get("seed", 0), self.rep)

    @cached_property
    def design_model(self):
        """Prop. 3.2, per window of T + 1 rounds: (B, W, λ)-bursty or (B, W+B-1, λ)-arbitrary."""
        W2 = self.W + self.burst - 1
        return AnyOf((Bursty(self.burst, self.W, self.lam), Arbitrary(self.burst, W2, self.lam)),
                     window=W2)

    @cached_property
    def partition_sizes(self) -> np.ndarray:
        n, K, B, lam = self.n, self.W - 1, self.burst, self.lam
        if lam == n:
            sizes = np.full(K * n, 1.0 / (K * n))
        else:
            d = n * (B + K * (lam + 1))
            sizes = np.concatenate([np.full(K * n, (lam + 1) / d), np.full(B * n, 1.0 / d)])
        sizes.setflags(write=False)
        return sizes

    @cached_property
    def placement(self) -> tuple[np.ndarray, ...]:
        K, n = self.W - 1, self.n
        out = []
        for i in range(n):
            parts = [np.arange(i * K, (i + 1) * K)]
            if self.base_code is not None:
                parts += [(K + j) * n + self._rows[i][0] for j in range(self.burst)]
            out.append(readonly(np.concatenate(parts)))
        return tuple(out)

    def batch_key(self, rule):
        return (self.name, self.n, self.burst, self.W)

    def batch_params(self, rule):
        return (self.lam,)

    @classmethod
    def batch_core(cls, schemes, jobs, rule, track=False):
        x = schemes[0]
        lam = np.array([y.lam for y in schemes])
        return _MCore(x.n, x.burst, x.W, lam, cls.rep, jobs, track)


    def mini_task(self, r, i, k, c):
        t = r - k
        if c == CODED:                                         # group k - (W-1): chunks k*n + ...
            part, coef = self._rows[i]
            return MiniTask(t, k * self.n + part, coef)
        if c >= 0:
            return MiniTask(t, np.array([i * (self.W - 1) + c]), np.ones(1))
        return trivial_task(t)

    def job_weights(self, job, contents, oks):
        K = self.W - 1
        out = {}
        last = min(self.slots, len(contents) - job)     # λ = n: decoded before its last slot
        for k in range(last):                                  # D1: every chunk exactly once
            r = job + k
            for i in np.flatnonzero((contents[r][:, k] >= 0) & oks[r]):
                out[(r, int(i), k)] = 1.0
        if self.base_code is not None:
            for k in range(K, last):
                r = job + k
                got = np.flatnonzero((contents[r][:, k] == CODED) & oks[r])
                out.update(keyed_weights(self.base_code, [(r, int(i), k) for i in got]))
        return out


class MSGCRep(MSGC):
    """M-SGC-Rep (App. G): M-SGC whose D2 groups use GC-Rep; needs ``(λ + 1) | n``.

    >>> import gradcode
    >>> x = gradcode.make_code("m-sgc-rep", n=4, B=2, W=3, lam=1)
    >>> x.base_code, x.T, x.load.round(3).tolist()
    (make_code('gc-fr', n=4, s=1), 3, [0.333, 0.333, 0.333, 0.333])
    >>> gradcode.make_code("m-sgc-rep", n=4, B=2, W=3, lam=2)
    Traceback (most recent call last):
    ValueError: lam: m-sgc-rep needs (lam+1) | n, got lam=2, n=4
    """

    name = "m-sgc-rep"
    examples = ({"n": 4, "B": 1, "W": 2, "lam": 1},)
    _ctor = ("n", "B", "W", "lam")
    rep = True

    def __init__(self, n: int, B: int, W: int, lam: int):
        self._setup(n, B, W, lam)
