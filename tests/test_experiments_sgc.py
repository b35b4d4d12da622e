"""``sgc-table1`` (paper 4, Table 1 as App. J estimates): results, decomposition, claims, on the
real 30-round profile (when ../shared/traces is there) and on the synthetic fallback."""

import numpy as np
import pytest

from gradcode.experiments import reproduce
from gradcode.experiments._common import EXPERIMENTS
from gradcode.experiments._ledger import COLUMNS, VERDICTS
from gradcode.stragglers import identify_stragglers, traces_dir

import gradcode.experiments.sgc as sgc
import gradcode.experiments.sgc_profiles as sgc_profiles
from _results import read_csv as _csv

N = 256


def _run(tmp):
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sgc_profiles, "traces_dir", lambda: None)
        folder = reproduce("sgc-table1", quick=True, out_root=tmp, progress=False)
    return folder, _csv(folder / "results.csv"), _csv(folder / "claims.csv")


@pytest.fixture(scope="module")
def real(quick):
    if traces_dir() is None:
        pytest.skip("real Lambda traces not found")
    folder = quick("sgc-table1")
    return folder, _csv(folder / "results.csv"), _csv(folder / "claims.csv")


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    return _run(tmp_path_factory.mktemp("synthetic"))


def test_paper_4_experiments_are_registered():
    from gradcode.experiments import sgc_loads, sgc_selection
    for name, module in (("sgc-table1", sgc), ("sgc-loads", sgc_loads),
                         ("sgc-selection", sgc_selection)):
        assert EXPERIMENTS[name] == module.__name__
        assert module.SPECS[name].number == 4


def test_a_traces_folder_that_is_not_there_is_refused(tmp_path, capsys):
    from gradcode.cli import main
    rc = main(["reproduce", "sgc-table1", "--quick", "--traces", str(tmp_path / "none"),
               "--out", str(tmp_path / "out")])
    assert rc == 2 and "traces: no such folder" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def _f(r, k):
    return float(r[k])


@pytest.mark.parametrize("which", ["real", pytest.param("synthetic", marks=pytest.mark.slow)])
def test_results_add_up(which, request):
    folder, rows, _ = request.getfixturevalue(which)
    for f in ("plot.png", "summary.md", "claims.csv"):
        assert (folder / f).is_file()
    main = {r["family"]: r for r in rows if r["part"] == "best of App. J search"}
    assert set(main) == set(sgc.FAMILIES)
    for r in rows:
        if r["part"] in ("best of App. J search", "Table 1's parameters"):
            parts = _f(r, "base_s") + _f(r, "load_s") + _f(r, "waitout_s")
            assert parts == pytest.approx(_f(r, "runtime_s"), rel=1e-9)
            assert _f(r, "waitout_s") >= -1e-9 and _f(r, "base_s") > 0
    assert _f(main["gc-seq"], "relative_to_gc") == 1.0
    assert _f(main["m-sgc"], "load") <= 2 / N + 1e-12                     # Remark 3.3
    assert all(int(r["T"]) <= sgc.MAX_DELAY for r in main.values())
    # no coding waits out exactly the rounds that have a straggler (computed here, directly)
    prof = sgc.reference_profile(sgc.Context()) if which == "real" else None
    if prof is not None:
        J = int(main["uncoded"]["jobs"])
        S = identify_stragglers(prof.D[:J] + _f(main["uncoded"], "load") * prof.alpha, 1.0)
        assert int(main["uncoded"]["waitouts"]) == int(S.any(1).sum())
    # the authors' estimates, as read from their repository (Table 1's 80 jobs)
    au = {r["family"]: _f(r, "relative_to_gc") for r in rows
          if r["part"] == "authors' App. J estimate" and r["jobs"] == "80"}
    assert au["m-sgc"] == pytest.approx(103.73 / 109.36)
    assert au["sr-sgc"] == pytest.approx(105.92 / 109.36)
    assert au["uncoded"] == pytest.approx(122.64 / 109.36)


def _claims(rows):
    assert rows and all(tuple(r) == COLUMNS for r in rows)
    assert all(r["paper"] == "4" and r["verdict"] in VERDICTS for r in rows)
    assert all(r["why"].strip() for r in rows if r["verdict"] != "reproduced")
    return {r["claim"]: r for r in rows}


def test_real_profile_claims(real):
    """Issue 20: the verdicts are taken at the paper's alpha (the 2048-sample fit scaled to Table
    1's 4096 samples per round: 2.244), where App. J's estimate ranks as Table 1 and M-SGC picks
    (1, 2, 27); each row says over which swept alphas its verdict holds."""
    folder, rows, claims = real
    c = _claims(claims)
    prof = sgc.reference_profile(sgc.Context())
    assert prof.alpha == pytest.approx(2 * prof.fit) and prof.alpha == pytest.approx(2.244,
                                                                                     abs=1e-3)
    main = {r["family"]: r for r in rows if r["part"] == "best of App. J search"}
    assert all(_f(r, "alpha") == pytest.approx(prof.alpha) for r in main.values())
    order = sorted(main, key=lambda f: _f(main[f], "runtime_s"))
    t1 = {r["family"]: r for r in rows if r["part"] == "Table 1's parameters"}
    order1 = sorted(t1, key=lambda f: _f(t1[f], "runtime_s"))
    paper = ["m-sgc", "sr-sgc", "gc-seq", "uncoded"]
    rank = c["ranking of the run times (Fig. 2(a): M-SGC completes its jobs first, then SR-SGC, "
             "GC, no coding)"]
    assert rank["verdict"] == ("reproduced" if order == paper and order1 == paper
                               else "not reproduced")
    assert rank["kind"] == "direction" and rank["setting"].startswith("stand-in: App. J's")
    assert order == paper and main["m-sgc"]["params"] == "(1, 2, 27)"
    assert "alpha >= 2.20 of the alphas swept" in rank["why"]      # not at 2.1, nor the fit
    # '16 % lower' is a number: judged by it (±5 %); the direction alone does not reproduce it
    m = c["M-SGC run time / GC's ('16% lower run time')"]
    rel = _f(main["m-sgc"], "relative_to_gc")
    assert m["paper_value"] == "0.837" and m["kind"] == "value" and rel < 1
    assert m["verdict"] == ("reproduced" if abs(rel / 0.837 - 1) <= 0.05 else "not reproduced")
    assert m["verdict"] == "not reproduced" and "the direction holds, the number misses" in \
        m["why"]
    sr = c["SR-SGC run time / GC's (a slight improvement)"]
    rel = _f(main["sr-sgc"], "relative_to_gc")
    assert sr["verdict"] == ("reproduced" if abs(rel / 0.934 - 1) <= 0.05 else "not reproduced")
    none = c["no coding run time / GC's (every coding scheme significantly beats no coding)"]
    rel = _f(main["uncoded"], "relative_to_gc")
    assert none["verdict"] == ("reproduced" if abs(rel / 1.228 - 1) <= 0.05 else
                               "not reproduced")
    # at the fit (1.122) M-SGC trails: the rule's range says so
    fit = {r["family"]: _f(r, "runtime_s") for r in rows if r["part"] == "alpha sweep"
           and _f(r, "alpha") == round(prof.fit, 3)}
    assert min(fit, key=fit.get) == "sr-sgc"
    # the 'why' counts straggler repeats in consecutive rounds: the same count, computed here
    S = identify_stragglers(prof.D[:30], 1.0)
    k = int((S[1:] & S[:-1]).any(1).sum())
    assert f"in {k} of 29 pairs of consecutive rounds" in rank["why"]
    assert "M-SGC ranks first for alpha >= 2.2" in rank["why"]
    verdicts = [r["verdict"] for r in claims]
    assert verdicts.count("not attempted") == 1 and verdicts.count("reproduced") >= 2
    assert not any("authors' own" in r["claim"] for r in claims)    # a check: checks.csv
    checks = _csv(folder / "checks.csv")
    assert [r["verdict"] for r in checks] == ["reproduced"] and "mamaj/" in checks[0]["where"]
    assert "alpha = 2.244" in (folder / "summary.md").read_text()


@pytest.mark.slow
def test_synthetic_fallback_says_so(synthetic):
    folder, rows, claims = synthetic
    _claims(claims)
    assert {r["profile"] for r in rows if r["part"] == "best of App. J search"} == \
        {"synthetic GE"}
    assert "Real Lambda traces not found" in (folder / "summary.md").read_text()


def test_straggler_runs_of_a_known_pattern():
    """The ledger's 'isolated bursts' and 'repeat pairs': worker 0 straggles in rounds 0, 2, 3
    and worker 2 in round 4 -> bursts of lengths 1, 2, 1 and one repeated pair (rounds 2, 3)."""
    S = np.zeros((5, 3), bool)
    S[[0, 2, 3], 0] = S[4, 2] = True
    assert sgc.straggler_runs(S) == {"isolated": pytest.approx(2 / 3), "repeat_pairs": 1}
    assert sgc.straggler_runs(np.ones((4, 2), bool)) == {"isolated": 0.0, "repeat_pairs": 3}
