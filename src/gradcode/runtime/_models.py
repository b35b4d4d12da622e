"""Models and datasets for real training (torch).  The only other place torch is imported is the
rest of ``gradcode.runtime``.

The losses are PyTorch's (means over the batch); ``runtime._loss`` splits them into the sums and
denominators the workers and the master need.
"""

from __future__ import annotations

import gzip
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

from ..datasets import DATASETS as NUMPY_DATASETS, check_model, load_dataset


@dataclass
class TorchData:
    """Training data as tensors plus what the model needs to know.

    >>> import torch
    >>> from gradcode.runtime import TorchData
    >>> X = torch.tensor(np.random.default_rng(0).normal(size=(6, 3)), dtype=torch.float32)
    >>> data = TorchData("toy", X, torch.tensor([0., 1, 0, 1, 1, 0]), task="binary", classes=2)
    >>> len(data), data.take([0, 2])[0].shape, data.take([0, 2])[1].tolist()
    (6, torch.Size([2, 3]), [0.0, 0.0])
    """
    name: str
    X: torch.Tensor
    y: torch.Tensor
    task: str              # regression | binary | multiclass
    classes: int
    image_shape: tuple | None = None

    def __len__(self) -> int:
        return len(self.y)

    def take(self, idx) -> tuple[torch.Tensor, torch.Tensor]:
        """Rows ``idx`` as contiguous tensors."""
        idx = torch.as_tensor(np.asarray(idx, np.int64))
        return self.X[idx].contiguous(), self.y[idx].contiguous()


DATASETS = dict(NUMPY_DATASETS)
DATASETS["fashion-mnist"] = ("Fashion-MNIST from IDX files (--data-dir; Debian's dataset-fashion-mnist "
                             "installs them under /usr/share/datasets/fashion-mnist); model: cnn / mlp / softmax")
FASHION_DIR = "/usr/share/datasets/fashion-mnist"


def _read_idx(path: Path) -> np.ndarray:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as fh:
        zero, dtype, dims = struct.unpack(">HBB", fh.read(4))
        shape = struct.unpack(">" + "I" * dims, fh.read(4 * dims))
        if zero != 0 or dtype != 0x08:
            raise ValueError(f"data-dir: {path.name} is not an unsigned-byte IDX file")
        return np.frombuffer(fh.read(), dtype=np.uint8).reshape(shape)


def load_fashion_mnist(data_dir=None, limit: int | None = None) -> TorchData:
    """Training images and labels from the standard IDX files (optionally gzipped)."""
    d = Path(data_dir or FASHION_DIR)
    def find(stem):
        for name in (stem, stem + ".gz"):
            if (d / name).is_file():
                return d / name
        raise ValueError(f"data-dir: {stem}[.gz] not found in {str(d)!r} "
                         "(install Debian's dataset-fashion-mnist or pass --data-dir)")
    X = _read_idx(find("train-images-idx3-ubyte")).astype(np.float32) / 255.0
    y = _read_idx(find("train-labels-idx1-ubyte")).astype(np.int64)
    if limit:
        X, y = X[:limit], y[:limit]
    return TorchData("fashion-mnist", torch.from_numpy((X - 0.286) / 0.353).unsqueeze(1),
                     torch.from_numpy(y), "multiclass", 10, (1, 28, 28))


def load_torch_data(name: str, seed: int = 0, data_dir=None, n_samples: int = 4000) -> TorchData:
    """Dataset ``name`` as tensors (see ``DATASETS``).

    >>> from gradcode.runtime import load_torch_data
    >>> data = load_torch_data("digits")
    >>> data.X.shape, data.task, data.classes, data.image_shape
    (torch.Size([1797, 1, 8, 8]), 'multiclass', 10, (1, 8, 8))
    >>> load_torch_data("synthetic", seed=0, n_samples=100).X.shape
    torch.Size([100, 100])
    """
    if name == "fashion-mnist":
        return load_fashion_mnist(data_dir)
    if name not in DATASETS:
        raise ValueError(f"dataset: unknown {name!r}; expected one of {', '.join(DATASETS)}")
    d = load_dataset(name, np.random.default_rng(seed), n_samples=n_samples)
    X = torch.tensor(d.X, dtype=torch.float32)
    shape = None
    if name == "digits":
        shape = (1, 8, 8)
        X = X.reshape(-1, *shape)
    ytype = torch.int64 if d.task == "multiclass" else torch.float32
    return TorchData(name, X, torch.tensor(d.y, dtype=ytype), d.task, d.classes, shape)


class _Squeeze(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x):
        return self.inner(x).squeeze(-1)


def build_model(kind: str, data: TorchData, seed: int = 0) -> nn.Module:
    """``linear`` / ``logistic`` / ``softmax`` / ``mlp`` / ``cnn`` for ``data``.

    >>> from gradcode.runtime import build_model, load_torch_data
    >>> iris = load_torch_data("iris")
    >>> model = build_model("softmax", iris)
    >>> model(iris.X[:2]).shape, sum(p.numel() for p in model.parameters())
    (torch.Size([2, 3]), 15)
    >>> build_model("cnn", iris)
    Traceback (most recent call last):
    ...
    ValueError: model: 'cnn' fits an image dataset (digits, fashion-mnist); dataset 'iris' is not one (models for it: softmax, mlp)
    """
    check_model(kind, data.name, data.task)            # the simulator's rule too
    torch.manual_seed(seed)
    features = int(np.prod(data.X.shape[1:]))
    out = 1 if data.task in ("regression", "binary") else data.classes
    flat = nn.Flatten()
    if kind in ("linear", "logistic"):
        body = nn.Sequential(flat, nn.Linear(features, 1))
    elif kind == "softmax":
        body = nn.Sequential(flat, nn.Linear(features, out))
    elif kind == "mlp":
        body = nn.Sequential(flat, nn.Linear(features, 64), nn.ReLU(), nn.Linear(64, out))
    else:
        side = data.image_shape[-1]
        conv = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), flat)
        body = nn.Sequential(conv, nn.Linear(16 * (side // 4) ** 2, out))
    return _Squeeze(body) if out == 1 else body


def loss_for(data: TorchData) -> nn.Module:
    """PyTorch's loss for the task, as PyTorch users write it (a mean over the batch).

    >>> from gradcode.runtime import load_torch_data, loss_for
    >>> loss = loss_for(load_torch_data("iris"))        # multiclass
    >>> loss, loss.reduction
    (CrossEntropyLoss(), 'mean')
    >>> loss_for(load_torch_data("diabetes"))           # regression
    MSELoss()
    """
    if data.task == "regression":
        return nn.MSELoss()
    if data.task == "binary":
        return nn.BCEWithLogitsLoss()
    return nn.CrossEntropyLoss()
