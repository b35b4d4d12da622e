"""Multi-model pipelined training for sequential schemes (paper 4, Remark 2.1 and App. I).

A sequential scheme (``gc-seq``, ``sr-sgc``, ``m-sgc``, ``-rep`` variants) decodes job ``j`` by
the end of round ``j + T``, so ``M = T + 1`` models train round-robin: job ``j`` is iteration
``j // M`` of model ``j % M`` (``sequential.pipeline``), computed at that model's parameters, and
steps it when it decodes, before its next job starts in round ``j + M``.  Mirrors the simulator
(``sim._sequential``): ``rounds`` rounds run ``rounds - T`` jobs; a round broadcasts the ``(M, P)``
parameters once, collects under the wait policy (``decodable``: until no wait-out is needed),
waits for everyone if the planner's wait-out rule says so (up to ``round_timeout_s``), reports
the returned set and steps each decodable job's model with the planner's weights over the
stored results.  Records as the simulator's (``recovered_fraction`` NaN in the first ``T``
rounds, ``waitout``, ``jobs_finished``), ``time_s`` wall-clock, ``loss`` the mean over models.
Wait-out rule: ``config.waitout`` (``"deadline"`` when None).  The checkpoint holds
every model and optimizer, the planner and the results later rounds still use, so ``resume``
continues the same run.  ``shuffle`` is not supported for sequential schemes (the planner's
tasks already depend on who straggled).
"""

from __future__ import annotations

import copy
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import torch

from ..codes._registry import code_class, code_parameters
from ..records import Record, finished, read_records, write_records
from ..sequential import SequentialScheme, pipeline
from ..sequential._planner import check_rule
from ..sim import parse_wait
from ..stragglers._delays import parse_compute, parse_delay
from ._executors import make_executor
from ._master import (TrainResult, _combine, _eval_set, _flatten_parameters, _inputs, _interrupted,
                      _progress, _resumed, _split, _step, _submit, _usable, _write_outputs,
                      load_checkpoint, save_checkpoint)
from ._worker import batch_indices


@dataclass
class PipelinedResult(TrainResult):
    models: list = field(default_factory=list)      # the M models (``model`` is models[0])


@dataclass
class PipelineRoundInfo:
    executor: object
    returned: np.ndarray     # (n,) bool: workers whose results the round used (after a wait-out)
    waitout: bool
    steps: list              # per job decoded this round: (job, model, params, mean gradient)


def is_sequential(config) -> bool:
    try:
        return issubclass(code_class(config.code), SequentialScheme)
    except ValueError:
        return False


def _scheme(name: str, params: dict) -> SequentialScheme:
    """The scheme; derived values in ``params`` (e.g. SR-SGC's ``s`` from ``scheme.params``) must
    agree with the scheme's."""
    ctor = code_parameters(name)
    scheme = code_class(name)(**{k: v for k, v in params.items() if k in ctor})
    for k, v in params.items():
        if k not in ctor and scheme.params.get(k, object()) != v:
            raise ValueError(f"{k}: not a parameter of {name!r}; it takes {', '.join(ctor)}")
    return scheme


class _Models:
    """The ``M`` replicas (App. I), each with its own optimizer and flat parameter vector."""

    def __init__(self, model, M: int, cfg):
        self.models = [copy.deepcopy(model) for _ in range(M)]
        self.flats, self.spans = zip(*(_flatten_parameters(m) for m in self.models))
        self.optims = [torch.optim.SGD(m.parameters(), lr=cfg.lr, momentum=cfg.momentum)
                       if cfg.optimizer == "sgd" else torch.optim.Adam(m.parameters(), lr=cfg.lr)
                       for m in self.models]

    def params(self) -> np.ndarray:
        return np.stack([f.numpy() for f in self.flats])          # (M, P): one broadcast

    def step(self, m: int, g: np.ndarray) -> None:
        g32 = torch.from_numpy(g.astype(np.float32, copy=False))
        for p, (a, b) in zip(self.models[m].parameters(), self.spans[m]):
            p.grad = g32[a:b].view_as(p)
        _step(self.optims[m])

    def loss(self, loss_fn, X, y) -> float:
        with torch.no_grad():
            return float(np.mean([float(loss_fn(m(X), y)) for m in self.models])) / len(y)


class _Arrivals:
    """One round's results: ``got`` (worker -> coded vectors, in arrival order) and ``times``."""

    def __init__(self, ex, r, expected, cfg, dropped, log):
        self.ex, self.r, self.expected, self.cfg = ex, r, expected, cfg
        self.dropped, self.log = dropped, log
        self.t0 = time.perf_counter()
        self.got, self.times, self.answered, self.backlog = {}, [], 0, []

    def _take(self, res) -> bool:
        if res.round != self.r:
            return False                                 # stale: an earlier round's straggler
        self.answered += 1
        if not res.finite:
            self.log(f"round {self.r}: worker {res.worker} returned non-finite values; erased")
            return False
        if not _usable(res, self.r, self.cfg, self.dropped, self.log):
            return False
        self.got[res.worker] = res.coded
        self.times.append(time.perf_counter() - self.t0)
        return True

    def wait(self, stop, wanted) -> None:
        """Until ``stop()`` (seconds after the round started; inf while undetermined) passes,
        every expected worker answered, or the round times out."""
        timeout = self.cfg.round_timeout_s
        while True:
            while self.backlog:
                if self._take(self.backlog.pop(0)) and self.times[-1] >= stop():
                    return
            now = time.perf_counter() - self.t0
            t_stop = min(stop() if self.expected > 0 else now, timeout)
            if self.answered >= self.expected or now >= t_stop:
                if now >= timeout and self.answered < self.expected:
                    self.log(f"round {self.r}: timed out after {timeout:.1f} s")
                return
            self.backlog = list(self.ex.poll(t_stop - now, wanted()))


def train_pipelined(config, *, model=None, loss_fn=None, data=None, progress: bool = True,
                    on_round=None) -> PipelinedResult:
    """Train ``M = T + 1`` copies of ``model`` with a sequential scheme (module doc; paper 4,
    App. I).  ``on_round(round, record, PipelineRoundInfo)`` is called after each round.
    ValueError for ``shuffle`` (not supported for sequential schemes)."""
    cfg = config.validate()
    scheme = _scheme(cfg.code, cfg.code_params)
    T, n = int(scheme.T), int(scheme.n)
    if cfg.rounds <= T:
        raise ValueError(f"rounds: {scheme.name} decodes job t by round t + T (T = {T}), so rounds "
                         f"= jobs + T must be at least {T + 1}, got {cfg.rounds}")
    if cfg.shuffle:                               # the planner's tasks depend on who straggled
        raise ValueError("shuffle: not supported for sequential schemes")
    rule = check_rule(cfg.waitout or "deadline")
    wait, delay, compute = parse_wait(cfg.wait), parse_delay(cfg.delay), parse_compute(cfg.compute)
    if wait.needs_code and rule == "never":
        raise ValueError("wait: 'decodable' waits until the planner needs no wait-out, which "
                         "waitout='never' never asks for; choose another wait policy or rule")
    cfg, data, model, loss_fn = _inputs(cfg, model, loss_fn, data)
    M, jobs = T + 1, cfg.rounds - T
    pipe = pipeline(scheme, M)
    out = Path(cfg.out) if cfg.out else None
    seeds = np.random.SeedSequence(cfg.seed).spawn(4)        # train()'s streams: the same split
    data_rng, delay_rng = (np.random.Generator(np.random.PCG64(s)) for s in seeds[:2])
    partitions = _split(data, np.asarray(scheme.partition_sizes), data_rng)
    total = float(sum(len(batch_indices(len(partitions[j][1]), cfg.batch, 0, 0, j))
                      for j in range(scheme.n_partitions)))  # samples a decoded job covers
    held = [[int(j) for j in scheme.placement[i]] for i in range(n)]
    dtype = np.float32 if getattr(scheme.base_code, "is_sum_code", True) else np.float64
    load = float(np.max(scheme.load))
    loads = np.full(n, load)                              # every worker, every round (App. J)
    for model_ in (delay, compute):      # validates: a trace's or the speeds' worker count
        model_.start(delay_rng, n)
    wait.check(n)
    models = _Models(model, M, cfg)
    planner = scheme.planner(jobs, rule)
    finish = np.full(jobs, -1)
    store: dict[int, dict] = {}            # round -> worker -> its coded vector per slot
    records, events, master_s, elapsed, start = [], [], [], 0.0, 0
    dropped: set[int] = set()
    if out and cfg.resume:           # a failed resume leaves no empty folder
        st = load_checkpoint(out, cfg)
        if st["config"]["rounds"] != cfg.rounds:     # the planner was built for its jobs
            raise ValueError(f"rounds: resuming a sequential scheme needs the checkpointed "
                             f"run's rounds ({st['config']['rounds']}), got {cfg.rounds}")
        for m, o, ms, os_ in zip(models.models, models.optims, st["models"], st["optimizers"]):
            m.load_state_dict(ms)
            o.load_state_dict(os_)
        delay_rng.bit_generator.state = st["rng"]
        delay, planner, finish, store = st["delay_model"], st["planner"], st["finish"], st["store"]
        start, elapsed = st["round"], st["elapsed"]
        records = read_records(out / "rounds.csv")[:start]
        events, dropped = _resumed(out, st)
    X_eval, y_eval = _eval_set(cfg, data)
    ex, info = make_executor(cfg, n, held, partitions, model, loss_fn, dtype)
    bar, interrupted = None, False
    try:
        ex.ping()
        if out:                          # only now: bad input (even a dead Ray address) writes nothing
            out.mkdir(parents=True, exist_ok=True)
            write_records(out / "rounds.csv", records)
        bar, log = _progress(progress, cfg, start, f"{cfg.code} x{M} models", info, events)
        for r in range(start, cfg.rounds):
            tasks = [[(t.job, t.partitions, t.coefficients, int(pipe.model(t.job))) for t in row]
                     for row in planner.assign(r)]
            delays = delay.sample(delay_rng, r, loads) + compute.sample(delay_rng, r, loads)
            blocked0 = ex.blocked_s
            arr = _Arrivals(ex, r, 0, cfg, dropped, log)
            arr.expected = _submit(ex, r, models.params(), tasks, delays, n, dropped, log)
            need = SimpleNamespace(s=None, decode=lambda got, rng=None: SimpleNamespace(
                exact=not planner.waitout(r, list(got))))     # 'decodable': no wait-out needed
            left = lambda: arr.expected - arr.answered          # noqa: E731
            arr.wait(lambda: wait.online_stop(arr.times, n, need, list(arr.got)),
                     lambda: wait.wanted(len(arr.times), len(arr.times) + left()))
            out_r = planner.waitout(r, list(arr.got))
            if out_r:                                      # the planner needs everyone's results
                arr.wait(lambda: math.inf, left)
                if len(arr.got) < n:
                    log(f"round {r}: wait-out without workers "
                        f"{sorted(set(range(n)) - set(arr.got))}; a job may be lost")
            ex.end_round(r)
            done = planner.report(r, list(arr.got))
            finish[done] = r
            store[r] = arr.got
            steps = []
            for job in done:
                m, w = int(pipe.model(job)), planner.weights(job)
                g = _combine(np.array(list(w.values())) / total,
                             [store[rr][i][k] for rr, i, k in w])
                if not np.isfinite(g).all():
                    log(f"round {r}: job {job}'s decoded gradient overflowed; step skipped")
                    continue
                if on_round is not None:
                    steps.append((job, m, models.flats[m].numpy().copy(), g))
                models.step(m, g)
            store.pop(r - T, None)                         # no job left that uses round r - T
            dt = time.perf_counter() - arr.t0
            elapsed += dt
            master_s.append(dt - (ex.blocked_s - blocked0))
            frac, err, exact = ((math.nan, math.nan, False) if r < T else (1.0, 0.0, True)
                                if finish[r - T] >= 0 else (0.0, float(scheme.n_partitions), False))
            rec = Record(round=r, time_s=dt, elapsed_s=elapsed, workers_arrived=len(arr.got),
                         recovered_fraction=frac, decode_error=err, exact=exact, load=load,
                         waitout=out_r, jobs_finished=len(done),
                         loss=models.loss(loss_fn, X_eval, y_eval))
            records.append(rec)
            if out:
                write_records(out / "rounds.csv", [rec], append=True)
                if (r + 1) % cfg.checkpoint_every == 0 or r + 1 == cfg.rounds:
                    save_checkpoint(out, cfg, r + 1, elapsed, dropped, planner=planner,
                                    finish=finish, store=store, delay_model=delay,
                                    rng=delay_rng.bit_generator.state,
                                    models=[m.state_dict() for m in models.models],
                                    optimizers=[o.state_dict() for o in models.optims])
            if bar is not None:
                bar.set_postfix(loss=f"{rec.loss:.4f}", waitouts=len(planner.waitouts),
                                s_per_round=f"{dt:.3f}")
                bar.update(1)
            if on_round is not None:
                on_round(r, rec, PipelineRoundInfo(ex, np.isin(np.arange(n), list(arr.got)),
                                                   out_r, steps))
    except KeyboardInterrupt:
        interrupted = _interrupted(events, records)
    finally:
        if bar is not None:
            bar.close()
        ex.close()
    if out:
        _write_outputs(out, events, records,
                       {"models": M, "jobs": jobs, "waitout_rule": rule, "waitouts": planner.waitouts,
                        "config": cfg.as_dict(), "backend": info, "interrupted": interrupted},
                       f"{scheme!r}, {M} models pipelined")
    return finished(PipelinedResult(records, models.models[0], out, events, info, master_s,
                                    interrupted, models=models.models))
