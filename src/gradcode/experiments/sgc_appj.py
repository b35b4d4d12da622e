"""Paper 4 (sequential gradient coding): Table 1 and the authors' own App. J estimates as data,
App. J's search (the best parameters per family) and an estimate split into base, load and
wait-out seconds; shared by ``sgc-table1`` (``sgc``) and ``sgc-selection``.
"""

from __future__ import annotations

import numpy as np

from ..registry import make_code
from ..sim import best_per_family, estimate_runtime, tune
from ..stragglers import identify_stragglers
from .sgc_profiles import MU

M_MODELS = 4
MAX_DELAY = M_MODELS - 1                 # Remark 2.1: T <= M - 1 when M models are interleaved
FAMILIES = ("uncoded", "gc-seq", "sr-sgc", "m-sgc")
LABELS = {"uncoded": "no coding", "gc-seq": "GC", "sr-sgc": "SR-SGC", "m-sgc": "M-SGC"}
#: paper 4, Table 1: parameters, printed normalized load, measured run time of 480 jobs (s), std
TABLE1 = {"m-sgc": ({"B": 1, "W": 2, "lam": 27}, "0.008", 891.37, 43.10),
          "sr-sgc": ({"B": 2, "W": 3, "lam": 23}, "0.051", 994.22, 43.66),
          "gc-seq": ({"s": 15}, "0.062", 1064.96, 46.72),
          "uncoded": ({}, "0.004", 1307.79, 61.88)}
#: the authors' own App. J estimate (their trace simulator, μ = 1, base load 0) on their
#: 100-round, 4096-sample Canada reference profile with α = 2.201, for J jobs: {J: {family:
#: (params, estimated runtime s)}}.  Source: github.com/mamaj/Sequential-Gradient-Coding-2,
#: AUTHORS_SOURCE with J filled in (read for the numbers; no code taken)
AUTHORS_SOURCE = ("delay_profiles/sam-gc-cnn_profile_est_desktop_long4_new/"
                  "mu1_000-base_load0_000-njobs{J}-base_comp2_201-Canada.csv")
#: per J: GC's s and runtime, M-SGC's (B, W, λ) and runtime, SR-SGC's, no coding's runtime
_AUTHORS = [(10, 9, 12.69, (1, 2, 24), 12.99, (4, 9, 22), 12.36, 14.67),
            (20, 10, 26.45, (1, 2, 24), 25.68, (4, 9, 22), 25.66, 29.61),
            (40, 11, 54.08, (1, 2, 27), 51.80, (2, 3, 20), 53.59, 60.04),
            (60, 14, 82.05, (1, 2, 27), 78.05, (2, 3, 22), 79.30, 91.80),
            (80, 15, 109.36, (1, 2, 27), 103.73, (2, 3, 23), 105.92, 122.64)]
AUTHORS_EST = {J: {"gc-seq": ({"s": s}, tg), "m-sgc": (dict(zip(("B", "W", "lam"), m)), tm),
                   "sr-sgc": (dict(zip(("B", "W", "lam"), r)), tr), "uncoded": ({}, tu)}
               for J, s, tg, m, tm, r, tr, tu in _AUTHORS}


def fmt_params(family, params) -> str:
    """A family's parameters as Table 1 prints them: ``-``, ``s = 15``, ``(1, 2, 27)``."""
    return ("-" if family == "uncoded" else f"s = {params['s']}" if family == "gc-seq"
            else f"({params['B']}, {params['W']}, {params['lam']})")


def best(D, jobs, alpha, max_delay=MAX_DELAY, families=FAMILIES, cache=None) -> dict:
    """App. J's search: the best row of ``tune`` per family (memoised in ``cache``)."""
    cache, key = {} if cache is None else cache, (jobs, alpha, max_delay, tuple(families))
    if key not in cache:
        cache[key] = best_per_family(tune(D, jobs=jobs, mu=MU, alpha=alpha, base_load=0.0,
                                          max_delay=max_delay, families=families))
    return cache[key]


def decompose(family, params, D, jobs, alpha) -> dict:
    """App. J's estimate of ``jobs`` jobs split over the rounds run: ``base_s`` (μ-rule round
    times at load 0) + ``load_s`` (what ``L α`` adds) + ``waitout_s`` (what wait-outs add)."""
    est = estimate_runtime(make_code(family, n=D.shape[1], **params), D, jobs=jobs, mu=MU,
                           alpha=alpha, base_load=0.0)
    run = est.round_times > 0

    def normal(X):
        return np.where(identify_stragglers(X, MU).any(1),
                        np.minimum((1 + MU) * X.min(1), X.max(1)), X.max(1))
    base, shifted = normal(D[:est.rounds]), normal(D[:est.rounds] + est.load * alpha)
    return {"runtime_s": est.runtime_s, "waitouts": est.waitouts, "load": est.load,
            "rounds_run": int(run.sum()), "base_s": float(base[run].sum()),
            "load_s": float((shifted - base)[run].sum()),
            "waitout_s": float((est.round_times - shifted)[run].sum())}
