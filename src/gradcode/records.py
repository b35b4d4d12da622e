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
from collections.abc import Sequence
from dataclasses import MISSING, asdict, dataclass, fields
from pathlib import Path
from typing import Iterable

import numpy as np


@dataclass
class Record:
    """One round of a run, as both the simulator and the runtime emit it (module docstring).

    >>> r = Record(round=0, time_s=1.5, elapsed_s=1.5, workers_arrived=6,
    ...            recovered_fraction=0.75, decode_error=2.0, exact=False, load=0.25)
    >>> r.jobs_finished, r.waitout, r.loss                   # defaults
    (1, False, nan)
    >>> list(r.as_row())[:4] == COLUMNS[:4] == ["round", "time_s", "elapsed_s", "workers_arrived"]
    True
    """

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
_DEFAULTS = {f.name: f.default for f in fields(Record) if f.default is not MISSING}


class RecordTable(Sequence):
    """Records kept as columns (what the vectorised simulator fills, chunk by chunk): a read-only
    sequence of ``Record`` built on access, equal to the list of the same records.  ``column(name)``
    is one column as an array (``summarize`` reads them without building a record).

    >>> table = RecordTable()
    >>> table.extend(round=np.arange(3), time_s=np.array([1.0, 0.5, 2.0]),
    ...              elapsed_s=np.array([1.0, 1.5, 3.5]), workers_arrived=np.array([4, 4, 3]),
    ...              recovered_fraction=np.array([1.0, 1.0, 0.5]), decode_error=np.zeros(3),
    ...              exact=np.array([True, True, False]), load=np.full(3, 0.5))
    >>> len(table), table[2].recovered_fraction, table[-1].round, table.column("time_s").sum()
    (3, 0.5, 2, np.float64(3.5))
    >>> table[:2] == [table[0], table[1]], list(table) == table
    (True, True)
    """

    def __init__(self):
        self._chunks: list[dict] = []
        self._columns: dict | None = None

    def extend(self, **columns) -> None:
        """Append rounds: the required fields of ``Record`` as equally long arrays (the others
        take their defaults unless given)."""
        self._chunks.append(columns)
        self._columns = None

    def column(self, name: str) -> np.ndarray:
        cols = self._joined()
        if name in cols:
            return cols[name]
        return np.full(len(self), _DEFAULTS[name])

    def _joined(self) -> dict:
        if self._columns is None:
            keys = self._chunks[0].keys() if self._chunks else ()
            self._columns = {k: np.concatenate([c[k] for c in self._chunks]) for k in keys}
            self._chunks = [self._columns] if self._chunks else []
        return self._columns

    def __len__(self) -> int:
        return sum(len(c["round"]) for c in self._chunks)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        n = len(self)
        if not -n <= i < n:
            raise IndexError(f"record {i} of {n}")
        return self.record(self._joined(), i % n)

    @staticmethod
    def record(columns: dict, i: int) -> Record:
        """The ``Record`` of row ``i`` of ``columns`` (arrays as ``extend`` takes them)."""
        return Record(**{k: v[i].item() for k, v in columns.items()})

    def __eq__(self, other) -> bool:
        return isinstance(other, Sequence) and len(other) == len(self) and \
            all(a == b for a, b in zip(self, other))

    __hash__ = None


def write_csv(path, rows: Iterable[dict], columns=None, append: bool = False) -> None:
    """The one CSV writer: ``rows`` (dicts) under ``columns`` (default: the union of their keys,
    in order), a header line first unless appending to an existing file.

    >>> write_csv("runs.csv", [{"n": 8, "time_s": 1.5}, {"n": 16, "time_s": 2.25}])
    >>> write_csv("runs.csv", [{"n": 32, "time_s": 3.0}], append=True)     # no second header
    >>> print(open("runs.csv").read())
    n,time_s
    8,1.5
    16,2.25
    32,3.0
    <BLANKLINE>
    """
    path = Path(path)
    new = not (append and path.exists())
    with path.open("a" if append else "w", newline="") as fh:
        _write_rows(fh, rows, columns, header=new)


def csv_text(rows: Iterable[dict], columns=None) -> str:
    """``write_csv``'s output as a string (a file an experiment returns to be written).

    >>> text = csv_text([{"code": "gc-cr", "s": 2}, {"code": "isgc-cr", "c": 2}])
    >>> text.splitlines()                     # columns: the union of the rows' keys, in order
    ['code,s,c', 'gc-cr,2,', 'isgc-cr,,2']
    >>> csv_text([{"a": 1, "b": 2}], columns=["b"]).splitlines()
    Traceback (most recent call last):
    ValueError: dict contains fields not in fieldnames: 'a'
    """
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
    """Write records as CSV (a header line, then one row per round).

    >>> import gradcode
    >>> from gradcode.sim import simulate
    >>> res = simulate(gradcode.make_code("isgc-cr", n=8, c=2), "exp:1.5", "fastest:6", 10)
    >>> write_records("rounds.csv", res.records)
    >>> open("rounds.csv").readline().startswith("round,time_s,elapsed_s,workers_arrived,")
    True
    >>> len(read_records("rounds.csv"))
    10
    """
    write_csv(path, (r.as_row() for r in records), COLUMNS, append)


def read_records(path) -> list[Record]:
    """Read a CSV written by ``write_records``.

    >>> r = Record(round=3, time_s=0.5, elapsed_s=2.0, workers_arrived=7,
    ...            recovered_fraction=1.0, decode_error=0.0, exact=True, load=0.375)
    >>> write_records("rounds.csv", [r])
    >>> back = read_records("rounds.csv")[0]                  # types restored column by column
    >>> back.round, back.exact, back.load, back.loss
    (3, True, 0.375, nan)
    """
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
    any Ctrl-C; one that wants the partial run catches ``Interrupted``.

    >>> from gradcode.sim import SimResult
    >>> partial = SimResult(records=[], code={"name": "uncoded", "n": 4}, interrupted=True)
    >>> try:
    ...     finished(partial)
    ... except Interrupted as e:
    ...     print(e, e.result.interrupted, isinstance(e, KeyboardInterrupt))
    0 rounds finished True True
    """

    def __init__(self, result):
        super().__init__(f"{len(result.records)} rounds finished")
        self.result = result


class Diverged(RuntimeError):
    """Training diverged: the loss after round ``round`` is not finite.  Raised once the finished
    rounds are kept (and written); ``result`` holds them, with ``diverged`` the round.

    >>> import gradcode
    >>> from gradcode.datasets import load_dataset
    >>> from gradcode.sim import Trainer, simulate
    >>> trainer = Trainer(load_dataset("diabetes"), lr=1e30)             # far too large
    >>> try:
    ...     simulate(gradcode.make_code("gc-cr", n=4, s=1), "exp:0.1", "decodable", 100,
    ...              trainer=trainer)
    ... except Diverged as e:
    ...     print(e.result.diverged, len(e.result.records))
    ...     print(e)
    5 6
    training diverged at round 5 (the loss is not finite); try a smaller learning rate
    """

    def __init__(self, result):
        super().__init__(f"training diverged at round {result.diverged} (the loss is not "
                         "finite); try a smaller learning rate")
        self.result = result


class NothingRecovered(RuntimeError):
    """No round of a training run recovered anything, so nothing was trained (every worker
    failed, was too slow for the wait policy, or sent nothing decodable).  Raised once the
    rounds are kept and written; ``result`` holds them, ``str()`` each worker's last result.

    >>> from gradcode.sim import SimResult
    >>> print(NothingRecovered(SimResult(records=[], code={}), "worker 0: failed (OSError: x)"))
    no round of 0 recovered anything, so nothing was trained; each worker's last result: worker 0: failed (OSError: x)
    """

    def __init__(self, result, workers: str):
        super().__init__(f"no round of {len(result.records)} recovered anything, so nothing "
                         f"was trained; each worker's last result: {workers}")
        self.result = result


def finished(result):
    """``result``, or ``Interrupted(result)`` raised when the run was interrupted, or
    ``Diverged(result)`` when its training diverged.

    >>> from gradcode.sim import SimResult
    >>> done = SimResult(records=[], code={"name": "uncoded", "n": 4})
    >>> finished(done) is done
    True
    >>> finished(SimResult(records=[], code={}, diverged=7))
    Traceback (most recent call last):
    gradcode.records.Diverged: training diverged at round 7 (the loss is not finite); ...
    """
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
    scheme, paper 4) are left out of ``mean_recovered_fraction`` and ``exact_fraction``.

    >>> rows = [Record(r, time_s=t, elapsed_s=0.0, workers_arrived=6, recovered_fraction=f,
    ...                decode_error=0.0, exact=f == 1.0, load=0.25)
    ...         for r, (t, f) in enumerate([(2.0, float("nan")), (1.0, 1.0), (3.0, 0.5)])]
    >>> s = summarize(rows)
    >>> s["rounds"], s["total_time_s"], s["mean_recovered_fraction"], s["exact_fraction"]
    (3, 6.0, 0.75, 0.5)
    >>> summarize([])
    {'rounds': 0}
    """
    if not len(records):
        return {"rounds": 0}
    if isinstance(records, RecordTable):
        col = records.column
    else:
        def col(name):
            return np.array([getattr(r, name) for r in records])
    t, rec, exact = col("time_s"), col("recovered_fraction"), col("exact")
    due = ~np.isnan(rec)       # NaN: no job due (a sequential scheme's first T rounds), left out
    out = {"rounds": len(records), "total_time_s": float(t.sum()), "mean_round_time_s": float(t.mean()),
           "mean_recovered_fraction": float(rec[due].mean()) if due.any() else math.nan,
           "exact_fraction": float(exact[due].mean()) if due.any() else math.nan,
           "mean_workers_arrived": float(np.mean(col("workers_arrived"))),
           "waitouts": int(col("waitout").sum())}
    losses = col("loss")
    losses = losses[~np.isnan(losses)]
    if losses.size:
        out["final_loss"] = _finite(float(losses[-1]))
    for key in ("test_loss", "test_accuracy"):
        vals = col(key)
        vals = vals[~np.isnan(vals)]
        if vals.size:
            out[f"final_{key}"] = _finite(float(vals[-1]))
    out["eval_time_s"] = float(col("eval_s").sum())
    audits = col("audit_error")
    audits = audits[~np.isnan(audits)]
    if audits.size:
        out["max_audit_error"] = float(audits.max())
    return out


def describe_code(code) -> str:
    """``isgc-cr with n = 8, c = 2`` (a code or sequential scheme, or its ``describe()`` dict).

    >>> import gradcode
    >>> describe_code(gradcode.make_code("isgc-cr", n=8, c=2))
    'isgc-cr with n = 8, c = 2'
    >>> describe_code(gradcode.make_code("m-sgc", n=4, B=2, W=3, lam=2))
    'm-sgc with n = 4, B = 2, W = 3, lam = 2, seed = 0'
    >>> describe_code({"name": "heter", "speeds": [1.0, 2.0, 2.0], "s": 1})
    'heter with speeds = 1,2,2, s = 1'
    """
    info = dict(code) if isinstance(code, dict) else code.describe()
    name = info.pop("name", getattr(code, "name", "code"))
    params = ", ".join(f"{k} = {_short(v)}" for k, v in info.items())
    return f"{name} with {params}" if params else str(name)


def _short(v) -> str:
    if isinstance(v, dict):          # a code inside a scheme (gc-seq's single-round code)
        return f"({describe_code(v)})"
    if isinstance(v, (list, tuple)):
        return short_list([_short(x) for x in v])
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def short_list(items) -> str:
    """``items`` joined by commas, the first six and the count when there are more than 8.

    >>> short_list([1, 2, 3]), short_list(range(20))
    ('1,2,3', '0,1,2,3,4,5,... (20)')
    """
    items = [str(x) for x in items]
    return ",".join(items) if len(items) <= 8 else ",".join(items[:6]) + f",... ({len(items)})"


def describe_run(code, *, dataset=None, model=None, wait=None, delay=None, compute=None,
                 models: int = 1) -> str:
    """One line in words for a plot title or a printed header: the code and its parameters, the
    dataset and model, the wait policy, the injected delay and compute time, e.g. ``isgc-cr with
    n = 8, c = 2; digits, cnn model; wait fastest:4; delay exp:0.05``.

    >>> import gradcode
    >>> describe_run(gradcode.make_code("isgc-cr", n=8, c=2), dataset="digits", model="cnn",
    ...              wait="fastest:4", delay="exp:0.05")
    'isgc-cr with n = 8, c = 2; digits, cnn model; wait fastest:4; delay exp:0.05'
    >>> describe_run(gradcode.make_code("m-sgc", n=8, B=1, W=2, lam=2), wait="mu:1", models=2)
    'm-sgc with n = 8, B = 1, W = 2, lam = 2, seed = 0, 2 models pipelined; wait mu:1'
    """
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
