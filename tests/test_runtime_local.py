"""Real training with the in-process executor (threads)."""

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from gradcode.cli import main  # noqa: E402
from gradcode.records import COLUMNS, Interrupted, read_records  # noqa: E402
from gradcode.runtime import TrainConfig, build_model, load_torch_data, loss_for, train  # noqa: E402
from gradcode.engine import streams  # noqa: E402
from gradcode.runtime import split_partitions  # noqa: E402
from gradcode import make_code  # noqa: E402


def full_gradient(model, data, params):
    from torch.nn.utils import vector_to_parameters
    m = build_model("logistic", data)
    vector_to_parameters(torch.as_tensor(params), m.parameters())
    loss = loss_for(data)(m(data.X), data.y)          # PyTorch's mean over the whole set
    loss.backward()
    return torch.cat([p.grad.reshape(-1) for p in m.parameters()]).double().numpy()


@pytest.fixture(scope="module")
def data():
    return load_torch_data("synthetic", seed=0, n_samples=600)


@pytest.mark.parametrize("code,params", [("uncoded", {"n": 4}), ("gc-cr", {"n": 5, "s": 2}),
                                         ("gc-fr", {"n": 6, "s": 1}),
                                         ("heter", {"speeds": [1, 2, 3, 4, 4], "s": 1, "k": 7}),
                                         ("isgc-cr", {"n": 6, "c": 3})])
def test_no_stragglers_exact_gradient_equals_full_batch(data, code, params):
    seen = []
    cfg = TrainConfig(code=code, code_params=params, rounds=2, lr=0.5)
    train(cfg, data=data, progress=False,
          on_round=lambda r, rec, info: seen.append((rec, info.gradient, info.params)))
    for rec, g, p in seen:
        if code == "isgc-cr":
            continue
        assert rec.exact
        ref = full_gradient(None, data, p)
        assert np.linalg.norm(g - ref) <= 1e-6 * np.abs(ref).sum() + 1e-12


def test_trajectory_of_exact_codes_equals_uncoded(data):
    runs = {}
    for code, params in [("uncoded", {"n": 4}), ("gc-cr", {"n": 4, "s": 1}), ("gc-fr", {"n": 4, "s": 1})]:
        res = train(TrainConfig(code=code, code_params=params, rounds=6, lr=0.8, wait="all"),
                    data=data, progress=False)
        runs[code] = np.array([r.loss for r in res.records])
    np.testing.assert_allclose(runs["gc-cr"], runs["uncoded"], rtol=1e-5)
    np.testing.assert_allclose(runs["gc-fr"], runs["uncoded"], rtol=1e-5)


def assert_sum_over_recovered(data, info, sizes):
    """The applied gradient is the mean gradient over exactly the partitions the decoder
    reports as recovered (partitions split as ``train`` splits them)."""
    d = info.decoding
    parts = split_partitions(data, sizes, streams(0)["data"])
    m = build_model("logistic", data)
    from torch.nn.utils import vector_to_parameters
    vector_to_parameters(torch.as_tensor(info.params), m.parameters())
    total = 0
    for j in np.flatnonzero(d.recovered > 0.5):
        m.zero_grad()
        torch.nn.BCEWithLogitsLoss(reduction="sum")(m(parts[j][0]), parts[j][1]).backward()
        total = total + torch.cat([p.grad.reshape(-1) for p in m.parameters()]).double().numpy()
    covered = float(d.recovered @ info.counts)
    np.testing.assert_allclose(info.gradient, total / covered, rtol=1e-5, atol=1e-9)
    assert set(np.unique(d.recovered)) <= {0.0, 1.0}


def test_isgc_gradient_is_sum_over_reported_partitions(data):
    checked = []

    def check(r, rec, info):
        if info.gradient is not None:
            assert_sum_over_recovered(data, info, np.full(6, 1 / 6))
            checked.append(rec.recovered_fraction)

    train(TrainConfig(code="isgc-cr", code_params={"n": 6, "c": 2}, rounds=6, wait="fastest:2",
                      delay="exp:0.02", lr=0.5), data=data, progress=False, on_round=check)
    assert len(checked) == 6 and min(checked) < 1.0


@pytest.mark.parametrize("shuffle", [False, True])
def test_shuffling_moves_the_slow_workers_rows(data, tmp_path, shuffle):
    """Paper 5: workers 0 and 1 (one whole FR group of isgc-fr) are always slow.  Without
    shuffling partitions 0 and 1 are never recovered; with it the slow workers compute other
    rows of B every round, so each partition is recovered in some round.  Either way the applied
    gradient is the decoder's partial sum (rows arrive from whichever worker computed them)."""
    trace = tmp_path / "slow.csv"
    np.savetxt(trace, [[1.0, 1.0, 0.0, 0.0]], delimiter=",",
               header="w0,w1,w2,w3", comments="")
    recovered, rows = [], []

    def check(r, rec, info):
        recovered.append(info.decoding.recovered.copy())
        rows.append(sorted(info.rows))
        if info.gradient is not None:        # rows arrive from whichever worker computed them
            assert_sum_over_recovered(data, info, np.full(4, 1 / 4))

    train(TrainConfig(code="isgc-fr", code_params={"n": 4, "c": 2}, rounds=8, shuffle=shuffle,
                      wait="deadline:0.3", delay=f"trace:{trace}", lr=0.5), data=data,
          progress=False, on_round=check)
    ever = np.max(recovered, axis=0)
    if shuffle:
        assert ever.tolist() == [1, 1, 1, 1] and any(r != [2, 3] for r in rows)
    else:
        assert ever.tolist() == [0, 0, 1, 1] and all(r == [2, 3] for r in rows)


def test_worker_fault_is_a_straggler_and_training_goes_on(data):
    def inject(r, rec, info):
        if r == 1:
            info.executor.failures[2] = 2          # worker 2 fails in its next two rounds
    # wait for all: with 'decodable' the fifth worker may still be busy with the previous
    # round when the next starts, a second straggler beside the failed one (not exact then)
    res = train(TrainConfig(code="gc-cr", code_params={"n": 5, "s": 1}, rounds=6, wait="all"),
                data=data, progress=False, on_round=inject)
    assert len(res.records) == 6
    assert [r.workers_arrived for r in res.records] == [5, 5, 4, 4, 5, 5]
    assert sum("worker 2 failed" in e for e in res.events) == 2
    assert all(r.exact for r in res.records)


def test_dropped_worker_is_never_asked_again(data):
    def inject(r, rec, info):
        if r == 0:
            info.executor.failures[0] = 1
    res = train(TrainConfig(code="isgc-fr", code_params={"n": 4, "c": 2}, rounds=5, wait="all",
                            on_worker_death="drop", round_timeout_s=5), data=data, progress=False,
                on_round=inject)
    assert any("dropped" in e for e in res.events)
    assert [r.workers_arrived for r in res.records[2:]] == [3, 3, 3]


def test_non_finite_results_are_erased(data, monkeypatch):
    from gradcode.runtime import _worker
    orig = _worker.GradientWorker.compute

    def bad(self, round, params, task):
        res = orig(self, round, params, task)
        if self.index == 1:
            res.coded = [np.full_like(res.coded[0], np.nan)]
        return res

    monkeypatch.setattr(_worker.GradientWorker, "compute", bad)
    res = train(TrainConfig(code="gc-cr", code_params={"n": 4, "s": 1}, rounds=3, wait="all"),
                data=data, progress=False)
    assert sum("non-finite" in e for e in res.events) == 3
    assert all(r.exact and r.workers_arrived == 3 for r in res.records)
    assert all(np.isfinite(r.loss) for r in res.records)


@pytest.mark.parametrize("wait", ["decodable", "fastest:4"])
def test_non_finite_result_does_not_count_for_the_wait(data, tmp_path, monkeypatch, wait):
    """The fastest worker returns NaN: erased on arrival, so the master waits for the good
    ones the policy needs (four of gc-cr(6, 2)) and decodes exactly."""
    from gradcode.runtime import _worker
    orig = _worker.GradientWorker.compute

    def bad(self, round, params, task):
        res = orig(self, round, params, task)
        if self.index == 0:
            res.coded = [np.full_like(c, np.nan) for c in res.coded]
        return res

    monkeypatch.setattr(_worker.GradientWorker, "compute", bad)
    trace = tmp_path / "stair.csv"             # worker i answers after 0.05 (i + 1) s
    np.savetxt(trace, [0.05 * np.arange(1, 7)], delimiter=",",
               header=",".join(f"w{i}" for i in range(6)), comments="")
    res = train(TrainConfig(code="gc-cr", code_params={"n": 6, "s": 2}, rounds=2, wait=wait,
                            delay=f"trace:{trace}"), data=data, progress=False)
    assert all(r.exact and r.workers_arrived == 4 for r in res.records)
    assert sum("worker 0 returned non-finite values; erased" in e for e in res.events) == 2


def test_load_column_is_per_machine_as_in_the_simulator(data):
    from gradcode.sim import parse_wait, simulate
    from gradcode.stragglers._delays import parse_delay
    code = make_code("gc-partial", n=4, s=1, alpha=2.0)
    sim = simulate(code, parse_delay("none"), parse_wait("all"), 1).records[0]
    res = train(TrainConfig(code="gc-partial", code_params=code.params, rounds=1), data=data,
                progress=False)
    assert res.records[0].load == pytest.approx(sim.load)


def test_nothing_decodable_skips_the_step(data):
    """A round with nothing decodable takes no step; a run with no such round at all ends with
    ``NothingRecovered`` naming each worker's last result, its rounds kept (issue 30: it was a
    normal return with recovered fraction 0)."""
    from gradcode.records import NothingRecovered
    with pytest.raises(NothingRecovered, match="worker 3: never answered") as exc:
        train(TrainConfig(code="gc-fr", code_params={"n": 4, "s": 1}, rounds=2,
                          wait="deadline:0.05", delay="const:0.5"), data=data, progress=False)
    res = exc.value.result
    assert sum("step skipped" in e for e in res.events) == 2
    assert res.records[0].loss == res.records[1].loss


def test_resume_continues_the_same_run(data, tmp_path):
    kw = dict(code="isgc-cr", code_params={"n": 4, "c": 2}, wait="all", lr=0.5, checkpoint_every=2)
    straight = train(TrainConfig(rounds=6, **kw), data=data, progress=False)
    out = tmp_path / "run"
    train(TrainConfig(rounds=4, out=str(out), **kw), data=data, progress=False)
    res = train(TrainConfig(rounds=6, out=str(out), resume=True, **kw), data=data, progress=False)
    recs = read_records(out / "rounds.csv")
    assert [r.round for r in recs] == list(range(6))
    np.testing.assert_allclose([r.loss for r in recs], [r.loss for r in straight.records], rtol=1e-6)
    assert len(res.records) == 6
    with pytest.raises(ValueError, match="resume: no checkpoint"):
        train(TrainConfig(rounds=6, out=str(tmp_path / "none"), resume=True, **kw), data=data,
              progress=False)
    assert not (tmp_path / "none").exists()                  # a failed resume writes nothing
    assert "resumed from the checkpoint at round 4" in (out / "events.log").read_text()
    for other in ({"seed": 1}, {"batch": 10}, {"shuffle": True}):   # another run: refused
        with pytest.raises(ValueError, match=f"resume: .* {next(iter(other))} = "):
            train(TrainConfig(rounds=8, out=str(out), resume=True, **kw, **other), data=data,
                  progress=False)


def test_resume_keeps_dropped_workers_dropped(data, tmp_path):
    def inject(r, rec, info):
        if r == 0:
            info.executor.failures[0] = 1
    kw = dict(code="isgc-fr", code_params={"n": 4, "c": 2}, wait="all", on_worker_death="drop",
              checkpoint_every=1, out=str(tmp_path / "run"))
    train(TrainConfig(rounds=3, **kw), data=data, progress=False, on_round=inject)
    res = train(TrainConfig(rounds=5, resume=True, **kw), data=data, progress=False)
    assert [r.workers_arrived for r in res.records] == [4, 3, 3, 3, 3]


def test_cli_train_writes_rounds_csv(tmp_path, capsys):
    out = tmp_path / "cli"
    rc = main(["train", "--code", "isgc-cr", "--n", "4", "--c", "2", "--dataset", "synthetic",
               "--rounds", "3", "--seed", "1", "--out", str(out), "--wait", "fastest:2",
               "--delay", "exp:0.01", "--quiet"])
    assert rc == 0
    header = (out / "rounds.csv").read_text().splitlines()[0].split(",")
    assert header == COLUMNS
    for col in ("round", "time_s", "loss", "recovered_fraction", "workers_arrived"):
        assert col in header
    assert len(read_records(out / "rounds.csv")) == 3
    assert (out / "plot.png").is_file() and (out / "checkpoint.pt").is_file()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["rounds"] == 3


def test_no_plot_writes_every_output_but_the_plot(data, tmp_path, capsys):
    """``--no-plot`` (``plot = false``): the run's files but plot.png; a resumed run may draw it
    (the plot changes nothing of the run)."""
    out = tmp_path / "cli"
    assert main(["train", "--code", "isgc-cr", "--n", "4", "--c", "2", "--dataset", "synthetic",
                 "--rounds", "2", "--out", str(out), "--checkpoint-every", "1", "--no-plot",
                 "--quiet"]) == 0
    assert {p.name for p in out.iterdir()} >= {"rounds.csv", "summary.json", "events.log",
                                                "checkpoint.pt"}
    assert not (out / "plot.png").exists()
    assert json.loads((out / "summary.json").read_text())["config"]["plot"] is False
    kw = dict(code="isgc-cr", code_params={"n": 4, "c": 2}, dataset="synthetic", out=str(out))
    train(TrainConfig(rounds=3, resume=True, **kw), progress=False)
    assert (out / "plot.png").is_file()


def test_config_files(tmp_path, capsys):
    toml = tmp_path / "c.toml"
    toml.write_text('code = "gc-fr"\nrounds = 2\ndataset = "iris"\n[code_params]\nn = 4\ns = 1\n')
    assert main(["train", "--config", str(toml), "--quiet"]) == 0
    yml = tmp_path / "c.yaml"
    yml.write_text("code: gc-fr\ncode_params: {n: 4, s: 1}\nrounds: 2\nbogus: 1\n")
    assert main(["train", "--config", str(yml), "--quiet"]) == 2
    assert "bogus" in capsys.readouterr().err


@pytest.mark.parametrize("argv,word", [
    (["--code", "nope", "--n", "4"], "unknown code"),
    (["--code", "gc-fr", "--n", "4", "--s", "1", "--dataset", "mnist"], "dataset"),
    (["--code", "gc-fr", "--n", "4", "--s", "1", "--dataset", "iris", "--model", "logistic"], "model"),
    (["--code", "gc-fr", "--n", "4", "--s", "1", "--rounds", "0"], "rounds"),
    (["--code", "gc-fr", "--n", "4", "--s", "1", "--wait", "soon"], "wait"),
    (["--code", "gc-fr", "--n", "4", "--s", "1", "--backend", "ray", "--address", "127.0.0.1:1"],
     "address"),
    (["--config", "/nonexistent.toml"], "config"),
    (["--code", "gc-fr", "--n", "4", "--s", "1", "--wait", "fastest:5"], "wait: fastest:w needs"),
    (["--code", "m-sgc", "--n", "4", "--B", "1", "--W", "2", "--lam", "2", "--wait", "fastest:5"],
     "wait: fastest:w needs"),
    (["--code", "gc-fr", "--n", "4", "--s", "1", "--compute", "load:1:1,2"], "speeds: expected 4"),
    (["--code", "gc-fr", "--n", "4", "--s", "1", "--checkpoint-every", "0"], "checkpoint_every"),
    (["--code", "gc-fr", "--n", "4", "--s", "1", "--backend", "ray", "--actors", "0"], "actors"),
    (["--code", "gc-fr", "--n", "4", "--s", "1", "--momentum", "-1"], "momentum"),
    (["--code", "gc-partial", "--n", "4", "--s", "1", "--alpha", "1.5", "--shuffle"], "shuffle"),
])
def test_cli_train_bad_input(tmp_path, capsys, argv, word):
    out = tmp_path / "bad"
    rc = main(["train", *argv, "--quiet", "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 2 and word in err and "Traceback" not in err
    assert not out.exists()                                  # nothing half-written


def test_cli_resume_needs_out(capsys):
    assert main(["train", "--code", "gc-fr", "--n", "4", "--s", "1", "--resume", "--quiet"]) == 2
    assert "resume: continues the run in --out" in capsys.readouterr().err


def test_cli_train_trace_of_another_size_writes_nothing(tmp_path, capsys):
    trace = tmp_path / "t.csv"
    trace.write_text("w0,w1,w2\n1,2,3\n")
    out = tmp_path / "bad"
    rc = main(["train", "--code", "gc-fr", "--n", "4", "--s", "1", "--delay", f"trace:{trace}",
               "--quiet", "--out", str(out)])
    assert rc == 2 and "the trace has 3 workers, the code 4" in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize("code,params", [("isgc-cr", {"n": 4, "c": 2}),
                                         ("m-sgc", {"n": 4, "B": 1, "W": 2, "lam": 2})])
def test_ctrl_c_keeps_the_finished_rounds(data, tmp_path, code, params):
    def interrupt(r, rec, info):
        if r == 2:
            raise KeyboardInterrupt
    out = tmp_path / "run"
    with pytest.raises(Interrupted) as exc:
        train(TrainConfig(code=code, code_params=params, rounds=50, out=str(out)), data=data,
              progress=False, on_round=interrupt)
    assert exc.value.result.interrupted and len(exc.value.result.records) == 3
    assert [r.round for r in read_records(out / "rounds.csv")] == [0, 1, 2]
    assert json.loads((out / "summary.json").read_text())["interrupted"] is True
    assert (out / "plot.png").is_file()
    assert "interrupted (Ctrl-C) after 3 rounds" in (out / "events.log").read_text()


def test_sigterm_finishes_the_round_writes_everything_and_resumes(data, tmp_path):
    """SIGTERM (``timeout``, a scheduler) killed the run with no summary, plot or events (issue
    19): now it ends as Ctrl-C does, after the round it came in, marked interrupted, with a
    checkpoint of that round to resume from."""
    import os
    import signal

    def terminate(r, rec, info):
        if r == 2:
            os.kill(os.getpid(), signal.SIGTERM)
    out = tmp_path / "run"
    kw = dict(code="isgc-cr", code_params={"n": 4, "c": 2}, delay="exp:0.1",
              backend="virtual", checkpoint_every=10, out=str(out))
    handler = signal.getsignal(signal.SIGTERM)          # (Ray, once started, installs one)
    with pytest.raises(Interrupted) as exc:
        train(TrainConfig(rounds=8, **kw), data=data, progress=False, on_round=terminate)
    assert exc.value.result.interrupted_by == "SIGTERM" and len(exc.value.result.records) == 3
    summary = json.loads((out / "summary.json").read_text())
    assert summary["interrupted"] is True and summary["interrupted_by"] == "SIGTERM"
    assert (out / "plot.png").is_file()
    assert "interrupted (SIGTERM) after 3 rounds" in (out / "events.log").read_text()
    assert torch.load(out / "checkpoint.pt", weights_only=False)["round"] == 3
    assert signal.getsignal(signal.SIGTERM) is handler               # the handler is restored
    resumed = train(TrainConfig(rounds=8, resume=True, **kw), data=data, progress=False)
    whole = train(TrainConfig(rounds=8, **{**kw, "out": str(tmp_path / "whole")}), data=data,
                  progress=False)
    rows = [[{k: v for k, v in r.as_row().items() if k != "eval_s"} for r in run.records]
            for run in (resumed, whole)]
    np.testing.assert_equal(rows[0], rows[1])            # NaN equals NaN here


def test_ctrl_c_finishes_the_round_and_a_second_stops_at_once(data, tmp_path):
    """A real Ctrl-C (SIGINT) is caught: the round finishes and is checkpointed, so --resume
    continues even before the first periodic checkpoint (issue 19: the user was trapped between
    'already holds a run' and 'no checkpoint'); a second Ctrl-C interrupts at once."""
    import os
    import signal
    out = tmp_path / "run"
    kw = dict(code="isgc-cr", code_params={"n": 4, "c": 2}, backend="virtual",
              checkpoint_every=50, out=str(out))

    def ctrl_c(r, rec, info):
        if r == 1:
            os.kill(os.getpid(), signal.SIGINT)
    with pytest.raises(Interrupted) as exc:
        train(TrainConfig(rounds=6, **kw), data=data, progress=False, on_round=ctrl_c)
    assert exc.value.result.interrupted_by == "Ctrl-C" and len(exc.value.result.records) == 2
    assert torch.load(out / "checkpoint.pt", weights_only=False)["round"] == 2
    assert len(train(TrainConfig(rounds=6, resume=True, **kw), data=data,
                     progress=False).records) == 6

    def twice(r, rec, info):
        if r == 1:
            os.kill(os.getpid(), signal.SIGINT)
            os.kill(os.getpid(), signal.SIGINT)      # the second: KeyboardInterrupt now
    with pytest.raises(Interrupted) as exc:
        train(TrainConfig(rounds=6, **{**kw, "out": str(tmp_path / "b")}), data=data,
              progress=False, on_round=twice)
    assert exc.value.result.interrupted


def test_resume_before_the_first_checkpoint_starts_over(data, tmp_path):
    """A run stopped at once before any checkpoint (a KeyboardInterrupt mid-round): --resume
    starts it over from round 0 instead of refusing, and says so."""
    out = tmp_path / "run"
    kw = dict(code="isgc-cr", code_params={"n": 4, "c": 2}, backend="virtual",
              checkpoint_every=50, delay="exp:0.1", out=str(out))

    def interrupt(r, rec, info):
        if r == 1:
            raise KeyboardInterrupt
    with pytest.raises(Interrupted):
        train(TrainConfig(rounds=5, **kw), data=data, progress=False, on_round=interrupt)
    assert not (out / "checkpoint.pt").exists()
    res = train(TrainConfig(rounds=5, resume=True, **kw), data=data, progress=False)
    assert [r.round for r in read_records(out / "rounds.csv")] == list(range(5))
    assert any("before its first checkpoint; started over" in e for e in res.events)
    with pytest.raises(ValueError, match="resume: no checkpoint"):      # not an interrupted run
        train(TrainConfig(rounds=5, resume=True, **{**kw, "out": str(tmp_path / "none")}),
              data=data, progress=False)


def test_sigterm_to_the_cli(tmp_path):
    """``gradcode train`` sent SIGTERM mid-run: exit 143, summary.json and plot written."""
    import signal
    import subprocess
    import sys
    import time
    out = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, "-m", "gradcode", "train", "--code", "uncoded",
                             "--n", "2", "--rounds", "400", "--delay", "const:0.05", "--out",
                             str(out), "--quiet"], stdout=subprocess.PIPE, text=True)
    rows = out / "rounds.csv"
    while proc.poll() is None and not (rows.is_file() and len(rows.read_text().splitlines()) > 3):
        time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)
    stdout, _ = proc.communicate(timeout=120)
    assert proc.returncode == 143, stdout
    assert "interrupted (SIGTERM)" in stdout
    assert json.loads((out / "summary.json").read_text())["interrupted_by"] == "SIGTERM"
    assert (out / "plot.png").is_file()


def test_demo_local(capsys):
    assert main(["demo", "--rounds", "4"]) == 0
    out = capsys.readouterr().out
    assert "synchronous SGD" in out and "x its time to the target loss" in out


def _write_idx(path, arr):
    import gzip
    import struct
    header = struct.pack(">HBB", 0, 0x08, arr.ndim) + struct.pack(">" + "I" * arr.ndim, *arr.shape)
    with gzip.open(path, "wb") as fh:
        fh.write(header + arr.astype(np.uint8).tobytes())


def test_fashion_mnist_from_idx_files(tmp_path):
    """The real IDX loader on small files made here (the Debian package may be absent)."""
    rng = np.random.default_rng(0)
    _write_idx(tmp_path / "train-images-idx3-ubyte.gz", rng.integers(0, 256, (64, 28, 28)))
    _write_idx(tmp_path / "train-labels-idx1-ubyte.gz", rng.integers(0, 10, 64))
    res = train(TrainConfig(code="isgc-fr", code_params={"n": 4, "c": 2}, dataset="fashion-mnist",
                            data_dir=str(tmp_path), rounds=2, lr=0.05, batch=8), progress=False)
    assert len(res.records) == 2 and np.isfinite(res.records[-1].loss)
    with pytest.raises(ValueError, match="data-dir"):
        load_torch_data("fashion-mnist", data_dir=str(tmp_path / "missing"))


@pytest.mark.skipif(not __import__("pathlib").Path("/usr/share/datasets/fashion-mnist").is_dir(),
                    reason="Debian's dataset-fashion-mnist not installed")
def test_fashion_mnist_installed():
    d = load_torch_data("fashion-mnist")
    assert d.X.shape[1:] == (1, 28, 28) and d.classes == 10


@pytest.mark.parametrize("backend", ["virtual", "local"])
def test_heter_allocates_by_measured_speeds(data, tmp_path, backend):
    """Paper 3 with measured c_i: injected compute makes workers 2 and 3 four times faster; the
    measured speeds say so and the heter code gives them more partitions.  On the virtual clock
    the measurement is the injected compute exactly; on threads only the order is asserted with a
    wide margin (a loaded machine adds its own delays)."""
    cfg = TrainConfig(code="heter", code_params={"speeds": [1, 1, 1, 1], "s": 1, "k": 8},
                      rounds=2, compute="load:1.0:1,1,4,4", measure_speeds=2, out=str(tmp_path),
                      backend=backend)
    res = train(cfg, data=data, progress=False)
    speeds = json.loads((tmp_path / "summary.json").read_text())["config"]["code_params"]["speeds"]
    assert max(speeds) == 1.0
    if backend == "virtual":
        assert speeds == [0.25, 0.25, 1.0, 1.0]
    else:
        assert max(speeds[:2]) < 0.75 * min(speeds[2:])
    assert any("measured worker speeds" in e for e in res.events)
    from gradcode import make_code
    load = make_code("heter", speeds=speeds, s=1, k=8).load
    assert load[2] > load[0] and load[3] > load[1]
    assert all(r.exact for r in res.records)


def test_measure_speeds_needs_a_heter_code(data):
    with pytest.raises(ValueError, match="measure_speeds: only for the codes heter"):
        train(TrainConfig(code="gc-cr", code_params={"n": 4, "s": 1}, measure_speeds=2),
              data=data, progress=False)
    with pytest.raises(ValueError, match="measure_speeds: expected an integer >= 0"):
        TrainConfig(code="heter", measure_speeds=-1).validate()


def test_gc_partial_machine_sends_naive_part_first(data):
    """gc-partial (paper 1, Sec. 5): rows i and i + n are one machine's two messages; with
    injected compute the naive message (row i) leaves after half the machine's work and the
    coded one after all of it, so every machine's naive row arrives first."""
    seen = []
    cfg = TrainConfig(code="gc-partial", code_params={"n": 4, "s": 1, "alpha": 2}, rounds=2,
                      compute="load:3.0:1,1.5,2,3", wait="all")   # gaps of >= 0.17 s between the asserted pairs
    res = train(cfg, data=data, progress=False, on_round=lambda r, rec, info: seen.append(info.rows))
    for rows in seen:
        assert sorted(rows) == list(range(8))
        for i in range(4):
            assert rows.index(i) < rows.index(i + 4)
        assert rows.index(7) < rows.index(0)      # machine 3 (speed 3) finishes before machine 0's half
    assert all(r.exact for r in res.records)


@pytest.mark.parametrize("settings,lr", [({"dataset": "digits", "model": "cnn"}, 0.2),
                                         ({"dataset": "iris"}, 0.5),
                                         ({"dataset": "iris", "optimizer": "adam"}, 1e-3),
                                         ({"dataset": "iris", "lr": 0.07}, 0.07)])
def test_default_learning_rate_by_optimizer_and_model(tmp_path, settings, lr):
    out = tmp_path / "run"
    train(TrainConfig(code="uncoded", code_params={"n": 2}, rounds=1, out=str(out), plot=False,
                      **settings), progress=False)
    assert json.loads((out / "summary.json").read_text())["config"]["lr"] == lr


def test_per_worker_accounting_in_summary_events_and_the_cli(tmp_path, capsys):
    """A worker that never arrives (its trace delay is always past the fastest 3 of 4): summary
    .json lists, per worker, the rounds that used its result; events.log ends with the counts;
    the CLI's end line warns about it."""
    trace = tmp_path / "trace.csv"
    trace.write_text("w0,w1,w2,w3\n" + "0.01,0.02,0.03,0.5\n" * 6)
    out = tmp_path / "run"
    assert main(["train", "--code", "isgc-cr", "--n", "4", "--c", "2", "--rounds", "6",
                 "--wait", "fastest:3", "--delay", f"trace:{trace}", "--backend", "virtual",
                 "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "warning: workers [3] arrived in fewer than 50% of the mean" in printed
    summary = json.loads((out / "summary.json").read_text())
    assert summary["arrivals_by_worker"] == [list(range(6))] * 3 + [[]]
    assert summary["outcomes_by_worker"]["cut"] == [0, 0, 0, 6]
    log = (out / "events.log").read_text().splitlines()
    assert log[-6:-1] == ["per worker: rounds whose result was used (arrived), and the other "
                          "outcomes", "worker 0: arrived 6, cut 0", "worker 1: arrived 6, cut 0",
                          "worker 2: arrived 6, cut 0", "worker 3: arrived 0, cut 6"]
    assert log[-1].startswith("warning: workers [3]")


def test_per_worker_accounting_survives_resume(data, tmp_path):
    """Resumed, the run's per-worker rounds are those of one uninterrupted run, and the counts
    at the end of events.log appear once."""
    kw = dict(code="isgc-cr", code_params={"n": 4, "c": 2}, wait="fastest:3", delay="exp:0.5",
              backend="virtual", checkpoint_every=3)
    whole = train(TrainConfig(rounds=8, out=str(tmp_path / "a"), **kw), data=data,
                  progress=False)
    train(TrainConfig(rounds=5, out=str(tmp_path / "b"), **kw), data=data, progress=False)
    resumed = train(TrainConfig(rounds=8, out=str(tmp_path / "b"), resume=True, **kw), data=data,
                    progress=False)
    assert resumed.account.arrivals == whole.account.arrivals
    log = (tmp_path / "b" / "events.log").read_text()
    assert log.count("per worker: rounds whose result was used") == 1
    summary = json.loads((tmp_path / "b" / "summary.json").read_text())
    assert summary["arrivals_by_worker"] == whole.account.arrivals
