"""Benchmark of gradcode.sequential (paper 4), run on demand:

    .venv/bin/python benchmarks/bench_sequential.py [--quick]

1. Replay: 10 000 rounds of n = 256 workers through every scheme (Table 1 parameters; the -Rep
   variants with the nearest valid λ), Gilbert-Elliott stragglers at the rate of the Lambda
   traces (~4 % of workers per round, mean burst 1.7 rounds), default (deadline) wait-out rule,
   every task and weight recorded (each scheme first replays one round: numba loads its compiled
   rounds on first use).
2. The exhaustive parameter search of App. J/K (``gradcode.sim._search.search``, what
   ``gradcode tune`` runs): for every valid parameter set, the runtime of
   37 jobs (T_probe = 40 rounds, T <= 3 for M = 4 pipelined models) on the measured Canada delay
   profile (shared/traces, 30 rounds wrapped to 40), shifted by (L - base) * alpha with alpha
   fitted on the load sweep, stragglers by the μ-rule (μ = 1), wait-outs by the deadline rule.
   Paper, App. K: ~8 s (SR-SGC), ~2 s (M-SGC), < 1 s (GC) for n = 256.

Baselines, measured in the same run: the straightforward reference of tests/_sgc_reference.py
(Algorithms 1-3 as per-worker loops over sets, deadline rule by playing the future; the oracle of
the tests) and, for the search, the vectorised planner run once per parameter set.  Slow
baselines are timed on a sample (first rounds / random parameter sets) and scaled linearly; the
table says so.  Results of the baselines are checked against the fast path on that sample.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import gradcode  # noqa: E402
import gradcode.sequential as seq  # noqa: E402
from gradcode.analysis._sequential import sr_sgc_s  # noqa: E402
from gradcode.stragglers import GilbertElliott, identify_stragglers  # noqa: E402
from gradcode.sim._search import search  # noqa: E402
from gradcode.stragglers._traces import fit_load_slope, load_trace, traces_dir  # noqa: E402

from _sgc_reference import ref_replay  # noqa: E402

N = 256
REPLAY = [("gc-seq", dict(s=15)), ("sr-sgc", dict(B=2, W=3, lam=23)),
          ("sr-sgc-rep", dict(B=2, W=3, lam=30)), ("m-sgc", dict(B=1, W=2, lam=27)),
          ("m-sgc-rep", dict(B=1, W=2, lam=31))]
PAPER_SEARCH = {"gc-seq": 1.0, "sr-sgc": 8.0, "m-sgc": 2.0}      # App. K, seconds


def best_of(f, repeat):
    best, out = np.inf, None
    for _ in range(repeat):
        t = time.perf_counter()
        out = f()
        best = min(best, time.perf_counter() - t)
    return best, out


# ----------------------------------------------------------------------------- 1. replay
def bench_replay(rounds, ref_rounds, repeat):
    S = GilbertElliott(p_N=0.025, p_S=0.6).sample(np.random.default_rng(0), rounds, N)
    rows = []
    for name, p in REPLAY:
        x = gradcode.make_code(name, n=N, **p)
        jobs = rounds - x.T
        seq.replay(x, S[:x.T + 1], 1)                 # loads the compiled rounds (numba cache)
        fast, r = best_of(lambda: seq.replay(x, S, jobs), repeat)
        short = ref_rounds - x.T
        t = time.perf_counter()
        finish, waits, _ = ref_replay(name, {"n": N, **p}, S[:ref_rounds], short)
        ref = (time.perf_counter() - t) * rounds / ref_rounds
        check = seq.replay(x, S[:ref_rounds], short)
        assert np.array_equal(check.finish_round, finish) and np.array_equal(check.waitouts, waits)
        rows.append((name, p, len(r.waitouts), fast, ref))
    return rows


# ----------------------------------------------------------------------------- 2. App. J search
def delay_profile(t_probe):
    folder = traces_dir() or ROOT.parent / "shared" / "traces"
    name = "canada-w256-r30-load{:.3f}.csv"
    sweep = [(load, load_trace(folder / name.format(load).replace(".", "_", 1)))
             for load in (0.0, 0.25, 0.5, 0.75, 1.0)]
    alpha, _ = fit_load_slope(sweep)
    base = sweep[0][1]
    return base[np.arange(t_probe) % len(base)], alpha


def combos(name, t_max, jobs):
    """Every valid parameter set (the authors' ranges, App. J, with T <= t_max)."""
    if name == "gc-seq":
        return {"s": np.arange(N)}
    out = {"B": [], "W": [], "lam": []}
    for B in range(1, t_max + 1):
        Ws = range(B + 1, jobs, B) if name == "sr-sgc" else range(B + 1, t_max + 3 - B)
        for W in Ws:
            lam = np.arange(1 if name == "sr-sgc" else 0, N + 1)
            if name == "sr-sgc":
                lam = lam[sr_sgc_s(B, W, lam) < N]
            out["B"].append(np.full(lam.size, B))
            out["W"].append(np.full(lam.size, W))
            out["lam"].append(lam)
    return {k: np.concatenate(v) for k, v in out.items()}


def durations(D, waits, S, mu):
    """Total time: a round lasts (1+μ)κ when stragglers were cut off, else until the slowest."""
    full = waits | ~S.any(-1)
    return np.where(full, D.max(-1), (1 + mu) * D.min(-1)).sum(-1)


def search_one(name, p, D0, alpha, mu, jobs, reference=False):
    """Runtime of one parameter set, the straightforward way."""
    x = gradcode.make_code(name, n=N, **p)
    D = D0[: jobs + x.T] + (x.load - 1.0 / N) * alpha
    S = identify_stragglers(D, mu)
    if reference:
        _, waits, _ = ref_replay(name, {"n": N, **p}, S, jobs)
        mask = np.zeros(len(S), bool)
        mask[waits] = True
    else:
        mask = np.zeros(len(S), bool)
        mask[seq.replay(x, S, jobs).waitouts] = True
    return durations(D, mask, S, mu)


def bench_search(sample, ref_sample, repeat, t_probe=40, t_max=3, mu=1.0):
    D0, alpha = delay_profile(t_probe)
    jobs = t_probe - t_max
    rows, rng = [], np.random.default_rng(1)
    for name in ("gc-seq", "sr-sgc", "m-sgc"):
        grid = combos(name, t_max, jobs)
        count = len(next(iter(grid.values())))
        fast, res = best_of(lambda: search(name, grid, D0, jobs, mu, alpha, base_load=1.0 / N,
                                           waitout="deadline"), repeat)
        runtime = res.runtime_s
        timed = {}
        for label, k, ref in (("planner", sample, False), ("reference", ref_sample, True)):
            idx = rng.choice(count, min(k, count), replace=False)
            t = time.perf_counter()
            got = [search_one(name, {key: int(v[i]) for key, v in grid.items()}, D0, alpha, mu,
                              jobs, ref) for i in idx]
            timed[label] = (time.perf_counter() - t) * count / len(idx)
            np.testing.assert_allclose(got, runtime[idx], rtol=1e-12)
        best = int(np.argmin(runtime))
        rows.append((name, count, fast, timed["planner"], timed["reference"],
                     {k: int(v[best]) for k, v in grid.items()}, float(runtime[best])))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer rounds and samples (smoke run)")
    args = ap.parse_args()
    rounds, ref_rounds, repeat = (2000, 200, 1) if args.quick else (10_000, 1000, 3)
    sample, ref_sample = (20, 3) if args.quick else (200, 20)

    print(f"1. replay: {rounds} rounds, n = {N}, Gilbert-Elliott p_N=0.025 p_S=0.6, deadline rule")
    print(f"{'scheme':<12}{'params':<24}{'wait-outs':>10}{'fast (s)':>10}"
          f"{'reference (s)':>15}{'ratio':>8}")
    for name, p, w, fast, ref in bench_replay(rounds, ref_rounds, repeat):
        ps = ",".join(f"{k}={v}" for k, v in p.items())
        print(f"{name:<12}{ps:<24}{w:>10}{fast:>10.2f}{ref:>15.1f}{ref / fast:>7.0f}x")
    print(f"  reference timed on the first {ref_rounds} rounds, scaled to {rounds}")

    print("\n2. App. J/K exhaustive parameter search: n = 256, T_probe = 40, T <= 3, mu = 1")
    print(f"{'scheme':<8}{'sets':>7}{'fast (s)':>10}{'paper (s)':>10}{'vs paper':>9}"
          f"{'planner/set (s)':>17}{'reference (s)':>15}{'ratio':>8}   best (runtime)")
    for name, count, fast, planner, ref, best, rt in bench_search(sample, ref_sample, repeat):
        paper = PAPER_SEARCH[name]
        ps = ",".join(f"{k}={v}" for k, v in best.items())
        print(f"{name:<8}{count:>7}{fast:>10.3f}{paper:>10.1f}{paper / fast:>8.0f}x"
              f"{planner:>17.1f}{ref:>15.0f}{ref / fast:>7.0f}x   {ps} ({rt:.1f} s)")
    print(f"  planner/set: the vectorised planner once per parameter set ({sample} sampled sets, "
          f"scaled); reference: tests/_sgc_reference.py ({ref_sample} sampled sets, scaled)")


if __name__ == "__main__":
    main()
