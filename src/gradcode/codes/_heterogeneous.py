"""Heterogeneity-aware gradient codes (paper 3): ``heter`` (Sec. IV) and ``heter-group`` (Sec. V).

Notation of paper 3: ``m`` workers (our ``n_workers``) with throughputs ``c_i``, ``k`` partitions,
``s`` stragglers, ``n_i`` partitions on worker ``i``, encoding matrix ``B``, auxiliary matrix ``C``.

* ``heter``: ``n_i`` proportional to ``c_i`` (eq. 5), the ``k(s+1)`` partition copies dealt out
  cyclically (eq. 6), ``B`` from a random ``C`` with ``C B = 1`` (Lemma 2-3, Alg. 1).
* ``heter-group``: the same support; *groups* of workers whose partitions cover every partition
  exactly once (condition (*)) are searched (Alg. 2, FindAllGroups), pruned to pairwise disjoint
  groups (condition (**), PruneGroups), their workers send plain sums and the other workers are
  coded by Alg. 1 for ``s - P`` stragglers (Alg. 3; the text's "s = m - P" is a typo, see the
  proof of Thm 6).  A group that fully arrived decodes by summation (eq. 8).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ._auxiliary import auxiliary_decode, auxiliary_encode
from ._base import Code, optimal_weights
from ._checks import check_int, check_size, readonly
from ._span import proven_recovery

#: budget of the exact-cover search of ``find_groups`` (partial covers expanded, i.e. the
#: recursive calls of Alg. 2's FindAllGroups)
MAX_SEARCH_NODES = 20_000
#: at most this many groups are collected before pruning (pruning is quadratic in their number)
MAX_GROUPS = 1_000


def check_speeds(speeds) -> np.ndarray:
    """Throughputs ``c_i`` as a float array: a sequence/array or a string like ``"1,2,3,4,4"``.

    >>> from gradcode.codes import check_speeds
    >>> check_speeds("1,2,3,4,4").tolist()          # paper 3, Example 1
    [1.0, 2.0, 3.0, 4.0, 4.0]
    >>> check_speeds([1, 0])
    Traceback (most recent call last):
    ...
    ValueError: speeds: expected a non-empty 1-D sequence of positive finite numbers ...
    """
    value = speeds
    try:
        if isinstance(speeds, str):
            speeds = [float(x) for x in speeds.replace(";", ",").split(",") if x.strip()]
        c = np.asarray(speeds, dtype=float)
    except (TypeError, ValueError):
        c = None
    if c is None or c.ndim != 1 or c.size == 0 or not np.all(np.isfinite(c)) or np.any(c <= 0):
        raise ValueError("speeds: expected a non-empty 1-D sequence of positive finite numbers "
                         f"(throughputs c_i), got {_short(value)}")
    with np.errstate(over="ignore"):
        total = c.sum()
    if not np.isfinite(total):
        raise ValueError(f"speeds: too large to share out (their sum overflows), got "
                         f"{_short(value)}")
    return c


def _short(value) -> str:
    """``value``'s repr, shortened for a one-line error (a list of a million speeds)."""
    text = repr(value)
    return text if len(text) <= 120 else text[:100] + f"... ({len(text)} characters)"


def heter_allocation(speeds, s: int, k: int) -> np.ndarray:
    """Partitions per worker ``n_i`` (eq. 5): ``n_i ~ k(s+1) c_i / sum_j c_j``, integers.

    The paper assumes the quotas are integers ``<= k``.  Here quotas above ``k`` are capped at
    ``k`` (a worker holds a partition at most once) and the excess is redistributed to the other
    workers in proportion to ``c_i`` (repeated until no quota exceeds ``k``); the quotas are then
    rounded by largest remainder (ties to the lower index).  Result: ``sum n_i = k(s+1)``,
    ``0 <= n_i <= k`` and ``|n_i - quota_i| < 1``; a very slow worker may get ``n_i = 0`` (an
    all-zero row of ``B``).  Needs ``s + 1 <= m`` (else ``k(s+1) > mk``).
    """
    c = check_speeds(speeds)
    m = c.size
    s = check_int("s", s, minimum=0, maximum=m - 1)
    k = check_int("k", k, minimum=1)
    total = k * (s + 1)
    capped = np.zeros(m, dtype=bool)
    q = np.full(m, float(k))
    while (~capped).any():
        free = ~capped
        q = np.where(capped, float(k), (total - k * capped.sum()) * c / c[free].sum())
        over = free & (q > k)
        if not over.any():
            break
        capped |= over
    n = np.minimum(np.floor(q + 1e-9), k).astype(int)
    rest = total - int(n.sum())
    remainder = np.where(n < k, q - n, -np.inf)
    n[np.argsort(-remainder, kind="stable")[:rest]] += 1
    if n.sum() != total or n.max() > k:  # pragma: no cover - guarded by the argument above
        raise RuntimeError(f"allocation failed for speeds={c.tolist()}, s={s}, k={k}")
    return n


def heter_support(n_alloc, k: int) -> np.ndarray:
    """Support of ``B`` (eq. 6-7), a boolean ``(m, k)`` matrix: worker ``i`` holds partitions
    ``n'_i, .., n'_i + n_i - 1 (mod k)`` with ``n'_i = sum_{j<i} n_j`` (0-based).

    The copies fill positions ``0 .. k(s+1)-1`` of a line, position ``p`` being partition
    ``p mod k``; a worker takes ``n_i <= k`` consecutive positions, so it never gets a partition
    twice, and partition ``j`` (positions ``j, j+k, .., j+sk``) lands on ``s+1`` distinct workers.
    """
    n_alloc = np.asarray(n_alloc, dtype=int)
    start = np.concatenate([[0], np.cumsum(n_alloc)[:-1]])
    support = np.zeros((n_alloc.size, k), dtype=bool)
    for i, (a, ni) in enumerate(zip(start, n_alloc)):
        support[i, (a + np.arange(ni)) % k] = True
    return support


def _holders(support: np.ndarray) -> list[np.ndarray]:
    return [np.flatnonzero(support[:, j]) for j in range(support.shape[1])]


# --------------------------------------------------------------------------- groups (Alg. 2)
def find_groups(support, max_nodes: int | None = None,
                max_groups: int | None = None) -> list[tuple[int, ...]]:
    """FindAllGroups (Alg. 2): every set of workers whose partitions are pairwise disjoint and
    cover all ``k`` partitions (condition (*)), as sorted tuples of 0-based worker indices.

    An exact-cover search (exponential in the worst case), depth-first: branch on the workers
    holding the lowest uncovered partition, so each group is found once (the paper's recursion
    over all workers would find every ordering).  Bound: at most ``max_nodes``
    (``MAX_SEARCH_NODES``) partial covers expanded and ``max_groups`` (``MAX_GROUPS``) groups
    collected; beyond either the search stops and
    returns the groups found so far -- every returned group is valid, some may be missing, and
    the codes built from them stay exact (fewer groups only means more workers coded by Alg. 1).
    Workers holding nothing are never in a group.
    """
    S = np.asarray(support, dtype=bool)
    if S.ndim != 2:
        raise ValueError("support: expected a 2-D (workers x partitions) matrix, "
                         f"got shape {S.shape}")
    max_nodes = MAX_SEARCH_NODES if max_nodes is None else max_nodes
    max_groups = MAX_GROUPS if max_groups is None else max_groups
    m, k = S.shape
    mask = [sum(1 << int(j) for j in np.flatnonzero(S[i])) for i in range(m)]
    holders = [[int(i) for i in h if mask[i]] for h in _holders(S)]
    groups: list[tuple[int, ...]] = []
    nodes = 0
    stack = [((1 << k) - 1, ())] if k and m else []     # depth-first, lexicographic order
    while stack and len(groups) < max_groups:
        uncovered, chosen = stack.pop()
        if uncovered == 0:
            groups.append(tuple(sorted(chosen)))
            continue
        if nodes >= max_nodes:
            break
        nodes += 1
        j = (uncovered & -uncovered).bit_length() - 1    # lowest uncovered partition
        for w in reversed(holders[j]):
            if mask[w] & ~uncovered == 0:                 # disjoint from the chosen ones
                stack.append((uncovered & ~mask[w], chosen + (w,)))
    return groups


def prune_groups(groups) -> list[tuple[int, ...]]:
    """PruneGroups (Alg. 2): drop the group that intersects the most others until the groups are
    pairwise disjoint (condition (**), read as pairwise: Example 2 prunes G1 although the three
    groups have an empty common intersection).  Ties: the larger group, then the later one."""
    groups = [tuple(g) for g in groups]
    if not groups:
        return []
    m = 1 + max(max(g) for g in groups)
    M = np.zeros((len(groups), m), dtype=np.int64)
    for i, g in enumerate(groups):
        M[i, list(g)] = 1
    meets = (M @ M.T) > 0
    np.fill_diagonal(meets, False)
    alive = np.ones(len(groups), dtype=bool)
    count = meets.sum(axis=1)
    sizes = M.sum(axis=1)
    while alive.any() and count[alive].max() > 0:
        idx = np.flatnonzero(alive)
        key = np.lexsort((idx, sizes[idx], count[idx]))   # last key is primary
        drop = idx[key[-1]]
        alive[drop] = False
        count -= meets[drop]
    return [groups[i] for i in np.flatnonzero(alive)]


@dataclass(frozen=True)
class GroupConstruction:
    """Output of Alg. 3: ``B``, the retained ``groups``, the workers ``outside`` them (Ē) and the
    auxiliary matrix ``C`` of ``B_Ē`` (``None`` when ``P = s + 1`` and Ē holds nothing)."""

    B: np.ndarray
    groups: tuple[tuple[int, ...], ...]
    outside: np.ndarray
    C: np.ndarray | None


def group_encode(support, s: int, rng: np.random.Generator, groups=None) -> GroupConstruction:
    """Group-detection coding (Alg. 3) on a support where every partition has ``s+1`` holders.

    ``groups`` (pairwise disjoint exact covers) default to ``prune_groups(find_groups(support))``.
    Workers in the ``P`` groups get ``B`` = 1 on their support.  Every partition then has exactly
    ``s + 1 - P`` holders outside the groups, and ``B_Ē`` is built by Alg. 1 for ``s - P``
    stragglers (``P <= s + 1`` always: the groups hold distinct copies of partition 0).
    """
    S = np.asarray(support, dtype=bool)
    m, k = S.shape
    if not np.all(S.sum(axis=0) == s + 1):
        raise ValueError(f"support: every partition must have exactly s+1={s + 1} holders, got "
                         f"{S.sum(axis=0).tolist()}")
    groups = prune_groups(find_groups(S)) if groups is None else [tuple(g) for g in groups]
    inside = np.zeros(m, dtype=bool)
    for g in groups:
        inside[list(g)] = True
    outside = np.flatnonzero(~inside)
    B = np.where(inside[:, None] & S, 1.0, 0.0)
    C = None
    s_out = s - len(groups)
    if s_out >= 0:
        local = _holders(S[outside])
        B_out, C = auxiliary_encode(local, outside.size, s_out, rng)
        B[outside] = B_out.toarray()
        C.setflags(write=False)
    return GroupConstruction(B, tuple(groups), outside, C)


def group_decode(gc: GroupConstruction, received) -> np.ndarray:
    """Decoder of Alg. 3: the smallest fully received group, summed (``a_i`` of eq. 8);
    otherwise every group misses a worker, so at most ``s - P`` workers of Ē are missing and
    ``B_Ē`` decodes by ``lam C`` (Lemma 2).  Beyond ``s`` missing: least squares."""
    m = gc.B.shape[0]
    got = np.zeros(m, dtype=bool)
    got[np.asarray(received, dtype=int)] = True
    full = [g for g in gc.groups if got[list(g)].all()]
    w = np.zeros(m)
    if full:
        w[list(min(full, key=len))] = 1.0
        return w
    missing = np.flatnonzero(~got[gc.outside])
    if gc.C is None or missing.size > gc.C.shape[0] - 1:
        return optimal_weights(sp.csr_array(gc.B), np.flatnonzero(got))
    w[gc.outside] = auxiliary_decode(gc.C, missing)
    return w


# --------------------------------------------------------------------------- codes
class _HeterBase(Code):
    span_decodes = True

    def _setup(self, speeds, s, k, seed):
        c = check_speeds(speeds)
        s = check_int("s", s, minimum=0, maximum=c.size - 1)
        k = check_int("k", k, minimum=1)
        seed = check_int("seed", seed, minimum=0)
        check_size(self.name, k * (s + 1), "k")
        self._set(s=s, speeds=readonly(c), allocation=readonly(heter_allocation(c, s, k)))
        support = heter_support(self.allocation, k)
        params = {"speeds": [float(x) for x in c], "s": s, "k": k, "seed": seed}
        return support, np.random.default_rng(seed), params

    def recovery_many(self, got):
        """``Code.recovery_many``, and exact where the span test proves that the received set
        decodes (``codes._span``): ``B`` is rank-deficient (repeated holder sets), so sets
        missing more than ``s`` may decode, such as the ones the ``decodable`` policy stops at.

        >>> from gradcode import make_code
        >>> code = make_code("heter", speeds=[1, 1, 1, 2, 2, 2], s=1, k=6)
        >>> got = np.array([[0, 1, 1, 0, 1, 1], [0, 0, 1, 1, 1, 1]], bool)   # 2 > s missing
        >>> frac, err, exact = code.recovery_many(got)
        >>> frac.tolist(), exact.tolist(), code.decode([1, 2, 4, 5]).exact
        ([1.0, nan], [True, False], True)
        """
        got = self._check_got(got)
        return proven_recovery(self._span_test, got, *super().recovery_many(got))


class Heter(_HeterBase):
    """Heter-aware coding (paper 3, Sec. IV): eq. 5 allocation, eq. 6 cyclic support, Alg. 1
    ``B``; robust to any ``s`` stragglers (Thm 4) and, when the quotas of eq. 5 are integers,
    optimal for the worst-case completion time (3) (Thm 5: every worker finishes at
    ``k(s+1) / sum c_i``).  Decoded by ``lam C`` (Lemma 2) in ``O(s^3 + s m)``.

    Speeds 1, 2, 3, 4, 4 and ``k = 7`` partitions: each worker holds partitions in proportion
    to its speed, and any 4 of the 5 decode.

    >>> from gradcode import make_code
    >>> code = make_code("heter", speeds=[1, 2, 3, 4, 4], s=1, k=7)
    >>> [p.size for p in code.placement]
    [1, 2, 3, 4, 4]
    >>> all(code.decode([w for w in range(5) if w != i]).exact for i in range(5))
    True
    """

    name = "heter"
    examples = ({"speeds": [1, 2, 3, 4, 4], "s": 1, "k": 7},
                {"speeds": [1, 1, 2, 2, 3, 3], "s": 2, "k": 6, "seed": 2})

    def __init__(self, speeds, s, k, seed=0):
        support, rng, params = self._setup(speeds, s, k, seed)
        B, C = auxiliary_encode(_holders(support), support.shape[0], self.s, rng)
        self._set(C=readonly(C))
        super().__init__(B, params)

    def _decode(self, received, rng):
        missing = np.setdiff1d(np.arange(self.n_workers), received)
        return auxiliary_decode(self.C, missing)


class HeterGroup(_HeterBase):
    """Group-based coding (paper 3, Sec. V, Alg. 2-3) on the support of ``heter``.

    ``groups``: the retained pairwise-disjoint groups (each covers every partition once; its
    workers send plain sums); ``candidate_groups``: all groups found (bounded search, see
    ``find_groups``); ``outside``: the workers coded by Alg. 1 for ``s - P`` stragglers.
    Robust to any ``s`` stragglers (Thm 6); a fully arrived group decodes by summation.

    >>> from gradcode import make_code
    >>> code = make_code("heter-group", speeds=[2, 2, 1, 1, 2, 2], s=1, k=4)
    >>> code.groups
    ((0, 4, 5), (1, 2, 3))
    >>> d = code.decode([1, 2, 3])
    >>> d.exact, d.weights.round(6).tolist()
    (True, [0.0, 1.0, 1.0, 1.0, 0.0, 0.0])
    """

    name = "heter-group"
    examples = ({"speeds": [1, 2, 3, 4, 4], "s": 1, "k": 7},
                {"speeds": [2, 2, 1, 1, 2, 2], "s": 1, "k": 4})

    def __init__(self, speeds, s, k, seed=0):
        support, rng, params = self._setup(speeds, s, k, seed)
        candidates = tuple(find_groups(support))
        gc = group_encode(support, self.s, rng, groups=prune_groups(candidates))
        self._set(candidate_groups=candidates, _gc=gc, groups=gc.groups,
                  outside=readonly(gc.outside), C=gc.C)
        super().__init__(gc.B, params)

    def _decode(self, received, rng):
        return group_decode(self._gc, received)
