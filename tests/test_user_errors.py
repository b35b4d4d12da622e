"""An error raised by the user's Dataset, model or loss reaches them as their own exception, with
notes naming the worker, the partition and the sample where known, on every backend (issue 19),
and never as an internal error; a run stopped by one keeps its finished rounds."""

import json
import sys

import pytest

torch = pytest.importorskip("torch")

from gradcode.runtime import TrainConfig, load_torch_data, train  # noqa: E402
from gradcode.records import read_records  # noqa: E402

#: Ray's rows start actor processes: in `make test-all` (tests/test_runtime_ray.py covers Ray)
BACKENDS = ["virtual", "local", pytest.param("ray", marks=pytest.mark.slow)]


@pytest.fixture(scope="module")
def local_ray():
    ray = pytest.importorskip("ray")
    from gradcode.runtime._ray import init_ray
    init_ray(None, num_cpus=2)
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    yield
    ray.shutdown()


class Corrupt(torch.utils.data.Dataset):
    """Rows of two features; sample ``bad`` raises."""

    def __init__(self, bad: int):
        self.bad = bad

    def __len__(self):
        return 120

    def __getitem__(self, i):
        if i == self.bad:
            raise KeyError(f"corrupt sample {i}")
        return torch.tensor([float(i % 7), 1.0]), torch.tensor(i % 2)


class Armed(torch.nn.Module):
    """Raises ``ZeroDivisionError`` on a batch of 50 rows (a worker's partition) once armed."""

    def __init__(self, d: int, armed: bool = True):
        super().__init__()
        self.lin, self.armed = torch.nn.Linear(d, 1), armed

    def forward(self, x):
        if self.armed and len(x) == 50:
            raise ZeroDivisionError("the user's model failed")
        return self.lin(x).squeeze(-1)


def config(backend, **kw):
    return TrainConfig(code="isgc-cr", code_params={"n": 4, "c": 2}, rounds=4, backend=backend,
                       actors=2 if backend == "ray" else None, **kw)


def _notes(exc):
    return " | ".join(getattr(exc, "__notes__", []))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("bad", [0, 77])
def test_a_datasets_error_is_its_own(backend, bad, request):
    """Sample 0 is read by the master's check of the model (it was an UnboundLocalError
    there); sample 77 by the evaluation sample or a worker."""
    if backend == "ray":
        request.getfixturevalue("local_ray")
    with pytest.raises(KeyError, match=f"corrupt sample {bad}") as exc:
        train(config(backend), model=torch.nn.Linear(2, 2),
              loss_fn=torch.nn.CrossEntropyLoss(), data=Corrupt(bad), progress=False)
    assert f"gradcode: raised by sample {bad} of Corrupt" in _notes(exc.value)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_models_error_is_its_own_and_names_the_worker(backend, tmp_path, request):
    if backend == "ray":
        request.getfixturevalue("local_ray")
    data = load_torch_data("synthetic", 0, n_samples=200)
    with pytest.raises(ZeroDivisionError, match="the user's model failed") as exc:
        train(config(backend, out=str(tmp_path / "run")), model=Armed(data.X.shape[1]),
              data=data, progress=False)
    assert "gradcode: raised by the model or loss of worker" in _notes(exc.value)
    assert "on partition" in _notes(exc.value) and "in job 0" in _notes(exc.value)


@pytest.mark.parametrize("backend", ["virtual", "local"])
def test_a_run_stopped_by_the_users_error_keeps_its_rounds(backend, tmp_path):
    """Armed after round 1 (the executor's in-process replicas): rounds 0 and 1 are kept and
    written with the summary and events, which say what stopped the run."""
    data = load_torch_data("synthetic", 0, n_samples=200)

    def arm(r, rec, info):
        if r == 1:
            for w in info.executor.workers:
                for rep in w.replicas.all:
                    rep.model.armed = True
    out = tmp_path / "run"
    with pytest.raises(ZeroDivisionError):
        train(config(backend, out=str(out)), model=Armed(data.X.shape[1], armed=False),
              data=data, progress=False, on_round=arm)
    assert [r.round for r in read_records(out / "rounds.csv")] == [0, 1]
    assert json.loads((out / "summary.json").read_text())["rounds"] == 2
    assert "raised ZeroDivisionError" in (out / "events.log").read_text()
