"""Paper 4, App. G: GC-Rep and the -Rep variants of SR-SGC and M-SGC (the example with
``n = 6``, ``s = 2``; tolerance, and SR-SGC-Rep against GC-Rep) (``theorems``; see
``sgc_common``)."""

from __future__ import annotations

import numpy as np

from ...registry import make_code
from ...sequential import replay_many
from ...stragglers import AnyOf, Arbitrary, Bursty, SPerRound
from ._framework import Evidence, Tally, statement
from .sgc_common import (P4, all_patterns, arbitrary, bursty, enumerate_fitting, fmt_pattern,
                         s_printed, spans_one, sr_model, tolerance_check)


# ----------------------------------------------------------------- App. G
def rep_decodes(received: np.ndarray, n: int, s: int) -> np.ndarray:
    """App. G's rule for GC-Rep: some worker of every group of s + 1 returned; ``received
    (..., n)`` masks, one answer per mask."""
    received = np.asarray(received, bool)
    return received.reshape(received.shape[:-1] + (n // (s + 1), s + 1)).any(-1).all(-1)


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
        tally.add(gr & ~sr, lambda k: f"n={n}, s={s}: GC-Rep tolerates {fmt_pattern(P[k])}, "
                                      "SR-SGC-Rep does not")
        tally.add(np.array([not (sr & ~gr).any()]),
                  f"n={n}, s={s}: no pattern tolerated by SR-SGC-Rep only")
    return tally.evidence("every Prop. 3.1 / 3.2 pattern of a few rounds for the -Rep variants "
                          f"(n in {sizes}, (B, W) in (1, 2), (1, 3), "
                          "(2, 3), (s+1) | n); all patterns of a few rounds through GC-Rep's rule "
                          "and SR-SGC-Rep")
