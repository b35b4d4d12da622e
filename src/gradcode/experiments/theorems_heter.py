"""Paper 3 (heterogeneity-aware gradient coding): its statements checked by computation
(``theorems``).

Notation of paper 3: ``m`` workers with throughputs ``c_i``, ``k`` partitions, ``s`` stragglers,
``n_i`` partitions on worker ``i`` (eq. 5), support (eq. 6-7), encoding matrix ``B``, auxiliary
matrix ``C`` of ``(s+1) x m`` with (P1)-(P2), decoding by ``lam C / sum(lam)`` (Lemma 2), groups
(conditions (*), (**); Alg. 2-3) and the worst-case completion time ``T(B)`` (eq. 3).

The mathematics is recomputed here from the paper's formulas with NumPy (eq. 5's quotas, eq. 6's
support, the proof of Lemma 2's ``B``, Condition 1 by least squares, eq. 3 by enumerating every
straggler set, exact covers by enumerating every worker set) and compared with what gradcode
builds: ``make_code("heter" | "heter-group" | "gc-cr")``, ``from_matrix``, ``analysis.is_robust``
and ``analysis.completion_time``.  Instances: every allocation ``n`` with ``1 <= n_i <= k`` and
``sum n_i = k(s+1)`` up to a size (speeds ``c = 0.7 n``: eq. 5's quotas are then the integers
``n_i``, the paper's assumption), and random larger ones from ``default_rng(ctx.seed)``.
Floats are compared with the relative tolerance ``TOL``; 0/1 matrices and integers exactly.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import combinations, product
from math import comb

import numpy as np

from ..analysis import completion_time, is_robust
from ..codes import from_matrix, make_code
from .theorems import Evidence, statement

#: relative tolerance of every floating-point comparison (span tests, ``C B = 1``, times)
TOL = 1e-9
#: scale of the speeds of the exhaustive instances (``c = SCALE n``: non-integer speeds whose
#: eq. 5 quotas are the integers ``n_i``)
SCALE = 0.7


# --------------------------------------------------------------------------- the mathematics
def allocations(m: int, s: int, k: int):
    """Every ``n`` with ``1 <= n_i <= k`` and ``sum n_i = k(s+1)`` (eq. 5 with integer quotas)."""
    for n in product(range(1, k + 1), repeat=m):
        if sum(n) == k * (s + 1):
            yield n


def random_allocation(rng, m: int, s: int, k: int) -> tuple[int, ...]:
    """A random ``n`` with ``1 <= n_i <= k``, ``sum n_i = k(s+1)`` (needs ``m <= k(s+1)``)."""
    n = np.ones(m, dtype=int)
    for _ in range(k * (s + 1) - m):
        n[rng.choice(np.flatnonzero(n < k))] += 1
    return tuple(int(x) for x in n)


def quotas(speeds, s: int, k: int) -> np.ndarray:
    """Eq. 5: ``n_i = k(s+1) c_i / sum_j c_j`` (real numbers)."""
    c = np.asarray(speeds, dtype=float)
    return k * (s + 1) * c / c.sum()


def eq6_copies(n, k: int) -> list[list[int]]:
    """Eq. 6 as printed, 1-based: worker ``i`` gets ``D_{(n'_i + l) mod k}``, ``l = 1..n_i``,
    ``n'_i = sum_{j<i} n_j`` (``D_0`` read as ``D_k``); the partitions of each worker, with
    repetitions kept."""
    out, start = [], 0
    for ni in n:
        out.append([((start + l) % k) or k for l in range(1, ni + 1)])
        start += ni
    return out


def eq6_support(n, k: int) -> np.ndarray:
    """``supp(B)`` of eq. 7 (0/1, ``m x k``) from eq. 6."""
    S = np.zeros((len(n), k), dtype=int)
    for i, parts in enumerate(eq6_copies(n, k)):
        S[i, [p - 1 for p in parts]] = 1
    return S


def spans_one(M) -> bool:
    """Whether ``1_{1 x k}`` lies in the row span of ``M`` (least squares, relative ``TOL``)."""
    M = np.asarray(M, dtype=float)
    if M.shape[0] == 0:
        return False
    one = np.ones(M.shape[1])
    a = np.linalg.lstsq(M.T, one, rcond=None)[0]
    scale = max(1.0, float(np.abs(a) @ np.abs(M).max(axis=1)))
    return bool(np.abs(a @ M - one).max() <= TOL * scale)


def condition1(B, s: int, sets=None) -> tuple[int, ...] | None:
    """Condition 1: ``1 in span{b_i : i in I}`` for every ``|I| = m - s``.  Returns the first
    straggler set ``[m] - I`` that violates it (``None``: it holds); ``sets``: the straggler sets
    to try (default: all ``C(m, s)``)."""
    B = np.asarray(B, dtype=float)
    m = B.shape[0]
    for S in (combinations(range(m), s) if sets is None else sets):
        keep = np.setdiff1d(np.arange(m), S)
        if not spans_one(B[keep]):
            return tuple(int(x) for x in S)
    return None


def straggler_sets(rng, m: int, s: int, limit: int) -> list[tuple[int, ...]]:
    """All ``C(m, s)`` straggler sets when at most ``limit``, else ``limit`` random ones."""
    if comb(m, s) <= limit:
        return list(combinations(range(m), s))
    return [tuple(sorted(rng.choice(m, s, replace=False).tolist())) for _ in range(limit)]


def worst_time(B, speeds, s: int) -> float:
    """Eq. 3 by definition: ``t_i = ||b_i||_0 / c_i``; for every ``S`` with ``|S| <= s``,
    ``T(B, S)`` is the least ``t_j`` such that ``1`` is in the span of the non-stragglers with
    ``t_i <= t_j`` (``inf`` if none); ``T(B)`` the largest over ``S``."""
    B = np.asarray(B, dtype=float)
    m = B.shape[0]
    t = (B != 0).sum(axis=1) / np.asarray(speeds, dtype=float)
    levels = np.unique(t)
    memo: dict[tuple[int, ...], bool] = {}

    def spans(rows):
        if rows not in memo:
            memo[rows] = spans_one(B[list(rows)])
        return memo[rows]

    worst = 0.0
    for size in range(min(s, m) + 1):
        for S in combinations(range(m), size):
            alive = np.ones(m, dtype=bool)
            alive[list(S)] = False
            T = next((float(lv) for lv in levels
                      if spans(tuple(np.flatnonzero(alive & (t <= lv)).tolist()))), np.inf)
            worst = max(worst, T)
    return worst


def has_p1(C) -> bool:
    """(P1): any ``s+1`` columns of ``C`` are linearly independent (condition number below
    ``1 / TOL``)."""
    C = np.asarray(C, dtype=float)
    r, m = C.shape
    blocks = np.array([C[:, list(J)] for J in combinations(range(m), r)])
    return bool(np.all(np.linalg.cond(blocks) < 1 / TOL))


def has_p2(C) -> bool:
    """(P2): for any ``s`` columns ``C'`` and nonzero ``lam`` with ``lam C' = 0``,
    ``sum(lam) != 0`` (``C'`` of rank ``s`` by (P1): ``lam`` is its unit left null vector, and
    ``|sum(lam)| > TOL``)."""
    C = np.asarray(C, dtype=float)
    r, m = C.shape
    if r == 1:
        return True                              # s = 0: every nonzero scalar lam qualifies
    blocks = np.array([C[:, list(J)] for J in combinations(range(m), r - 1)])
    lam = np.linalg.svd(blocks, full_matrices=True)[0][:, :, -1]
    return bool(np.all(np.abs(lam.sum(axis=1)) > TOL))


def lemma2_B(C, support) -> np.ndarray:
    """The proof of Lemma 2: column ``i`` of ``B`` is ``C_i^{-1} 1`` on the ``s+1`` rows of
    column ``i`` of the support (``C_i``: the columns of ``C`` of those workers)."""
    C = np.asarray(C, dtype=float)
    S = np.asarray(support) != 0
    B = np.zeros(S.shape)
    for i in range(S.shape[1]):
        rows = np.flatnonzero(S[:, i])
        B[rows, i] = np.linalg.solve(C[:, rows], np.ones(C.shape[0]))
    return B


def lam_weights(C, stragglers) -> np.ndarray:
    """Lemma 2's decoder: ``w = lam C / sum(lam)`` with ``lam C_S = 0`` (the min-norm ``lam``
    with ``sum(lam) = 1``; unique when ``|S| = s``), zero on ``S``."""
    C = np.asarray(C, dtype=float)
    S = list(stragglers)
    M = np.vstack([C[:, S].T, np.ones((1, C.shape[0]))])
    rhs = np.zeros(M.shape[0])
    rhs[-1] = 1.0
    lam = np.linalg.lstsq(M, rhs, rcond=None)[0]
    w = lam @ C
    w[S] = 0.0
    return w


def decodes(w, B) -> bool:
    """``w B = 1`` within ``TOL`` relative to ``|w| max|B|``."""
    B = np.asarray(B, dtype=float)
    scale = max(1.0, float(np.abs(w) @ np.abs(B).max(axis=1)))
    return bool(np.abs(w @ B - 1.0).max() <= TOL * scale)


def lambda_decoding_fails(C, B, s: int, sets=None) -> str:
    """Lemma 2's claim for ``(C, B)``: ``C B = 1`` and, for every straggler set of size ``s``,
    ``lam C / sum(lam)`` (zero on it) decodes ``B``.  ``""`` when it holds, else what fails."""
    C, B = np.asarray(C, dtype=float), np.asarray(B, dtype=float)
    scale = max(1.0, float(np.abs(C).max() * np.abs(B).sum(axis=0).max()))
    if np.abs(C @ B - 1).max() > TOL * scale:
        return f"C B != 1 (off by {np.abs(C @ B - 1).max():.2g})"
    for S in (combinations(range(B.shape[0]), s) if sets is None else sets):
        if not decodes(lam_weights(C, S), B):
            return f"lam C / sum(lam) fails without workers {list(S)}"
    return ""


def exact_covers(support) -> set[tuple[int, ...]]:
    """Condition (*) by enumeration: every set of workers (holding something) whose partition
    sets are pairwise disjoint and cover all ``k`` partitions, as sorted 0-based tuples."""
    S = np.asarray(support) != 0
    m, k = S.shape
    rows = [i for i in range(m) if S[i].any()]
    size = S.sum(axis=1)
    out = set()
    for r in range(1, len(rows) + 1):
        for G in combinations(rows, r):
            if size[list(G)].sum() == k and S[list(G)].any(axis=0).all():
                out.add(G)
    return out


def pairwise_disjoint(groups) -> bool:
    """Condition (**) (read as in Example 2: no two groups share a worker)."""
    seen: set[int] = set()
    for g in groups:
        if seen & set(g):
            return False
        seen |= set(g)
    return True


# --------------------------------------------------------------------------- instances
@lru_cache(maxsize=None)
def _code(name: str, speeds: tuple[float, ...], s: int, k: int, seed: int):
    return make_code(name, speeds=list(speeds), s=s, k=k, seed=seed)


#: the instances of Examples 1 and 2 (Example 2 gives no speeds: c = n, its row sizes)
EX1 = ((1.0, 2.0, 3.0, 4.0, 4.0), 1, 7)
EX2 = ((2.0, 1.0, 1.0, 3.0, 3.0, 3.0, 3.0), 3, 4)


def integer_instances(ctx, small=None, n_random=None, m_random=None):
    """``(speeds, s, k)`` with integer eq. 5 quotas: Examples 1-2, every allocation
    up to ``small = (m, k)`` (speeds ``SCALE n``) and ``n_random`` random ones with ``m`` in
    ``m_random``."""
    M, K = small or ((4, 3) if ctx.quick else (5, 4))
    out = [EX1, EX2] + [(tuple(SCALE * x for x in n), s, k)
           for m in range(1, M + 1) for s in range(m) for k in range(1, K + 1)
           for n in allocations(m, s, k)]
    rng = np.random.default_rng(ctx.seed)
    lo, hi = m_random or ((6, 9) if ctx.quick else (6, 14))
    for _ in range(n_random if n_random is not None else (6 if ctx.quick else 80)):
        m = int(rng.integers(lo, hi + 1))
        s = int(rng.integers(1, 4))
        k = int(rng.integers(-(-m // (s + 1)), 2 * m + 1))
        scale = float(rng.uniform(0.2, 5.0))
        out.append((tuple(scale * x for x in random_allocation(rng, m, s, k)), s, k))
    return out


def random_speed_instances(ctx, count=None):
    """``(speeds, s, k)`` with random speeds (eq. 5's quotas not integers: gradcode rounds)."""
    rng = np.random.default_rng(ctx.seed + 1)
    out = []
    for _ in range(count if count is not None else (6 if ctx.quick else 80)):
        m = int(rng.integers(3, 10 if ctx.quick else 14))
        s = int(rng.integers(0, min(3, m - 1) + 1))
        k = int(rng.integers(1, 2 * m + 1))
        out.append((tuple(float(x) for x in rng.uniform(0.5, 4.0, m)), s, k))
    return out


def _name(speeds, s, k) -> str:
    return f"speeds {[round(float(x), 3) for x in speeds]}, s = {s}, k = {k}"


def _size(ctx) -> str:
    M, K = (4, 3) if ctx.quick else (5, 4)
    return f"Examples 1-2, every n (1 <= n_i <= k, sum k(s+1)) for m <= {M}, k <= {K}"


# --------------------------------------------------------------------------- eq. 5, 6, 7
def allocation_fails(speeds, s: int, k: int, allocation, B) -> str:
    """Eq. 5 (integer quotas): ``n_i = k(s+1) c_i / sum c_j`` and ``||b_i||_0 = n_i``."""
    q = quotas(speeds, s, k)
    n = np.rint(q).astype(int)
    if np.abs(q - n).max() > TOL * k * (s + 1):
        return f"quotas {q.tolist()} are not integers (outside eq. 5's assumption)"
    rows = (np.asarray(B) != 0).sum(axis=1)
    if not np.array_equal(np.asarray(allocation), n) or not np.array_equal(rows, n):
        return (f"eq. 5 gives n = {n.tolist()}, ours {list(allocation)}, "
                f"||b_i||_0 = {rows.tolist()}")
    return ""


@statement(3, "Eq. 5", "each worker gets n_i = k(s+1) c_i / sum_j c_j partitions (proportional to "
                       "its throughput c_i; quotas assumed integers <= k)")
def _eq5(ctx) -> Evidence:
    cases = failures = 0
    example = ""
    for speeds, s, k in integer_instances(ctx):
        code = _code("heter", speeds, s, k, ctx.seed)
        bad = allocation_fails(speeds, s, k, code.allocation, code.B)
        cases += 1
        failures += bool(bad)
        example = example or (f"{_name(speeds, s, k)}: {bad}" if bad else "")
    return Evidence(cases, failures, f"heter's allocation and row supports vs eq. 5: {_size(ctx)}"
                    f" and random m <= {9 if ctx.quick else 14}, speeds c = scale * n",
                    example or "speeds [1, 2, 3, 4, 4], s = 1, k = 7: n = [1, 2, 3, 4, 4]")


def eq6_fails(n, k: int) -> str:
    """Sec. IV-A on eq. 6: each ``D_j`` gets exactly ``s+1`` copies on ``s+1`` distinct workers
    (``s + 1 = sum(n) / k``; needs ``n_i <= k``)."""
    copies = eq6_copies(n, k)
    s1 = sum(n) // k
    for i, parts in enumerate(copies):
        if len(set(parts)) != len(parts):
            return f"n = {list(n)}, k = {k}: worker {i + 1} gets a partition twice: {parts}"
    count = np.bincount([p for parts in copies for p in parts], minlength=k + 1)[1:]
    if not np.all(count == s1):
        return f"n = {list(n)}, k = {k}: copies per partition {count.tolist()} != s+1 = {s1}"
    return ""


@statement(3, "Sec. IV-A (eq. 6)", "the cyclic assignment of eq. 6 puts each partition D_j on "
                                   "exactly s+1 distinct workers")
def _eq6_copies(ctx) -> Evidence:
    cases = failures = 0
    example = typical = ""
    M, K = (5, 4) if ctx.quick else (7, 5)
    for m in range(1, M + 1):
        for k in range(1, K + 1):
            for n in product(range(k + 1), repeat=m):
                if sum(n) % k or sum(n) == 0 or sum(n) // k > m:
                    continue
                bad = eq6_fails(n, k)
                cases += 1
                failures += bool(bad)
                example = example or bad
                typical = f"n = {n}, k = {k}: {sum(n) // k} copies of each of D_1..D_{k}"
    return Evidence(cases, failures, f"every n with 0 <= n_i <= k, sum n_i = k(s+1) > 0, m <= {M},"
                    f" k <= {K} (eq. 6 computed as printed, 1-based)",
                    example or typical)


@statement(3, "Eq. 6-7", "heter's support is the cyclic one of eq. 6: worker i holds D_{n'_i+1}, "
                         "..., D_{n'_i+n_i} (mod k), n'_i = sum_{j<i} n_j")
def _eq6_support(ctx) -> Evidence:
    cases = failures = 0
    example = ""
    for speeds, s, k in integer_instances(ctx) + random_speed_instances(ctx):
        code = _code("heter", speeds, s, k, ctx.seed)
        want = eq6_support(code.allocation, k)
        got = (code.B != 0).astype(int)
        cases += 1
        if not np.array_equal(want, got):
            failures += 1
            example = example or (f"{_name(speeds, s, k)}: eq. 6 gives {want.tolist()}, "
                                  f"ours {got.tolist()}")
    return Evidence(cases, failures, f"supp(B) of heter vs eq. 6 from its n_i: {_size(ctx)}, "
                    "random integer-quota and random-speed instances", example or
                    "speeds [1, 2, 3, 4, 4], s = 1, k = 7: the matrix of Example 1")


#: Example 1 as printed: supp(B_{5x7}) for c = [1, 2, 3, 4, 4], s = 1
EXAMPLE1 = np.array([[1, 0, 0, 0, 0, 0, 0],
                     [0, 1, 1, 0, 0, 0, 0],
                     [0, 0, 0, 1, 1, 1, 0],
                     [1, 1, 1, 0, 0, 0, 1],
                     [0, 0, 0, 1, 1, 1, 1]])


def example1_fails(support, speeds=(1, 2, 3, 4, 4), s: int = 1, k: int = 7, seeds=range(5)):
    """Example 1's facts for the printed ``support``, one list entry per failed fact: eq. 5-6
    reproduce it; gradcode's heter has it as support, is robust to ``s`` stragglers and has
    ``T(B) = (s+1) k / sum c`` (= 1) for every seed."""
    support = np.asarray(support)
    bad, checked = [], 0
    n = np.rint(quotas(speeds, s, k)).astype(int)
    checked += 1
    if not np.array_equal(eq6_support(n, k), support):
        bad.append(f"eq. 5-6 give {eq6_support(n, k).tolist()}")
    for seed in seeds:
        code = make_code("heter", speeds=list(speeds), s=s, k=k, seed=seed)
        T = completion_time(code, list(speeds))
        checked += 3
        if not np.array_equal((code.B != 0).astype(int), support):
            bad.append(f"seed {seed}: heter's support {(code.B != 0).astype(int).tolist()}")
        if not is_robust(code) or condition1(code.B, s) is not None:
            bad.append(f"seed {seed}: not robust to {s} straggler(s)")
        if abs(T - (s + 1) * k / sum(speeds)) > TOL:
            bad.append(f"seed {seed}: T(B) = {T}")
    return checked, bad


@statement(3, "Example 1", "c = [1, 2, 3, 4, 4], s = 1, k = 7: supp(B_{5x7}) is the printed "
                           "matrix (n = c, cyclic), and every worker finishes at the same time")
def _example1(ctx) -> Evidence:
    checked, bad = example1_fails(EXAMPLE1)
    return Evidence(checked, len(bad), "eq. 5-6 and heter (seeds 0-4) vs the printed support; "
                    "robust (exhaustive) and T(B) = 14 / 14 = 1 (completion_time)",
                    "; ".join(bad) or "n = [1, 2, 3, 4, 4], support as printed, T(B) = 1")


# --------------------------------------------------------------------------- Lemma 1
def lemma1_fails(B, s: int) -> str:
    """Lemma 1 for one ``(B, s)``: robust to any ``s`` stragglers (every ``m - s`` workers
    decode exactly with a linear decoder: gradcode's least-squares one, ``method="optimal"``)
    iff Condition 1 (here by least squares) iff ``is_robust``; ``""`` when the three agree."""
    B = np.asarray(B, dtype=float)
    m = B.shape[0]
    code = from_matrix(B)
    c1 = condition1(B, s) is None
    dec = all(code.decode(np.setdiff1d(np.arange(m), S), method="optimal").exact
              for S in combinations(range(m), s))
    gc = is_robust(B, s=s)
    if c1 == dec == gc:
        return ""
    return (f"B = {B.astype(int).tolist()}, s = {s}: Condition 1 {c1}, every m - s decode "
            f"{dec}, is_robust {gc}")


@statement(3, "Lemma 1", "B is robust to any s stragglers iff 1_{1 x k} is in the span of the "
                         "rows of every m - s workers (Condition 1)")
def _lemma1(ctx) -> Evidence:
    rng = np.random.default_rng(ctx.seed)
    cases = failures = robust = 0
    example = ""
    mats = [np.array(x).reshape(3, 2) for x in product((0, 1), repeat=6)]
    mats += [rng.integers(-1, 2, size=(int(rng.integers(3, 6)), int(rng.integers(1, 4))))
             for _ in range(15 if ctx.quick else 400)]
    typical = ""
    for B in mats:
        for s in range(B.shape[0]):
            bad = lemma1_fails(B, s)
            cases += 1
            failures += bool(bad)
            ok = condition1(B, s) is None
            robust += ok
            example = example or bad
            if ok and s >= 1 and B.shape[0] >= 4 and not typical:
                typical = f"B = {B.tolist()}, s = {s}: robust all three ways"
    return Evidence(cases, failures, "every 0/1 3x2 B and random B in {-1,0,1}^{m x k} "
                    f"(m 3-5, k 1-3), every s < m ({robust} robust): Condition 1 vs exact linear "
                    "decoding from every m - s workers (from_matrix, least squares) vs is_robust",
                    example or typical)


# --------------------------------------------------------------------------- Lemma 2, 3, Alg. 1
@statement(3, "Lemma 2", "for C in R^{(s+1) x m} with (P1)-(P2), the B with support (7) and "
                         "C B = 1 (C_i^{-1} 1 per column) satisfies Condition 1: lam C / sum(lam) "
                         "with lam C_S = 0 decodes without any s workers S")
def _lemma2(ctx) -> Evidence:
    rng = np.random.default_rng(ctx.seed)
    cases = failures = skipped = 0
    example = ""
    for speeds, s, k in integer_instances(ctx):
        n = np.rint(quotas(speeds, s, k)).astype(int)
        support = eq6_support(n, k)
        C = rng.uniform(0.0, 1.0, (s + 1, len(n)))           # the paper's draw (Lemma 3)
        if not (has_p1(C) and has_p2(C)):
            skipped += 1
            continue
        B = lemma2_B(C, support)
        cases += 1
        bad = lambda_decoding_fails(C, B, s, straggler_sets(rng, len(n), s, 400))
        if not bad and not np.array_equal(B != 0, support != 0):
            bad = "supp(B) differs from (7)"
        if bad:
            failures += 1
            example = example or f"{_name(speeds, s, k)}: {bad}"
    return Evidence(cases, failures, f"C uniform on (0,1) with (P1)-(P2) ({skipped} draws "
                    f"without them skipped), B built as in the proof, {_size(ctx)} and random "
                    "larger; every straggler set (at most 400 sampled)",
                    example or "speeds [1, 2, 3, 4, 4], s = 1, k = 7")


@statement(3, "Lemma 3", "C in R^{(s+1) x m} with entries i.i.d. uniform on (0,1) has (P1) and "
                         "(P2) with probability 1")
def _lemma3(ctx) -> Evidence:
    rng = np.random.default_rng(ctx.seed)
    cases = failures = 0
    example = ""
    draws = 3 if ctx.quick else 30
    M = 9 if ctx.quick else 12
    for m in range(1, M + 1):
        for s in range(min(m, 5)):
            for _ in range(draws):
                C = rng.uniform(0.0, 1.0, (s + 1, m))
                cases += 1
                p1, p2 = has_p1(C), has_p2(C)
                if not (p1 and p2):
                    failures += 1
                    example = example or f"m = {m}, s = {s}: (P1) {p1}, (P2) {p2}"
    return Evidence(cases, failures, f"{draws} draws per m <= {M}, s <= 4: every s+1 columns "
                    "(condition number < 1e9) and every s columns (|sum lam| > 1e-9 for the "
                    "unit lam)", example or f"C uniform of shape {C.shape}: (P1), (P2) hold")


@statement(3, "Alg. 1", "Alg. 1 (gradcode's heter, and gc-cr built the same way): its C has "
                        "(P1)-(P2), C B = 1, and lam C / sum(lam) is the decoder for any s "
                        "stragglers")
def _alg1(ctx) -> Evidence:
    rng = np.random.default_rng(ctx.seed)
    cases = failures = 0
    example = ""
    codes = [(_name(*inst), _code("heter", *inst, ctx.seed), inst[1])
             for inst in integer_instances(ctx) + random_speed_instances(ctx)]
    codes += [(f"gc-cr n = {n}, s = {s}", make_code("gc-cr", n=n, s=s), s)
              for n in range(2, 6 if ctx.quick else 13) for s in range(n)]
    typical = ""
    for name, code, s in codes:
        B, C = code.B, code.C
        cases += 1
        bad = "" if has_p1(C) and has_p2(C) else "C lacks (P1)-(P2)"
        sets = straggler_sets(rng, B.shape[0], s, 50)
        bad = bad or lambda_decoding_fails(C, B, s, sets)
        for S in sets if not bad else ():
            keep = np.setdiff1d(np.arange(B.shape[0]), S)
            d = code.decode(keep)
            w = lam_weights(C, S)
            if not d.exact or np.abs(d.weights - w).max() > 1e-6 * max(1, np.abs(w).max()):
                bad = f"without {list(S)}: decode gives {d.weights.round(4).tolist()}, " \
                      f"lam C / sum(lam) = {w.round(4).tolist()}"
                break
        failures += bool(bad)
        example = example or (f"{name}: {bad}" if bad else "")
        if not bad and code.n_workers >= 8 and s >= 2:
            typical = (f"{name}: max |C B - 1| = {np.abs(C @ B - 1).max():.1g}, decoder = "
                       f"lam C / sum(lam) on {len(sets)} straggler sets")
    return Evidence(cases, failures, f"heter on {_size(ctx)}, random larger and random speeds; "
                    f"gc-cr n <= {5 if ctx.quick else 12}; up to 50 straggler sets of size s "
                    "each (decoder weights vs lam C / sum(lam) within 1e-6)", example or typical)


def robust_fails(code, s: int, sets) -> str:
    """Robust to any ``s`` stragglers three ways: ``is_robust``, Condition 1 by least squares on
    ``sets``, and gradcode's decoder exact on each of them."""
    B = code.B
    m = B.shape[0]
    if not is_robust(code, s=s):
        return "is_robust says no"
    S = condition1(B, s, sets)
    if S is not None:
        return f"1 not in the span without workers {list(S)}"
    for S in sets:
        if not code.decode(np.setdiff1d(np.arange(m), S)).exact:
            return f"decoding without {list(S)} is not exact"
    return ""


@statement(3, "Thm 4", "Alg. 1's B is robust to any s stragglers (with probability 1)")
def _thm4(ctx) -> Evidence:
    rng = np.random.default_rng(ctx.seed)
    cases = failures = 0
    example = typical = ""
    typical_sets: list = []
    for speeds, s, k in integer_instances(ctx) + random_speed_instances(ctx):
        code = _code("heter", speeds, s, k, ctx.seed)
        sets = straggler_sets(rng, len(speeds), s, 400)
        bad = robust_fails(code, s, sets)
        cases += 1
        failures += bool(bad)
        example = example or (f"{_name(speeds, s, k)}: {bad}" if bad else "")
        if not bad and len(sets) >= len(typical_sets):
            typical_sets = sets
            typical = f"{_name(speeds, s, k)}: robust on all {len(sets)} straggler sets"
    return Evidence(cases, failures, f"heter on {_size(ctx)}, random larger and random speeds: "
                    "is_robust, Condition 1 and exact decoding on every straggler set of size s "
                    "(at most 400 sampled); gradcode draws C normal, not uniform on (0,1) (the "
                    "paper's draw is checked under Lemma 2)", example or typical)


# --------------------------------------------------------------------------- eq. 3, Thm 5
def eq3_fails(B, speeds, s: int) -> tuple[str, float]:
    """``completion_time`` vs eq. 3 computed here (``worst_time``): ``("", T)`` when equal."""
    ours, want = completion_time(B, speeds, s), worst_time(B, speeds, s)
    if ours == want or abs(ours - want) <= TOL * abs(want):
        return "", want
    return (f"B = {np.asarray(B).round(3).tolist()}, s = {s}, c = {np.round(speeds, 3).tolist()}:"
            f" completion_time {ours}, eq. 3 {want}"), want


@statement(3, "Eq. 3", "T(B) = max over |S| <= s of t_{j*}, j* the first worker (by t_i = "
                       "||b_i||_0 / c_i) whose non-straggler rows up to it span 1 "
                       "(gradcode's completion_time)")
def _eq3(ctx) -> Evidence:
    rng = np.random.default_rng(ctx.seed)
    cases = failures = finite = 0
    example = ""
    mats = []
    for _ in range(60 if ctx.quick else 600):
        m, k = int(rng.integers(2, 7)), int(rng.integers(1, 5))
        B = rng.integers(-1, 2, size=(m, k)) * rng.integers(1, 3, size=(m, k))
        mats.append((B, int(rng.integers(0, m)), rng.uniform(0.5, 4.0, m)))
    for speeds, s, k in random_speed_instances(ctx):
        mats.append((_code("heter", speeds, s, k, ctx.seed).B, s, np.array(speeds)))
        mats.append((_code("heter", speeds, s, k, ctx.seed).B, s,
                     rng.uniform(0.5, 4.0, len(speeds))))
    typical = ""
    for B, s, c in mats:
        bad, T = eq3_fails(B, c, s)
        cases += 1
        finite += np.isfinite(T)
        failures += bool(bad)
        example = example or bad
        if not bad and np.isfinite(T) and len(set(np.round(c, 9))) == len(c) and s >= 1:
            typical = typical or (f"B = {np.asarray(B).round(2).tolist()}, s = {s}, c = "
                                  f"{np.round(c, 2).tolist()}: T(B) = {T:.4g}")
    return Evidence(cases, failures, f"random integer B (m 2-6, k 1-4) and heter B with random "
                    f"speeds ({finite} of them robust): eq. 3 over every |S| <= s",
                    example or typical)


def thm5_fails(code, speeds, s: int, k: int) -> str:
    """``T(B) = (s+1) k / sum c`` by ``completion_time`` and by eq. 3 here."""
    bound = (s + 1) * k / sum(speeds)
    T1, T2 = completion_time(code, list(speeds), s), worst_time(code.B, speeds, s)
    if max(abs(T1 - bound), abs(T2 - bound)) > TOL * bound:
        return f"T(B) = {T1} (completion_time), {T2} (eq. 3), (s+1)k/sum c = {bound}"
    return ""


@statement(3, "Thm 5", "Alg. 1's B is optimal for problem (4): T(B) = (s+1) k / sum_i c_i, "
                       "every worker finishing together")
def _thm5(ctx) -> Evidence:
    cases = failures = 0
    example = ""
    for speeds, s, k in integer_instances(ctx):
        bad = thm5_fails(_code("heter", speeds, s, k, ctx.seed), speeds, s, k)
        cases += 1
        failures += bool(bad)
        example = example or (f"{_name(speeds, s, k)}: {bad}" if bad else "")
    return Evidence(cases, failures, f"heter on {_size(ctx)} and random larger (integer quotas "
                    "as the theorem assumes); T(B) by completion_time and by eq. 3 here",
                    example or "speeds [1, 2, 3, 4, 4], s = 1, k = 7: T(B) = 1")


def lower_bound_fails(B, speeds, s: int) -> str:
    """The proof of Thm 5: ``T(B) >= (s+1) k / sum c`` whenever ``B`` satisfies Condition 1
    (``T(B)`` finite); ``""`` also when ``B`` is not robust."""
    B = np.asarray(B, dtype=float)
    T = worst_time(B, speeds, s)
    bound = (s + 1) * B.shape[1] / float(np.sum(speeds))
    if np.isfinite(T) and T < bound * (1 - TOL):
        return f"B = {B.round(3).tolist()}, c = {np.round(speeds, 3).tolist()}, s = {s}: " \
               f"T(B) = {T} < (s+1)k/sum c = {bound}"
    return ""


@statement(3, "Thm 5 (proof)", "every B satisfying Condition 1 has T(B) >= (s+1) k / sum_i c_i "
                               "(the lower bound Alg. 1 attains)")
def _thm5_bound(ctx) -> Evidence:
    rng = np.random.default_rng(ctx.seed)
    cases = failures = 0
    example = ""
    shapes = [(3, 2)] if ctx.quick else [(3, 2), (3, 3), (4, 2)]
    mats, typical = [], ""
    for m, k in shapes:
        for bits in product((0, 1), repeat=m * k):
            S = np.array(bits).reshape(m, k)
            if S.any(axis=0).all():
                mats += [S, S * rng.standard_normal((m, k))]   # 0/1 and generic coefficients
    for n in range(3, 7 if ctx.quick else 10):
        for s in range(n):
            mats += [make_code("gc-cr", n=n, s=s).B, make_code("gc-fr", n=n, s=s).B] \
                if n % (s + 1) == 0 else [make_code("gc-cr", n=n, s=s).B]
    for B in mats:
        m = B.shape[0]
        for s in range(m):
            if condition1(B, s) is not None:
                continue
            for c in (rng.uniform(0.5, 3.0, m), rng.integers(1, 4, m).astype(float)):
                bad = lower_bound_fails(B, c, s)
                cases += 1
                failures += bool(bad)
                example = example or bad
                if not bad and B.shape == (3, 2) and s == 1 and not typical:
                    typical = (f"B = {np.round(B, 2).tolist()}, s = 1, c = "
                               f"{np.round(c, 2).tolist()}: T(B) = {worst_time(B, c, s):.4g} "
                               f">= {2 * 2 / c.sum():.4g}")
    return Evidence(cases, failures, f"every support of shape {shapes} with 0/1 and with random "
                    "coefficients, and gc-cr/gc-fr, for every s they tolerate and two speed "
                    "vectors each; T(B) by eq. 3 here", example or typical)


def needs_all_fails(B, s: int) -> str:
    """Sec. V, reason (2): no set of fewer than ``m - s`` workers spans ``1``."""
    B = np.asarray(B, dtype=float)
    m = B.shape[0]
    for r in range(1, m - s):
        for I in combinations(range(m), r):
            if spans_one(B[list(I)]):
                return f"workers {[i + 1 for i in I]} (1-based) span 1: {r} < m - s = {m - s}"
    return ""


@statement(3, "Sec. V (2)", "recovering g from Alg. 1's B needs m - s workers: no fewer than "
                            "m - s workers have 1 in their span")
def _needs_all(ctx) -> Evidence:
    cases = failures = nondegenerate = 0
    example = first_nd = ""
    for speeds, s, k in integer_instances(ctx, n_random=0):
        code = _code("heter", speeds, s, k, ctx.seed)
        bad = needs_all_fails(code.B, s)
        cases += 1
        failures += bool(bad)
        example = example or (f"{_name(speeds, s, k)}, n = {code.allocation.tolist()}: {bad}"
                              if bad else "")
        if bad and code.allocation.min() >= 2 and k >= len(speeds) - s:
            nondegenerate += 1
            first_nd = first_nd or f"{_name(speeds, s, k)}, n = {code.allocation.tolist()}: {bad}"
    tail = f"; with every n_i >= 2 and k >= m - s: {first_nd}" if first_nd else ""
    return Evidence(cases, failures, f"heter on {_size(ctx)}, every worker set of size < m - s "
                    f"({nondegenerate} counterexamples have every n_i >= 2 and k >= m - s)",
                    example + tail)


# --------------------------------------------------------------------------- Sec. V: groups
def group_instances(ctx):
    return integer_instances(ctx, n_random=4 if ctx.quick else 20, m_random=(6, 10)) \
        + random_speed_instances(ctx)


def groups_fail(support, candidates, retained) -> str:
    """Alg. 2: ``candidates`` are exactly the sets of workers meeting (*) (FindAllGroups);
    ``retained`` are candidates, pairwise disjoint (**), and keep every candidate that meets no
    other (PruneGroups only drops a group intersecting the most others)."""
    want = exact_covers(support)
    got = {tuple(sorted(g)) for g in candidates}
    if got != want:
        return f"groups found {sorted(got)}, condition (*) holds for {sorted(want)}"
    kept = {tuple(sorted(g)) for g in retained}
    if not kept <= want or not pairwise_disjoint(kept):
        return f"retained {sorted(kept)} are not pairwise-disjoint groups"
    alone = {g for g in want if all(not set(g) & set(h) for h in want if h != g)}
    if not alone <= kept:
        return f"pruned {sorted(alone - kept)}, which meet no other group"
    return ""


@statement(3, "Alg. 2", "FindAllGroups finds every set of workers whose partitions are disjoint "
                        "and cover D (*); PruneGroups leaves pairwise-disjoint groups (**)")
def _alg2(ctx) -> Evidence:
    cases = failures = with_groups = 0
    example = ""
    for speeds, s, k in group_instances(ctx):
        code = _code("heter-group", speeds, s, k, ctx.seed)
        bad = groups_fail(code.B != 0, code.candidate_groups, code.groups)
        cases += 1
        with_groups += len(code.candidate_groups) > 0
        failures += bool(bad)
        example = example or (f"{_name(speeds, s, k)}: {bad}" if bad else "")
    return Evidence(cases, failures, f"heter-group on {_size(ctx)}, random integer-quota (m <= 10)"
                    f" and random-speed instances ({with_groups} with groups): found groups vs "
                    "every worker set", example or
                    "Example 2: G1 = {W1,W2,W3}, G2 = {W3,W4}, G3 = {W2,W5} found, G1 pruned")


def eq8_fails(code, s: int) -> str:
    """Eq. 8 for each retained group ``G``: ``a = 1_G`` has ``a B = 1`` exactly and
    ``||a||_0 <= m - s``; gradcode's decoder from exactly ``G`` returns ``a``."""
    m = code.B.shape[0]
    for g in code.groups:
        a = np.zeros(m)
        a[list(g)] = 1.0
        if not np.array_equal(a @ code.B, np.ones(code.B.shape[1])) or len(g) > m - s:
            return f"group {list(g)}: a B = {(a @ code.B).tolist()}, |G| = {len(g)}"
        d = code.decode(list(g))
        if not d.exact or np.abs(d.weights - a).max() > TOL:
            return f"group {list(g)}: decoder weights {d.weights.tolist()}"
    return ""


@statement(3, "Eq. 8", "for each group G_i, a_i = 1_{G_i} decodes: a_i B = 1 and "
                       "||a_i||_0 <= m - s")
def _eq8(ctx) -> Evidence:
    cases = failures = 0
    example = ""
    for speeds, s, k in group_instances(ctx):
        code = _code("heter-group", speeds, s, k, ctx.seed)
        if not code.groups:
            continue
        bad = eq8_fails(code, s)
        cases += len(code.groups)
        failures += bool(bad)
        example = example or (f"{_name(speeds, s, k)}: {bad}" if bad else "")
    return Evidence(cases, failures, "every retained group of heter-group on the instances of "
                    "Alg. 2: a B = 1 exactly, |G| <= m - s, decoding from G alone",
                    example or "Example 2: G2 = {W3, W4}, G3 = {W2, W5}")


@statement(3, "Thm 6", "Alg. 3's B (group-based) is robust to any s stragglers (with "
                       "probability 1)")
def _thm6(ctx) -> Evidence:
    rng = np.random.default_rng(ctx.seed)
    cases = failures = 0
    example = typical = ""
    for speeds, s, k in group_instances(ctx):
        code = _code("heter-group", speeds, s, k, ctx.seed)
        m = len(speeds)
        sets = [S for r in range(s + 1) for S in straggler_sets(rng, m, r, 200)]
        bad = robust_fails(code, s, sets)
        cases += 1
        failures += bool(bad)
        example = example or (f"{_name(speeds, s, k)}, groups {list(code.groups)}: {bad}"
                              if bad else "")
        if not bad and 1 <= len(code.groups) <= s and not typical:
            typical = (f"{_name(speeds, s, k)}, groups {list(code.groups)} (0-based): robust on "
                       f"{len(sets)} straggler sets")
    return Evidence(cases, failures, "heter-group on the instances of Alg. 2: is_robust, "
                    "Condition 1 and exact decoding for every straggler set of size <= s (at most "
                    "200 sampled per size)", example or typical)


def outside_fails(B, groups, s: int) -> str:
    """Proof of Thm 6: with ``P`` groups, ``B_Ē`` (the rows outside them) has ``s + 1 - P``
    holders per partition and satisfies Condition 1 for ``s - P`` stragglers."""
    B = np.asarray(B, dtype=float)
    inside = sorted({w for g in groups for w in g})
    out = np.setdiff1d(np.arange(B.shape[0]), inside)
    P = len(groups)
    holders = (B[out] != 0).sum(axis=0)
    if not np.all(holders == s + 1 - P):
        return f"holders outside the groups {holders.tolist()} != s + 1 - P = {s + 1 - P}"
    S = condition1(B[out], s - P)
    if S is not None:
        return f"B_E-bar: 1 not in the span without workers {[int(out[i]) for i in S]}"
    return ""


@statement(3, "Thm 6 (proof)", "with P groups, B_E-bar (workers outside the groups) is robust "
                               "to s - P stragglers")
def _thm6_proof(ctx) -> Evidence:
    cases = failures = 0
    example = typical = ""
    for speeds, s, k in group_instances(ctx):
        code = _code("heter-group", speeds, s, k, ctx.seed)
        if not code.groups or len(code.groups) > s:
            continue
        bad = outside_fails(code.B, code.groups, s)
        cases += 1
        failures += bool(bad)
        example = example or (f"{_name(speeds, s, k)}, groups {list(code.groups)}: {bad}"
                              if bad else "")
        typical = typical or (f"{_name(speeds, s, k)}, groups {list(code.groups)} (0-based): "
                              f"B_E-bar = rows {code.outside.tolist()}, robust to "
                              f"{s - len(code.groups)}" if not bad else "")
    return Evidence(cases, failures, "heter-group instances of Alg. 2 with 1 <= P <= s groups: "
                    "every straggler set of size s - P of the outside workers", example or typical)


@statement(3, "Sec. V (text)", "B_E-bar can be constructed by Alg. 1 under s = m - P stragglers "
                               "(each partition then needs m - P + 1 holders outside the groups)")
def _m_minus_p(ctx) -> Evidence:
    cases = failures = 0
    example = ""
    for speeds, s, k in group_instances(ctx):
        code = _code("heter-group", speeds, s, k, ctx.seed)
        m, P = len(speeds), len(code.groups)
        if not 1 <= P <= s:
            continue
        holders = (code.B[code.outside] != 0).sum(axis=0)
        cases += 1
        if not np.all(holders == m - P + 1):
            failures += 1
            example = example or (f"{_name(speeds, s, k)}, P = {P}: {holders.min()} holders per "
                                  f"partition outside the groups, Alg. 1 for s = m - P = {m - P} "
                                  f"needs {m - P + 1}; s - P = {s - P} (Thm 6's proof) fits")
    return Evidence(cases, failures, "heter-group instances of Alg. 2 with 1 <= P <= s groups "
                    "(so Alg. 1 runs on B_E-bar): holders per partition among the workers outside "
                    "the groups", example)


@statement(3, "Sec. V (after Thm 6)", "the group-based code is also optimal for problem (4): "
                                      "T(B) = (s+1) k / sum_i c_i")
def _group_optimal(ctx) -> Evidence:
    cases = failures = 0
    example = ""
    for speeds, s, k in integer_instances(ctx, n_random=4 if ctx.quick else 20,
                                          m_random=(6, 10)):
        bad = thm5_fails(_code("heter-group", speeds, s, k, ctx.seed), speeds, s, k)
        cases += 1
        failures += bool(bad)
        example = example or (f"{_name(speeds, s, k)}: {bad}" if bad else "")
    return Evidence(cases, failures, f"heter-group on {_size(ctx)} and random (integer quotas); "
                    "T(B) by completion_time and by eq. 3 here",
                    example or "Example 2's speeds: T(B) = 1")


#: Example 2 as printed (W1..W7 x D1..D4): the support, and B with 1 for the workers in groups
#: and -1 standing for the printed stars (entries Alg. 1 computes)
EXAMPLE2_SUPPORT = np.array([[1, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1], [1, 1, 1, 0],
                             [1, 1, 0, 1], [1, 0, 1, 1], [0, 1, 1, 1]])
EXAMPLE2_B = np.array([[-1, -1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1], [1, 1, 1, 0],
                       [1, 1, 0, 1], [-1, 0, -1, -1], [0, -1, -1, -1]])
#: the groups of Example 2 (1-based): G1 = {W1, W2, W3}, G2 = {W3, W4}, G3 = {W2, W5}; G1 pruned
EXAMPLE2_FOUND = {(1, 2, 3), (3, 4), (2, 5)}
EXAMPLE2_KEPT = {(3, 4), (2, 5)}


def example2_fails(support=EXAMPLE2_SUPPORT, B_printed=EXAMPLE2_B, found=EXAMPLE2_FOUND,
                   kept=EXAMPLE2_KEPT, seeds=range(5)):
    """Example 2's facts, one list entry per failed fact.  Speeds ``c = n`` (row sizes of the
    support: the paper gives none) and ``s + 1 = 4`` holders per partition."""
    support = np.asarray(support)
    n = support.sum(axis=1)
    s, k = int(support[:, 0].sum()) - 1, support.shape[1]
    bad, checked = [], 2
    if not np.array_equal(eq6_support(n, k), support):
        bad.append(f"eq. 6 for n = {n.tolist()} gives {eq6_support(n, k).tolist()}")
    if exact_covers(support) != {tuple(i - 1 for i in g) for g in found}:
        bad.append(f"condition (*) holds for {sorted(exact_covers(support))} (0-based)")
    stars = np.asarray(B_printed) == -1
    for seed in seeds:
        code = make_code("heter-group", speeds=n.tolist(), s=s, k=k, seed=seed)
        B = code.B
        checked += 5
        one = lambda G: {tuple(sorted(int(w) + 1 for w in g)) for g in G}   # noqa: E731
        if not np.array_equal((B != 0).astype(int), support):
            bad.append(f"seed {seed}: support {(B != 0).astype(int).tolist()}")
        if one(code.candidate_groups) != set(found) or one(code.groups) != set(kept):
            bad.append(f"seed {seed}: groups found {sorted(one(code.candidate_groups))}, kept "
                       f"{sorted(one(code.groups))}")
        if not np.array_equal(np.where(stars, 0, B), np.where(stars, 0, B_printed)) or \
                not np.all(B[stars] != 0):
            bad.append(f"seed {seed}: B = {B.round(3).tolist()}")
        if not is_robust(code) or condition1(B, s) is not None:
            bad.append(f"seed {seed}: not robust to s = {s}")
        if abs(completion_time(code, n.tolist()) - (s + 1) * k / n.sum()) > TOL:
            bad.append(f"seed {seed}: T(B) = {completion_time(code, n.tolist())}")
    return checked, bad


@statement(3, "Example 2", "the 7x4 support: groups G1 = {W1,W2,W3}, G2 = {W3,W4}, G3 = {W2,W5} "
                           "found, G1 pruned; B has 1 on W2-W5 and Alg. 1's entries elsewhere")
def _example2(ctx) -> Evidence:
    checked, bad = example2_fails()
    return Evidence(checked, len(bad), "eq. 6 with n = row sizes and condition (*) on the printed "
                    "support; heter-group with speeds n, s = 3, k = 4 (seeds 0-4) vs the printed "
                    "support, groups and B; robust (exhaustive) and T(B) = 1",
                    "; ".join(bad) or "groups (3,4), (2,5) kept (1-based); B as printed")
