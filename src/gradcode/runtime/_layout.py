"""What of a model travels between the master and its workers, and what its forward needs.

- **Trainable parameters** (``requires_grad``): the vector the master broadcasts and steps, and
  the gradient the workers code.  Frozen parameters stay as each replica copied them; a
  parameter that forward leaves without a gradient (an unused module) gets none at the master
  either (the optimizer skips it, as PyTorch's does), which workers report per partition.
- **Buffers a training forward changes** (BatchNorm's running statistics and its batch count):
  broadcast after the parameters.  A worker starts every partition's forward from them and
  reports where the forward left them; the master sets each to the sample-weighted mean over the
  partitions its step recovered (``TorchLearner``).  With one partition that is PyTorch's own
  update; with several, the running mean is the full batch's mean, the running variance the mean
  of the partitions' variances (each partition is normalised by its own batch statistics, as in
  DistributedDataParallel without SyncBatchNorm).
- **Randomness**: whether forward draws random numbers (dropout).  Then each partition's forward
  is seeded by (run seed, job, partition), one at a time per process, so that every copy of a
  partition computes a bit-identical gradient (``seeded``).

``Layout.of(model, X)`` finds them with one forward in training mode, on a copy of the model and
at least two rows (the user's model is not touched).
"""

from __future__ import annotations

import contextlib
import copy
import functools
import threading
from dataclasses import dataclass

import numpy as np
import torch

from ._data import forward
from ._reading import RANDOM



@dataclass(frozen=True)
class Layout:
    """The names of the trainable parameters and of the tracked buffers, their sizes, and
    whether forward is random (module doc).  Picklable.

    >>> import torch
    >>> net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4),
    ...                           torch.nn.Dropout(0.5), torch.nn.Linear(4, 2))
    >>> _ = net[0].requires_grad_(False)                  # a frozen layer
    >>> layout = Layout.of(net, torch.randn(2, 3))
    >>> layout.params, layout.buffers, layout.random
    (('1.weight', '1.bias', '3.weight', '3.bias'), ('1.running_mean', '1.running_var', '1.num_batches_tracked'), True)
    >>> layout.P, layout.Q                                # broadcast entries of each kind
    (18, 9)
    """
    params: tuple
    param_sizes: tuple
    buffers: tuple
    buffer_sizes: tuple
    random: bool = False

    @classmethod
    def of(cls, model, X) -> "Layout":
        params = [(k, p) for k, p in model.named_parameters() if p.requires_grad]
        probe = copy.deepcopy(model).train()
        before = {k: b.clone() for k, b in probe.named_buffers()}
        state = torch.get_rng_state()
        with torch.no_grad():
            forward(probe, X)
        random = not torch.equal(state, torch.get_rng_state())
        torch.set_rng_state(state)
        moved = [(k, b) for k, b in probe.named_buffers()
                 if k in before and not torch.equal(before[k], b)]
        return cls(tuple(k for k, _ in params), tuple(p.numel() for _, p in params),
                   tuple(k for k, _ in moved), tuple(b.numel() for _, b in moved), random)

    @property
    def P(self) -> int:
        return int(sum(self.param_sizes))

    @property
    def Q(self) -> int:
        return int(sum(self.buffer_sizes))

    def tensors(self, model) -> tuple[list, list]:
        """``(trainable parameters, tracked buffers)`` of ``model`` (a copy of the one the
        layout was found on)."""
        params, buffers = dict(model.named_parameters()), dict(model.named_buffers())
        return [params[k] for k in self.params], [buffers[k] for k in self.buffers]

    def spans(self) -> tuple[list, list]:
        """``(each parameter's, each buffer's)`` entries in the broadcast vector."""
        ends = np.cumsum((0,) + self.param_sizes + self.buffer_sizes).tolist()
        spans = list(zip(ends[:-1], ends[1:]))
        return spans[:len(self.params)], spans[len(self.params):]

    def vector(self, model) -> np.ndarray:
        """``model``'s broadcast vector (a copy: ``Flat`` keeps one without copying)."""
        params, buffers = self.tensors(model)
        return torch.cat([t.detach().reshape(-1).float() for t in params + buffers]).numpy()

    def used(self, stats: np.ndarray) -> np.ndarray:
        """Per parameter, whether any of the partitions' rows ``stats`` saw it used."""
        return np.any(stats[:, 1:1 + len(self.params)] > 0.5, axis=0)


def floating_dtype(model) -> torch.dtype:
    """The dtype of the model's first floating parameter (float32 without one)."""
    return next((p.dtype for p in model.parameters() if p.is_floating_point()), torch.float32)


class evaluating:
    """``with evaluating(model):`` evaluation mode and no gradients; the model's mode restored
    after (dropout off, BatchNorm's running statistics used, not updated)."""

    def __init__(self, model):
        self.model = model

    def __enter__(self):
        self.training = self.model.training
        self.model.eval()
        self.grad = torch.no_grad()
        self.grad.__enter__()

    def __exit__(self, *exc):
        self.grad.__exit__(*exc)
        self.model.train(self.training)


class Flat:
    """The master's broadcast vector of one model: its trainable parameters, then its tracked
    buffers, in float32.  Float32 tensors on the CPU become views into it (nothing is copied
    per round); the others (a bfloat16 parameter, an integer batch count) are copied into it by
    ``vector()``."""

    def __init__(self, model, layout: Layout):
        self.params, self.buffers = layout.tensors(model)
        self.param_spans, self.buffer_spans = layout.spans()
        self.flat = torch.zeros(layout.P + layout.Q, dtype=torch.float32)
        self.copied = []
        with torch.no_grad():
            for t, (a, b) in zip(self.params + self.buffers,
                                 self.param_spans + self.buffer_spans):
                if t.dtype == torch.float32 and t.device.type == "cpu":
                    self.flat[a:b] = t.detach().reshape(-1)
                    t.data = self.flat[a:b].view_as(t)
                else:
                    self.copied.append((t, (a, b)))

    def vector(self) -> np.ndarray:
        """The vector to broadcast (a view: the executor snapshots it)."""
        with torch.no_grad():
            for t, (a, b) in self.copied:
                self.flat[a:b] = t.detach().reshape(-1).float()
        return self.flat.numpy()


class Replica:
    """A copy of the model that logical workers compute on, one at a time: ``load(vector)``
    takes a broadcast vector (parameters as views where the dtypes allow, buffers copied and kept
    to ``reset`` every partition's forward to; ``unload()`` lets go of it); ``accumulate(into)``
    says where backward accumulates the gradients, ``reset()`` starts a partition and
    ``gradient()`` ends it; ``row(D)`` a partition's stats row once its backward ran;
    ``seeded(seed, job, j)`` the context of a partition's forward.

    Nothing is allocated per round: the parameters' gradients are views into one flat tensor
    (where they share a dtype), the caller's (a message summing its partitions' gradients) or
    the replica's own buffer (zeroed per partition), and a hook on each parameter notes that it
    got a gradient (PyTorch leaves an unused one's ``grad`` alone)."""

    def __init__(self, model, layout: Layout, device):
        self.model, self.layout, self.device = model, layout, device
        self.params, self.buffers = layout.tensors(model)
        self.param_spans, self.buffer_spans = layout.spans()
        self.start: list = []
        self.used = [False] * len(self.params)
        dtypes = {p.dtype for p in self.params}
        self.dtype = dtypes.pop() if len(dtypes) == 1 else None   # None: mixed, no flat buffer
        self.own, self.into = None, None
        for k, p in enumerate(self.params):
            p.register_post_accumulate_grad_hook(functools.partial(self._got, k))

    @classmethod
    def of(cls, model, layout: Layout, device) -> "Replica":
        """A replica of ``model`` on ``device``: a deep copy whose trainable parameters hold no
        memory until ``load`` (they are the broadcast vector's views then)."""
        memo = {}
        for p in layout.tensors(model)[0]:
            memo[id(p)] = torch.nn.Parameter(_idle(p, device), requires_grad=True)
        copied = copy.deepcopy(model, memo).to(device).train()
        return cls(copied, layout, device)

    def _got(self, k: int, p) -> None:
        self.used[k] = True

    def load(self, vector) -> None:
        v = torch.as_tensor(vector, dtype=torch.float32).to(self.device)
        with torch.no_grad():
            for p, (a, b) in zip(self.params, self.param_spans):
                if p.dtype == v.dtype:
                    p.data = v[a:b].view_as(p)
                else:
                    p.data = v[a:b].view_as(p).to(p.dtype)
            if len(self.start) != len(self.buffer_spans):
                self.start = [v[a:b].clone() for a, b in self.buffer_spans]
            else:
                for s, (a, b) in zip(self.start, self.buffer_spans):
                    s.copy_(v[a:b])

    def unload(self) -> None:
        """Let go of the loaded vector and of the gradients' target (the parameters point at a
        shared zero each), so that a round's broadcast and messages are freed once its
        computations end, not when this replica is next used."""
        with torch.no_grad():
            for p in self.params:
                p.data = _idle(p, p.device)
                p.grad = None
        self.into = None

    def accumulate(self, into: torch.Tensor | None = None) -> None:
        """Backward accumulates into ``into`` (a flat tensor of the parameters' dtype, summed
        over partitions; the caller zeroes it), or, with None, into the replica's own buffer,
        zeroed by every ``reset`` (a partition's gradient alone)."""
        if into is None and self.dtype is not None:
            if self.own is None:
                self.own = torch.zeros(self.layout.P, dtype=self.dtype, device=self.device)
            into = self.own
        self.into = into
        for p, (a, b) in zip(self.params, self.param_spans):
            p.grad = into[a:b].view_as(p) if into is not None else None

    def reset(self) -> None:
        """A partition starts: the buffers the broadcast gave, no parameter used yet, the
        replica's own gradient buffer zeroed."""
        self.used = [False] * len(self.params)
        with torch.no_grad():
            for buf, v in zip(self.buffers, self.start):
                buf.copy_(v.view_as(buf))
            if self.into is None:
                for p in self.params:
                    p.grad = None
            elif self.into is self.own:
                self.own.zero_()

    def gradient(self) -> tuple[torch.Tensor, list]:
        """``(flat gradient of the trainable parameters, used flags)``: zeros where a parameter
        got none; the accumulation target itself (copy what is kept), or a fresh tensor for
        parameters of mixed dtypes."""
        if self.into is not None:
            for p, (a, b) in zip(self.params, self.param_spans):
                if p.grad is not None and p.grad.data_ptr() != self.into[a:b].data_ptr():
                    with torch.no_grad():                 # backward replaced it: copy it in
                        self.into[a:b] = p.grad.reshape(-1)
                    p.grad = self.into[a:b].view_as(p)
            return self.into, list(self.used)
        grads = [p.grad for p in self.params]
        flat = torch.cat([(g if g is not None else torch.zeros_like(p)).reshape(-1)
                          for p, g in zip(self.params, grads)]) if grads else torch.zeros(0)
        return flat, list(self.used)

    def row(self, denominator: float, used: list) -> np.ndarray:
        parts = [np.array([denominator], np.float64), np.asarray(used, np.float64)]
        parts += [b.detach().reshape(-1).double().cpu().numpy() for b in self.buffers]
        return np.concatenate(parts)

    @contextlib.contextmanager
    def seeded(self, seed: int, job: int, j: int):
        """Forward's random numbers seeded by (seed, job, partition), one process-wide lock
        held meanwhile, the generators' state restored after (a model without randomness runs
        as it is)."""
        if not self.layout.random:
            yield
            return
        device = torch.device(self.device)
        cuda = device.type == "cuda"
        s = int(np.random.SeedSequence([seed, job, j, 0x5EED]).generate_state(1, np.uint64)[0])
        with RANDOM, torch.random.fork_rng(devices=[device] if cuda else []):
            torch.default_generator.manual_seed(s % 2 ** 63)
            if cuda:
                with torch.cuda.device(device):
                    torch.cuda.manual_seed(s % 2 ** 63)
            yield


class Replicas:
    """The replicas of one process on one device, shared by the logical workers it hosts:
    ``size`` of them (as many as compute at once: the executor's ``concurrency``), each a copy
    of ``model`` made here, reused round after round.  ``use()`` lends a free one;
    ``resident(rows)`` puts the data tensors the workers share on the device, once."""

    def __init__(self, model, layout: Layout, device, size: int = 1):
        self.layout, self.device, self.size = layout, torch.device(device), max(1, size)
        self.all = tuple(Replica.of(model, layout, self.device) for _ in range(self.size))
        self._free = list(self.all)
        self._lock = threading.Lock()
        self._free_again = threading.Condition(self._lock)
        self._resident: dict = {}      # id of a data tensor -> (it, its copy on the device)

    def resident(self, rows):
        """``rows`` (``_data.Rows``) with its tensors on the device, moved once for all the
        process's workers (the same tensors where they are already there)."""
        with self._lock:
            key = id(rows.y)
            if key not in self._resident:            # (y kept: its id stays its own)
                self._resident[key] = (rows.y, rows.to(self.device))
            moved = self._resident[key][1]
        return type(rows)(moved.X, moved.y, rows.idx.to(self.device))

    @contextlib.contextmanager
    def use(self, wait: bool = False):
        """A free replica for the duration; with none free, one once it is (``wait``), or
        RuntimeError (more computing at once than ``size``: a bug of the executor's)."""
        with self._free_again:
            while not self._free:
                if not wait:
                    raise RuntimeError("gradcode: more workers computing at once than replicas")
                self._free_again.wait()
            rep = self._free.pop()
        try:
            yield rep
        finally:
            with self._free_again:
                self._free.append(rep)
                self._free_again.notify()


def _idle(p: torch.Tensor, device) -> torch.Tensor:
    """A tensor of ``p``'s shape and dtype on ``device`` holding one zero (a parameter that
    holds no memory)."""
    return torch.zeros((), dtype=p.dtype, device=device).expand(p.shape)
