"""Paper 4, Sec. 3.1-3.2: GC used round by round, and SR-SGC: its parameters (Sec. 3.2),
Prop. 3.1 (tolerance with delay ``T = B``), App. D (delays 0 or B, the chains' length) and
Remark 3.1 (against classical GC) (``theorems``; see ``sgc_common``)."""

from __future__ import annotations

from functools import lru_cache
from itertools import combinations

import numpy as np

from ...analysis import check_sr_sgc, sgc_load, sr_sgc_s
from ...registry import make_code
from ...sequential import replay_many
from ...stragglers import AnyOf, Bursty, SPerRound, enumerate_patterns
from ._framework import Evidence, Tally, statement
from .sgc_common import (P4, TOL, all_patterns, ceil_div, enumerate_fitting, fmt_pattern,
                         on_time, per_round, random_bw, run_sizes, run_sizes_of, s_printed,
                         spans_one, sr_configs, sr_model, tolerance_check)


@lru_cache(maxsize=2)
def _sr_runs(quick: bool):
    """Prop. 3.1's exhaustive part (shared with App. D): per SR-SGC parameter set, every
    pattern of J + B rounds of its model, and J."""
    n_max, W_max, cap, _, _ = run_sizes_of(quick)
    out = []
    for p in sr_configs(n_max, W_max):
        s = s_printed(p["B"], p["W"], p["lam"])
        model = AnyOf((Bursty(p["B"], p["W"], p["lam"]), SPerRound(s)), window=p["W"])
        P, J = enumerate_fitting(model, p["B"], p["n"], p["W"] + p["B"], cap)
        out.append((p, P, J))
    return out


# ----------------------------------------------------------------- Sec. 3.1: GC round by round
@statement(P4, "Sec. 3.1", "(n, s)-GC used round by round (job t in round t) tolerates every "
                           "pattern of the s-stragglers-per-round model with T = 0, at load "
                           "(s + 1)/n; any n - s results give g")
def sec31(ctx) -> Evidence:
    rng = np.random.default_rng(ctx.seed)
    tally = Tally()
    n_max = 4 if ctx.quick else 6
    for n in range(1, n_max + 1):
        for s in range(n):
            code = make_code("gc-cr", n=n, s=s) if s else make_code("gc-fr", n=n, s=0)
            B = code.B
            tally.add([f"worker {i} stores {np.asarray(code.placement[i]).tolist()}"
                       for i in range(n) if sorted(np.asarray(code.placement[i]).tolist())
                       != sorted({(i + u) % n for u in range(s + 1)})],
                      f"(n, s) = ({n}, {s})-GC's placement [i : i+s]*")
            for got in combinations(range(n), n - s):   # the base code: any n - s results
                tally.add([] if spans_one(B, got) else ["1 is not a combination of their rows"],
                          f"(n, s) = ({n}, {s}), results of workers {list(got)}")
            J = 3 if n <= 4 else 2
            P = enumerate_patterns(SPerRound(s), J, n)
            if s == 1:
                tally.typical = f"gc-seq(n={n}, s=1): all {len(P)} patterns of {J} rounds"
            tolerance_check(tally, "gc-seq", dict(n=n, s=s), P, J,
                            lambda Q, s=s: per_round(Q, s), "s-per-round", rng, 2)
    return tally.evidence(f"gc-cr / gc-fr, n <= {n_max}, every s and every (n - s)-set of "
                          "results (least squares); gc-seq on every s-per-round pattern of "
                          "2-3 rounds, decoding verified numerically on some")


# ----------------------------------------------------------------- Sec. 3.2: s and the load
@statement(P4, "Sec. 3.2", "SR-SGC's parameters: W = xB + 1 gives s = ceil(Bλ/(W-1+B)) = "
                           "ceil(λ/(x+1)), delay T = B and normalized load (s + 1)/n")
def sec32(ctx) -> Evidence:
    tally = Tally()
    n_max, n_placed = (12, 6) if ctx.quick else (40, 12)
    placed: set[tuple[int, int]] = set()
    for n in range(1, n_max + 1):
        for B in range(1, 7):
            for W in range(1, 16):
                lam = np.arange(0, n + 2)
                x, valid_W = (W - 1) // B, (W - 1) % B == 0 and W - 1 >= B
                valid = valid_W & (lam >= 1) & (lam <= n)
                s = ceil_div(B * lam, W - 1 + B)
                valid &= s < n
                try:
                    got = np.atleast_1d(sr_sgc_s(B, W, lam))
                    tally.add(got != s, lambda k: f"sr_sgc_s({B}, {W}, {lam[k]}) = {got[k]}, "
                                                  f"not {s[k]}")
                except ValueError:
                    tally.add(["sr_sgc_s refused"], f"B={B}, W={W}")
                if valid_W:
                    tally.add(valid & (s != ceil_div(lam, x + 1)),
                              lambda k: f"B={B}, W={W}, λ={lam[k]}: ceil(Bλ/(W-1+B)) = "
                                        f"{s[k]} but ceil(λ/(x+1)) = {ceil_div(lam[k], x + 1)}")
                for k, l in enumerate(lam.tolist()):
                    try:
                        check_sr_sgc(n, B, W, l)
                        accepted = True
                    except ValueError:
                        accepted = False
                    if accepted != bool(valid[k]):
                        tally.add(["check_sr_sgc " + ("accepts" if accepted else "refuses")],
                                  f"n={n}, B={B}, W={W}, λ={l}")
                    if valid[k] and n <= 12:
                        y = make_code("sr-sgc", n=n, B=B, W=W, lam=l)
                        problems = [f"T = {y.T}, s = {y.s}, load {y.load.max():.6g}, sgc_load "
                                    f"{sgc_load('sr-sgc', n, B, W, l):.6g}"]
                        if (y.T == B and y.s == s[k]
                                and np.abs(y.load - (s[k] + 1) / n).max() <= TOL
                                and abs(sgc_load("sr-sgc", n, B, W, l) - (s[k] + 1) / n) <= TOL):
                            problems = []
                        if (n, y.s) not in placed and n <= n_placed:   # worker i: [i : i+s]*
                            placed.add((n, y.s))
                            for i in range(n):
                                want = sorted((i + u) % n for u in range(y.s + 1))
                                if sorted(np.asarray(y.placement[i]).tolist()) != want or \
                                        np.abs(y.partition_sizes - 1 / n).max() > TOL:
                                    problems.append(f"worker {i} stores "
                                                    f"{np.asarray(y.placement[i]).tolist()}")
                        tally.add(problems, f"sr-sgc(n={n}, B={B}, W={W}, λ={l})")
    tally.typical = "sr-sgc(n=256, B=2, W=3, λ=23): s = 12, load 13/256 (Table 1)"
    if sr_sgc_s(2, 3, 23) != 12:
        tally.add(["s != 12"], "Table 1's SR-SGC (2, 3, 23)")
    return tally.evidence(f"n <= {n_max}, B <= 6, W <= 15, λ = 0..n+1: sr_sgc_s and "
                          "check_sr_sgc against the printed formula and range; T, s, load, "
                          f"sgc_load of the built scheme (n <= 12), its placement [i : i+s]* "
                          f"(n <= {n_placed})")


# ----------------------------------------------------------------- Prop. 3.1
@statement(P4, "Prop. 3.1", "SR-SGC (n, B, W = xB + 1, λ) decodes every job within T = B rounds, "
                            "with no wait-out, for every pattern whose every window of W rounds "
                            "is (B, W, λ)-bursty or has at most s stragglers per round")
def prop31(ctx) -> Evidence:
    rng = np.random.default_rng(ctx.seed)
    _, _, _, numeric, big = run_sizes(ctx)
    tally = Tally()
    for p, P, J in _sr_runs(ctx.quick):
        s = s_printed(p["B"], p["W"], p["lam"])
        tolerance_check(tally, "sr-sgc", p, P, J,
                        lambda Q, p=p, s=s: sr_model(Q, p["B"], p["W"], p["lam"], s),
                        "Prop. 3.1", rng, numeric)
    exhaustive = tally.cases
    J = 24
    for n in big:
        for B, W in random_bw(ctx):
            for lam in sorted({1, n // 2, n - 1, n}):
                s = s_printed(B, W, lam)
                if s >= n:
                    continue
                p = dict(n=n, B=B, W=W, lam=lam)
                model = AnyOf((Bursty(B, W, lam), SPerRound(s)), window=W)
                P = np.stack([model.sample(rng, J + B, n, p=q)
                              for q in (0.15, 0.3, 0.5) for _ in range(2 if ctx.quick else 12)])
                tolerance_check(tally, "sr-sgc", p, P, J,
                                lambda Q, p=p, s=s: sr_model(Q, p["B"], p["W"], p["lam"], s),
                                "Prop. 3.1", rng, 1)
    return tally.evidence(f"{exhaustive} cases: every Prop. 3.1 pattern of J + B rounds for every "
                          f"SR-SGC with n <= {run_sizes(ctx)[0]}, W <= {run_sizes(ctx)[1]} (J up "
                          f"to W + B while <= {run_sizes(ctx)[2]:,} patterns); random ones for n "
                          f"in {big}, 24 jobs; decoding and load verified numerically on some")


# ----------------------------------------------------------------- App. D
def delay_chains(finish: np.ndarray, B: int) -> tuple[np.ndarray, np.ndarray]:
    """Per row of ``finish (m, J)``: whether every delay is 0 or B, and the longest run of
    jobs ``t, t + B, t + 2B, ...`` all decoded with delay B."""
    m, J = finish.shape
    delay = finish - np.arange(J)
    only = ((delay == 0) | (delay == B)).all(1)
    run = np.zeros((m, J), np.int32)
    for t in range(J):
        prev = run[:, t - B] if t >= B else 0
        run[:, t] = np.where(delay[:, t] == B, prev + 1, 0)
    return only, run.max(1)


@statement(P4, "App. D", "in SR-SGC under Prop. 3.1's patterns each job finishes with delay 0 or "
                         "exactly B, and a chain of jobs t', t'+B, ... finishing with delay B "
                         "has at most x = (W-1)/B jobs before a reset (delay 0)")
def appd(ctx) -> Evidence:
    tally = Tally()
    for p, P, J in _sr_runs(ctx.quick):
        if not len(P):
            continue
        x = make_code("sr-sgc", **p)
        f = replay_many(x, P, jobs=J, waitout="never").finish_round
        only, longest = delay_chains(f, p["B"])
        xx = (p["W"] - 1) // p["B"]
        tally.add(~only | (longest > xx),
                  lambda k: f"sr-sgc({p}), pattern {fmt_pattern(P[k])}: finish rounds "
                            f"{f[k].tolist()} (x = {xx})")
        if longest.max() == xx and not tally.typical:
            tally.typical = (f"sr-sgc({p}): chains of delay-B jobs reach x = {xx}, never more")
    return tally.evidence(f"the patterns of Prop. 3.1's exhaustive part (n <= {run_sizes(ctx)[0]}, "
                          f"W <= {run_sizes(ctx)[1]})")


# ----------------------------------------------------------------- Remark 3.1
@statement(P4, "Remark 3.1", "classical GC needs s = λ to tolerate the (B, W, λ)-bursty model; "
                             "SR-SGC's s = ceil(Bλ/(W-1+B)) is lower (λ >= 2) and it tolerates "
                             "a strict superset of the patterns (n, s)-GC tolerates, at equal "
                             "load")
def remark31(ctx) -> Evidence:
    tally = Tally()
    n_max = 3 if ctx.quick else 4
    for p in sr_configs(n_max, 4):
        n, B, W, lam = p["n"], p["B"], p["W"], p["lam"]
        s = s_printed(B, W, lam)
        if lam < n:                          # GC: s = λ tolerates the model, s = λ - 1 does not
            P, J = enumerate_fitting(Bursty(B, W, lam), 0, n, W + 1, 4000)
            ok = on_time(make_code("gc-seq", n=n, s=lam), P, J, 0)
            tally.add(~ok, lambda k: f"(n, s) = ({n}, {lam})-GC fails the ({B}, {W}, {lam})-"
                                     f"bursty pattern {fmt_pattern(P[k])}")
            if lam >= 1:
                low = on_time(make_code("gc-seq", n=n, s=lam - 1), P, J, 0)
                tally.add(np.array([low.all()]), f"(n, s) = ({n}, {lam - 1})-GC tolerates every "
                                                 f"({B}, {W}, {lam})-bursty pattern")
        tally.add(np.array([s > lam or (lam >= 2 and s >= lam)]),
                  f"n={n}, B={B}, W={W}, λ={lam}: s = {s}")
    for n in range(2, n_max + 2):                # superset over ALL patterns of a few rounds
        for B, W in ((1, 2), (1, 3), (2, 3)):
            R = max(2, 12 // n) if ctx.quick else max(3, 14 // n)
            J = R - B
            if J < 1:
                continue
            P = all_patterns(R, n)
            for s in range(1, n):
                lams = [l for l in range(1, n + 1) if s_printed(B, W, l) == s]
                if not lams:
                    continue
                gc = on_time(make_code("gc-seq", n=n, s=s), P[:, :J], J, 0)
                sr = on_time(make_code("sr-sgc", n=n, B=B, W=W, lam=lams[-1]), P, J, B)
                tally.add(gc & ~sr, lambda k: f"n={n}, s={s}: (n, s)-GC tolerates "
                                              f"{fmt_pattern(P[k])}, SR-SGC (B={B}, W={W}) does "
                                              "not")
                tally.add(np.array([not (sr & ~gc).any() and lams[-1] > s]),
                          f"n={n}, s={s}, B={B}, W={W}: no pattern tolerated by SR-SGC only")
                if not tally.typical and (sr & ~gc).any():
                    k = int(np.argmax(sr & ~gc))
                    tally.typical = (f"n={n}, s={s}, B={B}, W={W}: SR-SGC tolerates "
                                     f"{fmt_pattern(P[k])}, GC does not")
    return tally.evidence(f"GC with s = λ and λ - 1 on every bursty pattern (SR-SGC's parameter "
                          f"sets, n <= {n_max}, W <= 4); every pattern of a few rounds "
                          f"(n <= {n_max + 1}) through (n, s)-GC and SR-SGC of the same s")
