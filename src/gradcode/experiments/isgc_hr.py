"""Paper 2 (IS-GC), Sec. VIII-C, Fig. 13: ``isgc-hr-tradeoff`` (registered in
``isgc_training``).

``HR(8, c1, 4 - c1)`` with ``g = 2`` groups, ``c1 = 0..3`` (``c1 = 0`` is CR(8, 4), ``c1 = 3``
has the same placement as FR(8, 4)): (a) share recovered vs ``w``, simulated and exact (all
``2^8`` sets of arriving workers enumerated, ``isgc_exact``), (b) training loss with ``w = 2``:
softmax regression on scikit-learn's ``digits`` stands in for the paper's ResNet-18 on CIFAR-10,
with the paper's update (the sum of the recovered gradients, ``SumTrainer``).
"""

from __future__ import annotations

from functools import partial

import numpy as np

from ..datasets import load_dataset
from ..registry import make_code
from ..sim import Fastest, simulate
from ..stragglers import Compute, Exponential
from ._experiment import Context, Experiment, derive_seed, find
from ._ledger import Claim, holds
from ._plot import figure, panel, plain_log, titled
from .isgc import SumTrainer
from .isgc_exact import dominates, expected, monotone, shares
from .theorems.isgc_common import cr_support, hr_support, same_placement

N13, C13, G13 = 8, 4, 2
W13 = 2                # w of the training runs, panel (b)
C1S = (0, 1, 2, 3)

HR_CLAIM = (
    "ResNet-18 on CIFAR-10, n = 8, c = 4, g = 2 groups, HR(8, c1, 4 - c1) for 0 <= c1 <= 3 "
    "(c1 = 0 is CR; c1 = 3 has the same placement as c1 = 4 and FR), lr 0.001, batch 128.  "
    "(a) More gradients are recovered as c1 increases (HR trades off between CR and FR, in "
    "recovered gradients and accuracy); (b) with w = 2 the training loss is lower at a given "
    "step for larger c1: more recovered gradients help training.  No numbers in the text.")


def _hr_code(c1):
    if c1 == 0:
        return make_code("isgc-cr", n=N13, c=C13)
    return make_code("isgc-hr", n=N13, c1=c1, c2=C13 - c1, groups=G13)


#: sizes, quick and full: steps per recovery simulation; training steps, trials, lr
HR_SIZES = {"rounds": (400, 4000), "training": ((40, 2, 0.5), (200, 6, 0.2))}


def _run(ctx: Context) -> dict:
    """Every ``c1``'s rows (recovered shares, losses), its mean loss curve in ``curves``."""
    data = load_dataset("digits")
    tables = {c1: shares(_hr_code(c1)) for c1 in C1S}
    tables["FR"] = shares(make_code("isgc-fr", n=N13, c=C13))
    curves = {}
    ctx.each(C1S, partial(_hr_rows, ctx, data, tables, curves), "isgc-hr-tradeoff")
    steps, trials, lr = ctx.sizes["training"]
    ctx.notes.append("gradcode's isgc-hr needs c1 >= 1 and c <= n/groups <= min(c + c1, 2c - 1) "
                     "(every group a clique); its decoder is maximum; with n/groups = 4 = c all of "
                     "c1 = 1, 2, 3 are valid.  c1 = 0 is isgc-cr(8, 4), as in the paper.")
    ctx.notes.append(f"Delays Exp(mean 1 s) on every worker + 1 s compute per worker (same for "
                     f"all c1), common random numbers; training: softmax on digits, 32 samples "
                     f"per partition and step, lr {lr:g}, update = sum of recovered gradients.")
    return {"rows": ctx.rows, "tables": tables, "curves": curves, "trials": trials,
            "mid": steps // 2}


def _hr_ours(f) -> str:
    tables, curves, mid = f["tables"], f["curves"], f["mid"]
    return ("Recovered at w = 2 (exact): " + ", ".join(
        f"c1={c1}: {float(100 * expected(tables[c1], 2)):.1f} %" for c1 in C1S)
        + f".  Training loss at step {mid} with w = {W13}: " + ", ".join(
            f"c1={c1}: {curves[c1][mid - 1]:.3f}" for c1 in C1S) + ".")


def _hr_models():
    """Delay and compute models: Exp(mean 1 s) delay and 1 s of compute on every worker."""
    return Exponential(1.0), Compute(N13 * 0.25)


def _hr_rows(ctx: Context, data, tables, curves, c1) -> list[dict]:
    """Rows of ``c1``: the share recovered at every ``w`` (``ctx.sizes["rounds"]`` steps each,
    and exact), then the training loss with ``w = 2`` at a quarter, half and all of the training
    steps; its mean loss curve goes to ``curves[c1]``."""
    steps, trials, lr = ctx.sizes["training"]
    delay, compute = _hr_models()
    code = _hr_code(c1)
    rows = []
    for w in range(1, N13 + 1):
        s = simulate(code, delay, Fastest(w), ctx.sizes["rounds"], compute=compute,
                     seed=derive_seed(ctx, 13, 0)).summary
        rows.append({"c1": c1, "c2": C13 - c1, "code": code.name, "w": w,
                     "recovered_pct": 100 * s["mean_recovered_fraction"],
                     "exact_recovered_pct": float(100 * expected(tables[c1], w))})
    losses = [[r.loss for r in simulate(
        code, delay, Fastest(W13), steps, compute=compute, seed=derive_seed(ctx, 13, 1, t),
        trainer=SumTrainer(data, "softmax", lr=lr, batch=32, seed=derive_seed(ctx, 13, 1, t))
    ).records] for t in range(trials)]
    curve = curves[c1] = np.mean(losses, axis=0)
    for step in sorted({steps // 4, steps // 2, steps}):
        rows.append({"c1": c1, "c2": C13 - c1, "code": code.name, "w": W13,
                     "step": step, "train_loss": float(curve[step - 1])})
    return rows


def _rec(rows, c1, w, key="recovered_pct") -> float:
    """Share recovered (%) by ``c1`` at ``w`` (the recovery rows: those without a step)."""
    return find(rows, key, c1=c1, w=w, step=None)


def _hr_figure(f):
    from matplotlib import colormaps
    rows, curves, trials = f["rows"], f["curves"], f["trials"]
    steps = len(next(iter(curves.values())))
    fig, axes = figure(1, 2, (12, 4.6))
    cmap = colormaps["viridis"]
    ws = range(1, N13 + 1)
    for i, c1 in enumerate(curves):
        label = f"c1 = {c1} " + ("(CR)" if c1 == 0 else "(= FR)" if c1 == 3 else
                                 f"HR(8, {c1}, {C13 - c1})")
        color = cmap(i / (len(curves) - 1) * 0.85)
        axes[0].plot(ws, [_rec(rows, c1, w) for w in ws], "o", mfc="none", color=color)
        axes[0].plot(ws, [_rec(rows, c1, w, "exact_recovered_pct") for w in ws], "-",
                     color=color, label=label)
        axes[1].plot(range(1, steps + 1), curves[c1], color=color, label=label)
    panel(axes[0], "(a) gradients recovered vs w (lines exact, circles simulated)",
          "w (fastest workers waited for)", "gradients recovered (% of partitions)")
    panel(axes[1], f"(b) training loss with w = {W13} (mean of {trials} trials)",
          "step (SGD iteration)", "training loss (cross-entropy, nats; log scale)")
    plain_log(axes[1], "y", subs=(1.0, 2.0, 3.0, 5.0))
    for ax in axes:
        ax.legend(fontsize=8)
    return titled(fig, f"Paper 2, Fig. 13: HR(8, c1, 4 - c1), g = {G13} groups, softmax on "
                  "digits")


#: the setting of Fig. 13's recovery rows and of its training row
EXACT13 = ("stand-in: exact shares over every set of arriving workers (i.i.d. arrivals for the "
           "means), for the shares measured on Google Cloud")
TRAIN13 = ("stand-in: softmax regression on digits with the paper's summed update, on a virtual "
           "clock, for ResNet-18 on CIFAR-10")


def _hr_claims(f) -> list:
    """Fig. 13's ledger rows."""
    tables, curves, mid = f["tables"], f["curves"], f["mid"]
    W = "Sec. VIII-C, Fig. 13"
    seq = [tables[c1] for c1 in C1S]
    nested = all(dominates(b, a) for a, b in zip(seq, seq[1:]))
    room = [w for w in range(2, N13 + 1) if expected(seq[0], w) < 1]
    strict = all(expected(b, w) > expected(a, w) for a, b in zip(seq, seq[1:]) for w in room)
    between = all(dominates(t, seq[0]) and dominates(tables["FR"], t) for t in seq)
    same = (_hr_code(3).B != 0).tolist() == (make_code("isgc-fr", n=N13, c=C13).B != 0).tolist() \
        == (make_code("isgc-hr", n=N13, c1=4, c2=0, groups=G13).B != 0).tolist() \
        and same_placement(hr_support(N13, 0, C13, G13), cr_support(N13, C13))
    mids = [curves[c1][mid - 1] for c1 in C1S]
    at2 = " -> ".join(f"{float(100 * expected(t, 2)):.1f}" for t in seq)
    return [
        Claim(W, "c1 = 3 gives the same placement as c1 = 4 and FR(8, 4); c1 = 0 is CR",
              "same placement", "same" if same else "differs", holds(same),
              "rule: the supports of HR(8, 3, 1), HR(8, 4, 0), FR(8, 4) are equal, and Fig. 7's "
              "placement with c1 = 0 is CR(8, 4)'s", kind="statement"),
        Claim(f"{W}(a)", "more gradients are recovered as c1 increases", "increases with c1",
              f"w = 2: {at2} % (c1 = 0..3, exact); never less for any arrival set",
              holds(nested and strict and all(map(monotone, seq))),
              "rule: a larger c1 recovers at least as much for every set of arriving workers, "
              f"strictly more in expectation at every w with room (w = {room[0]}..{room[-1]}: "
              "w = 1 gives c partitions to every c1, w >= 5 everything), and more workers never "
              "less (exact)", kind="direction", setting=EXACT13),
        Claim(f"{W}(a)", "HR achieves a trade-off between CR and FR in recovered gradients",
              "CR <= HR <= FR", "holds for every set of arriving workers (exact)" if between
              else "fails for some set", holds(between), "rule: CR <= HR <= FR for every set of "
              "arriving workers (exact)", kind="statement", setting=EXACT13),
        Claim(f"{W}(b)", "with w = 2, more recovered gradients (larger c1) give a lower "
              "training loss at a given step", "lower for larger c1",
              " -> ".join(f"{x:.3f}" for x in mids) + f" at step {mid} (c1 = 0..3)",
              holds(all(np.diff(mids) < 0)), "rule: the mean training loss at the middle step "
              "strictly falls with every step of c1 = 0..3" + "".join(
                  f"; it rises from c1 = {c1} to {c1 + 1}" for c1, d in enumerate(np.diff(mids))
                  if d >= 0), kind="direction", setting=TRAIN13),
        Claim.not_attempted(W, "ResNet-18 on CIFAR-10 with n = 8, lr 0.001, batch 128: losses "
                            "and accuracy", "Fig. 13", ours="not run", why="no GPU cluster; the "
                            "stand-in's loss replaces the paper's loss and accuracy",
                            kind="figure"),
    ]


HR_TRADEOFF = Experiment(
    "isgc-hr-tradeoff", "Paper 2: HR(8, c1, 4 - c1) between CR and FR",
    "Su et al., IS-GC, Sec. VIII-C, Fig. 13", HR_CLAIM, number=2, sizes=HR_SIZES, run=_run,
    plot=_hr_figure, ours=_hr_ours, claims=_hr_claims)
