"""Training configuration: one validated dataclass, from CLI flags and/or a YAML or TOML file.

Imports no torch: ``gradcode train``'s flags are built from ``TrainConfig``'s fields (each
setting's default and help are declared once, here)."""

from __future__ import annotations

import dataclasses
import json
import math
import numbers
import re
import types
import typing
from dataclasses import dataclass, field, fields
from pathlib import Path

import numpy as np

from ..engine import BackendOptions
from ._aggregate import MODES as AGGREGATE_MODES
from ._backends import BACKENDS as _BACKENDS, refused_option
from ._schedule import SCHEDULE_HELP, parse_schedule


#: learning rate when none is given: Adam's usual 1e-3; SGD 0.5 on the mean gradient (the
#: regression models and the MLP), 0.2 for the CNN (0.5 diverges on Fashion-MNIST mini-batches)
DEFAULT_LR = {"adam": 1e-3, "adamw": 1e-3, "sgd": 0.5, ("sgd", "cnn"): 0.2}

BACKENDS = tuple(_BACKENDS)
FLOAT32_MAX = 3.4028234663852886e38      # the largest learning rate torch can step float32 with
DEVICES = ("cpu", "cuda", "auto")

#: codes whose placement depends on the workers' speeds (``measure_speeds`` applies to them)
SPEED_CODES = ("heter", "heter-group")


def setting(default=None, help: str = "", *, factory=None, **cli):
    """A TrainConfig field with its help declared once: ``gradcode train`` builds its flags from
    these (``flag``: the flag when it is not ``--`` + the name with dashes; ``choices``; ``metavar``),
    ``TrainConfig.validate`` checks the choices."""
    meta = {"help": help, **cli}
    if factory is not None:
        return field(default_factory=factory, metadata=meta)
    return field(default=default, metadata=meta)


@dataclass
class TrainConfig:
    """Every setting of a training run (``gradcode train`` has one flag per field but the code's).

    >>> from gradcode.runtime import TrainConfig
    >>> cfg = TrainConfig(code="isgc-cr", code_params={"n": 4, "c": 2}, wait="fastest:2",
    ...                   delay="exp:1", rounds=5, backend="virtual").validate()
    >>> cfg.dataset, cfg.as_dict()["code_params"]
    ('synthetic', {'n': 4, 'c': 2})
    >>> TrainConfig(rounds=0).validate()
    Traceback (most recent call last):
    ...
    ValueError: rounds: expected an integer >= 1, got 0
    """
    code: str = setting("uncoded", "code name (see `gradcode list`); its parameters follow as "
                        "--param value, its own seed as --code-seed")
    code_params: dict = setting(factory=dict, help="the code's parameters (make_code keywords)")
    dataset: str = setting("synthetic", "dataset name (see the list below)")
    model: str | None = setting(None, "linear, logistic, softmax, mlp or cnn (default by dataset)")
    data_dir: str | None = setting(None, "folder of IDX files for fashion-mnist (default "
                                   "/usr/share/datasets/fashion-mnist)", metavar="DIR")
    rounds: int = setting(50, "training rounds")
    seed: int = setting(0, "run seed: injected delays, decoding ties, model, data, shuffling")
    lr: float | None = setting(None, "learning rate (default: SGD 0.5, 0.2 for the cnn; Adam and "
                               "AdamW 1e-3)")
    optimizer: str = setting("sgd", "optimizer (train(optimizer=f) takes any "
                             "torch.optim.Optimizer)", choices=("sgd", "adam", "adamw"))
    momentum: float = setting(0.0, "SGD momentum")
    weight_decay: float = setting(0.0, "weight decay (SGD and Adam: L2 in the gradient; AdamW: "
                                  "decoupled)")
    lr_schedule: str | None = setting(None, "learning rate schedule: " + SCHEDULE_HELP,
                                      metavar="SPEC")
    batch: int | None = setting(None, "samples per partition and round (default: all)")
    micro_batch: int | None = setting(None, "accumulate each partition's gradient over "
                                      "passes of at most M samples (default: one pass)",
                                      metavar="M")
    loader_workers: int = setting(0, "processes reading your Dataset's rows every round, as "
                                  "DataLoader's num_workers (0: the worker's own thread)",
                                  metavar="K")
    wait: str | None = setting(None, "wait policy SPEC (below; default: the one the code was "
                               "designed for: decodable for an exact code, the fastest n - (c - 1) "
                               "for ignore-straggler and approximate codes, mu:1 for paper 4's, "
                               "covered for bcc)", metavar="SPEC")
    delay: str = setting("none", "injected straggler delays SPEC (below)", metavar="SPEC")
    compute: str | None = setting(None, "injected compute time SPEC, e.g. load:0.5 (default: none)",
                                  metavar="SPEC")
    backend: str = setting("local", "local threads, ray, torch (torch.distributed processes), "
                           "or virtual: the simulator's clock with "
                           "real gradients (time_s = the injected delays; equals `simulate` round "
                           "by round for the same seed)", choices=BACKENDS)
    address: str | None = setting(None, "Ray cluster address HOST:PORT (default: start a local "
                                  "instance)", metavar="HOST:PORT")
    actors: int | None = setting(None, "processes hosting the logical workers (ray: default "
                                 "2; torch: default one per worker)")
    concurrency: int | None = setting(None, "logical workers computing at once per process "
                                      "(local: per device; ray, torch: per process), on as "
                                      "many model replicas; the others queue (default: 1 on a "
                                      "GPU, the cores on a CPU)", metavar="K")
    aggregate: str = setting("auto", "ray, torch: a process hosting several workers sends the "
                             "master one weighted sum of their vectors instead of each vector: "
                             "auto where the bytes saved outweigh the extra round trip (from 1 "
                             "MiB per round on torch, 2 MiB on ray), on, or off",
                             choices=AGGREGATE_MODES)
    round_timeout_s: float = setting(60.0, "seconds before a round gives up waiting",
                                     flag="--round-timeout", metavar="SECONDS")
    on_worker_death: str = setting("restart", "what to do with a worker that fails",
                                   choices=("restart", "drop"))
    shuffle: bool = setting(False, "paper 5 shuffling: permute which worker computes which row "
                            "of B every round")
    out: str | None = setting(None, "output folder: rounds.csv, summary.json, plot.png, "
                              "checkpoint.pt, events.log", metavar="DIR")
    plot: bool = setting(True, "plot.png in --out: the loss, the recovered fraction and the "
                         "held-out accuracy (--no-plot, or plot = false in a config file: none, "
                         "for sweeps of many runs)", flag="--no-plot")
    checkpoint_every: int = setting(10, "rounds between checkpoints")
    resume: bool = setting(False, "continue the run in --out from its last checkpoint")
    eval_samples: int = setting(2048, "samples on which every round's loss is measured")
    test_fraction: float | None = setting(None, "held-out share of the data for test_loss and "
                                          "test_accuracy (default 0.2 for a bundled dataset, 0 "
                                          "for your own data)", metavar="F")
    eval_every: int = setting(10, "rounds between held-out evaluations (and the last round); 0: "
                              "no evaluation at all, not even the training loss")
    eval_batch: int = setting(1024, "rows per forward pass when evaluating")
    device: str = setting("cpu", "where the workers compute: cpu, cuda, cuda:K (GPU K) or auto "
                          "(cuda when there is one)")
    precision: str = setting("float32", "forward and backward in float32, or bf16 (under "
                             "autocast: the gradients and messages stay float32)",
                             choices=("float32", "bf16"))
    wire: str = setting("float32", "what workers send: float32 (half the bytes; the master "
                        "decodes in float64, within 1e-5 of float64 messages: where large "
                        "decoding weights would amplify the rounding it fetches the workers' "
                        "rounding residuals), or float64", choices=("float32", "float64"))
    measure_speeds: int = setting(0, "heter / heter-group: measure the workers' speeds over R "
                                  "probe rounds and allocate by them (the given --speeds only fix "
                                  "the number of workers)", metavar="R")
    audit: bool = setting(False, "recompute every decoded gradient at the master from the "
                          "partition gradients the decoding claims; its relative error goes in "
                          "rounds.csv (audit_error) and summary.json (max_audit_error)")
    waitout: str | None = setting(None, "sequential schemes (M = T + 1 models pipelined): when "
                                  "the master waits out a round: deadline (default), model or "
                                  "never", metavar="RULE")

    def validate(self) -> "TrainConfig":
        """Every setting checked before any work: its type from the annotation (``bool`` is not
        an integer, so ``rounds: true`` in a YAML file is refused; numbers finite), its range and
        its choices; ValueError naming the setting, the constraint and the value.  NumPy numbers
        are taken as Python's (the returned config holds Python ``int``, ``float``, ``bool``)."""
        def need(cond, msg):
            if not cond:
                raise ValueError(msg)
        hints = typing.get_type_hints(TrainConfig)
        self = dataclasses.replace(self, **{
            f.name: _check_type(f.name, getattr(self, f.name), hints[f.name])
            for f in fields(self) if f.init})
        for name, minimum in INT_MINIMUM.items():
            val = getattr(self, name)
            need(val is None or val >= minimum,
                 f"{name}: expected an integer >= {minimum}, got {val!r}")
        need(self.lr is None or 0 < self.lr <= FLOAT32_MAX,
             f"lr: expected a number > 0 that float32 parameters can be stepped with "
             f"(<= {FLOAT32_MAX:.3g}), got {self.lr!r}")
        for f in fields(self):                     # the choices declared with the field
            if "choices" in f.metadata:
                val, choices = getattr(self, f.name), f.metadata["choices"]
                need(val in choices, f"{f.name}: expected {_either(choices)}, got {val!r}")
        need(self.round_timeout_s > 0,
             f"round_timeout_s: expected a finite number > 0, got {self.round_timeout_s!r}")
        need(self.test_fraction is None or 0 <= self.test_fraction < 1,
             f"test_fraction: expected a number in [0, 1), got {self.test_fraction!r}")
        need(0 <= self.momentum < 1,
             f"momentum: expected a number in [0, 1), got {self.momentum!r}")
        need(self.weight_decay >= 0,
             f"weight_decay: expected a number >= 0, got {self.weight_decay!r}")
        if self.lr_schedule is not None:
            parse_schedule(self.lr_schedule)
        need(not self.momentum or self.optimizer == "sgd",      # would be silently ignored
             f"momentum: only with optimizer sgd (Adam keeps its own moments), got optimizer "
             f"{self.optimizer!r}")
        need(self.data_dir is None or self.dataset == "fashion-mnist",
             f"data_dir: only with dataset fashion-mnist (the others are bundled), got dataset "
             f"{self.dataset!r}")
        need(not self.resume or self.out, "resume: continues the run in --out; give --out DIR")
        need(self.device in DEVICES or re.fullmatch(r"cuda:\d+", self.device) is not None,
             f"device: expected one of {', '.join(DEVICES)} or cuda:K, got {self.device!r}")
        refused = refused_option(self.backend, BackendOptions.set_in(self))   # the backend's row
        need(refused is None, refused)
        need(not self.measure_speeds or self.code in SPEED_CODES,
             f"measure_speeds: only for the codes {', '.join(SPEED_CODES)}, got code {self.code!r}")
        if self.waitout is not None:   # a single-round code refuses one (its planner says so)
            from ..sequential import check_rule
            check_rule(self.waitout)
        return self

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


#: the integer settings and their smallest values (``None`` passes where the field allows it)
INT_MINIMUM = {"rounds": 1, "seed": 0, "batch": 1, "actors": 1, "checkpoint_every": 1,
               "eval_samples": 1, "measure_speeds": 0, "eval_every": 0, "micro_batch": 1, "loader_workers": 0,
               "eval_batch": 1, "concurrency": 1}

_KIND_WORDS = {int: "an integer", float: "a finite number", str: "a string", bool: "true or false",
               dict: "a table"}


def _check_type(name: str, value, annotation):
    """``value`` of the kind the annotation says (``int | None``: an integer or None), as that
    Python type (NumPy's numbers included): a bool is not a number, an integer is a float, a
    float must be finite."""
    kinds = typing.get_args(annotation) if typing.get_origin(annotation) in (
        typing.Union, types.UnionType) else (annotation,)
    if value is None and type(None) in kinds:
        return value
    kind = next(k for k in kinds if k is not type(None))
    boolean = isinstance(value, (bool, np.bool_))
    if kind is bool:
        ok = boolean
    elif kind is int:
        ok = isinstance(value, numbers.Integral) and not boolean
    elif kind is float:
        ok = isinstance(value, numbers.Real) and not boolean and _finite(value)
    else:
        ok = isinstance(value, kind)
    if not ok:
        raise ValueError(f"{name}: expected {_KIND_WORDS.get(kind, kind.__name__)}"
                         f"{' or none' if type(None) in kinds else ''}, got {value!r}")
    return kind(value) if kind in (bool, int, float) else value


def _finite(value) -> bool:
    try:
        return math.isfinite(value)
    except OverflowError:          # an integer too large for a float
        return False


def _either(choices) -> str:
    return ", ".join(choices[:-1]) + " or " + choices[-1] if len(choices) > 1 else choices[0]


def load_config(path) -> dict:
    """Read a YAML (``.yaml``/``.yml``), TOML (``.toml``) or JSON file into a dict of TrainConfig
    fields; unknown keys are an error naming the key, a syntax error names the file and the line
    where the parser gives one (one line in every case).

    >>> from pathlib import Path
    >>> from gradcode.runtime import TrainConfig, load_config
    >>> _ = Path("run.toml").write_text('code = "isgc-cr"\\ncode_params = {n = 4, c = 2}\\n'
    ...                                 'wait = "fastest:2"\\nrounds = 5\\n')
    >>> settings = load_config("run.toml")
    >>> settings
    {'code': 'isgc-cr', 'code_params': {'n': 4, 'c': 2}, 'wait': 'fastest:2', 'rounds': 5}
    >>> TrainConfig(**settings).validate().rounds
    5
    >>> _ = Path("bad.toml").write_text("epochs = 3\\n")
    >>> load_config("bad.toml")
    Traceback (most recent call last):
    ...
    ValueError: config: unknown setting 'epochs' in bad.toml; known: actors, address, ...
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"config: no such file {str(path)!r}")
    if path.suffix not in (".toml", ".yaml", ".yml", ".json"):
        raise ValueError(f"config: expected a .toml, .yaml or .json file, got {path.name!r}")
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"config: cannot read {str(path)!r}: "
                         f"{getattr(exc, 'strerror', None) or exc}") from None
    try:
        raw = _parse(path.suffix, text)
    except ImportError as exc:
        raise ValueError(f"config: reading {path.name} needs {exc.name} "
                         "(pip install 'gradcode[train]')") from None
    except Exception as exc:       # each parser's own error: say where, in one line
        raise ValueError(f"config: {str(path)!r} is not valid {_FORMAT[path.suffix]}: "
                         f"{_where(exc)}") from None
    if raw is None:                # an empty YAML file
        raw = {}
    if not isinstance(raw, dict):
        raise ValueError(f"config: {str(path)!r} must hold a table of settings, got "
                         f"{type(raw).__name__}")
    known = {f.name for f in fields(TrainConfig)}
    for key in raw:
        if key not in known:
            raise ValueError(f"config: unknown setting {key!r} in {path.name}; known: "
                             + ", ".join(sorted(known)))
    return raw


_FORMAT = {".toml": "TOML", ".yaml": "YAML", ".yml": "YAML", ".json": "JSON"}


def _parse(suffix: str, text: str):
    if suffix == ".toml":
        import tomllib
        return tomllib.loads(text)
    if suffix == ".json":
        return json.loads(text)
    import yaml
    return yaml.safe_load(text)


def _where(exc: Exception) -> str:
    """A parser's error in one line: TOML's and JSON's messages carry ``(at) line L column C``;
    YAML's is several lines, its position in ``problem_mark`` (0-based)."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    if mark is not None:
        what = getattr(exc, "problem", None) or getattr(exc, "context", None) or type(exc).__name__
        return f"{what} (line {mark.line + 1}, column {mark.column + 1})"
    return " ".join(str(exc).split()) or type(exc).__name__
