"""Simulator speed (issue 21, point 4), every figure against a baseline measured in the same run:

1. the vectorised simulator, n = 256, every single-round code (target >= 50 M worker-rounds/s;
   >= 20 M for the codes without a closed form, issue 34), against a plain per-round Python
   loop (draw, sort, decode, record); 1b. the ``decodable`` policy (issue 34: >= 5 M), against
   today's path before issue 34 (a bisection of least-squares decodes per round);
2. sequential replay, n = 256, 10 000 rounds (target >= 10 M worker-rounds/s), against the
   engine's loop (``simulate(..., fast=False)``-style, one round at a time) on a sample; under
   the "model" wait-out rule (issue 34) against the planner played round by round;
3. App. J's exhaustive parameter search of every family at n = 256 (target <= 1 s in all),
   against ``estimate_runtime`` once per parameter set on a sample;
4. n = 10 000 workers x 10 000 rounds in bounded memory (chunks), with the progress bar a
   terminal shows: worker-rounds/s and the peak memory the run added.

Run: `.venv/bin/python benchmarks/bench_sim.py [--quick]`.  Warm-up calls (numba's compiled
kernels load from their cache) are not timed.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import tracemalloc
from pathlib import Path

# one BLAS thread, as the test suite runs: OpenBLAS's threads spin on a busy 2-core machine and
# made the baselines' least-squares decodes several times slower than they are
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

import gradcode  # noqa: E402
from gradcode.engine import arrival_times, message_layout, start_models, streams  # noqa: E402
from gradcode.sequential import replay  # noqa: E402
from gradcode.sim import parse_wait, simulate  # noqa: E402
from gradcode.stragglers import GilbertElliott, Trace, parse_compute, parse_delay  # noqa: E402

N = 256


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


def best(f, repeat=3):
    t = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        t = min(t, time.perf_counter() - t0)
    return t


# ------------------------------------------------------------------ 1. single-round codes
def single_round_codes():
    speeds = [1.0] * 128 + [2.0] * 128
    gc = gradcode.make_code("gc-cr", n=N, s=15)
    return [("uncoded", {"n": N}, 256), ("gc-cr", {"n": N, "s": 15}, 241),
            ("gc-fr", {"n": N, "s": 15}, 241), ("ignore", {"n": N}, 200),
            ("isgc-fr", {"n": N, "c": 4}, 200), ("isgc-cr", {"n": N, "c": 4}, 200),
            ("isgc-hr", {"n": N, "c1": 2, "c2": 2, "groups": 64}, 200),
            ("heter", {"speeds": speeds, "s": 15, "k": N}, 241),
            ("heter-group", {"speeds": speeds, "s": 15, "k": N}, 241),
            ("gc-partial", {"n": N // 2, "s": 15, "alpha": 2.0}, 241),
            ("matrix", {"B": gc.B, "s": 15}, 241), ("bgc", {"n": N, "d": 16}, 241),
            # no closed form (issue 34, point 2: >= 20 M/s); a matrix without s is decoded by
            # least squares
            ("expander", {"n": N, "d": 16}, 241),
            ("stochastic-gc", {"n": N, "d": 16, "p": 0.06}, 241), ("matrix", {"B": gc.B}, 241)]


def bench_single(rounds, plain_rounds):
    print(f"1. simulate, n = {N} messages, delay exp:1.5, {rounds} rounds (M worker-rounds/s)")
    print(f"{'code':<13} {'wait':<13} {'simulate':>9} {'plain loop':>11} {'ratio':>7}")
    for name, params, w in single_round_codes():
        code = gradcode.make_code(name, **params)
        wait = parse_wait(f"fastest:{w}")
        simulate(code, "exp:1.5", wait, 10, seed=0)                       # warm
        fast = rounds * code.n_workers / best(lambda: simulate(code, "exp:1.5", wait, rounds))
        slow = plain_rounds * code.n_workers / best(lambda: plain_loop(code, plain_rounds, w), 1)
        label = name if name != "matrix" or "s" in params else "matrix no s"
        print(f"{label:<13} fastest:{w:<5} {fast / 1e6:>9.1f} {slow / 1e6:>11.2f} "
              f"{fast / slow:>6.0f}x")


# ------------------------------------------------------------------- 1b. decodable
def decodable_codes():
    """Issue 34's point 1 at n = 256 (``cyclic-mds`` at the largest ``s`` it accepts there:
    ``n + s`` odd and numerically stable, ``s`` in {1, 3, 5})."""
    speeds = [1.0] * 128 + [2.0] * 128
    return [("gc-cr", {"n": N, "s": 15}), ("heter", {"speeds": speeds, "s": 15, "k": N}),
            ("heter-group", {"speeds": speeds, "s": 15, "k": N}),
            ("gc-partial", {"n": N // 2, "s": 15, "alpha": 2.0}), ("bgc", {"n": N, "d": 16}),
            ("cyclic-mds", {"n": N, "s": 5}), ("cyclic-mds", {"n": N, "s": 3})]


def todays_decodable(code, rounds, seed=0):
    """Per round: arrivals, ``first_decodable`` before issue 34 (``codes._span.searched_counts``:
    an exact code decodes from ``n - s``; one decode rules ``n - s - 1`` out, else a bisection
    of ``decode``), the recovery of what arrived (the decoder unless an exact code misses at
    most ``s``)."""
    from gradcode.codes._span import searched_counts
    delay, compute = parse_delay("exp:1.5"), parse_compute(None)
    rng = streams(seed)
    start_models(code, delay, compute, rng["delay"])
    arr = arrival_times(message_layout(code), delay, compute, rng["delay"], rounds)
    exact_code = code.s is not None and code.n_machines == code.n_workers
    out = []
    for a in arr:
        order = np.argsort(a, kind="stable")
        k = int(searched_counts(code, order[None])[0])
        if exact_code and code.n_workers - k <= code.s:
            out.append((a[order[k - 1]], 1.0, True))
        else:
            d = code.decode(order[:k], rng=np.random.default_rng(0))
            out.append((a[order[k - 1]], d.recovered_fraction, d.exact))
    return out


def bench_decodable(rounds, plain_rounds):
    print(f"\n1b. simulate, n = {N} messages, delay exp:1.5, wait decodable, {rounds} rounds "
          "(M worker-rounds/s)")
    print(f"{'code':<13} {'simulate':>9} {'before':>9} {'ratio':>7}")
    for name, params in decodable_codes():
        code = gradcode.make_code(name, **params)
        simulate(code, "exp:1.5", "decodable", 10, seed=0)                 # warm
        fast = rounds * code.n_workers / best(lambda: simulate(code, "exp:1.5", "decodable",
                                                                rounds))
        slow = plain_rounds * code.n_workers / best(lambda: todays_decodable(code, plain_rounds),
                                                    1)
        label = name if name != "cyclic-mds" else f"mds s={params['s']}"
        print(f"{label:<13} {fast / 1e6:>9.2f} {slow / 1e6:>9.4f} {fast / slow:>6.0f}x")


# ------------------------------------------------------------------------ 2. replay
REPLAY = [("gc-seq", dict(s=15)), ("sr-sgc", dict(B=2, W=3, lam=23)),
          ("sr-sgc-rep", dict(B=2, W=3, lam=30)), ("m-sgc", dict(B=1, W=2, lam=27)),
          ("m-sgc-rep", dict(B=1, W=2, lam=31))]


def bench_replay(rounds, loop_rounds):
    print(f"\n2. sequential replay, n = {N}, {rounds} rounds, Gilbert-Elliott stragglers, "
          "deadline rule (M worker-rounds/s)")
    print(f"{'scheme':<12} {'replay':>9} {'loop':>9} {'ratio':>7}")
    S = GilbertElliott(p_N=0.025, p_S=0.6).sample(np.random.default_rng(0), rounds, N)
    D = np.where(S, 3.0, 1.0)                     # the μ-rule (μ = 1) finds exactly S
    for name, p in REPLAY:
        x = gradcode.make_code(name, n=N, **p)
        replay(x, S[:50], 50 - x.T)                                       # warm
        fast = rounds * N / best(lambda: replay(x, S, rounds - x.T))
        slow = loop_rounds * N / best(lambda: simulate(x, Trace(D[:loop_rounds]), "mu:1",
                                                        loop_rounds), 1)
        print(f"{name:<12} {fast / 1e6:>9.1f} {slow / 1e6:>9.2f} {fast / slow:>6.0f}x")


def round_by_round(x, S, jobs, rule="model"):
    """``replay(x, S, jobs, waitout=rule)``'s planner played round by round (the reference)."""
    from gradcode.sequential._planner import make_run
    return make_run([x], jobs, rule, track=True).drive(S[None], compiled=False)


def bench_model_rule(rounds, loop_rounds):
    print(f"\n2b. sequential replay, n = {N}, {rounds} rounds, Gilbert-Elliott stragglers, "
          "model rule (M worker-rounds/s)")
    print(f"{'scheme':<12} {'replay':>9} {'round by round':>15} {'ratio':>7}")
    S = GilbertElliott(p_N=0.025, p_S=0.6).sample(np.random.default_rng(0), rounds, N)
    for name, p in REPLAY:
        x = gradcode.make_code(name, n=N, **p)
        replay(x, S[:50], 50 - x.T, waitout="model")                     # warm
        fast = rounds * N / best(lambda: replay(x, S, rounds - x.T, waitout="model"))
        slow = loop_rounds * N / best(lambda: round_by_round(x, S[:loop_rounds],
                                                             loop_rounds - x.T), 1)
        print(f"{name:<12} {fast / 1e6:>9.1f} {slow / 1e6:>15.2f} {fast / slow:>6.0f}x")


# ------------------------------------------------------------------------- 3. App. J search
def bench_search(sample):
    from bench_sequential import combos, delay_profile
    from gradcode.sim._search import search
    from gradcode.sim import estimate_runtime
    print(f"\n3. App. J exhaustive search, n = {N}, T_probe = 40, T <= 3, mu = 1, deadline rule")
    print(f"{'family':<8} {'sets':>6} {'search (s)':>11} {'per set (s)':>12} {'ratio':>7}")
    D0, alpha = delay_profile(40)
    total = 0.0
    rng = np.random.default_rng(1)
    for name in ("gc-seq", "sr-sgc", "m-sgc"):
        grid = combos(name, 3, 37)
        count = len(next(iter(grid.values())))
        fast = best(lambda: search(name, grid, D0, 37, 1.0, alpha, base_load=1.0 / N,
                                   waitout="deadline"))
        idx = rng.choice(count, min(sample, count), replace=False)
        t0 = time.perf_counter()
        for i in idx:
            x = gradcode.make_code(name, n=N, **{k: int(v[i]) for k, v in grid.items()})
            estimate_runtime(x, D0, jobs=37, mu=1.0, alpha=alpha, base_load=1.0 / N,
                             waitout="deadline")
        slow = (time.perf_counter() - t0) * count / len(idx)
        total += fast
        print(f"{name:<8} {count:>6} {fast:>11.3f} {slow:>12.1f} {slow / fast:>6.0f}x")
    print(f"{'all':<8} {'':>6} {total:>11.3f}   (per set: {sample} sampled sets, scaled)")


# --------------------------------------------------------------------- 4. 10 000 x 10 000
def bench_large(n, rounds):
    print(f"\n4. isgc-cr n = {n}, c = 4, fastest:{int(0.8 * n)}, {rounds} rounds")
    code = gradcode.make_code("isgc-cr", n=n, c=4)
    wait = parse_wait(f"fastest:{int(0.8 * n)}")
    simulate(code, "exp:1.5", wait, 2)                                     # warm
    t0 = time.perf_counter()
    res = simulate(code, "exp:1.5", wait, rounds, progress=sys.stderr.isatty())
    dt = time.perf_counter() - t0
    tracemalloc.start()                           # memory: a second run, traced (slower)
    simulate(code, "exp:1.5", wait, rounds)
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    print(f"{dt:.1f} s, {rounds * n / dt / 1e6:.1f} M worker-rounds/s, peak memory {peak:.0f} MB "
          f"(NumPy arrays, traced), mean recovered {res.summary['mean_recovered_fraction']:.4f}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="smaller runs (a smoke test)")
    q = ap.parse_args().quick
    bench_single(2_000 if q else 20_000, 50 if q else 200)
    bench_decodable(2_000 if q else 20_000, 3 if q else 20)
    bench_replay(1_000 if q else 10_000, 50 if q else 300)
    bench_model_rule(1_000 if q else 10_000, 100 if q else 1_000)
    bench_search(5 if q else 40)
    bench_large(2_000 if q else 10_000, 500 if q else 10_000)
