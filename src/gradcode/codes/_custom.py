"""Codes given directly by their matrix ``B`` (e.g. a paper's worked example)."""

from __future__ import annotations

import math
from functools import cached_property

import numpy as np
import scipy.sparse as sp

from ._base import EXACT_RTOL, Code
from ._checks import check_int, check_shares
from ._conflict import max_independent_set
from ._downdate import least_squares_factors, least_squares_recovery
from ._robust import ROBUST_EXHAUSTIVE_LIMIT, straggler_set_not_tolerated

#: straggler sets a declared ``s`` is checked on when there are too many for all of them
SAMPLED_SETS = 200


class MatrixCode(Code):
    """Any linear code ``B`` (``make_code("matrix", B=..., s=None, partition_sizes=None)``).

    ``s``: the stragglers it tolerates, if any: checked (Condition 1 over every set of ``s``
    stragglers when there are at most ``ROBUST_EXHAUSTIVE_LIMIT``, else over ``SAMPLED_SETS``
    random ones), a wrong one refused naming a set it does not survive;
    ``partition_sizes``: the fraction of the dataset in each partition (default equal).  A sum
    code (all nonzeros 1) is decoded exactly by least squares where it can be, else by the
    general conflict-graph decoder (a maximum-weight independent set of ``G[W']``, rows weighted
    by their share of the data, exact for connected components up to ``EXACT_COMPONENT_LIMIT``
    received workers); any other code by least squares.

    Paper 1's example (eq. 5): any 2 of the 3 workers decode.

    >>> from gradcode import make_code
    >>> code = make_code("matrix", B=[[0.5, 1, 0], [0, 1, -1], [0.5, 0, 1]], s=1)
    >>> code
    make_code('matrix', B=[[0.5, 1.0, 0.0], [0.0, 1.0, -1.0], [0.5, 0.0, 1.0]], s=1)
    >>> code.decode([0, 2]).weights.round(6).tolist()
    [1.0, 0.0, 1.0]
    """

    name = "matrix"
    examples = ({"B": [[1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1], [1, 0, 0, 1]]},
                {"B": [[1, 1, 0, 0], [1, 1, 0, 0], [0, 0, 1, 1], [0, 0, 1, 1]], "s": 1,
                 "partition_sizes": [0.1, 0.2, 0.3, 0.4]},
                {"B": [[0.5, 1, 0], [0, 1, -1], [2, 0, 1]]})

    def __init__(self, B, s=None, partition_sizes=None):
        B = _check_matrix(B)
        params = {"B": B.tolist(), "s": s}
        if s is not None:
            params["s"] = check_int("s", s, minimum=0, maximum=B.shape[0] - 1)
            self._set(s=params["s"])
        if partition_sizes is not None:
            partition_sizes = check_shares("partition_sizes", partition_sizes, B.shape[1],
                                           " (one per column of B)")
            params["partition_sizes"] = partition_sizes.tolist()
        super().__init__(B, params, partition_sizes=partition_sizes)
        if s is not None:
            self._check_s(params["s"])

    @property
    def decoder(self) -> str:
        """A sum code: exact where least squares is, else a maximum-weight conflict-free set."""
        return ("least squares where exact, else a maximum-weight conflict-free set of workers"
                if self.is_sum_code else "least-squares decoding")

    def _check_s(self, s: int) -> None:
        n = self.n_workers
        limit = ROBUST_EXHAUSTIVE_LIMIT if math.comb(n, s) <= ROBUST_EXHAUSTIVE_LIMIT \
            else SAMPLED_SETS
        S = straggler_set_not_tolerated(self.B_sparse, s, limit, np.random.default_rng(0))
        if S is not None:
            raise ValueError(f"s: B does not tolerate {s} stragglers: without workers "
                             f"{S.tolist()} the others' rows do not span the all-ones vector "
                             "(give the s it tolerates, or none)")

    @cached_property
    def _least_squares(self):
        """The full set's least-squares factors (``codes._downdate``), None where ``B`` has
        none (too large, or a rank that is not clear-cut)."""
        return least_squares_factors(self.B_sparse)

    def recovery_many(self, got):
        """Missing at most ``s``: exact (``Code.recovery_many``); else least squares by
        downdating the full set (``codes._downdate``: ``|D| x |D|`` systems, the left null
        space where ``B`` is rank-deficient) -- for a sum code without ``s`` only where it is
        exact (else the conflict-graph decoder runs); NaN where the decoder must run.

        >>> code = from_matrix([[1, 1, 0], [0, 1, 1], [1, 0, 1], [1, 1, 1]])
        >>> got = np.array([[1, 1, 1, 0], [1, 0, 0, 0]], bool)
        >>> frac, err, exact = code.recovery_many(got)
        >>> float(frac[0]), exact.tolist(), bool(np.isnan(frac[1]))    # round 1: the decoder's
        (1.0, [True, False], True)
        """
        got = self._check_got(got)
        frac, err, exact = super().recovery_many(got)
        f, todo = self._least_squares, np.isnan(frac)
        if f is not None and todo.any():
            frac[todo], err[todo], exact[todo] = least_squares_recovery(
                f, got[todo], self._row_max, self.partition_sizes, EXACT_RTOL,
                exact_only=self.is_sum_code and self.s is None)
        return frac, err, exact

    def _decode(self, received, rng):
        """A sum code: the received rows' least squares when it decodes exactly, else a
        maximum-weight independent set of ``G[W']`` (each row weighted by its share of the
        data: the most data recovered by 0/1 weights); any other code: least squares."""
        if not self.is_sum_code:
            return super()._decode(received, rng)
        exact = super()._decode(received, rng)
        if self._result(exact, "optimal").exact:
            return exact
        share = self.B_sparse @ self.partition_sizes
        chosen, _ = max_independent_set(self.conflict_graph, received, rng, weights=share)
        w = np.zeros(self.n_workers)
        w[chosen] = 1.0
        return w


def from_matrix(B, s: int | None = None, partition_sizes=None) -> MatrixCode:
    """A code from an explicit ``B`` (``s``: the stragglers it is known to tolerate, if any;
    ``partition_sizes``: the share of the dataset in each partition, default equal).  The same as
    ``make_code("matrix", B=B, s=s, partition_sizes=partition_sizes)``.

    Paper 1's example (``n = 3``, ``s = 1``): without worker 2 the master computes
    ``2 l_0 - l_1``, without worker 0 ``l_1 + 2 l_2`` (the rows of its matrix ``A``).

    >>> from gradcode import from_matrix
    >>> code = from_matrix([[0.5, 1, 0], [0, 1, -1], [0.5, 0, 1]], s=1)
    >>> code.decode([0, 1]).weights.round(3).tolist()
    [2.0, -1.0, 0.0]
    >>> d = code.decode([1, 2])
    >>> d.weights.round(3).tolist(), d.exact
    ([0.0, 1.0, 2.0], True)
    >>> from_matrix([[1, 0], [0, 1]], s=1)
    Traceback (most recent call last):
    ...
    ValueError: s: B does not tolerate 1 stragglers: without workers [0] ...
    """
    return MatrixCode(B, s, partition_sizes)


def _check_matrix(B) -> np.ndarray:
    if sp.issparse(B):
        B = B.toarray()
    try:
        B = np.array(B, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"B: expected a 2-D matrix of numbers, got {B!r}") from None
    if B.ndim != 2 or 0 in B.shape:
        raise ValueError(f"B: expected a non-empty 2-D matrix, got shape {B.shape}")
    if not np.all(np.isfinite(B)):
        raise ValueError("B: expected finite entries, got non-finite ones")
    return B
