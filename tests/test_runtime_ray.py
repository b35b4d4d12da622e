"""Real training on a local Ray instance (one instance for this module)."""

import subprocess

import numpy as np
import pytest

pytest.importorskip("torch")
ray = pytest.importorskip("ray")

from gradcode.runtime import TrainConfig, load_torch_data, train  # noqa: E402
from gradcode.runtime._ray import init_ray  # noqa: E402


@pytest.fixture(scope="module")
def local_ray():
    info = init_ray(None, num_cpus=2)
    yield info
    ray.shutdown()


@pytest.fixture(scope="module")
def data():
    return load_torch_data("synthetic", seed=0, n_samples=400)


def test_ray_listens_on_loopback_only(local_ray):
    out = subprocess.run(["ss", "-ltnp"], capture_output=True, text=True).stdout
    ray_lines = [l for l in out.splitlines() if any(p in l for p in ("raylet", "gcs_server", "ray::"))]
    assert ray_lines, out
    for line in ray_lines:
        local = line.split()[3]
        assert local.startswith(("127.0.0.1:", "[::ffff:127.0.0.1]:", "[::1]:")), line


def test_ray_end_to_end_matches_local(local_ray, data):
    kw = dict(code="gc-cr", code_params={"n": 6, "s": 1}, rounds=4, wait="all", lr=0.5)
    on_ray = train(TrainConfig(backend="ray", actors=2, **kw), data=data, progress=False)
    local = train(TrainConfig(backend="local", **kw), data=data, progress=False)
    assert all(r.exact and r.workers_arrived == 6 for r in on_ray.records)
    np.testing.assert_allclose([r.loss for r in on_ray.records], [r.loss for r in local.records],
                               rtol=1e-6)


class DropoutNet(__import__("torch").nn.Module):
    """Dropout and BatchNorm: forward randomness and buffers, from the user's own class."""

    def __init__(self, d):
        import torch
        super().__init__()
        torch.manual_seed(0)
        self.body = torch.nn.Sequential(torch.nn.Linear(d, 16), torch.nn.BatchNorm1d(16),
                                        torch.nn.ReLU(), torch.nn.Dropout(0.5),
                                        torch.nn.Linear(16, 1))

    def forward(self, x):
        return self.body(x).squeeze(-1)


@pytest.mark.slow
def test_ray_dropout_and_batchnorm_agree_with_local(local_ray, data):
    """Issue 30 on Ray: each partition's forward seeded by (seed, job, partition) in the actors'
    threads too, so the copies agree (the audit) and the run equals the local one; BatchNorm's
    buffers travel back from the actors."""
    import sys
    import torch
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    kw = dict(code="gc-cr", code_params={"n": 4, "s": 1}, rounds=3, wait="all", lr=0.5,
              audit=True)
    runs = {b: train(TrainConfig(backend=b, actors=2 if b == "ray" else None, **kw),
                     model=DropoutNet(data.X.shape[1]), loss_fn=torch.nn.BCEWithLogitsLoss(),
                     data=data, progress=False) for b in ("ray", "local")}
    assert runs["ray"].summary["max_audit_error"] <= 1e-5
    np.testing.assert_allclose([r.loss for r in runs["ray"].records],
                               [r.loss for r in runs["local"].records], rtol=1e-6)
    torch.testing.assert_close(runs["ray"].model.body[1].running_mean,
                               runs["local"].model.body[1].running_mean)


@pytest.mark.slow
def test_ray_fastest_w_with_injected_stragglers(local_ray, data):
    res = train(TrainConfig(code="isgc-cr", code_params={"n": 8, "c": 2}, rounds=5,
                            wait="fastest:4", delay="exp:0.5@3", backend="ray", actors=2),
                data=data, progress=False)
    assert [r.workers_arrived for r in res.records] == [4] * 5
    assert max(r.time_s for r in res.records) < 5.0


@pytest.mark.slow
def test_ray_killed_worker_mid_training_still_finishes(local_ray, data):
    """A host killed mid-training: its workers are stragglers, training goes on exactly, and the
    host is found dead and restarted even when the round ends (decodable from the other host's
    two workers) before its errors are fetched."""
    seen = []

    def kill(r, rec, info):
        seen.append(info.executor)
        if r == 1:
            info.executor.kill_actor(0)
    res = train(TrainConfig(code="gc-cr", code_params={"n": 4, "s": 2}, rounds=6, wait="decodable",
                            backend="ray", actors=2, round_timeout_s=20),
                data=data, progress=False, on_round=kill)
    assert len(res.records) == 6
    # exact but where a worker of the surviving host was still computing a result the previous
    # round's end cancelled (busy: one straggler more than the two dead workers, s = 2)
    assert all(r.exact or any(e.startswith(f"round {r.round}: worker") and "busy" in e
                              for e in res.events) for r in res.records), res.events
    assert seen[-1].restarts == 1
    assert any("Ray host 0 (workers [0, 2]) on node" in e and "died; restarted" in e
               for e in res.events), res.events


@pytest.mark.slow
def test_demo_on_ray(local_ray, capsys):
    from gradcode.cli import main
    assert main(["demo", "--backend", "ray", "--rounds", "3"]) == 0
    out = capsys.readouterr().out
    assert "IS-GC" in out and "time per round of synchronous SGD" in out


class SlowFirstBatch(__import__("torch").nn.Module):
    """Logistic regression whose first mini-batch of 5 rows (per replica) takes 1.5 s."""

    def __init__(self, d):
        super().__init__()
        self.lin = __import__("torch").nn.Linear(d, 1)
        self.slept = False

    def forward(self, x):
        if len(x) == 5 and not self.slept:
            import time
            self.slept = True
            time.sleep(1.5)
        return self.lin(x).squeeze(-1)


@pytest.mark.parametrize("backend", ["local", pytest.param("ray", marks=pytest.mark.slow)])
def test_a_worker_still_computing_is_busy_on_either_backend(local_ray, data, backend):
    """Every worker's first gradient takes 1.5 s (each computing at once, on a replica of its
    own); the round ends at its 0.4 s deadline, so in
    the next rounds every worker is still computing: busy, a straggler that does not hold the
    round up (on Ray as locally: the actor must not queue the new round behind the old)."""
    import sys
    import torch
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    from gradcode.records import NothingRecovered
    ended = []
    with pytest.raises(NothingRecovered, match="worker 0: busy") as exc:   # nothing arrived
        train(TrainConfig(code="uncoded", code_params={"n": 4}, rounds=3, batch=5,
                          eval_samples=64, wait="deadline:0.4", backend=backend,
                          actors=4 if backend == "ray" else None, concurrency=4),
              model=SlowFirstBatch(data.X.shape[1]), loss_fn=torch.nn.BCEWithLogitsLoss(),
              data=data, progress=False, on_round=lambda r, rec, info: ended.append(info.ended))
    res = exc.value.result
    assert [r.workers_arrived for r in res.records] == [0, 0, 0]
    assert any(e.startswith("round 1: worker") and "busy" in e for e in res.events), res.events
    # rounds 1 and 2 end as soon as every worker said it is busy, not at the deadline
    assert ended[1:] == ["all answered", "all answered"], ended


class _Quiet(__import__("http.server").server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.mark.timeout(60)          # ray.init alone would retry for minutes
@pytest.mark.parametrize("server", ["http", "silent"])
def test_address_that_is_not_ray_fails_fast_in_one_line(server, capsys):
    """``--address`` at a live port that is not a Ray head (a web server, or a listener that
    never answers): exit 2, one line naming the address, without ray.init's minutes of retries
    (the check sends the HTTP/2 preface a Ray head answers and waits 3 s at most)."""
    import http.server
    import socket
    import threading

    from gradcode.cli import main

    if server == "http":
        srv = http.server.HTTPServer(("127.0.0.1", 0), _Quiet)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        port, stop = srv.server_address[1], srv.shutdown
    else:
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        sock.listen(4)
        port, stop = sock.getsockname()[1], sock.close
    try:
        code = main(["train", "--code", "uncoded", "--n", "2", "--rounds", "2", "--backend", "ray",
                     "--address", f"127.0.0.1:{port}"])
    finally:
        stop()
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert f"127.0.0.1:{port}" in err[0] and "Traceback" not in err[0]


@pytest.mark.slow
@pytest.mark.parametrize("code", [["isgc-cr", "--n", "8", "--c", "2"],
                                  ["gc-cr", "--n", "8", "--s", "2"]])
def test_issue_18_acceptance_run(local_ray, code, tmp_path, capsys):
    """The run that lost workers on Ray (issue 18), audited: 200 rounds, every worker's arrivals
    at least half the mean, no worker busy more than 3 rounds in a row, the audit at float32
    rounding."""
    import json

    from gradcode.cli import main
    out = tmp_path / "run"
    assert main(["train", "--code", *code, "--dataset", "digits", "--model", "mlp", "--wait",
                 "fastest:6", "--delay", "exp:0.05", "--rounds", "200", "--seed", "3",
                 "--backend", "ray", "--actors", "2", "--audit", "--out", str(out)]) == 0
    assert "warning" not in capsys.readouterr().out
    s = json.loads((out / "summary.json").read_text())
    counts = np.array(s["arrival_counts"])
    assert s["rounds"] == 200 and counts.min() >= 0.5 * counts.mean(), counts
    assert max(s["longest_busy_by_worker"]) <= 3
    assert s["max_audit_error"] <= (1e-5 if code[0] == "isgc-cr" else 1e-4)


def test_actors_compute_a_fetched_residual_again(local_ray, monkeypatch):
    """The float32 wire on Ray: the residuals the master asks for are computed again by the
    actor (on its computing threads; one actor hosting the 6 workers: each run starts its
    actors, ~4 s of CPU each); every step within the (lowered) target of the float64 wire's, as
    on the local and virtual backends (``test_wire``)."""
    from test_wire import steps_within_the_target
    steps_within_the_target("ray", monkeypatch, actors=1)


def test_actors_read_an_augmenting_dataset_every_round_alike(local_ray):
    """A Dataset on Ray: each actor reads its own partitions every round, seeded as on threads,
    so the copies agree (``--audit``) and the run equals the local one."""
    import sys
    import test_pytorch_reference
    import test_runtime_live
    from test_runtime_live import Augmenting, run
    for module in (test_runtime_live, test_pytorch_reference):
        ray.cloudpickle.register_pickle_by_value(sys.modules[module.__name__])
    on_ray, res = run(Augmenting(), backend="ray", actors=2, audit=True)
    assert max(r.audit_error for r in res.records) <= 1e-5
    local, _ = run(Augmenting(), backend="local")
    np.testing.assert_allclose(on_ray, local, rtol=1e-5, atol=1e-7)
