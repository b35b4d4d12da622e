"""The experiment runner: registry, output folder, CSV, plot and summary."""

from __future__ import annotations

import importlib
import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..records import write_csv

# name -> module (imported on demand, so `reproduce --list` stays fast)
EXPERIMENTS = {
    "tandon-runtime": "gradcode.experiments.tandon",
    "tandon-generalization": "gradcode.experiments.tandon",
    "isgc-time-per-step": "gradcode.experiments.isgc",
    "isgc-recovery": "gradcode.experiments.isgc_training",
    "isgc-hr-tradeoff": "gradcode.experiments.isgc_training",
    "heter-clusters": "gradcode.experiments.heter",
    "sgc-table1": "gradcode.experiments.sgc",
    "sgc-loads": "gradcode.experiments.sgc_loads",
    "shuffling": "gradcode.experiments.shuffling",
    "sim-vs-real": "gradcode.experiments.simreal",
}


@dataclass
class Context:
    """What an experiment gets: size (``quick``), a seed, where traces are, a progress factory."""
    quick: bool = False
    seed: int = 0
    traces: Path | None = None
    progress: bool = True
    notes: list[str] = field(default_factory=list)
    #: the experiment's result rows, appended as they finish (Ctrl-C writes the finished ones)
    rows: list[dict] = field(default_factory=list)

    def bar(self, iterable, desc: str = "", total: int | None = None):
        if not self.progress:
            return iterable
        from tqdm.auto import tqdm
        return tqdm(iterable, desc=desc, total=total, leave=False, mininterval=0.5)


@dataclass
class Output:
    rows: list[dict]
    figure: object            # a matplotlib Figure
    ours: str                 # what we measured, in one paragraph (markdown)
    extra_files: dict[str, str] = field(default_factory=dict)
    #: the paper's headline numbers next to ours: ``Headline`` rows, rendered as a table
    headline: list = field(default_factory=list)


@dataclass
class Headline:
    """One row of summary.md's "paper vs ours" table.  ``paper`` / ``ours`` are numbers (then the
    ratio ours / paper is shown) or short texts (qualitative claims: no ratio); ``why`` says
    whether the claim holds and, where the numbers differ, why."""
    quantity: str
    paper: float | str
    ours: float | str
    why: str = ""
    fmt: str = "{:.3g}"       # how numbers are printed
    unit: str = ""

    def ratio(self) -> float | None:
        if isinstance(self.paper, (int, float)) and isinstance(self.ours, (int, float)) \
                and self.paper != 0 and math.isfinite(self.ours):
            return float(self.ours) / float(self.paper)
        return None

    def cells(self) -> list[str]:
        def show(v):
            if isinstance(v, (int, float)):
                return self.fmt.format(v) + (f" {self.unit}" if self.unit else "")
            return str(v)
        r = self.ratio()
        return [self.quantity, show(self.paper), show(self.ours),
                "—" if r is None else f"{r:.2f}", self.why]


def headline_table(rows) -> str:
    """Markdown table of ``Headline`` rows (empty string when there are none)."""
    if not rows:
        return ""
    esc = [[c.replace("|", "\\|").replace("\n", " ") for c in h.cells()] for h in rows]
    lines = ["| claim | paper | ours | ours / paper | agreement, and why they differ |",
             "| --- | --- | --- | --- | --- |"]
    lines += ["| " + " | ".join(r) + " |" for r in esc]
    return "\n".join(lines) + "\n"


_ANY = object()


def derive_seed(ctx: Context, *keys: int) -> int:
    """An integer seed for ``simulate`` derived from ``ctx.seed`` and the configuration keys."""
    import numpy as np
    return int(np.random.SeedSequence([ctx.seed, *keys]).generate_state(1)[0])


def find(rows: list[dict], key: str | None = None, default=_ANY, **match):
    """The first of ``rows`` whose fields equal ``match`` (a field a row lacks reads as None),
    or its field ``key``; ``default`` when none matches (without one: ``LookupError``)."""
    for r in rows:
        if all(r.get(k) == v for k, v in match.items()):
            return r if key is None else r[key]
    if default is _ANY:
        raise LookupError(f"no row with {match}")
    return default


def _spec(name: str):
    module = importlib.import_module(EXPERIMENTS[name])
    return module.SPECS[name]


def list_experiments() -> list[tuple[str, str]]:
    return [(name, _spec(name)["title"]) for name in EXPERIMENTS]


def reproduce(name: str, quick: bool = False, out_root="results", seed: int = 0,
              traces=None, progress: bool = True) -> Path:
    """Run experiment ``name`` and write ``out_root/name/``; returns that folder."""
    if name not in EXPERIMENTS:
        raise ValueError(f"name: unknown experiment {name!r}; expected one of "
                         f"{', '.join(EXPERIMENTS)}")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if traces is not None and not Path(traces).is_dir():
        raise ValueError(f"traces: no such folder {str(traces)!r}")
    spec = _spec(name)
    ctx = Context(quick=quick, seed=seed, traces=Path(traces) if traces else None,
                  progress=progress)
    t0 = time.perf_counter()
    from threadpoolctl import threadpool_limits   # one BLAS thread: small NumPy models run
    #                                                many times faster on a busy 2-core machine
    folder = Path(out_root) / name
    try:
        with threadpool_limits(1):
            out = spec["run"](ctx)
    except KeyboardInterrupt:
        rows = list(ctx.rows)
        folder.mkdir(parents=True, exist_ok=True)
        _write_csv(folder / "results.csv", rows, empty=INTERRUPTED_HEADER)
        for stale in ("plot.png", "run.json"):      # an earlier run's, not this one's
            (folder / stale).unlink(missing_ok=True)
        held = (f"{len(rows)} finished row{' is' if len(rows) == 1 else 's are'} in `results.csv`"
                if rows else "no row had finished: `results.csv` holds only the header "
                f"`{','.join(INTERRUPTED_HEADER)}`")
        (folder / "summary.md").write_text(
            f"# {spec['title']}\n\nInterrupted (Ctrl-C) after {time.perf_counter() - t0:.1f} s: "
            f"{held}; no plot or comparison.\n")
        raise KeyboardInterrupt(f"{len(rows)} finished row{'' if len(rows) == 1 else 's'} "
                                f"written to {folder}/results.csv")
    elapsed = time.perf_counter() - t0
    folder.mkdir(parents=True, exist_ok=True)
    _write_csv(folder / "results.csv", out.rows)
    out.figure.savefig(folder / "plot.png", dpi=110, bbox_inches="tight")
    plt.close(out.figure)
    for fname, text in out.extra_files.items():
        (folder / fname).write_text(text)
    notes = "".join(f"- {n}\n" for n in ctx.notes)
    (folder / "summary.md").write_text(
        f"# {spec['title']}\n\n**Paper** ({spec['paper']}): {spec['claim']}\n\n"
        + (f"**Paper vs ours** (headline numbers; ratio = ours / paper):\n\n"
           f"{headline_table(out.headline)}\n" if out.headline else "")
        + f"**Ours** ({'quick' if quick else 'full'} run, seed {seed}, {elapsed:.1f} s): "
        f"{out.ours}\n\n" + (f"Notes:\n{notes}\n" if notes else "")
        + "Files: `results.csv` (one row per configuration), `plot.png`.\n")
    (folder / "run.json").write_text(json.dumps({"name": name, "quick": quick, "seed": seed,
                                                 "seconds": elapsed}, indent=2))
    return folder


#: ``results.csv``'s header when an experiment is interrupted before its first row finished (its
#: columns are known only from its rows): a header alone, saying so
INTERRUPTED_HEADER = ("experiment", "interrupted")


def _write_csv(path: Path, rows: list[dict], empty=("experiment",)) -> None:
    """``rows`` as CSV with the union of their keys as columns; for no rows, the header
    ``empty`` alone (the file is always written)."""
    write_csv(path, rows, None if rows else empty)


def plural(count: int, word: str) -> str:
    """``1 wait-out``, ``3 wait-outs``."""
    return f"{count} {word}{'' if count == 1 else 's'}"
