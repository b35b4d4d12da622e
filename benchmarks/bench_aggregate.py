"""Per-host aggregation (issue 33, point 4): bytes into the master and time per round, with the
hosts' sums against per-worker sending, measured in the same run.

    .venv/bin/python benchmarks/bench_aggregate.py [--quick] [--backend torch|ray]

Each setting trains the digits MLP twice on the same backend, seed and injected delays: once as
it runs (hosts holding several workers send notices, then one weighted sum each), once with
aggregation off (``Executor.aggregate`` patched to refuse: every worker sends its vector).
Printed: ``bytes_to_master`` per round (summary.json) and the median time per round, and their
ratios.  Targets: n = 64 on 4 hosts, bytes per round at most 1/4 of per-worker sending plus the
notices; n = 8 (2 hosts), time per round no worse.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import numpy as np

SETTINGS = [("isgc-cr", {"n": 64, "c": 2}, "fastest:56", 4),
            ("gc-cr", {"n": 64, "s": 4}, "fastest:60", 4),
            ("isgc-cr", {"n": 8, "c": 2}, "fastest:6", 2)]


def one(backend: str, code: str, params: dict, wait: str, hosts: int, rounds: int,
        aggregate: bool, data) -> dict:
    from gradcode.runtime import TrainConfig, backend as executor_class, train
    cls = executor_class(backend)
    own = cls.aggregate
    if not aggregate:
        cls.aggregate = lambda self: False
    try:
        with tempfile.TemporaryDirectory() as out:
            cfg = TrainConfig(code=code, code_params=params, wait=wait, delay="exp:0.02",
                              rounds=rounds, seed=0, backend=backend, actors=hosts, batch=16,
                              dataset="digits", model="mlp", eval_every=0, out=out)
            res = train(cfg, data=data, progress=False)
            summary = json.loads((Path(out) / "summary.json").read_text())
    finally:
        cls.aggregate = own
    times = [r.time_s for r in res.records[1:]]
    return {"bytes": summary["bytes_to_master"] / len(res.records),
            "time": float(np.median(times))}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer rounds")
    ap.add_argument("--backend", default="torch", choices=["torch", "ray"])
    args = ap.parse_args(argv)
    from gradcode.runtime import load_torch_data
    data = load_torch_data("digits", seed=0)
    rounds = 6 if args.quick else 20
    print(f"backend {args.backend}, {rounds} rounds each; bytes per round, median s per round")
    for code, params, wait, hosts in SETTINGS:
        per = one(args.backend, code, params, wait, hosts, rounds, False, data)
        agg = one(args.backend, code, params, wait, hosts, rounds, True, data)
        print(f"{code} n={params['n']} on {hosts} hosts ({wait}): per worker "
              f"{per['bytes']:.0f} B, {per['time']:.4f} s; aggregated {agg['bytes']:.0f} B, "
              f"{agg['time']:.4f} s; bytes ratio {agg['bytes'] / per['bytes']:.3f}, "
              f"time ratio {agg['time'] / per['time']:.2f}")


if __name__ == "__main__":
    main()
