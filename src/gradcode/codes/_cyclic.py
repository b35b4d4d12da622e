"""Cyclic repetition: Tandon's CR (paper 1, eq. 5) and IS-GC over CR (paper 2, Sec. V)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ._auxiliary import auxiliary_decode, auxiliary_encode
from ._base import Code
from ._checks import check_int, check_size, readonly
from ._closed import arc_mis_sizes, covered_outcome
from ._conflict import circular_greedy
from ._span import proven_recovery


def cyclic_support(n: int, c: int) -> np.ndarray:
    """``(n, c)``: worker ``i`` holds partitions ``i, i+1, .., i+c-1 (mod n)``."""
    return (np.arange(n)[:, None] + np.arange(c)) % n


class GCCR(Code):
    """Tandon CR: cyclic support of width ``s+1``, robust to any ``s`` stragglers, any ``s < n``.

    B is built by the auxiliary-matrix construction of paper 3 (Alg. 1, random ``C`` with
    ``C B = 1``) and decoded in ``O(s^3 + s n)`` from ``lam C`` (paper 3, Lemma 2).

    ``n = 3``, ``s = 1``: the support of paper 1's example (eq. 5), any 2 workers decode.

    >>> from gradcode import make_code
    >>> code = make_code("gc-cr", n=3, s=1)
    >>> (code.B != 0).astype(int).tolist(), code.C.shape
    ([[1, 1, 0], [0, 1, 1], [1, 0, 1]], (2, 3))
    >>> [code.decode(R).exact for R in ([0, 1], [1, 2], [0, 2])]
    [True, True, True]
    """

    name = "gc-cr"
    examples = ({"n": 7, "s": 2}, {"n": 5, "s": 4, "seed": 3}, {"n": 10, "s": 3, "seed": 1})
    span_decodes = True

    def __init__(self, n: int, s: int, seed: int = 0):
        n = check_int("n", n, minimum=1)
        s = check_int("s", s, minimum=0, maximum=n - 1)
        seed = check_int("seed", seed, minimum=0)
        check_size(self.name, n * (s + 1))
        holders = (np.arange(n)[:, None] - np.arange(s + 1)) % n   # workers holding partition j
        B, C = auxiliary_encode(list(holders), n, s, np.random.default_rng(seed))
        self._set(s=s, C=readonly(C))
        super().__init__(B, {"n": n, "s": s, "seed": seed})

    def _decode(self, received, rng):
        missing = np.ones(self.n_workers, bool)
        missing[received] = False
        return auxiliary_decode(self.C, np.flatnonzero(missing))

    def recovery_many(self, got):
        """``Code.recovery_many``, and exact where the span test proves that the received set
        decodes (``codes._span``): missing more than ``s``, a generic ``B`` does not (NaN: the
        decoder runs).

        >>> from gradcode import make_code
        >>> got = np.array([[1, 1, 1, 1, 0, 0], [1, 1, 1, 0, 0, 0]], bool)
        >>> frac, err, exact = make_code("gc-cr", n=6, s=2).recovery_many(got)
        >>> frac.tolist(), exact.tolist()
        ([1.0, nan], [True, False])
        """
        got = self._check_got(got)
        return proven_recovery(self._span_test, got, *super().recovery_many(got))


class ISGCCR(Code):
    """IS-GC over CR (paper 2, Sec. V): plain sums; conflict graph is the circulant
    ``C_n^{1..c-1}`` (Thm 1); decoded by Alg. 2 (greedy from the received workers among ``c``
    consecutive ones after a random received ``u``; Thm 2-3: the largest is maximum).

    Proved: the decoded set is received, conflict-free and of size ``alpha(G[W'])`` for every
    received set of every ``(n, c)`` up to n = 10 (14 in ``make test-all``) and on random sets up
    to n = 200 (``tests/test_maximum_decoders.py``).  Maximum among *0/1* decodings only: where
    ``c`` does not divide ``n`` a real-weighted decoding can recover more (CR(3, 2), all three
    received: half their sum is the full gradient; paper 2's Sec. V-A in the ledger).

    ``n = 4``, ``c = 2``: worker ``i`` holds partitions ``i, i+1 mod 4``; workers 0 and 2 are
    disjoint and cover all four.

    >>> from gradcode import make_code
    >>> d = make_code("isgc-cr", n=4, c=2).decode([0, 1, 2])
    >>> d.weights.tolist(), d.exact
    ([1.0, 0.0, 1.0, 0.0], True)
    """

    name = "isgc-cr"
    decoder = "decodes a maximum partial sum from any workers"
    examples = ({"n": 7, "c": 3}, {"n": 9, "c": 2}, {"n": 4, "c": 4}, {"n": 10, "c": 4})

    def __init__(self, n: int, c: int):
        n = check_int("n", n, minimum=1)
        c = check_int("c", c, minimum=1, maximum=n)
        check_size(self.name, n * c)
        self._set(c=c)
        sup = cyclic_support(n, c)
        B = sp.csr_array((np.ones(n * c), (np.repeat(np.arange(n), c), sup.ravel())), shape=(n, n))
        super().__init__(B, {"n": n, "c": c})

    def recovery_many(self, got):
        """``c alpha(G[W'])`` partitions (Thm 2-3: Alg. 2 finds a maximum independent set)."""
        got = self._check_got(got)
        n, c = self.n_workers, self.c
        return covered_outcome(arc_mis_sizes(got, np.arange(n) + c, c, False) * c, n)

    def _decode(self, received, rng):
        n, c = self.n_workers, self.c
        u = int(received[rng.integers(received.size)])
        window = (u + np.arange(c)) % n
        starts = window[np.isin(window, received)]
        chosen = circular_greedy(received, n, np.arange(n) + c, starts, rng)
        w = np.zeros(n)
        w[chosen] = 1.0
        return w
