"""A user's loss in any of PyTorch's forms keeps its meaning (issues 19 and 30): the default
mean-reduced ``torch.nn`` losses, ``reduction="none"`` and plain functions that average train the
same trajectory; ``reduction="sum"`` and functions that sum train another one, PyTorch's for a
sum; anything else is refused in one line.  ``tests/test_pytorch_reference.py`` compares every
loss with a plain PyTorch loop."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402

from gradcode.cli import main  # noqa: E402
from gradcode.runtime import TrainConfig, build_model, load_torch_data, train  # noqa: E402

WEIGHTS = torch.linspace(0.5, 2.0, 10)


@pytest.fixture(scope="module")
def digits():
    return load_torch_data("digits", seed=0)


def losses(data, loss_fn, lr=0.5, **kw):
    cfg = TrainConfig(code="isgc-cr", code_params={"n": 4, "c": 2}, wait="fastest:3",
                      delay="exp:0.1", rounds=6, seed=2, backend="virtual", lr=lr, batch=32,
                      dataset="digits", **kw)
    res = train(cfg, model=build_model("softmax", data, 0), loss_fn=loss_fn, data=data,
                progress=False)
    return np.array([r.loss for r in res.records])


@pytest.mark.parametrize("form", [
    torch.nn.CrossEntropyLoss(reduction="none"),
    lambda out, y: F.cross_entropy(out, y),                   # a plain function that averages
    lambda out, y: F.cross_entropy(out, y, reduction="none"),
    lambda out, y: F.cross_entropy(out, y, reduction="sum") / len(y),    # a mean by hand
], ids=["none", "fn-mean", "fn-none", "fn-by-hand"])
def test_every_form_of_a_mean_trains_as_the_mean_does(digits, form):
    want = losses(digits, torch.nn.CrossEntropyLoss())
    np.testing.assert_allclose(losses(digits, form), want, rtol=1e-5)
    assert want[-1] < 0.6 * want[0]                  # it trains


def test_every_form_of_a_sum_trains_as_the_sum_does(digits):
    """A sum is PyTorch's sum over the whole training set (a step 32 x 4 times the mean's
    here): every form of it takes the same steps; the loss reported is per sample."""
    want = losses(digits, torch.nn.CrossEntropyLoss(reduction="sum"), lr=0.005)
    got = losses(digits, lambda out, y: F.cross_entropy(out, y, reduction="sum"), lr=0.005)
    np.testing.assert_allclose(got, want, rtol=1e-5)
    assert not np.allclose(losses(digits, torch.nn.CrossEntropyLoss(), lr=0.005), want)


def test_class_weights_of_a_mean_loss_are_kept(digits):
    """``CrossEntropyLoss(weight=w)`` averages by the weights of the targets: not the mean of
    the unweighted loss, nor the weighted sum over the samples; the user's loss object is left
    as it was."""
    mean = torch.nn.CrossEntropyLoss(weight=WEIGHTS)
    got = losses(digits, mean)
    assert not np.allclose(got, losses(digits, torch.nn.CrossEntropyLoss()), rtol=1e-3)
    np.testing.assert_allclose(got, losses(digits, lambda out, y: F.cross_entropy(
        out, y, weight=WEIGHTS)), rtol=1e-5)
    assert mean.reduction == "mean"


@pytest.mark.parametrize("bad,word", [
    (lambda out, y: F.cross_entropy(out, y, reduction="sum") ** 0.5, "summed or averaged"),
    (type("Odd", (torch.nn.CrossEntropyLoss,), {})(reduction="sum"), None),
])
def test_a_loss_neither_sum_nor_mean_is_refused(digits, bad, word):
    if word is None:                                  # a torch loss with an unknown reduction
        bad.reduction = "median"
        word = "reduction"
    with pytest.raises(ValueError, match=f"^loss_fn: .*{word}"):
        losses(digits, bad)


def _loss_inputs():
    """Inputs for every loss ``runtime._loss`` observes (its ``DENOMINATORS``); a trailing dict
    holds keyword arguments."""
    g = torch.Generator().manual_seed(0)
    x, t = torch.randn(6, 4, generator=g), torch.randn(6, 4, generator=g)
    p, b = torch.sigmoid(x), (t > 0).float()
    cls = torch.tensor([0, 1, 2, 3, 1, 0])
    w = torch.tensor([1.0, 2.0, 0.5, 3.0])
    a1, a2, sign = torch.randn(6, generator=g), torch.randn(6, generator=g), torch.sign(t[:, 0])
    lp = torch.randn(7, 2, 4, generator=g).log_softmax(2)
    return {
        F.cross_entropy: [(x, cls), (x, cls, w), (x, torch.softmax(t, 1))],
        F.nll_loss: [(x.log_softmax(1), cls, w)],
        F.kl_div: [(x.log_softmax(1), torch.softmax(t, 1))],     # ('mean' warns: PyTorch's)
        F.ctc_loss: [(lp, torch.tensor([[1, 2], [3, 3]]), torch.tensor([7, 7]),
                      torch.tensor([2, 1]))],
        F.mse_loss: [(x, t), (x, t, {"weight": w.expand(6, 4).contiguous()})],
        F.l1_loss: [(x, t)], F.huber_loss: [(x, t)], F.smooth_l1_loss: [(x, t)],
        F.binary_cross_entropy: [(p, b)], F.binary_cross_entropy_with_logits: [(x, b)],
        F.poisson_nll_loss: [(x, t.abs())], F.gaussian_nll_loss: [(x, t, torch.ones(6, 4))],
        F.soft_margin_loss: [(x, torch.sign(t))], F.hinge_embedding_loss: [(x, torch.sign(t))],
        F.margin_ranking_loss: [(a1, a2, sign)], F.cosine_embedding_loss: [(x, t, sign)],
        F.multilabel_margin_loss: [(x, torch.tensor([[1, 2, -1, 0]] * 6))],
        F.multilabel_soft_margin_loss: [(x, b)], F.multi_margin_loss: [(x, cls)],
        F.triplet_margin_loss: [(x, t, x.flip(0))],
        F.triplet_margin_with_distance_loss: [(x, t, x.flip(0))],
    }


@pytest.mark.filterwarnings("ignore:reduction.*batchmean")    # kl_div's own, for 'mean'
@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_every_observed_loss_gives_pytorchs_value_and_a_denominator(reduction):
    """Each functional loss ``runtime._loss`` watches returns, under observation, the value
    PyTorch's own reduction gives, and ``D * value`` is the sum of its per-element losses (a
    mean's denominator by PyTorch's rule)."""
    from gradcode.runtime._loss import DENOMINATORS, _Observed
    table = _loss_inputs()
    assert set(table) == set(DENOMINATORS)
    for f, cases in table.items():
        for args in cases:
            kw = {"reduction": reduction, **(args[-1] if isinstance(args[-1], dict) else {})}
            args = tuple(a for a in args if not isinstance(a, dict))
            want = f(*args, **kw)
            with _Observed() as seen:
                got = f(*args, **kw)
            torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6,
                                       msg=f"{f.__name__}: {float(got)} != {float(want)}")
            assert [k for k, _, _ in seen.seen] == [reduction], f.__name__
