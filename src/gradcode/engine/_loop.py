"""The master loop: one round of any scheme on any executor (virtual clock, threads, Ray).

Round ``r``: the planner assigns the tasks -> the executor starts them, each worker's injected
delay drawn from the delay and compute models (``_clock``) -> the wait policy watches the
arrivals -> if the planner's wait-out rule needs everyone (paper 4, Remark 2.3) the round waits
for them -> the planner is told who returned and says which jobs decode, with which weights ->
the learner (if any) combines the coded results of each decoded job and steps model ``job % M``
(``M = T + 1`` models pipelined, paper 4 App. I; ``M = 1`` for single-round codes) -> one
``Record``.  The executor is anything keeping ``engine.Executor``'s contract.  Results carry
their round (stale ones are dropped) and an ``Outcome``: a busy, failed, dead or timed-out
worker is a straggler; a non-finite result is an erasure and does not count for the policy.
``account`` (``WorkerAccount``) keeps, per worker, the rounds that used its result.

The loop imports neither torch nor ray: a learner is anything with ``params()``,
``apply(step, vectors) -> applied gradient, or a str saying why no step was taken``,
``evaluate(round) -> {"loss": .., ...}`` (the record's evaluation fields: the training loss, and
where the learner has them ``test_loss``, ``test_accuracy`` and ``eval_s``, the seconds they
took, never part of ``time_s``), ``counts`` (samples per partition in a round) and, optionally,
``measures_loss`` (False: ``loss`` is not measured, so NaN is no divergence) (``gradcode.runtime`` trains
PyTorch models, ``gradcode.sim`` NumPy ones).

``audit`` (optional, ``runtime.Auditor``) checks every decoded job: ``audit.reference(step,
params, claimed)`` at the parameters the job was computed at, where ``claimed[j]`` is the
coefficient the decoding gives partition ``j``'s gradient (``(B^T w)_j``; 1 for each partition
a sum code recovered; ``(k, m, m)`` for a code sending ``m`` coded slices, ``Loop.claimed``),
worked out from the tasks the workers were given and the weights of the vectors used; then
``audit.error(applied gradient, reference)``; the round's largest is the record's
``audit_error`` (its time is left out of the round's).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from ..records import Record, short_list
from ._accounting import WorkerAccount
from ._clock import arrival_times, message_layout
from ._executor import Executor, Outcome
from .. import analysis
from ..analysis import Wire


class Step(NamedTuple):
    """A decoded job: model ``model`` steps with ``sum(coefficients * vectors)`` divided by the
    samples ``recovered`` (per partition) covers.  A code sending ``m`` coded slices
    (``scheme.slices``): ``coefficients`` is ``(n_vectors, m)``, column ``u`` combining slice
    ``u`` of the gradient (the learner concatenates the slices).  ``wire``: the vectors'
    float32 rounding (``analysis.Wire``; None when nothing was rounded), which the learner hands
    to ``analysis.refine``.  ``stats``: per partition, what the workers reported besides their
    vectors (``Result.stats``; the runtime's loss denominators), None where they report nothing.

    >>> step = Step(job=3, model=0, coefficients=np.array([1.0, 0.5]), recovered=np.ones(4))
    >>> step.model, combine(step.coefficients, [np.ones(2), np.array([2.0, 4.0])]).tolist()
    (0, [2.0, 3.0])
    """
    job: int
    model: int
    coefficients: np.ndarray
    recovered: np.ndarray
    wire: Wire | None = None
    stats: np.ndarray | None = None      # (k, width): per partition, the row a worker that
    #                                      computed it reported (``Result.stats``); NaN where none


@dataclass
class RoundInfo:
    """What ``on_round`` sees after a round (tests inject faults through ``executor``);
    ``Loop.round`` returns one beside the round's ``Record`` (see ``Loop``'s example).

    >>> info = RoundInfo(executor=None, returned=np.array([False, True, False, True]),
    ...                  waitout=False, decoding=None, rows=[], ended="policy")
    >>> info.returned.nonzero()[0].tolist(), info.ended, info.gradient   # no step taken yet
    ([1, 3], 'policy', None)
    """
    executor: object
    returned: np.ndarray                 # (n,) bool: the workers whose results the round used
    waitout: bool
    decoding: object                     # single-round codes: the round's Decoding
    rows: list                           # rows of B the returned workers computed, as they came
    steps: list = field(default_factory=list)   # (job, model, params, applied mean gradient)
    counts: np.ndarray | None = None     # samples per partition in a round (the learner's)
    ended: str = "all answered"          # why collecting stopped: "all answered" (every worker
    #                                      asked answered, busy and failed ones included),
    #                                      "policy" (the wait policy stopped) or "timeout"
    seconds: np.ndarray | None = None    # (n,): each arrived worker's compute seconds, else NaN

    @property
    def gradient(self):
        return self.steps[-1][3] if self.steps else None

    @property
    def params(self):
        return self.steps[-1][2] if self.steps else None


class Loop:
    """The state of one run's master: planner, executor, wait policy, injected delays, learner.

    ``round(r)`` runs round ``r`` and returns its ``(Record, RoundInfo)``.  ``store`` keeps the
    results later rounds may still combine (rounds ``r - T .. r``); ``dropped`` the workers never
    asked again; ``log(msg)`` receives every event.

    One round of IS-GC on the virtual clock, waiting for the fastest 2 of 4 workers:

    >>> import gradcode
    >>> from gradcode.engine import VirtualExecutor, parse_wait, start_models, streams
    >>> from gradcode.stragglers import Compute, parse_delay
    >>> code = gradcode.make_code("isgc-cr", n=4, c=2)
    >>> delay, compute, rng = parse_delay("exp:1"), Compute(0.5), streams(0)["delay"]
    >>> start_models(code, delay, compute, rng)
    >>> loop = Loop(code, code.planner(5), VirtualExecutor(4), parse_wait("fastest:2"),
    ...             delay, compute, rng)
    >>> rec, info = loop.round(0)
    >>> rec.workers_arrived, rec.recovered_fraction, round(rec.time_s, 3)
    (2, 1.0, 1.013)
    >>> info.returned.tolist(), info.ended, info.decoding.exact      # the round's RoundInfo
    ([False, True, False, True], 'policy', True)
    """

    def __init__(self, scheme, planner, executor: Executor, wait, delay, compute, delay_rng, *,
                 learner=None, timeout: float = math.inf, log=None, dropped=None,
                 on_worker_death: str = "restart", snapshot: bool = False,
                 account: WorkerAccount | None = None, audit=None):
        if wait.needs_planner and planner.rule == "never":
            raise ValueError("wait: 'decodable' waits until the planner needs no wait-out, which "
                             "waitout='never' never asks for; choose another wait policy or rule")
        self.scheme, self.planner, self.ex, self.wait = scheme, planner, executor, wait
        self.delay, self.compute, self.delay_rng = delay, compute, delay_rng
        self.learner, self.timeout, self.snapshot, self.audit = learner, timeout, snapshot, audit
        self.log = log or (lambda msg: None)
        self.dropped = set() if dropped is None else dropped
        self.drop_failed = on_worker_death == "drop"
        self.n, self.T = int(scheme.n_workers), int(scheme.T)
        self.M = self.T + 1
        self.slices = int(scheme.slices)        # coded slices per message (protocol.Scheme)
        self.store: dict[int, dict] = {}
        self.rounding: dict[int, dict] = {}       # per round, worker -> its messages' rounding
        self.stats: dict[int, dict] = {}          # per round, worker -> its ``Result.stats``
        self.tasks: dict[int, list] = {}          # the tasks of the rounds in ``store``
        self.account = account or WorkerAccount(self.n)
        self.last_error: dict[int, str] = {}      # worker -> why its last result was not used
        self.stopped = None                       # the StopTraining that ended the run (drive)
        self._layout_key, self._layout = None, None
        #: bytes the master was handed: results (vectors or notices), residuals, hosts' sums
        self.bytes_in = 0
        #: per-host aggregation (``Executor.aggregate``): single-round, unsliced codes with a
        #: learner only (a sequential job decodes vectors of several rounds, which its hosts
        #: do not keep; a sliced code's weights are per slice): the others get every vector
        self.aggregating = (self.T == 0 and self.slices == 1 and learner is not None
                            and bool(executor.aggregate()))

    def layout(self, r: int):
        loads = self.planner.loads(r)
        if loads is not self._layout_key:
            self._layout_key, self._layout = loads, message_layout(self.scheme, loads)
        return self._layout

    def round(self, r: int):
        self.tasks[r] = tasks = [[(job, parts, coef, job % self.M) for job, parts, coef in row]
                                 for row in self.planner.assign(r)]
        layout = self.layout(r)
        delays = arrival_times(layout, self.delay, self.compute, self.delay_rng, 1, r,
                               self.slices)[0]
        params = self.learner.params() if self.learner is not None else None
        blocked0 = self.ex.blocked_s
        asked = [i for i in range(self.n) if i not in self.dropped]
        self.ex.submit(r, params, tasks, delays, skip=self.dropped)
        for note in self.ex.notes:
            self.log(f"round {r}: {note}")
        self.ex.notes.clear()
        arr = _Arrivals(self, r, len(asked))
        wait = self.wait
        arr.collect(lambda: wait.bound(np.array(arr.times), arr.decoded_at()), wait.full,
                    lambda: wait.wanted(len(arr.times), len(arr.times) + arr.left()))
        out = bool(self.planner.waitout(r, list(arr.got)))
        if out:                                   # the planner needs everyone's results
            arr.collect(lambda: math.inf, lambda k: False, arr.left)
            if len(arr.got) < self.n:
                self.log(f"round {r}: wait-out without workers "
                         f"{sorted(set(range(self.n)) - set(arr.got))}; a job may be lost")
        self.ex.end_round(r)
        returned = sorted(arr.got)
        self.account.close(r, asked, returned)
        done = self.planner.report(r, returned)
        self.store[r], self.rounding[r], self.stats[r] = arr.got, arr.rounding, arr.stats
        self._audits: list[float] = []
        steps = [self._step(r, job, params) for job in done]
        for kept in (self.store, self.tasks, self.rounding, self.stats):
            kept.pop(r - self.T, None)            # no job left that uses round r - T
        time_s = float(self.ex.elapsed())         # real executors: the master's work included
        frac, err, exact = self.planner.due(r)
        measured = self.learner.evaluate(r) if self.learner is not None else {}
        rec = Record(round=r, time_s=time_s, elapsed_s=0.0, workers_arrived=len(returned),
                     recovered_fraction=frac, decode_error=err, exact=exact,
                     load=float(np.mean(layout[2])), waitout=out,
                     jobs_finished=len(done),
                     audit_error=max(self._audits) if self._audits else math.nan,
                     **measured)
        mask = np.zeros(self.n, bool)
        mask[returned] = True
        info = RoundInfo(self.ex, mask, out, self.planner.decoding,
                         self.planner.rows(list(arr.got)).tolist(),
                         [s for s in steps if s is not None],
                         None if self.learner is None else self.learner.counts, arr.ended,
                         arr.seconds)
        self.master_s = time_s - (self.ex.blocked_s - blocked0)
        return rec, info

    def _step(self, r: int, job: int, params):
        """Combine job ``job``'s results and step its model; ``(job, model, params, gradient)``
        (params and gradient only when ``snapshot``) or None when no step was taken."""
        if self.learner is None:
            return None
        w = self.planner.weights(job)
        gathered = self._gather(r, job, w)
        if gathered is None:
            return None
        coefficients, vecs, wire = gathered
        step = Step(job, job % self.M, coefficients, self.planner.recovered(job), wire,
                    self.partition_stats(w))
        auditing = self.audit is not None and all(rr in self.tasks for rr, _, _ in w)
        before = None                             # the parameters the job was computed at
        if (self.snapshot or auditing) and params is not None:
            before = np.array(params[step.model] if np.ndim(params) == 2 else params)
        g = self.learner.apply(step, vecs)
        if isinstance(g, str):                    # why no step was taken
            self.log(f"round {r}: job {job}: {g}; step skipped")
            return None
        if auditing:
            t0 = time.perf_counter()
            ref = self.audit.reference(step, before, self.claimed(w))
            if ref is not None:
                self._audits.append(self.audit.error(g, ref))
            self.ex.exclude(time.perf_counter() - t0)   # auditing is not the round's time
        return (job, step.model, before if self.snapshot else None,
                g.copy() if self.snapshot else None)

    def _gather(self, r: int, job: int, w: dict):
        """``(coefficients, vectors, wire)`` of job ``job``'s step: each vector that came whole
        with its weight, and for the vectors whose results came as notices (kept at their
        hosts: ``Executor.combine``) one sum ``sum_i w_i m_i`` per host, weight 1 (in float64
        where the decoding is: weights of both signs, or float32 rounding to bound); None
        (logged) when a host cannot give its sum: no step."""
        rho = {key: _at(self.rounding.get(key[0], {}).get(key[1], ()), key[2]) for key in w}
        notices = {key for key in w if self.aggregating
                   and self.store[key[0]][key[1]][key[2]] is None}
        held = [key for key in w if key in notices and w[key] != 0]
        if not notices:
            vecs = [self.store[rr][i][k] for rr, i, k in w]
            return self.coefficients(w), vecs, self._wire(r, job, [[(key, 1.0)] for key in w],
                                                          rho)
        whole = [key for key in w if key not in notices]
        wide = any(c < 0 for c in w.values()) or any(rho.values())
        try:
            sums = (self.ex.combine(r, {(i, k): w[(rr, i, k)] for rr, i, k in held}, wide)
                    if held else [])
        except Exception as exc:
            self.log(f"round {r}: job {job}: the hosts' sums could not be fetched "
                     f"({type(exc).__name__}: {exc}); step skipped")
            return None
        self.bytes_in += sum(int(v.nbytes) for _, v in sums)
        entries = ([[(key, 1.0)] for key in whole]
                   + [[((r, i, k), w[(r, i, k)]) for i, k in keys] for keys, _ in sums])
        vecs = [self.store[rr][i][k] for rr, i, k in whole] + [v for _, v in sums]
        coefficients = np.concatenate([np.fromiter((w[key] for key in whole), float, len(whole)),
                                       np.ones(len(sums))])
        return coefficients, vecs, self._wire(r, job, entries, rho)

    def _wire(self, r: int, job: int, entries: list, rho: dict) -> Wire | None:
        """The float32 rounding of the step's vectors, ``entries[e]`` the ``((round, worker,
        k), c)`` a vector sums (one with c = 1 for a vector that came whole; a host's sum:
        ``rounding = sum |c| rho``, its residual ``sum c e``), fetching residuals from the
        executor (each fetch logged; a failed one logged with the bound it leaves); None when
        none of them was rounded."""
        bound = np.array([sum(abs(c) * rho[key] for key, c in terms) for terms in entries])
        if not bound.any():
            return None

        def fetch(idx):
            wanted = [key for e in idx for key, _ in entries[e]
                      if rho[key] > 0 or len(entries[e]) == 1]
            workers = short_list(sorted({i for _, i, _ in wanted}))
            try:
                got = dict(zip(wanted, self.ex.residuals(wanted)))
            except Exception as exc:
                self.log(f"round {r}: job {job}: the float32 residuals of workers {workers} could "
                         f"not be fetched ({type(exc).__name__}: {exc}); this step's float32 "
                         f"error may exceed {analysis.WIRE_TARGET:g}")
                return None
            self.bytes_in += sum(int(np.asarray(e).nbytes) for e in got.values())
            self.log(f"round {r}: job {job}: decoding weights amplify float32 rounding beyond "
                     f"{analysis.WIRE_TARGET:g}: fetched the residuals of {len(wanted)} of "
                     f"{len(rho)} message(s) (workers {workers})")
            return [_residual(entries[e], got) for e in idx]
        return Wire(bound, fetch)

    def partition_stats(self, weights: dict) -> np.ndarray | None:
        """``Step.stats``: for each partition, the stats row of one vector in ``weights`` that
        combined it (every copy of a partition reports the same); None without any."""
        rows: dict[int, np.ndarray] = {}
        for rr, i, k in weights:
            reported = self.stats.get(rr, {}).get(i)
            if not reported or k >= len(reported) or reported[k] is None or rr not in self.tasks:
                continue
            for j, row in zip(self.tasks[rr][i][k][1], reported[k]):
                rows.setdefault(int(j), row)
        if not rows:
            return None
        out = np.full((int(self.scheme.n_partitions), len(next(iter(rows.values())))), np.nan)
        for j, row in rows.items():
            out[j] = row
        return out

    def coefficients(self, weights: dict) -> np.ndarray:
        """``Step.coefficients``: ``(n_vectors,)``, or ``(n_vectors, slices)`` for a sliced code
        (column ``u`` combines slice ``u`` of the vectors)."""
        m = self.slices
        if m == 1:
            return np.fromiter(weights.values(), float, len(weights))
        return np.array(list(weights.values()), float).reshape(len(weights), m)

    def claimed(self, weights: dict) -> np.ndarray:
        """Per partition, the coefficient of its gradient in ``sum weights * vectors``: each
        vector ``(round, worker, k)`` is mini-task ``k`` of the worker's task, ``sum_j c_j g_j``.
        A sliced code (``slices = m > 1``): ``(k, m, m)``, entry ``[j, u, v]`` the coefficient of
        slice ``v`` of ``g_j`` in slice ``u`` of the decoded sum (mini-tasks
        ``sum_j sum_v c[j, v] g_j^(v)``, weights ``(m,)`` per vector)."""
        m = self.slices
        a = np.zeros((int(self.scheme.n_partitions),) + ((m, m) if m > 1 else ()))
        for (rr, i, k), c in weights.items():
            parts, coeffs = self.tasks[rr][i][k][1:3]
            coeffs = np.asarray(coeffs, float)
            if m > 1:
                coeffs = np.asarray(c, float)[None, :, None] * coeffs[:, None, :]
            else:
                coeffs = c * coeffs
            np.add.at(a, np.asarray(parts, int), coeffs)
        return a


class _Arrivals:
    """One round's results: ``got`` (worker -> coded vectors, in arrival order) and ``times``."""

    def __init__(self, loop: Loop, r: int, expected: int):
        self.loop, self.r, self.expected = loop, r, expected
        self.got: dict[int, list] = {}
        self.rounding: dict[int, list] = {}
        self.stats: dict[int, list] = {}
        self.times: list[float] = []
        self.seconds = np.full(loop.n, np.nan)
        self.answered = 0
        self.ended = "all answered"

    def left(self) -> int:
        return self.expected - self.answered

    def decoded_at(self):
        """``UntilDecodable``'s count: the arrivals so far if they decode, else one more (the
        policy's condition: ``WaitPolicy.reached``, e.g. ``UntilCovered``'s coverage)."""
        if not self.loop.wait.needs_code:
            return None
        k, loop = len(self.times), self.loop
        return k if k and loop.wait.reached(loop.scheme, loop.planner, self.r, list(self.got)) \
            else k + 1

    def collect(self, bound, full, wanted) -> None:
        """Take results until the policy's ``bound()`` passes (or the round times out), it is
        ``full``, or every expected worker answered; ``ended`` says which."""
        ex, timeout = self.loop.ex, self.loop.timeout
        while self.answered < self.expected and not full(len(self.times)):
            until = min(bound(), timeout)
            batch = ex.poll(until, wanted())
            if not batch:
                self.ended = "timeout" if until >= timeout else "policy"
                if self.ended == "timeout":
                    self.loop.log(f"round {self.r}: timed out after {timeout:.1f} s")
                return
            for res in batch:
                if self.loop.learner is not None:     # a training run: what came in
                    self.loop.bytes_in += result_bytes(res)
                if self._take(res) and full(len(self.times)):
                    self.ended = "policy"
                    return
        self.ended = "policy" if self.answered < self.expected else "all answered"

    def _take(self, res) -> bool:
        r, log = self.r, self.loop.log
        if res.round != r or res.status is Outcome.CANCELLED:
            return False                                 # stale: an earlier round's straggler
        self.answered += 1
        self.loop.account.note(res.worker, res.status)
        if res.status is not Outcome.ARRIVED:
            self.loop.last_error[res.worker] = res.status.value + (f" ({res.error})" if res.error
                                                                   else "")
        if res.status is Outcome.ARRIVED:
            self.got[res.worker] = res.coded
            if any(res.rounding):
                self.rounding[res.worker] = res.rounding
            if res.stats:
                self.stats[res.worker] = res.stats
            self.times.append(res.arrived_s)
            self.seconds[res.worker] = res.seconds
            return True
        if res.status is Outcome.NONFINITE:
            log(f"round {r}: worker {res.worker} returned non-finite values; erased")
        elif res.status is Outcome.BUSY:
            log(f"round {r}: worker {res.worker} still busy with an earlier round "
                "(a straggler this round)")
        elif res.exception is not None:          # the user's model, loss or data, or a bug
            log(f"round {r}: worker {res.worker} raised {res.error}; the run stops")
            raise res.exception
        else:
            what = "died" if res.status is Outcome.DIED else "failed"
            log(f"round {r}: worker {res.worker} {what} ({res.error}); a straggler")
            if self.loop.drop_failed:
                self.loop.dropped.add(res.worker)
                log(f"round {r}: worker {res.worker} dropped for the rest of training")
        return False


def _at(values, k: int) -> float:
    return float(values[k]) if k < len(values) else 0.0


def _residual(terms: list, got: dict):
    """``sum c e`` over ``terms`` (``(key, c)``) with a residual in ``got``: a vector's own
    residual as it came (c = 1), a host's sum's in float64."""
    if len(terms) == 1 and terms[0][1] == 1.0:
        return got[terms[0][0]]
    acc = None
    for key, c in terms:
        if key in got:
            e = c * np.asarray(got[key], np.float64)
            acc = e if acc is None else acc + e
    return acc


def result_bytes(res) -> int:
    """What ``res`` costs on a wire: its vectors' bytes, and the rest pickled (a notice's)."""
    import pickle
    from dataclasses import replace
    vectors = sum(int(getattr(v, "nbytes", 0)) for v in res.coded if v is not None)
    rest = replace(res, coded=[None] * len(res.coded), exception=None)
    return vectors + len(pickle.dumps(rest, protocol=pickle.HIGHEST_PROTOCOL))


def combine(weights: np.ndarray, vecs: list, out: np.ndarray | None = None,
            wide: bool = False) -> np.ndarray:
    """``sum_i weights[i] * vecs[i]`` in one pass per vector (BLAS axpy), into ``out`` when it
    fits (a buffer reused across rounds: fresh pages cost page faults).  In the wire dtype when
    no weight is negative (no cancellation: float32 loses nothing that matters); in float64
    otherwise, where large weights of both signs cancel (decoding in float64 on the master from
    float32 messages, issue 22), or when ``wide`` (``analysis.refine`` bounds the error of a
    float64 decoding).  A float64 decoding into a float32 ``out`` is accumulated in float64
    ``BLOCK`` entries at a time and rounded once (no float64 copy of the whole vector).

    >>> vecs = [np.array([1.0, 2.0], np.float32), np.array([3.0, 4.0], np.float32)]
    >>> g = combine(np.array([1.0, 0.5]), vecs)
    >>> g.tolist(), g.dtype
    ([2.5, 4.0], dtype('float32'))
    >>> combine(np.array([1.0, -0.5]), vecs).dtype
    dtype('float64')
    >>> out = np.empty(2, np.float32)
    >>> combine(np.array([1e8, -1e8]), [np.array([1.0, 3.0], np.float32),
    ...                                 np.array([1.0, 2.0], np.float32)], out, wide=True).tolist()
    [0.0, 100000000.0]
    """
    from scipy.linalg.blas import get_blas_funcs

    g = None
    wide = wide or bool(np.any(np.asarray(weights) < 0))
    terms = [(float(w), v) for w, v in zip(weights, vecs) if w != 0.0]
    if (wide and terms and out is not None and out.dtype != np.float64
            and out.shape == terms[0][1].shape):
        return _blocked(terms, out)
    for w, v in terms:
        if g is None:
            dt = np.dtype(np.float64 if wide else v.dtype)
            fits = out is not None and out.dtype == dt and out.shape == v.shape
            g = np.multiply(v, dt.type(w), out=out if fits else None, dtype=dt)
        else:
            axpy = get_blas_funcs("axpy", (g, v))
            g = axpy(v, g, a=w)
    return g if g is not None else np.zeros_like(vecs[0])


#: entries per block of a float64 decoding into a float32 buffer (``combine``)
BLOCK = 1 << 16


def _blocked(terms: list, out: np.ndarray) -> np.ndarray:
    acc = np.empty(min(BLOCK, len(out)), np.float64)
    for a in range(0, len(out), BLOCK):
        b = min(a + BLOCK, len(out))
        block = acc[:b - a]
        np.multiply(terms[0][1][a:b], terms[0][0], out=block, dtype=np.float64)
        for w, v in terms[1:]:
            block += w * v[a:b].astype(np.float64)
        out[a:b] = block
    return out
