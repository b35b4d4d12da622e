"""``gradcode reproduce``: the papers' experiments into OUT/NAME/."""

from __future__ import annotations

from pathlib import Path

from ._common import UsageError, add_quiet, check_out, progress, seed

#: a folder OUT/NAME holding any of these holds a finished (or interrupted) run
OUTPUTS = ("results.csv", "summary.md", "run.json")
#: an OUT holding either holds a finished ``reproduce all``
LEDGER = ("claims.csv", "claims.md")


def add_parser(sub) -> None:
    rp = sub.add_parser("reproduce", help="the papers' experiments: results.csv, plot.png, summary.md (see --list)",
                        description="Reproduce a paper's experiment into OUT/NAME/ (results.csv, "
                        "plot.png, summary.md with the paper's claim next to ours).")
    rp.add_argument("name", metavar="NAME", nargs="?",
                    help="experiment (see --list), or `all`: every experiment, then the claims "
                    "ledger OUT/claims.csv and OUT/claims.md")
    rp.add_argument("--list", action="store_true", help="list the experiments")
    rp.add_argument("--quick", action="store_true", help="tiny sizes, under a minute")
    rp.add_argument("--out", default="results", help="output root (default results/)")
    rp.add_argument("--seed", type=seed, default=0, help="seed (default 0)")
    rp.add_argument("--overwrite", action="store_true",
                    help="replace the run OUT/NAME holds (without it, such a folder is refused)")
    rp.add_argument("--traces", default=None,
                    help="folder of real delay traces (default: $GRADCODE_TRACES or ../shared/traces "
                    "when present; otherwise a synthetic profile is used and the summary says so)")
    add_quiet(rp)
    rp.set_defaults(func=run)


def run(args, extra) -> int:
    from ..experiments import EXPERIMENTS, list_experiments, reproduce

    if args.list or not args.name:
        for name, title in list_experiments():
            print(f"{name:<24}{title}")
        print(f"{'all':<24}every experiment, then the claims ledger OUT/claims.csv, claims.md")
        return 0
    if args.name != "all" and args.name not in EXPERIMENTS:
        raise UsageError(f"NAME: unknown experiment {args.name!r}; expected all or one of "
                         f"{', '.join(EXPERIMENTS)} (see --list)")
    if args.traces is not None and not Path(args.traces).is_dir():
        raise UsageError(f"--traces: no such folder {str(args.traces)!r}")
    if args.name == "all":
        return run_all(args)
    check_out("--out", args.out, OUTPUTS, args.overwrite, sub=args.name)
    folder = reproduce(args.name, quick=args.quick, out_root=args.out, seed=args.seed,
                       traces=args.traces, progress=progress(args))
    print((folder / "summary.md").read_text())
    print(f"written: {folder}/ (results.csv, plot.png, summary.md)")
    return 0


def run_all(args) -> int:
    """``reproduce all``: every experiment into OUT/NAME/, then the claims ledger."""
    import csv
    import sys
    from ..experiments import EXPERIMENTS, reproduce_all, tally

    check_out("--out", args.out, LEDGER, args.overwrite)
    for name in EXPERIMENTS:
        check_out("--out", args.out, OUTPUTS, args.overwrite, sub=name)
    log = None if args.quiet else (lambda line: print(line, file=sys.stderr, flush=True))
    try:
        path = reproduce_all(quick=args.quick, out_root=args.out, seed=args.seed,
                             traces=args.traces, progress=progress(args), log=log)
    except RuntimeError as exc:
        print(f"gradcode reproduce: error: {exc}", file=sys.stderr)
        return 1
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    checks = path.with_name("checks.csv")
    own = []
    if checks.is_file():
        with open(checks, newline="") as fh:
            own = list(csv.DictReader(fh))
    print(f"{len(rows)} claims: {tally(rows)}"
          + (f" (and {len(own)} of the project's own checks: {tally(own)})" if own else "")
          + f"\nwritten: {path}, {path.with_suffix('.md')}"
          + (f", {checks}" if own else "") + f" and one folder per experiment in {args.out}/")
    return 0
