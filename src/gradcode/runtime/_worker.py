"""A logical worker: the data partitions its placement gives it, a model replica, and the coded
gradient computation of one round.

Each task is a list of mini-tasks ``(job, partitions, coefficients)``; for a single-round code the
task is ``[(round, placement[i], B[i, placement[i]])]``.  A code sending coded slices
(``slices = m > 1``, ``comm-efficient``) gives ``(d, m)`` coefficient rows: the worker cuts each
partial gradient into ``m`` zero-padded slices (``cut``) and sends one vector of ``ceil(l / m)``.
A message encoded in float64 (real coefficients) goes on a float32 wire rounded once; the worker
keeps the residual ``m - fl32(m)`` of its last ``keep`` rounds' messages for the master
(``residual``; ``analysis.refine``) and reports its norm (``Result.rounding``).
The mini-batch of partition ``j`` in round ``t`` is drawn with the seed ``(run seed, t, j)``, and
so are the random numbers of its forward (dropout: ``Layout``), so every copy of a partition
computes the same partial gradient, bit for bit (otherwise decoding is silently wrong).  A
non-finite loss or gradient is the user's error, saying whether the data or the model made it.

Multi-model pipelining (paper 4, App. I): ``params`` may hold ``M`` parameter vectors (an
``(M, P)`` array or a list), and each mini-task then names the one it is computed at as a fourth
element ``(job, partitions, coefficients, model)``.  The seed's ``t`` is the mini-task's job
(the round, for single-round codes), so every copy of a partition in a job, reattempts in later
rounds included, computes the same mini-batch.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, replace

import numpy as np
import torch

from ..engine import Outcome, Result, is_user_error, user_error
from ._data import Lazy, forward, index, rows_of, tensors, to
from ._layout import Replica


def batch_indices(size: int, batch: int | None, seed: int, round: int, partition: int) -> np.ndarray:
    """The rows of partition ``partition`` used in ``round`` (all of them when ``batch`` is None)."""
    if batch is None or batch >= size:
        return np.arange(size)
    return np.random.default_rng([seed, round, partition]).choice(size, batch, replace=False)


def cut(vector, m: int):
    """``(m, ceil(l / m))``: a flat vector (tensor or array) zero-padded to a multiple of ``m``
    and cut into ``m`` consecutive slices (what a sliced code's messages combine).

    >>> cut(np.arange(5.0), 2).tolist()
    [[0.0, 1.0, 2.0], [3.0, 4.0, 0.0]]
    """
    l = vector.shape[0]
    L = -(-l // m)
    if isinstance(vector, torch.Tensor):
        out = vector.new_zeros(m * L)
    else:
        out = np.zeros(m * L, np.asarray(vector).dtype)
    out[:l] = vector
    return out.reshape(m, L)


class GradientWorker:
    """Computes ``sum_j coeff_j * g_j`` over its partitions with a private model replica, in
    training mode; ``g_j`` is the gradient of partition ``j``'s sum form (``Objective``), and
    each mini-task's ``stats`` has a row per partition (its loss denominator, which parameters
    got a gradient, the buffers its forward left: ``Layout``)."""

    def __init__(self, index: int, model, objective, layout, partitions: dict, seed: int,
                 batch: int | None, dtype=np.float64, device: str = "cpu", keep: int = 1,
                 rows: dict | None = None, micro_batch: int | None = None):
        self.index, self.device = index, torch.device(device)
        self.model = copy.deepcopy(model).to(self.device).train()
        self.objective, self.layout = objective, layout
        self.replica = Replica(self.model, layout, self.device)
        # partition -> (X, y) tensors held by this worker (a Dataset's rows materialised here),
        # on the worker's device; the coded result comes back to the CPU
        self.partitions = {}
        for j, p in partitions.items():
            try:
                X, y = rows_of(p)
                self.partitions[j] = (to(X, self.device), y.to(self.device))
            except Exception as exc:
                if is_user_error(exc):
                    exc.add_note(f"gradcode: while worker {index} loaded partition {j}")
                raise
        self.seed, self.batch, self.dtype = seed, batch, dtype
        self.rows, self.micro_batch = rows or {}, micro_batch
        self.keep = keep
        self.round = 0
        self.residuals: dict[int, dict] = {}     # round -> mini-task -> residual (a tensor)

    def partial(self, job: int, j: int) -> tuple[torch.Tensor, float, np.ndarray]:
        """Gradient (of the sum form over the mini-batch), loss sum and stats row of partition
        ``j`` in job ``job``; accumulated over micro-batches of at most ``micro_batch`` rows
        (sums and denominators add up: the one-pass gradient, for a model without
        batch-dependent layers)."""
        X, y = self.partitions[j]
        idx = None
        if self.batch is not None and self.batch < len(y):
            idx = torch.from_numpy(batch_indices(len(y), self.batch, self.seed, job, j))
            rows = idx.to(self.device)
            X, y = index(X, rows), y[rows]
        rep = self.replica
        rep.reset()
        for p in rep.params:
            p.grad = None
        loss = D = 0.0
        step = self.micro_batch or max(len(y), 1)
        try:
            with rep.seeded(self.seed, job, j):
                for a in range(0, len(y), step):
                    part = slice(a, a + step)
                    S, d = self.objective.split(forward(self.model, index(X, part)), y[part])
                    S.backward()
                    loss, D = loss + float(S.detach()), D + d
        except Exception as exc:            # the user's model or loss: theirs, with where
            raise user_error(exc, f"the model or loss of worker {self.index} on partition {j} "
                                  f"({len(y)} samples) in job {job}") from None
        g, used = rep.gradient()
        if not (math.isfinite(loss) and bool(torch.isfinite(g.sum()))):
            raise self._non_finite(job, j, X, y, idx, loss)
        return g, loss, rep.row(D, used)

    def _non_finite(self, job, j, X, y, idx, loss) -> BaseException:
        """The user's error for a non-finite loss or gradient: where, and whether the data or
        the model produced it."""
        what = "loss" if not math.isfinite(loss) else "gradient"
        bad = [torch.nonzero(~torch.isfinite(t.reshape(len(t), -1)).all(1)).flatten().tolist()
               for t in tensors(X) + [y] if t.is_floating_point()]
        bad = sorted(k for ks in bad for k in ks)
        if bad:
            k = bad[0] if idx is None else int(idx[bad[0]])
            rows = self.rows.get(j)
            sample = f"sample {int(rows[k])}" if rows is not None else f"row {k} of the partition"
            cause = f"the data: {sample} holds a non-finite value"
        elif not all(bool(torch.isfinite(p).all()) for p in self.replica.params):
            cause = ("the model: its parameters are not finite (training diverged: try a smaller "
                     "learning rate)")
        else:
            cause = "the model: finite data and parameters gave it"
        where = f"round {self.round}" + (f" (job {job})" if job != self.round else "")
        exc = FloatingPointError(f"non-finite {what} in {where}, worker {self.index}, partition "
                                 f"{j}: {cause}")
        return user_error(exc, f"worker {self.index} on partition {j} in job {job}")

    def warm_up(self) -> None:
        """One forward and backward pass on two rows (torch's per-thread start-up); a failure
        is left for the first round to report."""
        torch.set_num_threads(1)
        for X, y in self.partitions.values():
            if len(y) >= 2:
                try:
                    self.objective.split(forward(self.model, index(X, slice(0, 2))),
                                         y[:2])[0].backward()
                except Exception:
                    pass
                for p in self.model.parameters():
                    p.grad = None
                return

    def compute(self, round: int, params, task) -> Result:
        """One coded vector per mini-task; ``params`` one vector, or ``M`` of them with each
        mini-task naming its own (module docstring)."""
        self.round = round
        stacked = isinstance(params, (list, tuple)) or np.ndim(params) == 2
        if not stacked:
            self.replica.load(params)
        loaded = None
        coded, losses, rounding, kept, stats = [], [], [], {}, []
        wire = torch.float64 if self.dtype == np.float64 else torch.float32
        for mini in task:
            job, parts, coeffs = mini[:3]
            if stacked and len(mini) < 4:
                raise ValueError("task: with several parameter vectors, each mini-task names one")
            if stacked and len(parts) and loaded != int(mini[3]):
                loaded = int(mini[3])            # the vector of this mini-task's model
                self.replica.load(params[loaded])
            sliced = np.ndim(coeffs) == 2        # (d, m) coefficient rows: coded slices
            acc, lacc, rows = (self._sliced if sliced else self._combined)(job, parts, coeffs,
                                                                            wire)
            msg = acc.to(wire) if acc is not None else None
            rho = 0.0
            if msg is not None and msg.dtype != acc.dtype:          # rounded for the wire
                e = acc - msg.to(acc.dtype)
                rho = float(torch.linalg.vector_norm(e))
                if rho > 0:
                    kept[len(coded)] = e.to(wire)      # where it was computed, until asked
            coded.append(msg.cpu().numpy() if msg is not None else None)
            losses.append(lacc)
            rounding.append(rho)
            stats.append(np.stack(rows) if rows else None)
        self._keep(round, kept)
        return Result(round, self.index, coded, losses, rounding=rounding, stats=stats)

    def _keep(self, round: int, kept: dict) -> None:
        """Keep this round's residuals, forget those of rounds ``keep`` or more before it."""
        for r in [r for r in self.residuals if r <= round - self.keep]:
            del self.residuals[r]
        if kept:
            self.residuals[round] = kept

    def residual(self, round: int, k: int) -> np.ndarray:
        """``m - fl32(m)`` of mini-task ``k``'s message of ``round`` (float32)."""
        try:
            return self.residuals[round][k].cpu().numpy()
        except KeyError:
            raise LookupError(f"worker {self.index} keeps no residual of round {round}, "
                              f"mini-task {k}") from None

    def _combined(self, job, parts, coeffs, wire):
        """``(sum_j c_j g_j, sum_j c_j loss_j)``: a plain sum accumulates in the wire dtype;
        real coefficients in float64, rounded to the wire dtype once at the end (float32 on
        the wire for every code)."""
        tdtype = wire if all(c == 1.0 for c in coeffs) else torch.float64
        acc, lacc, rows = None, 0.0, []
        for j, c in zip(parts, coeffs):
            g, l, row = self.partial(job, int(j))
            rows.append(row)
            if acc is None and c == 1.0 and g.dtype == tdtype:
                acc = g                          # (g is a fresh tensor: safe to accumulate into)
            elif acc is None:
                acc = g.to(tdtype).mul_(float(c))
            else:
                acc.add_(g, alpha=float(c))
            lacc += c * l
        return acc, lacc, rows

    def _sliced(self, job, parts, coeffs, wire):
        """A sliced code's mini-task (``coeffs (d, m)``): each partial gradient cut into ``m``
        zero-padded slices (``cut``), ``sum_j sum_u c[j, u] slice_u(g_j)`` of length
        ``ceil(l / m)``, accumulated in float64; the loss is the plain sum."""
        acc, lacc, rows = None, 0.0, []
        for j, c in zip(parts, np.asarray(coeffs, np.float64)):
            g, l, row = self.partial(job, int(j))
            rows.append(row)
            c = torch.tensor(c, dtype=torch.float64, device=self.device)
            term = c @ cut(g.to(torch.float64), len(c))
            acc = term if acc is None else acc.add_(term)
            lacc += l
        return acc, lacc, rows

    def run(self, round: int, params, task) -> Result:
        """``compute``, with the result flagged when it holds non-finite values: the master erases
        it on arrival (it does not count for the wait policy) without a pass over the data."""
        res = self.compute(round, params, task)
        if not all(v is None or np.isfinite(v.sum()) or np.isfinite(v).all() for v in res.coded):
            res.status = Outcome.NONFINITE
        return res


@dataclass(frozen=True)
class GradientWorkers:
    """How to build logical worker ``i`` wherever it runs (this process, a Ray actor): it holds
    the partitions ``held[i]`` of ``partitions`` (partition -> (X, y), or a ``Lazy`` one).
    Picklable; ``only`` and ``shipped``/``landed`` let a backend send each process just the data
    its workers hold (every executor takes such a factory: ``factory(i)`` is worker ``i``)."""
    model: object
    objective: object      # the loss's sum form and denominator (``Objective``)
    layout: object         # what of the model travels (``Layout``)
    held: tuple
    partitions: dict
    seed: int
    batch: int | None
    dtype: object
    device: str = "cpu"
    keep: int = 1          # rounds whose rounding residuals a worker keeps (T + 1)
    rows: dict | None = None   # partition -> its sample indices (to name a sample)
    micro_batch: int | None = None   # rows per forward and backward pass (None: one pass)

    @property
    def n(self) -> int:
        return len(self.held)

    def __call__(self, i: int) -> GradientWorker:
        mine = [int(j) for j in self.held[i]]
        return GradientWorker(i, self.model, self.objective, self.layout,
                              {j: self.partitions[j] for j in mine}, self.seed, self.batch,
                              self.dtype, self.device, self.keep,
                              {j: self.rows[j] for j in mine} if self.rows else None,
                              self.micro_batch)

    def only(self, indices) -> "GradientWorkers":
        """The same, with just the partitions that workers ``indices`` hold."""
        needed = {int(j) for i in indices for j in self.held[i]}
        return replace(self, partitions={j: p for j, p in self.partitions.items() if j in needed},
                       rows={j: r for j, r in self.rows.items() if j in needed}
                       if self.rows else None)

    def shipped(self, put) -> "GradientWorkers":
        """Each partition through ``put`` (e.g. ``ray.put``), a ``Dataset``'s source once."""
        lazy = [p for p in self.partitions.values() if isinstance(p, Lazy)]
        if lazy:
            src = put(lazy[0].source)
            return replace(self, partitions={j: Lazy(src, p.idx)
                                             for j, p in self.partitions.items()})
        return replace(self, partitions={j: put(p) for j, p in self.partitions.items()})

    def landed(self, get) -> "GradientWorkers":
        """``shipped``'s inverse where it runs (a ``Lazy`` partition resolves itself)."""
        return replace(self, partitions={j: p if isinstance(p, Lazy) else get(p)
                                         for j, p in self.partitions.items()})
