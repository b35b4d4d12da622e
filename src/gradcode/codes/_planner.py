"""The round planner of a single-round code: the ``T = 0`` case of the planner contract that
sequential schemes (paper 4, ``gradcode.sequential.Planner``) keep.

Round ``r`` is job ``r``: every worker computes its row of ``B`` (``perm[i]``'s row with paper 5's
shuffling, a new permutation each round) and the master decodes whatever arrived with the code's
own decoder, so an IS-GC code recovers part of the gradient where an exact one cannot.  Methods:
``assign(r)`` tasks per worker, ``loads(r)`` the load of each worker's task, ``decodes(r,
returned)`` (the ``decodable`` wait policy's test), ``waitout`` (never), ``report(r, returned)``
the jobs decoded (job ``r``, whatever part of it arrived), ``weights(job)`` over
``(round, worker, slot)`` results (length-``slices`` arrays for a sliced code,
``comm-efficient``), ``due(r)`` the record's ``(recovered_fraction, decode_error, exact)`` and
``recovered(job)`` per partition.
"""

from __future__ import annotations

from functools import partial

import numpy as np


def decode_rng(seed: int, round: int) -> np.random.Generator:
    """The generator that breaks decoding ties in ``round`` of a run with ``seed`` (stream 1 of
    ``gradcode.engine.streams``, one child per round: whoever decodes which rounds, ties break
    the same way).

    >>> from gradcode import make_code
    >>> from gradcode.codes import decode_rng
    >>> int(decode_rng(7, 3).integers(1000)) == int(decode_rng(7, 3).integers(1000))
    True
    >>> code = make_code("isgc-cr", n=8, c=2)
    >>> code.decode([0, 1, 2, 3], rng=decode_rng(7, 3)).recovered_fraction
    0.5
    """
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(1, round))))


def result_weights(job: int, workers, w: np.ndarray) -> dict:
    """``{(job, worker, 0): weight}`` over the nonzero ``w`` (one per worker in ``workers``, in
    order): a float, or for a sliced code (``w`` of shape ``(len(workers), m)``) its ``m``
    per-slice weights.  The planner's ``weights(job)`` of a single-round code.

    >>> result_weights(3, [0, 2], np.array([0.5, 0.0]))
    {(3, 0, 0): 0.5}
    """
    if w.ndim == 2:
        return {(job, int(i), 0): x.copy() for i, x in zip(workers, w) if np.any(x)}
    return {(job, int(i), 0): float(x) for i, x in zip(workers, w) if x != 0}


class RoundPlanner:
    T = 0
    rule = None                   # no wait-out rule: every round stands alone

    def __init__(self, code, jobs: int, decode_seed: int = 0, shuffle_rng=None):
        if shuffle_rng is not None and code.n_machines != code.n_workers:
            raise ValueError(f"shuffle: not supported for {code.name} (a machine sends its "
                             "messages in order, so its rows cannot move to other machines)")
        self.code, self.jobs, self._rng = code, jobs, partial(decode_rng, decode_seed)
        self._shuffle = shuffle_rng
        self._rows = code.coefficient_rows      # (d,) or, sliced, (d, slices) coefficients
        self.perm = np.arange(code.n_workers)
        self._load = np.asarray(code.load, float)
        self._decoded: dict[int, object] = {}
        self.decoding = None          # the last round's Decoding

    def extended(self, jobs: int) -> "RoundPlanner":
        """The same planner for a run of ``jobs`` rounds (every round stands alone)."""
        self.jobs = jobs
        return self

    def assign(self, r: int) -> list[list[tuple]]:
        if self._shuffle is not None:
            self.perm = self._shuffle.permutation(self.code.n_workers)
        return [[(r, *self._rows[int(p)])] for p in self.perm]

    def loads(self, r: int) -> np.ndarray:
        return self._load if self._shuffle is None else self._load[self.perm]

    def rows(self, returned) -> np.ndarray:
        """The rows of ``B`` the ``returned`` workers computed."""
        return self.perm[np.asarray(returned, np.int64)]

    def decodes(self, r: int, returned) -> bool:
        return self.code.decode(self.rows(returned), rng=np.random.default_rng(0)).exact

    def waitout(self, r: int, returned) -> bool:
        return False

    def report(self, r: int, returned) -> list[int]:
        returned = np.asarray(returned, np.int64)
        d = self.decoding = self.code.decode(self.rows(returned), rng=self._rng(r))
        kept = result_weights(r, returned, d.weights[self.rows(returned)])
        self._decoded = {r: (kept, d)}
        return [r]

    def weights(self, job: int) -> dict:
        return self._decoded[job][0]

    def recovered(self, job: int) -> np.ndarray:
        return self._decoded[job][1].recovered

    def due(self, r: int) -> tuple[float, float, bool]:
        d = self.decoding
        return d.recovered_fraction, d.error, d.exact
