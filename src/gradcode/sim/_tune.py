"""Runtime estimation from a delay profile and the exhaustive parameter search of paper 4, App. J.

A delay profile is ``(rounds, n)`` response times measured at ``base_load``; a worker of
normalized load ``L_i`` (``scheme.load``) shifts its times by ``(L_i - base_load) * alpha``
(``alpha`` from ``gradcode.stragglers.fit_load_slope``), as the loop's ``Trace`` delays do, and a
code sending ``1 / m`` of the gradient (``scheme.slices``, ``comm-efficient``) by
``-(1 - 1 / m) * send`` (``send``: the seconds of the profile's times spent sending a whole
gradient, as ``Compute.send_s`` in the simulator).  Stragglers are found by the μ-rule; a round the scheme
cannot absorb is a wait-out (for sequential schemes, a round that breaks the scheme's design
model, judged with earlier wait-outs cleared -- the authors' ``"model"`` rule; for a
single-round code, a round whose non-stragglers do not decode exactly) and lasts until the
slowest worker; any other round lasts ``min((1 + μ) fastest, slowest)``.  The estimated runtime
of ``jobs`` jobs is the sum over the ``jobs + T`` rounds, except that under ``"model"`` an
SR-SGC round ``r >= jobs`` whose due job ``r - B`` is already decoded is not run and costs
nothing (the authors' simulator, ``gradcode.sequential.Planner``).

``tune`` evaluates the sequential schemes' parameter sets together with the vectorised search of
``_search.search_runtimes`` (one straggler pattern per distinct load, the wait-out rule run
vectorised over all sets), which gives exactly ``estimate_runtime``'s figures.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from ..codes import EXACT_RTOL
from ..registry import code_class, code_parameters
from ._search import check_jobs_mu, check_profile, search_runtimes

#: codes ``tune`` keeps between calls: App. J's table tunes one grid per number of jobs and
#: slope, the same codes each time (sgc-table1's quick run built 170,566 codes, 13,317 distinct:
#: ~6 s of its ~19); a grid of sequential schemes at n = 256 is ~13,000 codes of ~2.7 kB
BUILT = 1 << 14


@dataclass
class RuntimeEstimate:
    """``estimate_runtime``'s answer: the estimated ``runtime_s`` of the jobs, the number of
    ``waitouts``, the ``rounds`` played (``jobs + T``), the scheme's ``load``, the time of each
    round (``round_times``) and ``skipped_s``, what the rounds not run would have taken.

    SR-SGC (``T = 1``) on a made-up profile of 3 rounds x 4 workers: worker 3 straggles in round
    1 (one straggler, ``s = 1``: absorbed), workers 2 and 3 in round 2, which is not run: the job
    due in it (job 1, under the ``"model"`` rule) is already decoded:

    >>> import gradcode
    >>> D = np.array([[1, 1, 1, 1], [1, 1, 1, 5], [1, 1, 5, 5.0]])
    >>> x = gradcode.make_code("sr-sgc", n=4, B=1, W=2, lam=2)
    >>> est = estimate_runtime(x, D, jobs=2)
    >>> est.rounds, est.waitouts, est.round_times.tolist(), est.runtime_s, est.skipped_s
    (3, 0, [1.0, 2.0, 0.0], 3.0, 2.0)
    """

    runtime_s: float
    waitouts: int
    rounds: int
    load: float
    round_times: np.ndarray        # 0 for a round not run (SR-SGC's trailing rounds, "model")
    skipped_s: float = 0.0         # what the rounds not run would have taken


def estimate_runtime(code, delays, jobs: int = 20, mu: float = 1.0, alpha: float = 0.0,
                     base_load: float = 0.0, waitout: str = "model",
                     max_error: float = 0.0, send: float = 0.0) -> RuntimeEstimate:
    """Estimated time to finish ``jobs`` jobs with ``code`` (single-round code or sequential
    scheme) on the delay profile ``delays`` (see the module docstring): round time
    ``min((1+μ)·fastest, slowest)``, and a round the scheme's conformance check rejects is a
    wait-out lasting until the slowest.  ``waitout``: a sequential scheme's wait-out rule,
    ``"model"`` (default; the authors' rule: the round's stragglers leave the scheme's design
    model) or ``"deadline"`` (``gradcode.sequential``'s rule: some job would miss its deadline).
    ``max_error``: a single-round code absorbs a round whose non-stragglers decode with a
    relative error ``||w B - 1||^2 / k`` of at most this (0, the default: exactly); what an
    approximate code (bgc, expander) is tuned by.  ``send``: seconds of each response spent
    sending a whole gradient (a code sending ``1 / m`` of it saves ``(1 - 1 / m) send``).

    A made-up profile of 3 rounds x 4 workers, μ = 1: round 0 has no straggler (it lasts until
    the slowest), round 1 one (``(1+μ)·fastest``), round 2 two, more than (4, 1)-GC tolerates (a
    wait-out, until the slowest); the uncoded scheme waits out both:

    >>> import gradcode
    >>> D = np.array([[1, 1, 1, 1], [1, 1, 1, 5], [1, 1, 5, 5.0]])
    >>> est = estimate_runtime(gradcode.make_code("gc-seq", n=4, s=1), D, jobs=3)
    >>> est.round_times.tolist(), est.runtime_s, est.waitouts, est.load
    ([1.0, 2.0, 5.0], 8.0, 1, 0.5)
    >>> estimate_runtime(gradcode.make_code("uncoded", n=4), D, jobs=3).round_times.tolist()
    [1.0, 5.0, 5.0]
    >>> est = estimate_runtime(gradcode.make_code("gc-seq", n=4, s=1), D, jobs=3, alpha=2.0)
    >>> est.round_times.tolist()                  # every time + load * alpha = + 1 s
    [2.0, 4.0, 6.0]
    >>> code = gradcode.make_code("comm-efficient", n=4, s=1, m=2)       # half the bytes
    >>> estimate_runtime(code, D, jobs=3, send=0.5).round_times.tolist()  # - (1 - 1/2) 0.5 s
    [0.75, 1.5, 4.75]
    """
    from ..sequential import check_rule, replay
    from ..stragglers import identify_stragglers

    D = check_profile(delays)
    jobs = check_jobs_mu(jobs, mu)
    alpha, base_load = check_load_model(alpha, base_load)
    rule = check_rule(waitout)
    max_error = check_max_error(max_error)
    send = check_send(send, D)
    n = D.shape[1]
    sequential = bool(code.waitout_rules)
    if code.n_workers != n:
        raise ValueError(f"delays: the profile has {n} workers, the code {code.n_workers}")
    T = int(code.T)
    R = jobs + T
    if D.shape[0] < R:
        raise ValueError(f"delays: need at least jobs + T = {R} rounds, the profile has {D.shape[0]}")
    load = float(np.max(code.load))
    D = D[:R] + (np.asarray(code.load, float) - base_load) * alpha     # each worker its own load
    if code.slices > 1:                        # shorter messages than the profile's
        D = D - (1 - 1 / code.slices) * send
    S = identify_stragglers(D, mu)
    waits = np.zeros(R, bool)
    skipped = np.zeros(R, bool)
    if sequential:
        rep = replay(code, S, jobs, waitout=rule)
        waits[rep.waitouts] = True
        skipped[rep.skipped] = True
    else:
        rng = np.random.default_rng(0)
        lost = _loses_data(code) if max_error == 0 else None
        k = code.n_partitions
        for r in np.flatnonzero(S.any(1)):
            if lost is not None and (S[r] & lost).any() and S[r].sum() > code.s:
                waits[r] = True        # what decode (least squares, no rng draw) would find
            else:
                d = code.decode(np.flatnonzero(~S[r]), rng=rng)
                waits[r] = not (d.exact or d.error / k <= max_error)
    hi, lo = D.max(1), D.min(1)
    times = np.where(waits | ~S.any(1), hi, np.minimum((1 + mu) * lo, hi))
    skipped_s = float(times[skipped].sum())
    times[skipped] = 0.0                       # rounds not run (SR-SGC, rule "model")
    return RuntimeEstimate(float(times.sum()), int(waits.sum()), R, load, times, skipped_s)


def _finite(x) -> bool:
    """A real number (not a bool), finite."""
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool) \
        and math.isfinite(x)


def check_max_error(max_error) -> float:
    """``max_error`` as a float in ``[0, inf)``, or ValueError naming it.

    >>> check_max_error(0), check_max_error(0.05)
    (0.0, 0.05)
    """
    if not (_finite(max_error) and max_error >= 0):
        raise ValueError(f"max_error: expected a finite relative decoding error >= 0, got "
                         f"{max_error!r}")
    return float(max_error)


def check_send(send, D: np.ndarray) -> float:
    """``send`` (seconds of each response spent sending a whole gradient) as a float in
    ``[0, fastest response of the profile D]``, or ValueError naming it.

    >>> check_send(0.5, np.array([[1.0, 2.0]]))
    0.5
    """
    if not (_finite(send) and send >= 0):
        raise ValueError(f"send: expected a finite number of seconds >= 0, got {send!r}")
    if send > D.min():
        raise ValueError(f"send: at most the profile's fastest response, {D.min():g} s (each "
                         f"response includes sending a whole gradient), got {send!r}")
    return float(send)


def check_load_model(alpha, base_load) -> tuple[float, float]:
    """``alpha`` (seconds per unit load: finite; a slope fitted to noisy profiles may be
    negative) and ``base_load`` (the profile's normalized load: finite, >= 0) as floats, or
    ValueError naming the one that is not (a NaN would make every runtime NaN and still pick a
    "best")."""
    if not _finite(alpha):
        raise ValueError(f"alpha: expected a finite number of seconds per unit load, got {alpha!r}")
    if not (_finite(base_load) and base_load >= 0):
        raise ValueError(f"base_load: expected a finite normalized load >= 0, got {base_load!r}")
    return float(alpha), float(base_load)


def _loses_data(code):
    """For an exact code (``s`` set) whose every partition is held by exactly one worker (e.g.
    ``uncoded``): the workers holding data, whose absence leaves a partition uncovered, so the
    least-squares decoder (used beyond ``s`` missing) recovers 0 for it and cannot be exact
    (its weights give an error scale of at most the number of partitions).  Else None."""
    if code.s is None:
        return None
    B = code.B_sparse.tocoo()
    nz = B.data != 0
    if not (np.bincount(B.col[nz], minlength=B.shape[1]) == 1).all() or B.shape[1] * EXACT_RTOL >= 1:
        return None
    holds = np.zeros(B.shape[0], bool)
    holds[B.row[nz]] = True
    return holds


def parameter_grid(family: str, n: int, jobs: int, max_delay: int, p: float = 0.0) -> list[dict]:
    """Candidate parameter sets of ``family`` with ``T <= max_delay`` and ``W <= jobs`` (a
    superset of the valid ones: ``make_code`` rejects the rest, e.g. SR-SGC's ``s >= n``).
    SR-SGC's window is ``W = xB + 1``; M-SGC's ``λ`` ranges over ``0..n``, the others' over
    ``1..n``.  ``p``: stochastic-gc's straggler probability (``tune``: the profile's share of
    stragglers).

    >>> parameter_grid("gc-seq", n=4, jobs=20, max_delay=0)
    [{'n': 4, 's': 0}, {'n': 4, 's': 1}, {'n': 4, 's': 2}, {'n': 4, 's': 3}]
    >>> grid = parameter_grid("m-sgc", n=8, jobs=20, max_delay=2)     # T = W - 2 + B <= 2
    >>> len(grid), sorted({(p["B"], p["W"]) for p in grid})
    (18, [(1, 2), (1, 3)])
    >>> len(parameter_grid("sr-sgc", n=8, jobs=20, max_delay=2))       # W = 2..20, 3..19 odd
    224
    """
    if family == "uncoded":
        return [{"n": n}]
    if family in ("gc-seq", "cyclic-mds"):
        return [{"n": n, "s": s} for s in range(n)]
    if family == "comm-efficient":
        return comm_grid(n)
    if family in LITERATURE:
        name, extra = LITERATURE[family], ({"p": p} if family == "stochastic-gc" else {})
        return [{"n": n, name: v, **extra} for v in range(1, n + 1) if n % v == 0]
    sr = family.startswith("sr-sgc")
    lams = range(0 if family.startswith("m-sgc") else 1, n + 1)
    out = []
    for B in range(1, max_delay + 1):
        for W in range(B + 1, jobs + 1, B if sr else 1):
            T = B if sr else W - 2 + B
            if T > max_delay:
                continue
            for lam in lams:
                out.append({"n": n, "B": B, "W": W, "lam": lam})
    return out


FAMILIES = ("uncoded", "gc-seq", "sr-sgc", "m-sgc")
#: the literature's codes with a load to choose (issue 22) and the parameter that sets it, over
#: the divisors of n (cyclic-mds: s, as gc-seq; stochastic-gc's p: the profile's share of
#: stragglers under the μ-rule).  A round is a wait-out where the non-stragglers do not decode
#: within ``max_error`` (exactly, by default), as for every single-round code.
LITERATURE = {"frc-approx": "d", "bcc": "r", "bgc": "d", "expander": "d", "stochastic-gc": "d"}
#: the families whose one free parameter sets the load (``tune``'s sensitivity panel of them)
LOAD_FAMILIES = ("uncoded", "gc-seq", "cyclic-mds", *LITERATURE)
#: every family ``tune`` can search (the Rep variants of paper 4, Alg. 3-4, too)
TUNABLE = FAMILIES + ("sr-sgc-rep", "m-sgc-rep", "cyclic-mds", *LITERATURE, "comm-efficient")
#: comm-efficient's largest m that ``tune`` tries, and the largest n at which it also tries the
#: cyclic placement (its construction and stability check take ~2 s at n = 256)
COMM_MAX_M, COMM_CYCLIC_N = 8, 24


def comm_grid(n: int) -> list[dict]:
    """comm-efficient's candidates (Ye and Abbe: load ``d = s + m``, messages ``1 / m`` of the
    gradient): the grouped placement (stable at every n) for each divisor ``d`` of ``n`` and
    ``m <= min(d, COMM_MAX_M)``, and up to ``n = COMM_CYCLIC_N`` the cyclic placement for every
    ``s`` and such ``m``.

    >>> [(p["s"], p["m"]) for p in comm_grid(4) if p.get("placement") == "groups"]
    [(0, 1), (1, 1), (0, 2), (3, 1), (2, 2), (1, 3), (0, 4)]
    >>> len(comm_grid(4)), len(comm_grid(256))
    (17, 55)
    """
    out = [{"n": n, "s": d - m, "m": m, "placement": "groups"}
           for d in range(1, n + 1) if n % d == 0 for m in range(1, min(d, COMM_MAX_M) + 1)]
    if n <= COMM_CYCLIC_N:
        out += [{"n": n, "s": s, "m": m} for s in range(n)
                for m in range(1, min(n - s, COMM_MAX_M) + 1)]
    return out


def _builder(family: str):
    """``build(params)``: ``make_code(family, **params)``, or None where it raises ValueError
    (the parameter names are checked once, then the class is called directly)."""
    cls = code_class(family)
    expected = code_parameters(family)
    required = {k for k, p in expected.items() if p.default is p.empty}

    def build(p):
        if not required <= p.keys() <= expected.keys():
            return None
        return _built(cls, tuple(sorted(p.items())))
    return build


@functools.lru_cache(maxsize=BUILT)
def _built(cls, params: tuple):
    """``cls(**dict(params))``, or None where it raises ValueError; kept, codes being immutable
    (``BUILT``)."""
    try:
        return cls(**dict(params))
    except ValueError:
        return None


def tune(delays, jobs: int = 20, mu: float = 1.0, alpha: float = 0.0, base_load: float = 0.0,
         max_delay: int = 10, families=FAMILIES, progress: bool = False,
         waitout: str = "model", max_error: float = 0.0, send: float = 0.0) -> list[dict]:
    """Exhaustive search (paper 4, App. J): one row per valid parameter set of each family, with
    ``family, params, load, T, runtime_s, waitouts``, sorted by estimated runtime (ties in
    family and grid order).  Every row equals ``estimate_runtime`` of its code (``max_error``
    its single-round codes' tolerance, ``send`` the seconds of a response spent sending a whole
    gradient); sequential schemes are evaluated together by
    ``search_runtimes`` (vectorised), single-round codes one by one.

    A made-up profile: 30 rounds x 8 workers, each slow by 3 s with probability 0.1, and one
    second per unit of load (``alpha``); as in paper 4's Table 1, M-SGC comes out fastest, then
    SR-SGC, GC and no coding:

    >>> rng = np.random.default_rng(0)
    >>> D = 1.0 + 3.0 * (rng.random((30, 8)) < 0.1)
    >>> rows = tune(D, jobs=20, alpha=1.0, max_delay=2)
    >>> len(rows), rows[0]["family"], rows[0]["params"], rows[0]["T"], rows[0]["waitouts"]
    (251, 'm-sgc', {'B': 1, 'W': 2, 'lam': 4}, 1, 2)
    >>> [(f, round(r["runtime_s"], 2)) for f, r in best_per_family(rows).items()]
    [('m-sgc', 41.04), ('sr-sgc', 41.25), ('gc-seq', 42.88), ('uncoded', 52.5)]
    """
    from ..sequential import check_rule
    from ..stragglers import identify_stragglers

    D = check_profile(delays)
    jobs = check_jobs_mu(jobs, mu)
    alpha, base_load = check_load_model(alpha, base_load)
    rule = check_rule(waitout)
    max_error = check_max_error(max_error)
    send = check_send(send, D)
    if not isinstance(max_delay, (int, np.integer)) or max_delay < 0:
        raise ValueError(f"max_delay: expected an integer >= 0, got {max_delay!r}")
    n = D.shape[1]
    families = list(families)
    for family in families:
        if family not in TUNABLE:
            raise ValueError(f"families: unknown family {family!r}; expected some of "
                             f"{', '.join(TUNABLE)}")
    built = []                                              # (family, params, code)
    share = float(identify_stragglers(D[:jobs], mu).mean())     # stochastic-gc's p
    for family in families:
        build = _builder(family)
        for p in parameter_grid(family, n, jobs, max_delay, round(min(share, 0.99), 4)):
            code = build(p)
            if code is None:
                continue                                    # not a valid parameter combination
            T = int(code.T)
            if T > max_delay or D.shape[0] < jobs + T:
                continue
            built.append((family, p, code))
    seq = [i for i, (_, _, c) in enumerate(built) if c.waitout_rules]
    res = search_runtimes([built[i][2] for i in seq], D, jobs, mu, alpha, base_load, rule,
                          progress=progress)
    where = {i: k for k, i in enumerate(seq)}
    rows = []
    for i, (family, p, code) in enumerate(built):
        if i in where:
            k = where[i]
            load, T = float(res.load[k]), int(res.T[k])
            runtime, waits = float(res.runtime_s[k]), int(res.waitouts[k])
        else:
            est = estimate_runtime(code, D, jobs, mu, alpha, base_load, rule, max_error, send)
            load, T, runtime, waits = est.load, int(code.T), est.runtime_s, est.waitouts
        rows.append({"family": family, "params": {k: v for k, v in p.items() if k != "n"},
                     "load": load, "T": T, "runtime_s": runtime, "waitouts": waits})
    rows.sort(key=lambda r: r["runtime_s"])
    return rows


def best_per_family(rows: list[dict]) -> dict[str, dict]:
    """The first row of each family in ``rows`` (``tune``'s, sorted by runtime: the fastest
    parameter set of each family), families in order of their best runtime.

    >>> rows = [{"family": "gc-seq", "params": {"s": 2}, "runtime_s": 40.0},
    ...         {"family": "uncoded", "params": {}, "runtime_s": 50.0},
    ...         {"family": "gc-seq", "params": {"s": 1}, "runtime_s": 55.0}]
    >>> {f: r["params"] for f, r in best_per_family(rows).items()}
    {'gc-seq': {'s': 2}, 'uncoded': {}}
    """
    best = {}
    for r in rows:
        best.setdefault(r["family"], r)
    return best
