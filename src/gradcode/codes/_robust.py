"""Condition 1 (paper 1, eq. 4; paper 3, (C1)): does ``B`` tolerate any ``s`` stragglers?

``1 in span{B_i : i in I}`` for every set ``I`` of ``n - s`` workers.  Used by
``analysis.is_robust`` and by ``from_matrix``, which refuses a declared ``s`` that ``B`` does not
tolerate (a wrong ``s`` would make the fast simulator report exact rounds the real run does not
decode).
"""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np

from ._base import optimal_weights

#: straggler sets checked exhaustively when there are at most this many
ROBUST_EXHAUSTIVE_LIMIT = 5000
#: relative tolerance of the least-squares residual in the span test
ROBUST_RTOL = 1e-8


def straggler_set_not_tolerated(B, s: int, limit: int, rng: np.random.Generator):
    """A set of ``s`` stragglers without which ``1`` is not in the span of the other rows of
    ``B`` (sparse), or None.  All ``C(n, s)`` sets when there are at most ``limit`` (None is
    then a proof), else ``limit`` sets drawn with ``rng`` (only sets of exactly ``s`` are
    needed: a superset of rows spans at least as much).  Span test: the min-norm least squares
    ``w`` of ``w B_I = 1``; ``1`` is in the span iff ``max |w B_I - 1| <= ROBUST_RTOL *
    max(1, sum_i |w_i| max_j |B_ij|)``.

    IS-GC's plain sums over CR with an odd ``n`` lose exactness without worker 0:

    >>> from gradcode import make_code
    >>> from gradcode.codes import straggler_set_not_tolerated
    >>> rng = np.random.default_rng(0)
    >>> straggler_set_not_tolerated(make_code("isgc-cr", n=5, c=2).B_sparse, 1, 100, rng)
    array([0])
    >>> print(straggler_set_not_tolerated(make_code("gc-cr", n=5, s=1).B_sparse, 1, 100, rng))
    None
    """
    n = B.shape[0]
    if math.comb(n, s) <= limit:
        sets = (np.array(S, dtype=int) for S in combinations(range(n), s))
    else:
        sets = (np.sort(rng.choice(n, size=s, replace=False)) for _ in range(limit))
    row_max = abs(B).max(axis=1).toarray().ravel()
    everyone = np.arange(n)
    for S in sets:
        w = optimal_weights(B, np.setdiff1d(everyone, S))
        residual = np.abs(np.asarray(w @ B).ravel() - 1.0).max()
        if residual > ROBUST_RTOL * max(1.0, float(np.abs(w) @ row_max)):
            return S
    return None
