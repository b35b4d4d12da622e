"""Stochastic gradient coding (``stochastic-gc``) -- Bitar, Wootters, El Rouayheb, "Stochastic
gradient coding for straggler mitigation in distributed learning" (2020).

The paper's text was not available to us: the code and its decoder are implemented from the
definition stated in the issue, and no theorem or equation number of the paper is cited here.
The identities the tests check (unbiasedness, the decoding error under independent stragglers)
are derived in this module's docstrings, not taken from the paper.

Notation: ``n`` workers, ``k = n`` partitions, each partition replicated on ``d`` distinct
workers, stragglers independent with probability ``p``.  Every worker sends the plain sum of its
partial gradients (``B`` is 0/1); the decoder does the scaling.

* Placement.  The issue's placement draws each partition's ``d`` workers uniformly at random,
  which may leave a worker with nothing; the contract wants every worker to compute something
  (``load > 0``), so we use a balanced random design instead: every worker holds exactly ``d``
  partitions and every partition sits on exactly ``d`` distinct workers -- the cyclic design
  (worker ``i`` holds partitions ``i .. i + d - 1`` mod ``n``) with its workers and its partitions
  relabelled by two independent uniformly random permutations drawn from
  ``numpy.random.default_rng(seed)`` (``B = P_sigma C_d P_pi``).  Each partition's holder set is
  then a uniformly random *cyclic interval* of a random worker order, not a uniform ``d``-subset;
  nothing below depends on which ``d`` workers they are.
* Decoder (its own): ``w_i = 1 / (d (1 - p))`` on every received worker.  Partition ``j``'s
  coefficient in ``w B`` is ``X_j / (d (1 - p))`` with ``X_j ~ Binomial(d, 1 - p)`` its received
  holders, so ``E[w B] = 1`` (unbiased) and ``E||w B - 1||^2 = sum_j Var(X_j) / (d (1 - p))^2
  = k d p (1 - p) / (d (1 - p))^2 = k p / (d (1 - p))`` (``expected_error``), for every placement
  with ``d`` holders per partition.  ``method="optimal"`` (least squares) is never worse.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ._base import Code, scaled_sum_recovery
from ._checks import check_int, check_size


def check_probability(name: str, value) -> float:
    """A probability ``0 <= value < 1`` (a real number); the error names the parameter, the
    constraint and the value.

    >>> check_probability("p", 0.25), check_probability("p", 0)
    (0.25, 0.0)
    >>> check_probability("p", 1.0)
    Traceback (most recent call last):
    ...
    ValueError: p: expected a number with 0 <= p < 1, got 1.0
    """
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name}: expected a number with 0 <= {name} < 1, got {value!r}")
    value = float(value)
    if not 0.0 <= value < 1.0:                   # NaN fails too
        raise ValueError(f"{name}: expected a number with 0 <= {name} < 1, got {value!r}")
    return value


def balanced_placement(n: int, d: int, rng: np.random.Generator) -> sp.csr_array:
    """``(n, n)`` 0/1: the cyclic design with ``d`` consecutive partitions per worker, its rows
    and its columns permuted uniformly at random (every row and every column holds ``d`` ones).

    >>> B = balanced_placement(5, 2, np.random.default_rng(0)).toarray()
    >>> B.sum(axis=0).tolist(), B.sum(axis=1).tolist()
    ([2.0, 2.0, 2.0, 2.0, 2.0], [2.0, 2.0, 2.0, 2.0, 2.0])
    """
    sigma, pi = rng.permutation(n), rng.permutation(n)
    rows = np.repeat(sigma, d)
    cols = pi[(np.arange(n)[:, None] + np.arange(d)) % n].ravel()
    return sp.csr_array((np.ones(n * d), (rows, cols)), shape=(n, n))


def expected_error(k: int, d: int, p: float) -> float:
    """``E||w B - 1||^2 = k p / (d (1 - p))``: the decoding error of the scaled sum under
    independent stragglers of probability ``p`` (module docstring).

    >>> expected_error(8, 2, 0.2)
    1.0
    """
    return k * p / (d * (1.0 - p))


class StochasticGC(Code):
    """Stochastic gradient coding (Bitar, Wootters, El Rouayheb 2020; module docstring): ``n``
    partitions on ``d`` workers each (a balanced random design: ``d`` per worker too), plain sums
    sent, decoded by ``1 / (d (1 - p))`` times the received sum: unbiased under independent
    stragglers of probability ``p``, with error ``k p / (d (1 - p))`` in expectation.

    >>> from gradcode import make_code
    >>> code = make_code("stochastic-gc", n=5, d=2, p=0.2, seed=0)
    >>> code.B.sum(axis=0).tolist(), code.load.tolist()
    ([2.0, 2.0, 2.0, 2.0, 2.0], [0.4, 0.4, 0.4, 0.4, 0.4])
    >>> d = code.decode([0, 1, 2, 3])     # worker 4 straggled
    >>> d.weights.tolist()
    [0.625, 0.625, 0.625, 0.625, 0.0]
    >>> sorted(d.recovered.tolist())      # 2 partitions lost one holder of their 2
    [0.625, 0.625, 1.25, 1.25, 1.25]
    >>> code.expected_error, code.decode([0, 1, 2, 3], method="optimal").error < d.error
    (0.625, True)
    """

    name = "stochastic-gc"
    decoder = "1 / (d (1 - p)) times the received sum"
    examples = ({"n": 5, "d": 2, "p": 0.2}, {"n": 6, "d": 3, "p": 0.5, "seed": 2},
                {"n": 4, "d": 1, "p": 0.0, "seed": 1})

    def __init__(self, n: int, d: int, p: float, seed: int = 0):
        n = check_int("n", n, minimum=1)
        d = check_int("d", d, minimum=1, maximum=n)
        p = check_probability("p", p)
        seed = check_int("seed", seed, minimum=0)
        check_size(self.name, n * d)
        self._set(d=d, p=p, scale=1.0 / (d * (1.0 - p)))
        B = balanced_placement(n, d, np.random.default_rng(seed))
        super().__init__(B, {"n": n, "d": d, "p": p, "seed": seed})

    @property
    def expected_error(self) -> float:
        """``k p / (d (1 - p))`` for this code (``expected_error``)."""
        return expected_error(self.n_partitions, self.d, self.p)

    def moments(self) -> tuple[np.ndarray, float]:
        """``(E[w B], E||w B - 1||^2)`` of its own decoder over every straggler pattern
        (``pattern_moments``; ``n <= 16``).

        >>> from gradcode import make_code
        >>> mean, err = make_code("stochastic-gc", n=6, d=3, p=0.25).moments()
        >>> bool(np.allclose(mean, 1.0)), round(err, 12)
        (True, 0.666666666667)
        """
        return pattern_moments(self)

    def _decode(self, received, rng):
        w = np.zeros(self.n_workers)
        w[received] = self.scale
        return w

    def recovery_many(self, got):
        """Closed form of the scaled sum: partition ``j`` recovers ``scale`` times its received
        holders; exact where every one is 1 (within ``EXACT_RTOL``), as ``decode`` says.

        >>> from gradcode import make_code
        >>> code = make_code("stochastic-gc", n=4, d=2, p=0.5)    # scale 1: one holder each
        >>> code.placement[1].tolist(), code.placement[2].tolist()
        ([0, 1], [2, 3])
        >>> got = np.array([[1, 1, 1, 1], [0, 1, 1, 0], [0, 0, 0, 0]], bool)
        >>> [x.tolist() for x in code.recovery_many(got)]
        [[1.0, 1.0, 0.0], [4.0, 0.0, 4.0], [False, True, False]]
        """
        got = self._check_got(got)
        return scaled_sum_recovery(self, got, np.full(got.shape[0], self.scale))


def is_unbiased(code: StochasticGC) -> bool:
    """Whether ``E[w B] = 1`` exactly over the ``2^n`` straggler patterns (independent, each
    worker a straggler with probability ``p``; within 1e-12), small ``n`` only.

    >>> from gradcode import make_code
    >>> is_unbiased(make_code("stochastic-gc", n=5, d=2, p=0.3))
    True
    """
    mean, _ = pattern_moments(code)
    return bool(np.all(np.abs(mean - 1.0) <= 1e-12))


def pattern_moments(code: StochasticGC) -> tuple[np.ndarray, float]:
    """``(E[w B], E||w B - 1||^2)`` of the code's own decoder, enumerating every straggler
    pattern ``S`` weighted by ``p^|S| (1 - p)^(n - |S|)`` (``n <= 16``).

    >>> from gradcode import make_code
    >>> mean, err = pattern_moments(make_code("stochastic-gc", n=4, d=2, p=0.5))
    >>> mean.tolist(), err
    ([1.0, 1.0, 1.0, 1.0], 2.0)
    """
    n = check_int("n", code.n_workers, maximum=16)
    masks = np.arange(1 << n)
    got = ((masks[:, None] >> np.arange(n)) & 1).astype(bool)
    r = np.count_nonzero(got, axis=1)
    prob = (1.0 - code.p) ** r * code.p ** (n - r)
    rec = np.zeros((masks.size, code.n_partitions))
    for m in range(masks.size):                      # the decoder itself, pattern by pattern
        rec[m] = code.decode(np.flatnonzero(got[m])).recovered
    return prob @ rec, float(prob @ np.sum((rec - 1.0) ** 2, axis=1))
