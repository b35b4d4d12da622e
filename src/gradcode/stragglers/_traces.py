"""Measured delay profiles (rounds x workers CSV) and the load-slope fit of paper 4, App. J."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np


def load_trace(path) -> np.ndarray:
    """``(rounds, n)`` response times from a CSV with a header row (``w0, w1, ...``).

    >>> from pathlib import Path
    >>> _ = Path("profile.csv").write_text("w0,w1,w2\\n0.51,0.73,2.10\\n0.49,1.20,0.55\\n")
    >>> load_trace("profile.csv").tolist()
    [[0.51, 0.73, 2.1], [0.49, 1.2, 0.55]]
    >>> load_trace("missing.csv")
    Traceback (most recent call last):
    ...
    ValueError: trace: no such file 'missing.csv'
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"trace: no such file {str(path)!r}")
    try:
        data = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
    except ValueError as exc:
        raise ValueError(f"trace: {path.name} is not a numeric CSV with a header row ({exc})")
    if data.size == 0 or not np.all(np.isfinite(data)):
        raise ValueError(f"trace: {path.name} has no rows or non-finite values")
    if data.min() < 0:
        r, w = np.unravel_index(np.argmin(data), data.shape)
        raise ValueError(f"trace: {path.name} has a negative response time ({data[r, w]:g} s in "
                         f"row {r + 1}, worker {w}); response times are seconds >= 0")
    return data


def traces_dir() -> Path | None:
    """Where the real Lambda traces are, if anywhere: ``$GRADCODE_TRACES``, else a ``shared/traces``
    beside or above the working directory (a checkout's ``../shared/traces``).

    >>> import os
    >>> from pathlib import Path
    >>> from unittest import mock
    >>> Path("shared/traces").mkdir(parents=True)
    >>> _ = Path("shared/traces/lambda.csv").write_text("w0,w1\\n0.51,0.73\\n0.49,1.20\\n")
    >>> with mock.patch.dict(os.environ):           # without $GRADCODE_TRACES set
    ...     _ = os.environ.pop("GRADCODE_TRACES", None)
    ...     found = traces_dir()
    >>> found.relative_to(Path.cwd().resolve()).as_posix()
    'shared/traces'
    >>> load_trace(found / "lambda.csv").shape
    (2, 2)
    """
    env = os.environ.get("GRADCODE_TRACES")
    candidates = [Path(env)] if env else []
    here = Path.cwd().resolve()
    candidates += [p / "shared" / "traces" for p in (here, *here.parents)]
    for c in candidates:
        if c.is_dir() and any(c.glob("*.csv")):
            return c
    return None


def fit_load_slope(profiles) -> tuple[float, float]:
    """Least-squares line ``delay = intercept + alpha * load`` over ``[(load, delays), ...]``.

    Paper 4, App. J: response times measured at several normalized loads are fitted by a line in
    the load; every sample of a profile is a point (so the fit weighs profiles by their size).

    >>> profiles = [(0.25, [1.4, 1.6]), (0.5, [2.0, 2.0]), (1.0, [3.1, 2.9])]   # ~ 1 + 2 load
    >>> alpha, intercept = fit_load_slope(profiles)
    >>> round(alpha, 3), round(intercept, 3)
    (2.0, 1.0)
    """
    profiles = list(profiles)
    if len({float(l) for l, _ in profiles}) < 2:
        raise ValueError("profiles: need delay profiles at two or more different loads, "
                         f"got loads {[l for l, _ in profiles]}")
    x = np.concatenate([np.full(np.size(d), float(l)) for l, d in profiles])
    y = np.concatenate([np.ravel(np.asarray(d, float)) for _, d in profiles])
    alpha, intercept = np.polyfit(x, y, 1)
    return float(alpha), float(intercept)
