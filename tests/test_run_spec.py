"""A run resolved once (issue 33, point 1) and the backends' options declared once (point 2):
``runtime.resolve`` turns a TrainConfig into a ``RunSpec`` without torch, the CLI and ``train``
both use it (the scheme is built once per run), and the options a backend takes come from its
row of ``BACKENDS`` (validation and the executor's ``from_config`` alike)."""

from __future__ import annotations

import functools
import subprocess
import sys
from dataclasses import fields

import pytest

from gradcode.engine import BackendOptions
from gradcode.registry import code_class
from gradcode.runtime import BACKENDS, RunSpec, TrainConfig, resolve


def test_resolve_imports_no_torch():
    code = ("import sys\n"
            "from gradcode.runtime import TrainConfig, resolve\n"
            "spec = resolve(TrainConfig(code='isgc-cr', code_params={'n': 6, 'c': 2}))\n"
            "print(spec.n, spec.config.wait, sorted(m for m in ('torch', 'ray') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.split() == ["6", "fastest:5", "[]"]     # ignore-straggler: n - (c - 1)


def test_a_spec_holds_the_run_with_its_defaults_filled_in():
    spec = resolve(TrainConfig(code="sr-sgc", code_params={"n": 6, "B": 2, "W": 3, "lam": 2},
                               dataset="digits", delay="exp:0.1", compute="load:0.5"))
    cfg = spec.config
    assert spec.n == 6 and spec.model == "cnn" and cfg.model is None     # the dataset's model
    assert cfg.lr == 0.2 and cfg.test_fraction == 0.2
    assert cfg.code_params == {"n": 6, "B": 2, "W": 3, "lam": 2, "s": 1, "seed": 0}
    assert cfg.wait == "mu:1" and spec.notes
    assert type(spec.wait).__name__ == "MuRule" and spec.delay.mean > 0
    assert spec.compute.seconds_per_load == 0.5
    own = resolve(spec.given, own_model=True, own_data=True)
    assert own.model is None and own.config.lr == 0.5 and own.config.test_fraction == 0.0
    assert own.fits(True, True) and not spec.fits(True, True) and spec.fits(False, False)
    assert resolve(cfg).config == cfg                   # resolving again changes nothing


@pytest.mark.parametrize("kw,message", [
    (dict(code="nope"), "name: unknown code 'nope'"),
    (dict(code="gc-cr", code_params={"n": 4}), "s: 'gc-cr' needs s"),
    (dict(code="sr-sgc", code_params={"n": 6, "B": 2, "W": 3, "lam": 2, "s": 2}),
     "s: not a parameter of 'sr-sgc'"),
    (dict(code="gc-cr", code_params={"n": 4, "s": 1}, backend="ray", actors=5),
     r"actors: expected at most n = 4 \(one process per worker at most\), got 5"),
    (dict(code="gc-cr", code_params={"n": 4, "s": 1}, wait="fastest:9"), "wait: fastest:w"),
    (dict(code="gc-cr", code_params={"n": 4, "s": 1}, delay="exp"), "delay"),
    (dict(code="gc-cr", code_params={"n": 4, "s": 1}, compute="load:x"), "compute"),
])
def test_resolve_refuses_a_bad_run_in_one_line(kw, message):
    with pytest.raises(ValueError, match=message):
        resolve(TrainConfig(**kw))


def test_the_options_a_backend_takes_are_its_rows():
    """Every option a backend does not take is refused by name, listing the backends that take
    it, in the table's order; the ones it takes pass."""
    values = {"address": "127.0.0.1:6379", "actors": 2, "concurrency": 2, "device": "cuda",
              "aggregate": "on"}
    assert set(values) == {f.name for f in fields(BackendOptions)}
    for name, row in BACKENDS.items():
        for option, value in values.items():
            cfg = TrainConfig(backend=name, **{option: value})
            if option in row.takes:
                cfg.validate()
                continue
            takers = [b for b, r in BACKENDS.items() if option in r.takes]
            with pytest.raises(ValueError, match=f"^{option}: only with backend "
                                                 f"{takers[0]}.*, got backend '{name}'$"):
                cfg.validate()


def test_the_cli_and_train_build_the_scheme_once(monkeypatch):
    pytest.importorskip("torch")
    from gradcode.cli import main
    cls, built = code_class("isgc-cr"), []
    init = cls.__init__

    @functools.wraps(init)
    def counted(self, *args, **kw):
        built.append(kw)
        init(self, *args, **kw)
    monkeypatch.setattr(cls, "__init__", counted)
    assert main(["train", "--code", "isgc-cr", "--n", "4", "--c", "2", "--rounds", "2",
                 "--backend", "virtual", "--dataset", "iris", "--eval-samples", "16",
                 "--quiet"]) == 0
    assert len(built) == 1


def test_train_takes_a_spec_and_resolves_again_for_your_own_model():
    torch = pytest.importorskip("torch")
    from gradcode.runtime import load_torch_data, train
    spec = resolve(TrainConfig(code="gc-cr", code_params={"n": 4, "s": 1}, rounds=2,
                               dataset="iris", backend="virtual", eval_samples=16))
    assert isinstance(spec, RunSpec) and spec.model == "softmax"
    res = train(spec, progress=False)
    assert len(res.records) == 2 and type(res.model).__name__ != "Linear"
    mine = train(spec, model=torch.nn.Linear(4, 3), loss_fn=torch.nn.CrossEntropyLoss(),
                 data=load_torch_data("iris"), progress=False)
    assert isinstance(mine.model, torch.nn.Linear) and len(mine.records) == 2
