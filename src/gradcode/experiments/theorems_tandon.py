"""Paper 1 (Tandon et al., Gradient Coding): its statements checked by computation (``theorems``).

The paper (the poster text in ``papers/1-gradient-coding-tandon.md``) states: the worked example
``A B = 1`` for ``n = 3``, ``s = 1``; condition (4) (``1`` in the span of the rows of ``B`` of
any ``n - s`` workers) as necessary and sufficient for an ``A`` with ``A B = 1``; the Theorem
(lower bound on ``B``'s density: ``||B_i||_0 >= s + 1`` when all rows have as many non-zeros);
the fractional repetition scheme (FR, Alg. 1, ``(s + 1) | n``) and its figure (``n = 6``,
``s = 2``); the cyclic repetition scheme (CR, eq. (5), Alg. 2: rows of ``B`` from the null space
of a random ``s x n`` matrix ``H`` with ``H 1 = 0``, "always possible for any n and s"); and the
partial-straggler scheme (naive + coded parts, its figure ``n = 3``, ``s = 1``, ``alpha = 2``).

Each is checked twice where gradcode implements it: on the mathematical object built here with
NumPy from the paper's description (FR's ``B``, Alg. 2's ``B`` from ``H``, the partial scheme's
split) and on gradcode's public API (``make_code``, ``from_matrix``, ``analysis.is_robust``),
whose decoders' weights are verified here (``w B = 1``, ``w`` zero on the stragglers).  gradcode's
``gc-cr`` builds CR's ``B`` by paper 3's auxiliary-matrix construction, not Alg. 2: it is checked
for what the paper claims of CR (support (5), rows spanning an ``(n - s)``-dim subspace holding
``1``, any ``n - s`` workers decode).  The poster only describes Alg. 2; ``alg2`` follows the full
paper's Algorithm 2 (the same steps as the authors' published ``getB``).

Remark on the Theorem: its hypothesis (equal row weights) is needed: ``B = [[1, 1, 1], [1, 1,
1], [1, 0, 0]]`` satisfies (4) for ``s = 1`` with a row of one non-zero; what holds for every
robust ``B`` is that each *column* has ``>= s + 1`` non-zeros.
"""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import combinations, combinations_with_replacement

import numpy as np

from ..analysis import is_robust
from ..codes import from_matrix, make_code
from .theorems import Evidence, statement

#: relative tolerance of the float checks (``|w B - 1| <= RTOL max(1, sum_i |w_i| max|B_i|)``)
RTOL = 1e-9

#: the paper's example (General Setup), n = 3, s = 1, as printed
PAPER_A = [[0, 1, 2], [1, 0, 1], [2, -1, 0]]
PAPER_B = [[Fraction(1, 2), 1, 0], [0, 1, -1], [Fraction(1, 2), 0, 1]]


# ------------------------------------------------------------------------------ helpers
def cyclic_support(n: int, s: int) -> np.ndarray:
    """eq. (5): ``(n, n)`` 0/1, row ``i`` non-zero on columns ``i, .., i + s`` (mod n).

    >>> cyclic_support(3, 1).tolist()              # the support of the example's B
    [[1, 1, 0], [0, 1, 1], [1, 0, 1]]
    """
    S = np.zeros((n, n), dtype=int)
    S[np.repeat(np.arange(n), s + 1), ((np.arange(n)[:, None] + np.arange(s + 1)) % n).ravel()] = 1
    return S


def fr_matrix(n: int, s: int) -> np.ndarray:
    """FR as the text describes it: ``n / (s + 1)`` groups of ``s + 1`` consecutive workers,
    each group holding the same ``s + 1`` partitions, every worker sending their plain sum.

    >>> fr_matrix(4, 1).tolist()
    [[1, 1, 0, 0], [1, 1, 0, 0], [0, 0, 1, 1], [0, 0, 1, 1]]
    """
    return np.kron(np.eye(n // (s + 1), dtype=int), np.ones((s + 1, s + 1), dtype=int))


def straggler_sets(n: int, s: int) -> np.ndarray:
    """``(C(n, s), n)`` bool: ``True`` for the ``n - s`` workers received, every set."""
    got = np.ones((math.comb(n, s), n), dtype=bool)
    for k, S in enumerate(combinations(range(n), s)):
        got[k, list(S)] = False
    return got


def fr_weights(got: np.ndarray, s: int) -> np.ndarray:
    """FR's decoder: weight 1 on the first received worker of every group (one per group
    exists when at most ``s`` of its ``s + 1`` are missing), for each row of ``got``."""
    f, n = got.shape
    groups = got.reshape(f, n // (s + 1), s + 1)
    first = np.argmax(groups, axis=2)
    A = np.zeros_like(groups, dtype=int)
    np.put_along_axis(A, first[..., None], groups.any(axis=2)[..., None].astype(int), axis=2)
    return A.reshape(f, n)


def alg2(n: int, s: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Paper 1's Algorithm 2 (CR): ``H = randn(s, n)``, its last column ``-sum`` of the others
    (``H 1 = 0``); row ``i`` of ``B`` on ``j = (i, .., i + s) mod n`` is ``[1; -H_{:, j[1:]}^{-1}
    H_{:, j[0]}]``, so that ``H B_i^T = 0``: ``(B, H)``."""
    H = rng.standard_normal((s, n))
    H[:, -1] = -H[:, :-1].sum(axis=1)
    B = np.zeros((n, n))
    for i in range(n):
        j = (i + np.arange(s + 1)) % n
        B[i, j[0]] = 1.0
        B[i, j[1:]] = -np.linalg.solve(H[:, j[1:]], H[:, j[0]])
    return B, H


def weights_ok(w: np.ndarray, B: np.ndarray, got: np.ndarray, rtol: float = RTOL) -> bool:
    """``w B = 1`` (to ``rtol`` relative to ``max(1, sum |w_i| max|B_i|)``) with ``w`` zero off
    the received workers ``got`` (bool)."""
    w, B = np.asarray(w, float), np.asarray(B, float)
    scale = max(1.0, float(np.abs(w) @ np.abs(B).max(axis=1)))
    return bool(np.all(w[~got] == 0) and np.abs(w @ B - 1.0).max() <= rtol * scale)


def rank(M: np.ndarray) -> np.ndarray:
    """Numerical rank (SVD) of a matrix or a stack: singular values above ``RTOL`` times the
    largest (integer and generic matrices here are far from that threshold)."""
    return np.linalg.matrix_rank(np.asarray(M, float), rtol=RTOL)


def spans_ones(M: np.ndarray) -> np.ndarray:
    """Condition (4) for a stack ``(..., r, n)`` of row sets: ``1`` in their row span, by
    numerical rank (``rank [M; 1] == rank M``); for small integer or generic matrices."""
    M = np.asarray(M, float)
    ones = np.ones(M.shape[:-2] + (1, M.shape[-1]))
    return rank(M) == rank(np.concatenate([M, ones], -2))


def satisfies_4(Bs: np.ndarray, s: int) -> np.ndarray:
    """Condition (4) for every set of ``n - s`` rows, for each ``B`` of a stack ``(N, n, n)``."""
    Bs = np.asarray(Bs, float)
    n = Bs.shape[-2]
    ok = np.ones(Bs.shape[0], dtype=bool)
    for I in combinations(range(n), n - s):
        ok &= spans_ones(Bs[:, list(I), :])
    return ok


def _fmt(M) -> str:
    return "[" + ", ".join("[" + ", ".join(str(x) for x in row) + "]" for row in M) + "]"


def _g(x: float) -> str:
    return f"{x:.3g}"


# ------------------------------------------------------------------------------ example
def example_evidence(A, B, s: int) -> tuple[int, int, str]:
    """``A B = 1_{f x n}`` in exact arithmetic, each row of ``A`` supported on a set of
    ``n - s`` workers and every such set one row's support (``f = C(n, n - s)``): ``(cases,
    failures, first failure)`` (a case: a row of ``A``, and the collection of supports)."""
    A = [[Fraction(x) for x in row] for row in A]
    B = [[Fraction(x) for x in row] for row in B]
    n = len(B)
    cases = failures = 0
    bad = ""
    supports = set()
    for i, a in enumerate(A):
        ab = [sum(a[k] * B[k][j] for k in range(n)) for j in range(n)]
        supp = frozenset(k for k in range(n) if a[k] != 0)
        supports.add(supp)
        cases += 1
        if any(x != 1 for x in ab) or len(supp) > n - s:
            failures += 1
            bad = bad or f"row {i} of A: A_i B = {[str(x) for x in ab]}, support {sorted(supp)}"
    cases += 1
    wanted = {frozenset(I) for I in combinations(range(n), n - s)}
    if len(A) != math.comb(n, n - s) or not supports >= wanted:
        failures += 1
        bad = bad or f"supports {sorted(map(sorted, supports))} != all {n - s}-subsets"
    return cases, failures, bad


@statement(1, "General Setup, example (n = 3, s = 1)",
           "the printed A = [[0, 1, 2], [1, 0, 1], [2, -1, 0]] and B = [[1/2, 1, 0], "
           "[0, 1, -1], [1/2, 0, 1]] satisfy A B = 1 (3 x 3), A's rows supported on the "
           "f = C(3, 2) sets of n - s = 2 workers")
def _example(ctx) -> Evidence:
    cases, failures, bad = example_evidence(PAPER_A, PAPER_B, 1)
    AB = [[str(sum(Fraction(a[k]) * PAPER_B[k][j] for k in range(3))) for j in range(3)]
          for a in PAPER_A]
    return Evidence(cases, failures, "exact rational arithmetic: each row of A times B, and "
                    "the supports of A's rows", bad or f"A B = {_fmt(AB)}")


def example_decodings(B, A, s: int) -> tuple[int, int, str]:
    """gradcode on the example: ``from_matrix(B, s)`` decodes each straggler set with the row
    of ``A`` supported on the received workers (unique here: ``n - s`` independent rows), and
    ``is_robust(B, s)``.  ``(cases, failures, first failure)``."""
    A = np.array([[float(Fraction(x)) for x in row] for row in A])
    Bf = np.array([[float(Fraction(x)) for x in row] for row in B])
    n = Bf.shape[0]
    code = from_matrix(Bf, s=s)
    cases = failures = 0
    bad = ""
    for got in straggler_sets(n, s):
        (rows,) = np.nonzero(np.all((A != 0) <= got, axis=1))
        d = code.decode(np.flatnonzero(got))
        cases += 1
        if not (d.exact and weights_ok(d.weights, Bf, got) and rows.size
                and np.allclose(d.weights, A[rows[0]], rtol=0, atol=RTOL)):
            failures += 1
            bad = bad or (f"received {np.flatnonzero(got).tolist()}: gradcode's weights "
                          f"{np.round(d.weights, 6).tolist()}, the paper's row "
                          f"{A[rows[0]].tolist() if rows.size else None}")
    cases += 1
    if not is_robust(Bf, s):
        failures += 1
        bad = bad or "is_robust(B, s) is False"
    return cases, failures, bad


@statement(1, "General Setup, example (n = 3, s = 1), gradcode",
           "gradcode decodes the printed B (from_matrix) with the printed A: for each straggler "
           "the weights are A's row supported on the other two workers, and is_robust(B, 1)")
def _example_gradcode(ctx) -> Evidence:
    cases, failures, bad = example_decodings(PAPER_B, PAPER_A, 1)
    w = from_matrix([[float(x) for x in row] for row in PAPER_B], s=1).decode([1, 2]).weights
    return Evidence(cases, failures, "the 3 straggler sets (the scheme's own decoder) and "
                    "analysis.is_robust", bad or f"without worker 0 (0-based): weights "
                    f"{np.round(w, 9).tolist()}, A's first row [0, 1, 2]")


# ------------------------------------------------------------------------------ condition (4)
def condition4_instances(rng: np.random.Generator, count: int, n_max: int):
    """Random ``(B, s)``, half sparse integer matrices (entries in -2..2), half ``B = G K``
    with integer ``G`` (``n x (n - s)``) and ``K`` whose first row is ``1`` (robust unless some
    ``n - s`` rows of ``G`` are singular), so both sides of the condition occur."""
    for k in range(count):
        n = int(rng.integers(2, n_max + 1))
        s = int(rng.integers(1, n))
        if k % 2:
            B = rng.choice([-2, -1, 1, 2], size=(n, n)) * (rng.random((n, n)) < rng.random())
        else:
            K = rng.integers(-1, 2, size=(n - s, n))
            K[0] = 1
            B = rng.integers(-3, 4, size=(n, n - s)) @ K
        yield B.astype(float), s


def condition4_evidence(instances) -> tuple[int, int, int, int, str]:
    """For each ``(B, s)`` and each received set ``I``: condition (4) on ``B_I`` (rank, here)
    against gradcode's optimal decoder being exact with weights verified here (``w B = 1``,
    ``w`` zero off ``I``); and over all ``I`` against ``analysis.is_robust(B, s)``.
    ``(cases, failures, robust B's, B's, first failure)``."""
    cases = failures = robust = total = 0
    bad = ""
    for B, s in instances:
        n = B.shape[0]
        code = from_matrix(B)
        every = True
        for got in straggler_sets(n, s):
            held = bool(spans_ones(B[got])[()])
            d = code.decode(np.flatnonzero(got), method="optimal")
            found = d.exact and weights_ok(d.weights, B, got)
            every &= held
            cases += 1
            if held != found:
                failures += 1
                bad = bad or (f"B = {_fmt(B.astype(int))}, received "
                              f"{np.flatnonzero(got).tolist()}: (4) {held}, A found {found}")
        cases += 1
        total += 1
        robust += every
        if is_robust(B, s) != every:
            failures += 1
            bad = bad or f"B = {_fmt(B.astype(int))}, s = {s}: is_robust != (4) for all I"
    return cases, failures, robust, total, bad


@statement(1, "Full Stragglers, condition (4)",
           "an A with A B = 1 (row i supported on a set I of n - s workers) exists iff "
           "1 in span{B_i : i in I} for every I with |I| = n - s")
def _condition4(ctx) -> Evidence:
    count, n_max = (120, 5) if ctx.quick else (1200, 7)
    cases, failures, robust, total, bad = condition4_evidence(
        condition4_instances(np.random.default_rng(ctx.seed), count, n_max))
    return Evidence(cases, failures, f"{total} random B (n <= {n_max}, {robust} satisfying (4) "
                    "for all I), every received set I: (4) by rank (SVD) vs an A found by "
                    "gradcode's least-squares decoder (verified A_I B = 1), and is_robust",
                    bad or f"{robust} of {total} B robust, the rest refused exactly where "
                    "(4) fails")


# ------------------------------------------------------------------------------ Theorem
def supports_exhaustive(n: int, w: int):
    """Every ``(n, n)`` 0/1 pattern with ``w`` non-zeros per row, up to the order of the rows
    (a permutation of the workers keeps (4)): ``(N, n, n)``."""
    rows = np.zeros((math.comb(n, w), n), dtype=int)
    for k, c in enumerate(combinations(range(n), w)):
        rows[k, list(c)] = 1
    idx = np.array(list(combinations_with_replacement(range(len(rows)), n)))
    return rows[idx]


def density_violations(Bs: np.ndarray, s: int, bound: int | None = None) -> np.ndarray:
    """The Theorem's counterexamples in a stack of ``B``: equal row weights ``< bound``
    (``s + 1``) and condition (4) for ``s`` stragglers nonetheless (bool per ``B``)."""
    bound = s + 1 if bound is None else bound
    w = (np.asarray(Bs) != 0).sum(axis=2)
    equal = np.all(w == w[:, :1], axis=1)
    return equal & (w[:, 0] < bound) & satisfies_4(Bs, s)


@statement(1, "Full Stragglers, Theorem (lower bound on B's density)",
           "if all rows of B have the same number of non-zeros and B satisfies (4) for s "
           "stragglers, then ||B_i||_0 >= s + 1 for all i")
def _theorem(ctx) -> Evidence:
    rng = np.random.default_rng(ctx.seed)
    n_ex, n_rand, count = (4, 7, 100) if ctx.quick else (5, 10, 1000)
    cases = failures = 0
    bad = ""

    def tally(Bs, s):
        nonlocal cases, failures, bad
        v = density_violations(Bs, s)
        cases += len(Bs)
        failures += int(v.sum())
        if v.any() and not bad:
            bad = f"s = {s}, B = {_fmt(np.round(Bs[np.argmax(v)], 3))} satisfies (4)"

    for n in range(2, n_ex + 1):
        for s in range(1, n):
            for w in range(1, s + 1):
                pattern = supports_exhaustive(n, w)
                tally(pattern, s)                                       # all values 1
                tally(pattern * rng.standard_normal(pattern.shape), s)   # generic values
    for _ in range(count):
        n = int(rng.integers(n_ex + 1, n_rand + 1))
        s = int(rng.integers(1, n))
        w = int(rng.integers(1, s + 1))
        B = np.zeros((n, n))
        for i in range(n):
            B[i, rng.choice(n, size=w, replace=False)] = rng.standard_normal(w)
        tally(B[None], s)
    return Evidence(cases, failures, f"every support with w <= s non-zeros per row (up to row "
                    f"order) for n <= {n_ex}, with values 1 and with Gaussian values, and "
                    f"{count} random ones for n = {n_ex + 1}..{n_rand}: does any satisfy (4)? "
                    "(rank test, every set of n - s rows)", bad or _theorem_typical())


def _theorem_typical() -> str:
    """CR's support with w = s = 2 (one short), n = 4, and a straggler set breaking (4)."""
    B = cyclic_support(4, 1)
    for got in straggler_sets(4, 2):
        if not spans_ones(B[got]):
            return (f"n = 4, s = 2, B = {_fmt(B)}: without workers "
                    f"{np.flatnonzero(~got).tolist()} (0-based) partition "
                    f"{int(np.argmin(B[got].any(axis=0)))} is held by no one left")
    return ""


# ------------------------------------------------------------------------------ FR
def fr_evidence(B: np.ndarray, n: int, s: int) -> tuple[int, int, str]:
    """FR's claims on ``B``: ``s + 1`` non-zeros per row and column (``s + 1`` replicas), and
    for every set of ``n - s`` received workers the decoder ``fr_weights`` gives ``A_I B = 1``
    exactly (integers).  ``(cases, failures, first failure)``."""
    got = straggler_sets(n, s)
    A = fr_weights(got, s)
    ok = np.all(A @ B == 1, axis=1) & np.all(A[~got] == 0)
    nnz = (B != 0)
    shape_ok = bool(np.all(nnz.sum(axis=0) == s + 1) and np.all(nnz.sum(axis=1) == s + 1))
    bad = ""
    if not ok.all():
        k = int(np.argmin(ok))
        bad = (f"n = {n}, s = {s}, received {np.flatnonzero(got[k]).tolist()}: A_I B = "
               f"{(A[k] @ B).tolist()}")
    elif not shape_ok:
        bad = f"n = {n}, s = {s}: row/column weights {nnz.sum(1).tolist()}/{nnz.sum(0).tolist()}"
    return len(ok) + 1, int((~ok).sum()) + (not shape_ok), bad


def fr_params(n_max: int):
    """Every ``(n, s)`` with ``2 <= n <= n_max``, ``s >= 1`` and ``(s + 1) | n``."""
    return [(n, s) for n in range(2, n_max + 1) for s in range(1, n) if n % (s + 1) == 0]


@statement(1, "Fractional Repetition Scheme (Alg. 1)",
           "for (s + 1) | n, n / (s + 1) groups of s + 1 workers each holding the group's s + 1 "
           "partitions and sending their sum: the full gradient from any n - s workers")
def _fr(ctx) -> Evidence:
    n_max = 12 if ctx.quick else 16
    cases = failures = 0
    bad = ""
    for n, s in fr_params(n_max):
        c, f, b = fr_evidence(fr_matrix(n, s), n, s)
        cases, failures, bad = cases + c, failures + f, bad or b
    return Evidence(cases, failures, f"B_FR built from the text, every n <= {n_max} and s with "
                    "(s + 1) | n, every set of n - s workers: one survivor per group, "
                    "A_I B = 1 in integers; s + 1 non-zeros per row and column",
                    bad or f"n = 6, s = 2 without workers 0, 3: A_I = "
                    f"{fr_weights(straggler_sets(6, 2)[2:3], 2)[0].tolist()}")


def code_decodes(code, B: np.ndarray, s: int) -> tuple[int, int, str]:
    """gradcode's own decoder of ``code`` on every set of ``n - s`` received workers: exact, with
    weights verified here against ``B`` (``w B = 1``, zero on the stragglers)."""
    n = B.shape[0]
    cases = failures = 0
    bad = ""
    for got in straggler_sets(n, s):
        d = code.decode(np.flatnonzero(got))
        cases += 1
        if not (d.exact and weights_ok(d.weights, B, got)):
            failures += 1
            bad = bad or (f"{code!r}, received {np.flatnonzero(got).tolist()}: weights "
                          f"{np.round(d.weights, 4).tolist()}, w B = "
                          f"{np.round(d.weights @ B, 4).tolist()}")
    return cases, failures, bad


@statement(1, "Fractional Repetition Scheme (Alg. 1), gradcode",
           "gradcode's gc-fr is the paper's FR (B equal to B_FR) and decodes the full gradient "
           "from every set of n - s workers")
def _fr_gradcode(ctx) -> Evidence:
    n_max = 12 if ctx.quick else 16
    cases = failures = 0
    bad = ""
    for n, s in fr_params(n_max):
        code, B = make_code("gc-fr", n=n, s=s), fr_matrix(n, s)
        cases += 1
        if not np.array_equal(code.B, B):
            failures += 1
            bad = bad or f"gc-fr n = {n}, s = {s}: B = {_fmt(code.B.astype(int))}"
        c, f, b = code_decodes(code, B, s)
        cases, failures, bad = cases + c, failures + f, bad or b
    return Evidence(cases, failures, f"every n <= {n_max} and s with (s + 1) | n: B compared "
                    "exactly, every set of n - s workers decoded by gc-fr's decoder",
                    bad or "gc-fr n = 6, s = 2 without workers 0, 1: weights "
                    f"{make_code('gc-fr', n=6, s=2).decode([2, 3, 4, 5]).weights.tolist()}")


@statement(1, "Fractional Repetition Scheme, figure (n = 6, s = 2)",
           "two groups of s + 1 = 3 workers, W1-W3 holding D1-D3 and W4-W6 holding D4-D6, "
           "each sending its plain sum; any 4 workers give the full gradient, one per group")
def _fr_figure(ctx) -> Evidence:
    code = make_code("gc-fr", n=6, s=2)
    placement = [[0, 1, 2]] * 3 + [[3, 4, 5]] * 3
    cases, failures, bad = 2, 0, ""
    if [p.tolist() for p in code.placement] != placement or not code.is_sum_code:
        failures, bad = 1, f"placement {[p.tolist() for p in code.placement]}"
    if not np.allclose(code.load, 0.5, rtol=0, atol=1e-12):
        failures, bad = failures + 1, bad or f"loads {code.load.tolist()} != 3/6"
    for got in straggler_sets(6, 2):
        w = code.decode(np.flatnonzero(got)).weights
        cases += 1
        if not (set(w.tolist()) <= {0.0, 1.0} and w[:3].sum() == 1 and w[3:].sum() == 1
                and weights_ok(w, fr_matrix(6, 2), got, rtol=0)):
            failures += 1
            bad = bad or f"received {np.flatnonzero(got).tolist()}: weights {w.tolist()}"
    w = code.decode([1, 2, 4, 5]).weights
    return Evidence(cases, failures, "gc-fr(6, 2): its placement and plain sums, load 1/2, and "
                    "all 15 sets of 4 workers (0/1 weights, one worker per group, exact)",
                    bad or "without W1, W4: the sum of W" + " + W".join(
                        str(i + 1) for i in np.flatnonzero(w)))


# ------------------------------------------------------------------------------ CR
def alg2_evidence(B: np.ndarray, H: np.ndarray, n: int, s: int) -> tuple[int, int, str]:
    """Alg. 2's claims on ``(B, H)``: support exactly eq. (5); ``H 1 = 0`` and ``H B^T = 0``
    (rows in the ``(n - s)``-dim null space of ``H``, which holds ``1``); rank ``n - s``; and
    for every set ``I`` of ``n - s`` rows, ``1 = a B_I`` with ``a = 1 B_I^+`` (to ``RTOL``)."""
    cases = failures = 0
    bad = ""
    cases += 1
    scale = max(1.0, float(np.abs(H).max() * np.abs(B).max() * n))
    if not (np.array_equal(np.abs(B) > 1e-12, cyclic_support(n, s) == 1)
            and np.abs(H.sum(axis=1)).max() <= RTOL * scale
            and np.abs(H @ B.T).max() <= RTOL * scale
            and rank(B) == n - s):
        failures += 1
        bad = f"n = {n}, s = {s}: support, H 1 = 0, H B^T = 0 or rank n - s fails"
    got = straggler_sets(n, s)
    BI = np.stack([B[g] for g in got])                                  # (f, n - s, n)
    a = np.linalg.pinv(BI).sum(axis=-2)                                 # 1 @ pinv(B_I)
    resid = np.abs(np.einsum("fi,fij->fj", a, BI) - 1.0).max(axis=1)
    scales = np.maximum(1.0, np.einsum("fi,fi->f", np.abs(a), np.abs(BI).max(axis=2)))
    ok = resid <= RTOL * scales
    cases += len(ok)
    failures += int((~ok).sum())
    if not ok.all() and not bad:
        k = int(np.argmin(ok))
        bad = (f"n = {n}, s = {s}, received {np.flatnonzero(got[k]).tolist()}: "
               f"residual {_g(resid[k])}")
    return cases, failures, bad


@statement(1, "Cyclic Repetition Scheme, eq. (5) (Alg. 2)",
           "for any n and s < n, B with support (5) whose rows lie in the null space of a random "
           "s x n H with H 1 = 0: the full gradient from any n - s workers")
def _alg2(ctx) -> Evidence:
    rng = np.random.default_rng(ctx.seed)
    n_max, seeds = (9, 1) if ctx.quick else (13, 3)
    cases = failures = 0
    bad = ""
    for n in range(2, n_max + 1):
        for s in range(1, n):
            for _ in range(seeds):
                B, H = alg2(n, s, rng)
                c, f, b = alg2_evidence(B, H, n, s)
                cases, failures, bad = cases + c, failures + f, bad or b
    B, _ = alg2(4, 1, np.random.default_rng(ctx.seed))
    return Evidence(cases, failures, f"Alg. 2 computed here (NumPy, Gaussian H), every n <= "
                    f"{n_max} and 1 <= s < n, {seeds} draw(s) each, every set of n - s "
                    "workers (least squares, rtol 1e-9); support (5), H B^T = 0, rank n - s",
                    bad or f"n = 4, s = 1: B = {_fmt(np.round(B, 3))}")


@statement(1, "Cyclic Repetition Scheme, eq. (5), gradcode",
           "gradcode's gc-cr has CR's support (5), its rows span an (n - s)-dim subspace holding "
           "1 (as Alg. 2's), and it decodes the full gradient from every set of n - s workers")
def _cr_gradcode(ctx) -> Evidence:
    n_max = 8 if ctx.quick else 12
    cases = failures = 0
    bad = ""
    for n in range(2, n_max + 1):
        for s in range(1, n):
            code = make_code("gc-cr", n=n, s=s, seed=ctx.seed)
            B = np.array(code.B)
            cases += 1
            if not (np.array_equal(B != 0, cyclic_support(n, s) == 1)
                    and rank(B) == n - s):
                failures += 1
                bad = bad or (f"gc-cr n = {n}, s = {s}: support {_fmt((B != 0).astype(int))}, "
                              f"rank {rank(B)}")
            c, f, b = code_decodes(code, B, s)
            cases, failures, bad = cases + c, failures + f, bad or b
    return Evidence(cases, failures, f"every n <= {n_max} and 1 <= s < n (seed {ctx.seed}): "
                    "support compared exactly, rank(B) = n - s, every set of n - s workers "
                    "decoded by gc-cr's decoder, weights verified (rtol 1e-9); gc-cr builds B by "
                    "paper 3's construction (C B = 1), not Alg. 2",
                    bad or "gc-cr n = 5, s = 2 without workers 0, 1: weights " + str(np.round(
                        make_code("gc-cr", n=5, s=2, seed=ctx.seed).decode([2, 3, 4]).weights,
                        3).tolist()))


# ------------------------------------------------------------------------------ partial
def partial_split(n: int, s: int, alpha) -> tuple:
    """The partial scheme solved from the text (exact with ``Fraction`` inputs): each machine a
    naive share ``a`` (alone) and ``s + 1`` coded partitions of ``(1 - n a) / n``; a straggler's
    naive time ``alpha a`` equals a non-straggler's ``a + (s + 1)(1 - n a) / n``, so
    ``a = (s + 1) / (n (alpha + s))``: ``(a, coded share per machine, load per machine)``.

    >>> [str(x) for x in partial_split(3, 1, Fraction(2))]     # the figure: 4/9 each
    ['2/9', '2/9', '4/9']
    """
    a = Fraction(s + 1) / (n * (alpha + s))
    coded = (s + 1) * (1 - n * a) / n
    return a, coded, a + coded


@statement(1, "Partial Stragglers, figure (n = 3, s = 1, alpha = 2)",
           "each worker gets 4/9 of the data (as opposed to 2/3 in the full-straggler scheme)")
def _partial_figure(ctx) -> Evidence:
    n, s, alpha = 3, 1, 2
    a, coded, load = partial_split(n, s, Fraction(alpha))
    code = make_code("gc-partial", n=n, s=s, alpha=alpha)
    checks = {
        "ours 4/9": load == Fraction(4, 9),
        "ours 2/3 = (s + 1) / n": Fraction(s + 1, n) == Fraction(2, 3),
        "gc-partial 4/9": np.allclose(code.machine_load, 4 / 9, rtol=0, atol=1e-12),
        "gc-cr 2/3": np.allclose(make_code("gc-cr", n=n, s=s).load, 2 / 3, rtol=0, atol=1e-12),
    }
    bad = [k for k, v in checks.items() if not v]
    return Evidence(len(checks), len(bad), "the split solved exactly from the text (a straggler "
                    "alpha times slower finishes its naive part with a non-straggler's naive + "
                    "coded), and gradcode's gc-partial / gc-cr loads (1e-12)",
                    f"{bad[0]} fails: ours {load}, gc-partial "
                    f"{code.machine_load.round(6).tolist()}" if bad else
                    f"naive {a} + coded {coded} = {load} per worker (vs 2/3)")


def partial_evidence(code, n: int, s: int, alpha: float, slow: np.ndarray,
                     rng: np.random.Generator) -> tuple[int, int, str]:
    """gc-partial under partial stragglers: machines process their naive message, then their
    coded one (work = the data in the message's partitions); stragglers ``slow`` times slower
    (``<= alpha``).  At ``T``, when the non-stragglers finish, every set of ``s`` stragglers has
    sent its naive messages and gradcode decodes the full gradient from what arrived (weights
    verified); and the balance ``alpha x_naive = x_naive + x_coded`` holds.  One case per
    straggler set and slowdown draw."""
    B = np.array(code.B)
    work = (B != 0) @ code.partition_sizes                  # data per message
    naive, coded = work[:n], work[n:]
    cases = failures = 0
    bad = ""
    cases += 1
    if not np.allclose(alpha * naive, naive + coded, rtol=1e-12, atol=0):
        failures += 1
        bad = f"n = {n}, s = {s}, alpha = {alpha}: naive {naive[0]}, coded {coded[0]}"
    for got in straggler_sets(n, s):
        kappa = np.where(got, 1.0, slow[rng.integers(slow.size, size=n)])
        T = float((naive + coded)[got].max())
        arrived = np.concatenate([kappa * naive <= T * (1 + 1e-12),
                                  kappa * (naive + coded) <= T * (1 + 1e-12)])
        d = code.decode(np.flatnonzero(arrived))
        cases += 1
        if not (d.exact and weights_ok(d.weights, B, arrived)):
            failures += 1
            bad = bad or (f"n = {n}, s = {s}, alpha = {alpha}, stragglers "
                          f"{np.flatnonzero(~got).tolist()} x{np.round(kappa[~got], 3).tolist()}: "
                          f"not decoded at T = {_g(T)}")
    return cases, failures, bad


@statement(1, "Partial Stragglers",
           "with the data split into naive and coded parts, s stragglers at most alpha times "
           "slower finish their naive parts when the others finish naive + coded, and the master "
           "then has the full gradient")
def _partial(ctx) -> Evidence:
    rng = np.random.default_rng(ctx.seed)
    n_max = 6 if ctx.quick else 9
    alphas = (1.0, 1.2, 1.5, 2.0, 3.0)
    cases = failures = 0
    bad = ""
    for n in range(2, n_max + 1):
        for s in range(1, n):
            for alpha in alphas:
                code = make_code("gc-partial", n=n, s=s, alpha=alpha)
                slow = np.concatenate([[alpha], 1.0 + (alpha - 1.0) * rng.random(3)])
                c, f, b = partial_evidence(code, n, s, alpha, slow, rng)
                cases, failures, bad = cases + c, failures + f, bad or b
    return Evidence(cases, failures, f"gradcode's gc-partial, every n <= {n_max}, 1 <= s < n, "
                    f"alpha in {list(alphas)}, every set of s stragglers (slowdowns drawn in "
                    "[1, alpha], alpha itself included): arrivals by the non-stragglers' finish "
                    "time T, decoded, weights verified", bad or _partial_typical())


def _partial_typical() -> str:
    code = make_code("gc-partial", n=3, s=1, alpha=2)
    work = (np.array(code.B) != 0) @ code.partition_sizes
    return (f"gc-partial n = 3, s = 1, alpha = 2: naive {work[0]:.4f} + coded {work[3]:.4f} = "
            f"T = {work[0] + work[3]:.4f}; a straggler's naive part 2 x {work[0]:.4f}")
