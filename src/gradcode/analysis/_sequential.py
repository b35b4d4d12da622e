"""Normalized loads of the sequential schemes and the lower bounds of paper 4, App. F.

Normalized load (Sec. 2): the fraction of the dataset a worker computes on in one round.
Notation: ``n`` workers, burst length ``B``, window ``W``, at most ``lam`` (λ) distinct stragglers
per window; for the arbitrary model ``N`` straggling rounds per worker in a window of ``W`` (W′)
rounds with at most ``lam`` (λ′) stragglers.  Every function takes scalars or arrays (broadcast
together) and returns a float for scalar input, an ndarray otherwise.
"""

from __future__ import annotations

import numpy as np

#: scheme names sgc_load knows, with the single-round code each uses (Sec. 3.1-3.3, App. G)
SGC_SCHEMES = ("gc-seq", "sr-sgc", "sr-sgc-rep", "m-sgc", "m-sgc-rep")


def _ints(**arrays):
    if all(type(x) is int for x in arrays.values()):            # scalar fast path
        return list(arrays.values())
    out = []
    for name, x in arrays.items():
        a = np.asarray(x)
        if a.dtype == bool or not (np.issubdtype(a.dtype, np.integer)
                                   or (np.issubdtype(a.dtype, np.floating)
                                       and np.all(np.mod(a, 1) == 0))):
            raise ValueError(f"{name}: expected integers, got {x!r}")
        out.append(a.astype(np.int64))
    return out


def _require(ok, name: str, constraint: str, **values):
    """ValueError naming ``name`` and ``constraint`` with the first offending values."""
    if ok is True or ok is np.True_:
        return
    ok = np.asarray(ok)
    if not ok.all():
        idx = np.unravel_index(np.argmin(ok), ok.shape) if ok.ndim else ()
        got = ", ".join(f"{k}={np.broadcast_to(v, ok.shape)[idx]}" for k, v in values.items())
        raise ValueError(f"{name}: expected {constraint}, got {got}")


def _out(x):
    if np.ndim(x) == 0:
        return float(x)
    return np.asarray(x, float)


def _where(cond, a, b):
    return (a if cond else b) if np.ndim(cond) == 0 else np.where(cond, a, b)


def sr_sgc_s(B, W, lam):
    """SR-SGC's ``s = ceil(B λ / (W - 1 + B))`` (Sec. 3.2), integer arithmetic.

    >>> from gradcode.analysis import sr_sgc_s
    >>> sr_sgc_s(2, 3, 23)          # paper 4, Table 1: B = 2, W = 3, λ = 23 gives s = 12
    12
    >>> sr_sgc_s(2, 3, np.array([4, 8, 23])).tolist()
    [2, 4, 12]
    """
    B, W, lam = _ints(B=B, W=W, lam=lam)
    return -(-(B * lam) // (W - 1 + B))


def check_sr_sgc(n, B, W, lam):
    """Validate SR-SGC's parameters (Sec. 3.2): ``0 < λ <= n``, ``B >= 1``, ``B | (W - 1)``
    with ``W >= B + 1`` (``W = xB + 1``, ``x >= 1``), and ``s < n``.  Returns ``s``.

    >>> from gradcode.analysis import check_sr_sgc
    >>> check_sr_sgc(256, 2, 3, 23)
    12
    >>> check_sr_sgc(4, 2, 4, 2)
    Traceback (most recent call last):
    ...
    ValueError: W: expected W = x*B + 1 with x >= 1 (B divides W - 1), got W=4, B=2
    """
    n, B, W, lam = _ints(n=n, B=B, W=W, lam=lam)
    _require(n >= 1, "n", "n >= 1", n=n)
    _require(B >= 1, "B", "B >= 1", B=B)
    _require((W - 1 >= B) & ((W - 1) % B == 0), "W",
             "W = x*B + 1 with x >= 1 (B divides W - 1)", W=W, B=B)
    _require((lam >= 1) & (lam <= n), "lam", "0 < lam <= n", lam=lam, n=n)
    s = sr_sgc_s(B, W, lam)
    _require(s < n, "lam", "s = ceil(B*lam/(W-1+B)) < n", lam=lam, s=s, n=n)
    return s


def check_m_sgc(n, B, W, lam):
    """Validate M-SGC's parameters (Sec. 3.3): ``0 <= λ <= n``, ``0 < B < W``.

    >>> from gradcode.analysis import check_m_sgc
    >>> check_m_sgc(4, 2, 3, 2)         # paper 4, Sec. 3.3.1: n = 4, B = 2, W = 3, λ = 2
    >>> check_m_sgc(4, 3, 3, 2)
    Traceback (most recent call last):
    ...
    ValueError: W: expected B < W, got W=3, B=3
    """
    n, B, W, lam = _ints(n=n, B=B, W=W, lam=lam)
    _require(n >= 1, "n", "n >= 1", n=n)
    _require(B >= 1, "B", "0 < B", B=B)
    _require(W > B, "W", "B < W", W=W, B=B)
    _require((lam >= 0) & (lam <= n), "lam", "0 <= lam <= n", lam=lam, n=n)


def sgc_load(scheme: str, n, B=None, W=None, lam=None, *, s=None):
    """Normalized load per worker per round of a sequential scheme.

    * ``"gc-seq"`` (needs ``s``): (n, s)-GC round by round, ``(s + 1) / n`` (Sec. 3.1);
    * ``"sr-sgc"``, ``"sr-sgc-rep"``: ``(s + 1) / n`` with ``s = ceil(Bλ/(W-1+B))`` (Sec. 3.2);
    * ``"m-sgc"``, ``"m-sgc-rep"``: eq. 1, ``(λ+1)(W-1+B) / (n(B + (W-1)(λ+1)))`` for ``λ < n``
      and ``(W-1+B) / (n(W-1))`` for ``λ = n`` (Sec. 3.3.2, Remark 3.2).

    The -Rep variants (App. G) have their base scheme's load; their divisibility conditions are
    checked by the schemes themselves.  Invalid parameters raise ValueError naming the constraint.

    Paper 4, Example F.1 (``n = 4, B = 1, W = 2, λ = 4``): SR-SGC 3/4, M-SGC 1/2; Sec. 3.3.1
    (``n = 4, B = 2, W = 3, λ = 2``): 12/32.

    >>> from gradcode.analysis import sgc_load
    >>> sgc_load("sr-sgc", 4, B=1, W=2, lam=4), sgc_load("m-sgc", 4, B=1, W=2, lam=4)
    (0.75, 0.5)
    >>> sgc_load("m-sgc", 4, B=2, W=3, lam=2), sgc_load("gc-seq", 8, s=2)
    (0.375, 0.375)
    >>> sgc_load("m-sgc", 20, B=3, W=np.array([4, 8, 16]), lam=4).round(4).tolist()
    [0.0833, 0.0658, 0.0577]
    """
    if scheme not in SGC_SCHEMES:
        raise ValueError(f"scheme: expected one of {', '.join(SGC_SCHEMES)}, got {scheme!r}")
    if scheme == "gc-seq":
        if s is None:
            raise ValueError("s: 'gc-seq' needs s")
        n, s = _ints(n=n, s=s)
        _require(n >= 1, "n", "n >= 1", n=n)
        _require((s >= 0) & (s < n), "s", "0 <= s < n", s=s, n=n)
        return _out((s + 1) / n)
    if B is None or W is None or lam is None:
        raise ValueError(f"B, W, lam: {scheme!r} needs B, W and lam")
    if scheme.startswith("sr-sgc"):
        s = check_sr_sgc(n, B, W, lam)
        return _out((s + 1) / np.asarray(n))
    check_m_sgc(n, B, W, lam)
    n, B, W, lam = _ints(n=n, B=B, W=W, lam=lam)
    general = (lam + 1) * (W - 1 + B) / (n * (B + (W - 1) * (lam + 1)))
    return _out(_where(lam == n, (W - 1 + B) / (n * (W - 1)), general))


def load_lower_bound_f1(n, B, W, lam):
    """Theorem F.1 (eq. 2): any sequential GC scheme tolerating the (B, W, λ)-bursty model with
    finite delay has normalized load at least ``(W-1+B) / (n(W-1) + B(n-λ))`` if ``B < W`` and
    ``1/(n-λ)`` if ``B = W`` (``inf`` when ``B = W`` and ``λ = n``).
    Parameters: ``n >= 1``, ``0 <= λ <= n``, ``1 <= B <= W``.

    Paper 4, Example F.1: M-SGC's load 1/2 for ``n = 4, B = 1, W = 2, λ = 4`` is optimal.

    >>> from gradcode.analysis import load_lower_bound_f1
    >>> load_lower_bound_f1(4, 1, 2, 4)
    0.5
    >>> load_lower_bound_f1(20, 3, np.array([4, 8, 16]), 4).round(4).tolist()   # Fig. 11
    [0.0556, 0.0532, 0.0517]
    """
    n, B, W, lam = _ints(n=n, B=B, W=W, lam=lam)
    _require(n >= 1, "n", "n >= 1", n=n)
    _require((lam >= 0) & (lam <= n), "lam", "0 <= lam <= n", lam=lam, n=n)
    _require((B >= 1) & (B <= W), "B", "1 <= B <= W", B=B, W=W)
    with np.errstate(divide="ignore"):
        equal = np.where(lam < n, 1.0 / np.maximum(n - lam, 1), np.inf)
        denominator = np.float64(1) * (n * (W - 1) + B * (n - lam))   # 0 only where B = W
        return _out(np.where(B < W, np.divide(W - 1 + B, denominator), equal))


def load_lower_bound_f2(n, N, W, lam):
    """Theorem F.2 (eq. 3) for the (N, W′, λ′)-arbitrary model, with ``W`` = W′ and ``lam`` = λ′:
    load at least ``W′ / (n(W′-N) + N(n-λ′))`` if ``N < W′`` and ``1/(n-λ′)`` if ``N = W′``
    (``inf`` when also ``λ′ = n``).  Parameters: ``n >= 1``, ``0 <= λ′ <= n``, ``0 <= N <= W′``,
    ``W′ >= 1``.

    M-SGC with ``B = 1, W = 2, λ = 4`` tolerates the ``(N = 1, W′ = 2, λ′ = 4)``-arbitrary
    model (paper 4, Prop. 3.2); its load 1/2 meets this bound (Remark F.1):

    >>> from gradcode.analysis import load_lower_bound_f2
    >>> load_lower_bound_f2(4, 1, 2, 4)
    0.5
    >>> load_lower_bound_f2(4, np.array([1, 2]), 2, 4).tolist()   # N = W′ and λ′ = n: inf
    [0.5, inf]
    """
    n, N, W, lam = _ints(n=n, N=N, W=W, lam=lam)
    _require(n >= 1, "n", "n >= 1", n=n)
    _require((lam >= 0) & (lam <= n), "lam", "0 <= lam <= n", lam=lam, n=n)
    _require(W >= 1, "W", "W >= 1", W=W)
    _require((N >= 0) & (N <= W), "N", "0 <= N <= W", N=N, W=W)
    with np.errstate(divide="ignore"):
        equal = np.where(lam < n, 1.0 / np.maximum(n - lam, 1), np.inf)
        denominator = np.float64(1) * (n * (W - N) + N * (n - lam))   # 0 only where N = W
        return _out(np.where(N < W, np.divide(W, denominator), equal))
