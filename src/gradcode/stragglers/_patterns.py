"""Straggler patterns (paper 4, Sec. 2 and 2.1, App. C).

A *pattern* is a boolean array ``(rounds, n)``: ``pattern[t, i]`` is True when worker ``i`` is a
straggler in round ``t`` (rounds 0-indexed; the paper counts from 1).  The deterministic models of
Sec. 2.1 each give a conformance check (``conforms``), an incremental check (``allows``: may this
row follow that history) and a random generator of conforming patterns (``sample``, explicit
``numpy.random.Generator``).  ``GilbertElliott`` (App. C) is a random source, not a constraint.

All three models are *sliding-window* constraints closed under removing stragglers, so a pattern
conforms iff every window of the model's length does (windows are zero-padded at the ends) and a
greedy row-by-row generator never gets stuck.  The window predicates ``s_per_round_ok``,
``bursty_ok`` and ``arbitrary_ok`` are vectorised: a block ``(..., L, n)`` and parameters that
broadcast over its leading axes; every length-``W`` sub-window inside the block is checked.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..codes import check_int


# ----------------------------------------------------------------------------- window predicates
def _sub_windows(block: np.ndarray, W: int) -> np.ndarray:
    """``(..., m, W', n)``: the length-``W`` sub-windows of ``block`` (the block itself if shorter)."""
    if block.shape[-2] <= W:
        return block[..., None, :, :]
    return np.swapaxes(sliding_window_view(block, W, axis=-2), -1, -2)


def _param(x, lead: int) -> np.ndarray:
    """Parameter broadcast against ``lead`` trailing axes (so ``(P,)`` meets ``(P, m, n)``)."""
    x = np.asarray(x)
    return x.reshape(x.shape + (1,) * lead)


def s_per_round_ok(block, s) -> np.ndarray:
    """Every round of ``block (..., L, n)`` has at most ``s`` stragglers (s-stragglers-per-round).

    >>> block = np.array([[1, 1, 0], [0, 1, 0]], bool)       # 2 rounds, 3 workers
    >>> bool(s_per_round_ok(block, 1)), s_per_round_ok(block, [1, 2]).tolist()
    (False, [False, True])
    """
    return (block.sum(-1) <= _param(s, 1)).all(-1)


def bursty_ok(block, B, W, lam) -> np.ndarray:
    """Every length-``W`` window of ``block (..., L, n)`` satisfies the two properties of the
    (B, W, λ)-bursty model (Sec. 2.1): at most ``lam`` distinct stragglers (spatial), and each
    worker's first and last straggling rounds at most ``B - 1`` apart (temporal).

    >>> burst = np.array([[1, 0, 0], [1, 0, 0], [0, 0, 0]], bool)   # worker 0: 2 rounds in a row
    >>> gap = np.array([[1, 0, 0], [0, 0, 0], [1, 0, 0]], bool)     # worker 0: rounds 0 and 2
    >>> bool(bursty_ok(burst, B=2, W=3, lam=1)), bool(bursty_ok(gap, B=2, W=3, lam=1))
    (True, False)
    >>> bursty_ok(np.stack([burst, gap]), B=[2, 3], W=3, lam=1).tolist()   # one block per B
    [True, True]
    """
    sub = _sub_windows(np.asarray(block, bool), W)
    hit = sub.any(-2)                                              # (..., m, n)
    w = sub.shape[-2]
    first = sub.argmax(-2)
    last = w - 1 - sub[..., ::-1, :].argmax(-2)
    spatial = (hit.sum(-1) <= _param(lam, 1)).all(-1)
    temporal = (~hit | (last - first <= _param(B, 2) - 1)).all((-1, -2))
    return spatial & temporal


def arbitrary_ok(block, N, W, lam) -> np.ndarray:
    """Every length-``W`` (W′) window of ``block`` has at most ``lam`` (λ′) distinct stragglers and
    at most ``N`` straggling rounds per worker ((N, W′, λ′)-arbitrary model, Sec. 2.1).

    >>> block = np.array([[1, 0], [0, 0], [1, 0]], bool)    # worker 0 straggles twice in 3 rounds
    >>> bool(arbitrary_ok(block, N=1, W=2, lam=1)), bool(arbitrary_ok(block, N=1, W=3, lam=1))
    (True, False)
    """
    sub = _sub_windows(np.asarray(block, bool), W)
    spatial = (sub.any(-2).sum(-1) <= _param(lam, 1)).all(-1)
    count = (sub.sum(-2) <= _param(N, 2)).all((-1, -2))
    return spatial & count


# ----------------------------------------------------------------------------- models
def check_pattern(pattern, n: int | None = None, name: str = "pattern") -> np.ndarray:
    """A ``(rounds, n)`` boolean array (0/1 integers accepted); ValueError otherwise.

    >>> check_pattern([[0, 1], [1, 0]]).tolist()
    [[False, True], [True, False]]
    >>> check_pattern([[0, 1], [1, 0]], n=3)
    Traceback (most recent call last):
    ...
    ValueError: pattern: expected 3 workers (columns), got 2
    """
    P = np.asarray(pattern)
    if P.ndim != 2:
        raise ValueError(f"{name}: expected a 2-D (rounds, n) array, got shape {P.shape}")
    if P.dtype != bool:
        if not (np.issubdtype(P.dtype, np.number) and np.isin(P, (0, 1)).all()):
            raise ValueError(f"{name}: expected booleans (True = straggler), got dtype {P.dtype}")
        P = P.astype(bool)
    if n is not None and P.shape[1] != n:
        raise ValueError(f"{name}: expected {n} workers (columns), got {P.shape[1]}")
    return P


class StragglerModel:
    """A sliding-window straggler model: ``window`` rounds are judged together.

    A model defines ``_ok(block (..., L, n)) -> bool (...)`` and gets ``conforms``, ``allows``
    and ``sample``:

    >>> class Spare0(StragglerModel):                # worker 0 never straggles (window 1)
    ...     def _ok(self, block):
    ...         return ~block[..., 0].any(-1)
    >>> Spare0().conforms([[0, 1, 1], [1, 0, 0]])
    False
    >>> P = Spare0().sample(np.random.default_rng(0), rounds=20, n=3)
    >>> P.shape, bool(P[:, 0].any()), bool(P[:, 1:].any())
    ((20, 3), False, True)
    >>> SPerRound(1).allows(history=[[0, 1, 0]], row=[1, 0, 0])
    True
    """

    window: int = 1

    def _ok(self, block: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def conforms(self, pattern) -> bool:
        """Whether the whole ``(rounds, n)`` pattern conforms to the model."""
        P = check_pattern(pattern)
        return bool(self._ok(P)) if P.shape[0] else True

    def allows(self, history, row) -> bool:
        """Whether ``row (n,)`` may follow ``history (rounds, n)`` (assumed conforming)."""
        H = check_pattern(history, name="history")
        row = np.asarray(row, bool)
        if row.shape != (H.shape[1],):
            raise ValueError(f"row: expected shape ({H.shape[1]},), got {row.shape}")
        block = np.concatenate([H[max(0, H.shape[0] - self.window + 1):], row[None]])
        return bool(self._ok(block))

    def sample(self, rng: np.random.Generator, rounds: int, n: int, p: float = 0.5) -> np.ndarray:
        """A random conforming pattern: each round every worker proposes to straggle with
        probability ``p``; proposals are accepted in random order while the pattern conforms."""
        rng, rounds, n, p = _check_sample(rng, rounds, n, p)
        out = np.zeros((rounds, n), bool)
        for t in range(rounds):
            block = out[max(0, t - self.window + 1): t + 1]
            for i in rng.permutation(n)[rng.random(n) < p]:
                block[-1, i] = True
                if not self._ok(block):
                    block[-1, i] = False
        return out


def _check_sample(rng, rounds, n, p):
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng: expected a numpy.random.Generator, got {type(rng).__name__}")
    rounds = check_int("rounds", rounds, minimum=0)
    n = check_int("n", n, minimum=1)
    if not 0.0 <= float(p) <= 1.0:
        raise ValueError(f"p: expected a probability in [0, 1], got {p}")
    return rng, rounds, n, float(p)


def _cap_new(rng, propose: np.ndarray, seen: np.ndarray, lam: int) -> np.ndarray:
    """Keep the proposals among ``seen`` workers and a random ``lam - |seen|`` of the others."""
    new = np.flatnonzero(propose & ~seen)
    room = max(lam - int(seen.sum()), 0)
    keep = propose & seen
    keep[rng.permutation(new)[:room]] = True
    return keep


@dataclass(frozen=True)
class SPerRound(StragglerModel):
    """s-stragglers-per-round model (Sec. 2.1): at most ``s`` stragglers in every round.

    >>> model = SPerRound(1)
    >>> model.conforms([[1, 0, 0], [0, 0, 1]]), model.conforms([[1, 1, 0]])
    (True, False)
    >>> P = model.sample(np.random.default_rng(0), rounds=50, n=4)
    >>> P.shape, int(P.sum(axis=1).max())
    ((50, 4), 1)
    """

    s: int

    def __post_init__(self):
        check_int("s", self.s, minimum=0)

    def _ok(self, block):
        return s_per_round_ok(block, self.s)

    def sample(self, rng, rounds, n, p=0.5):
        rng, rounds, n, p = _check_sample(rng, rounds, n, p)
        out = np.zeros((rounds, n), bool)
        for t in range(rounds):
            out[t] = _cap_new(rng, rng.random(n) < p, np.zeros(n, bool), self.s)
        return out


@dataclass(frozen=True)
class Bursty(StragglerModel):
    """(B, W, λ)-bursty model (Sec. 2.1): in every window of ``W`` consecutive rounds at most
    ``lam`` distinct stragglers, and each worker's straggling rounds at most ``B - 1`` apart.
    Parameters: ``0 <= lam``, ``1 <= B <= W``.

    >>> model = Bursty(B=2, W=3, lam=1)
    >>> model.conforms([[1, 0], [1, 0], [0, 0]])        # a burst of 2 rounds
    True
    >>> model.conforms([[1, 0], [0, 0], [1, 0]])        # rounds 0 and 2: more than B - 1 apart
    False
    >>> model.conforms(model.sample(np.random.default_rng(0), rounds=30, n=5))
    True
    """

    B: int
    W: int
    lam: int

    def __post_init__(self):
        W = check_int("W", self.W, minimum=1)
        check_int("B", self.B, minimum=1, maximum=W)
        check_int("lam", self.lam, minimum=0)
        object.__setattr__(self, "window", W)

    def _ok(self, block):
        return bursty_ok(block, self.B, self.W, self.lam)

    def sample(self, rng, rounds, n, p=0.5):
        rng, rounds, n, p = _check_sample(rng, rounds, n, p)
        B, W = self.B, self.W
        out = np.zeros((rounds, n), bool)
        for t in range(rounds):
            far = out[max(0, t - W + 1): max(0, t - B + 1)].any(0)   # straggled B..W-1 rounds ago
            seen = out[max(0, t - W + 1): t].any(0)
            out[t] = _cap_new(rng, (rng.random(n) < p) & ~far, seen, self.lam)
        return out


@dataclass(frozen=True)
class Arbitrary(StragglerModel):
    """(N, W′, λ′)-arbitrary model (Sec. 2.1), here ``Arbitrary(N, W, lam)`` with ``W`` = W′ and
    ``lam`` = λ′: in every window of ``W`` rounds at most ``lam`` distinct stragglers and at most
    ``N`` straggling rounds per worker.  Parameters: ``0 <= lam``, ``0 <= N <= W``.

    >>> model = Arbitrary(N=1, W=2, lam=1)
    >>> model.conforms([[1, 0], [0, 0], [1, 0]]), model.conforms([[1, 0], [1, 0]])
    (True, False)
    >>> model.conforms(model.sample(np.random.default_rng(0), rounds=30, n=5))
    True
    """

    N: int
    W: int
    lam: int

    def __post_init__(self):
        W = check_int("W", self.W, minimum=1)
        check_int("N", self.N, minimum=0, maximum=W)
        check_int("lam", self.lam, minimum=0)
        object.__setattr__(self, "window", W)

    def _ok(self, block):
        return arbitrary_ok(block, self.N, self.W, self.lam)

    def sample(self, rng, rounds, n, p=0.5):
        rng, rounds, n, p = _check_sample(rng, rounds, n, p)
        out = np.zeros((rounds, n), bool)
        for t in range(rounds):
            recent = out[max(0, t - self.W + 1): t]
            full = recent.sum(0) >= self.N
            out[t] = _cap_new(rng, (rng.random(n) < p) & ~full, recent.any(0), self.lam)
        return out


@dataclass(frozen=True)
class AnyOf(StragglerModel):
    """A mixture (Remark 2.3): every window of ``window`` consecutive rounds conforms to at least
    one of ``models`` (each judged on the window alone).  Prop. 3.1 (SR-SGC) and Prop. 3.2 (M-SGC)
    are stated for such mixtures; ``window`` (default: the longest model window) must be at least
    every model's own window.

    >>> model = AnyOf((SPerRound(1), Bursty(B=2, W=3, lam=2)))
    >>> model.window
    3
    >>> model.conforms([[1, 1, 0], [0, 0, 0], [0, 0, 0]])    # not 1 per round, but bursty
    True
    >>> model.conforms([[1, 1, 0], [0, 0, 1], [0, 0, 0]])    # neither in the same window
    False
    """

    models: tuple
    window: int | None = None

    def __post_init__(self):
        models = tuple(self.models)
        if not models or not all(isinstance(m, StragglerModel) for m in models):
            raise ValueError("models: expected one or more straggler models")
        longest = max(m.window for m in models)
        window = longest if self.window is None else self.window
        check_int("window", window, minimum=longest)
        object.__setattr__(self, "models", models)
        object.__setattr__(self, "window", int(window))

    def _ok(self, block):
        sub = _sub_windows(block, self.window)
        return np.logical_or.reduce([m._ok(sub) for m in self.models]).all(-1)


@dataclass(frozen=True)
class GilbertElliott:
    """Two-state Gilbert-Elliott model (App. C): a non-straggler becomes a straggler with
    probability ``p_N``, a straggler recovers with probability ``p_S``; the first round is drawn
    from the stationary law ``p_N / (p_N + p_S)`` unless ``initial`` (n,) is given.

    >>> chain = GilbertElliott(p_N=0.1, p_S=0.4)
    >>> chain.stationary
    0.2
    >>> P = chain.sample(np.random.default_rng(0), rounds=200, n=50)
    >>> P.shape, round(float(P.mean()), 2)                  # about the stationary share
    ((200, 50), 0.2)
    >>> chain.sample(np.random.default_rng(0), 3, 2, initial=[True, False]).tolist()[0]
    [True, False]
    """

    p_N: float
    p_S: float

    def __post_init__(self):
        for name in ("p_N", "p_S"):
            if not 0.0 <= float(getattr(self, name)) <= 1.0:
                raise ValueError(f"{name}: expected a probability in [0, 1], got {getattr(self, name)}")

    @property
    def stationary(self) -> float:
        """Long-run fraction of straggling rounds, ``p_N / (p_N + p_S)``."""
        total = self.p_N + self.p_S
        return self.p_N / total if total > 0 else 0.0

    def sample(self, rng: np.random.Generator, rounds: int, n: int, initial=None) -> np.ndarray:
        rng, rounds, n, _ = _check_sample(rng, rounds, n, 0.0)
        u = rng.random((rounds, n))
        out = np.zeros((rounds, n), bool)
        if rounds == 0:
            return out
        state = u[0] < self.stationary if initial is None else np.asarray(initial, bool)
        if state.shape != (n,):
            raise ValueError(f"initial: expected shape ({n},), got {state.shape}")
        for t in range(rounds):
            if t:
                state = self.step(state, u[t])
            out[t] = state
        return out

    def step(self, state: np.ndarray, u: np.ndarray) -> np.ndarray:
        """One round of the chain: straggling stays with ``1 - p_S``, starts with ``p_N``
        (``u`` uniform draws, one per worker)."""
        return np.where(state, u >= self.p_S, u < self.p_N)


# ----------------------------------------------------------------------------- utilities
def identify_stragglers(times, mu: float) -> np.ndarray:
    """μ-rule of Sec. 2: with ``κ`` the fastest response time of a round, the workers not back
    by ``(1 + μ) κ`` are stragglers.  ``times (..., n)`` seconds (NaN or inf: never returned);
    returns a boolean array of the same shape.

    >>> identify_stragglers([1.0, 1.4, 2.5, np.nan], mu=0.5).tolist()   # back by 1.5 s or not
    [False, False, True, True]
    >>> identify_stragglers([[1.0, 3.0], [2.0, 2.1]], mu=0.1).tolist()  # one row per round
    [[False, True], [False, False]]
    """
    if not float(mu) >= 0:
        raise ValueError(f"mu: expected a tolerance mu >= 0, got {mu}")
    t = np.asarray(times, float)
    if t.ndim == 0 or t.shape[-1] == 0:
        raise ValueError(f"times: expected an array (..., n) with n >= 1, got shape {t.shape}")
    t = np.where(np.isnan(t), np.inf, t)
    kappa = t.min(-1, keepdims=True)
    return ~(t <= (1.0 + float(mu)) * kappa) | ~np.isfinite(t)   # (a round nobody returned)


def enumerate_patterns(model: StragglerModel, rounds: int, n: int,
                       max_patterns: int = 2_000_000) -> np.ndarray:
    """Every pattern ``(rounds, n)`` conforming to ``model``, as ``(count, rounds, n)`` (built
    round by round, each prefix extended by every allowed row).  For exhaustive tests.

    >>> P = enumerate_patterns(SPerRound(1), rounds=2, n=3)   # 4 allowed rows per round
    >>> P.shape, P[-1].astype(int).tolist()
    ((16, 2, 3), [[0, 0, 1], [0, 0, 1]])
    """
    rounds = check_int("rounds", rounds, minimum=0)
    n = check_int("n", n, minimum=1, maximum=16)
    rows = ((np.arange(1 << n)[:, None] >> np.arange(n)) & 1).astype(bool)   # (2^n, n)
    out = np.zeros((1, 0, n), bool)
    keep = model.window - 1
    for t in range(rounds):
        hist = out[:, max(0, t - keep):]                                   # (M, h, n)
        M, h = hist.shape[:2]
        blocks = np.concatenate([np.broadcast_to(hist[:, None], (M, rows.shape[0], h, n)),
                                 np.broadcast_to(rows[None, :, None], (M, rows.shape[0], 1, n))],
                                axis=2)
        prefix, row = np.nonzero(model._ok(blocks))
        if prefix.size > max_patterns:
            raise ValueError(f"max_patterns: {prefix.size} conforming prefixes of {t + 1} rounds "
                             f"exceed max_patterns={max_patterns}")
        out = np.concatenate([out[prefix], rows[row][:, None]], axis=1)
    return out
