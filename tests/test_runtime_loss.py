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


def test_own_dataset_example_with_the_default_mean_loss(capsys, monkeypatch):
    """The README's example with PyTorch's default ``CrossEntropyLoss()`` (a mean) reaches the
    accuracy of the sum form (40 % instead of 96 % before: the gradient was divided twice)."""
    import runpy
    import sys
    from pathlib import Path
    example = Path(__file__).resolve().parents[1] / "examples" / "own_dataset.py"
    monkeypatch.setattr(sys, "argv", ["own_dataset.py", "--rounds", "40"])
    runpy.run_path(str(example), run_name="__main__")
    out = capsys.readouterr().out
    accuracy = float(out.split("held-out accuracy")[1].strip().rstrip("%")) / 100
    assert accuracy >= 0.9, out
