"""Training configuration: one validated dataclass, from CLI flags and/or a YAML or TOML file.

Imports no torch: ``gradcode train``'s flags are built from ``TrainConfig``'s fields (each
setting's default and help are declared once, here)."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field, fields
from pathlib import Path


#: learning rate when none is given: Adam's usual 1e-3; SGD 0.5 on the mean gradient (the
#: regression models and the MLP), 0.2 for the CNN (0.5 diverges on Fashion-MNIST mini-batches)
DEFAULT_LR = {"adam": 1e-3, "sgd": 0.5, ("sgd", "cnn"): 0.2}

BACKENDS = ("local", "ray", "virtual")

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
    """Every setting of a training run (``gradcode train`` has one flag per field but the code's)."""
    code: str = setting("uncoded", "code name (see `gradcode list`); its parameters follow as "
                        "--param value, its own seed as --code-seed")
    code_params: dict = setting(factory=dict, help="the code's parameters (make_code keywords)")
    dataset: str = setting("synthetic", "dataset name (see the list below)")
    model: str | None = setting(None, "linear, logistic, softmax, mlp or cnn (default by dataset)")
    data_dir: str | None = setting(None, "folder of IDX files for fashion-mnist (default "
                                   "/usr/share/datasets/fashion-mnist)", metavar="DIR")
    rounds: int = setting(50, "training rounds")
    seed: int = setting(0, "run seed: injected delays, decoding ties, model, data, shuffling")
    lr: float | None = setting(None, "learning rate (default: SGD 0.5, 0.2 for the cnn; Adam 1e-3)")
    optimizer: str = setting("sgd", "optimizer", choices=("sgd", "adam"))
    momentum: float = setting(0.0, "SGD momentum")
    batch: int | None = setting(None, "samples per partition and round (default: all)")
    wait: str = setting("all", "wait policy SPEC (below)", metavar="SPEC")
    delay: str = setting("none", "injected straggler delays SPEC (below)", metavar="SPEC")
    compute: str | None = setting(None, "injected compute time SPEC, e.g. load:0.5 (default: none)",
                                  metavar="SPEC")
    backend: str = setting("local", "local threads, ray, or virtual: the simulator's clock with "
                           "real gradients (time_s = the injected delays; equals `simulate` round "
                           "by round for the same seed)", choices=BACKENDS)
    address: str | None = setting(None, "Ray cluster address HOST:PORT (default: start a local "
                                  "instance)", metavar="HOST:PORT")
    actors: int | None = setting(None, "Ray processes hosting the logical workers (default 2)")
    round_timeout_s: float = setting(60.0, "seconds before a round gives up waiting",
                                     flag="--round-timeout", metavar="SECONDS")
    on_worker_death: str = setting("restart", "what to do with a worker that fails",
                                   choices=("restart", "drop"))
    shuffle: bool = setting(False, "paper 5 shuffling: permute which worker computes which row "
                            "of B every round")
    out: str | None = setting(None, "output folder: rounds.csv, summary.json, plot.png, "
                              "checkpoint.pt, events.log", metavar="DIR")
    checkpoint_every: int = setting(10, "rounds between checkpoints")
    resume: bool = setting(False, "continue the run in --out from its last checkpoint")
    eval_samples: int = setting(2048, "samples on which every round's loss is measured")
    measure_speeds: int = setting(0, "heter / heter-group: measure the workers' speeds over R "
                                  "probe rounds and allocate by them (the given --speeds only fix "
                                  "the number of workers)", metavar="R")
    waitout: str | None = setting(None, "sequential schemes (M = T + 1 models pipelined): when "
                                  "the master waits out a round: deadline (default), model or "
                                  "never", metavar="RULE")

    def validate(self) -> "TrainConfig":
        def need(cond, msg):
            if not cond:
                raise ValueError(msg)
        need(isinstance(self.rounds, int) and self.rounds >= 1,
             f"rounds: expected an integer >= 1, got {self.rounds!r}")
        need(isinstance(self.seed, int) and self.seed >= 0, f"seed: expected an integer >= 0, got {self.seed!r}")
        need(self.lr is None or (isinstance(self.lr, (int, float)) and self.lr > 0),
             f"lr: expected a number > 0, got {self.lr!r}")
        for f in fields(self):                     # the choices declared with the field
            if "choices" in f.metadata:
                val, choices = getattr(self, f.name), f.metadata["choices"]
                need(val in choices, f"{f.name}: expected {_either(choices)}, got {val!r}")
        need(self.batch is None or (isinstance(self.batch, int) and self.batch >= 1),
             f"batch: expected an integer >= 1, got {self.batch!r}")
        need(self.round_timeout_s > 0, f"round_timeout_s: expected > 0, got {self.round_timeout_s!r}")
        need(isinstance(self.momentum, (int, float)) and self.momentum >= 0,
             f"momentum: expected a number >= 0, got {self.momentum!r}")
        need(isinstance(self.checkpoint_every, int) and self.checkpoint_every >= 1,
             f"checkpoint_every: expected an integer >= 1, got {self.checkpoint_every!r}")
        need(isinstance(self.eval_samples, int) and self.eval_samples >= 1,
             f"eval_samples: expected an integer >= 1, got {self.eval_samples!r}")
        need(self.actors is None or (isinstance(self.actors, int) and self.actors >= 1),
             f"actors: expected an integer >= 1, got {self.actors!r}")
        need(not self.resume or self.out, "resume: continues the run in --out; give --out DIR")
        need(self.address is None or self.backend == "ray",
             f"address: only with backend ray, got backend {self.backend!r}")
        need(isinstance(self.measure_speeds, int) and self.measure_speeds >= 0,
             f"measure_speeds: expected an integer >= 0 of probe rounds, got {self.measure_speeds!r}")
        need(not self.measure_speeds or self.code in SPEED_CODES,
             f"measure_speeds: only for the codes {', '.join(SPEED_CODES)}, got code {self.code!r}")
        if self.waitout is not None:   # a single-round code refuses one (its planner says so)
            from ..sequential import check_rule
            check_rule(self.waitout)
        need(isinstance(self.code_params, dict), f"code_params: expected a table, got {self.code_params!r}")
        return self

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


def _either(choices) -> str:
    return ", ".join(choices[:-1]) + " or " + choices[-1] if len(choices) > 1 else choices[0]


def load_config(path) -> dict:
    """Read a YAML (``.yaml``/``.yml``) or TOML (``.toml``) file into a dict of TrainConfig fields;
    unknown keys are an error naming the key."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"config: no such file {str(path)!r}")
    text = path.read_text()
    try:
        if path.suffix == ".toml":
            import tomllib
            raw = tomllib.loads(text)
        elif path.suffix in (".yaml", ".yml"):
            import yaml
            raw = yaml.safe_load(text) or {}
        elif path.suffix == ".json":
            raw = json.loads(text)
        else:
            raise ValueError(f"config: expected a .toml, .yaml or .json file, got {path.name!r}")
    except ValueError:
        raise
    except Exception as exc:
        raise ValueError(f"config: cannot parse {path.name}: {exc}") from None
    if not isinstance(raw, dict):
        raise ValueError(f"config: {path.name} must hold a table of settings")
    known = {f.name for f in fields(TrainConfig)}
    for key in raw:
        if key not in known:
            raise ValueError(f"config: unknown setting {key!r} in {path.name}; known: "
                             + ", ".join(sorted(known)))
    return raw
