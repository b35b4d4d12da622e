"""Paper 4 (sequential gradient coding): Table 1 on delay profiles.

``sgc-table1`` -- Sec. 4.2, Table 1, with App. J's parameter selection.  The runtime of ``J`` jobs
for no coding, GC, SR-SGC and M-SGC is *estimated* on a delay profile as in App. J: μ-rule
stragglers (μ = 1), a wait-out until the slowest worker whenever the round's stragglers leave
the scheme's design model, and a load-adjusted profile ``delay + (L - base load) α`` with ``α``
fitted on the Canada load sweep.  Parameters come from App. J's exhaustive search
(``gradcode.sim.tune``: every valid ``s`` / ``(B, W, λ)`` with delay ``T <= max_delay``), and
the paper's Table 1 parameters are evaluated on the same profile too.  Profiles: the real
Lambda traces (``--traces`` or ../shared/traces; the 30-round Canada reference profile, so
``J = 30 - max_delay``, as the authors' ``max_delay = rounds profiled - jobs``) and a synthetic
Gilbert-Elliott profile (the only one when the traces are absent).  Table 1 itself is measured
training of 480 jobs, so the comparison is of runtimes *relative to GC*.

``sgc-loads`` (App. F, Fig. 11: the loads against the lower bound) is in ``sgc_loads``.
"""

from __future__ import annotations

import numpy as np

from ..codes import make_code
from ..sim import best_per_family, estimate_runtime, tune
from ..stragglers import fit_load_slope, identify_stragglers, load_trace, traces_dir
from ._common import Context, Headline, Output, plural
from ._plot import bar_x, panel

N = 256
MU = 1.0
FAMILIES = ("uncoded", "gc-seq", "sr-sgc", "m-sgc")
LABELS = {"uncoded": "no coding", "gc-seq": "GC", "sr-sgc": "SR-SGC", "m-sgc": "M-SGC"}
#: paper 4, Table 1: parameters, normalized load, measured run time of 480 jobs (s)
TABLE1 = {"m-sgc": ({"B": 1, "W": 2, "lam": 27}, 0.008, 891.37),
          "sr-sgc": ({"B": 2, "W": 3, "lam": 23}, 0.051, 994.22),
          "gc-seq": ({"s": 15}, 0.062, 1064.96),
          "uncoded": ({}, 0.004, 1307.79)}
DEFAULT_ALPHA = 1.12     # s per unit of normalized load, the Canada fit (used without traces)

TABLE1_CLAIM = (
    "256 AWS Lambda workers, 4 CNNs on MNIST trained concurrently, J = 480 jobs, mu = 1, "
    "parameters chosen by App. J's search on an 80-round reference profile; measured run "
    "time (mean of 10): M-SGC (B = 1, W = 2, lambda = 27; load 0.008) 891 s, SR-SGC (2, 3, 23; "
    "load 0.051) 994 s, GC (s = 15; load 0.062) 1065 s, no coding 1308 s.  'M-SGC achieves 16% "
    "lower run time while maintaining smaller normalized load compared to the classical GC "
    "scheme'; SR-SGC slightly improves on GC; every coding scheme clearly beats no coding.")


def _synthetic_profile(rng, rounds, n=N):
    """Gilbert-Elliott stragglers (good -> bad 2 %, bad -> good 50 %) over a base response time."""
    base = 0.7 + rng.gamma(9.0, 0.015, (rounds, n))
    bad = np.zeros(n, bool)
    slow = np.zeros((rounds, n), bool)
    for t in range(rounds):
        u = rng.random(n)
        bad = np.where(bad, u >= 0.5, u < 0.02)
        slow[t] = bad
    return base + slow * rng.uniform(0.5, 1.5, (rounds, n))


def _fmt_params(family, params) -> str:
    if family == "uncoded":
        return "-"
    if family == "gc-seq":
        return f"s = {params['s']}"
    return f"(B, W, λ) = ({params['B']}, {params['W']}, {params['lam']})"


def _evaluate(label, D, jobs, max_delay, alpha, ctx):
    """App. J on one profile: the search's best per family, and the paper's Table 1 parameters."""
    rows = []
    searched = tune(D, jobs=jobs, mu=MU, alpha=alpha, base_load=0.0, max_delay=max_delay,
                    families=FAMILIES, progress=ctx.progress)
    best = best_per_family(searched)
    for fam in FAMILIES:
        b = best[fam]
        rows.append({"profile": label, "selection": "best of App. J search", "family": fam,
                     "scheme": LABELS[fam], "params": _fmt_params(fam, b["params"]),
                     "load": b["load"], "T": b["T"], "jobs": jobs, "runtime_s": b["runtime_s"],
                     "waitouts": b["waitouts"], "candidates": sum(r["family"] == fam
                                                                  for r in searched)})
    for fam in FAMILIES:
        params = TABLE1[fam][0]
        code = make_code(fam, n=D.shape[1], **params)
        if D.shape[0] < jobs + code.T:
            continue
        e = estimate_runtime(code, D, jobs=jobs, mu=MU, alpha=alpha, base_load=0.0)
        rows.append({"profile": label, "selection": "paper's Table 1 parameters", "family": fam,
                     "scheme": LABELS[fam], "params": _fmt_params(fam, params), "load": e.load,
                     "T": int(code.T), "jobs": jobs, "runtime_s": e.runtime_s,
                     "waitouts": e.waitouts, "candidates": 1})
    for sel in {r["selection"] for r in rows}:
        gc = next(r["runtime_s"] for r in rows if r["selection"] == sel and
                  r["family"] == "gc-seq")
        for r in rows:
            if r["selection"] == sel:
                r["relative_to_gc"] = r["runtime_s"] / gc
                r["paper_relative_to_gc"] = TABLE1[r["family"]][2] / TABLE1["gc-seq"][2]
                r["paper_runtime_s"] = TABLE1[r["family"]][2]
    return rows


def run_table1(ctx: Context) -> Output:
    import matplotlib.pyplot as plt

    rng = np.random.default_rng(ctx.seed)
    max_delay = 2 if ctx.quick else 5
    alpha, intercept, real = DEFAULT_ALPHA, None, None
    folder = ctx.traces or traces_dir()
    sweep = sorted(folder.glob("canada-w256-r30-load*.csv")) if folder else []
    if sweep:
        profiles = [(float(p.stem.split("load")[1].replace("_", ".")), load_trace(p))
                    for p in sweep]
        alpha, intercept = fit_load_slope(profiles)
        base = min(profiles, key=lambda lp: lp[0])
        real = base[1]
        real_jobs = 20 if ctx.quick else real.shape[0] - max_delay
    else:
        ctx.notes.append("Real Lambda traces not found: only the synthetic Gilbert-Elliott "
                         "profile is used (pass --traces DIR).")
    synth_jobs = 20 if ctx.quick else 40
    jobs_list = []
    if real is not None:
        jobs_list.append(("Lambda Canada (real)", real[:real_jobs + max_delay], real_jobs))
    jobs_list.append(("synthetic GE",
                      _synthetic_profile(rng, synth_jobs + max_delay), synth_jobs))
    rows = ctx.rows
    for label, D, jobs in ctx.bar(jobs_list, desc="sgc-table1: App. J search per profile"):
        rows += _evaluate(label, D, jobs, max_delay, alpha, ctx)

    main = jobs_list[0][0]
    best = {r["family"]: r for r in rows if r["profile"] == main
            and r["selection"] == "best of App. J search"}
    paper_p = {r["family"]: r for r in rows if r["profile"] == main
               and r["selection"] == "paper's Table 1 parameters"}
    D0, jobs0 = jobs_list[0][1], jobs_list[0][2]
    S = identify_stragglers(D0, MU)
    per_round = S.sum(axis=1)
    repeat = (S[1:] & S[:-1]).any(axis=1)
    extra = (1 + MU) * alpha * (best["gc-seq"]["load"] - best["m-sgc"]["load"])

    if intercept is not None:
        ctx.notes.append(
            f"Real profile: {sweep[0].parent}/{sweep[0].name} and the load sweep "
            f"{', '.join(p.name.split('load')[1][:-4] for p in sweep)}; App. J's fit gives "
            f"alpha = {alpha:.3f} s per unit of normalized load (intercept {intercept:.3f} s).  "
            f"Of the profile's {real.shape[0]} rounds the first {D0.shape[0]} are used: J = "
            f"{jobs0} jobs with delay T <= {max_delay} (the authors' reference profile covers "
            f"T_probe = 80 jobs).")
    else:
        ctx.notes.append(f"alpha = {alpha:g} s per unit load (the Canada fit, assumed).")
    ctx.notes.append(
        f"Search: every valid parameter set with T <= {max_delay} ("
        + ", ".join(f"{LABELS[f]} {best[f]['candidates']}" for f in FAMILIES)
        + " candidates on the first profile), mu = 1, base load 0 (the reference profile's "
        "workers compute nothing), wait-out rule 'model' (the authors').")
    ctx.notes.append(
        f"Synthetic GE profile: {synth_jobs + max_delay} rounds x {N} workers, base 0.7 s + "
        "Gamma(9, 0.015) s, Gilbert-Elliott slow state (enter 2 %, leave 50 %) adding "
        "U(0.5, 1.5) s; same alpha.")
    headline = _table1_headline(best, paper_p, main)
    ours = _table1_ours(rows, jobs_list, best, paper_p, per_round, repeat, extra, main)
    return Output(rows, _table1_figure(plt, rows, jobs_list), ours, headline=headline)


def _table1_headline(best, paper_p, main) -> list:
    rel = {f: best[f]["relative_to_gc"] for f in FAMILIES}
    prel = {f: best[f]["paper_relative_to_gc"] for f in FAMILIES}
    close = abs(rel["m-sgc"] - prel["m-sgc"]) < 0.05
    why_m = ("agrees" if close else "differs") + (f": on this profile M-SGC's best parameters "
             f"{best['m-sgc']['params'].split('= ')[-1]} wait out {best['m-sgc']['waitouts']} of "
             f"{best['m-sgc']['jobs'] + best['m-sgc']['T']} rounds vs GC's "
             f"{best['gc-seq']['waitouts']} (workers often straggle in consecutive rounds, "
             "outside its bursty model)" + ("" if close else ", which cancels the ~8x smaller "
                                            "load") + "; Table 1 is measured training, ours "
             "App. J estimates")
    return [
        Headline(f"M-SGC run time / GC run time ({main}, App. J estimate)", prel["m-sgc"],
                 rel["m-sgc"], why_m, "{:.3f}"),
        Headline("SR-SGC run time / GC run time", prel["sr-sgc"], rel["sr-sgc"],
                 f"{'close' if abs(rel['sr-sgc'] - prel['sr-sgc']) < 0.1 else 'differs'}: "
                 f"the paper's 'slight improvement' ({100 * (prel['sr-sgc'] - 1):+.0f} %) is "
                 f"{100 * (rel['sr-sgc'] - 1):+.1f} % here; SR-SGC's load "
                 f"({best['sr-sgc']['load']:.3f}) is close to GC's ({best['gc-seq']['load']:.3f}) "
                 f"and it waits out {best['sr-sgc']['waitouts']} rounds vs GC's "
                 f"{best['gc-seq']['waitouts']}", "{:.3f}"),
        Headline("no coding run time / GC run time", prel["uncoded"], rel["uncoded"],
                 ("agrees" if abs(rel["uncoded"] - prel["uncoded"]) < 0.1 else
                  "same direction, different size") + ": no coding waits for the slowest "
                 "worker every round", "{:.3f}"),
        Headline("M-SGC normalized load (selected parameters)", TABLE1["m-sgc"][1],
                 best["m-sgc"]["load"], "agrees: M-SGC's load is at most 2/n = 0.0078 "
                 "whatever (B, W, λ)", "{:.4f}"),
        Headline("GC: selected s", float(TABLE1["gc-seq"][0]["s"]),
                 float(best["gc-seq"]["params"].split("= ")[1]),
                 "close: the profile has about this many stragglers per round", "{:.0f}"),
        Headline("paper's Table 1 parameters on our profile: M-SGC / GC",
                 prel["m-sgc"], paper_p["m-sgc"]["relative_to_gc"] if "m-sgc" in paper_p
                 else float("nan"),
                 ("agrees" if abs(paper_p["m-sgc"]["relative_to_gc"] - prel["m-sgc"]) < 0.05
                  else "differs, as above") + ": M-SGC (1, 2, 27) waits out "
                 f"{paper_p['m-sgc']['waitouts']} rounds, GC (s = 15) "
                 f"{paper_p['gc-seq']['waitouts']}" if "m-sgc" in paper_p else "n/a",
                 "{:.3f}"),
    ]


def _table1_ours(rows, jobs_list, best, paper_p, per_round, repeat, extra, main) -> str:
    parts = []
    for label, _, jobs in jobs_list:
        r = {x["family"]: x for x in rows if x["profile"] == label
             and x["selection"] == "best of App. J search"}
        parts.append(f"{label}, {jobs} jobs: " + ", ".join(
            f"{LABELS[f]} {r[f]['runtime_s']:.1f} s ({r[f]['params']}, load "
            f"{r[f]['load']:.4f}, {plural(r[f]['waitouts'], 'wait-out')}; "
            f"{r[f]['relative_to_gc']:.3f}x "
            f"GC)" for f in ("m-sgc", "sr-sgc", "gc-seq", "uncoded")))
    m_vs_gc = 100 * (1 - best["m-sgc"]["relative_to_gc"])
    text = (
        "Estimated run times (App. J), best parameters of the exhaustive search: "
        + "; ".join(parts) + f".  On {main} M-SGC is "
        + (f"{m_vs_gc:.1f} % faster" if m_vs_gc >= 0 else f"{-m_vs_gc:.1f} % slower")
        + " than GC (paper: 16.3 % faster, measured).  "
        + ("Why the gain is smaller here: the " if best["m-sgc"]["relative_to_gc"]
           > best["m-sgc"]["paper_relative_to_gc"] else "For reference: the ")
        + f"profile has {per_round.min()}-{per_round.max()} stragglers per round (median "
        f"{np.median(per_round):.0f}) and in {int(repeat.sum())} of {repeat.size} consecutive "
        "round pairs at least one worker straggles in both rounds, which breaks M-SGC's "
        "bursty model for small B and W and forces wait-outs (a wait-out lasts until the "
        "slowest worker), while GC's extra load is cheap on this profile: "
        f"(1 + mu) alpha (L_GC - L_M-SGC) = {extra:.3f} s per round.  No coding costs "
        f"{best['uncoded']['relative_to_gc']:.2f}x GC (paper 1.23x).  The paper's 16 % comes "
        "from measured training after selecting parameters on its own 80-job reference "
        "profile, on which M-SGC (1, 2, 27) was the best estimate; "
        + ("the real profile here has 30 rounds only, so the estimates rest on few rounds."
           if main.startswith("Lambda") else "the real traces were not found, so this is a "
           "synthetic profile only (pass --traces DIR)."))
    if "m-sgc" in paper_p:
        text += ("  With the paper's parameters on our profile: " + ", ".join(
            f"{LABELS[f]} {paper_p[f]['runtime_s']:.1f} s "
            f"({plural(paper_p[f]['waitouts'], 'wait-out')})"
            for f in ("m-sgc", "sr-sgc", "gc-seq", "uncoded")) + ".")
    return text


def _table1_figure(plt, rows, jobs_list):
    fig, axes = plt.subplots(1, 2, figsize=(14, 5.2), gridspec_kw={"width_ratios": [1.25, 1]})
    fams = ["uncoded", "gc-seq", "sr-sgc", "m-sgc"]
    x = np.arange(len(fams))
    colors = ["tab:blue", "tab:orange", "tab:green"]
    ax = axes[0]
    width = 0.8 / len(jobs_list)
    for k, (label, _, jobs) in enumerate(jobs_list):
        sel = [next(r for r in rows if r["profile"] == label and r["family"] == f
                    and r["selection"] == "best of App. J search") for f in fams]
        xs = bar_x(x, k, len(jobs_list), width)
        bars = ax.bar(xs, [r["runtime_s"] for r in sel], width, color=colors[k],
                      label=f"{label}, {jobs} jobs")
        for b, r in zip(bars, sel):
            txt = "wait for all" if r["family"] == "uncoded" else \
                r["params"].replace("(B, W, λ) = ", "")
            ax.annotate(f"{txt}\n{plural(r['waitouts'], 'wait-out')}",
                        (b.get_x() + b.get_width() / 2, b.get_height()), xytext=(0, 2),
                        textcoords="offset points", ha="center", va="bottom", fontsize=7)
    ax.set_xticks(x, [LABELS[f] for f in fams])
    panel(ax, "(a) App. J estimate, best parameters of the exhaustive search\n"
          "(labels: s or (B, W, λ), and rounds waited out)",
          ylabel="estimated run time of J jobs (s)", grid="y")
    ax.set_ylim(0, ax.get_ylim()[1] * 1.18)
    ax.legend(fontsize=8, loc="upper right")

    ax = axes[1]
    series = [("paper, Table 1 (measured, 480 jobs)", "black",
               [TABLE1[f][2] / TABLE1["gc-seq"][2] for f in fams])]
    for k, (label, _, _) in enumerate(jobs_list):
        for sel, hatch in (("best of App. J search", None), ("paper's Table 1 parameters", "//")):
            vals = [next((r["relative_to_gc"] for r in rows if r["profile"] == label and
                          r["family"] == f and r["selection"] == sel), np.nan) for f in fams]
            if np.isfinite(vals).any():
                series.append((f"ours, {label}, " + ("best parameters" if hatch is None
                                                     else "paper's parameters"),
                               colors[k], vals, hatch))
    width = 0.8 / len(series)
    for j, s in enumerate(series):
        label, color, vals = s[:3]
        hatch = s[3] if len(s) > 3 else None
        xs = bar_x(x, j, len(series), width)
        ax.bar(xs, vals, width, color=color if hatch is None else "white", edgecolor=color,
               hatch=hatch, label=label)
    ax.axhline(1.0, color="gray", ls=":", lw=1)
    ax.set_xticks(x, [LABELS[f] for f in fams])
    panel(ax, "(b) paper's measured ratios vs our estimated ones",
          ylabel="run time relative to GC (GC = 1)", grid="y")
    ax.set_ylim(0, max(1.45, ax.get_ylim()[1] * 1.05))
    ax.legend(fontsize=7, loc="upper right")
    fig.suptitle(f"Paper 4, Table 1: no coding vs GC vs SR-SGC vs M-SGC on delay profiles "
                 f"(n = {N}, mu = {MU:g}, lower is better)")
    fig.tight_layout()
    return fig


SPECS = {
    "sgc-table1": {"title": "Sequential GC vs GC vs no coding (paper 4, Table 1)",
                   "paper": "paper 4, Sec. 4.2, Table 1 and App. J",
                   "claim": TABLE1_CLAIM, "run": run_table1},
}
