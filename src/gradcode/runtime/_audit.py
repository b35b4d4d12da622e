"""``--audit``: the master checks every decoded gradient against what the decoding claims.

For each decoded job the engine's loop works out, from the tasks the workers were given and the
decoding weights of the vectors it used, the coefficient ``a_j`` that the decoded sum claims for
each partition's gradient (``(B^T w)_j`` for a single-round code, 1 for each partition a sum code
recovered).  The ``Auditor`` recomputes ``sum_j a_j g_j`` itself, in float64, from the model
parameters the workers were sent and the master's own copy of the data (the same mini-batches
and forward randomness: they are seeded by run, job and partition), normalises it as the
learner does (``TorchLearner.normaliser``), and reports the relative error of the gradient the
learner applied.  It holds at float32 rounding when the runtime is right; a lost, stale or mixed
result shows up as an error of order 1.  A code sending coded slices (``comm-efficient``) claims ``(k, m, m)`` coefficients
(slice ``v`` of ``g_j`` in slice ``u`` of the decoded gradient): the reference is rebuilt slice
by slice from each partition's float64 gradient.
"""

from __future__ import annotations

import numpy as np

from ._worker import GradientWorker, cut


class Auditor:
    """``reference(step, params, claimed)`` at the parameters the job was computed at, and
    ``error(applied, reference)`` of the gradient the learner applied (the engine's ``audit``
    hook)."""

    def __init__(self, model, objective, layout, partitions: dict, normaliser, seed: int,
                 batch: int | None, device: str = "cpu", micro_batch: int | None = None,
                 precision: str = "float32", loader_workers: int = 0):
        self.replica = GradientWorker(-1, model, objective, layout, partitions, seed, batch,
                                      np.float64, device, micro_batch=micro_batch,
                                      precision=precision, loader_workers=loader_workers)
        self.normaliser = normaliser

    def reference(self, step, params, claimed: np.ndarray) -> np.ndarray | None:
        """``sum_j claimed_j g_j`` times the learner's ``normaliser`` (float64), None when
        nothing is covered."""
        norm = self.normaliser(step)
        parts = np.flatnonzero(np.any(claimed.reshape(len(claimed), -1), axis=1))
        if norm is None or not len(parts):
            return None
        if claimed.ndim == 3:
            return self._sliced(step.job, params, parts, claimed) * norm
        task = [(step.job, parts, claimed[parts])]
        return self.replica.compute(step.job, params, task).coded[0] * norm

    def _sliced(self, job: int, params, parts, claimed: np.ndarray) -> np.ndarray:
        """A sliced code (``claimed (k, m, m)``, ``Loop.claimed``): slice ``u`` of the reference
        is ``sum_j sum_v claimed[j, u, v] slice_v(g_j)``, from each ``g_j`` in float64."""
        out, l = 0.0, 0
        for j in parts:
            g = self.replica.compute(job, params, [(job, [int(j)], [1.0])]).coded[0]
            out = out + claimed[j] @ cut(g, claimed.shape[1])
            l = len(g)
        return out.reshape(-1)[:l]

    @staticmethod
    def error(applied: np.ndarray, reference: np.ndarray) -> float:
        """``||applied - reference|| / ||reference||``."""
        ref = np.asarray(reference, np.float64)
        diff = np.asarray(applied, np.float64) - ref
        return float(np.linalg.norm(diff) / max(np.linalg.norm(ref), np.finfo(float).tiny))
