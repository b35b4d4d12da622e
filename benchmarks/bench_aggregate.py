"""Per-host aggregation (issue 33, point 4): bytes into the master and time per round, with the
hosts' sums against per-worker sending, measured in the same run; and where aggregating pays.

    .venv/bin/python benchmarks/bench_aggregate.py [--quick] [--backend torch|ray] [--measure]
        [--repeats R] [--n N]

Each setting trains twice or three times on the same backend, seed and injected delays, under
``--aggregate`` off (every worker sends its vector), on (hosts holding several workers send
notices, then one weighted sum each) and auto (on only where the bytes saved reach
``runtime._aggregate.PAYS_FROM``).  Printed: ``bytes_to_master`` per round (summary.json), the
median time per round, their ratios to off, and what auto chose.  Targets: n = 64 on 4 hosts,
bytes per round at most 1/4 of per-worker sending plus the notices; n = 8 (2 hosts), time per
round no worse.

``--measure``: what a round trip costs on the backend against what a byte costs the master, the
crossover ``PAYS_FROM`` is taken from: the master asks a host process for a reply of B bytes (a
pickled float32 array, as a worker's message or a host's sum comes), for B from 0 to 4 MiB;
the round trip is the time at B = 0 and the cost of a byte the slope of a least-squares line.
The hosts' sums cost one more round trip per round (every host answers in parallel) and save
the master the bytes of the vectors they replace, so aggregating pays from about
``round trip / cost of a byte`` bytes saved per round.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import tempfile
import time
from pathlib import Path

import numpy as np

#: (code, parameters, wait, hosts, model): model None the digits MLP (4 810 entries, 19 KB per
#: float32 vector), "wide" an MLP with 2 048 hidden units (153 610 entries, 614 KB)
SETTINGS = [("isgc-cr", {"n": 64, "c": 2}, "fastest:56", 4, None),
            ("gc-cr", {"n": 64, "s": 4}, "fastest:60", 4, None),
            ("isgc-cr", {"n": 8, "c": 2}, "fastest:6", 2, None),
            ("isgc-cr", {"n": 8, "c": 2}, "fastest:6", 2, "wide")]
SIZES = [0, 1 << 14, 1 << 16, 1 << 18, 1 << 20, 1 << 22]


def wide_mlp(seed: int = 0):
    import torch
    from torch import nn
    torch.manual_seed(seed)
    return nn.Sequential(nn.Flatten(), nn.Linear(64, 2048), nn.ReLU(), nn.Linear(2048, 10))


def one(backend: str, code: str, params: dict, wait: str, hosts: int, rounds: int,
        aggregate: str, data, model=None) -> dict:
    from gradcode.runtime import TrainConfig, train
    with tempfile.TemporaryDirectory() as out:
        cfg = TrainConfig(code=code, code_params=params, wait=wait, delay="exp:0.02",
                          rounds=rounds, seed=0, backend=backend, actors=hosts, batch=16,
                          dataset="digits", model="mlp", eval_every=0, out=out,
                          aggregate=aggregate)
        res = train(cfg, data=data, progress=False,
                    model=None if model is None else wide_mlp())
        summary = json.loads((Path(out) / "summary.json").read_text())
    times = [r.time_s for r in res.records[1:]]
    chose = [e for e in res.events if "aggregate auto:" in e]
    return {"bytes": summary["bytes_to_master"] / len(res.records),
            "time": float(np.median(times)),
            "auto": ("on" if "send notices" in chose[0] else "off") if chose else "-"}


def repeated(backend: str, setting: tuple, rounds: int, data, repeats: int) -> dict:
    """Mode -> its run, the modes interleaved ``repeats`` times, each repeat starting with the
    next mode (a busy machine, or the last run's processes still exiting, slow them alike);
    time the median of the runs' medians."""
    code, params, wait, hosts, model = setting
    modes = ["off", "on", "auto"]
    got: dict[str, list] = {mode: [] for mode in modes}
    for r in range(repeats):
        for mode in modes[r % 3:] + modes[:r % 3]:
            got[mode].append(one(backend, code, params, wait, hosts, rounds, mode, data, model))
    return {mode: {**runs[0], "time": float(np.median([r["time"] for r in runs]))}
            for mode, runs in got.items()}


def compare(backend: str, rounds: int, data, repeats: int = 1, n: int | None = None) -> None:
    print(f"backend {backend}, {rounds} rounds each, {repeats} run(s) of each mode; bytes per "
          f"round, median s per round")
    for code, params, wait, hosts, model in SETTINGS:
        if n is not None and params["n"] != n:
            continue
        runs = repeated(backend, (code, params, wait, hosts, model), rounds, data, repeats)
        off = runs["off"]
        line = [f"{code} n={params['n']} on {hosts} hosts ({wait}, {model or 'mlp'}): off "
                f"{off['bytes']:.0f} B, {off['time']:.4f} s"]
        for mode in ("on", "auto"):
            r = runs[mode]
            line.append(f"{mode} {r['bytes']:.0f} B ({r['bytes'] / off['bytes']:.3f}), "
                        f"{r['time']:.4f} s ({r['time'] / off['time']:.2f})")
        print("; ".join(line) + f"; auto chose {runs['auto']['auto']}", flush=True)


def fit(sizes, times) -> tuple[float, float]:
    """``(round trip s, s per byte)``: the median at size 0, and a least-squares slope."""
    slope = np.polyfit(np.asarray(sizes, float), np.asarray(times), 1)[0]
    return float(times[0]), float(slope)


def report(backend: str, sizes, times) -> None:
    trip, per_byte = fit(sizes, times)
    for b, t in zip(sizes, times):
        print(f"  {backend}: reply of {b:>8} B: {t * 1e3:7.3f} ms")
    print(f"{backend}: round trip {trip * 1e3:.2f} ms, {per_byte * 1e9:.2f} ns per byte "
          f"({1 / per_byte / 1e9:.2f} GB/s): pays from ~{trip / per_byte / (1 << 20):.2f} MiB "
          f"saved per round", flush=True)


def timed(ask, repeats: int) -> list[float]:
    """The median seconds of ``ask(b)`` per size ``b`` of ``SIZES``, the sizes interleaved in a
    fresh order each repeat (so that a busy machine slows them all alike)."""
    rng = np.random.default_rng(0)
    for b in SIZES:
        ask(b)                                   # warm up
    took: dict[int, list] = {b: [] for b in SIZES}
    for _ in range(repeats):
        for b in rng.permutation(SIZES).tolist():
            t0 = time.perf_counter()
            ask(b)
            took[b].append(time.perf_counter() - t0)
    return [float(np.median(took[b])) for b in SIZES]


def _reply(nbytes: int):
    return np.zeros(nbytes // 4, np.float32)


def measure_ray(repeats: int) -> None:
    import ray
    from gradcode.runtime._ray import init_ray
    init_ray(None, num_cpus=2)

    @ray.remote(num_cpus=0)
    class Echo:
        async def reply(self, nbytes):
            return _reply(nbytes)
    host = Echo.remote()
    times = timed(lambda b: ray.get(host.reply.remote(b)), repeats)
    ray.shutdown()
    report("ray", SIZES, times)


def _echo(port: int) -> None:
    """A host process answering each question with a reply of the size asked."""
    import torch.distributed as dist
    from gradcode.runtime._torch_host import Kind, connect, dumps, loopback_interface
    os.environ["GLOO_SOCKET_IFNAME"] = loopback_interface()
    from datetime import timedelta
    store = dist.TCPStore("127.0.0.1", port, is_master=False, timeout=timedelta(seconds=60))
    channel = connect(store, "echo", 1, 60)
    while True:
        kind, _, meta, _ = channel.recv()
        if kind is Kind.CLOSE:
            return
        channel.send(Kind.REPLY, -1, dumps(_reply(pickle.loads(meta))))


def measure_torch(repeats: int) -> None:
    import multiprocessing
    import socket
    from datetime import timedelta

    import torch.distributed as dist
    from gradcode.runtime._torch_host import Kind, connect, dumps, loopback_interface
    os.environ["GLOO_SOCKET_IFNAME"] = loopback_interface()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    store = dist.TCPStore("127.0.0.1", port, is_master=True, timeout=timedelta(seconds=60))
    proc = multiprocessing.get_context("spawn").Process(target=_echo, args=(port,))
    proc.start()
    channel = connect(store, "echo", 0, 60)

    def ask(b):
        channel.send(Kind.ASK, -1, dumps(b))
        _, _, meta, _ = channel.recv()
        return pickle.loads(meta)
    times = timed(ask, repeats)
    channel.send(Kind.CLOSE, -1)
    proc.join(10)
    report("torch", SIZES, times)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer rounds")
    ap.add_argument("--backend", default="torch", choices=["torch", "ray"])
    ap.add_argument("--measure", action="store_true",
                    help="measure a round trip against a byte instead of training")
    ap.add_argument("--repeats", type=int, default=1,
                    help="runs of each mode, interleaved (time: the median)")
    ap.add_argument("--n", type=int, default=None, help="only the settings with this n")
    args = ap.parse_args(argv)
    if args.measure:
        (measure_ray if args.backend == "ray" else measure_torch)(20 if args.quick else 50)
        return
    from gradcode.runtime import load_torch_data
    compare(args.backend, 6 if args.quick else 20, load_torch_data("digits", seed=0),
            args.repeats, args.n)


if __name__ == "__main__":
    main()
