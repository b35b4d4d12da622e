"""Paper 1, Cyclic Repetition Scheme (eq. (5), Alg. 2): one row, checked on Alg. 2 computed here
and on gradcode's ``gc-cr``, which must equal Alg. 2's ``B`` for the ``H`` its rows determine
(``theorems``; see ``tandon_common``).

gradcode's ``gc-cr`` builds CR's ``B`` by paper 3's auxiliary-matrix construction, not by Alg. 2.
Its rows span an ``(n - s)``-dim subspace; ``H``, a basis of that subspace's orthogonal
complement (``s x n``), is the paper's ``H``: ``H 1 = 0`` and MDS (every ``s x s`` minor
non-singular), and Alg. 2 run on it gives ``gc-cr``'s ``B`` up to the scale of each row (a row
with support (5) in the null space of ``H`` is unique up to scale).  The poster only describes
Alg. 2; ``alg2`` follows the full paper's Algorithm 2 (the same steps as the authors' published
``getB``).
"""

from __future__ import annotations

from itertools import combinations

import numpy as np

from ...registry import make_code
from ._framework import Evidence, Tally, statement
from .tandon_common import (RTOL, code_decodes, cyclic_support, fmt_float, fmt_matrix, rank,
                            straggler_sets)


def alg2(n: int, s: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Paper 1's Algorithm 2 (CR): ``H = randn(s, n)``, its last column ``-sum`` of the others
    (``H 1 = 0``), and ``B = alg2_rows(H)``: ``(B, H)``.

    >>> B, H = alg2(4, 1, np.random.default_rng(0))
    >>> bool(np.allclose(H @ B.T, 0)), bool(np.allclose(np.diag(B), 1))
    (True, True)
    """
    H = rng.standard_normal((s, n))
    H[:, -1] = -H[:, :-1].sum(axis=1)
    return alg2_rows(H), H


def alg2_rows(H: np.ndarray) -> np.ndarray:
    """Alg. 2's ``B`` for a given ``s x n`` ``H``: row ``i`` on ``j = (i, .., i + s) mod n`` is
    ``[1; -H_{:, j[1:]}^{-1} H_{:, j[0]}]``, so that ``H B_i^T = 0``.

    >>> alg2_rows(np.array([[2.0, -1.0, -1.0]])).tolist()  # the example's B, with B_ii = 1
    [[1.0, 2.0, 0.0], [0.0, 1.0, -1.0], [0.5, 0.0, 1.0]]
    """
    s, n = H.shape
    B = np.zeros((n, n))
    for i in range(n):
        j = (i + np.arange(s + 1)) % n
        B[i, j[0]] = 1.0
        B[i, j[1:]] = -np.linalg.solve(H[:, j[1:]], H[:, j[0]])
    return B


def is_mds(H: np.ndarray) -> bool:
    """The paper's "MDS matrix": every ``s x s`` minor of the ``s x n`` ``H`` is non-singular
    (numerical rank).

    >>> is_mds(np.array([[1.0, 2.0, -3.0]])), is_mds(np.array([[1.0, 0.0, -1.0]]))
    (True, False)
    """
    s, n = H.shape
    minors = np.stack([H[:, list(c)] for c in combinations(range(n), s)])
    return bool(np.all(rank(minors) == s))


def complement(B: np.ndarray, s: int) -> np.ndarray:
    """``H``: an orthonormal basis (``s x n``) of ``{x : B x = 0}``, the orthogonal complement
    of the rows of a rank ``n - s`` ``B`` (``H B^T = 0``).

    >>> H = complement(np.array([[0.5, 1, 0], [0, 1, -1], [0.5, 0, 1]]), 1)  # the example's B
    >>> np.abs(H * 6 ** 0.5).round(6).tolist()                     # (2, -1, -1) / sqrt(6)
    [[2.0, 1.0, 1.0]]
    """
    return np.linalg.svd(np.asarray(B, float))[2][B.shape[0] - s:]


def alg2_tally(B: np.ndarray, H: np.ndarray, n: int, s: int) -> Tally:
    """Alg. 2's claims on ``(B, H)``: support exactly eq. (5); ``H`` MDS, ``H 1 = 0`` and
    ``H B^T = 0`` (rows in the ``(n - s)``-dim null space of ``H``, which holds ``1``); rank
    ``n - s``; and for every set ``I`` of ``n - s`` rows, ``1 = a B_I`` with ``a = 1 B_I^+``
    (to ``RTOL``).

    >>> alg2_tally(*alg2(5, 2, np.random.default_rng(0)), 5, 2).failures
    0
    """
    t = Tally()
    scale = max(1.0, float(np.abs(H).max() * np.abs(B).max() * n))
    t.count(1, not (np.array_equal(np.abs(B) > 1e-12, cyclic_support(n, s) == 1)
                    and np.abs(H.sum(axis=1)).max() <= RTOL * scale
                    and np.abs(H @ B.T).max() <= RTOL * scale
                    and rank(B) == n - s and is_mds(H)),
            f"n = {n}, s = {s}: support, H 1 = 0, H B^T = 0, rank n - s or MDS fails")
    got = straggler_sets(n, s)
    BI = np.stack([B[g] for g in got])                                  # (f, n - s, n)
    a = np.linalg.pinv(BI).sum(axis=-2)                                 # 1 @ pinv(B_I)
    resid = np.abs(np.einsum("fi,fij->fj", a, BI) - 1.0).max(axis=1)
    scales = np.maximum(1.0, np.einsum("fi,fi->f", np.abs(a), np.abs(BI).max(axis=2)))
    t.add(~(resid <= RTOL * scales), lambda k: f"n = {n}, s = {s}, received "
                                               f"{np.flatnonzero(got[k]).tolist()}: residual "
                                               f"{fmt_float(resid[k])}")
    return t


@statement(1, "Cyclic Repetition Scheme, eq. (5) (Alg. 2)",
           "for any n and s < n, B with support (5) whose rows lie in the null space of a random "
           "s x n MDS matrix H with H 1 = 0: the full gradient from any n - s workers")
def _alg2(ctx) -> Evidence:
    rng = np.random.default_rng(ctx.seed)
    (n_max, n_gc), seeds = ((9, 8), 1) if ctx.quick else ((13, 12), 3)
    t = Tally()
    for n in range(2, n_max + 1):
        for s in range(1, n):
            for _ in range(seeds):
                B, H = alg2(n, s, rng)
                t.merge(alg2_tally(B, H, n, s))
            if n <= n_gc:
                t.merge(gc_cr_tally(make_code("gc-cr", n=n, s=s, seed=ctx.seed), n, s))
    B, _ = alg2(4, 1, np.random.default_rng(ctx.seed))
    w = make_code("gc-cr", n=5, s=2, seed=ctx.seed).decode([2, 3, 4]).weights
    return t.evidence(f"Alg. 2 computed here (NumPy, Gaussian H), every n <= {n_max} and "
                      f"1 <= s < n, {seeds} draw(s) each, every set of n - s workers (least "
                      "squares, rtol 1e-9); support (5), H MDS, H B^T = 0, rank n - s.  And "
                      f"gradcode's gc-cr (paper 3's construction, seed {ctx.seed}), every "
                      f"n <= {n_gc}: B equal to Alg. 2 run on the H its rows determine (each row "
                      "scaled to B_ii = 1, rtol 1e-9), the same checks, and every set of n - s "
                      "workers decoded by gc-cr's own decoder (weights verified)",
                      f"n = 4, s = 1: B = {fmt_matrix(np.round(B, 3))}; gc-cr n = 5, s = 2 "
                      f"without workers 0, 1: weights {np.round(w, 3).tolist()}")


def gc_cr_tally(code, n: int, s: int) -> Tally:
    """gradcode's ``gc-cr`` against Alg. 2: its ``B`` (rows scaled to ``B_ii = 1``) equals
    ``alg2_rows(H)`` for ``H = complement(B, s)``, passes ``alg2_tally`` with that ``H``, and
    its own decoder decodes every set of ``n - s`` workers (``code_decodes``).

    >>> gc_cr_tally(make_code("gc-cr", n=5, s=2), 5, 2).failures
    0
    """
    B = np.array(code.B, float)
    t = Tally()
    if np.any(np.diag(B) == 0) or rank(B) != n - s:
        t.count(1, 1, f"gc-cr n = {n}, s = {s}: diagonal {np.diag(B).tolist()}, rank {rank(B)}")
        return t.merge(code_decodes(code, B, s))
    scaled = B / np.diag(B)[:, None]
    H = complement(B, s)
    if not is_mds(H):
        t.count(1, 1, f"gc-cr n = {n}, s = {s}: H = {fmt_matrix(np.round(H, 3))} is not MDS")
        return t.merge(code_decodes(code, B, s))
    ours = alg2_rows(H)
    t.count(1, not np.allclose(ours, scaled, rtol=0, atol=RTOL * max(1.0, np.abs(ours).max())),
            lambda: f"gc-cr n = {n}, s = {s}: scaled B {fmt_matrix(np.round(scaled, 3))} != "
                    f"Alg. 2's {fmt_matrix(np.round(ours, 3))}")
    return t.merge(alg2_tally(scaled, H, n, s)).merge(code_decodes(code, B, s))
