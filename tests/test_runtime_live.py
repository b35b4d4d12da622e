"""A user's Dataset read every round (issue 31): seeded by (run seed, job, partition, row), so a
randomly augmenting Dataset augments differently every round while every copy of a partition
reads the same values (``runtime._reading``)."""

from __future__ import annotations

import random
import threading

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

from gradcode.runtime import TrainConfig, train  # noqa: E402

from test_pytorch_reference import MLP, features, labels  # noqa: E402


class Augmenting(torch.utils.data.Dataset):
    """Features plus noise from torch's, NumPy's and Python's generators; every read logged as
    ``(thread, row, value)``."""

    def __init__(self):
        self.X, self.y, self.reads = features(), labels(), []

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        noise = (0.1 * torch.randn(self.X.shape[1]) + float(np.random.rand())
                 + random.random())
        self.reads.append((i, float(noise[0])))      # (list.append: atomic)
        return self.X[i] + noise, self.y[i]


def run(data, **kw):
    seen = []
    cfg = dict(code="gc-cr", code_params={"n": 4, "s": 1}, wait="all", rounds=3, lr=0.1)
    cfg.update(kw)
    res = train(TrainConfig(**cfg), model=MLP(), loss_fn=nn.CrossEntropyLoss(), data=data,
                progress=False, on_round=lambda r, rec, info: seen.append(info.gradient))
    return np.array(seen), res


def test_an_augmenting_dataset_is_read_every_round_the_same_by_every_copy():
    """gc-cr (each partition on two workers), local threads: every row is read every round by
    both copies with the same noise, the noise changes between rounds, and ``--audit`` (the
    master's own reads, seeded alike) holds at float32 rounding."""
    data = Augmenting()
    _, res = run(data, audit=True)
    assert max(r.audit_error for r in res.records) <= 1e-5
    values: dict = {}
    for i, v in data.reads:
        values.setdefault(i, []).append(v)
    # each row: read by its two workers and the auditor in each of the 3 rounds (one value a
    # round, each 3 times), besides the master's one-off reads (its evaluation sample)
    repeated = {i: {x for x in v if v.count(x) >= 3} for i, v in values.items()}
    assert len(repeated) == len(data)
    assert all(len(r) == 3 for r in repeated.values()), list(values.values())[:2]


def test_loader_processes_read_what_the_thread_reads():
    """``loader_workers`` K > 0 (DataLoader processes) gives the gradients of reading in the
    worker's thread, bit for bit, on the virtual and local backends."""
    for backend in ("virtual", "local"):
        alone, _ = run(Augmenting(), backend=backend)
        loaded, _ = run(Augmenting(), backend=backend, loader_workers=2)
        np.testing.assert_array_equal(loaded, alone)


class Forked(Augmenting):
    """Writes to ``log``, from the process that reads an item, its pid and whether it found the
    torch backend's module imported: forked from a server that had imported it."""

    def __init__(self, log):
        super().__init__()
        self.log = str(log)

    def __getitem__(self, i):
        import os
        import sys
        with open(self.log, "a") as fh:
            fh.write(f"{os.getpid()} {'gradcode.runtime._torch' in sys.modules}\n")
        return super().__getitem__(i)


def test_loader_processes_are_forked_with_torch_imported(tmp_path):
    """The DataLoader's processes fork from the runtime's forkserver, which imported torch and
    the runtime once (as the torch backend's hosts do): from the default server, which preloads
    only ``__main__``, every loader process imported torch itself (~2.5 s of CPU each)."""
    import os
    log = tmp_path / "reads.txt"
    run(Forked(log), backend="virtual", loader_workers=2, rounds=1)
    reads = [line.split() for line in log.read_text().splitlines()]
    loaders = {pid for pid, _ in reads if int(pid) != os.getpid()}
    assert len(loaders) == 2, reads[:4]
    assert all(found == "True" for pid, found in reads if pid in loaders)


def test_a_read_is_seeded_by_job_partition_and_row_and_leaves_the_callers_state_alone():
    from gradcode.runtime._data import as_data
    from gradcode.runtime._reading import Live
    live = Live(as_data(Augmenting()), np.arange(10, 20))

    def state():
        return torch.rand(1).item(), np.random.rand(), random.random()

    torch.manual_seed(5), np.random.seed(5), random.seed(5)
    X, _ = live.read(np.arange(10), 0, 1, 2)
    after = state()
    torch.manual_seed(5), np.random.seed(5), random.seed(5)
    assert state() == after
    assert torch.equal(live.read([3, 4], 0, 1, 2)[0], X[3:5])       # the same rows, alike
    assert not torch.equal(live.read([3, 4], 0, 2, 2)[0], X[3:5])   # another job
    assert not torch.equal(live.read([3, 4], 0, 1, 3)[0], X[3:5])   # another partition


class Unpicklable(Augmenting):
    def __init__(self):
        super().__init__()
        self.lock = threading.Lock()


@pytest.mark.filterwarnings("ignore:Got pickle error")
def test_loader_processes_need_a_dataset_that_pickles():
    with pytest.raises(ValueError, match="loader_workers: your Dataset must pickle"):
        run(Unpicklable(), backend="virtual", loader_workers=2)


def test_loader_workers_need_a_dataset():
    with pytest.raises(ValueError, match="loader_workers: only with your own Dataset"):
        train(TrainConfig(code_params={"n": 2}, dataset="iris", rounds=1, loader_workers=2),
              progress=False)


def test_a_read_seeds_only_the_cpu_generators(monkeypatch):
    """Each item is seeded on torch's CPU generator, NumPy's and Python's, whose states the read
    restores.  ``torch.manual_seed`` would also seed every CUDA device, a state the read does not
    restore, and, with CUDA not initialised, record a stack trace per item for its lazy seeding:
    the README's own-Dataset example spent 40 of its 41 s there."""
    data, model, calls = Augmenting(), MLP(), []          # MLP() seeds torch itself
    monkeypatch.setattr(torch.cuda, "manual_seed_all", lambda seed: calls.append(seed))
    res = train(TrainConfig(code="gc-cr", code_params={"n": 4, "s": 1}, rounds=1, lr=0.1,
                            backend="virtual"), model=model, loss_fn=nn.CrossEntropyLoss(),
                data=data, progress=False)
    assert len(data.reads) >= len(data) and res.records and calls == []
