"""The executor contract suite: every backend of ``gradcode.runtime.BACKENDS`` (virtual, local
threads, Ray on a local instance) through the same scenarios with the same seeds, driven by the
engine's loop with scripted workers (``tests/_scripted.py``).  The backends come from one table,
``ROWS``: a row says what differs (the fixture a backend needs, its actors, whether it models
compute time, whether its runs are slow); a new backend is one row.

The invariants (``gradcode.engine.Executor``): a worker idle at a round's start computes that
round (it is never BUSY unless it really computes an earlier one); a call cancelled at a round's
end, asleep or queued, leaves no state behind (nothing computing once the workers are done); a
worker is busy only while it computes; the outcomes of raising, NaN-returning and killed workers
are the enum's; per-worker arrival counts of the real backends agree with the virtual executor's
prediction within sampling noise.  The virtual executor does not model real compute time, so
no worker is ever busy there.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, fields

import numpy as np
import pytest

import gradcode
from gradcode.engine import BackendOptions, Loop, WorkerAccount, parse_wait, start_models, streams
from gradcode.stragglers import parse_compute, parse_delay

from _scripted import Script

pytest.importorskip("torch")
from gradcode.runtime import BACKENDS, backend  # noqa: E402


@pytest.fixture(scope="module")
def local_ray():
    ray = pytest.importorskip("ray")
    from gradcode.runtime._ray import init_ray
    import _scripted
    init_ray(None, num_cpus=2)
    _scripted.register()
    yield
    ray.shutdown()


class Recorder(WorkerAccount):
    """``WorkerAccount`` keeping each round's outcome per worker (``table[r][i]``)."""

    def __init__(self, n):
        super().__init__(n)
        self.table: list[dict[int, str]] = []
        self._now: dict[int, str] = {}

    def note(self, worker, outcome):
        super().note(worker, outcome)
        self._now[worker] = outcome.value

    def close(self, r, asked, used):
        super().close(r, asked, used)
        self.table.append({i: self._now.get(i, "cut") for i in asked})
        self._now = {}

    def rounds_with(self, worker: int, outcome: str) -> list[int]:
        return [r for r, row in enumerate(self.table) if row.get(worker) == outcome]


@dataclass(frozen=True)
class Row:
    """A backend of the suite and what differs about it."""
    name: str
    fixture: str | None = None   # a module fixture requested before a run (Ray: a local instance)
    actors: int | None = None    # ``train(actors=...)`` in the training tests
    timed: bool = True           # compute time modelled (the virtual clock's is not: never busy)
    slow: bool = False           # its runs start processes: marked slow (``make test-all``)

    def ready(self, request) -> None:
        if self.fixture is not None:
            request.getfixturevalue(self.fixture)

    def options(self, **asked) -> BackendOptions:
        """``asked`` as the backend's options: those it takes (``BACKENDS``), the others left."""
        takes = BACKENDS[self.name].takes
        return BackendOptions(**{k: v for k, v in asked.items() if k in takes})


ROWS = [Row("virtual", timed=False), Row("local"),
        Row("ray", fixture="local_ray", actors=2, slow=True), Row("torch", actors=2, slow=True)]
BY_NAME = {row.name: row for row in ROWS}


@dataclass
class Scenario:
    code: tuple
    wait: str
    delay: str
    rounds: int
    script: Script
    actors: int = 2              # Ray processes hosting the logical workers
    concurrency: int | None = None   # computing at once per process (default: every worker)
    seed: int = 0
    before_round: object = None  # (round, executor) -> None: fault injection
    kw: dict = field(default_factory=dict)


def run(row: Row, sc: Scenario, request):
    """``(recorder, what is still computing once the workers are done, executor)``."""
    row.ready(request)
    options = row.options(actors=sc.actors, concurrency=sc.concurrency or sc.script.n)
    ex = backend(row.name).from_config(options, sc.script)
    code = gradcode.make_code(sc.code[0], **sc.code[1])
    rng = streams(sc.seed)
    delay, compute = parse_delay(sc.delay), parse_compute(None)
    start_models(code, delay, compute, rng["delay"])
    rec = Recorder(code.n_workers)
    loop = Loop(code, code.planner(sc.rounds, decode_seed=sc.seed), ex, parse_wait(sc.wait),
                delay, compute, rng["delay"], timeout=20.0, account=rec, **sc.kw)
    try:
        ex.ping()
        for r in range(sc.rounds):
            if sc.before_round is not None:
                sc.before_round(r, ex)
            loop.round(r)
        longest = max([*sc.script.slow.values(), sc.script.seconds, 0.0])
        deadline = time.perf_counter() + longest + 5.0
        while ex.computing() and time.perf_counter() < deadline:
            time.sleep(0.02)             # the last round's workers finish what they compute
        left = ex.computing()
    finally:
        ex.close()
    return rec, left, ex


def idle_computes(rec: Recorder) -> None:
    """A worker idle at a round's start computes that round: it can be busy in round r only if
    its call of round r - 1 was still going when that round ended (cut, or busy itself)."""
    for r, row in enumerate(rec.table):
        for i, outcome in row.items():
            if outcome == "busy":
                assert r > 0 and rec.table[r - 1].get(i) in ("cut", "busy"), (r, i, rec.table)


def params(rows=ROWS):
    """``rows`` for ``parametrize``, a slow row's marked slow: each of Ray's runs starts actor
    processes (seconds of CPU on two cores), so the Ray rows run in ``make test-all`` and
    ``make test`` covers Ray by tests/test_runtime_ray.py's end-to-end run."""
    return [pytest.param(r, id=r.name, marks=[pytest.mark.slow] if r.slow else [])
            for r in rows]


def test_every_backend_is_an_executor_with_a_row():
    from gradcode.engine import Executor
    assert sorted(BY_NAME) == sorted(BACKENDS)
    for name, row in BACKENDS.items():
        assert issubclass(backend(name), Executor), name
        assert set(row.takes) <= {f.name for f in fields(BackendOptions)}, name


def test_worker_states_mark_only_what_computes():
    """The one definition local and Ray share: a call whose round ended before it started
    (asleep or queued) is refused and marks nothing; a computing worker is busy until it
    finishes, whatever round ends meanwhile."""
    from gradcode.runtime._base import WorkerStates, compute
    states = WorkerStates()
    assert states.start(0, 0) and states.busy(0) and states.computing() == {0: 0}
    states.end(0)                       # round 0 ends while worker 0 computes: still busy
    assert states.busy(0) and not states.start(0, 1)
    states.finish(0)
    assert not states.busy(0) and states.computing() == {}
    assert not states.start(1, 0) and not states.busy(1)   # round 0 over: a queued call of it
    assert states.start(1, 1)

    class Raises:
        index = 2

        def run(self, round, params, task):
            assert states.busy(2)       # marked while it computes
            raise RuntimeError("boom")
    res = compute(states, Raises(), 1, None, [])
    assert res.status.value == "failed" and "boom" in res.error and not states.busy(2)
    assert compute(states, Raises(), 0, None, []).status.value == "cancelled"


# -- raising and NaN-returning workers: the same outcomes everywhere ------------------------

FAULTS = Scenario(("uncoded", {"n": 4}), "all", "none", 5,
                  Script(4, raises=frozenset({(2, 1), (2, 3)}), nan=frozenset({(3, 2)})))


@pytest.mark.parametrize("row", params())
def test_raising_and_nan_workers_have_their_outcome(row, request):
    rec, left, _ = run(row, FAULTS, request)
    want = [{i: "arrived" for i in range(4)} for _ in range(5)]
    want[1][2] = want[3][2] = "failed"
    want[2][3] = "non-finite"
    assert rec.table == want
    assert left == {}
    assert [len(a) for a in rec.arrivals] == [5, 5, 3, 4]


# -- delays that straddle round ends, a long run with several workers per host ---------------

LONG = Scenario(("isgc-cr", {"n": 8, "c": 2}), "fastest:6", "exp:0.05", 300, Script(8))


@pytest.fixture(scope="module")
def predicted():
    """The virtual executor's per-worker arrival counts in ``LONG``."""
    rec, _, _ = run(BY_NAME["virtual"], LONG, None)
    return np.array([len(a) for a in rec.arrivals])


@pytest.mark.parametrize("row", params())
def test_long_run_keeps_every_worker_and_matches_the_prediction(row, predicted, request):
    """Cut workers are cancelled while asleep: none stays busy, every worker keeps arriving as
    often as the injected delays say (the Ray bug of issue 18 lost whole workers here)."""
    rec, left, _ = run(row, LONG, request)
    counts = np.array([len(a) for a in rec.arrivals])
    assert counts.sum() == 6 * LONG.rounds
    busy = np.array(rec.counts["busy"])
    # zero-time gradients: busy only if descheduled mid-gradient at a round's start
    assert busy.sum() <= 0.02 * 8 * LONG.rounds, busy
    assert max(rec.longest_busy) <= 3, rec.longest_busy
    idle_computes(rec)
    assert left == {}
    # sampling noise: real timing reorders near-ties of the exponential delays
    assert np.abs(counts - predicted).max() <= 0.1 * LONG.rounds, (counts, predicted)


# -- calls cancelled while queued ----------------------------------------------------------

QUEUED = Scenario(("uncoded", {"n": 4}), "fastest:1", "none", 20, Script(4, seconds=0.02),
                  actors=1, concurrency=1)


@pytest.mark.parametrize("row", params())
def test_calls_cancelled_while_queued_leave_no_state(row, request):
    """Four workers on one thread: each round ends at the first gradient, the others are
    cancelled while queued; they must not stay marked busy."""
    rec, left, _ = run(row, QUEUED, request)
    assert left == {}
    assert max(rec.longest_busy) <= 3, rec.table
    idle_computes(rec)
    assert sum(len(a) for a in rec.arrivals) >= QUEUED.rounds // 2


# -- a worker slower than several rounds -----------------------------------------------------

SLOW = Scenario(("uncoded", {"n": 4}), "deadline:0.3", "const:0.1", 12,
                Script(4, slow={(1, 2): 0.6}))


@pytest.mark.parametrize("row", params())
def test_a_slow_worker_is_busy_only_while_it_computes(row, request):
    """Worker 1's gradient of round 2 takes 0.6 s: round 2 ends at its 0.3 s deadline, the next
    ones last 0.1 s (the others' delay), so it is busy in three or four rounds: in those
    rounds only, then arrives again; the others (also its host's) are never busy.  A loaded
    machine makes rounds longer, so fewer of them fall within the 0.6 s: at least one."""
    rec, left, _ = run(row, SLOW, request)
    others = [i for i in range(4) if i != 1]
    assert all(rec.table[r][i] == "arrived" for r in range(SLOW.rounds) for i in others)
    assert left == {}
    busy = rec.rounds_with(1, "busy")
    if not row.timed:                         # compute time is not modelled: never busy
        assert busy == [] and len(rec.arrivals[1]) == SLOW.rounds
        return
    idle_computes(rec)
    assert rec.table[2][1] == "cut"
    assert 1 <= len(busy) <= 5 and set(busy) <= {3, 4, 5, 6, 7}, rec.table
    assert busy == list(range(3, 3 + len(busy)))
    assert rec.rounds_with(1, "arrived")[-3:] == [9, 10, 11]


# -- a host process killed (Ray) -----------------------------------------------------------

def _kill_host_0(r, ex):
    if r == 2:
        ex.kill_actor(0)


KILLED = Scenario(("uncoded", {"n": 4}), "all", "none", 6, Script(4), before_round=_kill_host_0)


@pytest.mark.parametrize("row", params([r for r in ROWS
                                         if hasattr(backend(r.name), "kill_actor")]))
def test_a_killed_host_is_restarted_and_its_workers_come_back(row, request):
    rec, left, ex = run(row, KILLED, request)
    assert rec.rounds_with(0, "died") and rec.rounds_with(2, "died"), rec.table
    assert all(rec.table[r][i] == "arrived" for r in range(2) for i in range(4))
    assert rec.table[-1] == {i: "arrived" for i in range(4)}, rec.table
    assert ex.restarts == 1
    assert left == {}


# -- the gradient audit: what the decoding claims is what the master applied ---------------

AUDITED = [("isgc-cr", {"n": 8, "c": 2}, "fastest:6"), ("gc-cr", {"n": 8, "s": 2}, "fastest:6"),
           ("sr-sgc", {"n": 6, "B": 2, "W": 3, "lam": 2}, "fastest:4"),
           ("comm-efficient", {"n": 6, "s": 1, "m": 2}, "fastest:5")]   # coded slices


@pytest.fixture(scope="module")
def digits():
    from gradcode.runtime import load_torch_data
    return load_torch_data("digits", seed=0)


def audited(row, code, params, wait, data, request=None):
    from gradcode.runtime import TrainConfig, train
    if request is not None:
        row.ready(request)
    # hosts holding several workers aggregate (forced on: the MLP's vectors are too small to pay)
    forced = {"aggregate": "on"} if "aggregate" in BACKENDS[row.name].takes else {}
    cfg = TrainConfig(code=code, code_params=params, wait=wait, delay="exp:0.02", rounds=12,
                      seed=3, backend=row.name, audit=True, batch=16, dataset="digits",
                      model="mlp", eval_samples=64, actors=row.actors, **forced)
    return train(cfg, data=data, progress=False)


#: float32 rounding: float32 on the wire for every code (issue 22)
AUDIT_BOUND = 1e-5


@pytest.mark.parametrize("code,params,wait", AUDITED, ids=[a[0] for a in AUDITED])
@pytest.mark.parametrize("row", params())
def test_audit_holds_on_every_backend(row, code, params, wait, digits, request):
    res = audited(row, code, params, wait, digits, request)
    errors = [r.audit_error for r in res.records if r.jobs_finished]
    assert errors and all(e <= AUDIT_BOUND for e in errors), errors
    assert res.summary["max_audit_error"] == max(errors)


@pytest.mark.parametrize("code,params,wait", [AUDITED[1], AUDITED[3]], ids=["gc-cr", "sliced"])
@pytest.mark.parametrize("row", params())
def test_float32_residuals_are_fetched_on_every_backend(row, code, params, wait, digits,
                                                        request, monkeypatch):
    """``Executor.residuals`` (``analysis.refine``'s float32 residuals) on every backend: with the
    wire's target lowered to 1e-12 every decoded step fetches residuals, none fails to, and the
    audit holds."""
    from gradcode.analysis import _wire
    monkeypatch.setattr(_wire, "WIRE_TARGET", 1e-12)
    res = audited(row, code, params, wait, digits, request)
    fetched = [e for e in res.events if "fetched the residuals" in e]
    assert len(fetched) == sum(r.jobs_finished for r in res.records) > 0, res.events
    assert not any("could not be fetched" in e for e in res.events), res.events
    assert max(r.audit_error for r in res.records if r.jobs_finished) <= AUDIT_BOUND


def test_audit_sees_a_worker_that_sends_a_wrong_result(digits, monkeypatch):
    """The audit is not a tautology: worker 1 sending its coded gradient scaled by 1.01 (what a
    stale or mixed-up result looks like) is seen, in rounds whose result of worker 1 arrived
    only (IS-GC decodes some of them without it)."""
    from gradcode.runtime._worker import GradientWorker
    compute = GradientWorker.compute

    def wrong(self, round, params, task):
        res = compute(self, round, params, task)
        if self.index == 1:
            res.coded = [v * 1.01 for v in res.coded]
        return res
    monkeypatch.setattr(GradientWorker, "compute", wrong)
    res = audited(BY_NAME["local"], "isgc-cr", {"n": 8, "c": 2}, "fastest:6", digits)
    flagged = {r.round for r in res.records if r.audit_error > 1e-4}
    assert flagged and flagged <= set(res.account.arrivals[1]), flagged


def _every_scheme():
    from _codes import SMALL_CODES
    sequential = [("gc-seq", {"n": 4, "s": 1}), ("sr-sgc", {"n": 6, "B": 2, "W": 3, "lam": 2}),
                  ("m-sgc", {"n": 4, "B": 2, "W": 3, "lam": 2}),
                  ("sr-sgc-rep", {"n": 6, "B": 2, "W": 3, "lam": 2}),
                  ("m-sgc-rep", {"n": 4, "B": 1, "W": 2, "lam": 1})]
    return [pytest.param(c, p, id=f"{c}-{i}") for i, (c, p) in enumerate(SMALL_CODES + sequential)]


@pytest.mark.parametrize("code,params", _every_scheme())
def test_audit_holds_for_every_scheme(code, params):
    """Every scheme, one worker cut each round (virtual clock: the same decodings as on the
    others, shown above on local and Ray)."""
    from gradcode.runtime import TrainConfig, train
    n = int(gradcode.make_code(code, **params).n_workers)
    res = train(TrainConfig(code=code, code_params=params, wait=f"fastest:{n - 1}",
                            delay="exp:0.02", rounds=8, seed=1, backend="virtual", audit=True,
                            batch=16, eval_samples=64), progress=False)
    errors = [r.audit_error for r in res.records if r.audit_error == r.audit_error]
    assert errors and max(errors) <= AUDIT_BOUND, errors
