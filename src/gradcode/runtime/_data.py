"""Training data for the runtime: the bundled datasets' tensors (``TorchData``) or a user's own
map-style ``torch.utils.data.Dataset`` (``DatasetData``), split into a held-out test set and the
code's partitions by index.

A partition is a set of row indices sized by the code's ``partition_sizes``.  Tensors in memory
are not copied (``Rows``: gathered a micro-batch at a time; Ray ships each partition's own
rows); a ``Dataset`` is shipped once and each worker
reads its own partitions' rows every round, as a DataLoader would (``runtime._reading.Live``), so
a dataset that reads its rows from disk is read where the rows are used, and its augmentation
changes every round.  Mini-batches and the reads are seeded by (seed, job, partition), so every
copy of a partition computes the same gradient.

A Dataset's items may be ``(x, y)``, ``(x1, ..., xk, y)`` (the model is called as
``model(x1, ..., xk)``) or a dict whose target is under one of ``TARGET_KEYS`` (the other keys
are the model's keyword arguments).  The inputs of a batch (``X``) are therefore a tensor, a
tuple or a dict of tensors; ``index``, ``concat``, ``to`` and ``forward`` handle all three.
Inputs keep their dtype (Long token ids for ``nn.Embedding``), except floating ones, which take
the model's floating dtype (``float_dtype``: float32, or a float16/bfloat16 model's); so do
floating targets.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..engine import user_error
from ._resolve import DEFAULT_TEST_FRACTION  # noqa: F401  (decided there, with the run)

#: the keys under which a dict item holds its target (exactly one of them)
TARGET_KEYS = ("y", "target", "targets", "label", "labels")


def _map(f, X):
    """``f`` applied to each tensor of inputs ``X`` (a tensor, tuple or dict)."""
    if isinstance(X, dict):
        return {k: f(v) for k, v in X.items()}
    if isinstance(X, tuple):
        return tuple(f(v) for v in X)
    return f(X)


def index(X, idx):
    """Rows ``idx`` (a slice or index tensor) of every input tensor."""
    return _map(lambda t: t[idx], X)


def to(X, device):
    return _map(lambda t: t.to(device), X)


def concat(Xs: list):
    """Inputs stacked along the batch dimension."""
    first = Xs[0]
    if isinstance(first, dict):
        return {k: torch.cat([x[k] for x in Xs]) for k in first}
    if isinstance(first, tuple):
        return tuple(torch.cat(parts) for parts in zip(*Xs))
    return torch.cat(Xs)


def tensors(X) -> list:
    """The input tensors of ``X``."""
    return list(X.values()) if isinstance(X, dict) else list(X) if isinstance(X, tuple) else [X]


def forward(model, X):
    """``model(X)``, ``model(*X)`` for a tuple, ``model(**X)`` for a dict."""
    if isinstance(X, dict):
        return model(**X)
    if isinstance(X, tuple):
        return model(*X)
    return model(X)


@dataclass
class DatasetData:
    """A map-style ``Dataset`` seen as the runtime's data (items: module doc).  ``task``
    (``regression``, ``binary`` or ``multiclass``) decides the held-out metric: inferred from the
    loss and the labels unless given (``infer_task``)."""
    dataset: object
    name: str = "dataset"
    task: str | None = None
    classes: int = 0
    image_shape: tuple | None = None
    float_dtype: torch.dtype = torch.float32

    def __len__(self) -> int:
        return len(self.dataset)

    def take(self, idx) -> tuple:
        """Rows ``idx`` as ``(inputs, targets)``; an exception of the Dataset's reaches the
        caller as it is, with a note naming the sample (``user_error``)."""
        return self.collate([self.item(int(i)) for i in idx], idx)

    def item(self, i: int):
        """Item ``i`` as the Dataset returns it (its exception noted with the sample)."""
        try:
            return self.dataset[i]
        except Exception as exc:
            raise user_error(exc, f"sample {i} of {self.name}") from None

    def collate(self, items: list, idx) -> tuple:
        """Items (of rows ``idx``) stacked as ``(inputs, targets)``."""
        xs, ys = zip(*(self._unpack(item, int(i)) for i, item in zip(idx, items)))
        first = xs[0]
        if isinstance(first, dict):
            X = {k: self._stack([x[k] for x in xs]) for k in first}
        elif isinstance(first, tuple):
            X = tuple(self._stack(list(col)) for col in zip(*xs))
        else:
            X = self._stack(list(xs))
        return X, self._stack(list(ys))

    def _unpack(self, item, i: int) -> tuple:
        if isinstance(item, dict):
            keys = [k for k in TARGET_KEYS if k in item]
            if len(keys) == 1 and len(item) > 1:
                return {k: v for k, v in item.items() if k != keys[0]}, item[keys[0]]
            raise ValueError(f"data: sample {i} of {self.name} is a dict with keys "
                             f"{sorted(item)}; expected exactly one target key of "
                             f"{', '.join(TARGET_KEYS)} beside the model's inputs")
        if isinstance(item, (tuple, list)) and len(item) >= 2:
            return (item[0] if len(item) == 2 else tuple(item[:-1])), item[-1]
        what = f"a {type(item).__name__}" + (f" of {len(item)}" if isinstance(
            item, (tuple, list)) else "")
        raise ValueError(f"data: sample {i} of {self.name} is {what}; expected (x, y), "
                         f"(x1, ..., y) or a dict with a target key ({', '.join(TARGET_KEYS)})")

    def _stack(self, values: list) -> torch.Tensor:
        t = torch.stack([torch.as_tensor(v) for v in values])
        return t.to(self.float_dtype) if t.is_floating_point() else t


def as_data(data):
    """``data`` as the runtime's data: a ``TorchData`` as it is, a map-style ``Dataset``
    wrapped in ``DatasetData``; ValueError for anything else."""
    from ._models import TorchData
    if isinstance(data, (TorchData, DatasetData)):
        return data
    if isinstance(data, torch.utils.data.Dataset) and hasattr(data, "__len__"):
        if len(data) < 2:
            raise ValueError(f"data: expected a Dataset of at least 2 samples, got {len(data)}")
        return DatasetData(data, name=type(data).__name__)
    raise ValueError(f"data: expected a gradcode TorchData or a map-style torch Dataset, got "
                     f"{type(data).__name__}")


def split_indices(n: int, sizes, test_fraction: float, rng) -> tuple[np.ndarray, dict]:
    """``(test rows, {partition j: its rows})``: a ``test_fraction`` share held out, the rest
    split by ``sizes`` (shares summing to 1), in one random order drawn from ``rng``; ValueError
    giving the counts when a partition would get no row.

    >>> split_indices(5, [0.25] * 4, 0.4, np.random.default_rng(0))
    Traceback (most recent call last):
    ...
    ValueError: data: 3 training rows (5 less 2 held out) for 4 partitions: partition 2 would get none (the code's partition_sizes give them 0.25, 0.25, 0.25, 0.25); use fewer workers or more data
    """
    order = rng.permutation(n)
    n_test = int(round(test_fraction * n))
    test, rest = order[:n_test], order[n_test:]
    bounds = np.round(np.cumsum(np.r_[0, np.asarray(sizes, float)]) * len(rest)).astype(int)
    empty = np.flatnonzero(np.diff(bounds) == 0)
    if len(empty):
        shares = ", ".join(f"{x:.3g}" for x in np.asarray(sizes, float)[:8])
        held = f" ({n} less {n_test} held out)" if n_test else ""
        raise ValueError(f"data: {len(rest)} training rows{held} for {len(sizes)} partitions: "
                         f"partition {empty[0]} would get none (the code's partition_sizes give "
                         f"them {shares}{', ...' if len(sizes) > 8 else ''}); use fewer workers "
                         "or more data")
    return test, {j: rest[a:b] for j, (a, b) in enumerate(zip(bounds[:-1], bounds[1:]))}


@dataclass(frozen=True)
class Rows:
    """Rows ``idx`` of tensors in memory (a ``TorchData``'s ``X, y``), not copied: a worker
    gathers them a micro-batch at a time; ``take()`` copies them out (to ship them)."""
    X: object
    y: torch.Tensor
    idx: torch.Tensor

    def __len__(self) -> int:
        return len(self.idx)

    def take(self) -> tuple:
        return index(self.X, self.idx), self.y[self.idx]

    def to(self, device) -> "Rows":
        return Rows(to(self.X, device), self.y.to(device), self.idx.to(device))


#: the losses whose targets are classes (multiclass accuracy) or 0/1 labels (binary accuracy)
CLASS_LOSSES = ("cross_entropy", "nll_loss")
BINARY_LOSSES = ("binary_cross_entropy", "binary_cross_entropy_with_logits")


def infer_task(data, objective, labels) -> str:
    """The data's task: a ``DatasetData`` without one takes it from its loss (``objective``'s
    observed calls: class indices for cross-entropy make it multiclass, a binary cross-entropy
    binary) and its ``labels`` (integers: multiclass or binary by the model's outputs; floats:
    regression)."""
    if data.task is not None:
        return data.task
    names = set(objective.observed)
    if names & set(BINARY_LOSSES):
        return "binary"
    if names & set(CLASS_LOSSES):
        return "multiclass" if not labels.is_floating_point() else "regression"
    if labels.is_floating_point():
        return "regression"
    return "multiclass" if objective.outputs > 1 else "binary"
