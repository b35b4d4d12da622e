"""Paper 4, the worked examples: Sec. 3.3.1's M-SGC (Fig. 6's mini-tasks, job 2's decoding) and
Example F.1 (Fig. 12: SR-SGC and M-SGC when all workers straggle every other round)
(``theorems``; see ``sgc_common``)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ...analysis import load_lower_bound_f1
from ...registry import make_code
from ...sequential import replay
from ...stragglers import Bursty
from ._framework import Evidence, Tally, statement
from .sgc_common import (P4, TOL, bursty, decoding_problems, enumerate_fitting, eq2,
                         tolerance_check)
from .sgc_m import msgc_layout_problems


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
