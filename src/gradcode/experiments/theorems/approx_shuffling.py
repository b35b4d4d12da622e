"""Paper 5, Sec. III: how often a data-set is not accessed, without and with random shuffling
(Prop. 1), and with a pre-decided cyclic shuffling (Remark 1) (``theorems``; see
``approx_common``)."""

from __future__ import annotations

import numpy as np

from ...analysis import sample_slow, sample_stragglers, shuffle_permutation
from ._framework import Evidence, Tally, statement
from .approx_common import (P_HAT5, TOL, bits, circulant, close, crc, fmt_code, fr, perms,
                            pq_pairs, straggler_law, within)


# --------------------------------------------------------------------------- Prop. 1
def prop1_none(k: int, s: int, p_ss: float, p_as: float) -> float:
    """Prop. 1 without shuffling: ``p_ss^k p_as^(s-k)``."""
    return p_ss ** k * p_as ** (s - k)


def miss_none_tally(code, p_ss, p_as, formula=prop1_none) -> Tally:
    """Without shuffling, for every class set: ``P(D_i not accessed)`` (exact, over all straggler
    sets) against ``formula(k_i, s)``."""
    t = Tally()
    B = np.asarray(code.B) != 0
    n = B.shape[0]
    C = bits(np.arange(1 << n), n)
    T = np.arange(1 << n, dtype=np.int64)
    for c in range(1 << n):
        law = straggler_law(np.where(C[c], p_ss, p_as))
        for i in range(B.shape[1]):
            H = int(sum(1 << j for j in np.flatnonzero(B[:, i])))
            miss = float(law[(T & H) == H].sum())
            k, s = int(C[c][B[:, i]].sum()), int(B[:, i].sum())
            want = formula(k, s, p_ss, p_as)
            t.case(close(miss, want), lambda: (
                f"{fmt_code(code)}, slow workers {np.flatnonzero(C[c]).tolist()}, data-set {i} "
                f"(k = {k}): P(missed) = {miss:.6g}, formula {want:.6g}"))
    return t


def miss_mc_tally(n, s, p_hat, p_ss, p_as, runs, L, rng, shuffle: bool, value=None) -> Tally:
    """Monte Carlo with gradcode's samplers of data-set 0's misses over ``L`` iterations of
    ``runs`` runs (classes drawn per run): the expected count ``L p_ss^k p_as^(s-k)`` per ``k``
    without shuffling, ``L q^s`` (or ``L value``) with it."""
    t = Tally()
    code = fr(n, s)
    H0 = np.asarray(code.B)[:, 0] != 0
    k0, counts = np.empty(runs, int), np.empty(runs)
    for u in range(runs):
        slow = sample_slow(n, p_hat, rng)
        strag = sample_stragglers(np.tile(slow, (L, 1)), p_ss, p_as, rng)
        if shuffle:
            held = np.array([H0[shuffle_permutation(n, it, rng=rng)] for it in range(L)])
        else:
            held = np.tile(H0, (L, 1))
        k0[u], counts[u] = slow[H0].sum(), np.sum(np.all(strag | ~held, axis=1))
    if shuffle:
        q = p_hat * p_ss + (1 - p_hat) * p_as
        want = L * (q ** s if value is None else value)
        se = counts.std(ddof=1) / np.sqrt(runs)
        t.case(within(counts.mean(), want, se), f"FRC n = {n}, s = {s}, {runs} runs of L = {L}: "
              f"mean misses {counts.mean():.3f}, L q^s = {want:.3f} (se {se:.3f})")
        return t
    for k in range(s + 1):
        sel = counts[k0 == k]
        if sel.size < 2:
            continue
        p = p_ss ** k * p_as ** (s - k)
        se = np.sqrt(L * p * (1 - p) / sel.size)
        t.case(within(sel.mean(), L * p, se), f"FRC n = {n}, s = {s}, k = {k}, {sel.size} runs "
              f"of L = {L}: mean misses {sel.mean():.3f}, L p_ss^k p_as^(s-k) = {L * p:.3f} "
              f"(se {se:.3f})")
    return t


def prop1_codes(n_max: int):
    """FRC (``s | n``) and [2]'s CRC with ``s = 2, 3``, ``4 <= n <= n_max``."""
    out = []
    for n in range(4, n_max + 1):
        for s in (2, 3):
            out += ([fr(n, s)] if n % s == 0 else []) + [crc(n, s)]
    return out


@statement(5, "Prop. 1 (no shuffling)", "without shuffling, a data-set with k_i slow workers "
                                        "among its s holders is not accessed w.p. p_ss^k_i "
                                        "p_as^(s-k_i) per iteration: L p_ss^k_i p_as^(s-k_i) "
                                        "times in L iterations")
def _prop1_none(ctx) -> Evidence:
    n_max = 6 if ctx.quick else 8
    rng = np.random.default_rng(ctx.seed)
    t = Tally()
    for p_ss, p_as in pq_pairs(ctx, 2):
        for code in prop1_codes(n_max):
            t.merge(miss_none_tally(code, p_ss, p_as))
    runs = 300 if ctx.quick else 4000
    t.merge(miss_mc_tally(20, 2, 0.3, 0.7, 0.15, runs, 30, rng, shuffle=False))
    return t.evidence(f"exact over all class sets and straggler sets, FRC and [2]'s CRC, n <= "
                      f"{n_max}, s = 2, 3, every data-set, 2 (p_ss, p_as); Monte Carlo with "
                      f"gradcode's samplers, FRC n = 20, s = 2, p^ = 0.3, p_ss = 0.7, p_as = "
                      f"0.15, {runs} runs x 30 iterations, per k, within 4 se")


def miss_shuffled(code, p_hat, p_ss, p_as):
    """With random shuffling, classes drawn: ``P(D_i not accessed | k_i)`` for every data-set
    ``i`` and ``k``, and unconditionally, exact over all class sets and permutations
    (``k_i``: slow workers among the holders of the first iteration, worker ``j`` on row
    ``j``).  Returns ``{(i, k): (probability, P(k_i = k))}`` and ``{i: probability}``."""
    B = np.asarray(code.B) != 0
    n = B.shape[0]
    P = perms(n)
    C = bits(np.arange(1 << n), n).astype(np.int64)
    pc = np.prod(np.where(C == 1, p_hat, 1 - p_hat), axis=1)
    cond, total = {}, {}
    for i in range(B.shape[1]):
        H = B[:, i]
        s = int(H.sum())
        slow_holders = H[P].astype(np.int64) @ C.T              # (perm, class set)
        miss = (p_ss ** slow_holders * p_as ** (s - slow_holders)).mean(axis=0)
        k = C[:, H].sum(axis=1)
        total[i] = float(pc @ miss)
        for kk in range(s + 1):
            sel = k == kk
            if pc[sel].sum() > 0:
                cond[i, kk] = (float(pc[sel] @ miss[sel] / pc[sel].sum()), float(pc[sel].sum()))
    return cond, total


def shuffled_miss_tally(code, p_hat, p_ss, p_as, given_k: bool, value=None) -> Tally:
    """With random shuffling, every data-set's miss probability (given each ``k_i`` when
    ``given_k``, else averaged over the classes) against ``value`` (default ``q^s``)."""
    t = Tally()
    s = int((np.asarray(code.B)[:, 0] != 0).sum())
    q = p_hat * p_ss + (1 - p_hat) * p_as
    want = q ** s if value is None else value
    cond, total = miss_shuffled(code, p_hat, p_ss, p_as)
    where = f"{fmt_code(code)}, p^ = {p_hat}, p_ss = {p_ss}, p_as = {p_as}"
    if given_k:
        for (i, k), (p, w) in cond.items():
            t.case(close(p, want), f"{where}, data-set {i}, k_i = {k} (prob. {w:.3f}): P(not "
                  f"accessed | k_i) = {p:.6f}, (p^ p_ss + (1 - p^) p_as)^s = {want:.6f} (given "
                  f"k_i, the holders after a shuffle are more likely the first ones than "
                  f"fresh draws of the classes)")
    else:
        for i, p in total.items():
            t.case(close(p, want), f"{where}, data-set {i}: P(not accessed) = {p:.6f}, q^s = "
                  f"{want:.6f}")
    return t


@statement(5, "Prop. 1 (shuffling)", "with random shuffling, a data-set with k_i slow workers "
                                     "among its s holders is not accessed w.p. (p^ p_ss + (1 - "
                                     "p^) p_as)^s per iteration, whatever k_i")
def _prop1_shuffle(ctx) -> Evidence:
    n_max = 6 if ctx.quick else 7
    t = Tally()
    for p_ss, p_as in pq_pairs(ctx, 2):
        for code in prop1_codes(n_max):
            t.merge(shuffled_miss_tally(code, P_HAT5, p_ss, p_as, given_k=True))
    return t.evidence(f"exact over all class sets (p^ = {P_HAT5}) and all n! permutations, FRC "
                      f"and [2]'s CRC, n <= {n_max}, s = 2, 3, every data-set and k_i, 2 (p_ss, "
                      f"p_as), to {TOL:g} relative")


@statement(5, "Prop. 1 (shuffling, classes averaged)", "with random shuffling and the classes "
                                                       "drawn, every data-set is not accessed "
                                                       "w.p. (p^ p_ss + (1 - p^) p_as)^s per "
                                                       "iteration: L q^s times in L iterations")
def _prop1_average(ctx) -> Evidence:
    n_max = 6 if ctx.quick else 7
    rng = np.random.default_rng(ctx.seed)
    t = Tally()
    for p_ss, p_as in pq_pairs(ctx, 2):
        for p_hat in (P_HAT5, 0.6):
            for code in prop1_codes(n_max):
                t.merge(shuffled_miss_tally(code, p_hat, p_ss, p_as, given_k=False))
    runs = 200 if ctx.quick else 3000
    t.merge(miss_mc_tally(20, 2, 0.3, 0.7, 0.15, runs, 30, rng, shuffle=True))
    return t.evidence(f"exact over all class sets and n! permutations, FRC and [2]'s CRC, n <= "
                      f"{n_max}, s = 2, 3, p^ = 0.3, 0.6, 2 (p_ss, p_as), every data-set, to "
                      f"{TOL:g} relative; Monte Carlo with gradcode's samplers and "
                      f"shuffle_permutation, FRC n = 20, s = 2, {runs} runs x 30 iterations, "
                      "within 4 se")


# --------------------------------------------------------------------------- Remark 1
def cyclic_tally(code, p_ss, p_as, perm_fn=None) -> Tally:
    """Over the ``n`` cyclic shifts (``shuffle_permutation(n, t, kind="cyclic")``), for every
    class set: the expected number of iterations each data-set is not accessed is the same for
    all data-sets."""
    t = Tally()
    perm_fn = perm_fn or (lambda n, it: shuffle_permutation(n, it, kind="cyclic"))
    B = np.asarray(code.B) != 0
    n = B.shape[0]
    shifts = np.array([perm_fn(n, it) for it in range(n)])          # (iteration, worker)
    C = bits(np.arange(1 << n), n)
    for c in range(1 << n):
        p = np.where(C[c], p_ss, p_as)
        # data-set i is missed iff every worker j with B[perm[j], i] != 0 straggles
        miss = np.array([[np.prod(p[B[perm, i]]) for i in range(B.shape[1])] for perm in shifts])
        per_set = miss.sum(axis=0)
        t.case(close(per_set.min(), per_set.max()), lambda: (
            f"{fmt_code(code)}, slow workers {np.flatnonzero(C[c]).tolist()}: expected misses over "
            f"n = {n} cyclic iterations per data-set {np.round(per_set, 4).tolist()}"))
    return t


@statement(5, "Remark 1", "a pre-decided cyclic shuffling also accesses the data-sets "
                          "uniformly when L >> n: over every n iterations each data-set has the "
                          "same expected number of misses, whatever the classes")
def _remark1(ctx) -> Evidence:
    n_max = 6 if ctx.quick else 8
    t = Tally()
    for n in range(4, n_max + 1):
        for s in (2, 3):
            codes = [crc(n, s), circulant(n, s)] + ([fr(n, s)] if n % s == 0 else [])
            for code in codes:
                t.merge(cyclic_tally(code, 0.8, 0.01))
    return t.evidence(f"gradcode's cyclic shuffle_permutation, FRC, [2]'s CRC and circulant CRC, "
                      f"4 <= n <= {n_max}, s = 2, 3, p_ss = 0.8, p_as = 0.01, every class set: "
                      f"expected misses equal across data-sets to {TOL:g} relative")
