"""The torch.distributed backend beyond the executor contract suite (whose torch rows are slow):
real training equal to the local backend's, a straggler's late result drained unread, every
host process gone after ``close``, and ``gradcode train`` under torchrun (slow)."""

import json
import os
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest

pytest.importorskip("torch")
dist = pytest.importorskip("torch.distributed")
if not dist.is_available() or not dist.is_gloo_available():
    pytest.skip("torch.distributed without gloo", allow_module_level=True)

from gradcode.runtime import TrainConfig, load_torch_data, train  # noqa: E402
from gradcode.runtime._torch import TorchExecutor  # noqa: E402

from _scripted import Script  # noqa: E402


@pytest.fixture(scope="module")
def data():
    return load_torch_data("synthetic", seed=0, n_samples=400)


def test_torch_end_to_end_matches_local(data):
    kw = dict(code="gc-cr", code_params={"n": 4, "s": 1}, rounds=3, wait="all", lr=0.5,
              audit=True)
    on_torch = train(TrainConfig(backend="torch", actors=2, **kw), data=data, progress=False)
    local = train(TrainConfig(backend="local", **kw), data=data, progress=False)
    assert all(r.exact and r.workers_arrived == 4 for r in on_torch.records)
    assert on_torch.summary["max_audit_error"] <= 1e-5
    np.testing.assert_allclose([r.loss for r in on_torch.records],
                               [r.loss for r in local.records], rtol=1e-6)
    assert on_torch.backend_info.startswith("torch: 2 gloo processes on 127.0.0.1")


def _round(ex, r, n, until):
    ex.submit(r, np.zeros(2), [[(r, [i], [1.0])] for i in range(n)], [0.0] * n)
    got = []
    while ex.elapsed() < until:          # the whole round: a late result may come meanwhile
        got += ex.poll(until, n)
    ex.end_round(r)
    return got


def test_late_results_are_drained_never_returned():
    """Worker 1 computes round 0 for 0.6 s: cut at the 0.2 s deadline, busy in round 1, its
    late result of round 0 arrives while round 1 is under way and is drained, never returned."""
    ex = TorchExecutor(Script(3, slow={(1, 0): 0.6}), actors=3)
    try:
        ex.ping()
        rounds = [_round(ex, r, 3, until=0.2 if r == 0 else 0.45) for r in range(4)]
    finally:
        ex.close()
    assert all(res.round == r for r, got in enumerate(rounds) for res in got)
    assert sorted(res.worker for res in rounds[0]) == [0, 2]
    assert {res.worker: res.status.value for res in rounds[1]}[1] == "busy"
    assert ex.drained >= 1
    assert sorted(res.worker for res in rounds[3]) == [0, 1, 2]
    assert ex.links == []


def test_host_processes_end_with_close():
    ex = TorchExecutor(Script(2), actors=2)
    procs = [link.process for link in ex.links]
    ex.ping()
    ex.close()
    assert [p.exitcode for p in procs] == [0, 0]


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("torchrun") is None and not os.path.exists(
    os.path.join(os.path.dirname(sys.executable), "torchrun")), reason="no torchrun")
def test_train_under_torchrun(tmp_path):
    """``torchrun --standalone --nproc-per-node 3 -m gradcode train --backend torch --config``:
    rank 0 trains, ranks 1 and 2 host the four workers; the code's parameters in the file."""
    cfg = tmp_path / "run.toml"
    cfg.write_text('code = "gc-cr"\ncode_params = {n = 4, s = 1}\nwait = "all"\nrounds = 3\n'
                   'backend = "torch"\n'
                   f'out = "{tmp_path / "out"}"\n')
    torchrun = os.path.join(os.path.dirname(sys.executable), "torchrun")
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    t0 = time.perf_counter()
    done = subprocess.run([torchrun, "--standalone", "--nproc-per-node", "3", "-m", "gradcode",
                           "train", "--config", str(cfg)], capture_output=True, text=True,
                          env=env, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-4000:])
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["backend"].startswith("torch: 2 torchrun processes hosting 4 workers")
    assert time.perf_counter() - t0 < 300
