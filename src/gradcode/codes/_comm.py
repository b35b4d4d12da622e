"""Communication-computation efficient gradient coding (``comm-efficient``).

Ye and Abbe, "Communication-computation efficient gradient coding" (ICML 2018,
arXiv:1802.03475): ``n`` workers, ``n`` partitions, each worker holds ``d`` of them (cyclic: worker
``i`` holds ``i, .., i+d-1 mod n``) and sends ONE vector of length ``l / m`` (``l`` the gradient's
length, ``m`` the communication reduction factor); the master decodes the full gradient from any
``n - s`` workers.  The paper's tradeoff: this is possible exactly when ``d >= s + m``.

Only the tradeoff and the definition were available to us, not the paper's own (recursive)
construction: the code below is derived from the definition, and no theorem or equation number
of the paper is cited.

The construction (our derivation).  Cut every partial gradient ``g_j`` (flat, zero-padded to a
multiple of ``m``) into ``m`` slices ``g_j^(u)`` of length ``L = ceil(l / m)``.  Give worker ``i``
a distinct nonzero real ``alpha_i`` (``nodes``: Chebyshev nodes, dealt to the workers in a
golden-ratio stride so that the ``d`` workers holding a partition have spread-out nodes).  For
partition ``j`` let ``Z_j(x) = prod (x - alpha_i)`` over the ``n - d`` workers ``i`` NOT holding
``j``; with ``N = n - d + m`` (``<= n - s``), ``q_{j,u} = Z_j r_{j,u}`` for the ``r_{j,u}`` of
degree ``< m`` such that the top ``m`` Chebyshev coefficients of ``q_{j,u}`` (those of
``T_{N-1}, .., T_{N-m}``) are ``e_u`` (an anti-triangular ``m x m`` system: ``Z_j``'s leading
coefficient is not 0).  Worker ``i`` sends ``f_i = sum_{j,u} E[i, j, u] g_j^(u)`` with
``E[i, j, u] = q_{j,u}(alpha_i)`` (zero when ``i`` does not hold ``j``: ``Z_j(alpha_i) = 0``), i.e.
``f_i = p(alpha_i)`` for ``p = sum_{j,u} g_j^(u) q_{j,u}``, a polynomial of degree ``< N`` whose
coefficient of ``T_{N-1-u}`` is ``sum_j g_j^(u)``: slice ``u`` of the full gradient.  From any
``N`` workers (so from any ``n - s``) the master interpolates ``p`` in the Chebyshev basis and
reads those ``m`` coefficients: decoding weights ``W (n, m)``, slice ``u = sum_i W[i, u] f_i``;
exact iff ``sum_i W[i, u] E[i, j, v] = delta_uv`` for every ``j, v`` (what ``decode`` checks).
Each worker's row of ``E`` is scaled to ``max |E[i]| = 1`` (its weights by the inverse).

Conditioning (measured; tests/test_literature_comm.py).  The first version read the ``m`` LOW
monomial coefficients (``q_{j,u} = Z_j [x^u / Z_j mod x^m]``, the power series of ``1 / Z_j`` at
0) with the nodes in order: exact on paper, but the float32 error amplification
``max_u sum_i |W[i, u]| sum_{j,v} |E[i, j, v]| / n`` was 2866 at ``n = 7, s = 1, m = 3`` (10.4
now), and float64 decoding failed ``STABILITY_ATOL`` beyond ``n`` of 15 to 25 for ``m = 2, 3``
(``n = 64, s = 4, m = 4`` now decodes to 4e-11).  ``(n, s, m)`` whose measured straggler sets
(``s`` consecutive workers, and the ``s`` workers of consecutive nodes, at every offset) leave
``max |W^T E - I| > STABILITY_ATOL`` in float64 are still refused at construction, as
``cyclic-mds`` does.

The grouped placement (``placement="groups"``, ours, not the paper's; needs ``d | n``): the
``n`` workers in ``n / d`` groups of ``d``, every worker of group ``q`` holding its ``d``
partitions (fractional repetition, load ``d / n``), worker ``r`` of a group sending
``sum_u A[r, u] G_q^(u)`` with ``G_q`` the sum of the group's partial gradients and ``A`` the
``d x m`` Chebyshev-Vandermonde matrix ``T_u(x_r)`` at ``d`` Chebyshev nodes (``group_matrix``).
Any ``m`` of a group's workers give its ``m`` slices (an ``m x m`` solve), so any ``s <= d - m``
stragglers leave every group decodable, and so does any straggler set leaving ``m`` workers in
each group.  The systems are ``m x m`` whatever ``n``: it stays exact where the cyclic
construction is refused (n = 256, s = 14, m = 2: ``d = 16``).

The protocol for a code whose messages are coded slices (``slices = m > 1``): ``B`` /
``B_sparse`` is the 0/1 placement (which worker holds which partition: its support, not its
coefficients; for ``m = 1`` it is ``E[:, :, 0]``, a real matrix code like any other, decoded by
``Code.decode`` with ``(n,)`` weights),
``encoding`` the ``(n, k, m)`` tensor ``E``; ``Decoding.weights`` is ``(n, m)`` (column ``u``
decodes slice ``u``), ``recovered`` the per-partition recovery averaged over slices
(``mean_u (W^T E)[u, j, u]``), ``error`` the mean over slices of
``||W[:, u] E - e_u (x) 1||^2``.  The runtime's planner hands each worker coefficient rows
``(d, m)``; the worker cuts each partial gradient into ``m`` slices and sends one vector of
``L`` floats; the learner combines each slice column and concatenates.
"""

from __future__ import annotations

import math
from functools import cached_property

import numpy as np
import scipy.sparse as sp
from numpy.polynomial import chebyshev

from ._base import Code, Decoding, exact_within
from ._checks import check_int, check_rng, check_size, readonly
from ._mds import STABILITY_ATOL

#: where the partitions go: Ye and Abbe's cyclic placement, or ours in groups (module docstring)
PLACEMENTS = ("cyclic", "groups")


def nodes(n: int) -> np.ndarray:
    """``alpha``: ``n`` distinct nonzero points of ``(-1, 1)``, Chebyshev nodes of the first kind
    (for odd ``n``, those of ``n + 1`` without one of the two nearest 0), worker ``i`` getting
    node ``(i g) mod n`` for the stride ``g`` nearest ``n / golden ratio`` prime to ``n``.

    >>> nodes(2).round(4).tolist(), bool(np.all(nodes(5) != 0)), len(set(nodes(7)))
    ([0.7071, -0.7071], True, 7)
    """
    N = n + n % 2
    x = np.cos((2 * np.arange(N) + 1) * np.pi / (2 * N))
    x = x if N == n else np.delete(x, N // 2)
    g = max(1, round(n * 2 / (1 + 5 ** 0.5)))
    while math.gcd(g, n) != 1:
        g += 1
    return x[(np.arange(n) * g) % n]


def group_matrix(d: int, m: int) -> np.ndarray:
    """``A (d, m)``: ``T_u(x_r)`` at the ``d`` Chebyshev nodes ``x_r`` (first kind): any ``m``
    rows are an invertible Chebyshev-Vandermonde system (the grouped placement's code).

    >>> group_matrix(3, 2).round(4).tolist()
    [[1.0, 0.866], [1.0, 0.0], [1.0, -0.866]]
    """
    x = np.cos((2 * np.arange(d) + 1) * np.pi / (2 * d))
    return chebyshev.chebvander(x, m - 1)


def grouped_tensor(n: int, d: int, m: int) -> np.ndarray:
    """``E[i, j, u] = A[i mod d, u]`` for ``j`` in worker ``i``'s group (``i // d``), else 0.

    >>> (grouped_tensor(4, 2, 1)[:, :, 0] != 0).astype(int).tolist()
    [[1, 1, 0, 0], [1, 1, 0, 0], [0, 0, 1, 1], [0, 0, 1, 1]]
    """
    A = group_matrix(d, m)
    E = np.zeros((n, n, m))
    for i in range(n):
        q = i // d
        E[i, q * d:(q + 1) * d] = A[i % d]
    return E


def encoding_tensor(n: int, d: int, m: int, alpha: np.ndarray) -> np.ndarray:
    """``E[i, j, u] = q_{j,u}(alpha_i)`` (module docstring), unscaled; zero off the placement.

    >>> E = encoding_tensor(3, 2, 1, nodes(3))
    >>> (E[:, :, 0] != 0).astype(int).tolist()          # worker i holds i and i + 1
    [[1, 1, 0], [0, 1, 1], [1, 0, 1]]
    """
    N = n - d + m
    top = N - 1 - np.arange(m)                          # T_{N-1}, .., T_{N-m}
    E = np.zeros((n, n, m))
    for j in range(n):
        holders = (j - np.arange(d)) % n
        Z = chebyshev.chebfromroots(np.delete(alpha, holders))      # degree n - d
        prods = np.array([np.pad(chebyshev.chebmul(Z, np.eye(m)[t]), (0, N))[:N]
                          for t in range(m)])                       # (m, N): Z T_t
        R = np.linalg.solve(prods[:, top].T, np.eye(m))             # (t, u)
        for u in range(m):
            E[holders, j, u] = chebyshev.chebval(alpha[holders], R[:, u] @ prods)
    return E


class CommEfficient(Code):
    """Communication-computation efficient gradient code (Ye and Abbe, arXiv:1802.03475; module
    docstring): cyclic placement of ``d >= s + m`` partitions per worker, each worker sends one
    coded vector of ``1 / m`` of the gradient's length, exact from any ``n - s`` workers.

    ``n = 5``, ``s = 1``, ``m = 2`` (``d = 3``): every set of 4 workers decodes both slices.

    >>> from itertools import combinations
    >>> from gradcode import make_code
    >>> code = make_code("comm-efficient", n=5, s=1, m=2)
    >>> code.slices, code.d, code.encoding.shape, code.B[0].tolist()
    (2, 3, (5, 5, 2), [1.0, 1.0, 1.0, 0.0, 0.0])
    >>> all(code.decode(R).exact for R in combinations(range(5), 4))
    True
    >>> code.decode([0, 1, 2, 3]).weights.shape
    (5, 2)
    >>> make_code("comm-efficient", n=6, s=2, m=2, d=3)
    Traceback (most recent call last):
    ...
    ValueError: d: comm-efficient needs d >= s + m = 4 (Ye and Abbe's tradeoff), got d=3
    """

    name = "comm-efficient"
    decoder = ("Chebyshev interpolation of p from any n - d + m messages, its top m "
               "coefficients read (per-slice least squares from fewer than n - s)")
    examples = ({"n": 5, "s": 1, "m": 2}, {"n": 6, "s": 2, "m": 2}, {"n": 7, "s": 1, "m": 3},
                {"n": 4, "s": 1}, {"n": 6, "s": 1, "m": 2, "placement": "groups"},
                {"n": 8, "s": 1, "m": 2, "d": 4, "placement": "groups"})

    def __init__(self, n: int, s: int, m: int = 1, d: int | None = None,
                 placement: str = "cyclic"):
        n = check_int("n", n, minimum=1)
        s = check_int("s", s, minimum=0, maximum=n - 1)
        m = check_int("m", m, minimum=1, maximum=n - s)
        d = check_int("d", s + m if d is None else d, minimum=1, maximum=n)
        if d < s + m:
            raise ValueError(f"d: comm-efficient needs d >= s + m = {s + m} (Ye and Abbe's "
                             f"tradeoff), got d={d}")
        if placement not in PLACEMENTS:
            raise ValueError(f"placement: expected one of {', '.join(PLACEMENTS)}, got "
                             f"{placement!r}")
        grouped = placement == "groups"
        if grouped and n % d:
            raise ValueError(f"d: comm-efficient with placement='groups' needs d to divide "
                             f"n={n}, got d={d}")
        check_size(self.name, n * d * m)
        alpha = nodes(n)
        E = grouped_tensor(n, d, m) if grouped else encoding_tensor(n, d, m, alpha)
        scale = np.abs(E).reshape(n, -1).max(axis=1)
        E = E / scale[:, None, None]
        rows = np.repeat(np.arange(n), d)
        start = (np.arange(n) // d) * d if grouped else np.arange(n)
        cols = ((start[:, None] + np.arange(d)) % n).ravel()
        values = E[rows, cols, 0] if m == 1 else np.ones(n * d)     # m > 1: the support
        self._set(s=s, d=d, m=m, slices=m, placement_kind=placement, alpha=readonly(alpha),
                  encoding=readonly(E), _scale=scale)
        params = {"n": n, "s": s, "m": m}
        params.update({} if d == s + m else {"d": d})
        params.update({"placement": placement} if grouped else {})
        super().__init__(sp.csr_array((values, (rows, cols)), shape=(n, n)), params)
        if not grouped:
            self._check_stable()

    # ------------------------------------------------------------------ structure
    @property
    def is_sum_code(self) -> bool:
        """False: the workers send coded slices, not plain sums (for ``m > 1`` ``B`` is only the
        support)."""
        return self.m == 1 and bool(np.all(self.B_sparse.data == 1.0))

    @cached_property
    def coefficient_rows(self) -> tuple:
        """Per worker ``(partitions, coefficients)``: for ``m > 1`` the ``(d, m)`` rows of
        ``encoding`` it uses (``Code.coefficient_rows``: the rows of ``B``)."""
        if self.m == 1:
            return Code.coefficient_rows.func(self)
        return tuple((readonly(p.astype(np.int64)), readonly(self.encoding[i, p].copy()))
                     for i, p in enumerate(self.placement))

    @cached_property
    def _flat(self) -> np.ndarray:
        """``encoding`` as ``(n, k m)`` with column ``j m + v``."""
        return self.encoding.reshape(self.n_workers, -1)

    @cached_property
    def _targets(self) -> np.ndarray:
        """``(N, m)``: the functionals read from ``p``'s Chebyshev coefficients (``N - 1 - u``)."""
        N = self.n_workers - self.d + self.m
        out = np.zeros((N, self.m))
        out[N - 1 - np.arange(self.m), np.arange(self.m)] = 1.0
        return out

    @cached_property
    def _target(self) -> np.ndarray:
        """``(k m, m)``: column ``u`` is ``1`` at ``(j, u)`` for every ``j``."""
        return np.tile(np.eye(self.m), (self.n_partitions, 1))

    # ------------------------------------------------------------------ decoding
    def decode(self, received, method: str | None = None,
               rng: np.random.Generator | None = None) -> Decoding:
        """``Code.decode`` with ``(n, m)`` weights: the interpolating decoder from at least
        ``n - s`` workers, per-slice least squares otherwise or with ``method="optimal"``."""
        if self.m == 1:                       # one slice: a real B, Code's own decode
            return super().decode(received, method, rng)
        R = self._check_received(received)
        if method not in (None, "optimal"):
            raise ValueError(f"method: expected one of [None, 'optimal'], got {method!r}")
        check_rng(rng)
        W = np.zeros((self.n_workers, self.m))
        if R.size == 0:
            used = method or "empty"
        elif method == "optimal" or (own := self._own(R)) is None:
            W[R], used = self._least_squares(R), "optimal"
        else:
            W[R], used = own, self.name
        return self._sliced_result(W, used)

    def _falls_back(self, received: np.ndarray) -> bool:
        """Whether the code's own decoder cannot serve ``received``: more than ``s`` missing;
        grouped, a group with fewer than ``m`` received."""
        if self.placement_kind == "cyclic":
            return self.n_workers - received.size > self.s
        counts = np.bincount(received // self.d, minlength=self.n_workers // self.d)
        return bool(np.any(counts < self.m))

    def _decode(self, received, rng):
        w = np.zeros(self.n_workers)
        w[received] = self._own(received)[:, 0]
        return w

    def _own(self, R: np.ndarray) -> np.ndarray | None:
        """``(|R|, m)``: the code's own decoding weights, or None where it cannot decode (more
        than ``s`` missing; grouped: a group with fewer than ``m`` received)."""
        if self._falls_back(R):
            return None
        return self._interpolate(R) if self.placement_kind == "cyclic" else self._grouped(R)

    @cached_property
    def _group_matrix(self) -> np.ndarray:
        return group_matrix(self.d, self.m)

    def _grouped(self, R: np.ndarray) -> np.ndarray:
        """The grouped placement: per group, the min-norm ``W`` with ``W^T A_R = I`` from its
        received workers (at least ``m`` of them), then the row scaling."""
        A, d, m = self._group_matrix, self.d, self.m
        groups = R // d
        W = np.zeros((R.size, m))
        for q in np.unique(groups):
            at = groups == q
            W[at] = np.linalg.pinv(A[R[at] % d]).T
        return W * self._scale[R, None]

    def recovery_many(self, got):
        """Grouped placement: exact wherever every group has ``m`` received (closed form);
        elsewhere, and for the cyclic placement beyond ``s``, the decoder runs (``Code``)."""
        if self.placement_kind == "cyclic":
            return super().recovery_many(got)
        got = self._check_got(got)
        frac, err, exact = super().recovery_many(got)
        counts = got.reshape(got.shape[0], -1, self.d).sum(axis=2)
        ok = np.all(counts >= self.m, axis=1)
        frac[ok], err[ok], exact[ok] = 1.0, 0.0, True
        return frac, err, exact

    def _interpolate(self, R: np.ndarray) -> np.ndarray:
        """``(|R|, m)``: weights reading ``p``'s coefficients of ``T_{N-1-u}`` from its values at
        ``alpha_R`` (``|R| >= N``; min-norm beyond), then the row scaling."""
        V = chebyshev.chebvander(self.alpha[R], len(self._targets) - 1)     # (|R|, N)
        W, *_ = np.linalg.lstsq(V.T, self._targets, rcond=None)
        return W * self._scale[R, None]

    def _least_squares(self, R: np.ndarray) -> np.ndarray:
        """``(|R|, m)``: per slice, ``argmin ||W[:, u] E_R - e_u (x) 1||^2`` (min norm)."""
        W, *_ = np.linalg.lstsq(self._flat[R].T, self._target, rcond=None)
        return W

    def residual(self, W: np.ndarray) -> np.ndarray:
        """``(m, k, m)``: ``sum_i W[i, u] E[i, j, v] - delta_uv``."""
        M = np.einsum("iu,ijv->ujv", W, self.encoding)
        return M - np.eye(self.m)[:, None, :]

    def _sliced_result(self, W: np.ndarray, method: str) -> Decoding:
        res = self.residual(W)
        diag = np.einsum("uju->ju", res) + 1.0                     # (k, m): slice u of g_j
        recovered = diag.mean(axis=1)
        rowmax = np.abs(self._flat).max(axis=1)
        exact = bool(exact_within(res.ravel(), float((np.abs(W).T @ rowmax).max())))
        error = float(np.mean(np.sum(res ** 2, axis=(1, 2))))
        fraction = 1.0 if exact else float(self.partition_sizes @ np.clip(recovered, 0.0, 1.0))
        return Decoding(readonly(W), readonly(recovered), exact, method, fraction,
                        sliced_error=error)

    def _check_stable(self) -> None:
        """Refuse ``(n, s, m)`` whose decoding without ``s`` consecutive workers, or without the
        ``s`` workers of consecutive nodes, at every offset, is not exact to ``STABILITY_ATOL``
        in float64 (module docstring)."""
        n, s = self.n_workers, self.s
        order = np.argsort(self.alpha)
        worst, at = 0.0, []
        for o in range(n if s else 1):
            for missing in ((o + np.arange(s)) % n, order[(o + np.arange(s)) % n]):
                R = np.setdiff1d(np.arange(n), missing)
                W = np.zeros((n, self.m))
                W[R] = self._interpolate(R)
                err = float(np.abs(self.residual(W)).max())
                if not err <= worst:
                    worst, at = err, sorted(missing.tolist())
        if not worst <= STABILITY_ATOL:
            raise ValueError(
                f"n: comm-efficient with n={n}, s={s}, m={self.m} is numerically unstable in "
                f"float64: without workers {at}, |W^T E - I| reaches {worst:.2g} > "
                f"{STABILITY_ATOL:g}; use a smaller n or m")
