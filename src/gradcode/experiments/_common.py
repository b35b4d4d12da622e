"""The experiment runner: registry, output folder, CSV, plot and summary."""

from __future__ import annotations

import importlib
import json
import time
from pathlib import Path

from ..folders import FolderLock
from ..records import write_csv
from ._experiment import Context, Experiment, Output, as_experiment
from ._ledger import CHECK_COLUMNS, COLUMNS, Check, claims_table

#: ``Context`` and ``Output`` are served here too (the ``theorems`` experiment imports them so)
__all__ = ["EXPERIMENTS", "Context", "Experiment", "Output", "list_experiments", "reproduce",
           "reproduce_all", "write_ledger"]

# name -> module (imported on demand, so `reproduce --list` stays fast)
EXPERIMENTS = {
    "tandon-runtime": "gradcode.experiments.tandon",
    "tandon-generalization": "gradcode.experiments.tandon",
    "isgc-time-per-step": "gradcode.experiments.isgc",
    "isgc-recovery": "gradcode.experiments.isgc_training",
    "isgc-hr-tradeoff": "gradcode.experiments.isgc_training",
    "heter-clusters": "gradcode.experiments.heter",
    "heter-loss-time": "gradcode.experiments.heter_loss",
    "sgc-table1": "gradcode.experiments.sgc",
    "sgc-selection": "gradcode.experiments.sgc_selection",
    "sgc-loads": "gradcode.experiments.sgc_loads",
    "sgc-trace-stats": "gradcode.experiments.sgc_traces",
    "sgc-switching": "gradcode.experiments.sgc_switching",
    "sgc-decode-time": "gradcode.experiments.sgc_decode",
    "sgc-estimator": "gradcode.experiments.sgc_estimator",
    "shuffling": "gradcode.experiments.shuffling",
    "shuffling-iris": "gradcode.experiments.shuffling_iris",
    "sim-vs-real": "gradcode.experiments.simreal",
    "theorems": "gradcode.experiments.theorems",
    "literature": "gradcode.experiments.literature",
}


def _spec(name: str):
    """The registry's entry of ``name``: its module's ``SPECS[name]``, an ``Experiment`` (or a
    dict of the older form, see ``as_experiment``)."""
    module = importlib.import_module(EXPERIMENTS[name])
    return module.SPECS[name]


def _experiment(name: str) -> Experiment:
    return as_experiment(name, _spec(name))


def list_experiments() -> list[tuple[str, str]]:
    """``(name, title)`` of every experiment, in ``EXPERIMENTS``' order (``reproduce --list``).

    >>> from gradcode.experiments import list_experiments
    >>> experiments = list_experiments()
    >>> len(experiments), experiments[0]
    (19, ('tandon-runtime', 'Paper 1: running time per iteration, naive vs FR vs CR vs partial
    schemes'))
    """
    return [(name, _experiment(name).title) for name in EXPERIMENTS]


def reproduce(name: str, quick: bool = False, out_root="results", seed: int = 0,
              traces=None, progress: bool = True) -> Path:
    """Run experiment ``name`` and write ``out_root/name/``; returns that folder.

    >>> from gradcode.experiments import reproduce
    >>> folder = reproduce("sgc-estimator", quick=True, out_root="results", progress=False)
    >>> folder.as_posix(), sorted(p.name for p in folder.iterdir())
    ('results/sgc-estimator',
     ['checks.csv', 'claims.csv', 'plot.png', 'results.csv', 'run.json', 'summary.md'])
    >>> folder.joinpath("summary.md").read_text().splitlines()[0]
    "# Paper 4, App. J: the run-time estimate's wait-out rule vs the authors' simulator"
    >>> import csv
    >>> checks = list(csv.DictReader(folder.joinpath("checks.csv").read_text().splitlines()))
    >>> [c["verdict"] for c in checks]          # our own checks: no claim of the paper here
    ['reproduced', 'reproduced']
    """
    if name not in EXPERIMENTS:
        raise ValueError(f"name: unknown experiment {name!r}; expected one of "
                         f"{', '.join(EXPERIMENTS)}")
    import matplotlib
    matplotlib.use("Agg")

    if traces is not None and not Path(traces).is_dir():
        raise ValueError(f"traces: no such folder {str(traces)!r}")
    exp = _experiment(name)
    ctx = Context(quick=quick, seed=seed, traces=Path(traces) if traces else None,
                  progress=progress)
    t0 = time.perf_counter()
    from threadpoolctl import threadpool_limits   # one BLAS thread: small NumPy models run
    #                                                many times faster on a busy 2-core machine
    folder = Path(out_root) / name
    try:
        with threadpool_limits(1):
            out = exp.output(ctx)
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
            f"# {exp.title}\n\nInterrupted (Ctrl-C) after {time.perf_counter() - t0:.1f} s: "
            f"{held}; no plot or comparison.\n")
        raise KeyboardInterrupt(f"{len(rows)} finished row{'' if len(rows) == 1 else 's'} "
                                f"written to {folder}/results.csv")
    elapsed = time.perf_counter() - t0
    folder.mkdir(parents=True, exist_ok=True)
    with FolderLock(folder, "out"):          # one run's at a time
        _write_outputs(folder, exp, out, ctx, quick, seed, elapsed)
    return folder


def _write_outputs(folder, exp, out, ctx, quick, seed, elapsed) -> None:
    """An experiment's files in ``folder``: results, claims, plot, summary and run.json."""
    import matplotlib.pyplot as plt
    _write_csv(folder / "results.csv", out.rows)
    claims = [c.row(exp.number) for c in out.claims if not isinstance(c, Check)]
    checks = [c.row() for c in out.claims if isinstance(c, Check)]
    write_csv(folder / "claims.csv", claims, None if claims else COLUMNS)
    if checks:
        write_csv(folder / "checks.csv", checks)
    else:
        (folder / "checks.csv").unlink(missing_ok=True)     # an earlier run's, not this one's
    out.figure.savefig(folder / "plot.png", dpi=110, bbox_inches="tight")
    plt.close(out.figure)
    for fname, text in out.extra_files.items():
        (folder / fname).write_text(text)
    notes = "".join(f"- {n}\n" for n in ctx.notes)
    (folder / "summary.md").write_text(
        f"# {exp.title}\n\n**Paper** ({exp.paper}): {exp.claim}\n\n"
        + (f"**Claims** (this experiment's rows of the claims ledger; see "
           f"`gradcode reproduce all`):\n\n{claims_table(claims)}\n" if claims else "")
        + (f"**Checks** (the project's own, not claims of the papers; `checks.csv`):\n\n"
           f"{claims_table(checks, columns=CHECK_COLUMNS)}\n" if checks else "")
        + f"**Ours** ({'quick' if quick else 'full'} run, seed {seed}, {elapsed:.1f} s): "
        f"{out.ours}\n\n" + (f"Notes:\n{notes}\n" if notes else "")
        + "Files: `results.csv` (one row per configuration), `claims.csv`, "
        + ("`checks.csv`, " if checks else "") + "`plot.png`.\n")
    (folder / "run.json").write_text(json.dumps({"name": exp.name, "quick": quick, "seed": seed,
                                                 "seconds": elapsed}, indent=2))


#: ``results.csv``'s header when an experiment is interrupted before its first row finished (its
#: columns are known only from its rows): a header alone, saying so
INTERRUPTED_HEADER = ("experiment", "interrupted")


def _write_csv(path: Path, rows: list[dict], empty=("experiment",)) -> None:
    """``rows`` as CSV with the union of their keys as columns; for no rows, the header
    ``empty`` alone (the file is always written)."""
    write_csv(path, rows, None if rows else empty)



def reproduce_all(quick: bool = False, out_root="results", seed: int = 0, traces=None,
                  progress: bool = True, names=None, log=None) -> Path:
    """Run every experiment (or ``names``) into ``out_root/NAME/`` and gather their claims into
    the ledger ``out_root/claims.csv`` and ``claims.md``; returns the CSV's path.

    An experiment that fails does not stop the others: the ledger says which failed and why,
    and ``RuntimeError`` names them once the ledger is written.  ``log(text)`` hears one line per
    experiment.  Ctrl-C writes the ledger of the experiments finished so far, then re-raises.

    Every experiment, as ``gradcode reproduce all --quick`` runs them, takes minutes; two quick
    ones:

    >>> from gradcode.experiments import reproduce_all, tally
    >>> ledger = reproduce_all(quick=True, out_root="all", progress=False)   # doctest: +SKIP
    >>> ledger = reproduce_all(quick=True, out_root="all", progress=False,
    ...                        names=["sgc-estimator", "sgc-loads"], log=print)
    [1/2] sgc-estimator: done (... s)
    [2/2] sgc-loads: done (... s)
    >>> ledger.as_posix(), sorted(p.name for p in ledger.parent.iterdir())
    ('all/claims.csv', ['checks.csv', 'claims.csv', 'claims.md', 'sgc-estimator', 'sgc-loads'])
    >>> import csv
    >>> tally(list(csv.DictReader(ledger.read_text().splitlines())))
    '3 reproduced'
    """
    names = list(EXPERIMENTS) if names is None else list(names)
    for name in names:
        if name not in EXPERIMENTS:
            raise ValueError(f"names: unknown experiment {name!r}; expected some of "
                             f"{', '.join(EXPERIMENTS)}")
    root = Path(out_root)
    done, failed, t0 = [], {}, time.perf_counter()
    try:
        for i, name in enumerate(names, 1):
            t = time.perf_counter()
            try:
                reproduce(name, quick=quick, out_root=root, seed=seed, traces=traces,
                          progress=progress)
            except Exception as exc:           # noqa: BLE001 -- reported in the ledger
                failed[name] = f"{type(exc).__name__}: {exc}"
            done.append((name, time.perf_counter() - t))
            if log:
                log(f"[{i}/{len(names)}] {name}: "
                    f"{'FAILED: ' + failed[name] if name in failed else 'done'} "
                    f"({done[-1][1]:.1f} s)")
    finally:
        path = write_ledger(root, done, failed, quick=quick, seed=seed,
                            seconds=time.perf_counter() - t0, planned=names, traces=traces)
    if failed:
        raise RuntimeError(f"{len(failed)} experiment(s) failed: "
                           + "; ".join(f"{k}: {v}" for k, v in failed.items())
                           + f" (the ledger {path} holds the others)")
    return path


def write_ledger(root: Path, done, failed: dict, *, quick: bool, seed: int, seconds: float,
                 planned, traces=None) -> Path:
    """``root/claims.csv`` and ``root/claims.md`` from the ``claims.csv`` of the experiments in
    ``done`` (``(name, seconds)`` pairs), and ``root/checks.csv`` from their ``checks.csv`` (the
    project's own checks: a section at the end of ``claims.md``, not in the papers' tallies).
    Rows are ordered by paper (``_ledger.group``: papers 1-5, then the literature), then by
    experiment (``EXPERIMENTS``' order), then as the experiment gave them, so that the ledger's
    order is the same from run to run."""
    import csv
    from ._ledger import KINDS, VERDICTS, group, tally, verdict_table
    rank = {name: i for i, name in enumerate([*EXPERIMENTS, *planned])}
    rows, checks = [], []
    for name, _ in sorted(done, key=lambda d: rank.get(d[0], len(rank))):
        if name in failed:
            continue
        with open(root / name / "claims.csv", newline="") as fh:
            rows += [{"experiment": name, **r} for r in csv.DictReader(fh)]
        if (root / name / "checks.csv").is_file():
            with open(root / name / "checks.csv", newline="") as fh:
                checks += [{"experiment": name, **r} for r in csv.DictReader(fh)]
    rows.sort(key=lambda r: group(r["paper"]))     # stable: experiment, then row order
    root.mkdir(parents=True, exist_ok=True)
    write_csv(root / "claims.csv", rows, None if rows else ("experiment",) + COLUMNS)
    if checks:
        write_csv(root / "checks.csv", checks)
    else:
        (root / "checks.csv").unlink(missing_ok=True)
    missing = [n for n in planned if n not in dict(done)]
    count = {n: len([r for r in rows + checks if r["experiment"] == n]) for n, _ in done}
    times = "\n".join(f"| {n} | {s:.1f} | {count[n]} | "
                      f"{'FAILED: ' + failed[n] if n in failed else 'done'} |" for n, s in done)
    from ..stragglers import traces_dir
    traces = traces or traces_dir()
    size = ("Quick run (reduced sizes: a verdict resting on few trials can differ from the full "
            "run's)" if quick else "Full run")
    own = ("\n## The project's own checks\n\n"
           f"{len(checks)} checks of gradcode's own premises (not claims of the papers, not "
           f"counted above; `checks.csv`): {tally(checks)}.\n\n"
           + claims_table(checks, experiment=True, columns=CHECK_COLUMNS)) if checks else ""
    text = (f"# Claims ledger\n\n{len(rows)} claims of papers 1-5 and of the literature beyond "
            f"them (README, References), one row each: {tally(rows) or 'none'}.  {size}, "
            f"seed {seed}, {seconds:.0f} s, "
            + (f"real traces from `{Path(traces).name}/`" if traces else
               "no real traces (the trace experiments used a synthetic profile and say so)")
            + f".  Verdicts: {', '.join(VERDICTS)}, each computed from measured values by the "
            "rule its row states, which is the paper's claim and never weaker; `kind` says "
            f"what the claim is ({', '.join(KINDS)}), `setting` whether it ran in the paper's "
            "setting or a stand-in (which names what differs), `source` where the claim is "
            "made (see `gradcode/experiments/_ledger.py`).\n\n"
            + (verdict_table(rows) if rows else "") + "\n"
            + (f"**Not run** (interrupted): {', '.join(missing)}\n\n" if missing else "")
            + "| experiment | seconds | rows | status |\n| --- | --- | --- | --- |\n"
            + times + "\n\n" + claims_table(rows, experiment=True) + own)
    (root / "claims.md").write_text(text)
    return root / "claims.csv"
