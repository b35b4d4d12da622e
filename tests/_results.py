"""Reading what the experiments write (results.csv, claims.csv) in the tests."""

from __future__ import annotations

import csv


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
