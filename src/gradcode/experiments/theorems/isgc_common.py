"""Paper 2 (IS-GC): what the checks of its sections share (``theorems``): the placements, their
conflict graphs, received sets as bit masks, exact independence numbers.

The placements are built here with NumPy from the paper's text (FR and CR of Sec. III, the
groups of CR of Sec. VI-A, the general HR(n, c1, c2) of Fig. 7: the bottom ``c1`` rows of the
in-group cyclic table over the top ``c2`` rows of CR(n, c)) and compared with gradcode's
``isgc-fr``, ``isgc-cr`` and ``isgc-hr``; where gradcode refuses a parameter set the paper's
statement covers (``isgc-hr`` accepts ``c <= n0 <= min(c + c1, 2c - 1)``), the NumPy placement
stands in.  Workers and partitions are 0-based in the code (the paper's W_1 is worker 0;
messages print W1, W2, ...); a received set W' is a bitmask S (bit i: worker i received), all
2^n of them at once where a check is exhaustive (the independence numbers of all subsets at
once, exact).

The sections' modules: ``isgc_fr`` (Sec. I-IV), ``isgc_cr`` (Sec. V-A/B), ``isgc_fr_vs_cr``
(Sec. V-C), ``isgc_hr`` (Sec. VI), ``isgc_hr_maximum`` (Sec. VI-C, Thm 8-9), ``isgc_bounds``
(Sec. VII, Thm 10-12); the algorithms of the text in ``isgc_algorithms``.
"""

from __future__ import annotations

import numpy as np

from ...analysis import independence_numbers
from ...registry import make_code


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
    """Whether each of the ``groups`` groups of consecutive workers is a clique of ``A``."""
    n0 = A.shape[0] // groups
    return all((A[q * n0:(q + 1) * n0, q * n0:(q + 1) * n0] | np.eye(n0, dtype=bool)).all()
               for q in range(groups))


# ----------------------------------------------------------------------------- labels, graphs
def fmt_hr(n, c1, c2, groups) -> str:
    """HR's parameters as the messages print them.

    >>> fmt_hr(12, 1, 3, 2)
    'HR(n=12, c1=1, c2=3, groups=2)'
    """
    return f"HR(n={n}, c1={c1}, c2={c2}, groups={groups})"


def fmt_workers(mask) -> str:
    """A received set (bit mask) as the paper's 1-based workers.

    >>> fmt_workers(0b101)
    '{W1, W3}'
    """
    return "{" + ", ".join(f"W{i + 1}" for i in members_of(int(mask))) + "}"


def mask_of(*workers: int) -> int:
    """The bit mask of the paper's (1-based) workers."""
    return sum(1 << (w - 1) for w in workers)


def edge_set(A: np.ndarray) -> set:
    """The edges ``(i, j)``, ``i < j``, of a bool adjacency."""
    return {(int(i), int(j)) for i, j in zip(*np.nonzero(np.triu(A)))}


def subset_failures(small: np.ndarray, big: np.ndarray) -> list[tuple[int, int]]:
    """The edges of ``small`` missing from ``big`` (1-based pairs)."""
    return [(int(i) + 1, int(j) + 1) for i, j in np.argwhere(np.triu(small & ~big))]


def unequal_sizes(P: np.ndarray, tol: float = 1e-9) -> list[int]:
    """The sizes ``w`` where the chances ``P[w]`` differ between workers (or partitions)."""
    return [w for w in range(1, P.shape[0]) if np.ptp(P[w]) > tol]


# ----------------------------------------------------------------------------- bit masks
_BITS = np.array([bin(i).count("1") for i in range(256)], dtype=np.int16)


def popcount(S) -> np.ndarray:
    """The number of bits set in each bit mask."""
    S = np.asarray(S, dtype=np.int64)
    out = np.zeros(S.shape, dtype=np.int16)
    while S.size and S.max() > 0:
        out += _BITS[S & 255]
        S = S >> 8
    return out


def bit(S, v) -> np.ndarray:
    """Whether worker ``v`` is in each bit mask of ``S``.

    >>> bit(np.array([0b01, 0b10]), 1).tolist()
    [False, True]
    """
    return (np.asarray(S) >> v & 1).astype(bool)


def members_of(mask: int) -> list[int]:
    """The workers (bits) of ``mask``.

    >>> members_of(0b1011)
    [0, 1, 3]
    """
    return [i for i in range(mask.bit_length()) if mask >> i & 1]


def every_subset(n: int) -> np.ndarray:
    """Every received set of ``n`` workers, as the bit masks ``0 .. 2^n - 1``."""
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
        indep &= ~(bit(chosen, v) & touches)
        addable |= bit(S, v) & ~bit(chosen, v) & ~touches
    return indep, indep & ~addable



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
    """``α(G[W'])`` of FR(n, c) (gradcode's ``isgc-fr``) for every received set."""
    return alpha_of(("fr", n, c), graph_of(make_code("isgc-fr", n=n, c=c)))


def cr_alpha(n: int, c: int) -> np.ndarray:
    """``α(G[W'])`` of CR(n, c) (gradcode's ``isgc-cr``) for every received set.

    >>> int(cr_alpha(4, 2)[0b1111])
    2
    """
    return alpha_of(("cr", n, c), graph_of(make_code("isgc-cr", n=n, c=c)))


def fr_cr_schemes(n_max: int):
    """``(kind, n, c)`` for every CR(n, c) and FR(n, c) (``c | n``), ``n <= n_max``."""
    for n in range(1, n_max + 1):
        for c in range(1, n + 1):
            yield "CR", n, c
            if n % c == 0:
                yield "FR", n, c


def alpha_fr_cr(kind, n, c):
    """``fr_alpha`` or ``cr_alpha`` by ``kind`` (``"FR"`` or ``"CR"``)."""
    return fr_alpha(n, c) if kind == "FR" else cr_alpha(n, c)
