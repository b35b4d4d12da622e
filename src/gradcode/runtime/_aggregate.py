"""Per-host aggregation, the host's side (issue 33; the contract: ``engine.Executor.combine``).

A host process holding several logical workers (a Ray actor, a torch process) keeps its
workers' coded vectors of the round (``Held.notice``) and sends the master a notice, the
``Result`` without its vectors; once the master has decoded, it asks for ``sum_i w_i m_i`` over
the vectors it uses (``Held.combine``), accumulated here in float64 and sent in the wire dtype,
or in float64 where the master decodes in float64 (``wide``: weights of both signs, or float32
rounding to bound: then a sum's residual is ``sum w e`` over its vectors' residuals, which the
master fetches per worker as it does for whole vectors, ``Loop._wire``).  Only the last round
started is kept (the master combines a round before it starts the next).

Where it pays (``holding``, the ``aggregate`` option: auto, on, off): the hosts' sums are one
more round trip per round, which saves the master the bytes of the vectors they replace.  Under
``auto`` a backend aggregates only where those bytes, ``sum_a (k_a - 1) * B`` over the hosts
``a`` holding ``k_a >= 2`` workers (messages of ``B`` bytes, every worker arrived), reach
``PAYS_FROM``: a round trip's cost over a byte's, measured per backend by
``benchmarks/bench_aggregate.py --measure`` (benchmarks/README.md).

>>> import numpy as np
>>> from gradcode.engine import Result
>>> held = Held()
>>> held.start(0)
>>> m = np.array([1.0, 2.0], np.float32)
>>> note = held.notice(Result(0, 3, [m, 2 * m], [0.5, 1.0]))
>>> note.coded, note.loss                        # what goes to the master
([None, None], [0.5, 1.0])
>>> s = held.combine(0, [(3, 0, 1.0), (3, 1, -0.25)], wide=False)
>>> s.tolist(), s.dtype
([0.5, 1.0], dtype('float32'))
>>> held.start(1)                                # round 0 forgotten
>>> held.combine(0, [(3, 0, 1.0)], wide=False)
Traceback (most recent call last):
...
LookupError: this host keeps no vector of round 0
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import replace

import numpy as np

from ..engine import Outcome


MIB = 1 << 20

#: bytes per round the hosts' sums must save for ``aggregate="auto"`` to aggregate, per backend
#: (module doc): a round trip over a byte's cost measured 0.4 MiB on torch on a quiet machine
#: (1 ms / 2.7 ns; up to 6 MiB loaded, with 16 ms round trips), 1.7 MiB on Ray (2.4 ms / 1.35 ns)
PAYS_FROM = {"torch": 1 * MIB, "ray": 2 * MIB}

#: the values of the ``aggregate`` option
MODES = ("auto", "on", "off")


def message_bytes(workers) -> int:
    """Bytes of one coded vector of the workers ``workers`` build (a ``GradientWorkers``: its
    trainable entries ``layout.P`` in its wire dtype); 0 where the factory does not say."""
    layout, dtype = getattr(workers, "layout", None), getattr(workers, "dtype", None)
    if layout is None or dtype is None:
        return 0
    return int(layout.P) * np.dtype(dtype).itemsize


def holding(owner: list, mode: str, size: int, pays_from: int = MIB) -> tuple[set, str]:
    """The hosts that keep their workers' vectors and send notices (``owner[i]`` the host of
    worker ``i``, messages of ``size`` bytes), and a line saying why: every host holding two or
    more workers under ``mode`` "on", none under "off", and under "auto" those where the bytes
    they save per round reach ``pays_from`` (module doc).

    >>> holding([0, 1, 0, 1, 2], "on", 100)[0]
    {0, 1}
    >>> holding([0, 1, 0, 1], "auto", 60_000)[0]          # 120 KB saved: not worth a round trip
    set()
    >>> hosts, why = holding([0, 1, 0, 1], "auto", 600_000)
    >>> hosts, why[:54]
    ({0, 1}, "aggregate auto: the hosts' sums save 1.1 MiB per round")
    """
    many = {a: k for a, k in sorted(Counter(owner).items()) if k > 1}
    saved = sum(k - 1 for k in many.values()) * size
    if mode == "off" or not many:
        return set(), ""
    if mode == "on":
        return set(many), ""
    if saved < pays_from:
        return set(), (f"aggregate auto: the hosts' sums would save {saved / MIB:.2g} MiB per "
                       f"round, less than the {pays_from / MIB:.2g} MiB that pay for a round "
                       f"trip: every worker sends its vector (aggregate on forces the sums)")
    return set(many), (f"aggregate auto: the hosts' sums save {saved / MIB:.2g} MiB per round, "
                       f"at least the {pays_from / MIB:.2g} MiB that pay for a round trip: "
                       f"{len(many)} hosts send notices, then one sum each")


class HostsAggregate:
    """``Executor.aggregate`` for a backend whose hosts hold several workers (Ray, torch): it
    sets ``holding``, the hosts that keep their vectors, from ``owner`` (worker -> host),
    ``mode`` (the ``aggregate`` option) and ``message_bytes`` (``holding``), and notes why."""

    def aggregate(self) -> bool:
        """Hosts holding several workers keep their vectors and send notices (``combine``),
        where the ``aggregate`` option says (``holding``)."""
        self.holding, why = holding(self.owner, self.mode, self.message_bytes,
                                    PAYS_FROM[self.name])
        if why:
            self.notes.append(why)
        return bool(self.holding)


def group_by_host(weights: dict, owner: list) -> dict[int, list]:
    """``weights`` (``(worker, k) -> w``) grouped by the host ``owner[worker]`` holding each
    vector: ``{host: [(worker, k, w), ...]}``, what the master asks each host to sum.

    >>> group_by_host({(0, 0): 0.5, (1, 0): 1.0, (2, 0): -1.0}, owner=[0, 1, 0])
    {0: [(0, 0, 0.5), (2, 0, -1.0)], 1: [(1, 0, 1.0)]}
    """
    out: dict[int, list] = {}
    for (i, k), w in weights.items():
        out.setdefault(owner[i], []).append((i, k, w))
    return out


class Held:
    """The coded vectors of one host's workers in the round under way (module doc);
    thread-safe."""

    def __init__(self, wire=None):
        self.wire = None if wire is None else np.dtype(wire)    # None: the vectors' own dtype
        self._lock = threading.Lock()
        self._round = -1
        self._vectors: dict[int, list] = {}      # worker -> its coded vectors of ``_round``

    def start(self, round: int) -> None:
        """Round ``round`` starts: the vectors of earlier rounds are forgotten."""
        with self._lock:
            if round > self._round:
                self._round, self._vectors = round, {}

    def notice(self, res):
        """``res`` as it goes to the master: an arrived result without its vectors (kept here
        if of the round under way); any other result as it is."""
        if res.status is not Outcome.ARRIVED or not any(v is not None for v in res.coded):
            return res
        with self._lock:
            if res.round == self._round:          # (a late one: the master drops it anyway)
                self._vectors[res.worker] = res.coded
        return replace(res, coded=[None] * len(res.coded))

    def combine(self, round: int, terms, wide: bool) -> np.ndarray:
        """``sum w m`` over ``terms`` (``(worker, k, w)`` each: mini-task ``k`` of the worker's
        vectors of ``round``), accumulated in float64; in float64 if ``wide``, else in the wire
        dtype (or the vectors')."""
        with self._lock:
            if round != self._round:
                raise LookupError(f"this host keeps no vector of round {round}")
            vectors = dict(self._vectors)
        acc, dtype = None, None
        for i, k, w in terms:
            if i not in vectors or k >= len(vectors[i]) or vectors[i][k] is None:
                raise LookupError(f"this host keeps no vector of worker {i} in round {round}")
            v = vectors[i][k]
            dtype = v.dtype
            if acc is None:
                acc = np.multiply(v, float(w), dtype=np.float64)
            else:
                acc += float(w) * v.astype(np.float64, copy=False)
        if acc is None:
            raise LookupError("combine: no vector asked for")
        out = np.dtype(np.float64) if wide else self.wire or dtype
        return acc if acc.dtype == out else acc.astype(out)
