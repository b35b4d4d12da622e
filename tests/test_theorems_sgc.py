"""Paper 4's statements checked by computation (``theorems``, ``sgc_*``): each one's pinned verdict
on the quick sizes (checked by ``test_theorems.py``), and the checks' building blocks fed
deliberately wrong instances (a check that cannot fail is a defect)."""

from fractions import Fraction

import numpy as np

import gradcode
from gradcode.experiments.theorems import Tally
from gradcode.experiments.theorems import sgc_common as sgc
from gradcode.experiments.theorems import sgc_bounds, sgc_examples, sgc_m, sgc_rep, sgc_sr
from gradcode.stragglers import Arbitrary, Bursty, SPerRound, enumerate_patterns

#: the verdict each statement of paper 4 got (all hold: no counterexample found)
VERDICTS = {
    "Sec. 3.1": "reproduced",
    "Sec. 3.2": "reproduced",
    "Prop. 3.1": "reproduced",
    "App. D": "reproduced",
    "Remark 3.1": "reproduced",
    "Prop. 3.2": "reproduced",
    "Sec. 3.3.2, eq. 1": "reproduced",
    "Remark 3.3": "reproduced",
    "Thm F.1": "reproduced",
    "Thm F.2": "reproduced",
    "Remark F.1, 3.4": "reproduced",
    "Sec. 3.3.1, Fig. 6": "reproduced",
    "Example F.1, Fig. 12": "reproduced",
    "App. G example": "reproduced",
    "App. G": "reproduced",
    "Remark 2.3": "reproduced",
    "App. I, Remark 2.1": "reproduced",
    "App. B examples": "reproduced",
}


# ----------------------------------------------------------------- the models as printed
def test_models_match_the_enumeration():
    """Sec. 2.1's definitions (here) and gradcode's enumeration give the same pattern sets."""
    for model, mine, R, n in [
            (Bursty(2, 3, 2), lambda P: sgc.bursty(P, 2, 3, 2), 4, 3),
            (Bursty(1, 3, 1), lambda P: sgc.bursty(P, 1, 3, 1), 5, 3),
            (Arbitrary(2, 3, 1), lambda P: sgc.arbitrary(P, 2, 3, 1), 5, 3),
            (SPerRound(1), lambda P: sgc.per_round(P, 1), 3, 4)]:
        every = sgc.all_patterns(R, n)
        want = {p.tobytes() for p in every[mine(every)]}
        got = {p.tobytes() for p in enumerate_patterns(model, R, n)}
        assert got == want and 0 < len(want) < len(every)


def test_model_predicates_on_hand_made_patterns():
    burst = np.array([[[1, 0], [1, 0], [0, 0]]], bool)     # worker 0: two rounds in a row
    gap = np.array([[[1, 0], [0, 0], [1, 0]]], bool)       # worker 0: rounds 0 and 2
    assert sgc.bursty(burst, 2, 3, 1)[0] and not sgc.bursty(gap, 2, 3, 1)[0]
    assert not sgc.bursty(burst, 1, 3, 1)[0]                # a burst of 2 > B = 1
    assert sgc.arbitrary(gap, 1, 2, 1)[0] and not sgc.arbitrary(gap, 1, 3, 1)[0]
    two = np.array([[[1, 1, 0], [0, 0, 0], [0, 0, 0]]], bool)
    both = np.array([[[1, 1, 0], [0, 0, 1], [0, 0, 0]]], bool)
    assert sgc.sr_model(two, 1, 3, 2, 1)[0]                 # bursty, not 1 per round
    assert not sgc.sr_model(both, 1, 3, 2, 1)[0]            # 3 distinct > λ = 2 and 2 > s = 1
    assert sgc.all_patterns(2, 3).shape == (64, 2, 3)


def test_printed_formulas():
    assert sgc.s_printed(2, 3, 23) == 12                    # Table 1's SR-SGC
    assert sgc.eq1(4, 2, 3, 2) == Fraction(3, 8)            # Sec. 3.3.1
    assert sgc.eq1(4, 1, 2, 4) == sgc.eq2(4, 1, 2, 4) == Fraction(1, 2)    # Example F.1
    assert round(float(sgc.eq1(256, 1, 2, 27)), 6) == 0.007543             # Table 3
    assert sgc.eq2(4, 2, 2, 4) is None and sgc.eq3(4, 2, 2, 4) is None     # infinite
    assert sgc.eq3(4, 1, 2, 4) == Fraction(1, 2)


# ----------------------------------------------------------------- wrong instances are caught
def _sr_patterns():
    x = gradcode.make_code("sr-sgc", n=3, B=1, W=2, lam=2)
    P = enumerate_patterns(x.design_model, 4, 3)
    return x, P


def test_on_time_catches_a_too_short_delay():
    x, P = _sr_patterns()
    assert sgc.on_time(x, P, 3, 1).all()
    assert not sgc.on_time(x, P, 3, 0).all()                # SR-SGC does need T = B


def test_tolerance_check_fails_on_wrong_claims():
    x, P = _sr_patterns()
    p = dict(n=3, B=1, W=2, lam=2)
    conforms = lambda Q: sgc.sr_model(Q, 1, 2, 2, 1)        # noqa: E731
    rng = np.random.default_rng(0)
    right = Tally()
    sgc.tolerance_check(right, "sr-sgc", p, P, 3, conforms, "Prop. 3.1", rng, 2)
    assert right.cases > len(P) and right.failures == 0
    for kwargs in (dict(T=0), dict(L=Fraction(1, 3))):     # a wrong delay, a wrong load
        t = Tally()
        sgc.tolerance_check(t, "sr-sgc", p, P, 3, conforms, "Prop. 3.1", rng, 2, **kwargs)
        assert t.failures > 0 and t.example
    t = Tally()                                         # patterns outside the model
    sgc.tolerance_check(t, "sr-sgc", p, P, 3, lambda Q: np.zeros(len(Q), bool), "none", rng, 0)
    assert t.failures == len(P)
    beyond = np.zeros((2, 4, 3), bool)                      # everyone late twice: job 0 lost
    beyond[:, :2] = True
    t = Tally()
    sgc.tolerance_check(t, "sr-sgc", p, beyond, 3, lambda Q: np.ones(len(Q), bool), "all",
                        rng, 1)
    assert t.failures == 3                                  # 2 late patterns + 1 numeric check


def test_decoding_problems_catches_a_wrong_load_and_a_lost_job():
    x = gradcode.make_code("m-sgc", n=4, B=2, W=3, lam=2)
    S = np.zeros((9, 4), bool)
    S[[0, 1], 0] = S[[1, 2], 1] = S[4, 2] = True            # Fig. 6
    rng = np.random.default_rng(0)
    assert sgc.decoding_problems(x, S, 6, 3, 3 / 8, rng) == []
    assert sgc.decoding_problems(x, S, 6, 3, 1 / 4, rng)    # load above the claim
    assert sgc.decoding_problems(x, S, 6, 3, 1 / 2, rng)    # the claimed load never reached
    assert sgc.decoding_problems(x, S, 6, 2, 3 / 8, rng)    # a shorter delay
    S[2, 3] = True                                          # 4 distinct stragglers: job lost
    assert any("decoded in round -1" in p for p in sgc.decoding_problems(x, S, 6, 3, 3 / 8, rng))


def test_delay_chains():
    f = np.array([[1, 2, 3, 3], [0, 2, 2, 3], [1, 1, 2, 3]])   # B = 1: delays
    only, longest = sgc_sr.delay_chains(f, 1)
    assert only.tolist() == [True, True, True] and longest.tolist() == [3, 1, 1]
    only, longest = sgc_sr.delay_chains(np.array([[1, 1]]), 2)    # a delay of 1 with B = 2
    assert not only[0]


def test_lower_bound_check_fails_on_a_wrong_bound():
    grid = [(n, B, W, lam) for n in (3, 5) for W in (1, 2, 3) for B in range(1, W + 1)
            for lam in range(n + 1)]
    conforms = lambda S, n, b, w, lam: sgc.bursty(S, b, w, lam)    # noqa: E731
    check, f1 = sgc_bounds.lower_bound_check, gradcode.analysis.load_lower_bound_f1
    right = Tally()
    check(right, "F.1", grid, sgc.eq2, f1, conforms)
    assert right.cases == len(grid) and right.failures == 0

    def wrong(n, B, W, lam):                                # 1/(n-λ) in both cases
        return Fraction(1, n - lam) if lam < n else None
    t = Tally()
    check(t, "F.1", grid, wrong, f1, conforms)
    assert t.failures > 0
    t = Tally()
    check(t, "F.1", grid, sgc.eq2, lambda *a: np.full(len(a[0]), 0.25), conforms)
    assert t.failures > 0
    t = Tally()                                             # the proof's pattern must conform
    check(t, "F.1", grid, sgc.eq2, f1,
          lambda S, n, b, w, lam: sgc.bursty(S, 1, w, lam) | (lam == 0))
    assert t.failures > 0


def test_periodic_pattern_and_its_count():
    S = sgc_bounds.periodic_pattern(20, 3, 6, 4, 3)        # Fig. 8: n = 20, B = 3, W = 4, λ = 4
    assert sgc.bursty(S[None], 3, 4, 4)[0] and not sgc.bursty(S[None], 2, 4, 4)[0]
    assert sgc_bounds.bound_from_pattern(S, 6) == sgc.eq2(20, 3, 4, 4) == Fraction(1, 18)
    assert sgc_bounds.bound_from_pattern(np.ones((2, 3), bool), 1) is None


def test_consistency_fails_on_a_larger_bound(monkeypatch):
    t = Tally()
    sgc_bounds.consistency(t, "F.1", 3)
    assert t.failures == 0 and t.cases > 0
    monkeypatch.setattr(sgc_bounds, "eq2", lambda *a: Fraction(100))
    t = Tally()
    sgc_bounds.consistency(t, "F.1", 3)
    assert t.failures == t.cases


def test_fig6_mismatches():
    fig6, stragglers, mismatches = (sgc_examples.FIG6, sgc_examples.FIG6_STRAGGLERS,
                                    sgc_examples.fig6_mismatches)
    assert mismatches(fig6, stragglers) == []
    table = {i: list(rows) for i, rows in fig6.items()}
    table[1][2] = "0 0 g3(1) g2(2) g2(3) g2(4)"              # ℓ10(4) misprinted as g2(4)
    assert len(mismatches(table, stragglers)) == 1
    assert mismatches(fig6, {0: (1,), 1: (2, 3), 2: (5,)})   # other stragglers
    assert sgc_examples.fig6_cell("l31(2)") == (1, [12, 13, 15])
    assert sgc_examples.fig6_cell("0") == (-1, [])


def test_msgc_layout_problems():
    x = gradcode.make_code("m-sgc", n=4, B=2, W=3, lam=2)
    assert sgc_m.msgc_layout_problems(x, dict(n=4, B=2, W=3, lam=2)) == []
    assert sgc_m.msgc_layout_problems(x, dict(n=4, B=2, W=3, lam=1))
    assert sgc_m.msgc_layout_problems(x, dict(n=4, B=1, W=3, lam=2))


def test_gc_rep_rule_and_spans():
    got = np.ones(6, bool)
    got[[1, 2, 3, 5]] = False
    assert sgc_rep.rep_decodes(got, 6, 2) and sgc_rep.rep_decodes(~got, 6, 2)
    got[[0, 1, 2]] = False                                  # group {0, 1, 2} silent
    assert not sgc_rep.rep_decodes(got, 6, 2)
    gc = gradcode.make_code("gc-cr", n=6, s=2)
    assert not sgc.spans_one(gc.B, [0, 4]) and sgc.spans_one(gc.B, [0, 1, 2, 3])
    assert not sgc.spans_one(gc.B, [])


def test_pipelining_and_waitout_checks_can_fail():
    """App. I's check flags a gradient not ready before its model's next round (here: a
    worker straggling in every round, outside the model, no wait-out); Remark 2.3's flags a
    job decoded after t + T (here: a printed delay one too short); the exhaustive parts cover
    every delay T = 0..M - 1."""
    from gradcode import make_code
    from gradcode.sequential import pipeline
    from gradcode.experiments.theorems import sgc_setting
    x = make_code("m-sgc", n=3, B=1, W=3, lam=1)
    P = np.zeros((1, 10, 3), bool)
    P[:, :, :2] = True                                   # two of three workers always straggle
    tally = Tally()
    sgc_setting._appi_ready(tally, "m-sgc", x, pipeline(x, 4), P, 8, 4)
    assert tally.failures == 1
    tally = Tally()
    y = make_code("m-sgc", n=3, B=1, W=2, lam=1)        # T = 1
    sgc_setting._late(tally, "m-sgc", {}, y, sgc.all_patterns(4, 3), 3, 0)
    assert tally.failures > 0
    assert {int(make_code(n, **p).T) for n, p, _ in sgc_setting.SMALL_PIPELINED} == {0, 1, 2, 3}
