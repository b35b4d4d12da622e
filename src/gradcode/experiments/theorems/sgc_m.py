"""Paper 4, Sec. 3.3: M-SGC: Prop. 3.2 (tolerance with delay ``T = W - 2 + B``), its placement
and load (Sec. 3.3.2, eq. 1) and Remark 3.3 (the load at most 2/n) (``theorems``; see
``sgc_common``)."""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

import numpy as np

from ...analysis import check_m_sgc, sgc_load, sr_sgc_s
from ...registry import make_code
from ...stragglers import Arbitrary, Bursty
from ._framework import Evidence, Tally, statement
from .sgc_common import (P4, TOL, arbitrary, bursty, decoding_problems, enumerate_fitting, eq1,
                         m_configs, random_bw, run_sizes, tolerance_check)


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
    _, _, cap, numeric, big = run_sizes(ctx)
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
        for B, W in random_bw(ctx):
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
            if np.max(np.abs(np.asarray(got) - float(L))) > TOL:
                problems.append(f"{name} {np.max(got):.6g}, eq. 1 {float(L):.6g}")
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
