"""Real training: the engine's loop with PyTorch workers on a virtual clock, threads or Ray.

Every scheme runs the same way: a single-round code is the ``T = 0`` case (one model), a
sequential scheme of paper 4 trains ``M = T + 1`` models round-robin (App. I: job ``j`` is
iteration ``j // M`` of model ``j % M``, stepped when it decodes, by round ``j + T``).  Each round
the loop injects the delays the simulator would (same random streams, ``gradcode.engine``),
broadcasts the parameters once, collects under the wait policy, waits everyone out when the
planner's rule says so, decodes and steps a ``torch.optim`` optimizer with each decoded job's
mean gradient.  Writes ``rounds.csv`` (the simulator's ``Record`` columns; ``time_s`` virtual
seconds on the virtual backend, wall-clock otherwise), ``events.log``, ``summary.json``,
``plot.png`` and ``checkpoint.pt``; ``resume`` continues the same run.

``train`` is five steps: build the inputs (scheme, data, model, loss, delay models), plan (the
planner, the partitions, the learner), restore (round 0 or the checkpoint: ``_checkpoint``), run
the rounds (``_session.Session``: executor, loop, output folder, progress) and finish (the
``TrainResult``).
"""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from ..codes import check_shares
from ..engine import WorkerAccount, jobs_for, start_models, streams
from ..records import NothingRecovered, Record, finished, summarize
from ._checkpoint import fingerprint, restore
from ._config import TrainConfig
from ._executors import measure_speeds
from ._layout import Layout, floating_dtype
from ._learner import TorchLearner, check_own
from ._loss import LossError, Objective
from ._schedule import scheduler_for
from ._data import DatasetData, Rows, as_data, infer_task, split_indices, tensors
from ._models import TorchData, build_model, load_torch_data, loss_for
from ._reading import partition_rows
from ._resolve import RunSpec, resolve
from ._session import Session
from ._worker import batch_indices


@dataclass
class TrainResult:
    """What ``train`` returns: one ``Record`` per round (the simulator's columns), the trained
    model(s), the output folder (None without ``out``), the run's events and how it ended;
    ``summary`` condenses the records as ``summary.json`` does, and for a scheme with a wait-out
    rule (every sequential scheme, ``gc-seq``'s ``T = 0`` included) adds its ``models``,
    ``jobs``, ``waitout_rule`` and ``waitout_rounds`` (``sequential``).

    >>> from gradcode.runtime import TrainConfig, train
    >>> cfg = TrainConfig(code="isgc-cr", code_params={"n": 4, "c": 2}, wait="fastest:2",
    ...                   delay="exp:1", rounds=5, dataset="iris", backend="virtual")
    >>> result = train(cfg, progress=False)
    >>> len(result.records), result.records[-1].workers_arrived, result.out, result.interrupted
    (5, 2, None, False)
    >>> result.summary["rounds"], result.summary["mean_recovered_fraction"]
    (5, 0.8)
    >>> result.backend_info
    'virtual: the injected delays on a virtual clock, gradients in this process'
    >>> "waitout_rule" in result.summary                  # a single-round code: no wait-outs
    False
    >>> import dataclasses
    >>> seq = train(dataclasses.replace(cfg, code="gc-seq", code_params={"n": 4, "s": 1}),
    ...             progress=False)                       # sequential, T = 0: one model
    >>> {k: seq.summary[k] for k in ("models", "jobs", "waitout_rule", "waitouts")}
    {'models': 1, 'jobs': 5, 'waitout_rule': 'deadline', 'waitouts': 5}
    """
    records: list[Record]
    model: torch.nn.Module           # models[0]
    out: Path | None
    events: list[str] = field(default_factory=list)
    backend_info: str = ""
    master_s: list[float] = field(default_factory=list)   # per round: time not blocked on workers
    interrupted: bool = False        # Ctrl-C: the finished rounds are kept and written
    diverged: int | None = None      # the round after which the loss was not finite
    models: list = field(default_factory=list)   # the M = T + 1 models (one for T = 0)
    already_finished: bool = False   # resumed a run that had already run its rounds
    account: WorkerAccount | None = None   # per worker: the rounds that used its result
    interrupted_by: str | None = None      # "Ctrl-C" or "SIGTERM"
    sequential: dict = field(default_factory=dict)   # models, jobs, waitout_rule, waitout_rounds
    stopped: str | None = None       # on_round raised StopTraining (its message)

    @property
    def summary(self) -> dict:
        return {**summarize(self.records), **self.sequential}


def split_partitions(data, sizes, rng, test_fraction: float = 0.0) -> dict:
    """Partition ``j`` of the training rows as ``train`` splits them: ``{j: (X, y)}`` (a
    ``Live`` partition for a ``Dataset``), after ``test_fraction`` of the rows is held out.
    ``sizes`` are the partitions' shares of the rows, summing to 1 (a code's
    ``partition_sizes``).

    >>> import gradcode
    >>> from gradcode.runtime import load_torch_data, split_partitions
    >>> code = gradcode.make_code("gc-cr", n=4, s=1)
    >>> parts = split_partitions(load_torch_data("iris"), code.partition_sizes,
    ...                          np.random.default_rng(0), test_fraction=0.2)
    >>> {j: tuple(X.shape) for j, (X, y) in parts.items()}      # 120 of iris's 150 rows
    {0: (30, 4), 1: (30, 4), 2: (30, 4), 3: (30, 4)}
    """
    shares = check_shares("sizes", sizes, what=" (a code's partition_sizes)")
    parts = partition_rows(data, split_indices(len(data), shares, test_fraction, rng)[1])
    return {j: p.take() if isinstance(p, Rows) else p for j, p in parts.items()}


def _inputs(spec: RunSpec, model, loss_fn, data):
    """``(data, model, objective, layout)``: the given data, model and loss, or the run's (the
    model ``spec.model``); the loss's sum form and denominator (``Objective``) and what of the
    model travels (``Layout``), found on two rows; ValueError if they don't fit."""
    cfg = spec.config
    if data is None:
        data = load_torch_data(cfg.dataset, cfg.seed, cfg.data_dir)
    data = as_data(data)
    if isinstance(data, DatasetData) and (model is None or loss_fn is None):
        raise ValueError("model: training on your own Dataset needs model= and loss_fn= (e.g. "
                         "torch.nn.CrossEntropyLoss())")
    if cfg.loader_workers and not isinstance(data, DatasetData):
        raise ValueError(f"loader_workers: only with your own Dataset (tensors in memory are "
                         f"not read), got {cfg.loader_workers} with {data.name!r}")
    if model is None:
        model = build_model(spec.model, data, cfg.seed)
    if not isinstance(model, torch.nn.Module):
        raise ValueError(f"model: expected a torch.nn.Module, got {type(model).__name__}")
    loss_fn = loss_fn if loss_fn is not None else loss_for(data)
    if isinstance(data, DatasetData):                # floating inputs in the model's dtype
        data = dataclasses.replace(data, float_dtype=floating_dtype(model))
    X2, y2 = data.take([0, 1])                   # the Dataset's own error, with the sample
    try:
        objective = Objective.of(loss_fn, model, X2, y2)
        layout = Layout.of(model, X2)
    except LossError:
        raise
    except Exception as exc:                         # one line; the user's exception its cause
        shapes = tuple(tuple(t.shape[1:]) for t in tensors(X2))
        raise ValueError(f"model: does not fit dataset {data.name!r} (inputs "
                         f"{shapes[0] if len(shapes) == 1 else shapes}): {exc}".splitlines()[0]
                         ) from exc
    if not layout.params:
        raise ValueError("model: has no trainable parameter (every one has requires_grad=False)")
    return data, model, objective, layout


def _eval_sets(cfg, data, test_rows: np.ndarray):
    """``(training sample, held-out set or None)``: the fixed ``cfg.eval_samples`` training rows
    on which every round's loss is measured, and the held-out rows (test metrics)."""
    train_rows = np.setdiff1d(np.arange(len(data)), test_rows)
    sample = np.random.default_rng(cfg.seed).permutation(train_rows)[:cfg.eval_samples]
    return data.take(sample), (data.take(test_rows) if len(test_rows) else None)


def _measured(spec: RunSpec, inputs, rng, out) -> RunSpec:
    """``spec`` with paper 3's speeds measured (or, on resume, the stored ones)."""
    cfg, ckpt = spec.config, out / "checkpoint.pt" if out else None
    if cfg.resume and ckpt and ckpt.is_file():
        speeds = torch.load(ckpt, weights_only=False)["config"]["code_params"]["speeds"]
    else:
        speeds = measure_speeds(cfg, spec.n, inputs.model, inputs.objective, inputs.layout,
                                inputs.data, inputs.compute, rng, cfg.measure_speeds)
    return spec.with_speeds(speeds)


@dataclass
class _Inputs:
    """What a run is built from besides its config and scheme (``_build_inputs``)."""
    data: object
    model: torch.nn.Module
    objective: object                # the loss's sum form and denominator (``Objective``)
    layout: object                   # what of the model travels (``Layout``)
    wait: object
    delay: object
    compute: object
    rng: dict                        # the run's random streams (``engine.streams``)
    out: Path | None
    fingerprint: dict = field(default_factory=dict)   # what a resumed run must match
    notes: list = field(default_factory=list)         # the run's first lines (its wait policy)


@dataclass
class _Plan:
    """The scheme's planner for the run's jobs, the data split into its partitions (and which
    worker holds which), the samples per partition in a round and the learner (``_plan``)."""
    planner: object
    partitions: dict
    rows: dict                       # partition -> its sample indices
    held: list
    counts: np.ndarray
    learner: TorchLearner


def train(config: TrainConfig | RunSpec, *, model=None, loss_fn=None, data: TorchData | None = None,
          progress: bool | None = None, on_round=None, optimizer=None,
          scheduler=None) -> TrainResult:
    """Train ``model`` (default: built from ``config``) with coded gradients; see module doc.
    ``config`` a ``TrainConfig``, or one already resolved (``resolve``: a ``RunSpec``).
    With an exact code and no straggler lost, each round is the step plain PyTorch takes with
    the whole training set (``batch`` None) as one batch.

    ``model`` is trained in place (for a sequential scheme's ``M`` models, it is the first; the
    others start as copies of it).  ``loss_fn`` (default: the dataset's) may be any ``torch.nn``
    loss with any ``reduction``, or a function of ``(output, target)`` (``runtime._loss``): it
    keeps PyTorch's meaning (a mean over the whole training set, with the loss's own
    denominator; a sum for ``"sum"``).  ``data`` a ``TorchData`` or a map-style
    ``torch.utils.data.Dataset`` (``runtime._data``: items ``(x, y)``, ``(x1, ..., y)`` or
    dicts).  ``optimizer(params)`` may return any ``torch.optim.Optimizer`` (default: the
    config's), ``scheduler(optimizer)`` any LR scheduler, stepped once after each round in
    which its model stepped; a sequential scheme has one of each per model.

    ``progress`` (default: when stderr is a terminal) shows a progress bar.
    ``on_round(round, record, info)`` is called after each round with the engine's
    ``RoundInfo`` (the executor, the decoding, the steps taken with their parameters and
    gradients, ...); tests inject faults through it.

    Your own model, loss and data, on the virtual backend (the injected delays on a virtual
    clock, real gradients), writing the run's files into ``run/``:

    >>> import torch
    >>> from gradcode.runtime import TrainConfig, load_torch_data, train
    >>> _ = torch.manual_seed(0)
    >>> cfg = TrainConfig(code="gc-cr", code_params={"n": 4, "s": 1}, wait="decodable",
    ...                   delay="exp:1", rounds=5, lr=0.5, backend="virtual", out="run")
    >>> result = train(cfg, model=torch.nn.Linear(4, 3), loss_fn=torch.nn.CrossEntropyLoss(),
    ...                data=load_torch_data("iris"), progress=False)
    >>> [round(r.loss, 2) for r in result.records]                # the mean loss, every round
    [0.67, 0.58, 0.53, 0.5, 0.47]
    >>> result.summary["exact_fraction"], round(result.summary["total_time_s"], 2)   # virtual s
    (1.0, 6.72)
    >>> sorted(p.name for p in result.out.iterdir())
    ['checkpoint.pt', 'events.log', 'model.pt', 'plot.png', 'rounds.csv', 'summary.json']
    """
    spec = _resolved(config, model is not None, data is not None)
    check_own(spec.config, optimizer, scheduler)
    spec, inputs = _build_inputs(spec, model, loss_fn, data)
    cfg, scheme = spec.config, spec.scheme
    plan = _plan(cfg, scheme, inputs, optimizer, scheduler)
    start = restore(inputs.out, cfg, int(scheme.T), plan.planner, inputs.delay, plan.learner,
                    inputs.rng["delay"], inputs.fingerprint)   # round 0, or the checkpoint's
    session = Session(spec, inputs, plan, start, on_round)   # executor and loop
    session.run(sys.stderr.isatty() if progress is None else progress)   # rounds and outputs
    return _finish(session)


def _resolved(config, own_model: bool, own_data: bool) -> RunSpec:
    """``config`` resolved for a run with (or without) the caller's own model and data: a
    ``RunSpec`` resolved so already is taken as it is."""
    if isinstance(config, RunSpec):
        if config.fits(own_model, own_data):
            return config
        config = config.given
    return resolve(config, own_model=own_model, own_data=own_data)


def _build_inputs(spec: RunSpec, model, loss_fn, data):
    """``(spec, _Inputs)``: the data, model and loss (the run's where not given), the wait
    policy, delay and compute models, the random streams and the output folder; with
    ``measure_speeds``, paper 3's speeds measured into the spec's config and scheme."""
    cfg = spec.config
    if cfg.out and Path(cfg.out).exists() and not Path(cfg.out).is_dir():
        raise ValueError(f"out: {cfg.out!r} is not a folder")
    data, model, objective, layout = _inputs(spec, model, loss_fn, data)
    out = Path(cfg.out) if cfg.out else None
    inputs = _Inputs(data, model, objective, layout, spec.wait, spec.delay, spec.compute,
                     streams(cfg.seed), out, fingerprint(model, data, objective),
                     list(spec.notes))
    if cfg.measure_speeds:               # paper 3 with measured throughputs c_i
        spec = _measured(spec, inputs, inputs.rng["probe"], out)
    return spec, inputs


def _plan(cfg, scheme, inputs: _Inputs, optimizer=None, scheduler=None) -> _Plan:
    """The planner for ``rounds - T`` jobs, the partitions (after the held-out share) and the
    ones each worker holds (all of them with shuffling), the delay models started, the wait
    policy checked, and the learner of the ``T + 1`` models."""
    n, data, rng = int(scheme.n_workers), inputs.data, inputs.rng
    planner = scheme.planner(jobs_for(scheme, cfg.rounds), cfg.waitout, decode_seed=cfg.seed,
                             shuffle_rng=rng["shuffle"] if cfg.shuffle else None)
    test_rows, rows = split_indices(len(data), scheme.partition_sizes, cfg.test_fraction,
                                    rng["data"])
    partitions = partition_rows(data, rows)
    counts = np.array([len(batch_indices(len(rows[j]), cfg.batch, 0, 0, j))
                       for j in range(scheme.n_partitions)], float)
    held = [range(scheme.n_partitions) if cfg.shuffle else scheme.placement[i] for i in range(n)]
    start_models(scheme, inputs.delay, inputs.compute, rng["delay"])
    eval_set, test_set = _eval_sets(cfg, data, test_rows)
    if cfg.lr_schedule is not None:                  # each model's steps: its share of the jobs
        M = int(scheme.T) + 1
        scheduler = scheduler_for(cfg.lr_schedule, -(-jobs_for(scheme, cfg.rounds) // M))
    learner = TorchLearner(inputs.model, int(scheme.T) + 1, cfg, counts, inputs.objective,
                           inputs.layout, eval_set, test_set,
                           infer_task(data, inputs.objective, eval_set[1]), optimizer, scheduler)
    return _Plan(planner, partitions, rows, held, counts, learner)


def _finish(session: Session) -> TrainResult:
    """The run's result (``finished``: Interrupted or Diverged raised with it; NothingRecovered
    when no round recovered anything), or the user's own exception re-raised once the finished
    rounds are written."""
    if session.raised is not None:
        raise session.raised
    models = session.learner.models
    result = TrainResult(session.records, models[0], session.out, session.events, session.info,
                         session.master_s, session.interrupted, session.diverged, models=models,
                         already_finished=session.already, account=session.loop.account,
                         interrupted_by=session.interrupted_by, sequential=session.sequential,
                         stopped=None if session.stopped is None else str(session.stopped))
    if session.nothing:
        raise NothingRecovered(result, session.nothing)
    return finished(result)
