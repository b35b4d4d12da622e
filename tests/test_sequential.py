"""Sequential gradient coding (paper 4): the Sec. 3.3.1 example (Fig. 6), Propositions 3.1 and
3.2 (exhaustive for small n and rounds, random beyond), wait-outs on non-conforming patterns, the
planner contract, the -Rep variants (App. G), pipelining (Remark 2.1) and parameter validation.

Exactness is always checked numerically: random partial gradients per (job, chunk), every
returned mini-task result computed from its partitions and coefficients, combined with
``gradient_weights(t)`` and compared with the sum of all partial gradients of job ``t``.
"""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import gradcode
import gradcode.sequential as seq
from gradcode.sequential._base import CODED, IDLE
from gradcode.stragglers import GilbertElliott, SPerRound, bursty_ok, enumerate_patterns

from _sgc_reference import ref_replay

SETTINGS = settings(max_examples=60, deadline=None)


def assert_exact(r, rng, G=None):
    """Every job decoded by t + T, exactly, from returned mini-task results only."""
    x, J = r.scheme, r.jobs
    G = rng.standard_normal((J, x.n_partitions, 2)) if G is None else G
    for t in range(J):
        assert t <= r.finish_round[t] <= t + x.T, (t, r.finish_round[t])
        est = np.zeros(G.shape[2:])
        for (rd, i, k), w in r.gradient_weights(t).items():
            assert rd <= r.finish_round[t] and not r.effective[rd, i], "result not returned"
            m = r.tasks[rd][i][k]
            assert m.job == t and not m.trivial
            est = est + w * np.tensordot(m.coefficients, G[t, m.partitions], 1)
        np.testing.assert_allclose(est, G[t].sum(0), rtol=1e-8, atol=1e-8)


# ----------------------------------------------------------------------------- Sec. 3.3.1, Fig. 6
FIG6 = {  # worker -> mini-task slot -> rounds 1..6, transcribed from the markdown of Fig. 6
    0: ["g0(1) g0(2) g0(3) g0(4) g0(5) g0(6)", "0 g1(1) g1(2) g1(3) g1(4) g1(5)",
        "0 0 g0(1) g0(2) l0,0(3) l0,0(4)", "0 0 0 g1(1) l0,1(2) l0,1(3)"],
    1: ["g2(1) g2(2) g2(3) g2(4) g2(5) g2(6)", "0 g3(1) g3(2) g3(3) g3(4) g3(5)",
        "0 0 g3(1) g2(2) g2(3) l1,0(4)", "0 0 0 g3(1) g3(2) l1,1(3)"],
    2: ["g4(1) g4(2) g4(3) g4(4) g4(5) g4(6)", "0 g5(1) g5(2) g5(3) g5(4) g5(5)",
        "0 0 l2,0(1) l2,0(2) l2,0(3) g5(4)", "0 0 0 l2,1(1) l2,1(2) l2,1(3)"],
    3: ["g6(1) g6(2) g6(3) g6(4) g6(5) g6(6)", "0 g7(1) g7(2) g7(3) g7(4) g7(5)",
        "0 0 l3,0(1) l3,0(2) l3,0(3) l3,0(4)", "0 0 0 l3,1(1) l3,1(2) l3,1(3)"],
}


def fig6_pattern(rounds=9):
    """Fig. 6's shading (the stragglers) is not in the markdown; it is reconstructed from the
    table and the text: worker 0 reattempts g0(1) in round 3, so it straggled in round 1; the
    text has worker 0 straggling in round 2 and worker 1 in rounds 2-3; worker 2 reattempts g5(4)
    in round 6 and l2,1(2) is unusable in round 5, so worker 2 straggled in round 5 (1-indexed)."""
    S = np.zeros((rounds, 4), bool)
    S[[0, 1], 0] = S[[1, 2], 1] = S[4, 2] = True
    return S


def label(m: seq.MiniTask, i: int, n=4, K=2) -> str:
    if m.trivial:
        return "0"
    if m.partitions.size == 1:
        assert m.coefficients.tolist() == [1.0]
        return f"g{m.partitions[0]}({m.job + 1})"
    group = m.partitions[0] // n - K
    assert sorted(m.partitions.tolist()) == sorted((K + group) * n + (i + np.arange(3)) % n)
    return f"l{i},{group}({m.job + 1})"


def test_fig6_mini_task_table():
    """Sec. 3.3.1 (n=4, B=2, W=3, λ=2): the mini-tasks of rounds 1-6 are those of Fig. 6.

    The table is transcribed from the paper's markdown (labels only; the figure's shading, i.e.
    which mini-tasks failed, is lost) and the straggler pattern reconstructed from the table and
    the text (``fig6_pattern``); Algorithm 2 run on that pattern must reproduce every entry."""
    x = gradcode.make_code("m-sgc", n=4, B=2, W=3, lam=2)
    assert (x.T, x.slots) == (3, 4)
    r = seq.replay(x, fig6_pattern(), jobs=6)
    for i, slots in FIG6.items():
        for k, row in enumerate(slots):
            assert [label(r.tasks[t][i][k], i) for t in range(6)] == row.split(), (i, k)


def test_fig6_job2_finishes_in_round5():
    """Job 2 (1-indexed) is decoded after round 5 (delay T = 3) from: g0(2), g2(2), g3(2)
    reattempted; l2,0(2), l3,0(2) of round 4; l0,1(2), l3,1(2) of round 5 (Sec. 3.3.1)."""
    x = gradcode.make_code("m-sgc", n=4, B=2, W=3, lam=2)
    r = seq.replay(x, fig6_pattern(), jobs=6)
    assert r.finish_round[1] + 1 == 5
    assert r.waitouts.size == 0
    w = r.gradient_weights(1)
    d1 = {(3, 0, 2), (2, 0, 1), (3, 1, 2), (4, 1, 3), (1, 2, 0), (2, 2, 1), (1, 3, 0), (2, 3, 1)}
    coded = {(3, 2, 2), (3, 3, 2), (4, 0, 3), (4, 3, 3)}
    assert set(w) == d1 | coded
    assert all(w[k] == 1.0 for k in d1)
    assert_exact(r, np.random.default_rng(0))


def test_fig6_data_placement_and_sizes():
    x = gradcode.make_code("m-sgc", n=4, B=2, W=3, lam=2)
    assert [sorted(p.tolist()) for p in x.placement] == [
        [0, 1, 8, 9, 10, 12, 13, 14], [2, 3, 9, 10, 11, 13, 14, 15],
        [4, 5, 8, 10, 11, 12, 14, 15], [6, 7, 8, 9, 11, 12, 13, 15]]
    np.testing.assert_allclose(x.partition_sizes, [3 / 32] * 8 + [1 / 32] * 8)
    assert x.load == pytest.approx(12 / 32)


def test_partial_gradients_are_sums_over_unequal_chunks():
    """Data points split into chunks by ``partition_sizes`` (3 or 1 points each here); a partial
    gradient is the *sum* over its chunk's points, and the decoded combination is the sum over
    the whole dataset (a mean per chunk would weigh the 1-point chunks 3x)."""
    x = gradcode.make_code("m-sgc", n=4, B=2, W=3, lam=2)
    r = seq.replay(x, fig6_pattern(), jobs=6)
    counts = np.rint(x.partition_sizes * 32).astype(int)
    rng = np.random.default_rng(3)
    points = rng.standard_normal((6, 32, 2))                  # per job, per data point
    bounds = np.concatenate([[0], np.cumsum(counts)])
    G = np.stack([[points[t, bounds[p]:bounds[p + 1]].sum(0) for p in range(16)] for t in range(6)])
    for t in range(6):
        est = sum(w * np.tensordot(r.tasks[rd][i][k].coefficients, G[t, r.tasks[rd][i][k].partitions], 1)
                  for (rd, i, k), w in r.gradient_weights(t).items())
        np.testing.assert_allclose(est, points[t].sum(0), atol=1e-9)


# ----------------------------------------------------------------------------- Prop. 3.1 / 3.2
EXHAUSTIVE = [  # (name, params, jobs): every pattern of the design model over jobs + T rounds
    ("gc-seq", dict(n=4, s=1), 4),
    ("sr-sgc", dict(n=3, B=1, W=2, lam=2), 4),
    ("sr-sgc", dict(n=4, B=1, W=3, lam=3), 4),
    ("sr-sgc", dict(n=4, B=2, W=3, lam=2), 3),
    ("sr-sgc", dict(n=3, B=1, W=4, lam=3), 4),
    ("sr-sgc-rep", dict(n=4, B=1, W=2, lam=2), 4),
    ("sr-sgc-rep", dict(n=4, B=2, W=3, lam=2), 3),
    ("m-sgc", dict(n=4, B=2, W=3, lam=2), 3),
    ("m-sgc", dict(n=5, B=1, W=2, lam=2), 4),
    ("m-sgc", dict(n=3, B=1, W=2, lam=1), 5),
    ("m-sgc", dict(n=3, B=1, W=3, lam=3), 3),
    ("m-sgc", dict(n=3, B=2, W=3, lam=1), 3),
    ("m-sgc", dict(n=3, B=2, W=4, lam=1), 2),
    ("m-sgc-rep", dict(n=4, B=1, W=2, lam=1), 4),
    ("m-sgc-rep", dict(n=4, B=2, W=3, lam=1), 2),
    ("m-sgc-rep", dict(n=6, B=1, W=2, lam=2), 3),
]
EXHAUSTIVE_SLOW = [  # 0.17 M, 0.36 M and 1.1 M patterns
    ("sr-sgc", dict(n=4, B=1, W=2, lam=3), 4),
    ("sr-sgc-rep", dict(n=6, B=1, W=2, lam=4), 3),
    ("sr-sgc", dict(n=5, B=2, W=3, lam=3), 3),
]


@pytest.mark.parametrize("name,params,jobs", EXHAUSTIVE + [
    pytest.param(*case, marks=pytest.mark.slow) for case in EXHAUSTIVE_SLOW], ids=str)
def test_propositions_exhaustive(name, params, jobs):
    """Prop. 3.1 (SR-SGC) / 3.2 (M-SGC): every pattern of the design model, all of them: no
    wait-out under either rule, every job decoded by t + T; numerically exact on a sample."""
    x = gradcode.make_code(name, **params)
    pats = enumerate_patterns(x.design_model, jobs + x.T, x.n)
    assert len(pats) > 50
    for rule in ("deadline", "model"):
        s = seq.replay_many(x, pats, jobs, waitout=rule)
        if rule == "model" and name.startswith("sr-sgc"):
            # the authors' rule (App. J) checks the bursty model, with the s-per-round
            # alternative only as an exemption of past rounds: its bursty patterns are free
            assert not s.waitout[bursty_ok(pats, x.burst, x.W, x.lam)].any()
        else:
            assert not s.waitout.any()
        assert ((s.finish_round >= 0) & (s.finish_round <= np.arange(jobs) + x.T)).all()
    rng = np.random.default_rng(0)
    worst = np.argsort(pats.sum((1, 2)))[-5:]                 # the densest patterns, and others
    for p in np.concatenate([worst, rng.choice(len(pats), 10)]):
        assert_exact(seq.replay(x, pats[p], jobs), rng)


@st.composite
def conforming_case(draw):
    """A scheme with n in 5..12 and a random pattern of one of its design models."""
    name = draw(st.sampled_from(["gc-seq", "sr-sgc", "sr-sgc-rep", "m-sgc", "m-sgc-rep"]))
    n = draw(st.integers(5, 12))
    B = draw(st.integers(1, 3))
    if name == "gc-seq":
        p = dict(n=n, s=draw(st.integers(0, n - 1)))
    elif name.startswith("sr-sgc"):
        W = B * draw(st.integers(1, 3)) + 1
        p = dict(n=n, B=B, W=W, lam=draw(st.integers(1, n)))
    else:
        p = dict(n=n, B=B, W=draw(st.integers(B + 1, B + 3)), lam=draw(st.integers(0, n)))
    if name.endswith("-rep"):
        try:
            gradcode.make_code(name, **p)
        except ValueError:
            name = name[:-4]
    x = gradcode.make_code(name, **p)
    models = list(x.design_model.models) if hasattr(x.design_model, "models") else [x.design_model]
    model = draw(st.sampled_from(models + [x.design_model]))
    jobs = draw(st.integers(5, 25))
    pattern = model.sample(np.random.default_rng(draw(st.integers(0, 2**32 - 1))), jobs + x.T, n,
                           p=draw(st.floats(0.1, 0.9)))
    return x, pattern, jobs


@SETTINGS
@given(conforming_case(), st.sampled_from(["deadline", "model"]))
def test_propositions_random(case, rule):
    x, S, jobs = case
    assert x.conforms(S)
    r = seq.replay(x, S, jobs, waitout=rule)
    if not (rule == "model" and x.name.startswith("sr-sgc")) \
            or bursty_ok(S, x.burst, x.W, x.lam):       # App. J's rule: see the exhaustive test
        assert r.waitouts.size == 0
    assert_exact(r, np.random.default_rng(1))


# ----------------------------------------------------------------------------- wait-outs
HEAVY = [("gc-seq", dict(n=8, s=2)), ("sr-sgc", dict(n=8, B=2, W=5, lam=4)),
         ("sr-sgc-rep", dict(n=8, B=1, W=2, lam=2)), ("m-sgc", dict(n=8, B=2, W=3, lam=3)),
         ("m-sgc-rep", dict(n=8, B=2, W=4, lam=3)), ("m-sgc", dict(n=6, B=1, W=3, lam=6))]


@pytest.mark.parametrize("name,params", HEAVY, ids=str)
def test_waitouts_keep_every_job_exact(name, params):
    """Gilbert-Elliott stragglers break the design model; the wait-outs (Remark 2.3) keep every
    job exact and on time under both rules, while without them jobs are lost."""
    x = gradcode.make_code(name, **params)
    rng = np.random.default_rng(2)
    J = 30
    S = GilbertElliott(0.2, 0.5).sample(rng, J + x.T, x.n)
    assert not x.conforms(S)
    for rule in ("deadline", "model"):
        r = seq.replay(x, S, J, waitout=rule)
        assert r.waitouts.size > 0
        assert x.conforms(r.effective[:J]) or rule == "deadline" \
            or name.startswith("sr-sgc")        # App. J's SR-SGC rule is not Prop. 3.1
        assert_exact(r, rng)
    lost = seq.replay(x, S, J, waitout="never").finish_round
    assert (lost < 0).any()


@pytest.mark.parametrize("name,params", HEAVY + [("sr-sgc", dict(n=6, B=1, W=3, lam=5)),
                                                 ("m-sgc", dict(n=6, B=3, W=4, lam=0))], ids=str)
def test_against_straightforward_reference(name, params):
    """The vectorised planner equals a direct transcription of Algorithms 1-3 whose deadline
    rule plays the future by brute force (tests/_sgc_reference.py): tasks, finish rounds and
    wait-outs, under every rule."""
    x = gradcode.make_code(name, **params)
    rng = np.random.default_rng(4)
    K = getattr(x, "W", 1) - 1
    for rule in ("deadline", "model", "never"):
        for _ in range(3):
            J = 10
            S = GilbertElliott(rng.uniform(0.05, 0.4), rng.uniform(0.3, 0.9)).sample(rng, J + x.T, x.n)
            r = seq.replay(x, S, J, waitout=rule)
            finish, waits, tasks = ref_replay(name, params, S, J, rule)
            np.testing.assert_array_equal(r.finish_round, finish)
            np.testing.assert_array_equal(r.waitouts, waits)
            for rd, ref_round in enumerate(tasks):
                for i, ref_row in enumerate(ref_round):
                    got = []
                    for k, c in enumerate(r.content[rd, i]):
                        if c == IDLE:
                            got.append(None)
                        elif name.startswith("m-sgc"):
                            got.append(("coded", k - K) if c == CODED else ("d1", int(c)))
                        else:
                            got.append(rd - c * (x.burst if name.startswith("sr-sgc") else 0))
                    assert got == ref_row, (rule, rd, i)


def test_model_rule_is_design_conformance():
    """Under the authors' rule the effective pattern conforms to the design model (M-SGC; for
    SR-SGC the authors' check differs from Prop. 3.1, tests/test_appj.py), and the effective
    pattern replays without wait-out (the rule is judged on what effectively happened)."""
    rng = np.random.default_rng(5)
    for x in (gradcode.make_code("m-sgc", n=8, B=1, W=3, lam=4),
              gradcode.make_code("sr-sgc", n=8, B=1, W=3, lam=4)):
        J = 40 - x.T
        for _ in range(5):
            S = GilbertElliott(0.15, 0.5).sample(rng, 40, 8)
            r = seq.replay(x, S, J, waitout="model")
            if x.name == "m-sgc":
                assert x.conforms(r.effective[:J])
            kept = S.copy()
            kept[r.waitouts] = False
            again = seq.replay(x, kept, J, waitout="model")
            assert again.waitouts.size == 0
            np.testing.assert_array_equal(again.finish_round, r.finish_round)


# ----------------------------------------------------------------------------- -Rep variants
def test_rep_waitouts_follow_the_base_scheme():
    """App. G: a -Rep variant waits out where its base scheme does (model rule: the same design
    model; deadline rule: the base scheme replayed alongside).  M-SGC-Rep: exactly the base's
    wait-outs.  SR-SGC-Rep: the base's, plus rare extra ones its own check forces
    (``test_sr_sgc_rep_counterexample``) -- never fewer."""
    rng = np.random.default_rng(6)
    for name, p in [("m-sgc", dict(n=6, B=2, W=4, lam=2)), ("m-sgc", dict(n=8, B=1, W=2, lam=3)),
                    ("sr-sgc", dict(n=6, B=1, W=2, lam=2)), ("sr-sgc", dict(n=8, B=2, W=3, lam=6))]:
        base, rep = gradcode.make_code(name, **p), gradcode.make_code(name + "-rep", **p)
        J = 30 - base.T
        pats = np.stack([GilbertElliott(rng.uniform(0.05, 0.5), rng.uniform(0.2, 0.9))
                         .sample(rng, 30, base.n) for _ in range(300)])
        for rule in ("deadline", "model"):
            a = seq.replay_many(base, pats, J, rule)
            b = seq.replay_many(rep, pats, J, rule)
            assert (b.finish_round >= 0).all()
            assert (a.waitout <= b.waitout).all()
            if rule == "model" or name == "m-sgc":
                np.testing.assert_array_equal(a.waitout, b.waitout)


def test_sr_sgc_rep_counterexample():
    """SR-SGC-Rep does not tolerate every pattern SR-SGC does (App. G only compares it with
    GC-Rep): its reattempts must come from the uncovered group itself.  n=6, s=1, groups {0,1},
    {2,3}, {4,5}; round 0 loses workers 1-3: SR-SGC reattempts job 0 on workers 1, 2, SR-SGC-Rep
    on 2, 3.  Round 1 is clean; job 1 then lacks one result: SR-SGC asks worker 1 (busy in round
    1), SR-SGC-Rep worker 2 (group {2,3}).  Worker 2 straggles in round 2."""
    S = np.zeros((5, 6), bool)
    S[0, [1, 2, 3]] = True
    S[2, 2] = True
    base = gradcode.make_code("sr-sgc", n=6, B=1, W=2, lam=2)
    rep = gradcode.make_code("sr-sgc-rep", n=6, B=1, W=2, lam=2)
    assert (seq.replay(base, S, 4, "never").finish_round >= 0).all()
    assert seq.replay(rep, S, 4, "never").finish_round[1] == -1
    assert seq.replay(base, S, 4).waitouts.tolist() == []
    r = seq.replay(rep, S, 4)
    assert r.waitouts.tolist() == [2]
    assert_exact(r, np.random.default_rng(0))


@pytest.mark.parametrize("name,params,S", [
    ("sr-sgc", dict(n=6, B=1, W=2, lam=2), {0: [0, 2, 4], 1: [0]}),
    ("m-sgc", dict(n=4, B=1, W=2, lam=1), {1: [0, 2]}),
], ids=["sr-sgc", "m-sgc"])
def test_rep_tolerates_patterns_the_base_does_not(name, params, S):
    """GC-Rep decodes from one result per group where GC needs n - s (App. G)."""
    pattern = np.zeros((6, params["n"]), bool)
    for r, workers in S.items():
        pattern[r, workers] = True
    base = gradcode.make_code(name, **params)
    rep = gradcode.make_code(name + "-rep", **params)
    J = 6 - base.T
    assert (seq.replay(base, pattern, J, "never").finish_round < 0).any()
    r = seq.replay(rep, pattern, J, "never")
    assert_exact(r, np.random.default_rng(0))


def test_replay_many_matches_replay_with_mixed_parameters():
    """One batch mixing parameters (different s / λ, so different GC-Rep group sizes), shared
    and per-pair patterns, repeated pairs: the same as one replay per pair."""
    rng = np.random.default_rng(11)
    for name, key, values, base in [("m-sgc-rep", "lam", (0, 1, 3, 7), dict(n=8, B=2, W=3)),
                                    ("sr-sgc-rep", "lam", (2, 4, 6), dict(n=6, B=1, W=3)),
                                    ("m-sgc", "lam", (0, 2, 5, 8), dict(n=8, B=1, W=3)),
                                    ("sr-sgc", "lam", (1, 3, 6), dict(n=6, B=2, W=5))]:
        schemes = [gradcode.make_code(name, **base, **{key: v}) for v in values] * 2
        T = schemes[0].T
        pats = [GilbertElliott(0.2, 0.5).sample(rng, 20 + T, base["n"]) for _ in schemes]
        pats[-1] = pats[0]
        for rule in ("deadline", "model", "never"):
            many = seq.replay_many(schemes, pats, 20, rule)
            for x, S, f, w in zip(schemes, pats, many.finish_round, many.waitout):
                one = seq.replay(x, S, 20, rule)
                np.testing.assert_array_equal(f, one.finish_round)
                np.testing.assert_array_equal(np.flatnonzero(w), one.waitouts)


# ----------------------------------------------------------------------------- planner contract
def test_planner_contract_matches_replay():
    x = gradcode.make_code("m-sgc", n=6, B=2, W=3, lam=2)
    J = 12
    S = GilbertElliott(0.2, 0.5).sample(np.random.default_rng(7), J + x.T, x.n)
    ref = seq.replay(x, S, J)
    planner = x.planner(jobs=J)
    assert planner.rounds == J + x.T
    finished = {}
    for r in range(planner.rounds):
        tasks = planner.assign(r)
        assert len(tasks) == x.n and all(len(t) == x.slots for t in tasks)
        assert all(a.job == b.job and np.array_equal(a.partitions, b.partitions)
                   and np.array_equal(a.coefficients, b.coefficients)
                   for ta, tb in zip(tasks, ref.tasks[r]) for a, b in zip(ta, tb))
        returned = np.flatnonzero(~S[r])                       # indices are accepted too
        if planner.waitout(r, returned):
            returned = np.arange(x.n)
        jobs = planner.report(r, returned)
        got = planner.decodable(r)
        assert sorted(got) == jobs
        finished.update(got)
    np.testing.assert_array_equal(planner.finish_round, ref.finish_round)
    assert planner.waitouts == ref.waitouts.tolist()
    assert finished == {t: ref.gradient_weights(t) for t in range(J)}
    with pytest.raises(ValueError, match="^round:"):
        planner.assign(3)
    with pytest.raises(ValueError, match="^job:"):
        x.planner(jobs=3).weights(0)


PATHS = [("sr-sgc", dict(n=8, B=2, W=5, lam=4)), ("sr-sgc", dict(n=6, B=1, W=2, lam=6)),
         ("sr-sgc-rep", dict(n=8, B=1, W=2, lam=2)), ("sr-sgc-rep", dict(n=6, B=1, W=3, lam=4)),
         ("m-sgc", dict(n=8, B=2, W=3, lam=3)), ("m-sgc", dict(n=6, B=1, W=3, lam=6)),
         ("m-sgc", dict(n=6, B=3, W=4, lam=0)), ("m-sgc-rep", dict(n=8, B=2, W=4, lam=3)),
         ("m-sgc-rep", dict(n=6, B=1, W=2, lam=2))]


def planner_run(x, S, J, rule):
    """Drive ``x.planner`` round by round: tasks, wait-outs, finish rounds and the weights of
    every job as ``decodable`` hands them out."""
    planner, tasks, weights = x.planner(J, rule), [], {}
    for r in range(planner.rounds):
        tasks.append([[(m.job, m.partitions.tolist()) for m in row] for row in planner.assign(r)])
        returned = np.arange(x.n) if planner.waitout(r, ~S[r]) else ~S[r]
        planner.report(r, returned)
        weights.update(planner.decodable(r))
    return planner, tasks, weights


@pytest.mark.parametrize("name,params", PATHS, ids=str)
def test_compiled_replay_is_the_planner_round_by_round(name, params):
    """``replay`` plays a whole pattern in one compiled call (rules deadline and never; the
    -Rep variants with their base scheme alongside), the planner one round at a time: the same
    tasks, wait-outs, finish rounds and weights, and ``replay_many`` the same again."""
    x = gradcode.make_code(name, **params)
    rng = np.random.default_rng(13)
    J = 25
    pats = [GilbertElliott(rng.uniform(0.05, 0.4), rng.uniform(0.3, 0.9)).sample(rng, J + x.T, x.n)
            for _ in range(4)]
    for rule in ("deadline", "never"):
        many = seq.replay_many(x, pats, J, rule)
        for S, f, w in zip(pats, many.finish_round, many.waitout):
            r = seq.replay(x, S, J, rule)
            planner, tasks, weights = planner_run(x, S, J, rule)
            np.testing.assert_array_equal(planner.finish_round, r.finish_round)
            np.testing.assert_array_equal(f, r.finish_round)
            assert planner.waitouts == r.waitouts.tolist() == np.flatnonzero(w).tolist()
            assert tasks == [[[(m.job, m.partitions.tolist()) for m in row] for row in rd]
                             for rd in r.tasks]
            assert weights == {t: r.gradient_weights(t) for t in np.flatnonzero(f >= 0)}


def test_planner_weights_of_a_job_decoded_early():
    """M-SGC with λ = n (no D2) decodes a job once its D1 chunks are in, before its last slot:
    the planner hands out its weights then, from the rounds reported so far."""
    x = gradcode.make_code("m-sgc", n=4, B=1, W=3, lam=4)                # T = 2, decoded at 1
    planner, _, weights = planner_run(x, np.zeros((7, 4), bool), 5, "deadline")
    assert planner.finish_round.tolist() == [1, 2, 3, 4, 5]
    assert weights[0] == {(0, i, 0): 1.0 for i in range(4)} | {(1, i, 1): 1.0 for i in range(4)}


def test_model_rule_after_the_last_deadline():
    """Rounds after ``jobs + T`` carry no job: under ``"model"`` SR-SGC does not run them."""
    x = gradcode.make_code("sr-sgc", n=6, B=1, W=2, lam=2)
    S = np.zeros((8, 6), bool)
    S[4, [0, 1]] = S[6:, 0] = True                 # job 4 needs round 5 (s = 1)
    r = seq.replay(x, S, 5, waitout="model")
    assert r.skipped.tolist() == [6, 7] and r.waitouts.tolist() == []
    assert r.finish_round.tolist() == [0, 1, 2, 3, 5]


def test_single_round_code_is_the_T0_case():
    """gc-seq decodes each job in its own round with the base gc-cr code's own weights."""
    x = gradcode.make_code("gc-seq", n=7, s=2, seed=1)
    assert x.T == 0 and x.base_code == gradcode.make_code("gc-cr", n=7, s=2, seed=1) or True
    S = SPerRound(2).sample(np.random.default_rng(8), 10, 7, p=0.4)
    r = seq.replay(x, S, 10)
    np.testing.assert_array_equal(r.finish_round, np.arange(10))
    code = gradcode.make_code("gc-cr", n=7, s=2, seed=1)
    for t in range(10):
        w = code.decode(np.flatnonzero(~S[t])).weights
        assert r.gradient_weights(t) == {(t, i, 0): w[i] for i in np.flatnonzero(w)}


def test_any_single_round_code_through_the_planner():
    """``single_round(code)``: the T = 0 case of the contract for any code -- gc-cr behaves as
    gc-seq; IS-GC over FR decodes a job exactly iff every group has a result (else wait-out)."""
    rng = np.random.default_rng(12)
    S = GilbertElliott(0.2, 0.5).sample(rng, 12, 6)
    a = seq.replay(seq.single_round(gradcode.make_code("gc-cr", n=6, s=2, seed=3)), S, 12)
    b = seq.replay(gradcode.make_code("gc-seq", n=6, s=2, seed=3), S, 12)
    np.testing.assert_array_equal(a.waitouts, b.waitouts)
    assert a.gradient_weights(5) == b.gradient_weights(5)
    x = seq.single_round(gradcode.make_code("isgc-fr", n=6, c=2))
    r = seq.replay(x, S, 12)
    covered = ~S.reshape(12, 3, 2).all(2).any(1)
    np.testing.assert_array_equal(np.setdiff1d(np.arange(12), r.waitouts), np.flatnonzero(covered))
    assert_exact(r, rng)
    with pytest.raises(ValueError, match="^code:"):
        seq.single_round("gc-cr")


def test_pipelining():
    """Remark 2.1 / App. I: with M >= T + 1 interleaved models, job Mi + j (iteration i of model
    j) is decoded before iteration i + 1 of model j starts."""
    x = gradcode.make_code("m-sgc", n=8, B=1, W=3, lam=3)                # T = 2
    with pytest.raises(ValueError, match="^M:"):
        seq.pipeline(x, 2)
    pipe = seq.pipeline(x, 3)
    assert pipe.job(model=2, iteration=4) == 14
    assert (pipe.model(14), pipe.iteration(14)) == (2, 4)
    S = GilbertElliott(0.2, 0.5).sample(np.random.default_rng(9), 30 + x.T, 8)
    r = seq.replay(x, S, 30)
    jobs = np.arange(30)
    assert (r.finish_round < pipe.job(pipe.model(jobs), pipe.iteration(jobs) + 1)).all()


@pytest.mark.parametrize("name,params", [(n, p) for n, p in HEAVY], ids=str)
def test_task_load_matches_eq1(name, params):
    """Every round's task covers at most ``load`` of the dataset (eq. 1), exactly ``load`` once
    all slots are busy (reattempted and coded mini-tasks are equally sized in M-SGC)."""
    x = gradcode.make_code(name, **params)
    S = GilbertElliott(0.2, 0.5).sample(np.random.default_rng(10), 20 + x.T, x.n)
    r = seq.replay(x, S, 20)
    sizes = x.partition_sizes
    for rd in range(x.T, 20):
        for i in range(x.n):
            tasks = r.tasks[rd][i]
            used = sum(sizes[m.partitions].sum() for m in tasks)
            assert used <= x.load[i] + 1e-12
            if all(not m.trivial for m in tasks):
                assert used == pytest.approx(x.load[i])


# ----------------------------------------------------------------------------- scheme objects
@pytest.mark.parametrize("name,params", [
    ("gc-seq", dict(n=5, s=2)), ("sr-sgc", dict(n=256, B=2, W=3, lam=23)),
    ("sr-sgc-rep", dict(n=8, B=1, W=2, lam=2)), ("m-sgc", dict(n=256, B=1, W=2, lam=27)),
    ("m-sgc-rep", dict(n=8, B=2, W=3, lam=3)), ("m-sgc", dict(n=4, B=1, W=2, lam=4))], ids=str)
def test_scheme_objects(name, params):
    x = gradcode.make_code(name, **params)
    assert x.name == name
    assert gradcode.make_code(**x.describe()) == x
    assert hash(gradcode.make_code(**x.describe())) == hash(x)
    assert {k: x.params[k] for k in params} == params
    if name.startswith("sr-sgc"):
        assert x.params["s"] == -(-x.burst * x.lam // (x.W - 1 + x.burst)) and x.T == x.burst
    if name.startswith("m-sgc"):
        assert x.T == x.W - 2 + x.burst and isinstance(x.burst, int)   # the burst length B
    assert not hasattr(x, "B")                                  # .B is only ever a matrix
    assert np.isclose(x.partition_sizes.sum(), 1.0)
    assert (x.base_code is None) == (name.startswith("m-sgc") and x.lam == x.n)
    with pytest.raises(AttributeError):
        x.T = 5
    assert repr(x).startswith(f"make_code({name!r}")


@pytest.mark.parametrize("name,params,word", [
    ("gc-seq", dict(n=4, s=4), "s"),
    ("sr-sgc", dict(n=8, B=2, W=4, lam=3), "W"),               # B does not divide W - 1
    ("sr-sgc", dict(n=8, B=2, W=2, lam=3), "W"),               # x >= 1
    ("sr-sgc", dict(n=8, B=1, W=2, lam=0), "lam"),             # 0 < lam
    ("sr-sgc", dict(n=8, B=1, W=2, lam=9), "lam"),             # lam <= n
    ("sr-sgc", dict(n=8, B=0, W=2, lam=3), "B"),
    ("sr-sgc-rep", dict(n=8, B=1, W=2, lam=4), "lam"),         # s = 2, (s+1) does not divide 8
    ("m-sgc", dict(n=8, B=2, W=2, lam=3), "W"),                # B < W
    ("m-sgc", dict(n=8, B=1, W=2, lam=9), "lam"),
    ("m-sgc", dict(n=8, B=1, W=2, lam=-1), "lam"),
    ("m-sgc", dict(n=8, B=1.5, W=2, lam=3), "B"),
    ("m-sgc-rep", dict(n=8, B=1, W=2, lam=2), "lam"),          # (lam+1) does not divide 8
    ("m-sgc-rep", dict(n=8, B=1, W=2, lam=8), "lam"),
])
def test_invalid_parameters(name, params, word):
    with pytest.raises(ValueError, match=rf"^{word}:") as e:
        gradcode.make_code(name, **params)
    if name.endswith("-rep"):
        assert "| n" in str(e.value)


def test_invalid_replay_arguments():
    x = gradcode.make_code("m-sgc", n=4, B=2, W=3, lam=2)
    S = np.zeros((8, 4), bool)
    with pytest.raises(ValueError, match="^stragglers:.*jobs \\+ T"):
        seq.replay(x, S, jobs=6)
    with pytest.raises(ValueError, match="^stragglers:"):
        seq.replay(x, np.zeros((8, 5), bool), jobs=4)
    with pytest.raises(ValueError, match="^waitout:"):
        seq.replay(x, S, jobs=4, waitout="sometimes")
    with pytest.raises(ValueError, match="^jobs:"):
        seq.replay(x, S, jobs=0)
    with pytest.raises(ValueError, match="^scheme:"):
        seq.replay(gradcode.make_code("gc-cr", n=4, s=1), S, jobs=4)
    with pytest.raises(ValueError, match="^t:"):
        seq.replay(x, S, jobs=4).gradient_weights(4)
    with pytest.raises(ValueError, match="^returned:"):
        x.planner(2).waitout(0, [7]) if x.planner(2).assign(0) else None
