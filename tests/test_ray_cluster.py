"""A real two-node Ray cluster on this machine (issue 13), in ``make test-all``: two ``ray start``
calls on their own ports and temp dirs with Ray's token authentication, training through
``--address``, and the second node's raylet killed mid-training.

The cluster is stopped in the fixture whatever happens, by killing exactly the processes whose
command line names its temp dirs (``ray stop`` would stop every Ray instance on the machine).
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

pytest.importorskip("ray")
pytestmark = pytest.mark.slow

RAY = str(Path(sys.executable).with_name("ray"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _pids(marker: str, name: str = "") -> list[int]:
    """Processes whose command line holds ``marker`` (and ``name``)."""
    out = []
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                cmd = (p / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if marker in cmd and name in cmd:
                out.append(int(p.name))
    return out


def _with_children(pids) -> set[int]:
    """``pids`` and every process descending from them (Ray's agents and workers rename
    themselves, so their command lines do not name the temp dir)."""
    parent = {}
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                parent[int(p.name)] = int((p / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    out, grew = set(pids), True
    while grew:
        new = {c for c, pp in parent.items() if pp in out} - out
        out |= new
        grew = bool(new)
    return out


def _kill(pids) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


@pytest.fixture
def cluster():
    """``(address, env, second node's temp dir)`` of a head and a worker node, one CPU each."""
    root = tempfile.mkdtemp(prefix="gcr", dir="/tmp")      # short: Ray's socket paths are long
    head, node = f"{root}/h", f"{root}/n"
    env = {**os.environ, "RAY_AUTH_MODE": "token", "RAY_USAGE_STATS_ENABLED": "0",
           # a dead node is declared dead after ~2 s instead of ~15 s
           "RAY_health_check_period_ms": "500", "RAY_health_check_failure_threshold": "4"}
    subprocess.run([RAY, "get-auth-token", "--generate"], env=env, check=True,
                   capture_output=True)
    port = _free_port()
    address = f"127.0.0.1:{port}"
    try:
        subprocess.run([RAY, "start", "--head", f"--port={port}", "--num-cpus=1",
                        "--include-dashboard=false", f"--temp-dir={head}"], env=env, check=True,
                       capture_output=True, timeout=120)
        subprocess.run([RAY, "start", f"--address={address}", "--num-cpus=1",
                        f"--temp-dir={node}"], env=env, check=True, capture_output=True,
                       timeout=120)
        yield address, env, node
    finally:
        _kill(_with_children(_pids(root)))
        time.sleep(1)
        _kill(_with_children(_pids(root)))
        shutil.rmtree(root, ignore_errors=True)


def _rows(path: Path) -> int:
    return max(0, len(path.read_text().splitlines()) - 1) if path.is_file() else 0


def test_two_node_cluster_survives_losing_a_node(cluster, tmp_path):
    """``gradcode train --backend ray --address`` on the cluster; after 5 rounds the second
    node's raylet is killed: its workers are stragglers, their host is restarted on the head
    node, training completes with a falling loss, and the run records both nodes."""
    address, env, node = cluster
    out = tmp_path / "run"
    cmd = [str(Path(sys.executable).with_name("gradcode")), "train", "--code", "isgc-cr",
           "--n", "4", "--c", "2", "--rounds", "40", "--wait", "fastest:2",
           "--delay", "const:0.15", "--backend", "ray", "--address", address, "--actors", "2",
           "--round-timeout", "10", "--lr", "0.5", "--out", str(out), "--quiet"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    try:
        deadline = time.monotonic() + 180
        while _rows(out / "rounds.csv") < 5 and proc.poll() is None \
                and time.monotonic() < deadline:
            time.sleep(0.1)
        killed = _pids(node, "raylet")
        _kill(_with_children(killed))
        output, _ = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert killed, "the second node's raylet was not found"
    assert proc.returncode == 0, output
    from gradcode.records import read_records
    recs = read_records(out / "rounds.csv")
    assert len(recs) == 40 and recs[-1].loss < recs[0].loss
    summary = json.loads((out / "summary.json").read_text())
    assert summary["nodes"] == 2, (summary, (out / "events.log").read_text())
    assert sum(len(w) for w in summary["workers_by_node"].values()) == 4
    events = (out / "events.log").read_text()
    assert "died; restarted" in events and "now runs on node" in events, events
    assert max(r.time_s for r in recs) < 2 * 10               # no round hangs past the timeout
