"""The contract every single-round code keeps: a placement/encoding matrix B and a decoder.

Notation (papers 1-3, 5): ``n`` workers, ``k`` data partitions with partial gradients
``g_1..g_k``; worker ``i`` sends ``sum_j B[i, j] g_j``.  A decoder turns the set of workers that
answered (``received``) into weights ``w`` supported on it; the master's estimate is
``sum_i w_i coded_i = (w @ B) @ g``, exact when ``w @ B = 1``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, Iterable

import numpy as np
import scipy.sparse as sp

#: absolute tolerance on ``w @ B - 1`` (scaled by the size of the terms) for ``exact``
EXACT_RTOL = 1e-8


@dataclass(frozen=True)
class Decoding:
    """Result of ``Code.decode``: ``weights`` over workers, what they recover, whether exact."""

    weights: np.ndarray
    recovered: np.ndarray
    exact: bool
    method: str
    recovered_fraction: float = 0.0
    """Share of the dataset the estimate holds: ``partition_sizes @ clip(recovered, 0, 1)``."""

    @property
    def error(self) -> float:
        """Decoding error ``||w @ B - 1||^2`` (paper 5, eq. 2)."""
        return float(np.sum((self.recovered - 1.0) ** 2))


class Code:
    """A single-round gradient code: immutable, holding its matrix ``B`` (sparse internally).

    Subclasses set ``name`` and implement ``_decode(received, rng) -> weights`` (the scheme's own
    decoder from its paper); ``method="optimal"`` (least squares, paper 5 eq. 2) works for all.
    """

    name: str = "code"
    #: number of stragglers always tolerated exactly (None: not an exact code)
    s: int | None = None

    def __init__(self, B, params: dict[str, Any], partition_sizes=None):
        B = sp.csr_array(B, dtype=float)
        B.eliminate_zeros()
        B.sort_indices()
        self._B = B
        self.params = dict(params)
        k = B.shape[1]
        sizes = np.full(k, 1.0 / k) if partition_sizes is None else np.asarray(partition_sizes, float)
        sizes.setflags(write=False)
        self.partition_sizes = sizes

    # ----------------------------------------------------------------- structure
    @property
    def n_workers(self) -> int:
        return self._B.shape[0]

    @property
    def n_partitions(self) -> int:
        return self._B.shape[1]

    @property
    def B_sparse(self) -> sp.csr_array:
        """``B`` as a CSR sparse array (what decoders use; no dense matrix needed)."""
        return self._B

    @cached_property
    def B(self) -> np.ndarray:
        """Dense ``(n_workers, n_partitions)`` encoding matrix (read-only)."""
        dense = self._B.toarray()
        dense.setflags(write=False)
        return dense

    @cached_property
    def placement(self) -> tuple[np.ndarray, ...]:
        """Partitions held by each worker (the support of each row of ``B``)."""
        B = self._B
        return tuple(B.indices[B.indptr[i] : B.indptr[i + 1]].copy() for i in range(B.shape[0]))

    @cached_property
    def load(self) -> np.ndarray:
        """Normalized load per worker: fraction of the dataset it computes on (paper 4, eq. 1)."""
        return (self._B != 0).astype(float) @ self.partition_sizes

    @cached_property
    def max_coefficient(self) -> float:
        return float(np.abs(self._B.data).max()) if self._B.nnz else 0.0

    @cached_property
    def _row_max(self) -> np.ndarray:
        return abs(self._B).max(axis=1).toarray().ravel()

    @cached_property
    def conflict_graph(self):
        """Conflict graph (paper 2, Sec. V-A): workers ``i ~ j`` iff they hold a common partition."""
        from ._conflict import conflict_graph
        return conflict_graph(self._B)

    @property
    def is_sum_code(self) -> bool:
        """True when every worker sends a plain sum (all coefficients 1), as in IS-GC."""
        return bool(np.all(self._B.data == 1.0))

    def describe(self) -> dict[str, Any]:
        """A small dict from which ``make_code(**d)`` rebuilds this code."""
        return {"name": self.name, **self.params}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"make_code({self.name!r}, {args})"

    # ----------------------------------------------------------------- decoding
    def decode(self, received: Iterable[int], method: str | None = None,
               rng: np.random.Generator | None = None) -> Decoding:
        """Weights over the workers in ``received`` that best rebuild the full gradient.

        ``method=None`` uses the scheme's own decoder (falling back to the optimal one when an
        exact code misses more than ``s`` workers); ``method="optimal"`` minimises
        ``||w @ B - 1||^2`` over ``w`` supported on ``received`` (paper 5, eq. 2).
        Never fails: an empty ``received`` gives zero weights.
        """
        R = self._check_received(received)
        if method not in (None, "optimal"):
            raise ValueError(f"method: expected None or 'optimal', got {method!r}")
        if rng is None:
            rng = np.random.default_rng()
        elif not isinstance(rng, np.random.Generator):
            raise ValueError(f"rng: expected a numpy.random.Generator or None, got {type(rng).__name__}")
        if R.size == 0:
            w, used = np.zeros(self.n_workers), method or "empty"
        elif method == "optimal" or self._falls_back(R):
            w, used = optimal_weights(self._B, R), "optimal"
        else:
            w, used = self._decode(R, rng), self.name
        return self._result(w, used)

    def _falls_back(self, received: np.ndarray) -> bool:
        """Whether the scheme's decoder cannot serve ``received`` (an exact code missing > s)."""
        return self.s is not None and self.n_workers - received.size > self.s

    def _decode(self, received: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return optimal_weights(self._B, received)

    def _result(self, w: np.ndarray, method: str) -> Decoding:
        recovered = np.asarray(w @ self._B).ravel()
        scale = max(1.0, float(np.abs(w) @ self._row_max))
        exact = bool(np.all(np.abs(recovered - 1.0) <= EXACT_RTOL * scale))
        w.setflags(write=False)
        recovered.setflags(write=False)
        fraction = float(self.partition_sizes @ np.clip(recovered, 0.0, 1.0))
        return Decoding(w, recovered, exact, method, fraction)

    def _check_received(self, received) -> np.ndarray:
        try:
            R = np.asarray(list(received) if not isinstance(received, np.ndarray) else received)
        except TypeError:
            raise ValueError(f"received: expected an iterable of worker indices, got {received!r}")
        if R.dtype == bool and R.shape == (self.n_workers,):
            R = np.flatnonzero(R)
        if R.size and not np.issubdtype(R.dtype, np.integer):
            if not np.all(np.equal(np.mod(R, 1), 0)):
                raise ValueError(f"received: expected integer worker indices, got {R.tolist()}")
            R = R.astype(int)
        R = np.unique(R.astype(int).ravel())
        if R.size and (R[0] < 0 or R[-1] >= self.n_workers):
            bad = R[(R < 0) | (R >= self.n_workers)].tolist()
            raise ValueError(f"received: worker indices must be in [0, {self.n_workers - 1}], got {bad}")
        return R


def optimal_weights(B: sp.csr_array, received: np.ndarray) -> np.ndarray:
    """Least-squares decoding (paper 5, eq. 2): ``argmin_w ||w_R B_R - 1||^2``, min-norm ``w``.

    Dense LAPACK for moderate sizes; sparse LSQR beyond (no dense ``B`` is formed).
    """
    n, k = B.shape
    w = np.zeros(n)
    if received.size == 0:
        return w
    BR = B[received]
    if received.size * k <= 4_000_000:
        sol, *_ = np.linalg.lstsq(BR.toarray().T, np.ones(k), rcond=None)
    else:
        from scipy.sparse.linalg import lsqr
        sol = lsqr(BR.T.tocsr(), np.ones(k), atol=1e-12, btol=1e-12, iter_lim=10 * k)[0]
    w[received] = sol
    return w


def check_int(name: str, value, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """Validate an integer parameter; the error names the parameter, constraint and value."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise ValueError(f"{name}: expected an integer, got {value!r}")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name}: expected an integer >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name}: expected an integer <= {maximum}, got {value}")
    return value
