"""``gradcode simulate``: a code x delay model x wait policy on the virtual clock."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys

import numpy as np

from ..folders import FolderLock
from ..records import Diverged, Interrupted
from ._common import (UsageError, add_quiet, check_out, code_from, describe_run, positive,
                      progress, seed)

#: a folder holding either holds a finished simulation (refused without ``--overwrite``)
OUTPUTS = ("summary.json", "rounds.csv")


def add_parser(sub) -> None:
    from ..datasets import DATASETS
    from ..engine import WAIT_HELP
    from ..sim import MODELS
    from ..stragglers import COMPUTE_HELP, DELAY_HELP

    sm = sub.add_parser(
        "simulate", help="a code x delay model x wait policy on a virtual clock, one record per "
        "round (optionally training a NumPy model)",
        description="Simulate a code on a virtual clock: --code NAME plus the code's parameters "
        "(as for `gradcode code`; the code's own seed is --code-seed).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=f"--delay: {DELAY_HELP}\n--wait: {WAIT_HELP}\n--compute: {COMPUTE_HELP}\n"
        "--dataset: " + "; ".join(f"{k} ({v})" for k, v in DATASETS.items()))
    sm.add_argument("--code", required=False, help="code name (see `gradcode list`)")
    sm.add_argument("--delay", default="exp:1.0", help="delay model SPEC (default exp:1.0)")
    sm.add_argument("--wait", default=None, help="wait policy SPEC (default: the one the code was "
                    "designed for: decodable for an exact code, the fastest n - (c - 1) for "
                    "ignore-straggler and approximate codes, mu:1 for paper 4's, covered for bcc)")
    sm.add_argument("--compute", default=None, help="compute time SPEC (default load:0)")
    sm.add_argument("--rounds", type=int, default=1000,
                    help="rounds to simulate (default 1000); a sequential scheme runs rounds - T jobs")
    sm.add_argument("--waitout", default=None, metavar="RULE",
                    help="sequential schemes: when the master waits out a round, deadline "
                    "(default), model or never")
    sm.add_argument("--seed", type=seed, default=0, help="seed of the run (default 0)")
    sm.add_argument("--dataset", default=None, help="train a NumPy model on this dataset")
    sm.add_argument("--model", default=None, choices=sorted(MODELS), help="model (default by task)")
    sm.add_argument("--lr", type=positive, default=None,
                    help="learning rate, with --dataset (default 0.1)")
    sm.add_argument("--batch", type=int, default=None,
                    help="samples per partition and round, with --dataset (default: all)")
    sm.add_argument("--out", default=None, help="directory for rounds.csv and summary.json")
    sm.add_argument("--overwrite", action="store_true",
                    help="replace the run an --out holds (without it, such an --out is refused)")
    sm.add_argument("--json", action="store_true", help="emit JSON")
    add_quiet(sm)
    sm.set_defaults(func=run)


def run(args, extra) -> int:
    from ..engine import resolve_wait
    from ..records import write_records
    from ..sim import Trainer, parse_wait, simulate
    from ..stragglers import parse_compute, parse_delay

    code = code_from(args, extra)
    args.wait, lines = resolve_wait(code, args.wait)
    delay, wait, compute = parse_delay(args.delay), parse_wait(args.wait), parse_compute(args.compute)
    if args.rounds < 1:
        raise UsageError(f"--rounds: expected an integer >= 1, got {args.rounds}")
    unused = [f for f, v in (("--model", args.model), ("--lr", args.lr), ("--batch", args.batch))
              if v is not None]
    if unused and not args.dataset:
        raise UsageError(f"{unused[0]}: trains a model, so it needs --dataset (without one "
                         "nothing is trained)")
    out = check_out("--out", args.out, OUTPUTS, args.overwrite)
    trainer = model = None
    if args.dataset:
        from ..datasets import load_dataset
        from ..sim import MODELS
        data = load_dataset(args.dataset, np.random.default_rng(args.seed))
        trainer = Trainer(data, args.model, lr=0.1 if args.lr is None else args.lr,
                          batch=args.batch, seed=args.seed)
        model = next((k for k, cls in MODELS.items() if type(trainer.model) is cls), args.model)
    for line in lines:                  # the run's first lines: its wait policy (JSON: aside)
        print(line, file=sys.stderr if args.json else sys.stdout)
    first = [True]
    owned = contextlib.ExitStack()    # the folder, this run's (a lock) from its first row on

    def own():
        if first[0]:          # the folder comes with the first round: bad input leaves nothing
            out.mkdir(parents=True, exist_ok=True)
            owned.enter_context(FolderLock(out, "--out"))

    def write_row(rec):
        own()
        write_records(out / "rounds.csv", [rec], append=not first[0])
        first[0] = False
    with owned:
        try:
            res = simulate(code, delay, wait, args.rounds, compute=compute, seed=args.seed,
                           trainer=trainer, progress=progress(args) and not args.json
                           and args.rounds >= 5000,
                           on_record=write_row if out else None, waitout=args.waitout)
        except (Interrupted, Diverged) as exc:  # Ctrl-C, divergence: report the finished rounds
            res = exc.result
        config = {("rounds_asked" if k == "rounds" else k): v for k, v in res.config.items()}
        config.update(delay=args.delay, wait=args.wait, compute=args.compute)   # as given
        summary = {**config, **res.summary, "code": res.code, "interrupted": res.interrupted,
                   "diverged_at_round": res.diverged}
        if out:
            if first[0]:              # no round finished: rounds.csv is its header alone
                own()
                write_records(out / "rounds.csv", [])
            (out / "summary.json").write_text(json.dumps(summary, indent=2))
    if args.json:
        print(json.dumps(summary))
    else:
        _report(args, code, res, summary, out, model)
    if res.diverged is not None:
        print(f"gradcode simulate: error: {Diverged(res)}", file=sys.stderr)
        return 1
    return 130 if res.interrupted else 0


def _report(args, code, res, summary: dict, out, model: str | None) -> None:
    head = describe_run(code, dataset=args.dataset, model=model, wait=args.wait,
                        delay=args.delay, compute=args.compute)
    print(f"{head}; {res.summary['rounds']} rounds")
    keys = ("mean_round_time_s", "mean_recovered_fraction", "exact_fraction",
            "mean_workers_arrived", "total_time_s", "final_loss")
    if "T" in res.config:           # a sequential scheme (paper 4)
        keys += ("jobs", "T", "waitouts")
    for key in keys:
        if summary.get(key) is not None:
            print(f"  {key:<26}{summary[key]:.4g}")
    if res.interrupted:
        print("  (interrupted: the finished rounds are reported)")
    if out:
        print(f"  rounds written to {out / 'rounds.csv'}")
