"""Per-host aggregation (issue 33, point 4): hosts holding several logical workers send notices,
then one weighted sum each; the decoded gradient is the per-worker path's (within the float32
wire's guarantee) and the bytes into the master scale with hosts.  Fast: a local executor whose
"hosts" keep vectors with the hosts' own ``Held`` (no process); the torch backend's end-to-end
run is marked slow (tests/test_executor_contract.py's torch and Ray rows run it too)."""

from __future__ import annotations

import json
import types

import numpy as np
import pytest

pytest.importorskip("torch")

from gradcode.runtime import TrainConfig, backend, train  # noqa: E402
from gradcode.runtime._aggregate import PAYS_FROM, Held, holding, message_bytes  # noqa: E402
from gradcode.runtime._local import LocalExecutor  # noqa: E402


class HostedLocal(LocalExecutor):
    """The local executor with its workers on ``hosts`` pretend hosts (worker i on i mod hosts),
    each keeping its workers' vectors as a real host does (``Held``)."""
    hosts = 2

    def aggregate(self):
        self.owner = [i % self.hosts for i in range(self.n)]
        self.held = [Held() for _ in range(self.hosts)]
        self.asked = 0
        return True

    def submit(self, round, params, tasks, delays, skip=()):
        for h in getattr(self, "held", ()):
            h.start(round)
        super().submit(round, params, tasks, delays, skip)

    def poll(self, until, wanted=1):
        out = super().poll(until, wanted)
        if not hasattr(self, "held"):
            return out
        return [self.held[self.owner[r.worker]].notice(r) for r in out]

    def combine(self, round, weights, wide=False):
        by_host = {}
        for (i, k), w in weights.items():
            by_host.setdefault(self.owner[i], []).append((i, k, w))
        self.asked += len(by_host)
        return [([(i, k) for i, k, _ in terms], self.held[a].combine(round, terms, wide))
                for a, terms in by_host.items()]


def hosted(monkeypatch, aggregate: bool = True) -> list:
    """``train``'s local executors, made ``HostedLocal`` where ``aggregate``: the list of those
    made."""
    from gradcode.runtime import _session
    made = []

    def make(*a, **kw):
        from gradcode.runtime._executors import make_executor as real
        ex = real(*a, **kw)
        if aggregate:
            ex.__class__ = HostedLocal
        made.append(ex)
        return ex
    monkeypatch.setattr(_session, "make_executor", make)
    return made


def _run(monkeypatch, tmp_path, code, params, wait, aggregate: bool, name: str):
    made = hosted(monkeypatch, aggregate)
    cfg = TrainConfig(code=code, code_params=params, wait=wait, delay="exp:0.2", rounds=5,
                      seed=3, backend="local", audit=True, batch=16, dataset="digits",
                      model="mlp", eval_samples=64, out=str(tmp_path / name), plot=False)
    grads = []
    res = train(cfg, progress=False, on_round=lambda r, rec, info: grads.append(
        (str(info.rows), info.gradient)))          # the rows in arrival order: the decoding
    summary = json.loads((tmp_path / name / "summary.json").read_text())
    return res, grads, summary, made[0]


@pytest.mark.parametrize("code,params,wait", [("isgc-cr", {"n": 8, "c": 2}, "fastest:6"),
                                              ("gc-cr", {"n": 8, "s": 2}, "fastest:6")])
def test_hosts_sums_decode_the_per_worker_gradient_with_fewer_bytes(code, params, wait,
                                                                    monkeypatch, tmp_path):
    res0, g0, s0, _ = _run(monkeypatch, tmp_path, code, params, wait, False, "whole")
    res1, g1, s1, ex = _run(monkeypatch, tmp_path, code, params, wait, True, "held")
    assert ex.asked > 0                               # the hosts' sums were used
    # the same gradient where the same workers arrived in the same order (real-time delays)
    same = [(a, b) for (m0, a), (m1, b) in zip(g0, g1) if m0 == m1]
    assert same
    for a, b in same:
        assert np.linalg.norm(a - b) <= 1e-5 * np.linalg.norm(a)
    assert max(r.audit_error for r in res1.records) <= 1e-5
    # per round: 2 sums (float64 where weights have both signs) against 6 float32 vectors
    P = res0.models[0].state_dict()
    size = sum(int(v.numel()) for v in P.values())
    sums = 8 if code == "gc-cr" else 4
    assert s0["bytes_to_master"] >= 6 * 4 * size * len(res0.records)
    assert s1["bytes_to_master"] <= (2 * sums * size + 6 * 2000) * len(res1.records)
    assert s1["bytes_to_master"] < s0["bytes_to_master"]


def test_summary_counts_every_byte_to_the_master(tmp_path):
    """``bytes_to_master`` in summary.json: at least the vectors that arrived (float32)."""
    cfg = TrainConfig(code="uncoded", code_params={"n": 4}, wait="all", rounds=3, seed=0,
                      backend="virtual", batch=16, dataset="digits", model="mlp",
                      eval_samples=64, out=str(tmp_path / "run"))
    res = train(cfg, progress=False)
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    size = sum(int(v.numel()) for v in res.models[0].state_dict().values())
    assert 3 * 4 * 4 * size <= summary["bytes_to_master"] <= 3 * 4 * (4 * size + 2000)


def test_held_forgets_earlier_rounds_and_passes_other_outcomes():
    from gradcode.engine import Outcome, Result
    held = Held(np.float32)
    held.start(2)
    busy = Result.without(2, 1, Outcome.BUSY)
    assert held.notice(busy) is busy
    late = held.notice(Result(1, 0, [np.ones(2)], [0.0]))
    assert late.coded == [None]                       # an earlier round's: sent as a notice
    with pytest.raises(LookupError):
        held.combine(1, [(0, 0, 1.0)], wide=False)    # and not kept
    note = held.notice(Result(2, 0, [np.ones(2)], [0.0]))
    assert note.coded == [None]
    s = held.combine(2, [(0, 0, 0.5)], wide=False)
    assert s.dtype == np.float32 and s.tolist() == [0.5, 0.5]
    assert held.combine(2, [(0, 0, -1.0)], wide=True).dtype == np.float64
    with pytest.raises(LookupError):
        held.combine(2, [(5, 0, 1.0)], wide=False)


@pytest.mark.parametrize("code,params,wait,delay", [("uncoded", {"n": 4}, "all", "none"),
                                                    ("gc-cr", {"n": 4, "s": 1}, "decodable",
                                                     "exp:0.02")])
def test_an_aggregated_run_trains_as_plain_pytorch(code, params, wait, delay, monkeypatch):
    """Plain PyTorch is the reference: with aggregation on (2 hosts of 2 workers each, every
    vector summed at its host) the parameters after training are a full-batch PyTorch loop's
    with the same model, loss, optimizer and data."""
    import copy

    import torch
    from test_pytorch_reference import MLP, assert_same_parameters, features, labels, plain
    X, y, model = features(), labels(), MLP()
    opt = lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.5)  # noqa: E731
    want = plain(copy.deepcopy(model), torch.nn.CrossEntropyLoss(), X, y, opt, steps=4)
    made = hosted(monkeypatch)
    cfg = TrainConfig(code=code, code_params=params, wait=wait, delay=delay, rounds=4, seed=3,
                      backend="local", eval_every=0)
    res = train(cfg, model=model, loss_fn=torch.nn.CrossEntropyLoss(), optimizer=opt,
                data=torch.utils.data.TensorDataset(X, y), progress=False)
    assert made[0].asked >= 4                         # every step summed at the hosts
    assert all(r.recovered_fraction == 1.0 for r in res.records)
    assert_same_parameters(res.model, want)


def test_auto_aggregates_only_where_the_bytes_saved_pay():
    """``aggregate`` auto: hosts send sums only where the bytes they save per round, ``sum_a
    (k_a - 1) B``, reach the backend's ``PAYS_FROM``; on and off force it."""
    mlp = message_bytes(types.SimpleNamespace(layout=types.SimpleNamespace(P=4810),
                                              dtype=np.float32))
    assert mlp == 19240 and message_bytes(object()) == 0
    two, four = [i % 2 for i in range(8)], [i % 4 for i in range(64)]
    assert holding(two, "auto", mlp, PAYS_FROM["torch"])[0] == set()      # 115 KB: off
    assert holding(two, "on", mlp, PAYS_FROM["ray"])[0] == {0, 1}
    assert holding(four, "auto", mlp, PAYS_FROM["torch"])[0] == {0, 1, 2, 3}   # 1.15 MB
    assert holding(four, "auto", mlp, PAYS_FROM["ray"])[0] == set()
    assert holding(four, "off", 10 * mlp)[0] == set()
    assert holding([0, 1, 2], "on", mlp)[0] == set()                 # one worker per host
    wide = 4 * 153610                                                 # a 2048-unit MLP
    assert holding(two, "auto", wide, PAYS_FROM["ray"])[0] == {0, 1}


@pytest.mark.parametrize("name", ["torch", "ray"])
def test_each_backend_aggregates_as_its_option_says(name):
    """The executor's ``aggregate()`` follows its option, and says why under auto (a note the
    loop logs); built without starting its processes."""
    if name == "ray":
        pytest.importorskip("ray")
    ex = object.__new__(backend(name))
    ex.notes, ex.owner, ex.message_bytes = [], [i % 2 for i in range(8)], 19240
    for mode, want in [("auto", False), ("on", True), ("off", False)]:
        ex.mode = mode
        assert ex.aggregate() is want and bool(ex.holding) is want
    assert len(ex.notes) == 1 and "every worker sends its vector" in ex.notes[0]
    ex.mode, ex.message_bytes = "auto", 4 * 153610
    assert ex.aggregate() and "send notices" in ex.notes[-1]


@pytest.mark.parametrize("settings,message", [
    ({"backend": "ray", "aggregate": "always"}, "aggregate: expected auto, on or off, got "
                                                "'always'"),
    ({"backend": "local", "aggregate": "on"}, "aggregate: only with backend ray or torch, got "
                                              "backend 'local'")])
def test_a_bad_aggregate_is_one_line_naming_it(settings, message):
    with pytest.raises(ValueError) as exc:
        TrainConfig(**settings).validate()
    assert str(exc.value) == message


@pytest.mark.slow
def test_torch_hosts_aggregate_end_to_end(tmp_path):
    cfg = TrainConfig(code="isgc-cr", code_params={"n": 8, "c": 2}, wait="fastest:6",
                      delay="exp:0.02", rounds=6, seed=3, backend="torch", actors=2, audit=True,
                      batch=16, dataset="digits", model="mlp", eval_samples=64, aggregate="on",
                      out=str(tmp_path / "run"))
    res = train(cfg, progress=False)
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    size = sum(int(v.numel()) for v in res.models[0].state_dict().values())
    assert max(r.audit_error for r in res.records) <= 1e-5
    assert summary["bytes_to_master"] < 6 * 4 * size * len(res.records)
