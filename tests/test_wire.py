"""Float32 on the wire for every code (issue 22): workers encode in float64 and send float32,
the master decodes in float64; the decoded gradient stays within 1e-5 (relative) of the same
decoding of float64 messages."""

import numpy as np
import pytest
import torch

from _codes import SMALL_CODES, available
from gradcode import make_code
from gradcode.analysis import (Wire, digits_gradients, float32_error, refine, refined_wire_errors,
                               wire_errors)
from gradcode.engine import combine
from gradcode.runtime._layout import Layout
from gradcode.runtime._loss import Objective
from gradcode.runtime._worker import GradientWorker

TARGET = 1e-5


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
    errs = wire_errors(code, sets, digits_gradients(code.n_partitions, rng))
    assert errs.max() <= TARGET, (errs.max(), int(errs.argmax()))


def tiny_worker_inputs():
    """``(model, loss, partitions, params)``: a linear model and two partitions of 4 rows."""
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    rng = np.random.default_rng(0)
    parts = {j: (torch.tensor(rng.standard_normal((4, 3)), dtype=torch.float32),
                 torch.tensor(rng.standard_normal((4, 1)), dtype=torch.float32))
             for j in range(2)}
    params = np.concatenate([p.detach().reshape(-1).numpy() for p in model.parameters()])
    X, y = parts[0]
    made = (Objective.of(torch.nn.MSELoss(reduction="sum"), model, X, y), Layout.of(model, X))
    return model, made, parts, params


def test_a_real_coefficient_code_sends_float32_rounded_once():
    """Fails on the float64 wire: a gc-cr worker sent float64 (twice the bytes)."""
    model, loss, parts, params = tiny_worker_inputs()
    coeffs = [0.7, -1.3]
    wire = GradientWorker(0, model, *loss, parts, 0, None, np.float32)
    exact = GradientWorker(0, model, *loss, parts, 0, None, np.float64)
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


@pytest.mark.parametrize("name,params", [
    ("gc-cr", {"n": 256, "s": 15}),
    ("heter", {"speeds": [1.0, 2.0, 3.0, 4.0] * 64, "s": 15, "k": 256}),
])
def test_every_straggler_set_at_n256_s15_is_within_the_target(name, params):
    """The issue's target on every straggler set, heavy tail included (fails before
    ``analysis.refine``: iid gradients reach 4e-5 for gc-cr, 1e-4 for heter, on the sets where the
    decoding weights' null vector is nearly orthogonal to 1), at a few percent more bytes: the
    residuals fetched are under 5 % of the messages decoded, on average."""
    code = make_code(name, **params)
    rng = np.random.default_rng(2)
    n, s = code.n_workers, 15
    sets = [(np.arange(s) + r) % n for r in range(n)]
    sets += [rng.choice(n, s, replace=False) for _ in range(100)]
    G = rng.standard_normal((code.n_partitions, 64))
    raw = wire_errors(code, sets, G)
    err, fetched = refined_wire_errors(code, sets, G)
    assert raw.max() > TARGET                    # the tail is there ...
    assert err.max() <= TARGET                   # ... and refined away
    assert fetched.mean() <= 0.05 * (n - s), fetched.mean()


def test_a_sliced_code_is_refined_slice_by_slice():
    """comm-efficient's cyclic construction at n = 48, s = 6, m = 2 loses up to ~1e-4 on the
    float32 wire; refined, every set is within the target."""
    code = make_code("comm-efficient", n=48, s=6, m=2)
    rng = np.random.default_rng(3)
    sets = [(np.arange(6) + r) % 48 for r in range(48)]
    sets += [rng.choice(48, 6, replace=False) for _ in range(64)]
    G = rng.standard_normal((code.n_partitions, 33))
    raw, (err, _) = wire_errors(code, sets, G), refined_wire_errors(code, sets, G)
    assert raw.max() > TARGET and err.max() <= TARGET


def test_refine_fetches_nothing_when_the_bound_is_met_and_stops_when_fetching_fails():
    m = np.array([[1.0 + 1e-9, 2.0], [1.0, 2.0 - 1e-9]])
    hi = m.astype(np.float32).astype(np.float64)
    asked = []
    wire = Wire(np.linalg.norm(m - hi, axis=1), lambda idx: asked.append(list(idx)))
    g, fetched, bound = refine(np.array([1.0, 1.0]) @ hi, [1.0, 1.0], wire)
    assert (fetched, asked) == (0, [])                 # plain weights: the bound is met
    g, fetched, bound = refine(np.array([1e4, -1e4]) @ hi, [1e4, -1e4], wire)
    assert fetched == 0 and asked == [[0, 1]] and bound > TARGET   # None: unrefined, said


def test_a_worker_keeps_its_residuals_for_keep_rounds():
    model, loss, parts, params = tiny_worker_inputs()
    task = [(0, [0, 1], [0.7, -1.3]), (0, [0], [1.0])]        # real coefficients; a plain sum
    w = GradientWorker(0, model, *loss, parts, 0, None, np.float32, keep=2)
    exact = GradientWorker(0, model, *loss, parts, 0, None, np.float64)
    for r in range(3):
        res = w.compute(r, params, task)
    ref = exact.compute(2, params, task).coded[0]
    e = w.residual(2, 0)
    assert e.dtype == np.float32 and res.rounding[1] == 0.0         # the sum: nothing rounded
    assert res.rounding[0] == pytest.approx(np.linalg.norm(ref - res.coded[0].astype(float)))
    np.testing.assert_allclose(res.coded[0].astype(float) + e, ref, rtol=1e-13)
    w.residual(1, 0)                                                 # keep = 2 rounds
    for r, k in [(0, 0), (2, 1)]:
        with pytest.raises(LookupError, match="keeps no residual"):
            w.residual(r, k)


@pytest.mark.parametrize("backend", ["virtual", "local"])
def test_every_step_is_within_the_target_of_float64_messages(backend, monkeypatch):
    """A real run's decoded gradient against the float64 wire's, same seed, every worker
    waited for (the same decoding): within the target, here lowered to 1e-10 so that gc-cr's
    ~1e-7 float32 rounding exceeds it (on the float32 wire before ``analysis.refine``: 1e-7 off),
    every refinement said in the run's log."""
    steps_within_the_target(backend, monkeypatch)


def steps_within_the_target(backend, monkeypatch, **options):
    """The check of ``test_every_step_is_within_the_target_of_float64_messages`` on
    ``backend``; ``options``: more settings (Ray's actors, tests/test_runtime_ray.py)."""
    from gradcode.analysis import _wire
    from gradcode.runtime import TrainConfig, train
    from gradcode.runtime._learner import TorchLearner
    monkeypatch.setattr(_wire, "WIRE_TARGET", 1e-10)
    monkeypatch.setattr(TorchLearner, "decoded_dtype", np.float64)   # (not rounded to float32)
    applied, apply = {}, TorchLearner.apply

    def spy(self, step, vectors):
        g = apply(self, step, vectors)
        applied.setdefault(self.wire, []).append(np.array(g, np.float64))
        return g

    monkeypatch.setattr(TorchLearner, "apply", spy)
    events = {}
    for wire in ["float32", "float64"]:
        monkeypatch.setattr(TorchLearner, "wire", wire, raising=False)
        cfg = TrainConfig(code="gc-cr", code_params={"n": 6, "s": 2}, wait="all", rounds=1,
                          seed=1, backend=backend, batch=16, dataset="digits", model="mlp",
                          eval_samples=64, wire=wire, **options)
        events[wire] = train(cfg, progress=False).events
    g32, g64 = applied["float32"][0], applied["float64"][0]
    assert np.linalg.norm(g32 - g64) <= 1e-10 * np.linalg.norm(g64)
    assert any("fetched the residuals of" in e for e in events["float32"]), events["float32"]
    assert not any("residuals" in e for e in events["float64"])


def test_a_run_says_when_residuals_cannot_be_fetched(monkeypatch):
    """A worker that lost its residuals (a restarted Ray host): the step is taken unrefined and
    the log says so, with the target it may exceed."""
    from gradcode.analysis import _wire
    from gradcode.engine import VirtualExecutor
    from gradcode.runtime import TrainConfig, train
    monkeypatch.setattr(_wire, "WIRE_TARGET", 1e-12)

    def lost(self, wanted):
        raise LookupError("worker 3 keeps no residual of round 0, mini-task 0")

    monkeypatch.setattr(VirtualExecutor, "residuals", lost)
    cfg = TrainConfig(code="gc-cr", code_params={"n": 6, "s": 2}, wait="fastest:4", rounds=2,
                      seed=1, backend="virtual", batch=16, dataset="digits", model="mlp",
                      eval_samples=64)
    res = train(cfg, progress=False)
    said = [e for e in res.events if "could not be fetched (LookupError: worker 3" in e]
    assert len(said) == 2 and "may exceed 1e-12" in said[0] and len(res.records) == 2
