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
