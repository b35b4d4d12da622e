"""Paper 4, the setting: Remark 2.3 (a wait-out where the pattern leaves the model), App. I and
Remark 2.1 (interleaved models, pipelining) and App. B's examples of coded computation
(``theorems``; see ``sgc_common``)."""

from __future__ import annotations

from itertools import combinations

import numpy as np

from ...codes import from_matrix
from ...registry import make_code
from ...sequential import pipeline, replay_many
from ...stragglers import Bursty, SPerRound
from ._framework import Evidence, Tally, statement
from .sgc_common import (P4, all_patterns, enumerate_fitting, fmt_pattern, spans_one,
                          t_printed)

#: App. I's exhaustive part: small schemes with every delay T = 0..M - 1 and their models
SMALL_PIPELINED = (("gc-seq", dict(n=4, s=1), SPerRound(1)),
                   ("sr-sgc", dict(n=4, B=1, W=2, lam=2), Bursty(1, 2, 2)),
                   ("m-sgc", dict(n=3, B=1, W=2, lam=2), Bursty(1, 2, 2)),
                   ("sr-sgc", dict(n=3, B=2, W=3, lam=1), Bursty(2, 3, 1)),
                   ("m-sgc", dict(n=3, B=1, W=3, lam=1), Bursty(1, 3, 1)),
                   ("m-sgc", dict(n=3, B=2, W=3, lam=1), Bursty(2, 3, 1)),
                   ("m-sgc", dict(n=2, B=1, W=4, lam=1), Bursty(1, 4, 1)))


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
        _late(tally, name, p, x, P, J, T)
    every = 0
    for name, p, R in SMALL_ANY:                 # every pattern of R rounds, small n
        x = make_code(name, **p)
        T = t_printed(name, p)
        every += 2 * (1 << (R * x.n))
        _late(tally, name, p, x, all_patterns(R, x.n), R - T, T)
    tally.typical = f"{len(schemes)} schemes x {m} random patterns, rules deadline and model"
    return tally.evidence(f"{every} cases: every pattern of R rounds (R = 5, 7) through "
                          f"{len(SMALL_ANY)} small schemes (n = 2, 3, T = 0..2); {m} random "
                          f"patterns (stragglers w.p. 0.1-0.5) of {J} jobs through "
                          f"{len(schemes)} schemes; wait-out rules 'deadline' and 'model'")


#: Remark 2.3's exhaustive part: (scheme, parameters, rounds) with every pattern replayed
SMALL_ANY = (("gc-seq", dict(n=3, s=1), 5), ("sr-sgc", dict(n=3, B=1, W=2, lam=2), 5),
             ("m-sgc", dict(n=3, B=1, W=2, lam=1), 5), ("m-sgc", dict(n=2, B=1, W=3, lam=1), 7),
             ("sr-sgc", dict(n=2, B=2, W=3, lam=1), 7))


def _late(tally: Tally, name, p, x, P, J: int, T: int) -> None:
    """Add to ``tally``, for both wait-out rules, whether a job of a pattern of ``P`` is
    decoded outside its rounds ``t .. t + T``."""
    for rule in ("deadline", "model"):
        f = replay_many(x, P, jobs=J, waitout=rule).finish_round
        bad = ~((f >= np.arange(J)) & (f <= np.arange(J) + T)).all(1)
        tally.add(bad, lambda k: f"{name}({p}), rule {rule}: a job late on {fmt_pattern(P[k])}")


# ----------------------------------------------------------------- App. I, Remark 2.1
@statement(P4, "App. I, Remark 2.1", "M = 4 interleaved models: model j's iteration i starts in "
                                     "round 4i + j and, with delay T <= M - 1, is decoded by "
                                     "round 4i + j + 3, before its next iteration starts")
def appi(ctx) -> Evidence:
    rng = np.random.default_rng(ctx.seed)
    tally = Tally()
    M, J = 4, 24 if ctx.quick else 60
    k = 3 if ctx.quick else 10
    every = _appi_exhaustive(tally, M, 40_000)
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
        _appi_ready(tally, name, x, pl, P, J, M)
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
    return tally.evidence(f"{every} cases: every conforming pattern of J + T rounds (J >= M + 1 "
                          f"jobs, two iterations of a model at least) through "
                          f"{len(SMALL_PIPELINED)} small schemes with T = 0..3 (n <= 4); Table "
                          f"1's three schemes (n = 256) on {k} random conforming patterns each, "
                          f"{J} jobs, M = 4; pipeline()'s T <= M - 1 rule for T = 0..6; App. "
                          "K.1's example")


def _appi_ready(tally: Tally, name, x, pl, P, J: int, M: int) -> None:
    """Add to ``tally`` whether, on each pattern of ``P``, every job of model j's iteration i
    (0-based round M i + j) is decoded before round M (i + 1) + j, its model's next start."""
    f = replay_many(x, P, jobs=J, waitout="never").finish_round     # 0-based rounds
    jobs = np.arange(J)
    start = M * pl.iteration(jobs) + pl.model(jobs)                  # 0-based 4i + j - 1
    bad = ~((f >= 0) & (f <= start + M - 1)).all(1)                  # before start + M
    tally.add(bad, lambda q: f"{name}: a gradient not ready before its model's next round "
                             f"on {fmt_pattern(P[q])}")


def _appi_exhaustive(tally: Tally, M: int, cap: int) -> int:
    """Every conforming pattern of the small schemes of ``SMALL_PIPELINED`` (each with at
    least M + 1 jobs); returns how many cases it added."""
    before = tally.cases
    for name, p, model in SMALL_PIPELINED:
        x = make_code(name, **p)
        if x.T != t_printed(name, p) or x.T > M - 1:
            tally.add([f"T = {x.T}"], f"{name}({p}): the printed delay")
            continue
        P, J = enumerate_fitting(model, int(x.T), x.n, 2 * M, cap)
        if J < M + 1:
            tally.add([f"only {J} jobs within {cap:,} patterns"], f"{name}({p})")
            continue
        _appi_ready(tally, f"{name}({p}), {J} jobs", x, pipeline(x, M), P, J, M)
    return tally.cases - before


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
