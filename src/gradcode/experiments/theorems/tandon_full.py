"""Paper 1, Full Stragglers: condition (4) and the Theorem (lower bound on ``B``'s density),
checked by computation (``theorems``; see ``tandon_common``).

Remark on the Theorem: its hypothesis (equal row weights) is needed: ``B = [[1, 1, 1], [1, 1,
1], [1, 0, 0]]`` satisfies (4) for ``s = 1`` with a row of one non-zero; what holds for every
robust ``B`` is that each *column* has ``>= s + 1`` non-zeros.
"""

from __future__ import annotations

import math
from itertools import combinations, combinations_with_replacement

import numpy as np

from ...analysis import is_robust
from ...codes import from_matrix
from ._framework import Evidence, Tally, statement
from .tandon_common import cyclic_support, fmt_matrix, spans_ones, straggler_sets, weights_ok


# ------------------------------------------------------------------------------ condition (4)
def condition4_instances(rng: np.random.Generator, count: int, n_max: int):
    """Random ``(B, s)``, half sparse integer matrices (entries in -2..2), half ``B = G K``
    with integer ``G`` (``n x (n - s)``) and ``K`` whose first row is ``1`` (robust unless some
    ``n - s`` rows of ``G`` are singular), so both sides of the condition occur."""
    for k in range(count):
        n = int(rng.integers(2, n_max + 1))
        s = int(rng.integers(1, n))
        if k % 2:
            B = rng.choice([-2, -1, 1, 2], size=(n, n)) * (rng.random((n, n)) < rng.random())
        else:
            K = rng.integers(-1, 2, size=(n - s, n))
            K[0] = 1
            B = rng.integers(-3, 4, size=(n, n - s)) @ K
        yield B.astype(float), s


def condition4_tally(instances) -> tuple[Tally, int, int]:
    """For each ``(B, s)`` and each received set ``I``: condition (4) on ``B_I`` (rank, here)
    against gradcode's optimal decoder being exact with weights verified here (``w B = 1``,
    ``w`` zero off ``I``); and over all ``I`` against ``analysis.is_robust(B, s)``.
    ``(tally, robust B's, B's)``."""
    t = Tally()
    robust = total = 0
    for B, s in instances:
        n = B.shape[0]
        code = from_matrix(B)
        every = True
        for got in straggler_sets(n, s):
            held = bool(spans_ones(B[got])[()])
            d = code.decode(np.flatnonzero(got), method="optimal")
            found = d.exact and weights_ok(d.weights, B, got)
            every &= held
            t.count(1, held != found, lambda: (
                f"B = {fmt_matrix(B.astype(int))}, received {np.flatnonzero(got).tolist()}: "
                f"(4) {held}, A found {found}"))
        total += 1
        robust += every
        t.count(1, is_robust(B, s) != every,
                lambda: f"B = {fmt_matrix(B.astype(int))}, s = {s}: is_robust != (4) for all I")
    return t, robust, total


@statement(1, "Full Stragglers, condition (4)",
           "an A with A B = 1 (row i supported on a set I of n - s workers) exists iff "
           "1 in span{B_i : i in I} for every I with |I| = n - s")
def _condition4(ctx) -> Evidence:
    count, n_max = (120, 5) if ctx.quick else (1200, 7)
    t, robust, total = condition4_tally(
        condition4_instances(np.random.default_rng(ctx.seed), count, n_max))
    return t.evidence(f"{total} random B (n <= {n_max}, {robust} satisfying (4) for all I), "
                      "every received set I: (4) by rank (SVD) vs an A found by gradcode's "
                      "least-squares decoder (verified A_I B = 1), and is_robust",
                      f"{robust} of {total} B robust, the rest refused exactly where (4) fails")


# ------------------------------------------------------------------------------ the Theorem
def satisfies_4(Bs: np.ndarray, s: int) -> np.ndarray:
    """Condition (4) for every set of ``n - s`` rows, for each ``B`` of a stack ``(N, n, n)``.

    >>> fr = np.kron(np.eye(2), np.ones((2, 2)))          # FR, n = 4, s = 1
    >>> satisfies_4(np.stack([fr, np.eye(4)]), 1).tolist()
    [True, False]
    """
    Bs = np.asarray(Bs, float)
    n = Bs.shape[-2]
    ok = np.ones(Bs.shape[0], dtype=bool)
    for I in combinations(range(n), n - s):
        ok &= spans_ones(Bs[:, list(I), :])
    return ok


def supports_exhaustive(n: int, w: int):
    """Every ``(n, n)`` 0/1 pattern with ``w`` non-zeros per row, up to the order of the rows
    (a permutation of the workers keeps (4)): ``(N, n, n)``."""
    rows = np.zeros((math.comb(n, w), n), dtype=int)
    for k, c in enumerate(combinations(range(n), w)):
        rows[k, list(c)] = 1
    idx = np.array(list(combinations_with_replacement(range(len(rows)), n)))
    return rows[idx]


def density_violations(Bs: np.ndarray, s: int, bound: int | None = None) -> np.ndarray:
    """The Theorem's counterexamples in a stack of ``B``: equal row weights ``< bound``
    (``s + 1``) and condition (4) for ``s`` stragglers nonetheless (bool per ``B``)."""
    bound = s + 1 if bound is None else bound
    w = (np.asarray(Bs) != 0).sum(axis=2)
    equal = np.all(w == w[:, :1], axis=1)
    return equal & (w[:, 0] < bound) & satisfies_4(Bs, s)


@statement(1, "Full Stragglers, Theorem (lower bound on B's density)",
           "if all rows of B have the same number of non-zeros and B satisfies (4) for s "
           "stragglers, then ||B_i||_0 >= s + 1 for all i")
def _theorem(ctx) -> Evidence:
    rng = np.random.default_rng(ctx.seed)
    n_ex, n_rand, count = (4, 7, 100) if ctx.quick else (5, 10, 1000)
    t = Tally()

    def tally(Bs, s):
        t.add(density_violations(Bs, s),
              lambda k: f"s = {s}, B = {fmt_matrix(np.round(Bs[k], 3))} satisfies (4)")

    for n in range(2, n_ex + 1):
        for s in range(1, n):
            for w in range(1, s + 1):
                pattern = supports_exhaustive(n, w)
                tally(pattern, s)                                       # all values 1
                tally(pattern * rng.standard_normal(pattern.shape), s)   # generic values
    for _ in range(count):
        n = int(rng.integers(n_ex + 1, n_rand + 1))
        s = int(rng.integers(1, n))
        w = int(rng.integers(1, s + 1))
        B = np.zeros((n, n))
        for i in range(n):
            B[i, rng.choice(n, size=w, replace=False)] = rng.standard_normal(w)
        tally(B[None], s)
    return t.evidence(f"every support with w <= s non-zeros per row (up to row order) for n <= "
                      f"{n_ex}, with values 1 and with Gaussian values, and {count} random ones "
                      f"for n = {n_ex + 1}..{n_rand}: does any satisfy (4)? (rank test, every "
                      "set of n - s rows)", _theorem_typical())


def _theorem_typical() -> str:
    """CR's support with w = s = 2 (one short), n = 4, and a straggler set breaking (4)."""
    B = cyclic_support(4, 1)
    for got in straggler_sets(4, 2):
        if not spans_ones(B[got]):
            return (f"n = 4, s = 2, B = {fmt_matrix(B)}: without workers "
                    f"{np.flatnonzero(~got).tolist()} (0-based) partition "
                    f"{int(np.argmin(B[got].any(axis=0)))} is held by no one left")
    return ""
