"""Reading what the experiments write (results.csv, claims.csv) in the tests."""

from __future__ import annotations

import csv
import math

import pytest

#: the Record fields two runs of one seed must agree on (not the wall-clock eval_s, loss)
RECORD_FIELDS = ("round", "time_s", "elapsed_s", "workers_arrived", "recovered_fraction",
                 "decode_error", "exact", "load", "waitout", "jobs_finished")


def same_records(a, b, fields=RECORD_FIELDS):
    """Two runs' records agree field by field, to 1e-12 (a sum of partition sizes may differ in
    its last bit with the order of summation); NaN equals NaN."""
    assert len(a) == len(b)
    for x, y in zip(a, b):
        for f in fields:
            u, v = getattr(x, f), getattr(y, f)
            if isinstance(u, float) and math.isnan(u):
                assert math.isnan(v), (x.round, f)
            else:
                assert u == pytest.approx(v, rel=1e-12, abs=1e-12), (x.round, f, u, v)


def number(v):
    """``v`` as a float where it is one, else unchanged."""
    try:
        return float(v)
    except ValueError:
        return v


def read_csv(path, numbers: bool = False) -> list[dict]:
    """The rows of the CSV file ``path`` (``numbers``: numeric cells as floats)."""
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    return [{k: number(v) for k, v in r.items()} for r in rows] if numbers else rows


def quick_output(folder, numbers: bool = False) -> tuple:
    """``(folder, results rows, claims rows)`` of an experiment's ``--quick`` run in ``folder``,
    once what every run writes is checked: results.csv, claims.csv (the ledger's columns),
    plot.png and summary.md with its paper, ours (quick run) and claims parts.  ``numbers``:
    numeric cells of results.csv as floats."""
    from pathlib import Path
    from gradcode.experiments._ledger import COLUMNS
    folder = Path(folder)
    for f in ("results.csv", "claims.csv", "plot.png", "summary.md"):
        assert (folder / f).stat().st_size > 0, f
    with open(folder / "claims.csv", newline="") as fh:
        assert tuple(next(csv.reader(fh))) == COLUMNS
    summary = (folder / "summary.md").read_text()
    assert "**Paper**" in summary and "**Ours** (quick run" in summary and "**Claims**" in summary
    return folder, read_csv(folder / "results.csv", numbers), read_csv(folder / "claims.csv")
