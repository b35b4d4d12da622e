"""The literature beyond papers 1-5: every scheme at equal load (``gradcode
reproduce literature``), and the ledger's sixth group, "literature".

The comparison.  ``n`` workers and ``n`` partitions (24 quick, 48 full); the load ``d / n``
(``d`` partitions per worker) for ``d`` in a small set (1, 2, 4, 6; and 8 in the full run).
Every single-round scheme of ``gradcode.codes`` -- the seeds' (``uncoded``, ``ignore``,
``gc-fr``, ``gc-cr``, ``isgc-fr``, ``isgc-cr``, ``isgc-hr``, ``heter`` at equal speeds) and the
literature's (``cyclic-mds``, ``expander``, ``bgc``, ``frc-approx``, and any other registered
since: its parameters are taken from their names, ``n``, ``d``, ``s = d - 1``, ``c = d``) -- is
built at each load, or skipped with the reason in ``results.csv`` (``status`` skipped, ``note``:
``uncoded`` only at ``d = 1``, ``gc-fr`` needs ``d | n``, ``cyclic-mds`` ``n + d`` even, a
scheme whose load is not ``d / n``...).  ``matrix`` (a given ``B``) and ``gc-partial`` (two
messages per machine, its load set by ``alpha``) have no load ``d / n`` and are left out.  Paper
4's sequential schemes (coding across rounds, decoding delay ``T``) join at each load they can
take: ``gc-seq`` with ``s = d - 1``, the others at the first parameter set of their App. J grid
(``B <= 2``, ``W <= 4``) whose largest load is ``d / n``; their rounds' error is that of the
job due in the round (its wait-out rule the simulator's default).

Each scheme runs through the simulator (``gradcode.sim.simulate``) on each delay model, with
common random numbers (one seed per delay model and load, shared by every scheme and wait):

* ``shexp``: every worker's response is ``2.4 d / n`` s of compute (2.4 s for the whole data
  set) plus a shifted exponential delay, ``0.2 s + Exp(mean 1 s)``;
* ``lambda``: the AWS Lambda Canada trace of ``../shared/traces`` (``--traces``): its load-0
  profile, ``n`` columns at a time (256 workers: ``256 // n`` blocks of 30 rounds stacked), with
  the slope ``alpha`` fitted on its load sweep (paper 4, App. J) for the compute of load
  ``d / n``.  Without the traces it is skipped, and so are its rows (``not attempted``).

What is measured per scheme and load, the master waiting for the fastest ``k`` workers
(``fastest:k``; its own decoder on what arrived):

* at the common wait ``k0 = n - n/8`` (the same straggler count at every load): the mean round
  time, the mean decoding error ``||w B - 1||^2`` and its relative value ``/ n``, the mean
  recovered fraction;
* the **time to a target error**: the smallest mean round time over the waits ``fastest:k``
  (``k`` from ``n/4`` to ``n`` in steps of 3 quick, 2 full, and ``k0``) whose mean relative
  decoding error is at most ``TARGET`` (5 %):
  how long a round takes when the master stops as early as the scheme lets it while keeping
  the gradient within the target on average.  Not reached (even waiting for all) is ``inf``
  (e.g. ``bgc`` at small ``d``: partitions nobody holds).

The plot: time to target against load, and decoding error against load, one line per scheme
(a second row of panels for the trace).  The ledger rows: the claim modules ``approximate``
(Charles et al. 2017; ErasureHead's code), ``mds`` (Raviv et al. 2018; the authors' code),
``coupon`` (Li et al. 2018), ``stochastic`` (Bitar et al. 2020), ``comm`` (Ye and Abbe 2018),
each ``claims(ctx)`` returning its paper's claims -- sourced by the authors' code or the
abstract, each naming its paper by a short citation -- and our own ``Check`` rows (what
``gradcode.codes`` derives from a definition); then the comparison's rows, checks too (no paper
makes them).
"""

from __future__ import annotations

import importlib
import math

import numpy as np

from ...codes import Code
from ...registry import CODES, code_class, code_parameters, make_code
from ...sim import parameter_grid, simulate
from ...stragglers import Trace, fit_load_slope, load_trace, traces_dir
from .. import Check, Claim, Context, Experiment, holds

#: the claim modules of this package, in the ledger's order
CLAIM_MODULES = ("approximate", "mds", "coupon", "stochastic", "comm")
#: the seeds' schemes, then the literature's (others registered later follow, by name)
SCHEMES = ("uncoded", "ignore", "gc-fr", "gc-cr", "isgc-fr", "isgc-cr", "isgc-hr", "heter",
           "heter-group", "cyclic-mds", "expander", "bgc", "frc-approx")
#: paper 4's sequential schemes (coding across rounds), each at the first parameter set of its
#: App. J grid (``B <= 2``, ``W <= 4``) whose largest load is ``d / n``
SEQUENTIAL = ("gc-seq", "sr-sgc", "m-sgc", "sr-sgc-rep", "m-sgc-rep")
#: single-round codes with no load d / n of their own
LEFT_OUT = {"matrix": "a given B (no construction at a load)",
            "gc-partial": "two messages per machine, its load set by alpha"}
FAMILY = {"uncoded": "uncoded", "ignore": "ignore", "isgc-fr": "ignore", "isgc-cr": "ignore",
          "isgc-hr": "ignore", "bgc": "approximate", "frc-approx": "approximate",
          "expander": "approximate", **{name: "sequential" for name in SEQUENTIAL}}
TARGET = 0.05                     # relative decoding error ||w B - 1||^2 / n
SHEXP, COMPUTE = "shexp:0.2,1", "load:2.4"
SIZES = {"n": (24, 48), "loads": ((1, 2, 4, 6), (1, 2, 4, 6, 8)), "rounds": (60, 200),
         "k_step": (3, 2)}
LITERATURE = "literature"


def schemes() -> list[str]:
    """Every scheme compared: ``SCHEMES``, then any other registered single-round code (not
    ``LEFT_OUT``), in the registry's order, then the sequential ones (``SEQUENTIAL``).

    >>> schemes()[:4], schemes()[-2:]
    (['uncoded', 'ignore', 'gc-fr', 'gc-cr'], ['sr-sgc-rep', 'm-sgc-rep'])
    """
    others = [k for k in CODES if k not in SCHEMES and k not in LEFT_OUT
              and issubclass(code_class(k), Code)]
    return ([k for k in SCHEMES if k in CODES] + others
            + [k for k in SEQUENTIAL if k in CODES])


def scheme_params(name: str, n: int, d: int, p: float = 0.0) -> dict:
    """``make_code`` parameters of ``name`` at ``n`` workers and load ``d / n`` (ValueError
    naming why there are none), by the parameters' names: ``n``, ``d``, ``s = d - 1``,
    ``c = d``, a batch ``r = d`` (``bcc``), a straggler probability ``p`` (``stochastic-gc``:
    the share ``1 - k / n`` of workers the wait ``fastest:k`` leaves out).

    >>> scheme_params("gc-cr", 24, 4), scheme_params("isgc-cr", 24, 4)
    ({'n': 24, 's': 3}, {'n': 24, 'c': 4})
    """
    if name in ("uncoded", "ignore"):
        if d != 1:
            raise ValueError("load 1/n only (one partition per worker)")
        return {"n": n}
    if name in ("heter", "heter-group"):
        return {"speeds": [1.0] * n, "s": d - 1, "k": n}
    if name == "isgc-hr":
        return _hybrid(n, d)
    if name in SEQUENTIAL and name != "gc-seq":
        return _sequential(name, n, d)
    by_name = {"n": n, "d": d, "s": d - 1, "c": d, "p": p}
    if name == "bcc":                   # batches of r partitions, one batch per worker
        by_name["r"] = d
    params = {}
    for key, p in code_parameters(name).items():
        if key in by_name:
            params[key] = by_name[key]
        elif p.default is p.empty:
            raise ValueError(f"needs parameter {key!r}, which the load d/n does not give")
    return params


def _hybrid(n: int, d: int) -> dict:
    """``isgc-hr`` with ``c1 = max(1, d // 2)``, ``c2 = d - c1`` and the smallest group size
    ``n0`` (``d <= n0 <= min(d + c1, 2d - 1)``, ``n0 | n``)."""
    c1 = max(1, d // 2)
    for n0 in range(d, min(d + c1, 2 * d - 1) + 1):
        if n % n0 == 0:
            return {"n": n, "c1": c1, "c2": d - c1, "groups": n // n0}
    raise ValueError(f"no group size n0 in [{d}, {min(d + c1, 2 * d - 1)}] divides n = {n}")


def _sequential(name: str, n: int, d: int) -> dict:
    """The first parameter set of ``name``'s App. J grid (``B <= 2``, ``W <= 4``) whose
    largest load is ``d / n`` (ValueError when none is)."""
    cls = code_class(name)
    for params in parameter_grid(name, n, jobs=4, max_delay=2):
        try:
            scheme = cls(**params)
        except ValueError:
            continue
        if np.isclose(np.max(scheme.load), d / n, rtol=1e-9):
            return params
    raise ValueError(f"no parameter set with B <= 2, W <= 4 has load {d}/n")


def machine_load(scheme) -> np.ndarray:
    """Per machine, the normalized load: a code's ``machine_load``, a sequential scheme's
    ``load`` (one message per worker)."""
    return np.asarray(getattr(scheme, "machine_load", scheme.load))


def build(name: str, n: int, d: int, p: float = 0.0):
    """``(code, None)``, or ``(None, why)`` when ``name`` cannot be built at load ``d / n``
    (``p``: ``scheme_params``).

    >>> build("gc-fr", 24, 5)[1]
    'gc-fr: s: gc-fr needs (s+1) to divide n=24, got s=4'
    """
    try:
        code = make_code(name, **scheme_params(name, n, d, p))
    except ValueError as exc:
        return None, f"{name}: {exc}"
    load = machine_load(code)
    if name != "bgc" and not np.allclose(load, d / n, rtol=1e-9):   # bgc: d/n in expectation
        return None, (f"{name}: its load is {load.min() * n:g}..{load.max() * n:g} / n, "
                      f"not {d}/n")
    return code, None


# --------------------------------------------------------------------------- delay models
def _load_of(path) -> float:          # canada-w256-r30-load0_250.csv -> 0.25
    return float(path.stem.split("load")[1].replace("_", "."))


def _lambda(ctx, n: int):
    """The Lambda Canada load-0 profile, ``n`` columns at a time stacked, with the slope alpha
    of its load sweep; None (and a note) without the traces."""
    folder = ctx.traces or traces_dir()
    sweep = sorted(folder.glob("canada-w256-r30-load*.csv")) if folder else []
    if len({_load_of(p) for p in sweep}) < 2:
        ctx.notes.append("Real Lambda traces not found (pass --traces DIR): the comparison runs "
                         "on the shifted exponential only; its trace rows are not attempted.")
        return None
    profiles = sorted(((_load_of(p), load_trace(p)) for p in sweep), key=lambda lp: lp[0])
    alpha, intercept = fit_load_slope(profiles)
    base, D = profiles[0]
    blocks = D.shape[1] // n
    stacked = np.vstack([D[:, b * n:(b + 1) * n] for b in range(blocks)])
    ctx.notes.append(f"Trace: {sweep[0].parent.name}/canada-w256-r30 at load {base:g} "
                     f"({D.shape[0]} rounds x {D.shape[1]} workers), as {blocks} blocks of n = "
                     f"{n} columns ({stacked.shape[0]} rounds); alpha = {alpha:.3f} s per unit "
                     f"load fitted on the sweep's {len(profiles)} loads (App. J of paper 4).")
    return Trace(stacked, alpha, base)


def _setup(ctx) -> dict:
    """The delay models (``shexp``, and ``lambda`` when the traces are found) and a list that
    collects the per-wait curves (``curves.csv``)."""
    rounds = ctx.sizes["rounds"]
    delays = {"shexp": {"label": "shifted exponential", "delay": SHEXP, "compute": COMPUTE,
                        "rounds": rounds}}
    trace = _lambda(ctx, ctx.sizes["n"])
    if trace is not None:
        rows = trace.delays.shape[0]
        delays["lambda"] = {"label": "Lambda trace", "delay": trace, "compute": None,
                            "rounds": min(rounds, rows) if ctx.quick else rows}
    return {"delays": delays, "curves": []}


# --------------------------------------------------------------------------- measuring
def _configs(ctx) -> list[tuple[str, int]]:
    return [(key, d) for key in ctx.shared["delays"] for d in ctx.sizes["loads"]]


def waits(n: int, step: int) -> tuple[int, list[int]]:
    """The common wait ``k0 = n - n/8`` and the waits ``k`` swept for the time to target.

    >>> waits(24, 3)
    (21, [6, 9, 12, 15, 18, 21, 24])
    """
    k0 = n - n // 8
    return k0, sorted(set(range(n // 4, n + 1, step)) | {k0, n})


def _measure(ctx, config) -> list[dict]:
    """One row per scheme at one delay model and load (module docstring)."""
    key, d = config
    n = ctx.sizes["n"]
    seed = int(np.random.SeedSequence([ctx.seed, list(ctx.shared["delays"]).index(key), d])
               .generate_state(1)[0])
    return [_scheme(ctx, key, name, n, d, seed) for name in schemes()]


def _run_waits(ctx, key, name, n, d, seed):
    """``({k: (mean time, mean error, recovered fraction, exact share, mean load)}, why, code)``
    over the waits; ``why``: the reason the scheme cannot run at this load (else None)."""
    spec, (k0, ks) = ctx.shared["delays"][key], waits(n, ctx.sizes["k_step"])
    tuned = "p" in code_parameters(name)          # a design straggler probability: per wait
    out = {}
    for k in ks:
        if tuned or k == ks[0]:
            code, why = build(name, n, d, p=(n - k) / n if tuned else 0.0)
        if code is None:
            return out, why, None
        recs = simulate(code, spec["delay"], f"fastest:{k}", spec["rounds"],
                        compute=spec["compute"], seed=seed).records
        due = [r for r in recs if not math.isnan(r.decode_error)]   # (a sequential scheme's
        out[k] = (float(np.mean([r.time_s for r in recs])),          # first T rounds: no job)
                  float(np.mean([r.decode_error for r in due])),
                  float(np.mean([r.recovered_fraction for r in due])),
                  float(np.mean([r.exact for r in due])), float(np.mean(machine_load(code))))
    return out, None, code


def _scheme(ctx, key, name, n, d, seed) -> dict:
    row = {"experiment": "literature", "delay": key, "n": n, "d": d, "load": d / n,
           "scheme": name, "family": FAMILY.get(name)}
    got, why, code = _run_waits(ctx, key, name, n, d, seed)
    if why is not None:
        return {**row, "status": "skipped", "note": why}
    k0, _ = waits(n, ctx.sizes["k_step"])
    ctx.shared["curves"] += [{"delay": key, "n": n, "d": d, "scheme": name, "k": k,
                              "wait": f"fastest:{k}", "mean_round_time_s": t,
                              "mean_decode_error": e, "rel_error": e / n}
                             for k, (t, e, *_) in got.items()]
    reached = [k for k, (t, e, *_) in got.items() if e / n <= TARGET]
    t0, e0, frac, exact, load = got[k0]
    family = row["family"] or ("approximate" if code.s is None else "exact")
    note = "p = 1 - k/n at each wait fastest:k" if "p" in code_parameters(name) else ""
    return {**row, "family": family, "status": "ok", "note": note, "mean_load": load,
            "wait": f"fastest:{k0}", "mean_round_time_s": t0, "mean_decode_error": e0,
            "rel_error": e0 / n,
            "recovered_fraction": frac, "exact_share": exact, "target_rel_error": TARGET,
            "k_to_target": min(reached) if reached else None,
            "time_to_target_s": min(got[k][0] for k in reached) if reached else math.inf}


def _analyse(ctx, rows) -> dict:
    return {"rows": rows, "ctx": ctx, "curves": ctx.shared["curves"],
            "delays": {k: v["label"] for k, v in ctx.shared["delays"].items()}}


# --------------------------------------------------------------------------- reporting
def _ok(rows, key) -> list[dict]:
    return [r for r in rows if r["delay"] == key and r["status"] == "ok"]


def _lines(ax, rows, field, names):
    """One line per scheme of ``field`` against the load ``d``; infinite values left out."""
    import matplotlib.pyplot as plt
    colors = [*plt.get_cmap("tab20").colors, *plt.get_cmap("tab20b").colors]
    for i, name in enumerate(names):
        mine = sorted((r["d"], r[field]) for r in rows if r["scheme"] == name)
        if mine:
            x, y = zip(*mine)
            ax.plot(x, [v if math.isfinite(v) else math.nan for v in y], "os^vD<>p*hX"[i % 11]
                    + "-", color=colors[i % len(colors)], label=name, ms=5, alpha=0.85)


def _plot(facts):
    import matplotlib.pyplot as plt
    rows, n = facts["rows"], facts["rows"][0]["n"]
    names = schemes()
    fig, axes = plt.subplots(len(facts["delays"]), 2, figsize=(11, 3.8 * len(facts["delays"])),
                             squeeze=False)
    letters = iter("abcdefgh")
    for (key, label), (ax_t, ax_e) in zip(facts["delays"].items(), axes):
        ok = _ok(rows, key)
        _lines(ax_t, ok, "time_to_target_s", names)
        _lines(ax_e, ok, "rel_error", names)
        ax_t.set(title=f"({next(letters)}) {label}: time to a {TARGET:.0%} error",
                 xlabel=f"load d (partitions per worker, of n = {n})",
                 ylabel="mean round time (s)")
        ax_e.set(title=f"({next(letters)}) {label}: error at fastest:{waits(n, 1)[0]}",
                 xlabel=f"load d (partitions per worker, of n = {n})",
                 ylabel="||w B - 1||^2 / n")
        for ax in (ax_t, ax_e):
            ax.grid(alpha=0.3)
            ax.set_xticks(sorted({r["d"] for r in rows}))
    fig.suptitle("Every scheme at equal load d/n (a point missing: target not "
                 "reached or scheme not built; equal values overlap)")
    fig.tight_layout(rect=(0, 0.16 / len(facts["delays"]), 1, 1))
    seen = {}
    for ax in axes.ravel():
        for h, lab in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(lab, h)
    fig.legend(list(seen.values()), list(seen), loc="lower center", ncol=8, fontsize=8)
    return fig


def fastest(rows, key, d) -> tuple[str, float]:
    """The scheme reaching the target first at delay model ``key`` and load ``d`` (ties: the
    first in ``schemes()``' order), and its time.

    >>> rows = [{"delay": "x", "d": 2, "status": "ok", "scheme": "a", "time_to_target_s": 2.0},
    ...         {"delay": "x", "d": 2, "status": "ok", "scheme": "b", "time_to_target_s": 1.5}]
    >>> fastest(rows, "x", 2)
    ('b', 1.5)
    """
    mine = [r for r in _ok(rows, key) if r["d"] == d]
    best = min(mine, key=lambda r: r["time_to_target_s"])
    return best["scheme"], best["time_to_target_s"]


def _ours(facts) -> str:
    rows = facts["rows"]
    n = rows[0]["n"]
    parts = []
    for key, label in facts["delays"].items():
        loads = sorted({r["d"] for r in _ok(rows, key)})
        best = "; ".join("d={}: {} {:.3g} s".format(d, *fastest(rows, key, d)) for d in loads)
        parts.append(f"{label}: the first to a {TARGET:.0%} relative error at each load -- "
                     f"{best}")
    skipped = sorted({r["note"] for r in rows if r["status"] == "skipped"})
    return (f"n = {n} workers and partitions, {len(schemes())} schemes at the "
            f"loads d/n, d = {', '.join(map(str, sorted({r['d'] for r in rows})))}, through the "
            "simulator (fastest:k waits, common random numbers).  " + ".  ".join(parts)
            + f".  Skipped ({len(skipped)}, `results.csv`'s note): " + "; ".join(skipped) + ".")


def _files(facts) -> dict:
    from ...records import csv_text
    return {"curves.csv": csv_text(facts["curves"])}


# --------------------------------------------------------------------------- the ledger
def _times(rows, key, d, family=None, scheme=None) -> float:
    """The least time to target at ``(key, d)`` over a family's or one scheme's rows."""
    got = [r["time_to_target_s"] for r in _ok(rows, key)
           if r["d"] == d and (family is None or r["family"] == family)
           and (scheme is None or r["scheme"] == scheme)]
    return min(got) if got else math.nan


def _coding_pays(rows, key, where) -> Check:
    loads = sorted({r["d"] for r in _ok(rows, key)} - {1})
    uncoded = _times(rows, key, 1, scheme="uncoded")
    d = min(loads, key=lambda d: fastest(rows, key, d)[1])
    name, best = fastest(rows, key, d)
    return Check(
        where, "redundant load with coding (d > 1) reaches a target error sooner than uncoded "
        "synchronous SGD (d = 1, waiting for all): stragglers cost more than the extra compute",
        "coded < uncoded", f"{best:.3g} s ({name}, d = {d}) vs uncoded {uncoded:.3g} s",
        holds(best < uncoded), f"rule: the least time to a {TARGET:.0%} relative error over "
        f"every scheme at d = {', '.join(map(str, loads))} below uncoded's; simulated")


def _approx_vs_exact(rows, key, where) -> Check:
    loads = sorted({r["d"] for r in _ok(rows, key)} - {1})
    pairs = {d: (_times(rows, key, d, "approximate"), _times(rows, key, d, "exact"))
             for d in loads}
    return Check(
        where, "approximate gradient codes (bgc, frc-approx, expander and the other codes "
        "without exact decoding) reach a target error sooner than exact gradient codes (gc-fr, "
        "gc-cr, cyclic-mds, ...) of the same load", "approximate < exact",
        "; ".join(f"d={d}: {a:.3g} vs {e:.3g} s" for d, (a, e) in pairs.items()),
        holds(all(a < e for a, e in pairs.values())),
        f"rule: at every load d >= 2 the fastest approximate code's time to a {TARGET:.0%} "
        "error strictly below the fastest exact code's (simulated, the same delays); "
        "frc-approx's placement is gc-fr's (and isgc-fr's), so where FR is the fastest the "
        "two families tie")


def _mds_vs_cr(rows, key, where) -> Check:
    loads = [d for d in sorted({r["d"] for r in _ok(rows, key)})
             if not math.isnan(_times(rows, key, d, scheme="cyclic-mds") + _times(
                 rows, key, d, scheme="gc-cr"))]
    pairs = {d: (_times(rows, key, d, scheme="cyclic-mds"), _times(rows, key, d, scheme="gc-cr"))
             for d in loads}
    return Check(
        where, "cyclic-mds (Raviv et al. 2018) does at least as well as gc-cr (Tandon et al.) at "
        "the same load: the same cyclic support, exact from any n - s workers",
        "cyclic-mds <= gc-cr", "; ".join(f"d={d}: {m:.3g} vs {c:.3g} s"
                                         for d, (m, c) in pairs.items()),
        holds(bool(pairs) and all(m <= c for m, c in pairs.values())),
        f"rule: cyclic-mds's time to a {TARGET:.0%} error at most gc-cr's at every load both "
        "take (simulated, the same delays); beyond s stragglers both decode by least squares")


COMPARISONS = (_coding_pays, _approx_vs_exact, _mds_vs_cr)


def _comparison(facts) -> list[Check]:
    """The comparison's rows, on each delay model: the project's own checks (no paper makes
    these claims; the papers' own comparisons are their modules' rows); on the trace without
    the traces, ``not attempted``."""
    out = []
    for key, label in (("shexp", "shifted exponential"), ("lambda", "Lambda trace")):
        where = f"comparison, {label}"
        if key in facts["delays"]:
            got = [rule(facts["rows"], key, where) for rule in COMPARISONS]
        else:
            got = [Check.not_attempted(where, f"as on the shifted exponential: {rule.__name__}",
                                       "-", "no Lambda traces found (pass --traces DIR)")
                   for rule in COMPARISONS]
        for c in got:                        # one claim text per row (the ledger's order)
            c.claim = f"{c.claim} ({label} delays)"
        out += got
    return out


def _claims(facts) -> list[Claim]:
    """The claim modules' rows (``CLAIM_MODULES``: claims and checks; a row naming no paper is
    the literature's), then the comparison's checks."""
    out = []
    for name in CLAIM_MODULES:
        out += importlib.import_module(f"{__name__}.{name}").claims(facts["ctx"])
    for c in out:
        c.paper = LITERATURE if c.paper is None else c.paper
    return out + _comparison(facts)


CLAIM = ("The literature beyond papers 1-5 (Charles et al. 2017, Raviv et al. 2018, Li et al. "
         "2018, Bitar et al. 2020, Ye and Abbe 2018): approximate and MDS-type gradient codes "
         "against the seeds' schemes; each paper's statements checked by computation, then every "
         "scheme simulated at equal load.")

#: ``number=6``: the ledger's sixth group (``GROUPS``); every row names its own paper (a
#: citation, or "literature": ``_claims``)
SPECS = {"literature": Experiment(
    "literature", "The literature: every scheme at equal load, time to a target "
    "error and decoding error", "the literature (README, References; each row's citation)",
    CLAIM, number=6, sizes=SIZES, setup=_setup, configs=_configs, measure=_measure,
    analyse=_analyse, plot=_plot, ours=_ours, claims=_claims, files=_files)}
