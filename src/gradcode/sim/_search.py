"""The vectorised runtime search of paper 4, App. J/K: the estimated runtime of many sequential
schemes (or a whole parameter grid) on one delay profile at once.

Same estimate as ``estimate_runtime`` (bit for bit): the profile is shifted by
``(L - base_load) * alpha`` for a scheme of load ``L``, stragglers are found by the μ-rule, a
wait-out round lasts until the slowest worker and any other round ``min((1 + μ) fastest,
slowest)``; wait-outs follow the rule ``waitout`` (default ``"model"``, the authors' rule, which
``estimate_runtime`` uses; ``"deadline"`` is ``gradcode.sequential``'s default).  Instead of one
replay per parameter set, the straggler pattern is built once per distinct load and the wait-out
rule runs vectorised over instances: the design-model check alone for ``"model"``
(``model_waitouts``; SR-SGC's rule, which depends on its reattempts, replays the planner), the
planner once per distinct dynamics otherwise (``sequential.replay_many``).  Under ``"model"``
SR-SGC's trailing rounds whose due job is already decoded are not run and cost nothing.
``gradcode tune`` and benchmarks/bench_sequential.py use it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class SearchResult:
    """Per parameter set (scheme): ``runtime_s``, ``waitouts`` (wait-out rounds), ``load`` and
    ``T``; arrays in the order of the input.

    >>> import gradcode
    >>> D = np.ones((12, 4))
    >>> res = search_runtimes([gradcode.make_code("gc-seq", n=4, s=1)], D, jobs=10)
    >>> len(res), res.runtime_s.tolist(), res.waitouts.tolist(), res.T.tolist()
    (1, [10.0], [0], [0])
    """

    runtime_s: np.ndarray
    waitouts: np.ndarray
    load: np.ndarray
    T: np.ndarray

    def __len__(self) -> int:
        return len(self.runtime_s)


def check_profile(delays) -> np.ndarray:
    D = np.asarray(delays, float)
    if D.ndim != 2 or D.size == 0 or not np.all(np.isfinite(D)):
        raise ValueError(f"delays: expected a finite (rounds, n) array, got shape {D.shape}")
    return D


def check_jobs_mu(jobs, mu) -> int:
    if not isinstance(jobs, (int, np.integer)) or isinstance(jobs, bool) or jobs < 1:
        raise ValueError(f"jobs: expected an integer >= 1, got {jobs!r}")
    if not mu >= 0:
        raise ValueError(f"mu: expected mu >= 0, got {mu!r}")
    return int(jobs)


_CHUNK = 1 << 22          # elements of a (loads, rounds, n) float block built at once


def search_runtimes(schemes, delays, jobs: int = 20, mu: float = 1.0, alpha: float = 0.0,
                    base_load: float = 0.0, waitout: str = "model",
                    progress: bool = False) -> SearchResult:
    """Estimated runtime of ``jobs`` jobs for every sequential scheme in ``schemes`` on the delay
    profile ``delays (rounds, n)`` (module docstring); equal to ``estimate_runtime`` per scheme.

    Schemes are grouped by ``T`` (``jobs + T`` rounds each); within a group the shifted profile
    and its μ-rule pattern are built once per distinct load, and the wait-outs come from
    ``model_waitouts`` (rule ``"model"``) or ``replay_many`` (which runs the planner once per
    distinct dynamics).

    >>> import gradcode
    >>> from gradcode.sim import estimate_runtime, search_runtimes
    >>> D = np.where(np.random.default_rng(0).random((12, 6)) < 0.2, 4.0, 1.0)
    >>> schemes = [gradcode.make_code("gc-seq", n=6, s=s) for s in range(3)]
    >>> res = search_runtimes(schemes, D, jobs=10)
    >>> res.runtime_s.tolist() == [estimate_runtime(x, D, jobs=10).runtime_s for x in schemes]
    True
    """
    from ..sequential import check_rule, replay_many
    from ..stragglers import identify_stragglers

    D = check_profile(delays)
    jobs = check_jobs_mu(jobs, mu)
    rule = check_rule(waitout)
    schemes = list(schemes)
    R0, n = D.shape
    for x in schemes:
        if not getattr(x, "waitout_rules", ()):
            raise ValueError(f"schemes: expected sequential schemes (make_code('m-sgc', ...)), "
                             f"got {type(x).__name__}")
        if x.n != n:
            raise ValueError(f"delays: the profile has {n} workers, {x!r} {x.n}")
    P = len(schemes)
    load = np.array([float(np.max(x.load)) for x in schemes])
    T = np.array([int(x.T) for x in schemes], np.int64)
    runtime, waitouts = np.zeros(P), np.zeros(P, np.int64)
    if P and R0 < jobs + T.max():
        raise ValueError(f"delays: need at least jobs + T = {jobs + T.max()} rounds, the profile "
                         f"has {R0}")
    groups = np.unique(T)
    if progress and len(groups) > 1:
        from tqdm.auto import tqdm
        groups = tqdm(groups, desc="search", unit="T", leave=False)
    for t in groups:
        idx = np.flatnonzero(T == t)
        R = jobs + int(t)
        loads, inv = np.unique(load[idx], return_inverse=True)
        inv = inv.ravel()
        U = len(loads)
        S = np.empty((U, R, n), bool)
        hi, lo = np.empty((U, R)), np.empty((U, R))
        step = max(1, _CHUNK // (R * n))
        for a in range(0, U, step):
            # the same float operations as estimate_runtime: D[:R] + (L - base_load) * alpha
            Dc = D[None, :R] + ((loads[a:a + step] - base_load) * alpha)[:, None, None]
            S[a:a + step] = identify_stragglers(Dc, mu)
            hi[a:a + step], lo[a:a + step] = Dc.max(-1), Dc.min(-1)
        group = [schemes[i] for i in idx]
        skipped = np.zeros((len(idx), R), bool)
        dyn = np.array([rule != "model" or _model_dynamics(x) for x in group], bool)
        waits = np.zeros((len(idx), R), bool)
        if (~dyn).any():
            waits[~dyn] = model_waitouts([x for x, d in zip(group, dyn) if not d], S, inv[~dyn],
                                         jobs)
        if dyn.any():
            pats = list(S)                              # one array object per load
            res = replay_many([x for x, d in zip(group, dyn) if d],
                              [pats[u] for u in inv[dyn]], jobs, rule)
            waits[dyn], skipped[dyn] = res.waitout, res.skipped
        full = waits | ~S.any(-1)[inv]
        times = np.where(full, hi[inv], np.minimum((1 + mu) * lo[inv], hi[inv]))
        times[skipped] = 0.0                            # rounds not run (SR-SGC, "model")
        runtime[idx] = [float(row.sum()) for row in times]      # 1-D sums, as estimate_runtime
        waitouts[idx] = waits.sum(1)
    return SearchResult(runtime, waitouts, load, T)


def _model_dynamics(scheme) -> bool:
    """Whether ``scheme``'s ``"model"`` rule reads the planner's state (SR-SGC and -Rep: the
    authors' exemption of rounds without reattempts, and trailing rounds not run), so that
    ``model_waitouts`` does not apply and the planner is replayed."""
    from ..sequential import SRSGC
    return isinstance(scheme, SRSGC)


def model_waitouts(schemes, patterns: np.ndarray, which: np.ndarray, jobs: int) -> np.ndarray:
    """Wait-out mask ``(P, R)`` of the ``"model"`` rule for scheme ``p`` on
    ``patterns[which[p]]`` (all of one ``T``): round ``r < jobs + T`` is a wait-out iff it has
    stragglers and the last ``window`` rows of the effective pattern (earlier wait-outs cleared)
    leave the scheme's design model -- ``replay_many(..., waitout="model").waitout`` without the
    planner, whose state this rule never reads for GC and M-SGC (the tests check the two agree;
    SR-SGC's rule reads it: ``_model_dynamics``).

    The design models (Sec. 2.1) count stragglers per round, per window and per worker, so
    workers that straggle in none of the patterns are dropped first (exact, and about half the
    work on the Lambda traces)."""
    P, R = len(schemes), patterns.shape[1]
    out = np.zeros((P, R), bool)
    cols = patterns.any((0, 1))
    groups: dict[tuple, list[int]] = {}
    for i, x in enumerate(schemes):
        groups.setdefault((type(x), x.batch_key("model")), []).append(i)
    for (cls, _), idx in groups.items():
        reps = [schemes[i] for i in idx]
        core = cls.batch_core(reps, jobs, "model")
        S = patterns[which[idx]][:, :, cols]
        keep, last = core.window - 1, jobs + int(reps[0].T)
        hist = np.zeros((len(idx), keep, S.shape[2]), bool)
        for r in range(min(R, last)):
            late = S[:, r]
            wait = late.any(-1)
            if wait.any():
                wait &= ~core.model_ok(np.concatenate([hist, late[:, None]], axis=1))
            if keep:
                hist = np.concatenate([hist[:, 1:], (late & ~wait[:, None])[:, None]], axis=1)
            out[idx, r] = wait
    return out


def search(family: str, grid: dict, delays, jobs: int = 20, mu: float = 1.0, alpha: float = 0.0,
           base_load: float = 0.0, waitout: str = "model", progress: bool = False) -> SearchResult:
    """Estimated runtime of every parameter set of the sequential ``family`` in ``grid`` (a dict
    of equal-length integer arrays, e.g. ``{"B": ..., "W": ..., "lam": ...}``; ``n`` is the
    profile's width).  Every set must be valid (ValueError naming the parameter otherwise).

    One scheme is built per distinct dynamics: under ``"deadline"`` SR-SGC (and -Rep) depends on
    ``(B, W, λ)`` only through ``(B, s)`` (its planner's batch key), so a grid of thousands of
    λ values replays a few hundred instances."""
    from ..analysis import SGC_SCHEMES, sgc_load, sr_sgc_s
    from ..registry import code_class, code_parameters
    from ..sequential import check_rule

    D = check_profile(delays)
    rule = check_rule(waitout)
    if family not in SGC_SCHEMES:
        raise ValueError(f"family: expected one of {', '.join(SGC_SCHEMES)}, got {family!r}")
    if not isinstance(grid, dict) or not grid:
        raise ValueError(f"grid: expected a dict of parameter arrays, got {grid!r}")
    expected = set(code_parameters(family)) - {"n"}
    cols = {}
    for k, v in grid.items():
        if k not in expected:
            raise ValueError(f"{k}: not a parameter of {family!r}; the grid takes "
                             f"{', '.join(sorted(expected))}")
        a = np.asarray(v).ravel()
        if a.size and not (np.issubdtype(a.dtype, np.integer) and a.dtype != bool):
            raise ValueError(f"{k}: expected integers, got dtype {a.dtype}")
        cols[k] = a.astype(np.int64)
    sizes = {len(a) for a in cols.values()}
    if len(sizes) != 1:
        raise ValueError(f"grid: every parameter needs the same number of values, got "
                         f"{ {k: len(a) for k, a in cols.items()} }")
    n = D.shape[1]
    if family == "gc-seq":
        need = ["s"]
    else:
        need = ["B", "W", "lam"]
    for k in need:
        if k not in cols:
            raise ValueError(f"{k}: {family!r} needs {', '.join(need)} in the grid")
    if not sizes.pop():
        e = np.zeros(0)
        return SearchResult(e, e.astype(np.int64), e, e.astype(np.int64))
    sgc_load(family, n, cols.get("B"), cols.get("W"), cols.get("lam"), s=cols.get("s"))  # validates
    if family.startswith("sr-sgc") and rule == "deadline":
        key = np.stack([cols["B"], sr_sgc_s(cols["B"], cols["W"], cols["lam"])], 1)
    else:
        key = np.stack(list(cols.values()), 1)
    _, first, back = np.unique(key, axis=0, return_index=True, return_inverse=True)
    cls = code_class(family)
    schemes = [cls(n=n, **{k: int(a[i]) for k, a in cols.items()}) for i in first]
    res = search_runtimes(schemes, D, jobs, mu, alpha, base_load, rule, progress)
    back = back.ravel()
    return SearchResult(res.runtime_s[back], res.waitouts[back], res.load[back], res.T[back])
