"""Reading a user's ``Dataset`` every round, as a DataLoader reads it, the same on every copy of a
partition.

A ``Live`` partition is a ``DatasetData`` (fetched once by each Ray actor) and the partition's
row indices.  Each round, a worker reads the rows its partition needs (all of them, or the
round's mini-batch) with ``Live.read``: every item is read with torch's, NumPy's and Python's
random state seeded by (run seed, job, partition, the item's position in the partition), so a
randomly augmenting Dataset augments differently every round, and every copy of a partition (on
another worker, another process or the auditor) reads the same values.

In this process's threads the reads hold ``RANDOM`` (the random states are process-wide; the
forwards of a model with dropout take it too: ``Layout``), the states restored after.  With
``loader_workers`` K > 0 a ``torch.utils.data.DataLoader`` with K worker processes reads them
(every item seeded in the process that reads it, so the values do not depend on which one did);
the processes persist from round to round (one loader per process and Dataset, ended by
``close_loaders`` at the end of the run) and are forked from a forkserver, not from this process
and its threads (measured: forked from a worker's thread, one now and then exited with code 1),
so the Dataset must pickle, as it must with DataLoader on macOS and Windows.
"""

from __future__ import annotations

import contextlib
import pickle
import random
import threading
from dataclasses import dataclass

import numpy as np
import torch

from ..engine import user_error
from ._data import DatasetData, Rows
from ._fork import forkserver

#: one seeded read or forward at a time per process: torch's, NumPy's and Python's random
#: states are process-wide
RANDOM = threading.Lock()


def item_seed(seed: int, job: int, j: int, position: int) -> int:
    """The seed of the item at ``position`` of partition ``j`` in job ``job``."""
    return int(np.random.SeedSequence([seed, job, j, position, 0xDA7A]).generate_state(
        1, np.uint32)[0])


def _seed(s: int) -> None:
    """Seed the CPU generators ``_restored`` restores (``torch.manual_seed`` would also seed
    every CUDA device, unrestored, and record a stack per call while CUDA is not initialised)."""
    torch.default_generator.manual_seed(s)
    np.random.seed(s)
    random.seed(s)


@contextlib.contextmanager
def _restored():
    """torch's (CPU), NumPy's and Python's random states restored on exit."""
    t, n, p = torch.get_rng_state(), np.random.get_state(), random.getstate()
    try:
        yield
    finally:
        torch.set_rng_state(t)
        np.random.set_state(n)
        random.setstate(p)


@dataclass(frozen=True)
class Live:
    """Rows ``idx`` of ``source`` (a ``DatasetData``; on its way to a Ray actor, a reference to
    one: ``GradientWorkers.shipped``), read where they are used, every round (module doc).
    Picklable."""
    source: object
    idx: np.ndarray

    def __len__(self) -> int:
        return len(self.idx)

    def read(self, positions, seed: int, job: int, j: int, loader_workers: int = 0) -> tuple:
        """``(X, y)`` of the rows at ``positions`` of the partition (partition ``j``, job
        ``job``), each item read under its own seed (``item_seed``)."""
        src = self.source
        rows = self.idx[np.asarray(positions, int)]
        seeds = [item_seed(seed, job, j, int(p)) for p in positions]
        if loader_workers > 0:
            items = _loaded(src, rows, seeds, loader_workers)
        else:
            items = []
            with RANDOM, _restored():
                for i, s in zip(rows, seeds):
                    _seed(s)
                    items.append(src.item(int(i)))
        return src.collate(items, rows)


def _loaded(src: DatasetData, rows, seeds, workers: int) -> list:
    """The items read by this process's loader of ``src`` (``workers`` processes), in order."""
    try:
        return _loader(src, workers).read(rows, seeds)
    except Exception as exc:
        try:
            pickle.dumps(src.dataset)
        except Exception as why:
            raise user_error(ValueError(
                f"loader_workers: your Dataset must pickle to be read by loader processes "
                f"({type(why).__name__}: {why}); use loader_workers 0, or make it picklable"),
                f"loader_workers {workers}") from None
        raise exc


class _Keys(torch.utils.data.Sampler):
    """The ``(row, seed)`` keys of the read under way (set before each)."""

    def __init__(self):
        self.keys: list = []

    def __iter__(self):
        return iter(self.keys)

    def __len__(self) -> int:
        return len(self.keys)


class _Loader:
    """A DataLoader whose ``workers`` processes persist from read to read (started once, from a
    forkserver); one read at a time."""

    def __init__(self, data: DatasetData, workers: int, batch: int = 8):
        self.keys, self.lock = _Keys(), threading.Lock()
        self.loader = torch.utils.data.DataLoader(
            _Seeded(data.dataset), batch_size=batch, sampler=self.keys, num_workers=workers,
            collate_fn=list, persistent_workers=True, multiprocessing_context=forkserver())

    def read(self, rows, seeds) -> list:
        with self.lock:
            self.keys.keys = [(int(i), int(s)) for i, s in zip(rows, seeds)]
            return [item for batch in self.loader for item in batch]


_LOADERS: dict = {}
_LOADERS_LOCK = threading.Lock()


def _loader(data: DatasetData, workers: int) -> _Loader:
    """This process's loader of ``data`` with ``workers`` processes (made on first use)."""
    key = (id(data), workers)
    with _LOADERS_LOCK:
        if key not in _LOADERS:
            _LOADERS[key] = (data, _Loader(data, workers))     # (data kept: its id stays its own)
        return _LOADERS[key][1]


def close_loaders() -> None:
    """End this process's loader processes (a DataLoader ends its persistent workers once it is
    collected)."""
    with _LOADERS_LOCK:
        _LOADERS.clear()


def partition_rows(data, parts: dict) -> dict:
    """``{j: Rows}`` of a ``TorchData``'s tensors (not copied), or ``{j: Live}`` for a
    ``Dataset`` (read every round where it is used)."""
    if isinstance(data, DatasetData):
        return {j: Live(data, idx) for j, idx in parts.items()}
    return {j: Rows(data.X, data.y, torch.as_tensor(np.asarray(idx, np.int64)))
            for j, idx in parts.items()}


class _Seeded(torch.utils.data.Dataset):
    """A Dataset's items by ``(row, seed)``: each read under its own seed (in a loader process)."""

    def __init__(self, dataset):
        self.dataset = dataset

    def __len__(self) -> int:
        return len(self.dataset)

    def __getitem__(self, key):
        i, s = key
        _seed(s)
        return self.dataset[int(i)]
