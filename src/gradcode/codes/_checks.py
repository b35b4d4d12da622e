"""Validation at the public edge (errors name the parameter, the constraint and the value) and
immutability: what every code, and every sequential scheme, builds on."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

#: absolute tolerance on ``w @ B - 1`` (scaled by the size of the terms) for ``exact``
EXACT_RTOL = 1e-8


def readonly(x):
    """``x`` with its array(s) made read-only (an ndarray, or a sparse array's data/indices).

    >>> from gradcode.codes import readonly
    >>> x = readonly(np.arange(3.0))
    >>> x.flags.writeable
    False
    >>> x[0] = 1.0
    Traceback (most recent call last):
    ...
    ValueError: assignment destination is read-only
    """
    for a in (x.data, x.indices, x.indptr) if sp.issparse(x) else (x,):
        a.setflags(write=False)
    return x


class Immutable:
    """Attributes are set once, in the constructor, through ``_set``; setting or deleting one
    afterwards raises ``AttributeError`` (``functools.cached_property`` still caches).

    >>> from gradcode.codes import Immutable
    >>> class Point(Immutable):
    ...     def __init__(self, x):
    ...         self._set(x=x)
    >>> p = Point(1.5)
    >>> p.x
    1.5
    >>> p.x = 2.0
    Traceback (most recent call last):
    ...
    AttributeError: x: Point is immutable; build another one with make_code(...)
    """

    __slots__ = ()

    def _set(self, **attrs: Any) -> None:
        self.__dict__.update(attrs)

    def __setattr__(self, key, value):
        raise AttributeError(f"{key}: {type(self).__name__} is immutable; build another one "
                             "with make_code(...)")

    def __delattr__(self, key):
        raise AttributeError(f"{key}: {type(self).__name__} is immutable")


def check_rng(rng) -> np.random.Generator:
    """``rng``, or without one the fixed default stream ``numpy.random.default_rng(0)`` (fresh
    at each call, so a call without ``rng`` gives the same answer every time); ValueError for
    anything but a ``numpy.random.Generator``.

    >>> from gradcode.codes import check_rng
    >>> int(check_rng(None).integers(100)) == int(np.random.default_rng(0).integers(100))
    True
    >>> check_rng(0)
    Traceback (most recent call last):
    ...
    ValueError: rng: expected a numpy.random.Generator or None, got int
    """
    if rng is None:
        return np.random.default_rng(0)
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng: expected a numpy.random.Generator or None, got {type(rng).__name__}")
    return rng


def check_int(name: str, value, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """Validate an integer parameter; the error names the parameter, constraint and value.

    >>> from gradcode.codes import check_int
    >>> check_int("n", np.int64(8), minimum=1)
    8
    >>> check_int("s", 9, minimum=0, maximum=7)
    Traceback (most recent call last):
    ...
    ValueError: s: expected an integer <= 7, got 9
    >>> check_int("n", 8.0)
    Traceback (most recent call last):
    ...
    ValueError: n: expected an integer, got 8.0
    """
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name}: expected an integer, got {value!r}")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name}: expected an integer >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name}: expected an integer <= {maximum}, got {value}")
    return value


def check_shares(name: str, sizes, k: int | None = None, what: str = "") -> np.ndarray:
    """``sizes`` as positive shares of a dataset summing to 1 (``k`` of them where given), or
    ValueError naming ``name`` (``what``: what they are, for the message).

    >>> check_shares("partition_sizes", [0.25, 0.75]).tolist()
    [0.25, 0.75]
    >>> check_shares("sizes", [25, 75])
    Traceback (most recent call last):
    ...
    ValueError: sizes: expected positive shares summing to 1, got [25, 75] (sum 100)
    """
    try:
        a = np.array(sizes, dtype=float)
    except (TypeError, ValueError):
        a = None
    if a is None or a.ndim != 1 or (k is not None and a.shape != (k,)) \
            or not np.all(np.isfinite(a)) or np.any(a <= 0) \
            or not np.isclose(a.sum(), 1.0, rtol=0, atol=1e-9):
        total = f" (sum {a.sum():.6g})" if a is not None and a.ndim == 1 else ""
        count = f"{k} " if k is not None else ""
        raise ValueError(f"{name}: expected {count}positive shares summing to 1{what}, got "
                         f"{sizes!r}{total}")
    return a


#: bytes a code needs per nonzero coefficient of ``B`` while it is built and used (measured:
#: the CSR arrays, the construction's index temporaries, ``load``, ``placement``; ~100 B)
BYTES_PER_COEFFICIENT = 128


def available_memory() -> int:
    """Bytes of memory available to this process now (``MemAvailable``; 8 GiB if unknown)."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 8 << 30


def check_size(name: str, coefficients: int, parameter: str = "n") -> None:
    """Refuse, before building it, a code whose ``coefficients`` nonzeros of ``B`` would not fit
    in half the memory available now; the error names ``parameter`` and both figures."""
    need = int(coefficients) * BYTES_PER_COEFFICIENT
    have = available_memory()
    if need > have // 2:
        raise ValueError(f"{parameter}: {name} with these parameters has {int(coefficients):,} "
                         f"coefficients in B, about {need / 1e9:.1f} GB to build; this machine "
                         f"has {have / 1e9:.1f} GB available (at most half is used)")
