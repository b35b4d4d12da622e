"""Paper 5 (Johri, Yardi, Bodas, *Approximate GC for heterogeneous nodes*): what the
``shuffling`` (Fig. 2(a, b)) and ``shuffling-iris`` (Fig. 2(c, d)) experiments share.

* The heterogeneous straggler model of Sec. II, ``p^ = 0.3``, ``p_ss = 0.8``, ``p_as = 0.01``
  (Sec. V), and the shuffles of Sec. III / Remark 1 as received-row bitmasks (``received``):
  worker ``j`` computes row ``perm[j]`` of ``B`` (our rows are the paper's columns).
* Training with the optimally decoded gradient (eq. 2; ``Decoder``) through the simulator's
  ``Trainer`` and NumPy models, with the ridge term of eq. (1) (``Ridge``), on given partitions.
* Per-trial summaries (``spread``: mean, sd, quantiles, share of trials with a positive value).
* Decode-only analysis for ``n = 8``, replication ``s = 2`` (Sec. III-V): Prop. 1's miss
  probabilities and the expected optimal decoding error by Monte Carlo, by exact enumeration
  over slow sets and by the closed forms of Thm 1 / Thm 2 / Remark 2
  (``gradcode.analysis._shuffling``; its docstring lists the paper's errata), and Thm 1's
  ``P_r`` as printed (``printed_pr``).
"""

from __future__ import annotations

from math import comb

import numpy as np
from scipy.stats import binom

from ..analysis import expected_error, non_straggler_pmf, sample_stragglers
from ..datasets import Dataset, load_dataset
from ..registry import make_code
from ..sim import MODELS, Model, Trainer

N, S, P_SLOW, P_SS, P_AS = 8, 2, 0.3, 0.8, 0.01
Q = P_SLOW * P_SS + (1 - P_SLOW) * P_AS          # a worker's marginal straggling probability
RIDGE = 0.01                                     # eq. (1): lambda R(beta), R = ||beta||^2 / 2
PAPER_ERR = {"FRC": 1.976, "CRC circulant": 0.5173}
CURVATURE = {"linear": 1.0, "logistic": 0.25, "softmax": 0.5}   # bound on the loss' Hessian

# --------------------------------------------------------------------------- shared machinery
class Ridge(Model):
    """``model`` plus ``lam / 2 ||w||^2`` per sample: partition sums add up to eq. (1)."""

    def __init__(self, model: Model, lam: float):
        self.model, self.lam = model, lam

    def init(self, rng, d, classes):
        return self.model.init(rng, d, classes)

    def loss_grad(self, w, X, y):
        loss, grad = self.model.loss_grad(w, X, y)
        k = len(y)
        return loss + 0.5 * self.lam * k * float(w @ w), grad + self.lam * k * w


def load(name: str) -> Dataset:
    """``load_dataset(name)``; ``diabetes-binary``: diabetes with ``y > median`` (Fig. 2(b))."""
    if name == "diabetes-binary":
        d = load_dataset("diabetes")
        return Dataset(name, d.X, (d.y > np.median(d.y)).astype(float), "binary", 2)
    return load_dataset(name)


def stable_lr(data: Dataset, model: str, fraction: float) -> float:
    """``fraction * 2 / L_max``, ``L_max`` a bound on the curvature of the mean loss."""
    X = np.c_[data.X, np.ones(data.n_samples)]
    top = float(np.linalg.eigvalsh(X.T @ X / data.n_samples)[-1])
    return fraction * 2.0 / (CURVATURE[model] * top + RIDGE)


def received(straggle: np.ndarray, kind: str, rng: np.random.Generator | None = None):
    """Received-row bitmasks ``(L,)`` (Sec. III): worker ``j`` computes row ``perm[j]``."""
    L, n = straggle.shape
    base = np.tile(np.arange(n, dtype=np.int64), (L, 1))
    if kind == "random":
        perm = rng.permuted(base, axis=1)
    elif kind == "cyclic":
        perm = (base + np.arange(L)[:, None]) % n
    else:
        perm = base
    return np.sum(np.where(straggle, 0, np.int64(1) << perm), axis=1)


class Decoder:
    """Optimal decoding (eq. 2) of received-row bitmasks, cached: ``recovered`` per mask."""

    def __init__(self, code):
        self.code, self.cache = code, {}

    def __call__(self, masks: np.ndarray) -> np.ndarray:
        n = self.code.n_workers
        out = []
        for m in masks.tolist():
            if m not in self.cache:
                rows = [j for j in range(n) if m >> j & 1]
                self.cache[m] = self.code.decode(rows, method="optimal").recovered
            out.append(self.cache[m])
        return np.array(out)


def split(data: Dataset, n: int, how: str, rng: np.random.Generator) -> list:
    """``n`` equal partitions (Sec. II leaves open how ``D`` is divided): ``random`` samples,
    or ``sorted`` by the target (each partition a narrow range of ``y`` / mostly one class)."""
    order = (rng.permutation(data.n_samples) if how == "random"
             else np.argsort(data.y, kind="stable"))
    return np.array_split(order, n)


def train(data, model, lr, parts, code, recovered_seq) -> np.ndarray:
    """Loss per sample after each step of ``Trainer`` fed ``recovered_seq``, on ``parts``."""
    trainer = Trainer(data, Ridge(MODELS[model](), RIDGE), lr=lr)
    trainer.start(code, np.random.default_rng(0))   # zero initial weights for these models
    trainer.parts = parts
    out = np.empty(len(recovered_seq))
    for it, rec in enumerate(recovered_seq):
        trainer.step(it, rec)
        out[it] = trainer.loss()
    return out


def spread(values) -> dict:
    """Mean, sd, 10/50/90 % quantiles and the share of positive values, over trials."""
    v = np.asarray(values, float)
    q10, q50, q90 = np.quantile(v, [0.1, 0.5, 0.9])
    return {"mean": float(v.mean()), "sd": float(v.std(ddof=1)) if v.size > 1 else 0.0,
            "q10": float(q10), "median": float(q50), "q90": float(q90),
            "share_positive": float(np.mean(v > 0)), "trials": int(v.size)}


def show(sp: dict, fmt="{:.2g}") -> str:
    """``mean ± sd (> 0 in k of T)`` of a ``spread``."""
    k = round(sp["share_positive"] * sp["trials"])
    return f"{fmt.format(sp['mean'])} ± {fmt.format(sp['sd'])} (> 0 in {k} of {sp['trials']})"


def exposed(code, slow: np.ndarray) -> int:
    """Partitions all of whose holders (rows with a nonzero entry) are slow."""
    support = np.asarray(code.B) != 0
    return int(np.sum(np.all(~support | slow[:, None], axis=0)))


def codes_n8():
    """FRC `gc-fr(8, s=1)`, circulant CRC `isgc-cr(8, c=2)`, Tandon's CR `gc-cr(8, s=1)`."""
    return {"FRC": make_code("gc-fr", n=N, s=S - 1),
            "CRC circulant": make_code("isgc-cr", n=N, c=S),
            "CRC Tandon": make_code("gc-cr", n=N, s=S - 1, seed=0)}


# --------------------------------------------------------------------------- decoding error
def _table(code):
    """Per received-row bitmask (bit ``j``: row ``j`` received): ``(error, missed (2^n, k))``."""
    bits = ((np.arange(1 << N)[:, None] >> np.arange(N)) & 1).astype(bool)
    rec = np.array([code.decode(np.flatnonzero(b), method="optimal").recovered for b in bits])
    missed = ~(bits.astype(int) @ (np.asarray(code.B) != 0)).astype(bool)
    return np.sum((rec - 1.0) ** 2, axis=1), missed, bits


def _by_classes(err, bits):
    """Exact one-iteration error for every slow set (bitmask), no shuffle and random shuffle,
    and the probability of each slow set: ``(E_none, E_random, P_class)`` (``2^n`` each)."""
    slow = bits                                    # slow set ``a`` as a bool row, like masks
    p = np.where(slow, P_SS, P_AS)                 # (slow set, worker)
    # P(received = R | slow set): prod_j (R_j ? 1 - p_j : p_j)
    prob = np.prod(np.where(bits[None, :, :], 1 - p[:, None, :], p[:, None, :]), axis=2)
    e_none = prob @ err
    pop = bits.sum(axis=1)
    e_size = np.bincount(pop, err, N + 1) / np.array([comb(N, r) for r in range(N + 1)])
    e_random = np.array([non_straggler_pmf(N, int(m), P_SS, P_AS) @ e_size for m in pop])
    p_class = P_SLOW ** pop * (1 - P_SLOW) ** (N - pop)
    return e_none, e_random, p_class


def decoding_rows(seed, codes, runs, iters) -> list[dict]:
    """Decode-only Monte Carlo of the model (classes per run, stragglers per iteration) next to
    the closed forms; Prop. 1's miss probabilities; exact class averages."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, 5]))
    slow = rng.random((runs, 1, N)) < P_SLOW
    straggle = sample_stragglers(np.broadcast_to(slow, (runs, iters, N)), P_SS, P_AS, rng)
    flat = straggle.reshape(-1, N)
    masks = {v: received(flat, v, rng) for v in ("none", "random", "cyclic")}
    holders = {nm: (np.asarray(c.B) != 0) for nm, c in codes.items()}
    rows = []
    for nm, code in codes.items():
        err, missed, bits = _table(code)
        e_none, e_random, p_class = _by_classes(err, bits)
        for v, m in masks.items():
            per_run = err[m].reshape(runs, iters).mean(axis=1)
            miss = missed[m].reshape(runs, iters, -1).mean(axis=1)          # (runs, k)
            rows.append({"kind": "decoding error", "code": nm, "shuffle": v,
                         "setting": f"classes drawn, p^ = {P_SLOW}",
                         "theory": expected_error(code, P_SLOW, P_SS, P_AS),
                         "class_average_exact": float(p_class @ (e_random if v == "random"
                                                                 else e_none)),
                         "simulated": float(per_run.mean()),
                         "sim_stderr": float(per_run.std(ddof=1) / np.sqrt(runs)),
                         "paper": PAPER_ERR.get(nm, ""),
                         "miss_sd_across_partitions": float(miss.std(axis=1).mean())})
            k = (holders[nm][None, :, :] & slow.reshape(runs, N, 1)).sum(axis=1)  # (runs, k)
            for kk in range(S + 1):
                sel = k == kk if v == "none" else np.ones_like(k, bool)
                if v != "none" and kk:
                    break
                rows.append({"kind": "Prop. 1", "code": nm, "shuffle": v,
                             "slow_holders": kk if v == "none" else "any",
                             "formula": P_SS ** kk * P_AS ** (S - kk) if v == "none" else Q ** S,
                             "simulated": float(miss[sel].mean()) if sel.any() else np.nan,
                             "partitions_x_runs": int(sel.sum())})
        gain = e_none - e_random
        rows.append({"kind": "one-iteration error by slow set", "code": nm,
                     "share_shuffling_lowers": float(p_class @ (gain > 1e-12)),
                     "share_shuffling_raises": float(p_class @ (gain < -1e-12)),
                     "mean_gain": float(p_class @ gain)})
    return rows


def theorem_rows(seed, codes, samples) -> list[dict]:
    """Thm 1 / Thm 2 (corrected ``P_r``) for the (n, m) model against Monte Carlo, and the
    printed ``P_r``'s total mass."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, 6]))
    rows = []
    for nm in ("FRC", "CRC circulant"):
        for m in (2, 3, 4):
            closed = expected_error(codes[nm], None, P_SS, P_AS, slow=list(range(m)))
            mc = expected_error(codes[nm], None, P_SS, P_AS, slow=list(range(m)), method="mc",
                                rng=rng, samples=samples)
            rows.append({"kind": "theorem", "code": nm, "m": m, "theory": closed,
                         "simulated": mc, "samples": samples})
    for m in range(N + 1):
        rows.append({"kind": "printed P_r", "m": m, "total_mass": float(printed_pr(m).sum())})
    return rows


def printed_pr(m: int) -> np.ndarray:
    """Thm 1's ``P_r`` exactly as printed: ``i = 0..r``, ``C(m, min(i, m))`` (for ``i > m`` the
    exponent ``m - i`` of ``p_ss`` is negative)."""
    out = np.zeros(N + 1)
    for r in range(N + 1):
        for i in range(r + 1):
            ri = min(i, m)
            if 0 <= r - ri <= N - m:
                out[r] += (comb(m, ri) * comb(N - m, r - ri) * (1 - P_SS) ** i * P_SS ** (m - i)
                           * (1 - P_AS) ** (r - i) * P_AS ** (N - m - r + i))
    return out


def tandon_seeds(count: int = 200) -> np.ndarray:
    """Expected error (classes drawn, Remark 2) of Tandon's CR ``gc-cr(8, s=1)`` for seeds
    ``0..count-1`` of its random coefficients (by enumeration: it is not circulant)."""
    return np.array([expected_error(make_code("gc-cr", n=N, s=S - 1, seed=k), P_SLOW, P_SS, P_AS)
                     for k in range(count)])


def paper_value_rows(codes, seeds: int) -> list[dict]:
    """What the printed E_err values (Sec. V) could be: candidate computations under the model
    (``kind = "paper value check"``), each with its value."""
    def row(what, code, value):
        return {"kind": "paper value check", "candidate": what, "code": code, "value": value}
    out = [row("Thm 1 with s = 1 (no replication): n q", "FRC",
               expected_error(make_code("gc-fr", n=N, s=0), P_SLOW, P_SS, P_AS)),
           row("replication 3, isgc-cr(8, c=3)", "CRC circulant",
               expected_error(make_code("isgc-cr", n=N, c=3), P_SLOW, P_SS, P_AS))]
    p_m = binom.pmf(np.arange(N + 1), N, P_SLOW)            # Remark 2's P_m
    for nm in ("FRC", "CRC circulant"):
        err, _, bits = _table(codes[nm])
        pop = bits.sum(axis=1)
        e_size = np.bincount(pop, err, N + 1) / np.array([comb(N, r) for r in range(N + 1)])
        per_m = [float(non_straggler_pmf(N, m, P_SS, P_AS) @ e_size) for m in range(N + 1)]
        out.append(row("Remark 2 with Thm 1's printed P_r", nm,
                       float(sum(p_m[m] * (printed_pr(m) @ e_size) for m in range(N + 1)))))
        out.append(row("sum over r <= n - s only", nm,
                       float(sum(p_m[m] * (non_straggler_pmf(N, m, P_SS, P_AS)[:N - S + 1]
                                           @ e_size[:N - S + 1]) for m in range(N + 1)))))
        out += [row(f"(n, m) model, m = {m}", nm, v) for m, v in enumerate(per_m)]
        out.append(row("Remark 2 as printed, E(n, m, s) P_m, largest over m", nm,
                       float(max(p_m[m] * v for m, v in enumerate(per_m)))))
    v = tandon_seeds(seeds)
    out += [{**row(f"Tandon's CR gc-cr(8, s=1), {stat} over the seeds", "CRC Tandon", f(v)),
             "seeds": seeds}
            for stat, f in (("min", np.min), ("median", np.median), ("max", np.max))]
    return out


# --------------------------------------------------------------------------- ledger rows
def _get(rows, key, **match):
    return next(r[key] for r in rows if all(r.get(k) == v for k, v in match.items()))


def access_claims(rows, iters: int) -> list:
    """Sec. III, after Prop. 1: uniform access with shuffling, for FRC and CRC (Prop. 1's miss
    probabilities themselves are checked in ``theorems.approx_*``)."""
    from ._ledger import Claim, holds
    codes = list(dict.fromkeys(r["code"] for r in rows if r.get("kind") == "decoding error"))
    sd = {(nm, v): _get(rows, "miss_sd_across_partitions", kind="decoding error", code=nm,
                        shuffle=v) for nm in codes for v in ("none", "random", "cyclic")}
    floor = float(np.sqrt(Q ** S * (1 - Q ** S) / iters))
    uniform = all(sd[nm, "random"] < 1.5 * floor < sd[nm, "none"] for nm in codes)
    return [Claim(
        "Sec. III (after Prop. 1)", "without shuffling data-sets are accessed non-uniformly "
        "(depending on their slow holders); with shuffling uniformly (FRC and CRC)",
        "non-uniform / uniform", "sd across partitions of a run's miss frequency, without / "
        "with shuffling / cyclic: " + "; ".join(
            f"{nm} {sd[nm, 'none']:.3f} / {sd[nm, 'random']:.3f} / {sd[nm, 'cyclic']:.3f}"
            for nm in codes),
        holds(uniform), "rule: for every code the sd with shuffling is below 1.5x the binomial "
        f"noise alone over {iters} iterations ({floor:.3f}: what uniform access leaves), and "
        f"without it above; n = {N}, s = {S}, p^ = {P_SLOW}, p_ss = {P_SS}, p_as = {P_AS}, "
        "classes drawn per run", kind="statement")]
