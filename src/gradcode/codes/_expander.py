"""Approximate gradient coding from a d-regular expander graph (``expander``).

Raviv, Tamo, Tandon, Dimakis, "Gradient coding from cyclic MDS codes and expander graphs"
(ICML 2018; arXiv 1707.03858): ``B = A / d``, the normalized adjacency matrix of a ``d``-regular
graph on the ``n`` workers/partitions (worker ``i`` holds the partitions of its ``d``
neighbours), decoded from the received set ``R`` by the fixed scaling ``w = (n / |R|) 1_R``;
the error is bounded through the graph's second eigenvalue.  Only the paper's abstract and title
page could be read here (the stored copy of arXiv 1707.03858 gave no more): the graph sampler and
the bound below are derived from the standard definitions and carry no theorem numbers of the
paper.  They agree with the authors' code, ``rashisht1/approx_gradient_coding``
(``src/util.py``: ``B = A / d`` of a random ``d``-regular graph, weights ``n / (n - s)``;
``all1_approx_tests.py``: the bound ``(lambda / d) sqrt(n s / (n - s))`` on ``||w B - 1||``,
the square root of ``error_bound``), to rounding on the same graphs
(tests/test_literature_authors.py, also on networkx's ``random_regular_graph``, which they use).

The bound (our derivation, the expander mixing argument).  Let ``lambda`` be the largest
``|eigenvalue|`` of ``A`` other than ``d`` (``A 1 = d 1``), ``r = |R| = n - s``.  Write
``1_R = (r / n) 1 + y`` with ``y`` orthogonal to ``1``, ``||y||^2 = r s / n``; then
``w B - 1 = (n / r) y A / d`` and ``||y A|| <= lambda ||y||``, so for EVERY straggler set of size
``s``::

    ||w B - 1||^2 <= (lambda / d)^2 n s / (n - s)

(``error_bound``).  The least-squares decoder (``method="optimal"``) can only do better.

The graph: a uniformly-ish random simple ``d``-regular graph from ``seed``: the circulant
``C_n(1..d/2)`` (plus the antipodal matching when ``d`` is odd) randomised by ``10 n d`` random
double-edge swaps (degree-preserving, kept simple).  Random regular graphs are near-Ramanujan
(``lambda`` close to ``2 sqrt(d - 1)``) with high probability; ``spectral_lambda`` is computed,
never assumed.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ._base import Code, scaled_sum_recovery
from ._checks import check_int, check_size, readonly


def random_regular_graph(n: int, d: int, rng: np.random.Generator) -> np.ndarray:
    """``(n * d / 2, 2)`` edges of a simple ``d``-regular graph on ``n`` vertices (``n d`` even,
    ``d < n``): a circulant randomised by ``10 n d`` double-edge swaps drawn from ``rng``.

    >>> import numpy as np
    >>> from gradcode.codes._expander import random_regular_graph
    >>> E = random_regular_graph(10, 3, np.random.default_rng(0))
    >>> E.shape, np.bincount(E.ravel(), minlength=10).tolist()
    ((15, 2), [3, 3, 3, 3, 3, 3, 3, 3, 3, 3])
    """
    edges = [(i, (i + k) % n) for k in range(1, d // 2 + 1) for i in range(n)
             if not (2 * k == n and i >= n // 2)]
    if d % 2:
        edges += [(i, i + n // 2) for i in range(n // 2)]
    present = {frozenset(e) for e in edges}
    m = len(edges)
    for _ in range(10 * n * d if m > 1 else 0):
        e1, e2 = rng.integers(m, size=2)
        (a, b), (c, x) = edges[e1], edges[e2]
        if rng.random() < 0.5:
            c, x = x, c
        if len({a, b, c, x}) < 4:
            continue
        new1, new2 = frozenset((a, c)), frozenset((b, x))
        if new1 in present or new2 in present:
            continue
        present -= {frozenset((a, b)), frozenset(edges[e2])}
        present |= {new1, new2}
        edges[e1], edges[e2] = (a, c), (b, x)
    return np.array(edges, dtype=int).reshape(-1, 2)


class Expander(Code):
    """Expander-graph approximate gradient code (Raviv et al., arXiv 1707.03858; module
    docstring): ``B = A / d`` of a random ``d``-regular graph (``seed``), decoded by the fixed
    scaling ``n / |R|`` on the received workers; error ``<= error_bound(s)`` for any ``s``
    stragglers.  Not exact (``s`` is None).

    >>> from gradcode import make_code
    >>> code = make_code("expander", n=10, d=3, seed=1)
    >>> code.load.tolist()[:3], code.B.sum(axis=0).round(12).tolist()[:3]
    ([0.3, 0.3, 0.3], [1.0, 1.0, 1.0])
    >>> d = code.decode([0, 1, 2, 3, 4, 5, 6, 7])          # workers 8 and 9 straggled
    >>> bool(d.error <= code.error_bound(2)), code.decode(range(10)).exact
    (True, True)
    >>> make_code("expander", n=5, d=3)
    Traceback (most recent call last):
    ...
    ValueError: d: expander needs n * d even (a d-regular graph on n vertices), got n=5, d=3
    """

    name = "expander"
    decoder = "the received sum scaled by n / |received| (one-step)"
    examples = ({"n": 8, "d": 3}, {"n": 10, "d": 4, "seed": 2}, {"n": 9, "d": 2, "seed": 1})

    def __init__(self, n: int, d: int, seed: int = 0):
        n = check_int("n", n, minimum=2)
        d = check_int("d", d, minimum=1, maximum=n - 1)
        seed = check_int("seed", seed, minimum=0)
        if (n * d) % 2:
            raise ValueError(f"d: expander needs n * d even (a d-regular graph on n vertices), "
                             f"got n={n}, d={d}")
        check_size(self.name, n * d)
        E = random_regular_graph(n, d, np.random.default_rng(seed))
        rows = np.concatenate([E[:, 0], E[:, 1]])
        cols = np.concatenate([E[:, 1], E[:, 0]])
        A = sp.csr_array((np.full(rows.size, 1.0 / d), (rows, cols)), shape=(n, n))
        self._set(d=d)
        super().__init__(A, {"n": n, "d": d, "seed": seed})

    @property
    def spectral_lambda(self) -> float:
        """``lambda``: the largest ``|eigenvalue|`` of the adjacency matrix ``A = d B`` besides
        the trivial ``d`` (one copy of ``d`` removed; a disconnected graph gives ``d``).

        >>> from gradcode import make_code
        >>> round(make_code("expander", n=4, d=3).spectral_lambda, 12)     # K_4: -1 (x3)
        1.0
        """
        eig = np.sort(np.abs(np.linalg.eigvalsh(self.B * self.d)))
        return float(eig[-2]) if eig.size > 1 else 0.0

    def error_bound(self, s: int) -> float:
        """``(lambda / d)^2 n s / (n - s)``: the fixed-scaling decoder's error
        ``||w B - 1||^2`` with any ``s`` of the ``n`` workers missing (module docstring).

        >>> from gradcode import make_code
        >>> code = make_code("expander", n=4, d=3)
        >>> code.error_bound(0), round(code.error_bound(2), 12)
        (0.0, 0.444444444444)
        """
        n = self.n_workers
        s = check_int("s", s, minimum=0, maximum=n - 1)
        return (self.spectral_lambda / self.d) ** 2 * n * s / (n - s)

    def recovery_many(self, got):
        """The fixed scaling in closed form (``scaled_sum_recovery``): ``n / |R|`` per round."""
        got = self._check_got(got)
        r = np.count_nonzero(got, axis=1)
        return scaled_sum_recovery(self, got, self.n_workers / np.maximum(r, 1))

    def _decode(self, received, rng):
        w = np.zeros(self.n_workers)
        w[received] = self.n_workers / received.size
        return w
