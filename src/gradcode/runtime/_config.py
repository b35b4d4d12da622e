"""Training configuration: one validated dataclass, from CLI flags and/or a YAML or TOML file."""

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


@dataclass
class TrainConfig:
    code: str = "uncoded"
    code_params: dict = field(default_factory=dict)
    dataset: str = "synthetic"
    model: str | None = None               # default by dataset (see runtime._models.DEFAULT_MODEL)
    data_dir: str | None = None
    rounds: int = 50
    seed: int = 0
    lr: float | None = None                # default: DEFAULT_LR (by optimizer and model)
    optimizer: str = "sgd"                 # sgd | adam
    momentum: float = 0.0
    batch: int | None = None               # samples per partition and round (None: all)
    wait: str = "all"                      # a wait policy SPEC (gradcode.sim.parse_wait)
    delay: str = "none"                    # injected delays SPEC (gradcode.stragglers)
    compute: str | None = None             # injected compute time SPEC (load:SECONDS)
    backend: str = "local"                 # local | ray | virtual (the injected delays only)
    address: str | None = None             # Ray cluster address (None: a local instance)
    actors: int | None = None              # Ray processes hosting the logical workers
    round_timeout_s: float = 60.0
    on_worker_death: str = "restart"       # restart | drop
    shuffle: bool = False                  # paper 5: permute rows of B over workers every round
    out: str | None = None
    checkpoint_every: int = 10
    resume: bool = False
    eval_samples: int = 2048
    measure_speeds: int = 0                # heter codes: probe rounds measuring the speeds c_i
    waitout: str | None = None             # sequential schemes: wait-out rule (default deadline)

    def validate(self) -> "TrainConfig":
        def need(cond, msg):
            if not cond:
                raise ValueError(msg)
        need(isinstance(self.rounds, int) and self.rounds >= 1,
             f"rounds: expected an integer >= 1, got {self.rounds!r}")
        need(isinstance(self.seed, int) and self.seed >= 0, f"seed: expected an integer >= 0, got {self.seed!r}")
        need(self.lr is None or (isinstance(self.lr, (int, float)) and self.lr > 0),
             f"lr: expected a number > 0, got {self.lr!r}")
        need(self.optimizer in ("sgd", "adam"), f"optimizer: expected sgd or adam, got {self.optimizer!r}")
        need(self.backend in BACKENDS, f"backend: expected {', '.join(BACKENDS)}, got {self.backend!r}")
        need(self.batch is None or (isinstance(self.batch, int) and self.batch >= 1),
             f"batch: expected an integer >= 1, got {self.batch!r}")
        need(self.round_timeout_s > 0, f"round_timeout_s: expected > 0, got {self.round_timeout_s!r}")
        need(self.on_worker_death in ("restart", "drop"),
             f"on_worker_death: expected restart or drop, got {self.on_worker_death!r}")
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
