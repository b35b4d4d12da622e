"""A PyTorch user's run from start to end (issue 30): data in the forms users have it, failures
that say what failed, the trained model as a file, stopping and resuming."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

from gradcode.records import NothingRecovered, read_records  # noqa: E402
from gradcode.runtime import StopTraining, TrainConfig, train  # noqa: E402

from test_pytorch_reference import (MLP, assert_same_parameters, features, labels,  # noqa: E402
                                    plain)


def config(**kw):
    kw = {"code": "gc-cr", "code_params": {"n": 4, "s": 1}, "wait": "decodable",
          "delay": "exp:1", "rounds": 3, "lr": 0.1, "backend": "virtual", **kw}
    return TrainConfig(**kw)


def dataset(X=None, y=None):
    return torch.utils.data.TensorDataset(features() if X is None else X,
                                          labels() if y is None else y)


# -- data in the forms users have it -----------------------------------------------------------

class Pairs(torch.utils.data.Dataset):
    """Items ``(x1, x2, y)`` or dicts; the model takes two inputs."""

    def __init__(self, form):
        self.X, self.y, self.form = features(), labels(), form

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        a, b = self.X[i, :2], self.X[i, 2:]
        if self.form == "tuple":
            return a, b, self.y[i]
        return {"left": a, "right": b, "label": self.y[i]}


class TwoInputs(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.a, self.b = nn.Linear(2, 3), nn.Linear(3, 3)

    def forward(self, left, right):
        return self.a(left) + self.b(right)


@pytest.mark.parametrize("form", ["tuple", "dict"])
def test_items_with_several_inputs_or_dicts(form):
    """``(x1, x2, y)`` calls ``model(x1, x2)``; a dict's target key is taken out and the rest are
    keyword arguments: the same steps as plain PyTorch."""
    X, y = features(), labels()
    ref = TwoInputs()
    opt = torch.optim.SGD(ref.parameters(), lr=0.1)
    for _ in range(3):
        opt.zero_grad()
        nn.CrossEntropyLoss()(ref(X[:, :2], X[:, 2:]), y).backward()
        opt.step()
    res = train(config(), model=TwoInputs(), loss_fn=nn.CrossEntropyLoss(), data=Pairs(form),
                progress=False)
    assert_same_parameters(res.model, ref)


class Tokens(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.emb, self.out = nn.Embedding(20, 4), nn.Linear(4, 3)

    def forward(self, ids):
        return self.out(self.emb(ids).mean(1))


def test_token_ids_keep_their_dtype_for_an_embedding():
    ids = torch.randint(0, 20, (61, 6), generator=torch.Generator().manual_seed(0))
    want = plain(Tokens(), nn.CrossEntropyLoss(), ids, labels(),
                 lambda p: torch.optim.SGD(p, lr=0.1), steps=3)
    res = train(config(), model=Tokens(), loss_fn=nn.CrossEntropyLoss(), data=dataset(ids),
                progress=False)
    assert_same_parameters(res.model, want)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_a_half_precision_model_trains_in_its_dtype(dtype):
    """float32 features reach a bfloat16 or float16 model in its dtype; its parameters stay in
    it and move."""
    model = MLP().to(dtype)
    before = [p.detach().clone() for p in model.parameters()]
    res = train(config(), model=model, loss_fn=nn.CrossEntropyLoss(), data=dataset(),
                progress=False)
    assert all(p.dtype == dtype for p in res.model.parameters())
    assert any(not torch.equal(a, b) for a, b in zip(before, res.model.parameters()))
    assert np.isfinite(res.records[-1].loss)


def test_fewer_rows_than_partitions_is_refused_in_one_line():
    with pytest.raises(ValueError, match=r"^data: 3 training rows for 4 partitions: partition "):
        train(config(), model=MLP(), loss_fn=nn.CrossEntropyLoss(),
              data=dataset(features()[:3], labels()[:3]), progress=False)


def test_an_item_of_another_form_is_refused_in_one_line():
    class Bare(torch.utils.data.Dataset):
        def __len__(self):
            return 10

        def __getitem__(self, i):
            return torch.zeros(5)
    with pytest.raises(ValueError, match=r"^data: sample 0 of Bare is a Tensor; expected \(x, y\)"):
        train(config(), model=MLP(), loss_fn=nn.CrossEntropyLoss(), data=Bare(), progress=False)


@pytest.mark.parametrize("backend", ["virtual", "local"])
def test_a_nan_in_the_data_names_the_round_worker_partition_and_sample(backend):
    X = features()
    X[17, 2] = float("nan")
    with pytest.raises(FloatingPointError, match=r"non-finite loss in round 0, worker \d, "
                       r"partition \d: the data: sample 17 holds a non-finite value"):
        train(config(backend=backend), model=MLP(), loss_fn=nn.CrossEntropyLoss(),
              data=dataset(X), progress=False)


def test_a_model_that_makes_nan_from_finite_data_is_named():
    class Log(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(5, 3)

        def forward(self, x):
            return torch.log(self.lin(x) - 1e6)
    with pytest.raises(FloatingPointError, match="the model: finite data and parameters gave it"):
        train(config(), model=Log(), loss_fn=nn.CrossEntropyLoss(), data=dataset(),
              progress=False)


# -- failures: a bug is never a straggler; a run that trains nothing says so -------------------

@pytest.mark.parametrize("backend", ["virtual", "local"])
def test_a_bug_in_gradcode_stops_the_run_with_its_traceback(backend, monkeypatch, tmp_path):
    """Before issue 30 an exception in gradcode's worker code made a straggler, and ``train``
    returned with nothing recovered."""
    from gradcode.runtime import _layout

    def broken(self):
        raise AttributeError("'NoneType' object has no attribute 'reshape'")
    monkeypatch.setattr(_layout.Replica, "gradient", broken)
    with pytest.raises(AttributeError, match="reshape") as exc:
        train(config(backend=backend, out=str(tmp_path / "run")), model=MLP(),
              loss_fn=nn.CrossEntropyLoss(), data=dataset(), progress=False)
    assert "a bug in gradcode" in " ".join(exc.value.__notes__)
    assert (tmp_path / "run" / "summary.json").is_file()       # what finished is written


def test_a_run_that_recovers_nothing_is_an_error_naming_each_workers_last_result(tmp_path):
    from gradcode.runtime import _local
    orig = _local.LocalExecutor.submit

    def failing(self, round, *args, **kw):
        self.failures.update({i: 1 for i in range(self.n)})   # every machine fails, every round
        return orig(self, round, *args, **kw)
    mp = pytest.MonkeyPatch()
    mp.setattr(_local.LocalExecutor, "submit", failing)
    try:
        with pytest.raises(NothingRecovered, match=r"no round of 3 recovered anything.*worker 0: "
                           r"failed \(WorkerFault: worker 0: injected fault\)") as exc:
            train(config(backend="local", out=str(tmp_path), delay="none"), model=MLP(),
                  loss_fn=nn.CrossEntropyLoss(), data=dataset(), progress=False)
    finally:
        mp.undo()
    assert len(exc.value.result.records) == 3
    assert "no round recovered anything" in (tmp_path / "events.log").read_text()


# -- the trained model, stopping and resuming ---------------------------------------------------

def test_model_pt_is_the_trained_state_dict(tmp_path):
    res = train(config(out=str(tmp_path), checkpoint_every=1), model=MLP(),
                loss_fn=nn.CrossEntropyLoss(), data=dataset(), progress=False)
    state = torch.load(tmp_path / "model.pt", weights_only=True)
    fresh = MLP()
    fresh.load_state_dict(state)
    assert_same_parameters(fresh, res.model, rtol=0)


def test_on_round_stops_cleanly_and_resume_continues_the_same_run(tmp_path):
    def stop_at(r, rec, info):
        if r == 1:
            raise StopTraining("enough")
    cfg = config(out=str(tmp_path), rounds=5, checkpoint_every=10,
                 optimizer="adamw", weight_decay=0.1, lr_schedule="step:2,0.5")
    res = train(cfg, model=MLP(), loss_fn=nn.CrossEntropyLoss(), data=dataset(),
                progress=False, on_round=stop_at)
    assert res.stopped == "enough" and len(res.records) == 2 and not res.interrupted
    assert json.loads((tmp_path / "summary.json").read_text())["stopped_by_on_round"] == "enough"
    assert (tmp_path / "model.pt").is_file() and (tmp_path / "plot.png").is_file()
    resumed = train(TrainConfig(**{**cfg.as_dict(), "resume": True}), model=MLP(),
                    loss_fn=nn.CrossEntropyLoss(), data=dataset(), progress=False)
    whole = train(config(rounds=5, optimizer="adamw", weight_decay=0.1,
                         lr_schedule="step:2,0.5"), model=MLP(),
                  loss_fn=nn.CrossEntropyLoss(), data=dataset(), progress=False)
    assert [r.round for r in read_records(tmp_path / "rounds.csv")] == list(range(5))
    assert_same_parameters(resumed.model, whole.model, rtol=1e-6)


@pytest.mark.parametrize("change,match", [
    ({"model": lambda: MLP(out=4)}, r"another model \(its 'body.2.weight' is \[3, 8\] float32, here \[4, 8\]"),
    ({"data": lambda: dataset(features()[:50], labels()[:50])}, "on 61 samples, not 50"),
    ({"loss_fn": lambda: nn.NLLLoss()}, "with the loss CrossEntropyLoss"),
])
def test_resuming_with_another_model_data_or_loss_is_refused_in_one_line(tmp_path, change, match):
    cfg = config(out=str(tmp_path), rounds=2, plot=False)
    train(cfg, model=MLP(), loss_fn=nn.CrossEntropyLoss(), data=dataset(), progress=False)
    kw = {"model": MLP(), "loss_fn": nn.CrossEntropyLoss(), "data": dataset()}
    kw.update({k: f() for k, f in change.items()})
    with pytest.raises(ValueError, match=f"^resume: .*{match}"):
        train(TrainConfig(**{**cfg.as_dict(), "resume": True, "rounds": 4}), progress=False, **kw)


# -- optimizer and schedule from the config and the CLI ----------------------------------------

def test_the_configs_schedule_is_pytorchs():
    """``lr_schedule="warmup:2+cosine"``: PyTorch's LinearLR then CosineAnnealingLR over the rest
    of the run, stepped once a round, with AdamW and weight decay."""
    import torch.optim.lr_scheduler as lr
    rounds = 6

    def sched(opt):
        return lr.SequentialLR(opt, [lr.LinearLR(opt, 0.5, 1.0, 1),
                                     lr.CosineAnnealingLR(opt, rounds - 2)], [2])
    want = plain(MLP(), nn.CrossEntropyLoss(), features(), labels(),
                 lambda p: torch.optim.AdamW(p, lr=0.05, weight_decay=0.01), steps=rounds,
                 make_scheduler=sched)
    res = train(config(rounds=rounds, lr=0.05, optimizer="adamw", weight_decay=0.01,
                       lr_schedule="warmup:2+cosine"), model=MLP(),
                loss_fn=nn.CrossEntropyLoss(), data=dataset(), progress=False)
    assert_same_parameters(res.model, want)


@pytest.mark.parametrize("kw,match", [
    ({"momentum": 0.9}, "^momentum: has no effect with optimizer="),
    ({"lr_schedule": "cosine", "scheduler": lambda o: None}, "^lr_schedule: give it or scheduler"),
    ({"optimizer": "adam"}, "^optimizer: expected a function"),
])
def test_settings_your_optimizer_would_override_are_refused(kw, match):
    own = {"optimizer": lambda p: torch.optim.SGD(p, lr=0.1)}
    own.update({k: kw.pop(k) for k in ("scheduler", "optimizer") if k in kw})
    with pytest.raises(ValueError, match=match):
        train(config(**kw), model=MLP(), loss_fn=nn.CrossEntropyLoss(), data=dataset(),
              progress=False, **own)


def test_cli_optimizer_weight_decay_and_schedule(tmp_path, capsys):
    from gradcode.cli import main
    code = main(["train", "--code", "gc-cr", "--n", "4", "--s", "1", "--dataset", "iris",
                 "--rounds", "4", "--optimizer", "adamw", "--weight-decay", "0.01",
                 "--lr-schedule", "warmup:2+step:1,0.5", "--backend", "virtual",
                 "--out", str(tmp_path), "--quiet"])
    assert code == 0
    assert torch.load(tmp_path / "model.pt", weights_only=True)
    assert main(["train", "--code", "uncoded", "--n", "2", "--lr-schedule", "cosine:0",
                 "--quiet"]) == 2
    assert "lr_schedule: cosine:STEPS needs an integer STEPS >= 1, got '0'" in capsys.readouterr().err


def test_bce_with_float_labels_of_shape_n_by_1_counts_as_binary_classification():
    X, y = features(), (labels() > 0).float()[:, None]
    res = train(config(test_fraction=0.3, eval_every=1, rounds=2), model=MLP(1),
                loss_fn=nn.BCEWithLogitsLoss(pos_weight=torch.tensor([2.0])), data=dataset(X, y),
                progress=False)
    acc = res.records[-1].test_accuracy
    assert 0.0 <= acc <= 1.0


# -- defaults that do what the code is for ------------------------------------------------------

@pytest.mark.parametrize("code,params,wait", [
    ("gc-cr", {"n": 4, "s": 1}, "decodable"), ("uncoded", {"n": 4}, "decodable"),
    ("isgc-cr", {"n": 4, "c": 2}, "fastest:3"), ("bcc", {"n": 4, "r": 2}, "covered"),
    ("m-sgc", {"n": 4, "B": 1, "W": 2, "lam": 2}, "mu:1"),
])
def test_the_default_wait_is_the_schemes_own_and_the_first_line_names_it(code, params, wait,
                                                                        tmp_path):
    res = train(TrainConfig(code=code, code_params=params, rounds=3, lr=0.1, backend="virtual",
                            delay="exp:1", out=str(tmp_path), plot=False), model=MLP(),
                loss_fn=nn.CrossEntropyLoss(), data=dataset(), progress=False)
    first = (tmp_path / "events.log").read_text().splitlines()[0]
    assert first.startswith(f"wait {wait}, {code}'s own: ")
    assert json.loads((tmp_path / "summary.json").read_text())["config"]["wait"] == wait
    assert res.records


def test_wait_all_with_a_redundant_code_warns_in_one_line(capsys):
    from gradcode.cli import main
    argv = ["--code", "gc-cr", "--n", "4", "--s", "1", "--rounds", "2", "--wait", "all"]
    assert main(["simulate", *argv]) == 0
    assert main(["train", *argv, "--dataset", "iris", "--backend", "virtual", "--quiet"]) == 0
    out = capsys.readouterr().out.splitlines()
    warnings = [line for line in out if line.startswith("warning: wait all")]
    assert len(warnings) == 2 and "its own policy is decodable" in warnings[0]
    assert out[0] == warnings[0]                          # the run's first line


@pytest.mark.parametrize("dataset,model,ok", [
    ("diabetes", "softmax", False), ("diabetes", "linear", True), ("diabetes", "mlp", True),
    ("iris", "logistic", False), ("iris", "softmax", True), ("breast_cancer", "softmax", True),
    ("digits", "mlp", True), ("breast_cancer", "linear", False),
])
def test_simulate_tune_and_train_accept_the_same_model_and_dataset_pairs(tmp_path, capsys,
                                                                         dataset, model, ok):
    """One rule (``datasets.check_model``): ``simulate --dataset diabetes --model softmax``
    raised an IndexError while ``train`` ran it to a loss of 4.7e23."""
    from gradcode.cli import main
    trace = tmp_path / "t.csv"
    np.savetxt(trace, 1 + np.random.default_rng(0).exponential(0.2, (30, 4)), delimiter=",",
               header="w0,w1,w2,w3", comments="")
    code = ["--code", "isgc-cr", "--n", "4", "--c", "2"]
    runs = {"simulate": ["simulate", *code, "--rounds", "3", "--dataset", dataset, "--model",
                         model],
            "train": ["train", *code, "--rounds", "2", "--dataset", dataset, "--model", model,
                      "--backend", "virtual", "--quiet", "--lr", "0.01"],
            "tune": ["tune", str(trace), "--families", "uncoded,gc-seq", "--isgc-c", "2",
                     "--dataset", dataset, "--model", model,
                     "--target-loss", "0.9", "--quiet", "--out", str(tmp_path / "tune")]}
    codes = {name: main(argv) for name, argv in runs.items()}
    err = capsys.readouterr().err
    if ok:
        assert set(codes.values()) <= {0, 1}, (codes, err)    # (1: tune's target not reached)
        assert "model:" not in err
    else:
        assert codes == {"simulate": 2, "train": 2, "tune": 2}, err
        assert err.count(f"model: {model!r} fits") == 3


class WithAux(nn.Module):
    """Returns ``(logits, penalty)``: the loss adds a penalty on some weights to a mean."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.lin, self.aux = nn.Linear(5, 3), nn.Linear(5, 1)

    def forward(self, x):
        return self.lin(x) + self.aux(x), 0.5 * self.aux.weight.pow(2).sum()


def test_a_model_with_several_outputs_and_a_penalty_added_to_the_mean():
    """The penalty is weighted as the full batch weights it (the partition's denominator times
    its mean): the steps are PyTorch's; a held-out set is evaluated without an accuracy."""
    def loss(out, y):
        return nn.functional.cross_entropy(out[0], y, weight=torch.tensor([1.0, 2.0, 3.0])) + out[1]
    want = plain(WithAux(), loss, features(), labels(), lambda p: torch.optim.SGD(p, lr=0.1))
    res = train(config(rounds=4), model=WithAux(), loss_fn=loss, data=dataset(), progress=False)
    assert_same_parameters(res.model, want)
    held = train(config(rounds=2, test_fraction=0.3), model=WithAux(), loss_fn=loss,
                 data=dataset(), progress=False)
    assert np.isfinite(held.records[-1].test_loss)
