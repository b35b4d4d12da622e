"""Paper 4 (sequential gradient coding): Table 1 as App. J estimates, beside the authors' own.

``sgc-table1`` -- Sec. 4.2, Table 1 is *measured* training (480 jobs, 256 AWS Lambda workers);
one machine can compute App. J's *estimate* (μ-rule stragglers, μ = 1; a wait-out until the
slowest worker when a round leaves the scheme's design model, rule ``model``; the profile
shifted by ``L α``).  So estimates are compared with estimates: the authors' own on their
100-round, 4096-sample profile (``AUTHORS_EST``, from their repository) and ours on the 30-round,
2048-sample profile of ../shared/traces (α fitted on its load sweep), every parameter set with
``T <= M - 1 = 3`` searched (Remark 2.1, M = 4 models; ``gradcode.sim.tune``).  Why the
rankings differ: each runtime split into base, load and wait-out seconds, and sweeps of α and of
the number of jobs J.  Without the traces a synthetic Gilbert-Elliott profile stands in (noted).
Table 1's data and App. J's search are in ``sgc_appj``, the profile in ``sgc_profiles``, both
shared with ``sgc_selection`` (Fig. 17, Table 3).

The constant α (seconds per unit of normalized load) decides the rankings, and the paper gives
none; it can be derived: load 1 is the whole batch, so α scales with the samples per round, and
the fit on the 2048-sample sweep scaled to Table 1's 4096 (256 workers x 16 images) is the
paper's setting (2.244 s; the authors' own estimate used 2.201).  Every verdict is taken there,
and its row says over which swept α it holds.
"""

from __future__ import annotations

import numpy as np

from ..registry import make_code
from ..stragglers import identify_stragglers
from ._experiment import Context, Experiment, plural
from ._ledger import Check, Claim, holds, ranks
from ._plot import figure, panel, plain_log, titled
from .isgc import holds_over
from .sgc_appj import (AUTHORS_EST, AUTHORS_SOURCE, FAMILIES, LABELS, MAX_DELAY, TABLE1, best,
                       decompose, fmt_params)
from .sgc_profiles import AUTHORS_ALPHA, MU, N, Profile, reference_profile

TABLE1_CLAIM = (
    "256 Lambda workers, 4 CNNs on MNIST, 480 jobs, mu = 1, parameters by App. J's search on an "
    "80-job profile; measured (mean of 10): M-SGC (1, 2, 27) 891 s, SR-SGC (2, 3, 23) 994 s, GC "
    "(s = 15) 1065 s, no coding 1308 s: 'M-SGC achieves 16% lower run time while maintaining "
    "smaller normalized load compared to the classical GC scheme'; all beat no coding.")


def _row(part, prof, jobs, alpha, family, r, **extra) -> dict:
    return {"part": part, "profile": prof, "jobs": jobs, "alpha": alpha, "family": family,
            "scheme": LABELS[family], "load": r.get("load"), "T": r.get("T"),
            "runtime_s": r.get("runtime_s"), "waitouts": r.get("waitouts"), **extra,
            "params": fmt_params(family, r["params"])}


def _relative(rows) -> None:
    """``relative_to_gc``: runtime / GC's runtime of the same part, jobs and alpha."""
    gc = {(r["part"], r["jobs"], r["alpha"]): r["runtime_s"] for r in rows
          if r["family"] == "gc-seq"}
    for r in rows:
        r["relative_to_gc"] = r["runtime_s"] / gc[r["part"], r["jobs"], r["alpha"]]


def _sweeps(ctx: Context, prof: Profile) -> tuple[list, list]:
    """The swept alphas (around the fit and the paper's) and numbers of jobs J."""
    J, fit = prof.D.shape[0] - MAX_DELAY, round(prof.fit, 3)
    alphas = sorted({0.5, 1.0, fit, 1.5, 2.0, 2.1, AUTHORS_ALPHA, prof.alpha, 2.5, 3.0, 4.0}
                    if ctx.quick else {0.5, 0.75, 1.0, fit, 1.25, 1.5, 1.75, 2.0, 2.1,
                                       AUTHORS_ALPHA, prof.alpha, 2.3, 2.5, 3.0, 4.0, 6.0})
    return alphas, [10, J] if ctx.quick else list(range(2, J + 1))


def _setup(ctx: Context) -> tuple:
    """The reference profile, the search's cache and the best parameters at the paper's alpha."""
    prof, cache = reference_profile(ctx), {}
    return prof, cache, best(prof.D, prof.D.shape[0] - MAX_DELAY, prof.alpha, cache=cache)


def _configs(ctx: Context) -> list[tuple]:
    """``(part, alpha, J)``: the best of App. J's search and Table 1's parameters at the paper's
    alpha, the alpha and J sweeps, the authors' own estimates."""
    prof = ctx.shared[0]
    J, a = prof.D.shape[0] - MAX_DELAY, prof.alpha
    alphas, jobs = _sweeps(ctx, prof)
    return ([("best of App. J search", a, J), ("Table 1's parameters", a, J)]
            + [("alpha sweep", al, J) for al in alphas]
            + [("jobs sweep", al, j) for al in (prof.fit, a) for j in jobs]
            + [("authors' App. J estimate", AUTHORS_ALPHA, j) for j in AUTHORS_EST])


def _measure(ctx: Context, config) -> list[dict]:
    """One row per family for one part, alpha and J."""
    (prof, cache, main), (part, al, j) = ctx.shared, config
    D, R = prof.D, prof.D.shape[0]
    if part == "authors' App. J estimate":
        return [_row(part, "authors' 100-round Canada", j, al, f, {"params": p, "runtime_s": t})
                for f, (p, t) in AUTHORS_EST[j].items()]
    if part in ("best of App. J search", "Table 1's parameters"):
        ps = {f: main[f]["params"] if part.startswith("best") else TABLE1[f][0]
              for f in FAMILIES}
        return [_row(part, prof.label, j, al, f, {"params": p, "T": make_code(f, n=N, **p).T},
                     **decompose(f, p, D, j, al)) for f, p in ps.items()]
    return [_row(part, prof.label, j, al, f, r) for f, r in
            best(D, j, al, max_delay=min(MAX_DELAY, R - j), cache=cache).items()]


def _analyse(ctx: Context, rows) -> dict:
    prof, _, main = ctx.shared
    J = prof.D.shape[0] - MAX_DELAY
    _relative(rows)
    alphas, jobs = _sweeps(ctx, prof)
    ctx.notes.append(
        f"Search: every valid parameter set with T <= {MAX_DELAY} (Remark 2.1, M = 4), J = {J} "
        f"jobs ({J + MAX_DELAY} rounds - {MAX_DELAY}), mu = 1, base load 0, wait-out rule "
        f"'model'; alpha swept over {', '.join(f'{x:.3g}' for x in alphas)}, J over "
        f"{jobs[0]}..{jobs[-1]}.")
    return {**_facts(prof, rows, J, {f: main[f]["params"] for f in FAMILIES}), "rows": rows}


def _pick(rows, part, **match) -> dict:
    return {r["family"]: r for r in rows if r["part"] == part and all(
        r[k] == v for k, v in match.items())}


def _facts(prof, rows, J, params) -> dict:
    """Everything the claims and the summary state, computed from the rows and the profile."""
    S = identify_stragglers(prof.D[:J + MAX_DELAY], MU)
    main = _pick(rows, "best of App. J search")
    swept = {al: _pick(rows, "alpha sweep", alpha=al) for al in
             sorted({r["alpha"] for r in rows if r["part"] == "alpha sweep"})}
    first = {al: min(b, key=lambda f: b[f]["runtime_s"]) == "m-sgc" for al, b in swept.items()}
    since = next((al for al in swept if all(first[x] for x in swept if x >= al)), None)
    jobs_m = dict(zip(*_series(rows, "jobs sweep", "m-sgc", "jobs", alpha=prof.alpha)))
    return {"prof": prof, "J": J, "main": main, "params": params, "swept": swept,
            "t1": _pick(rows, "Table 1's parameters"), "m_first_since": since,
            "authors": _pick(rows, "authors' App. J estimate", jobs=80), "jobs_m": jobs_m,
            "pairs": S.shape[0] - 1, **straggler_runs(S),
            "ranking": sorted(FAMILIES, key=lambda f: main[f]["runtime_s"])}


def straggler_runs(S) -> dict:
    """``isolated``: the fraction of straggler bursts (runs of a worker) lasting one round;
    ``repeat_pairs``: pairs of consecutive rounds in which some worker straggles in both."""
    edge = np.diff(np.pad(S.T.astype(np.int8), ((0, 0), (1, 1))), axis=1).ravel()
    lengths = np.flatnonzero(edge == -1) - np.flatnonzero(edge == 1)
    return {"isolated": float(np.mean(lengths == 1)) if lengths.size else float("nan"),
            "repeat_pairs": int((S[1:] & S[:-1]).any(1).sum())}


def _ranking(d: dict) -> str:
    return " < ".join(LABELS[f] for f in sorted(d, key=lambda f: d[f]["runtime_s"]))


def _ours(x) -> str:
    m = x["main"]
    return (f"App. J estimates of J = {x['J']} jobs on {x['prof'].label} (alpha = "
            f"{x['prof'].alpha:.3f}), best parameters with T <= 3: " + "; ".join(
                f"{LABELS[f]} {m[f]['runtime_s']:.2f} s = {m[f]['relative_to_gc']:.3f}x GC "
                f"({m[f]['params']}, load {m[f]['load']:.4f}, "
                f"{plural(m[f]['waitouts'], 'wait-out')}; base {m[f]['base_s']:.2f} + load "
                f"{m[f]['load_s']:.2f} + wait-outs {m[f]['waitout_s']:.2f} s)"
                for f in x["ranking"]) + ".  " + _why_rank(x) + ".")


def _why_rank(x) -> str:
    """Why our ranking differs from Table 1's (or agrees): M-SGC - GC split into base, load and
    wait-out seconds, the straggler repeats behind the wait-outs, the alpha and J sweeps."""
    m, prof, jm = x["main"], x["prof"], x["jobs_m"]
    ms, gc = m["m-sgc"], m["gc-seq"]
    d = {k: ms[k] - gc[k] for k in ("base_s", "load_s", "waitout_s", "runtime_s")}
    first = (f"M-SGC ranks first for alpha >= {x['m_first_since']:.3g}" if x["m_first_since"]
             else "M-SGC ranks first at no alpha")
    return (
        f"{prof.label}: alpha = {prof.alpha:.3f} (the fit {prof.fit:.3f} at 2048 samples per "
        f"round scaled to Table 1's 4096; the authors' estimate used {AUTHORS_ALPHA}); "
        f"M-SGC {ms['params']} - GC "
        f"(s = {x['params']['gc-seq']['s']}) = {d['runtime_s']:+.2f} s = {d['base_s']:+.2f} base "
        f"(M-SGC runs {ms['rounds_run']} rounds, GC {gc['rounds_run']}) {d['load_s']:+.2f} load "
        f"{d['waitout_s']:+.2f} wait-outs ({ms['waitouts']} vs {gc['waitouts']}; in "
        f"{x['repeat_pairs']} of {x['pairs']} pairs of consecutive rounds a worker straggles in "
        f"both, outside small B, W).  {first} of the alphas swept "
        f"({min(x['swept']):.3g}-{max(x['swept']):.3g}); M-SGC / GC "
        f"{'falls' if jm[x['J']] < jm[min(jm)] else 'does not fall'} with J "
        f"({min(jm)}: {jm[min(jm)]:.2f} -> {x['J']}: {jm[x['J']]:.2f}; the authors': 10 jobs "
        f"{AUTHORS_EST[10]['m-sgc'][1] / AUTHORS_EST[10]['gc-seq'][1]:.2f} -> 80 jobs "
        f"{AUTHORS_EST[80]['m-sgc'][1] / AUTHORS_EST[80]['gc-seq'][1]:.2f}; its T extra rounds"
        " weigh less as J grows)")


PAPER_ORDER = ["m-sgc", "sr-sgc", "gc-seq", "uncoded"]      # Table 1's ranking
TOL_T1 = 0.05          # a ratio of run times "agrees" with Table 1's within ±5 % (e.g. 16 ± 4 %)
TABLE1_SOURCE = "Sec. 4.2, Table 1"


def _order(d: dict) -> list:
    return sorted(d, key=lambda f: d[f]["runtime_s"])


def _over(x, ok) -> str:
    """The swept alphas at which ``ok(best-of-search rows at that alpha)`` holds, in words."""
    al = sorted(x["swept"])
    return (holds_over(al, [bool(ok(x["swept"][a])) for a in al], name="alpha", unit="")
            + " of the alphas swept (" + ", ".join(f"{a:.3g}" for a in al) + ")")


def stand_in(prof, J) -> str:
    """The ``setting`` of a row judged on App. J's estimate instead of Table 1's training."""
    what = ("2048-sample profile (alpha scaled to 4096 samples)" if "real" in prof.label
            else "profile")
    return (f"stand-in: App. J's estimate of {J} jobs on {prof.label}'s {prof.D.shape[0]}-round "
            f"{what} for Table 1's measured training of 480 jobs on 256 Lambda workers")


def _close(rel, paper) -> bool:
    return abs(rel / paper - 1) <= TOL_T1


def _claims(x) -> list:
    """Table 1's run-time claims: each judged by Table 1's number at the paper's alpha, with
    the swept alphas where it holds; the authors' own App. J estimate is a check."""
    m, au, prof, t1 = x["main"], x["authors"], x["prof"], x["t1"]
    rel = {f: m[f]["relative_to_gc"] for f in FAMILIES}
    p1 = {f: TABLE1[f][2] / TABLE1["gc-seq"][2] for f in FAMILIES}
    W, est = TABLE1_SOURCE, f"App. J estimate on {prof.label} ({x['J']} jobs), not training"
    at = (f"at the paper's alpha ({prof.alpha:.3f}: the fit {prof.fit:.3f} scaled to Table 1's "
          "4096 samples per round)")
    ranked = _order(m) == PAPER_ORDER and _order(t1) == PAPER_ORDER
    why, s_sr = _why_rank(x), make_code("sr-sgc", n=N, **x["params"]["sr-sgc"]).params["s"]
    worst1 = max(t1[f]["runtime_s"] for f in FAMILIES[1:]) / t1["uncoded"]["runtime_s"]
    setting = stand_in(prof, x["J"])

    def beats(b):
        return all(b[f]["runtime_s"] < b["uncoded"]["runtime_s"] for f in FAMILIES[1:])

    def lower(f):
        return (f"{1 - rel[f]:.1%} lower than GC's (Table 1: {1 - p1[f]:.1%}): the direction "
                + ("holds" if rel[f] < 1 else "does not hold") + ", the number "
                + ("agrees" if _close(rel[f], p1[f]) else "misses"))
    return [
        Claim(W + ", Fig. 2(a)", "ranking of the run times (Fig. 2(a): M-SGC completes its jobs "
              "first, then SR-SGC, GC, no coding)", "M-SGC < SR-SGC < GC < no coding (measured)",
              f"{_ranking(m)} (best parameters); {_ranking(t1)} (Table 1's parameters, as "
              "sgc-switching replays Fig. 2(a))", holds(ranked),
              f"rule: the estimates rank strictly so {at}, with the best parameters of App. J's "
              "search and with Table 1's; the best parameters rank so for "
              f"{_over(x, lambda b: _order(b) == PAPER_ORDER)}; " + why, kind="direction",
              setting=setting),
        Claim("abstract; " + W, "M-SGC run time / GC's ('16% lower run time')", p1["m-sgc"],
              rel["m-sgc"],
              tol=TOL_T1, why=f"{at}: {lower('m-sgc')}; within ±{TOL_T1:.0%} for "
              f"{_over(x, lambda b: _close(b['m-sgc']['relative_to_gc'], p1['m-sgc']))}, "
              f"lower than GC's for {_over(x, lambda b: b['m-sgc']['relative_to_gc'] < 1)}; "
              f"{est}; the authors' own estimate on their profile gives "
              f"{au['m-sgc']['relative_to_gc']:.3f} ({1 - au['m-sgc']['relative_to_gc']:.0%} "
              f"lower); here M-SGC waits out {m['m-sgc']['waitouts']} rounds, GC "
              f"{m['gc-seq']['waitouts']} (Table 1: {TABLE1['m-sgc'][2]:.2f} / "
              f"{TABLE1['gc-seq'][2]:.2f} s)", setting=setting, fmt="{:.3f}"),
        Claim(W, "SR-SGC run time / GC's (a slight improvement)", p1["sr-sgc"], rel["sr-sgc"],
              tol=TOL_T1, why=f"{at}: {lower('sr-sgc')}; within ±{TOL_T1:.0%} for "
              f"{_over(x, lambda b: _close(b['sr-sgc']['relative_to_gc'], p1['sr-sgc']))}, "
              f"lower than GC's for {_over(x, lambda b: b['sr-sgc']['relative_to_gc'] < 1)}; "
              f"{est}: SR-SGC {m['sr-sgc']['params']} (s = {s_sr}, load "
              f"{m['sr-sgc']['load']:.4f}) waits out {m['sr-sgc']['waitouts']} rounds, GC "
              f"({m['gc-seq']['params']}, load {m['gc-seq']['load']:.4f}) "
              f"{m['gc-seq']['waitouts']}; the authors' estimate: "
              f"{au['sr-sgc']['relative_to_gc']:.3f} (Table 1: {TABLE1['sr-sgc'][2]:.2f} / "
              f"{TABLE1['gc-seq'][2]:.2f} s)", setting=setting, fmt="{:.3f}"),
        Claim(W + ", Fig. 2", "no coding run time / GC's (every coding scheme significantly "
              "beats no coding)", p1["uncoded"], rel["uncoded"], tol=TOL_T1,
              verdict=holds(_close(rel["uncoded"], p1["uncoded"]) and beats(m) and beats(t1)),
              why=f"rule: {at}, no coding / GC within ±{TOL_T1:.0%} of Table 1's and every "
              "coding scheme strictly faster than no coding, with the best parameters and with "
              "Table 1's (Fig. 2's schedule, which sgc-switching replays: one row for both): "
              "the number " + ("agrees" if _close(rel["uncoded"], p1["uncoded"]) else "misses")
              + ", every scheme " + ("beats" if beats(m) and beats(t1) else "does not beat")
              + f" no coding; within ±{TOL_T1:.0%} for "
              f"{_over(x, lambda b: _close(b['uncoded']['relative_to_gc'], p1['uncoded']))}, "
              f"every scheme faster with the best parameters for {_over(x, beats)}; {est}: no "
              f"coding waits for the slowest worker in {m['uncoded']['waitouts']} of "
              f"{m['uncoded']['rounds_run']} rounds (+{m['uncoded']['waitout_s']:.1f} s); the "
              f"coding schemes take {min(rel[f] / rel['uncoded'] for f in FAMILIES[1:]):.2f}-"
              f"{max(rel[f] / rel['uncoded'] for f in FAMILIES[1:]):.2f}x its time (Table 1's "
              f"parameters: {worst1:.2f}x at most; Table 1: "
              f"{min(TABLE1[f][2] for f in FAMILIES[1:]) / TABLE1['uncoded'][2]:.2f}-"
              f"{max(TABLE1[f][2] for f in FAMILIES[1:]) / TABLE1['uncoded'][2]:.2f}x); the "
              f"authors' estimate: {au['uncoded']['relative_to_gc']:.3f}", setting=setting,
              fmt="{:.3f}"),
        Claim.not_attempted(
            W, "run times of 480 jobs, mean ± std of 10 runs (M-SGC / SR-SGC / GC / none)",
            " / ".join(f"{TABLE1[f][2]:.2f} ± {TABLE1[f][3]:.2f}" for f in FAMILIES[::-1])
            + " s", "measured training of 4 CNNs on 256 AWS Lambda workers; one machine can "
            "only estimate them (App. J), compared above as ratios", kind="value"),
        _authors_check(au, p1),
    ] + _claims_setup(x)


def _authors_check(au, p1) -> Check:
    """The authors' own App. J estimate (their repository) against Table 1's measurement: a
    check of the estimate, not a claim of the paper (the 16 % row is the claim)."""
    return Check(
        "paper 4, Table 1 vs the authors' App. J estimate (mamaj/Sequential-Gradient-Coding-2, "
        + AUTHORS_SOURCE.format(J=80) + ")", "the authors' own estimate (80 jobs, their "
        "profile) ranks the schemes as Table 1's measurement", "M-SGC < SR-SGC < GC < no coding",
        _ranking(au), ranks({f: au[f]["runtime_s"] for f in FAMILIES}, PAPER_ORDER),
        f"rule: the estimates rank strictly so; run time / GC's: M-SGC "
        f"{au['m-sgc']['relative_to_gc']:.3f}, SR-SGC {au['sr-sgc']['relative_to_gc']:.3f}, no "
        f"coding {au['uncoded']['relative_to_gc']:.3f} vs measured {p1['m-sgc']:.3f}, "
        f"{p1['sr-sgc']:.3f}, {p1['uncoded']:.3f}; it predicts "
        f"{(1 - au['m-sgc']['relative_to_gc']) / (1 - p1['m-sgc']):.0%} of the measured M-SGC "
        "gain: measured training is not the estimate")


PARAM_TOL = 0.1         # a selected lambda or s "agrees" with Table 1's within ±10 %


def _matches(f, p) -> bool:
    """Whether selected parameters ``p`` of ``f`` are Table 1's: B and W equal, lambda (or GC's
    s) within ``PARAM_TOL``."""
    q = TABLE1[f][0]
    if f == "gc-seq":
        return abs(p["s"] / q["s"] - 1) <= PARAM_TOL
    return (p["B"], p["W"]) == (q["B"], q["W"]) and abs(p["lam"] / q["lam"] - 1) <= PARAM_TOL


def _claims_setup(x) -> list:
    """Table 1's loads and parameters, and the parameters App. J selects here."""
    t1, prof, W = x["t1"], x["prof"], TABLE1_SOURCE
    sr, gc, ms = x["params"]["sr-sgc"], x["params"]["gc-seq"], x["params"]["m-sgc"]
    s_sr, small = make_code("sr-sgc", n=N, **sr).params["s"], all(
        p["B"] <= 2 and p["W"] <= 3 for p in (sr, ms))
    loads_ok = all(f"{t1[f]['load']:.3f}" == TABLE1[f][1] for f in FAMILIES)
    at = f"at the paper's alpha ({prof.alpha:.3f}, {prof.label}, {x['J']} jobs, T <= 3)"
    gap = TABLE1["gc-seq"][0]["s"] - 12
    coded = ("m-sgc", "sr-sgc", "gc-seq")
    setting = stand_in(prof, x["J"]).replace("'s estimate", "'s search")

    def s_of(b):
        return make_code("sr-sgc", n=N, **_params_of(b["sr-sgc"])).params["s"]

    def picks(b):
        return all(_matches(f, _params_of(b[f])) for f in coded)
    return [
        Claim(W, "normalized loads of Table 1's parameters (M-SGC / SR-SGC / GC / none)",
              " / ".join(TABLE1[f][1] for f in FAMILIES[::-1]),
              " / ".join(f"{t1[f]['load']:.5f}" for f in FAMILIES[::-1]), holds(loads_ok),
              "rule: eq. 1 and (s + 1)/n at n = 256 equal the printed digits: they "
              + ("agree" if loads_ok else "disagree"), kind="value"),
        Claim("Sec. 4.2", "SR-SGC (2, 3, 23): effective s = ceil(B lambda / (W - 1 + B))", 12,
              make_code("sr-sgc", n=N, **TABLE1["sr-sgc"][0]).params["s"], tol=0.0,
              fmt="{:.0f}"),
        Claim("Sec. 4.2", "the selected SR-SGC's s is close to the selected GC's s", "12 vs 15",
              f"{s_sr} vs {gc['s']}", holds(abs(s_sr - gc["s"]) <= gap),
              f"rule: 'close' read as at most Table 1's gap ({gap}) apart {at}: they are "
              f"{abs(s_sr - gc['s'])} apart (the values themselves: 'parameters App. J "
              "selects'); it holds for "
              f"{_over(x, lambda b: abs(s_of(b) - _params_of(b['gc-seq'])['s']) <= gap)}; "
              f"selected: SR-SGC {fmt_params('sr-sgc', sr)}, GC s = {gc['s']}", kind="value",
              setting=setting),
        Claim(W, "parameters App. J selects", "M-SGC (1, 2, 27), SR-SGC (2, 3, 23), GC s = 15",
              f"M-SGC {fmt_params('m-sgc', ms)}, SR-SGC {fmt_params('sr-sgc', sr)}, GC s = "
              f"{gc['s']}", holds(all(_matches(f, x["params"][f]) for f in coded)),
              f"rule: B and W equal to Table 1's and lambda (GC: s) within ±{PARAM_TOL:.0%} of "
              f"Table 1's, every scheme, {at}: " + ", ".join(
                  f"{LABELS[f]} {'agrees' if _matches(f, x['params'][f]) else 'misses'}"
                  for f in coded) + f"; all agree for {_over(x, picks)}; M-SGC is exactly "
              f"(1, 2, 27) for "
              f"{_over(x, lambda b: _params_of(b['m-sgc']) == TABLE1['m-sgc'][0])}; B <= 2, "
              f"W <= 3 here: {'yes' if small else 'no'}", kind="value", setting=setting),
        Claim("Sec. 4.2, Fig. 1(b)", "small B and W are selected, as isolated short straggler "
              "bursts prevail", "B <= 2, W <= 3", f"(B, W) = ({ms['B']}, {ms['W']}) M-SGC, "
              f"({sr['B']}, {sr['W']}) SR-SGC; {x['isolated']:.0%} of bursts last 1 round",
              holds(small and x["isolated"] > 0.5), f"rule: B <= 2, W <= 3 (Table 1's) are "
              f"selected {at} and most bursts (over half) last one round: burst lengths of the "
              f"mu-rule stragglers of {prof.label}'s first {x['J'] + MAX_DELAY} rounds (one row "
              "for Sec. 4.2's statement; sgc-trace-stats draws Fig. 1(b)'s histogram); but in "
              f"{x['repeat_pairs']} of {x['pairs']} pairs of consecutive rounds some worker "
              "straggles in both, which a (B = 1, W = 2) model does not allow",
              kind="direction", setting=setting),
    ]


def _params_of(row) -> dict:
    """The parameters of a best-of-search row (``fmt_params`` text) as a dict."""
    p = row["params"]
    if p == "-":
        return {}
    if p.startswith("s = "):
        return {"s": int(p[4:])}
    return dict(zip(("B", "W", "lam"), map(int, p.strip("()").split(", "))))


def _series(rows, part, family, x, **match):
    """``(xs, runtime / GC's)`` of ``family``'s rows of ``part`` (matching ``match``)."""
    return zip(*sorted((r[x], r["relative_to_gc"]) for r in rows if r["part"] == part and
                       r["family"] == family and all(r[k] == v for k, v in match.items())))


def _figure(x):
    rows, prof, J = x["rows"], x["prof"], x["J"]
    fig, axes = figure(1, 3, (19, 5.6))
    main, t1 = _pick(rows, "best of App. J search"), _pick(rows, "Table 1's parameters")
    ax, x, bottom = axes[0], np.arange(len(FAMILIES)), np.zeros(len(FAMILIES))
    for key, color, label in (("base_s", "silver", "base: mu-rule round time at load 0"),
                              ("load_s", "tab:orange", "load: L alpha per round"),
                              ("waitout_s", "tab:red", "wait-outs: until the slowest")):
        v = np.array([main[f][key] for f in FAMILIES])
        ax.bar(x, v, 0.6, bottom=bottom, color=color, label=label)
        bottom += v
    for i, f in enumerate(FAMILIES):
        ax.annotate(f"{main[f]['params'].replace('-', 'wait for all')}\n"
                    f"{plural(main[f]['waitouts'], 'wait-out')}",
                    (i, bottom[i]), xytext=(0, 8), textcoords="offset points", ha="center",
                    fontsize=8)
    ax.plot(x, [t1[f]["runtime_s"] for f in FAMILIES], "kx", ms=9, mew=2,
            label="Table 1's parameters on this profile")
    ax.set_xticks(x, [LABELS[f] for f in FAMILIES])
    ax.set_ylim(0, bottom.max() * 1.2)
    panel(ax, f"(a) App. J estimate of {J} jobs, {prof.label}, alpha = {prof.alpha:.3f}\n"
          "best parameters with T <= 3 (labels: parameters, wait-outs)",
          ylabel="estimated run time (s)", grid="y")
    colors = {"m-sgc": "tab:green", "sr-sgc": "tab:orange", "uncoded": "tab:blue"}
    for f, c in colors.items():
        for al, ls in ((prof.fit, "--"), (prof.alpha, "-")):
            axes[1].plot(*_series(rows, "jobs sweep", f, "jobs", alpha=al), color=c, ls=ls,
                         label=f"{LABELS[f]}, ours, alpha = {al:.3g}")
        axes[1].plot(*_series(rows, "authors' App. J estimate", f, "jobs"), color=c, ls=":",
                     marker="o", ms=4, label=f"{LABELS[f]}, authors' estimate, their profile")
        axes[1].plot([480], [TABLE1[f][2] / TABLE1["gc-seq"][2]], "*", color=c, ms=13)
        axes[2].plot(*_series(rows, "alpha sweep", f, "alpha"), color=c, marker="o", ms=4,
                     label=LABELS[f])
    axes[1].plot([], [], "k*", ms=10, ls="none", label="Table 1, measured (480 jobs)")
    plain_log(axes[1], "x")
    panel(axes[1], "(b) run time relative to GC against the number of jobs J",
          "jobs J (log scale)", "run time / GC's run time (best parameters each)")
    for al, text in ((prof.fit, "this profile's fit"), (prof.alpha, "scaled to Table 1's batch")):
        axes[2].axvline(al, color="gray", ls="--", lw=1)
        axes[2].annotate(text, (al, 1.0), xytext=(3, 3), textcoords="offset points",
                         fontsize=8, rotation=90, va="bottom")
    panel(axes[2], f"(c) run time relative to GC against alpha ({J} jobs)",
          "alpha: seconds per unit of normalized load", "run time / GC's run time")
    for ax in axes[1:]:
        ax.axhline(1.0, color="gray", ls=":", lw=1)
    for ax, kw in zip(axes, ({"loc": "lower left"}, {"ncol": 2, "fontsize": 6.5}, {})):
        ax.legend(**{"fontsize": 7.5, **kw})
    return titled(fig, f"Paper 4, Table 1 as App. J estimates: no coding vs GC vs SR-SGC vs "
                  f"M-SGC (n = {N}, mu = {MU:g}, lower is better)")


TABLE1_EXPERIMENT = Experiment(
    "sgc-table1", "Paper 4, Table 1: sequential GC vs GC vs no coding (App. J estimates)",
    "paper 4, Sec. 4.2, Table 1 and App. J", TABLE1_CLAIM, number=4, setup=_setup,
    configs=_configs, measure=_measure, analyse=_analyse, plot=_figure, ours=_ours,
    claims=_claims)
SPECS = {TABLE1_EXPERIMENT.name: TABLE1_EXPERIMENT}
