"""gradcode beside PyTorch DistributedDataParallel (issue 18): the comparison practitioners make.

    .venv/bin/python benchmarks/bench_ddp.py [--quick] [--n 8] [--plot FILE]

The same model (the digits MLP), the same data split into n partitions (``train``'s split, 20 %
held out), the same initial weights, learning rate and full-partition gradients, and the same
injected delays (``gradcode.engine``'s streams: worker i sleeps the same seconds in round r on
every system) run under

- **DDP**: n CPU processes started the way torchrun starts them (``MASTER_ADDR``,
  ``MASTER_PORT``, ``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK`` in the environment; this file run
  with ``--rank``), torch.distributed's gloo backend; each step every rank sleeps its delay,
  computes its partition's gradient, and DDP all-reduces (the mean gradient over all samples,
  as gradcode's uncoded code decodes);
- **gradcode**: ``uncoded`` (waits for everyone, like DDP) and ``isgc-cr`` (c = 2, the fastest
  n - 2 workers), on local threads, on Ray (2 processes) and on torch.distributed (``--backend
  torch``: n gloo processes, one per worker, as DDP's ranks).

Two settings: no stragglers (per-round time: gradcode's overhead against DDP's), and two slow
workers per round (``exp:0.3@2``: two random workers sleep Exp(mean 0.3 s)).  Printed: median
time per round, rounds and seconds (evaluation excluded) to the held-out accuracy target, and
the ratios against DDP measured in the same run.  Targets: without stragglers gradcode uncoded
within 1.5x DDP's time per round; with them IS-GC reaches the target at least 2x sooner.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

SEED, LR, TARGET = 0, 0.5, 0.90
SETTINGS = {"no stragglers": "none", "two slow workers per round": "exp:0.3@2"}


def _setup(n: int, delay: str, rounds: int):
    """``(data, partitions {j: rows}, test rows, model, loss_fn, delays (rounds, n))``: what
    ``train`` would use for ``uncoded`` with ``n`` workers and this seed."""
    from gradcode import make_code
    from gradcode.engine import arrival_times, message_layout, start_models, streams
    from gradcode.runtime import build_model, load_torch_data, loss_for
    from gradcode.runtime._data import DEFAULT_TEST_FRACTION, split_indices
    from gradcode.stragglers import parse_compute, parse_delay

    data = load_torch_data("digits", SEED)
    rng = streams(SEED)
    scheme = make_code("uncoded", n=n)
    test, rows = split_indices(len(data), scheme.partition_sizes, DEFAULT_TEST_FRACTION,
                               rng["data"])
    d, c = parse_delay(delay), parse_compute(None)
    start_models(scheme, d, c, rng["delay"])
    delays = np.concatenate([arrival_times(message_layout(scheme), d, c, rng["delay"], 1, r)
                             for r in range(rounds)])
    summed = type(loss_for(data))(reduction="sum")          # DDP's step scales it below
    return data, rows, test, build_model("mlp", data, SEED), summed, delays


def rank_main(args) -> None:
    """One DDP rank (this file run by ``ddp`` with torchrun's environment)."""
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    torch.set_num_threads(1)
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    dist.init_process_group("gloo")
    data, rows, test, model, loss_fn, delays = _setup(world, args.delay, args.rounds)
    X, y = data.take(rows[rank])
    Xt, yt = data.take(test)
    total = sum(len(r) for r in rows.values())
    ddp = DistributedDataParallel(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=LR)
    times, acc = [], {}
    for r in range(args.rounds):
        dist.barrier()                         # every rank starts the step together
        t0 = time.perf_counter()
        time.sleep(float(delays[r, rank]))
        opt.zero_grad()
        # DDP averages over ranks: world / total makes it the mean over all samples
        (loss_fn(ddp(X), y) * (world / total)).backward()
        opt.step()
        times.append(time.perf_counter() - t0)
        if rank == 0 and ((r + 1) % args.eval_every == 0 or r + 1 == args.rounds):
            with torch.no_grad():
                acc[r] = float((model(Xt).argmax(-1) == yt).float().mean())
    if rank == 0:
        Path(args.result).write_text(json.dumps({"times": times, "acc": acc}))
    dist.destroy_process_group()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ddp(n: int, delay: str, rounds: int, eval_every: int) -> dict:
    """n DDP ranks as torchrun starts them; rank 0's ``{"times", "acc"}``."""
    with tempfile.TemporaryDirectory() as tmp:
        result = Path(tmp) / "rank0.json"
        env = {**os.environ, "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(_free_port()),
               "WORLD_SIZE": str(n), "OMP_NUM_THREADS": "1"}
        argv = [sys.executable, __file__, "--rank", "--delay", delay, "--rounds", str(rounds),
                "--eval-every", str(eval_every), "--result", str(result)]
        procs = [subprocess.Popen(argv, env={**env, "RANK": str(r), "LOCAL_RANK": str(r)})
                 for r in range(n)]
        codes = [p.wait(timeout=1800) for p in procs]
        if any(codes):
            raise RuntimeError(f"a DDP rank failed (exit codes {codes})")
        out = json.loads(result.read_text())
    return {"times": out["times"], "acc": {int(k): v for k, v in out["acc"].items()}}


def ours(code: str, params: dict, wait: str, backend: str, delay: str, rounds: int,
         eval_every: int) -> dict:
    from gradcode.runtime import TrainConfig, train
    cfg = TrainConfig(code=code, code_params=params, wait=wait, delay=delay, rounds=rounds,
                      dataset="digits", model="mlp", seed=SEED, lr=LR, backend=backend,
                      actors=2 if backend == "ray" else None, eval_every=eval_every)
    res = train(cfg, progress=False)
    return {"times": [r.time_s for r in res.records],
            "acc": {r.round: r.test_accuracy for r in res.records
                    if r.test_accuracy == r.test_accuracy}}


def to_target(run: dict) -> tuple[int | None, float | None]:
    """``(rounds, seconds)`` until the held-out accuracy first reaches ``TARGET``."""
    elapsed = np.cumsum(run["times"])
    for r in sorted(run["acc"]):
        if run["acc"][r] >= TARGET:
            return r + 1, float(elapsed[r])
    return None, None


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="fewer rounds (a smoke run)")
    p.add_argument("--n", type=int, default=8, help="workers / DDP ranks")
    p.add_argument("--plot", help="where the figure goes (default benchmarks/ddp.png, "
                   "ddp-quick.png with --quick)")
    p.add_argument("--rank", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--delay", default="none", help=argparse.SUPPRESS)
    p.add_argument("--rounds", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument("--eval-every", type=int, default=1, help=argparse.SUPPRESS)
    p.add_argument("--result", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.rank:
        return rank_main(args)
    rounds, every = (40, 2) if args.quick else (120, 2)
    plot = args.plot or str(Path(__file__).with_name("ddp-quick.png" if args.quick else "ddp.png"))
    n = args.n
    systems = [("DDP (gloo)", None, None, None, None),
               ("gradcode uncoded, local", "uncoded", {"n": n}, "all", "local"),
               ("gradcode uncoded, Ray", "uncoded", {"n": n}, "all", "ray"),
               ("gradcode uncoded, torch", "uncoded", {"n": n}, "all", "torch"),
               ("gradcode isgc-cr, local", "isgc-cr", {"n": n, "c": 2}, f"fastest:{n - 2}",
                "local"),
               ("gradcode isgc-cr, Ray", "isgc-cr", {"n": n, "c": 2}, f"fastest:{n - 2}", "ray"),
               ("gradcode isgc-cr, torch", "isgc-cr", {"n": n, "c": 2}, f"fastest:{n - 2}",
                "torch")]
    runs = {}
    for setting, delay in SETTINGS.items():
        for label, code, params, wait, backend in systems:
            print(f"{setting}: {label} ...", flush=True)
            runs[setting, label] = (ddp(n, delay, rounds, every) if code is None else
                                    ours(code, params, wait, backend, delay, rounds, every))
    _report(runs, systems, n, rounds)
    _plot(runs, systems, plot, n)


def _report(runs, systems, n, rounds) -> None:
    print(f"\nn = {n}, digits MLP, SGD lr {LR}, {rounds} rounds, held-out accuracy target "
          f"{TARGET:.0%}; ratios against DDP in the same run")
    print(f"{'setting':<28}{'system':<26}{'s/round':>9}{'vs DDP':>8}{'rounds':>8}"
          f"{'s to target':>13}{'DDP / this':>12}")
    for setting in SETTINGS:
        base = runs[setting, "DDP (gloo)"]
        b_round, (_, b_time) = float(np.median(base["times"])), to_target(base)
        for label, *_ in systems:
            run = runs[setting, label]
            per = float(np.median(run["times"]))
            k, t = to_target(run)
            sooner = f"{b_time / t:.2f}x" if t and b_time else "-"
            print(f"{setting:<28}{label:<26}{per * 1e3:>7.1f}ms{per / b_round:>7.2f}x"
                  f"{k if k else '-':>8}{f'{t:.2f} s' if t else 'not reached':>13}{sooner:>12}")


def _plot(runs, systems, path, n) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(SETTINGS), figsize=(6.2 * len(SETTINGS), 4.2))
    for ax, setting in zip(axes, SETTINGS):
        for label, *_ in systems:
            run = runs[setting, label]
            elapsed = np.cumsum(run["times"])
            r = sorted(run["acc"])
            ax.plot(elapsed[r], [run["acc"][k] for k in r], "o-" if "DDP" in label else ".-",
                    label=label, ms=3)
        ax.axhline(TARGET, color="k", ls=":", lw=1)
        ax.set(title=f"{setting} ({SETTINGS[setting]})", xlabel="seconds (evaluation excluded)",
               ylabel="held-out accuracy", ylim=(0.5, 1.0))
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(f"gradcode vs PyTorch DDP, n = {n} on a 2-core machine (digits MLP)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    print(f"plot: {path}")


if __name__ == "__main__":
    main()
