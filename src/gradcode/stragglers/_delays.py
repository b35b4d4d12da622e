"""Delay models: per-worker response times of one round, sampled with an explicit Generator.

Contract (``DelayModel``): ``sample(rng, round, loads) -> ndarray (n,)`` seconds, where ``loads``
is each worker's normalized load (fraction of the dataset it computes on);
``sample_many(rng, rounds, loads, start)`` is rounds ``start .. start + rounds - 1`` at once, the
same draws as that many successive ``sample`` calls.  ``start(rng, n)`` is
called once per run for models with per-run state (which workers are slow).  Models add up with
``+``: ``Compute(2.0) + Exponential(1.5)`` is compute time proportional to load plus random delay.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ._patterns import GilbertElliott as GEChain


class DelayModel:
    """Per-worker response times of one round (module docstring); a model defines ``sample``
    (and ``start`` if it has per-run state) and gets ``sample_many`` and ``+``.

    >>> class Growing(DelayModel):                   # every worker 0.1 s later each round
    ...     def sample(self, rng, round, loads):
    ...         return np.full(len(loads), 0.1 * round)
    >>> Growing().sample_many(None, 3, np.ones(2)).tolist()
    [[0.0, 0.0], [0.1, 0.1], [0.2, 0.2]]
    >>> (Growing() + Constant(1.0)).sample(None, 2, np.ones(2)).tolist()
    [1.2, 1.2]
    """

    def start(self, rng: np.random.Generator, n: int) -> None:
        """Draw per-run state (default: none)."""

    def sample(self, rng: np.random.Generator, round: int, loads: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def sample_many(self, rng: np.random.Generator, rounds: int, loads: np.ndarray,
                    start: int = 0) -> np.ndarray:
        """``(rounds, n)`` delays of rounds ``start, start + 1, ...``; same draws as ``rounds``
        successive ``sample`` calls."""
        return np.stack([self.sample(rng, start + r, loads) for r in range(rounds)]) if rounds \
            else np.zeros((0, len(loads)))

    def __add__(self, other: "DelayModel") -> "DelayModel":
        return Sum((self, other))


@dataclass(frozen=True)
class Sum(DelayModel):
    parts: tuple

    def start(self, rng, n):
        for p in self.parts:
            p.start(rng, n)

    def sample(self, rng, round, loads):
        return sum(p.sample(rng, round, loads) for p in self.parts)

    def __add__(self, other):
        return Sum(self.parts + (other,))


@dataclass(frozen=True)
class Constant(DelayModel):
    """Every worker answers after ``seconds``.

    >>> Constant(0.5).sample(np.random.default_rng(0), 0, np.ones(3)).tolist()
    [0.5, 0.5, 0.5]
    """
    seconds: float = 0.0

    def sample(self, rng, round, loads):
        return np.full(len(loads), float(self.seconds))


@dataclass(frozen=True)
class Compute(DelayModel):
    """Compute time ``load_i * seconds_per_load / speed_i`` (paper 3's t_i = n_i / c_i), plus
    ``send_s``, the seconds a worker takes to send a whole gradient: a code whose messages are
    ``1 / m`` of it (``scheme.slices``, Ye and Abbe's communication-efficient code) sends for
    ``send_s / m`` (``engine.arrival_times``; here, a whole gradient).

    >>> Compute(2.0, speeds=(1, 2, 4)).sample(None, 0, [0.5, 0.5, 0.5]).tolist()
    [1.0, 0.5, 0.25]
    >>> model = Compute(2.0) + Constant(0.1)                   # compute plus a fixed latency
    >>> model.sample(None, 0, [0.5, 0.25]).tolist()
    [1.1, 0.6]
    >>> Compute(2.0, send_s=0.5).sample(None, 0, [0.5]).tolist()
    [1.5]
    """
    seconds_per_load: float
    speeds: tuple | None = None
    send_s: float = 0.0

    def start(self, rng, n):
        if self.speeds is not None and len(self.speeds) != n:
            raise ValueError(f"speeds: expected {n} worker speeds, got {len(self.speeds)}")

    def sample(self, rng, round, loads):
        t = np.asarray(loads, float) * self.seconds_per_load
        if self.speeds is not None:
            self.start(rng, len(loads))
            t = t / np.asarray(self.speeds, float)
        return t + self.send_s

    def sample_many(self, rng, rounds, loads, start=0):
        return np.broadcast_to(self.sample(rng, start, loads), (rounds, len(loads))).copy()


@dataclass(frozen=True)
class Exponential(DelayModel):
    """I.i.d. exponential delays of mean ``mean`` s (paper 2, Sec. VIII-B) on every worker, or on
    ``k`` workers drawn at random each round (the others get none).

    >>> rng = np.random.default_rng(0)
    >>> d = Exponential(1.5).sample_many(rng, 1000, np.ones(4))
    >>> d.shape, round(float(d.mean()), 1)
    ((1000, 4), 1.5)
    >>> (Exponential(1.0, k=2).sample_many(rng, 5, np.ones(4)) > 0).sum(axis=1).tolist()
    [2, 2, 2, 2, 2]
    """
    mean: float
    k: int | None = None

    def start(self, rng, n):
        if self.k is not None and self.k > n:
            raise ValueError(f"delay: exp:MEAN@K needs K <= n = {n} workers, got K = {self.k}")

    def sample(self, rng, round, loads):
        return self.sample_many(rng, 1, loads)[0]

    def sample_many(self, rng, rounds, loads, start=0):
        n = len(loads)
        if self.k is None or self.k >= n:
            return rng.exponential(self.mean, (rounds, n))
        u = rng.random((rounds, 2 * n))       # one row per round: the delays, then who gets one
        keep = np.argsort(u[:, n:], axis=1) < self.k
        return np.where(keep, -self.mean * np.log1p(-u[:, :n]), 0.0)


@dataclass(frozen=True)
class ShiftedExponential(DelayModel):
    """``shift + Exp(mean)`` per worker and round.

    >>> d = ShiftedExponential(1.0, 0.5).sample_many(np.random.default_rng(0), 1000, np.ones(3))
    >>> bool(d.min() >= 1.0), round(float(d.mean()), 1)
    (True, 1.5)
    """
    shift: float
    mean: float

    def sample(self, rng, round, loads):
        return self.sample_many(rng, 1, loads)[0]

    def sample_many(self, rng, rounds, loads, start=0):
        return self.shift + rng.exponential(self.mean, (rounds, len(loads)))


@dataclass
class SlowActive(DelayModel):
    """Paper 5's heterogeneous model: each worker is slow with ``p_slow`` for the whole run
    (or the given ``slow`` set); each round a slow worker straggles with ``p_ss``, an active one
    with ``p_as``; a straggler is ``delay`` s late.

    >>> rng = np.random.default_rng(0)
    >>> model = SlowActive(p_slow=0.5, p_ss=0.9, p_as=0.1, delay=2.0, slow=(0,))
    >>> model.start(rng, 4)                                    # worker 0 is slow
    >>> d = model.sample_many(rng, 1000, np.ones(4))
    >>> np.unique(d).tolist(), (d > 0).mean(axis=0).round(1).tolist()
    ([0.0, 2.0], [0.9, 0.1, 0.1, 0.1])
    """
    p_slow: float
    p_ss: float
    p_as: float
    delay: float
    slow: tuple | None = None
    _slow: np.ndarray | None = field(default=None, repr=False)

    def start(self, rng, n):
        if self.slow is not None:
            self._slow = np.isin(np.arange(n), self.slow)
        else:
            self._slow = rng.random(n) < self.p_slow

    def sample(self, rng, round, loads):
        return self.sample_many(rng, 1, loads)[0]

    def sample_many(self, rng, rounds, loads, start=0):
        if self._slow is None:
            self.start(rng, len(loads))
        p = np.where(self._slow, self.p_ss, self.p_as)
        return np.where(rng.random((rounds, len(loads))) < p, float(self.delay), 0.0)


@dataclass
class GilbertElliott(DelayModel):
    """Gilbert-Elliott straggling per worker (paper 4, App. C; the chain is
    ``stragglers.GilbertElliott``): good -> bad with ``p_gb``, bad -> good with ``p_bg``, the
    first round from the stationary law; a worker in the bad state is ``delay`` s late.

    >>> from gradcode.stragglers import GilbertElliottDelay   # this class, as exported
    >>> rng = np.random.default_rng(0)
    >>> model = GilbertElliottDelay(p_gb=0.1, p_bg=0.4, delay=2.0)
    >>> model.chain.stationary                                 # long-run share of late rounds
    0.2
    >>> model.start(rng, 1000)
    >>> d = model.sample_many(rng, 50, np.ones(1000))
    >>> np.unique(d).tolist(), round(float((d > 0).mean()), 2)
    ([0.0, 2.0], 0.2)
    """
    p_gb: float
    p_bg: float
    delay: float
    _state: np.ndarray | None = field(default=None, repr=False)

    @property
    def chain(self) -> GEChain:
        return GEChain(self.p_gb, self.p_bg)

    def start(self, rng, n):
        self._state = rng.random(n) < self.chain.stationary

    def sample(self, rng, round, loads):
        if self._state is None:
            self.start(rng, len(loads))
        out = np.where(self._state, float(self.delay), 0.0)
        self._state = self.chain.step(self._state, rng.random(len(loads)))
        return out


@dataclass(frozen=True)
class Trace(DelayModel):
    """Replay of a measured profile ``delays`` (rounds x n response times at ``base_load``),
    row ``round mod rounds``, shifted by ``(load - base_load) * alpha`` (paper 4, App. J).

    >>> trace = Trace(np.array([[1.0, 2.0], [3.0, 4.0]]), alpha=2.0, base_load=0.5)
    >>> trace.sample_many(None, 3, np.array([0.5, 1.0])).tolist()   # rows 0, 1, 0
    [[1.0, 3.0], [3.0, 5.0], [1.0, 3.0]]
    """
    delays: np.ndarray
    alpha: float = 0.0
    base_load: float = 0.0

    def start(self, rng, n):
        if np.shape(self.delays)[1:] != (n,):
            raise ValueError(f"delays: the trace has {np.shape(self.delays)[-1]} workers, "
                             f"the code {n}")

    def sample(self, rng, round, loads):
        self.start(rng, len(loads))
        row = np.asarray(self.delays[round % len(self.delays)], float)
        return row + (np.asarray(loads, float) - self.base_load) * self.alpha

    def sample_many(self, rng, rounds, loads, start=0):
        self.start(rng, len(loads))
        rows = np.asarray(self.delays, float)[(start + np.arange(rounds)) % len(self.delays)]
        return rows + (np.asarray(loads, float) - self.base_load) * self.alpha


DELAY_HELP = ("exp:MEAN (i.i.d. exponential delays, mean in seconds; exp:MEAN@K on K random "
              "workers per round), shexp:SHIFT,MEAN, const:SECONDS, none, "
              "slow:P_SLOW,P_SS,P_AS,DELAY (paper 5's slow/active classes), "
              "ge:P_GB,P_BG,DELAY (Gilbert-Elliott), trace:FILE.csv[,ALPHA[,BASE_LOAD]] "
              "(replay measured response times); join several with '+'")
COMPUTE_HELP = ("load:SECONDS (compute seconds per unit of normalized load), load:SECONDS:SPEEDS "
                "(heterogeneous workers, e.g. load:2.0:1,2,3,4,4), and +send:SECONDS (seconds to "
                "send a whole gradient: a code sending 1/m of it takes 1/m), e.g. "
                "load:2.0+send:0.5; default load:0")


def parse_delay(spec: str | DelayModel) -> DelayModel:
    """A delay model from a short string, e.g. ``exp:1.5``, ``exp:3@12``, ``trace:x.csv`` (a
    model given as it is: every public function taking a delay model takes either).

    >>> parse_delay("exp:1.5")
    Exponential(mean=1.5, k=None)
    >>> parse_delay("const:0.5+exp:1@2")                       # 0.5 s, plus Exp(1) on 2 workers
    Sum(parts=(Constant(seconds=0.5), Exponential(mean=1.0, k=2)))
    >>> parse_delay("exp:-1")
    Traceback (most recent call last):
    ...
    ValueError: delay: 'exp:-1' expects 1 finite non-negative numbers
    """
    if isinstance(spec, DelayModel):
        return spec
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"delay: expected a model such as {DELAY_HELP}; got {spec!r}")
    models = [_parse_delay_one(p.strip()) for p in spec.split("+")]
    out = models[0]
    for m in models[1:]:
        out = out + m
    return out


def _numbers(spec: str, arg: str, count: int, optional: int = 0) -> list[float]:
    try:
        vals = [float(x) for x in arg.split(",")] if arg else []
    except ValueError:
        vals = None
    if vals is None or not count - optional <= len(vals) <= count or \
            not all(0 <= v < np.inf for v in vals):
        raise ValueError(f"delay: {spec!r} expects {count - optional}"
                         f"{'-' + str(count) if optional else ''} finite non-negative numbers")
    return vals


def _parse_delay_one(spec: str) -> DelayModel:
    kind, _, arg = spec.partition(":")
    if kind == "none" and not arg:
        return Constant(0.0)
    if kind == "const":
        return Constant(*_numbers(spec, arg, 1))
    if kind == "exp":
        mean, _, k = arg.partition("@")
        (m,) = _numbers(spec, mean, 1)
        if k:
            if not k.isdigit() or int(k) < 1:
                raise ValueError(f"delay: in {spec!r} K must be an integer >= 1")
            return Exponential(m, int(k))
        return Exponential(m)
    if kind == "shexp":
        return ShiftedExponential(*_numbers(spec, arg, 2))
    if kind == "slow":
        p_slow, p_ss, p_as, d = _numbers(spec, arg, 4)
        if max(p_slow, p_ss, p_as) > 1:
            raise ValueError(f"delay: in {spec!r} probabilities must be in [0, 1]")
        return SlowActive(p_slow, p_ss, p_as, d)
    if kind == "ge":
        p_gb, p_bg, d = _numbers(spec, arg, 3)
        if max(p_gb, p_bg) > 1:
            raise ValueError(f"delay: in {spec!r} probabilities must be in [0, 1]")
        return GilbertElliott(p_gb, p_bg, d)
    if kind == "trace":
        from ._traces import load_trace
        path, *rest = arg.split(",")
        extra = _numbers(spec, ",".join(rest), 2, optional=2) if rest else []
        return Trace(load_trace(path), *extra)
    raise ValueError(f"delay: unknown model {spec!r}; expected {DELAY_HELP}")


def parse_compute(spec: str | Compute | None) -> Compute:
    """Compute-time model from ``load:SECONDS[:SPEEDS]``, ``send:SECONDS`` or both joined by
    ``+`` (None: no compute time; a ``Compute`` as it is).

    >>> parse_compute("load:2.0:1,2")
    Compute(seconds_per_load=2.0, speeds=(1.0, 2.0), send_s=0.0)
    >>> parse_compute("load:1+send:0.5")
    Compute(seconds_per_load=1.0, speeds=None, send_s=0.5)
    >>> parse_compute(None)
    Compute(seconds_per_load=0.0, speeds=None, send_s=0.0)
    """
    if isinstance(spec, Compute):
        return spec
    if spec is None or spec == "":
        return Compute(0.0)
    out = {}
    try:
        for part in spec.split("+"):
            kind, _, arg = part.strip().partition(":")
            if kind in out or kind not in ("load", "send"):
                raise ValueError
            secs, _, speeds = arg.partition(":")
            s = float(secs)
            sp = tuple(float(x) for x in speeds.split(",")) if speeds else None
            if not 0 <= s < np.inf or (sp is not None and not all(0 < x < np.inf for x in sp)) \
                    or (kind == "send" and sp is not None):
                raise ValueError
            out[kind] = (s, sp)
    except ValueError:
        raise ValueError(f"compute: expected {COMPUTE_HELP}; got {spec!r}") from None
    load, speeds = out.get("load", (0.0, None))
    return Compute(load, speeds, out.get("send", (0.0, None))[0])
