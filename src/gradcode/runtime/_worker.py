"""A logical worker: the data partitions its placement gives it, a model replica, and the coded
gradient computation of one round.

Each task is a list of mini-tasks ``(job, partitions, coefficients)``; for a single-round code the
task is ``[(round, placement[i], B[i, placement[i]])]``.  A code sending coded slices
(``slices = m > 1``, ``comm-efficient``) gives ``(d, m)`` coefficient rows: the worker cuts each
partial gradient into ``m`` zero-padded slices (``cut``) and sends one vector of ``ceil(l / m)``.
A message encoded in float64 (real coefficients) goes on a float32 wire rounded once; the worker
reports the norm of its residual ``m - fl32(m)`` (``Result.rounding``) and, should the master
ask for the residual itself (``residual``; ``analysis.refine``: rarely), computes the message
again: it keeps, for its last ``keep`` rounds, what each such message was computed from (the
round's broadcast, which the executor does not change, and the mini-task), not the residuals
(n float32 vectors, which had cost gc-cr a third of its memory).  The recomputation is the
computation itself, bit for bit where the computation is deterministic (on a CPU, on the same
number of threads: the executors run it on a computing thread; on a GPU, as deterministic as
its kernels are).
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

import functools
import math
import os
from dataclasses import dataclass, replace

import numpy as np
import torch

from ..engine import Outcome, Result, is_user_error, user_error
from ._data import Rows, forward, index, tensors, to
from ._reading import Live
from ._layout import Replica, Replicas


def batch_indices(size: int, batch: int | None, seed: int, round: int, partition: int) -> np.ndarray:
    """The rows of partition ``partition`` used in ``round`` (all of them when ``batch`` is None)."""
    if batch is None or batch >= size:
        return np.arange(size)
    return np.random.default_rng([seed, round, partition]).choice(size, batch, replace=False)


def default_concurrency(device) -> int:
    """How many logical workers of one process compute at once on ``device`` by default: one on
    a GPU (more would share it anyway, each with its own activations), the usable cores on a
    CPU (each computes on one thread)."""
    if torch.device(device).type == "cuda":
        return 1
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def concurrency_for(factory, hosted: int, asked: int | None) -> int:
    """How many of the ``hosted`` workers that ``factory`` builds compute at once in one
    process: ``asked``, or ``default_concurrency`` of their device, at most all of them."""
    return max(1, min(hosted, asked or default_concurrency(getattr(factory, "device", "cpu"))))


def map_large_buffers(threshold: int = 1 << 20) -> None:
    """Have glibc map (and unmap when freed) every buffer above ``threshold`` bytes.  Below its
    mmap threshold glibc keeps freed blocks in per-thread arenas, and it raises that threshold
    to the largest block freed (up to 32 MiB), so a round's messages, made on the workers'
    threads and freed on the master's, ratchet the process's memory up (measured: 4 to 8 model
    copies more at n = 8; ``benchmarks/bench_scale.py``).  Nothing where the C library is not
    glibc."""
    import ctypes
    try:
        ctypes.CDLL("libc.so.6").mallopt(-3, int(threshold))       # -3: M_MMAP_THRESHOLD
    except (OSError, AttributeError):
        pass


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
                 rows: dict | None = None, micro_batch: int | None = None,
                 precision: str = "float32", loader_workers: int = 0,
                 replicas: Replicas | None = None):
        self.index, self.device = index, torch.device(device)
        # the model replicas it computes on, shared with the workers of its process (one of
        # its own without them)
        self.replicas = replicas or Replicas(model, layout, self.device)
        self.objective, self.layout = objective, layout
        # partition -> (X, y) tensors held by this worker (a Dataset's rows materialised here),
        # on the worker's device
        self.partitions = {}
        for j, p in partitions.items():
            if isinstance(p, Live):
                self.partitions[j] = p                 # read every round (``_rows``)
            elif isinstance(p, Rows):                  # the tensors moved once per process
                self.partitions[j] = self.replicas.resident(p)
            else:
                X, y = p
                self.partitions[j] = (to(X, self.device), y.to(self.device))
        self.seed, self.batch, self.dtype = seed, batch, dtype
        self.rows, self.micro_batch = rows or {}, micro_batch
        self.bf16 = precision == "bf16"     # forward (and so backward) under bf16 autocast
        self.loader_workers = loader_workers     # processes reading a Dataset's rows
        self.keep = keep
        self.on_device = False            # messages leave as tensors where computed (``_out``)
        self.round = 0
        # round -> mini-task k -> (the parameter vector, the mini-task) of a rounded message
        self.residuals: dict[int, dict] = {}

    def partial(self, rep: Replica, job: int, j: int) -> tuple[torch.Tensor, float, np.ndarray]:
        """Gradient (of the sum form over the mini-batch: ``rep``'s accumulation target, so
        consumed before the next partition unless it sums them), loss sum and stats row of
        partition ``j`` in job ``job`` on replica ``rep``; accumulated over micro-batches of at
        most ``micro_batch`` rows (sums and denominators add up: the one-pass gradient, for a
        model without batch-dependent layers)."""
        X, y, sel, idx = self._rows(job, j)
        size = len(y) if sel is None else len(sel)
        rep.reset()
        loss = D = 0.0
        step = self.micro_batch or max(size, 1)
        try:
            with rep.seeded(self.seed, job, j):
                for a in range(0, size, step):
                    part = slice(a, a + step) if sel is None else sel[a:a + step]
                    with torch.autocast(self.device.type, torch.bfloat16, enabled=self.bf16):
                        S, d = self.objective.split(forward(rep.model, index(X, part)), y[part])
                    S.backward()
                    loss, D = loss + float(S.detach()), D + d
        except Exception as exc:            # the user's model or loss: theirs, with where
            raise user_error(exc, f"the model or loss of worker {self.index} on partition {j} "
                                  f"({size} samples) in job {job}") from None
        g, used = rep.gradient()
        if not (math.isfinite(loss) and bool(torch.isfinite(g.sum()))):
            if sel is not None:
                X, y = index(X, sel), y[sel]
            raise self._non_finite(rep, job, j, X, y, idx, loss)
        return g, loss, rep.row(D, used)

    def _rows(self, job: int, j: int) -> tuple:
        """``(X, y, sel, positions)``: the rows of partition ``j`` in job ``job`` are
        ``X[sel], y[sel]`` (``sel`` None: all of ``X, y``), on this worker's device; those of
        the mini-batch (``positions`` in the partition) or all (``positions`` None).  A
        ``Rows`` partition is gathered a micro-batch at a time (nothing copied whole); a
        Dataset's rows are read now (``Live.read``: seeded, so every copy reads the same)."""
        part = self.partitions[j]
        size = _size(part)
        idx = None
        if self.batch is not None and self.batch < size:
            idx = torch.from_numpy(batch_indices(size, self.batch, self.seed, job, j))
        if isinstance(part, Live):
            try:
                X, y = part.read(np.arange(size) if idx is None else idx.numpy(), self.seed, job,
                                 j, self.loader_workers)
            except Exception as exc:
                if is_user_error(exc):
                    exc.add_note(f"gradcode: while worker {self.index} read partition {j}")
                raise
            return to(X, self.device), y.to(self.device), None, idx
        if isinstance(part, Rows):
            sel = part.idx if idx is None else part.idx[idx.to(part.idx.device)]
            return part.X, part.y, sel, idx
        X, y = part
        return X, y, None if idx is None else idx.to(self.device), idx

    def _non_finite(self, rep, job, j, X, y, idx, loss) -> BaseException:
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
        elif not all(bool(torch.isfinite(p).all()) for p in rep.params):
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
        for j, part in self.partitions.items():
            if _size(part) < 2:
                continue
            with self.replicas.use() as rep:
                try:
                    if isinstance(part, Live):
                        X, y = part.read([0, 1], self.seed, 0, j)
                        X, y = to(X, self.device), y.to(self.device)
                    else:
                        X, y, sel, _ = self._rows(0, j)
                        two = slice(0, 2) if sel is None else sel[:2]
                        X, y = index(X, two), y[two]
                    self.objective.split(forward(rep.model, X), y)[0].backward()
                except Exception:
                    pass
                rep.unload()
            return

    def compute(self, round: int, params, task) -> Result:
        """One coded vector per mini-task; ``params`` one vector, or ``M`` of them with each
        mini-task naming its own (module docstring)."""
        self.round = round
        with self.replicas.use() as rep:
            try:
                return self._compute(rep, round, params, task)
            finally:
                rep.unload()

    def _compute(self, rep: Replica, round: int, params, task) -> Result:
        stacked = isinstance(params, (list, tuple)) or np.ndim(params) == 2
        if not stacked:
            rep.load(params)
        loaded = None
        coded, losses, rounding, kept, stats = [], [], [], {}, []
        wire = torch.float64 if self.dtype == np.float64 else torch.float32
        for mini in task:
            job, parts, coeffs = mini[:3]
            if stacked and len(mini) < 4:
                raise ValueError("task: with several parameter vectors, each mini-task names one")
            if stacked and len(parts) and loaded != int(mini[3]):
                loaded = int(mini[3])            # the vector of this mini-task's model
                rep.load(params[loaded])
            vector = params[int(mini[3])] if stacked else params
            sliced = np.ndim(coeffs) == 2        # (d, m) coefficient rows: coded slices
            acc, lacc, rows = (self._sliced if sliced else self._combined)(rep, job, parts,
                                                                            coeffs, wire)
            msg = acc.to(wire) if acc is not None else None
            rho = 0.0
            if msg is not None and msg.dtype != acc.dtype:          # rounded for the wire
                e = acc.sub_(msg)                # m - fl32(m), in place (acc is done with)
                rho = float(torch.linalg.vector_norm(e))
                if rho > 0:
                    kept[len(coded)] = (vector, mini)   # to compute it again if asked
                del e, acc
            coded.append(self._out(msg) if msg is not None else None)
            losses.append(lacc)
            rounding.append(rho)
            stats.append(np.stack(rows) if rows else None)
        self._keep(round, kept)
        return Result(round, self.index, coded, losses, rounding=rounding, stats=stats)

    def _keep(self, round: int, kept: dict) -> None:
        """Keep this round's recipes, forget those of rounds ``keep`` or more before it."""
        for r in [r for r in self.residuals if r <= round - self.keep]:
            del self.residuals[r]
        if kept:
            self.residuals[round] = kept

    def _out(self, t: torch.Tensor):
        """What leaves the worker: a NumPy array, or, for a master in this process
        (``on_device``), the tensor where it was computed (no copy to the host)."""
        return t if self.on_device else t.cpu().numpy()

    def residual(self, round: int, k: int) -> np.ndarray:
        """``m - fl32(m)`` of mini-task ``k``'s message of ``round`` (float32), the message
        computed again from what it was computed from (module doc)."""
        try:
            vector, mini = self.residuals[round][k]
        except KeyError:
            raise LookupError(f"worker {self.index} keeps no residual of round {round}, "
                              f"mini-task {k}") from None
        job, parts, coeffs = mini[:3]
        with self.replicas.use(wait=True) as rep:
            try:
                rep.load(vector)
                acc = (self._sliced if np.ndim(coeffs) == 2 else self._combined)(
                    rep, job, parts, coeffs, torch.float32)[0]
            finally:
                rep.unload()
        return self._out(acc.sub_(acc.to(torch.float32)).to(torch.float32))

    def _combined(self, rep, job, parts, coeffs, wire):
        """``(sum_j c_j g_j, sum_j c_j loss_j)``: a plain sum in the wire dtype, which backward
        accumulates straight into when the parameters have that dtype (no copy of a
        gradient); real coefficients in float64, rounded to the wire dtype once at the end
        (float32 on the wire for every code)."""
        plain = all(c == 1.0 for c in coeffs)
        acc, lacc, rows = None, 0.0, []
        if plain and rep.dtype == wire:
            acc = torch.zeros(self.layout.P, dtype=wire, device=self.device)
        rep.accumulate(acc)
        for j, c in zip(parts, coeffs):
            g, l, row = self.partial(rep, job, int(j))
            rows.append(row)
            if g is acc:
                pass                             # backward summed it in
            elif acc is None:                    # (g is the replica's buffer: copied)
                acc = g.to(wire if plain else torch.float64, copy=True)
                if c != 1.0:
                    acc.mul_(float(c))
            else:
                acc.add_(g, alpha=float(c))
            lacc += c * l
        return acc, lacc, rows

    def _sliced(self, rep, job, parts, coeffs, wire):
        """A sliced code's mini-task (``coeffs (d, m)``): each partial gradient cut into ``m``
        zero-padded slices (``cut``), ``sum_j sum_u c[j, u] slice_u(g_j)`` of length
        ``ceil(l / m)``, accumulated in float64; the loss is the plain sum."""
        acc, lacc, rows = None, 0.0, []
        rep.accumulate(None)
        for j, c in zip(parts, np.asarray(coeffs, np.float64)):
            g, l, row = self.partial(rep, job, int(j))
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
        if not all(v is None or _finite(v) for v in res.coded):
            res.status = Outcome.NONFINITE
        return res


def _size(part) -> int:
    """Rows of a partition: ``(X, y)`` tensors, or a ``Live`` or ``Rows`` one."""
    return len(part) if isinstance(part, (Live, Rows)) else len(part[1])


def _finite(v) -> bool:
    if torch.is_tensor(v):
        return bool(torch.isfinite(v.sum())) or bool(torch.isfinite(v).all())
    return bool(np.isfinite(v.sum()) or np.isfinite(v).all())


@dataclass(frozen=True)
class GradientWorkers:
    """How to build logical worker ``i`` wherever it runs (this process, a Ray actor): it holds
    the partitions ``held[i]`` of ``partitions`` (partition -> (X, y), or a ``Live`` one).
    Picklable; ``only`` and ``shipped``/``landed`` let a backend send each process just the data
    its workers hold, and ``sharing(k)`` gives the factory of a process computing at most ``k``
    of them at once (every executor takes such a factory: ``factory(i)`` is worker ``i``)."""
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
    precision: str = "float32"       # or bf16: forward under autocast
    loader_workers: int = 0          # processes reading a Dataset's rows (0: the worker's thread)

    @property
    def n(self) -> int:
        return len(self.held)

    def __call__(self, i: int, replicas: Replicas | None = None) -> GradientWorker:
        mine = [int(j) for j in self.held[i]]
        return GradientWorker(i, self.model, self.objective, self.layout,
                              {j: self.partitions[j] for j in mine}, self.seed, self.batch,
                              self.dtype, self.device, self.keep,
                              {j: self.rows[j] for j in mine} if self.rows else None,
                              self.micro_batch, self.precision, self.loader_workers, replicas)

    def sharing(self, size: int, master: bool = False):
        """This factory for one process whose workers compute at most ``size`` at once: they
        share ``size`` model replicas, made here once (``Replicas``).  ``master``: the master
        runs in this process too, so the messages stay where they were computed (on a GPU:
        the master decodes them there)."""
        replicas = Replicas(self.model, self.layout, self.device, size)
        return functools.partial(self._on, replicas, master and replicas.device.type != "cpu")

    def _on(self, replicas, on_device: bool, i: int) -> GradientWorker:
        w = self(i, replicas)
        w.on_device = on_device
        return w

    def only(self, indices) -> "GradientWorkers":
        """The same, with just the partitions that workers ``indices`` hold."""
        needed = {int(j) for i in indices for j in self.held[i]}
        return replace(self, partitions={j: p for j, p in self.partitions.items() if j in needed},
                       rows={j: r for j, r in self.rows.items() if j in needed}
                       if self.rows else None)

    def shipped(self, put) -> "GradientWorkers":
        """Each partition through ``put`` (e.g. ``ray.put``), a ``Dataset``'s source once."""
        live = [p for p in self.partitions.values() if isinstance(p, Live)]
        if live:
            src = put(live[0].source)
            return replace(self, partitions={j: Live(src, p.idx)
                                             for j, p in self.partitions.items()})
        return replace(self, partitions={j: put(p.take() if isinstance(p, Rows) else p)
                                         for j, p in self.partitions.items()})

    def landed(self, get) -> "GradientWorkers":
        """``shipped``'s inverse where it runs (a ``Dataset``'s source fetched once, so that
        the process's workers share it, and its loader)."""
        live = [p for p in self.partitions.values() if isinstance(p, Live)]
        if live:
            src = get(live[0].source)
            return replace(self, partitions={j: Live(src, p.idx)
                                             for j, p in self.partitions.items()})
        return replace(self, partitions={j: get(p) for j, p in self.partitions.items()})
