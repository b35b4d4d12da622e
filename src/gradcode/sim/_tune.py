"""Runtime estimation from a delay profile and the exhaustive parameter search of paper 4, App. J.

A delay profile is ``(rounds, n)`` response times measured at ``base_load``; a scheme of
normalized load ``L`` shifts them by ``(L - base_load) * alpha`` (``alpha`` from
``gradcode.stragglers.fit_load_slope``).  Stragglers are found by the μ-rule; a round the scheme
cannot absorb is a wait-out (for sequential schemes, a round that breaks the scheme's design
model, judged with earlier wait-outs cleared; for a single-round code, a round whose
non-stragglers do not decode exactly) and lasts until the slowest worker; any other round lasts
``min((1 + μ) fastest, slowest)``.  The estimated runtime of ``jobs`` jobs is the sum over the
``jobs + T`` rounds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..codes import make_code


@dataclass
class RuntimeEstimate:
    runtime_s: float
    waitouts: int
    rounds: int
    load: float
    round_times: np.ndarray


def _profile(delays) -> np.ndarray:
    D = np.asarray(delays, float)
    if D.ndim != 2 or D.size == 0 or not np.all(np.isfinite(D)):
        raise ValueError(f"delays: expected a finite (rounds, n) array, got shape {D.shape}")
    return D


def estimate_runtime(code, delays, jobs: int = 20, mu: float = 1.0, alpha: float = 0.0,
                     base_load: float = 0.0) -> RuntimeEstimate:
    """Estimated time to finish ``jobs`` jobs with ``code`` (single-round code or sequential
    scheme) on the delay profile ``delays`` (see the module docstring)."""
    from ..sequential import replay
    from ..stragglers import identify_stragglers

    D = _profile(delays)
    if not isinstance(jobs, (int, np.integer)) or jobs < 1:
        raise ValueError(f"jobs: expected an integer >= 1, got {jobs!r}")
    if not mu >= 0:
        raise ValueError(f"mu: expected mu >= 0, got {mu!r}")
    n = D.shape[1]
    sequential = not hasattr(code, "B_sparse")
    n_code = code.n if sequential else code.n_workers
    if n_code != n:
        raise ValueError(f"delays: the profile has {n} workers, the code {n_code}")
    T = int(code.T) if sequential else 0
    R = jobs + T
    if D.shape[0] < R:
        raise ValueError(f"delays: need at least jobs + T = {R} rounds, the profile has {D.shape[0]}")
    load = float(np.max(code.load))
    D = D[:R] + (load - base_load) * alpha
    S = identify_stragglers(D, mu)
    waits = np.zeros(R, bool)
    if sequential:
        waits[replay(code, S, jobs, waitout="model").waitouts] = True
    else:
        rng = np.random.default_rng(0)
        for r in np.flatnonzero(S.any(1)):
            waits[r] = not code.decode(np.flatnonzero(~S[r]), rng=rng).exact
    hi, lo = D.max(1), D.min(1)
    times = np.where(waits | ~S.any(1), hi, np.minimum((1 + mu) * lo, hi))
    return RuntimeEstimate(float(times.sum()), int(waits.sum()), R, load, times)


def parameter_grid(family: str, n: int, jobs: int, max_delay: int) -> list[dict]:
    """Every valid parameter set of ``family`` with ``T <= max_delay`` and ``W <= jobs``."""
    if family == "uncoded":
        return [{"n": n}]
    if family == "gc-seq":
        return [{"n": n, "s": s} for s in range(n)]
    out = []
    for B in range(1, max_delay + 1):
        for W in range(B + 1, jobs + 1):
            T = B if family == "sr-sgc" else W - 2 + B
            if T > max_delay:
                continue
            for lam in range(1, n + 1):
                out.append({"n": n, "B": B, "W": W, "lam": lam})
    return out


FAMILIES = ("uncoded", "gc-seq", "sr-sgc", "m-sgc")


def tune(delays, jobs: int = 20, mu: float = 1.0, alpha: float = 0.0, base_load: float = 0.0,
         max_delay: int = 10, families=FAMILIES, progress: bool = False) -> list[dict]:
    """Exhaustive search (paper 4, App. J): one row per valid parameter set of each family, with
    ``family, params, load, T, runtime_s, waitouts``, sorted by estimated runtime."""
    D = _profile(delays)
    n = D.shape[1]
    rows = []
    sets = [(f, p) for f in families for p in parameter_grid(f, n, jobs, max_delay)]
    if progress:
        from tqdm.auto import tqdm
        sets = tqdm(sets, desc="tune", unit="set", leave=False)
    for family, p in sets:
        try:
            code = make_code(family, **p)
        except ValueError:
            continue                                        # not a valid parameter combination
        T = int(getattr(code, "T", 0))
        if T > max_delay or D.shape[0] < jobs + T:
            continue
        est = estimate_runtime(code, D, jobs, mu, alpha, base_load)
        rows.append({"family": family, "params": {k: v for k, v in p.items() if k != "n"},
                     "load": est.load, "T": T, "runtime_s": est.runtime_s,
                     "waitouts": est.waitouts})
    rows.sort(key=lambda r: r["runtime_s"])
    return rows


def best_per_family(rows: list[dict]) -> dict[str, dict]:
    best = {}
    for r in rows:
        best.setdefault(r["family"], r)
    return best


def isgc_w_table(code, delays, alpha: float = 0.0, base_load: float = 0.0, seed: int = 0) -> list[dict]:
    """IS-GC's trade-off (paper 2, Sec. VIII): for each w, the mean round time when the master
    waits for the fastest w workers of the load-adjusted profile, and the mean fraction of the
    gradient the decoder recovers from them.  Time to a target loss is roughly
    steps(recovered) x time per round; with a model, pick w by simulating (``simulate`` with a
    ``Trainer``) on the rows of interest."""
    D = _profile(delays)
    if code.n_workers != D.shape[1]:
        raise ValueError(f"delays: the profile has {D.shape[1]} workers, the code {code.n_workers}")
    D = D + (np.asarray(code.load, float) - base_load) * alpha
    order = np.argsort(D, axis=1)
    rng = np.random.default_rng(seed)
    rows = []
    for w in range(1, code.n_workers + 1):
        t = np.sort(D, axis=1)[:, w - 1]
        rec = [code.decode(o[:w], rng=rng).recovered_fraction for o in order]
        rows.append({"w": w, "mean_round_time_s": float(t.mean()),
                     "mean_recovered_fraction": float(np.mean(rec)),
                     "time_per_recovered_s": float(t.mean() / max(np.mean(rec), 1e-12))})
    return rows
