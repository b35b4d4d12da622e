"""Paper 2 (IS-GC): its theorems, algorithms and worked examples checked by computation
(``theorems``).

The placements are built here with NumPy from the paper's text (FR and CR of Sec. III, the
groups of CR of Sec. VI-A, the general HR(n, c1, c2) of Fig. 7: the bottom ``c1`` rows of the
in-group cyclic table over the top ``c2`` rows of CR(n, c)) and compared with gradcode's
``isgc-fr``, ``isgc-cr`` and ``isgc-hr``; where gradcode refuses a parameter set the paper's
statement covers (``isgc-hr`` accepts ``c <= n0 <= min(c + c1, 2c - 1)``), the NumPy placement
stands in.  Checked: the conflict graphs (Thm 1, 4, 5, 7; Fig. 4, 5), the range of Thm 6 and the
clique claim of its proof, Alg. 1-4 (Thm 2, 3, 8, 9: maximal and maximum independent sets,
equal chances), the bounds of Thm 10-11 (``gradcode.analysis.recovery_bounds``), FR against CR
(Sec. V-C) and the worked examples of Fig. 1, 2(b), 3 and 4.  Every received set ``W'`` is
enumerated on small ``n`` (the independence numbers of all subsets at once, exact).

HR's Theorems 8 and 9 are checked on the placement of Fig. 7 (``make_code("isgc-hr", ...)``,
whose conflict graph ``tests/test_maximum_decoders.py`` proves equal to Alg. 4's rule) over every
accepted parameter set up to a size, with every received set ``W'``.
"""

from __future__ import annotations

import itertools
from math import comb

import numpy as np

from ..analysis import independence_numbers, recovery_bounds
from ..codes import make_code
from .theorems import Evidence, Tally, statement


def hr_configs(n_max: int, n_min: int = 1):
    """Every ``isgc-hr`` parameter set gradcode accepts with ``n_min <= n <= n_max`` (paper 2's
    Theorem 6 range where every group is a clique: ``c <= n0 <= min(c + c1, 2c - 1)``)."""
    for n in range(n_min, n_max + 1):
        for groups in (g for g in range(1, n + 1) if n % g == 0):
            n0 = n // groups
            for c1 in range(1, n0 + 1):
                for c2 in range(0, n0 + 1 - c1):
                    c = c1 + c2
                    if c <= n0 <= min(c + c1, 2 * c - 1):
                        yield dict(n=n, c1=c1, c2=c2, groups=groups)


#: HR(16, 1, 3, groups=4): where the issue found Theorem 8's counterexamples
HR16 = dict(n=16, c1=1, c2=3, groups=4)


def _configs(ctx):
    return [*hr_configs(10 if ctx.quick else 12), HR16]


def _closed_neighbourhoods(G) -> list[int]:
    n = G.shape[0]
    return [(1 << v) | sum(1 << int(u) for u in G.indices[G.indptr[v]:G.indptr[v + 1]])
            for v in range(n)]


def _members(mask: int) -> list[int]:
    return [i for i in range(mask.bit_length()) if mask >> i & 1]


@statement(2, "Thm 8", "HR: for every group, some maximum independent set of G[W'] holds one of "
                       "the group's received workers (so Alg. 3 may start its greedy searches "
                       "in any single group)")
def _thm8(ctx) -> Evidence:
    cases = failures = 0
    example = ""
    for params in _configs(ctx):
        code = make_code("isgc-hr", **params)
        n, n0 = params["n"], params["n"] // params["groups"]
        alpha = independence_numbers(code.conflict_graph)
        closed = _closed_neighbourhoods(code.conflict_graph)
        S = np.arange(1 << n, dtype=np.int64)
        for q in range(params["groups"]):
            group = sum(1 << v for v in range(q * n0, (q + 1) * n0))
            hit = (S & group) != 0
            best_with = np.zeros(S.size, dtype=np.int16)   # largest independent set using W-hat
            for v in range(q * n0, (q + 1) * n0):
                has = (S >> v & 1) == 1
                best_with = np.where(has, np.maximum(best_with, 1 + alpha[S & ~closed[v]]),
                                     best_with)
            bad = hit & (best_with < alpha)
            cases += int(hit.sum())
            failures += int(bad.sum())
            if bad.any() and not example:
                w = int(S[np.argmax(bad)])
                example = (f"HR(n={n}, c1={params['c1']}, c2={params['c2']}, "
                           f"groups={params['groups']}), W' = {_members(w)} (0-based): "
                           f"alpha = {alpha[w]}, but group {q}'s received workers "
                           f"{_members(w & group)} are in no independent set of that size")
    return Evidence(cases, failures, f"every accepted HR up to n = {10 if ctx.quick else 12} "
                    "and HR(16, 1, 3, 4), every received set and group (exact search)", example)


def alg3(W: list[int], q: int, n: int, n0: int, groups: int, c: int, c2: int) -> list[int]:
    """Paper 2's Alg. 3 with CONFLICT of Alg. 4, as printed (0-based workers; the clockwise scan
    visits ``i + 1, ..., i + n - 1`` mod n), from the received workers of group ``q``."""
    def conflict(i1, i2):
        g1, g2 = i1 // n0, i2 // n0
        if g1 == g2:
            return True
        return (g2 - g1) % groups == 1 and i1 % n0 >= n0 - c2 + 1 and (i2 - i1) % n < c

    received = set(W)
    best: list[int] = []
    for i in sorted(v for v in W if v // n0 == q):
        chosen, i0 = [i], i
        for j in range(1, n):
            nxt = (i + j) % n
            if nxt in received and not conflict(i0, nxt) and not conflict(nxt, i):
                i0 = nxt
                chosen.append(nxt)
        if len(chosen) > len(best):
            best = chosen
    return best


@statement(2, "Thm 9", "HR: Alg. 3 with CONFLICT of Alg. 4 finds a maximum independent set of "
                       "G[W'] (from whichever group it starts in)")
def _thm9(ctx) -> Evidence:
    cases = failures = 0
    example = ""
    configs = [*hr_configs(8 if ctx.quick else 10), dict(n=12, c1=1, c2=3, groups=3)]
    for params in configs:
        code = make_code("isgc-hr", **params)
        n, groups = params["n"], params["groups"]
        n0, c = n // groups, params["c1"] + params["c2"]
        alpha = independence_numbers(code.conflict_graph)
        for mask in range(1, 1 << n):
            W = _members(mask)
            for q in sorted({v // n0 for v in W}):
                found = len(alg3(W, q, n, n0, groups, c, params["c2"]))
                cases += 1
                if found < alpha[mask]:
                    failures += 1
                    example = example or (
                        f"HR(n={n}, c1={params['c1']}, c2={params['c2']}, groups={groups}), "
                        f"W' = {W} (0-based), started in group {q}: {found} workers, "
                        f"alpha = {alpha[mask]}")
    return Evidence(cases, failures, f"every accepted HR up to n = {8 if ctx.quick else 10} and "
                    "HR(12, 1, 3, 3), every received set and starting group", example)



# =============================================================================================
# The other statements.  Workers and partitions are 0-based in the code (the paper's W_1 is
# worker 0; messages print W1, W2, ...); a received set W' is a bitmask S (bit i: worker i
# received), all 2^n of them at once where the check is exhaustive.
# =============================================================================================

# ----------------------------------------------------------------------------- placements
def cr_support(n: int, c: int) -> np.ndarray:
    """CR as Sec. III prints it: ``W_i`` holds ``D_((j-1) mod n)+1``, ``j = i, ..., i+c-1``."""
    return (np.arange(n)[:, None] + np.arange(c)) % n


def fr_support(n: int, c: int) -> np.ndarray:
    """FR (Sec. III, ``c | n``): the ``i``-th group's workers hold ``D_(i-1)c+1 .. D_ic``."""
    return (np.arange(n)[:, None] // c) * c + np.arange(c)


def hr_groups_support(n: int, c: int, groups: int) -> np.ndarray:
    """Sec. VI-A's special case: ``groups`` groups of ``n0 = n / groups`` workers and
    partitions, each group placed as CR(n0, c) on its own partitions (Fig. 6)."""
    n0 = n // groups
    p = np.arange(n)
    return (p // n0)[:, None] * n0 + (p[:, None] % n0 + np.arange(c)) % n0


def hr_support(n: int, c1: int, c2: int, groups: int) -> np.ndarray:
    """HR(n, c1, c2) of Fig. 7 from the text: the upper part is HR(n, n0, 0) (group ``q``'s row
    ``r = 1..n0`` gives worker ``q n0 + l`` partition ``q n0 + (l + r - 1) mod n0``: its first
    row is 1..n, as CR's), the lower part CR(n, c); a worker holds the bottom ``c1`` rows of the
    upper part and the top ``c2`` rows of the lower part (``0 <= c1, c2 <= n0``)."""
    n0 = n // groups
    p = np.arange(n)
    upper = (p // n0)[:, None] * n0 + (p[:, None] % n0 + np.arange(n0 - c1, n0)) % n0
    return np.hstack([upper, cr_support(n, c2)]).astype(int)


def support_of(code) -> np.ndarray:
    """gradcode's placement: row ``i`` lists the partitions worker ``i`` codes (sorted)."""
    return np.array([np.flatnonzero(row) for row in code.B])


def same_placement(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether every worker holds the same set of partitions in both placements."""
    return a.shape == b.shape and bool((np.sort(a, axis=1) == np.sort(b, axis=1)).all())


def conflicts(support: np.ndarray) -> np.ndarray:
    """The conflict graph (Sec. V-A) of a placement from its definition: ``W_i ~ W_j`` iff they
    hold a common partition (bool adjacency, no loops)."""
    n = support.shape[0]
    M = np.zeros((n, int(support.max(initial=0)) + 1), dtype=np.int64)
    np.add.at(M, (np.repeat(np.arange(n), support.shape[1]), support.ravel()), 1)
    A = (M @ M.T) > 0
    np.fill_diagonal(A, False)
    return A


def graph_of(code) -> np.ndarray:
    """gradcode's conflict graph of ``code`` as a bool adjacency."""
    return code.conflict_graph.toarray() != 0


def circulant(n: int, c: int) -> np.ndarray:
    """``C_n^{1..c-1}``: ``x ~ y`` iff their distance on the circle is one of ``1, ..., c-1``."""
    x = np.arange(n)
    d = np.abs(x[:, None] - x)
    d = np.minimum(d, n - d)
    return (d >= 1) & (d <= c - 1)


_HR_GRAPHS: dict = {}


def hr_graph(n: int, c1: int, c2: int, groups: int) -> tuple[np.ndarray, str]:
    """HR(n, c1, c2)'s conflict graph (read-only, cached) and its source: gradcode's where it
    accepts the parameters (``isgc-cr`` for ``c1 = 0``), the NumPy placement of Fig. 7 where it
    refuses them."""
    key = (n, c1, c2, groups)
    if key not in _HR_GRAPHS:
        try:
            code = (make_code("isgc-cr", n=n, c=c2) if c1 == 0 else
                    make_code("isgc-hr", n=n, c1=c1, c2=c2, groups=groups))
            A, src = graph_of(code), "gradcode"
        except ValueError:
            A, src = conflicts(hr_support(n, c1, c2, groups)), "numpy"
        A.setflags(write=False)
        if len(_HR_GRAPHS) > 20000:
            _HR_GRAPHS.clear()
        _HR_GRAPHS[key] = A, src
    return _HR_GRAPHS[key]


def theorem6_range(n_max: int, n_min: int = 1):
    """Every HR(n, c1, c2) with ``groups | n``, ``c1 >= 1`` and ``c <= n0 <= 2c - 1`` (the range
    Theorem 6 states) and ``n_min <= n <= n_max``, as tuples ``(n, c1, c2, groups)``."""
    for n in range(n_min, n_max + 1):
        for groups in (g for g in range(1, n + 1) if n % g == 0):
            n0 = n // groups
            for c in range((n0 + 2) // 2, n0 + 1):
                for c1 in range(1, c + 1):
                    yield n, c1, c - c1, groups


def groups_are_cliques(A: np.ndarray, groups: int) -> bool:
    n0 = A.shape[0] // groups
    return all((A[q * n0:(q + 1) * n0, q * n0:(q + 1) * n0] | np.eye(n0, dtype=bool)).all()
               for q in range(groups))


def _hr(n, c1, c2, groups) -> str:
    return f"HR(n={n}, c1={c1}, c2={c2}, groups={groups})"


def _W(mask) -> str:
    return "{" + ", ".join(f"W{i + 1}" for i in _members(int(mask))) + "}"


def _mask(*workers: int) -> int:
    """The bit mask of the paper's (1-based) workers."""
    return sum(1 << (w - 1) for w in workers)


# ----------------------------------------------------------------------------- bit masks
_BITS = np.array([bin(i).count("1") for i in range(256)], dtype=np.int16)


def popcount(S) -> np.ndarray:
    S = np.asarray(S, dtype=np.int64)
    out = np.zeros(S.shape, dtype=np.int16)
    while S.size and S.max() > 0:
        out += _BITS[S & 255]
        S = S >> 8
    return out


def _bit(S, v) -> np.ndarray:
    return (np.asarray(S) >> v & 1).astype(bool)


def every_subset(n: int) -> np.ndarray:
    return np.arange(1 << n, dtype=np.int64)


def neighbour_masks(A: np.ndarray) -> np.ndarray:
    """``N[v]``: the bitmask of ``v``'s neighbours."""
    return (A.astype(np.int64) << np.arange(A.shape[0], dtype=np.int64)).sum(axis=1)


def independent_and_maximal(chosen, S, A) -> tuple[np.ndarray, np.ndarray]:
    """For each pair of bitmasks (``chosen``, ``S``): is ``chosen`` an independent set of
    ``G[S]`` (inside ``S``, no edge), and is it a maximal one (no vertex of ``S`` addable)?"""
    N = neighbour_masks(A)
    chosen, S = np.asarray(chosen, dtype=np.int64), np.asarray(S, dtype=np.int64)
    indep = (chosen & ~S) == 0
    addable = np.zeros(chosen.shape, dtype=bool)
    for v in range(A.shape[0]):
        touches = (chosen & N[v]) != 0
        indep &= ~(_bit(chosen, v) & touches)
        addable |= _bit(S, v) & ~_bit(chosen, v) & ~touches
    return indep, indep & ~addable


# ----------------------------------------------------------------------------- the algorithms
def greedy_chains(free: np.ndarray, S: np.ndarray) -> np.ndarray:
    """Lines 4-12 of Alg. 2 (and of Alg. 3) from every start ``i`` over every received set of
    ``S`` at once: ``chains[i]`` is ``I'`` grown from ``i`` (meaningful where ``S`` holds
    ``i``).  The scan visits ``next = i + j mod n``, ``j = 1, ..., n-1``, and takes ``next``
    when it is received, ``free[i0, next]`` (no conflict with the last one taken, ``i0``) and
    ``free[next, i]`` (none with the start).  (Printed, line 7 reads ``(i0 + j - 1) mod n + 1``
    with ``i0`` moving along, which would skip workers; the proofs scan clockwise.)"""
    n = free.shape[0]
    chains = np.zeros((n, S.size), dtype=np.int64)
    for i in range(n):
        i0 = np.full(S.size, i)
        chosen = np.full(S.size, 1 << i, dtype=np.int64)
        for j in range(1, n):
            nxt = (i + j) % n
            ok = _bit(S, nxt) & free[i0, nxt] & free[nxt, i]
            i0 = np.where(ok, nxt, i0)
            chosen |= ok.astype(np.int64) << nxt
        chains[i] = chosen
    return chains


def alg2_free(n: int, c: int) -> np.ndarray:
    """Alg. 2's test of line 8: ``d(x, y) >= c``, the distance on the circle."""
    x = np.arange(n)
    d = np.abs(x[:, None] - x)
    return np.minimum(d, n - d) >= c


def alg2_pick(chains: np.ndarray, S: np.ndarray, u: int, c: int) -> np.ndarray:
    """Alg. 2's answer from the random vertex ``u`` (lines 2-3, 13-15): the first largest
    ``I'`` over the starts ``W' ∩ {u, ..., u+c-1}``, taken in that order."""
    n = chains.shape[0]
    best = np.zeros(S.size, dtype=np.int16)
    pick = np.zeros(S.size, dtype=np.int64)
    for v in range(min(c, n)):
        k = (u + v) % n
        size = popcount(chains[k])
        better = _bit(S, k) & (size > best)
        best = np.where(better, size, best)
        pick = np.where(better, chains[k], pick)
    return pick


def alg1_pick(S: np.ndarray, n: int, c: int) -> np.ndarray:
    """Alg. 1 (FR): one received worker of every group that has one (here the group's first;
    the algorithm draws it at random, which changes neither size nor independence)."""
    pick = np.zeros(S.size, dtype=np.int64)
    for q in range(n // c):
        got = S & (((1 << c) - 1) << (q * c))
        pick |= got & -got
    return pick


def alg4_conflict(n: int, c1: int, c2: int, groups: int) -> np.ndarray:
    """CONFLICT(i1, i2) of Alg. 4 for every ordered pair, read 0-based (``g = floor(i / n0)``,
    ``j1 = i1 mod n0``): the same group, or ``i2`` in the next group with ``j1 >= n0 - c2 + 1``
    and ``(i2 - i1) mod n < c``."""
    n0, c = n // groups, c1 + c2
    i1, i2 = np.arange(n)[:, None], np.arange(n)[None, :]
    same = i1 // n0 == i2 // n0
    nxt = ((i2 // n0 - i1 // n0) % groups == 1) & (i1 % n0 >= n0 - c2 + 1) & ((i2 - i1) % n < c)
    return same | nxt


def arrival_greedy(order: list[int], A: np.ndarray) -> list[int]:
    """Decoding by the received sequence (Sec. V-A): keep a worker iff it conflicts with none
    kept so far."""
    kept: list[int] = []
    for v in order:
        if not A[v, kept].any():
            kept.append(v)
    return kept


def best_linear_recovery(R: np.ndarray) -> int:
    """The largest ``|I|`` with ``ĝ = sum_{i in I} g_i`` a linear combination of the received
    coded gradients (rows of ``R``): ``1_I`` in the row space, residual below 1e-9."""
    return max(map(len, decodable_sums(R)), default=0)


# ----------------------------------------------------------------------------- exact α, cached
_ALPHA: dict = {}


def alpha_of(key, A: np.ndarray) -> np.ndarray:
    """``independence_numbers(A)`` (every subset at once), cached under ``key``."""
    if key not in _ALPHA:
        if len(_ALPHA) > 128:
            _ALPHA.clear()
        _ALPHA[key] = independence_numbers(A)
    return _ALPHA[key]


def fr_alpha(n: int, c: int) -> np.ndarray:
    return alpha_of(("fr", n, c), graph_of(make_code("isgc-fr", n=n, c=c)))


def cr_alpha(n: int, c: int) -> np.ndarray:
    return alpha_of(("cr", n, c), graph_of(make_code("isgc-cr", n=n, c=c)))


def _fr_cr(n_max: int):
    """``(kind, n, c)`` for every CR(n, c) and FR(n, c) (``c | n``), ``n <= n_max``."""
    for n in range(1, n_max + 1):
        for c in range(1, n + 1):
            yield "CR", n, c
            if n % c == 0:
                yield "FR", n, c


def _alpha_fr_cr(kind, n, c):
    return fr_alpha(n, c) if kind == "FR" else cr_alpha(n, c)


# ============================================================================ Sec. I - IV
#: Fig. 1(b): the coded gradients printed for W1, W3 and W4 (CR, n = 4, c = 2; 0-based keys)
FIG1B_ROWS = {0: [-1.0, 1.0, 0.0, 0.0], 2: [0.0, 0.0, 1.0, 1 / 3], 3: [2.0, 0.0, 0.0, 2 / 3]}


def fig1b_failures(rows: dict, support: np.ndarray) -> list[str]:
    """What is wrong with Fig. 1(b)'s sum: the rows must add up to ``g`` (all ones, to 1e-12)
    and each may only use its worker's partitions."""
    bad = []
    total = np.sum(list(rows.values()), axis=0)
    if np.abs(total - 1).max() > 1e-12:
        bad.append(f"the rows add up to {np.round(total, 6).tolist()}, not g")
    for w, r in rows.items():
        if not set(np.flatnonzero(r).tolist()) <= set(support[w].tolist()):
            bad.append(f"W{w + 1}'s row {r} uses partitions outside {support[w].tolist()}")
    return bad


@statement(2, "Sec. I, Fig. 1(b)", "GC, n = 4, c = 2, W2 straggling: (-g1 + g2) + (g3 + g4/3) "
                                   "+ (2/3 g4 + 2 g1) = g, each coded gradient from its "
                                   "worker's own CR partitions")
def _fig1b(ctx) -> Evidence:
    bad = fig1b_failures(FIG1B_ROWS, support_of(make_code("isgc-cr", n=4, c=2)))
    return Evidence(1 + len(FIG1B_ROWS), len(bad),
                    "the printed coefficients of W1, W3, W4 summed, and their supports against "
                    "isgc-cr(4, 2)'s placement", "; ".join(bad) or
                    "the rows sum to (1, 1, 1, 1) on W1 = {D1, D2}, W3 = {D3, D4}, W4 = {D4, D1}")


@statement(2, "Sec. I, Fig. 1(d)", "IS-GC (CR, n = 4, c = 2) recovers g1 + ... + g4 from two "
                                   "workers (W1, W3) where IS-SGD recovers g1 + g3; W1 "
                                   "conflicts with W2 (both hold g2)")
def _fig1d(ctx) -> Evidence:
    code = make_code("isgc-cr", n=4, c=2)
    checks = {
        "W1 ~ W2 in isgc-cr(4, 2)'s conflict graph": bool(graph_of(code)[0, 1]),
        "isgc-cr(4, 2) decodes g from {W1, W3}": bool(np.allclose(code.decode([0, 2]).recovered,
                                                                  1)),
        "IS-SGD ('ignore', n = 4) recovers g1 + g3 from {W1, W3}":
            make_code("ignore", n=4).decode([0, 2]).recovered.tolist() == [1, 0, 1, 0]}
    bad = [k for k, ok in checks.items() if not ok]
    return Evidence(len(checks), len(bad), "gradcode's isgc-cr(4, 2) and ignore(4) on the "
                    "figure's two workers", "fails: " + "; ".join(bad) if bad else
                    "isgc-cr recovers (1, 1, 1, 1), ignore (1, 0, 1, 0)")


def decodable_sums(R: np.ndarray) -> list[list[int]]:
    """Every non-empty ``I`` whose ``ĝ = sum_{i in I} g_i`` is a linear combination of the rows
    of ``R`` (to 1e-9), as 0-based partition lists."""
    n = R.shape[1]
    _, s, Vt = np.linalg.svd(R, full_matrices=False)
    V = Vt[s > 1e-9 * max(s.max(initial=0), 1)]
    ind = (every_subset(n)[1:, None] >> np.arange(n) & 1).astype(float)
    ok = np.abs(ind - (ind @ V.T) @ V).max(axis=1) < 1e-9
    return [np.flatnonzero(row).tolist() for row in ind[ok]]


@statement(2, "Sec. IV (Fig. 2(b))", "with GC's non-1 coefficients (CR, n = 4, c = 2) no "
                                     "ĝ = Σ_{i∈I} g_i (I ≠ ∅) can be decoded from fewer than "
                                     "3 workers")
def _fig2b(ctx) -> Evidence:
    t = Tally()
    sets = [("printed Fig. 1(b)", W, np.array([FIG1B_ROWS[w] for w in W]))
            for k in (1, 2) for W in itertools.combinations(FIG1B_ROWS, k)]
    seeds = range(10 if ctx.quick else 100)
    for seed in seeds:
        B = make_code("gc-cr", n=4, s=1, seed=seed).B
        sets += [(f"gc-cr(4, s=1, seed={seed})", W, B[list(W)])
                 for k in (1, 2) for W in itertools.combinations(range(4), k)]
    for name, W, R in sets:
        I = decodable_sums(R)
        t.count(1, bool(I), lambda: f"{name}: {_W(sum(1 << w for w in W))} decode "
              f"ĝ over partitions {[i + 1 for i in I[0]]}")
    return t.evidence(f"every 1 or 2 of the printed rows of W1, W3, W4 and of gradcode's gc-cr"
                      f"(4, s=1) for seeds 0..{len(seeds) - 1}, every I (least squares, 1e-9)",
                      "no single worker or pair decodes any partial sum")


@statement(2, "Sec. IV, Alg. 1", "FR: Alg. 1 (one random received worker from every group "
                                 "hit) returns a maximum independent set of G[W']")
def _alg1(ctx) -> Evidence:
    t = Tally()
    n_max, n_dec = (12, 6) if ctx.quick else (16, 9)
    rng = np.random.default_rng(ctx.seed)
    for n in range(1, n_max + 1):
        for c in (c for c in range(1, n + 1) if n % c == 0):
            code = make_code("isgc-fr", n=n, c=c)
            A, alpha = graph_of(code), fr_alpha(n, c)
            S = every_subset(n)[1:]
            pick = alg1_pick(S, n, c)
            indep, _ = independent_and_maximal(pick, S, A)
            bad = ~indep | (popcount(pick) != alpha[S])
            t.count(S.size, bad.sum(), lambda: f"FR({n}, {c}), W' = {_W(S[bad][0])}: Alg. 1 "
                  f"picks {_W(pick[bad][0])}, alpha = {alpha[S[bad][0]]}")
            if n > n_dec:
                continue
            for mask in S.tolist():             # gradcode's decoder, which implements Alg. 1
                d = code.decode(_members(mask), rng=rng)
                chosen = np.flatnonzero(d.weights)
                m = int(sum(1 << int(v) for v in chosen))
                ok = (np.isin(d.weights[chosen], 1.0).all() and chosen.size == alpha[mask]
                      and independent_and_maximal(np.array([m]), np.array([mask]), A)[0][0])
                t.count(1, not ok, lambda: f"gradcode isgc-fr({n}, {c}).decode({_W(mask)}) "
                      f"chose {_W(m)}, alpha = {alpha[mask]}")
    return t.evidence(f"every FR(n, c), c | n, n <= {n_max}, every W' (Alg. 1 on bit masks); "
                      f"gradcode's isgc-fr decoder on every W' for n <= {n_dec}; alpha exact",
                      "FR(4, 2), W' = {W1, W2, W3}: {W1, W3}, alpha = 2")


def fr_chances(n: int, c: int) -> tuple[np.ndarray, np.ndarray]:
    """Alg. 1 with ``W'`` uniform among the ``w``-sets: ``P[w, i]`` that worker ``i`` is in I,
    ``Q[w, j]`` that partition ``j`` is in ĝ (exact)."""
    S = every_subset(n)[1:]
    w = popcount(S)
    P, Q = np.zeros((n + 1, n)), np.zeros((n + 1, n))
    for i in range(n):
        q = i // c
        in_group = popcount(S & (((1 << c) - 1) << (q * c)))
        P[:, i] = np.bincount(w, weights=_bit(S, i) / np.maximum(in_group, 1), minlength=n + 1)
        Q[:, i] = np.bincount(w, weights=in_group > 0, minlength=n + 1)
    norm = np.array([comb(n, k) for k in range(n + 1)], float)[:, None]
    return P / norm, Q / norm


def cr_chances(n: int, c: int, random_u: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Alg. 2 (``u`` uniform in ``W'``, or the first received worker when not ``random_u``)
    with ``W'`` uniform among the ``w``-sets: ``P[w, i]`` (worker ``i`` in I), ``Q[w, j]``
    (partition ``j`` in ĝ), exact."""
    S = every_subset(n)[1:]
    w = popcount(S)
    chains = greedy_chains(alg2_free(n, c), S)
    parts = np.array([sum(1 << int(j) for j in row) for row in cr_support(n, c)], np.int64)
    P, Q = np.zeros((n + 1, n)), np.zeros((n + 1, n))
    first = S & -S
    for u in range(n):
        weight = _bit(S, u) / w if random_u else (first == 1 << u).astype(float)
        pick = alg2_pick(chains, S, u, c)
        held = np.zeros(S.size, dtype=np.int64)
        for i in range(n):
            held |= np.where(_bit(pick, i), parts[i], 0)
        for i in range(n):
            P[:, i] += np.bincount(w, weights=weight * _bit(pick, i), minlength=n + 1)
            Q[:, i] += np.bincount(w, weights=weight * _bit(held, i), minlength=n + 1)
    norm = np.array([comb(n, k) for k in range(n + 1)], float)[:, None]
    return P / norm, Q / norm


def unequal_sizes(P: np.ndarray, tol: float = 1e-9) -> list[int]:
    """The sizes ``w`` where the chances ``P[w]`` differ between workers (or partitions)."""
    return [w for w in range(1, P.shape[0]) if np.ptp(P[w]) > tol]


@statement(2, "Sec. IV, V-B, VII-B", "with W' uniform among the w-sets, Alg. 1 (FR) and Alg. 2 "
                                     "(CR, random u) put every worker in I and every partition "
                                     "in ĝ with the same probability (Assumption 2)")
def _chances(ctx) -> Evidence:
    t = Tally()
    n_max = 9 if ctx.quick else 12
    for kind, n, c in _fr_cr(n_max):
        P, Q = fr_chances(n, c) if kind == "FR" else cr_chances(n, c)
        bad = sorted(set(unequal_sizes(P)) | set(unequal_sizes(Q)))
        t.count(n, len(bad), lambda: f"{kind}({n}, {c}), w = {bad[0]}: P(worker in I) = "
              f"{np.round(P[bad[0]], 4).tolist()}, P(partition in ĝ) = "
              f"{np.round(Q[bad[0]], 4).tolist()}")
    return t.evidence(f"every FR(n, c) (c | n) and CR(n, c), n <= {n_max}, every w (cases: "
                      "(scheme, w)); exact over every W' and every u (1e-9)",
                      "CR(8, 3), w = 4: P(worker in I) = {:.4f} for each, P(partition in ĝ) = "
                      "{:.4f}".format(*(x[4].mean() for x in cr_chances(8, 3))))


# ============================================================================ Sec. V (CR)
@statement(2, "Sec. V-A, Fig. 3(a)", "CR, n = 4, c = 2, W1 then W2, W4 received: decoding in "
                                     "arrival order keeps only W1 (g1 + g2), while dropping W1 "
                                     "gives (g2 + g3) + (g4 + g1) = g")
def _fig3a(ctx) -> Evidence:
    code = make_code("isgc-cr", n=4, c=2)
    A = graph_of(code)
    alpha = cr_alpha(4, 2)
    checks = {"arrival order keeps {W1}": arrival_greedy([0, 1, 3], A) == [0],
              "alpha(G[{W1, W2, W4}]) = 2 with {W2, W4} independent":
                  alpha[0b1011] == 2 and not A[1, 3],
              "gradcode's decoder recovers g from {W1, W2, W4}":
                  bool(np.allclose(code.decode([0, 1, 3]).recovered, 1))}
    bad = [k for k, ok in checks.items() if not ok]
    return Evidence(len(checks), len(bad), "isgc-cr(4, 2): greedy in arrival order, exact "
                    "alpha, gradcode's decode", "fails: " + "; ".join(bad) if bad else
                    "arrival order: {W1} (2 partitions); maximum {W2, W4} (4 = all)")


#: Fig. 4, as the text describes it: FR(4, 2) pairs W1-W2 and W3-W4, CR(4, 2) is the 4-cycle
FIG4_EDGES = {"FR": {(0, 1), (2, 3)}, "CR": {(0, 1), (1, 2), (2, 3), (0, 3)}}


def edge_set(A: np.ndarray) -> set:
    return {(int(i), int(j)) for i, j in zip(*np.nonzero(np.triu(A)))}


@statement(2, "Sec. V, Fig. 4", "conflict graphs with n = 4, c = 2: FR is W1-W2, W3-W4; CR is "
                                "the cycle W1-W2-W3-W4; with W1, W2, W3 received the greedy "
                                "search finds {W1, W3} from W1 but only {W2} from W2")
def _fig4(ctx) -> Evidence:
    fr, cr = make_code("isgc-fr", n=4, c=2), make_code("isgc-cr", n=4, c=2)
    chains = greedy_chains(alg2_free(4, 2), np.array([0b0111]))[:, 0]
    checks = {"FR's edges": edge_set(graph_of(fr)) == FIG4_EDGES["FR"],
              "CR's edges": edge_set(graph_of(cr)) == FIG4_EDGES["CR"],
              "greedy from W1 gives {W1, W3}": chains[0] == 0b0101,
              "greedy from W2 gives {W2}": chains[1] == 0b0010}
    bad = [k for k, ok in checks.items() if not ok]
    return Evidence(len(checks), len(bad), "gradcode's isgc-fr(4, 2) and isgc-cr(4, 2) conflict "
                    "graphs; Alg. 2's lines 4-12 on W' = {W1, W2, W3}",
                    "fails: " + "; ".join(bad) if bad else
                    "FR: {W1W2, W3W4}; CR: 4-cycle; greedy {W1, W3} / {W2}")


def is_circulant_cr(n: int, c: int, support: np.ndarray, A: np.ndarray) -> list[str]:
    """Theorem 1 on one instance: ``support`` must be Sec. III's CR placement and ``A`` the
    circulant ``C_n^{1..c-1}``."""
    bad = []
    if not same_placement(support, cr_support(n, c)):
        bad.append("the placement is not Sec. III's CR")
    wrong = [(int(i) + 1, int(j) + 1) for i, j in np.argwhere(A != circulant(n, c))]
    if wrong:
        bad.append(f"edges differ from C_{n}^{{1..{c - 1}}} at {wrong[:3]}")
    return bad


@statement(2, "Thm 1", "the conflict graph of CR(n, c) is the circulant graph C_n^{1,...,c-1}")
def _thm1(ctx) -> Evidence:
    t = Tally()
    n_max = 24 if ctx.quick else 64
    for n in range(1, n_max + 1):
        for c in range(1, n + 1):
            code = make_code("isgc-cr", n=n, c=c)
            bad = is_circulant_cr(n, c, support_of(code), graph_of(code))
            t.count(1, bool(bad), lambda: f"CR({n}, {c}): " + "; ".join(bad))
    return t.evidence(f"gradcode's isgc-cr(n, c) for every 1 <= c <= n <= {n_max}: placement "
                      "against Sec. III's text, conflict graph against C_n^{1..c-1} (exact)",
                      "CR(7, 3) = C_7^{1,2}: every worker conflicts with 4 others")


def _cr_cases(n_max: int):
    for n in range(1, n_max + 1):
        for c in range(1, n + 1):
            yield n, c


@statement(2, "Thm 2", "CR: the greedy search of Alg. 2 (lines 4-12) from any received worker "
                       "finds a maximal independent set of G[W']")
def _thm2(ctx) -> Evidence:
    t = Tally()
    n_max = 9 if ctx.quick else 13
    for n, c in _cr_cases(n_max):
        A = graph_of(make_code("isgc-cr", n=n, c=c))
        S = every_subset(n)
        chains = greedy_chains(alg2_free(n, c), S)
        for i in range(n):
            has = _bit(S, i)
            _, maximal = independent_and_maximal(chains[i][has], S[has], A)
            t.count(has.sum(), (~maximal).sum(), lambda: f"CR({n}, {c}), W' = "
                  f"{_W(S[has][~maximal][0])}, from W{i + 1}: {_W(chains[i][has][~maximal][0])}"
                  " is not a maximal independent set")
    return t.evidence(f"every CR(n, c), n <= {n_max}, every W' and start, against gradcode's "
                      "conflict graph; line 7 read as the clockwise scan next = i + j (with i0 "
                      "moving along, as printed, it skips workers: CR(3, 1), W' = W, from W1 "
                      "{W1, W2})", _chain_example(7, 2, _mask(1, 2, 3, 5,
                                                                                      6)))


def _chain_example(n: int, c: int, mask: int) -> str:
    chains = greedy_chains(alg2_free(n, c), np.array([mask]))[:, 0]
    alpha = cr_alpha(n, c)[mask]
    return f"CR({n}, {c}), W' = {_W(mask)} (alpha = {alpha}): " + ", ".join(
        f"from W{i + 1} {_W(chains[i])}" for i in _members(mask))


@statement(2, "Thm 2 (proof)", "CR: the greedy search from W_i finds a largest independent set "
                               "of G[W'] among those containing W_i")
def _thm2_proof(ctx) -> Evidence:
    t = Tally()
    n_max = 9 if ctx.quick else 13
    for n, c in _cr_cases(n_max):
        A = graph_of(make_code("isgc-cr", n=n, c=c))
        alpha, closed = cr_alpha(n, c), neighbour_masks(A) | (1 << np.arange(n))
        S = every_subset(n)
        chains = greedy_chains(alg2_free(n, c), S)
        for i in range(n):
            has = _bit(S, i)
            best = 1 + alpha[S[has] & ~closed[i]]
            bad = popcount(chains[i][has]) != best
            t.count(has.sum(), bad.sum(), lambda: f"CR({n}, {c}), W' = {_W(S[has][bad][0])}, "
                  f"from W{i + 1}: {popcount(chains[i][has][bad][:1])[0]} workers, "
                  f"{best[bad][0]} possible with W{i + 1}")
    return t.evidence(f"every CR(n, c), n <= {n_max}, every W' and start; the largest set with "
                      "W_i is 1 + alpha(G[W' - N[W_i]]) (exact)",
                      _chain_example(7, 2, _mask(1, 2, 3, 5, 6)))


@statement(2, "Thm 3", "CR: Alg. 2 (greedy searches from the received workers among u, ..., "
                       "u + c - 1 for a random received u) returns a maximum independent set "
                       "of G[W']")
def _thm3(ctx) -> Evidence:
    t = Tally()
    n_max, n_dec = (9, 6) if ctx.quick else (13, 9)
    rng = np.random.default_rng(ctx.seed)
    for n, c in _cr_cases(n_max):
        code = make_code("isgc-cr", n=n, c=c)
        A, alpha = graph_of(code), cr_alpha(n, c)
        S = every_subset(n)
        chains = greedy_chains(alg2_free(n, c), S)
        for u in range(n):
            has = _bit(S, u)
            got = popcount(alg2_pick(chains[:, has], S[has], u, c))
            bad = got != alpha[S[has]]
            t.count(has.sum(), bad.sum(), lambda: f"Alg. 2 on CR({n}, {c}), W' = "
                  f"{_W(S[has][bad][0])}, u = W{u + 1}: {got[bad][0]} workers, alpha = "
                  f"{alpha[S[has]][bad][0]}")
        frac = code.recovery_many((S[1:, None] >> np.arange(n) & 1).astype(bool))[0]
        bad = np.abs(frac * n - c * alpha[S[1:]]) > 1e-9
        t.count(S.size - 1, bad.sum(), lambda: f"gradcode isgc-cr({n}, {c}).recovery_many, W' = "
              f"{_W(S[1:][bad][0])}: {frac[bad][0] * n} partitions, c alpha = "
              f"{c * alpha[S[1:]][bad][0]}")
        if n > n_dec:
            continue
        for mask in range(1, 1 << n):
            d = code.decode(_members(mask), rng=rng)
            m = int(sum(1 << int(v) for v in np.flatnonzero(d.weights)))
            ok = (popcount(m) == alpha[mask] and np.isin(d.weights[d.weights != 0], 1.0).all()
                  and independent_and_maximal(np.array([m]), np.array([mask]), A)[0][0])
            t.count(1, not ok, lambda: f"gradcode isgc-cr({n}, {c}).decode({_W(mask)}) chose "
                  f"{_W(m)}, alpha = {alpha[mask]}")
    return t.evidence(f"Alg. 2 from every u on every W' of every CR(n, c), n <= {n_max}; "
                      f"gradcode's isgc-cr closed form (every W', n <= {n_max}) and decoder "
                      f"(every W', n <= {n_dec}); alpha exact",
                      _chain_example(7, 3, _mask(1, 2, 4, 5, 7)) + "; Alg. 2 from u = W1 tries "
                      "W1, W2 and keeps the first largest")


@statement(2, "Sec. V-A (abstract)", "graph decoding maximizes the recovery: the most partitions "
                                     "ĝ = Σ_{i∈I} g_i the received plain sums can give is "
                                     "|I| = c·α(G[W'])")
def _linear(ctx) -> Evidence:
    t = Tally()
    n_max = 6 if ctx.quick else 8
    failing = set()
    for kind, n, c in _fr_cr(n_max):
        B = np.zeros((n, n))
        sup = fr_support(n, c) if kind == "FR" else cr_support(n, c)
        B[np.repeat(np.arange(n), c), sup.ravel()] = 1.0
        alpha = _alpha_fr_cr(kind, n, c)
        for mask in range(1, 1 << n):
            best = best_linear_recovery(B[_members(mask)])
            if best != c * alpha[mask]:
                failing.add((kind, n % c == 0))
            t.count(1, best != c * alpha[mask], lambda: f"{kind}({n}, {c}), W' = {_W(mask)}: a "
                  f"linear combination of the received sums recovers {best} partitions, "
                  f"c alpha = {c * alpha[mask]}" + (" (here (sum of all) / c = g)"
                                                    if mask == (1 << n) - 1 else ""))
    return t.evidence(f"every FR(n, c) (c | n) and CR(n, c), n <= {n_max}, every W': the largest "
                      "I with 1_I in the row space of the received rows (1e-9) against c alpha "
                      "(with 0/1 combinations, adding whole sums, it holds by definition)"
                      + ("; it fails only for CR with c ∤ n" if failing == {("CR", False)}
                         else ""), "")


# ----------------------------------------------------------------------------- Sec. V-C
def subset_failures(small: np.ndarray, big: np.ndarray) -> list[tuple[int, int]]:
    """The edges of ``small`` missing from ``big`` (1-based pairs)."""
    return [(int(i) + 1, int(j) + 1) for i, j in np.argwhere(np.triu(small & ~big))]


@statement(2, "Thm 4", "E_FR(n,c) ⊆ E_CR(n,c) ⊆ E_CR(n,c+1) ⊆ ... ⊆ E_CR(n,n) (printed with ⊂)")
def _thm4(ctx) -> Evidence:
    t = Tally()
    n_max = 30 if ctx.quick else 80
    equal = 0
    for n in range(1, n_max + 1):
        cr = [None] + [graph_of(make_code("isgc-cr", n=n, c=c)) for c in range(1, n + 1)]
        links = [(f"CR({n}, {c})", cr[c], f"CR({n}, {c + 1})", cr[c + 1]) for c in range(1, n)]
        links += [(f"FR({n}, {c})", graph_of(make_code("isgc-fr", n=n, c=c)), f"CR({n}, {c})",
                   cr[c]) for c in range(1, n + 1) if n % c == 0]
        for a, A, b, B in links:
            miss = subset_failures(A, B)
            equal += bool((A == B).all())
            t.count(1, bool(miss), lambda: f"edges of {a} missing from {b}: {miss[:3]}")
    return t.evidence(f"gradcode's conflict graphs, every link for every n <= {n_max} (exact); "
                      f"{equal} links are equalities (both empty for c = 1, both complete for "
                      "c > n/2), so the printed ⊂ holds only as ⊆", "n = 8: |E| = " + ", ".join(
                          f"{len(edge_set(graph_of(make_code(k, n=8, c=c))))} ({k[5:].upper()}, "
                          f"c = {c})"
                          for k, c in (("isgc-fr", 2), ("isgc-cr", 2), ("isgc-cr", 3),
                                       ("isgc-cr", 4), ("isgc-cr", 5))))


@statement(2, "Sec. V-C", "FR recovers at least as much as CR from any workers: "
                          "α(G_FR(n,c)[W']) ≥ α(G_CR(n,c)[W']) for every W' (printed >)")
def _fr_vs_cr(ctx) -> Evidence:
    t = Tally()
    n_max = 12 if ctx.quick else 16
    ties = 0
    for n in range(1, n_max + 1):
        for c in (c for c in range(1, n + 1) if n % c == 0):
            f, r = fr_alpha(n, c)[1:], cr_alpha(n, c)[1:]
            bad = f < r
            ties += int((f == r).sum())
            t.count(f.size, bad.sum(), lambda: f"n = {n}, c = {c}, W' = "
                  f"{_W(np.flatnonzero(bad)[0] + 1)}: FR {f[bad][0]} < CR {r[bad][0]}")
    return t.evidence(f"every n <= {n_max}, c | n, every W' (exact); equality in {ties} of "
                      f"{t.cases} (e.g. every |W'| = 1), so the printed strict > fails there",
                      f"n = 8, c = 2, W' = {_W(_mask(2, 3, 6, 7))}: FR "
                      f"{fr_alpha(8, 2)[_mask(2, 3, 6, 7)]} > CR "
                      f"{cr_alpha(8, 2)[_mask(2, 3, 6, 7)]}")


def expected_alpha(alpha: np.ndarray, n: int) -> np.ndarray:
    """``E[alpha(G[W'])]`` for ``W'`` uniform among the ``w``-sets, ``w = 0..n``."""
    w = popcount(every_subset(n))
    return np.bincount(w, weights=alpha, minlength=n + 1) / np.bincount(w, minlength=n + 1)


@statement(2, "Sec. V-C (expectation)", "α(G[W']) in FR is expected to be higher than in CR: "
                                        "E_FR ≥ E_CR for every |W'| = w, higher for some w "
                                        "(1 < c < n)")
def _fr_vs_cr_mean(ctx) -> Evidence:
    t = Tally()
    n_max = 12 if ctx.quick else 16
    pattern = True
    for n in range(3, n_max + 1):
        for c in (c for c in range(2, n) if n % c == 0):
            ef, ec = expected_alpha(fr_alpha(n, c), n), expected_alpha(cr_alpha(n, c), n)
            lower = [w for w in range(1, n + 1) if ef[w] < ec[w] - 1e-12]
            higher = [w for w in range(1, n + 1) if ef[w] > ec[w] + 1e-12]
            pattern &= higher == list(range(2, n - c + 1))
            t.count(n, len(lower) + (not higher), lambda: f"n = {n}, c = {c}: " + (
                f"w = {lower[0]}: E_FR = {ef[lower[0]]:.4f} < E_CR = {ec[lower[0]]:.4f}"
                if lower else "E_FR = E_CR for every w"))
    return t.evidence(f"every n <= {n_max}, 1 < c < n, c | n, every w (cases: (n, c, w)); exact "
                      "means over all w-sets; higher exactly for 2 <= w <= n - c"
                      + ("" if pattern else " except some (n, c)"),
                      "n = 8, c = 2, w = 4: E_FR = {:.4f} > E_CR = {:.4f}".format(
                          expected_alpha(fr_alpha(8, 2), 8)[4], expected_alpha(cr_alpha(8, 2),
                                                                               8)[4]))


# ============================================================================ Sec. VI (HR)
@statement(2, "Thm 5", "HR made of groups of CR(n0, c) (Sec. VI-A) has the conflict graph of "
                       "FR(n, n0) when n0 <= 2c - 1")
def _thm5(ctx) -> Evidence:
    t = Tally()
    n_max = 24 if ctx.quick else 48
    for n in range(1, n_max + 1):
        for groups in (g for g in range(1, n + 1) if n % g == 0):
            n0 = n // groups
            fr = graph_of(make_code("isgc-fr", n=n, c=n0))
            for c in range((n0 + 2) // 2, n0 + 1):
                mine = conflicts(hr_groups_support(n, c, groups))
                ours = graph_of(make_code("isgc-hr", n=n, c1=c, c2=0, groups=groups))
                bad = [k for k, A in (("the text's placement", mine), ("gradcode's isgc-hr(n, "
                                      "c1=c, c2=0)", ours)) if not (A == fr).all()]
                t.count(1, bool(bad), lambda: f"n = {n}, {groups} groups of CR({n0}, {c}): "
                      f"{' and '.join(bad)} differ from FR({n}, {n0})")
    return t.evidence(f"every n <= {n_max}, groups | n, c <= n0 <= 2c - 1: the NumPy placement "
                      "and gradcode's isgc-hr(n, c, 0, groups) against isgc-fr(n, n0) (exact)",
                      "n = 10, 2 groups of CR(5, 3): two disjoint K5, = FR(10, 5)")


@statement(2, "Sec. VI-A, Fig. 5", "FR(4, 2) is HR with 2 groups of CR(2, 2) (same conflict "
                                   "graph); with g = 1 group HR is CR(n, c)")
def _fig5(ctx) -> Evidence:
    t = Tally()
    n_max = 24 if ctx.quick else 48
    ok = (same_placement(hr_groups_support(4, 2, 2), fr_support(4, 2))
          and (graph_of(make_code("isgc-hr", n=4, c1=2, c2=0, groups=2))
               == graph_of(make_code("isgc-fr", n=4, c=2))).all())
    t.count(1, not ok, lambda: "FR(4, 2) and 2 groups of CR(2, 2) differ")
    for n in range(1, n_max + 1):
        for c in range(1, n + 1):
            cr = graph_of(make_code("isgc-cr", n=n, c=c))
            sup = hr_support(n, c, 0, 1)            # Fig. 7 with one group, c1 = c, c2 = 0
            ok = (conflicts(sup) == cr).all() and same_placement((sup + c) % n, cr_support(n, c))
            if n <= 2 * c - 1:                      # gradcode takes g = 1 there
                ok &= bool((graph_of(make_code("isgc-hr", n=n, c1=c, c2=0, groups=1))
                            == cr).all())
            t.count(1, not ok, lambda: f"HR(n={n}, c1={c}, c2=0, groups=1) is not CR({n}, {c})")
    return t.evidence(f"Fig. 5's pair; every 1 <= c <= n <= {n_max} with one group: the NumPy "
                      "Fig. 7 placement is CR's with the partitions renamed j -> j + c (same "
                      "conflict graph), and gradcode's isgc-hr where it takes g = 1",
                      "FR(4, 2) = 2 groups of CR(2, 2): W1, W2 hold {D1, D2}, W3, W4 {D3, D4}")


@statement(2, "Thm 6", "HR(n, c1, c2), c1 >= 1: c <= n0 <= 2c - 1, the range where (proof) "
                       "every worker conflicts with every other of its group")
def _thm6(ctx) -> Evidence:
    t = Tally()
    n_max = 24 if ctx.quick else 48
    refused = 0
    for n, c1, c2, groups in theorem6_range(n_max):
        A, src = hr_graph(n, c1, c2, groups)
        refused += src == "numpy"
        ok = groups_are_cliques(A, groups)
        t.count(1, not ok, lambda: f"{_hr(n, c1, c2, groups)} (n0 = {n // groups} <= 2c - 1 = "
              f"{2 * (c1 + c2) - 1}): a group is no clique, e.g. "
              + non_clique_pair(A, groups))
    return t.evidence(f"every HR(n, c1, c2), c1 >= 1, c <= n0 <= 2c - 1, n <= {n_max} "
                      f"(gradcode's isgc-hr, or the NumPy Fig. 7 placement for the {refused} "
                      "it refuses); a group is a clique iff n0 <= c + c1 (g >= 2)", "")


def non_clique_pair(A: np.ndarray, groups: int) -> str:
    n0 = A.shape[0] // groups
    for q in range(groups):
        block = A[q * n0:(q + 1) * n0, q * n0:(q + 1) * n0] | np.eye(n0, dtype=bool)
        if not block.all():
            i, j = np.argwhere(~block)[0] + q * n0
            return f"W{i + 1} and W{j + 1} share no partition"
    return "none"


@statement(2, "Thm 6 (proof)", "HR with g >= 2 groups: every group is a clique of the conflict "
                               "graph iff n0 <= c + c1")
def _thm6_proof(ctx) -> Evidence:
    t = Tally()
    n_max = 24 if ctx.quick else 48
    for n, c1, c2, groups in theorem6_range(n_max):
        if groups == 1:
            continue
        A, _ = hr_graph(n, c1, c2, groups)
        n0 = n // groups
        ok = groups_are_cliques(A, groups) == (n0 <= c1 + c2 + c1)
        t.count(1, not ok, lambda: f"{_hr(n, c1, c2, groups)}: cliques "
              f"{groups_are_cliques(A, groups)}, n0 <= c + c1 {n0 <= c1 + c2 + c1}")
    return t.evidence(f"every HR(n, c1, c2) of Thm 6's range with g >= 2 groups, n <= {n_max} "
                      "(with g = 1 the group is CR(n, c), complete for every n <= 2c - 1)",
                      "HR(12, 1, 3, groups=2): n0 = 6 > c + c1 = 5, "
                      + non_clique_pair(hr_graph(12, 1, 3, 2)[0], 2))


@statement(2, "Sec. VI-B", "when n0 = c, HR(n, c, 0) and HR(n, c - 1, 1) are the same placement")
def _hr_c0(ctx) -> Evidence:
    t = Tally()
    n_max = 24 if ctx.quick else 48
    for n in range(2, n_max + 1):
        for groups in (g for g in range(1, n) if n % g == 0):
            c = n // groups
            a = make_code("isgc-hr", n=n, c1=c, c2=0, groups=groups)
            b = make_code("isgc-hr", n=n, c1=c - 1, c2=1, groups=groups)
            ok = (same_placement(support_of(a), support_of(b))
                  and same_placement(hr_support(n, c, 0, groups), hr_support(n, c - 1, 1, groups)))
            t.count(1, not ok, lambda: f"n = {n}, groups = {groups}, c = n0 = {c}: the "
                  "placements differ")
    return t.evidence(f"every n <= {n_max}, groups | n, c = n0 >= 2: gradcode's isgc-hr and the "
                      "NumPy Fig. 7 placement, the partition set of every worker",
                      "HR(8, 4, 0, groups=2) = HR(8, 3, 1, groups=2): W2 holds "
                      + str(sorted((hr_support(8, 3, 1, 2)[1] + 1).tolist())) + " in both")


def hr_chain(n: int, c: int, groups: int) -> list[tuple[int, np.ndarray, str]]:
    """``(c1, E_HR(n, c1, c - c1), source)`` for ``c1 = c, c - 1, ..., n0 - c`` (Theorem 7)."""
    n0 = n // groups
    return [(c1, *hr_graph(n, c1, c - c1, groups)) for c1 in range(c, n0 - c - 1, -1)]


@statement(2, "Thm 7", "E_HR(n,c,0) ⊆ E_HR(n,c-1,1) ⊆ ... ⊆ E_HR(n,n0-c,2c-n0) (c <= n0 <= 2c-1)")
def _thm7(ctx) -> Evidence:
    t = Tally()
    n_max = 20 if ctx.quick else 48
    for n in range(1, n_max + 1):
        for groups in (g for g in range(1, n + 1) if n % g == 0):
            n0 = n // groups
            for c in range((n0 + 2) // 2, n0 + 1):
                chain = hr_chain(n, c, groups)
                for (c1, A, _), (_, B, _) in zip(chain, chain[1:]):
                    miss = subset_failures(A, B)
                    t.count(1, bool(miss), lambda: f"edges of {_hr(n, c1, c - c1, groups)} missing "
                          f"from {_hr(n, c1 - 1, c - c1 + 1, groups)}: {miss[:3]}")
    return t.evidence(f"every n <= {n_max}, groups | n, c <= n0 <= 2c - 1, every link "
                      "(gradcode's isgc-hr / isgc-cr, all accepted along the chain); exact",
                      "n = 12, groups = 2, c = 4: |E| = " + " ⊆ ".join(
                          f"{len(edge_set(A))} (c1 = {c1})" for c1, A, _ in hr_chain(12, 4, 2)))


@statement(2, "Sec. VI-B (after Thm 7)", "when n0 = c: E_FR(n,c) = E_HR(n,c,0) ⊆ ... ⊆ "
                                         "E_HR(n,0,c) = E_CR(n,c)")
def _fr_hr_cr(ctx) -> Evidence:
    t = Tally()
    n_max = 24 if ctx.quick else 48
    for n in range(1, n_max + 1):
        for groups in (g for g in range(1, n + 1) if n % g == 0):
            c = n // groups
            chain = hr_chain(n, c, groups)
            bad = []
            if not (chain[0][1] == graph_of(make_code("isgc-fr", n=n, c=c))).all():
                bad.append("E_HR(n, c, 0) != E_FR(n, c)")
            if not (chain[-1][1] == graph_of(make_code("isgc-cr", n=n, c=c))).all():
                bad.append("E_HR(n, 0, c) != E_CR(n, c)")
            bad += [f"E_HR(n, {c1}, {c - c1}) ⊄ E_HR(n, {c1 - 1}, {c - c1 + 1})"
                    for (c1, A, _), (_, B, _) in zip(chain, chain[1:]) if subset_failures(A, B)]
            t.count(1, bool(bad), lambda: f"n = {n}, c = n0 = {c}: " + "; ".join(bad))
    return t.evidence(f"every n <= {n_max}, groups | n, c = n0: gradcode's isgc-fr, isgc-hr, "
                      "isgc-cr (exact)", "n = 12, c = n0 = 4: |E| = " + " ⊆ ".join(
                          f"{len(edge_set(A))} (c1 = {c1})" for c1, A, _ in hr_chain(12, 4, 3))
                      + f" (FR(12, 4): {len(edge_set(graph_of(make_code('isgc-fr', n=12, c=4))))}"
                      f", CR(12, 4): {len(edge_set(graph_of(make_code('isgc-cr', n=12, c=4))))})")


@statement(2, "Alg. 4", "CONFLICT(i1, i2) of Alg. 4 tells whether two workers of HR conflict "
                        "(either order), over Thm 6's range c <= n0 <= 2c - 1")
def _alg4(ctx) -> Evidence:
    t = Tally()
    n_max = 24 if ctx.quick else 48
    for n, c1, c2, groups in theorem6_range(n_max):
        A, _ = hr_graph(n, c1, c2, groups)
        F = alg4_conflict(n, c1, c2, groups)
        F = (F | F.T) & ~np.eye(n, dtype=bool)
        wrong = np.argwhere(np.triu(F != A))
        t.count(1, wrong.size > 0, lambda: f"{_hr(n, c1, c2, groups)}: CONFLICT(W{wrong[0][0] + 1}"
              f", W{wrong[0][1] + 1}) = {bool(F[tuple(wrong[0])])}, the placement says "
              f"{bool(A[tuple(wrong[0])])}")
    return t.evidence(f"every HR of Thm 6's range, n <= {n_max}, every pair, against the "
                      "conflict graph (gradcode's, or the NumPy Fig. 7 placement's where gradcode "
                      "refuses); Alg. 4 read 0-based (1-based as printed, floor(i / n0) puts "
                      "W_n0 in the next group)", "")


def hr_alg3_chances(n: int, c1: int, c2: int, groups: int) -> tuple[np.ndarray, np.ndarray]:
    """Alg. 3 with Alg. 4 (a random group with received workers, its received workers as
    starts in random order, the first largest I' kept) with ``W'`` uniform among the
    ``w``-sets: ``P[w, i]`` (worker ``i`` in I) and ``Q[w, j]`` (partition ``j`` in ĝ), exact."""
    n0 = n // groups
    S = every_subset(n)[1:]
    w = popcount(S)
    chains = greedy_chains(~alg4_conflict(n, c1, c2, groups), S)
    sizes = np.array([popcount(ch) for ch in chains])
    parts = np.array([sum(1 << int(j) for j in row) for row in hr_support(n, c1, c2, groups)])
    hit = [(S & (((1 << n0) - 1) << (q * n0))) != 0 for q in range(groups)]
    n_hit = np.sum(hit, axis=0)
    P, Q = np.zeros((n + 1, n)), np.zeros((n + 1, n))
    for q in range(groups):
        members = range(q * n0, (q + 1) * n0)
        best = np.max([np.where(_bit(S, i), sizes[i], -1) for i in members], axis=0)
        tops = [_bit(S, i) & (sizes[i] == best) for i in members]
        n_top = np.maximum(np.sum(tops, axis=0), 1)
        for i, top in zip(members, tops):
            weight = top / n_top / np.maximum(n_hit, 1)
            held = np.zeros(S.size, dtype=np.int64)
            for k in range(n):
                held |= np.where(_bit(chains[i], k), parts[k], 0)
            for k in range(n):
                P[:, k] += np.bincount(w, weights=weight * _bit(chains[i], k), minlength=n + 1)
                Q[:, k] += np.bincount(w, weights=weight * _bit(held, k), minlength=n + 1)
    norm = np.array([comb(n, k) for k in range(n + 1)], float)[:, None]
    return P / norm, Q / norm


@statement(2, "Sec. VI-C", "HR: with the starts of Alg. 3 randomly permuted, the gradients on "
                           "every worker have the same chance to be added into ĝ (W' uniform "
                           "among the w-sets)")
def _hr_chances(ctx) -> Evidence:
    t = Tally()
    n_max = 8 if ctx.quick else 12
    by_partition = []
    for p in hr_configs(n_max):
        P, Q = hr_alg3_chances(**p)
        bad = unequal_sizes(P)
        by_partition += [(p, w, Q[w]) for w in unequal_sizes(Q)]
        t.count(p["n"], len(bad), lambda: f"{_hr(**p)}, w = {bad[0]}: P(worker in I) = "
              f"{np.round(P[bad[0]], 3).tolist()} (P(partition in ĝ) = "
              f"{np.round(Q[bad[0]], 3).tolist()})")
    part = (f"; per partition (Assumption 2) unequal in {len(by_partition)} of them, e.g. "
            f"{_hr(**by_partition[0][0])}, w = {by_partition[0][1]}: P(partition in ĝ) = "
            f"{np.round(by_partition[0][2], 3).tolist()}" if by_partition else
            "; per partition equal in every case")
    return t.evidence(f"every accepted HR, n <= {n_max}, every w (cases: (HR, w)); exact over "
                      "every W', group and order of the starts (line 10 read as I' = I' ∪ "
                      "{next})" + part, "")


# ============================================================================ Sec. VII-A
def bound_failures(alpha: np.ndarray, n: int, c: int, side: str) -> np.ndarray:
    """The received sets (bit masks) where Theorem 10 (``side="lower"``) or 11 (``"upper"``)
    fails: ``alpha(G[W']) >= min(ceil(w / c), floor(n / c))`` / ``<= min(w, floor(n / c))``."""
    S = every_subset(n)[1:]
    w = popcount(S).astype(int)
    if side == "lower":
        return S[alpha[S] < np.minimum(-(-w // c), n // c)]
    return S[alpha[S] > np.minimum(w, n // c)]


def _bounds_agree(n: int, c: int) -> list[int]:
    """The sizes ``w`` where gradcode's ``recovery_bounds`` is not the printed formula."""
    return [w for w in range(1, n + 1)
            if tuple(recovery_bounds(n, c, w)) != (min(-(-w // c), n // c), min(w, n // c))]


def _bound_check(ctx, side: str, schemes: str) -> Evidence:
    t = Tally()
    n_max = 10 if ctx.quick else 14
    tight = True
    configs = ([(k, n, c, None) for k, n, c in _fr_cr(n_max)] if schemes == "FR, CR" else [])
    if schemes != "FR, CR" or side == "upper":
        configs += [("HR", n, c1 + c2, (c1, c2, g)) for n, c1, c2, g in theorem6_range(n_max)]
    for kind, n, c, hr in configs:
        if kind == "HR":
            A, _ = hr_graph(n, *hr)
            alpha = alpha_of(("hr", n, *hr), A)
            name = _hr(n, *hr)
        else:
            alpha, name = _alpha_fr_cr(kind, n, c), f"{kind}({n}, {c})"
        bad = bound_failures(alpha, n, c, side)
        t.count(2 ** n - 1, bad.size, lambda: f"{name}, W' = {_W(bad[0])}: alpha = "
              f"{alpha[bad[0]]}, bound " + ("min(ceil(w/c), floor(n/c)) = " if side == "lower"
                                            else "min(w, floor(n/c)) = ")
              + str(min(-(-popcount(bad[0]) // c), n // c) if side == "lower"
                    else min(popcount(bad[0]), n // c)))
        if kind != "HR":
            mism = _bounds_agree(n, c)
            t.count(n, len(mism), lambda: f"gradcode's recovery_bounds({n}, {c}, {mism[0]}) = "
                  f"{recovery_bounds(n, c, mism[0])}, not the printed formula")
            w = popcount(every_subset(n)[1:])
            ext = [alpha[1:][w == k].min() if side == "lower" else alpha[1:][w == k].max()
                   for k in range(1, n + 1)]
            want = [min(-(-k // c), n // c) if side == "lower" else min(k, n // c)
                    for k in range(1, n + 1)]
            tight &= ext == want
    return t.evidence(f"every {schemes}" + (" (and every HR of Thm 6's range)"
                                            if schemes == "FR, CR" and side == "upper" else "")
                      + f", n <= {n_max}, every W' (exact alpha); gradcode's recovery_bounds "
                      "against the printed formula" + ("; FR and CR attain it for every w"
                                                       if tight and schemes == "FR, CR" else ""),
                      _bound_example(7, 3, 4))


def _bound_example(n: int, c: int, w: int) -> str:
    alpha = cr_alpha(n, c)[1:][popcount(every_subset(n)[1:]) == w]
    lo, hi = recovery_bounds(n, c, w)
    return (f"CR({n}, {c}), w = {w}: alpha(G[W']) from {alpha.min()} to {alpha.max()}, "
            f"bounds [{lo}, {hi}]")


@statement(2, "Thm 10", "FR and CR: α(G[W']) >= min(⌈w/c⌉, ⌊n/c⌋) for every W' of w workers")
def _thm10(ctx) -> Evidence:
    return _bound_check(ctx, "lower", "FR, CR")


@statement(2, "Thm 10 (HR)", "HR(n, c1, c2), c = c1 + c2: α(G[W']) >= min(⌈w/c⌉, ⌊n/c⌋), the "
                             "bound of FR and CR")
def _thm10_hr(ctx) -> Evidence:
    return _bound_check(ctx, "lower", "HR of Thm 6's range")


@statement(2, "Thm 11", "FR, CR and HR: α(G[W']) <= min(w, ⌊n/c⌋) for every W' of w workers")
def _thm11(ctx) -> Evidence:
    return _bound_check(ctx, "upper", "FR, CR")
