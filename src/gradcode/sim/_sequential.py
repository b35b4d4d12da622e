"""Sequential schemes on the virtual clock (paper 4, Sec. 2 and Remark 2.3), one ``Record`` per round.

``rounds`` is the total number of rounds: ``jobs = rounds - T`` jobs, job ``t`` starting in round
``t`` and due by the end of round ``t + T`` (so ``rounds`` must exceed ``T``).  Round ``r``:

1. every worker computes the scheme's normalized load (``scheme.load``, the same for all workers
   and rounds, as in ``estimate_runtime`` / App. J) and answers at the arrival time drawn from the
   delay and compute models (``arrival_times``, as for single-round codes);
2. the wait policy picks the stop time; the workers back by then have returned, the others are
   this round's stragglers.  ``decodable`` waits until the planner needs no wait-out (the first
   arrival after which ``Planner.waitout`` answers False; not defined for ``waitout="never"``);
3. if the planner's wait-out rule (``"deadline"``, ``"model"`` or ``"never"``, see
   ``gradcode.sequential.Planner``) says so, the round is waited out: it lasts until the slowest
   worker and everyone counts as returned (``Record.waitout``);
4. the returned set is reported; ``jobs_finished`` counts the jobs decoded in this round.

``recovered_fraction`` / ``exact`` / ``decode_error`` describe the job *due* in round ``r``
(job ``r - T``): 1.0 / True / 0.0 once it is decoded (always, unless ``waitout="never"``), else
0.0 / False / the number of partitions (``||0 B - 1||^2``, nothing decoded).  In the first ``T``
rounds no job is due: NaN / False / NaN, and ``summarize`` leaves those rounds out of
``mean_recovered_fraction`` and ``exact_fraction``.

With a ``trainer``, ``M = T + 1`` models are trained round-robin (Remark 2.1, App. I): job ``j``
is iteration ``j // M`` of model ``j % M``, which takes one full-gradient step when the job
decodes (at the latest in round ``j + T``, before the model's next job starts in ``j + M``);
``loss`` is the mean loss over the ``M`` models.  A job never decoded (``waitout="never"``) is
a skipped step; after the run ``trainer.w`` holds the last model's weights.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np

from ..records import Record, finished
from ..sequential._base import SequentialScheme
from ..sequential._planner import check_rule, make_run
from ..stragglers._delays import Compute, DelayModel
from ._wait import WaitPolicy


class _Requirement:
    """Stands in for the code in ``UntilDecodable``: a received set 'decodes' in round ``r`` when
    the planner would not need a wait-out for it."""

    s = None

    def __init__(self, run, r: int, n: int):
        self.run, self.r, self.n = run, r, n

    def decode(self, received, rng=None):
        mask = np.zeros((1, self.n), bool)
        mask[0, np.asarray(received, int)] = True
        return SimpleNamespace(exact=not self.run.waitout(self.r, mask)[0])


class _Pipelined:
    """``M`` models, one trainer (Remark 2.1, App. I): the trainer's weights are swapped in to step
    or evaluate a model.  Every model starts from the trainer's initial weights."""

    def __init__(self, trainer, scheme: SequentialScheme, rng, M: int):
        trainer.start(scheme, rng)
        self.trainer, self.M = trainer, M
        self.ws = [trainer.w.copy() for _ in range(M)]
        self.full = np.ones(scheme.n_partitions)      # a decoded job is the full gradient

    def step(self, job: int) -> None:
        tr, m = self.trainer, job % self.M
        tr.w = self.ws[m]
        tr.step(job, self.full)                       # mini-batches seeded by the job
        self.ws[m] = tr.w

    def loss(self) -> float:
        losses = []
        for w in self.ws:
            self.trainer.w = w
            losses.append(self.trainer.loss())
        return float(np.mean(losses))


def simulate_sequential(scheme: SequentialScheme, delay: DelayModel, wait: WaitPolicy, rounds: int,
                        *, compute: Compute | None = None, seed: int = 0, trainer=None,
                        progress: bool = False, on_record=None, waitout: str | None = None):
    """Simulate ``rounds`` rounds (``rounds - T`` jobs) of a sequential scheme (module docstring);
    called by ``gradcode.sim.simulate`` for sequential schemes."""
    from ._simulate import CHUNK, SimResult, _progress, arrival_times

    T, n = int(scheme.T), int(scheme.n)
    if isinstance(rounds, bool) or not isinstance(rounds, (int, np.integer)):
        raise ValueError(f"rounds: expected an integer, got {rounds!r}")
    if rounds <= T:
        raise ValueError(f"rounds: {scheme.name} decodes job t by round t + T (T = {T}), so rounds "
                         f"= jobs + T must be at least {T + 1}, got {rounds}")
    rule = check_rule("deadline" if waitout is None else waitout)
    if wait.needs_code and rule == "never":
        raise ValueError("wait: 'decodable' waits until the planner needs no wait-out, which "
                         "waitout='never' never asks for; choose another wait policy or rule")
    jobs = rounds - T
    compute = compute or Compute(0.0)
    seeds = np.random.SeedSequence(seed).spawn(3)          # same streams as single-round codes
    delay_rng, _, model_rng = (np.random.Generator(np.random.PCG64(s)) for s in seeds)
    for model in (delay, compute):      # validates: a trace's or the speeds' worker count
        model.start(delay_rng, n)
    wait.check(n)
    models = _Pipelined(trainer, scheme, model_rng, T + 1) if trainer is not None else None
    # the planner's state machine without building mini-tasks (the simulator needs none):
    # the same Run that ``Planner`` and ``replay`` drive, for one instance
    run = make_run([scheme], jobs, rule, track=False)
    load = float(np.max(scheme.load))
    layout = (np.arange(n), np.full(n, load), np.full(n, load))
    finish = np.full(jobs, -1)
    records: list[Record] = []
    elapsed, interrupted = 0.0, False
    bar = _progress(rounds) if progress else None
    try:
        for start in range(0, rounds, CHUNK):
            R = min(CHUNK, rounds - start)
            arr = arrival_times(scheme, delay, compute, delay_rng, R, layout, start)
            stops = None if wait.needs_code else np.asarray(wait.stop(arr), float)
            for i in range(R):
                r, a = start + i, arr[i]
                run.assign(r)
                stop = float(wait.stop(a, _Requirement(run, r, n)) if stops is None else stops[i])
                returned = wait.received(a, stop)
                out = bool(run.waitout(r, returned[None])[0])
                if out:
                    returned[:], stop = True, float(a.max())
                run.report(r, returned[None])
                lo = max(0, r - T)                       # only jobs r - T .. r can finish now
                done = (lo + np.flatnonzero(run.core.done[0, lo:r + 1] == r)).tolist()
                finish[done] = r
                if models is not None:
                    for job in done:
                        models.step(job)
                if r < T:
                    rec_frac, err, exact = math.nan, math.nan, False
                elif finish[r - T] >= 0:
                    rec_frac, err, exact = 1.0, 0.0, True
                else:
                    rec_frac, err, exact = 0.0, float(scheme.n_partitions), False
                elapsed += stop
                rec = Record(round=r, time_s=stop, elapsed_s=elapsed,
                             workers_arrived=int(returned.sum()), recovered_fraction=rec_frac,
                             decode_error=err, exact=exact, load=load, waitout=out,
                             jobs_finished=len(done),
                             loss=models.loss() if models is not None else math.nan)
                records.append(rec)
                if on_record is not None:
                    on_record(rec)
            if bar is not None:
                bar.update(R)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        if bar is not None:
            bar.close()
    config = {"delay": repr(delay), "wait": repr(wait), "compute": repr(compute), "seed": seed,
              "rounds": rounds, "jobs": jobs, "T": T, "waitout": rule}
    return finished(SimResult(records, scheme.describe(), config, interrupted))
