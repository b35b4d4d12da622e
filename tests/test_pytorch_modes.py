"""Train and eval modes as PyTorch users expect them (issue 30): BatchNorm trains, its running
statistics come from the training forward passes only (with one partition exactly PyTorch's);
evaluation runs under ``eval()`` and ``no_grad`` and restores the model's mode; dropout is seeded
per (run seed, job, partition), so the copies of a partition agree bit for bit."""

from __future__ import annotations

import copy

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

from gradcode.runtime import TrainConfig, train  # noqa: E402

from test_pytorch_reference import assert_same_parameters, features, labels, plain  # noqa: E402


class Normed(nn.Module):
    """BatchNorm of 1, 2 or 3 dimensions behind a linear layer."""

    def __init__(self, dims=1, momentum=0.1):
        super().__init__()
        torch.manual_seed(0)
        self.dims = dims
        self.lin = nn.Linear(5, 4 * 2 ** dims)
        self.bn = {1: nn.BatchNorm1d, 2: nn.BatchNorm2d, 3: nn.BatchNorm3d}[dims](4, momentum=momentum)
        self.out = nn.Linear(4 * 2 ** dims, 3)

    def forward(self, x):
        z = self.lin(x).reshape(len(x), 4, *([2] * self.dims))
        return self.out(torch.relu(self.bn(z)).reshape(len(x), -1))


def run(model, code="uncoded", n=1, wait="all", **kw):
    X, y = features(), labels()
    params = {"n": n} if code == "uncoded" else {"n": n, "s": 1}
    cfg = TrainConfig(code=code, code_params=params, wait=wait, rounds=kw.pop("rounds", 4),
                      lr=0.1, backend=kw.pop("backend", "virtual"), seed=5, **kw)
    return train(cfg, model=model, loss_fn=nn.CrossEntropyLoss(),
                 data=torch.utils.data.TensorDataset(X, y), progress=False)


@pytest.mark.parametrize("dims", [1, 2, 3])
@pytest.mark.parametrize("momentum", [0.1, None])
def test_batchnorm_with_one_partition_is_plain_pytorch_buffers_included(dims, momentum):
    """n = 1: the parameters, running mean and variance and the batch count are PyTorch's
    (``momentum=None`` is the cumulative average, which reads the batch count)."""
    model = Normed(dims, momentum)
    want = plain(copy.deepcopy(model), nn.CrossEntropyLoss(), features(), labels(),
                 lambda p: torch.optim.SGD(p, lr=0.1))
    res = run(model)
    assert_same_parameters(res.model, want)
    assert int(res.model.bn.num_batches_tracked) == 4
    assert res.model.training                          # evaluation restored the mode


def test_batchnorm_with_several_partitions_follows_the_documented_rule():
    """n = 4 exact: the running mean is the full batch's mean (the sample-weighted mean of the
    partitions' updates); the running variance the weighted mean of the partitions'."""
    model = Normed(1)
    seen = []
    X, y = features(), labels()
    cfg = TrainConfig(code="gc-cr", code_params={"n": 4, "s": 1}, wait="decodable",
                      delay="exp:1", rounds=1, lr=0.1, backend="virtual", seed=5)
    start = copy.deepcopy(model)
    res = train(cfg, model=model, loss_fn=nn.CrossEntropyLoss(),
                data=torch.utils.data.TensorDataset(X, y), progress=False,
                on_round=lambda r, rec, info: seen.append(info.counts))
    with torch.no_grad():
        z = start.lin(X).reshape(len(X), 4, 2)
    mean = 0.1 * z.mean((0, 2))                      # from 0, momentum 0.1
    torch.testing.assert_close(res.model.bn.running_mean, mean, rtol=1e-5, atol=1e-6)
    assert int(res.model.bn.num_batches_tracked) == 1


def test_evaluation_never_updates_running_statistics():
    """Half the rows held out and evaluated every round, as is the training loss: the running
    statistics are still exactly plain PyTorch's on the training rows alone."""
    from gradcode.engine import streams
    from gradcode.runtime import TorchData, split_partitions
    data = TorchData("toy", features(), labels(), "multiclass", 3)
    (X, y), = split_partitions(data, [1.0], streams(5)["data"], test_fraction=0.5).values()
    model = Normed(1)
    want = plain(copy.deepcopy(model), nn.CrossEntropyLoss(), X, y,
                 lambda p: torch.optim.SGD(p, lr=0.1))
    cfg = TrainConfig(code="uncoded", code_params={"n": 1}, rounds=4, lr=0.1, backend="virtual",
                      seed=5, test_fraction=0.5, eval_every=1)
    res = train(cfg, model=model, loss_fn=nn.CrossEntropyLoss(), data=data, progress=False)
    assert all(np.isfinite(r.test_accuracy) for r in res.records)
    assert_same_parameters(res.model, want)


class Dropped(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.body = nn.Sequential(nn.Linear(5, 32), nn.ReLU(), nn.Dropout(0.5), nn.Linear(32, 3))

    def forward(self, x):
        return self.body(x)


@pytest.mark.parametrize("backend", ["virtual", "local"])
def test_dropout_copies_of_a_partition_agree_bit_for_bit(backend):
    """gc-cr computes every partition twice: with dropout unseeded the audit was 0.2 to 1.85;
    seeded by (seed, job, partition) it stays at float32 rounding."""
    res = run(Dropped(), code="gc-cr", n=4, wait="decodable", delay="exp:1", audit=True,
              backend=backend, rounds=5)
    assert res.summary["max_audit_error"] <= 1e-5


def test_dropout_is_off_when_evaluating():
    """The reported loss is the eval-mode loss (dropout off): the same as the model's own in
    ``eval()``, and the model is left in training mode."""
    model = Dropped()
    res = run(model, rounds=2)
    X, y = features(), labels()
    model.eval()
    with torch.no_grad():
        want = float(nn.CrossEntropyLoss()(model(X), y))
    assert res.records[-1].loss == pytest.approx(want, rel=1e-5)


def test_dropout_differs_between_partitions_and_rounds():
    """Seeding by (seed, job, partition) must not give every partition the same mask: two
    partitions' gradients of the same rows differ, and so do two rounds'."""
    from gradcode.runtime._layout import Layout
    from gradcode.runtime._loss import Objective
    from gradcode.runtime._worker import GradientWorker
    model, X, y = Dropped(), features()[:20], labels()[:20]
    layout = Layout.of(model, X)
    obj = Objective.of(nn.CrossEntropyLoss(), model, X, y)
    w = GradientWorker(0, model, obj, layout, {0: (X, y), 1: (X, y)}, 7, None)
    params = layout.vector(model)

    def grad(job, j):
        return w.compute(job, params, [(job, [j], [1.0])]).coded[0]

    g = {(job, j): grad(job, j) for job in (0, 1) for j in (0, 1)}
    assert np.array_equal(g[0, 0], grad(0, 0))                     # reproducible
    assert not np.array_equal(g[0, 0], g[0, 1]) and not np.array_equal(g[0, 0], g[1, 0])
    assert layout.random and np.isfinite(g[0, 0]).all()
