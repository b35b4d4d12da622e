"""Paper 1, General Setup: the worked example ``A B = 1`` (``n = 3``, ``s = 1``), one row: checked
as printed and through gradcode, whose decoder must find the printed ``A`` (``theorems``; see
``tandon_common``)."""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import combinations

import numpy as np

from ...analysis import is_robust
from ...codes import from_matrix
from ._framework import Evidence, Tally, statement
from .tandon_common import RTOL, fmt_matrix, straggler_sets, weights_ok

#: the paper's example (General Setup), n = 3, s = 1, as printed
PAPER_A = [[0, 1, 2], [1, 0, 1], [2, -1, 0]]
PAPER_B = [[Fraction(1, 2), 1, 0], [0, 1, -1], [Fraction(1, 2), 0, 1]]


def example_tally(A, B, s: int) -> Tally:
    """``A B = 1_{f x n}`` in exact arithmetic, each row of ``A`` supported on a set of
    ``n - s`` workers and every such set one row's support (``f = C(n, n - s)``); a case: a row
    of ``A``, and the collection of supports.

    >>> t = example_tally(PAPER_A, PAPER_B, 1)
    >>> t.cases, t.failures
    (4, 0)
    """
    A = [[Fraction(x) for x in row] for row in A]
    B = [[Fraction(x) for x in row] for row in B]
    n = len(B)
    t = Tally()
    supports = set()
    for i, a in enumerate(A):
        ab = [sum(a[k] * B[k][j] for k in range(n)) for j in range(n)]
        supp = frozenset(k for k in range(n) if a[k] != 0)
        supports.add(supp)
        t.count(1, any(x != 1 for x in ab) or len(supp) > n - s, lambda: (
            f"row {i} of A: A_i B = {[str(x) for x in ab]}, support {sorted(supp)}"))
    wanted = {frozenset(I) for I in combinations(range(n), n - s)}
    t.count(1, len(A) != math.comb(n, n - s) or not supports >= wanted, lambda: (
        f"supports {sorted(map(sorted, supports))} != all {n - s}-subsets"))
    return t


def example_decodings(B, A, s: int) -> Tally:
    """gradcode on the example: ``from_matrix(B, s)`` decodes each straggler set with the row
    of ``A`` supported on the received workers (unique here: ``n - s`` independent rows), and
    ``is_robust(B, s)``.

    >>> example_decodings(PAPER_B, PAPER_A, 1).failures
    0
    """
    A = np.array([[float(Fraction(x)) for x in row] for row in A])
    Bf = np.array([[float(Fraction(x)) for x in row] for row in B])
    n = Bf.shape[0]
    code = from_matrix(Bf, s=s)
    t = Tally()
    for got in straggler_sets(n, s):
        (rows,) = np.nonzero(np.all((A != 0) <= got, axis=1))
        d = code.decode(np.flatnonzero(got))
        t.count(1, not (d.exact and weights_ok(d.weights, Bf, got) and rows.size
                        and np.allclose(d.weights, A[rows[0]], rtol=0, atol=RTOL)), lambda: (
            f"received {np.flatnonzero(got).tolist()}: gradcode's weights "
            f"{np.round(d.weights, 6).tolist()}, the paper's row "
            f"{A[rows[0]].tolist() if rows.size else None}"))
    t.count(1, not is_robust(Bf, s), "is_robust(B, s) is False")
    return t


@statement(1, "General Setup, example (n = 3, s = 1)",
           "the printed A = [[0, 1, 2], [1, 0, 1], [2, -1, 0]] and B = [[1/2, 1, 0], "
           "[0, 1, -1], [1/2, 0, 1]] satisfy A B = 1 (3 x 3), A's rows supported on the "
           "f = C(3, 2) sets of n - s = 2 workers")
def _example(ctx) -> Evidence:
    AB = [[str(sum(Fraction(a[k]) * PAPER_B[k][j] for k in range(3))) for j in range(3)]
          for a in PAPER_A]
    t = example_tally(PAPER_A, PAPER_B, 1).merge(example_decodings(PAPER_B, PAPER_A, 1))
    w = from_matrix([[float(x) for x in row] for row in PAPER_B], s=1).decode([1, 2]).weights
    return t.evidence(
        "as printed, in exact rational arithmetic: each row of A times B, and the supports of "
        "A's rows; and gradcode on the printed B (from_matrix, its own decoder) for the 3 "
        "straggler sets: its weights must be A's row supported on the received workers "
        "(1e-9), and analysis.is_robust(B, 1)",
        f"A B = {fmt_matrix(AB)}; without worker 0 (0-based) gradcode's weights "
        f"{np.round(w, 9).tolist()} = A's first row")
