"""Paper 4 (sequential gradient coding: SR-SGC, M-SGC): its propositions, theorems, remarks and
worked examples checked by computation (``theorems``).

Tolerance statements (Prop. 3.1, 3.2, App. D, App. G, Remark 3.1) replay straggler patterns
through the schemes of ``gradcode.sequential`` with no wait-out (rule ``"never"``) and ask that
every job ``t`` be decoded by round ``t + T``, ``T`` as the paper prints it: every conforming
pattern of a few rounds for small ``n`` (``enumerate_patterns``), random conforming ones for
larger ``n``.  The straggler models are re-implemented here from Sec. 2.1's definitions
(``bursty``, ``arbitrary``, ``per_round``, ``sr_model``) and every pattern replayed is checked
against them, so a wrong model in ``gradcode.stragglers`` cannot make a proposition look true.
On a subset of the patterns the decoding itself is verified numerically (``decoding_problems``:
random partial gradients, the master's weights over returned results of the job only) and the
normalized load is measured from the mini-tasks actually assigned.  Formulas (eq. 1-3, ``s``)
are computed here in exact integer / ``Fraction`` arithmetic from the paper's text and compared
with ``gradcode.analysis``.  Rounds and jobs are 0-based in gradcode (the paper's round 1 is 0).
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from itertools import combinations

import numpy as np

from ..codes import from_matrix, make_code
from ..analysis import (check_m_sgc, check_sr_sgc, load_lower_bound_f1, load_lower_bound_f2,
                        sgc_load, sr_sgc_s)
from ..sequential import pipeline, replay, replay_many
from ..stragglers import AnyOf, Arbitrary, Bursty, SPerRound, enumerate_patterns
from .theorems import Evidence, Tally, statement

P4 = 4
TOL = 1e-9


# ----------------------------------------------------------------- Sec. 2.1's models, as printed
def windows(P: np.ndarray, W: int) -> list[np.ndarray]:
    """The windows ``W_j = [j : j + W - 1]`` of patterns ``P (m, R, n)`` (the whole pattern if
    ``R < W``)."""
    return [P[:, j:j + W] for j in range(max(P.shape[1] - W + 1, 1))]


def bursty(P, B: int, W: int, lam: int) -> np.ndarray:
    """Per pattern of ``P (m, R, n)``: the (B, W, λ)-bursty model of Sec. 2.1, literally: in
    every window at most λ distinct stragglers, and if worker i straggles in round t of the
    window, it does not in rounds ``t + B .. j + W - 1``."""
    P = np.asarray(P, bool)
    ok = np.ones(len(P), bool)
    for blk in windows(P, W):
        ok &= blk.any(1).sum(-1) <= lam
        for t in range(blk.shape[1]):
            ok &= ~(blk[:, t] & blk[:, t + B:].any(1)).any(-1)
    return ok


def arbitrary(P, N: int, W: int, lam: int) -> np.ndarray:
    """(N, W', λ')-arbitrary model (W = W', lam = λ'): in every window at most λ' distinct
    stragglers and at most N straggling rounds per worker."""
    P = np.asarray(P, bool)
    ok = np.ones(len(P), bool)
    for blk in windows(P, W):
        ok &= (blk.any(1).sum(-1) <= lam) & (blk.sum(1) <= N).all(-1)
    return ok


def per_round(P, s: int) -> np.ndarray:
    """s-stragglers-per-round model: at most s stragglers in every round."""
    return (np.asarray(P, bool).sum(-1) <= s).all(-1)


def sr_model(P, B: int, W: int, lam: int, s: int) -> np.ndarray:
    """Prop. 3.1's patterns: every window of W rounds is (B, W, λ)-bursty or has at most s
    stragglers per round."""
    P = np.asarray(P, bool)
    ok = np.ones(len(P), bool)
    for blk in windows(P, W):
        ok &= bursty(blk, B, W, lam) | per_round(blk, s)
    return ok


def all_patterns(R: int, n: int) -> np.ndarray:
    """Every ``(R, n)`` pattern, ``(2^(R n), R, n)``."""
    k = R * n
    return ((np.arange(1 << k)[:, None] >> np.arange(k)) & 1).astype(bool).reshape(-1, R, n)


# ----------------------------------------------------------------- the formulas, as printed
def ceil_div(a, b):
    return -(-a // b)


def s_printed(B: int, W: int, lam: int) -> int:
    """Sec. 3.2: ``s = ceil(B λ / (W - 1 + B))``."""
    return ceil_div(B * lam, W - 1 + B)


def eq1(n: int, B: int, W: int, lam: int) -> Fraction:
    """M-SGC's normalized load, eq. 1."""
    if lam == n:
        return Fraction(W - 1 + B, n * (W - 1))
    return Fraction((lam + 1) * (W - 1 + B), n * (B + (W - 1) * (lam + 1)))


def eq2(n: int, B: int, W: int, lam: int) -> Fraction | None:
    """Thm F.1's bound L*_B, eq. 2 (None: infinite, ``B = W`` and ``λ = n``)."""
    if B < W:
        return Fraction(W - 1 + B, n * (W - 1) + B * (n - lam))
    return Fraction(1, n - lam) if lam < n else None


def eq3(n: int, N: int, W: int, lam: int) -> Fraction | None:
    """Thm F.2's bound L*_A, eq. 3 (``W`` = W', ``lam`` = λ'; None: infinite)."""
    if N < W:
        return Fraction(W, n * (W - N) + N * (n - lam))
    return Fraction(1, n - lam) if lam < n else None


def t_printed(name: str, p: dict) -> int:
    """The delay T the paper gives each scheme (Sec. 3.1-3.3)."""
    if name.startswith("sr-sgc"):
        return p["B"]
    if name.startswith("m-sgc"):
        return p["W"] - 2 + p["B"]
    return 0


def load_printed(name: str, p: dict) -> Fraction:
    if name.startswith("sr-sgc"):
        return Fraction(s_printed(p["B"], p["W"], p["lam"]) + 1, p["n"])
    if name.startswith("m-sgc"):
        return eq1(p["n"], p["B"], p["W"], p["lam"])
    return Fraction(p["s"] + 1, p["n"])


# ----------------------------------------------------------------- replaying
def on_time(scheme, patterns: np.ndarray, jobs: int, T: int) -> np.ndarray:
    """Per pattern: every job ``t`` decoded in a round of ``[t, t + T]`` with no wait-out."""
    f = replay_many(scheme, patterns, jobs=jobs, waitout="never").finish_round
    t = np.arange(jobs)
    return ((f >= t) & (f <= t + T)).all(1)


def decoding_problems(scheme, S: np.ndarray, jobs: int, T: int, L: float,
                      rng: np.random.Generator, reach: bool = True) -> list[str]:
    """Replay ``S`` through ``scheme`` (no wait-out) and verify, with random partial gradients,
    that every job ``t`` is the weighted sum of returned (non-straggler) mini-task results of
    job ``t`` from rounds ``t .. t + T``, and that no worker's mini-tasks of a round exceed the
    normalized load ``L`` (which some worker-round reaches if ``reach``: not so for M-SGC with
    λ = n, whose reattempt slots idle when nothing is missing).  Returns what went wrong."""
    r = replay(scheme, S, jobs, waitout="never")
    sizes = scheme.partition_sizes
    tasks = [r.tasks[x] for x in range(S.shape[0])]
    out = []
    worst = max(sum(float(sizes[m.partitions].sum()) for m in w) for row in tasks for w in row)
    if worst > L + TOL or (reach and jobs > T and worst < L - TOL):
        out.append(f"load {worst:.6g}, not {L:.6g}")
    G = rng.standard_normal((jobs, scheme.n_partitions))
    for t in range(jobs):
        f = int(r.finish_round[t])
        if not t <= f <= t + T:
            out.append(f"job {t} decoded in round {f}, not in [{t}, {t + T}]")
            continue
        total = 0.0
        for (x, i, k), w in r.gradient_weights(t).items():
            m = tasks[x][i][k]
            if S[x, i] or x > f or m.job != t:
                out.append(f"job {t} uses worker {i}'s slot {k} of round {x} (job {m.job}, "
                           f"straggler: {bool(S[x, i])})")
            total += w * float(m.coefficients @ G[t, m.partitions])
        if abs(total - G[t].sum()) > 1e-8 * (1 + np.abs(G[t]).sum()):
            out.append(f"job {t}: decoded {total:.6g}, true {G[t].sum():.6g}")
    return out


def enumerate_fitting(model, T: int, n: int, J_max: int, cap: int) -> tuple[np.ndarray, int]:
    """Every pattern of ``J + T`` rounds conforming to ``model``, for the largest
    ``J <= J_max`` with at most ``cap`` of them; ``(patterns, J)``."""
    best = np.zeros((0, 1 + T, n), bool), 1
    for J in range(1, J_max + 1):
        try:
            best = enumerate_patterns(model, J + T, n, max_patterns=cap), J
        except ValueError:
            break
    return best


def _fmt(S: np.ndarray) -> str:
    """A pattern as the 0-based stragglers of each round."""
    return "[" + " ".join("{" + ",".join(map(str, np.flatnonzero(row))) + "}" for row in S) + "]"


# ----------------------------------------------------------------- tolerance, generic
def tolerance_check(tally: Tally, name: str, p: dict, patterns: np.ndarray, jobs: int,
                    conforms, label: str, rng, numeric: int, T: int | None = None,
                    L: Fraction | None = None) -> None:
    """Add to ``tally`` the replay of ``patterns`` (all of which must satisfy ``conforms``, the
    paper's model as defined here) through ``make_code(name, **p)``: each pattern is a case,
    failing unless every job meets the printed delay ``T``; ``numeric`` of them (random) also
    get ``decoding_problems`` with the printed load ``L``.  The scheme's own ``T`` and ``load``
    must equal the printed ones."""
    x = make_code(name, **p)
    T = t_printed(name, p) if T is None else T
    L = load_printed(name, p) if L is None else L
    what = f"{name}({', '.join(f'{k}={v}' for k, v in p.items())})"
    if x.T != T or abs(x.load - float(L)) > TOL:
        tally.add(["scheme's T, load " f"{x.T}, {x.load:.6g} vs printed {T}, {float(L):.6g}"],
                  what)
    if not len(patterns):
        return
    outside = ~conforms(patterns)
    tally.add(outside, lambda k: f"{what}: enumerated pattern {_fmt(patterns[k])} is not "
                                 f"{label} by Sec. 2.1's definition")
    P = patterns[~outside]
    if not len(P):
        return
    bad = ~on_time(x, P, jobs, T)
    tally.add(bad, lambda k: f"{what}, {jobs} jobs, {label} pattern {_fmt(P[k])}: a job is "
                             f"not decoded within T = {T} rounds")
    reach = not (name.startswith("m-sgc") and p["lam"] == p["n"])
    for k in rng.choice(len(P), size=min(numeric, len(P)), replace=False):
        tally.add(decoding_problems(x, P[k], jobs, T, float(L), rng, reach),
                  lambda: f"{what}, pattern {_fmt(P[k])}")
    if not tally.typical:
        tally.typical = f"{what}: {len(P)} {label} patterns of {P.shape[1]} rounds, {jobs} jobs"


def sr_configs(n_max: int, W_max: int):
    """SR-SGC's parameter sets (Sec. 3.2: 0 < λ <= n, W = xB + 1, s < n) up to a size."""
    for n in range(2, n_max + 1):
        for B in range(1, W_max):
            for W in range(B + 1, W_max + 1, B):
                for lam in range(1, n + 1):
                    if s_printed(B, W, lam) < n:
                        yield dict(n=n, B=B, W=W, lam=lam)


def m_configs(n_max: int, W_max: int):
    """M-SGC's parameter sets (Sec. 3.3: 0 <= λ <= n, 0 < B < W) up to a size."""
    for n in range(1, n_max + 1):
        for W in range(2, W_max + 1):
            for B in range(1, W):
                for lam in range(0, n + 1):
                    yield dict(n=n, B=B, W=W, lam=lam)


def _sizes(ctx):
    """(n_max, W_max, patterns per parameter set, numeric checks per set, random n's)."""
    return _sizes_of(ctx.quick)


def _sizes_of(quick: bool):
    if quick:
        return 3, 4, 3_000, 1, (6,)
    return 4, 5, 40_000, 6, (6, 8, 11)


def _random_bw(ctx):
    """The (B, W) of the random part: SR-SGC needs W = xB + 1."""
    return ((1, 2), (2, 5)) if ctx.quick else ((1, 2), (1, 3), (2, 3), (2, 5), (3, 4))


@lru_cache(maxsize=2)
def _sr_runs(quick: bool):
    """Prop. 3.1's exhaustive part (shared with App. D): per SR-SGC parameter set, every
    pattern of J + B rounds of its model, and J."""
    n_max, W_max, cap, _, _ = _sizes_of(quick)
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
                        problems = [f"T = {y.T}, s = {y.s}, load {y.load:.6g}, sgc_load "
                                    f"{sgc_load('sr-sgc', n, B, W, l):.6g}"]
                        if (y.T == B and y.s == s[k] and abs(y.load - (s[k] + 1) / n) <= TOL
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
    _, _, _, numeric, big = _sizes(ctx)
    tally = Tally()
    for p, P, J in _sr_runs(ctx.quick):
        s = s_printed(p["B"], p["W"], p["lam"])
        tolerance_check(tally, "sr-sgc", p, P, J,
                        lambda Q, p=p, s=s: sr_model(Q, p["B"], p["W"], p["lam"], s),
                        "Prop. 3.1", rng, numeric)
    exhaustive = tally.cases
    J = 24
    for n in big:
        for B, W in _random_bw(ctx):
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
                          f"SR-SGC with n <= {_sizes(ctx)[0]}, W <= {_sizes(ctx)[1]} (J up to "
                          f"W + B while <= {_sizes(ctx)[2]:,} patterns); random ones for n in "
                          f"{big}, 24 jobs; decoding and load verified numerically on some")


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
                  lambda k: f"sr-sgc({p}), pattern {_fmt(P[k])}: finish rounds "
                            f"{f[k].tolist()} (x = {xx})")
        if longest.max() == xx and not tally.typical:
            tally.typical = (f"sr-sgc({p}): chains of delay-B jobs reach x = {xx}, never more")
    return tally.evidence(f"the patterns of Prop. 3.1's exhaustive part (n <= {_sizes(ctx)[0]}, "
                          f"W <= {_sizes(ctx)[1]})")


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
                                     f"bursty pattern {_fmt(P[k])}")
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
                                              f"{_fmt(P[k])}, SR-SGC (B={B}, W={W}) does not")
                tally.add(np.array([not (sr & ~gc).any() and lams[-1] > s]),
                          f"n={n}, s={s}, B={B}, W={W}: no pattern tolerated by SR-SGC only")
                if not tally.typical and (sr & ~gc).any():
                    k = int(np.argmax(sr & ~gc))
                    tally.typical = (f"n={n}, s={s}, B={B}, W={W}: SR-SGC tolerates "
                                     f"{_fmt(P[k])}, GC does not")
    return tally.evidence(f"GC with s = λ and λ - 1 on every bursty pattern (SR-SGC's parameter "
                          f"sets, n <= {n_max}, W <= 4); every pattern of a few rounds "
                          f"(n <= {n_max + 1}) through (n, s)-GC and SR-SGC of the same s")


# ----------------------------------------------------------------- Prop. 3.2
@lru_cache(maxsize=4)
def _m_configs(quick: bool) -> tuple[dict, ...]:
    n_max, W_max = (3, 4) if quick else (4, 5)
    return tuple(m_configs(n_max, W_max))


@statement(P4, "Prop. 3.2", "M-SGC (n, B < W, 0 <= λ <= n) decodes every job within T = W-2+B "
                            "rounds, with no wait-out, for every (B, W, λ)-bursty and every "
                            "(N = B, W' = W+B-1, λ' = λ)-arbitrary pattern")
def prop32(ctx) -> Evidence:
    rng = np.random.default_rng(ctx.seed)
    _, _, cap, numeric, big = _sizes(ctx)
    tally = Tally()
    for c, p in enumerate(_m_configs(ctx.quick)):
        n, B, W, lam = p["n"], p["B"], p["W"], p["lam"]
        T = W - 2 + B
        for model, conforms, label in (
                (Bursty(B, W, lam), lambda Q: bursty(Q, B, W, lam), "bursty"),
                (Arbitrary(B, W + B - 1, lam), lambda Q: arbitrary(Q, B, W + B - 1, lam),
                 "arbitrary")):
            P, J = enumerate_fitting(model, T, n, W + B, cap // 2)
            tolerance_check(tally, "m-sgc", p, P, J, conforms, label, rng,
                            2 if numeric > 1 else int(c % 4 == 0))
    exhaustive = tally.cases
    J = 20
    for n in big:
        for B, W in _random_bw(ctx):
            for lam in sorted({0, 1, n // 2, n - 1, n}):
                p = dict(n=n, B=B, W=W, lam=lam)
                T = W - 2 + B
                k = 2 if ctx.quick else 8
                for model, conforms, label in (
                        (Bursty(B, W, lam), lambda Q: bursty(Q, B, W, lam), "bursty"),
                        (Arbitrary(B, W + B - 1, lam),
                         lambda Q: arbitrary(Q, B, W + B - 1, lam), "arbitrary")):
                    P = np.stack([model.sample(rng, J + T, n, p=q)
                                  for q in (0.15, 0.3, 0.6) for _ in range(k)])
                    tolerance_check(tally, "m-sgc", p, P, J, conforms, label, rng, 1)
    n_max, W_max = (3, 4) if ctx.quick else (4, 5)
    return tally.evidence(f"{exhaustive} cases: every bursty and every arbitrary pattern of "
                          f"J + T rounds for every M-SGC with n <= {n_max}, W <= {W_max} (J up "
                          f"to W + B while <= {cap // 2:,} patterns); random ones for n in {big}, "
                          "20 jobs; decoding and load verified numerically on some")


# ----------------------------------------------------------------- Sec. 3.3.2, eq. 1
def msgc_layout_problems(x, p: dict) -> list[str]:
    """Sec. 3.3.2's data placement and chunk sizes for M-SGC ``x`` with parameters ``p``,
    against the text: ``(W-1+B) n`` chunks (``(W-1) n`` for λ = n), D1 of size
    ``(λ+1)/(n(B+(W-1)(λ+1)))`` with worker i storing ``i(W-1) .. (i+1)(W-1)-1``, D2 of size
    ``1/(n(B+(W-1)(λ+1)))`` with worker i storing ``(W-1+j) n + [i : i+λ]*`` of group j."""
    n, B, W, lam = p["n"], p["B"], p["W"], p["lam"]
    K, out = W - 1, []
    if lam == n:
        sizes = [Fraction(1, K * n)] * (K * n)
    else:
        d = n * (B + K * (lam + 1))
        sizes = [Fraction(lam + 1, d)] * (K * n) + [Fraction(1, d)] * (B * n)
    got = np.asarray(x.partition_sizes, float)
    if got.shape != (len(sizes),) or np.abs(got - np.array(sizes, float)).max() > TOL:
        out.append(f"chunk sizes {np.round(got, 6).tolist()}")
    if sum(sizes) != 1:
        out.append(f"the printed sizes sum to {sum(sizes)}")
    for i in range(n):
        want = set(range(i * K, (i + 1) * K))
        if lam < n:
            for j in range(B):
                want |= {(K + j) * n + (i + u) % n for u in range(lam + 1)}
        if set(np.asarray(x.placement[i]).tolist()) != want:
            out.append(f"worker {i} stores {sorted(np.asarray(x.placement[i]).tolist())}")
    return out


@statement(P4, "Sec. 3.3.2, eq. 1", "M-SGC's placement (D1: (W-1)n chunks of (λ+1)/(n(B+(W-1)"
                                    "(λ+1))), D2: B (n, λ)-GC groups of 1/(n(B+(W-1)(λ+1)))) "
                                    "gives the normalized load of eq. 1")
def eq1_check(ctx) -> Evidence:
    rng = np.random.default_rng(ctx.seed)
    tally = Tally()
    n_max, W_max = (4, 4) if ctx.quick else (7, 5)
    configs = list(m_configs(n_max, W_max))
    for p in configs:
        x = make_code("m-sgc", **p)
        L = eq1(p["n"], p["B"], p["W"], p["lam"])
        problems = msgc_layout_problems(x, p)
        for got, name in ((x.load, "scheme's load"), (sgc_load("m-sgc", **p), "sgc_load")):
            if abs(got - float(L)) > TOL:
                problems.append(f"{name} {got:.6g}, eq. 1 {float(L):.6g}")
        T, J = p["W"] - 2 + p["B"], 2 * (p["W"] + p["B"])
        S = Bursty(p["B"], p["W"], p["lam"]).sample(rng, J + T, p["n"], p=0.3)
        if bursty(S[None], p["B"], p["W"], p["lam"])[0]:
            problems += decoding_problems(x, S, J, T, float(L), rng, p["lam"] < p["n"])
        tally.add(problems, f"m-sgc({p})")
    for n in range(1, 7):                   # the parameter range of Sec. 3.3 / Prop. 3.2
        for B in range(0, 6):
            for W in range(0, 7):
                for lam in range(-1, n + 2):
                    try:
                        check_m_sgc(n, B, W, lam)
                        acc = True
                    except ValueError:
                        acc = False
                    tally.add([] if acc == (0 <= lam <= n and 0 < B < W) else
                              ["check_m_sgc " + ("accepts" if acc else "refuses")],
                              f"n={n}, B={B}, W={W}, λ={lam}")
    tally.typical = ("m-sgc(n=4, B=2, W=3, λ=2): 8 D1 chunks of 3/32, 8 D2 chunks of 1/32, "
                     "load 3/8")
    return tally.evidence(f"{len(configs)} M-SGC parameter sets (n <= {n_max}, W <= {W_max}, "
                          "every B < W and λ): sizes, placement, "
                          "load measured from the mini-tasks of a replay, sgc_load; check_m_sgc's "
                          "accepted range")


# ----------------------------------------------------------------- Remark 3.3
@statement(P4, "Remark 3.3", "M-SGC's load (eq. 1) is largest at λ = n and at most 2/n whatever "
                             "λ; SR-SGC's s >= 1, so its load (s+1)/n grows with λ")
def remark33(ctx) -> Evidence:
    tally = Tally()
    n_max = 40 if ctx.quick else 260
    n = np.arange(1, n_max + 1)[:, None, None, None]
    B = np.arange(1, 6)[None, :, None, None]
    W = np.arange(2, 41)[None, None, :, None]
    lam = np.arange(0, n_max + 1)[None, None, None, :]
    valid = np.broadcast_to((lam <= n) & (B < W), np.broadcast_shapes(
        n.shape, B.shape, W.shape, lam.shape))
    K = W - 1
    num = np.where(lam == n, K + B, (lam + 1) * (K + B))                 # eq. 1 = num / den
    den = np.where(lam == n, n * K, n * (B + K * (lam + 1)))
    num, den = np.broadcast_arrays(num, den)
    top_num, top_den = (K + B), n * K                                    # λ = n
    above = valid & (num * top_den > top_num * den)                      # above its λ = n value
    over = valid & (num * n > 2 * den)                                   # above 2/n
    tally.add(above[valid], "eq. 1 above its value at λ = n")
    tally.add(over[valid], "eq. 1 above 2/n")
    nxt = valid[..., :-1] & valid[..., 1:]                               # eq. 1 grows with λ
    drop = nxt & (num[..., 1:] * den[..., :-1] < num[..., :-1] * den[..., 1:])
    tally.add(drop[nxt], "eq. 1 falls as λ grows")
    lam_sr = np.arange(1, 300)
    for Bs in range(1, 6):
        for x in range(1, 8):
            s = np.atleast_1d(sr_sgc_s(Bs, x * Bs + 1, lam_sr))
            tally.add((s < 1) | (np.diff(s, prepend=s[0]) < 0),
                      lambda k: f"SR-SGC B={Bs}, W={x * Bs + 1}, λ={lam_sr[k]}: s = {s[k]}")
    g = sgc_load("m-sgc", 256, B=np.array([1, 5]), W=np.array([2, 40]), lam=256)
    tally.add(np.abs(np.asarray(g) * 256 - 2 * np.array([1, 44 / 78])) > 1e-9,
              "sgc_load at λ = n disagrees with (W-1+B)/(n(W-1))")
    top = float(sgc_load("m-sgc", 256, 1, 2, 256))
    tally.typical = f"n = 256: largest eq. 1 = {top:.6g} = 2/n"
    return tally.evidence(f"eq. 1 exact (integers) for n <= {n_max}, B <= 5, W <= 40, every λ; "
                          "SR-SGC's s for λ < 300")


# ----------------------------------------------------------------- Thm F.1, F.2
def periodic_pattern(n: int, B: int, period: int, lam: int, periods: int) -> np.ndarray:
    """Fig. 8 / 9 / 10: workers ``0 .. λ-1`` straggle in the first ``B`` rounds of every period
    of ``period`` rounds (every round when ``B = period``)."""
    S = np.zeros((period * periods, n), bool)
    for k in range(periods):
        S[k * period:k * period + B, :lam] = True
    return S


def bound_from_pattern(S: np.ndarray, period: int) -> Fraction | None:
    """The proof's count: per period, ``period`` jobs share the period's non-straggling
    worker-rounds, so ``L >= period / free`` (None: no free worker-round)."""
    free = int((~S[:period]).sum())
    return Fraction(period, free) if free else None


def lower_bound_check(tally: Tally, which: str, grid, printed, library, conforms) -> None:
    """Thm F.1 / F.2 over ``grid`` of ``(n, B or N, W or W', λ)``: the proof's periodic pattern
    conforms to the model (``conforms``), its count equals the printed bound, and so does
    ``library`` (gradcode, vectorised)."""
    grid = list(grid)
    arr = np.array(grid).T
    lib = np.asarray(library(*arr), float)
    for (n, b, w, lam), got in zip(grid, lib):
        period = w - 1 + b if which == "F.1" and b < w else w
        S = periodic_pattern(n, b if b < period else period, period, lam, 3)
        if which == "F.1" and b == w:
            S = periodic_pattern(n, 1, 1, lam, 3 * w)                  # Fig. 9: always
            period = 1
        what = f"Thm {which}, n={n}, {'B' if which == 'F.1' else 'N'}={b}, W={w}, λ={lam}"
        if not conforms(S[None], n, b, w, lam)[0]:
            tally.add(["the proof's periodic pattern breaks the model"], what)
            continue
        count = bound_from_pattern(S, period)
        want = printed(n, b, w, lam)
        problems = []
        if count != want:
            problems.append(f"counting gives {count}, printed bound {want}")
        if (want is None) != np.isinf(got) or (want is not None
                                                 and abs(got - float(want)) > TOL):
            problems.append(f"gradcode {got}, printed {want}")
        tally.add(problems, what)


def consistency(tally: Tally, which: str, n_max: int) -> None:
    """Schemes the paper proves tolerant never beat Thm F.1's eq. 2 (M-SGC, eq. 1; SR-SGC,
    (s+1)/n; GC with s = λ) or Thm F.2's eq. 3 (M-SGC with N = B, W' = W+B-1; GC with
    s = λ', which tolerates λ' stragglers in any round)."""
    for n in range(1, n_max + 1):
        for W in range(2, 10):
            for B in range(1, W):
                for lam in range(0, n + 1):
                    bound = eq2(n, B, W, lam) if which == "F.1" else eq3(n, B, W + B - 1, lam)
                    loads = {"M-SGC": eq1(n, B, W, lam)}
                    if (which == "F.1" and (W - 1) % B == 0 and lam >= 1
                            and s_printed(B, W, lam) < n):
                        loads["SR-SGC"] = Fraction(s_printed(B, W, lam) + 1, n)
                    if lam < n:
                        loads["GC s = λ"] = Fraction(lam + 1, n)
                    tally.add([f"{k} load {v} below the bound {bound}" for k, v in loads.items()
                               if v < bound], f"Thm {which}: n={n}, B={B}, W={W}, λ={lam}")


@statement(P4, "Thm F.1", "any scheme tolerating the (B, W, λ)-bursty model with finite T has "
                          "load L >= (W-1+B)/(n(W-1)+B(n-λ)) if B < W, 1/(n-λ) if B = W (eq. 2)")
def thm_f1(ctx) -> Evidence:
    tally = Tally()
    n_max, W_max = (10, 6) if ctx.quick else (16, 8)
    grid = [(n, B, W, lam) for n in range(1, n_max + 1) for W in range(1, W_max + 1)
            for B in range(1, W + 1) for lam in range(0, n + 1)]
    lower_bound_check(tally, "F.1", grid, eq2, load_lower_bound_f1,
                      lambda S, n, b, w, lam: bursty(S, b, w, lam))
    consistency(tally, "F.1", 6 if ctx.quick else 10)
    S = periodic_pattern(20, 3, 6, 4, 3)
    tally.typical = (f"n=20, B=3, W=4, λ=4: Fig. 8's pattern (workers 0-3 late 3 rounds in 6) "
                     f"conforms, 6 jobs per {int((~S[:6]).sum())} free worker-rounds: bound "
                     f"{bound_from_pattern(S, 6)} = eq. 2")
    return tally.evidence(f"n <= {n_max}, 1 <= B <= W <= {W_max}, every λ: Fig. 8 / 9's periodic "
                          "pattern conforms, its counting bound = eq. 2 = load_lower_bound_f1; "
                          "M-SGC, SR-SGC and GC (s = λ) loads never below it")


@statement(P4, "Thm F.2", "any scheme tolerating the (N, W', λ')-arbitrary model with finite T "
                          "has load L >= W'/(n(W'-N)+N(n-λ')) if N < W', 1/(n-λ') if N = W' "
                          "(eq. 3)")
def thm_f2(ctx) -> Evidence:
    tally = Tally()
    n_max, W_max = (10, 6) if ctx.quick else (16, 8)
    grid = [(n, N, W, lam) for n in range(1, n_max + 1) for W in range(1, W_max + 1)
            for N in range(0, W + 1) for lam in range(0, n + 1)]
    lower_bound_check(tally, "F.2", grid, eq3, load_lower_bound_f2,
                      lambda S, n, N, w, lam: arbitrary(S, N, w, lam))
    consistency(tally, "F.2", 6 if ctx.quick else 10)
    tally.typical = "n=4, N=1, W'=2, λ'=4: Fig. 10's pattern conforms, bound 1/2"
    return tally.evidence(f"n <= {n_max}, 0 <= N <= W' <= {W_max}, every λ': Fig. 10's periodic "
                          "pattern conforms, its counting bound = eq. 3 = load_lower_bound_f2; "
                          "M-SGC (N = B, W' = W+B-1) and GC (s = λ') loads never below it")


# ----------------------------------------------------------------- Remark F.1 / 3.4
@statement(P4, "Remark F.1, 3.4", "M-SGC is optimal (eq. 1 = eq. 2, and = eq. 3 with N = B, "
                                  "W' = W+B-1) when λ = n-1 or n, and its gap to the bound "
                                  "falls as O(1/W)")
def remark_f1(ctx) -> Evidence:
    tally = Tally()
    n_max, W_max = (16, 60) if ctx.quick else (40, 400)
    for n in range(1, n_max + 1):
        for B in range(1, 6):
            W = np.arange(B + 1, W_max + 1)
            K = W - 1
            lam = np.arange(0, n + 1)[:, None]
            a = np.where(lam == n, K + B, (lam + 1) * (K + B))           # eq. 1 = a / b
            b = np.where(lam == n, n * K, n * (B + K * (lam + 1)))
            c, d = K + B, n * K + B * (n - lam)                            # eq. 2 = c / d
            e, f = W + B - 1, n * (W - 1) + B * (n - lam)                  # eq. 3, N = B
            a, b, c, d = np.broadcast_arrays(a, b, c, d)
            tally.add((c * f != e * d).ravel(), lambda k: f"n={n}, B={B}: eq. 2 != eq. 3")
            opt = np.broadcast_to((lam == n - 1) | (lam == n), a.shape)
            tally.add((a * d != c * b)[opt], lambda k: f"n={n}, B={B}: not optimal at λ >= n-1")
            tally.add((a * d < c * b).ravel(), lambda k: f"n={n}, B={B}: eq. 1 below eq. 2")
            gap = a / b - c / d                                            # O(1/W): K gap <= C
            lamf = np.minimum(lam, n - 1)
            C = B * (1 + B) * lamf * (n - lamf - 1) / (n * n * (lamf + 1))
            tally.add((K * gap > C + 1e-12).ravel(),
                      lambda k: f"n={n}, B={B}: (W-1) x gap above B(1+B)λ(n-λ-1)/(n²(λ+1))")
    tally.typical = "n=20, B=3, λ=4: (W-1) x gap -> 3·4·15/(400·5) = 0.09"
    return tally.evidence(f"exact integer comparisons, n <= {n_max}, B <= 5, W <= {W_max}, every "
                          "λ; O(1/W) as (W-1)(eq. 1 - eq. 2) <= B(1+B)λ(n-λ-1)/(n²(λ+1))")


# ----------------------------------------------------------------- Sec. 3.3.1 / Fig. 6
#: Fig. 6 as printed: per worker, its 4 mini-task rows over rounds 1-6 ("0": trivial,
#: "gJ(t)": g_J(t), "lIM(t)": ℓ_{I,M}(t))
FIG6 = {
    0: ["g0(1) g0(2) g0(3) g0(4) g0(5) g0(6)", "0 g1(1) g1(2) g1(3) g1(4) g1(5)",
        "0 0 g0(1) g0(2) l00(3) l00(4)", "0 0 0 g1(1) l01(2) l01(3)"],
    1: ["g2(1) g2(2) g2(3) g2(4) g2(5) g2(6)", "0 g3(1) g3(2) g3(3) g3(4) g3(5)",
        "0 0 g3(1) g2(2) g2(3) l10(4)", "0 0 0 g3(1) g3(2) l11(3)"],
    2: ["g4(1) g4(2) g4(3) g4(4) g4(5) g4(6)", "0 g5(1) g5(2) g5(3) g5(4) g5(5)",
        "0 0 l20(1) l20(2) l20(3) g5(4)", "0 0 0 l21(1) l21(2) l21(3)"],
    3: ["g6(1) g6(2) g6(3) g6(4) g6(5) g6(6)", "0 g7(1) g7(2) g7(3) g7(4) g7(5)",
        "0 0 l30(1) l30(2) l30(3) l30(4)", "0 0 0 l31(1) l31(2) l31(3)"],
}
#: Fig. 6's stragglers as its reattempts and the text imply (1-based rounds)
FIG6_STRAGGLERS = {0: (1, 2), 1: (2, 3), 2: (5,)}
#: Sec. 3.3.1's data placement as printed
SEC331_PLACEMENT = {0: (0, 1, 8, 9, 10, 12, 13, 14), 1: (2, 3, 9, 10, 11, 13, 14, 15),
                    2: (4, 5, 10, 11, 8, 14, 15, 12), 3: (6, 7, 11, 8, 9, 15, 12, 13)}


def fig6_cell(cell: str, n: int = 4, lam: int = 2, W: int = 3) -> tuple[int, list[int]]:
    """A printed cell as (0-based job, sorted chunks); job -1 and no chunks for "0"."""
    if cell == "0":
        return -1, []
    job = int(cell[cell.index("(") + 1:-1]) - 1
    if cell[0] == "g":
        return job, [int(cell[1:cell.index("(")])]
    i, m = int(cell[1]), int(cell[2])
    return job, sorted((W - 1 + m) * n + (i + u) % n for u in range(lam + 1))


def fig6_mismatches(table: dict, stragglers: dict) -> list[str]:
    """Replay Fig. 6's pattern through M-SGC (4, 2, 3, 2) and compare every mini-task with
    ``table``."""
    x = make_code("m-sgc", n=4, B=2, W=3, lam=2)
    S = np.zeros((9, 4), bool)
    for i, rounds in stragglers.items():
        S[[r - 1 for r in rounds], i] = True
    r = replay(x, S, jobs=6, waitout="never")
    out = []
    for i, rows in table.items():
        for k, row in enumerate(rows):
            for rd, cell in enumerate(row.split()):
                m = r.tasks[rd][i][k]
                job, parts = fig6_cell(cell)
                got = (m.job if m.partitions.size else -1, sorted(m.partitions.tolist()))
                if cell[0] == "l" and (m.coefficients == 0).any():
                    out.append(f"worker {i}, mini-task {k}, round {rd + 1}: zero coefficient")
                if got != (job, parts):
                    out.append(f"worker {i}, mini-task {k}, round {rd + 1}: printed {cell}, "
                               f"gradcode job {m.job + 1} chunks {got[1]}")
    return out


@statement(P4, "Sec. 3.3.1, Fig. 6", "M-SGC n=4, B=2, W=3, λ=2: the printed placement (16 "
                                     "chunks, 3d/32 and d/32), Fig. 6's mini-tasks, job 2 decoded "
                                     "after round 5 from ℓ20, ℓ30 (round 4) and ℓ01, ℓ31 (round "
                                     "5), load 3/8; every (2, 3, 2)-bursty pattern tolerated")
def sec331(ctx) -> Evidence:
    rng = np.random.default_rng(ctx.seed)
    tally = Tally()
    p = dict(n=4, B=2, W=3, lam=2)
    x = make_code("m-sgc", **p)
    problems = msgc_layout_problems(x, p)
    for i, chunks in SEC331_PLACEMENT.items():
        if sorted(chunks) != sorted(np.asarray(x.placement[i]).tolist()):
            problems.append(f"worker {i} stores {np.asarray(x.placement[i]).tolist()}")
    sizes = np.asarray(x.partition_sizes) * 32
    if not (np.allclose(sizes[:8], 3) and np.allclose(sizes[8:], 1)):
        problems.append(f"chunk sizes x 32: {sizes.tolist()}")
    copies = np.bincount(np.concatenate(x.placement), minlength=16)
    if not ((copies[:8] == 1).all() and (copies[8:] == 3).all()):
        problems.append(f"copies per chunk {copies.tolist()}")
    tally.add(problems, "Sec. 3.3.1's data placement")
    tally.add(fig6_mismatches(FIG6, FIG6_STRAGGLERS), "Fig. 6")
    S = np.zeros((9, 4), bool)
    for i, rounds in FIG6_STRAGGLERS.items():
        S[[r - 1 for r in rounds], i] = True
    r = replay(x, S, jobs=6, waitout="never")
    w = r.gradient_weights(1)                                # the paper's job 2
    coded = sorted((k[0] + 1, k[1]) for k in w if r.tasks[k[0]][k[1]][k[2]].partitions.min() >= 8)
    again = sorted(int(r.tasks[k[0]][k[1]][k[2]].partitions[0]) for k in w
                   if k[2] >= 2 and r.tasks[k[0]][k[1]][k[2]].partitions.max() < 8)
    problems = []
    if int(r.finish_round[1]) != 4:
        problems.append(f"job 2 decoded after round {int(r.finish_round[1]) + 1}")
    if coded != [(4, 2), (4, 3), (5, 0), (5, 3)]:
        problems.append(f"coded results (round, worker) used: {coded}")
    if again != [0, 2, 3]:
        problems.append(f"reattempted D1 chunks used: {again}")
    problems += decoding_problems(x, S, 6, 3, 3 / 8, rng)
    tally.add(problems, "Sec. 3.3.1's analysis of job 2")
    if not bursty(S[None], 2, 3, 2)[0]:
        tally.add(["Fig. 6's pattern is not (2, 3, 2)-bursty"], "Fig. 6")
    P, J = enumerate_fitting(Bursty(2, 3, 2), 3, 4, 5, 40_000 if ctx.quick else 400_000)
    tolerance_check(tally, "m-sgc", p, P, J, lambda Q: bursty(Q, 2, 3, 2), "(2, 3, 2)-bursty",
                    rng, 2 if ctx.quick else 10)
    tally.typical = "Fig. 6: all 96 mini-tasks as printed; job 2 decoded after round 5"
    return tally.evidence(f"placement, sizes and Fig. 6's 96 mini-tasks compared cell by cell; "
                          f"job 2's decoding; every (2, 3, 2)-bursty pattern of {J} jobs + T")


# ----------------------------------------------------------------- Example F.1 / Fig. 12
@statement(P4, "Example F.1, Fig. 12", "n=4, B=1, W=2, λ=4, all workers straggling in rounds 1, "
                                       "3, 5, ...: SR-SGC ((4, 2)-GC, ℓ_i on chunks [i:i+2]*, "
                                       "load 3/4) and M-SGC (2 partial gradients per worker, load "
                                       "1/2 = eq. 2) both finish g(2t-1), g(2t) after round 2t")
def example_f1(ctx) -> Evidence:
    rng = np.random.default_rng(ctx.seed)
    tally = Tally()
    J = 6 if ctx.quick else 20
    S = np.zeros((J + 1, 4), bool)
    S[0::2] = True                                           # the paper's rounds 1, 3, 5, ...
    want = [t + 1 - t % 2 for t in range(J)]                 # 0-based: jobs 2k, 2k+1 after 2k+1
    if not bursty(S[None], 1, 2, 4)[0]:
        tally.add(["the pattern is not (1, 2, 4)-bursty"], "Example F.1")
    for name, L, per in (("sr-sgc", Fraction(3, 4), 3), ("m-sgc", Fraction(1, 2), 2)):
        x = make_code(name, n=4, B=1, W=2, lam=4)
        r = replay(x, S, jobs=J, waitout="never")
        problems = []
        if r.finish_round.tolist() != want:
            problems.append(f"finish rounds {r.finish_round.tolist()}, not {want}")
        for rd in range(1, J, 2):
            jobs = sorted(m.job for w in r.tasks[rd] for m in w if m.partitions.size)
            if name == "sr-sgc":
                if jobs != [rd - 1, rd - 1, rd, rd]:
                    problems.append(f"round {rd + 1} works on jobs {[j + 1 for j in jobs]}")
                for i, w in enumerate(r.tasks[rd]):
                    if sorted(w[0].partitions.tolist()) != sorted((i + u) % 4 for u in range(3)):
                        problems.append(f"worker {i} computes {w[0].partitions.tolist()}")
            else:
                count = [sum(m.partitions.size for m in w) for w in r.tasks[rd]]
                if count != [per] * 4:
                    problems.append(f"round {rd + 1}: partial gradients per worker {count}")
        if x.n_partitions != 4:
            problems.append(f"{x.n_partitions} data chunks, not 4")
        problems += decoding_problems(x, S, J, 1, float(L), rng)
        tally.add(problems, f"Example F.1's {name.upper()}")
    b = eq2(4, 1, 2, 4)
    g = float(load_lower_bound_f1(np.array([4]), 1, 2, 4)[0])
    tally.add([f"eq. 2 = {b}, load_lower_bound_f1 = {g}"] if b != Fraction(1, 2)
              or abs(g - 0.5) > TOL else [], "Example F.1: M-SGC's 1/2 meets eq. 2")
    tally.typical = "SR-SGC and M-SGC finish rounds [2, 2, 4, 4, 6, 6] (1-based), loads 3/4, 1/2"
    return tally.evidence(f"{J} jobs replayed through both schemes, tasks of every even round "
                          "inspected, decoding and loads verified numerically; eq. 2")


# ----------------------------------------------------------------- App. G
def rep_decodes(received: np.ndarray, n: int, s: int) -> np.ndarray:
    """App. G's rule for GC-Rep: some worker of every group of s + 1 returned; ``received
    (..., n)`` masks, one answer per mask."""
    received = np.asarray(received, bool)
    return received.reshape(received.shape[:-1] + (n // (s + 1), s + 1)).any(-1).all(-1)


def spans_one(Bm: np.ndarray, rows) -> bool:
    """Whether the all-ones vector is a combination of the rows ``rows`` of ``Bm``."""
    rows = list(rows)
    if not rows:
        return False
    a, *_ = np.linalg.lstsq(Bm[rows].T, np.ones(Bm.shape[1]), rcond=None)
    return bool(np.abs(Bm[rows].T @ a - 1).max() <= 1e-8)


@statement(P4, "App. G example", "n=6, s=2: GC stores chunks [i:i+2]* and decodes from any 4; "
                                 "GC-Rep (groups {0,1,2}, {3,4,5}) decodes iff every group has a "
                                 "non-straggler, e.g. with 1, 2, 3, 5 straggling where GC fails; "
                                 "equal loads")
def appg_example(ctx) -> Evidence:
    tally = Tally()
    gc, rep = make_code("gc-cr", n=6, s=2), make_code("gc-fr", n=6, s=2)
    problems = []
    for i in range(6):
        if sorted(np.asarray(gc.placement[i]).tolist()) != sorted((i + u) % 6 for u in range(3)):
            problems.append(f"GC worker {i} stores {np.asarray(gc.placement[i]).tolist()}")
        g = i // 3
        if sorted(np.asarray(rep.placement[i]).tolist()) != [3 * g, 3 * g + 1, 3 * g + 2]:
            problems.append(f"GC-Rep worker {i} stores {np.asarray(rep.placement[i]).tolist()}")
    if not np.allclose(gc.load, 0.5) or not np.allclose(rep.load, 0.5):
        problems.append(f"loads {gc.load}, {rep.load}")
    tally.add(problems, "Fig. 13 / 14's placements")
    for mask in range(64):
        got = np.array([(mask >> i) & 1 for i in range(6)], bool)
        rows = np.flatnonzero(got)
        want_gc = spans_one(gc.B, rows)
        if got.sum() >= 4 and not want_gc:
            tally.add(["GC does not decode from 4 results"], f"received {rows.tolist()}")
            continue
        d = rep.decode(rows) if rows.size else None
        dec = bool(d is not None and d.exact and np.abs(d.recovered - 1).max() <= 1e-8)
        tally.add([f"GC-Rep decodes: gradcode {dec}, linear algebra {spans_one(rep.B, rows)}"]
                  if not dec == spans_one(rep.B, rows) == bool(rep_decodes(got, 6, 2))
                  else [],
                  f"GC-Rep with results of {rows.tolist()}")
    stragglers = [1, 2, 3, 5]
    alive = [0, 4]
    got = np.ones(6, bool)
    got[stragglers] = False
    problems = []
    if not rep_decodes(got, 6, 2) or not spans_one(rep.B, alive):
        problems.append("GC-Rep fails")
    if spans_one(gc.B, alive) or (gc.B[alive, 3] != 0).any():
        problems.append("GC decodes or computes g_3")
    tally.add(problems, "workers 1, 2, 3, 5 straggling")
    sets = np.array([[(m >> i) & 1 for i in range(6)] for m in range(64)], bool)
    tally.typical = (f"GC-Rep decodes {int(rep_decodes(sets, 6, 2).sum())} of the 64 received "
                     "sets, GC every set of >= 4")
    return tally.evidence("placements, loads; all 64 received sets through GC (any 4) and GC-Rep "
                          "(gradcode's decode vs least squares vs the group rule)")


@statement(P4, "App. G", "SR-SGC-Rep (Algorithm 3) and M-SGC-Rep tolerate the patterns of "
                         "Prop. 3.1 and 3.2, and SR-SGC-Rep tolerates a strict superset of the "
                         "patterns GC-Rep tolerates, at the same load")
def appg(ctx) -> Evidence:
    rng = np.random.default_rng(ctx.seed)
    tally = Tally()
    cap = 4_000 if ctx.quick else 15_000
    sizes = (4,) if ctx.quick else (4, 6)
    for n in sizes:
        for B, W in ((1, 2), (1, 3), (2, 3)):
            for lam in range(1, n + 1):
                s = s_printed(B, W, lam)
                if s < n and n % (s + 1) == 0:
                    model = AnyOf((Bursty(B, W, lam), SPerRound(s)), window=W)
                    P, J = enumerate_fitting(model, B, n, W + B, cap)
                    tolerance_check(tally, "sr-sgc-rep", dict(n=n, B=B, W=W, lam=lam), P, J,
                                    lambda Q, B=B, W=W, lam=lam, s=s: sr_model(Q, B, W, lam, s),
                                    "Prop. 3.1", rng, 1)
                if lam < n and n % (lam + 1) == 0:
                    T = W - 2 + B
                    for model, conforms in (
                            (Bursty(B, W, lam), lambda Q, B=B, W=W, lam=lam: bursty(Q, B, W, lam)),
                            (Arbitrary(B, W + B - 1, lam),
                             lambda Q, B=B, W=W, lam=lam: arbitrary(Q, B, W + B - 1, lam))):
                        P, J = enumerate_fitting(model, T, n, W + B, cap)
                        tolerance_check(tally, "m-sgc-rep", dict(n=n, B=B, W=W, lam=lam), P, J,
                                        conforms, "Prop. 3.2", rng, 1)
    for n, s, R in ((4, 1, 4), (6, 2, 2)) if ctx.quick else ((4, 1, 4), (6, 2, 3)):
        P = all_patterns(R, n)
        B, W = 1, 2
        lams = [l for l in range(1, n + 1) if s_printed(B, W, l) == s]
        f = replay_many(make_code("sr-sgc-rep", n=n, B=B, W=W, lam=lams[-1]), P, jobs=R - B,
                        waitout="never").finish_round
        sr = ((f >= 0) & (f <= np.arange(R - B) + B)).all(1)
        gr = rep_decodes(~P[:, :R - B], n, s).all(-1)
        tally.add(gr & ~sr, lambda k: f"n={n}, s={s}: GC-Rep tolerates {_fmt(P[k])}, "
                                      "SR-SGC-Rep does not")
        tally.add(np.array([not (sr & ~gr).any()]),
                  f"n={n}, s={s}: no pattern tolerated by SR-SGC-Rep only")
    return tally.evidence("every Prop. 3.1 / 3.2 pattern of a few rounds for the -Rep variants "
                          f"(n in {sizes}, (B, W) in (1, 2), (1, 3), "
                          "(2, 3), (s+1) | n); all patterns of a few rounds through GC-Rep's rule "
                          "and SR-SGC-Rep")


# ----------------------------------------------------------------- Remark 2.3
@statement(P4, "Remark 2.3", "with a wait-out (master waits for all) in any round where the "
                             "actual pattern deviates from the model, every job t is still "
                             "finished by the end of round t + T, whatever the pattern")
def remark23(ctx) -> Evidence:
    rng = np.random.default_rng(ctx.seed)
    tally = Tally()
    m, J = (60, 16) if ctx.quick else (400, 30)
    schemes = [("gc-seq", dict(n=6, s=2)), ("sr-sgc", dict(n=6, B=1, W=2, lam=3)),
               ("sr-sgc", dict(n=8, B=2, W=5, lam=5)), ("m-sgc", dict(n=6, B=2, W=3, lam=2)),
               ("m-sgc", dict(n=8, B=1, W=3, lam=8)), ("sr-sgc-rep", dict(n=6, B=1, W=2, lam=4)),
               ("m-sgc-rep", dict(n=6, B=2, W=3, lam=2))]
    for name, p in schemes:
        x = make_code(name, **p)
        T = t_printed(name, p)
        P = rng.random((m, J + T, x.n)) < rng.choice([0.1, 0.25, 0.5], size=(m, 1, 1))
        for rule in ("deadline", "model"):
            res = replay_many(x, P, jobs=J, waitout=rule)
            f = res.finish_round
            bad = ~((f >= np.arange(J)) & (f <= np.arange(J) + T)).all(1)
            tally.add(bad, lambda k: f"{name}({p}), rule {rule}: a job late on {_fmt(P[k])}")
    tally.typical = f"{len(schemes)} schemes x {m} random patterns, rules deadline and model"
    return tally.evidence(f"{m} random patterns (stragglers w.p. 0.1-0.5) of {J} jobs through "
                          f"{len(schemes)} schemes, wait-out rules 'deadline' and 'model'")


# ----------------------------------------------------------------- App. I, Remark 2.1
@statement(P4, "App. I, Remark 2.1", "M = 4 interleaved models: model j's iteration i starts in "
                                     "round 4i + j and, with delay T <= M - 1, is decoded by "
                                     "round 4i + j + 3, before its next iteration starts")
def appi(ctx) -> Evidence:
    rng = np.random.default_rng(ctx.seed)
    tally = Tally()
    M, J = 4, 24 if ctx.quick else 60
    k = 3 if ctx.quick else 10
    table1 = [("m-sgc", dict(n=256, B=1, W=2, lam=27), Bursty(1, 2, 27)),
              ("sr-sgc", dict(n=256, B=2, W=3, lam=23), Bursty(2, 3, 23)),
              ("gc-seq", dict(n=256, s=15), SPerRound(15))]
    for name, p, model in table1:
        x = make_code(name, **p)
        pl = pipeline(x, M)
        sched = [[pl.job(j, i) + 1 for i in range(3)] for j in range(M)]
        if sched != [[1, 5, 9], [2, 6, 10], [3, 7, 11], [4, 8, 12]]:
            tally.add([f"schedule {sched}"], f"{name}: App. I's update rounds")
        P = np.stack([model.sample(rng, J + x.T, 256, p=0.1) for _ in range(k)])
        f = replay_many(x, P, jobs=J, waitout="never").finish_round     # 0-based rounds
        jobs = np.arange(J)
        i, j = pl.iteration(jobs), pl.model(jobs)
        start = M * i + j                                                # 0-based 4i + j - 1
        bad = ~((f >= 0) & (f <= start + M - 1)).all(1)            # before start + M
        tally.add(bad, lambda q: f"{name}: a gradient not ready before its model's next round")
    for T in range(0, 7):                                   # pipelining needs T <= M - 1
        x = make_code("m-sgc", n=4, B=1, W=T + 1, lam=2) if T >= 1 else make_code(
            "gc-seq", n=4, s=1)
        try:
            pipeline(x, M)
            accepted = True
        except ValueError:
            accepted = False
        tally.add(np.array([accepted != (x.T <= M - 1)]), f"pipeline accepts T = {x.T}")
    x = make_code("sr-sgc", n=256, B=2, W=3, lam=23)
    pl = pipeline(x, M)
    ready = [pl.job(0, i) + x.T + 1 for i in range(3)]      # 1-based round by which it is ready
    if ready != [3, 7, 11] or M - x.T - 1 != 1:
        tally.add([f"ready after rounds {ready}, D = {M - x.T - 1}"], "App. K.1's example")
    tally.typical = ("SR-SGC (2, 3, 23), T = 2: model 1's gradients start in rounds 1, 5, 9, "
                     "ready after 3, 7, 11 (D = 1 idle round)")
    return tally.evidence(f"Table 1's three schemes (n = 256) on {k} random conforming patterns "
                          f"each, {J} jobs, M = 4; pipeline()'s T <= M - 1 rule for T = 0..6; "
                          "App. K.1's example")


# ----------------------------------------------------------------- App. B
@statement(P4, "App. B examples", "Lee et al.'s n=3 code (A0, A1, A0+A1) recovers A^T x from any "
                                  "two workers; Tandon et al.'s ℓ0 = g0/2 + g1, ℓ1 = g1 - g2, "
                                  "ℓ2 = g0/2 + g2 gives g from any two, e.g. g = 2ℓ0 - ℓ1")
def appb(ctx) -> Evidence:
    tally = Tally()
    rng = np.random.default_rng(ctx.seed)
    E = np.array([[1, 0], [0, 1], [1, 1]], float)           # worker i holds E[i] @ [A0, A1]
    for pair in combinations(range(3), 2):
        a, *_ = np.linalg.lstsq(E[list(pair)].T, np.eye(2), rcond=None)
        tally.add(["cannot recover"] if np.abs(E[list(pair)].T @ a - np.eye(2)).max() > 1e-9
                  else [], f"Lee et al., workers {pair}")
    Bm = np.array([[0.5, 1, 0], [0, 1, -1], [0.5, 0, 1]])
    code = from_matrix(Bm, s=1)
    g = rng.standard_normal((3, 5))
    ell = Bm @ g
    tally.add([] if np.allclose(2 * ell[0] - ell[1], g.sum(0), atol=1e-9) else
              ["2ℓ0 - ℓ1 != g"], "Tandon et al.: workers 0, 1")
    for pair in combinations(range(3), 2):
        d = code.decode(list(pair))
        ok = d.exact and np.allclose(d.weights @ ell, g.sum(0), atol=1e-8)
        tally.add([] if ok and spans_one(Bm, pair) else ["no decoding"],
                  f"Tandon et al., workers {pair}")
    tally.typical = "without worker 2: g = 2ℓ0 - ℓ1"
    return tally.evidence("both toy codes, every pair of workers, random data")
