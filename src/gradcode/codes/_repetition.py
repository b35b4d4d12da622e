"""Uncoded baselines and fractional repetition (paper 1 "FR"; paper 2 Sec. IV, Alg. 1)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ._base import Code
from ._checks import check_int, check_size
from ._closed import covered_outcome, groups_hit


class Uncoded(Code):
    """Synchronous SGD: worker ``i`` sends ``g_i`` (``B = I``); exact only when all answer.

    >>> from gradcode import make_code
    >>> code = make_code("uncoded", n=3)
    >>> code.B.astype(int).tolist(), code.decode([0, 1, 2]).exact, code.decode([0, 1]).exact
    ([[1, 0, 0], [0, 1, 0], [0, 0, 1]], True, False)
    """

    name = "uncoded"
    examples = ({"n": 5},)
    s = 0

    def __init__(self, n: int):
        n = check_int("n", n, minimum=1)
        check_size(self.name, n)
        super().__init__(sp.identity(n, format="csr"), {"n": n})

    def _decode(self, received, rng):
        w = np.zeros(self.n_workers)
        w[received] = 1.0
        return w

    def recovery_many(self, got):
        """``B = I``: the partitions of the received workers, no decoder needed."""
        got = self._check_got(got)
        return covered_outcome(np.count_nonzero(got, axis=1), self.n_workers)


class Ignore(Uncoded):
    """IS-SGD (paper 2, Fig. 1(c)): sum whatever arrived, ignoring the stragglers (``c = 1``).

    >>> from gradcode import make_code
    >>> d = make_code("ignore", n=4).decode([0, 2, 3])
    >>> d.weights.tolist(), d.recovered_fraction
    ([1.0, 0.0, 1.0, 1.0], 0.75)
    """

    name = "ignore"
    decoder = "the plain sum of whatever arrived"
    examples = ({"n": 6},)
    s = None


def fr_matrix(n: int, c: int) -> sp.csr_array:
    """FR placement: workers in consecutive groups of ``c``; group ``q`` holds partitions
    ``qc .. qc+c-1``; every worker sends the plain sum of its ``c`` partial gradients.

    >>> fr_matrix(4, 2).toarray().astype(int).tolist()
    [[1, 1, 0, 0], [1, 1, 0, 0], [0, 0, 1, 1], [0, 0, 1, 1]]
    """
    group = np.arange(n) // c
    rows = np.repeat(np.arange(n), c)
    cols = (group[:, None] * c + np.arange(c)).ravel()
    return sp.csr_array((np.ones(n * c), (rows, cols)), shape=(n, n))


class FractionalRepetition(Code):
    """What every fractional-repetition code shares (``gc-fr``, ``isgc-fr``, ``frc-approx``):
    groups of ``c`` consecutive workers holding the same ``c`` partitions (``fr_matrix``), paper
    2's Alg. 1 as the decoder, and its recovery in closed form (``c`` partitions per group hit).

    >>> from gradcode import make_code
    >>> code = make_code("isgc-fr", n=6, c=2)
    >>> got = np.array([[1, 0, 0, 0, 1, 1]], bool)        # groups 0 and 2 hit
    >>> isinstance(code, FractionalRepetition), code.recovery_many(got)[1].tolist()
    (True, [2.0])
    """

    c: int

    def _decode(self, received, rng):
        """Paper 2, Alg. 1: one uniformly random received worker from every group that has one."""
        c = self.c
        group = received // c
        order = rng.permutation(received.size)
        _, first = np.unique(group[order], return_index=True)
        w = np.zeros(self.n_workers)
        w[received[order[first]]] = 1.0
        return w

    def recovery_many(self, got):
        """Alg. 1 takes one worker of every group that has one: ``c`` partitions per group hit."""
        got = self._check_got(got)
        return covered_outcome(groups_hit(got, self.c) * self.c, self.n_workers)


class GCFR(FractionalRepetition):
    """Tandon et al. (paper 1) fractional repetition: tolerates any ``s`` stragglers, (s+1) | n.

    Paper 1's figure (``n = 6``, ``s = 2``): two groups of 3 workers, each sending the sum of
    its group's 3 partial gradients; the master adds one worker of each group.

    >>> from gradcode import make_code
    >>> code = make_code("gc-fr", n=6, s=2)
    >>> code.B.astype(int).tolist()[2:4]
    [[1, 1, 1, 0, 0, 0], [0, 0, 0, 1, 1, 1]]
    >>> d = code.decode([2, 3, 4, 5])      # workers 0 and 1 straggled
    >>> d.exact, int(d.weights[:3].sum()), int(d.weights[3:].sum())
    (True, 1, 1)
    """

    name = "gc-fr"
    examples = ({"n": 6, "s": 1}, {"n": 6, "s": 2}, {"n": 4, "s": 3})

    def __init__(self, n: int, s: int):
        n = check_int("n", n, minimum=1)
        s = check_int("s", s, minimum=0, maximum=n - 1)
        if n % (s + 1):
            raise ValueError(f"s: gc-fr needs (s+1) to divide n={n}, got s={s}")
        check_size(self.name, n * (s + 1))
        self._set(s=s, c=s + 1)
        super().__init__(fr_matrix(n, s + 1), {"n": n, "s": s})


class ISGCFR(FractionalRepetition):
    """IS-GC over FR (paper 2, Sec. IV): decodes a maximum set of groups from any workers, c | n
    (proved like ``isgc-cr``'s decoder, ``tests/test_maximum_decoders.py``).

    ``n = 4``, ``c = 2``: groups {0, 1} and {2, 3}; one worker of each rebuilds the sum.

    >>> from gradcode import make_code
    >>> d = make_code("isgc-fr", n=4, c=2).decode([0, 3])
    >>> d.weights.tolist(), d.exact
    ([1.0, 0.0, 0.0, 1.0], True)
    """

    name = "isgc-fr"
    decoder = "decodes a maximum partial sum from any workers"
    examples = ({"n": 8, "c": 2}, {"n": 9, "c": 3})

    def __init__(self, n: int, c: int):
        n = check_int("n", n, minimum=1)
        c = check_int("c", c, minimum=1, maximum=n)
        if n % c:
            raise ValueError(f"c: isgc-fr needs c to divide n={n}, got c={c}")
        check_size(self.name, n * c)
        self._set(c=c)
        super().__init__(fr_matrix(n, c), {"n": n, "c": c})
