"""Paper 1 (Tandon et al., *Gradient Coding*), "Real Dataset": ``tandon-generalization``.

The figure "Generalization Error comparison of our scheme vs. ignoring stragglers" ((a) n = 3,
s = 1: "Missing 1/3 of the data"; (b) n = 5, s = 1: "Missing 1/5 of the data"; "the straggling
worker was fixed to be the same machine across iterations").  Logistic regression trained by
full-batch gradient descent; *ignoring stragglers* = ``ignore`` (data split equally over ``n``
workers, wait for the fastest ``n - s``: the fixed straggler's share is never used); *GC* =
``gc-cr(n, s)`` waiting for ``n - s`` (FR needs ``(s + 1) | n``, false for n = 3 and 5), which
recovers the full gradient every iteration; *wait for all* (uncoded) is the full-gradient
reference.  Metrics per iteration on a held-out set: test error (the paper's "generalization
error"), test AUC, test log-loss.

Data.  The paper's real binary data set (the Kaggle Amazon Employee Access challenge, named in the
full paper; not in the poster's text) cannot be downloaded offline.  Substitute: scikit-learn's
bundled ``breast_cancer`` (569 x 30, binary; ``load_dataset("breast_cancer")``), a fresh random
split per seed (1/3 held out) and the training size swept (the effect of losing 1/n of the data
depends on where the learning curve is; the paper's data set is far larger).  Also paper 1's own
synthetic Gaussian mixture (p = 100, noisy labels, a small training set so that the lost share
matters).  Every configuration is run for several seeds (fresh split / fresh mu1, mu2, beta* and
a fresh assignment of the data to the workers); ``results.csv`` gives the mean, sd, min and max
over seeds per iteration, ``seeds.csv`` each seed's final values, and the claims use the paired
per-seed gap (ignoring minus GC).
"""

from __future__ import annotations

import numpy as np

from ..datasets import Dataset, load_dataset
from ..records import csv_text
from ..registry import make_code
from ..sim import All, Fastest, Trainer, simulate
from ..stragglers import Compute, DelayModel
from ._experiment import Context, Experiment, derive_seed
from ._ledger import Check, Claim
from ._ledger import holds as verdict
from ._plot import figure, titled

CONFIGS = ((3, 1), (5, 1))
REAL = "breast_cancer"
GC, IGNORE, ALL = "GC (gc-cr)", "ignore stragglers", "wait for all"
LR = 1.0
WHERE = "Real Dataset, generalization figure"
#: ``setting`` of the rows run on each data set: stand-ins for the paper's real data set
STAND_IN = {REAL: f"stand-in: {REAL} (569 x 30, bundled) for the paper's real data set (Amazon "
                  "Employee Access, full paper)",
            "synthetic": "stand-in: paper 1's synthetic Gaussian mixture (p = 100) for the "
                         "paper's real data set (Amazon Employee Access, full paper)"}
BOTH = (f"stand-in: {REAL} and paper 1's synthetic mixture for the paper's real data set "
        "(Amazon Employee Access, full paper)")

GENERALIZATION_CLAIM = (
    "Logistic regression; generalization error of GC vs ignoring stragglers (data split "
    "equally, wait for n - s) with the straggling worker fixed to the same machine: for "
    "n = 3, s = 1 ignoring misses 1/3 of the data, for n = 5, s = 1 it misses 1/5; the figure's "
    "point is that GC, which recovers the full gradient, generalizes better than ignoring.  "
    "(The poster runs this on a real binary data set; the text gives no numbers.)")


class FixedStraggler(DelayModel):
    """The same ``workers`` are ``seconds`` late in every round (paper 1: "the straggling worker
    was fixed to be the same machine across iterations")."""

    def __init__(self, workers, seconds: float = 10.0):
        self.workers, self.seconds = tuple(int(w) for w in workers), float(seconds)

    def sample(self, rng, round, loads):
        d = np.zeros(len(loads))
        d[list(self.workers)] = self.seconds
        return d

    def __repr__(self):
        return f"FixedStraggler(workers={self.workers}, seconds={self.seconds:g})"


def _auc(y, score) -> float:
    """Area under the ROC curve by the Mann-Whitney rank statistic (ties averaged)."""
    from scipy.stats import rankdata
    pos = y == 1
    n1, n0 = int(pos.sum()), int((~pos).sum())
    ranks = rankdata(score)
    return float((ranks[pos].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


#: sizes, quick and full: seeds per configuration (synthetic; real: cheap, so more),
#: iterations, synthetic train/test sizes, real training sizes
SIZES = {"seeds": (2, 12), "real_seeds": (2, 30), "iters": (25, 100),
         "synthetic": ((600, 2000), (1200, 5000)), "real_train": ((120, 379), (60, 120, 379))}


def _splits(ctx: Context, cfg: dict):
    """``(dataset, train size, seed, train Dataset, X_test, y_test)`` for every run."""
    n_tr, n_te = cfg["synthetic"]
    for seed in range(cfg["seeds"]):
        data = load_dataset("synthetic", np.random.default_rng(derive_seed(ctx, 1, seed)),
                            n_samples=n_tr + n_te, p=100)
        yield ("synthetic", n_tr, seed, Dataset("synthetic-train", data.X[:n_tr], data.y[:n_tr],
                                                "binary", 2), data.X[n_tr:], data.y[n_tr:])
    real = load_dataset(REAL)
    n_test = real.n_samples // 3
    for seed in range(cfg["real_seeds"]):
        order = np.random.default_rng(derive_seed(ctx, 2, seed)).permutation(real.n_samples)
        test, rest = order[:n_test], order[n_test:]
        for size in cfg["real_train"]:
            idx = rest[:size]
            yield (REAL, size, seed, Dataset(f"{REAL}-train", real.X[idx], real.y[idx], "binary",
                                             2), real.X[test], real.y[test])


def _train(train, Xt, yt, n, s, iters, seed) -> dict:
    """Each scheme's per-iteration ``(error, auc, logloss, recovered, time)`` history; the same
    ``seed`` for every scheme: the same assignment of the data to the ``n`` workers."""
    schemes = {IGNORE: (make_code("ignore", n=n), Fastest(n - s)),
               GC: (make_code("gc-cr", n=n, s=s), Fastest(n - s)),
               ALL: (make_code("uncoded", n=n), All())}
    out = {}
    for label, (code, wait) in schemes.items():
        trainer, hist = Trainer(train, "logistic", lr=LR), []

        def record(rec, trainer=trainer, hist=hist):
            z = Xt @ trainer.w[:-1] + trainer.w[-1]
            hist.append((np.mean((z > 0) != yt), _auc(yt, z),
                         np.mean(np.logaddexp(0, z) - yt * z), rec.recovered_fraction,
                         rec.time_s))
        simulate(code, FixedStraggler(range(n - s, n)), wait, iters, compute=Compute(1.0),
                 seed=seed, trainer=trainer, on_record=record)
        out[label] = np.array(hist)
    return out


def _run(ctx: Context) -> dict:
    """Every split x configuration trained (a curve per scheme), then the per-iteration rows."""
    cfg = ctx.sizes
    iters = cfg["iters"]
    curves: dict[tuple, list] = {}
    per_seed, dev = [], 0.0
    jobs = [(split, n, s) for split in _splits(ctx, cfg) for n, s in CONFIGS]
    for (name, n_tr, seed, train, Xt, yt), n, s in ctx.bar(jobs, desc="tandon-generalization"):
        hist = _train(train, Xt, yt, n, s, iters, derive_seed(ctx, 3, seed, n_tr, n))
        for label, h in hist.items():
            curves.setdefault((name, n_tr, n, s, label), []).append(h)
        dev = max(dev, float(np.abs(hist[GC] - hist[ALL])[:, :3].max()))
        per_seed.append(_seed_row(name, n_tr, n, s, seed, hist))
    for (name, n_tr, n, s, label), runs in curves.items():
        ctx.rows.extend(_curve_rows(name, n_tr, n, s, label, np.array(runs)))
    ig_lost = {n: 1 - float(np.mean(np.concatenate(
        [h[:, 3] for k, v in curves.items() if k[2] == n and k[4] == IGNORE for h in v])))
        for n, _ in CONFIGS}
    ctx.notes.append(
        f"Seeds per configuration: {cfg['seeds']} synthetic, {cfg['real_seeds']} {REAL}.  "
        f"Synthetic mixture (p = 100): "
        f"{cfg['synthetic'][0]} training / {cfg['synthetic'][1]} held-out samples, fresh mu1, "
        f"mu2, beta* per seed.  {REAL} (substitute for the paper's real data set): a fresh "
        f"random third held out per seed, training size swept over {cfg['real_train']} (379 = "
        f"all the rest).  Full-batch gradient descent, lr = {LR:g} on the mean gradient, "
        f"{iters} iterations; the last worker is the fixed straggler (10 s late every round).")
    ctx.notes.append(
        f"GC's test metrics equal 'wait for all' (uncoded, the full gradient) to {dev:.1e}: GC "
        "recovers the full gradient without waiting for the straggler.  Equal compute time: GC "
        "computes s + 1 = 2 times as much per worker and iteration, so ignoring's iteration "
        f"{iters} is paid as GC's iteration {iters // 2} (columns *_equal_time of seeds.csv).")
    return {"rows": ctx.rows, "per_seed": per_seed, "cfg": cfg, "ig_lost": ig_lost, "dev": dev,
            "stats": _stats(per_seed, cfg)}


def _files(f) -> dict:
    return {"seeds.csv": csv_text(f["per_seed"])}


def _seed_row(name, n_tr, n, s, seed, hist) -> dict:
    """One seed's final test error / AUC per scheme, at equal iterations and at equal time."""
    gc, ig = hist[GC], hist[IGNORE]
    t_ig = np.cumsum(ig[:, 4])[-1]
    k = int(np.searchsorted(np.cumsum(gc[:, 4]), t_ig + 1e-9)) - 1   # GC's last iterate by then
    return {"dataset": name, "train_size": n_tr, "n": n, "s": s, "seed": seed,
            "gc_error": gc[-1, 0], "ignore_error": ig[-1, 0], "gc_auc": gc[-1, 1],
            "ignore_auc": ig[-1, 1], "gap_error": ig[-1, 0] - gc[-1, 0],
            "gap_auc": gc[-1, 1] - ig[-1, 1], "gc_iteration_equal_time": k + 1,
            "gap_error_equal_time": ig[-1, 0] - gc[k, 0],
            "gap_auc_equal_time": gc[k, 1] - ig[-1, 1]}


def _curve_rows(name, n_tr, n, s, label, runs) -> list[dict]:
    """Per-iteration rows: mean, sd, min and max over the seeds (``runs``: seeds x iters x 5)."""
    mean, sd = runs.mean(0), runs.std(0, ddof=1) if len(runs) > 1 else np.zeros(runs.shape[1:])
    lo, hi, t = runs.min(0), runs.max(0), np.cumsum(runs.mean(0)[:, 4])
    return [{"dataset": name, "train_size": n_tr, "n": n, "s": s, "scheme": label,
             "iteration": it + 1, "time_s": float(t[it]),
             "test_error": float(mean[it, 0]), "test_error_sd": float(sd[it, 0]),
             "test_error_min": float(lo[it, 0]), "test_error_max": float(hi[it, 0]),
             "test_auc": float(mean[it, 1]), "test_auc_sd": float(sd[it, 1]),
             "test_auc_min": float(lo[it, 1]), "test_auc_max": float(hi[it, 1]),
             "test_logloss": float(mean[it, 2]), "recovered_fraction": float(mean[it, 3]),
             "seeds": len(runs)} for it in range(runs.shape[1])]


def paired_t(d) -> float:
    """The paired t statistic of per-round differences ``d`` (common random numbers: the same
    straggler sets and jitter seeds for both schemes): ``mean / (sd / sqrt(k))``; ``+-inf`` for
    a constant non-zero difference, 0 for none.

    >>> paired_t([0.1, 0.3]), paired_t([0.2, 0.2]), paired_t([0.0, 0.0])
    (2.0, inf, 0.0)
    """
    d = np.asarray(d, float)
    sd = float(d.std(ddof=1)) if d.size > 1 else 0.0
    if sd > 0:
        return float(d.mean() / (sd / np.sqrt(d.size)))
    return float(np.inf * np.sign(d.mean())) if d.mean() else 0.0


def _gap(values) -> dict:
    """Mean, sd, min, max, count of positive values and the paired t statistic of ``values``."""
    v = np.asarray(values, float)
    sd = float(v.std(ddof=1)) if v.size > 1 else 0.0
    return {"mean": float(v.mean()), "sd": sd, "min": float(v.min()), "max": float(v.max()),
            "pos": int((v > 0).sum()), "k": int(v.size), "t": paired_t(v)}


def _stats(per_seed, cfg) -> dict:
    """``(dataset, train size, n) -> {metric: _gap}`` over the seeds; also GC's own error."""
    out = {}
    for key in {(r["dataset"], r["train_size"], r["n"]) for r in per_seed}:
        sel = [r for r in per_seed if (r["dataset"], r["train_size"], r["n"]) == key]
        out[key] = {m: _gap([r[m] for r in sel]) for m in
                    ("gap_error", "gap_auc", "gap_error_equal_time", "gc_error", "ignore_error",
                     "gc_auc", "ignore_auc")}
    return out


def holds(g: dict) -> bool:
    """GC better than ignoring: the paired mean gap is positive and at least 2 standard errors
    (t >= 2) away from zero."""
    return g["mean"] > 0 and g["t"] >= 2


def _pm(g, scale=100.0, digits=1) -> str:
    return (f"{scale * g['mean']:.{digits}f} ± {scale * g['sd']:.{digits}f} "
            f"[{scale * g['min']:.{digits}f}, {scale * g['max']:.{digits}f}]")


def _claims(f) -> list:
    stats, cfg, ig_lost, dev = f["stats"], f["cfg"], f["ig_lost"], f["dev"]
    syn, big = cfg["synthetic"][0], max(cfg["real_train"])
    out = [Claim(WHERE + f" ({'ab'[i]})", f"n = {n}, s = {s}: share of the data ignoring the "
                 "fixed straggler misses", 1 / n, ig_lost[n], tol=1e-9, fmt="{:.4f}",
                 setting=BOTH + "; the share does not depend on the data",
                 why="1 - recovered fraction of `ignore` over every iteration and seed")
           for i, (n, s) in enumerate(CONFIGS)]
    out.append(Claim(WHERE, "GC ('our scheme') recovers the full gradient despite the fixed "
                     "straggler", "full gradient", f"test metrics equal waiting for all to "
                     f"{dev:.0e}", verdict(dev < 1e-9), kind="statement", setting=BOTH,
                     why="rule: GC's test metrics equal waiting for all's to 1e-9 at every "
                     "iteration and seed"))
    for name, size in ((REAL, big), ("synthetic", syn)):
        for i, (n, s) in enumerate(CONFIGS):
            out.append(_better_claim(stats, name, size, n, s, i))
    out.append(_order_check(stats, cfg))
    out.append(Claim.not_attempted(
        WHERE, "the figure's curves on the paper's own real data set", "figure only (no numbers "
        "in the text)", ours="not run", why="the data set (Kaggle Amazon Employee Access, "
        "full paper) needs a "
        f"download, unavailable offline; {REAL} and the synthetic mixture stand in (rows "
        "above); absolute errors depend on the data and are not comparable", kind="figure"))
    return out


def _better_claim(stats, name, size, n, s, i) -> Claim:
    g = stats[(name, size, n)]
    k = g["gap_error"]["k"]
    ok = holds(g["gap_error"])
    sizes = sorted(t for (d, t, m) in stats if d == name and m == n)
    where_ok = [t for t in sizes if holds(stats[(name, t, n)]["gap_error"])]
    data = (f"{REAL} (substitute for the paper's data set), {size} training samples"
            if name == REAL else f"paper 1's synthetic mixture, {size} training samples")
    ours = (f"test error GC {_pm(g['gc_error'])} % vs ignoring {_pm(g['ignore_error'])} %; "
            f"gap {_pm(g['gap_error'])} points (> 0 in {g['gap_error']['pos']}/{k} seeds, "
            f"t = {g['gap_error']['t']:.1f}); AUC gap {_pm(g['gap_auc'], 1, 4)}")
    sweep = (f"; over training sizes {sizes} the gap is significant (t >= 2) for "
             f"{where_ok or 'none'}" if len(sizes) > 1 else "")
    why = (f"{'holds' if ok else 'does not hold'} on {data}: mean ± sd [min, max] over {k} "
           f"seeds of the paired gap (ignoring - GC), rule: GC strictly better, the mean gap "
           f"> 0 and t >= 2 (at least 2 standard errors from zero){sweep}.  Ignoring trains on "
           f"{n - s}/{n} of the samples, so the gap is the learning curve's slope between "
           f"{n - s}/{n} and all of the data: "
           + ("clear here." if ok else "within the seed spread here (t < 2); GC's own error "
                 f"is {100 * g['gc_error']['mean']:.1f} %, so {n - s}/{n} of the samples "
                 "already come close to the full-data error.")
           + "  The paper gives no numbers; absolute errors are not comparable (other data).")
    return Claim(WHERE + f" ({'ab'[i]})", f"n = {n}, s = {s}: GC generalizes better than "
                 f"ignoring the fixed straggler [{name}]", "GC < ignoring (figure)", ours,
                 verdict(ok), why=why, kind="figure", setting=STAND_IN[name])


def _order_check(stats, cfg) -> Check:
    """The lost share 1/3 vs 1/5: the gap should be larger for n = 3 than for n = 5 (our
    reading of the captions, not a claim of the paper: a ``Check``)."""
    (n3, _), (n5, _) = CONFIGS
    parts, ok = [], {}
    for name, size in (("synthetic", cfg["synthetic"][0]), (REAL, max(cfg["real_train"]))):
        g3, g5 = (stats[(name, size, m)]["gap_error"] for m in (n3, n5))
        ok[name] = g3["mean"] > g5["mean"]
        parts.append(f"{name}: {100 * g3['mean']:.2f} (t = {g3['t']:.1f}) vs "
                     f"{100 * g5['mean']:.2f} (t = {g5['t']:.1f}) points")
    return Check("tandon-generalization (our reading of the captions)",
                 "missing 1/3 (n = 3) costs more generalization than missing 1/5 (n = 5)",
                 "larger gap for n = 3", "; ".join(parts), verdict(all(ok.values())),
                 why="rule: the mean paired test-error gap (ignoring - GC) at the largest "
                 f"training size strictly larger for n = {n3} than for n = {n5} on both data "
                 "sets: " + "; ".join(f"{'larger' if v else 'NOT larger'} for n = {n3} on {k}"
                                      for k, v in ok.items())
                 + " (t: how many standard errors each gap is from zero).  The captions give "
                 "the lost shares only; the order of the gaps is not stated in the paper")


def _figure(f):
    rows, per_seed, cfg = f["rows"], f["per_seed"], f["cfg"]
    fig, axes = figure(2, 3, (15, 8))
    styles = {GC: ("tab:blue", "-"), IGNORE: ("tab:red", "-"), ALL: ("black", ":")}
    for r_, (name, size) in enumerate((("synthetic", cfg["synthetic"][0]),
                                       (REAL, max(cfg["real_train"])))):
        for c, (n, s) in enumerate(CONFIGS):
            ax = axes[r_, c]
            for label, (color, ls) in styles.items():
                sel = [r for r in rows if (r["dataset"], r["train_size"], r["n"], r["scheme"])
                       == (name, size, n, label)]
                it = [r["iteration"] for r in sel]
                ax.plot(it, [100 * r["test_error"] for r in sel], color=color, ls=ls,
                        label=label + (" (= full gradient)" if label == ALL else ""))
                if label != ALL:
                    ax.fill_between(it, [100 * r["test_error_min"] for r in sel],
                                    [100 * r["test_error_max"] for r in sel], color=color,
                                    alpha=0.15, lw=0)
            ax.set_title(f"{name}, {size} train: ({'ab'[c]}) n = {n}, s = {s}, ignoring misses "
                         f"1/{n}", fontsize=9)
            ax.set_xlabel("iteration")
            ax.set_ylabel("test error (%): mean, band = min-max over seeds")
            ax.grid(alpha=0.3)
        _gap_panel(axes[r_, 2], per_seed, name)
    axes[0, 0].legend(fontsize=8)
    return titled(fig, f"Paper 1, generalization figure: GC vs ignoring a fixed straggler "
                  f"({cfg['seeds']} / {cfg['real_seeds']} seeds; {REAL} stands in for the "
                  "paper's real data set)")


def _gap_panel(ax, per_seed, name):
    """Each seed's final gap (ignoring - GC, test-error points) per (training size, n)."""
    keys = sorted({(r["train_size"], r["n"]) for r in per_seed if r["dataset"] == name})
    for x, (size, n) in enumerate(keys):
        g = [100 * r["gap_error"] for r in per_seed
             if (r["dataset"], r["train_size"], r["n"]) == (name, size, n)]
        ax.plot(np.full(len(g), x) + np.linspace(-0.15, 0.15, len(g)), g, "o", ms=3,
                color="tab:gray")
        ax.errorbar(x + 0.3, np.mean(g), yerr=np.std(g, ddof=1) if len(g) > 1 else 0, fmt="D",
                    color="tab:purple", capsize=3)
    ax.axhline(0, color="black", lw=0.8)
    ax.set_xticks(range(len(keys)), [f"{size} train\nn = {n}" for size, n in keys], fontsize=8)
    ax.set_ylabel("final test error: ignoring - GC (points)")
    ax.set_title(f"{name}: per-seed gap (dots), mean ± sd (diamond)", fontsize=9)
    ax.grid(alpha=0.3, axis="y")


def _ours(f) -> str:
    stats, cfg, ig_lost = f["stats"], f["cfg"], f["ig_lost"]
    parts = []
    for name, sizes in (("synthetic", (cfg["synthetic"][0],)), (REAL, cfg["real_train"])):
        for size in sizes:
            for n, s in CONFIGS:
                g = stats[(name, size, n)]
                parts.append(f"{name} ({size} train), n = {n}: test error GC "
                             f"{_pm(g['gc_error'])} % vs ignoring {_pm(g['ignore_error'])} %, "
                             f"gap {_pm(g['gap_error'])} (t = {g['gap_error']['t']:.1f}); at "
                             f"equal compute time gap {_pm(g['gap_error_equal_time'])}")
    return (f"After {cfg['iters']} iterations, mean ± sd [min, max] over the seeds "
            "(gap = ignoring - GC, points; positive = GC better): " + "; ".join(parts) + ".  "
            f"Ignoring misses {ig_lost[3]:.4f} / {ig_lost[5]:.4f} of the data for n = 3 / 5 "
            "(the fixed straggler's share); GC recovers the full gradient every iteration.  "
            "Absolute errors are not comparable with the paper's (other data).")


GENERALIZATION = Experiment(
    "tandon-generalization", "Paper 1: generalization error, GC vs ignoring a fixed straggler",
    "Tandon et al., Gradient Coding, Real Dataset, generalization figure (a), (b)",
    GENERALIZATION_CLAIM, number=1, sizes=SIZES, run=_run, plot=_figure, ours=_ours,
    claims=_claims, files=_files)
SPECS = {GENERALIZATION.name: GENERALIZATION}
