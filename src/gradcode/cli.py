"""The ``gradcode`` command: inspect codes, decode, (later) simulate, tune, reproduce, train.

Code parameters are flags named exactly like ``make_code``'s keywords: ``--n 8 --s 2``,
``--c1 1``, ``--speeds 1,2,3,4,4``, ``--seed 3``.  Bad input prints one line and exits with 2.
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys

from pathlib import Path

import numpy as np

from .codes import Code
from .registry import CODES, code_parameters, make_code
from .records import Interrupted


class UsageError(Exception):
    """Bad input from the command line: reported in one line, exit code 2."""


def _value(text: str):
    """Parse a flag value: int, float, or a comma-separated list of numbers."""
    parts = [p.strip() for p in text.split(",")]
    out = []
    for p in parts:
        for kind in (int, float):
            try:
                out.append(kind(p))
                break
            except ValueError:
                continue
        else:
            out.append(p)
    return out if len(parts) > 1 else out[0]


def parse_code_params(name: str, extra: list[str]) -> dict:
    """Turn ``--param value`` pairs into ``make_code`` keywords for the code ``name``."""
    if name not in CODES:
        raise UsageError(f"name: unknown code {name!r}; expected one of: {', '.join(sorted(CODES))}")
    expected = code_parameters(name)
    params, i = {}, 0
    while i < len(extra):
        flag = extra[i]
        if not flag.startswith("--"):
            raise UsageError(f"unexpected argument {flag!r}; code parameters are --name value")
        key, _, val = flag[2:].partition("=")
        key = key.replace("-", "_")
        if key not in expected:
            raise UsageError(f"--{key}: not a parameter of {name!r}; it takes "
                             + ", ".join(f"--{k}" for k in expected))
        if not val:
            if i + 1 >= len(extra):
                raise UsageError(f"--{key}: expected a value")
            val, i = extra[i + 1], i + 1
        params[key] = _value(val)
        i += 1
    missing = [k for k, p in expected.items()
               if p.default is inspect.Parameter.empty and k not in params]
    if missing:
        raise UsageError(f"--{missing[0]}: {name!r} needs " + ", ".join(f"--{k}" for k in missing))
    return params


def _fmt(x: float) -> str:
    if x == 0:
        return "."
    if float(x).is_integer():
        return str(int(x))
    return f"{x:.4g}"


def code_summary(code) -> dict:
    load = np.asarray(code.load)
    return {**code.describe(), "n_workers": code.n_workers, "n_partitions": code.n_partitions,
            "tolerates_s": code.s, "max_load": float(load.max()), "mean_load": float(load.mean()),
            "max_abs_coefficient": code.max_coefficient,
            "placement": [p.tolist() for p in code.placement],
            "B": code.B.tolist() if code.n_workers * code.n_partitions <= 250_000 else None}


def _print_code(code, out) -> None:
    info = code_summary(code)
    params = ", ".join(f"{k}={v}" for k, v in code.params.items())
    print(f"{code.name}({params}): {code.n_workers} workers, {code.n_partitions} partitions", file=out)
    if code.s is not None:
        tol = f"exact with any {code.s} stragglers"
    elif code.is_sum_code:
        tol = "decodes a maximum partial sum from any workers"
    else:
        tol = "least-squares decoding"
    print(f"{tol}; load max {info['max_load']:.4g}, mean {info['mean_load']:.4g}; "
          f"largest |coefficient| {code.max_coefficient:.4g}", file=out)
    if code.n_workers > 40 or code.n_partitions > 40:
        print("(B not shown for more than 40 workers or partitions; use --json)", file=out)
        return
    width = max(5, max(len(_fmt(v)) for v in code.B.ravel()) + 1)
    head = "worker  load   " + "".join(f"g{j}".rjust(width) for j in range(code.n_partitions))
    print(head, file=out)
    for i, row in enumerate(code.B):
        print(f"{i:>6}  {code.load[i]:<6.3g} " + "".join(_fmt(v).rjust(width) for v in row), file=out)


def _print_scheme(scheme, as_json: bool) -> None:
    """A sequential scheme (paper 4): delay T, load, parameters, the single-round code inside."""
    info = {**scheme.describe(), "T": scheme.T, "load": float(np.max(scheme.load)),
            "base_code": repr(scheme.base_code)}
    if as_json:
        print(json.dumps(info, default=str))
        return
    print(f"{scheme!r}: sequential scheme, decoding delay T = {scheme.T} rounds, "
          f"normalized load {info['load']:.4g}")
    print(f"parameters: {scheme.params}; single-round code inside: {scheme.base_code!r}")


def cmd_code(args, extra) -> int:
    code = make_code(args.name, **parse_code_params(args.name, extra))
    if not isinstance(code, Code):
        _print_scheme(code, args.json)
        return 0
    if args.json:
        print(json.dumps(code_summary(code)))
    else:
        _print_code(code, sys.stdout)
    return 0


def cmd_decode(args, extra) -> int:
    code = make_code(args.name, **parse_code_params(args.name, extra))
    if not isinstance(code, Code):
        raise UsageError(f"NAME: {args.name!r} is a sequential scheme; decode it across rounds with "
                         "gradcode.sequential.replay")
    try:
        received = [int(x) for x in args.received.split(",") if x.strip()] if args.received else []
    except ValueError:
        raise UsageError(f"--received: expected comma-separated worker indices, got {args.received!r}")
    d = code.decode(received, method=args.method, rng=np.random.default_rng(args.seed))
    result = {"code": code.describe(), "received": received, "method": d.method,
              "weights": d.weights.tolist(), "recovered": d.recovered.tolist(), "exact": d.exact,
              "error": d.error}
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"{code.name}: received {received} -> decoder {d.method}, "
          f"{'exact' if d.exact else 'not exact'}, error ||wB-1||^2 = {d.error:.4g}")
    print("weights:   " + " ".join(_fmt(w) for w in d.weights))
    print("recovered: " + " ".join(_fmt(r) for r in d.recovered))
    return 0


def _code_from(args, extra):
    """The code named by ``--code`` with its parameters (``--code-seed`` is the code's seed)."""
    extra = ["--seed" if a == "--code-seed" else
             ("--seed=" + a.split("=", 1)[1] if a.startswith("--code-seed=") else a) for a in extra]
    if not args.code:
        raise UsageError("--code: expected a code name, e.g. --code isgc-cr --n 8 --c 2")
    return make_code(args.code, **parse_code_params(args.code, extra))


def cmd_simulate(args, extra) -> int:
    from pathlib import Path

    from .records import write_records
    from .sim import Trainer, parse_wait, simulate
    from .stragglers import parse_compute, parse_delay

    code = _code_from(args, extra)
    delay, wait, compute = parse_delay(args.delay), parse_wait(args.wait), parse_compute(args.compute)
    if args.rounds < 1:
        raise UsageError(f"--rounds: expected an integer >= 1, got {args.rounds}")
    trainer = None
    if args.dataset:
        from .datasets import load_dataset
        data = load_dataset(args.dataset, np.random.default_rng(args.seed))
        trainer = Trainer(data, args.model, lr=args.lr, batch=args.batch, seed=args.seed)
    out = Path(args.out) if args.out else None
    first = [True]

    def write_row(rec):       # the folder comes with the first round: bad input leaves nothing
        if first[0]:
            out.mkdir(parents=True, exist_ok=True)
        write_records(out / "rounds.csv", [rec], append=not first[0])
        first[0] = False
    try:
        res = simulate(code, delay, wait, args.rounds, compute=compute, seed=args.seed,
                       trainer=trainer, progress=not args.json and args.rounds >= 5000,
                       on_record=write_row if out else None, waitout=args.waitout)
    except Interrupted as exc:                 # Ctrl-C: report the finished rounds
        res = exc.result
    summary = {**res.summary, "code": res.code, **{k: v for k, v in res.config.items()},
               "interrupted": res.interrupted}
    if out:
        out.mkdir(parents=True, exist_ok=True)
        (out / "summary.json").write_text(json.dumps(summary, indent=2))
    if args.json:
        print(json.dumps(summary))
    else:
        print(f"{code!r}: {res.summary['rounds']} rounds, delay {args.delay}, wait {args.wait}")
        keys = ("mean_round_time_s", "mean_recovered_fraction", "exact_fraction",
                "mean_workers_arrived", "total_time_s", "final_loss")
        if "T" in res.config:           # a sequential scheme (paper 4)
            keys += ("jobs", "T", "waitouts")
        for key in keys:
            if key in summary:
                print(f"  {key:<26}{summary[key]:.4g}")
        if res.interrupted:
            print("  (interrupted: the finished rounds are reported)")
        if out:
            print(f"  rounds written to {out / 'rounds.csv'}")
    return 130 if res.interrupted else 0


def cmd_reproduce(args, extra) -> int:
    from .experiments import EXPERIMENTS, list_experiments, reproduce

    if args.list or not args.name:
        for name, title in list_experiments():
            print(f"{name:<24}{title}")
        return 0
    if args.name not in EXPERIMENTS:
        raise UsageError(f"NAME: unknown experiment {args.name!r}; expected one of "
                         f"{', '.join(EXPERIMENTS)} (see --list)")
    folder = reproduce(args.name, quick=args.quick, out_root=args.out, seed=args.seed,
                       traces=args.traces, progress=True)
    print((folder / "summary.md").read_text())
    print(f"written: {folder}/ (results.csv, plot.png, summary.md)")
    return 0


TRAIN_FLAGS = ["dataset", "model", "data_dir", "rounds", "seed", "lr", "optimizer", "momentum",
               "batch", "wait", "delay", "compute", "backend", "address", "actors",
               "round_timeout_s", "on_worker_death", "shuffle", "out", "checkpoint_every", "resume",
               "measure_speeds", "waitout"]


def cmd_train(args, extra) -> int:
    try:
        from .runtime import TrainConfig, load_config, train
    except ImportError as exc:
        raise UsageError(f"train needs torch (pip install 'gradcode[train]'): {exc}")
    settings = load_config(args.config) if args.config else {}
    if args.code:
        code = _code_from(args, extra)
        settings["code"], settings["code_params"] = code.name, code.params
    elif extra:
        raise UsageError("code parameters need --code NAME")
    for key in TRAIN_FLAGS:
        val = getattr(args, key)
        if val is not None:
            settings[key] = val
    if "code" not in settings:
        raise UsageError("--code: expected a code name (or a config file with code and code_params)")
    cfg = TrainConfig(**settings).validate()
    if cfg.out and not cfg.resume and (Path(cfg.out) / "checkpoint.pt").exists():
        raise UsageError(f"--out: {cfg.out} already holds a run; use --resume or another --out")
    try:
        res = train(cfg, progress=not args.quiet)
    except Interrupted as exc:                 # Ctrl-C: report the finished rounds
        res = exc.result
    summ = res.summary
    print(f"{summ['rounds']} rounds in {summ['total_time_s']:.2f} s "
          f"({summ['mean_round_time_s'] * 1e3:.1f} ms/round), final loss {summ.get('final_loss', float('nan')):.4f}, "
          f"mean recovered {summ['mean_recovered_fraction']:.1%}")
    if cfg.out:
        print(f"written: {cfg.out}/rounds.csv, plot.png, checkpoint.pt, events.log")
    if res.interrupted:
        print("interrupted: the finished rounds are reported"
              + (f"; --resume continues from the last checkpoint (every {cfg.checkpoint_every} "
                 "rounds)" if cfg.out else ""))
        return 130
    return 0


def cmd_tune(args, extra) -> int:
    import csv

    from .sim import best_per_family, tune
    from .stragglers import fit_load_slope, load_trace

    trained = args.dataset is not None or args.target_loss is not None
    if trained and not args.isgc_c:
        raise UsageError("--dataset/--target-loss: pick IS-GC's w, so they need --isgc-c C")
    if trained and args.dataset is None:
        raise UsageError("--dataset: --target-loss needs a dataset to train on")
    if trained and args.target_loss is None:
        raise UsageError("--target-loss: --dataset needs a target loss to pick w by")
    if args.max_rounds < 1:
        raise UsageError(f"--max-rounds: expected an integer >= 1, got {args.max_rounds}")
    delays = load_trace(args.trace)
    alpha, base_load = args.alpha, args.base_load
    if args.load_profile:
        profiles = [(base_load, delays)]
        for spec in args.load_profile:
            load, sep, path = spec.partition("=")
            try:
                profiles.append((float(load), load_trace(path)))
            except ValueError as exc:
                raise UsageError(f"--load-profile: expected LOAD=FILE.csv, got {spec!r} ({exc})")
        alpha, _ = fit_load_slope(profiles)
    families = [f.strip() for f in args.families.split(",")]
    rows = tune(delays, jobs=args.jobs, mu=args.mu, alpha=alpha, base_load=base_load,
                max_delay=args.max_delay, families=families, progress=True)
    if not rows:
        raise UsageError("--jobs: no parameter set fits (the trace needs jobs + T rounds)")
    print(f"{args.trace}: {delays.shape[1]} workers, {delays.shape[0]} rounds, alpha = {alpha:.4g} "
          f"s per unit load, mu = {args.mu}, {args.jobs} jobs, {len(rows)} parameter sets")
    print(f"{'family':<10}{'parameters':<28}{'load':>9}{'T':>4}{'runtime (s)':>13}{'wait-outs':>11}")
    for fam, r in best_per_family(rows).items():
        print(f"{fam:<10}{str(r['params']):<28}{r['load']:>9.4f}{r['T']:>4}{r['runtime_s']:>13.2f}"
              f"{r['waitouts']:>11}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.isgc_c:
        from .sim import isgc_w_table
        code = make_code("isgc-cr", n=delays.shape[1], c=args.isgc_c)
        n = code.n_workers
        shown = list(range(1, n + 1, max(1, n // 16)))
        shown += [n] if shown[-1] != n else []
        train = {}
        if args.dataset:                     # time to the target loss, on the shown w only
            from .datasets import load_dataset
            train = dict(data=load_dataset(args.dataset, np.random.default_rng(args.seed)),
                         model=args.model, target_loss=args.target_loss,
                         max_rounds=args.max_rounds, lr=args.lr, ws=shown)
        table = isgc_w_table(code, delays, alpha, base_load, seed=args.seed, **train)
        print(f"\nIS-GC {code!r}: waiting for the fastest w trades time per round for recovery")
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
    with (out / "tune.csv").open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=["family", "params", "load", "T", "runtime_s", "waitouts"])
        w.writeheader()
        w.writerows({**r, "params": json.dumps(r["params"])} for r in rows)
    _sensitivity_plot(rows, out / "sensitivity.png")
    print(f"written: {out}/tune.csv (every parameter set), {out}/sensitivity.png")
    return 0


def _sensitivity_plot(rows, path) -> None:
    """Fig. 17 analogue: estimated runtime against lambda for each (B, W) of SR-SGC and M-SGC."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fams = [f for f in ("sr-sgc", "m-sgc", "gc-seq") if any(r["family"] == f for r in rows)]
    fig, axes = plt.subplots(1, max(1, len(fams)), figsize=(5 * max(1, len(fams)), 3.8), squeeze=False)
    for ax, fam in zip(axes[0], fams):
        mine = [r for r in rows if r["family"] == fam]
        key = (lambda r: ()) if fam == "gc-seq" else (lambda r: (r["params"]["B"], r["params"]["W"]))
        x = "s" if fam == "gc-seq" else "lam"
        for k in sorted({key(r) for r in mine})[:8]:
            pts = sorted((r["params"][x], r["runtime_s"]) for r in mine if key(r) == k)
            ax.plot(*zip(*pts), label=f"B={k[0]}, W={k[1]}" if k else "GC")
        best = min(mine, key=lambda r: r["runtime_s"])
        ax.plot(best["params"][x], best["runtime_s"], "o", color="tab:blue", ms=9, mfc="none")
        ax.set(xlabel="λ" if x == "lam" else "s", ylabel="estimated runtime (s)", title=fam)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def cmd_list(args, extra) -> int:
    for name in sorted(CODES):
        params = ", ".join(k if p.default is inspect.Parameter.empty else f"{k}={p.default}"
                           for k, p in code_parameters(name).items())
        print(f"{name:<12} {params}")
    return 0


def cmd_demo(args, extra) -> int:
    from .demo import main as demo
    if args.rounds < 2:
        raise UsageError(f"--rounds: expected an integer >= 2, got {args.rounds}")
    return demo(backend=args.backend, rounds=args.rounds, out=args.out)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="gradcode", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    _add = sub.add_parser
    sub.add_parser = lambda *a, **k: _add(*a, allow_abbrev=False, **k)  # --c is not --code
    names = ", ".join(sorted(CODES))
    c = sub.add_parser("code", help="show a code's placement and B",
                       description=f"Show a code. NAME is one of: {names}. "
                       "Parameters follow as --param value (see `gradcode list`).")
    c.add_argument("name", metavar="NAME")
    c.add_argument("--json", action="store_true", help="emit JSON")
    c.set_defaults(func=cmd_code)
    d = sub.add_parser("decode", help="decode from a set of received workers",
                       description=f"Decode a code from the workers that answered. NAME: {names}.")
    d.add_argument("name", metavar="NAME")
    d.add_argument("--received", default="", help="comma-separated worker indices, e.g. 0,2,5")
    d.add_argument("--method", choices=["optimal"], default=None,
                   help="decoder: the scheme's own (default) or optimal least squares")
    d.add_argument("--decode-seed", dest="seed", type=int, default=0,
                   help="seed for random tie-breaking (default 0)")
    d.add_argument("--json", action="store_true", help="emit JSON")
    d.set_defaults(func=cmd_decode)
    from .datasets import DATASETS
    from .sim import MODELS
    from .engine import WAIT_HELP
    from .stragglers import COMPUTE_HELP, DELAY_HELP
    sm = sub.add_parser(
        "simulate", help="simulate a code on a virtual clock",
        description="Simulate a code on a virtual clock: --code NAME plus the code's parameters "
        "(as for `gradcode code`; the code's own seed is --code-seed).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=f"--delay: {DELAY_HELP}\n--wait: {WAIT_HELP}\n--compute: {COMPUTE_HELP}\n"
        "--dataset: " + "; ".join(f"{k} ({v})" for k, v in DATASETS.items()))
    sm.add_argument("--code", required=False, help="code name (see `gradcode list`)")
    sm.add_argument("--delay", default="exp:1.0", help="delay model SPEC (default exp:1.0)")
    sm.add_argument("--wait", default="all", help="wait policy SPEC (default all)")
    sm.add_argument("--compute", default=None, help="compute time SPEC (default load:0)")
    sm.add_argument("--rounds", type=int, default=1000,
                    help="rounds to simulate (default 1000); a sequential scheme runs rounds - T jobs")
    sm.add_argument("--waitout", default=None, metavar="RULE",
                    help="sequential schemes: when the master waits out a round, deadline "
                    "(default), model or never")
    sm.add_argument("--seed", type=int, default=0, help="seed of the run (default 0)")
    sm.add_argument("--dataset", default=None, help="train a NumPy model on this dataset")
    sm.add_argument("--model", default=None, choices=sorted(MODELS), help="model (default by task)")
    sm.add_argument("--lr", type=float, default=0.1, help="learning rate (default 0.1)")
    sm.add_argument("--batch", type=int, default=None, help="samples per partition and round")
    sm.add_argument("--out", default=None, help="directory for rounds.csv and summary.json")
    sm.add_argument("--json", action="store_true", help="emit JSON")
    sm.set_defaults(func=cmd_simulate)
    rp = sub.add_parser("reproduce", help="reproduce a paper's experiment",
                        description="Reproduce a paper's experiment into OUT/NAME/ (results.csv, "
                        "plot.png, summary.md with the paper's claim next to ours).")
    rp.add_argument("name", metavar="NAME", nargs="?", help="experiment (see --list)")
    rp.add_argument("--list", action="store_true", help="list the experiments")
    rp.add_argument("--quick", action="store_true", help="tiny sizes, under a minute")
    rp.add_argument("--out", default="results", help="output root (default results/)")
    rp.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    rp.add_argument("--traces", default=None,
                    help="folder of real delay traces (default: $GRADCODE_TRACES or ../shared/traces "
                    "when present; otherwise a synthetic profile is used and the summary says so)")
    rp.set_defaults(func=cmd_reproduce)
    tr = sub.add_parser(
        "train", help="train a PyTorch model with a code (in-process or on Ray)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Train a real PyTorch model: --code NAME plus the code's parameters (the "
        "code's seed is --code-seed); everything else from flags or --config FILE (TOML/YAML).",
        epilog="datasets (and the model each uses by default):\n" + "\n".join(
            f"  {k:<14}{v}" for k, v in {**DATASETS, "fashion-mnist":
            "Fashion-MNIST IDX files from --data-dir (default /usr/share/datasets/fashion-mnist); "
            "model: cnn"}.items()) + "\nmodels: linear, logistic, softmax, mlp, cnn"
        f"\n--delay: {DELAY_HELP}\n--wait: {WAIT_HELP}")
    tr.add_argument("--code", help="code name (see `gradcode list`)")
    tr.add_argument("--config", help="TOML or YAML file of settings (flags override it)")
    tr.add_argument("--dataset", help="dataset name (default synthetic)")
    tr.add_argument("--model", help="linear, logistic, softmax, mlp or cnn (default by dataset)")
    tr.add_argument("--data-dir", dest="data_dir", help="folder of IDX files for fashion-mnist")
    tr.add_argument("--rounds", type=int, help="training rounds (default 50)")
    tr.add_argument("--seed", type=int, help="run seed (default 0)")
    tr.add_argument("--lr", type=float, help="learning rate (default: SGD 0.5, 0.2 for the cnn; "
                    "Adam 1e-3)")
    tr.add_argument("--optimizer", choices=["sgd", "adam"], help="default sgd")
    tr.add_argument("--momentum", type=float, help="SGD momentum (default 0)")
    tr.add_argument("--batch", type=int, help="samples per partition and round (default: all)")
    tr.add_argument("--wait", help="wait policy SPEC (default all)")
    tr.add_argument("--delay", help="injected straggler delays SPEC (default none)")
    tr.add_argument("--compute", help="injected compute time SPEC, e.g. load:0.5")
    tr.add_argument("--backend", choices=["local", "ray", "virtual"],
                    help="local threads (default), ray, or virtual: the simulator's clock with "
                    "real gradients (time_s = the injected delays; equals `simulate` round by "
                    "round for the same seed)")
    tr.add_argument("--address", help="Ray cluster address (default: start a local instance)")
    tr.add_argument("--actors", type=int, help="Ray processes hosting the workers (default 2)")
    tr.add_argument("--round-timeout", dest="round_timeout_s", type=float,
                    help="seconds before a round gives up waiting (default 60)")
    tr.add_argument("--on-worker-death", dest="on_worker_death", choices=["restart", "drop"],
                    help="what to do with a worker that fails (default restart)")
    tr.add_argument("--measure-speeds", dest="measure_speeds", type=int, default=None, metavar="R",
                    help="heter / heter-group: measure the workers' speeds over R probe rounds "
                    "and allocate by them (the given --speeds only fix the number of workers)")
    tr.add_argument("--waitout", default=None, metavar="RULE",
                    help="sequential schemes (M = T + 1 models pipelined): when the master waits "
                    "out a round, deadline (default), model or never")
    tr.add_argument("--shuffle", action="store_true", default=None,
                    help="paper 5 shuffling: permute which worker computes which row of B")
    tr.add_argument("--out", help="output folder: rounds.csv, plot.png, checkpoint.pt")
    tr.add_argument("--checkpoint-every", dest="checkpoint_every", type=int, help="default 10")
    tr.add_argument("--resume", action="store_true", default=None, help="continue from --out")
    tr.add_argument("--quiet", action="store_true", help="no progress bar")
    tr.set_defaults(func=cmd_train)
    tu = sub.add_parser("tune", help="choose scheme parameters from a delay profile (paper 4 App. J)",
                        description="Estimate the runtime of every valid parameter set of each "
                        "family on a measured delay profile (CSV, rounds x workers, header row) and "
                        "print the best per family; writes OUT/tune.csv and OUT/sensitivity.png.")
    tu.add_argument("trace", metavar="TRACE.csv")
    tu.add_argument("--load-profile", action="append", metavar="L=FILE",
                    help="a profile measured at normalized load L (repeat); fits alpha (App. J)")
    tu.add_argument("--alpha", type=float, default=0.0, help="seconds per unit load (default 0)")
    tu.add_argument("--base-load", dest="base_load", type=float, default=0.0,
                    help="normalized load TRACE was measured at (default 0)")
    tu.add_argument("--jobs", type=int, default=20, help="jobs (default 20)")
    tu.add_argument("--mu", type=float, default=1.0, help="mu-rule tolerance (default 1)")
    tu.add_argument("--max-delay", dest="max_delay", type=int, default=10, help="largest T (default 10)")
    tu.add_argument("--families", default="uncoded,gc-seq,sr-sgc,m-sgc",
                    help="comma-separated families (default uncoded,gc-seq,sr-sgc,m-sgc; "
                    "sr-sgc-rep and m-sgc-rep too)")
    tu.add_argument("--isgc-c", dest="isgc_c", type=int, default=None,
                    help="also show IS-GC's w table for isgc-cr with this c")
    tu.add_argument("--dataset", default=None, choices=sorted(DATASETS),
                    help="with --isgc-c: pick w by the simulated time to --target-loss training a "
                    "NumPy model on this dataset (fastest:w on the trace)")
    tu.add_argument("--target-loss", dest="target_loss", type=float, default=None,
                    help="training loss to reach (with --dataset)")
    tu.add_argument("--model", default=None, choices=sorted(MODELS), help="model (default by task)")
    tu.add_argument("--lr", type=float, default=0.1, help="learning rate (default 0.1)")
    tu.add_argument("--max-rounds", dest="max_rounds", type=int, default=200,
                    help="rounds simulated per w before giving up (default 200)")
    tu.add_argument("--seed", type=int, default=0, help="seed of the IS-GC simulation (default 0)")
    tu.add_argument("--out", default="results/tune", help="output folder (default results/tune)")
    tu.set_defaults(func=cmd_tune)
    ls = sub.add_parser("list", help="list the codes and their parameters")
    ls.set_defaults(func=cmd_list)
    dm = sub.add_parser("demo", help="the main demo (what `make run` shows)",
                        description="Real training with injected stragglers: IS-GC against "
                        "synchronous SGD (and GC), printing time per round and time to loss.")
    dm.add_argument("--backend", choices=["local", "ray"], default="local",
                    help="local threads (default) or a local Ray instance")
    dm.add_argument("--rounds", type=int, default=40, help="rounds per scheme (default 40)")
    dm.add_argument("--out", default=None, help="also write each run under this folder")
    dm.set_defaults(func=cmd_demo)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra and args.command not in ("code", "decode", "simulate", "train"):
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        return args.func(args, extra)
    except (UsageError, ValueError, TypeError) as exc:
        print(f"gradcode {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:      # (an inner simulation's Interrupted: nothing to add)
        detail = "" if isinstance(exc, Interrupted) or not str(exc) else f"; {exc}"
        print(f"gradcode {args.command}: interrupted{detail}", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
