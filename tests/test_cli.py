import json
import subprocess
import sys

import pytest

from gradcode.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_code_table(capsys):
    rc, out, _ = run(capsys, "code", "isgc-cr", "--n", "4", "--c", "2")
    assert rc == 0
    assert "isgc-cr(n=4, c=2)" in out and "worker" in out
    rows = [line.split() for line in out.splitlines() if line.strip()[:1].isdigit()]
    assert [r[0] for r in rows] == ["0", "1", "2", "3"]
    assert rows[3][2:] == ["1", ".", ".", "1"]


def test_code_json_roundtrip(capsys):
    rc, out, _ = run(capsys, "code", "gc-cr", "--n", "6", "--s", "2", "--seed", "3", "--json")
    info = json.loads(out)
    assert rc == 0 and info["name"] == "gc-cr" and info["seed"] == 3 and info["tolerates_s"] == 2
    assert len(info["B"]) == 6 and info["max_abs_coefficient"] > 0


def test_speeds_flag(capsys):
    rc, out, _ = run(capsys, "code", "heter", "--speeds", "1,2,3,4,4", "--s", "1", "--k", "7", "--json")
    assert rc == 0 and json.loads(out)["n_workers"] == 5


def test_decode(capsys):
    rc, out, _ = run(capsys, "decode", "isgc-cr", "--n", "4", "--c", "2", "--received", "0,1,3", "--json")
    d = json.loads(out)
    assert rc == 0 and d["exact"] and d["weights"] == [0, 1, 0, 1]
    rc, out, _ = run(capsys, "decode", "gc-fr", "--n", "6", "--s", "1", "--received", "0,2",
                     "--method", "optimal")
    assert rc == 0 and "not exact" in out


def test_decode_shows_paper_2s_alg3_against_the_maximum_decoder(capsys):
    """The Theorem 8 counterexample from the shell: Alg. 3 (``--method alg3``) started in worker
    10's group finds 1 worker, the default decoder 2."""
    hr = ["decode", "isgc-hr", "--n", "16", "--c1", "1", "--c2", "3", "--groups", "4",
          "--received", "7,10,12", "--json"]
    found = set()
    for seed in range(16):
        rc, out, _ = run(capsys, *hr, "--method", "alg3", "--decode-seed", str(seed))
        d = json.loads(out)
        assert rc == 0 and d["method"] == "alg3"
        found.add(sum(w != 0 for w in d["weights"]))
        rc, out, _ = run(capsys, *hr, "--decode-seed", str(seed))
        assert sum(w != 0 for w in json.loads(out)["weights"]) == 2
    assert found == {1, 2}


def test_decode_refuses_a_method_the_code_lacks(capsys):
    rc, out, err = run(capsys, "decode", "isgc-cr", "--n", "4", "--c", "2", "--received", "0",
                       "--method", "alg3")
    assert rc == 2 and not out and len(err.strip().splitlines()) == 1
    assert "--method" in err and "'alg3'" in err and "optimal" in err


@pytest.mark.parametrize("argv,word", [
    (["code", "gc-fr", "--n", "7", "--s", "2"], "s:"),
    (["code", "gc-fr", "--n", "6", "--q", "2"], "--q"),
    (["code", "gc-fr", "--n", "6"], "--s"),
    (["code", "nosuch", "--n", "6"], "unknown code"),
    (["decode", "gc-fr", "--n", "6", "--s", "1", "--received", "0,a"], "--received"),
    (["decode", "gc-fr", "--n", "6", "--s", "1", "--received", "0,9"], "received"),
    (["code", "gc-cr", "--n", "x", "--s", "1"], "n:"),
])
def test_bad_input_one_line_exit_2(capsys, argv, word):
    rc, out, err = run(capsys, *argv)
    assert rc == 2
    assert word in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_entry_point_exit_code():
    p = subprocess.run([sys.executable, "-m", "gradcode", "code", "gc-fr", "--n", "7", "--s", "2"],
                       capture_output=True, text=True)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    p = subprocess.run([sys.executable, "-m", "gradcode", "list"], capture_output=True, text=True)
    assert p.returncode == 0 and "isgc-hr" in p.stdout


def test_sequential_schemes_in_the_cli(capsys):
    rc, out, _ = run(capsys, "code", "m-sgc", "--n", "4", "--B", "2", "--W", "3", "--lam", "2")
    assert rc == 0 and "T = 3" in out
    rc, _, err = run(capsys, "decode", "sr-sgc", "--n", "4", "--B", "2", "--W", "3", "--lam", "2")
    assert rc == 2 and "sequential" in err


def test_layers_reachable_from_the_package():
    import gradcode
    assert callable(gradcode.sequential.replay) and callable(gradcode.stragglers.fit_load_slope)


def test_codes_and_simulator_layers_import_neither_torch_nor_ray():
    import subprocess
    import sys
    code = ("import sys, gradcode, gradcode.codes, gradcode.sequential, gradcode.stragglers, "
            "gradcode.analysis, gradcode.sim, gradcode.experiments, gradcode.cli\n"
            "from gradcode.sim import parse_wait, simulate\n"
            "from gradcode.stragglers._delays import parse_delay\n"
            "simulate(gradcode.make_code('isgc-cr', n=6, c=2), parse_delay('exp:1'), "
            "parse_wait('fastest:3'), 10)\n"
            "gradcode.cli.main(['simulate', '--code', 'm-sgc', '--n', '6', '--B', '1', '--W', '2',"
            " '--lam', '2', '--rounds', '5', '--json'])\n"
            "print(sorted(m for m in ('torch', 'ray') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_version(capsys):
    import gradcode
    rc, out, _ = run(capsys, "--version")
    assert rc == 0 and out.strip() == f"gradcode {gradcode.__version__}" == "gradcode 0.1.0"


def test_top_level_help_describes_every_command(capsys):
    rc, out, _ = run(capsys, "--help")
    assert rc == 0 and "(later)" not in out
    commands = out.split("commands:")[1].split("options:")[0]
    for name in ("list", "code", "decode", "simulate", "tune", "reproduce", "train", "demo"):
        line = next(x for x in commands.splitlines() if x.split()[:1] == [name])
        assert len(line.split()) > 3, line                      # a description, not the name alone


@pytest.mark.parametrize("argv,words", [
    (["reproduce", "--bogus"], ["unrecognized arguments: --bogus", "gradcode reproduce --help"]),
    (["tune", "t.csv", "--jobs"], ["--jobs", "expected one argument", "gradcode tune --help"]),
    (["simulate", "--code", "gc-cr", "--n", "8", "--s", "2", "--rounds"], ["--rounds"]),
    (["simulate", "--rounds", "x"], ["--rounds", "invalid int value"]),
    (["train", "--backend", "nowhere"], ["--backend", "invalid choice", "virtual",
                                         "gradcode train --help"]),
    (["train", "--optimizer", "lbfgs"], ["--optimizer", "invalid choice"]),
    (["decode", "gc-fr", "--method", "best"], ["--method", "invalid choice"]),
    (["code"], ["NAME", "gradcode code --help"]),
    (["nosuch"], ["invalid choice", "gradcode --help"]),
    ([], ["COMMAND"]),
])
def test_usage_errors_are_one_line(capsys, argv, words):
    rc, out, err = run(capsys, *argv)
    assert rc == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "usage:" not in err and "error:" in err, err
    for word in words:
        assert word in err


def test_usage_block_only_with_help(capsys):
    rc, out, err = run(capsys, "simulate", "--help")
    assert rc == 0 and out.startswith("usage: gradcode simulate") and err == ""


def test_no_progress_frames_without_a_terminal(capsys):
    """stderr is not a terminal under pytest: no progress bar, so no \\r frames in a log."""
    rc, _, err = run(capsys, "simulate", "--code", "isgc-cr", "--n", "8", "--c", "2",
                     "--wait", "fastest:4", "--rounds", "6000")    # >= 5000 rounds used to show one
    assert rc == 0 and "\r" not in err


def test_no_progress_frames_in_train_without_a_terminal(capsys):
    pytest.importorskip("torch")
    rc, out, err = run(capsys, "train", "--code", "gc-fr", "--n", "4", "--s", "1",
                       "--dataset", "iris", "--rounds", "3", "--backend", "virtual")
    assert rc == 0 and "3 rounds" in out and "\r" not in err and "\r" not in out


def test_train_flags_are_generated_from_train_config(capsys):
    import dataclasses

    from gradcode.cli._train import CODE_FIELDS, flag_name
    from gradcode.runtime import TrainConfig

    parser = __import__("gradcode.cli", fromlist=["build_parser"]).build_parser()
    train = parser.commands["train"]
    flags = {s: a for a in train._actions for s in a.option_strings}
    fields = [f for f in dataclasses.fields(TrainConfig) if f.name not in CODE_FIELDS]
    assert {"code", "code_params"} == set(CODE_FIELDS) and "--code" in flags
    for f in fields:
        assert f.metadata.get("help"), f"{f.name}: declare its help in TrainConfig"
        action = flags[flag_name(f)]
        assert action.dest == f.name and action.default is None       # a --config value stands
        if "choices" in f.metadata:
            assert list(action.choices) == list(f.metadata["choices"])
    assert flag_name(next(f for f in fields if f.name == "round_timeout_s")) == "--round-timeout"
    from gradcode.runtime import BACKENDS      # the backends table, whatever it holds
    assert list(flags["--backend"].choices) == list(BACKENDS)
    assert {"local", "ray", "torch", "virtual"} <= set(BACKENDS)
    assert flags["--shuffle"].nargs == 0 and flags["--rounds"].type is int
    assert flags["--lr"].type is float and flags["--eval-samples"].type is int
    rc, out, _ = run(capsys, "train", "--help")
    text = " ".join(out.split())
    assert rc == 0
    for f in fields:
        assert " ".join(f.metadata["help"].split()) in text, f.name
    assert "training rounds (default 50)" in text and "(default 60.0)" in text


def test_import_gradcode_reaches_the_runtime_lazily():
    code = ("import sys, gradcode\n"
            "loaded = sorted(m for m in ('torch', 'ray') if m in sys.modules)\n"
            "cfg = gradcode.runtime.TrainConfig\n"
            "after_config = sorted(m for m in ('torch', 'ray') if m in sys.modules)\n"
            "print(loaded, after_config)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[] []"
    pytest.importorskip("torch")
    import gradcode
    assert callable(gradcode.runtime.train) and callable(gradcode.runtime.load_torch_data)


def test_make_bench_runs_every_benchmark():
    """benchmarks/run_all.py (``make bench``) lists every bench_*.py; --list runs none of them."""
    from pathlib import Path
    bench = Path(__file__).resolve().parents[1] / "benchmarks"
    files = sorted(p.name for p in bench.glob("bench_*.py"))
    assert files and "run_all.py" in (bench.parent / "Makefile").read_text()
    out = subprocess.run([sys.executable, str(bench / "run_all.py"), "--list", "--quick"],
                         capture_output=True, text=True, check=True, timeout=60).stdout
    assert [line.split()[0] for line in out.splitlines()] == files
    assert "bench_sequential.py --quick" in out


def test_headers_name_the_run_in_words(capsys):
    rc, out, _ = run(capsys, "simulate", "--code", "isgc-cr", "--n", "8", "--c", "2",
                     "--wait", "fastest:4", "--delay", "exp:0.5", "--dataset", "iris",
                     "--rounds", "5")
    assert rc == 0 and "make_code(" not in out
    assert out.splitlines()[0] == ("isgc-cr with n = 8, c = 2; iris, softmax model; "
                                   "wait fastest:4; delay exp:0.5; 5 rounds")
    rc, out, _ = run(capsys, "decode", "gc-fr", "--n", "4", "--s", "1", "--received", "0,2")
    assert rc == 0 and out.startswith("gc-fr with n = 4, s = 1: received [0, 2]")


def test_describe_run():
    import gradcode
    from gradcode.cli._common import describe_code, describe_run
    code = gradcode.make_code("isgc-cr", n=8, c=2)
    assert describe_run(code, dataset="digits", model="cnn", wait="fastest:4",
                        delay="exp:0.05") == ("isgc-cr with n = 8, c = 2; digits, cnn model; "
                                              "wait fastest:4; delay exp:0.05")
    assert describe_run(gradcode.make_code("m-sgc", n=4, B=1, W=2, lam=2), models=3) == \
        "m-sgc with n = 4, B = 1, W = 2, lam = 2, seed = 0, 3 models pipelined"
    heter = gradcode.make_code("heter", speeds=[1] * 20, s=1, k=20)
    assert "speeds = 1,1,1,1,1,1,... (20)" in describe_code(heter)
    assert describe_code({"name": "gc-seq", "code": {"name": "gc-cr", "n": 4, "s": 1}}) == \
        "gc-seq with code = (gc-cr with n = 4, s = 1)"


def test_train_header_in_words(capsys):
    pytest.importorskip("torch")
    rc, out, _ = run(capsys, "train", "--code", "isgc-cr", "--n", "4", "--c", "2", "--dataset",
                     "iris", "--model", "softmax", "--rounds", "2", "--backend", "virtual",
                     "--wait", "fastest:2", "--delay", "exp:0.1", "--quiet")
    assert rc == 0 and out.splitlines()[0] == ("isgc-cr with n = 4, c = 2; iris, softmax model; "
                                               "wait fastest:2; delay exp:0.1")


def test_list_aligns_every_name(capsys):
    """The parameters start in one column however long a name is (comm-efficient, 14 letters,
    pushed its row out of line at a fixed width of 12)."""
    rc, out, _ = run(capsys, "list")
    starts = {len(line) - len(line.split("  ", 1)[1].lstrip()) for line in out.splitlines()}
    assert rc == 0 and len(starts) == 1 and "comm-efficient" in out
