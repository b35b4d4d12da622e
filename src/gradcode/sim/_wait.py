"""Wait policies: when the master stops waiting in a round (papers 2, 4, 5 and GC).

A policy maps the round's arrival times (``(n,)`` or ``(rounds, n)``) to the time the master stops;
the workers that arrived by then are the received set.  ``FirstOf`` combines policies (whichever
stops first).  ``UntilDecodable`` needs the code: it stops at the first arrival after which the
received set decodes exactly (or at the last arrival if it never does).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


class WaitPolicy:
    needs_code = False

    def stop(self, arrivals: np.ndarray, code=None) -> np.ndarray:
        """Stop time(s) for arrival times ``(..., n)`` known in advance (the virtual clock)."""
        raise NotImplementedError

    def online_stop(self, times: list[float], n: int, code=None, received=None) -> float:
        """Real time: the stop time implied by the arrivals so far (``times`` sorted, of the
        workers ``received``) if nobody else arrives first; ``inf`` while undetermined.  Agrees
        with ``stop`` on the full arrival vector."""
        raise NotImplementedError

    def wanted(self, arrived: int, n: int) -> int:
        """How many more arrivals the policy needs before it can stop other than by the clock:
        the real-time master waits for that many at once (``ray.wait(num_returns=...)``)."""
        return 1

    def check(self, n: int) -> "WaitPolicy":
        """ValueError if the policy cannot run with ``n`` workers; returns the policy."""
        return self

    def received(self, arrivals: np.ndarray, stop) -> np.ndarray:
        """Boolean mask of the workers received when the master stops at ``stop`` (arrays as in
        ``stop``): everyone arrived by then, unless the policy stops at a count (``Fastest``)."""
        return arrivals <= np.asarray(stop, float)[..., None]

    def __or__(self, other: "WaitPolicy") -> "WaitPolicy":
        return FirstOf((self, other))


@dataclass(frozen=True)
class All(WaitPolicy):
    """Wait for every worker (synchronous SGD, and a sequential scheme's wait-out)."""

    def stop(self, arrivals, code=None):
        return np.max(arrivals, axis=-1)

    def online_stop(self, times, n, code=None, received=None):
        return times[-1] if len(times) >= n else np.inf

    def wanted(self, arrived, n):
        return max(1, n - arrived)


@dataclass(frozen=True)
class Fastest(WaitPolicy):
    """Wait for the fastest ``w`` workers (paper 2's ``ray.wait`` for ``w``)."""
    w: int

    def check(self, n):
        if not 1 <= self.w <= n:
            raise ValueError(f"wait: fastest:w needs 1 <= w <= n = {n}, got w = {self.w}")
        return self

    def stop(self, arrivals, code=None):
        self.check(arrivals.shape[-1])
        return np.partition(arrivals, self.w - 1, axis=-1)[..., self.w - 1]

    def online_stop(self, times, n, code=None, received=None):
        self.check(n)
        return times[self.w - 1] if len(times) >= self.w else np.inf

    def received(self, arrivals, stop):
        """Exactly the first ``w`` arrivals (ties in arrival time broken by worker index), as
        ``ray.wait(num_returns=w)`` and the real-time master take them: everyone before
        ``stop`` and, of those arriving at ``stop``, the lowest indices (O(n) per round)."""
        stop = np.asarray(stop, float)[..., None]
        before, tied = arrivals < stop, arrivals == stop
        room = self.w - before.sum(axis=-1, keepdims=True)
        return before | (tied & (np.cumsum(tied, axis=-1) <= room))

    def wanted(self, arrived, n):
        return max(1, self.w - arrived)


@dataclass(frozen=True)
class Deadline(WaitPolicy):
    """Stop at ``seconds`` after the round starts (paper 5), or when all arrived before it."""
    seconds: float

    def stop(self, arrivals, code=None):
        return np.minimum(self.seconds, np.max(arrivals, axis=-1))

    def online_stop(self, times, n, code=None, received=None):
        return min(self.seconds, times[-1]) if len(times) >= n else self.seconds

    def wanted(self, arrived, n):
        return max(1, n - arrived)


@dataclass(frozen=True)
class MuRule(WaitPolicy):
    """Paper 4, Sec. 2: after the fastest worker (time kappa) wait ``mu * kappa`` more."""
    mu: float

    def stop(self, arrivals, code=None):
        return np.minimum((1 + self.mu) * np.min(arrivals, axis=-1), np.max(arrivals, axis=-1))

    def online_stop(self, times, n, code=None, received=None):
        if not times:
            return np.inf
        return min((1 + self.mu) * times[0], times[-1]) if len(times) >= n else (1 + self.mu) * times[0]

    def wanted(self, arrived, n):
        return max(1, n - arrived) if arrived else 1


@dataclass(frozen=True)
class UntilDecodable(WaitPolicy):
    """Wait until the received set decodes the full gradient exactly (GC's rule)."""
    needs_code = True

    def stop(self, arrivals, code=None):
        if code is None:
            raise ValueError("wait: 'decodable' needs the code")
        arrivals = np.asarray(arrivals, float)
        if arrivals.ndim == 2:
            return np.array([self.stop(a, code) for a in arrivals])
        order = np.argsort(arrivals, kind="stable")
        n = len(order)
        lo, hi = 1, n      # smallest k whose first k arrivals decode; n if none does
        if code.s is not None and not hasattr(code, "sender"):
            hi = n - code.s  # an exact code always decodes from n - s (not so for gc-partial,
            #                whose s counts machines and which needs every naive message)
        rng = np.random.default_rng(0)
        if hi > 1 and not code.decode(order[:hi - 1], rng=rng).exact:
            lo = hi        # the common case for exact codes: one decode settles it
        while lo < hi:
            mid = (lo + hi) // 2
            if code.decode(order[:mid], rng=rng).exact:
                hi = mid
            else:
                lo = mid + 1
        return arrivals[order[lo - 1]]

    def online_stop(self, times, n, code=None, received=None):
        if not times:
            return np.inf
        if len(times) >= n or code.decode(list(received), rng=np.random.default_rng(0)).exact:
            return times[-1]
        return np.inf


@dataclass(frozen=True)
class FirstOf(WaitPolicy):
    """Whichever of ``policies`` stops first (e.g. fastest w or a deadline)."""
    policies: tuple

    @property
    def needs_code(self):
        return any(p.needs_code for p in self.policies)

    def stop(self, arrivals, code=None):
        return np.min([p.stop(arrivals, code) for p in self.policies], axis=0)

    def received(self, arrivals, stop):
        """Those the policy (or policies) that stopped first would receive."""
        stop = np.asarray(stop, float)
        got = super().received(arrivals, stop)
        for p in self.policies:   # a policy stopping exactly then limits the set as it would
            if type(p).received is not WaitPolicy.received:
                mine = np.asarray(p.stop(arrivals), float) == stop
                got &= p.received(arrivals, stop) | ~mine[..., None]
        return got

    def online_stop(self, times, n, code=None, received=None):
        return min(p.online_stop(times, n, code, received) for p in self.policies)

    def wanted(self, arrived, n):
        return min(p.wanted(arrived, n) for p in self.policies)

    def check(self, n):
        for p in self.policies:
            p.check(n)
        return self

    def __or__(self, other):
        return FirstOf(self.policies + (other,))


WAIT_HELP = ("fastest:W (the fastest W workers), deadline:SECONDS, mu:MU (wait MU x the fastest "
             "time more), all, decodable (until the gradient decodes exactly); combine with '|' "
             "for whichever comes first, e.g. fastest:3|deadline:2.0")


def parse_wait(spec: str) -> WaitPolicy:
    """A policy from a short string, e.g. ``fastest:3``, ``deadline:2.0|fastest:6``."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"wait: expected a policy such as {WAIT_HELP}; got {spec!r}")
    parts = [p.strip() for p in spec.split("|")]
    policies = [_parse_one(p) for p in parts]
    return policies[0] if len(policies) == 1 else FirstOf(tuple(policies))


def _parse_one(spec: str) -> WaitPolicy:
    kind, _, arg = spec.partition(":")
    try:
        if kind == "all" and not arg:
            return All()
        if kind == "decodable" and not arg:
            return UntilDecodable()
        if kind == "fastest":
            w = int(arg)
            if w < 1:
                raise ValueError
            return Fastest(w)
        if kind == "deadline":
            d = float(arg)
            if not d > 0:
                raise ValueError
            return Deadline(d)
        if kind == "mu":
            mu = float(arg)
            if not mu >= 0:
                raise ValueError
            return MuRule(mu)
    except ValueError:
        raise ValueError(f"wait: bad value in {spec!r} (fastest takes an integer >= 1, deadline "
                         "seconds > 0, mu a number >= 0)") from None
    raise ValueError(f"wait: unknown policy {spec!r}; expected {WAIT_HELP}")
