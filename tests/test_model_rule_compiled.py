"""The compiled whole-pattern replays (``core.replay``: the ``"model"`` wait-out rule of paper 4,
App. J, for GC, SR-SGC, M-SGC and their -Rep variants, and GC under every rule) play exactly the
rounds of the planner's round-by-round path (``Run.drive(..., compiled=False)``: ``assign`` /
``waitout`` / ``report``, what ``Planner`` and the engine's loop run): the same finish rounds,
wait-outs, rounds not run, tasks and received results, for ``replay`` and ``replay_many``, on
random schemes of every family and random patterns, bursty (Gilbert-Elliott, the design models)
and arbitrary.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

import gradcode
from gradcode.sequential import replay, replay_many
from gradcode.sequential._planner import make_run
from gradcode.stragglers import GilbertElliott

FAMILIES = ["gc-seq", "sr-sgc", "sr-sgc-rep", "m-sgc", "m-sgc-rep"]
RULES = ["model", "deadline", "never"]


def params(draw, name, n):
    """Random parameters of ``name`` at ``n`` workers (possibly invalid: ``scheme`` retries)."""
    if name == "gc-seq":
        return dict(s=draw(st.integers(0, n - 1)))
    B = draw(st.integers(1, 3))
    if name.startswith("sr-sgc"):
        return dict(B=B, W=B * draw(st.integers(1, 3)) + 1, lam=draw(st.integers(1, n)))
    return dict(B=B, W=draw(st.integers(B + 1, B + 3)), lam=draw(st.integers(0, n)))


def scheme(draw, name, n):
    for _ in range(20):
        try:
            return gradcode.make_code(name, n=n, **params(draw, name, n))
        except ValueError:                      # e.g. a -Rep variant needs (s + 1) | n
            continue
    return gradcode.make_code(name.removesuffix("-rep"), n=n, **params(draw, name, n))


def pattern(draw, rounds, n, x=None):
    """Bursty (Gilbert-Elliott, or the scheme's design model) or arbitrary (Bernoulli)."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    kind = draw(st.sampled_from(["ge", "bernoulli", "design"] if x is not None
                                else ["ge", "bernoulli"]))
    p = draw(st.floats(0.02, 0.7))
    if kind == "ge":
        return GilbertElliott(p_N=p / 2, p_S=draw(st.floats(0.1, 0.9))).sample(rng, rounds, n)
    if kind == "bernoulli":
        return rng.random((rounds, n)) < p
    return x.design_model.sample(rng, rounds, n, p=p)


@st.composite
def cases(draw, families=tuple(FAMILIES), rules=tuple(RULES)):
    name = draw(st.sampled_from(families))
    x = scheme(draw, name, draw(st.integers(2, 12)))
    jobs = draw(st.integers(1, 30))
    rounds = jobs + x.T + draw(st.integers(0, 4))
    return x, pattern(draw, rounds, x.n, x), jobs, draw(st.sampled_from(rules))


def reference(schemes, S, jobs, rule, track):
    """The round-by-round path on ``S (P, R, n)``: the run and its wait-out mask."""
    run = make_run(schemes, jobs, rule, track)
    return run, run.drive(S, compiled=False)


@settings(max_examples=100)
@given(cases())
def test_replay_is_the_round_by_round_planner(case):
    check_replay(*case)


@settings(max_examples=150)
@given(cases(families=("sr-sgc", "sr-sgc-rep"), rules=("model",)))
def test_sr_sgc_model_rule_is_the_round_by_round_planner(case):
    """SR-SGC's rule reads the most state (reattempts, the exempt rounds, the rounds not run):
    more cases (a round that counts only because a reattempt returned in it is rare)."""
    check_replay(*case)


def check_replay(x, S, jobs, rule):
    got = replay(x, S, jobs, waitout=rule)
    run, waits = reference([x], S[None], jobs, rule, track=True)
    np.testing.assert_array_equal(got.finish_round, run.core.done[0])
    np.testing.assert_array_equal(got.waitouts, np.flatnonzero(waits[0]))
    np.testing.assert_array_equal(got.skipped, np.flatnonzero([k[0] for k in run.skipped]))
    np.testing.assert_array_equal(got.content, np.stack(run.contents))
    np.testing.assert_array_equal(np.asarray(got._oks), np.stack(run.oks))
    for t in np.flatnonzero(got.finish_round >= 0)[:3]:     # the weights read tasks and results
        assert got.gradient_weights(int(t)).keys() == \
            x.job_weights(int(t), run.contents, run.oks).keys()


@st.composite
def many_cases(draw):
    """Schemes of one family and ``n`` (one batch or several), patterns shared or not."""
    name = draw(st.sampled_from(FAMILIES))
    n = draw(st.integers(2, 10))
    xs = [scheme(draw, name, n) for _ in range(draw(st.integers(1, 6)))]
    jobs = draw(st.integers(1, 20))
    rounds = jobs + max(x.T for x in xs) + draw(st.integers(0, 3))
    pats = [pattern(draw, rounds, n) for _ in range(draw(st.integers(1, 3)))]
    which = [draw(st.integers(0, len(pats) - 1)) for _ in xs]
    return xs, [pats[i] for i in which], jobs, draw(st.sampled_from(RULES))


@settings(max_examples=60)
@given(many_cases())
def test_replay_many_is_the_round_by_round_planner(case):
    xs, pats, jobs, rule = case
    got = replay_many(xs, pats, jobs, waitout=rule)
    for i, (x, S) in enumerate(zip(xs, pats)):
        run, waits = reference([x], S[None], jobs, rule, track=False)
        np.testing.assert_array_equal(got.finish_round[i], run.core.done[0])
        np.testing.assert_array_equal(got.waitout[i], waits[0])
        np.testing.assert_array_equal(got.skipped[i], np.stack(run.skipped, 1)[0])


def test_batched_model_rule_on_many_parameter_sets():
    """One batch of many λ (App. J's search): compiled == round by round, instance by instance,
    with the rounds not run (SR-SGC) and the wait-outs of a -Rep variant's base scheme."""
    rng = np.random.default_rng(3)
    S = GilbertElliott(p_N=0.1, p_S=0.5).sample(rng, 40, 12)
    for name, p in [("sr-sgc", dict(B=2, W=5)), ("sr-sgc-rep", dict(B=1, W=3)),
                    ("m-sgc", dict(B=2, W=3)), ("m-sgc-rep", dict(B=1, W=2)),
                    ("gc-seq", {})]:
        xs = []
        for lam in range(0, 13):
            try:
                xs.append(gradcode.make_code(name, n=12, **(p and {**p, "lam": lam}
                                                           or {"s": min(lam, 11)})))
            except ValueError:
                continue
        jobs = 40 - max(x.T for x in xs)
        got = replay_many(xs, S, jobs, waitout="model")
        run, waits = reference(xs, np.stack([S] * len(xs)), jobs, "model", track=False)
        np.testing.assert_array_equal(got.finish_round, run.core.done)
        np.testing.assert_array_equal(got.waitout, waits)
        np.testing.assert_array_equal(got.skipped, np.stack(run.skipped, 1))
        assert got.waitout.any()
