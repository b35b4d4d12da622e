"""Paper 2 (IS-GC, Sec. VIII) in the claims ledger: the quick runs' claims.csv, the exact
recovered shares of Fig. 12 / 13 against a brute-force reference written here, and Fig. 11's
closed-form time per step against simulation and Monte Carlo."""

from __future__ import annotations

import csv
import itertools
from fractions import Fraction

import numpy as np
import pytest

from gradcode import make_code
from gradcode.experiments._ledger import CHECK_COLUMNS, COLUMNS, KINDS, VERDICTS
from gradcode.experiments.isgc import (N11, T0_GRID, delay_order_mean, holds_over, step_mean,
                                       sweep11)
from gradcode.experiments.isgc_exact import (dominates, expected, expected_recovery,
                                             fig12_candidates, monotone, shares)
from _results import quick_output

NAMES = ("isgc-time-per-step", "isgc-recovery", "isgc-hr-tradeoff")


@pytest.fixture(scope="module")
def out(quick):
    """name -> (results rows, claims rows, folder) of each quick run."""
    res = {}
    for name in NAMES:
        folder, rows, claims = quick_output(quick(name), numbers=True)
        res[name] = rows, claims, folder
    return res


def _claim(claims, text):
    hit = [c for c in claims if text in c["claim"]]
    assert len(hit) == 1, (text, [c["claim"] for c in claims])
    return hit[0]


# ------------------------------------------------------------------ ledger schema
@pytest.mark.parametrize("name", NAMES)
def test_claims_schema_and_reasons(out, name):
    rows, claims, folder = out[name]
    with (folder / "claims.csv").open() as fh:
        assert tuple(csv.DictReader(fh).fieldnames) == COLUMNS
    assert len(claims) >= 5
    for c in claims:
        assert c["paper"] == "2" and c["source"].startswith("Sec. VIII")
        assert c["verdict"] in VERDICTS and c["kind"] in KINDS
        assert c["verdict"] == "reproduced" or c["why"].strip()
        assert c["setting"] == "paper's" or c["setting"].startswith("stand-in: ")
    # one claim, one row: no two rows share their evidence
    assert len({(c["ours"], c["why"]) for c in claims}) == len(claims)
    summary = (folder / "summary.md").read_text()
    assert "**Claims**" in summary and claims[0]["claim"] in summary


def test_specs_name_paper_2():
    from gradcode.experiments import isgc, isgc_training
    specs = {**isgc.SPECS, **isgc_training.SPECS}
    assert all(specs[name].number == 2 for name in NAMES)


# ------------------------------------------------------------------ Fig. 11
def test_order_statistics_closed_form_matches_monte_carlo():
    rng = np.random.default_rng(5)
    for k in (12, 24):
        d = np.zeros((40000, N11))
        d[:, :k] = rng.exponential(1.5, (40000, k))
        srt = np.sort(d, axis=1).mean(axis=0)
        for w in (1, 12, 13, 20, 23, 24):
            assert delay_order_mean(1.5, k, w) == pytest.approx(srt[w - 1], rel=0.03, abs=1e-9)


def test_gc_minus_sync_is_compute_minus_mean_delay():
    for T0 in (0.1, 0.7, 1.5, 3.0):
        for mean in (1.5, 3.0):
            for k in (12, 24):
                diff = step_mean("GC", T0, mean, k) - step_mean("sync SGD", T0, mean, k)
                assert diff == pytest.approx(T0 - mean)


def test_holds_over_words():
    grid = np.round(np.arange(0.1, 1.01, 0.1), 2)
    assert holds_over(grid, grid <= 0.35) == "T0 <= 0.30 s"
    assert holds_over(grid, grid >= 0.75) == "T0 >= 0.80 s"
    assert holds_over(grid, (grid > 0.25) & (grid < 0.55)) == "0.30 <= T0 <= 0.50 s"
    assert holds_over(grid, grid > 5) == "no T0 in 0.1-1 s"
    assert holds_over(grid, grid > 0) == "all T0 in 0.1-1 s"


def test_time_per_step_rows_match_the_closed_form(out):
    rows = out["isgc-time-per-step"][0]
    assert {r["part"] for r in rows} == {"figure", "sweep"}
    assert len({r["T0_s"] for r in rows}) >= 3          # T0 is swept, not fixed
    for r in rows:
        assert r["time_per_step_s"] == pytest.approx(r["closed_form_s"], rel=0.1, abs=0.02)


def test_749_is_taken_from_the_1p5_s_panel(out):
    rows, claims, folder = out["isgc-time-per-step"]
    c = _claim(claims, "takes up to 74.9 %")
    fig = [r for r in rows if r["part"] == "figure" and r["scheme"].startswith("IS-GC")]
    best15 = max(r["reduction_vs_sync_pct"] for r in fig if r["delay_mean_s"] == 1.5)
    best3 = max(r["reduction_vs_sync_pct"] for r in fig if r["delay_mean_s"] == 3.0)
    assert float(c["ours"].rstrip(" %")) == pytest.approx(best15, abs=0.05)
    assert best3 > best15 + 5                       # the 3 s panel would give another number
    assert c["verdict"] == "reproduced" and c["kind"] == "value" and "<= T0 <=" in c["why"]
    assert "tolerance ±4%" in c["why"] and "T0 = 0.7 s" in c["setting"]
    # the stated T0 ranges bracket 74.9 % exactly (closed form)
    ws = tuple(sorted({int(r["w"]) for r in fig}))
    for k, lo, hi in ((12, 0.5, 0.8), (24, 0.6, 0.95)):
        inside = [T0 for T0 in T0_GRID if abs(sweep11(T0, ws)["best", 1.5, k] / 74.9 - 1) <= 0.04]
        assert lo < min(inside) < max(inside) < hi
        assert f"{min(inside):.2f} <= T0 <= {max(inside):.2f} s" in c["why"]
    with (folder / "sweep_t0.csv").open() as fh:
        sweep = list(csv.DictReader(fh))
    assert len(sweep) == len(T0_GRID) and "best_1.5s_k24_pct" in sweep[0]


def test_fig11_claims_cannot_hold_together(out):
    """GC slower than sync SGD needs T0 >= 1.51 s, where IS-GC saves at most 57 %: at the
    figure's T0 the GC row is not reproduced, and no combined row counts the others again."""
    claims = out["isgc-time-per-step"][1]
    gc = _claim(claims, "GC (c = 2) takes much more time")
    assert gc["verdict"] == "not reproduced" and gc["kind"] == "direction"
    assert "T0 >= 1.51 s" in gc["why"] and "no T0 gives both" in gc["why"]
    assert not [c for c in claims if "together" in c["claim"]]
    for text in ("suffer significantly", "slower per step than IS-SGD", "under 10 %",
                 "becomes marginal", "very similar"):
        assert _claim(claims, text)["verdict"] == "reproduced"
    assert _claim(claims, "c = 1 FR, CR")["verdict"] == "reproduced"
    assert _claim(claims, "absolute time per step")["verdict"] == "not attempted"


# ------------------------------------------------------------------ Fig. 12, 13: exact shares
def _alpha_share(code, S):
    """Reference: c alpha(G[S]) / n by brute force over the placement (no decoder involved)."""
    sup = [set(np.flatnonzero(np.asarray(code.B)[i])) for i in range(code.n_workers)]
    for r in range(len(S), 0, -1):
        for T in itertools.combinations(S, r):
            if all(not sup[a] & sup[b] for a, b in itertools.combinations(T, 2)):
                return Fraction(sum(len(sup[t]) for t in T), code.n_partitions)
    return Fraction(0)


@pytest.mark.parametrize("name,kw", [("isgc-fr", dict(n=4, c=2)), ("isgc-cr", dict(n=4, c=2)),
                                     ("isgc-cr", dict(n=8, c=4)),
                                     ("isgc-hr", dict(n=8, c1=1, c2=3, groups=2)),
                                     ("isgc-hr", dict(n=8, c1=2, c2=2, groups=2)),
                                     ("isgc-fr", dict(n=8, c=4))])
def test_shares_equal_brute_force_independent_sets(name, kw):
    code = make_code(name, **kw)
    table = shares(code)
    assert len(table) == 2 ** code.n_workers
    for S, v in table.items():
        assert v == _alpha_share(code, sorted(S)), S


def test_fig12_exact_fractions_and_enduring_straggler():
    fr, cr = make_code("isgc-fr", n=4, c=2), make_code("isgc-cr", n=4, c=2)
    assert expected_recovery(fr, 2) == Fraction(5, 6)
    assert expected_recovery(cr, 2) == Fraction(2, 3)
    for a in range(4):                 # one enduring straggler leaves both unchanged
        assert expected_recovery(fr, 2, absent=(a,)) == Fraction(5, 6)
        assert expected_recovery(cr, 2, absent=(a,)) == Fraction(2, 3)
    sgd = shares(make_code("ignore", n=4))
    assert [expected(sgd, w) for w in range(1, 5)] == [Fraction(w, 4) for w in range(1, 5)]
    cand = fig12_candidates({"FR": fr, "CR": cr})
    assert cand["FR"]["union"] == cand["CR"]["union"] == Fraction(5, 6)
    assert cand["FR"]["two"][1, 3] == 1 and cand["CR"]["two"][1, 3] == 1    # W1, W3 arrive
    assert cand["FR"]["two"][0, 3] == 1 and cand["CR"]["two"][0, 3] == Fraction(1, 2)
    assert cand["split_needed"] == pytest.approx(0.992)
    # each sample drawn m times is recovered at least once w.p. 1 - (1/6)^m (FR, i.i.d.)
    assert cand["FR"]["coverage"]["iid"] == pytest.approx([1 - (1 / 6) ** m for m in range(1, 6)])
    assert cand["FR"]["coverage_m"] == {"iid": 4, "enduring": 5}


def test_fig12_claims(out):
    rows, claims, _ = out["isgc-recovery"]
    c = _claim(claims, "99.6 %")
    assert c["verdict"] == "not reproduced" and c["ours"] == "83.3 %"
    assert "FR 5/6, CR 2/3" in c["why"] and "unchanged" in c["why"]
    for text in ("grows", "more samples than IS-SGD", "w = 3: IS-GC", "FR recovers more",
                 "w = 1: FR"):
        assert _claim(claims, text)["verdict"] == "reproduced"
    for text in ("higher than IS-SGD's", "does not take c = 2 times", "lowest training time"):
        assert "invented step time" in _claim(claims, text)["setting"]
    assert _claim(claims, "146")["verdict"] == "not attempted"
    # the printed numbers are judged by the numbers: the stand-in saves more steps (50 %)
    save = _claim(claims, "saves up to 37.1 %")
    assert save["verdict"] == "not reproduced" and "direction holds" in save["why"]
    assert _claim(claims, "steps increases as w decreases")["verdict"] == "reproduced"
    # the 22 % claim rests on FR and CR having the same time per step (same load and delays)
    for w in range(1, 5):
        fr = [r for r in rows if r["scheme"] == "IS-GC FR" and r["w"] == w][0]
        cr = [r for r in rows if r["scheme"] == "IS-GC CR" and r["w"] == w][0]
        assert fr["time_per_step_s"] == pytest.approx(cr["time_per_step_s"])
        assert fr["exact_recovered_pct"] >= cr["exact_recovered_pct"]
        assert abs(fr["recovered_pct"] - fr["exact_recovered_pct"]) < 5


def test_fig13_exact_order_and_claims(out):
    rows, claims, _ = out["isgc-hr-tradeoff"]
    tabs = [shares(make_code("isgc-cr", n=8, c=4))] + [
        shares(make_code("isgc-hr", n=8, c1=c1, c2=4 - c1, groups=2)) for c1 in (1, 2, 3)]
    assert all(map(monotone, tabs))
    assert all(dominates(b, a) for a, b in zip(tabs, tabs[1:]))      # Theorem 7
    assert not dominates(tabs[0], tabs[3])                           # strict somewhere
    assert tabs[3] == shares(make_code("isgc-fr", n=8, c=4))
    rec = [r for r in rows if r.get("step") in ("", None)]
    for w in range(1, 9):
        ex = [[r for r in rec if r["c1"] == c1 and r["w"] == w][0]["exact_recovered_pct"]
              for c1 in (0, 1, 2, 3)]
        assert ex == sorted(ex)
    for text in ("same placement", "increases", "trade-off between CR and FR"):
        assert _claim(claims, text)["verdict"] == "reproduced"
    loss = _claim(claims, "lower training loss")
    assert loss["verdict"] == "not reproduced" and "rises from c1 = 0 to 1" in loss["why"]


def test_real_weights_are_a_check_beyond_the_paper(out):
    """Sec. V-A is judged under the paper's plain sums (``theorems``); least squares gaining on
    CR with c ∤ n is the project's check, with its counterexample."""
    folder = out["isgc-recovery"][2]
    with (folder / "checks.csv").open() as fh:
        reader = csv.DictReader(fh)
        assert tuple(reader.fieldnames) == CHECK_COLUMNS
        checks = list(reader)
    c = [r for r in checks if "beyond the paper" in r["where"]]
    assert len(c) == 1 and c[0]["verdict"] == "reproduced"
    assert "CR(3, 2), W' = {W1, W2, W3}" in c[0]["why"] and "only CR with c ∤ n" in c[0]["why"]
    assert not [r for r in out["isgc-recovery"][1] if "real-weighted" in r["claim"]]
