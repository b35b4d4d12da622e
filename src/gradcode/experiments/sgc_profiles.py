"""Paper 4 (sequential GC): the delay profiles its experiments replay -- the authors' AWS
Lambda traces (``--traces`` or ../shared/traces: the 30-round Canada load sweep at 2048 samples
per round, 10-20-round profiles of four regions), with App. J's load slope ``α`` fitted on the
sweep, or a synthetic Gilbert-Elliott stand-in when they are missing (a note says so).

``reference`` (a ``Reference``: the sweep kept, for ``sgc-trace-stats``, ``sgc-estimator``,
``sgc-switching``, ``sgc-decode-time``) and ``reference_profile`` (a ``Profile``: ``α`` scaled to
Table 1's batch, for ``sgc-table1`` and ``sgc-selection``); ``on_trace``: a claim that rests on
the real traces.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..stragglers import fit_load_slope, load_trace, traces_dir
from ._experiment import Context, derive_seed
from ._ledger import Claim

N = 256
MU = 1.0
SWEEP_GLOB = "canada-w256-r30-load*.csv"
#: α used by the synthetic stand-in: the Canada fit (s per unit of normalized load)
SYNTH_ALPHA = 1.12
#: the authors' own α for their 4096-sample reference profile (their repository's file name
#: ``...base_comp2_201...``, issue 12); the bundled sweep has 2048 samples per round
AUTHORS_ALPHA, AUTHORS_BATCH, TRACE_BATCH = 2.201, 4096, 2048


@dataclass
class Reference:
    """The reference delay profile ``D (rounds, n)`` at load 0, ``α`` (and the fit's intercept)
    from the load sweep ``[(load, profile), ...]``; ``real``: the Lambda traces (else synthetic)."""
    label: str
    D: np.ndarray
    alpha: float
    intercept: float
    real: bool
    sweep: list = field(default_factory=list)
    others: list = field(default_factory=list)     # [(file name, profile)]: other load-0 traces
    source: str = ""


def synthetic_profile(rng, rounds: int, n: int = N) -> np.ndarray:
    """Stand-in for a Lambda profile: base 0.55 s + Gamma(9, 0.012) s per response, and a
    Gilbert-Elliott slow state per worker (enter 3 %, leave 60 %) adding U(0.4, 1.2) s."""
    base = 0.55 + rng.gamma(9.0, 0.012, (rounds, n))
    bad, slow = np.zeros(n, bool), np.zeros((rounds, n), bool)
    for t in range(rounds):
        u = rng.random(n)
        bad = np.where(bad, u >= 0.6, u < 0.03)
        slow[t] = bad
    return base + slow * rng.uniform(0.4, 1.2, (rounds, n))


def _load_of(path: Path) -> float:      # canada-w256-r30-load0_250.csv -> 0.25
    return float(path.stem.split("load")[1].replace("_", "."))


def reference(ctx: Context, synth_rounds: int) -> Reference:
    """The Canada load-0 trace and the sweep's ``α`` (``ctx.traces`` or ``traces_dir()``), else
    a synthetic profile of ``synth_rounds`` rounds and a synthetic sweep (linear by
    construction, ``α`` = ``SYNTH_ALPHA``), with a note saying which."""
    folder = ctx.traces or traces_dir()
    files = sorted(folder.glob(SWEEP_GLOB)) if folder else []
    if len({_load_of(p) for p in files}) >= 2:
        sweep = sorted(((_load_of(p), load_trace(p)) for p in files), key=lambda x: x[0])
        alpha, intercept = fit_load_slope(sweep)
        base = next(p for p in files if _load_of(p) == sweep[0][0])
        others = [(p.name, load_trace(p)) for p in sorted(folder.glob("*load0_000.csv"))
                  if p != base]
        ctx.notes.append(f"Reference profile: {base} ({sweep[0][1].shape[0]} rounds x "
                         f"{sweep[0][1].shape[1]} workers); load sweep "
                         f"{', '.join(f'{l:g}' for l, _ in sweep)}: alpha = {alpha:.3f} s per "
                         f"unit of normalized load (intercept {intercept:.3f} s).")
        return Reference("Lambda Canada (real)", sweep[0][1], alpha, intercept, True, sweep,
                         others, str(base))
    rng = np.random.default_rng(np.random.SeedSequence([ctx.seed, 4, 1]))
    D = synthetic_profile(rng, synth_rounds)
    sweep = [(0.0, D)] + [(L, synthetic_profile(rng, synth_rounds) + L * SYNTH_ALPHA)
                          for L in (0.25, 0.5, 0.75, 1.0)]
    alpha, intercept = fit_load_slope(sweep)
    ctx.notes.append("Real Lambda traces not found (pass --traces DIR): a synthetic "
                     f"Gilbert-Elliott profile ({synth_rounds} rounds x {N} workers) and a "
                     f"synthetic load sweep (linear by construction, alpha = {SYNTH_ALPHA}) "
                     "stand in; claims that need the traces are 'not attempted'.")
    return Reference("synthetic GE", D, alpha, intercept, False, sweep, [], "synthetic")


def on_trace(ref: Reference, where, claim, paper_value, ours, verdict, why, *, kind: str,
             setting: str, **kw) -> Claim:
    """A claim that rests on the trace: as given (a computed ``verdict``, its ``kind`` and
    ``setting``: the real trace is itself a stand-in for the paper's profile, which ``setting``
    names) on the real traces; on the synthetic stand-in ``Claim.not_attempted``, saying so."""
    if not ref.real:
        return Claim.not_attempted(
            where, claim, paper_value, ours=ours, kind=kind, setting=SYNTHETIC, **kw,
            why="no Lambda traces found: the value is from the synthetic Gilbert-Elliott "
            "stand-in and is no evidence either way (pass --traces DIR)")
    return Claim(where, claim, paper_value, ours, verdict, why, kind=kind, setting=setting, **kw)


#: the ``setting`` of a row whose trace is missing (``on_trace``)
SYNTHETIC = "stand-in: a synthetic Gilbert-Elliott profile (no Lambda traces found)"


DEFAULT_ALPHA, ROUNDS = 1.122, 30    # the synthetic profile's α (the Canada fit) and length
SCALE = AUTHORS_BATCH / TRACE_BATCH   # α at Table 1's batch / α at the profile's


@dataclass
class Profile:
    """A reference delay profile ``D (rounds, n)`` (workers at load 0), its load slope ``fit``
    (s per unit load at the profile's 2048 samples per round) and ``alpha``, the slope at
    Table 1's 4096 samples per round (``fit`` scaled by the batch): the paper's setting."""
    label: str
    D: np.ndarray
    alpha: float
    fit: float


def reference_profile(ctx: Context) -> Profile:
    """The Canada 30-round profile of ../shared/traces (``--traces``) with α fitted on its load
    sweep (App. J, Fig. 16), else a synthetic Gilbert-Elliott one (a note says so)."""
    folder = ctx.traces or traces_dir()
    sweep = sorted(folder.glob("canada-w256-r30-load*.csv")) if folder else []
    if sweep:
        profiles = [(float(p.stem.split("load")[1].replace("_", ".")), load_trace(p))
                    for p in sweep]
        alpha, intercept = fit_load_slope(profiles)
        D = min(profiles, key=lambda lp: lp[0])[1]
        ctx.notes.append(
            f"Profile: {sweep[0].parent}/{sweep[0].name} ({D.shape[0]} rounds x {D.shape[1]} "
            f"workers, 2048 samples a round, load 0); App. J's fit over the {len(sweep)} loads "
            f"gives alpha = {alpha:.3f} s per unit load (intercept {intercept:.3f} s), "
            f"{alpha * SCALE:.3f} s scaled to Table 1's {AUTHORS_BATCH} samples per round (the "
            f"estimates' alpha); the authors' Table 1 profile: 100 rounds of 4096 samples, "
            f"alpha = {AUTHORS_ALPHA}.")
        return Profile("Lambda Canada (real)", D, alpha * SCALE, alpha)
    ctx.notes.append(
        "Real Lambda traces not found (pass --traces DIR): a synthetic Gilbert-Elliott profile "
        f"stands in ({ROUNDS} rounds x {N} workers, base 0.7 s + Gamma(9, 0.015) s, slow state "
        f"entered w.p. 2 % and left w.p. 50 % adding U(0.5, 1.5) s; alpha = {DEFAULT_ALPHA}, "
        f"{DEFAULT_ALPHA * SCALE:.3f} scaled to Table 1's batch).")
    rng = np.random.default_rng(derive_seed(ctx, 4, 1))
    return Profile("synthetic GE", ge_profile(rng, ROUNDS), DEFAULT_ALPHA * SCALE,
                   DEFAULT_ALPHA)


def ge_profile(rng, rounds, n=N):
    """``sgc-table1``'s stand-in: base 0.7 s + Gamma(9, 0.015) s per response, and a
    Gilbert-Elliott slow state per worker (enter 2 %, leave 50 %) adding U(0.5, 1.5) s."""
    base, bad, slow = 0.7 + rng.gamma(9.0, 0.015, (rounds, n)), np.zeros(n, bool), []
    for u in rng.random((rounds, n)):          # Gilbert-Elliott: enter 2 %, leave 50 %
        slow.append(bad := np.where(bad, u >= 0.5, u < 0.02))
    return base + np.array(slow) * rng.uniform(0.5, 1.5, (rounds, n))
