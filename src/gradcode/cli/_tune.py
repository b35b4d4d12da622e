"""``gradcode tune``: choose scheme parameters from a measured delay profile (paper 4, App. J)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from ..folders import FolderLock
from ..records import write_csv
from ..registry import make_code
from ._common import (UsageError, add_quiet, check_out, describe_code, nonnegative, positive,
                      positive_int, progress, seed)

#: what tune writes; a folder holding any of them holds a finished search
OUTPUTS = ("tune.csv", "sensitivity.png", "isgc_w.json")


def add_parser(sub) -> None:
    from ..datasets import DATASETS
    from ..sim import MODELS

    tu = sub.add_parser("tune", help="choose a scheme's parameters from a measured delay profile (paper 4 "
                        "App. J)",
                        description="Estimate the runtime of every valid parameter set of each "
                        "family on a measured delay profile (CSV, rounds x workers, header row) and "
                        "print the best per family; writes OUT/tune.csv and OUT/sensitivity.png.")
    tu.add_argument("trace", metavar="TRACE.csv")
    tu.add_argument("--load-profile", action="append", metavar="L=FILE",
                    help="a profile measured at normalized load L (repeat); fits alpha (App. J)")
    tu.add_argument("--alpha", type=nonnegative, default=0.0,
                    help="seconds per unit load (default 0)")
    tu.add_argument("--base-load", dest="base_load", type=nonnegative, default=0.0,
                    help="normalized load TRACE was measured at (default 0)")
    tu.add_argument("--jobs", type=int, default=20, help="jobs (default 20)")
    tu.add_argument("--mu", type=nonnegative, default=1.0, help="mu-rule tolerance (default 1)")
    tu.add_argument("--max-delay", dest="max_delay", type=int, default=10, help="largest T (default 10)")
    tu.add_argument("--families", default="uncoded,gc-seq,sr-sgc,m-sgc",
                    help="comma-separated families (default uncoded,gc-seq,sr-sgc,m-sgc; "
                    "also sr-sgc-rep, m-sgc-rep, and the literature's cyclic-mds (s), "
                    "frc-approx (d), bcc (r), bgc (d), expander (d), stochastic-gc (d; p: the "
                    "trace's straggler share) and comm-efficient (s, m; with --send))")
    tu.add_argument("--send", type=nonnegative, default=0.0,
                    help="seconds of each response in TRACE spent sending a whole gradient "
                    "(default 0); comm-efficient's messages of 1/m of it save (1 - 1/m) of that")
    tu.add_argument("--max-error", dest="max_error", type=nonnegative, default=0.0,
                    help="a single-round code's round counts as absorbed when its decoding "
                    "error ||wB - 1||^2 / k is at most this (default 0: exact); how the "
                    "approximate bgc, expander and stochastic-gc are tuned")
    tu.add_argument("--isgc-c", dest="isgc_c", type=positive_int, default=None,
                    help="also show IS-GC's w table for isgc-cr with this c")
    tu.add_argument("--dataset", default=None, choices=sorted(DATASETS),
                    help="with --isgc-c: pick w by the simulated time to --target-loss training a "
                    "NumPy model on this dataset (fastest:w on the trace)")
    tu.add_argument("--target-loss", dest="target_loss", type=nonnegative, default=None,
                    help="training loss to reach (with --dataset)")
    tu.add_argument("--model", default=None, choices=sorted(MODELS), help="model (default by task)")
    tu.add_argument("--lr", type=positive, default=0.1, help="learning rate (default 0.1)")
    tu.add_argument("--max-rounds", dest="max_rounds", type=int, default=200,
                    help="rounds simulated per w before giving up (default 200)")
    tu.add_argument("--seed", type=seed, default=0, help="seed of the IS-GC simulation (default 0)")
    tu.add_argument("--out", default="results/tune", help="output folder (default results/tune)")
    tu.add_argument("--overwrite", action="store_true",
                    help="replace the search an --out holds (without it, such an --out is refused)")
    add_quiet(tu)
    tu.set_defaults(func=run)


def run(args, extra) -> int:
    from ..sim import best_per_family, tune
    from ..stragglers import load_trace

    profiles = _check(args)
    delays = load_trace(args.trace)
    isgc = None
    if args.isgc_c is not None:          # checked before the search, not after it
        try:
            isgc = make_code("isgc-cr", n=delays.shape[1], c=args.isgc_c)
        except ValueError as exc:
            raise UsageError(f"--isgc-c: {exc} (isgc-cr on the trace's {delays.shape[1]} "
                             "workers)") from None
    alpha = _alpha(args, delays, profiles)
    families = [f.strip() for f in args.families.split(",")]
    rows = tune(delays, jobs=args.jobs, mu=args.mu, alpha=alpha, base_load=args.base_load,
                max_delay=args.max_delay, families=families, progress=progress(args),
                max_error=args.max_error, send=args.send)
    if not rows:
        raise UsageError("--jobs: no parameter set fits (the trace needs jobs + T rounds)")
    sending = f", send = {args.send:g} s" if args.send else ""
    print(f"{args.trace}: {delays.shape[1]} workers, {delays.shape[0]} rounds, alpha = {alpha:.4g} "
          f"s per unit load{sending}, mu = {args.mu}, {args.jobs} jobs, {len(rows)} parameter sets")
    best = best_per_family(rows)
    w = max(len("family"), *map(len, best)) + 2
    pw = max(26, *(len(str(r["params"])) for r in best.values())) + 2
    print(f"{'family':<{w}}{'parameters':<{pw}}{'load':>9}{'T':>4}{'runtime (s)':>13}"
          f"{'wait-outs':>11}")
    for fam, r in best.items():
        print(f"{fam:<{w}}{str(r['params']):<{pw}}{r['load']:>9.4f}{r['T']:>4}"
              f"{r['runtime_s']:>13.2f}{r['waitouts']:>11}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with FolderLock(out, "--out"):           # one run's at a time
        if isgc is not None:
            _isgc_table(args, isgc, delays, alpha, out)
        else:                                # --overwrite: no table of an earlier search stays
            (out / "isgc_w.json").unlink(missing_ok=True)
        write_csv(out / "tune.csv", ({**r, "params": json.dumps(r["params"])} for r in rows),
                  ["family", "params", "load", "T", "runtime_s", "waitouts"])
        _sensitivity_plot(rows, out / "sensitivity.png",
                          f"{Path(args.trace).name}: {delays.shape[1]} workers, {args.jobs} "
                          f"jobs, mu = {args.mu}, alpha = {alpha:.3g} s per unit load{sending}")
    print(f"written: {out}/tune.csv (every parameter set), {out}/sensitivity.png")
    return 0


def _check(args) -> list[tuple[float, str]]:
    """Flags that only go together, the ``--load-profile`` loads and the output folder, refused
    before the search runs; returns the ``(load, path)`` of each ``--load-profile``."""
    trained = args.dataset is not None or args.target_loss is not None
    if trained and args.isgc_c is None:
        raise UsageError("--dataset/--target-loss: pick IS-GC's w, so they need --isgc-c C")
    if trained and args.dataset is None:
        raise UsageError("--dataset: --target-loss needs a dataset to train on")
    if trained and args.target_loss is None:
        raise UsageError("--target-loss: --dataset needs a target loss to pick w by")
    if args.max_rounds < 1:
        raise UsageError(f"--max-rounds: expected an integer >= 1, got {args.max_rounds}")
    if args.model is not None and args.dataset is None:
        raise UsageError("--model: trains a model, so it needs --dataset")
    profiles = []
    for spec in args.load_profile or []:
        load, sep, path = spec.partition("=")
        try:
            value = float(load)
        except ValueError:
            value = None
        if not sep or not path or value is None:
            raise UsageError(f"--load-profile: expected LOAD=FILE.csv, got {spec!r}")
        if not (math.isfinite(value) and value >= 0):
            raise UsageError(f"--load-profile: expected a finite normalized load >= 0, got "
                             f"{load!r} in {spec!r}")
        profiles.append((value, path))
    check_out("--out", args.out, OUTPUTS, args.overwrite)
    return profiles


def _alpha(args, delays, profiles) -> float:
    """Seconds per unit load: ``--alpha``, or fitted to ``--load-profile`` traces (App. J)."""
    from ..stragglers import fit_load_slope, load_trace

    if not profiles:
        return args.alpha
    traces = [(args.base_load, delays)]
    for load, path in profiles:
        try:
            trace = load_trace(path)
        except ValueError as exc:
            raise UsageError(f"--load-profile: {exc}") from None
        if trace.shape[1] != delays.shape[1]:
            raise UsageError(f"--load-profile: {path} has {trace.shape[1]} workers, the trace "
                             f"{delays.shape[1]}")
        traces.append((load, trace))
    try:
        alpha, _ = fit_load_slope(traces)
    except ValueError as exc:
        raise UsageError(f"--load-profile: {exc}") from None
    if not math.isfinite(alpha):
        raise UsageError(f"--load-profile: the fitted seconds per unit load is {alpha}")
    return alpha


def _isgc_table(args, code, delays, alpha: float, out: Path) -> None:
    """IS-GC's w table for isgc-cr with c = ``--isgc-c``; with ``--dataset``, w picked by the
    simulated time to ``--target-loss``.  Writes OUT/isgc_w.json."""
    from ..sim import isgc_w_table

    n = code.n_workers
    shown = list(range(1, n + 1, max(1, n // 16)))
    shown += [n] if shown[-1] != n else []
    train = {}
    if args.dataset:                     # time to the target loss, on the shown w only
        from ..datasets import load_dataset
        train = dict(data=load_dataset(args.dataset, np.random.default_rng(args.seed)),
                     model=args.model, target_loss=args.target_loss,
                     max_rounds=args.max_rounds, lr=args.lr, ws=shown)
    table = isgc_w_table(code, delays, alpha, args.base_load, seed=args.seed, **train)
    print(f"\nIS-GC, {describe_code(code)}: waiting for the fastest w trades time per round for recovery")
    print(f"{'w':>5}{'s/round':>10}{'recovered':>11}{'s per full gradient':>21}"
          + (f"{'s to loss ' + format(args.target_loss, 'g'):>18}" if train else ""))
    for r in table:
        if r["w"] in shown:
            ttt = r.get("time_to_target_s")
            ttt = "" if ttt is None else "never" if ttt == float("inf") else f"{ttt:.3f}"
            print(f"{r['w']:>5}{r['mean_round_time_s']:>10.3f}{r['mean_recovered_fraction']:>11.1%}"
                  f"{r['time_per_recovered_s']:>21.3f}{ttt:>{18 if train else 0}}")
    best = next(r for r in table if r["picked"])
    if train and best["time_to_target_s"] < float("inf"):
        print(f"picked w = {best['w']}: the shortest simulated time to loss <= {args.target_loss:g} "
              f"({best['time_to_target_s']:.3f} s, {best['rounds_to_target']} rounds, "
              f"{args.dataset}, lr {args.lr:g})")
    elif train:
        print(f"no w reaches loss <= {args.target_loss:g} within {args.max_rounds} rounds; by the "
              f"proxy (smallest time per recovered gradient): w = {best['w']}")
    else:
        print(f"smallest time per recovered gradient: w = {best['w']} (a proxy for time to a target "
              "loss; add --dataset and --target-loss to pick w by simulated training)")
    (out / "isgc_w.json").write_text(json.dumps(
        [{k: (None if v == float("inf") else v) for k, v in r.items()} for r in table], indent=1))


def _sensitivity_plot(rows, path, setting: str) -> None:
    """Fig. 17 analogue: estimated runtime against lambda for each (B, W) of SR-SGC and M-SGC,
    and one panel for the families with one parameter (gc-seq, the literature's codes: runtime
    against load, one line each); ``setting``: the profile and search in words, in the title."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..sim import LOAD_FAMILIES

    fams = [f for f in ("sr-sgc", "m-sgc") if any(r["family"] == f for r in rows)]
    single = [r for r in rows if r["family"] in LOAD_FAMILIES]
    comm = [r for r in rows if r["family"] == "comm-efficient"]
    panels = len(fams) + bool(single) + bool(comm)
    fig, axes = plt.subplots(1, max(1, panels), figsize=(max(7.0, 5.0 * panels), 3.8),
                             squeeze=False)
    for ax, fam in zip(axes[0], fams):
        mine = [r for r in rows if r["family"] == fam]
        for k in sorted({(r["params"]["B"], r["params"]["W"]) for r in mine})[:8]:
            pts = sorted((r["params"]["lam"], r["runtime_s"]) for r in mine
                         if (r["params"]["B"], r["params"]["W"]) == k)
            ax.plot(*zip(*pts), label=f"B={k[0]}, W={k[1]}")
        _best(ax, min(mine, key=lambda r: r["runtime_s"]), "lam")
        ax.set(xlabel="λ", ylabel="estimated runtime (s)", title=fam)
    if single:
        ax = axes[0][len(fams)]
        for fam in dict.fromkeys(r["family"] for r in single):
            pts = sorted((r["load"], r["runtime_s"]) for r in single if r["family"] == fam)
            ax.plot(*zip(*pts), marker=".", label=fam)
        _best(ax, min(single, key=lambda r: r["runtime_s"]), "load")
        ax.set(xlabel="normalized load (largest of the workers')", ylabel="estimated runtime (s)",
               title="one-parameter families")
    if comm:
        _comm_panel(axes[0][len(fams) + bool(single)], comm)
    for ax in axes[0]:
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(f"Estimated runtime (paper 4, App. J) of each parameter set; circle: the "
                 f"fastest\n{setting}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _comm_panel(ax, rows) -> None:
    """comm-efficient: estimated runtime against load, one line per m (messages of 1/m)."""
    for m in sorted({r["params"]["m"] for r in rows}):
        best = {}
        for r in rows:                       # the faster placement at each load
            if r["params"]["m"] == m and r["runtime_s"] < best.get(r["load"], np.inf):
                best[r["load"]] = r["runtime_s"]
        ax.plot(*zip(*sorted(best.items())), marker=".", label=f"m = {m}")
    _best(ax, min(rows, key=lambda r: r["runtime_s"]), "load")
    ax.set(xlabel="normalized load d/n", ylabel="estimated runtime (s)",
           title="comm-efficient (messages of 1/m)")


def _best(ax, row, x: str) -> None:
    """Circle the fastest parameter set of a panel."""
    at = row["load"] if x == "load" else row["params"][x]
    ax.plot(at, row["runtime_s"], "o", color="tab:blue", ms=9, mfc="none")
