"""The virtual-clock simulator driving sequential schemes (paper 4) through their planner."""

import json

import numpy as np
import pytest

import gradcode
from gradcode.cli import main
from gradcode.datasets import load_dataset
from gradcode.records import read_records, summarize, write_records
from gradcode.sequential import replay
from gradcode.sim import Trainer, parse_wait, simulate
from gradcode.stragglers._delays import Compute, Constant, Exponential, Trace

SCHEMES = [("gc-seq", dict(n=6, s=1)), ("sr-sgc", dict(n=8, B=2, W=3, lam=3)),
           ("m-sgc", dict(n=6, B=2, W=3, lam=2)), ("sr-sgc-rep", dict(n=8, B=1, W=2, lam=2)),
           ("m-sgc-rep", dict(n=6, B=1, W=3, lam=2))]


@pytest.mark.parametrize("name,params", SCHEMES)
def test_no_stragglers_every_job_exact(name, params):
    scheme = gradcode.make_code(name, **params)
    res = simulate(scheme, Constant(1.0), parse_wait("mu:0"), 12, compute=Compute(2.0))
    T = scheme.T
    assert len(res.records) == 12 and res.config["jobs"] == 12 - T
    assert sum(r.jobs_finished for r in res.records) == 12 - T
    assert not any(r.waitout for r in res.records)
    assert all(r.recovered_fraction == 1.0 and r.exact for r in res.records[T:])
    assert all(r.workers_arrived == scheme.n for r in res.records)
    assert all(r.time_s == pytest.approx(1.0 + 2.0 * scheme.load) for r in res.records)
    assert res.records[-1].elapsed_s == pytest.approx(12 * (1.0 + 2.0 * scheme.load))
    s = res.summary
    assert s["mean_recovered_fraction"] == 1.0 and s["exact_fraction"] == 1.0 and s["waitouts"] == 0


def test_decodable_waits_until_no_waitout_is_needed():
    scheme = gradcode.make_code("sr-sgc", n=8, B=2, W=3, lam=3)
    D = np.random.default_rng(1).uniform(1, 5, (40, 8))
    res = simulate(scheme, Trace(D), parse_wait("decodable"), 40)
    assert res.summary["waitouts"] == 0 and res.summary["exact_fraction"] == 1.0
    S = D > np.array([r.time_s for r in res.records])[:, None]
    assert replay(scheme, S, 38).waitouts.size == 0
    for r in range(40):                   # one arrival fewer and round r would be a wait-out
        if res.records[r].time_s > D[r].min():
            S2 = S.copy()
            S2[r] |= D[r] == res.records[r].time_s
            S2[r + 1:] = False
            assert r in replay(scheme, S2, 38).waitouts
    with pytest.raises(ValueError, match="^wait"):
        simulate(scheme, Trace(D), parse_wait("decodable"), 40, waitout="never")


def test_deterministic_given_seed():
    scheme = gradcode.make_code("m-sgc", n=8, B=2, W=3, lam=2)
    run = lambda seed: [r.as_row() for r in simulate(scheme, Exponential(1.0), parse_wait("mu:1"),  # noqa
                                                     60, seed=seed).records]
    assert run(4) == run(4) and run(4) != run(5)


def test_records_csv_roundtrip_with_nan(tmp_path):
    scheme = gradcode.make_code("m-sgc", n=6, B=2, W=3, lam=2)
    res = simulate(scheme, Exponential(1.0), parse_wait("mu:1"), 15, seed=2)
    write_records(tmp_path / "r.csv", res.records)
    back = read_records(tmp_path / "r.csv")
    np.testing.assert_equal([r.as_row() for r in back], [r.as_row() for r in res.records])
    assert summarize(back) == res.summary


@pytest.mark.parametrize("kwargs,word", [
    (dict(rounds=2), "^rounds"), (dict(rounds=3), "^rounds"), (dict(rounds=2.5), "^rounds"),
    (dict(rounds=10, waitout="sometimes"), "^waitout"),
])
def test_errors_name_the_parameter(kwargs, word):
    scheme = gradcode.make_code("m-sgc", n=6, B=2, W=3, lam=2)            # T = 3
    with pytest.raises(ValueError, match=word):
        simulate(scheme, Exponential(1.0), parse_wait("mu:1"), **kwargs)


def test_waitout_only_for_sequential_schemes():
    code = gradcode.make_code("gc-cr", n=6, s=1)
    with pytest.raises(ValueError, match="^waitout"):
        simulate(code, Exponential(1.0), parse_wait("all"), 5, waitout="model")


def test_pipelined_models_train():
    """App. I: M = T + 1 models round-robin; each steps once per decoded job."""
    data = load_dataset("synthetic", np.random.default_rng(0), n_samples=300, p=5)
    scheme = gradcode.make_code("sr-sgc", n=6, B=1, W=2, lam=2)        # T = 1: two models
    tr = Trainer(data, lr=0.3)
    res = simulate(scheme, Exponential(1.0), parse_wait("mu:1"), 41, seed=1, trainer=tr)
    losses = [r.loss for r in res.records]
    assert all(np.isfinite(losses)) and losses[-1] < 0.7 * losses[0]
    # with no stragglers, model j % 2 takes full-gradient steps: each model is plain GD
    tr2 = Trainer(data, lr=0.3)
    simulate(scheme, Constant(0.0), parse_wait("all"), 11, trainer=tr2)   # 10 jobs, 5 per model
    ref = Trainer(data, lr=0.3)
    ref.start(scheme, np.random.default_rng(0))
    w = ref.w.copy()
    for _ in range(5):
        w = w - 0.3 * ref.model.loss_grad(w, data.X, data.y)[1] / data.n_samples
    ref.w = w
    assert tr2.loss() == pytest.approx(ref.loss())


def test_cli_simulate_sequential_json(capsys, tmp_path):
    rc = main(["simulate", "--code", "sr-sgc", "--n", "16", "--B", "2", "--W", "3", "--lam", "4",
               "--delay", "exp:1", "--wait", "mu:1", "--rounds", "50", "--seed", "0", "--json",
               "--out", str(tmp_path)])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0
    for key in ("mean_round_time_s", "mean_recovered_fraction", "exact_fraction", "waitouts"):
        assert key in out
    assert out["jobs"] == 48 and out["T"] == 2 and out["waitout_rule"] == "deadline"
    assert out["code"]["lam"] == 4 and len(read_records(tmp_path / "rounds.csv")) == 50
    rc = main(["simulate", "--code", "m-sgc", "--n", "6", "--B", "2", "--W", "3", "--lam", "2",
               "--wait", "mu:1", "--rounds", "20", "--waitout", "model"])
    text = capsys.readouterr().out
    assert rc == 0 and "waitouts" in text and "exact_fraction" in text


@pytest.mark.parametrize("argv,word", [
    (["--rounds", "2"], "rounds"), (["--waitout", "soon", "--rounds", "9"], "waitout:"),
    (["--wait", "decodable", "--waitout", "never", "--rounds", "9"], "wait"),
])
def test_cli_simulate_sequential_bad_input(capsys, argv, word):
    rc = main(["simulate", "--code", "sr-sgc", "--n", "8", "--B", "2", "--W", "3", "--lam", "3",
               *argv])
    err = capsys.readouterr().err
    assert rc == 2 and word in err and len(err.strip().splitlines()) == 1
