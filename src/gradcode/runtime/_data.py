"""Training data for the runtime: the bundled datasets' tensors (``TorchData``) or a user's own
map-style ``torch.utils.data.Dataset`` (``DatasetData``), split into a held-out test set and the
code's partitions by index.

A partition is a set of row indices sized by the code's ``partition_sizes``.  Tensors are sliced
on the master and shipped once per partition; a ``Dataset`` is shipped once and each worker
materialises only its own partitions (``Lazy``), so a dataset that reads its rows from disk is
read where the rows are used.  Mini-batches stay seeded by (seed, job, partition), so every copy
of a partition computes the same gradient.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..engine import user_error

#: held-out share of a bundled dataset when ``test_fraction`` is not given (a user's own data is
#: not split unless asked: its caller may hold its own test set)
DEFAULT_TEST_FRACTION = 0.2


@dataclass
class DatasetData:
    """A map-style ``Dataset`` whose items are ``(x, y)``, seen as the runtime's data.  ``task``
    (``regression``, ``binary`` or ``multiclass``) decides the held-out metric: inferred from the
    first label (an integer: ``multiclass`` when the model has several outputs, else ``binary``;
    a float: ``regression``) unless given."""
    dataset: object
    name: str = "dataset"
    task: str | None = None
    classes: int = 0
    image_shape: tuple | None = None

    def __len__(self) -> int:
        return len(self.dataset)

    def take(self, idx) -> tuple[torch.Tensor, torch.Tensor]:
        """Rows ``idx`` as tensors; an exception of the Dataset's reaches the caller as it is,
        with a note naming the sample (``user_error``)."""
        items = []
        for i in idx:
            try:
                items.append(self.dataset[int(i)])
            except Exception as exc:
                raise user_error(exc, f"sample {int(i)} of {self.name}") from None
        X = torch.stack([torch.as_tensor(x, dtype=torch.float32) for x, _ in items])
        y = torch.stack([torch.as_tensor(t) for _, t in items])
        return X, y


@dataclass(frozen=True)
class Lazy:
    """Partition rows ``idx`` of ``source`` (a ``DatasetData`` or a Ray reference to one),
    materialised where it is used."""
    source: object
    idx: np.ndarray

    def load(self) -> tuple[torch.Tensor, torch.Tensor]:
        src = self.source
        if not isinstance(src, DatasetData):   # a Ray ObjectRef (resolved inside the actor)
            import ray
            src = ray.get(src)
        return src.take(self.idx)


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
    split by ``sizes`` (shares summing to 1), in one random order drawn from ``rng``."""
    order = rng.permutation(n)
    n_test = int(round(test_fraction * n))
    test, rest = order[:n_test], order[n_test:]
    bounds = np.round(np.cumsum(np.r_[0, np.asarray(sizes, float)]) * len(rest)).astype(int)
    return test, {j: rest[a:b] for j, (a, b) in enumerate(zip(bounds[:-1], bounds[1:]))}


def partition_rows(data, parts: dict) -> dict:
    """``{j: (X, y)}`` sliced from tensors, or ``{j: Lazy}`` for a ``Dataset``."""
    if isinstance(data, DatasetData):
        return {j: Lazy(data, idx) for j, idx in parts.items()}
    return {j: data.take(idx) for j, idx in parts.items()}


def rows_of(part) -> tuple[torch.Tensor, torch.Tensor]:
    """A partition's ``(X, y)``, materialising a ``Lazy`` one."""
    return part.load() if isinstance(part, Lazy) else part


def infer_task(data, model) -> str:
    """The data's task (``DatasetData`` without one: from its first label and the model's
    output width)."""
    if data.task is not None:
        return data.task
    X, y = data.take([0])
    if y.dtype.is_floating_point:
        return "regression"
    with torch.no_grad():
        out = model(X)
    return "multiclass" if out.ndim > 1 and out.shape[-1] > 1 else "binary"
