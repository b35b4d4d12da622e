"""The per-round ``Record`` the simulator and the runtime both emit, its CSV form, and the
one-line description in words of a run (plot titles, printed headers).

One row per round, same columns from both, so their results compare directly.  ``time_s`` is the
round's duration (simulated seconds in the simulator, wall-clock in the runtime) and
``elapsed_s`` the time since the run started.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Iterable


@dataclass
class Record:
    round: int
    time_s: float
    elapsed_s: float
    workers_arrived: int
    recovered_fraction: float
    decode_error: float
    exact: bool
    load: float
    waitout: bool = False
    jobs_finished: int = 1
    loss: float = math.nan
    test_loss: float = math.nan       # held-out loss and accuracy, every ``eval_every`` rounds
    test_accuracy: float = math.nan   # (classification; NaN for regression and between)
    eval_s: float = 0.0               # seconds spent evaluating after the round (not in time_s)
    audit_error: float = math.nan     # ``audit``: relative error of the decoded gradient against
    #                                   the combination of partition gradients the decoding claims

    def as_row(self) -> dict:
        return asdict(self)


COLUMNS = [f.name for f in fields(Record)]


def write_csv(path, rows: Iterable[dict], columns=None, append: bool = False) -> None:
    """The one CSV writer: ``rows`` (dicts) under ``columns`` (default: the union of their keys,
    in order), a header line first unless appending to an existing file."""
    path = Path(path)
    new = not (append and path.exists())
    with path.open("a" if append else "w", newline="") as fh:
        _write_rows(fh, rows, columns, header=new)


def csv_text(rows: Iterable[dict], columns=None) -> str:
    """``write_csv``'s output as a string (a file an experiment returns to be written)."""
    buf = io.StringIO()
    _write_rows(buf, rows, columns, header=True)
    return buf.getvalue()


def _write_rows(fh, rows, columns, header: bool) -> None:
    rows = list(rows)
    columns = list(columns) if columns is not None else list(
        dict.fromkeys(k for r in rows for k in r))
    w = csv.DictWriter(fh, fieldnames=columns)
    if header:
        w.writeheader()
    w.writerows(rows)


def write_records(path, records: Iterable[Record], append: bool = False) -> None:
    """Write records as CSV (a header line, then one row per round)."""
    write_csv(path, (r.as_row() for r in records), COLUMNS, append)


def read_records(path) -> list[Record]:
    """Read a CSV written by ``write_records``."""
    casts = {f.name: f.type for f in fields(Record)}
    out = []
    with Path(path).open(newline="") as fh:
        for row in csv.DictReader(fh):
            vals = {}
            for k, v in row.items():
                t = casts[k]
                vals[k] = (v == "True") if t in (bool, "bool") else \
                    int(v) if t in (int, "int") else float(v)
            out.append(Record(**vals))
    return out


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during ``simulate`` or ``train``, raised once the finished rounds are kept (and, for
    a run with an output folder, written): ``result`` holds them, with ``interrupted=True``.
    A caller running several simulations (an experiment, a tuning sweep) simply stops, as on
    any Ctrl-C; one that wants the partial run catches ``Interrupted``."""

    def __init__(self, result):
        super().__init__(f"{len(result.records)} rounds finished")
        self.result = result


class Diverged(RuntimeError):
    """Training diverged: the loss after round ``round`` is not finite.  Raised once the finished
    rounds are kept (and written); ``result`` holds them, with ``diverged`` the round."""

    def __init__(self, result):
        super().__init__(f"training diverged at round {result.diverged} (the loss is not "
                         "finite); try a smaller learning rate")
        self.result = result


def finished(result):
    """``result``, or ``Interrupted(result)`` raised when the run was interrupted, or
    ``Diverged(result)`` when its training diverged."""
    if result.interrupted:
        raise Interrupted(result)
    if result.diverged is not None:
        raise Diverged(result)
    return result


def _finite(x: float) -> float | None:
    """``x``, or None (JSON null) when it is not finite (a diverged run's last loss)."""
    return float(x) if math.isfinite(x) else None


def summarize(records: list[Record]) -> dict:
    """Headline figures of a run: mean round time, recovered fraction, share of exact rounds.

    Rounds whose ``recovered_fraction`` is NaN (no job due: the first ``T`` rounds of a sequential
    scheme, paper 4) are left out of ``mean_recovered_fraction`` and ``exact_fraction``."""
    import numpy as np

    if not records:
        return {"rounds": 0}
    t = np.array([r.time_s for r in records])
    rec = np.array([r.recovered_fraction for r in records])
    due = ~np.isnan(rec)       # NaN: no job due (a sequential scheme's first T rounds), left out
    exact = np.array([r.exact for r in records])
    out = {"rounds": len(records), "total_time_s": float(t.sum()), "mean_round_time_s": float(t.mean()),
           "mean_recovered_fraction": float(rec[due].mean()) if due.any() else math.nan,
           "exact_fraction": float(exact[due].mean()) if due.any() else math.nan,
           "mean_workers_arrived": float(np.mean([r.workers_arrived for r in records])),
           "waitouts": int(sum(r.waitout for r in records))}
    losses = [r.loss for r in records if not math.isnan(r.loss)]
    if losses:
        out["final_loss"] = _finite(losses[-1])
    for key in ("test_loss", "test_accuracy"):
        vals = [getattr(r, key) for r in records if not math.isnan(getattr(r, key))]
        if vals:
            out[f"final_{key}"] = _finite(vals[-1])
    out["eval_time_s"] = float(sum(r.eval_s for r in records))
    audits = [r.audit_error for r in records if not math.isnan(r.audit_error)]
    if audits:
        out["max_audit_error"] = float(max(audits))
    return out


def describe_code(code) -> str:
    """``isgc-cr with n = 8, c = 2`` (a code or sequential scheme, or its ``describe()`` dict)."""
    info = dict(code) if isinstance(code, dict) else code.describe()
    name = info.pop("name", getattr(code, "name", "code"))
    params = ", ".join(f"{k} = {_short(v)}" for k, v in info.items())
    return f"{name} with {params}" if params else str(name)


def _short(v) -> str:
    if isinstance(v, dict):          # a code inside a scheme (gc-seq's single-round code)
        return f"({describe_code(v)})"
    if isinstance(v, (list, tuple)):
        items = [_short(x) for x in v]
        return ",".join(items) if len(items) <= 8 else ",".join(items[:6]) + f",... ({len(items)})"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def describe_run(code, *, dataset=None, model=None, wait=None, delay=None, compute=None,
                 models: int = 1) -> str:
    """One line in words for a plot title or a printed header: the code and its parameters, the
    dataset and model, the wait policy, the injected delay and compute time, e.g. ``isgc-cr with
    n = 8, c = 2; digits, cnn model; wait fastest:4; delay exp:0.05``."""
    parts = [describe_code(code) + (f", {models} models pipelined" if models > 1 else "")]
    if dataset:
        parts.append(f"{dataset}, {model} model" if model else f"{dataset}")
    if wait:
        parts.append(f"wait {wait}")
    if delay:
        parts.append(f"delay {delay}")
    if compute:
        parts.append(f"compute {compute}")
    return "; ".join(parts)
