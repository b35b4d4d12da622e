"""The auxiliary-matrix construction of B (paper 3, Lemma 2-3, Alg. 1) and its fast decoder.

Given a support where every partition is held by exactly ``s + 1`` workers, draw
``C in R^{(s+1) x n}`` and set column ``j`` of ``B`` on its support ``S_j`` to
``C[:, S_j]^{-1} 1``, so that ``C B = 1``.  For stragglers ``S`` (``|S| <= s``) any ``lam`` with
``lam C_S = 0`` and ``sum(lam) = 1`` gives decoding weights ``w = lam C`` (zero on ``S``):
``w B = lam C B = 1``.  Cost ``O(s^3 + s n)``, no ``n x n`` system.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.linalg import solve_triangular

#: local-search steps spent shrinking max|B| (per code, at most; see ``auxiliary_encode``)
REFINE_STEPS = 3000
#: and at most this many floating-point operations (a step solves ``s + 1`` systems of size
#: ``s + 1``: ``(s + 1)^4``), so that large codes build in seconds (gc-cr n = 3000, s = 100 took
#: minutes): codes up to s = 55 get every step, s = 100 about 290
REFINE_FLOPS = 3e10


def _columns(C: np.ndarray, S: np.ndarray) -> np.ndarray:
    """``D[j] = C[:, S_j]^{-1} 1`` for each row ``S_j`` of ``S`` (batched solve)."""
    blocks = np.transpose(C[:, S], (1, 0, 2))
    return np.linalg.solve(blocks, np.ones((S.shape[0], S.shape[1], 1)))[..., 0]


def auxiliary_encode(support: list[np.ndarray], n: int, s: int, rng: np.random.Generator):
    """``(B, C)`` for ``support[j]`` = the ``s+1`` distinct workers holding partition ``j``.

    Paper 3 draws ``C`` uniform on (0, 1).  Any continuous distribution satisfies (P1)-(P2) with
    probability 1 (Lemma 3's argument), but a plain draw gives coefficients up to the thousands
    (max|B| 2878 for n = 256, s = 15), and float32 gradients lose that much precision.  We draw
    standard normal entries and then run a short local search: redraw one column of ``C`` that
    enters the currently largest column of ``B`` and keep the change when the largest |B| does not
    grow.  It brings max|B| to a few units (2.6 for n = 256, s = 15) at a cost of ~0.3 s; the
    search stops after ``REFINE_STEPS`` steps or ``REFINE_FLOPS`` operations.
    """
    S = np.asarray(support, dtype=int)                        # (k, s+1)
    k = S.shape[0]
    order = np.argsort(S.ravel(), kind="stable")              # partitions using each worker
    bounds = np.searchsorted(S.ravel()[order], np.arange(n + 1))
    uses = [order[bounds[i]:bounds[i + 1]] // (s + 1) for i in range(n)]
    while True:
        C = rng.standard_normal((s + 1, n))
        try:
            D = _columns(C, S)
            break
        except np.linalg.LinAlgError:  # probability zero; redraw
            continue
    colmax = np.abs(D).max(axis=1)
    for _ in range(min(REFINE_STEPS, 30 * k, int(REFINE_FLOPS / (s + 1) ** 4))):
        j = int(np.argmax(colmax)) if rng.random() < 0.7 else int(rng.integers(k))
        i = int(S[j, rng.integers(s + 1)])
        old = C[:, i].copy()
        C[:, i] = rng.standard_normal(s + 1)
        js = uses[i]
        try:
            Dj = _columns(C, S[js])
        except np.linalg.LinAlgError:
            C[:, i] = old
            continue
        new = np.abs(Dj).max(axis=1)
        rest = np.delete(colmax, js)
        if max(new.max(), rest.max(initial=0.0)) <= colmax.max() and new.max() < colmax[js].max():
            colmax[js], D[js] = new, Dj
        else:
            C[:, i] = old
    B = sp.csr_array((D.ravel(), (S.ravel(), np.repeat(np.arange(k), s + 1))), shape=(n, k))
    return B, C


def auxiliary_decode(C: np.ndarray, missing: np.ndarray) -> np.ndarray:
    """Weights ``lam C`` with ``lam C_missing = 0``, ``sum(lam) = 1`` (minimum-norm ``lam``)."""
    m = C.shape[0]
    M = np.vstack([C[:, missing].T, np.ones((1, m))])         # (|S|+1, s+1)
    rhs = np.zeros(M.shape[0])
    rhs[-1] = 1.0
    # minimum-norm solution of the under-determined M lam = rhs through M^T = QR (no squaring
    # of the condition number as with the normal equations)
    Q, Rf = np.linalg.qr(M.T)
    try:
        lam = Q @ solve_triangular(Rf, rhs, trans="T")
    except (np.linalg.LinAlgError, ValueError):
        lam = np.linalg.lstsq(M, rhs, rcond=None)[0]
    w = lam @ C
    w[missing] = 0.0
    return w
