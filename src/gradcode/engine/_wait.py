"""Wait policies: when the master stops waiting in a round (papers 2, 4, 5 and GC).

One definition per policy, told the arrivals so far: ``bound(t, decoded_at)`` is the time at
which the policy stops if nobody else arrives first, given the sorted arrival times ``t[..., :k]``
of the ``k`` workers back so far (``inf`` while undetermined); ``full(k)`` says that ``k``
arrivals are all the policy takes (``Fastest``: ``ray.wait(num_returns=w)``).  A round also ends
when every expected worker is back.  The engine's loop asks after every arrival; ``stop`` and
``received`` apply the same definition to whole rounds of known arrival times at once (the
vectorised simulator), so the two agree by construction.

``UntilDecodable`` needs to know whether the received set decodes: ``decoded_at`` is the number
of arrivals after which it first does (``k`` once the current set decodes; more than ``k`` while
it does not).  ``UntilCovered`` uses the same count for another condition: the received workers'
placement covers every partition.  A policy with ``needs_code`` says what its condition is twice,
``reached(scheme, planner, r, returned)`` for the loop (asked after every arrival) and
``reached_at(arrivals, code)`` for whole rounds (the count itself); ``FirstOf`` combines policies
(whichever stops first: the first arrival after which any of their conditions holds).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._covered import covers, first_covered
from ._rounds import stop_and_received

INF = np.inf


class WaitPolicy:
    """A wait policy (module docstring): a subclass defines ``bound`` and, where it takes at most
    so many arrivals, ``full``; ``stop`` and ``received`` then apply it to whole rounds.  One with
    ``needs_code`` is told ``decoded_at``, by default the count after which the received set
    decodes (``reached``, ``reached_at``: override both for another condition).

    >>> class SecondPlus(WaitPolicy):                # the second arrival, then 0.1 s more
    ...     def bound(self, t, decoded_at=None):
    ...         return t[..., 1] + 0.1 if t.shape[-1] >= 2 else np.inf
    >>> arrivals = np.array([0.3, 0.1, 0.35, 2.0])
    >>> stop = SecondPlus().stop(arrivals)
    >>> round(float(stop), 3), SecondPlus().received(arrivals, stop).tolist()
    (0.4, [True, True, True, False])
    >>> float((SecondPlus() | Deadline(0.2)).stop(arrivals))   # whichever stops first
    0.2
    """
    needs_code = False

    @property
    def needs_planner(self) -> bool:
        """Whether ``reached`` asks the planner (a sequential scheme under ``waitout='never'``
        cannot answer it): every policy that needs the code, unless it says otherwise."""
        return self.needs_code

    def reached(self, scheme, planner, r: int, returned) -> bool:
        """Whether the workers ``returned`` so far in round ``r`` meet the policy's condition
        (the loop's ``decoded_at``): by default, they decode (``planner.decodes``)."""
        return bool(planner.decodes(r, returned))

    def reached_at(self, arrivals: np.ndarray, code) -> np.ndarray:
        """Per round of arrival times ``(..., n)``, the number of arrivals after which the
        condition first holds (``n`` if never): by default ``first_decodable``."""
        return first_decodable(arrivals, code)

    def bound(self, t: np.ndarray, decoded_at=None):
        """Stop time given the sorted arrival times ``t (..., k)`` so far (``inf``: not yet)."""
        raise NotImplementedError

    def full(self, k: int) -> bool:
        """Whether ``k`` arrivals are as many as the policy takes."""
        return False

    def cap(self, n: int) -> int:
        """The most arrivals the policy takes out of ``n``."""
        return next((k for k in range(1, n) if self.full(k)), n)

    def wanted(self, arrived: int, n: int) -> int:
        """How many more arrivals the policy needs before it can stop other than by the clock:
        the real-time master waits for that many at once (``ray.wait(num_returns=...)``)."""
        return 1

    def check(self, n: int) -> "WaitPolicy":
        """ValueError if the policy cannot run with ``n`` workers; returns the policy."""
        return self

    def terms(self) -> list | None:
        """``bound`` as order terms of the round's arrivals, for the compiled whole-round pass
        (``engine._rounds``): ``("order", k)`` the ``k``-th earliest, ``("first", a)`` ``a``
        times the earliest, ``("const", seconds)``; the stop is their least and the last arrival.
        None where only ``bound`` says (a custom policy, ``UntilDecodable``)."""
        return None

    # ------------------------------------------------- whole rounds of known arrival times
    def stop(self, arrivals: np.ndarray, code=None) -> np.ndarray:
        """Stop time(s) for arrival times ``(..., n)`` known in advance (the virtual clock):
        ``bound`` on every arrival, or the last arrival if that comes first."""
        arrivals = np.asarray(arrivals, float)
        self.check(arrivals.shape[-1])
        t = np.sort(arrivals, axis=-1)
        dec = self.reached_at(arrivals, code) if self.needs_code else None
        return np.minimum(self.bound(t, dec), t[..., -1])

    def stop_received(self, arrivals: np.ndarray, code=None) -> tuple[np.ndarray, np.ndarray]:
        """``(stop, received)`` for rounds of arrival times ``(R, n)`` known in advance: one
        compiled pass per round where the policy has order ``terms``, else ``stop`` then
        ``received`` (the same numbers either way).

        >>> policy = Fastest(2) | Deadline(0.5)
        >>> stop, got = policy.stop_received(np.array([[0.3, 0.1, 2.0], [0.9, 0.6, 0.7]]))
        >>> stop.tolist(), got.astype(int).tolist()
        ([0.3, 0.5], [[1, 1, 0], [0, 0, 0]])
        """
        arrivals = np.asarray(arrivals, float)
        self.check(arrivals.shape[-1])
        terms = self.terms()
        if terms is None:
            stop = self.stop(arrivals, code)
            return stop, self.received(arrivals, stop)
        return stop_and_received(arrivals, terms, self.cap(arrivals.shape[-1]))

    def received(self, arrivals: np.ndarray, stop) -> np.ndarray:
        """Boolean mask of the workers received when the master stops at ``stop``: those arrived
        by then, at most ``cap`` of them in arrival order (ties broken by worker index)."""
        arrivals = np.asarray(arrivals, float)
        stop = np.asarray(stop, float)[..., None]
        got = arrivals <= stop
        cap = self.cap(arrivals.shape[-1])
        if cap < arrivals.shape[-1]:          # O(n): everyone before stop, then ties by index
            before, tied = arrivals < stop, arrivals == stop
            room = cap - before.sum(axis=-1, keepdims=True)
            got = before | (tied & (np.cumsum(tied, axis=-1) <= room))
        return got

    def __or__(self, other: "WaitPolicy") -> "WaitPolicy":
        return FirstOf((self, other))


def first_decodable(arrivals: np.ndarray, code) -> np.ndarray:
    """Per round, the smallest ``k`` whose first ``k`` arrivals (stable order) decode ``code``
    exactly, ``n`` if none does: ``UntilDecodable``'s ``decoded_at`` for whole rounds
    (``code.decodable_counts``: by the left null space of ``B`` where the code's decoder
    allows, else by decoding).

    >>> import gradcode
    >>> code = gradcode.make_code("gc-cr", n=4, s=1)        # any 3 workers decode
    >>> first_decodable(np.array([[0.4, 0.1, 0.2, 3.0], [0.1, 0.2, 0.3, 0.4]]), code).tolist()
    [3, 3]
    """
    if code is None:
        raise ValueError("wait: 'decodable' needs the code")
    return code.decodable_counts(arrival_order(np.asarray(arrivals, float)))


def arrival_order(arrivals: np.ndarray) -> np.ndarray:
    """``argsort(arrivals, axis=-1, kind="stable")``: the workers in arrival order, ties by
    worker index.  Rounds are sorted by introsort (several times faster than a stable sort of
    whole rounds) and only the rounds with a tie (or NaN) again, stably.

    >>> arrival_order(np.array([[0.3, 0.1, 0.3, 0.2], [0.5, 0.5, 0.5, 0.1]])).tolist()
    [[1, 3, 0, 2], [3, 0, 1, 2]]
    """
    if arrivals.ndim != 2:
        return np.argsort(arrivals, axis=-1, kind="stable")
    order = np.argsort(arrivals, axis=-1)
    t = np.sort(arrivals, axis=-1)        # arrivals[order]: a sort is quicker than the gather
    tied = np.flatnonzero(np.any((t[:, 1:] == t[:, :-1]) | np.isnan(t[:, 1:]), axis=-1))
    if tied.size:
        order[tied] = np.argsort(arrivals[tied], axis=-1, kind="stable")
    return order


@dataclass(frozen=True)
class All(WaitPolicy):
    """Wait for every worker (synchronous SGD, and a sequential scheme's wait-out).

    >>> float(All().stop([0.3, 0.1, 2.0]))
    2.0
    >>> All().stop([[0.3, 0.1, 2.0], [1.0, 0.5, 0.7]]).tolist()   # one stop time per round
    [2.0, 1.0]
    """

    def bound(self, t, decoded_at=None):
        return np.full(t.shape[:-1], INF) if t.ndim > 1 else INF

    def terms(self):
        return []

    def wanted(self, arrived, n):
        return max(1, n - arrived)


@dataclass(frozen=True)
class Fastest(WaitPolicy):
    """Wait for the fastest ``w`` workers (paper 2's ``ray.wait`` for ``w``).

    >>> arrivals = [0.3, 0.1, 2.0, 0.7]
    >>> float(Fastest(2).stop(arrivals)), Fastest(2).received(arrivals, 0.3).tolist()
    (0.3, [True, True, False, False])
    >>> Fastest(2).received([0.1, 0.1, 0.1, 0.9], 0.1).tolist()    # ties: lowest index first
    [True, True, False, False]
    """
    w: int

    def check(self, n):
        if not 1 <= self.w <= n:
            raise ValueError(f"wait: fastest:w needs 1 <= w <= n = {n}, got w = {self.w}")
        return self

    def bound(self, t, decoded_at=None):
        if t.shape[-1] < self.w:
            return np.full(t.shape[:-1], INF) if t.ndim > 1 else INF
        return t[..., self.w - 1]

    def terms(self):
        return [("order", self.w)]

    def full(self, k):
        return k >= self.w

    def wanted(self, arrived, n):
        return max(1, self.w - arrived)


@dataclass(frozen=True)
class Deadline(WaitPolicy):
    """Stop at ``seconds`` after the round starts (paper 5), or when all arrived before it.

    >>> [float(Deadline(d).stop([0.3, 0.1, 2.0])) for d in (1.0, 5.0)]
    [1.0, 2.0]
    >>> Deadline(1.0).received([0.3, 0.1, 2.0], 1.0).tolist()
    [True, True, False]
    """
    seconds: float

    def bound(self, t, decoded_at=None):
        return np.full(t.shape[:-1], float(self.seconds)) if t.ndim > 1 else float(self.seconds)

    def terms(self):
        return [("const", float(self.seconds))]

    def wanted(self, arrived, n):
        return max(1, n - arrived)


@dataclass(frozen=True)
class MuRule(WaitPolicy):
    """Paper 4, Sec. 2: after the fastest worker (time kappa) wait ``mu * kappa`` more.

    >>> arrivals = [0.15, 0.1, 2.0]                  # kappa = 0.1: stop at (1 + 1) * 0.1
    >>> float(MuRule(1.0).stop(arrivals)), MuRule(1.0).received(arrivals, 0.2).tolist()
    (0.2, [True, True, False])
    """
    mu: float

    def bound(self, t, decoded_at=None):
        if t.shape[-1] == 0:
            return np.full(t.shape[:-1], INF) if t.ndim > 1 else INF
        return (1 + self.mu) * t[..., 0]

    def terms(self):
        return [("first", 1 + self.mu)]

    def wanted(self, arrived, n):
        return max(1, n - arrived) if arrived else 1


def _at_count(t: np.ndarray, decoded_at):
    """The arrival time ``t[decoded_at - 1]`` of sorted times ``t (..., k)`` where
    ``decoded_at <= k``, else ``inf``: the ``bound`` of a policy that stops at a count.

    >>> _at_count(np.array([0.1, 0.2, 0.4]), 2), _at_count(np.array([0.1, 0.2]), 3)
    (0.2, inf)
    """
    k = t.shape[-1]
    if t.ndim == 1:
        return float(t[decoded_at - 1]) if decoded_at is not None and decoded_at <= k else INF
    dec = np.asarray(decoded_at)
    idx = np.clip(dec - 1, 0, max(k - 1, 0))
    val = np.take_along_axis(t, idx[..., None], -1)[..., 0] if k else np.full(dec.shape, INF)
    return np.where(dec <= k, val, INF)


@dataclass(frozen=True)
class UntilDecodable(WaitPolicy):
    """Wait until the received set decodes the full gradient exactly (GC's rule; for a
    sequential scheme: until the planner needs no wait-out).

    >>> import gradcode
    >>> code = gradcode.make_code("gc-cr", n=4, s=1)           # decodes from any 3 workers
    >>> float(UntilDecodable().stop([0.4, 0.1, 0.2, 3.0], code))
    0.4
    """
    needs_code = True

    def bound(self, t, decoded_at=None):
        return _at_count(t, decoded_at)


@dataclass(frozen=True)
class UntilCovered(WaitPolicy):
    """Wait until the received workers hold every partition between them (their
    ``placement``): what a code whose own decoder needs one holder of each partition waits for
    (``bcc``'s batches, fractional repetition's groups); for other codes the received set may
    cover everything and still not decode exactly.  A partition nobody holds: until the last.

    >>> import gradcode
    >>> code = gradcode.make_code("gc-fr", n=4, s=1)            # groups {0, 1} and {2, 3}
    >>> float(UntilCovered().stop([0.1, 0.2, 0.3, 3.0], code))  # workers 0 and 2 cover both
    0.3
    >>> parse_wait("covered")
    UntilCovered()
    """
    needs_code = True
    needs_planner = False

    def reached(self, scheme, planner, r, returned):
        return covers(scheme, planner.rows(returned))

    def reached_at(self, arrivals, code):
        return first_covered(arrivals, code)

    def bound(self, t, decoded_at=None):
        return _at_count(t, decoded_at)


@dataclass(frozen=True)
class FirstOf(WaitPolicy):
    """Whichever of ``policies`` stops first (e.g. fastest w or a deadline).

    >>> policy = Fastest(3) | Deadline(0.5)          # FirstOf((Fastest(3), Deadline(0.5)))
    >>> [float(policy.stop(t)) for t in ([0.1, 0.2, 0.3, 2.0], [0.1, 0.2, 1.0, 2.0])]
    [0.3, 0.5]
    """
    policies: tuple

    @property
    def needs_code(self):
        return any(p.needs_code for p in self.policies)

    @property
    def needs_planner(self):
        return any(p.needs_planner for p in self.policies)

    def reached(self, scheme, planner, r, returned):
        """Any condition of the policies that need the code (the first to hold stops)."""
        return any(p.reached(scheme, planner, r, returned) for p in self.policies
                   if p.needs_code)

    def reached_at(self, arrivals, code):
        return np.min([p.reached_at(arrivals, code) for p in self.policies if p.needs_code],
                      axis=0)

    def bound(self, t, decoded_at=None):
        return np.min([p.bound(t, decoded_at) for p in self.policies], axis=0)

    def terms(self):
        terms = [p.terms() for p in self.policies]
        return None if any(t is None for t in terms) else [x for t in terms for x in t]

    def full(self, k):
        return any(p.full(k) for p in self.policies)

    def wanted(self, arrived, n):
        return min(p.wanted(arrived, n) for p in self.policies)

    def check(self, n):
        for p in self.policies:
            p.check(n)
        return self

    def __or__(self, other):
        return FirstOf(self.policies + (other,))


WAIT_HELP = ("fastest:W (the fastest W workers), deadline:SECONDS, mu:MU (wait MU x the fastest "
             "time more), all, decodable (until the gradient decodes exactly), covered (until the "
             "received workers hold every partition); combine with '|' for whichever comes "
             "first, e.g. fastest:3|deadline:2.0")


def parse_wait(spec: str | WaitPolicy) -> WaitPolicy:
    """A policy from a short string, e.g. ``fastest:3``, ``deadline:2.0|fastest:6`` (a policy
    given as it is).

    >>> parse_wait("fastest:3")
    Fastest(w=3)
    >>> parse_wait("deadline:2.0|fastest:6")
    FirstOf(policies=(Deadline(seconds=2.0), Fastest(w=6)))
    >>> parse_wait("fastest:0")
    Traceback (most recent call last):
    ...
    ValueError: wait: bad value in 'fastest:0' (fastest takes an integer >= 1, ...)
    """
    if isinstance(spec, WaitPolicy):
        return spec
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
        if kind == "covered" and not arg:
            return UntilCovered()
        if kind == "fastest":
            w = int(arg)
            if w < 1:
                raise ValueError
            return Fastest(w)
        if kind == "deadline":
            d = float(arg)
            if not 0 < d < INF:
                raise ValueError
            return Deadline(d)
        if kind == "mu":
            mu = float(arg)
            if not 0 <= mu < INF:
                raise ValueError
            return MuRule(mu)
    except ValueError:
        raise ValueError(f"wait: bad value in {spec!r} (fastest takes an integer >= 1, deadline "
                         "finite seconds > 0, mu a finite number >= 0)") from None
    raise ValueError(f"wait: unknown policy {spec!r}; expected {WAIT_HELP}")
