"""The float32 wire (issue 22): its error (``wire_errors``, ``float32_error``) and its guarantee,
a decoded gradient within ``WIRE_TARGET`` of float64 messages (``refine``, which the engine's
learners call).

A worker of a code with real coefficients encodes its message ``m_i`` in float64 and sends
``fl32(m_i)``, reporting the norm ``rho_i = ||e_i||`` of the residual ``e_i = m_i - fl32(m_i)``
beside the message (``Result.rounding``: a float per message) and giving ``e_i`` when asked
(the runtime's workers compute the message again to give it).  The master
decodes ``g = sum_i a_i fl32(m_i)`` in float64; against the decoding of the float64 messages,
``g_ref = g + sum_i a_i e_i``, so by the triangle inequality

    ||g - g_ref|| <= sum_i |a_i| rho_i,

a bound the master knows before it steps (for a code sending ``m`` coded slices, ``|a_i|`` is
the norm of the vector's ``m`` weights).  Decoding weights are unbounded over straggler sets
(gc-cr at n = 256, s = 15 reaches ~1e4, issue 22), so this bound sometimes exceeds the target;
then ``refine`` fetches the residuals of the vectors with the largest terms (``Wire.fetch``, the
executor's ``residuals``) and adds them, until the rest of the bound is below the target:

    sum_{i not fetched} |a_i| rho_i <= WIRE_TARGET * (||g|| - that sum) <= WIRE_TARGET ||g_ref||.

Every step is then within ``WIRE_TARGET`` (relative) of the float64 wire's, at about half its
bytes: gc-cr at n = 256, s = 15 fetches the residuals of at most 4.2 % of the messages decoded,
on average (iid normal gradients; less on real ones: benchmarks/README.md).  A plain-sum
message (a 0/1 code) is accumulated in float32 by its worker, as any float32 sum of the float32
partial gradients is, and has no residual: its decoding weights are 1, or small (bgc's least
squares: at most 17 measured, float32 error <= 2e-7); a user's 0/1 ``matrix`` code decoded with
large weights is the one case ``refine`` does not see.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from itertools import combinations
from typing import Callable

import numpy as np

from ..codes import Code, check_int, check_rng

#: relative error of a decoded gradient against float64 messages that a float32 wire may cost
WIRE_TARGET = 1e-5


@dataclass(frozen=True)
class Wire:
    """A decoded job's float32 rounding: ``rounding[i]`` is ``||m_i - fl32(m_i)||`` of vector
    ``i`` (as its worker measured it), ``fetch(indices)`` returns those vectors' residuals
    ``m_i - fl32(m_i)`` (float32 arrays), or None when they cannot be had.

    >>> m = np.array([[1.0 + 1e-9, 2.0]])
    >>> e = (m - m.astype(np.float32)).astype(np.float32)
    >>> wire = Wire(np.linalg.norm(m - m.astype(np.float32), axis=1), lambda idx: e[idx])
    >>> bool(wire.rounding[0] > 0), wire.fetch([0]).shape
    (True, (1, 2))
    """
    rounding: np.ndarray
    fetch: Callable


def refine(g: np.ndarray, coefficients: np.ndarray, wire: Wire,
           target: float | None = None, add: Callable | None = None
           ) -> tuple[np.ndarray, int, float]:
    """``(g, fetched, bound)``: the decoded gradient ``g = sum_i a_i fl32(m_i)`` (float64, the
    slices concatenated and trimmed for a sliced code) with the residuals of the fewest vectors
    that bring the error bound below ``target`` (default ``WIRE_TARGET``, module doc) added;
    ``fetched`` how many, ``bound`` the rest of ``sum_i |a_i| rho_i`` (``||g - g_ref||`` at
    most).  ``coefficients``: ``(n_vectors,)``, or ``(n_vectors, m)`` for a sliced code.
    ``add(indices, residuals)`` returns ``g`` with those residuals' terms added (default: added
    to ``g`` in place, in float64; the learner decodes again, in float64 blocks, into its
    float32 buffer).

    >>> m = np.array([[1.0 + 1e-9, 2.0], [1.0, 2.0 - 1e-9]])       # two float64 messages
    >>> hi = m.astype(np.float32)
    >>> residuals = (m - hi).astype(np.float32)
    >>> wire = Wire(np.linalg.norm(m - hi, axis=1), lambda idx: [residuals[i] for i in idx])
    >>> a = np.array([1e4, -1e4])                                     # weights that cancel
    >>> g, fetched, bound = refine(a @ hi.astype(float), a, wire)
    >>> fetched, bool(np.linalg.norm(g - a @ m) <= 1e-5 * np.linalg.norm(a @ m))
    (2, True)
    """
    target = WIRE_TARGET if target is None else target
    c = np.asarray(coefficients, float).reshape(len(wire.rounding), -1)    # (n_vectors, m)
    share = np.asarray(wire.rounding, float) * np.linalg.norm(c, axis=1)
    order = np.argsort(-share, kind="stable")
    rest = np.append(np.cumsum(share[order][::-1])[::-1], 0.0)   # rest[j]: the first j fetched
    if add is None:
        g = np.asarray(g, np.float64)            # (refined in place)
        add = functools.partial(_add, g, c)
    done, size = 0, _norm(g)
    while rest[done] > target * (size - rest[done]):
        # the fewest more that would do at half the target (one fetch, as a rule)
        ok = rest[done + 1:] <= 0.5 * target * size          # its last is 0: true
        want = done + 1 + int(np.argmax(ok))
        idx = order[done:want]
        residuals = wire.fetch(idx)
        if residuals is None:
            break
        g = add(idx, residuals)
        done, size = want, _norm(g)
    return g, done, float(rest[done])


def _norm(g) -> float:
    """``||g||`` of an array, or of a tensor (a GPU's: ``torch.Tensor.norm``)."""
    return float(np.linalg.norm(g)) if isinstance(g, np.ndarray) else float(g.norm())


def _add(g: np.ndarray, c: np.ndarray, idx, residuals) -> np.ndarray:
    for i, e in zip(idx, residuals):
        e = np.asarray(e, np.float64)
        g += (c[i][:, None] * e[None, :]).reshape(-1)[:len(g)] if c.shape[1] > 1 else c[i, 0] * e
    return g


def _messages(code: Code, G: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(messages, full gradient)``: ``B G`` and ``sum_j g_j`` (``(L,)`` per message); for a
    sliced code each ``g_j`` cut into ``m`` zero-padded slices, ``(m, L)`` the full gradient."""
    m = int(code.slices)
    if m == 1:
        return code.B @ G, G.sum(axis=0)
    L = -(-G.shape[1] // m)
    cut = np.pad(G, ((0, 0), (0, m * L - G.shape[1]))).reshape(len(G), m, L)
    return np.einsum("iju,jul->il", code.encoding, cut), cut.sum(axis=0)


def wire_errors(code: Code, straggler_sets, gradients: np.ndarray) -> np.ndarray:
    """Per straggler set (rows of ``B`` missing), the relative error of the decoded gradient
    when the messages ``B g`` go on the wire as float32 and the master decodes them in float64,
    against the same decoding of float64 messages: ``||w fl32(B g) - w B g|| / ||w B g||`` (0
    where the decoding is 0).  ``gradients``: the partial gradients ``(k, dim)``.  A code
    sending coded slices (``slices = m > 1``): each ``g_j`` cut into ``m`` zero-padded slices,
    worker ``i`` sending ``sum_{j,u} E[i, j, u] g_j^(u)``, slice ``u`` decoded by ``W[:, u]``.

    >>> from gradcode import make_code
    >>> from gradcode.analysis import wire_errors
    >>> G = np.random.default_rng(0).standard_normal((8, 16))
    >>> errs = wire_errors(make_code("gc-cr", n=8, s=2), [[0, 1], [3, 7]], G)
    >>> errs.shape, bool(errs.max() < 1e-6)
    ((2,), True)
    """
    coded, _ = _messages(code, np.asarray(gradients, float))
    rounded = coded.astype(np.float32).astype(np.float64)
    everyone = np.arange(code.n_workers)
    out = []
    for S in straggler_sets:
        w = np.asarray(code.decode(np.setdiff1d(everyone, S)).weights)
        est64, est32 = w.T @ coded, w.T @ rounded     # (L,) or, sliced, (m, L)
        ref = float(np.linalg.norm(est64))
        out.append(float(np.linalg.norm(est32 - est64)) / ref if ref > 0 else 0.0)
    return np.array(out)


def refined_wire_errors(code: Code, straggler_sets, gradients: np.ndarray,
                        target: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(errors, fetched)`` per straggler set: ``wire_errors``' relative error once ``refine``
    has added the residuals it needs (each worker keeping ``m - fl32(m)``), and how many.

    >>> from gradcode import make_code
    >>> G = np.random.default_rng(0).standard_normal((64, 16))
    >>> errs, fetched = refined_wire_errors(make_code("gc-cr", n=64, s=7), [np.arange(7)], G)
    >>> bool(errs.max() <= WIRE_TARGET), fetched.tolist()
    (True, [0])
    """
    coded, _ = _messages(code, np.asarray(gradients, float))
    rounded = coded.astype(np.float32).astype(np.float64)
    residual = (coded - rounded).astype(np.float32)
    wire = Wire(np.linalg.norm(coded - rounded, axis=1), lambda idx: residual[idx])
    everyone = np.arange(code.n_workers)
    errors, fetched = [], []
    for S in straggler_sets:
        w = np.asarray(code.decode(np.setdiff1d(everyone, S)).weights)
        W = w.reshape(len(w), -1)
        ref, g = (W.T @ coded).reshape(-1), (W.T @ rounded).reshape(-1)
        g, k, _ = refine(g, w, wire, target)
        size = float(np.linalg.norm(ref))
        errors.append(float(np.linalg.norm(g - ref)) / size if size > 0 else 0.0)
        fetched.append(k)
    return np.array(errors), np.array(fetched)


def digits_gradients(k: int, rng: np.random.Generator) -> np.ndarray:
    """``(k, 64)``: real partial gradients to measure the wire on, those of a logistic
    regression (weights ``0.1 N(0, 1)``) on scikit-learn's digits (is the digit >= 5?), the
    rows split into ``k`` random parts.

    >>> G = digits_gradients(4, np.random.default_rng(0))
    >>> G.shape, bool(np.abs(G).sum(axis=1).min() > 0)
    ((4, 64), True)
    """
    from sklearn.datasets import load_digits
    k, rng = check_int("k", k, minimum=1), check_rng(rng)
    X, y = load_digits(return_X_y=True)
    X, y = X / 16.0, (y >= 5).astype(float)
    w = 0.1 * rng.standard_normal(64)
    parts = np.array_split(rng.permutation(len(y)), k)
    return np.stack([X[p].T @ (1 / (1 + np.exp(-X[p] @ w)) - y[p]) for p in parts])


def float32_error(code: Code, rng: np.random.Generator | None = None, trials: int = 200,
                  dim: int = 64, gradients: np.ndarray | None = None) -> dict[str, float]:
    """Worst relative error of the decoded gradient with float32 on the wire, against float64.

    The runtime's wire (issue 22): a worker encodes ``(B g)_i`` in float64 and sends it rounded
    to float32; the master decodes in float64.  For ``trials`` straggler sets of at most
    ``code.s`` straggling machines (every set when there are at most ``trials``, else the full
    set, runs of ``s`` consecutive machines and uniform sets of exactly ``s``; ``s = 0`` for
    codes without ``s``; a machine with several messages, e.g. gc-partial, loses only its last
    one: paper 1's partial-straggler model) and partial gradients ``g_j`` (``gradients``, ``(k, dim)``, or fresh
    standard normal ones): ``float32_rel_error`` is ``||w fl32(B g) - w B g|| / ||w B g||``, the
    wire's error against the same decoding of float64 messages; ``float64_rel_error`` the
    decoder's own error ``||w B g - sum_j g_j|| / sum_j ||g_j||`` (~1e-15 for an exact code).

    >>> from gradcode import make_code
    >>> from gradcode.analysis import float32_error
    >>> err = float32_error(make_code("gc-cr", n=8, s=2), np.random.default_rng(0), trials=20)
    >>> round(err["max_abs_B"], 3), err["float32_rel_error"] < 1e-6
    (0.565, True)
    >>> err["float64_rel_error"] < 1e-12
    True
    """
    trials = check_int("trials", trials, minimum=1)
    dim = check_int("dim", dim, minimum=1)
    rng = check_rng(rng)
    everyone = np.arange(code.n_workers)
    err32 = err64 = 0.0
    for missing in _straggler_sets(code, code.s or 0, trials, rng):
        G = rng.standard_normal((code.n_partitions, dim)) if gradients is None else gradients
        err32 = max(err32, float(wire_errors(code, [missing], G)[0]))
        w = np.asarray(code.decode(np.setdiff1d(everyone, missing), rng=rng).weights)
        coded, full = _messages(code, G)
        scale = float(np.linalg.norm(G, axis=1).sum())
        err64 = max(err64, float(np.linalg.norm(w.T @ coded - full)) / scale)
    return {"max_abs_B": code.max_coefficient, "float32_rel_error": err32,
            "float64_rel_error": err64}


def _straggler_sets(code: Code, s: int, trials: int, rng: np.random.Generator):
    """Sets of missing rows for up to ``s`` straggling machines: all when few; else the full
    set, runs of ``s`` consecutive machines at up to ``trials // 2`` evenly spaced starts (the
    structured sets where real-coefficient codes have their largest weights), then uniform
    sets of exactly ``s``."""
    sender = code.sender
    if code.n_machines == code.n_workers:
        last = np.arange(code.n_workers)
    else:  # a partial straggler still delivers its first message(s); it loses its last one
        last = np.array([np.flatnonzero(sender == m).max() for m in range(code.n_machines)])
    m = last.size
    total = sum(math.comb(m, j) for j in range(s + 1))
    if total <= trials:
        sets = [np.array(S, dtype=int) for j in range(s + 1) for S in combinations(range(m), j)]
        sets = [sets[i % total] for i in range(trials)]
    else:
        starts = np.unique(np.linspace(0, m - 1, max(1, (trials - 1) // 2)).astype(int))
        sets = [np.zeros(0, int)] + [(o + np.arange(s)) % m for o in starts]
        sets += [rng.choice(m, size=s, replace=False) for _ in range(trials - len(sets))]
    return [last[S] for S in sets]
