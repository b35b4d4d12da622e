"""Conflict graphs and maximum-independent-set decoding of sum codes (paper 2, Sec. V-A).

Two workers *conflict* when their coded gradients cannot be added, i.e. they hold a common
partition.  With plain-sum encoding, any independent set ``I`` of the conflict graph induced on the
received workers ``G[W']`` gives the estimate ``sum_{i in I} coded_i``, a 0/1 recovery of
``c * |I|`` partitions; the best decoder finds a *maximum* independent set.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

#: largest connected component of ``G[W']`` solved exactly by branch and bound
EXACT_COMPONENT_LIMIT = 64


def conflict_graph(B) -> sp.csr_array:
    """Adjacency (0/1, no self loops) of the conflict graph: i ~ j iff rows i, j share support.

    Paper 2, Fig. 4(b): CR with ``n = 4``, ``c = 2`` conflicts along a cycle (Thm 1).

    >>> from gradcode import make_code
    >>> from gradcode.codes import conflict_graph
    >>> conflict_graph(make_code("isgc-cr", n=4, c=2).B).toarray().tolist()
    [[0, 1, 0, 1], [1, 0, 1, 0], [0, 1, 0, 1], [1, 0, 1, 0]]
    """
    S = (sp.csr_array(B) != 0).astype(np.int32)
    G = (S @ S.T).tocsr()
    G.setdiag(0)
    G.eliminate_zeros()
    G.data[:] = 1
    return G


def max_independent_set(G: sp.csr_array, vertices: np.ndarray, rng: np.random.Generator,
                        weights=None):
    """A maximum independent set of ``G[vertices]`` and whether it is proven maximum.

    ``weights`` (one per vertex of ``G``, positive; default 1): a maximum-*weight* set instead
    (a sum code's rows covering different shares of the data).  Components of the induced graph
    are solved separately; a component of at most ``EXACT_COMPONENT_LIMIT`` vertices exactly
    (branch and bound over bitsets, exponential in the worst case), a larger one by a randomised
    greedy by degree per weight (maximal, maybe not maximum).

    Paper 2, Fig. 4(b): with CR (``n = 4``, ``c = 2``) and workers ``W_1, W_2, W_3`` received
    (0, 1, 2 here), the maximum independent set is ``{W_1, W_3}``.

    >>> from gradcode import make_code
    >>> from gradcode.codes import conflict_graph, max_independent_set
    >>> G = conflict_graph(make_code("isgc-cr", n=4, c=2).B)
    >>> chosen, proven = max_independent_set(G, [0, 1, 2], np.random.default_rng(0))
    >>> chosen.tolist(), proven
    ([0, 2], True)
    """
    vertices = np.asarray(vertices, dtype=int)
    if vertices.size == 0:
        return vertices, True
    weight = np.ones(vertices.size) if weights is None else np.asarray(weights, float)[vertices]
    H = G[vertices][:, vertices].tocsr()
    ncomp, labels = connected_components(H, directed=False)
    chosen, proven = [], True
    for comp in range(ncomp):
        members = np.flatnonzero(labels == comp)
        if members.size == 1:
            chosen.append(members)
            continue
        sub = H[members][:, members].tocsr()
        if members.size <= EXACT_COMPONENT_LIMIT:
            best = _exact_mis(sub, weight[members], rng)
        else:
            best, proven = _greedy_mis(sub, weight[members], rng), False
        chosen.append(members[best])
    return np.sort(vertices[np.concatenate(chosen)]), proven


def _exact_mis(adj: sp.csr_array, weight: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    m = adj.shape[0]
    perm = rng.permutation(m)  # random labelling: ties between maximum sets broken at random
    inv = np.argsort(perm)
    nbr = [0] * m
    for a in range(m):
        for b in adj.indices[adj.indptr[perm[a]]:adj.indptr[perm[a] + 1]]:
            nbr[a] |= 1 << int(inv[b])
    w = weight[perm].tolist()
    best = [0.0, 0]  # weight, bitset

    def total(x: int) -> float:
        s = 0.0
        while x:
            low = x & -x
            s += w[low.bit_length() - 1]
            x ^= low
        return s

    def search(cand: int, current: int, value: float) -> None:
        if cand == 0:
            if value > best[0] * (1 + 1e-12):
                best[0], best[1] = value, current
            return
        if value + total(cand) <= best[0] * (1 + 1e-12):
            return
        # branch on a vertex of maximum degree within the candidates
        v, vdeg = -1, -1
        c = cand
        while c:
            low = c & -c
            i = low.bit_length() - 1
            d = bin(nbr[i] & cand).count("1")
            if d > vdeg:
                v, vdeg = i, d
            c ^= low
        if vdeg == 0:
            search(0, current | cand, value + total(cand))
            return
        bit = 1 << v
        search(cand & ~bit & ~nbr[v], current | bit, value + w[v])
        search(cand & ~bit, current, value)

    search((1 << m) - 1, 0, 0.0)
    picked = [i for i in range(m) if best[1] >> i & 1]
    return perm[np.array(picked, dtype=int)]


def _greedy_mis(adj: sp.csr_array, weight: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    m = adj.shape[0]
    alive = np.ones(m, bool)
    deg = (np.diff(adj.indptr) + 1 + rng.random(m) * 0.5) / weight
    picked = []
    for v in np.argsort(deg, kind="stable"):
        if alive[v]:
            picked.append(v)
            alive[v] = False
            alive[adj.indices[adj.indptr[v]:adj.indptr[v + 1]]] = False
    return np.array(picked, dtype=int)


def circular_greedy(received: np.ndarray, n: int, reach: np.ndarray, starts: np.ndarray,
                    rng: np.random.Generator) -> np.ndarray:
    """Largest of the greedy independent sets grown clockwise from each of ``starts``.

    The conflict structure of CR and HR (paper 2, Alg. 2-4) is circular with a monotone *reach*:
    worker ``p`` conflicts with the workers clockwise after it up to ``reach[p] - 1`` (unwrapped
    positions, ``reach[p] > p``) and with none beyond.  From a start ``i`` the greedy keeps
    taking the first received worker at or after the previous one's reach, while that worker's
    reach does not wrap past ``i + n`` (no conflict with the start).  Ties between equally large
    sets are broken at random.  The chains are followed by pointer doubling (the reach is
    monotone, so a chain stops at its first member reaching past its limit): O(|W'| log |W'|)
    NumPy work in all, whatever the number of starts.
    """
    m = received.size
    sentinel = 4 * n                                           # beyond every limit (< 2n)
    pos = np.concatenate([received, received + n])             # unwrapped, sorted
    r = np.concatenate([reach[received], reach[received] + n, [sentinel]])
    jumps = [np.append(np.searchsorted(pos, r[:-1]), 2 * m)]   # next: first received >= reach
    while 1 << len(jumps) < m:
        jumps.append(jumps[-1][jumps[-1]])                     # 2^k steps ahead
    cur = np.searchsorted(received, starts)
    limit = starts + n
    size = np.ones(cur.size, dtype=int)
    for k in range(len(jumps) - 1, -1, -1):
        ahead = jumps[k][cur]
        ok = r[ahead] <= limit
        cur = np.where(ok, ahead, cur)
        size += ok.astype(int) << k
    best = np.flatnonzero(size == size.max())
    pick = best[int(rng.integers(best.size))]
    chain, k = np.searchsorted(received, starts[pick:pick + 1]), 0
    while chain.size < size[pick]:
        chain = np.concatenate([chain, jumps[k][chain]])
        k += 1
    return np.sort(pos[chain[:size[pick]]] % n)
