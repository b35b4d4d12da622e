"""Real training of sequential schemes: M = T + 1 models pipelined (paper 4, App. I)."""

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from gradcode.cli import main  # noqa: E402
from gradcode import make_code  # noqa: E402
from gradcode.records import COLUMNS, read_records  # noqa: E402
from gradcode.runtime import TrainConfig, build_model, load_torch_data, loss_for, train  # noqa: E402
from gradcode.sequential import replay  # noqa: E402
from gradcode.sim import parse_wait, simulate  # noqa: E402
from gradcode.stragglers._delays import Trace  # noqa: E402

SCHEMES = [("gc-seq", {"n": 4, "s": 1}), ("sr-sgc", {"n": 6, "B": 2, "W": 3, "lam": 2}),
           ("m-sgc", {"n": 4, "B": 2, "W": 3, "lam": 2}), ("sr-sgc-rep", {"n": 6, "B": 2, "W": 3, "lam": 2}),
           ("m-sgc-rep", {"n": 4, "B": 1, "W": 2, "lam": 1})]


@pytest.fixture(scope="module")
def data():
    return load_torch_data("synthetic", seed=0, n_samples=600)


def flat(model):
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()]).double().numpy()


def full_gradient(data, params):
    from torch.nn.utils import vector_to_parameters
    m = build_model("logistic", data)
    vector_to_parameters(torch.as_tensor(params, dtype=torch.float32), m.parameters())
    loss_for(data)(m(data.X), data.y).backward()          # PyTorch's mean over the whole set
    return torch.cat([p.grad.reshape(-1) for p in m.parameters()]).double().numpy()


def check_gradients(data, steps):
    for job, m, params, g in steps:
        ref = full_gradient(data, params)
        assert np.linalg.norm(g - ref) <= 1e-5 * np.linalg.norm(ref) + 1e-9, (job, m)


@pytest.mark.parametrize("code,params", SCHEMES)
def test_no_stragglers_each_model_follows_full_gradient_descent(data, code, params):
    T = make_code(code, **params).T
    M, rounds, lr = T + 1, T + 7, 0.8
    model = build_model("logistic", data, seed=3)
    w0 = flat(model)
    steps = []
    res = train(TrainConfig(code=code, code_params=params, rounds=rounds, lr=lr, wait="all"),
                model=model,
                data=data, progress=False, on_round=lambda r, rec, info: steps.extend(info.steps))
    jobs = rounds - T
    assert sorted(s[0] for s in steps) == list(range(jobs))        # every job decoded once
    assert all(s[1] == s[0] % M for s in steps)                     # job j steps model j mod M
    check_gradients(data, steps)                                    # decoded = full-batch gradient
    assert len(res.models) == M and res.model is res.models[0]
    assert res.model is model                    # the user's model is trained in place (issue 30)
    for m in range(M):                                              # plain GD, own job sequence
        w = w0.copy()
        for _ in range(len(range(m, jobs, M))):
            w = w - lr * full_gradient(data, w)
        np.testing.assert_allclose(flat(res.models[m]), w, rtol=1e-4, atol=1e-6)
    recs = res.records
    assert [r.round for r in recs] == list(range(rounds))
    assert all(math.isnan(r.recovered_fraction) for r in recs[:T])
    assert all(r.exact and r.recovered_fraction == 1.0 and not r.waitout for r in recs[T:])
    assert sum(r.jobs_finished for r in recs) == jobs
    assert all(r.workers_arrived == params["n"] for r in recs)


def write_trace(path, S, seconds=0.8):
    delays = np.where(S, seconds, 0.0)
    np.savetxt(path, delays, delimiter=",", header=",".join(f"w{i}" for i in range(S.shape[1])),
               comments="")
    return delays


def test_mini_batches_follow_the_job_reattempts_included(data, tmp_path):
    """Every copy of a partition in a job, SR-SGC's reattempts two rounds later included, uses
    the job's mini-batch: the decoded gradient is the job's mini-batch gradient."""
    from gradcode.engine import streams
    from gradcode.runtime import split_partitions
    from gradcode.runtime._worker import batch_indices
    params, batch, S = {"n": 6, "B": 2, "W": 3, "lam": 2}, 20, np.zeros((7, 6), bool)
    S[1, [0, 1, 2]] = True                       # job 1 reattempted in round 3
    write_trace(tmp_path / "t.csv", S)
    steps = []
    train(TrainConfig(code="sr-sgc", code_params=params, rounds=7, batch=batch, seed=2,
                      wait="deadline:0.3", delay=f"trace:{tmp_path / 't.csv'}"), data=data,
          progress=False, on_round=lambda r, rec, info: steps.extend(info.steps))
    parts = split_partitions(data, np.full(6, 1 / 6), streams(2)["data"])
    assert [s[0] for s in steps] == [0, 2, 1, 4, 3]      # jobs 1, 3 decoded in rounds 3, 5
    for job, m, w, g in steps:
        net = build_model("logistic", data)
        torch.nn.utils.vector_to_parameters(torch.as_tensor(w), net.parameters())
        for j, (X, y) in parts.items():
            idx = torch.from_numpy(batch_indices(len(y), batch, 2, job, j))
            torch.nn.BCEWithLogitsLoss(reduction="sum")(net(X[idx]), y[idx]).backward()
        ref = torch.cat([p.grad.reshape(-1) for p in net.parameters()]).double().numpy() / (6 * batch)
        np.testing.assert_allclose(g, ref, rtol=1e-4, atol=1e-7)


@pytest.mark.parametrize("code,params,stragglers", [
    ("sr-sgc", {"n": 6, "B": 2, "W": 3, "lam": 2}, {1: [0, 1, 2], 3: [0], 5: [4]}),
    ("m-sgc", {"n": 4, "B": 1, "W": 2, "lam": 1}, {1: [0], 2: [1], 4: [0, 1]})])
@pytest.mark.parametrize("rule", ["deadline", "model"])
def test_waitouts_where_replay_says(data, tmp_path, code, params, stragglers, rule):
    scheme = make_code(code, **params)
    n, rounds = scheme.n, 8
    S = np.zeros((rounds, n), bool)
    for r, ws in stragglers.items():
        S[r, ws] = True
    trace = tmp_path / "trace.csv"
    delays = write_trace(trace, S)
    seen, steps = [], []

    def look(r, rec, info):
        seen.append(info.returned.copy())
        steps.extend(info.steps)

    res = train(TrainConfig(code=code, code_params=params, rounds=rounds, wait="deadline:0.3",
                            delay=f"trace:{trace}", out=str(tmp_path / "run"), waitout=rule,
                            plot=False),
                data=data, progress=False, on_round=look)
    expected = replay(scheme, S, rounds - scheme.T, waitout=rule)
    waits = [r.round for r in res.records if r.waitout]
    assert len(expected.waitouts) and waits == expected.waitouts.tolist()
    observed = ~np.array(seen)                                        # stragglers actually seen
    observed[waits] = S[waits]                                        # (waited out: all returned)
    np.testing.assert_array_equal(observed, S)
    check_gradients(data, steps)
    assert sorted(s[0] for s in steps) == list(range(rounds - scheme.T))
    sim = simulate(scheme, Trace(delays), parse_wait("deadline:0.3"), rounds, waitout=rule).records
    for a, b in zip(res.records, sim):                                # simulator and runtime agree
        assert (a.waitout, a.jobs_finished, a.workers_arrived, a.exact) == \
            (b.waitout, b.jobs_finished, b.workers_arrived, b.exact)
    assert [r.waitout for r in read_records(tmp_path / "run" / "rounds.csv")] == \
        [r.waitout for r in res.records]


def test_errors_name_the_setting(data, tmp_path):
    kw = dict(code="sr-sgc", code_params={"n": 6, "B": 2, "W": 3, "lam": 2})
    with pytest.raises(ValueError, match="rounds"):
        train(TrainConfig(rounds=2, **kw), data=data, progress=False)
    with pytest.raises(ValueError, match="shuffle: not supported"):
        train(TrainConfig(rounds=4, shuffle=True, **kw), data=data, progress=False)
    with pytest.raises(ValueError, match="resume: no checkpoint"):
        train(TrainConfig(rounds=4, resume=True, out=str(tmp_path / "none"), **kw), data=data,
              progress=False)
    assert not (tmp_path / "none").exists()                  # nothing half-written
    with pytest.raises(ValueError, match="waitout: expected one of"):
        train(TrainConfig(rounds=4, waitout="sometimes", **kw), data=data, progress=False)
    with pytest.raises(ValueError, match="waitout: only sequential schemes"):
        train(TrainConfig(code="isgc-cr", code_params={"n": 4, "c": 2}, waitout="model"),
              data=data, progress=False)
    with pytest.raises(ValueError, match="measure_speeds: only for the codes heter"):
        train(TrainConfig(rounds=4, measure_speeds=2, **kw), data=data, progress=False)
    with pytest.raises(ValueError, match="lam"):
        train(TrainConfig(code="sr-sgc", code_params={"n": 6, "B": 2, "W": 3, "lam": 9}),
              data=data, progress=False)


@pytest.mark.parametrize("code,params", [("sr-sgc", {"n": 6, "B": 2, "W": 3, "lam": 2}),
                                         ("m-sgc", {"n": 4, "B": 1, "W": 2, "lam": 1})])
def test_resume_after_a_crash_continues_the_same_run(data, tmp_path, code, params):
    """Stragglers on a trace (wait-outs and lost-then-recovered jobs): a run killed after round
    4 and resumed from its last checkpoint (round 4) equals the uninterrupted run.  On the
    virtual clock: on threads, a loaded machine made a round-0 worker miss the deadline of one
    run and not the other's (the runs differed in round 0, not in what this test is about)."""
    S = np.zeros((9, make_code(code, **params).n), bool)
    S[[1, 2, 3, 5], [0, 1, 0, 1]] = True
    trace = tmp_path / "trace.csv"
    write_trace(trace, S, seconds=0.7)
    kw = dict(code=code, code_params=params, rounds=9, wait="deadline:0.3", lr=0.5,
              momentum=0.5, delay=f"trace:{trace}", checkpoint_every=2, backend="virtual")
    straight = train(TrainConfig(**kw), data=data, progress=False)
    assert min(r.workers_arrived for r in straight.records) < S.shape[1]   # stragglers cut
    out = tmp_path / "run"

    def crash(r, rec, info):
        if r == 4:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train(TrainConfig(out=str(out), **kw), data=data, progress=False, on_round=crash)
    assert len(read_records(out / "rounds.csv")) == 5                  # rounds 0-4 written
    res = train(TrainConfig(out=str(out), resume=True, **kw), data=data, progress=False)
    recs = read_records(out / "rounds.csv")
    assert [r.round for r in recs] == list(range(9))
    for a, b in zip(recs, straight.records):
        assert (a.waitout, a.jobs_finished, a.workers_arrived) == \
            (b.waitout, b.jobs_finished, b.workers_arrived)
    np.testing.assert_allclose([r.loss for r in recs], [r.loss for r in straight.records],
                               rtol=1e-6)
    for m, ref in zip(res.models, straight.models):
        np.testing.assert_allclose(flat(m), flat(ref), rtol=1e-6)


def test_cli_train_sequential_writes_rounds_csv(tmp_path):
    """Every job finishes: every worker is waited for (``--wait all``; under sr-sgc's own mu:1
    a thread descheduled on a busy machine was a straggler now and then, and a job finished
    late: 5 of 6 in one full run)."""
    out = tmp_path / "cli"
    rc = main(["train", "--code", "sr-sgc", "--n", "6", "--B", "2", "--W", "3", "--lam", "2",
               "--dataset", "synthetic", "--rounds", "8", "--out", str(out), "--quiet",
               "--wait", "all"])
    assert rc == 0
    lines = (out / "rounds.csv").read_text().splitlines()
    assert lines[0].split(",") == COLUMNS and len(lines) == 9
    recs = read_records(out / "rounds.csv")
    assert sum(r.jobs_finished for r in recs) == 6
    assert (out / "plot.png").is_file() and (out / "summary.json").is_file()
    assert (out / "checkpoint.pt").is_file()


@pytest.fixture(scope="module")
def local_ray():
    ray = pytest.importorskip("ray")
    from gradcode.runtime._ray import init_ray
    info = init_ray(None, num_cpus=2)
    yield info
    ray.shutdown()


@pytest.mark.slow
def test_ray_pipelined_matches_local(local_ray, data):
    # every worker waited for (what arrives does not depend on the machine's load), computing
    # at once on both (2 actors of 2, 4 threads)
    kw = dict(code="m-sgc", code_params={"n": 4, "B": 1, "W": 2, "lam": 1}, rounds=5, lr=0.5,
              wait="all")
    on_ray = train(TrainConfig(backend="ray", actors=2, concurrency=2, **kw), data=data,
                   progress=False)
    local = train(TrainConfig(backend="local", concurrency=4, **kw), data=data, progress=False)
    assert [r.jobs_finished for r in on_ray.records] == [r.jobs_finished for r in local.records]
    np.testing.assert_allclose([r.loss for r in on_ray.records], [r.loss for r in local.records],
                               rtol=1e-6)


def _rows(res):
    return [{k: v for k, v in r.as_row().items() if k != "eval_s"} for r in res.records]


@pytest.mark.parametrize("rule", ["deadline", "model"])
@pytest.mark.parametrize("code,params", SCHEMES + [("isgc-cr", {"n": 4, "c": 2})],
                         ids=[s[0] for s in SCHEMES] + ["isgc-cr"])
def test_resume_to_more_rounds_equals_one_longer_run(data, tmp_path, code, params, rule):
    """Every scheme resumed with more rounds (issue 19: gc-seq died with IndexError, sr-sgc and
    m-sgc refused) gives the records, wait-outs and models of one uninterrupted run of that
    length: a sequential scheme continues from its checkpoint of round rounds - T, before the
    rounds that finished its last jobs (a longer run starts new ones there)."""
    if rule == "model" and code == "isgc-cr":
        pytest.skip("single-round codes have no wait-out rule")
    kw = dict(code=code, code_params=params, delay="exp:0.3", wait="mu:1", seed=2,
              backend="virtual", checkpoint_every=4, eval_every=3, plot=False,
              waitout=None if code == "isgc-cr" else rule)
    whole = train(TrainConfig(rounds=17, out=str(tmp_path / "whole"), **kw), data=data,
                  progress=False)
    out = str(tmp_path / "run")
    train(TrainConfig(rounds=9, out=out, **kw), data=data, progress=False)
    longer = train(TrainConfig(rounds=13, out=out, resume=True, **kw), data=data, progress=False)
    longer = train(TrainConfig(rounds=17, out=out, resume=True, **kw), data=data, progress=False)
    np.testing.assert_equal(_rows(longer), _rows(whole))
    np.testing.assert_equal([r.as_row()["round"] for r in read_records(tmp_path / "run" /
                                                                      "rounds.csv")],
                            list(range(17)))
    for a, b in zip(longer.models, whole.models):
        np.testing.assert_allclose(flat(a), flat(b), rtol=1e-6)
    assert any(r.waitout for r in whole.records) or code == "isgc-cr" or rule == "model"


def test_a_sequential_run_is_not_cut_on_resume(data, tmp_path):
    kw = dict(code="sr-sgc", code_params={"n": 6, "B": 2, "W": 3, "lam": 2}, backend="virtual",
              out=str(tmp_path / "run"))
    train(TrainConfig(rounds=9, **kw), data=data, progress=False)
    with pytest.raises(ValueError, match="^rounds: a sequential scheme's run can be extended"):
        train(TrainConfig(rounds=7, resume=True, **kw), data=data, progress=False)
