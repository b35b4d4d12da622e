"""Paper 4 (sequential gradient coding: SR-SGC, M-SGC): what the checks of its sections share
(``theorems``): Sec. 2.1's straggler models and the paper's formulas as printed, replaying
patterns through the schemes, the generic tolerance check.

Tolerance statements (Prop. 3.1, 3.2, App. D, App. G, Remark 3.1) replay straggler patterns
through the schemes of ``gradcode.sequential`` with no wait-out (rule ``"never"``) and ask that
every job ``t`` be decoded by round ``t + T``, ``T`` as the paper prints it: every conforming
pattern of a few rounds for small ``n`` (``enumerate_patterns``), random conforming ones for
larger ``n``.  The straggler models are re-implemented here from Sec. 2.1's definitions
(``bursty``, ``arbitrary``, ``per_round``, ``sr_model``) and every pattern replayed is checked
against them, so a wrong model in ``gradcode.stragglers`` cannot make a proposition look true.
On a subset of the patterns the decoding itself is verified numerically (``decoding_problems``:
random partial gradients, the master's weights over returned results of the job only) and the
normalized load is measured from the mini-tasks actually assigned.  Formulas (eq. 1-3, ``s``)
are computed here in exact integer / ``Fraction`` arithmetic from the paper's text and compared
with ``gradcode.analysis``.  Rounds and jobs are 0-based in gradcode (the paper's round 1 is 0).

The sections' modules: ``sgc_sr`` (Sec. 3.1-3.2), ``sgc_m`` (Sec. 3.3), ``sgc_bounds`` (App. F),
``sgc_examples`` (Fig. 6, Fig. 12), ``sgc_rep`` (App. G), ``sgc_setting`` (Remark 2.1, 2.3,
App. B, I).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ...registry import make_code
from ...sequential import replay, replay_many
from ...stragglers import enumerate_patterns
from ._framework import Tally

#: the paper's number in the ledger
P4 = 4
TOL = 1e-9


# ----------------------------------------------------------------- Sec. 2.1's models, as printed
def windows(P: np.ndarray, W: int) -> list[np.ndarray]:
    """The windows ``W_j = [j : j + W - 1]`` of patterns ``P (m, R, n)`` (the whole pattern if
    ``R < W``)."""
    return [P[:, j:j + W] for j in range(max(P.shape[1] - W + 1, 1))]


def bursty(P, B: int, W: int, lam: int) -> np.ndarray:
    """Per pattern of ``P (m, R, n)``: the (B, W, λ)-bursty model of Sec. 2.1, literally: in
    every window at most λ distinct stragglers, and if worker i straggles in round t of the
    window, it does not in rounds ``t + B .. j + W - 1``."""
    P = np.asarray(P, bool)
    ok = np.ones(len(P), bool)
    for blk in windows(P, W):
        ok &= blk.any(1).sum(-1) <= lam
        for t in range(blk.shape[1]):
            ok &= ~(blk[:, t] & blk[:, t + B:].any(1)).any(-1)
    return ok


def arbitrary(P, N: int, W: int, lam: int) -> np.ndarray:
    """(N, W', λ')-arbitrary model (W = W', lam = λ'): in every window at most λ' distinct
    stragglers and at most N straggling rounds per worker."""
    P = np.asarray(P, bool)
    ok = np.ones(len(P), bool)
    for blk in windows(P, W):
        ok &= (blk.any(1).sum(-1) <= lam) & (blk.sum(1) <= N).all(-1)
    return ok


def per_round(P, s: int) -> np.ndarray:
    """s-stragglers-per-round model: at most s stragglers in every round."""
    return (np.asarray(P, bool).sum(-1) <= s).all(-1)


def sr_model(P, B: int, W: int, lam: int, s: int) -> np.ndarray:
    """Prop. 3.1's patterns: every window of W rounds is (B, W, λ)-bursty or has at most s
    stragglers per round."""
    P = np.asarray(P, bool)
    ok = np.ones(len(P), bool)
    for blk in windows(P, W):
        ok &= bursty(blk, B, W, lam) | per_round(blk, s)
    return ok


def all_patterns(R: int, n: int) -> np.ndarray:
    """Every ``(R, n)`` pattern, ``(2^(R n), R, n)``."""
    k = R * n
    return ((np.arange(1 << k)[:, None] >> np.arange(k)) & 1).astype(bool).reshape(-1, R, n)


# ----------------------------------------------------------------- the formulas, as printed
def ceil_div(a, b):
    return -(-a // b)


def s_printed(B: int, W: int, lam: int) -> int:
    """Sec. 3.2: ``s = ceil(B λ / (W - 1 + B))``."""
    return ceil_div(B * lam, W - 1 + B)


def eq1(n: int, B: int, W: int, lam: int) -> Fraction:
    """M-SGC's normalized load, eq. 1."""
    if lam == n:
        return Fraction(W - 1 + B, n * (W - 1))
    return Fraction((lam + 1) * (W - 1 + B), n * (B + (W - 1) * (lam + 1)))


def eq2(n: int, B: int, W: int, lam: int) -> Fraction | None:
    """Thm F.1's bound L*_B, eq. 2 (None: infinite, ``B = W`` and ``λ = n``)."""
    if B < W:
        return Fraction(W - 1 + B, n * (W - 1) + B * (n - lam))
    return Fraction(1, n - lam) if lam < n else None


def eq3(n: int, N: int, W: int, lam: int) -> Fraction | None:
    """Thm F.2's bound L*_A, eq. 3 (``W`` = W', ``lam`` = λ'; None: infinite)."""
    if N < W:
        return Fraction(W, n * (W - N) + N * (n - lam))
    return Fraction(1, n - lam) if lam < n else None


def t_printed(name: str, p: dict) -> int:
    """The delay T the paper gives each scheme (Sec. 3.1-3.3)."""
    if name.startswith("sr-sgc"):
        return p["B"]
    if name.startswith("m-sgc"):
        return p["W"] - 2 + p["B"]
    return 0


def load_printed(name: str, p: dict) -> Fraction:
    if name.startswith("sr-sgc"):
        return Fraction(s_printed(p["B"], p["W"], p["lam"]) + 1, p["n"])
    if name.startswith("m-sgc"):
        return eq1(p["n"], p["B"], p["W"], p["lam"])
    return Fraction(p["s"] + 1, p["n"])


# ----------------------------------------------------------------- replaying
def on_time(scheme, patterns: np.ndarray, jobs: int, T: int) -> np.ndarray:
    """Per pattern: every job ``t`` decoded in a round of ``[t, t + T]`` with no wait-out."""
    f = replay_many(scheme, patterns, jobs=jobs, waitout="never").finish_round
    t = np.arange(jobs)
    return ((f >= t) & (f <= t + T)).all(1)


def decoding_problems(scheme, S: np.ndarray, jobs: int, T: int, L: float,
                      rng: np.random.Generator, reach: bool = True) -> list[str]:
    """Replay ``S`` through ``scheme`` (no wait-out) and verify, with random partial gradients,
    that every job ``t`` is the weighted sum of returned (non-straggler) mini-task results of
    job ``t`` from rounds ``t .. t + T``, and that no worker's mini-tasks of a round exceed the
    normalized load ``L`` (which some worker-round reaches if ``reach``: not so for M-SGC with
    λ = n, whose reattempt slots idle when nothing is missing).  Returns what went wrong."""
    r = replay(scheme, S, jobs, waitout="never")
    sizes = scheme.partition_sizes
    tasks = [r.tasks[x] for x in range(S.shape[0])]
    out = []
    worst = max(sum(float(sizes[m.partitions].sum()) for m in w) for row in tasks for w in row)
    if worst > L + TOL or (reach and jobs > T and worst < L - TOL):
        out.append(f"load {worst:.6g}, not {L:.6g}")
    G = rng.standard_normal((jobs, scheme.n_partitions))
    for t in range(jobs):
        f = int(r.finish_round[t])
        if not t <= f <= t + T:
            out.append(f"job {t} decoded in round {f}, not in [{t}, {t + T}]")
            continue
        total = 0.0
        for (x, i, k), w in r.gradient_weights(t).items():
            m = tasks[x][i][k]
            if S[x, i] or x > f or m.job != t:
                out.append(f"job {t} uses worker {i}'s slot {k} of round {x} (job {m.job}, "
                           f"straggler: {bool(S[x, i])})")
            total += w * float(m.coefficients @ G[t, m.partitions])
        if abs(total - G[t].sum()) > 1e-8 * (1 + np.abs(G[t]).sum()):
            out.append(f"job {t}: decoded {total:.6g}, true {G[t].sum():.6g}")
    return out


def enumerate_fitting(model, T: int, n: int, J_max: int, cap: int) -> tuple[np.ndarray, int]:
    """Every pattern of ``J + T`` rounds conforming to ``model``, for the largest
    ``J <= J_max`` with at most ``cap`` of them; ``(patterns, J)``."""
    best = np.zeros((0, 1 + T, n), bool), 1
    for J in range(1, J_max + 1):
        try:
            best = enumerate_patterns(model, J + T, n, max_patterns=cap), J
        except ValueError:
            break
    return best


def fmt_pattern(S: np.ndarray) -> str:
    """A pattern as the 0-based stragglers of each round.

    >>> fmt_pattern(np.array([[True, False], [False, False]]))
    '[{0} {}]'
    """
    return "[" + " ".join("{" + ",".join(map(str, np.flatnonzero(row))) + "}" for row in S) + "]"


# ----------------------------------------------------------------- tolerance, generic
def tolerance_check(tally: Tally, name: str, p: dict, patterns: np.ndarray, jobs: int,
                    conforms, label: str, rng, numeric: int, T: int | None = None,
                    L: Fraction | None = None) -> None:
    """Add to ``tally`` the replay of ``patterns`` (all of which must satisfy ``conforms``, the
    paper's model as defined here) through ``make_code(name, **p)``: each pattern is a case,
    failing unless every job meets the printed delay ``T``; ``numeric`` of them (random) also
    get ``decoding_problems`` with the printed load ``L``.  The scheme's own ``T`` and ``load``
    must equal the printed ones."""
    x = make_code(name, **p)
    T = t_printed(name, p) if T is None else T
    L = load_printed(name, p) if L is None else L
    what = f"{name}({', '.join(f'{k}={v}' for k, v in p.items())})"
    if x.T != T or np.abs(x.load - float(L)).max() > TOL:
        tally.add(["scheme's T, load " f"{x.T}, {x.load.max():.6g} vs printed {T}, {float(L):.6g}"],
                  what)
    if not len(patterns):
        return
    outside = ~conforms(patterns)
    tally.add(outside, lambda k: f"{what}: enumerated pattern {fmt_pattern(patterns[k])} is not "
                                 f"{label} by Sec. 2.1's definition")
    P = patterns[~outside]
    if not len(P):
        return
    bad = ~on_time(x, P, jobs, T)
    tally.add(bad, lambda k: f"{what}, {jobs} jobs, {label} pattern {fmt_pattern(P[k])}: a job is "
                             f"not decoded within T = {T} rounds")
    reach = not (name.startswith("m-sgc") and p["lam"] == p["n"])
    for k in rng.choice(len(P), size=min(numeric, len(P)), replace=False):
        tally.add(decoding_problems(x, P[k], jobs, T, float(L), rng, reach),
                  lambda: f"{what}, pattern {fmt_pattern(P[k])}")
    if not tally.typical:
        tally.typical = f"{what}: {len(P)} {label} patterns of {P.shape[1]} rounds, {jobs} jobs"


def sr_configs(n_max: int, W_max: int):
    """SR-SGC's parameter sets (Sec. 3.2: 0 < λ <= n, W = xB + 1, s < n) up to a size."""
    for n in range(2, n_max + 1):
        for B in range(1, W_max):
            for W in range(B + 1, W_max + 1, B):
                for lam in range(1, n + 1):
                    if s_printed(B, W, lam) < n:
                        yield dict(n=n, B=B, W=W, lam=lam)


def m_configs(n_max: int, W_max: int):
    """M-SGC's parameter sets (Sec. 3.3: 0 <= λ <= n, 0 < B < W) up to a size."""
    for n in range(1, n_max + 1):
        for W in range(2, W_max + 1):
            for B in range(1, W):
                for lam in range(0, n + 1):
                    yield dict(n=n, B=B, W=W, lam=lam)


def run_sizes(ctx):
    """(n_max, W_max, patterns per parameter set, numeric checks per set, random n's)."""
    return run_sizes_of(ctx.quick)


def run_sizes_of(quick: bool):
    """``run_sizes`` of the quick (``quick``) or the full run."""
    if quick:
        return 3, 4, 3_000, 1, (6,)
    return 4, 5, 40_000, 6, (6, 8, 11)


def random_bw(ctx):
    """The (B, W) of the random part: SR-SGC needs W = xB + 1."""
    return ((1, 2), (2, 5)) if ctx.quick else ((1, 2), (1, 3), (2, 3), (2, 5), (3, 4))


def spans_one(Bm: np.ndarray, rows) -> bool:
    """Whether the all-ones vector is a combination of the rows ``rows`` of ``Bm``."""
    rows = list(rows)
    if not rows:
        return False
    a, *_ = np.linalg.lstsq(Bm[rows].T, np.ones(Bm.shape[1]), rcond=None)
    return bool(np.abs(Bm[rows].T @ a - 1).max() <= 1e-8)
