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
    assert main(["tune", str(trace), "--families", "gc-cr", "--out", str(tmp_path / "bad")]) == 2
    assert "families: unknown family 'gc-cr'" in capsys.readouterr().err
    assert not (tmp_path / "bad").exists()


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


# ----------------------------------------------------------------------------- vectorised search
ALL_FAMILIES = ("uncoded", "gc-seq", "sr-sgc", "m-sgc", "sr-sgc-rep", "m-sgc-rep", "cyclic-mds",
                "frc-approx", "bcc", "bgc", "expander", "stochastic-gc", "comm-efficient")


def bursty_profile(rounds, n, seed):
    """Response times with bursts of slow workers, so every family sees wait-outs."""
    rng = np.random.default_rng(seed)
    D = 1.0 + rng.exponential(0.3, (rounds, n))
    slow = rng.random((rounds, n)) < 0.08
    slow[1:] |= slow[:-1] & (rng.random((rounds - 1, n)) < 0.5)
    return D + slow * rng.exponential(3.0, (rounds, n))


@pytest.mark.parametrize("n, seed", [(12, 0), (16, 1)])
def test_tune_rows_equal_estimate_runtime(n, seed):
    D = bursty_profile(18, n, seed)
    rows = gradcode.tune(D, jobs=12, mu=1.0, alpha=0.7, base_load=0.1, max_delay=5,
                         families=ALL_FAMILIES)
    assert {r["family"] for r in rows} >= {"uncoded", "gc-seq", "sr-sgc", "m-sgc", "m-sgc-rep",
                                           "cyclic-mds", "frc-approx", "bcc"}
    assert any(r["waitouts"] for r in rows) and any(not r["waitouts"] for r in rows)
    for r in rows:
        code = gradcode.make_code(r["family"], n=n, **r["params"])
        e = gradcode.estimate_runtime(code, D, jobs=12, mu=1.0, alpha=0.7, base_load=0.1)
        assert (r["runtime_s"], r["waitouts"], r["load"], r["T"]) == \
            (e.runtime_s, e.waitouts, e.load, int(getattr(code, "T", 0))), r


def test_tune_deadline_rule_equals_estimate_runtime():
    D = bursty_profile(16, 12, 2)
    rows = gradcode.tune(D, jobs=12, alpha=0.5, max_delay=3, families=ALL_FAMILIES,
                         waitout="deadline")
    for r in rows[::7]:
        code = gradcode.make_code(r["family"], n=12, **r["params"])
        e = gradcode.estimate_runtime(code, D, jobs=12, alpha=0.5, waitout="deadline")
        assert (r["runtime_s"], r["waitouts"]) == (e.runtime_s, e.waitouts)


def test_model_waitouts_agree_with_replay_many():
    from gradcode.sequential import replay_many
    from gradcode.sim._search import model_waitouts
    rng = np.random.default_rng(3)
    n, jobs = 12, 10
    schemes = [gradcode.make_code(f, n=n, **p) for f, p in [
        ("gc-seq", dict(s=2)),
        ("m-sgc", dict(B=1, W=3, lam=3)), ("m-sgc", dict(B=2, W=3, lam=0)),
        ("m-sgc-rep", dict(B=1, W=2, lam=2))]]
    # (not SR-SGC: its App. J rule reads the planner's reattempts, so the search replays it;
    # tests/test_appj.py)
    for x in schemes:
        pats = rng.random((3, jobs + x.T, n)) < 0.12
        pats[:, :, :4] = False                          # workers that never straggle
        which = np.array([0, 1, 2, 1])
        got = model_waitouts([x] * 4, pats, which, jobs)
        want = replay_many([x] * 4, [pats[i] for i in which], jobs, waitout="model").waitout
        assert np.array_equal(got, want), x


def test_search_grid_deadline_reduction_is_exact():
    """Under the deadline rule SR-SGC runs once per (B, s); every (W, lam) still gets its own
    runtime, equal to a replay of its own scheme."""
    from gradcode.sequential import replay
    from gradcode.sim._search import search
    from gradcode.stragglers import identify_stragglers
    n, jobs, alpha, mu = 12, 10, 0.8, 1.0
    D = bursty_profile(14, n, 4)
    for family in ("sr-sgc", "sr-sgc-rep"):
        grid = {"B": [], "W": [], "lam": []}
        for B, W in [(1, 2), (1, 4), (2, 3), (2, 5)]:
            for lam in range(1, n + 1):
                try:
                    gradcode.make_code(family, n=n, B=B, W=W, lam=lam)
                except ValueError:
                    continue
                for k, v in zip(grid, (B, W, lam)):
                    grid[k].append(v)
        res = search(family, grid, D, jobs, mu, alpha, base_load=0.0, waitout="deadline")
        for i in range(len(res)):
            x = gradcode.make_code(family, n=n, B=grid["B"][i], W=grid["W"][i], lam=grid["lam"][i])
            Dx = D[:jobs + x.T] + x.load * alpha
            S = identify_stragglers(Dx, mu)
            waits = np.zeros(len(S), bool)
            waits[replay(x, S, jobs).waitouts] = True
            times = np.where(waits | ~S.any(1), Dx.max(1), np.minimum((1 + mu) * Dx.min(1), Dx.max(1)))
            assert res.runtime_s[i] == times.sum() and res.waitouts[i] == waits.sum()


def test_search_validation_names_the_parameter():
    from gradcode.sim._search import search, search_runtimes
    D = profile(20, 8)
    with pytest.raises(ValueError, match="^lam"):
        search("sr-sgc", {"B": [1], "W": [2], "lam": [0]}, D, jobs=10)
    with pytest.raises(ValueError, match="^W"):
        search("sr-sgc", {"B": [2], "W": [4], "lam": [2]}, D, jobs=10)
    with pytest.raises(ValueError, match="^s: not a parameter"):
        search("m-sgc", {"B": [1], "W": [2], "lam": [2], "s": [1]}, D, jobs=10)
    with pytest.raises(ValueError, match="^family"):
        search("gc-cr", {"s": [1]}, D, jobs=10)
    with pytest.raises(ValueError, match="^grid"):
        search("m-sgc", {"B": [1], "W": [2, 3], "lam": [2]}, D, jobs=10)
    with pytest.raises(ValueError, match="^schemes"):
        search_runtimes([gradcode.make_code("uncoded", n=8)], D, jobs=10)
    with pytest.raises(ValueError, match="^delays"):
        search_runtimes([gradcode.make_code("m-sgc", n=8, B=2, W=3, lam=2)], D, jobs=18)
    with pytest.raises(ValueError, match="^jobs"):
        gradcode.tune(D, jobs=0)
    with pytest.raises(ValueError, match="^max_delay"):
        gradcode.tune(D, max_delay=-1)
    with pytest.raises(ValueError, match="^waitout"):
        gradcode.tune(D, waitout="sometimes")


def test_parameter_grid_ranges():
    from gradcode.sim import parameter_grid
    sr = parameter_grid("sr-sgc", 8, 20, 4)
    assert all((p["W"] - 1) % p["B"] == 0 and p["B"] <= 4 for p in sr)
    assert {(p["B"], p["W"]) for p in parameter_grid("sr-sgc-rep", 8, 20, 4)} == \
        {(p["B"], p["W"]) for p in sr}
    m = parameter_grid("m-sgc", 8, 20, 4)
    assert min(p["lam"] for p in m) == 0 and all(p["W"] - 2 + p["B"] <= 4 for p in m)


@pytest.mark.slow
def test_tune_n256_is_fast():
    """The real trace size (n = 256, 20 jobs, T <= 10: ~21 000 parameter sets) in seconds
    (the per-set loop took ~90 s)."""
    import time
    D = bursty_profile(30, 256, 5)
    t = time.perf_counter()
    rows = gradcode.tune(D, jobs=20, mu=1.0, alpha=1.0, max_delay=10)
    elapsed = time.perf_counter() - t
    assert len(rows) > 20_000 and elapsed < 40, elapsed
    for r in rows[:: len(rows) // 12]:
        code = gradcode.make_code(r["family"], n=256, **r["params"])
        e = gradcode.estimate_runtime(code, D, jobs=20, mu=1.0, alpha=1.0)
        assert (r["runtime_s"], r["waitouts"]) == (e.runtime_s, e.waitouts)


# ----------------------------------------------------------------------------- IS-GC w by time to loss
def isgc_setup():
    from gradcode.datasets import synthetic_mixture
    D = 1.0 + np.random.default_rng(0).exponential(0.3, (20, 12))
    return gradcode.make_code("isgc-cr", n=12, c=3), D, synthetic_mixture(600, 10,
                                                                           np.random.default_rng(1))


def test_isgc_w_picked_by_time_to_target_loss():
    from gradcode.sim import Fastest, Trainer, isgc_w_table, simulate
    from gradcode.stragglers._delays import Trace
    code, D, data = isgc_setup()
    rows = isgc_w_table(code, D, data=data, target_loss=0.3905, max_rounds=120, lr=0.5, seed=2)
    t = np.array([r["time_to_target_s"] for r in rows])
    assert np.isfinite(t).any() and not np.isfinite(t).all()       # a real trade-off
    picked = [r for r in rows if r["picked"]]
    assert len(picked) == 1 and picked[0]["w"] == rows[int(np.argmin(t))]["w"]
    # the figure is the simulated time of the first round whose loss is <= the target
    best = picked[0]
    res = simulate(code, Trace(D), Fastest(best["w"]), best["rounds_to_target"], seed=2,
                   trainer=Trainer(data, lr=0.5, seed=2))
    losses = [rec.loss for rec in res.records]
    assert losses[-1] <= 0.3905 < min(losses[:-1], default=np.inf)
    assert res.records[-1].elapsed_s == best["time_to_target_s"]
    # deterministic given the seed
    again = isgc_w_table(code, D, data=data, target_loss=0.3905, max_rounds=120, lr=0.5, seed=2)
    assert again == rows


def test_isgc_w_unreachable_target_is_inf_and_falls_back_to_proxy():
    from gradcode.sim import isgc_w_table
    code, D, data = isgc_setup()
    rows = isgc_w_table(code, D, data=data, target_loss=0.0, max_rounds=15, lr=0.5,
                        ws=[2, 6, 12])
    assert [r["w"] for r in rows] == [2, 6, 12]
    assert all(r["time_to_target_s"] == np.inf and r["rounds_to_target"] is None for r in rows)
    proxy = min(rows, key=lambda r: r["time_per_recovered_s"])
    assert [r["w"] for r in rows if r["picked"]] == [proxy["w"]]
    plain = isgc_w_table(code, D)                              # no model: the proxy alone
    assert "time_to_target_s" not in plain[0]
    assert [r["w"] for r in plain if r["picked"]] == \
        [min(plain, key=lambda r: r["time_per_recovered_s"])["w"]]


def test_isgc_w_table_validation():
    from gradcode.sim import isgc_w_table
    code, D, data = isgc_setup()
    for kwargs, name in [(dict(data=data), "target_loss"), (dict(target_loss=0.5), "data"),
                         (dict(data=(data.X, data.y), target_loss=0.5), "data"),
                         (dict(data=data, target_loss=float("nan")), "target_loss"),
                         (dict(data=data, target_loss=0.5, max_rounds=0), "max_rounds"),
                         (dict(data=data, target_loss=0.5, lr=0.0), "lr"),
                         (dict(data=data, target_loss=0.5, model="svm"), "model"),
                         (dict(ws=[0, 3]), "ws"), (dict(ws=[13]), "ws")]:
        with pytest.raises(ValueError, match=f"^{name}"):
            isgc_w_table(code, D, **kwargs)


def test_cli_tune_isgc_target_loss(tmp_path, capsys):
    import json
    D = 1.0 + np.random.default_rng(0).exponential(0.3, (20, 12))
    trace = tmp_path / "t.csv"
    np.savetxt(trace, D, delimiter=",", header=",".join(f"w{i}" for i in range(12)), comments="")
    out = tmp_path / "o"
    args = ["tune", str(trace), "--families", "gc-seq", "--isgc-c", "3", "--out", str(out)]
    assert main(args + ["--dataset", "synthetic", "--target-loss", "0.6", "--lr", "0.5",
                        "--max-rounds", "20"]) == 0
    text = capsys.readouterr().out
    assert "s to loss 0.6" in text and "picked w = " in text
    table = json.loads((out / "isgc_w.json").read_text())
    picked = [r for r in table if r["picked"]]
    assert len(picked) == 1 and picked[0]["time_to_target_s"] == min(
        r["time_to_target_s"] for r in table if r["time_to_target_s"] is not None)
    assert main(args + ["--dataset", "synthetic", "--target-loss", "0", "--max-rounds", "2",
                        "--overwrite"]) == 0
    assert "no w reaches" in capsys.readouterr().out
    assert json.loads((out / "isgc_w.json").read_text())[0]["time_to_target_s"] is None
    for bad, name in [(["--target-loss", "0.5"], "--dataset"), (["--dataset", "synthetic"], "--target-loss"),
                      (["--dataset", "synthetic", "--target-loss", "0.5", "--max-rounds", "0"],
                       "--max-rounds")]:
        assert main(args + bad) == 2
        assert name in capsys.readouterr().err
    assert main(["tune", str(trace), "--dataset", "synthetic", "--target-loss", "0.5"]) == 2
    assert "--isgc-c" in capsys.readouterr().err


def test_max_error_tunes_the_approximate_codes():
    """``max_error``: a single-round code absorbs a round decoded within it (bgc and expander
    are never exact; with 0 they wait out every round with a straggler), every row still equal
    to ``estimate_runtime``; uncoded absorbs a straggler when 1/k is within it."""
    D = bursty_profile(18, 12, 2)
    kw = dict(jobs=12, mu=1.0, alpha=0.7, base_load=0.1, max_delay=0)
    exact = gradcode.tune(D, families=("uncoded", "bgc", "expander"), **kw)
    loose = gradcode.tune(D, families=("uncoded", "bgc", "expander"), max_error=0.1, **kw)
    assert {r["family"] for r in loose} == {"uncoded", "bgc", "expander"}
    for r in loose:
        code = gradcode.make_code(r["family"], n=12, **r["params"])
        e = gradcode.estimate_runtime(code, D, jobs=12, mu=1.0, alpha=0.7, base_load=0.1,
                                      max_error=0.1)
        assert (r["runtime_s"], r["waitouts"]) == (e.runtime_s, e.waitouts), r
    waits = lambda rows, f, p: next(r["waitouts"] for r in rows
                                    if r["family"] == f and r["params"] == p)
    assert waits(loose, "expander", {"d": 3}) < waits(exact, "expander", {"d": 3})
    assert waits(loose, "uncoded", {}) < waits(exact, "uncoded", {})
    with pytest.raises(ValueError, match=r"max_error: expected a finite relative decoding error"):
        gradcode.tune(D, max_error=-0.1, **kw)


def test_stochastic_gc_is_tuned_at_the_profiles_straggler_share():
    """stochastic-gc's p is the profile's share of stragglers under the μ-rule (its decoder
    scales by 1 / (d (1 - p))); every row equals ``estimate_runtime`` of its code."""
    from gradcode.stragglers import identify_stragglers
    D = bursty_profile(18, 12, 2)
    rows = gradcode.tune(D, families=("stochastic-gc",), jobs=12, max_delay=0, max_error=0.1)
    share = round(float(identify_stragglers(D[:12], 1.0).mean()), 4)
    assert sorted(r["params"]["d"] for r in rows) == [1, 2, 3, 4, 6, 12]
    assert {r["params"]["p"] for r in rows} == {share} and 0 < share < 0.5
    for r in rows:
        code = gradcode.make_code("stochastic-gc", n=12, **r["params"])
        e = gradcode.estimate_runtime(code, D, jobs=12, max_error=0.1)
        assert (r["runtime_s"], r["waitouts"]) == (e.runtime_s, e.waitouts), r


def test_cli_tune_literature_families(tmp_path, capsys):
    """The literature's one-parameter families in the table (names longer than 10 letters ran
    into their parameters) and in the sensitivity figure's own panel, against load."""
    trace = tmp_path / "t.csv"
    np.savetxt(trace, bursty_profile(24, 12, 3), delimiter=",",
               header=",".join(f"w{i}" for i in range(12)), comments="")
    rc = main(["tune", str(trace), "--families", "uncoded,gc-seq,sr-sgc,cyclic-mds,frc-approx,"
               "bgc,expander,bcc", "--max-delay", "1", "--jobs", "12", "--max-error", "0.05",
               "--out", str(tmp_path / "out")])
    out = capsys.readouterr().out
    assert rc == 0 and (tmp_path / "out" / "sensitivity.png").is_file()
    table = out.splitlines()[1:9]
    assert [line.split()[0] for line in table[:1]] == ["family"]
    starts = {line.index("{") for line in table[1:] if "{" in line}
    assert len(starts) == 1 and any(line.startswith("cyclic-mds ") for line in table)
