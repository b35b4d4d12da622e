"""Batched coupon collection (``bcc``) -- Li, Kalan, Avestimehr, Soltanolkotabi, "Near-optimal
straggler mitigation for distributed gradient methods" (2018).

The paper's text was not available to us: the code and its decoder are implemented from the
definition stated in the issue, and no theorem or equation number of the paper is cited here.
The identities the tests check (the closed-form recovery, the expected number of arrivals until
every batch is covered) are derived in this module's docstrings, not taken from the paper.

Notation: ``n`` workers and ``k = n`` data partitions, grouped into ``b = n / r`` batches of ``r``
consecutive partitions (batch ``q`` holds partitions ``qr .. qr + r - 1``).  Each worker holds
ONE batch, drawn uniformly at random and independently of the others
(``numpy.random.default_rng(seed)``), and sends the plain sum of its ``r`` partial gradients
(``B`` is 0/1, load ``r / n``).  A batch may be held by no worker (probability at most
``b (1 - 1/b)^n``): the code is then never exact; it is NOT re-drawn (the draw is the paper's
random placement, and a silent re-draw would change its law).

* Decoder (its own, ``decode(R)``): one received worker of every batch that has one, weight 1
  (the least-squares optimum too: workers of one batch send the same sum); exact iff the
  received workers cover every batch; error ``r`` per batch not covered.
* How long the master waits (coupon collection).  With the workers arriving in a uniformly
  random order, the batches of the arrivals, in arrival order, are iid uniform on the ``b``
  batches (the draws are iid and independent of the order), so the number ``T`` of arrivals
  until every batch is covered is the coupon collector's time, cut at ``n``: with an infinite
  pool of workers ``E[T] = b H_b`` (``H_b = 1 + 1/2 + ... + 1/b``; ``b / (b - c)`` expected
  draws for a new batch once ``c`` are covered).  With ``n`` workers the code covers every
  batch iff ``T <= n``, and ``E[T | T <= n] = b H_b - P(T > n) (E[T | T > n] - E[T | T <= n])``,
  below ``b H_b`` by at most ``E[T; T > n] <= b (n + b) (1 - 1/b)^n`` (``P(T > m) <=
  b (1 - 1/b)^m``): ``3e-20`` for ``n = 400``, ``b = 8``.  ``expected_waited(b, n)`` computes it
  exactly (the chain of the number of batches covered).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ._base import Code
from ._checks import check_int, check_size, readonly


def harmonic(b: int) -> float:
    """``H_b = 1 + 1/2 + ... + 1/b`` (``H_0 = 0``).

    >>> harmonic(1), harmonic(4)
    (1.0, 2.083333333333333)
    """
    return float(np.sum(1.0 / np.arange(1, check_int("b", b, minimum=0) + 1)))


def expected_waited(b: int, n: int | None = None) -> float:
    """Expected number of arrivals (uniformly random order) until every one of ``b`` batches is
    covered: ``b H_b``, the coupon collector (module docstring) with an infinite pool
    (``n=None``); with ``n`` workers, ``E[T | T <= n]`` (the mean over the codes covering every
    batch), from the chain of the number ``c`` of batches covered (a new one with probability
    ``(b - c) / b``).

    >>> round(expected_waited(8), 4), round(8 * harmonic(8), 4)
    (21.7429, 21.7429)
    >>> expected_waited(2, 2)          # two workers, two batches: both needed when covered
    2.0
    >>> round(expected_waited(8, 20), 3)     # conditioned on 20 workers covering all 8
    15.583
    """
    b = check_int("b", b, minimum=1)
    if n is None:
        return b * harmonic(b)
    n = check_int("n", n, minimum=b)
    p = np.zeros(b + 1)            # p[c]: probability that c batches are covered so far
    p[0] = 1.0
    total = mean = 0.0
    stay = np.arange(b + 1) / b
    for m in range(1, n + 1):
        done = p[b - 1] * (1.0 / b)            # the m-th arrival covers the last batch
        total, mean = total + done, mean + m * done
        p[1:] = p[1:] * stay[1:] + p[:-1] * (1.0 - stay[:-1])
        p[0] = 0.0
        p[b] = 0.0                             # finished paths leave the chain
    return float(mean / total)


def draw_batches(n: int, b: int, rng: np.random.Generator) -> np.ndarray:
    """``(n,)`` batch index of each worker, iid uniform on ``0 .. b - 1``.

    >>> draw_batches(6, 3, np.random.default_rng(0)).tolist()
    [2, 1, 1, 0, 0, 0]
    """
    return rng.integers(0, b, n)


def batch_matrix(batches: np.ndarray, r: int, b: int) -> sp.csr_array:
    """BCC's ``B``, ``(workers, b r)``: worker ``i`` holds the ``r`` partitions of batch
    ``batches[i]`` (0/1).

    >>> batch_matrix(np.array([1, 0, 1]), 2, 2).toarray().astype(int).tolist()
    [[0, 0, 1, 1], [1, 1, 0, 0], [0, 0, 1, 1]]
    """
    n = batches.size
    rows = np.repeat(np.arange(n), r)
    cols = (batches[:, None] * r + np.arange(r)).ravel()
    return sp.csr_array((np.ones(n * r), (rows, cols)), shape=(n, b * r))


class BCC(Code):
    """Batched coupon collection (Li, Kalan, Avestimehr, Soltanolkotabi 2018; module docstring):
    ``b = n / r`` batches of ``r`` consecutive partitions, each worker holding one batch drawn
    uniformly at random (``seed``) and sending the plain sum of its partial gradients.  Its own
    decoder takes one received worker of every batch that has one; exact iff every batch is
    covered by the received workers.  ``batches[i]`` is worker ``i``'s batch.

    >>> from gradcode import make_code
    >>> code = make_code("bcc", n=6, r=2, seed=0)
    >>> code.batches.tolist(), code.b
    ([2, 1, 1, 0, 0, 0], 3)
    >>> code.B.astype(int).tolist()[:2]
    [[0, 0, 0, 0, 1, 1], [0, 0, 1, 1, 0, 0]]
    >>> d = code.decode([0, 1, 3])        # batches 2, 1, 0: every batch covered
    >>> d.exact, d.weights.tolist()
    (True, [1.0, 1.0, 0.0, 1.0, 0.0, 0.0])
    >>> d = code.decode([1, 2, 5])        # batches 1, 1, 0: batch 2's 2 partitions lost
    >>> d.exact, d.error, d.recovered_fraction
    (False, 2.0, 0.6666666666666666)
    """

    name = "bcc"
    decoder = "one received worker of every batch that has one"
    own_wait = ("covered", "batched coupon collection: stop once the received workers hold every "
                "batch")
    examples = ({"n": 6, "r": 2}, {"n": 8, "r": 2, "seed": 3}, {"n": 6, "r": 3, "seed": 1})

    def __init__(self, n: int, r: int, seed: int = 0):
        n = check_int("n", n, minimum=1)
        r = check_int("r", r, minimum=1, maximum=n)
        if n % r:
            raise ValueError(f"r: bcc needs r to divide n={n}, got r={r}")
        seed = check_int("seed", seed, minimum=0)
        check_size(self.name, n * r)
        batches = readonly(draw_batches(n, n // r, np.random.default_rng(seed)))
        self._set(r=r, b=n // r, batches=batches)
        super().__init__(batch_matrix(batches, r, n // r), {"n": n, "r": r, "seed": seed})

    @property
    def covers_all(self) -> bool:
        """Whether every batch is held by some worker (else the code is never exact).

        >>> from gradcode import make_code
        >>> make_code("bcc", n=6, r=2, seed=0).covers_all
        True
        """
        return bool(np.unique(self.batches).size == self.b)

    def expected_waited(self, finite: bool = False) -> float:
        """Expected arrivals (uniformly random order) until every batch is covered: ``b H_b``
        (``expected_waited(b)``), or with ``finite`` ``E[T | T <= n]`` for this ``n``.

        >>> from gradcode import make_code
        >>> code = make_code("bcc", n=400, r=50)
        >>> round(code.expected_waited(), 4), round(code.expected_waited(finite=True), 4)
        (21.7429, 21.7429)
        """
        return expected_waited(self.b, self.n_workers if finite else None)

    def _decode(self, received, rng):
        """One uniformly random received worker of every batch that has one."""
        order = rng.permutation(received.size)
        _, first = np.unique(self.batches[received[order]], return_index=True)
        w = np.zeros(self.n_workers)
        w[received[order[first]]] = 1.0
        return w

    def recovery_many(self, got):
        """Closed form: ``fraction = covered / b``, ``error = r (b - covered)``, exact iff all
        ``b`` batches are covered, per row of ``got``.

        >>> from gradcode import make_code
        >>> code = make_code("bcc", n=6, r=2, seed=0)          # batches [2, 1, 1, 0, 0, 0]
        >>> got = np.array([[1, 1, 0, 1, 0, 0], [0, 1, 1, 0, 0, 1]], bool)
        >>> [x.tolist() for x in code.recovery_many(got)]
        [[1.0, 0.6666666666666666], [0.0, 2.0], [True, False]]
        """
        got = self._check_got(got)
        covered = batches_covered(got, self.batches, self.b)
        return covered / self.b, (self.r * (self.b - covered)).astype(float), covered == self.b


def batches_covered(got: np.ndarray, batches: np.ndarray, b: int) -> np.ndarray:
    """Per row of ``got (R, n)``, the number of batches (``batches[i]``: worker ``i``'s, out of
    ``b``) held by a received worker.

    >>> batches_covered(np.array([[1, 0, 1], [0, 1, 0]], bool), np.array([0, 1, 0]), 3).tolist()
    [1, 1]
    """
    order = np.argsort(batches, kind="stable")
    present, starts = np.unique(batches[order], return_index=True)
    if got.shape[0] == 0 or present.size == 0:
        return np.zeros(got.shape[0], np.int64)
    hit = np.logical_or.reduceat(got[:, order], starts, axis=1)
    return np.count_nonzero(hit, axis=1)
