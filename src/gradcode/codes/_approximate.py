"""Approximate gradient codes from sparse random graphs: the Bernoulli gradient code (``bgc``) and
approximate fractional repetition (``frc-approx``) -- Charles, Papailiopoulos, Ellenberg,
"Approximate gradient coding via sparse random graphs" (2017, arXiv:1711.06771).

The paper's text was not available to us (searched: arXiv 1711.06771, the paper's title, "Bernoulli
gradient code", "one-step decoding", the Nemotron-CC-Math pages): both codes and both decoders are
implemented from their definitions as stated in issue 22, and no theorem or equation number of the
paper is cited here.  The identities the tests check (expectation and mean squared error of
one-step decoding over uniformly random straggler sets, FRC's optimal error) are derived in this
module's docstrings, not taken from the paper.  ``frc-approx``'s placement and its optimal
decoding agree with the authors' own approximate FRC in ``hwang595/ErasureHead``
(``src/approximate_coding.py``: groups of ``d`` workers holding the group's ``d`` partitions; the
master adds the first message of each group) on every received set tried
(tests/test_literature_authors.py).

Notation: ``n`` workers and ``n`` partitions (as issue 22 defines the codes), ``d`` the (expected)
number of partitions per worker; a worker sends the plain sum of its partial gradients (``B`` is
0/1).  One deviation from the issue's BGC: a worker never holds nothing (``BGC``, ``bernoulli_rows``:
each entry is still 1 with probability ``d / n``, but the entries of a row are not independent).

* One-step decoding (the paper's decoder, ``decode(R, method="one-step")``):
  a fixed scaling of the received sum, ``w = n / (d r) 1_R`` for ``r = |R|`` received workers.
  With the ``n - r`` stragglers a uniformly random set, ``E[w_R B] = colsum(B) / d`` (each worker
  is received with probability ``r / n``): exactly the all-ones vector for FRC, and for BGC in
  expectation over ``B`` too (``E[colsum] = d``).  Its mean squared error over those sets is
  ``sum_j c^2 r (m_j/n)(1 - m_j/n)(n - r)/(n - 1) + (m_j/d - 1)^2`` with ``c = n / (d r)`` and
  ``m = colsum(B)`` (a hypergeometric variance plus the bias), for FRC
  ``n (n - d)(n - r) / (d r (n - 1))``; the tests check both exhaustively.
* Optimal decoding (least squares, ``method="optimal"``, every code): ``min ||w_R B_R - 1||^2``.

The codes' own decoders (``method=None``, what the simulator and the trainer use) are optimal:
least squares for BGC, one survivor per group for FRC (the same error).  One-step decoding is
kept by name rather than as the default because its exactness is not monotone in the received
set (FRC: balanced groups at 4 arrivals, unbalanced at 5), which the ``decodable`` wait policy
and the simulator's fast path assume
(``engine._wait.first_decodable`` searches by bisection).
"""

from __future__ import annotations

from functools import cached_property

import numpy as np
import scipy.sparse as sp

from ._base import EXACT_RTOL, Code
from ._checks import check_int, check_size
from ._downdate import least_squares_factors, least_squares_recovery
from ._repetition import FractionalRepetition, fr_matrix


class _OneStep(Code):
    """Shared by both codes: the paper's one-step decoding, by name, and in closed form."""

    methods = ("one-step",)
    d: int

    def one_step_weights(self, received) -> np.ndarray:
        """One-step decoding weights: ``n / (d |R|)`` on every received worker, 0 elsewhere
        (``decode(received, method="one-step")``).

        >>> from gradcode import make_code
        >>> make_code("frc-approx", n=4, d=2).one_step_weights([0, 2, 3]).round(3).tolist()
        [0.667, 0.0, 0.667, 0.667]
        """
        R = self._check_received(received)
        w = np.zeros(self.n_workers)
        if R.size:
            w[R] = self.n_workers / (self.d * R.size)
        return w

    def _decode_method(self, method, received, rng):
        return self.one_step_weights(received)          # method == "one-step"



def row_probability(n: int, d: int) -> float:
    """The ``q`` with ``q / (1 - (1 - q)^n) = d / n``: iid Bernoulli(``q``) entries conditioned on
    their row being nonzero hold each partition with probability exactly ``d / n`` (``d = 1``: 0,
    one uniformly random partition per row; ``d = n``: 1).

    >>> row_probability(10, 1), row_probability(10, 10), round(row_probability(10, 2), 4)
    (0.0, 1.0, 0.1683)
    """
    if d >= n:
        return 1.0
    lo, hi = 0.0, d / n                      # f(q) = q / (1 - (1 - q)^n) increases from 1/n
    for _ in range(200):
        q = (lo + hi) / 2
        if q / -np.expm1(n * np.log1p(-q)) < d / n:
            lo = q
        else:
            hi = q
    return lo if d > 1 else 0.0


def bernoulli_rows(n: int, d: int, rng: np.random.Generator) -> np.ndarray:
    """``(n, n)`` bool, each row iid Bernoulli(``q = row_probability(n, d)``) entries conditioned
    on the row being nonzero, drawn exactly: its first 1 from the truncated geometric law, the
    entries after it iid Bernoulli(``q``).  Every entry is 1 with probability ``d / n``.

    >>> rows = bernoulli_rows(5, 2, np.random.default_rng(0))
    >>> rows.shape, bool(rows.any(axis=1).all())
    ((5, 5), True)
    """
    q = row_probability(n, d)
    if q >= 1.0:
        return np.ones((n, n), bool)
    u = rng.random(n)
    if q == 0.0:
        first = np.floor(u * n)
    else:
        first = np.floor(np.log1p(u * np.expm1(n * np.log1p(-q))) / np.log1p(-q))
    first = np.minimum(first.astype(np.int64), n - 1)
    B = (rng.random((n, n)) < q) & (np.arange(n) > first[:, None])
    B[np.arange(n), first] = True
    return B


class BGC(_OneStep):
    """Bernoulli gradient code (Charles, Papailiopoulos, Ellenberg 2017): worker ``i`` holds
    partition ``j`` with probability ``d / n``, independently in the issue's definition
    (``B[i, j] ~ Bernoulli(d / n)``; here drawn from ``numpy.random.default_rng(seed)``), and sends
    the plain sum of what it holds.  A partition may be held by nobody; a worker may not hold
    nothing (the contract wants every
    worker to compute something), so each row of ``B`` is drawn as iid Bernoulli(``q``) entries
    conditioned on the row being nonzero, with ``q = row_probability(n, d)`` chosen so that each
    entry is still 1 with probability exactly ``d / n`` (``bernoulli_rows``): ``E[colsum(B)] = d``
    and one-step decoding stays unbiased over ``B`` and the stragglers.  (The unconditioned draw,
    ``q = d / n``, leaves a worker idle with probability ``(1 - d/n)^n``, about ``e^{-d}``.)

    Decoded by least squares (its own decoder and ``method="optimal"``) or by the paper's
    one-step decoding (``method="one-step"``: ``n / (d r)`` times the received sum).
    Approximate: ``s`` is None (``d = n`` holds everything everywhere: exact from any worker).

    >>> from gradcode import make_code
    >>> code = make_code("bgc", n=6, d=2, seed=1)
    >>> code.B.sum(axis=0).astype(int).tolist()     # how many workers hold each partition
    [2, 4, 0, 3, 0, 2]
    >>> one = code.decode([0, 1, 2, 3], method="one-step")    # workers 4 and 5 straggled
    >>> one.weights.tolist(), float(one.error)
    ([0.75, 0.75, 0.75, 0.75, 0.0, 0.0], 2.8125)
    >>> float(code.decode([0, 1, 2, 3]).error)      # least squares; nobody holds 2 and 4
    2.0
    """

    name = "bgc"
    examples = ({"n": 6, "d": 2}, {"n": 8, "d": 3, "seed": 2}, {"n": 5, "d": 5, "seed": 1})
    span_decodes = True

    def __init__(self, n: int, d: int, seed: int = 0):
        n = check_int("n", n, minimum=1)
        d = check_int("d", d, minimum=1, maximum=n)
        seed = check_int("seed", seed, minimum=0)
        check_size(self.name, n * n)
        self._set(d=d)
        B = bernoulli_rows(n, d, np.random.default_rng(seed))
        super().__init__(sp.csr_array(B.astype(float)), {"n": n, "d": d, "seed": seed})

    @cached_property
    def _least_squares(self):
        """The full set's least-squares factors (``codes._downdate``), None where ``B`` has
        none (too large, or a rank that is not clear-cut)."""
        return least_squares_factors(self.B_sparse)

    def recovery_many(self, got):
        """Least squares per round by downdating the full set (``codes._downdate``): with
        ``B`` of full row rank and ``D`` the missing workers, ``w = u - H[:, D] H_DD^{-1} u_D``
        (``H = (B B^T)^{-1}``, ``u = H B 1``), an ``|D| x |D|`` system a round; a round whose
        answer is not trusted (an ill-conditioned or rank-deficient part, an exactness within
        reach of the decoder's rounding) goes to the decoder (NaN).  n = 256, d = 16: a few
        microseconds a round against lstsq's milliseconds.

        >>> from gradcode import make_code
        >>> code = make_code("bgc", n=8, d=3, seed=2)
        >>> got = np.array([[1, 1, 1, 1, 1, 1, 0, 0]], bool)
        >>> frac, err, exact = code.recovery_many(got)
        >>> d = code.decode(np.flatnonzero(got[0]))
        >>> bool(np.isclose(err[0], d.error)), bool(np.isclose(frac[0], d.recovered_fraction))
        (True, True)
        """
        got = self._check_got(got)
        f = self._least_squares
        if f is None:
            return super().recovery_many(got)              # NaN: the decoder must run
        return least_squares_recovery(f, got, self._row_max, self.partition_sizes, EXACT_RTOL)


class FRCApprox(_OneStep, FractionalRepetition):
    """Approximate fractional repetition (Charles, Papailiopoulos, Ellenberg 2017): the ``n``
    workers in ``n / d`` groups of ``d`` consecutive ones; every worker of group ``q`` holds the
    same ``d`` partitions ``qd .. qd + d - 1`` and sends their plain sum (``d | n``; load ``d / n``).

    Its own decoder takes one uniformly random survivor of every group that has one (as
    ``gc-fr``): the least-squares optimum, error ``d`` times the number of groups without a
    survivor, so exact whenever every group has one (any ``d - 1`` stragglers).  One-step decoding
    (``method="one-step"``) recovers ``n r_q / (d r)`` of each partition of group ``q`` (``r_q`` of
    its workers among the ``r`` received): exact when every group has its share
    ``r_q = d r / n``, unbiased over uniformly random stragglers.

    >>> from gradcode import make_code
    >>> code = make_code("frc-approx", n=6, d=3)
    >>> code.B.astype(int).tolist()[2:4]
    [[1, 1, 1, 0, 0, 0], [0, 0, 0, 1, 1, 1]]
    >>> one = code.decode([0, 1, 3, 4], method="one-step")   # two survivors in each group
    >>> one.exact, one.weights.tolist()
    (True, [0.5, 0.5, 0.0, 0.5, 0.5, 0.0])
    >>> code.decode([0, 3, 4], method="one-step").recovered.round(3).tolist()   # unbalanced
    [0.667, 0.667, 0.667, 1.333, 1.333, 1.333]
    >>> d = code.decode([0, 3, 4])            # its own: one survivor per group, exact
    >>> d.exact, int(d.weights[:3].sum()), int(d.weights[3:].sum())
    (True, 1, 1)
    """

    name = "frc-approx"
    decoder = "one received worker of every group that has one"
    examples = ({"n": 6, "d": 2}, {"n": 6, "d": 3}, {"n": 8, "d": 4})

    def __init__(self, n: int, d: int):
        n = check_int("n", n, minimum=1)
        d = check_int("d", d, minimum=1, maximum=n)
        if n % d:
            raise ValueError(f"d: frc-approx needs d to divide n={n}, got d={d}")
        check_size(self.name, n * d)
        self._set(d=d, c=d)
        super().__init__(fr_matrix(n, d), {"n": n, "d": d})
