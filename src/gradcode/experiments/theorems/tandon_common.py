"""Paper 1 (Tandon et al., Gradient Coding): what the checks of its sections share (``theorems``).

The paper (the poster text in ``papers/1-gradient-coding-tandon.md``) states: the worked example
``A B = 1`` for ``n = 3``, ``s = 1`` (``tandon_setup``); condition (4) (``1`` in the span of the
rows of ``B`` of any ``n - s`` workers) as necessary and sufficient for an ``A`` with ``A B =
1``, and the Theorem (lower bound on ``B``'s density: ``||B_i||_0 >= s + 1`` when all rows have
as many non-zeros) (``tandon_full``); the fractional repetition scheme (FR, Alg. 1, ``(s + 1) |
n``) and its figure (``n = 6``, ``s = 2``) (``tandon_fr``); the cyclic repetition scheme (CR,
eq. (5), Alg. 2: rows of ``B`` from the null space of a random ``s x n`` matrix ``H`` with ``H 1
= 0``, "always possible for any n and s") (``tandon_cr``); and the partial-straggler scheme
(naive + coded parts, its figure ``n = 3``, ``s = 1``, ``alpha = 2``) (``tandon_partial``).

Each statement is one row, checked where gradcode implements it both on the mathematical object
built with NumPy from the paper's description (the printed ``A`` and ``B``, FR's ``B``, Alg. 2's
``B`` from ``H``, the partial scheme's split) and on gradcode's public API (``make_code``,
``from_matrix``, ``analysis.is_robust``), which must equal it and whose decoders' weights are
verified here (``w B = 1``, ``w`` zero on the stragglers): one failure in either fails the row.
"""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np

from ._framework import Tally

#: relative tolerance of the float checks (``|w B - 1| <= RTOL max(1, sum_i |w_i| max|B_i|)``)
RTOL = 1e-9


def cyclic_support(n: int, s: int) -> np.ndarray:
    """eq. (5): ``(n, n)`` 0/1, row ``i`` non-zero on columns ``i, .., i + s`` (mod n).

    >>> cyclic_support(3, 1).tolist()              # the support of the example's B
    [[1, 1, 0], [0, 1, 1], [1, 0, 1]]
    """
    S = np.zeros((n, n), dtype=int)
    S[np.repeat(np.arange(n), s + 1), ((np.arange(n)[:, None] + np.arange(s + 1)) % n).ravel()] = 1
    return S


def fr_matrix(n: int, s: int) -> np.ndarray:
    """FR as the text describes it: ``n / (s + 1)`` groups of ``s + 1`` consecutive workers,
    each group holding the same ``s + 1`` partitions, every worker sending their plain sum.

    >>> fr_matrix(4, 1).tolist()
    [[1, 1, 0, 0], [1, 1, 0, 0], [0, 0, 1, 1], [0, 0, 1, 1]]
    """
    return np.kron(np.eye(n // (s + 1), dtype=int), np.ones((s + 1, s + 1), dtype=int))


def straggler_sets(n: int, s: int) -> np.ndarray:
    """``(C(n, s), n)`` bool: ``True`` for the ``n - s`` workers received, every set.

    >>> straggler_sets(3, 1).astype(int).tolist()
    [[0, 1, 1], [1, 0, 1], [1, 1, 0]]
    """
    got = np.ones((math.comb(n, s), n), dtype=bool)
    for k, S in enumerate(combinations(range(n), s)):
        got[k, list(S)] = False
    return got


def weights_ok(w: np.ndarray, B: np.ndarray, got: np.ndarray, rtol: float = RTOL) -> bool:
    """``w B = 1`` (to ``rtol`` relative to ``max(1, sum |w_i| max|B_i|)``) with ``w`` zero off
    the received workers ``got`` (bool).

    >>> weights_ok(np.array([1, 0, 1]), fr_matrix(4, 1)[:3], np.array([True, False, True]))
    True
    """
    w, B = np.asarray(w, float), np.asarray(B, float)
    scale = max(1.0, float(np.abs(w) @ np.abs(B).max(axis=1)))
    return bool(np.all(w[~got] == 0) and np.abs(w @ B - 1.0).max() <= rtol * scale)


def rank(M: np.ndarray) -> np.ndarray:
    """Numerical rank (SVD) of a matrix or a stack: singular values above ``RTOL`` times the
    largest (integer and generic matrices here are far from that threshold).

    >>> int(rank(fr_matrix(4, 1)))
    2
    """
    return np.linalg.matrix_rank(np.asarray(M, float), rtol=RTOL)


def spans_ones(M: np.ndarray) -> np.ndarray:
    """Condition (4) for a stack ``(..., r, n)`` of row sets: ``1`` in their row span, by
    numerical rank (``rank [M; 1] == rank M``); for small integer or generic matrices.

    >>> bool(spans_ones(np.array([[0.5, 1, 0], [0, 1, -1]])))
    True
    """
    M = np.asarray(M, float)
    ones = np.ones(M.shape[:-2] + (1, M.shape[-1]))
    return rank(M) == rank(np.concatenate([M, ones], -2))


def code_decodes(code, B: np.ndarray, s: int) -> Tally:
    """gradcode's own decoder of ``code`` on every set of ``n - s`` received workers: exact, with
    weights verified here against ``B`` (``w B = 1``, zero on the stragglers).

    >>> from gradcode import make_code
    >>> t = code_decodes(make_code("gc-fr", n=4, s=1), fr_matrix(4, 1), 1)
    >>> t.cases, t.failures
    (4, 0)
    """
    n = B.shape[0]
    t = Tally()
    for got in straggler_sets(n, s):
        d = code.decode(np.flatnonzero(got))
        t.count(1, not (d.exact and weights_ok(d.weights, B, got)), lambda: (
            f"{code!r}, received {np.flatnonzero(got).tolist()}: weights "
            f"{np.round(d.weights, 4).tolist()}, w B = {np.round(d.weights @ B, 4).tolist()}"))
    return t


def fmt_matrix(M) -> str:
    """A matrix as nested brackets.

    >>> fmt_matrix([[1, 0], [0, 1]])
    '[[1, 0], [0, 1]]'
    """
    return "[" + ", ".join("[" + ", ".join(str(x) for x in row) + "]" for row in M) + "]"


def fmt_float(x: float) -> str:
    """Three significant digits.

    >>> fmt_float(1 / 3)
    '0.333'
    """
    return f"{x:.3g}"
