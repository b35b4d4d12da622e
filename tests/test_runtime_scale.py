"""Real-size models (issue 31): micro-batches that accumulate a partition's gradient, evaluation
in batches that can be switched off, at most ``concurrency`` workers computing at once on as many
reused replicas, bf16 autocast."""

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


class Counting(nn.Module):
    """``MLP`` that records how many forwards run at once (over all its replicas)."""
    now = peak = 0
    lock = __import__("threading").Lock()

    def __init__(self):
        super().__init__()
        self.net = MLP()

    def forward(self, x):
        cls = type(self)
        with cls.lock:
            cls.now += 1
            cls.peak = max(cls.peak, cls.now)
        try:
            __import__("time").sleep(0.01)          # long enough for the others to overlap
            return self.net(x)
        finally:
            with cls.lock:
                cls.now -= 1


@pytest.mark.parametrize("concurrency", [1, 2, 6])
def test_at_most_concurrency_workers_compute_at_once_on_as_many_replicas(concurrency):
    """The local backend: at most ``concurrency`` of the n = 6 workers compute at once; they
    share that many replicas, the same objects every round (nothing made per round), and the
    run is plain PyTorch's whatever the concurrency (the gradients equal those of one at a
    time)."""
    Counting.peak = 0
    seen, replicas = [], []

    def look(r, rec, info):
        seen.append(info.gradient)
        replicas.append({id(rep) for w in info.executor.workers for rep in w.replicas.all})

    train(TrainConfig(code="gc-cr", code_params={"n": 6, "s": 1}, wait="all", rounds=3, lr=0.1,
                      concurrency=concurrency, micro_batch=8, eval_every=0),
          model=Counting(), loss_fn=nn.CrossEntropyLoss(),
          data=torch.utils.data.TensorDataset(features(), labels()), progress=False,
          on_round=look)
    assert 1 <= Counting.peak <= concurrency
    if concurrency > 1:
        assert Counting.peak > 1                   # (the counter sees overlap when there is)
    assert len(replicas[0]) == concurrency and replicas[0] == replicas[1] == replicas[2]
    reference = []
    train(TrainConfig(code="gc-cr", code_params={"n": 6, "s": 1}, wait="all", rounds=3, lr=0.1,
                      backend="virtual", micro_batch=8, eval_every=0),
          model=Counting(), loss_fn=nn.CrossEntropyLoss(),
          data=torch.utils.data.TensorDataset(features(), labels()), progress=False,
          on_round=lambda r, rec, info: reference.append(info.gradient))
    np.testing.assert_array_equal(np.array(seen), np.array(reference))


def test_a_replica_holds_no_parameters_between_rounds():
    """A replica's trainable parameters hold no memory of their own (the broadcast's views while
    computing, one shared zero between), so n workers cost ``concurrency`` gradients, not n
    models."""
    from gradcode.runtime._layout import Layout, Replicas
    model = MLP()
    layout = Layout.of(model, features()[:2])
    rep = Replicas(model, layout, "cpu", 2).all[0]
    assert all(p.untyped_storage().nbytes() <= 8 for p in rep.params)
    rep.load(layout.vector(model))
    assert all(torch.equal(p, q) for p, q in zip(rep.params, model.parameters()))
    rep.unload()
    assert all(p.untyped_storage().nbytes() <= 8 and p.grad is None for p in rep.params)


def test_bf16_autocast_trains_close_to_float32_and_audits_clean():
    """``precision bf16``: forward under bf16 autocast, float32 gradients and messages; the
    audit (its reference under the same autocast) holds, and the run stays near float32's."""
    kw = dict(code="gc-cr", code_params={"n": 4, "s": 1}, wait="all", rounds=3, lr=0.1,
              audit=True)
    runs = {p: train(TrainConfig(precision=p, **kw), model=MLP(), loss_fn=nn.CrossEntropyLoss(),
                     data=torch.utils.data.TensorDataset(features(), labels()), progress=False)
            for p in ("float32", "bf16")}
    assert max(r.audit_error for r in runs["bf16"].records) <= 1e-5
    f32, bf = (np.array([r.loss for r in runs[p].records]) for p in ("float32", "bf16"))
    np.testing.assert_allclose(bf, f32, rtol=0.05)
    assert not np.allclose(bf, f32, rtol=1e-7, atol=0)     # autocast did change the arithmetic


@pytest.mark.parametrize("bad, message", [
    (dict(device="gpu"), "device: expected one of cpu, cuda, auto or cuda:K, got 'gpu'"),
    (dict(device="cuda:x"), "device: expected one of cpu, cuda, auto or cuda:K, got 'cuda:x'"),
    (dict(precision="fp16"), "precision: expected float32 or bf16, got 'fp16'"),
    (dict(concurrency=0), "concurrency: expected an integer >= 1, got 0"),
    (dict(concurrency=2, backend="virtual"), "concurrency: only with backend local, ray or torch"),
])
def test_device_precision_and_concurrency_are_checked(bad, message):
    with pytest.raises(ValueError, match=__import__("re").escape(message)):
        TrainConfig(**bad).validate()


@pytest.mark.skipif(torch.cuda.is_available(), reason="a machine without CUDA")
def test_a_gpu_that_is_not_there_is_refused_by_name():
    from gradcode.runtime._executors import resolve_device
    with pytest.raises(ValueError, match="device: cuda:1 asked, but torch sees no CUDA device"):
        resolve_device("cuda:1")
