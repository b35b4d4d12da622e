"""Simulator throughput (issue 4): worker-rounds per second for single-round codes at n = 256,
against a plain per-round Python loop measured in the same run.  Target >= 1 000 000 /s.

Run: `.venv/bin/python benchmarks/bench_sim.py`
"""

from __future__ import annotations

import time

import numpy as np

import gradcode
from gradcode.sim import parse_wait, simulate
from gradcode.stragglers._delays import parse_delay


def plain_loop(code, rounds, w, seed=0):
    """What one would write first: per round, draw delays, sort, decode, record."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(rounds):
        arrivals = rng.exponential(1.5, code.n_workers)
        order = np.argsort(arrivals)
        d = code.decode(order[:w], rng=rng)
        out.append((arrivals[order[w - 1]], d.recovered.mean(), d.exact))
    return out


def bench(name, params, wait_w, rounds, plain_rounds):
    code = gradcode.make_code(name, **params)
    n = code.n_workers
    simulate(code, parse_delay("exp:1.5"), parse_wait(f"fastest:{wait_w}"), 10, seed=0)  # warm
    t0 = time.perf_counter()
    simulate(code, parse_delay("exp:1.5"), parse_wait(f"fastest:{wait_w}"), rounds, seed=0)
    fast = rounds * n / (time.perf_counter() - t0)
    t0 = time.perf_counter()
    plain_loop(code, plain_rounds, wait_w)
    slow = plain_rounds * n / (time.perf_counter() - t0)
    print(f"{name:<12} fastest:{wait_w:<4} {fast:>14,.0f} {slow:>14,.0f} {fast / slow:>7.1f}x")
    return fast, slow


if __name__ == "__main__":
    print(f"{'code':<12} {'wait':<12} {'simulate /s':>14} {'plain loop /s':>14} {'ratio':>8}")
    speeds = [1.0] * 128 + [2.0] * 128
    gc = gradcode.make_code("gc-cr", n=256, s=15)
    bench("uncoded", {"n": 256}, 256, 20_000, 2_000)
    bench("gc-cr", {"n": 256, "s": 15}, 241, 20_000, 500)
    bench("gc-fr", {"n": 256, "s": 15}, 241, 20_000, 2_000)
    bench("ignore", {"n": 256}, 200, 20_000, 2_000)
    bench("isgc-fr", {"n": 256, "c": 4}, 200, 20_000, 2_000)
    bench("isgc-cr", {"n": 256, "c": 4}, 200, 20_000, 2_000)
    bench("isgc-hr", {"n": 256, "c1": 2, "c2": 2, "groups": 64}, 200, 20_000, 2_000)
    bench("heter", {"speeds": speeds, "s": 15, "k": 256}, 241, 20_000, 500)
    bench("heter-group", {"speeds": speeds, "s": 15, "k": 256}, 241, 20_000, 500)
    bench("gc-partial", {"n": 128, "s": 15, "alpha": 2.0}, 241, 20_000, 500)
    bench("matrix", {"B": gc.B, "s": 15}, 241, 20_000, 500)
