"""One contract suite for every path that re-derives a round's rules (issue 21).

The reference is the engine's loop: ``simulate(..., fast=False)`` runs ``Loop`` on the virtual
executor, asking the scheme's planner and the wait policy after every arrival.  Every other path
must give the same records for the same seed, for every registered scheme (``tests/_codes.py``,
checked against the registry by tests/test_contract.py) and every wait policy it accepts:

* ``fast``: the vectorised simulator (``simulate``'s default for single-round codes): whole
  chunks of rounds, the policy's compiled whole-round form, the codes' closed-form recovery;
* ``replay``: the policy's whole-round form on the same arrival times, then
  ``sequential.replay`` of the stragglers it leaves (sequential schemes, every wait-out rule):
  wait-outs, round times, arrivals, jobs finished, recovered fractions;
* ``estimate``: App. J's ``estimate_runtime`` on a load-shifted profile with the μ-rule (the
  loop on ``Trace(D, alpha, base_load)``): round times and wait-outs, for every scheme (a
  single-round code as the ``T = 0`` sequential scheme ``single_round(code)``);
* ``search``: the vectorised parameter search ``search_runtimes`` over every example of a
  family at once equals ``estimate_runtime`` per scheme;
* speed probing (``runtime.measure_speeds``) runs the loop itself (nothing to compare).

Records are compared field by field (``_results.same_records``).
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

import gradcode
from gradcode.engine import arrival_times, message_layout, parse_wait, start_models, streams
from gradcode.sequential import SequentialScheme, replay
from gradcode.sim import estimate_runtime, search_runtimes, simulate
from gradcode.stragglers import Compute, Trace, parse_delay

from _codes import ALL_SCHEMES, available
from _results import same_records as same

SCHEMES = available(ALL_SCHEMES)
SINGLE = [(cid, x) for cid, x in SCHEMES if not isinstance(x, SequentialScheme)]
SEQUENTIAL = [(cid, x) for cid, x in SCHEMES if isinstance(x, SequentialScheme)]
WAITS = ["all", "fastest:3", "deadline:1.0", "mu:0.5", "decodable", "fastest:4|deadline:1.5",
         "mu:1|fastest:5", "covered", "covered|decodable"]
#: rounds of each of its runs (60 until issue 34: a third of its 30 s of CPU for 20 more rounds
#: of the same code and policy; tests/test_decodable_fast.py runs thousands at n = 256)
ROUNDS = 40
RULES = ["deadline", "model", "never"]
def policy_for(wait, n):
    policy = parse_wait(wait)
    try:
        policy.check(n)
    except ValueError:
        pytest.skip("the policy needs more workers")
    return policy


def delay_for(x):
    return parse_delay("exp:1" if x.n_workers % 2 else "shexp:0.2,0.8")


# ------------------------------------------------------------------------------------ fast
@pytest.mark.parametrize("cid,code", SINGLE)
@pytest.mark.parametrize("wait", WAITS)
def test_fast_path_is_the_loop(cid, code, wait):
    policy = policy_for(wait, code.n_workers)
    kw = dict(compute=Compute(0.5, send_s=0.25), seed=5)     # a sliced code sends for 0.25 / m
    fast = simulate(code, delay_for(code), policy, ROUNDS, **kw).records
    loop = simulate(code, delay_for(code), policy, ROUNDS, fast=False, **kw).records
    same(fast, loop)


@pytest.mark.parametrize("wait", ["fastest:3", "mu:1", "deadline:0.5|fastest:5", "decodable",
                                  "all"])
@pytest.mark.parametrize("name,params", [("isgc-fr", dict(n=8, c=2)), ("isgc-cr", dict(n=8, c=3)),
                                         ("isgc-hr", dict(n=8, c1=2, c2=2, groups=2)),
                                         ("gc-partial", dict(n=4, s=1, alpha=2.0))])
def test_fast_path_is_the_loop_when_arrivals_tie(name, params, wait):
    """Trace delays tie (every straggler 0.8 s late): ties break by worker index either way."""
    code = gradcode.make_code(name, **params)
    S = np.random.default_rng(0).random((20, code.n_machines)) < 0.4
    runs = [simulate(code, Trace(np.where(S, 0.8, 0.0)), parse_wait(wait), 20,
                     compute=Compute(0.1), fast=fast).records for fast in (True, False)]
    same(*runs)


def test_fast_path_in_bounded_chunks(monkeypatch):
    """A chunk holds at most ``CELLS`` arrival times: many small chunks give the records of one."""
    import gradcode.sim._simulate as sim
    code = gradcode.make_code("isgc-cr", n=50, c=3)
    whole = simulate(code, "exp:1", "fastest:40", 90, seed=2).records
    monkeypatch.setattr(sim, "CELLS", 7 * 50)
    same(simulate(code, "exp:1", "fastest:40", 90, seed=2).records, whole)


# ---------------------------------------------------------------------------------- replay
def replay_records(x, delay, wait, rounds, rule, seed, compute):
    """The records the loop should write, from the policy's whole-round form and replay."""
    rng = streams(seed)["delay"]
    start_models(x, delay, compute, rng)
    arr = arrival_times(message_layout(x), delay, compute, rng, rounds)
    stop, got = wait.stop_received(arr)
    T, n = int(x.T), x.n_workers
    rep = replay(x, ~got, rounds - T, waitout=rule)
    waits = np.zeros(rounds, bool)
    waits[rep.waitouts] = True
    time = np.where(waits, arr.max(axis=1), stop)
    finish = rep.finish_round
    ok = np.concatenate([np.full(T, np.nan), (finish >= 0).astype(float)])
    return dict(time_s=time, elapsed_s=np.cumsum(time), waitout=waits,
                workers_arrived=np.where(waits, n, got.sum(axis=1)),
                jobs_finished=np.bincount(finish[finish >= 0], minlength=rounds),
                recovered_fraction=ok, exact=ok == 1.0,
                decode_error=np.where(ok == 1.0, 0.0, np.where(np.isnan(ok), np.nan,
                                                               x.n_partitions)))


@pytest.mark.parametrize("cid,x", SEQUENTIAL)
@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("wait", [w for w in WAITS
                                  if not {"decodable", "covered"} & set(w.split("|"))])
def test_replay_is_the_loop(cid, x, rule, wait):
    policy = policy_for(wait, x.n_workers)
    rounds, compute = x.T + 25, Compute(0.5)
    loop = simulate(x, delay_for(x), policy, rounds, compute=compute, seed=4, waitout=rule)
    want = replay_records(x, delay_for(x), policy, rounds, rule, 4, compute)
    for f, col in want.items():
        got = np.array([getattr(r, f) for r in loop.records], float)
        np.testing.assert_allclose(got, np.asarray(col, float), rtol=1e-12, equal_nan=True,
                                   err_msg=f)


# ------------------------------------------------------------------------ estimate, search
def profile(rng, rounds, n, p=0.25):
    """Response times: 1 s, stragglers (probability p) 3-5 s, someone fast in every round."""
    slow = rng.random((rounds, n)) < p
    slow[:, 0] = False
    return np.where(slow, rng.uniform(3, 5, (rounds, n)), 1.0)


@pytest.mark.parametrize("cid,x", SEQUENTIAL)
@pytest.mark.parametrize("rule", ["model", "deadline"])
def test_estimate_runtime_is_the_loop(cid, x, rule):
    """App. J: the loop on the load-shifted profile with the μ-rule gives the round times and
    wait-outs of ``estimate_runtime``; rounds App. J does not run (SR-SGC's trailing rounds
    whose due job is decoded, rule "model") cost nothing there and are still played here."""
    jobs = 20
    D = profile(np.random.default_rng(5), jobs + x.T, x.n_workers)
    est = estimate_runtime(x, D, jobs=jobs, mu=1.0, alpha=2.0, base_load=0.1, waitout=rule)
    res = simulate(x, Trace(D, alpha=2.0, base_load=0.1), "mu:1", jobs + x.T, waitout=rule)
    times = np.array([r.time_s for r in res.records])
    run = est.round_times > 0
    np.testing.assert_allclose(times[run], est.round_times[run], rtol=1e-12)
    assert res.summary["waitouts"] == est.waitouts
    assert est.skipped_s == pytest.approx(times[~run].sum())


@pytest.mark.parametrize("name", sorted({x.name for _, x in SEQUENTIAL}))
@pytest.mark.parametrize("rule", ["model", "deadline"])
def test_search_is_estimate_runtime(name, rule):
    """Every example of a family at once (the search batches those of equal dynamics)."""
    n = 8
    examples = [x for _, x in SEQUENTIAL if x.name == name]
    schemes = [gradcode.make_code(**{**x.describe(), "n": n}) for x in examples
               if _valid_at(x, n)] or pytest.skip(f"no {name} example at n = {n}")
    D = profile(np.random.default_rng(9), 40, n)
    res = search_runtimes(schemes, D, jobs=30, mu=1.0, alpha=1.5, base_load=0.05, waitout=rule)
    for i, x in enumerate(schemes):
        est = estimate_runtime(x, D, jobs=30, mu=1.0, alpha=1.5, base_load=0.05, waitout=rule)
        assert res.runtime_s[i] == pytest.approx(est.runtime_s, rel=1e-12)
        assert res.waitouts[i] == est.waitouts


def _valid_at(x, n):
    try:
        gradcode.make_code(**{**x.describe(), "n": n})
    except ValueError:
        return False
    return True


@st.composite
def sequential_cases(draw):
    """Random parameters of every registered sequential family, a rule, a policy and a seed."""
    name = draw(st.sampled_from(sorted({x.name for _, x in SEQUENTIAL})))
    n = draw(st.integers(2, 7))
    if name == "gc-seq":
        params = dict(n=n, s=draw(st.integers(0, n - 1)))
    else:
        B = draw(st.integers(1, 2))
        W = B * draw(st.integers(1, 2)) + 1 if name.startswith("sr") else draw(st.integers(B + 1, 4))
        params = dict(n=n, B=B, W=W, lam=draw(st.integers(1, n)))
    return (name, params, draw(st.sampled_from(RULES)),
            draw(st.sampled_from(["mu:1", "fastest:2", "deadline:1.0|fastest:3"])),
            draw(st.integers(0, 99)))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sequential_cases())
def test_replay_is_the_loop_for_random_parameters(case):
    name, params, rule, wait, seed = case
    try:
        x = gradcode.make_code(name, **params)
    except ValueError:
        assume(False)
    policy = parse_wait(wait)
    assume(all(w <= x.n_workers for w in (2, 3) if f"fastest:{w}" in wait))
    rounds, compute = x.T + 12, Compute(0.5)
    loop = simulate(x, delay_for(x), policy, rounds, compute=compute, seed=seed, waitout=rule)
    want = replay_records(x, delay_for(x), policy, rounds, rule, seed, compute)
    for f, col in want.items():
        got = np.array([getattr(r, f) for r in loop.records], float)
        np.testing.assert_allclose(got, np.asarray(col, float), rtol=1e-12, equal_nan=True,
                                   err_msg=f)


@pytest.mark.parametrize("cid,code", SINGLE)
def test_estimate_runtime_of_a_single_round_code_is_the_loop(cid, code):
    """App. J's estimate for a single-round code (a round whose μ-rule set does not decode
    exactly is waited out) is the loop on the code replayed as the ``T = 0`` sequential scheme
    (``sequential.single_round``) under the deadline rule."""
    from gradcode.sequential import single_round
    if code.n_machines != code.n_workers:
        pytest.skip("App. J's profile has one response time per message and machine")
    D = profile(np.random.default_rng(6), 20, code.n_workers)
    est = estimate_runtime(code, D, jobs=20, mu=1.0, alpha=2.0, base_load=0.1)
    res = simulate(single_round(code), Trace(D, alpha=2.0, base_load=0.1), "mu:1", 20,
                   waitout="deadline")
    np.testing.assert_allclose([r.time_s for r in res.records], est.round_times, rtol=1e-12)
    assert res.summary["waitouts"] == est.waitouts
