"""``make_code(name, **params)``: every scheme by its name -- the single-round codes of
``gradcode.codes`` and the sequential schemes of ``gradcode.sequential`` -- and the round trip
``make_code(**scheme.describe())``.

Its own module above both packages, so neither imports the other to find a scheme.  It imports
their public classes and files each under the class's own ``name`` (the name ``describe()``
gives back): ``CODES["gc-cr"] is GCCR``.  ``make_code`` is also ``gradcode.make_code``.
"""

from __future__ import annotations

import inspect
from typing import Any

from .codes import (BCC, BGC, GCCR, GCFR, ISGCCR, ISGCFR, ISGCHR, CommEfficient, CyclicMDS,
                    Expander, FRCApprox, GCPartial, Heter, HeterGroup, Ignore, MatrixCode,
                    StochasticGC, Uncoded)
from .sequential import MSGC, SRSGC, GCSeq, MSGCRep, SRSGCRep

#: every scheme's class: the single-round codes, then paper 4's sequential schemes (the
#: literature tables keep this order)
SCHEMES = (Uncoded, Ignore, GCFR, ISGCFR, GCCR, ISGCCR, ISGCHR, Heter, HeterGroup, GCPartial,
           MatrixCode, CyclicMDS, Expander, CommEfficient, BGC, FRCApprox, BCC, StochasticGC,
           GCSeq, SRSGC, SRSGCRep, MSGC, MSGCRep)

#: name -> class, each class under its own ``name`` (tests/test_registry.py: one class a name)
CODES: dict[str, type] = {cls.name: cls for cls in SCHEMES}


def code_class(name: str):
    """The class registered under ``name`` (ValueError listing the known names otherwise).

    >>> from gradcode.registry import code_class
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
    return CODES[name]


def code_parameters(name: str) -> dict[str, inspect.Parameter]:
    """The parameters ``make_code(name, ...)`` takes, in order (what the CLI turns into flags).

    >>> from gradcode.registry import code_parameters
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
