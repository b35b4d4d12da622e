"""The virtual-clock simulator: code x delay model x wait policy -> records (sequential schemes of
paper 4 are driven by ``gradcode.sim._sequential``, dispatched from ``simulate``).

Each round every worker (machine) draws a random delay from the delay model and computes for a
time proportional to its load (``compute``); a code whose workers send several messages
(``gc-partial``: naive part first, then coded) has each message arrive when its sender has computed
everything up to it.  The wait policy picks the stop time; the workers that arrived by then are
decoded.  Optionally a NumPy model is trained with the decoded gradient ("simulated cluster, real
optimisation").  Deterministic given ``seed``: delays, decoding ties and the model use separate
streams spawned from it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..codes._conflict import circular_mis_sizes
from ..records import Record, finished, summarize
from ..stragglers._delays import Compute, DelayModel
from ._wait import WaitPolicy

CHUNK = 2048


@dataclass
class SimResult:
    records: list[Record]
    code: dict
    config: dict = field(default_factory=dict)
    interrupted: bool = False

    @property
    def summary(self) -> dict:
        return summarize(self.records)


def message_layout(code):
    """``(sender, cumulative_load, machine_load)``: which machine sends each message, how much data
    it has computed on when the message leaves, and each machine's total load."""
    loads = np.asarray(code.load, float)
    sender = np.asarray(getattr(code, "sender", np.arange(code.n_workers)))
    machines = int(sender.max()) + 1
    cum = np.zeros_like(loads)
    done = np.zeros(machines)
    for i in np.argsort(sender, kind="stable"):   # messages of one machine in index order
        done[sender[i]] += loads[i]
        cum[i] = done[sender[i]]
    return sender, cum, done


def arrival_times(code, delay: DelayModel, compute: Compute, rng, rounds: int, layout=None,
                  start: int = 0):
    """``(rounds, n_workers)`` arrival time of every message in rounds ``start, start + 1, ...``,
    in seconds after the round starts."""
    sender, cum, machine_load = layout or message_layout(code)
    d = delay.sample_many(rng, rounds, machine_load, start)
    rate = compute.seconds_per_load / (np.asarray(compute.speeds, float)
                                       if compute.speeds is not None else 1.0)
    rate = np.broadcast_to(rate, machine_load.shape)
    return d[:, sender] + cum * rate[sender]


def _shortcut(code):
    """Vectorised decoding when the result does not need the decoder: ``'exact'`` for exact
    codes with at most s missing, ``'identity'`` for uncoded/ignore (recovered = received),
    ``'covered'`` for IS-GC FR / CR (partitions of a maximum independent set, ``c alpha(G[W'])``)."""
    if code.name in ("ignore",):
        return "identity"
    if code.name in ("isgc-fr", "isgc-cr"):
        return "covered"
    if code.s is not None and not hasattr(code, "sender"):
        return "exact"
    return None


def simulate(code, delay: DelayModel, wait: WaitPolicy, rounds: int, *, compute: Compute | None = None,
             seed: int = 0, trainer=None, progress: bool = False, on_record=None,
             waitout: str | None = None) -> SimResult:
    """Simulate ``rounds`` rounds of ``code``; returns one ``Record`` per round.

    ``trainer`` (``gradcode.sim.Trainer``) trains a NumPy model with the decoded gradient and
    fills ``loss``.  ``on_record(record)`` is called as each round finishes (e.g. to write CSV
    rows); on Ctrl-C it raises ``gradcode.records.Interrupted``, whose ``result`` holds the finished
    rounds.

    A sequential scheme (paper 4: ``gc-seq``, ``sr-sgc``, ``m-sgc``, ``sr-sgc-rep``,
    ``m-sgc-rep``) runs ``rounds`` rounds = ``rounds - T`` jobs through its planner with the
    wait-out rule ``waitout`` (``"deadline"`` by default, ``"model"``, ``"never"``); its records
    describe the job due in each round and mark wait-outs (``gradcode.sim._sequential``).
    ``waitout`` is only for sequential schemes.
    """
    from ..sequential._base import SequentialScheme

    if isinstance(code, SequentialScheme):
        from ._sequential import simulate_sequential
        return simulate_sequential(code, delay, wait, rounds, compute=compute, seed=seed,
                                   trainer=trainer, progress=progress, on_record=on_record,
                                   waitout=waitout)
    if waitout is not None:
        raise ValueError(f"waitout: only sequential schemes have a wait-out rule; {code.name!r} "
                         "is a single-round code")
    if rounds < 0:
        raise ValueError(f"rounds: expected an integer >= 0, got {rounds}")
    compute = compute or Compute(0.0)
    seeds = np.random.SeedSequence(seed).spawn(3)
    delay_rng, decode_rng, model_rng = (np.random.Generator(np.random.PCG64(s)) for s in seeds)
    for model in (delay, compute):      # validates: a trace's or the speeds' worker count
        model.start(delay_rng, int(np.max(getattr(code, "sender", [code.n_workers - 1]))) + 1)
    wait.check(code.n_workers)
    if trainer is not None:
        trainer.start(code, model_rng)
    layout = message_layout(code)
    sizes = np.asarray(code.partition_sizes)
    mean_load = float(np.mean(layout[2]))
    shortcut = None if trainer is not None else _shortcut(code)
    records: list[Record] = []
    elapsed = 0.0
    bar = _progress(rounds) if progress else None
    interrupted = False
    try:
        for start in range(0, rounds, CHUNK):
            R = min(CHUNK, rounds - start)
            arr = arrival_times(code, delay, compute, delay_rng, R, layout, start)
            stop = np.asarray(wait.stop(arr, code), float)
            got = wait.received(arr, stop)
            count = got.sum(axis=1)
            missing = code.n_workers - count
            if shortcut == "covered":        # partitions recovered, c per worker of the set
                alpha = (got.reshape(R, -1, code.c).any(axis=2).sum(axis=1)  # FR: one per group
                         if code.name == "isgc-fr" else circular_mis_sizes(got, code.c))
                covered = alpha * code.c
            for r in range(R):
                rnd = start + r
                if shortcut == "exact" and missing[r] <= code.s:
                    rec_frac, err, exact = 1.0, 0.0, True
                elif shortcut == "covered":
                    n = code.n_workers
                    rec_frac, err = float(covered[r] / n), float(n - covered[r])
                    exact = bool(covered[r] == n)
                elif shortcut == "identity":
                    rec_frac = float(sizes @ got[r])
                    err, exact = float(missing[r]), bool(missing[r] == 0)
                else:
                    d = code.decode(np.flatnonzero(got[r]), rng=decode_rng)
                    rec_frac = d.recovered_fraction
                    err, exact = d.error, d.exact
                    if trainer is not None:
                        trainer.step(rnd, d.recovered)
                elapsed += float(stop[r])
                rec = Record(round=rnd, time_s=float(stop[r]), elapsed_s=elapsed,
                             workers_arrived=int(count[r]), recovered_fraction=rec_frac,
                             decode_error=err, exact=exact, load=mean_load,
                             loss=trainer.loss() if trainer is not None else math.nan)
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
              "rounds": rounds}
    return finished(SimResult(records, code.describe(), config, interrupted))


def _progress(total):
    from tqdm.auto import tqdm
    return tqdm(total=total, unit="round", leave=False, mininterval=0.5)
