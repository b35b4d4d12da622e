"""Paper 2 (Su, Sukhndandan, Li, *On Arbitrary Ignorance of Stragglers with Gradient Coding*),
Sec. VIII: its three experiments on the virtual clock.

``isgc-time-per-step`` -- Sec. VIII-B, Fig. 11: ``n = 24`` workers, exponential delays of mean
1.5 s (a) and 3 s (b) added on 12 or 24 workers; synchronous SGD (``uncoded``, wait for all),
GC (``gc-cr`` with ``s = c - 1 = 1``, wait until decodable = the fastest 23), IS-SGD
(``ignore``) and IS-GC (``isgc-fr`` / ``isgc-cr`` with ``c = 2``) waiting for the ``w`` fastest.
A step costs ``c T0`` of compute (``T0`` per partition) plus the delay.  The paper gives no
``T0`` (ResNet-18 on ImageNet, batch 64): the figure is simulated at ``T0_REF``, where every
claim is judged (its setting says so), and each row's ``why`` gives the ``T0`` over which it holds,
from the exact expectation ``E[t] = c T0 + E[D_(w)]`` (``D_(w)`` the w-th smallest delay:
``mean * sum 1/(k - i)`` over the delayed workers), checked against simulations.

``isgc-recovery`` and ``isgc-hr-tradeoff`` (Fig. 12, 13) are in ``isgc_training``; the helpers
here (``SumTrainer``, ``holds_over``) are shared; exact recovered shares are in ``isgc_exact``.
"""

from __future__ import annotations

import numpy as np

from ..registry import make_code
from ..sim import All, Fastest, Trainer, UntilDecodable, simulate
from ..stragglers import Compute, Exponential
from ._experiment import Context, Experiment, derive_seed, find
from ._ledger import Claim, holds
from ._plot import figure, panel, titled


class SumTrainer(Trainer):
    """Paper 2's update (Sec. III): ``beta -= lr * sum_{i in I} g_i`` with ``g_i`` the mean
    gradient of partition ``i``'s mini-batch over the full batch; a partial recovery gives a
    proportionally shorter step (``Trainer`` divides by the recovered samples instead)."""

    def step(self, round, recovered):
        G, counts = self.partial_gradients(round)
        if not np.any(recovered):
            self.steps_skipped += 1
            return
        self.w = self.w - self.lr * (recovered @ G) / counts.sum()


COLORS = {"sync SGD": "black", "GC": "tab:purple", "IS-SGD": "tab:blue",
          "IS-GC FR": "tab:red", "IS-GC CR": "tab:orange"}
STYLE = {"IS-SGD": "o-", "IS-GC FR": "s-", "IS-GC CR": "x--"}   # FR and CR often coincide


def holds_over(grid, mask, name="T0", unit=" s") -> str:
    """Where on ``grid`` (sorted) ``mask`` holds, in words: ``T0 <= 1.03 s``, ``0.58 <= T0 <=
    0.76 s``, ``no T0 in 0.01-4.00 s`` (the ends of the grid are not bounds)."""
    runs, start = [], None
    for x, ok, nxt in zip(grid, mask, list(mask[1:]) + [False]):
        start = x if ok and start is None else start
        if ok and not nxt:
            runs.append(f"all {name} in {grid[0]:g}-{grid[-1]:g}{unit}" if start == grid[0]
                        and x == grid[-1] else f"{name} <= {x:.2f}{unit}" if start == grid[0]
                        else f"{name} >= {start:.2f}{unit}" if x == grid[-1]
                        else f"{start:.2f} <= {name} <= {x:.2f}{unit}")
            start = None
    return " and ".join(runs) if runs else f"no {name} in {grid[0]:g}-{grid[-1]:g}{unit}"


# ============================================================================ Fig. 11
N11, C11 = 24, 2                   # workers, partitions per worker
T0_REF = 0.7                       # compute s per partition of the simulated figure (swept)
T0_GRID = np.round(np.arange(0.01, 4.0001, 0.01), 2)      # the closed-form sweep
TOL11 = 0.04                       # "up to 74.9 %": within 4 % relative (71.9-77.9 %)

TIME_CLAIM = (
    "ResNet-18 on ImageNet, n = 24 workers, batch 64; exponential delays added before sending "
    "on 12 or 24 workers; c = 2 for GC (tolerates one straggler) and IS-GC.  Mean delay 1.5 s "
    "(Fig. 11(a)): synchronous SGD and GC suffer; GC takes even more time than sync SGD "
    "(higher c); IS-GC takes much less time per step thanks to choosing w, up to 74.9 % less. "
    "IS-GC is slower per step than IS-SGD (higher c), but at mean delay 3 s (Fig. 11(b)) the "
    "difference is under 10 %.  FR and CR have very similar per-step time.")


def delay_order_mean(mean, k, w, n=N11) -> float:
    """``E[D_(w)]``: the w-th smallest of ``n`` delays, ``k`` of them i.i.d. ``Exp(mean)`` and
    the others 0 (exponential order statistics: ``mean * sum_{i<j} 1/(k - i)``,
    ``j = w - n + k``)."""
    j = w - (n - k)
    return 0.0 if j <= 0 else mean * sum(1 / (k - i) for i in range(j))


def step_mean(scheme, T0, mean, k, w=None) -> float:
    """Exact expected time per step: ``c T0`` + the delay of the worker waited for last."""
    if scheme == "sync SGD":
        return T0 + delay_order_mean(mean, k, N11)
    if scheme == "GC":
        return C11 * T0 + delay_order_mean(mean, k, N11 - C11 + 1)
    return (1 if scheme == "IS-SGD" else C11) * T0 + delay_order_mean(mean, k, w)


def sweep11(T0, ws) -> dict:
    """The quantities of Fig. 11's claims at compute ``T0`` per partition (closed form, %):
    ``best`` IS-GC reduction vs sync SGD over ``ws``, ``gc`` GC vs sync SGD, ``gap`` IS-GC vs
    IS-SGD at ``w = n`` and ``gapmax`` its largest over ``ws``; keyed by (mean delay, k)."""
    out = {}
    for mean in (1.5, 3.0):
        for k in (12, 24):
            sync = step_mean("sync SGD", T0, mean, k)
            out["best", mean, k] = 100 * (1 - min(step_mean("IS-GC", T0, mean, k, w)
                                                  for w in ws) / sync)
            out["gc", mean, k] = 100 * (step_mean("GC", T0, mean, k) / sync - 1)
            gap = {w: 100 * (step_mean("IS-GC", T0, mean, k, w)
                             / step_mean("IS-SGD", T0, mean, k, w) - 1) for w in (*ws, N11)}
            out["gap", mean, k], out["gapmax", mean, k] = gap[N11], max(gap.values())
    return out


PANELS = [(mean, k) for mean in (1.5, 3.0) for k in (12, 24)]    # (delay mean, delayed)
SIZES11 = {"rounds": (300, 3000),
           "ws": ((1, 4, 8, 12, 16, 20, 23, 24),
                  (1, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 23, 24)),
           "sweep_sim": ((0.25, 1.0, 2.0), (0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0))}


def _time_schemes():
    """The schemes waiting for the ``w`` fastest: IS-SGD and IS-GC FR / CR (``c = 2``)."""
    return [("IS-SGD", make_code("ignore", n=N11)),
            ("IS-GC FR", make_code("isgc-fr", n=N11, c=C11)),
            ("IS-GC CR", make_code("isgc-cr", n=N11, c=C11))]


def _time_configs(ctx: Context) -> list[tuple]:
    """``(panel, scheme, code, wait, w, T0, part)``: sync SGD and GC per panel, every panel x
    scheme x ``w`` at ``T0_REF``, then the swept ``T0`` (sync SGD, GC, IS-SGD / IS-GC FR at
    ``w = 1`` and ``n``)."""
    sync, gc = make_code("uncoded", n=N11), make_code("gc-cr", n=N11, s=C11 - 1)
    codes = dict(_time_schemes())

    def fixed(pi, T0, part):
        return [(pi, "sync SGD", sync, All(), N11, T0, part),
                (pi, "GC", gc, UntilDecodable(), N11 - C11 + 1, T0, part)]
    configs = [c for pi in range(len(PANELS)) for c in fixed(pi, T0_REF, "figure")]
    configs += [(pi, name, code, Fastest(w), w, T0_REF, "figure") for pi in range(len(PANELS))
                for name, code in codes.items() for w in ctx.sizes["ws"]]
    for T0 in ctx.sizes["sweep_sim"]:
        for pi in range(len(PANELS)):
            configs += fixed(pi, T0, "sweep")
            configs += [(pi, name, codes[name], Fastest(w), w, T0, "sweep") for name, w in
                        (("IS-SGD", 1), ("IS-SGD", N11), ("IS-GC FR", 1), ("IS-GC FR", N11))]
    return configs


def _time_measure(ctx: Context, config) -> dict:
    """One simulation: the same seed for every scheme of a panel, so the same delay draws
    (paper: same seeds)."""
    pi, name, code, wait, w, T0, part = config
    (mean, k), rounds = PANELS[pi], ctx.sizes["rounds"]
    s = simulate(code, Exponential(mean, k), wait, rounds, compute=Compute(N11 * T0),
                 seed=derive_seed(ctx, 11, pi)).summary
    return {"part": part, "T0_s": T0, "delay_mean_s": mean, "delayed_workers": k,
            "scheme": name, "code": code.name,
            "c": 1 if code.name in ("uncoded", "ignore") else C11,
            "w": w, "time_per_step_s": s["mean_round_time_s"],
            "closed_form_s": step_mean(name, T0, mean, k, w),
            "recovered_pct": 100 * s["mean_recovered_fraction"], "rounds": rounds}


def _time_analyse(ctx: Context, rows) -> dict:
    """Every row's reduction vs sync SGD; the claims' quantities over ``T0_GRID``."""
    for r in rows:
        base = _t(rows, r["delay_mean_s"], r["delayed_workers"], "sync SGD", T0=r["T0_s"])
        r["reduction_vs_sync_pct"] = 100 * (1 - r["time_per_step_s"] / base)
    ws = ctx.sizes["ws"]
    sweep = [sweep11(T0, ws) for T0 in T0_GRID]
    dev = max(abs(r["time_per_step_s"] / r["closed_form_s"] - 1) for r in rows
              if r["closed_form_s"] > 0)
    ctx.notes.append(
        f"Model: compute {T0_REF:g} s per partition in the time-per-step panels (c = 2 -> "
        f"{C11 * T0_REF:g} s), exponential delay on k random workers per step "
        f"(`Exponential(mean, k)`), common random numbers across schemes.  The claims are swept "
        f"over T0 = {T0_GRID[0]:g}-{T0_GRID[-1]:g} s with the exact expectation c T0 + "
        f"E[D_(w)]; every simulated configuration (also at T0 = "
        + ", ".join(f"{t:g}" for t in ctx.sizes["sweep_sim"])
        + f" s, rows with part = sweep) is within {100 * dev:.1f} % of it.")
    ctx.notes.append("With 12 delayed workers the 12 undelayed ones are the fastest, so IS-SGD "
                     "and IS-GC are flat (pure compute time) up to w = 12.")
    return {"rows": rows, "sweep": sweep, "ws": ws, "rounds": ctx.sizes["rounds"]}


def _time_files(f) -> dict:
    sweep = f["sweep"]
    return {"sweep_t0.csv": "T0_s," + ",".join(f"{a}_{m:g}s_k{k}_pct" for a, m, k in sweep[0])
            + "\n" + "".join(f"{T0:g}," + ",".join(f"{v:.3f}" for v in s.values()) + "\n"
                             for T0, s in zip(T0_GRID, sweep))}


def _t(rows, mean, k, scheme, w=None, T0=T0_REF) -> float:
    """Simulated time per step of ``scheme`` (at ``w``, if given) at compute ``T0``."""
    at_w = {} if w is None else {"w": w}
    return find(rows, "time_per_step_s", T0_s=T0, delay_mean_s=mean, delayed_workers=k,
                scheme=scheme, **at_w)


def _time_figure(f):
    rows, rounds, sweep = f["rows"], f["rounds"], f["sweep"]
    fig, axes = figure(2, 3, (17, 8.8))
    for ax, (mean, k) in zip(axes[:, :2].ravel(), PANELS):
        for name, _ in _time_schemes():
            sel = [r for r in rows if r["scheme"] == name and r["delay_mean_s"] == mean
                   and r["delayed_workers"] == k and r["part"] == "figure"]
            ax.plot([r["w"] for r in sel], [r["time_per_step_s"] for r in sel], STYLE[name],
                    ms=5 if name == "IS-GC FR" else 6, mfc="none", color=COLORS[name],
                    label=f"{name} (c = {1 if name == 'IS-SGD' else C11}"
                    + ("; same time as FR)" if name == "IS-GC CR" else ")"))
        ax.axhline(_t(rows, mean, k, "sync SGD"), color=COLORS["sync SGD"], ls="--",
                   label="sync SGD (wait all 24)")
        ax.axhline(_t(rows, mean, k, "GC"), color=COLORS["GC"], ls=":", lw=2,
                   label="GC CR, c = 2 (wait 23)")
        panel(ax, f"delay ~ Exp(mean {mean:g} s) on {k} of {N11}; T0 = {T0_REF:g} s",
              "w (fastest workers waited for)", "average time per step (s)")
        ax.set_ylim(bottom=0)
    axes[0, 0].legend(fontsize=8)
    a, b = axes[:, 2]
    for k, ls in ((12, "--"), (24, "-")):
        a.plot(T0_GRID, [s["best", 1.5, k] for s in sweep], ls, color="tab:red",
               label=f"{k} delayed (exact)")
        b.plot(T0_GRID, [s["gc", 1.5, k] for s in sweep], ls, color=COLORS["GC"],
               label=f"GC / sync SGD - 1, 1.5 s, {k} delayed")
        b.plot(T0_GRID, [s["gap", 3.0, k] for s in sweep], ls, color="tab:green",
               label=f"IS-GC / IS-SGD - 1 at w = 24, 3 s, {k} delayed")
        sim = [r for r in rows if r["part"] == "sweep" and r["delayed_workers"] == k
               and r["delay_mean_s"] == 1.5 and r["scheme"] == "IS-GC FR" and r["w"] == 1]
        a.plot([r["T0_s"] for r in sim], [r["reduction_vs_sync_pct"] for r in sim], "o",
               mfc="none", color="tab:red", label="simulated" if k == 24 else None)
        gc = [r for r in rows if r["part"] == "sweep" and r["delayed_workers"] == k
              and r["delay_mean_s"] == 1.5 and r["scheme"] == "GC"]
        b.plot([r["T0_s"] for r in gc], [-r["reduction_vs_sync_pct"] for r in gc], "o",
               mfc="none", color=COLORS["GC"], label="simulated" if k == 24 else None)
    a.axhspan(74.9 * (1 - TOL11), 74.9 * (1 + TOL11), color="0.85", label="paper 74.9 % ± 4 %")
    for ax in (a, b):
        ax.axvspan(1.5, T0_GRID[-1], color="tab:purple", alpha=0.07,
                   label="GC slower than sync SGD (T0 > 1.5 s)" if ax is a else None)
        ax.legend(fontsize=7)
    b.axhline(0, color="black", lw=0.8)
    b.axhline(10, color="tab:green", lw=0.8, ls=":")
    panel(a, "best IS-GC reduction vs sync SGD, mean delay 1.5 s",
          "T0: compute per partition (s)", "reduction of time per step (%)")
    panel(b, "GC vs sync SGD (1.5 s) and IS-GC vs IS-SGD (3 s)",
          "T0: compute per partition (s)", "difference in time per step (%)")
    return titled(fig, f"Paper 2, Fig. 11: time per step, n = {N11} ({rounds} simulated steps "
                  f"per point); right: the claims over the unspecified compute time T0")


def _time_ours(f) -> str:
    rows, sweep, ws = f["rows"], f["sweep"], f["ws"]
    ref = sweep11(T0_REF, ws)
    best = {(m, k): max(r["reduction_vs_sync_pct"] for r in rows if r["part"] == "figure"
                        and r["scheme"].startswith("IS-GC") and r["delay_mean_s"] == m
                        and r["delayed_workers"] == k) for m in (1.5, 3.0) for k in (12, 24)}
    return (f"At T0 = {T0_REF:g} s per partition the best IS-GC reduction vs sync SGD is "
            f"**{best[1.5, 12]:.1f} % / {best[1.5, 24]:.1f} %** with mean delay 1.5 s (12 / 24 "
            f"delayed workers; exact {ref['best', 1.5, 12]:.1f} / {ref['best', 1.5, 24]:.1f} "
            f"%), the paper's 74.9 % panel, and {best[3.0, 12]:.1f} / {best[3.0, 24]:.1f} % at "
            f"3 s.  GC vs sync SGD: {ref['gc', 1.5, 24]:+.1f} % (1.5 s) and "
            f"{ref['gc', 3.0, 24]:+.1f} % (3 s), 24 delayed.  The ledger rows give, for each "
            f"claim, the compute times T0 over which it holds (closed form over "
            f"{T0_GRID[0]:g}-{T0_GRID[-1]:g} s, `sweep_t0.csv`); GC slower than sync SGD and the "
            f"74.9 % need different T0.")


def _c1_identity(rng) -> bool:
    """Sec. VIII-A: with c = 1 FR, CR, IS-SGD and sync SGD / GC hold the same placement, and
    IS-GC recovers what IS-SGD does (checked on 200 random arrival sets of n = 24)."""
    codes = [make_code("isgc-fr", n=N11, c=1), make_code("isgc-cr", n=N11, c=1),
             make_code("ignore", n=N11), make_code("uncoded", n=N11),
             make_code("gc-cr", n=N11, s=0)]
    same = all(np.array_equal(a.B != 0, codes[0].B != 0) for a in codes)
    for _ in range(200):
        S = rng.choice(N11, int(rng.integers(1, N11 + 1)), replace=False)
        fr = [c.decode(S, rng=rng).recovered_fraction for c in codes[:3]]
        exact = [c.decode(S, rng=rng).exact for c in codes[3:]]   # sync SGD / GC: all needed
        same &= np.allclose(fr, S.size / N11) and all(e == (S.size == N11) for e in exact)
    return bool(same)


def _diff_pct(fig, a, b, **only) -> list[float]:
    """``100 (t_a / t_b - 1)`` for scheme ``a`` vs ``b`` at every w and panel of ``fig`` (those
    matching ``only``, e.g. ``delay_mean_s=3.0``)."""
    return [100 * (r["time_per_step_s"] / find(
        fig, "time_per_step_s", scheme=b, w=r["w"], delay_mean_s=r["delay_mean_s"],
        delayed_workers=r["delayed_workers"]) - 1) for r in fig if r["scheme"] == a
        and all(r[k] == v for k, v in only.items())]


#: the setting of every Fig. 11 row but Sec. VIII-A's
SETTING11 = (f"stand-in: a virtual clock, c T0 of compute (T0 = {T0_REF:g} s per partition; the "
             "paper gives none) plus the exponential delays, for ResNet-18 on ImageNet")


def _time_claims(f) -> list:
    """Fig. 11's ledger rows, each judged on the figure's simulation at ``T0_REF``; ``why``
    gives the compute times ``T0`` over which it holds (closed form over ``T0_GRID``)."""
    rows, sweep, ws = f["rows"], f["sweep"], f["ws"]
    fig = [r for r in rows if r["part"] == "figure"]
    S = {key: np.array([s[key] for s in sweep]) for key in sweep[0]}
    return [*_claims_11a(rows, fig, S, ws), *_claims_11b(rows, fig, S)]


def _claims_11a(rows, fig, S, ws) -> list:
    """Fig. 11(a): sync SGD and GC against IS-GC at mean delay 1.5 s."""
    W, at = "Sec. VIII-B, Fig. 11", f"at T0 = {T0_REF:g} s"
    ref = sweep11(T0_REF, ws)
    lo, hi = 74.9 * (1 - TOL11), 74.9 * (1 + TOL11)
    best15 = {k: max(r["reduction_vs_sync_pct"] for r in fig if r["delay_mean_s"] == 1.5
                     and r["delayed_workers"] == k and r["scheme"].startswith("IS-GC"))
              for k in (12, 24)}
    near = {k: (S["best", 1.5, k] >= lo) & (S["best", 1.5, k] <= hi) for k in (12, 24)}
    gc_slow = (S["gc", 1.5, 12] > 0) & (S["gc", 1.5, 24] > 0)
    slow = {(nm, k): _t(rows, 1.5, k, nm) / ((C11 if nm == "GC" else 1) * T0_REF)
            for nm in ("sync SGD", "GC") for k in (12, 24)}
    suffer = np.array([all(step_mean(nm, T0, 1.5, k) >= 1.5 * step_mean(nm, T0, 0.0, k)
                           for nm in ("sync SGD", "GC") for k in (12, 24)) for T0 in T0_GRID])
    gc_vs = {k: 100 * (_t(rows, 1.5, k, "GC") / _t(rows, 1.5, k, "sync SGD") - 1)
             for k in (12, 24)}
    return [
        Claim(f"{W}(a)", "sync SGD and GC suffer significantly from the stragglers (mean 1.5 s)",
              "suffer significantly", ", ".join(f"{nm} {slow[nm, 12]:.1f}x / {slow[nm, 24]:.1f}x"
                                                for nm in ("sync SGD", "GC"))
              + " the undelayed step (12 / 24 delayed, simulated)",
              holds(min(slow.values()) >= 1.5), "rule: 'significantly' read as at least 1.5x "
              f"the undelayed step, for sync SGD and GC, 12 and 24 delayed, {at}; it holds for "
              f"{holds_over(T0_GRID, suffer)} (exact): the delays add mean H_k = "
              f"{delay_order_mean(1.5, 12, N11):.2f} s (12 delayed) / "
              f"{delay_order_mean(1.5, 24, N11):.2f} s (24) to sync SGD's step",
              kind="direction", setting=SETTING11),
        Claim(f"{W}(a)", "GC (c = 2) takes much more time per step than sync SGD (mean 1.5 s)",
              "GC slower", f"{gc_vs[12]:+.1f} % / {gc_vs[24]:+.1f} % (12 / 24 delayed, "
              "simulated)", holds(min(gc_vs.values()) > 0),
              f"rule: GC strictly slower than sync SGD, 12 and 24 delayed, {at}: GC is faster "
              f"here; E[GC] - E[sync] = T0 - mean delay exactly (GC computes 2 T0 instead of T0 "
              f"and saves E[D_(24) - D_(23)] = mean by waiting for 23), so GC is slower only for "
              f"{holds_over(T0_GRID, gc_slow)} (>= 10 % slower: "
              f"{holds_over(T0_GRID, (S['gc', 1.5, 12] >= 10) & (S['gc', 1.5, 24] >= 10))}), "
              "where the best IS-GC reduction is at most "
              f"{max(S['best', 1.5, 12][gc_slow].max(), S['best', 1.5, 24][gc_slow].max()):.1f}"
              f" % (< {lo:.1f} %): no T0 gives both this and the 74.9 %; the paper's GC must pay "
              "a cost this model lacks (not described in the paper)",
              kind="direction", setting=SETTING11),
        Claim(f"{W}(a)", "IS-GC takes up to 74.9 % less time per step than sync SGD "
              "(mean delay 1.5 s)", 74.9, max(best15.values()), tol=TOL11,
              why=f"the best over w and FR / CR, {at}: {best15[12]:.1f} % (12 delayed) / "
              f"{best15[24]:.1f} % (24), simulated; the paper gives no T0 and the value depends on "
              f"it: within ±{TOL11:.0%} ({lo:.1f}-{hi:.1f} %) for "
              f"{holds_over(T0_GRID, near[12])} (12 delayed) or {holds_over(T0_GRID, near[24])}"
              f" (24 delayed), exact; higher below, lower above (the 3 s panel gives "
              f"{ref['best', 3.0, 24]:.1f} % {at})", setting=SETTING11, fmt="{:.1f}", unit="%"),
    ]


def _claims_11b(rows, fig, S) -> list:
    """Fig. 11: IS-GC against IS-SGD (a, b), FR against CR, and Sec. VIII-A's c = 1."""
    W, at = "Sec. VIII-B, Fig. 11", f"at T0 = {T0_REF:g} s"
    over = _diff_pct(fig, "IS-GC FR", "IS-SGD")
    fr_cr = max(map(abs, _diff_pct(fig, "IS-GC FR", "IS-GC CR"))) / 100
    gap = {(m, k): _diff_pct(fig, "IS-GC FR", "IS-SGD", delay_mean_s=m, delayed_workers=k,
                             w=N11)[0] for m in (1.5, 3.0) for k in (12, 24)}
    least3 = {k: min(_diff_pct(fig, "IS-GC FR", "IS-SGD", delay_mean_s=3.0, delayed_workers=k))
              for k in (12, 24)}
    marginal = S["gap", 3.0, 24] < S["gap", 1.5, 24]
    c1 = _c1_identity(np.random.default_rng(11))
    return [
        Claim(W, "IS-GC is slower per step than IS-SGD (higher c)", "IS-GC slower",
              f"{min(over):+.0f} % to {max(over):+.0f} % at equal w", holds(min(over) > 0),
              f"rule: IS-GC FR strictly slower than IS-SGD at every w and panel simulated, {at}; "
              "it holds for every T0 > 0 by construction: the same delays plus T0 more compute",
              kind="direction", setting=SETTING11),
        Claim(f"{W}(b)", "at mean delay 3 s the IS-GC / IS-SGD difference can be reduced to "
              "under 10 %", "< 10 %", f"least over w: {least3[12]:+.1f} % / {least3[24]:+.1f} "
              "% (12 / 24 delayed, simulated)", holds(max(least3.values()) < 10),
              f"rule: the smallest difference over w below 10 %, 12 and 24 delayed, {at}; at "
              f"w = 24 (the smallest, T0 / (T0 + 3 H_k)) it holds for "
              f"{holds_over(T0_GRID, S['gap', 3.0, 12] < 10)} (12 delayed) / "
              f"{holds_over(T0_GRID, S['gap', 3.0, 24] < 10)} (24), exact; at every w only for "
              f"{holds_over(T0_GRID, S['gapmax', 3.0, 24] < 10)} (24 delayed) and "
              f"{holds_over(T0_GRID, S['gapmax', 3.0, 12] < 10)} (12: at w <= 12 both wait "
              "only for undelayed workers, a 100 % gap)", kind="value", setting=SETTING11),
        Claim(f"{W}(b)", "the IS-GC overhead becomes marginal when workers straggle more "
              "(3 s vs 1.5 s)", "smaller gap at 3 s", "w = 24: " + ", ".join(
                  f"{gap[1.5, k]:+.1f} % -> {gap[3.0, k]:+.1f} % ({k} delayed)" for k in (12, 24))
              + " (simulated)", holds(all(gap[3.0, k] < gap[1.5, k] for k in (12, 24))),
              f"rule: the difference at w = 24 strictly smaller at 3 s than at 1.5 s, 12 and 24 "
              f"delayed, {at}; it holds for {holds_over(T0_GRID, marginal)} (24 delayed, exact): "
              "at every w > n - k the gap T0 / (T0 + E[D_(w)]) falls as the mean delay grows; at "
              "w <= n - k it stays 100 %", kind="direction", setting=SETTING11),
        Claim(W, "FR and CR in IS-GC have very similar time per step", "very similar",
              "identical" if fr_cr == 0 else f"differ by at most {100 * fr_cr:.2g} %",
              holds(fr_cr <= 0.05), f"rule: FR's and CR's simulated times within 5 % at every w "
              f"and panel, {at}; by construction: the same load c/n and the same delays; the "
              "placement only changes what is decoded, not when the w-th worker arrives",
              kind="direction", setting=SETTING11),
        Claim("Sec. VIII-A", "with c = 1 FR, CR (and HR) coincide, GC becomes sync SGD and "
              "IS-GC becomes IS-SGD", "identical", "identical" if c1 else "NOT identical",
              holds(c1), "rule: the same placements, and the same shares decoded on 200 random "
              "arrival sets (n = 24)", kind="statement"),
        Claim.not_attempted(W, "absolute time per step of ResNet-18 on ImageNet (24 HPC "
                            "workers, batch 64)", "Fig. 11 curves", ours="not simulated",
                            why="no ResNet-18 / ImageNet cluster here; our seconds are c T0 + "
                            "delay with T0 swept", kind="figure"),
    ]


TIME_PER_STEP = Experiment(
    "isgc-time-per-step", "Paper 2: time per step of sync SGD, GC, IS-SGD, IS-GC (n = 24)",
    "Su et al., IS-GC, Sec. VIII-B, Fig. 11", TIME_CLAIM, number=2, sizes=SIZES11,
    configs=_time_configs, measure=_time_measure, analyse=_time_analyse, plot=_time_figure,
    ours=_time_ours, claims=_time_claims, files=_time_files)
SPECS = {TIME_PER_STEP.name: TIME_PER_STEP}
