"""Tandon et al.'s scheme for *partial* stragglers (paper 1, "Partial Stragglers").

Model: a straggler is at most ``alpha`` times slower than any non-straggler (``alpha >= 1``).
The data is split into a *naive* component (fraction ``x``) and a *coded* component
(fraction ``1 - x``):

* naive: ``n`` equal partitions ``N_1..N_n`` of size ``x / n``; machine ``i`` holds ``N_i`` only
  and sends ``g(N_i)`` uncoded, first;
* coded: ``n`` equal partitions ``D_1..D_n`` of size ``(1 - x) / n`` placed by cyclic repetition
  with ``s + 1`` copies (paper 1, eq. 5: machine ``i`` holds ``D_i..D_{i+s}``) and coded with the
  auxiliary-matrix construction of gc-cr (paper 3, Alg. 1), sent second.

``x`` balances the two speeds: a straggler finishing its naive part (``alpha x / n``) takes as
long as a non-straggler finishing naive + coded (``x / n + (s + 1)(1 - x) / n``), so
``x = (s + 1) / (alpha + s)`` and each machine computes ``(x + (s + 1)(1 - x)) / n`` of the data
(paper 1's figure, ``n = 3, s = 1, alpha = 2``: ``x = 2/3``, load ``2/9 + 2/9 = 4/9``).

Messages, not machines, are the rows of ``B`` (``2n x 2n``, block diagonal):
row ``i < n`` is machine ``i``'s naive message (a 1 on naive partition ``i``), row ``n + i`` its
coded message (gc-cr's row ``i`` on the coded partitions ``n..2n-1``).  ``sender[m]`` is the
machine sending message ``m``.  The full gradient needs *every* naive message and the coded
messages of any ``n - s`` machines; this is what "tolerates ``s`` stragglers" means here.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from ._auxiliary import auxiliary_decode, auxiliary_encode
from ._base import Code, optimal_weights
from ._checks import check_int, check_size, readonly
from ._span import proven_recovery

#: seed of the auxiliary matrix ``C`` of the coded block (fixed, so ``params`` rebuild the code)
CODED_SEED = 0


def naive_fraction(s: int, alpha: float) -> float:
    """``x = (s + 1) / (alpha + s)``: share of the data processed uncoded (paper 1)."""
    return (s + 1) / (alpha + s)


class GCPartial(Code):
    """Tandon's partial-straggler scheme: naive + cyclic-coded components, ``2n`` messages.

    ``n_workers`` counts the ``2n`` messages (rows ``0..n-1`` naive, ``n..2n-1`` coded);
    ``sender`` maps them to the ``n`` machines (``machine_load``: ``x / n + (s + 1)(1 - x) / n``
    each); ``C`` is the auxiliary matrix of the coded block (``C @ B[n:, n:] = 1``).
    Decoding (the scheme's own decoder): weight 1 on every received naive message (naive
    partition ``i`` is only in message ``i``) and, on the coded messages, gc-cr's auxiliary
    weights ``lam C`` when at most ``s`` of them are missing (paper 3, Lemma 2), otherwise least
    squares on the coded block (paper 5, eq. 2).  Since ``B`` is block diagonal this is the
    optimal decoder in every case; it is exact iff all naive messages and at least ``n - s``
    coded ones arrived.

    >>> from gradcode import make_code
    >>> code = make_code("gc-partial", n=3, s=1, alpha=2.0)
    >>> code.n_workers, code.sender.tolist()
    (6, [0, 1, 2, 0, 1, 2])
    >>> code.decode([0, 1, 2, 3, 4]).exact, code.decode([0, 1, 3, 4, 5]).exact
    (True, False)
    """

    name = "gc-partial"
    examples = ({"n": 3, "s": 1, "alpha": 2.0}, {"n": 5, "s": 2, "alpha": 1.5})
    span_decodes = True

    def __init__(self, n: int, s: int, alpha: float):
        n = check_int("n", n, minimum=1)
        s = check_int("s", s, minimum=0, maximum=n - 1)
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.integer, np.floating)):
            raise ValueError(f"alpha: expected a finite number >= 1, got {alpha!r}")
        alpha = float(alpha)
        if not (math.isfinite(alpha) and alpha >= 1.0):
            raise ValueError(f"alpha: expected a finite number >= 1, got {alpha!r}")
        x = naive_fraction(s, alpha)
        check_size(self.name, n * (s + 2))

        holders = (np.arange(n)[:, None] - np.arange(s + 1)) % n    # machines holding D_j
        coded, C = auxiliary_encode(list(holders), n, s, np.random.default_rng(CODED_SEED))
        B = sp.block_diag([sp.identity(n, format="csr"), sp.csr_array(coded)], format="csr")
        self._set(s=s, alpha=alpha, naive_fraction=x, C=readonly(C),
                  sender=readonly(np.tile(np.arange(n), 2)))
        sizes = np.concatenate([np.full(n, x / n), np.full(n, (1.0 - x) / n)])
        super().__init__(B, {"n": n, "s": s, "alpha": alpha}, partition_sizes=sizes)

    def recovery_many(self, got):
        """Closed form wherever at most ``s`` coded messages are missing (the auxiliary weights
        recover the whole coded block, each received naive message its own partition); where
        the coded block needs least squares, exact if the span test proves it (``codes._span``),
        else NaN."""
        got = self._check_got(got)
        n, R = self.n_machines, got.shape[0]
        naive = np.count_nonzero(got[:, :n], axis=1)
        ok = n - np.count_nonzero(got[:, n:], axis=1) <= self.s
        x = self.naive_fraction
        frac = np.where(ok, np.where(naive == n, 1.0, (1.0 - x) + naive * (x / n)), np.nan)
        err = np.where(ok, (n - naive).astype(float), np.nan)
        return proven_recovery(self._span_test, got, frac, err, ok & (naive == n))

    def _falls_back(self, received):
        return False  # a missing naive message costs only its own partition: _decode handles it

    def _decode(self, received, rng):
        """Naive messages with weight 1; the coded block by ``lam C`` when at most ``s`` coded
        messages are missing, else least squares on the coded block (B is block-diagonal, so
        this equals least squares over all messages)."""
        n = self.n_machines
        w = np.zeros(2 * n)
        w[received[received < n]] = 1.0
        coded = received[received >= n] - n
        missing = np.setdiff1d(np.arange(n), coded)
        if missing.size <= self.s:
            w[n:] = auxiliary_decode(self.C, missing)
        elif coded.size:
            w[n:] = optimal_weights(self.B_sparse[n:][:, n:].tocsr(), coded)
        return w
