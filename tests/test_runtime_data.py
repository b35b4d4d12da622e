"""Issue 13: a user's own map-style Dataset, held-out evaluation, the device setting."""

import json
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from gradcode.records import COLUMNS, read_records  # noqa: E402
from gradcode.runtime import TrainConfig, train  # noqa: E402


class Points(torch.utils.data.Dataset):
    """A user's Dataset: rows made on the fly from their index (nothing held in memory)."""

    def __init__(self, n=300, d=5, seed=0):
        g = np.random.default_rng(seed)
        self.w, self.n, self.d, self.seed = g.standard_normal(d), n, d, seed
        self.touched = set()

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        x = np.random.default_rng([self.seed, i]).standard_normal(self.d).astype(np.float32)
        return torch.from_numpy(x), torch.tensor(float(x @ self.w > 0))


class Net(torch.nn.Module):
    def __init__(self, d=5):
        super().__init__()
        torch.manual_seed(0)
        self.lin = torch.nn.Linear(d, 1)

    def forward(self, x):
        return self.lin(x).squeeze(-1)


def full_gradient(ds, params):
    from torch.nn.utils import vector_to_parameters
    m = Net()
    vector_to_parameters(torch.as_tensor(params), m.parameters())
    X = torch.stack([ds[i][0] for i in range(len(ds))])
    y = torch.stack([ds[i][1] for i in range(len(ds))])
    torch.nn.BCEWithLogitsLoss(reduction="sum")(m(X), y).backward()
    return torch.cat([p.grad.reshape(-1) for p in m.parameters()]).double().numpy() / len(ds)


@pytest.mark.parametrize("backend", ["local", "virtual"])
def test_own_dataset_with_unequal_partitions_decodes_the_full_gradient(backend):
    """A custom Dataset split into unequal partitions (a code given by its matrix with
    partition sizes 0.1 .. 0.4): with no stragglers the decoded gradient is the full-batch one."""
    ds = Points()
    B = [[1, 1, 0, 0], [1, 1, 0, 0], [0, 0, 1, 1], [0, 0, 1, 1]]
    seen = []
    cfg = TrainConfig(code="matrix", code_params={"B": B, "s": 1,
                                                  "partition_sizes": [0.1, 0.2, 0.3, 0.4]},
                      rounds=2, lr=0.5, backend=backend)
    train(cfg, model=Net(), loss_fn=torch.nn.BCEWithLogitsLoss(), data=ds,
          progress=False, on_round=lambda r, rec, info: seen.append((rec, info.gradient,
                                                                       info.params)))
    for rec, g, p in seen:
        assert rec.exact
        np.testing.assert_allclose(g, full_gradient(ds, p), rtol=1e-5, atol=1e-7)


def test_own_dataset_needs_a_model_and_a_loss():
    with pytest.raises(ValueError, match="model: training on your own Dataset needs model="):
        train(TrainConfig(code_params={"n": 2}, rounds=1), data=Points(), progress=False)


def test_held_out_evaluation_columns_and_time(tmp_path):
    out = tmp_path / "run"
    res = train(TrainConfig(code="isgc-cr", code_params={"n": 4, "c": 2}, dataset="breast_cancer",
                            rounds=7, eval_every=3, out=str(out)), progress=False)
    recs = read_records(out / "rounds.csv")
    assert {"test_loss", "test_accuracy", "eval_s"} <= set(COLUMNS)
    evaluated = [r.round for r in recs if not math.isnan(r.test_accuracy)]
    assert evaluated == [2, 5, 6]                          # every 3 rounds and the last
    assert 0.5 < recs[-1].test_accuracy <= 1.0 and recs[-1].test_loss > 0
    assert all(r.eval_s > 0 for r in recs)                 # the loss is evaluated every round
    summary = json.loads((out / "summary.json").read_text())
    assert summary["final_test_accuracy"] == recs[-1].test_accuracy
    assert summary["eval_time_s"] == pytest.approx(sum(r.eval_s for r in recs))
    assert summary["config"]["test_fraction"] == 0.2       # the bundled dataset's default
    assert summary["nodes"] == 1 and summary["workers_by_node"] == {"local": [0, 1, 2, 3]}
    assert res.summary["total_time_s"] == pytest.approx(sum(r.time_s for r in recs))


def test_regression_has_a_test_loss_and_no_accuracy():
    res = train(TrainConfig(code="uncoded", code_params={"n": 2}, dataset="diabetes", rounds=2,
                            lr=0.1), progress=False)
    assert not math.isnan(res.records[-1].test_loss) and math.isnan(res.records[-1].test_accuracy)


def test_device_cpu_is_the_default_and_auto_falls_back_to_cpu():
    kw = dict(code="gc-cr", code_params={"n": 4, "s": 1}, dataset="synthetic", rounds=2, seed=1)
    cpu = train(TrainConfig(device="cpu", **kw), progress=False)
    auto = train(TrainConfig(device="auto", **kw), progress=False)
    if not torch.cuda.is_available():
        assert [r.loss for r in cpu.records] == [r.loss for r in auto.records]
    with pytest.raises(ValueError, match="device: expected"):
        TrainConfig(device="tpu", **kw).validate()


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_cuda_gradient_equals_the_cpu_one():
    kw = dict(code="gc-cr", code_params={"n": 4, "s": 1}, dataset="synthetic", rounds=2, seed=1)
    got = {}
    for device in ("cpu", "cuda"):
        train(TrainConfig(device=device, **kw), progress=False,
              on_round=lambda r, rec, info, d=device: got.setdefault(d, []).append(info.gradient))
    for a, b in zip(got["cpu"], got["cuda"]):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("sizes, found", [([25, 25, 25, 25], "sum 100"), ([0.5, 0.6], "sum 1.1"),
                                          ([0.5, -0.5, 1.0], "-0.5"), ([0.5, float("nan")], "nan")])
def test_split_partitions_refuses_sizes_that_are_not_shares(sizes, found):
    """Counts instead of shares silently gave partition 0 every row and the others none."""
    from gradcode.runtime import load_torch_data, split_partitions
    data = load_torch_data("synthetic", n_samples=100)
    with pytest.raises(ValueError, match=r"sizes: expected positive shares summing to 1.*" + found):
        split_partitions(data, sizes, np.random.default_rng(0))


@pytest.mark.parametrize("seconds", [0.000268, 0.000111, 0.0001007])
def test_training_plot_of_one_very_fast_round_is_readable(tmp_path, seconds):
    """A one-round run whose round took ~1e-4 s: the time axes' tick labels overlapped (the
    conftest checks every saved figure); time axes now start at 0."""
    from gradcode.records import Record
    from gradcode.runtime._outputs import plot_training
    rec = Record(round=0, time_s=seconds, elapsed_s=seconds, workers_arrived=2,
                 recovered_fraction=1.0, decode_error=0.0, exact=True, load=1.0, loss=1.0,
                 test_loss=1.0, test_accuracy=0.5)
    plot_training([rec], tmp_path / "plot.png", "one fast round")
    assert (tmp_path / "plot.png").stat().st_size > 0
