"""The virtual-clock simulator: scheme x delay model x wait policy -> one ``Record`` per round.

``simulate`` runs the engine's loop (``gradcode.engine``) on the virtual executor: each round
every machine draws a random delay and computes for a time proportional to its load; the wait
policy picks the stop time; the planner decodes what arrived (paper 4's sequential schemes wait
out a round when their rule says so); optionally a NumPy model is trained with the decoded
gradient ("simulated cluster, real optimisation").  ``gradcode train --backend virtual`` is the
same loop with PyTorch workers, and the local and Ray backends inject the same delays: one seed,
one experiment (random streams: ``gradcode.engine.streams``).

Single-round codes without a trainer take the vectorised fast path (``_fast``): whole chunks of
rounds at once, decoding in closed form where the code has one; it is proven equal to the loop,
record for record, by the tests.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..engine import (Loop, VirtualExecutor, WaitPolicy, arrival_times, decode_rng, drive,
                      jobs_for, message_layout, parse_wait, start_models, streams)
from ..records import Record, RecordTable, finished, summarize
from ..stragglers import Compute, DelayModel, parse_compute, parse_delay

CHUNK = 2048
#: arrival times held at once by the vectorised path (rounds x workers per chunk)
CELLS = 1 << 21


@dataclass
class SimResult:
    """What ``simulate`` returns: ``records`` (one ``Record`` per round), ``code`` (the code's
    ``describe()``), ``config`` (delay, wait, compute, seed, rounds; for a sequential scheme also
    jobs, T and the wait-out rule), whether it was ``interrupted``, the round it ``diverged``
    (None), and ``summary`` (``gradcode.records.summarize`` of the records).

    >>> import gradcode
    >>> res = simulate(gradcode.make_code("gc-cr", n=6, s=2), "exp:1.0", "decodable", 20)
    >>> len(res.records), res.code, res.config["wait"]
    (20, {'name': 'gc-cr', 'n': 6, 's': 2, 'seed': 0}, 'UntilDecodable()')
    >>> res.summary["exact_fraction"], res.interrupted, res.diverged
    (1.0, False, None)
    """

    records: list[Record]
    code: dict
    config: dict = field(default_factory=dict)
    interrupted: bool = False
    diverged: int | None = None      # the round after which the trained model's loss was not finite

    @property
    def summary(self) -> dict:
        return summarize(self.records)


def simulate(code, delay: DelayModel | str, wait: WaitPolicy | str, rounds: int, *,
             compute: Compute | str | None = None,
             seed: int = 0, trainer=None, progress: bool = False, on_record=None,
             waitout: str | None = None, fast: bool = True) -> SimResult:
    """Simulate ``rounds`` rounds of ``code``; returns one ``Record`` per round.

    ``delay``, ``wait`` and ``compute`` are models or the CLI's SPEC strings
    (``simulate(code, "exp:1.5", "fastest:6", 50, compute="load:0.2")``).

    ``trainer`` (``gradcode.sim.Trainer``) trains a NumPy model with the decoded gradient and
    fills ``loss``.  ``on_record(record)`` is called as each round finishes (e.g. to write CSV
    rows); on Ctrl-C it raises ``gradcode.records.Interrupted``, whose ``result`` holds the
    finished rounds; a trained model whose loss stops being finite ends the run with
    ``gradcode.records.Diverged`` (its ``result`` holds the rounds run).

    A sequential scheme (paper 4: ``gc-seq``, ``sr-sgc``, ``m-sgc``, ``sr-sgc-rep``,
    ``m-sgc-rep``) runs ``rounds`` rounds = ``rounds - T`` jobs through its planner with the
    wait-out rule ``waitout`` (``"deadline"`` by default, ``"model"``, ``"never"``); its records
    describe the job due in each round (NaN in the first ``T`` rounds, none due) and mark
    wait-outs; ``jobs_finished`` counts the jobs decoded in a round.  With a trainer, ``M = T + 1``
    models are trained round-robin (Remark 2.1, App. I): job ``j`` steps model ``j % M``;
    ``loss`` is the mean over the models and afterwards ``trainer.w`` holds the last model's
    weights.  ``waitout`` is only for sequential schemes.  ``fast=False`` runs a single-round
    code through the loop too (the fast path's reference).

    >>> import gradcode
    >>> code = gradcode.make_code("isgc-cr", n=8, c=2)
    >>> res = simulate(code, "exp:1.5", "fastest:6", 50, compute="load:0.2")
    >>> len(res.records), res.records[0].workers_arrived
    (50, 6)
    >>> round(res.summary["mean_recovered_fraction"], 3)
    0.85

    A sequential scheme (paper 4): 21 rounds are 20 jobs of M-SGC (``T = 1``), the μ-rule picks
    the stragglers and the master waits out the rounds that would lose a job:

    >>> x = gradcode.make_code("m-sgc", n=8, B=1, W=2, lam=2)
    >>> res = simulate(x, "shexp:1,0.5", "mu:1", 21)
    >>> res.config["jobs"], res.records[0].recovered_fraction, res.summary["waitouts"]
    (20, nan, 2)
    >>> sum(r.jobs_finished for r in res.records), res.summary["exact_fraction"]
    (20, 1.0)
    """
    if isinstance(rounds, bool) or not isinstance(rounds, (int, np.integer)) or rounds < 0:
        raise ValueError(f"rounds: expected an integer >= 0, got {rounds!r}")
    delay, wait, compute = parse_delay(delay), parse_wait(wait), parse_compute(compute)
    T, jobs = int(code.T), jobs_for(code, rounds)
    rng = streams(seed)
    planner = code.planner(max(jobs, 1), waitout, decode_seed=seed)
    start_models(code, delay, compute, rng["delay"])
    wait.check(code.n_workers)
    config = {"delay": repr(delay), "wait": repr(wait), "compute": repr(compute), "seed": seed,
              "rounds": rounds}
    if planner.rule is not None:          # a wait-out rule: a sequential scheme's jobs
        config.update(jobs=jobs, T=T, waitout_rule=str(planner.rule))
    bar = _progress(rounds) if progress else None
    try:
        if fast and trainer is None and planner.rule is None:   # single-round: no wait-outs
            records, interrupted = _fast(code, delay, compute, wait, rounds, rng["delay"], seed,
                                         on_record, bar)
            diverged = None
        else:
            learner = _NumpyLearner(trainer, code, rng["model"], T + 1) if trainer else None
            loop = Loop(code, planner, VirtualExecutor(code.n_workers), wait, delay, compute,
                        rng["delay"], learner=learner)
            records, interrupted, diverged = drive(loop, rounds,
                                                   on_round=_each(on_record, bar))
    finally:
        if bar is not None:
            bar.close()
    return finished(SimResult(records, code.describe(), config, interrupted, diverged))


def _each(on_record, bar):
    def each(r, rec, info=None):
        if on_record is not None:
            on_record(rec)
        if bar is not None:
            bar.update(1)
    return each


class _NumpyLearner:
    """The engine's learner contract for the simulator's NumPy ``Trainer``: ``M`` models, the
    trainer's weights swapped in to step or evaluate one (every model starts from the trainer's
    initial weights).  A decoded job's gradient is ``recovered @ G`` over the trainer's partial
    gradients (the combination of the coded results, which the virtual workers do not compute)."""

    def __init__(self, trainer, code, rng, M: int):
        trainer.start(code, rng)
        self.trainer, self.ws = trainer, [trainer.w.copy() for _ in range(M)]
        self.counts = None

    def params(self):
        return None

    def apply(self, step, vectors):
        tr = self.trainer
        tr.w = self.ws[step.model]
        with np.errstate(over="ignore", invalid="ignore"):   # divergence: the loop says so
            g = tr.step(step.job, step.recovered)             # mini-batches seeded by the job
        self.ws[step.model] = tr.w
        return g if g is not None else "nothing decodable"

    def evaluate(self, round: int) -> dict:
        """The mean training loss over the models (no held-out set; no wall-clock time: the
        simulator's records are deterministic)."""
        losses = []
        with np.errstate(over="ignore", invalid="ignore"):
            for w in self.ws:
                self.trainer.w = w
                losses.append(self.trainer.loss())
        return {"loss": float(np.mean(losses))}


def _fast(code, delay, compute, wait, rounds, delay_rng, seed, on_record, bar):
    """Single-round codes, no trainer: chunks of rounds at once (module docstring), at most
    ``CELLS`` arrival times in memory, records kept as columns."""
    layout = message_layout(code)
    load = float(np.mean(layout[2]))
    table = RecordTable()
    elapsed = 0.0
    step = max(1, min(CHUNK, CELLS // code.n_workers))
    try:
        for start in range(0, rounds, step):
            R = min(step, rounds - start)
            arr = arrival_times(layout, delay, compute, delay_rng, R, start, code.slices)
            stop, got = wait.stop_received(arr, code)
            frac, err, exact = code.recovery_many(got)
            for r in np.flatnonzero(np.isnan(frac)):       # no closed form: the decoder runs
                d = code.decode(np.flatnonzero(got[r]), rng=decode_rng(seed, start + int(r)))
                frac[r], err[r], exact[r] = d.recovered_fraction, d.error, d.exact
            times = np.cumsum(np.concatenate([[elapsed], stop]))[1:]   # added round by round
            elapsed = float(times[-1])
            chunk = dict(round=np.arange(start, start + R), time_s=stop, elapsed_s=times,
                         workers_arrived=np.count_nonzero(got, axis=1), recovered_fraction=frac,
                         decode_error=err, exact=exact, load=np.full(R, load))
            try:
                for r in range(R if on_record is not None else 0):
                    on_record(RecordTable.record(chunk, r))
            except KeyboardInterrupt:     # the rounds told so far are kept
                table.extend(**{k: v[:r + 1] for k, v in chunk.items()})
                raise
            table.extend(**chunk)
            if bar is not None:
                bar.update(R)
    except KeyboardInterrupt:
        return table, True
    return table, False


def _progress(total):
    from tqdm.auto import tqdm
    return tqdm(total=total, unit="round", leave=False, mininterval=0.5)
