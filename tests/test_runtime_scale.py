"""Real-size models (issue 31): micro-batches that accumulate a partition's gradient, evaluation
in batches that can be switched off."""

from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

from gradcode.runtime import TrainConfig, train  # noqa: E402

from test_pytorch_reference import MLP, W, features, labels  # noqa: E402


def gradients(micro_batch=None, code="gc-cr", batch=None, loss=None, **kw):
    params = {"n": 4, "s": 1} if code == "gc-cr" else {"n": 4}
    cfg = TrainConfig(code=code, code_params=params, wait="all", rounds=3, lr=0.1,
                      backend="virtual", micro_batch=micro_batch, batch=batch, **kw)
    seen = []
    res = train(cfg, model=MLP(), loss_fn=loss or nn.CrossEntropyLoss(weight=W),
                data=torch.utils.data.TensorDataset(features(), labels(ignore=-100)),
                progress=False, on_round=lambda r, rec, info: seen.append(info.gradient))
    return np.array(seen), res


@pytest.mark.parametrize("code", ["uncoded", "gc-cr"])
@pytest.mark.parametrize("micro", [1, 4, 7])
def test_micro_batches_decode_the_one_pass_gradient(code, micro):
    """Each partition's gradient accumulated over micro-batches of at most M rows (its loss
    denominator too: a weighted mean with ignored targets) is the one-pass gradient."""
    one, _ = gradients(None, code)
    many, _ = gradients(micro, code)
    np.testing.assert_allclose(many, one, rtol=1e-5, atol=1e-7)


def test_micro_batches_of_a_mini_batch_keep_its_meaning():
    """``batch`` still draws the partition's rows of the round; ``micro_batch`` only splits
    the pass over them."""
    one, _ = gradients(None, batch=9)
    many, _ = gradients(4, batch=9)
    np.testing.assert_allclose(many, one, rtol=1e-5, atol=1e-7)
    assert not np.allclose(one, gradients(None)[0], rtol=1e-3)


def test_micro_batch_from_the_cli(tmp_path):
    from gradcode.cli import main
    assert main(["train", "--code", "gc-cr", "--n", "4", "--s", "1", "--dataset", "iris",
                 "--rounds", "2", "--micro-batch", "5", "--backend", "virtual", "--quiet",
                 "--out", str(tmp_path)]) == 0
    assert main(["train", "--code", "gc-cr", "--n", "4", "--s", "1", "--micro-batch", "0",
                 "--quiet"]) == 2


def test_evaluation_in_batches_gives_the_same_loss():
    _, whole = gradients(eval_batch=4096, test_fraction=0.3, eval_every=1)
    _, small = gradients(eval_batch=5, test_fraction=0.3, eval_every=1)
    for a, b in zip(whole.records, small.records):
        assert a.loss == pytest.approx(b.loss, rel=1e-6)
        assert a.test_loss == pytest.approx(b.test_loss, rel=1e-6)
        assert a.test_accuracy == b.test_accuracy


def test_eval_every_0_switches_evaluation_off(tmp_path):
    _, res = gradients(eval_every=0, test_fraction=0.3, out=str(tmp_path))
    assert all(math.isnan(r.loss) and math.isnan(r.test_loss) and r.eval_s == 0
               for r in res.records)
    assert not res.diverged and (tmp_path / "plot.png").is_file()
