"""Float32 on the wire for every code (issue 22): workers encode in float64 and send float32,
the master decodes in float64; the decoded gradient stays within 1e-5 (relative) of the same
decoding of float64 messages."""

import numpy as np
import pytest
import torch

from _codes import SMALL_CODES, available
from gradcode import make_code
from gradcode.analysis import float32_error, wire_errors
from gradcode.engine import combine
from gradcode.runtime._worker import GradientWorker

TARGET = 1e-5


def logistic_gradients(k: int, rng) -> np.ndarray:
    """``(k, 64)``: the partial gradients of a logistic regression on the digits, ``k`` parts."""
    from sklearn.datasets import load_digits
    X, y = load_digits(return_X_y=True)
    X, y = X / 16.0, (y >= 5).astype(float)
    w = 0.1 * rng.standard_normal(64)
    parts = np.array_split(rng.permutation(len(y)), k)
    return np.stack([X[p].T @ (1 / (1 + np.exp(-X[p] @ w)) - y[p]) for p in parts])


@pytest.mark.parametrize("cid,code", available(SMALL_CODES))
def test_every_code_meets_the_target_on_its_examples(cid, code):
    err = float32_error(code, np.random.default_rng(0), trials=100)
    assert err["float32_rel_error"] <= TARGET


@pytest.mark.parametrize("name,params", [
    ("gc-cr", {"n": 256, "s": 15}),
    ("gc-partial", {"n": 256, "s": 15, "alpha": 2.0}),
    ("heter-group", {"speeds": [1.0, 2.0, 3.0, 4.0] * 64, "s": 15, "k": 256}),
])
def test_n256_s15_real_gradients(name, params):
    """The issue's setting: n = 256, s = 15, every consecutive straggler set (the worst
    structured ones: the weight of the worker next to the gap is 1 / B_ij) and 100 uniform ones,
    on a real model's partial gradients."""
    code = make_code(name, **params)
    rng = np.random.default_rng(1)
    n, s = code.n_workers, 15
    sets = [(np.arange(s) + r) % n for r in range(n)]
    sets += [rng.choice(n, s, replace=False) for _ in range(100)]
    errs = wire_errors(code, sets, logistic_gradients(code.n_partitions, rng))
    assert errs.max() <= TARGET, (errs.max(), int(errs.argmax()))


def test_a_real_coefficient_code_sends_float32_rounded_once():
    """Fails on the float64 wire: a gc-cr worker sent float64 (twice the bytes)."""
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    rng = np.random.default_rng(0)
    parts = {j: (torch.tensor(rng.standard_normal((4, 3)), dtype=torch.float32),
                 torch.tensor(rng.standard_normal((4, 1)), dtype=torch.float32))
             for j in range(2)}
    loss = torch.nn.MSELoss(reduction="sum")
    params = np.concatenate([p.detach().reshape(-1).numpy() for p in model.parameters()])
    coeffs = [0.7, -1.3]
    wire = GradientWorker(0, model, loss, parts, 0, None, np.float32)
    exact = GradientWorker(0, model, loss, parts, 0, None, np.float64)
    got = wire.compute(0, params, [(0, [0, 1], coeffs)]).coded[0]
    ref = exact.compute(0, params, [(0, [0, 1], coeffs)]).coded[0]
    assert got.dtype == np.float32 and ref.dtype == np.float64
    np.testing.assert_array_equal(got, ref.astype(np.float32))      # one rounding, at the end


def test_the_master_decodes_float32_messages_in_float64():
    """Weights of both signs cancel: the master accumulates in float64 (float32 accumulation
    loses the small difference of two large terms)."""
    big = np.array([1.0 + 2.0 ** -20, 3.0], np.float32)
    vecs = [big, np.array([1.0, 3.0], np.float32)]
    g = combine(np.array([1e4, -1e4]), vecs)
    assert g.dtype == np.float64
    np.testing.assert_allclose(g, [1e4 * 2.0 ** -20, 0.0], rtol=1e-12, atol=0)


@pytest.mark.parametrize("wire", ["float32", "float64"])
def test_training_sends_the_chosen_wire(wire, monkeypatch):
    """``--wire``: what the workers of a real (threads) run send; float32 by default for a code
    with real coefficients (gc-cr sent float64 before issue 22)."""
    from gradcode.runtime import TrainConfig, train
    sent, run = set(), GradientWorker.run

    def spy(self, *args):
        res = run(self, *args)
        sent.update(v.dtype for v in res.coded if v is not None)
        return res

    monkeypatch.setattr(GradientWorker, "run", spy)
    kw = {} if wire == "float32" else {"wire": wire}
    cfg = TrainConfig(code="gc-cr", code_params={"n": 6, "s": 2}, wait="fastest:4", rounds=3,
                      seed=1, backend="local", batch=16, dataset="digits", model="mlp",
                      eval_samples=64, **kw)
    assert train(cfg, progress=False).records
    assert sent == {np.dtype(wire)}


@pytest.mark.parametrize("wire", ["float32", "float64"])
def test_a_run_says_when_float32_can_cost_more_than_the_target(wire, monkeypatch):
    """The run's log (events.log, above the progress bar) says when float32 messages can lose
    more than the target on some straggler sets (here the target lowered so that gc-cr(6, 2)'s
    ~1e-7 exceeds it); never on the float64 wire."""
    from gradcode.runtime import TrainConfig, train
    from gradcode.runtime import _session
    monkeypatch.setattr(_session, "WIRE_TARGET", 1e-12)
    cfg = TrainConfig(code="gc-cr", code_params={"n": 6, "s": 2}, wait="fastest:4", rounds=2,
                      seed=1, backend="local", batch=16, dataset="digits", model="mlp",
                      eval_samples=64, wire=wire)
    events = train(cfg, progress=False).events
    said = [e for e in events if e.startswith("float32 on the wire: gc-cr can lose up to")]
    assert len(said) == (wire == "float32"), events
