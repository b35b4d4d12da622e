"""Paper 4 (sequential gradient coding): the normalized loads of App. F, Fig. 11.

``sgc-loads`` -- App. F, Fig. 11: normalized loads of SR-SGC and M-SGC (eq. 1) against W and
the lower bound of Theorem F.1 (eq. 2), at the figure's ``n = 20, B = 3, λ = 4``, and at
Table 1's scale ``n = 256, B = 2, λ = 23``; the gap M-SGC - bound is shown to shrink as
``O(1/W')``, ``W' = W - 1 + B`` (Remark F.1).

``sgc-table1`` (Sec. 4.2, Table 1 with App. J's parameter selection) is in ``sgc``.

Theorem-level statements of the paper are checked in ``theorems.sgc_*`` (the ``theorems``
experiment).
"""

from __future__ import annotations

import numpy as np

from ..analysis import load_lower_bound_f1, sgc_load
from ..registry import make_code
from ._experiment import Context, Experiment
from ._ledger import Claim, holds
from ._plot import figure, legend_below, panel, plain_log

SETTINGS = [("Fig. 11", 20, 3, 4), ("Table 1 scale", 256, 2, 23)]     # (name, n, B, λ)
#: the curves of panels (a), (b): row key -> (color, line style, label)
LOAD_STYLE = {"gc (s = lam)": ("tab:blue", "--", "GC, s = λ (T = 0)"),
              "sr-sgc": ("tab:orange", "-", "SR-SGC (T = B; W = xB + 1 only)"),
              "m-sgc": ("tab:green", "-", "M-SGC, eq. 1 (T = W - 2 + B)"),
              "lower_bound_f1": ("tab:red", ":", "lower bound, Thm F.1 (eq. 2)")}

LOADS_CLAIM = (
    "App. F, Fig. 11 (n = 20, B = 3, lambda = 4, W varied): normalized loads of SR-SGC and "
    "M-SGC against the lower bound of Theorem F.1 (eq. 2).  M-SGC is near-optimal: 'for fixed "
    "n, B and lambda, the gap between eq. 1 and eq. 2 decreases as O(1/W')', W' = W - 1 + B, "
    "and M-SGC is optimal when lambda = n - 1 or n (Remark F.1).  SR-SGC has a higher load "
    "but a shorter delay (T = B vs W - 2 + B).")


def _configs(ctx: Context) -> list[tuple]:
    """Every setting ``(name, n, B, λ)`` with every ``W = B + 1 .. w_max``."""
    return [(setting, W) for setting in SETTINGS
            for W in range(setting[2] + 1, ctx.sizes["w_max"] + 1)]


def _measure(ctx: Context, config) -> dict:
    """The loads of GC, SR-SGC, M-SGC (eq. 1), the lower bound (eq. 2), their gap, and
    M-SGC - bound at ``λ = n - 1`` and ``n``, for one setting and ``W``."""
    (name, n, B, lam), W = config
    sr = float(sgc_load("sr-sgc", n, B, W, lam)) if (W - 1) % B == 0 else np.nan
    m = float(sgc_load("m-sgc", n, B, W, lam))
    lb = float(load_lower_bound_f1(n, B, W, lam))
    opt = [float(sgc_load("m-sgc", n, B, W, x)) - float(load_lower_bound_f1(n, B, W, x))
           for x in (n - 1, n)]
    return {"setting": name, "n": n, "B": B, "lam": lam, "W": W,
            "T_sr_sgc": B, "T_m_sgc": W - 2 + B, "sr-sgc": sr, "m-sgc": m,
            "lower_bound_f1": lb, "gc (s = lam)": float(sgc_load("gc-seq", n, s=lam)),
            "gap": m - lb, "gap_times_Wprime": (m - lb) * (W - 1 + B),
            "m-sgc_minus_bound_lam_n-1": opt[0], "m-sgc_minus_bound_lam_n": opt[1]}


def _analyse(ctx: Context, rows) -> list[dict]:
    ctx.notes.append(f"W = B + 1 .. {ctx.sizes['w_max']}; the Table 1 scale setting uses "
                     "SR-SGC's Table 1 parameters (B = 2, λ = 23).")
    return rows


def _figure(rows):
    fig, axes = figure(1, 3, (17, 5.6))
    for tag, ax, setting in zip("ab", axes[:2], SETTINGS):
        _loads_panel(ax, tag, setting, [r for r in rows if r["setting"] == setting[0]])
    _gap_panel(axes[2], rows)
    fig.suptitle("Paper 4, App. F, Fig. 11: normalized loads vs W against the lower bound")
    legend_below(fig, axes[0], 0.12, bbox_to_anchor=(0.34, 0.0), ncol=2, fontsize=9,
                 title="(a), (b)")
    return fig


def _loads_panel(ax, tag, setting, sel):
    """Panel (a) or (b): the loads of one setting ``(name, n, B, λ)`` against W."""
    name, n, B, lam = setting
    for key, (color, ls, label) in LOAD_STYLE.items():
        pts = [(r["W"], r[key]) for r in sel if np.isfinite(r[key])]
        ax.plot(*zip(*pts), color=color, ls=ls, lw=2 if key == "lower_bound_f1" else 1.6,
                marker="o" if key == "sr-sgc" else None, ms=3, label=label)
    plain_log(ax, "x")
    if n > 50:      # loads from 2/n to 0.09: log scale, plain tick labels
        plain_log(ax, "y", subs=(1.0, 2.0, 5.0))
        ylabel = "normalized load per worker\n(fraction of a job per round; log scale)"
    else:
        ax.set_ylim(0, 0.3)
        ylabel = "normalized load per worker\n(fraction of a job per round)"
    panel(ax, f"({tag}) {name}: n = {n}, B = {B}, λ = {lam}",
          "W, window of the (B, W, λ) bursty model (rounds; log scale)", ylabel, which="both")


def _gap_panel(ax, rows):
    """Panel (c): M-SGC - bound against ``W'`` for both settings, next to ``c / W'``."""
    for (name, n, B, lam), color in zip(SETTINGS, ("tab:purple", "tab:brown")):
        sel = [r for r in rows if r["setting"] == name]
        Wp = np.array([r["W"] - 1 + B for r in sel], float)
        ax.plot(Wp, [r["gap"] for r in sel], color=color, lw=1.8,
                label=f"M-SGC - bound, n = {n}, B = {B}, λ = {lam}")
        c = sel[-1]["gap_times_Wprime"]
        ax.plot(Wp, c / Wp, color=color, ls=":", lw=1.2, label=f"{c:.3g} / W' (slope -1)")
    plain_log(ax, "x")
    ax.set_yscale("log")
    panel(ax, "(c) the gap shrinks as O(1/W')", "W' = W - 1 + B (rounds; log scale)",
          "load gap M-SGC - lower bound (log scale)", which="both")
    ax.legend(fontsize=8, loc="upper right")


def _ours(rows) -> str:
    """The summary paragraph of ``sgc-loads``."""
    parts = []
    for name, n, B, lam in SETTINGS:
        sel = [r for r in rows if r["setting"] == name]
        first, last = sel[0], sel[-1]
        srs = [r for r in sel if np.isfinite(r["sr-sgc"])]
        parts.append(
            f"{name} (n = {n}, B = {B}, λ = {lam}): M-SGC {first['m-sgc']:.4f} at W = "
            f"{first['W']} -> {last['m-sgc']:.4f} at W = {last['W']} vs bound "
            f"{first['lower_bound_f1']:.4f} -> {last['lower_bound_f1']:.4f}; gap x W' = "
            f"{first['gap_times_Wprime']:.4f} -> {last['gap_times_Wprime']:.4f}; SR-SGC "
            f"{srs[0]['sr-sgc']:.4f} -> {srs[-1]['sr-sgc']:.4f}, GC (s = λ) "
            f"{first['gc (s = lam)']:.4f}")
    return ("Closed forms (eq. 1, SR-SGC's (s + 1)/n with s = ceil(Bλ/(W - 1 + B)), eq. 2, "
            "eq. 3). " + "; ".join(parts) + ".  Fig. 11's numbers are not printed in the paper; "
            "the curves follow from the same formulas, so the check is that the implemented "
            "loads and bounds behave as the paper states.")


def _claims(rows) -> list:
    """Fig. 11's claims at the figure's n = 20, B = 3, λ = 4 (closed forms, exact).  Remark
    F.1's O(1/W') and Remark 3.1's SR-SGC-vs-GC loads are statements, rows of ``theorems``
    (``theorems.sgc_bounds``, ``theorems.sgc_sr``) on every small case: not repeated here."""
    name, n, B, lam = SETTINGS[0]
    sel = [r for r in rows if r["setting"] == name]
    first, last = sel[0], sel[-1]
    W = np.array([r["W"] for r in sel])
    srs = [r for r in sel if np.isfinite(r["sr-sgc"])]
    ratio = [r["sr-sgc"] / r["m-sgc"] for r in srs]
    T_sr = {int(make_code("sr-sgc", n=n, B=B, W=int(r["W"]), lam=lam).T) for r in srs}
    T_m = [int(make_code("m-sgc", n=n, B=B, W=int(r["W"]), lam=lam).T) - (r["W"] - 2 + B)
           for r in sel[:20]]
    rel = np.array([r["m-sgc"] / r["lower_bound_f1"] - 1 for r in sel])
    where, setting = "App. F, Fig. 11", f"n = {n}, B = {B}, λ = {lam}, W = {W[0]}..{W[-1]}"
    return [
        Claim(where, "M-SGC's load curve lies above the bound of Thm F.1 (eq. 2) and approaches "
              "it as W grows", "load / bound -> 1",
              f"{first['m-sgc'] / first['lower_bound_f1']:.3f} -> "
              f"{last['m-sgc'] / last['lower_bound_f1']:.4f}",
              holds(all(r["lower_bound_f1"] <= r["m-sgc"] + 1e-12 for r in sel)
                    and (np.diff(rel) < 0).all() and rel[-1] * W[-1] < 2 * rel[0] * W[0]),
              f"rule: eq. 1 / eq. 2, {setting}: never below the bound, strictly falling, and "
              f"(ratio - 1) x W bounded ({rel[0] * W[0]:.3f} -> {rel[-1] * W[-1]:.3f}), so "
              "ratio -> 1 (Remark F.1's O(1/W') on every small case: the theorems row)",
              kind="figure"),
        Claim(where, "SR-SGC's load is higher than M-SGC's", "SR-SGC above M-SGC",
              f"SR-SGC / M-SGC = {min(ratio):.2f}-{max(ratio):.2f}x", holds(min(ratio) > 1),
              f"rule: the ratio exceeds 1 at every W = xB + 1 ({len(srs)} values of W; "
              f"{setting})", kind="figure"),
        Claim("App. F, Fig. 11 caption", "the delays: T = B (SR-SGC) vs W - 2 + B (M-SGC), so "
              "SR-SGC schedules more flexibly", f"T = {B} vs W + {B - 2} (the caption's T = B vs "
              f"W - 2 + B at B = {B})",
              f"SR-SGC T in {sorted(T_sr)}; M-SGC T - (W - 2 + B) in {sorted(set(T_m))}",
              holds(T_sr == {B} and set(T_m) == {0}), "rule: the implemented schemes' T "
              f"equal the caption's at every W ({setting})", kind="statement"),
    ]


LOADS = Experiment(
    "sgc-loads", "Paper 4, Fig. 11: normalized loads vs W against the lower bound",
    "paper 4, App. F, Remark F.1, Fig. 11", LOADS_CLAIM, number=4, sizes={"w_max": (40, 200)},
    configs=_configs, measure=_measure, analyse=_analyse, plot=_figure, ours=_ours,
    claims=_claims)
SPECS = {LOADS.name: LOADS}
