"""What every sequential scheme shares (paper 4, Sec. 2-3): mini-tasks, the immutable scheme
object, the single-round recovery rule of its base code, and decoding weights.

Indexing is 0-based: job ``t`` starts in round ``t`` and must be decoded by the end of round
``t + T`` (the paper's job ``t + 1`` and round ``t + 1``).  A worker's task in a round is a fixed
list of ``slots`` mini-tasks (the paper's T_i(t; 0..), one for GC and SR-SGC); a *trivial*
mini-task (job outside ``[0, J)``, or nothing left to do) has no partitions.

The compact per-round record a planner keeps is ``content (n, slots)`` int16 per round:
  * GC / SR-SGC: ``0`` = job ``r``, ``1`` = reattempt of job ``r - B``, ``IDLE`` = trivial;
  * M-SGC (slot ``k`` is job ``r - k``): ``j >= 0`` = the worker's ``j``-th D1 chunk, ``CODED`` =
    its coded result for D2 group ``k - (W-1)``, ``IDLE`` = trivial (``REATT``: a D1 reattempt whose
    chunk is not tracked, in batch runs only).
"""

from __future__ import annotations

from functools import cached_property
from typing import Any, NamedTuple

import numpy as np

from ..codes import GCCR, GCFR, Immutable, readonly
from ..protocol import WaitOut
from ..stragglers import check_pattern
from ._planner import Planner

IDLE, CODED, REATT = -1, -2, -3


class MiniTask(NamedTuple):
    """One mini-task: compute the partial gradients of ``job`` on ``partitions`` (sums over each
    chunk, not means) and return ``sum(coefficients * partial gradients)``.

    >>> m = MiniTask(job=0, partitions=np.array([8, 9, 10]), coefficients=np.array([1.0, 2, -1]))
    >>> G = np.arange(16.0)[:, None]                  # one partial gradient per data chunk
    >>> m.coefficients @ G[m.partitions], m.trivial
    (array([16.]), False)

    The mini-tasks a planner assigns (``Replay.tasks``, ``Planner.assign``), here those of
    worker 0 in round 3 of paper 4's Fig. 6 (0-based round 2): its first D1 chunk of the job
    started that round, its second of the previous job, a reattempt of ``g_0`` of job 0 (lost
    in round 0), and a trivial one (no job -1):

    >>> import gradcode
    >>> from gradcode.sequential import replay
    >>> x = gradcode.make_code("m-sgc", n=4, B=2, W=3, lam=2)
    >>> S = np.zeros((9, 4), bool)        # Fig. 6's stragglers, 0-based rounds (paper: 1-6)
    >>> S[[0, 1], 0] = S[[1, 2], 1] = S[4, 2] = True
    >>> [(m.job, m.partitions.tolist()) for m in replay(x, S, jobs=6).tasks[2][0]]
    [(2, [0]), (1, [1]), (0, [0]), (-1, [])]
    """

    job: int
    partitions: np.ndarray
    coefficients: np.ndarray

    @property
    def trivial(self) -> bool:
        return self.partitions.size == 0


_EMPTY_I = np.zeros(0, dtype=np.int64)
_EMPTY_F = np.zeros(0)
for _a in (_EMPTY_I, _EMPTY_F):
    _a.setflags(write=False)


def trivial_task(job: int) -> MiniTask:
    return MiniTask(int(job), _EMPTY_I, _EMPTY_F)


def base_gc(n: int, s: int, seed: int, rep: bool):
    """The single-round code inside a scheme: (n, s)-GC (``gc-cr``, Sec. 3.1) or, for the -Rep
    variants and for ``s = 0``, GC-Rep (``gc-fr``, App. G: groups of ``s + 1`` replicas)."""
    if rep or s == 0:
        return GCFR(n, s)
    return GCCR(n, s, seed)


class Recovery:
    """When a set of results of one (n, s)-GC instance decodes, for ``P`` instances at once.

    GC: at least ``n - s`` results (Sec. 3.1).  GC-Rep (App. G): one result in every group of
    ``s + 1`` consecutive workers.  ``s`` is ``(P,)``; masks are ``(..., P, n)``.
    """

    def __init__(self, n: int, s: np.ndarray, rep: bool):
        self.n, self.s, self.rep = n, np.asarray(s, np.int64), rep
        self.need = n - self.s
        one = rep and (self.s == self.s[0]).all() and n % (int(self.s[0]) + 1) == 0
        self.size = int(self.s[0]) + 1 if one else None              # one group size: reshape
        if rep:
            size = (self.s + 1)[:, None]
            self.start = (np.arange(n) // size) * size                  # (P, n)
            self.end = self.start + size

    def covered(self, mask: np.ndarray) -> np.ndarray:
        """Per worker: some worker of its group is in ``mask`` (GC-Rep only)."""
        if self.size is not None:
            g = mask.reshape(mask.shape[:-1] + (-1, self.size)).any(-1)
            return np.repeat(g, self.size, axis=-1)
        C = np.concatenate([np.zeros(mask.shape[:-1] + (1,), np.int32),
                            np.cumsum(mask, -1, dtype=np.int32)], -1)
        lo = np.take_along_axis(C, np.broadcast_to(self.start, mask.shape), -1)
        hi = np.take_along_axis(C, np.broadcast_to(self.end, mask.shape), -1)
        return hi > lo

    def ok(self, mask: np.ndarray) -> np.ndarray:
        if self.rep:
            if self.size is not None:
                return mask.reshape(mask.shape[:-1] + (-1, self.size)).any(-1).all(-1)
            return self.covered(mask).all(-1)
        return mask.view(np.uint8).sum(-1, dtype=np.int32) >= self.need


class ModelRuleHooks:
    """What a batched core tells the ``"model"`` wait-out rule by default: every round is run
    (``skip``) and every past round counts in the window (``exempt``).  SR-SGC's core
    overrides both with the authors' trace simulator (App. J)."""

    def skip(self, r: int) -> np.ndarray:
        return np.zeros(self.P, bool)

    def exempt(self, r: int, content, returned, late) -> np.ndarray:
        return np.zeros(self.P, bool)


def keyed_weights(code, keys: list[tuple[int, int, int]]) -> dict[tuple[int, int, int], float]:
    """``{key: weight}`` over base-code results identified by ``(round, worker, slot)`` keys, in
    order of preference (zero weights left out)."""
    w = decode_weights(code, np.array([k[1] for k in keys], np.int64))
    return {k: float(x) for k, x in zip(keys, w) if x != 0}


def decode_weights(code, received: np.ndarray) -> np.ndarray:
    """Weights over ``received`` (worker indices, in order of preference) such that their
    results sum to the full gradient of one base-code instance.  GC-Rep: weight 1 on the first
    received worker of every group (App. G); GC: the code's own decoder (exact with at most ``s``
    missing)."""
    received = np.asarray(received, np.int64)
    if isinstance(code, GCFR):
        group = received // code.c
        _, first = np.unique(group, return_index=True)
        if first.size != code.n_workers // code.c:
            raise RuntimeError("decode: a GC-Rep group has no result")
        w = np.zeros(received.size)
        w[first] = 1.0
        return w
    d = code.decode(received, rng=np.random.default_rng(0))
    if not d.exact:
        raise RuntimeError(f"decode: {received.size} results do not decode {code!r}")
    return d.weights[received]


class SequentialScheme(Immutable):
    """A sequential gradient coding scheme: small, immutable, built by ``make_code``.

    The scheme protocol of ``gradcode.Code`` (``n_workers``, ``sender``, ``n_machines``,
    ``partition_sizes``, ``load``, ``T``, ``params``/``describe()``, ``planner(jobs)``), plus:
    ``name``, ``n`` (= ``n_workers``), ``slots`` (mini-tasks per worker per round), ``load`` (one
    number: the normalized load of every worker per round, Sec. 2), ``params`` (dict, including
    derived values such as ``s``; ``describe()`` keeps only the constructor's), ``base_code``
    (the single-round code used inside, or None), ``placement`` (which worker stores which data
    chunk), ``design_model`` (the straggler model the scheme's proposition covers).  Not a
    single-round code: there is no ``.B`` matrix and no ``decode``; the paper's burst length
    ``B`` (a parameter of SR-SGC and M-SGC) is the attribute ``burst``.  The planner drives a
    scheme through ``batch_key``, ``batch_params``, ``batch_core``, ``mini_task`` and
    ``job_weights``, which every scheme overrides.

    >>> import gradcode
    >>> for name, p in [("gc-seq", dict(s=1)), ("sr-sgc", dict(B=1, W=2, lam=2)),
    ...                 ("m-sgc", dict(B=1, W=2, lam=2))]:
    ...     x = gradcode.make_code(name, n=4, **p)
    ...     print(x.name, isinstance(x, SequentialScheme), x.T, x.slots, round(float(x.load[0]), 3),
    ...           x.n_partitions)
    gc-seq True 0 1 0.5 4
    sr-sgc True 1 1 0.5 4
    m-sgc True 1 2 0.375 8
    >>> x.burst, x.describe()                 # the paper's B is the attribute burst
    (1, {'name': 'm-sgc', 'n': 4, 'B': 1, 'W': 2, 'lam': 2, 'seed': 0})
    >>> x.decode([0, 1, 2])
    Traceback (most recent call last):
    ValueError: name: 'm-sgc' is a sequential scheme; decode its jobs with ...
    """

    name = "sequential"
    rep = False
    #: the wait-out rules (``gradcode.protocol.WaitOut``) its planner accepts
    waitout_rules = tuple(WaitOut)
    #: small parameter sets (the contract suites run every registered scheme on each)
    examples: tuple[dict, ...] = ()
    #: slices each message's gradient is cut into (``gradcode.protocol.Scheme``): 1, the whole
    #: gradient (``single_round`` of a sliced code: the code's)
    slices: int = 1
    _ctor: tuple[str, ...] = ()
    #: parameters whose attribute has another name: ``B`` is only ever a coding matrix
    _ATTRIBUTE = {"B": "burst"}

    def _freeze(self, params: dict[str, Any], **attrs: Any) -> None:
        """Set, once, the parameters (``params``, ``describe()``), each also as an attribute
        (``B`` as ``burst``), and the derived attributes ``attrs``."""
        named = {self._ATTRIBUTE.get(k, k): v for k, v in params.items()}
        if "load" in attrs:                  # every scheme: the load of each worker's task
            attrs["load"] = readonly(np.broadcast_to(np.asarray(attrs["load"], float),
                                                     (int(params["n"]),)).copy())
        self._set(_params=dict(params), **named, **attrs)

    # ----------------------------------------------------------------- description
    @property
    def params(self) -> dict[str, Any]:
        return dict(self._params)

    def describe(self) -> dict[str, Any]:
        """A small dict from which ``make_code(**d)`` rebuilds this scheme."""
        return {"name": self.name, **{k: self._params[k] for k in self._ctor}}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={self._params[k]!r}" for k in self._ctor)
        return f"make_code({self.name!r}, {args})"

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and other.describe() == self.describe()

    def __hash__(self) -> int:
        return hash(tuple(self.describe().items()))

    # ----------------------------------------------------------------- structure
    @property
    def n_workers(self) -> int:
        """Workers, each sending one result per round (``n``)."""
        return self.n

    @cached_property
    def sender(self) -> np.ndarray:
        """``(n_workers,)``: the machine sending each worker's results, the identity."""
        return readonly(np.arange(self.n))

    @property
    def n_machines(self) -> int:
        return self.n

    @property
    def is_sum_code(self) -> bool:
        """True when every result is a plain sum of partial gradients (coefficients 1): no base
        code, or a base code that is a sum code (GC-Rep)."""
        return self.base_code is None or self.base_code.is_sum_code

    @property
    def n_partitions(self) -> int:
        return self.partition_sizes.size

    @cached_property
    def partition_sizes(self) -> np.ndarray:
        """Fraction of the dataset in each data chunk (default: the base code's ``n`` chunks)."""
        return self.base_code.partition_sizes

    @cached_property
    def placement(self) -> tuple[np.ndarray, ...]:
        """The data chunks each worker stores (default: the base code's placement)."""
        return self.base_code.placement

    @cached_property
    def _rows(self) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
        """``(partitions, coefficients)`` of every worker's base-code result (read-only; the
        coefficients ``(d, slices)`` for a sliced code)."""
        return self.base_code.coefficient_rows

    def conforms(self, pattern) -> bool:
        """Whether ``pattern (rounds, n)`` conforms to the scheme's design straggler model."""
        return self.design_model.conforms(check_pattern(pattern, self.n))

    def decode(self, *args, **kwargs):
        """Sequential schemes decode job by job over rounds, not from one received set."""
        raise ValueError(f"name: {self.name!r} is a sequential scheme; decode its jobs with "
                         "gradcode.sequential.replay(...) or scheme.planner(jobs)")

    def planner(self, jobs: int, waitout: str | None = None, *, decode_seed: int = 0,
                shuffle_rng=None):
        """A master-side round planner for ``jobs`` jobs (see ``gradcode.sequential.Planner``)
        with the wait-out rule ``waitout`` (``"deadline"`` when None).  ``decode_seed`` is not
        used (decoding is deterministic); shuffling (paper 5) is refused: the tasks already
        depend on who straggled."""
        if shuffle_rng is not None:
            raise ValueError("shuffle: not supported for sequential schemes")
        return Planner(self, jobs, "deadline" if waitout is None else waitout)

    # ------------------------------------- what the planner asks (Planner, replay, replay_many)
    def batch_key(self, rule: str) -> tuple:
        """Schemes with equal keys run in one batched core (their dynamics share a structure)."""
        raise NotImplementedError

    def batch_params(self, rule: str) -> tuple:
        """The per-instance parameters the batched dynamics depend on under ``rule``."""
        raise NotImplementedError

    @classmethod
    def batch_core(cls, schemes, jobs: int, rule: str, track: bool = False):
        """The batched state machine of ``schemes`` (one ``batch_key``) over ``jobs`` jobs under
        ``rule``; ``track`` also keeps what ``mini_task`` and ``job_weights`` need.  Round by
        round: ``assign``, ``advance``, ``feasible``, ``commit``; a core may also play a whole
        pattern at once (``replay``: see ``Run.drive`` in ``gradcode.sequential._planner``)."""
        raise NotImplementedError

    def mini_task(self, r: int, i: int, k: int, c: int) -> MiniTask:
        """Worker ``i``'s mini-task in slot ``k`` of round ``r`` from its compact content ``c``
        (module docstring)."""
        raise NotImplementedError

    def job_weights(self, job: int, contents, oks) -> dict[tuple[int, int, int], float]:
        """``{(round, worker, slot): weight}`` over returned results decoding ``job``, from the
        per-round compact contents and returned masks."""
        raise NotImplementedError
