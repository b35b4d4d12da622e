"""The contract every single-round code keeps: a placement/encoding matrix B and a decoder.

Notation (papers 1-3, 5): ``n`` workers, ``k`` data partitions with partial gradients
``g_1..g_k``; worker ``i`` sends ``sum_j B[i, j] g_j``.  A decoder turns the set of workers that
answered (``received``) into weights ``w`` supported on it; the master's estimate is
``sum_i w_i coded_i = (w @ B) @ g``, exact when ``w @ B = 1``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Iterable

import numpy as np
import scipy.sparse as sp

from ._checks import EXACT_RTOL, Immutable, check_int, check_rng, readonly


@dataclass(frozen=True)
class Decoding:
    """Result of ``Code.decode``: ``weights`` over workers, what they recover, whether exact.

    IS-GC over CR (paper 2) with workers 0, 3, 4 received: workers 0 and 4 do not conflict, so
    their plain sums add up to 4 of the 8 partial gradients.

    >>> from gradcode import make_code
    >>> d = make_code("isgc-cr", n=8, c=2).decode([0, 3, 4])
    >>> d.weights.tolist()
    [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]
    >>> d.recovered.tolist()
    [1.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0]
    >>> d.exact, d.method, d.recovered_fraction, d.error
    (False, 'isgc-cr', 0.5, 4.0)
    """

    weights: np.ndarray
    recovered: np.ndarray
    exact: bool
    method: str
    recovered_fraction: float = 0.0
    """Share of the dataset the estimate holds: ``partition_sizes @ clip(recovered, 0, 1)``, and
    exactly 1.0 when ``exact``."""
    sliced_error: float | None = None
    """A code with ``slices = m > 1`` (``weights`` is ``(n_workers, m)``): its ``error``, the mean
    over slices ``u`` of ``||W[:, u] E - e_u (x) 1||^2``; None for every other code."""

    @property
    def error(self) -> float:
        """Decoding error ``||w @ B - 1||^2`` (paper 5, eq. 2); ``sliced_error`` where set."""
        if self.sliced_error is not None:
            return self.sliced_error
        return float(np.sum((self.recovered - 1.0) ** 2))


class Code(Immutable):
    """A single-round gradient code: immutable, holding its matrix ``B`` (sparse internally).

    The scheme protocol every ``make_code`` result keeps (sequential schemes too):
    ``n_workers`` (messages, the rows of ``B``), ``sender`` (the machine sending each message:
    the identity except for ``gc-partial``), ``n_machines``, ``partition_sizes``, ``load``,
    ``T`` (0: job ``t`` is decoded in round ``t``), ``params``/``describe()`` and
    ``planner(jobs)``.  Single-round codes add ``B`` and ``decode(received, method, rng)``.

    Subclasses set ``name`` and implement ``_decode(received, rng) -> weights`` (the scheme's own
    decoder from its paper); ``method="optimal"`` (least squares, paper 5 eq. 2) works for all.
    Their constructors set attributes with ``self._set(...)`` before calling ``Code.__init__``.

    >>> from gradcode import make_code
    >>> code = make_code("gc-cr", n=8, s=2)      # Tandon's cyclic repetition (paper 1)
    >>> code.n_workers, code.n_partitions, code.s, code.load.tolist()[:2]
    (8, 8, 2, [0.375, 0.375])
    >>> code.decode([0, 1, 2, 4, 5, 7]).exact    # workers 3 and 6 straggled
    True
    >>> make_code(**code.describe()).B.tolist() == code.B.tolist()
    True

    A minimal subclass: every worker holds the whole dataset (one partition), any one suffices.

    >>> from gradcode.codes import Code
    >>> class Replicate(Code):
    ...     name = "replicate"
    ...     def __init__(self, n):
    ...         super().__init__(np.ones((n, 1)), {"n": n})
    ...     def _decode(self, received, rng):
    ...         return np.isin(np.arange(self.n_workers), received[:1]).astype(float)
    >>> Replicate(3).decode([1, 2]).weights.tolist()
    [0.0, 1.0, 0.0]
    """

    name: str = "code"
    #: named alternative decoders besides None (the scheme's own) and "optimal", e.g. a paper's
    #: algorithm as printed where ours differs (``decode(received, method=name)``)
    methods: tuple[str, ...] = ()
    #: number of stragglers always tolerated exactly (None: not an exact code)
    s: int | None = None
    #: decoding delay in rounds (paper 4): a single-round code decodes job t in round t
    T: int = 0
    #: wait-out rules (``gradcode.protocol.WaitOut``): none, every round stands alone
    waitout_rules: tuple = ()
    #: the scheme's own decoder in words (``gradcode code`` prints it)
    decoder: str = "least-squares decoding"
    #: ``(SPEC, why)``: the wait policy the scheme was designed for, where its kind does not say
    #: (``engine.design_wait``: exact codes wait until decodable, the others the fastest few)
    own_wait: tuple | None = None
    #: small parameter sets of this scheme (the contract suites run every registered scheme
    #: on each; a new scheme is covered by giving its own)
    examples: tuple[dict, ...] = ()
    #: slices each message's gradient is cut into (``gradcode.protocol.Scheme.slices``): every
    #: message is a coded vector of length ``ceil(l / slices)``; 1 (the whole gradient) here,
    #: ``m`` for ``comm-efficient``, whose ``decode`` gives ``(n_workers, m)`` weights
    slices: int = 1
    #: whether ``decode(R).exact`` says whether ``1`` is in the row space of ``B_R`` (within the
    #: decoder's tolerance): the own decoder is least squares, or exact wherever least squares
    #: is.  ``decodable_counts`` then tests received sets by the left null space of ``B``
    #: (``codes._span``) instead of decoding them
    span_decodes: bool = False

    def __init__(self, B, params: dict[str, Any], partition_sizes=None):
        B = sp.csr_array(B, dtype=float)
        B.eliminate_zeros()
        B.sort_indices()
        k = B.shape[1]
        sizes = np.full(k, 1.0 / k) if partition_sizes is None else np.array(partition_sizes, float)
        self._set(_B=readonly(B), _params=dict(params),
                  partition_sizes=readonly(sizes))

    # ----------------------------------------------------------------- structure
    @property
    def params(self) -> dict[str, Any]:
        """The constructor's parameters (a copy: changing it changes nothing here)."""
        return _copied(self._params)

    @property
    def n_workers(self) -> int:
        """Messages per round, the rows of ``B`` (one per worker except for ``gc-partial``)."""
        return self._B.shape[0]

    @property
    def n_partitions(self) -> int:
        return self._B.shape[1]

    @cached_property
    def sender(self) -> np.ndarray:
        """``(n_workers,)``: the machine sending each message (row of ``B``); the identity."""
        return readonly(np.arange(self.n_workers))

    @cached_property
    def n_machines(self) -> int:
        """Machines computing: ``sender.max() + 1``."""
        return int(self.sender.max()) + 1 if self.sender.size else 0

    @property
    def B_sparse(self) -> sp.csr_array:
        """``B`` as a CSR sparse array (what decoders use; no dense matrix needed; read-only)."""
        return self._B

    @cached_property
    def B(self) -> np.ndarray:
        """Dense ``(n_workers, n_partitions)`` encoding matrix (read-only)."""
        return readonly(self._B.toarray())

    @cached_property
    def placement(self) -> tuple[np.ndarray, ...]:
        """Partitions held by each worker (the support of each row of ``B``)."""
        B = self._B
        return tuple(readonly(B.indices[B.indptr[i] : B.indptr[i + 1]].copy())
                     for i in range(B.shape[0]))

    @cached_property
    def coefficient_rows(self) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
        """Per message ``(partitions int64, coefficients)``: what it computes (read-only), the
        rows of ``B`` -- ``(d,)`` coefficients, or ``(d, slices)`` for a sliced code."""
        B = self._B
        return tuple((readonly(B.indices[B.indptr[i]:B.indptr[i + 1]].astype(np.int64)),
                      readonly(B.data[B.indptr[i]:B.indptr[i + 1]].copy()))
                     for i in range(B.shape[0]))

    @cached_property
    def load(self) -> np.ndarray:
        """Normalized load per message: fraction of the dataset it is computed on (paper 4,
        eq. 1); ``(n_workers,)``, read-only."""
        return readonly((self._B != 0).astype(float) @ self.partition_sizes)

    @cached_property
    def machine_load(self) -> np.ndarray:
        """Normalized load per machine ``(n_machines,)``: ``load`` summed over its messages."""
        return readonly(np.bincount(self.sender, weights=self.load, minlength=self.n_machines))

    @cached_property
    def max_coefficient(self) -> float:
        return float(np.abs(self._B.data).max()) if self._B.nnz else 0.0

    @cached_property
    def _B_T(self) -> sp.csc_array:
        """``B^T`` (CSC, on ``B``'s arrays): ``w @ B`` is SciPy's ``(B^T @ w^T)^T``, the
        transpose built anew on each call (22 us against 3 us at n = 24) but for this one."""
        return self._B.T

    @cached_property
    def _row_max(self) -> np.ndarray:
        return abs(self._B).max(axis=1).toarray().ravel()

    @cached_property
    def conflict_graph(self):
        """Conflict graph (paper 2, Sec. V-A): workers ``i ~ j`` iff they hold a common partition."""
        from ._conflict import conflict_graph
        return readonly(conflict_graph(self._B))

    @property
    def is_sum_code(self) -> bool:
        """True when every worker sends a plain sum (all coefficients 1), as in IS-GC."""
        return bool(np.all(self._B.data == 1.0))

    def describe(self) -> dict[str, Any]:
        """A small dict from which ``make_code(**d)`` rebuilds this code."""
        return {"name": self.name, **self.params}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self._params.items())
        return f"make_code({self.name!r}, {args})"

    def planner(self, jobs: int, waitout: str | None = None, *, decode_seed: int = 0,
                shuffle_rng: np.random.Generator | None = None):
        """The ``T = 0`` round planner for ``jobs`` jobs (``codes._planner.RoundPlanner``): job
        ``t`` is computed in round ``t`` by every worker and decoded by the code's own decoder,
        ties broken by ``decode_rng(decode_seed, t)``; ``shuffle_rng`` draws paper 5's row
        permutation each round.  No wait-out rule: ``waitout`` must be None.
        (``gradcode.sequential.single_round(code)`` replays a code as a sequential scheme.)"""
        if waitout is not None:
            raise ValueError(f"waitout: only sequential schemes have a wait-out rule; "
                             f"{self.name!r} is a single-round code, got waitout={waitout!r}")
        from ._planner import RoundPlanner
        return RoundPlanner(self, check_int("jobs", jobs, minimum=1),
                            check_int("decode_seed", decode_seed, minimum=0), shuffle_rng)

    def decodable_counts(self, order) -> np.ndarray:
        """Per arrival order (a row of ``order``: the workers, first arrival first), the
        smallest ``k`` whose first ``k`` workers decode exactly (``decode(order[:k]).exact``),
        ``n`` if none: the ``decodable`` wait policy's count.  A code with ``span_decodes``
        grows the set of missing workers from the last arrival on the left null space of ``B``
        (``codes._span``: ``O(t^2)`` a worker, ``t = n - rank B``; the decoder settles a round
        within rounding of its tolerance); any other bisects ``decode`` over ``k``.

        >>> from gradcode import make_code
        >>> code = make_code("gc-cr", n=6, s=2)            # any 4 of the 6 workers decode
        >>> code.decodable_counts([[5, 4, 3, 2, 1, 0], [0, 1, 2, 3, 4, 5]]).tolist()
        [4, 4]
        >>> make_code("bgc", n=6, d=2, seed=1).decodable_counts([0, 1, 2, 3, 4, 5])
        6
        """
        order = np.asarray(order, np.int64)
        rows = np.atleast_2d(order)
        if rows.ndim != 2 or rows.shape[1] != self.n_workers:
            raise ValueError(f"order: expected rows of {self.n_workers} worker indices, got "
                             f"shape {order.shape}")
        from ._span import searched_counts
        test = self._span_test
        counts = searched_counts(self, rows) if test is None else test.counts(rows, self.decode)
        return counts if order.ndim == 2 else int(counts[0])

    @cached_property
    def _span_test(self):
        """``codes._span.SpanTest`` of this code: None without ``span_decodes`` or where ``B``
        has no clear-cut null space (then ``decodable_counts`` decodes)."""
        if not self.span_decodes:
            return None
        from ._span import SpanTest, null_space
        f = null_space(self.B)
        s_free = self.s if self.s is not None and self.n_machines == self.n_workers else 0
        return None if f is None else SpanTest(f, self._row_max, EXACT_RTOL, s_free)

    # ----------------------------------------------------------------- decoding
    @property
    def least_squares_decode(self) -> bool:
        """Whether ``decode`` is ``Code.decode`` (dense least squares, ``optimal_weights``), not
        a code's own decoder: ``decodable_counts`` may then rule short prefixes out by a bound.

        >>> from gradcode import make_code
        >>> make_code("bgc", n=6, d=2, seed=1).least_squares_decode
        True
        """
        return type(self).decode is Code.decode

    def decode(self, received: Iterable[int], method: str | None = None,
               rng: np.random.Generator | None = None) -> Decoding:
        """Weights over the workers in ``received`` that best rebuild the full gradient.

        ``method=None`` uses the scheme's own decoder (falling back to the optimal one when an
        exact code misses more than ``s`` workers); ``method="optimal"`` minimises
        ``||w @ B - 1||^2`` over ``w`` supported on ``received`` (paper 5, eq. 2).
        Never fails: an empty ``received`` gives zero weights.  ``rng`` breaks ties between
        equally good decodings (IS-GC's maximum independent sets); without it a fixed stream
        (``numpy.random.default_rng(0)``) does, so the same call always decodes the same way.
        """
        R = self._check_received(received)
        if method not in (None, "optimal", *self.methods):
            raise ValueError(f"method: expected one of {[None, 'optimal', *self.methods]}, "
                             f"got {method!r}")
        rng = check_rng(rng)
        if R.size == 0:
            w, used = np.zeros(self.n_workers), method or "empty"
        elif method == "optimal" or (method is None and self._falls_back(R)):
            w, used = optimal_weights(self._B, R), "optimal"
        elif method is not None:
            w, used = self._decode_method(method, R, rng), method
        else:
            w, used = self._decode(R, rng), self.name
        return self._result(w, used)

    def recovery_many(self, got) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(recovered_fraction, decode_error, exact)`` of ``decode`` for each row of ``got``
        (``(rounds, n_workers)`` bool: the messages received), vectorised where the outcome has a
        closed form; NaN fraction and error (exact False) where the decoder must run.

        Here: an exact code (``s`` set, one message per machine) missing at most ``s`` recovers
        everything; subclasses add their own closed forms (IS-GC's ``c alpha(G[W'])``)."""
        got = self._check_got(got)
        frac, err, exact = _unknown(got.shape[0])
        if self.s is not None and self.n_machines == self.n_workers:
            ok = self.n_workers - np.count_nonzero(got, axis=1) <= self.s
            frac[ok], err[ok], exact[ok] = 1.0, 0.0, True
        return frac, err, exact

    def _check_got(self, got) -> np.ndarray:
        got = np.asarray(got)
        if got.dtype != bool or got.ndim != 2 or got.shape[1] != self.n_workers:
            raise ValueError(f"got: expected a boolean (rounds, {self.n_workers}) array, got "
                             f"{got.dtype} of shape {got.shape}")
        return got

    def _falls_back(self, received: np.ndarray) -> bool:
        """Whether the scheme's decoder cannot serve ``received`` (an exact code missing > s)."""
        return self.s is not None and self.n_workers - received.size > self.s

    def _decode(self, received: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return optimal_weights(self._B, received)

    def _decode_method(self, method: str, received: np.ndarray,
                       rng: np.random.Generator) -> np.ndarray:
        raise NotImplementedError(method)       # only reached for a name in ``methods``

    def _result(self, w: np.ndarray, method: str) -> Decoding:
        recovered = np.asarray(self._B_T @ w.T).T.ravel()           # w @ B
        exact = bool(exact_within(recovered - 1.0, float(np.abs(w) @ self._row_max)))
        readonly(w)
        readonly(recovered)
        fraction = 1.0 if exact else float(self.partition_sizes @ np.clip(recovered, 0.0, 1.0))
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


def _copied(x):
    """A deep copy of parameters: JSON-like lists and dicts copied level by level (a matrix
    code's ``B`` as nested lists: ``copy.deepcopy`` takes 200x longer), anything else deep-copied."""
    if isinstance(x, list):
        if all(isinstance(v, (int, float, str, bool)) for v in x):
            return list(x)
        return [_copied(v) for v in x]
    if isinstance(x, dict):
        return {k: _copied(v) for k, v in x.items()}
    if isinstance(x, (int, float, str, bool, type(None))):
        return x
    return copy.deepcopy(x)


def exact_within(residual, weight_mass):
    """The one exactness rule of every decoder: ``|w B - 1| <= EXACT_RTOL max(1, |w| rowmax(B))``
    entrywise.  ``residual (..., k)`` (``w B - 1``), ``weight_mass (...)`` (``|w| @ rowmax``);
    True/False per leading index.

    >>> near, far = np.array([1e-12, -1e-12]), np.array([1e-6])
    >>> bool(exact_within(near, 3.0)), bool(exact_within(far, 1.0))
    (True, False)
    """
    tol = EXACT_RTOL * np.maximum(1.0, np.asarray(weight_mass, float))
    return np.all(np.abs(residual) <= tol[..., None], axis=-1)


def scaled_sum_recovery(code: Code, got: np.ndarray, scale: np.ndarray):
    """``recovery_many``'s closed form for a decoder that scales the received sum,
    ``w = scale_t 1_R`` in round ``t`` (``scale``: one per row of ``got``): partition ``j``
    recovers ``scale_t`` times its received holders' coefficients (``weights_recovery``).

    >>> from gradcode import make_code
    >>> code = make_code("expander", n=4, d=3)          # K_4: B = (J - I) / 3
    >>> got = np.array([[1, 1, 1, 1], [1, 1, 1, 0]], bool)
    >>> frac, err, exact = scaled_sum_recovery(code, got, np.array([4 / 4, 4 / 3]))
    >>> frac.round(6).tolist(), err.round(6).tolist(), exact.tolist()
    ([1.0, 0.916667], [0.0, 0.148148], [True, False])

    Compiled (``codes._downdate.scaled_sum_rounds``): the column sums less the missing rows
    where few are missing; a round whose exactness is within a hair of the tolerance is NaN
    (the decoder decides).
    """
    from ._downdate import scaled_sum_rounds
    return scaled_sum_rounds(code.B_sparse, got, scale, code._row_max, code.partition_sizes,
                             EXACT_RTOL)


def weights_recovery(code: Code, W: np.ndarray):
    """``recovery_many``'s answer for decoding weights ``W`` (one row per round): recovered
    ``W B``; exact, fraction and error as ``decode`` says (``Code._result``'s tolerance);
    a round with no weight (nothing received) recovers nothing.

    >>> from gradcode import make_code
    >>> code = make_code("gc-fr", n=4, s=1)
    >>> [x.tolist() for x in weights_recovery(code, np.array([[1.0, 0, 1, 0], [1, 1, 0, 0]]))]
    [[1.0, 0.5], [0.0, 4.0], [True, False]]
    """
    B = code.B_sparse
    rec = np.asarray((B.T @ W.T).T)
    row_max = abs(B).max(axis=1).toarray().ravel()
    exact = exact_within(rec - 1.0, np.abs(W) @ row_max)
    frac = np.where(exact, 1.0, np.clip(rec, 0.0, 1.0) @ code.partition_sizes)
    return frac, np.sum((rec - 1.0) ** 2, axis=1), exact


def _unknown(rounds: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``recovery_many``'s answer where the decoder must run: NaN, NaN, False."""
    return np.full(rounds, np.nan), np.full(rounds, np.nan), np.zeros(rounds, bool)


def optimal_weights(B: sp.csr_array, received: np.ndarray) -> np.ndarray:
    """Least-squares decoding (paper 5, eq. 2): ``argmin_w ||w_R B_R - 1||^2``, min-norm ``w``.

    Dense LAPACK for moderate sizes; sparse LSQR beyond (no dense ``B`` is formed).

    Paper 1's example (``n = 3``, ``s = 1``): without worker 2, the master takes
    ``2 B_0 - B_1 = 1`` (the row ``(2, -1, 0)`` of its matrix ``A``).

    >>> import scipy.sparse as sp
    >>> from gradcode.codes import optimal_weights
    >>> B = sp.csr_array([[0.5, 1.0, 0.0], [0.0, 1.0, -1.0], [0.5, 0.0, 1.0]])
    >>> optimal_weights(B, np.array([0, 1])).round(3).tolist()
    [2.0, -1.0, 0.0]
    """
    n, k = B.shape
    w = np.zeros(n)
    if received.size == 0:
        return w
    if received.size * k <= 4_000_000:
        sol, *_ = np.linalg.lstsq(_dense_rows(B, received).T, np.ones(k), rcond=None)
    else:
        from scipy.sparse.linalg import lsqr
        sol = lsqr(B[received].T.tocsr(), np.ones(k), atol=1e-12, btol=1e-12, iter_lim=10 * k)[0]
    w[received] = sol
    return w


def _dense_rows(B, rows: np.ndarray) -> np.ndarray:
    """``B[rows].toarray()`` read off the CSR arrays (SciPy's row indexing builds a sparse
    matrix first: ~40 us of a small code's decode); SciPy's where ``B`` is not canonical CSR.

    >>> B = sp.csr_array([[0.5, 1.0, 0.0], [0.0, 1.0, -1.0], [0.5, 0.0, 1.0]])
    >>> _dense_rows(B, np.array([2, 0])).tolist()
    [[0.5, 0.0, 1.0], [0.5, 1.0, 0.0]]
    """
    if getattr(B, "format", None) != "csr" or not B.has_canonical_format:
        return B[rows].toarray()
    starts = B.indptr[rows]
    counts = B.indptr[rows + 1] - starts
    at = np.repeat(starts - (np.cumsum(counts) - counts), counts) + np.arange(counts.sum())
    out = np.zeros((rows.size, B.shape[1]))
    out[np.repeat(np.arange(rows.size), counts), B.indices[at]] = B.data[at]
    return out
