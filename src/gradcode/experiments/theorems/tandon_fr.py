"""Paper 1, Fractional Repetition Scheme (Alg. 1) and its figure (``n = 6``, ``s = 2``): one row
each, checked on ``B_FR`` built from the text and on gradcode's ``gc-fr``, which must equal it
(``theorems``; see ``tandon_common``)."""

from __future__ import annotations

import numpy as np

from ...registry import make_code
from ._framework import Evidence, Tally, statement
from .tandon_common import code_decodes, fmt_matrix, fr_matrix, straggler_sets, weights_ok


def fr_weights(got: np.ndarray, s: int) -> np.ndarray:
    """FR's decoder: weight 1 on the first received worker of every group (one per group
    exists when at most ``s`` of its ``s + 1`` are missing), for each row of ``got``.

    >>> fr_weights(np.array([[False, True, True, False]]), 1).tolist()
    [[0, 1, 1, 0]]
    """
    f, n = got.shape
    groups = got.reshape(f, n // (s + 1), s + 1)
    first = np.argmax(groups, axis=2)
    A = np.zeros_like(groups, dtype=int)
    np.put_along_axis(A, first[..., None], groups.any(axis=2)[..., None].astype(int), axis=2)
    return A.reshape(f, n)


def fr_tally(B: np.ndarray, n: int, s: int) -> Tally:
    """FR's claims on ``B``: ``s + 1`` non-zeros per row and column (``s + 1`` replicas), and
    for every set of ``n - s`` received workers the decoder ``fr_weights`` gives ``A_I B = 1``
    exactly (integers).

    >>> t = fr_tally(fr_matrix(6, 2), 6, 2)
    >>> t.cases, t.failures
    (16, 0)
    """
    got = straggler_sets(n, s)
    A = fr_weights(got, s)
    ok = np.all(A @ B == 1, axis=1) & np.all(A[~got] == 0)
    nnz = (B != 0)
    t = Tally()
    t.add(~ok, lambda k: f"n = {n}, s = {s}, received {np.flatnonzero(got[k]).tolist()}: "
                         f"A_I B = {(A[k] @ B).tolist()}")
    t.count(1, not (np.all(nnz.sum(axis=0) == s + 1) and np.all(nnz.sum(axis=1) == s + 1)),
            lambda: f"n = {n}, s = {s}: row/column weights "
                    f"{nnz.sum(1).tolist()}/{nnz.sum(0).tolist()}")
    return t


def fr_params(n_max: int):
    """Every ``(n, s)`` with ``2 <= n <= n_max``, ``s >= 1`` and ``(s + 1) | n``.

    >>> fr_params(4)
    [(2, 1), (3, 2), (4, 1), (4, 3)]
    """
    return [(n, s) for n in range(2, n_max + 1) for s in range(1, n) if n % (s + 1) == 0]


@statement(1, "Fractional Repetition Scheme (Alg. 1)",
           "for (s + 1) | n, n / (s + 1) groups of s + 1 workers each holding the group's s + 1 "
           "partitions and sending their sum: the full gradient from any n - s workers")
def _fr(ctx) -> Evidence:
    n_max = 12 if ctx.quick else 16
    t = Tally()
    for n, s in fr_params(n_max):
        B = fr_matrix(n, s)
        t.merge(fr_tally(B, n, s))
        code = make_code("gc-fr", n=n, s=s)
        t.count(1, not np.array_equal(code.B, B),
                lambda: f"gc-fr n = {n}, s = {s}: B = {fmt_matrix(code.B.astype(int))}")
        t.merge(code_decodes(code, B, s))
    w = make_code("gc-fr", n=6, s=2).decode([1, 2, 4, 5]).weights
    return t.evidence(f"every n <= {n_max} and s with (s + 1) | n, every set of n - s workers: "
                      "B_FR built from the text, one survivor per group, A_I B = 1 in "
                      "integers, s + 1 non-zeros per row and column; and gradcode's gc-fr: B "
                      "equal to B_FR exactly, every set decoded by its own decoder (weights "
                      "verified, rtol 1e-9)",
                      f"n = 6, s = 2 without workers 0, 3: A_I = "
                      f"{fr_weights(straggler_sets(6, 2)[2:3], 2)[0].tolist()}, gc-fr's weights "
                      f"{w.tolist()}")


@statement(1, "Fractional Repetition Scheme, figure (n = 6, s = 2)",
           "two groups of s + 1 = 3 workers, W1-W3 holding D1-D3 and W4-W6 holding D4-D6, "
           "each sending its plain sum; any 4 workers give the full gradient, one per group")
def _fr_figure(ctx) -> Evidence:
    code = make_code("gc-fr", n=6, s=2)
    placement = [[0, 1, 2]] * 3 + [[3, 4, 5]] * 3
    t = Tally()
    t.count(1, [p.tolist() for p in code.placement] != placement or not code.is_sum_code,
            lambda: f"placement {[p.tolist() for p in code.placement]}")
    t.count(1, not np.allclose(code.load, 0.5, rtol=0, atol=1e-12),
            lambda: f"loads {code.load.tolist()} != 3/6")
    for got in straggler_sets(6, 2):
        w = code.decode(np.flatnonzero(got)).weights
        t.count(1, not (set(w.tolist()) <= {0.0, 1.0} and w[:3].sum() == 1 and w[3:].sum() == 1
                        and weights_ok(w, fr_matrix(6, 2), got, rtol=0)),
                lambda: f"received {np.flatnonzero(got).tolist()}: weights {w.tolist()}")
    w = code.decode([1, 2, 4, 5]).weights
    return t.evidence("gc-fr(6, 2): its placement and plain sums, load 1/2, and all 15 sets of "
                      "4 workers (0/1 weights, one worker per group, exact)",
                      "without W1, W4: the sum of W" + " + W".join(
                          str(i + 1) for i in np.flatnonzero(w)))
