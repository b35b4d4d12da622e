"""Hostile input and faults (issue 11): every path ends in one clear error naming what is wrong,
with nothing lost or overwritten."""

import numpy as np
import pytest

import gradcode
from gradcode.records import Diverged, read_records
from gradcode.sim import Trainer, parse_wait, simulate
from gradcode.stragglers import load_trace, parse_compute, parse_delay


@pytest.mark.parametrize("spec", ["exp:nan", "exp:inf", "const:-1", "shexp:1,inf", "ge:0.1,0.5,nan",
                                  "slow:0.1,0.2,0.3,inf", "exp:1+const:nan"])
def test_delay_specs_must_be_finite(spec):
    with pytest.raises(ValueError, match=r"^delay: .*finite non-negative"):
        parse_delay(spec)


@pytest.mark.parametrize("spec", ["load:nan", "load:inf", "load:1:1,nan", "load:1:1,inf",
                                  "load:-1", "load:1:1,0"])
def test_compute_specs_must_be_finite(spec):
    with pytest.raises(ValueError, match="^compute: "):
        parse_compute(spec)


def test_exp_on_more_workers_than_there_are_is_refused():
    code = gradcode.make_code("isgc-cr", n=6, c=2)
    with pytest.raises(ValueError, match="K <= n = 6 workers, got K = 10"):
        simulate(code, parse_delay("exp:1@10"), parse_wait("all"), 3)


def test_trace_with_a_negative_response_time_is_refused(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("w0,w1\n1.0,2.0\n0.5,-500\n")
    with pytest.raises(ValueError, match=r"negative response time \(-500 s in row 2, worker 1\)"):
        load_trace(path)


def test_simulated_training_that_diverges_stops_with_the_round(recwarn):
    from gradcode.datasets import load_dataset
    code = gradcode.make_code("gc-cr", n=4, s=1)
    tr = Trainer(load_dataset("diabetes", np.random.default_rng(0)), lr=1e300)
    with pytest.raises(Diverged, match=r"diverged at round \d+ .*smaller learning rate") as exc:
        simulate(code, parse_delay("exp:1"), parse_wait("all"), 50, trainer=tr)
    res = exc.value.result
    assert len(res.records) == res.diverged + 1 < 50
    assert not np.isfinite(res.records[-1].loss)
    assert not [w for w in recwarn if "overflow" in str(w.message)]     # no raw numpy warnings


def test_cli_simulate_diverging_exits_1_with_one_line(tmp_path, capsys):
    import json
    from gradcode.cli import main
    out = tmp_path / "sim"
    rc = main(["simulate", "--code", "gc-cr", "--n", "4", "--s", "1", "--dataset", "diabetes",
               "--lr", "1e300", "--rounds", "50", "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 1 and err.count("\n") == 1 and "diverged at round" in err
    assert "Traceback" not in err and "Warning" not in err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["rounds"] == summary["diverged_at_round"] + 1 < summary["rounds_asked"] == 50
    assert len(read_records(out / "rounds.csv")) == summary["rounds"]


torch = pytest.importorskip("torch")
from gradcode.runtime import TrainConfig, load_torch_data, train  # noqa: E402


@pytest.fixture(scope="module")
def data():
    return load_torch_data("synthetic", seed=0, n_samples=300)


def test_training_that_diverges_stops_and_keeps_the_rounds(data, tmp_path):
    out = tmp_path / "run"
    with pytest.raises(Diverged, match="diverged at round") as exc:
        train(TrainConfig(code="isgc-cr", code_params={"n": 4, "c": 2}, rounds=40, lr=1e38,
                          out=str(out)), data=data, progress=False)
    res = exc.value.result
    assert len(res.records) == res.diverged + 1 < 40
    assert len(read_records(out / "rounds.csv")) == len(res.records)
    assert "training diverged" in (out / "events.log").read_text()


@pytest.mark.parametrize("content", [b"", b"garbage, not a checkpoint", None])
def test_resume_from_a_broken_checkpoint_names_the_file(data, tmp_path, content):
    kw = dict(code="isgc-cr", code_params={"n": 4, "c": 2}, rounds=2, out=str(tmp_path / "run"),
              plot=False)
    train(TrainConfig(**kw), data=data, progress=False)
    ckpt = tmp_path / "run" / "checkpoint.pt"
    raw = ckpt.read_bytes()
    ckpt.write_bytes(raw[: len(raw) // 2] if content is None else content)      # None: truncated
    before = {p.name: p.read_bytes() for p in (tmp_path / "run").iterdir()}
    with pytest.raises(ValueError, match=r"resume: '.*checkpoint.pt' is not a readable checkpoint"):
        train(TrainConfig(resume=True, **{**kw, "rounds": 4}), data=data, progress=False)
    assert {p.name: p.read_bytes() for p in (tmp_path / "run").iterdir()} == before


@pytest.mark.parametrize("damage,word", [
    (lambda path: path.unlink(), "is missing"),
    (lambda path: path.write_text(path.read_text().splitlines()[0] + "\n"), r"lacks rounds \[0, 1"),
    (lambda path: path.write_text("\n".join(path.read_text().splitlines()[i] for i in
                                            (0, 1, 1, 2, 3, 4)) + "\n"), "holds some rounds twice"),
    (lambda path: path.write_text("not,a,rounds,file\n1,2,3,4\n"), "is not a rounds.csv"),
])
def test_resume_refuses_a_folder_that_is_not_the_checkpoints_run(data, tmp_path, damage, word):
    """``--resume`` after rounds.csv was deleted or cut gave a traceback (issue 19): the rows up
    to the checkpoint's round (by their round column) must be there; otherwise one line, and
    nothing changed."""
    kw = dict(code="isgc-cr", code_params={"n": 4, "c": 2}, rounds=4, checkpoint_every=2,
              out=str(tmp_path / "run"), plot=False)
    train(TrainConfig(**kw), data=data, progress=False)
    damage(tmp_path / "run" / "rounds.csv")
    before = {p.name: p.read_bytes() for p in (tmp_path / "run").iterdir()}
    with pytest.raises(ValueError, match=f"^resume: .*rounds.csv' {word}"):
        train(TrainConfig(resume=True, **{**kw, "rounds": 6}), data=data, progress=False)
    assert {p.name: p.read_bytes() for p in (tmp_path / "run").iterdir()} == before


def test_resume_keeps_rows_by_their_round_not_their_count(data, tmp_path):
    """Rows written after the checkpoint (a run killed between checkpoints) are dropped by their
    round column; the resumed run equals an uninterrupted one."""
    kw = dict(code="isgc-cr", code_params={"n": 4, "c": 2}, delay="exp:0.1", backend="virtual",
              checkpoint_every=2, seed=1)
    whole = train(TrainConfig(rounds=6, out=str(tmp_path / "a"), **kw), data=data, progress=False)
    run = tmp_path / "b"
    train(TrainConfig(rounds=3, out=str(run), **kw), data=data, progress=False)
    ckpt = torch.load(run / "checkpoint.pt", weights_only=False)
    ckpt["round"] = 2                         # as if killed in round 3, after checkpoint 2
    torch.save(ckpt, run / "checkpoint.pt")
    lines = (run / "rounds.csv").read_text().splitlines()
    (run / "rounds.csv").write_text("\n".join([lines[0], lines[2], lines[1], lines[3]]) + "\n")
    resumed = train(TrainConfig(rounds=6, out=str(run), resume=True, **kw), data=data,
                    progress=False)
    assert [r.round for r in read_records(run / "rounds.csv")] == list(range(6))
    assert [r.round for r in resumed.records] == list(range(6))


@pytest.mark.parametrize("change", [{"lr": 0.1}, {"wait": "fastest:2"}, {"delay": "exp:0.01"},
                                    {"momentum": 0.5}, {"backend": "virtual"}])
def test_resume_refuses_a_changed_setting(data, tmp_path, change):
    kw = dict(code="isgc-cr", code_params={"n": 4, "c": 2}, rounds=2, lr=0.5,
              out=str(tmp_path / "run"), plot=False)
    train(TrainConfig(**kw), data=data, progress=False)
    key = next(iter(change))
    with pytest.raises(ValueError, match=f"resume: .* {key} = "):
        train(TrainConfig(resume=True, **{**kw, "rounds": 4, **change}), data=data,
              progress=False)


def test_resuming_a_finished_run_says_so(data, tmp_path):
    kw = dict(code="isgc-cr", code_params={"n": 4, "c": 2}, rounds=3, out=str(tmp_path / "run"))
    train(TrainConfig(**kw), data=data, progress=False)
    res = train(TrainConfig(resume=True, **kw), data=data, progress=False)
    assert len(res.records) == 3
    assert any("already finished its 3 rounds" in e for e in res.events)


@pytest.mark.parametrize("name,params,word", [
    ("gc-cr", {"n": 10**9, "s": 2}, "GB to build"),
    ("isgc-cr", {"n": 10**9, "c": 2}, "GB to build"),
    ("gc-fr", {"n": 10**9, "s": 1}, "GB to build"),
    ("heter", {"speeds": [1, 2], "s": 1, "k": 10**10}, "k: heter"),
    ("gc-cr", {"n": 1e9, "s": 2}, "n: expected an integer, got 1000000000.0"),
    ("isgc-cr", {"n": 6.0, "c": 2}, "n: expected an integer, got 6.0")])
def test_codes_too_large_for_memory_or_not_integers_are_refused_before_building(name, params,
                                                                                word):
    with pytest.raises(ValueError, match=word):
        gradcode.make_code(name, **params)


def test_gc_cr_is_built_sparse():
    """gc-cr at n = 20 000 never forms a dense n x n matrix (it was 3.2 GB)."""
    import tracemalloc
    tracemalloc.start()
    gradcode.make_code("gc-cr", n=20_000, s=2)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 200e6


def test_cli_train_diverging_exits_1(tmp_path, capsys):
    from gradcode.cli import main
    rc = main(["train", "--code", "isgc-cr", "--n", "4", "--c", "2", "--rounds", "30",
               "--lr", "1e38", "--quiet", "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err
    assert rc == 1 and "diverged at round" in err and "Traceback" not in err


def test_cli_simulate_ctrl_c_summary_counts_the_rounds_that_ran(tmp_path, capsys, monkeypatch):
    """Ctrl-C after 1074 of 200 000 rounds: summary.json's rounds is what ran (rounds_asked is
    what was asked) and rounds.csv holds the finished rows."""
    import json
    import gradcode.records
    from gradcode.cli import main
    calls = []
    real = gradcode.records.write_records

    def write(path, recs, append=False):
        calls.append(1)
        if len(calls) > 1074:
            raise KeyboardInterrupt
        real(path, recs, append=append)
    monkeypatch.setattr(gradcode.records, "write_records", write)
    out = tmp_path / "sim"
    rc = main(["simulate", "--code", "isgc-cr", "--n", "8", "--c", "2", "--wait", "fastest:4",
               "--rounds", "200000", "--out", str(out), "--quiet"])
    assert rc == 130
    summary = json.loads((out / "summary.json").read_text())
    assert summary["rounds_asked"] == 200000 and summary["interrupted"] is True
    assert summary["rounds"] - 1 <= len(read_records(out / "rounds.csv")) == 1074


@pytest.mark.parametrize("spec", ["mu:inf", "deadline:inf", "deadline:nan"])
def test_wait_specs_must_be_finite(spec):
    with pytest.raises(ValueError, match="^wait: bad value"):
        parse_wait(spec)


def test_learning_rate_beyond_float32_is_refused():
    with pytest.raises(ValueError, match=r"lr: expected a number > 0 that float32"):
        TrainConfig(lr=1e39).validate()


def test_api_out_naming_a_file_is_refused(data, tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(ValueError, match="out: .* is not a folder"):
        train(TrainConfig(code="uncoded", code_params={"n": 2}, rounds=1, out=str(f)), data=data)
    assert f.read_text() == "x"


def test_cli_resuming_a_finished_run_says_so(tmp_path, capsys):
    from gradcode.cli import main
    args = ["train", "--code", "uncoded", "--n", "2", "--rounds", "2", "--quiet",
            "--out", str(tmp_path / "run")]
    assert main(args) == 0
    capsys.readouterr()
    assert main(args + ["--resume"]) == 0
    assert "had already finished its 2 rounds; nothing to do" in capsys.readouterr().out


@pytest.fixture
def other_process():
    """A live process that is not this one (the holder of a lock)."""
    import subprocess
    proc = subprocess.Popen(["sleep", "60"])
    yield proc.pid
    proc.kill()
    proc.wait()


def _lock(folder, pid):
    import socket
    folder.mkdir(parents=True, exist_ok=True)
    (folder / ".gradcode.lock").write_text(f"{pid} {socket.gethostname()}")


def test_a_second_run_into_a_folder_in_use_is_refused(data, tmp_path, other_process, capsys):
    """Two runs into one --out interleaved their rows (issue 19): the folder's lock names the
    process that holds it; a second run, resumed, overwriting or fresh, is refused in one line
    and changes nothing."""
    from gradcode.cli import main
    kw = dict(code="isgc-cr", code_params={"n": 4, "c": 2}, rounds=2, out=str(tmp_path / "run"),
              plot=False)
    train(TrainConfig(**kw), data=data, progress=False)
    assert not (tmp_path / "run" / ".gradcode.lock").exists()      # released at the end
    _lock(tmp_path / "run", other_process)
    before = {p.name: p.read_bytes() for p in (tmp_path / "run").iterdir()}
    with pytest.raises(ValueError, match=f"^out: .* is in use by another run \\(process "
                                         f"{other_process} "):
        train(TrainConfig(resume=True, **{**kw, "rounds": 4}), data=data, progress=False)
    assert main(["train", "--code", "isgc-cr", "--n", "4", "--c", "2", "--rounds", "2",
                 "--out", kw["out"], "--overwrite"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "in use by another run" in err[0], err
    assert {p.name: p.read_bytes() for p in (tmp_path / "run").iterdir()} == before
    _lock(tmp_path / "fresh", other_process)
    with pytest.raises(ValueError, match="in use by another run"):
        train(TrainConfig(**{**kw, "out": str(tmp_path / "fresh")}), data=data, progress=False)


def test_a_lock_left_by_a_dead_process_is_taken_over(data, tmp_path):
    import subprocess
    dead = subprocess.Popen(["true"])
    dead.wait()
    _lock(tmp_path / "run", dead.pid)
    res = train(TrainConfig(code="isgc-cr", code_params={"n": 4, "c": 2}, rounds=2,
                            out=str(tmp_path / "run")), data=data, progress=False)
    assert len(res.records) == 2 and not (tmp_path / "run" / ".gradcode.lock").exists()


@pytest.mark.parametrize("argv", [
    ["simulate", "--code", "isgc-cr", "--n", "4", "--c", "2", "--rounds", "3", "--overwrite"],
    ["reproduce", "sgc-loads", "--quick", "--overwrite"],
])
def test_other_commands_refuse_a_folder_in_use(tmp_path, other_process, capsys, argv):
    """simulate and reproduce take the folder's lock too: refused in one line, nothing changed."""
    from gradcode.cli import main
    out = tmp_path / "run"
    folder = out / "sgc-loads" if argv[0] == "reproduce" else out
    _lock(folder, other_process)
    (folder / "rounds.csv").write_text("an earlier run's\n")
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    assert main([*argv, "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "in use by another run" in err[0], err
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
