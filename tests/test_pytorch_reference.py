"""Plain PyTorch is the reference (issue 30): with uncoded (wait ``all``) or an exact code (wait
``decodable``), gradcode's parameters after a few rounds equal those of a plain PyTorch loop over
the whole training set with the same model, loss object, optimizer and data, for every loss in
every form PyTorch users write it, frozen and unused parameters included."""

from __future__ import annotations

import copy

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

from gradcode.runtime import TrainConfig, train  # noqa: E402

ROWS, FEATURES, CLASSES = 61, 5, 3          # 61 rows: partitions of unequal sizes
STEPS = 4
W = torch.tensor([0.3, 1.0, 2.5])           # class weights: denominators depend on the data


def features(seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(ROWS, FEATURES, generator=g)


def labels(seed=1, ignore=None):
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, CLASSES, (ROWS,), generator=g)
    if ignore is not None:
        y[torch.randperm(ROWS, generator=g)[:15]] = ignore
    return y


def regression_targets(k=CLASSES, seed=2):
    return torch.randn(ROWS, k, generator=torch.Generator().manual_seed(seed))


def binary_targets(seed=3):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, 2, (ROWS, 1), generator=g).float()


def soft_targets(seed=4):
    g = torch.Generator().manual_seed(seed)
    return torch.softmax(torch.randn(ROWS, CLASSES, generator=g) * 2, dim=1)


class MLP(nn.Module):
    def __init__(self, out=CLASSES, head=None):
        super().__init__()
        torch.manual_seed(0)
        self.body = nn.Sequential(nn.Linear(FEATURES, 8), nn.Tanh(), nn.Linear(8, out))
        self.head = head

    def forward(self, x):
        z = self.body(x)
        return self.head(z) if self.head is not None else z


def per_sample_ce(out, y):
    return F.cross_entropy(out, y, reduction="none")


#: name -> (loss, targets, model head): every loss the issue lists
LOSSES = {
    "ce-weight": (lambda: nn.CrossEntropyLoss(weight=W), labels, None),
    "ce-ignore": (lambda: nn.CrossEntropyLoss(ignore_index=1), lambda: labels(), None),
    "ce-ignore-100": (lambda: nn.CrossEntropyLoss(), lambda: labels(ignore=-100), None),
    "ce-smooth": (lambda: nn.CrossEntropyLoss(label_smoothing=0.2), labels, None),
    "ce-all": (lambda: nn.CrossEntropyLoss(weight=W, ignore_index=-100, label_smoothing=0.1),
               lambda: labels(ignore=-100), None),
    "ce-soft": (lambda: nn.CrossEntropyLoss(), soft_targets, None),
    "nll-weight": (lambda: nn.NLLLoss(weight=W), labels, nn.LogSoftmax(dim=1)),
    "mse": (lambda: nn.MSELoss(), regression_targets, None),
    "l1": (lambda: nn.L1Loss(), regression_targets, None),
    "smooth-l1": (lambda: nn.SmoothL1Loss(beta=0.5), regression_targets, None),
    "huber": (lambda: nn.HuberLoss(delta=0.7), regression_targets, None),
    "bce": (lambda: nn.BCELoss(), binary_targets, nn.Sigmoid()),
    "bce-logits": (lambda: nn.BCEWithLogitsLoss(pos_weight=torch.tensor([2.0])),
                   binary_targets, None),
    "kl-batchmean": (lambda: nn.KLDivLoss(reduction="batchmean"), soft_targets,
                     nn.LogSoftmax(dim=1)),
    "fn-mse": (lambda: F.mse_loss, regression_targets, None),
    "fn-ce-weight": (lambda: (lambda out, y: F.cross_entropy(out, y, weight=W)), labels, None),
    "fn-per-sample": (lambda: per_sample_ce, labels, None),
    "sum": (lambda: nn.MSELoss(reduction="sum"), regression_targets, None),
}

CODES = {
    "uncoded": ("uncoded", {"n": 4}, "all", "none"),
    "gc-cr": ("gc-cr", {"n": 4, "s": 1}, "decodable", "exp:1"),
    "gc-fr": ("gc-fr", {"n": 4, "s": 1}, "decodable", "exp:1"),
}


def out_width(targets):
    return targets.shape[1] if targets.ndim == 2 else CLASSES


def plain(model, loss_fn, X, y, make_optimizer, steps=STEPS, make_scheduler=None):
    """The reference: full-batch PyTorch training."""
    opt = make_optimizer(model.parameters())
    sched = make_scheduler(opt) if make_scheduler else None
    for _ in range(steps):
        opt.zero_grad()
        loss = loss_fn(model(X), y)
        if loss.ndim:                      # a per-sample vector: its mean, as a trainer takes it
            loss = loss.mean()
        loss.backward()
        opt.step()
        if sched is not None:
            sched.step()
    return model


def coded(model, loss_fn, X, y, code="uncoded", steps=STEPS, backend="virtual", **kw):
    name, params, wait, delay = CODES[code]
    cfg = TrainConfig(code=name, code_params=params, wait=wait, delay=delay, rounds=steps,
                      lr=kw.pop("lr", 0.1), backend=backend, seed=3, **kw.pop("config", {}))
    res = train(cfg, model=model, loss_fn=loss_fn,
                data=torch.utils.data.TensorDataset(X, y), progress=False, **kw)
    return res


def assert_same_parameters(got: nn.Module, want: nn.Module, rtol=1e-5):
    for (name, a), (_, b) in zip(got.state_dict().items(), want.state_dict().items()):
        a, b = a.detach().double(), b.detach().double()
        err = float((a - b).norm() / max(float(b.norm()), 1e-12))
        assert err <= rtol, f"{name}: relative difference {err:.3g}"


@pytest.mark.parametrize("code", list(CODES))
@pytest.mark.parametrize("loss", list(LOSSES))
def test_every_loss_steps_as_plain_pytorch(loss, code):
    make_loss, targets, head = LOSSES[loss]
    X, y = features(), targets()
    model = MLP(out_width(y) if y.ndim == 2 else CLASSES, head)
    if loss in ("bce", "bce-logits"):
        model = MLP(1, head)
    lr = 0.005 if loss == "sum" else 0.1            # the sum's gradient is 61 means'
    want = plain(copy.deepcopy(model), make_loss(), X, y, lambda p: torch.optim.SGD(p, lr=lr))
    res = coded(model, make_loss(), X, y, code, lr=lr)
    assert all(r.recovered_fraction == 1.0 for r in res.records)
    assert_same_parameters(res.model, want)
    assert res.model is model                          # the user's module, trained in place


def test_a_summed_loss_steps_with_the_sum_and_the_mean_with_the_mean():
    """``reduction="sum"`` is PyTorch's sum over the whole training set, not the mean: the two
    forms step differently, each as PyTorch does."""
    X, y = features(), regression_targets()
    got = {}
    for reduction in ("sum", "mean"):
        res = coded(MLP(), nn.MSELoss(reduction=reduction), X, y, "gc-cr", lr=0.01)
        want = plain(MLP(), nn.MSELoss(reduction=reduction), X, y,
                     lambda p: torch.optim.SGD(p, lr=0.01))
        assert_same_parameters(res.model, want)
        got[reduction] = torch.cat([p.detach().reshape(-1) for p in res.model.parameters()])
    assert float((got["sum"] - got["mean"]).norm()) > 1e-2


class Frozen(nn.Module):
    """A frozen first layer (fine-tuning) and a module forward never uses."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.first = nn.Linear(FEATURES, 8)
        self.first.requires_grad_(False)
        self.second = nn.Linear(8, CLASSES)
        self.unused = nn.Linear(4, 4)

    def forward(self, x):
        return self.second(torch.tanh(self.first(x)))


@pytest.mark.parametrize("code", ["uncoded", "gc-cr"])
def test_frozen_and_unused_parameters_train_as_in_pytorch(code):
    """Frozen parameters stay fixed; unused ones get no update, even with weight decay (which
    would move a parameter whose gradient were zero rather than None)."""
    X, y = features(), labels()
    opt = lambda p: torch.optim.AdamW(p, lr=0.05, weight_decay=0.5)  # noqa: E731
    model = Frozen()
    first, unused = model.first.weight.clone(), model.unused.weight.clone()
    want = plain(copy.deepcopy(model), nn.CrossEntropyLoss(), X, y, opt)
    res = coded(model, nn.CrossEntropyLoss(), X, y, code, optimizer=opt)
    assert_same_parameters(res.model, want)
    assert torch.equal(model.first.weight, first) and torch.equal(model.unused.weight, unused)
    assert not torch.equal(model.second.weight, Frozen().second.weight)


@pytest.mark.parametrize("code", ["uncoded", "gc-cr"])
@pytest.mark.parametrize("name", ["adamw", "sgd-nesterov", "adam-l2"])
def test_your_optimizer_and_schedule_step_as_in_pytorch(code, name):
    X, y = features(), labels()
    make = {"adamw": lambda p: torch.optim.AdamW(p, lr=0.02, weight_decay=0.1),
            "sgd-nesterov": lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True,
                                                      weight_decay=1e-3),
            "adam-l2": lambda p: torch.optim.Adam(p, lr=0.02, weight_decay=1e-2)}[name]
    sched = lambda o: torch.optim.lr_scheduler.StepLR(o, step_size=2, gamma=0.5)  # noqa: E731
    want = plain(MLP(), nn.CrossEntropyLoss(), X, y, make, steps=5, make_scheduler=sched)
    res = coded(MLP(), nn.CrossEntropyLoss(), X, y, code, steps=5, optimizer=make,
                scheduler=sched)
    assert_same_parameters(res.model, want)


def test_a_sequential_scheme_gives_each_model_its_own_optimizer_and_schedule():
    """m-sgc trains M = T + 1 models round-robin (paper 4 App. I): each is the user's optimizer
    and schedule stepping plain PyTorch's full-batch steps on its own jobs; the first model is
    the user's module, trained in place."""
    import gradcode
    params = {"n": 4, "B": 1, "W": 2, "lam": 1}
    T = gradcode.make_code("m-sgc", **params).T
    rounds = T + 7
    make = lambda p: torch.optim.AdamW(p, lr=0.05, weight_decay=0.1)  # noqa: E731
    sched = lambda o: torch.optim.lr_scheduler.StepLR(o, 1, 0.7)      # noqa: E731
    model, X, y = MLP(), features(), labels()
    cfg = TrainConfig(code="m-sgc", code_params=params, wait="all", rounds=rounds,
                      backend="virtual")
    res = train(cfg, model=model, loss_fn=nn.CrossEntropyLoss(),
                data=torch.utils.data.TensorDataset(X, y), progress=False, optimizer=make,
                scheduler=sched)
    assert res.model is model and len(res.models) == T + 1
    for m, got in enumerate(res.models):
        steps = len(range(m, rounds - T, T + 1))
        want = plain(MLP(), nn.CrossEntropyLoss(), X, y, make, steps=steps,
                     make_scheduler=sched)
        assert_same_parameters(got, want)
