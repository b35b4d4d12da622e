"""Codes given directly by their matrix ``B`` (e.g. a paper's worked example)."""

from __future__ import annotations

import numpy as np

from ._base import Code, check_int
from ._conflict import max_independent_set


class MatrixCode(Code):
    """Any linear code ``B``.  A sum code (all nonzeros 1) is decoded by the general
    conflict-graph decoder (a maximum independent set of ``G[W']``, exact for connected components
    up to ``EXACT_COMPONENT_LIMIT`` received workers); any other code by least squares."""

    name = "matrix"

    def __init__(self, B, s=None):
        B = np.asarray(B, dtype=float)
        if B.ndim != 2 or 0 in B.shape:
            raise ValueError(f"B: expected a non-empty 2-D matrix, got shape {B.shape}")
        if s is not None:
            self.s = check_int("s", s, minimum=0, maximum=B.shape[0] - 1)
        super().__init__(B, {"B": B.tolist(), "s": s})

    def _decode(self, received, rng):
        if not self.is_sum_code:
            return super()._decode(received, rng)
        chosen, _ = max_independent_set(self.conflict_graph, received, rng)
        w = np.zeros(self.n_workers)
        w[chosen] = 1.0
        return w


def from_matrix(B, s: int | None = None) -> MatrixCode:
    """A code from an explicit ``B`` (``s``: the stragglers it is known to tolerate, if any)."""
    return MatrixCode(B, s)
