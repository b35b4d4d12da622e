"""Exact recovered shares of paper 2's IS-GC codes by enumeration (Sec. V-VIII).

With i.i.d. delays the ``w`` fastest workers are a uniformly random ``w``-subset, so the
expected share recovered at ``w`` is the mean over all ``C(n, w)`` subsets of what the code's own
decoder recovers (``c alpha(G[W']) / n``, a maximum).  For the small codes of Fig. 12
(``n = 4``) and Fig. 13 (``n = 8``) every subset is enumerated: the numbers are exact fractions.
``fig12_candidates`` computes what could explain the paper's 99.6 % at ``w = 2`` (Fig. 12(a)).
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np


def shares(code) -> dict[frozenset, Fraction]:
    """Share of the data recovered by ``code.decode`` for every subset of arriving workers."""
    rng = np.random.default_rng(0)       # the decoder's tie-breaking; the share is a maximum
    P, n = code.n_partitions, code.n_workers
    return {frozenset(S): Fraction(round(code.decode(list(S), rng=rng).recovered_fraction * P),
                                   P)
            for w in range(n + 1) for S in itertools.combinations(range(n), w)}


def expected(table: dict, w: int, absent=()) -> Fraction:
    """Mean share of ``table`` (``shares``) over the ``w``-subsets avoiding ``absent`` (enduring
    stragglers that never arrive among the ``w`` fastest)."""
    vals = [v for S, v in table.items() if len(S) == w and not S & set(absent)]
    return sum(vals, Fraction(0)) / len(vals)


def expected_recovery(code, w: int, absent=()) -> Fraction:
    """Exact mean share recovered at ``w`` with i.i.d. delays (see ``expected``)."""
    return expected(shares(code), w, absent)


def monotone(table: dict) -> bool:
    """Whether one more arriving worker never lowers the share (every arrival order)."""
    return all(table[S] <= table[S | {x}] for S in table for x in range(max(map(len, table)))
               if x not in S)


def dominates(a: dict, b: dict) -> bool:
    """Whether ``a`` recovers at least what ``b`` does for every set of arriving workers."""
    return all(a[S] >= b[S] for S in a)


def partition_probs(code, w: int, absent=()) -> np.ndarray:
    """Per-partition probability of being in the decoded sum at ``w`` (i.i.d. delays, the
    decoder's choice uniform among the maximum independent sets of ``G[W']``)."""
    G = np.asarray(code.conflict_graph.toarray()) != 0
    sup = np.asarray(code.B) != 0
    pool = [i for i in range(code.n_workers) if i not in set(absent)]
    sets = list(itertools.combinations(pool, w))
    p = np.zeros(code.n_partitions)
    for S in sets:
        ind = [T for r in range(len(S), 0, -1) for T in itertools.combinations(S, r)
               if not G[np.ix_(T, T)].any()]
        best = [T for T in ind if len(T) == len(ind[0])]
        p += np.mean([sup[list(T)].any(axis=0) for T in best], axis=0) / len(sets)
    return p


def fig12_candidates(codes: dict, w: int = 2, target: float = 0.996) -> dict:
    """What the fastest-``w`` share of Fig. 12 is under each candidate reading (FR, CR codes in
    ``codes``): i.i.d. arrivals; one enduring straggler (every choice); two (every pair); every
    partition any received worker holds (counting the partial sums); least-squares decoding;
    the samples ever recovered after ``m`` passes over the data (coverage); and the share of
    steps whose fastest two must come from different FR groups to reach ``target``."""
    out = {}
    for name, code in codes.items():
        t = shares(code)
        n = code.n_workers
        sets = [S for S in t if len(S) == w]
        sup = np.asarray(code.B) != 0
        p_iid = partition_probs(code, w)
        p_end = partition_probs(code, w, absent=(n - 1,))
        out[name] = {
            "iid": expected(t, w),
            "enduring": sorted({expected(t, w, (a,)) for a in range(n)}),
            "two": {A: expected(t, w, A) for A in itertools.combinations(range(n), n - w)},
            "union": sum(Fraction(int(sup[list(S)].any(axis=0).sum()), code.n_partitions)
                         for S in sets) / len(sets),
            "lsq": float(np.mean([code.decode(list(S), method="optimal").recovered_fraction
                                  for S in sets])),
            "coverage_m": {tag: next((m for m in range(1, 50)
                                      if np.mean(1 - (1 - p) ** m) >= target), None)
                           for tag, p in (("iid", p_iid), ("enduring", p_end))},
            "coverage": {tag: [float(np.mean(1 - (1 - p) ** m)) for m in range(1, 6)]
                         for tag, p in (("iid", p_iid), ("enduring", p_end))},
        }
    lo, hi = Fraction(1, 2), Fraction(1)       # FR at w = 2: one group or both
    out["split_needed"] = (target - float(lo)) / float(hi - lo)
    return out
