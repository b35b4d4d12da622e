"""One training run's rounds, once ``train`` has prepared its inputs, plan and starting state:
the executor and the engine's loop, the output folder (this run's, locked, from the first round
until its outputs are written), the progress bar and the event log, every round written to
``rounds.csv`` and checkpointed (with ``model.pt``, the trained ``state_dict``), and at the end
``events.log``, ``summary.json``, ``plot.png`` and ``model.pt`` (also after Ctrl-C, SIGTERM,
``StopTraining``, divergence, a run that recovered nothing, or the user's own exception)."""

from __future__ import annotations

import contextlib
import math

import numpy as np

from ..engine import Loop, Stopper, WorkerAccount, drive
from ..folders import FolderLock
from ..records import describe_run, write_records
from ._audit import Auditor
from ._checkpoint import JOBS_CHECKPOINT, save_checkpoint, save_model
from ._executors import make_executor, resolve_device
from ._outputs import write_outputs
from ._reading import close_loaders


class Progress:
    """The progress bar (once ``open``) and the run's event log: ``log(msg)`` appends to
    ``events`` and prints above the bar."""

    def __init__(self, events: list):
        self.events, self.bar = events, None

    def open(self, total: int, initial: int, desc: str, info: str) -> None:
        from tqdm.auto import tqdm
        self.bar = tqdm(total=total, initial=initial, unit="round", desc=desc)
        self.bar.write(info)

    def log(self, msg: str) -> None:
        self.events.append(msg)
        if self.bar is not None:
            self.bar.write(msg)

    def update(self, rec) -> None:
        if self.bar is None:
            return
        held_out = ({} if math.isnan(rec.test_accuracy) else
                    {"test_acc": f"{rec.test_accuracy:.3f}"})
        self.bar.set_postfix(loss=f"{rec.loss:.4f}", rec=f"{rec.recovered_fraction:.2f}",
                             s_per_round=f"{rec.time_s:.3f}", **held_out)
        self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def waitout_summary(cfg, scheme, planner) -> dict:
    """What ``summary.json`` adds for a scheme whose planner has a wait-out rule (every
    sequential scheme of paper 4, ``gc-seq`` with ``T = 0`` included): its ``M = T + 1`` models,
    its ``rounds - T`` jobs, the rule and the rounds waited out; ``{}`` for a single-round code
    (its planner's ``rule`` is None)."""
    if planner.rule is None:
        return {}
    T = int(scheme.T)
    return {"models": T + 1, "jobs": cfg.rounds - T, "waitout_rule": str(planner.rule),
            "waitout_rounds": list(planner.waitouts)}


class Session:
    """A run of ``cfg.rounds`` rounds from ``start`` (``_checkpoint.Resumed``): ``spec`` is the
    resolved run (``RunSpec``: config, scheme, the model's name), ``inputs`` has the model,
    loss, wait policy, compute model, random streams and output folder, ``plan`` the partitions
    each worker holds, the samples per partition and the learner (``runtime._train`` builds
    both).  ``run(progress)`` runs it; then ``records``, ``events``, ``interrupted``,
    ``diverged``, ``stopped``, ``nothing``, ``raised`` (the exception that ended the run, or None)
    and the rest say how it went."""

    def __init__(self, spec, inputs, plan, start, on_round=None):
        cfg, scheme = spec.config, spec.scheme
        self.cfg, self.scheme, self.out, self.on_round = cfg, scheme, inputs.out, on_round
        self.model_name = spec.model
        self.fingerprint, self.notes = inputs.fingerprint, inputs.notes
        self.learner, self.delay = plan.learner, start.delay_model
        self.delay_rng = inputs.rng["delay"]
        self.start, self.elapsed = start.start, start.elapsed
        self.records, self.events = start.records, start.events
        self.progress = Progress(self.events)
        n = int(scheme.n_workers)
        self.ex = make_executor(cfg, plan.held, plan.partitions, inputs.model, inputs.objective,
                                inputs.layout, np.dtype(cfg.wire).type, keep=int(scheme.T) + 1,
                                rows=plan.rows)
        self.info = self.ex.description
        audit = (Auditor(inputs.model, inputs.objective, inputs.layout, plan.partitions,
                         self.learner.normaliser, cfg.seed, cfg.batch,
                         resolve_device(cfg.device), cfg.micro_batch, cfg.precision,
                         cfg.loader_workers)
                 if cfg.audit else None)
        self.loop = Loop(scheme, start.planner, self.ex, inputs.wait, self.delay, inputs.compute,
                         self.delay_rng, learner=self.learner, timeout=cfg.round_timeout_s,
                         log=self.progress.log, dropped=start.dropped,
                         on_worker_death=cfg.on_worker_death, snapshot=on_round is not None,
                         account=WorkerAccount(n, start.account), audit=audit)
        self.loop.store, self.loop.tasks, self.loop.rounding, self.loop.stats = (
            start.store, start.tasks, start.rounding, start.stats)
        self.kept: list = []          # the rounds finished so far (kept if the user's code raises)
        self.master_s: list[float] = []   # per round: time not blocked on workers
        self.where: dict = {}         # nodes used during the run, and which workers run where
        self.already = False          # resumed a run that had finished its rounds
        self.raised = None            # the exception that ended the run, re-raised by ``train``
        self.interrupted, self.diverged, self.signal = False, None, None
        self.stopped = None           # the StopTraining that on_round raised
        self.nothing = None           # no round recovered anything: each worker's last result

    @property
    def interrupted_by(self) -> str | None:
        """``"Ctrl-C"`` or ``"SIGTERM"`` for an interrupted run, else None."""
        return (self.signal or "Ctrl-C") if self.interrupted else None

    @property
    def bytes_to_master(self) -> int:
        """Every byte the master received: on the executor's wire where it counts them (torch),
        else what the loop was handed (results, notices, residuals, hosts' sums)."""
        wire = self.ex.wire_bytes
        return int(self.loop.bytes_in if wire is None else wire)

    @property
    def sequential(self) -> dict:
        return waitout_summary(self.cfg, self.scheme, self.loop.planner)

    def run(self, progress: bool) -> None:
        """The rounds, with the output folder held from the first until the outputs are
        written; the executor closed whatever happens."""
        with contextlib.ExitStack() as owned:
            try:
                self.ex.ping()
                self._open_folder(owned)
                if progress:
                    self.progress.open(self.cfg.rounds, self.start, self._desc(), self.info)
                self._note_start()
                self._drive()
                self.where = {"nodes": len(self.ex.nodes_seen),
                              "workers_by_node": self.ex.where()}
            finally:
                self.progress.close()
                self.ex.close()
                close_loaders()
            if self.interrupted:
                self.events.append(f"interrupted ({self.interrupted_by}) after "
                                   f"{len(self.records)} rounds")
            if self.nothing:
                self.events.append(f"no round recovered anything: {self.nothing}")
            if self.out:
                self._write_outputs()

    def _desc(self) -> str:
        M = int(self.scheme.T) + 1
        return self.cfg.code if M == 1 else f"{self.cfg.code} x{M} models"

    def _open_folder(self, owned: contextlib.ExitStack) -> None:
        """Only now (bad input, even a dead Ray address, writes nothing): the output folder,
        locked for this run, and the rounds so far as ``rounds.csv``."""
        if self.out:
            self.out.mkdir(parents=True, exist_ok=True)
            owned.enter_context(FolderLock(self.out))
            write_records(self.out / "rounds.csv", self.records)

    def _note_start(self) -> None:
        cfg = self.cfg
        for note in self.notes:                      # the wait policy taken, a warning
            self.progress.log(note)
        if self.start >= cfg.rounds:
            self.already = True
            self.progress.log(f"the run in {str(self.out)!r} already finished its {self.start} "
                              f"rounds; nothing to do (--rounds more than {self.start} "
                              "continues it)")
        if cfg.measure_speeds and not cfg.resume:
            self.progress.log(f"measured worker speeds (paper 3's c_i, fastest = 1): "
                              f"{cfg.code_params['speeds']}")

    def _drive(self) -> None:
        """The rounds until the last, Ctrl-C or SIGTERM (the round finished, then checkpointed),
        ``StopTraining``, divergence, or an exception (the user's own, a bug of gradcode's, one
        raised by ``on_round``: re-raised once the finished rounds are written)."""
        with Stopper() as stop:
            try:
                new, self.interrupted, self.diverged = drive(
                    self.loop, self.cfg.rounds, start=self.start, elapsed=self.elapsed,
                    on_round=self._after, stop=stop)
            except Exception as exc:
                new, self.interrupted, self.diverged, self.raised = self.kept, False, None, exc
        self.signal, self.stopped = stop.signal, self.loop.stopped
        self.records += new
        if ((stop() or self.stopped is not None) and self.out
                and len(self.records) > self.start):                 # resumable from here
            self._checkpoint(len(self.records), self.records[-1].elapsed_s)
        if (new and not self.learner.steps and not self.interrupted and self.raised is None
                and self.diverged is None):
            self.nothing = self._last_results()

    def _last_results(self) -> str:
        """Each worker's last result, for a run that recovered nothing."""
        loop, arrived = self.loop, self.loop.account.counts["arrived"]
        def why(i):
            if i in loop.last_error:
                return loop.last_error[i]
            if arrived[i]:
                return "arrived, but nothing decodable came of it"
            return "never answered before its rounds ended (the wait policy or the round timeout)"
        return "; ".join(f"worker {i}: {why(i)}" for i in range(loop.n))

    def _after(self, r: int, rec, info) -> None:
        """After round ``r``: kept, written and checkpointed, shown, and passed to ``on_round``."""
        self.kept.append(rec)
        self.master_s.append(self.loop.master_s)
        if self.out:
            self._save_round(r, rec)
        self.progress.update(rec)
        if self.on_round is not None:
            self.on_round(r, rec, info)

    def _save_round(self, r: int, rec) -> None:
        """Append round ``r``'s record to rounds.csv; every ``checkpoint_every`` rounds (and the
        last) the checkpoint that ``resume`` continues from; and a sequential scheme's
        checkpoint of round ``rounds - T``, where a longer run would go on differently (none
        for ``T = 0``: that is the last round, whose checkpoint.pt serves)."""
        cfg, T = self.cfg, self.loop.T
        write_records(self.out / "rounds.csv", [rec], append=True)
        if (r + 1) % cfg.checkpoint_every == 0 or r + 1 == cfg.rounds:
            self._checkpoint(r + 1, rec.elapsed_s)
        if T > 0 and r + 1 == cfg.rounds - T:
            self._checkpoint(r + 1, rec.elapsed_s, JOBS_CHECKPOINT)

    def _checkpoint(self, next_round: int, elapsed: float, name: str = "checkpoint.pt") -> None:
        """The state after round ``next_round - 1`` (a finished round) as ``name``."""
        loop = self.loop
        save_model(self.out, self.learner.models[0])
        save_checkpoint(self.out, self.cfg, next_round, elapsed, loop.dropped, name,
                        learner=self.learner.state(), planner=loop.planner, store=loop.store,
                        delay_model=self.delay, rng=self.delay_rng.bit_generator.state,
                        account=loop.account.state(), tasks=loop.tasks, rounding=loop.rounding,
                        stats=loop.stats, fingerprint=self.fingerprint)

    def _write_outputs(self) -> None:
        """events.log, summary.json and plot.png."""
        cfg, scheme, loop = self.cfg, self.scheme, self.loop
        extra = {"config": cfg.as_dict(), "backend": self.info,
                 "interrupted": self.interrupted, "interrupted_by": self.interrupted_by,
                 "diverged_at_round": self.diverged,
                 "stopped_by_on_round": None if self.stopped is None else str(self.stopped),
                 "bytes_to_master": self.bytes_to_master,
                 **self.where, **loop.account.summary(),
                 **self.sequential}
        title = describe_run(scheme, dataset=cfg.dataset, model=self.model_name, wait=cfg.wait,
                             delay=cfg.delay, compute=cfg.compute, models=int(scheme.T) + 1)
        write_outputs(self.out, self.events + loop.account.lines(), self.records, extra, title,
                      cfg.plot)
        save_model(self.out, self.learner.models[0])
