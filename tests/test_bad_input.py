"""Bad input on the command line (issue 11), one test per class, parametrised over every
subcommand that takes it: exit 2, exactly one line on stderr naming the parameter, no traceback,
and nothing written or changed (the working folder compared before and after).

Classes: output folders (a file, /dev/null, an unwritable place, a finished run without
--overwrite), numbers (finite, in range, integers not booleans, seeds >= 0, flags that need
--dataset), worker ids (--received), config files (syntax errors name the file and line), and
Ctrl-C in reproduce (results.csv always written)."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import numpy as np
import pytest

from gradcode.cli import main

HAS_TORCH = True
try:
    import torch  # noqa: F401
except ImportError:                      # pragma: no cover - the train extra is not installed
    HAS_TORCH = False


@pytest.fixture
def work(tmp_path, monkeypatch):
    """A working folder (the cwd, so that default outputs such as results/ land in it too)
    holding a small delay trace for tune."""
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    D = 1.0 + rng.exponential(0.3, (12, 4))
    np.savetxt(tmp_path / "trace.csv", D, delimiter=",", header="w0,w1,w2,w3", comments="")
    return tmp_path


def snapshot(root: Path) -> dict:
    """Every path under ``root`` with its bytes (None for a folder)."""
    return {str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None)
            for p in sorted(root.rglob("*"))}


def refused(capsys, root: Path, argv: list[str], word: str) -> str:
    """Run ``gradcode ARGV``: exit 2, one line on stderr naming ``word``, nothing on stdout,
    no traceback, nothing under ``root`` written or changed.  Returns the line."""
    if argv[0] == "train" and not HAS_TORCH:
        pytest.skip("train needs torch")
    before = snapshot(root)
    rc = main(argv)
    out, err = capsys.readouterr()
    assert rc == 2, (rc, out, err)
    assert len(err.splitlines()) == 1 and err.endswith("\n"), err
    assert word in err, err
    assert "Traceback" not in err and out == "", (out, err)
    assert snapshot(root) == before
    return err


def command(name: str, out: str) -> list[str]:
    """A valid, small invocation of ``name`` writing to ``out``."""
    return {
        "simulate": ["simulate", "--code", "isgc-cr", "--n", "4", "--c", "2", "--rounds", "3",
                     "--out", out],
        "tune": ["tune", "trace.csv", "--families", "gc-seq", "--jobs", "3", "--max-delay", "1",
                 "--out", out],
        "train": ["train", "--code", "isgc-cr", "--n", "4", "--c", "2", "--rounds", "2",
                  "--dataset", "iris", "--backend", "virtual", "--quiet", "--out", out],
        "reproduce": ["reproduce", "sgc-table1", "--quick", "--quiet", "--out", out],
        "demo": ["demo", "--rounds", "2", "--quiet", "--out", out],
    }[name]


#: what each command's finished run leaves (the folder reproduce checks is OUT/NAME)
FINISHED = {"simulate": "summary.json", "tune": "tune.csv", "train": "checkpoint.pt",
            "reproduce": "sgc-table1/results.csv"}
WRITERS = ("simulate", "tune", "train", "reproduce", "demo")


# ----------------------------------------------------------------------------- output folders
@pytest.mark.parametrize("cmd", WRITERS)
@pytest.mark.parametrize("where", ["a file", "under a file", "/dev/null", "/proc"])
def test_out_that_is_a_file_or_unwritable_is_refused(work, capsys, cmd, where):
    (work / "afile").write_text("not a folder")
    out = {"a file": "afile", "under a file": "afile/run", "/dev/null": "/dev/null",
           "/proc": "/proc/gradcode-test/run"}[where]
    err = refused(capsys, work, command(cmd, out), "--out")
    assert "not a folder" in err or "cannot write" in err
    assert not Path("/proc/gradcode-test").exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder")
@pytest.mark.parametrize("cmd", WRITERS)
def test_out_in_a_read_only_folder_is_refused(work, capsys, cmd):
    ro = work / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        refused(capsys, work, command(cmd, "ro/run"), "cannot write")
    finally:
        ro.chmod(0o755)


@pytest.mark.parametrize("cmd", ["simulate", "tune", "train", "reproduce"])
def test_a_finished_run_is_not_overwritten_without_overwrite(work, capsys, cmd):
    old = work / "old" / FINISHED[cmd]
    old.parent.mkdir(parents=True)
    old.write_bytes(b"an earlier run's output")
    err = refused(capsys, work, command(cmd, "old"), "--out")
    assert "already holds a run or files of yours" in err and "--overwrite" in err


@pytest.mark.parametrize("cmd,mine", [("train", "plot.png"), ("train", "events.log"),
                                      ("demo", "isgc-cr/plot.png"), ("demo", "uncoded/events.log")])
def test_a_users_own_files_are_not_overwritten(work, capsys, cmd, mine):
    """``train --out`` into a folder of the user's replaced their plot.png and events.log, and
    ``demo --out`` likewise (issue 19): a file the command would write is refused unless
    --overwrite; nothing is changed."""
    own = work / "mine" / mine
    own.parent.mkdir(parents=True)
    own.write_bytes(b"the user's own file")
    err = refused(capsys, work, command(cmd, "mine"), "--out")
    assert "files of yours" in err and own.name in err
    assert own.read_bytes() == b"the user's own file"
    assert sorted(p.name for p in own.parent.iterdir()) == [own.name]


@pytest.mark.parametrize("cmd", ["simulate", "tune", "train"])
def test_overwrite_replaces_a_finished_run(work, capsys, cmd):
    if cmd == "train" and not HAS_TORCH:
        pytest.skip("train needs torch")
    old = work / "old" / FINISHED[cmd]
    old.parent.mkdir(parents=True)
    old.write_bytes(b"an earlier run's output")
    assert main(command(cmd, "old") + ["--overwrite"]) == 0
    assert old.read_bytes() != b"an earlier run's output"
    assert capsys.readouterr().err.count("Traceback") == 0


def test_reproduce_overwrite_reaches_the_experiment(work, capsys, monkeypatch):
    import gradcode.experiments as experiments
    old = work / "old" / "sgc-table1" / "results.csv"
    old.parent.mkdir(parents=True)
    old.write_text("x\n1\n")
    calls = []

    def fake(name, out_root, **kw):
        calls.append(name)
        folder = Path(out_root) / name
        (folder / "summary.md").write_text("fresh")
        return folder
    monkeypatch.setattr(experiments, "reproduce", fake)
    assert main(command("reproduce", "old") + ["--overwrite"]) == 0 and calls == ["sgc-table1"]


def test_train_overwrite_and_resume_do_not_go_together(work, capsys):
    refused(capsys, work, command("train", "run") + ["--overwrite", "--resume"], "--overwrite")


# ----------------------------------------------------------------------------------- numbers
SPEEDS = ["--code", "heter", "--s", "1", "--k", "4", "--speeds"]
NUMBERS = [
    # train: TrainConfig.validate (finite, ranges, seeds) and the CLI's checks
    (["train", "--code", "gc-fr", "--n", "4", "--s", "1", "--lr", "inf"], "lr:"),
    (["train", "--code", "gc-fr", "--n", "4", "--s", "1", "--lr", "nan"], "lr:"),
    (["train", "--code", "gc-fr", "--n", "4", "--s", "1", "--momentum", "1"], "momentum:"),
    (["train", "--code", "gc-fr", "--n", "4", "--s", "1", "--momentum", "2"], "momentum:"),
    (["train", "--code", "gc-fr", "--n", "4", "--s", "1", "--round-timeout", "inf"],
     "round_timeout_s:"),
    (["train", "--code", "gc-fr", "--n", "4", "--s", "1", "--seed", "-1"], "seed:"),
    (["train", "--code", "gc-cr", "--n", "4", "--s", "1", "--code-seed", "-1"], "--code-seed:"),
    (["train", "--code", "gc-fr", "--n", "4", "--s", "1", "--backend", "ray", "--actors", "100"],
     "actors:"),
    (["train", "--code", "gc-fr", "--n", "4", "--s", "1", "--actors", "2"],
     "actors: only with backend ray"),
    (["train", *SPEEDS, "1,nan,1,1"], "speeds:"),
    # simulate
    (["simulate", "--code", "gc-fr", "--n", "4", "--s", "1", "--seed", "-1"], "--seed"),
    (["simulate", "--code", "gc-cr", "--n", "4", "--s", "1", "--code-seed", "-1"],
     "--code-seed:"),
    (["simulate", "--code", "gc-fr", "--n", "4", "--s", "1", "--dataset", "iris", "--lr", "inf"],
     "--lr"),
    (["simulate", "--code", "gc-fr", "--n", "4", "--s", "1", "--lr", "0.5"], "--lr:"),
    (["simulate", "--code", "gc-fr", "--n", "4", "--s", "1", "--batch", "2"], "--batch:"),
    (["simulate", "--code", "gc-fr", "--n", "4", "--s", "1", "--model", "linear"], "--model:"),
    (["simulate", *SPEEDS, "1,inf,1,1"], "speeds:"),
    # tune
    (["tune", "trace.csv", "--isgc-c", "0"], "--isgc-c"),
    (["tune", "trace.csv", "--isgc-c", "9"], "--isgc-c"),
    (["tune", "trace.csv", "--isgc-c", "2", "--dataset", "iris", "--target-loss", "-1"],
     "--target-loss"),
    (["tune", "trace.csv", "--base-load", "-1"], "--base-load"),
    (["tune", "trace.csv", "--alpha", "nan"], "--alpha"),
    (["tune", "trace.csv", "--alpha", "inf"], "--alpha"),
    (["tune", "trace.csv", "--alpha", "-1"], "--alpha"),
    (["tune", "trace.csv", "--mu", "nan"], "--mu"),
    (["tune", "trace.csv", "--load-profile", "nan=trace.csv"], "--load-profile"),
    (["tune", "trace.csv", "--load-profile", "-1=trace.csv"], "--load-profile"),
    (["tune", "trace.csv", "--load-profile", "1.0"], "--load-profile"),
    (["tune", "trace.csv", "--seed", "-1"], "--seed"),
    (["tune", "trace.csv", "--lr", "inf"], "--lr"),
    # code, decode, reproduce
    (["code", "gc-cr", "--n", "4", "--s", "1", "--seed", "-1"], "seed:"),
    (["code", "heter", "--s", "1", "--k", "4", "--speeds", "1,0,1"], "speeds:"),
    (["code", "heter", "--s", "1", "--k", "4", "--speeds", "1,-2,1"], "speeds:"),
    (["code", "heter", "--s", "1", "--k", "4", "--speeds", "1e308,1e308"], "speeds:"),
    (["decode", "gc-fr", "--n", "4", "--s", "1", "--decode-seed", "-1"], "--decode-seed"),
    (["decode", "heter", "--s", "1", "--k", "4", "--speeds", "nan,1"], "speeds:"),
    (["reproduce", "sgc-table1", "--quick", "--seed", "-1"], "--seed"),
]


@pytest.mark.parametrize("argv,word", NUMBERS, ids=[" ".join(a[:1] + a[-2:]) for a, _ in NUMBERS])
def test_numbers_must_be_finite_and_in_range(work, capsys, argv, word):
    out = ["--out", "out"] if argv[0] in ("simulate", "tune", "train", "reproduce") else []
    refused(capsys, work, argv + out, word)


@pytest.mark.parametrize("text,word", [
    ("rounds: true\n", "rounds:"), ("seed: -1\n", "seed:"), ("batch: false\n", "batch:"),
    ("lr: .inf\n", "lr:"), ("momentum: 1.5\n", "momentum:"), ("round_timeout_s: .nan\n",
                                                               "round_timeout_s:"),
    ("checkpoint_every: 2.5\n", "checkpoint_every:"), ("wait: 3\n", "wait:"),
    ("shuffle: 1\n", "shuffle:"), ("code_params: [1, 2]\n", "code_params:"),
])
def test_config_file_numbers_and_types(work, capsys, text, word):
    cfg = work / "run.yaml"
    cfg.write_text("code: gc-fr\ncode_params: {n: 4, s: 1}\ndataset: iris\n" + text)
    refused(capsys, work, ["train", "--config", "run.yaml", "--out", "out"], word)


def test_train_config_validate_refuses_booleans_for_integers():
    from gradcode.runtime import TrainConfig
    for field in ("rounds", "seed", "batch", "actors", "checkpoint_every", "eval_samples",
                  "measure_speeds"):
        with pytest.raises(ValueError, match=f"^{field}: expected an integer"):
            TrainConfig(**{field: True}).validate()
    with pytest.raises(ValueError, match=r"^momentum: expected a number in \[0, 1\)"):
        TrainConfig(momentum=1.0).validate()
    TrainConfig(momentum=0.99, lr=3, round_timeout_s=1).validate()     # an int is a float


@pytest.mark.parametrize("argv,word", [
    (["--optimizer", "adam", "--momentum", "0.9"], "momentum: only with optimizer sgd"),
    (["--dataset", "digits", "--data-dir", "/tmp"], "data_dir: only with dataset fashion-mnist"),
])
def test_train_refuses_settings_it_would_ignore(tmp_path, capsys, argv, word):
    """Adam with --momentum trained without it, silently (issue 19): a setting that would have
    no effect is refused in one line, exit 2, nothing written."""
    from gradcode.cli import main
    out = tmp_path / "out"
    assert main(["train", "--code", "uncoded", "--n", "2", "--rounds", "1", "--out", str(out),
                 *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and word in err[0], err
    assert not out.exists()


def test_train_config_takes_numpy_numbers():
    """``TrainConfig(rounds=np.int64(3))`` was refused (issue 19): NumPy's integers, floats and
    booleans are taken as Python's (so summary.json and checkpoints hold plain numbers); a NumPy
    float is still not an integer, nor a NumPy bool a number."""
    from gradcode.runtime import TrainConfig
    cfg = TrainConfig(rounds=np.int64(3), seed=np.int32(1), lr=np.float32(0.5),
                      momentum=np.float64(0.5), shuffle=np.bool_(True)).validate()
    assert (cfg.rounds, cfg.seed, cfg.lr, cfg.momentum, cfg.shuffle) == (3, 1, 0.5, 0.5, True)
    assert [type(v) for v in (cfg.rounds, cfg.seed, cfg.lr, cfg.shuffle)] == [int, int, float, bool]
    json.dumps(cfg.as_dict())
    with pytest.raises(ValueError, match="^rounds: expected an integer"):
        TrainConfig(rounds=np.float64(3.0)).validate()
    with pytest.raises(ValueError, match="^lr: expected a finite number"):
        TrainConfig(lr=np.bool_(True)).validate()


# -------------------------------------------------------------------------------- worker ids
@pytest.mark.parametrize("received,word", [
    ("0,,1", "empty item"), ("0,1,", "empty item"), (",", "empty item"),
    ("99999999999999999999,1", "out of range"), ("-1", "out of range"), ("4", "out of range"),
    ("0,x", "--received"), ("1" * 5000, "--received"), ("1,1", "listed twice"),
])
def test_received_worker_ids(work, capsys, received, word):
    err = refused(capsys, work, ["decode", "gc-fr", "--n", "4", "--s", "1", "--received",
                                 received], word)
    assert err.startswith("gradcode decode: error: --received:") and len(err) < 300


def test_decode_text_is_shortened_for_large_n_and_json_is_complete(capsys):
    n = 2000
    received = ",".join(str(i) for i in range(0, n, 2))
    assert main(["decode", "isgc-cr", "--n", str(n), "--c", "2", "--received", received]) == 0
    text = capsys.readouterr().out
    assert len(text) < 1000 and len(text.splitlines()) == 3
    assert "1000 workers" in text and "use --json" in text
    assert main(["decode", "isgc-cr", "--n", str(n), "--c", "2", "--received", received,
                 "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert len(d["weights"]) == n and len(d["recovered"]) == n and len(d["received"]) == n // 2


# ------------------------------------------------------------------------------ config files
@pytest.mark.parametrize("name,text,where", [
    ("run.toml", 'code = "gc-fr"\nrounds = = 2\n', "line 2"),
    ("run.yaml", "code: gc-fr\nrounds: [1, 2\n", "line 3"),
    ("run.yaml", "code: gc-fr\n  rounds: 2\n bad", "line"),
    ("run.json", '{"code": "gc-fr",\n "rounds": }', "line 2"),
    ("run.toml", b"\xff\xfe not text", "cannot read"),
])
def test_config_syntax_errors_name_the_file_and_line(work, capsys, name, text, where):
    path = work / name
    (path.write_bytes if isinstance(text, bytes) else path.write_text)(text)
    err = refused(capsys, work, ["train", "--config", name, "--out", "out"], where)
    assert f"'{name}'" in err and err.startswith("gradcode train: error: config:")


def test_code_parameters_on_the_command_line_apply_to_the_config_files_code(work):
    if not HAS_TORCH:
        pytest.skip("train needs torch")
    from gradcode.cli import build_parser
    from gradcode.cli._train import _config
    (work / "run.toml").write_text('code = "isgc-cr"\nrounds = 2\n[code_params]\nn = 8\nc = 2\n')
    args, extra = build_parser().parse_known_args(["train", "--config", "run.toml", "--c", "3"])
    spec = _config(args, extra)
    cfg = spec.config
    assert cfg.code == "isgc-cr" and cfg.code_params == {"n": 8, "c": 3} and spec.n == 8
    args, extra = build_parser().parse_known_args(["train", "--config", "run.toml", "--n", "6"])
    assert _config(args, extra).config.code_params == {"n": 6, "c": 2}


def test_code_parameters_without_any_code_are_refused(work, capsys):
    refused(capsys, work, ["train", "--c", "3", "--out", "out"], "--code")


# ----------------------------------------------------------------------- Ctrl-C in reproduce
@pytest.mark.parametrize("rows", [[], [{"a": 1}], [{"a": 1}, {"a": 2, "b": 3}]])
def test_reproduce_interrupted_always_writes_results_csv(work, capsys, monkeypatch, rows):
    from gradcode.experiments import _common

    def run(ctx):
        ctx.rows.extend(rows)
        raise KeyboardInterrupt
    monkeypatch.setattr(_common, "_spec", lambda name: {"title": "a test", "run": run})
    assert main(["reproduce", "sgc-table1", "--quick", "--out", "res"]) == 130
    err = capsys.readouterr().err
    assert f"{len(rows)} finished row" in err and err.count("\n") == 1
    folder = work / "res" / "sgc-table1"
    with (folder / "results.csv").open(newline="") as fh:
        lines = list(csv.reader(fh))
    if rows:
        assert lines[0] == list(dict.fromkeys(k for r in rows for k in r))
        assert len(lines) == 1 + len(rows)
    else:
        assert lines == [["experiment", "interrupted"]]
    summary = (folder / "summary.md").read_text()
    assert "Interrupted (Ctrl-C)" in summary
    assert (f"{len(rows)} finished row" if rows else "no row had finished") in summary
    assert not (folder / "plot.png").exists() and not (folder / "run.json").exists()
