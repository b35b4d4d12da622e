"""Paper 1, Cyclic Repetition Scheme (eq. (5), Alg. 2): Alg. 2 computed here and gradcode's
``gc-cr`` (``theorems``; see ``tandon_common``).

gradcode's ``gc-cr`` builds CR's ``B`` by paper 3's auxiliary-matrix construction, not Alg. 2:
it is checked for what the paper claims of CR (support (5), rows spanning an ``(n - s)``-dim
subspace holding ``1``, any ``n - s`` workers decode).  The poster only describes Alg. 2;
``alg2`` follows the full paper's Algorithm 2 (the same steps as the authors' published
``getB``).
"""

from __future__ import annotations

import numpy as np

from ...codes import make_code
from ._framework import Evidence, Tally, statement
from .tandon_common import (RTOL, code_decodes, cyclic_support, fmt_float, fmt_matrix, rank,
                            straggler_sets)


def alg2(n: int, s: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Paper 1's Algorithm 2 (CR): ``H = randn(s, n)``, its last column ``-sum`` of the others
    (``H 1 = 0``); row ``i`` of ``B`` on ``j = (i, .., i + s) mod n`` is ``[1; -H_{:, j[1:]}^{-1}
    H_{:, j[0]}]``, so that ``H B_i^T = 0``: ``(B, H)``.

    >>> B, H = alg2(4, 1, np.random.default_rng(0))
    >>> bool(np.allclose(H @ B.T, 0)), bool(np.allclose(np.diag(B), 1))
    (True, True)
    """
    H = rng.standard_normal((s, n))
    H[:, -1] = -H[:, :-1].sum(axis=1)
    B = np.zeros((n, n))
    for i in range(n):
        j = (i + np.arange(s + 1)) % n
        B[i, j[0]] = 1.0
        B[i, j[1:]] = -np.linalg.solve(H[:, j[1:]], H[:, j[0]])
    return B, H


def alg2_tally(B: np.ndarray, H: np.ndarray, n: int, s: int) -> Tally:
    """Alg. 2's claims on ``(B, H)``: support exactly eq. (5); ``H 1 = 0`` and ``H B^T = 0``
    (rows in the ``(n - s)``-dim null space of ``H``, which holds ``1``); rank ``n - s``; and
    for every set ``I`` of ``n - s`` rows, ``1 = a B_I`` with ``a = 1 B_I^+`` (to ``RTOL``).

    >>> alg2_tally(*alg2(5, 2, np.random.default_rng(0)), 5, 2).failures
    0
    """
    t = Tally()
    scale = max(1.0, float(np.abs(H).max() * np.abs(B).max() * n))
    t.count(1, not (np.array_equal(np.abs(B) > 1e-12, cyclic_support(n, s) == 1)
                    and np.abs(H.sum(axis=1)).max() <= RTOL * scale
                    and np.abs(H @ B.T).max() <= RTOL * scale
                    and rank(B) == n - s),
            f"n = {n}, s = {s}: support, H 1 = 0, H B^T = 0 or rank n - s fails")
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
           "s x n H with H 1 = 0: the full gradient from any n - s workers")
def _alg2(ctx) -> Evidence:
    rng = np.random.default_rng(ctx.seed)
    n_max, seeds = (9, 1) if ctx.quick else (13, 3)
    t = Tally()
    for n in range(2, n_max + 1):
        for s in range(1, n):
            for _ in range(seeds):
                B, H = alg2(n, s, rng)
                t.merge(alg2_tally(B, H, n, s))
    B, _ = alg2(4, 1, np.random.default_rng(ctx.seed))
    return t.evidence(f"Alg. 2 computed here (NumPy, Gaussian H), every n <= {n_max} and "
                      f"1 <= s < n, {seeds} draw(s) each, every set of n - s workers (least "
                      "squares, rtol 1e-9); support (5), H B^T = 0, rank n - s",
                      f"n = 4, s = 1: B = {fmt_matrix(np.round(B, 3))}")


@statement(1, "Cyclic Repetition Scheme, eq. (5), gradcode",
           "gradcode's gc-cr has CR's support (5), its rows span an (n - s)-dim subspace holding "
           "1 (as Alg. 2's), and it decodes the full gradient from every set of n - s workers")
def _cr_gradcode(ctx) -> Evidence:
    n_max = 8 if ctx.quick else 12
    t = Tally()
    for n in range(2, n_max + 1):
        for s in range(1, n):
            code = make_code("gc-cr", n=n, s=s, seed=ctx.seed)
            B = np.array(code.B)
            t.count(1, not (np.array_equal(B != 0, cyclic_support(n, s) == 1)
                            and rank(B) == n - s),
                    lambda: f"gc-cr n = {n}, s = {s}: support "
                            f"{fmt_matrix((B != 0).astype(int))}, rank {rank(B)}")
            t.merge(code_decodes(code, B, s))
    return t.evidence(f"every n <= {n_max} and 1 <= s < n (seed {ctx.seed}): support compared "
                      "exactly, rank(B) = n - s, every set of n - s workers decoded by gc-cr's "
                      "decoder, weights verified (rtol 1e-9); gc-cr builds B by paper 3's "
                      "construction (C B = 1), not Alg. 2",
                      "gc-cr n = 5, s = 2 without workers 0, 1: weights " + str(np.round(
                          make_code("gc-cr", n=5, s=2, seed=ctx.seed).decode([2, 3, 4]).weights,
                          3).tolist()))
