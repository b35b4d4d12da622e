"""``make_code(name, **params)``: every scheme by its name -- the single-round codes of
``gradcode.codes`` and the sequential schemes of ``gradcode.sequential`` -- and the round trip
``make_code(**scheme.describe())``.

Its own module above both packages, so neither imports the other to find a scheme: the classes
are named by module and imported on first use (``import gradcode.registry`` imports neither).
``gradcode.codes`` re-exports ``make_code``, ``CODES``, ``code_class`` and ``code_parameters``.
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any

# name -> (module, class); modules are imported on first use
CODES: dict[str, tuple[str, str]] = {
    "uncoded": ("gradcode.codes._repetition", "Uncoded"),
    "ignore": ("gradcode.codes._repetition", "Ignore"),
    "gc-fr": ("gradcode.codes._repetition", "GCFR"),
    "isgc-fr": ("gradcode.codes._repetition", "ISGCFR"),
    "gc-cr": ("gradcode.codes._cyclic", "GCCR"),
    "isgc-cr": ("gradcode.codes._cyclic", "ISGCCR"),
    "isgc-hr": ("gradcode.codes._hybrid", "ISGCHR"),
    "heter": ("gradcode.codes._heterogeneous", "Heter"),
    "heter-group": ("gradcode.codes._heterogeneous", "HeterGroup"),
    "gc-partial": ("gradcode.codes._partial", "GCPartial"),
    "matrix": ("gradcode.codes._custom", "MatrixCode"),
    "cyclic-mds": ("gradcode.codes._mds", "CyclicMDS"),
    "expander": ("gradcode.codes._expander", "Expander"),
    "comm-efficient": ("gradcode.codes._comm", "CommEfficient"),
    "bgc": ("gradcode.codes._approximate", "BGC"),
    "frc-approx": ("gradcode.codes._approximate", "FRCApprox"),
    "bcc": ("gradcode.codes._coupon", "BCC"),
    "stochastic-gc": ("gradcode.codes._stochastic", "StochasticGC"),
    "gc-seq": ("gradcode.sequential._gc", "GCSeq"),
    "sr-sgc": ("gradcode.sequential._srsgc", "SRSGC"),
    "sr-sgc-rep": ("gradcode.sequential._srsgc", "SRSGCRep"),
    "m-sgc": ("gradcode.sequential._msgc", "MSGC"),
    "m-sgc-rep": ("gradcode.sequential._msgc", "MSGCRep"),
}


def code_class(name: str):
    """The class registered under ``name`` (ValueError listing the known names otherwise).

    >>> from gradcode.codes import code_class
    >>> code_class("gc-cr").__name__
    'GCCR'
    >>> code_class("gc")
    Traceback (most recent call last):
    ...
    ValueError: name: unknown code 'gc'; expected one of: bcc, bgc, ...
    """
    if name not in CODES:
        known = ", ".join(sorted(CODES))
        raise ValueError(f"name: unknown code {name!r}; expected one of: {known}")
    module, cls = CODES[name]
    return getattr(importlib.import_module(module), cls)


def code_parameters(name: str) -> dict[str, inspect.Parameter]:
    """The parameters ``make_code(name, ...)`` takes, in order (what the CLI turns into flags).

    >>> from gradcode.codes import code_parameters
    >>> params = code_parameters("gc-cr")
    >>> list(params), params["seed"].default
    (['n', 's', 'seed'], 0)
    """
    params = inspect.signature(code_class(name).__init__).parameters
    return {k: p for k, p in params.items() if k != "self"}


def make_code(name: str, **params: Any):
    """Build the code ``name`` with ``params`` (e.g. ``make_code("gc-cr", n=8, s=2, seed=1)``).

    Invalid parameters raise ``ValueError`` naming the parameter, the constraint and the value.

    >>> from gradcode import make_code
    >>> code = make_code("gc-cr", n=8, s=2, seed=1)
    >>> code
    make_code('gc-cr', n=8, s=2, seed=1)
    >>> code.decode([0, 1, 2, 4, 5, 7]).exact       # any s = 2 stragglers
    True
    >>> make_code("gc-fr", n=8, s=2)
    Traceback (most recent call last):
    ...
    ValueError: s: gc-fr needs (s+1) to divide n=8, got s=2
    """
    cls = code_class(name)
    expected = code_parameters(name)
    unknown = sorted(set(params) - set(expected))
    if unknown:
        raise ValueError(f"{unknown[0]}: not a parameter of {name!r}; it takes "
                         f"{', '.join(expected)}")
    missing = [k for k, p in expected.items() if p.default is inspect.Parameter.empty
               and k not in params]
    if missing:
        raise ValueError(f"{missing[0]}: {name!r} needs {', '.join(missing)}")
    return cls(**params)
