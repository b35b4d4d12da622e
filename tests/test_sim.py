"""The virtual-clock simulator, delay models and wait policies."""

import json

import numpy as np
import pytest
from hypothesis import given, strategies as st

import gradcode
from gradcode.cli import main
from gradcode.datasets import load_dataset
from gradcode.records import Interrupted, read_records, write_records
from gradcode.sim import Deadline, Fastest, MuRule, Trainer, UntilDecodable, parse_wait, simulate
from gradcode.engine import arrival_times, message_layout, streams
from gradcode.stragglers._delays import (Compute, Constant, Exponential, Trace, parse_compute,
                                         parse_delay)


def test_uncoded_baseline_equals_plain_data_parallel_summation():
    data = load_dataset("synthetic", np.random.default_rng(0), n_samples=600, p=10)
    code = gradcode.make_code("uncoded", n=6)
    tr = Trainer(data, lr=0.3)
    simulate(code, Exponential(1.0), parse_wait("all"), 5, trainer=tr, seed=3)
    # the same five steps, written plainly: full-batch gradient descent on the mean loss
    ref = Trainer(data, lr=0.3)
    ref.start(code, np.random.default_rng(0))
    w = np.zeros_like(ref.w)
    for _ in range(5):
        _, g = ref.model.loss_grad(w, data.X, data.y)
        w = w - 0.3 * g / data.n_samples
    np.testing.assert_allclose(tr.w, w, rtol=1e-10, atol=1e-12)


def test_decoded_gradient_is_sum_of_recovered_partitions():
    data = load_dataset("synthetic", np.random.default_rng(1), n_samples=400, p=5)
    code = gradcode.make_code("isgc-cr", n=8, c=2)
    tr = Trainer(data, lr=0.1)
    tr.start(code, np.random.default_rng(0))
    G, counts = tr.partial_gradients(0)
    full = tr.model.loss_grad(tr.w, data.X, data.y)[1]
    np.testing.assert_allclose(G.sum(0), full, rtol=1e-10)
    d = code.decode([0, 3, 5], rng=np.random.default_rng(0))
    expected = sum(G[j] for j in np.flatnonzero(d.recovered))
    np.testing.assert_allclose(d.recovered @ G, expected)


@pytest.mark.parametrize("name,params,s", [("gc-cr", dict(n=10, s=2), 2), ("gc-fr", dict(n=9, s=2), 2)])
def test_gc_records_exact_whenever_at_most_s_missing(name, params, s):
    code = gradcode.make_code(name, **params)
    res = simulate(code, Exponential(1.0), parse_wait("fastest:7"), 300, seed=1)
    for r in res.records:
        if code.n_workers - r.workers_arrived <= s:
            assert r.exact and r.recovered_fraction == 1.0


def test_isgc_recovered_fractions_match_the_codes_decode():
    code = gradcode.make_code("isgc-cr", n=12, c=3)
    delay, wait = Exponential(1.0), Fastest(5)
    res = simulate(code, delay, wait, 200, seed=4)
    # replay the same arrivals: recovered fraction = alpha(G[W']) * c / n, the maximum
    rng = streams(4)["delay"]
    arr = arrival_times(message_layout(code), delay, Compute(0.0), rng, 200)
    for r, a in zip(res.records, arr):
        received = np.flatnonzero(a <= np.sort(a)[4])
        d = code.decode(received, rng=np.random.default_rng(0))
        assert r.recovered_fraction == pytest.approx(d.recovered.mean())
        assert (r.decode_error, r.exact) == (pytest.approx(d.error), d.exact)
        assert r.workers_arrived == 5


def test_deterministic_given_seed_and_differs_across_seeds():
    code = gradcode.make_code("isgc-hr", n=8, c1=2, c2=2, groups=2)
    a = simulate(code, parse_delay("exp:1.5"), parse_wait("fastest:3"), 100, seed=7).records
    b = simulate(code, parse_delay("exp:1.5"), parse_wait("fastest:3"), 100, seed=7).records
    c = simulate(code, parse_delay("exp:1.5"), parse_wait("fastest:3"), 100, seed=8).records
    rows = lambda recs: [(r.time_s, r.recovered_fraction, r.workers_arrived) for r in recs]  # noqa
    assert rows(a) == rows(b) and rows(a) != rows(c)


def test_wait_policies():
    arr = np.array([[3.0, 1.0, 2.0, 10.0]])
    assert Fastest(2).stop(arr)[0] == 2.0
    assert Deadline(2.5).stop(arr)[0] == 2.5 and Deadline(20).stop(arr)[0] == 10.0
    assert MuRule(1.0).stop(arr)[0] == 2.0          # fastest 1.0, wait mu * 1.0 more
    assert (Fastest(3) | Deadline(2.5)).stop(arr)[0] == 2.5
    assert parse_wait("fastest:3|deadline:2.5").stop(arr)[0] == 2.5
    code = gradcode.make_code("gc-fr", n=4, s=1)     # groups {0,1}, {2,3}
    assert UntilDecodable().stop(np.array([1.0, 2.0, 3.0, 4.0]), code) == 3.0
    assert UntilDecodable().stop(np.array([1.0, 4.0, 2.0, 3.0]), code) == 2.0


@given(st.lists(st.floats(0.01, 100), min_size=3, max_size=12), st.integers(0, 2))
def test_until_decodable_is_earliest_exact_prefix(arrivals, s):
    arrivals = np.array(arrivals)
    n = len(arrivals)
    code = gradcode.make_code("gc-cr", n=n, s=min(s, n - 1))
    t = UntilDecodable().stop(arrivals, code)
    order = np.argsort(arrivals, kind="stable")
    k = int(np.searchsorted(np.sort(arrivals), t, side="right"))
    assert code.decode(order[:k]).exact
    assert k == 1 or not code.decode(order[:k - 1]).exact or arrivals[order[k - 2]] == t


@pytest.mark.parametrize("spec", ["", "fastest:0", "fastest:x", "deadline:-1", "mu:-2", "soon"])
def test_bad_wait_specs(spec):
    with pytest.raises(ValueError, match="^wait"):
        parse_wait(spec)


@pytest.mark.parametrize("spec", ["", "exp:", "exp:-1", "exp:1@0", "shexp:1", "slow:2,0.5,0.1,1",
                                  "trace:/nonexistent.csv", "gamma:1"])
def test_bad_delay_specs(spec):
    with pytest.raises(ValueError, match="^(delay|trace)"):
        parse_delay(spec)


def test_delay_models():
    rng = np.random.default_rng(0)
    loads = np.full(1000, 0.5)
    d = Exponential(2.0).sample_many(rng, 50, loads)
    assert d.shape == (50, 1000) and abs(d.mean() - 2.0) < 0.05
    d = Exponential(2.0, k=10).sample_many(rng, 50, loads)
    assert np.all((d > 0).sum(1) == 10)
    c = parse_compute("load:2.0:1,2").sample(rng, 0, np.array([0.5, 0.5]))
    np.testing.assert_allclose(c, [1.0, 0.5])
    t = Trace(np.arange(6.0).reshape(3, 2), alpha=2.0, base_load=0.25)
    np.testing.assert_allclose(t.sample(rng, 4, np.array([0.5, 0.25])), [2.5, 3.0])
    m = parse_delay("const:1+exp:1")
    assert np.all(m.sample(rng, 0, loads) >= 1.0)


def test_partial_straggler_messages_timed_separately():
    code = gradcode.make_code("gc-partial", n=3, s=1, alpha=2.0)
    arr = arrival_times(message_layout(code), Constant(0.0), Compute(9.0),
                        np.random.default_rng(0), 1)[0]
    # naive part 2/9 of the data, then coded 2/9 more: 2 s and 4 s at 9 s per unit load
    np.testing.assert_allclose(arr, [2, 2, 2, 4, 4, 4])


def test_records_csv_roundtrip(tmp_path):
    code = gradcode.make_code("isgc-fr", n=6, c=2)
    res = simulate(code, Exponential(1.0), Fastest(3), 20, seed=0)
    write_records(tmp_path / "r.csv", res.records)
    back = read_records(tmp_path / "r.csv")
    np.testing.assert_equal([r.as_row() for r in back], [r.as_row() for r in res.records])


def test_interrupt_keeps_finished_rounds():
    code = gradcode.make_code("isgc-cr", n=6, c=2)
    seen = []

    def on_record(r):
        seen.append(r)
        if len(seen) == 5:
            raise KeyboardInterrupt

    with pytest.raises(Interrupted) as exc:
        simulate(code, Exponential(1.0), Fastest(3), 100, seed=0, on_record=on_record)
    assert isinstance(exc.value, KeyboardInterrupt)   # callers that don't ask simply stop
    assert exc.value.result.interrupted and len(exc.value.result.records) == 5


def test_cli_simulate_json(capsys, tmp_path):
    rc = main(["simulate", "--code", "isgc-cr", "--n", "12", "--c", "2", "--delay", "exp:1.5",
               "--wait", "fastest:6", "--rounds", "200", "--seed", "1", "--json",
               "--out", str(tmp_path)])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0
    for key in ("mean_round_time_s", "mean_recovered_fraction", "exact_fraction"):
        assert key in out
    assert len(read_records(tmp_path / "rounds.csv")) == 200


def test_cli_simulate_code_seed(capsys):
    rc = main(["simulate", "--code", "gc-cr", "--n", "8", "--s", "2", "--code-seed", "4",
               "--rounds", "10", "--json"])
    assert rc == 0 and json.loads(capsys.readouterr().out)["code"]["seed"] == 4


@pytest.mark.parametrize("argv,word", [
    (["--code", "gc-cr", "--n", "8", "--s", "2", "--delay", "exp:x"], "delay"),
    (["--code", "gc-cr", "--n", "8", "--s", "2", "--wait", "fastest:0"], "wait"),
    (["--code", "gc-cr", "--n", "8", "--s", "9"], "s:"),
    (["--n", "8"], "--code"),
    (["--code", "gc-cr", "--n", "8", "--s", "2", "--rounds", "0"], "--rounds"),
    (["--code", "gc-cr", "--n", "8", "--s", "2", "--wait", "fastest:9"], "wait: fastest:w"),
    (["--code", "sr-sgc", "--n", "8", "--B", "1", "--W", "2", "--lam", "2", "--wait", "fastest:9"],
     "wait: fastest:w"),
    (["--code", "gc-cr", "--n", "8", "--s", "2", "--dataset", "mnist"], "dataset"),
    (["--code", "gc-cr", "--n", "8", "--s", "2", "--dataset", "iris", "--batch", "0"], "batch:"),
    (["--code", "gc-cr", "--n", "8", "--s", "2", "--compute", "load:1:1,2"], "speeds: expected 8"),
    (["--code", "m-sgc", "--n", "8", "--B", "1", "--W", "2", "--lam", "2", "--compute",
      "load:1:1,2"], "speeds: expected 8"),
    (["--code", "gc-cr", "--n", "8", "--s", "2", "--dataset", "iris", "--lr", "0"], "lr:"),
])
def test_cli_simulate_bad_input(capsys, tmp_path, argv, word):
    extra = [] if "--rounds" in argv else ["--rounds", "5"]
    rc = main(["simulate", *argv, *extra, "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert rc == 2 and word in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()                  # nothing half-written


@given(st.lists(st.floats(0.01, 10), min_size=4, max_size=9),
       st.sampled_from(["all", "fastest:2", "deadline:1.5", "mu:0.5", "decodable",
                        "fastest:3|deadline:2.0", "mu:1|fastest:4"]))
def test_loop_stops_when_the_vectorised_policy_does(arrivals, spec):
    """Told the arrivals one by one (the engine's loop on the virtual executor), every policy
    stops when its vectorised form does and receives the same workers."""
    arrivals = np.array(arrivals)
    code = gradcode.make_code("gc-cr", n=len(arrivals), s=1)
    policy = parse_wait(spec)
    stop = float(policy.stop(arrivals, code))
    got = policy.received(arrivals[None], stop)[0]
    rec = simulate(code, Trace(arrivals[None]), policy, 1, fast=False).records[0]
    assert rec.time_s == pytest.approx(stop)
    assert rec.workers_arrived == got.sum()


@pytest.mark.parametrize("code", [gradcode.make_code("gc-cr", n=4, s=1),
                                  gradcode.make_code("gc-seq", n=4, s=1)])
def test_trace_replay_continues_across_chunks(code):
    """Round r replays trace row r mod len (the simulator samples in chunks of CHUNK rounds)."""
    from gradcode.sim._simulate import CHUNK
    rows = 7                                         # does not divide CHUNK
    trace = np.repeat(np.arange(1.0, rows + 1)[:, None], 4, axis=1)
    rounds = CHUNK + 20
    res = simulate(code, Trace(trace), parse_wait("all"), rounds, seed=0)
    times = np.array([r.time_s for r in res.records])
    np.testing.assert_allclose(times, 1.0 + np.arange(rounds) % rows)


@pytest.mark.parametrize("delay", ["exp:1", "exp:1@2", "shexp:1,0.5", "slow:0.3,0.8,0.1,2",
                                   "ge:0.1,0.5,2", "exp:1@2+const:1"])
def test_sample_many_equals_successive_samples_and_runs_share_a_prefix(delay):
    loads = np.full(6, 1 / 6)
    many, one = parse_delay(delay), parse_delay(delay)
    rng_a, rng_b = np.random.default_rng(3), np.random.default_rng(3)
    many.start(rng_a, 6)
    one.start(rng_b, 6)
    a = many.sample_many(rng_a, 5, loads, start=10)
    b = np.stack([one.sample(rng_b, 10 + r, loads) for r in range(5)])
    np.testing.assert_array_equal(a, b)
    code = gradcode.make_code("isgc-cr", n=6, c=2)
    short = simulate(code, parse_delay(delay), Fastest(3), 5, seed=1).records
    long = simulate(code, parse_delay(delay), Fastest(3), 50, seed=1).records[:5]
    assert [r.time_s for r in short] == [r.time_s for r in long]


@pytest.mark.parametrize("spec", ["fastest:2", "fastest:2|deadline:5", "deadline:5|fastest:2"])
def test_fastest_w_receives_exactly_w_when_arrivals_tie(spec):
    """Paper 2's ray.wait(num_returns=w): w workers, even when more arrive at the same time."""
    code = gradcode.make_code("isgc-fr", n=8, c=2)
    res = simulate(code, Constant(0.0), parse_wait(spec), 3, compute=Compute(1.0), seed=0)
    assert [r.workers_arrived for r in res.records] == [2, 2, 2]
    assert [r.recovered_fraction for r in res.records] == [0.25] * 3   # workers 0, 1: one group
    arr = np.array([[1.0, 1.0, 1.0, 3.0]])
    assert parse_wait(spec).received(arr, parse_wait(spec).stop(arr)).tolist() == \
        [[True, True, False, False]]
    assert parse_wait("deadline:1|fastest:3").received(arr, 1.0).tolist() == \
        [[True, True, True, False]]


@given(st.lists(st.integers(0, 3), min_size=2, max_size=9), st.data())
def test_fastest_received_is_the_first_w_in_stable_arrival_order(times, data):
    """``Fastest.received`` (O(n)) equals its definition: rank < w in stable arrival order."""
    arr = np.array(times, float)
    w = data.draw(st.integers(1, len(arr)))
    policy = Fastest(w)
    got = policy.received(arr[None], policy.stop(arr[None]))[0]
    rank = np.argsort(np.argsort(arr, kind="stable"), kind="stable")
    assert got.tolist() == (rank < w).tolist()


def test_simulate_takes_the_cli_spec_strings():
    """``simulate(code, "exp:1.5", "fastest:6", 50)`` is the same run as with the models
    (issue 19: it raised AttributeError); a bad SPEC is refused naming it."""
    from gradcode.engine import parse_wait
    from gradcode.sim import simulate
    from gradcode.stragglers import parse_compute, parse_delay
    code = gradcode.make_code("isgc-cr", n=8, c=2)
    spec = simulate(code, "exp:1.5", "fastest:6", 50, compute="load:0.2", seed=3).records
    model = simulate(code, parse_delay("exp:1.5"), parse_wait("fastest:6"), 50,
                     compute=parse_compute("load:0.2"), seed=3).records
    assert [r.as_row() for r in spec] == [r.as_row() for r in model]
    for kw, word in ((dict(delay="exp:-1"), "delay"), (dict(wait="fastest"), "wait"),
                     (dict(compute="load:x"), "compute")):
        args = {"delay": "exp:1.5", "wait": "fastest:6", **kw}
        compute = args.pop("compute", None)
        with pytest.raises(ValueError, match=f"^{word}"):
            simulate(code, args["delay"], args["wait"], 5, compute=compute)
