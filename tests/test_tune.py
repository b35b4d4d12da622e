"""Runtime estimation and parameter search of paper 4, App. J."""

import numpy as np
import pytest

import gradcode
from gradcode.cli import main
from gradcode.stragglers import fit_load_slope, traces_dir


def profile(rounds=30, n=8, seed=0):
    return 1.0 + np.random.default_rng(seed).exponential(0.3, (rounds, n))


def test_fit_load_slope_recovers_the_line():
    base = profile(20, 16)
    alpha, intercept = fit_load_slope([(l, base + 2.0 * l) for l in (0.0, 0.5, 1.0)])
    assert alpha == pytest.approx(2.0) and intercept == pytest.approx(base.mean())


def test_estimate_runtime_rules():
    D = profile()
    un = gradcode.estimate_runtime(gradcode.make_code("uncoded", n=8), D, jobs=20, mu=1.0)
    assert un.runtime_s == pytest.approx(D[:20].max(1).sum())           # waits for everyone
    gc = gradcode.estimate_runtime(gradcode.make_code("gc-seq", n=8, s=7), D, jobs=20, mu=1.0)
    lo, hi = D[:20].min(1), D[:20].max(1)
    assert gc.waitouts == 0
    assert gc.runtime_s == pytest.approx(np.minimum(2 * lo, hi).sum())
    shifted = gradcode.estimate_runtime(gradcode.make_code("gc-seq", n=8, s=7), D, jobs=20, mu=1.0,
                                        alpha=1.0, base_load=0.0)
    assert shifted.runtime_s > gc.runtime_s                              # load 1 costs alpha more
    m = gradcode.estimate_runtime(gradcode.make_code("m-sgc", n=8, B=1, W=2, lam=2), D, jobs=20)
    assert m.rounds == 20 + 1


def test_estimate_runtime_needs_enough_rounds():
    with pytest.raises(ValueError, match="^delays"):
        gradcode.estimate_runtime(gradcode.make_code("m-sgc", n=8, B=2, W=3, lam=2), profile(20),
                                  jobs=20)


def test_tune_is_exhaustive_and_sorted():
    rows = gradcode.tune(profile(), jobs=20, mu=1.0, alpha=0.5, max_delay=3)
    fams = {r["family"] for r in rows}
    assert fams == {"uncoded", "gc-seq", "sr-sgc", "m-sgc"}
    assert all(r["T"] <= 3 for r in rows)
    assert [r["runtime_s"] for r in rows] == sorted(r["runtime_s"] for r in rows)
    assert sum(r["family"] == "gc-seq" for r in rows) == 8


def test_cli_tune(tmp_path, capsys):
    trace = tmp_path / "t.csv"
    D = profile()
    np.savetxt(trace, D, delimiter=",", header=",".join(f"w{i}" for i in range(8)), comments="")
    heavy = tmp_path / "t1.csv"
    np.savetxt(heavy, D + 1.0, delimiter=",", header=",".join(f"w{i}" for i in range(8)), comments="")
    rc = main(["tune", str(trace), "--load-profile", f"1.0={heavy}", "--jobs", "20",
               "--max-delay", "2", "--out", str(tmp_path / "out")])
    out = capsys.readouterr().out
    assert rc == 0 and "m-sgc" in out and "alpha = 1" in out
    assert (tmp_path / "out" / "tune.csv").is_file() and (tmp_path / "out" / "sensitivity.png").is_file()
    assert main(["tune", str(tmp_path / "none.csv")]) == 2


@pytest.mark.skipif(traces_dir() is None, reason="real Lambda traces not present")
def test_real_trace_gc_beats_uncoded():
    from gradcode.stragglers import load_trace
    D = load_trace(traces_dir() / "canada-w256-r30-load0_000.csv")
    un = gradcode.estimate_runtime(gradcode.make_code("uncoded", n=256), D, jobs=20)
    gc = gradcode.estimate_runtime(gradcode.make_code("gc-seq", n=256, s=15), D, jobs=20)
    assert gc.runtime_s < un.runtime_s


def test_isgc_w_table_tradeoff(tmp_path, capsys):
    from gradcode.sim import isgc_w_table
    D = profile(20, 8)
    rows = isgc_w_table(gradcode.make_code("isgc-cr", n=8, c=2), D)
    times = [r["mean_round_time_s"] for r in rows]
    rec = [r["mean_recovered_fraction"] for r in rows]
    assert times == sorted(times) and rec == sorted(rec) and rec[-1] == 1.0
    assert rec[0] == pytest.approx(2 / 8)
    trace = tmp_path / "t.csv"
    np.savetxt(trace, D, delimiter=",", header=",".join(f"w{i}" for i in range(8)), comments="")
    assert main(["tune", str(trace), "--families", "gc-seq", "--isgc-c", "2",
                 "--out", str(tmp_path / "o")]) == 0
    assert "fastest w" in capsys.readouterr().out
