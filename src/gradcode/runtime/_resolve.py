"""A training run resolved once: ``resolve(config) -> RunSpec``, before any data is read.

Imports no torch (as ``_config``): the CLI resolves a run, and reports what is wrong with it,
before torch is asked for; ``train`` resolves it the same way (or takes the CLI's ``RunSpec``).
What a run needs of its config besides the data and the model is decided here, each thing once:
the scheme built from ``code`` and ``code_params`` (``code_params`` then as the scheme lists
them: defaults and derived values filled in), the wait policy taken (``engine.resolve_wait``:
the code's design policy when none is given) and checked against the ``n`` workers, the delay
and compute models parsed, ``actors`` at most ``n``, the model to build (the dataset's default),
the learning rate and the held-out share when not given.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ..engine import parse_wait, resolve_wait
from ..registry import code_parameters, make_code
from ..stragglers import parse_compute, parse_delay
from ._config import DEFAULT_LR, TrainConfig

#: the model each bundled dataset trains when none is named (``mlp`` for the others)
DEFAULT_MODEL = {"synthetic": "logistic", "diabetes": "linear", "iris": "softmax",
                 "digits": "cnn", "breast_cancer": "logistic", "fashion-mnist": "cnn"}
#: the share of a bundled dataset held out for test metrics when ``test_fraction`` is not given
#: (a user's own data is not split unless asked: its caller may hold its own test set)
DEFAULT_TEST_FRACTION = 0.2


@dataclass(frozen=True)
class RunSpec:
    """A run resolved (``resolve``): its config, validated and with its defaults filled in
    (``wait`` the policy taken, ``lr``, ``test_fraction``, ``code_params`` as the scheme lists
    them), the scheme, the parsed wait policy, delay and compute models, the model to build
    (None: the caller's own) and the wait policy's lines for the run's log.

    >>> from gradcode.runtime import RunSpec, TrainConfig, resolve
    >>> spec = resolve(TrainConfig(code="gc-cr", code_params={"n": 4, "s": 1}, dataset="iris"))
    >>> spec.n, spec.config.wait, spec.config.code_params, spec.model, spec.config.lr
    (4, 'decodable', {'n': 4, 's': 1, 'seed': 0}, 'softmax', 0.5)
    >>> spec.config.test_fraction, resolve(spec.config, own_data=True).config.test_fraction
    (0.2, 0.2)
    """
    config: TrainConfig
    scheme: object
    wait: object                     # engine.WaitPolicy, checked against n
    delay: object                    # the injected delays (stragglers' model)
    compute: object                  # the injected compute time
    model: str | None                # the model to build; None: the caller gives one
    notes: tuple = ()                # the wait policy taken, in words (the run's first lines)
    given: TrainConfig | None = None     # the config as given (validated), before defaults
    own_data: bool = False           # resolved for the caller's own data

    @property
    def n(self) -> int:
        """The number of workers ``n``."""
        return int(self.scheme.n_workers)

    def fits(self, own_model: bool, own_data: bool) -> bool:
        """Whether this spec was resolved for a run with (or without) the caller's own model and
        data (the defaults of ``model``, ``lr`` and ``test_fraction`` depend on it)."""
        return (self.model is None) == own_model and self.own_data == own_data

    def with_speeds(self, speeds) -> "RunSpec":
        """The same run with paper 3's measured speeds ``c_i`` in ``code_params``, the scheme
        built with them."""
        params = {**self.config.code_params, "speeds": speeds}
        scheme = scheme_of(self.config.code, params)
        return dataclasses.replace(self, scheme=scheme,
                                   config=dataclasses.replace(self.config, code_params=params))


def scheme_of(name: str, params: dict):
    """``make_code(name, **params)`` (which refuses an unknown code or a missing parameter),
    where derived values in ``params`` (e.g. SR-SGC's ``s``, as ``scheme.params`` lists them)
    must agree with the scheme's.

    >>> scheme_of("sr-sgc", {"n": 6, "B": 2, "W": 3, "lam": 2, "s": 1}).params["s"]
    1
    >>> scheme_of("sr-sgc", {"n": 6, "B": 2, "W": 3, "lam": 2, "s": 2})
    Traceback (most recent call last):
    ...
    ValueError: s: not a parameter of 'sr-sgc'; it takes n, B, W, lam, seed
    """
    ctor = code_parameters(name)
    scheme = make_code(name, **{k: v for k, v in params.items() if k in ctor})
    for k, v in params.items():
        if k not in ctor and scheme.params.get(k, object()) != v:
            raise ValueError(f"{k}: not a parameter of {name!r}; it takes {', '.join(ctor)}")
    return scheme


def resolve(config: TrainConfig, *, own_model: bool = False, own_data: bool = False) -> RunSpec:
    """``config`` resolved (module doc): ValueError naming the setting, the constraint and the
    value for anything wrong with it.  ``own_model``, ``own_data``: the caller trains its own
    model or data (no default model; no data held out unless ``test_fraction`` says so).

    >>> from gradcode.runtime import TrainConfig, resolve
    >>> resolve(TrainConfig(code="isgc-cr", code_params={"n": 4, "c": 2}, wait="fastest:5"))
    Traceback (most recent call last):
    ...
    ValueError: wait: fastest:w needs 1 <= w <= n = 4, got w = 5
    >>> resolve(TrainConfig(code="gc-cr", code_params={"n": 4, "s": 1}, backend="ray", actors=8))
    Traceback (most recent call last):
    ...
    ValueError: actors: expected at most n = 4 (one process per worker at most), got 8
    """
    given = config.validate()
    scheme = scheme_of(given.code, given.code_params)
    n = int(scheme.n_workers)
    if given.actors is not None and given.actors > n:
        raise ValueError(f"actors: expected at most n = {n} (one process per worker at most), "
                         f"got {given.actors}")
    policy, notes = resolve_wait(scheme, given.wait)
    wait = parse_wait(policy)
    wait.check(n)
    delay, compute = parse_delay(given.delay), parse_compute(given.compute)
    model = None if own_model else given.model or DEFAULT_MODEL.get(given.dataset, "mlp")
    lr = given.lr
    if lr is None:
        lr = DEFAULT_LR.get((given.optimizer, model), DEFAULT_LR[given.optimizer])
    held_out = given.test_fraction
    if held_out is None:
        held_out = 0.0 if own_data else DEFAULT_TEST_FRACTION
    cfg = dataclasses.replace(given, wait=policy, lr=lr, test_fraction=held_out,
                              code_params=scheme.params)
    return RunSpec(cfg, scheme, wait, delay, compute, model, tuple(notes), given, own_data)
