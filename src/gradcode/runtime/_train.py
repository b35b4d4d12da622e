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
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from ..folders import FolderLock
from ..engine import (Loop, Stopper, WorkerAccount, drive, is_user_error, jobs_for, parse_wait,
                      start_models, streams)
from ..records import (Record, describe_run, finished, read_records, summarize,
                       write_records)
from ..registry import code_class, code_parameters
from ..stragglers import parse_compute, parse_delay
from ._checkpoint import JOBS_CHECKPOINT, load_checkpoint, resumed_events, save_checkpoint
from ._config import DEFAULT_LR, TrainConfig
from ._audit import Auditor
from ._executors import make_executor, measure_speeds, resolve_device
from ._learner import TorchLearner
from ._loss import LossError, summed
from ._data import (DEFAULT_TEST_FRACTION, DatasetData, as_data, infer_task, partition_rows,
                    split_indices)
from ._models import DEFAULT_MODEL, TorchData, build_model, load_torch_data, loss_for
from ._outputs import write_outputs
from ._worker import batch_indices


@dataclass
class TrainResult:
    """What ``train`` returns: one ``Record`` per round (the simulator's columns), the trained
    model(s), the output folder (None without ``out``), the run's events and how it ended;
    ``summary`` condenses the records as ``summary.json`` does.

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

    @property
    def summary(self) -> dict:
        return summarize(self.records)


def split_partitions(data, sizes, rng, test_fraction: float = 0.0) -> dict:
    """Partition ``j`` of the training rows as ``train`` splits them: ``{j: (X, y)}`` (a
    ``Lazy`` partition for a ``Dataset``), after ``test_fraction`` of the rows is held out.
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
    shares = np.asarray(sizes, dtype=float)
    if not (np.all(shares >= 0) and abs(shares.sum() - 1.0) <= 1e-9):
        raise ValueError(f"sizes: expected shares >= 0 summing to 1 (a code's partition_sizes), "
                         f"got {sizes!r} (sum {shares.sum():.6g})")
    return partition_rows(data, split_indices(len(data), shares, test_fraction, rng)[1])


def build_scheme(name: str, params: dict):
    """``make_code(name, **params)``, where derived values in ``params`` (e.g. SR-SGC's ``s``, as
    ``scheme.params`` lists them) must agree with the scheme's."""
    ctor = code_parameters(name)
    missing = [k for k, p in ctor.items() if p.default is p.empty and k not in params]
    if missing:
        raise ValueError(f"{missing[0]}: {name!r} needs {', '.join(missing)}")
    scheme = code_class(name)(**{k: v for k, v in params.items() if k in ctor})
    for k, v in params.items():
        if k not in ctor and scheme.params.get(k, object()) != v:
            raise ValueError(f"{k}: not a parameter of {name!r}; it takes {', '.join(ctor)}")
    return scheme


def _inputs(cfg, model, loss_fn, data):
    """``(cfg, data, model, loss_fn)``: the given ones, or the config's (and ``cfg`` with its
    default learning rate and held-out share filled in); ValueError if they don't fit."""
    if data is None:
        data = load_torch_data(cfg.dataset, cfg.seed, cfg.data_dir)
        if cfg.test_fraction is None:
            cfg = dataclasses.replace(cfg, test_fraction=DEFAULT_TEST_FRACTION)
    data = as_data(data)
    if isinstance(data, DatasetData) and (model is None or loss_fn is None):
        raise ValueError("model: training on your own Dataset needs model= and loss_fn= (e.g. "
                         "torch.nn.CrossEntropyLoss())")
    if cfg.test_fraction is None:
        cfg = dataclasses.replace(cfg, test_fraction=0.0)
    name = None
    if model is None:
        name = cfg.model or DEFAULT_MODEL.get(cfg.dataset, "mlp")
        model = build_model(name, data, cfg.seed)
    loss_fn = loss_fn if loss_fn is not None else loss_for(data)
    X2, y2 = data.take([0, 1])                   # the Dataset's own error, with the sample
    try:
        loss_fn = summed(loss_fn, model, X2, y2)     # PyTorch's default mean, or none: as a sum
        with torch.no_grad():
            loss_fn(model(X2), y2)
    except LossError:
        raise
    except Exception as exc:                         # one line; the user's exception its cause
        raise ValueError(f"model: does not fit dataset {data.name!r} "
                         f"(inputs {tuple(X2.shape[1:])}): {exc}".splitlines()[0]) from exc
    if cfg.lr is None:
        lr = DEFAULT_LR.get((cfg.optimizer, name), DEFAULT_LR[cfg.optimizer])
        cfg = dataclasses.replace(cfg, lr=lr)
    return cfg, data, model, loss_fn


def _eval_sets(cfg, data, test_rows: np.ndarray):
    """``(training sample, held-out set or None)``: the fixed ``cfg.eval_samples`` training rows
    on which every round's loss is measured, and the held-out rows (test metrics)."""
    train_rows = np.setdiff1d(np.arange(len(data)), test_rows)
    sample = np.random.default_rng(cfg.seed).permutation(train_rows)[:cfg.eval_samples]
    return data.take(sample), (data.take(test_rows) if len(test_rows) else None)


def _progress(progress: bool, cfg, start: int, desc: str, info: str, events: list):
    """``(bar or None, log)``: ``log(msg)`` appends to ``events`` and prints above the bar."""
    bar = None
    if progress:
        from tqdm.auto import tqdm
        bar = tqdm(total=cfg.rounds, initial=start, unit="round", desc=desc)
        bar.write(info)

    def log(msg):
        events.append(msg)
        if bar is not None:
            bar.write(msg)
    return bar, log


def _measured(cfg, scheme, model, loss_fn, data, compute, rng, out):
    """``cfg`` and the scheme with paper 3's speeds measured (or, on resume, the stored ones)."""
    ckpt = out / "checkpoint.pt" if out else None
    if cfg.resume and ckpt and ckpt.is_file():
        speeds = torch.load(ckpt, weights_only=False)["config"]["code_params"]["speeds"]
    else:
        speeds = measure_speeds(cfg, scheme.n_workers, model, loss_fn, data, compute, rng,
                                cfg.measure_speeds)
    cfg = dataclasses.replace(cfg, code_params={**cfg.code_params, "speeds": speeds})
    return cfg, build_scheme(cfg.code, cfg.code_params)


def _resume(out, cfg, T: int, learner, delay_rng):
    """The checkpointed run's state: ``(start, elapsed, events, records, dropped, store, tasks,
    delay model, planner, per-worker account)``, with the learner and the delay stream
    restored."""
    state = load_checkpoint(out, cfg)
    planner, before = state["planner"], state["config"]["rounds"]
    if planner.rule is not None and cfg.rounds != before:   # a sequential scheme's jobs change
        if cfg.rounds < before:
            raise ValueError(f"rounds: a sequential scheme's run can be extended, not cut: the "
                             f"checkpoint is of a run of {before} rounds, got {cfg.rounds}")
        if state["round"] > before - T:    # past its last jobs' start: from the round before
            state = load_checkpoint(out, cfg, JOBS_CHECKPOINT)
            planner = state["planner"]
        planner = planner.extended(cfg.rounds - T)
    elif cfg.rounds > before:
        planner = planner.extended(cfg.rounds - T)
    events, dropped = resumed_events(out, state)
    learner.load_state(state["learner"])
    delay_rng.bit_generator.state = state["rng"]
    start = state["round"]
    return (start, state["elapsed"], events, _records_until(out, start), dropped,
            state["store"], state.get("tasks", {}), state["delay_model"], planner,
            state.get("account"))


def _before_first_checkpoint(out) -> bool:
    """``out`` holds a run interrupted before it wrote a checkpoint (``--resume`` starts it over
    rather than refusing: nothing of it could be lost, the seed gives the same rounds)."""
    summary = out / "summary.json"
    if (out / "checkpoint.pt").exists() or not summary.is_file():
        return False
    try:
        return json.loads(summary.read_text()).get("interrupted") is True
    except (ValueError, AttributeError):
        return False


def _records_until(out, start: int) -> list[Record]:
    """The rows of rounds ``0 .. start - 1`` in ``out/rounds.csv`` (by their ``round`` column;
    rows of later rounds, written after the checkpoint, are dropped); ValueError when the file is
    missing, unreadable or lacks one of those rounds: the folder is not the checkpoint's run."""
    path = out / "rounds.csv"
    try:
        records = read_records(path)
    except FileNotFoundError:
        raise ValueError(f"resume: {str(path)!r} is missing, so the folder does not hold the "
                         f"checkpoint's run (round {start}); nothing was changed") from None
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"resume: {str(path)!r} is not a rounds.csv gradcode wrote "
                         f"({type(exc).__name__}); nothing was changed") from None
    kept = sorted((r for r in records if r.round < start), key=lambda r: r.round)
    if [r.round for r in kept] != list(range(start)):
        have = sorted({r.round for r in kept})
        missing = sorted(set(range(start)) - set(have))
        what = f"lacks rounds {missing[:5]}" if missing else "holds some rounds twice"
        raise ValueError(f"resume: {str(path)!r} {what} of the checkpoint's {start}; the folder "
                         "is not one consistent run; nothing was changed")
    return kept


def _save_round(out, cfg, r: int, rec, loop, learner, delay, delay_rng) -> None:
    """Append round ``r``'s record to rounds.csv; every ``checkpoint_every`` rounds (and the
    last) the checkpoint that ``resume`` continues from."""
    write_records(out / "rounds.csv", [rec], append=True)
    if (r + 1) % cfg.checkpoint_every == 0 or r + 1 == cfg.rounds:
        _checkpoint(out, cfg, r + 1, rec.elapsed_s, loop, learner, delay, delay_rng)
    if loop.T and r + 1 == cfg.rounds - loop.T:   # where a longer run would go on differently
        _checkpoint(out, cfg, r + 1, rec.elapsed_s, loop, learner, delay, delay_rng,
                    JOBS_CHECKPOINT)


def _checkpoint(out, cfg, next_round: int, elapsed: float, loop, learner, delay,
                delay_rng, name: str = "checkpoint.pt") -> None:
    """The state after round ``next_round - 1`` (a finished round) as ``name``."""
    save_checkpoint(out, cfg, next_round, elapsed, loop.dropped, name, learner=learner.state(),
                    planner=loop.planner, store=loop.store, delay_model=delay,
                    rng=delay_rng.bit_generator.state, account=loop.account.state(),
                    tasks=loop.tasks)


def _write_run(out, cfg, scheme, loop, events, records, info, where, interrupted,
               diverged) -> None:
    """A run's events.log, summary.json and plot.png (also after Ctrl-C, SIGTERM or divergence;
    ``interrupted``: which, or None)."""
    T = int(scheme.T)
    extra = {"config": cfg.as_dict(), "backend": info, "interrupted": interrupted is not None,
             "interrupted_by": interrupted,
             "diverged_at_round": diverged, **where, **loop.account.summary()}
    if T:
        extra.update(models=T + 1, jobs=cfg.rounds - T, waitout_rule=loop.planner.rule,
                     waitout_rounds=loop.planner.waitouts)
    model = cfg.model or (DEFAULT_MODEL.get(cfg.dataset, "mlp") if cfg.dataset else None)
    title = describe_run(scheme, dataset=cfg.dataset, model=model, wait=cfg.wait,
                         delay=cfg.delay, compute=cfg.compute, models=T + 1)
    write_outputs(out, events + loop.account.lines(), records, extra, title)


def train(config: TrainConfig, *, model=None, loss_fn=None, data: TorchData | None = None,
          progress: bool | None = None, on_round=None) -> TrainResult:
    """Train ``model`` (default: built from ``config``) with coded gradients; see module doc.

    ``loss_fn`` (default: the dataset's) may be any ``torch.nn`` loss, whatever its
    ``reduction`` (PyTorch's default ``"mean"`` included: its ``"sum"`` form is used), or a
    function of ``(output, target)`` that sums, averages or returns one loss per sample
    (``runtime._loss``); ``data`` a ``TorchData`` or a map-style ``torch.utils.data.Dataset``.

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
    ['checkpoint.pt', 'events.log', 'plot.png', 'rounds.csv', 'summary.json']
    """
    cfg = config.validate()
    if progress is None:
        progress = sys.stderr.isatty()
    if cfg.out and Path(cfg.out).exists() and not Path(cfg.out).is_dir():
        raise ValueError(f"out: {cfg.out!r} is not a folder")
    scheme = build_scheme(cfg.code, cfg.code_params)
    wait, delay, compute = parse_wait(cfg.wait), parse_delay(cfg.delay), parse_compute(cfg.compute)
    cfg, data, model, loss_fn = _inputs(cfg, model, loss_fn, data)
    out = Path(cfg.out) if cfg.out else None
    rng = streams(cfg.seed)
    if cfg.measure_speeds:               # paper 3 with measured throughputs c_i
        cfg, scheme = _measured(cfg, scheme, model, loss_fn, data, compute, rng["probe"], out)
    T, n = int(scheme.T), int(scheme.n_workers)
    planner = scheme.planner(jobs_for(scheme, cfg.rounds), cfg.waitout, decode_seed=cfg.seed,
                             shuffle_rng=rng["shuffle"] if cfg.shuffle else None)
    test_rows, rows = split_indices(len(data), scheme.partition_sizes, cfg.test_fraction,
                                    rng["data"])
    partitions = partition_rows(data, rows)
    counts = np.array([len(batch_indices(len(rows[j]), cfg.batch, 0, 0, j))
                       for j in range(scheme.n_partitions)], float)
    held = [range(scheme.n_partitions) if cfg.shuffle else scheme.placement[i] for i in range(n)]
    start_models(scheme, delay, compute, rng["delay"])
    wait.check(n)
    learner = TorchLearner(model, T + 1, cfg, counts, loss_fn, *_eval_sets(cfg, data, test_rows),
                           task=infer_task(data, model))
    start, elapsed, events, records, dropped, store, tasks, account = (0, 0.0, [], [], set(), {},
                                                                       {}, None)
    if out and cfg.resume and _before_first_checkpoint(out):
        events.append(f"resume: the run in {str(out)!r} was interrupted before its first "
                      "checkpoint; started over from round 0 (the same seed gives the same rounds)")
    elif out and cfg.resume:             # a failed resume leaves no empty folder
        (start, elapsed, events, records, dropped, store, tasks, delay,
         planner, account) = _resume(out, cfg, T, learner, rng["delay"])
    dtype = np.float32 if scheme.is_sum_code else np.float64
    ex, info = make_executor(cfg, n, held, partitions, model, loss_fn, dtype)
    bar, log = _progress(False, cfg, start, cfg.code, info, events)
    loop = Loop(scheme, planner, ex, wait, delay, compute, rng["delay"], learner=learner,
                timeout=cfg.round_timeout_s, log=lambda msg: log(msg), dropped=dropped,
                on_worker_death=cfg.on_worker_death, snapshot=on_round is not None,
                account=WorkerAccount(n, account),
                audit=Auditor(model, loss_fn, partitions, counts, cfg.seed, cfg.batch,
                              resolve_device(cfg.device)) if cfg.audit else None)
    loop.store, loop.tasks = store, tasks
    master_s: list[float] = []
    where: dict = {}      # nodes used during the run, and which workers run where at its end
    already = False       # resumed a run that had finished its rounds

    kept: list[Record] = []   # the rounds finished so far (kept if the user's code raises)
    raised = None             # the user's model, loss or data raised this in a worker

    def after(r, rec, round_info):
        kept.append(rec)
        master_s.append(loop.master_s)
        if out:
            _save_round(out, cfg, r, rec, loop, learner, delay, rng["delay"])
        if bar is not None:
            held_out = ({} if math.isnan(rec.test_accuracy) else
                        {"test_acc": f"{rec.test_accuracy:.3f}"})
            bar.set_postfix(loss=f"{rec.loss:.4f}", rec=f"{rec.recovered_fraction:.2f}",
                            s_per_round=f"{rec.time_s:.3f}", **held_out)
            bar.update(1)
        if on_round is not None:
            on_round(r, rec, round_info)

    desc = cfg.code if T == 0 else f"{cfg.code} x{T + 1} models"
    with contextlib.ExitStack() as owned:    # the output folder, this run's until it is written
        try:
            ex.ping()
            if out:                      # only now: bad input (even a dead Ray address) writes nothing
                out.mkdir(parents=True, exist_ok=True)
                owned.enter_context(FolderLock(out))
                write_records(out / "rounds.csv", records)
            bar, log = _progress(progress, cfg, start, desc, info, events)
            if start >= cfg.rounds:
                already = True
                log(f"the run in {str(out)!r} already finished its {start} rounds; nothing to "
                    f"do (--rounds more than {start} continues it)")
            if cfg.measure_speeds and not cfg.resume:
                log(f"measured worker speeds (paper 3's c_i, fastest = 1): "
                    f"{cfg.code_params['speeds']}")
            with Stopper() as stop:       # SIGTERM, Ctrl-C: finish the round, then end
                try:
                    new, interrupted, diverged = drive(loop, cfg.rounds, start=start,
                                                       elapsed=elapsed, on_round=after, stop=stop)
                except Exception as exc:  # the user's own error: the finished rounds written
                    if not is_user_error(exc):
                        raise
                    new, interrupted, diverged, raised = kept, False, None, exc
            records += new
            if stop() and out and len(records) > start:   # resumable from the last round
                _checkpoint(out, cfg, len(records), records[-1].elapsed_s, loop, learner, delay,
                            rng["delay"])
            where = {"nodes": len(ex.nodes_seen), "workers_by_node": ex.where()}
        finally:
            if bar is not None:
                bar.close()
            ex.close()
        by = stop.signal or "Ctrl-C"
        if interrupted:
            events.append(f"interrupted ({by}) after {len(records)} rounds")
        if out:
            _write_run(out, cfg, scheme, loop, events, records, info, where,
                       by if interrupted else None, diverged)
    if raised is not None:
        raise raised
    return finished(TrainResult(records, learner.models[0], out, events, info, master_s,
                                interrupted, diverged, models=learner.models,
                                already_finished=already, account=loop.account,
                                interrupted_by=by if interrupted else None))
