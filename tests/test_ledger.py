"""The claims ledger (issue 12): ``Claim`` rules, ``reproduce all`` and its claims.csv / claims.md.

``test_reproduce_all_quick`` runs every experiment in ``--quick`` form once and checks the
ledger's schema, the verdict vocabulary, that every experiment and every paper contributes rows,
and that every row not reproduced has a reason."""

from __future__ import annotations

import csv
import types

import pytest

from gradcode.cli import main
from gradcode.experiments import EXPERIMENTS, VERDICTS, Claim, Output, reproduce_all
from gradcode.experiments import _common
from gradcode.experiments._ledger import COLUMNS, tally


def read(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


# ------------------------------------------------------------------------------- Claim rules

def test_a_numeric_verdict_follows_the_tolerance():
    assert Claim("Fig. 1", "x", 100.0, 104.0, tol=0.05).verdict == "reproduced"
    miss = Claim("Fig. 1", "x", 100.0, 110.0, tol=0.05, why="a reason")
    assert miss.verdict == "not reproduced"
    row = miss.row(paper=2)
    assert row["paper"] == 2 and row["verdict"] == "not reproduced"
    assert row["why"].startswith("ours / paper = 1.1, tolerance ±5%") and "a reason" in row["why"]


def test_a_computed_miss_is_a_row_not_a_crash():
    """A numeric claim whose rule now fails (the code changed) is a 'not reproduced' row whose
    reason is the tolerance it missed, not a ValueError that stops the experiment."""
    miss = Claim("Fig. 1", "x", 1.0, 2.0, tol=0.1)
    assert miss.verdict == "not reproduced"
    assert miss.row(paper=1)["why"] == "ours / paper = 2, tolerance ±10%"


def test_claims_refuse_what_the_ledger_cannot_hold():
    with pytest.raises(ValueError, match="verdict: expected one of"):
        Claim("Fig. 1", "x", "more", "more")               # text values: no tol decides
    with pytest.raises(ValueError, match="verdict: expected one of"):
        Claim("Fig. 1", "x", 1.0, 1.0, verdict="holds")
    with pytest.raises(ValueError, match="why: a 'qualitative' verdict needs a reason"):
        Claim("Fig. 1", "x", "more", "more", verdict="qualitative")
    with pytest.raises(ValueError, match="why: a 'not reproduced' verdict needs a reason"):
        Claim("Fig. 1", "x", 1.0, 2.0, verdict="not reproduced")
    with pytest.raises(ValueError, match="paper: expected 1..5"):
        Claim("Fig. 1", "x", 1.0, 1.0, tol=0.1, paper=6)


# ------------------------------------------------------------- reproduce_all on fake experiments

def _fake(monkeypatch, runs):
    """Replace the registry by experiments whose ``run`` are ``runs`` (name -> callable)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    specs = {}
    for name, claims in runs.items():
        def run(ctx, claims=claims):
            if isinstance(claims, BaseException):
                raise claims
            return Output([{"x": 1}], plt.figure(), "ours", claims=claims)
        specs[name] = {"title": name, "paper": "p", "claim": "c", "run": run, "number": 3}
    monkeypatch.setattr(_common, "EXPERIMENTS", {k: "fake" for k in runs})
    monkeypatch.setattr(_common, "_spec", lambda name: specs[name])


def test_reproduce_all_gathers_rows_and_reports_failures(tmp_path, monkeypatch):
    ok = [Claim("Fig. 2", "a", 1.0, 1.0, tol=0.1), Claim("Fig. 3", "b", "x", "y", paper=5,
                                                          verdict="not attempted", why="r")]
    _fake(monkeypatch, {"good": ok, "bad": ValueError("boom")})
    with pytest.raises(RuntimeError, match="1 experiment.*bad: ValueError: boom"):
        reproduce_all(quick=True, out_root=tmp_path, progress=False)
    rows = read(tmp_path / "claims.csv")
    assert [(r["experiment"], r["paper"], r["claim"]) for r in rows] == \
        [("good", "3", "a"), ("good", "5", "b")]          # the experiment's paper by default
    md = (tmp_path / "claims.md").read_text()
    assert "FAILED: ValueError: boom" in md and "1 reproduced, 1 not attempted" in md
    assert read(tmp_path / "good" / "claims.csv")[0]["verdict"] == "reproduced"
    assert "| Fig. 2 | a |" in (tmp_path / "good" / "summary.md").read_text()


def test_reproduce_all_cli_refuses_an_old_ledger_and_exits_1_on_a_failure(tmp_path, monkeypatch,
                                                                           capsys):
    _fake(monkeypatch, {"good": [Claim("Fig. 2", "a", 1.0, 1.0, tol=0.1)]})
    out = str(tmp_path / "res")
    assert main(["reproduce", "all", "--quick", "--quiet", "--out", out]) == 0
    assert "1 claims: 1 reproduced" in capsys.readouterr().out
    assert main(["reproduce", "all", "--quick", "--quiet", "--out", out]) == 2
    assert "already holds a run or files of yours (claims.csv); use --overwrite" in capsys.readouterr().err
    _fake(monkeypatch, {"good": RuntimeError("broke")})
    assert main(["reproduce", "all", "--quick", "--quiet", "--out", out, "--overwrite"]) == 1
    err = capsys.readouterr().err
    assert "good: RuntimeError: broke" in err and "Traceback" not in err


def test_reproduce_all_ctrl_c_writes_the_ledger_so_far(tmp_path, monkeypatch, capsys):
    _fake(monkeypatch, {"good": [Claim("Fig. 2", "a", 1.0, 1.0, tol=0.1)],
                        "stop": KeyboardInterrupt(), "later": []})
    out = tmp_path / "res"
    assert main(["reproduce", "all", "--quick", "--quiet", "--out", str(out)]) == 130
    assert "interrupted" in capsys.readouterr().err
    assert [r["claim"] for r in read(out / "claims.csv")] == ["a"]
    assert "**Not run** (interrupted): stop, later" in (out / "claims.md").read_text()


# ----------------------------------------------------------------- the real ledger, quick form

@pytest.fixture(scope="module")
def ledger(quick):
    out = quick("sim-vs-real").parent          # the session's one `reproduce all --quick`
    return types.SimpleNamespace(out=out, rows=read(out / "claims.csv"),
                                 md=(out / "claims.md").read_text())


def test_reproduce_all_quick(ledger):
    rows = ledger.rows
    assert set(COLUMNS) <= set(rows[0]) and len(rows) >= 45
    assert {r["verdict"] for r in rows} <= set(VERDICTS)
    assert {r["paper"] for r in rows} == {"1", "2", "3", "4", "5"}
    assert {r["experiment"] for r in rows} == set(EXPERIMENTS)     # every experiment contributes
    for r in rows:
        assert r["where"].strip() and r["claim"].strip() and r["paper_value"].strip()
        if r["verdict"] != "reproduced":
            assert len(r["why"].strip()) > 10, r
    assert tally(rows) in ledger.md
    for name in EXPERIMENTS:                 # each summary lists its own rows
        summary = (ledger.out / name / "summary.md").read_text()
        mine = [r for r in rows if r["experiment"] == name]
        assert "**Claims**" in summary and all(r["verdict"] in summary for r in mine)
