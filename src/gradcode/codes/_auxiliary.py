"""The auxiliary-matrix construction of B (paper 3, Lemma 2-3, Alg. 1) and its fast decoder.

Given a support where every partition is held by exactly ``s + 1`` workers, draw
``C in R^{(s+1) x n}`` and set column ``j`` of ``B`` on its support ``S_j`` to
``C[:, S_j]^{-1} 1``, so that ``C B = 1``.  For stragglers ``S`` (``|S| <= s``) any ``lam`` with
``lam C_S = 0`` and ``sum(lam) = 1`` gives decoding weights ``w = lam C`` (zero on ``S``):
``w B = lam C B = 1``.  Cost ``O(s^3 + s n)``, no ``n x n`` system.
"""

from __future__ import annotations

import numpy as np

#: candidate matrices C drawn per code; the one with the smallest max|B| is kept
C_CANDIDATES = 24


def auxiliary_encode(support: list[np.ndarray], n: int, s: int, rng: np.random.Generator):
    """``(B, C)`` for ``support[j]`` = the ``s+1`` workers holding partition ``j``.

    Paper 3 draws ``C`` uniform on (0, 1); such ``C`` are badly conditioned (all-positive columns
    are nearly parallel) and give coefficients in the thousands.  We draw standard normal entries
    instead (Lemma 3's argument only needs a continuous distribution) and keep the best of
    ``C_CANDIDATES`` draws by ``max|B|``, which bounds the precision lost in float32.
    """
    S = np.asarray(support)                                   # (k, s+1)
    k = S.shape[0]
    best = None
    for _ in range(C_CANDIDATES):
        C = rng.standard_normal((s + 1, n))
        blocks = np.transpose(C[:, S], (1, 0, 2))             # (k, s+1, s+1): C restricted to S_j
        try:
            D = np.linalg.solve(blocks, np.ones((k, s + 1, 1)))[..., 0]
        except np.linalg.LinAlgError:
            continue
        big = np.abs(D).max()
        if best is None or big < best[0]:
            best = (big, C, D)
    _, C, D = best
    B = np.zeros((n, k))
    B[S, np.arange(k)[:, None]] = D
    return B, C


def auxiliary_decode(C: np.ndarray, missing: np.ndarray) -> np.ndarray:
    """Weights ``lam C`` with ``lam C_missing = 0``, ``sum(lam) = 1`` (minimum-norm ``lam``)."""
    m = C.shape[0]
    M = np.vstack([C[:, missing].T, np.ones((1, m))])         # (|S|+1, s+1)
    rhs = np.zeros(M.shape[0])
    rhs[-1] = 1.0
    lam, *_ = np.linalg.lstsq(M, rhs, rcond=None)
    w = lam @ C
    w[missing] = 0.0
    return w
