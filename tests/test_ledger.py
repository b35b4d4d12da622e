"""The claims ledger (issue 12): ``Claim`` rules, ``reproduce all`` and its claims.csv / claims.md.

``test_reproduce_all_quick`` runs every experiment in ``--quick`` form once and checks the
ledger's schema, the verdict vocabulary, that every experiment and every paper contributes rows,
and that every row not reproduced has a reason."""

from __future__ import annotations

import ast
import csv
import types
from pathlib import Path

import pytest

from gradcode.cli import main
from gradcode.experiments import (EXPERIMENTS, VERDICTS, Check, Claim, Experiment, holds, ranks,
                                  reproduce_all, within)
from gradcode.experiments import _common
from gradcode.experiments._ledger import (CHECK_COLUMNS, COLUMNS, GROUPS, KINDS, group, tally,
                                         verdict_table)

EXPERIMENTS_DIR = Path(_common.__file__).parent
#: the row makers and the position of their ``verdict`` argument
ROW_MAKERS = {"Claim": 4, "Check": 4, "on_trace": 5}


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
    with pytest.raises(ValueError, match="verdict: expected one of"):
        Claim("Fig. 1", "x", "more", "more", verdict="qualitative", why="gone", kind="direction")
    with pytest.raises(ValueError, match="why: a 'not reproduced' verdict needs a reason"):
        Claim("Fig. 1", "x", 1.0, 2.0, verdict="not reproduced", kind="value")
    with pytest.raises(ValueError, match="paper: expected 1..5"):
        Claim("Fig. 1", "x", 1.0, 1.0, tol=0.1, paper=6)


def test_rules_compute_verdicts():
    assert holds(1 < 2) == "reproduced" and holds(2 < 1) == "not reproduced"
    assert within(0.5, 0.4, 0.6) == "reproduced" and within(0.7, 0.4, 0.6) == "not reproduced"
    assert within(float("nan"), 0, 1) == "not reproduced"
    assert ranks({"a": 1.0, "b": 2.0}, ["a", "b"]) == "reproduced"
    assert ranks({"a": 3.0, "b": 2.0}, ["a", "b"]) == "not reproduced"
    assert ranks({"a": 2.0, "b": 2.0}, ["a", "b"]) == "not reproduced"    # a tie: no order
    with pytest.raises(TypeError):                   # issue 32: three verdicts, no middle one
        holds(1 < 2, qualitative=True)


def test_every_row_says_its_kind_setting_and_source():
    """Issue 32: ``kind`` and ``setting`` carry what "qualitative" used to mix up; ``source`` is
    the paper's section, the abstract or the authors' code, never our own."""
    assert Claim("Table 1", "x", 2.0, 2.0, tol=0.1).kind == "value"
    row = Claim("Fig. 2", "falls", "falls", "falls", holds(True), kind="direction",
                setting="stand-in: a virtual clock for EC2").row()
    assert (row["kind"], row["setting"], row["source"]) == \
        ("direction", "stand-in: a virtual clock for EC2", "Fig. 2")
    with pytest.raises(ValueError, match="kind: expected one of"):
        Claim("Fig. 2", "falls", "falls", "falls", holds(True))
    with pytest.raises(ValueError, match="the paper prints a number .* expected 'value'"):
        Claim("Fig. 2", "16 % faster", 16.0, 2.0, holds(True), kind="direction")
    for setting in ("another machine", "stand-in: ", "papers"):
        with pytest.raises(ValueError, match="setting: expected \"paper's\" or 'stand-in: "):
            Claim("Fig. 2", "x", "a", "a", holds(True), kind="figure", setting=setting)
    for source in ("", "gradcode's derivation"):
        with pytest.raises(ValueError, match="source: expected the paper's section"):
            Claim(source, "x", "a", "a", holds(True), kind="statement")
    assert Check("gradcode simulate", "ours", 1.0, 1.0, tol=0.1).row()["where"] == \
        "gradcode simulate"

def test_not_attempted_rows_come_from_their_constructor_only():
    c = Claim.not_attempted("Fig. 1", "x", "figure only", "needs a GPU cluster", paper=2,
                            kind="figure")
    assert (c.verdict, c.ours, c.row()["paper"]) == ("not attempted", "-", 2)
    with pytest.raises(ValueError, match="Claim.not_attempted"):
        Claim("Fig. 1", "x", "figure only", "ours", "not" + " attempted", "typed",
              kind="figure")
    with pytest.raises(ValueError, match="why: a 'not attempted' verdict needs a reason"):
        Claim.not_attempted("Fig. 1", "x", "figure only", "", kind="figure")


def test_checks_have_their_own_columns():
    row = Check("sim", "local / virtual", 1.0, 1.1, tol=0.2).row(paper=4)
    assert tuple(row) == CHECK_COLUMNS and row["target"] == "1" and row["verdict"] == "reproduced"
    assert row["why"].startswith("ours / target = 1.1")


def _typed_verdicts(path: Path) -> list[str]:
    """``file:line`` of every ``Claim`` / ``Check`` / ``on_trace`` call in ``path`` whose verdict
    (keyword, positional, or a ``**{"verdict": ...}`` literal) is a string constant."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if not isinstance(node, ast.Call):
            continue
        name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
        if name not in ROW_MAKERS:
            continue
        given = [kw.value for kw in node.keywords if kw.arg == "verdict"]
        given += node.args[ROW_MAKERS[name]:ROW_MAKERS[name] + 1]
        for kw in node.keywords:
            if kw.arg is None:              # **{...}: the literal dicts inside it
                for d in ast.walk(kw.value):
                    if isinstance(d, ast.Dict):
                        given += [v for k, v in zip(d.keys, d.values)
                                  if isinstance(k, ast.Constant) and k.value == "verdict"]
        found += [f"{path.name}:{node.lineno}" for v in given
                  if isinstance(v, ast.Constant) and isinstance(v.value, str)]
    return found


def test_no_experiment_types_a_verdict():
    """Issue 20: every verdict of the ledger is computed from measured values by a rule stated
    beside it (a tolerance, ``holds``, ``within``, ``ranks``), or made by
    ``Claim.not_attempted``; no ``Claim(...)`` passes a string-literal verdict."""
    files = sorted(EXPERIMENTS_DIR.glob("**/*.py"))       # theorems/ and literature/ too
    assert len(files) > 15
    typed = [hit for f in files for hit in _typed_verdicts(f)]
    assert not typed, f"verdicts typed as string literals: {typed}"


def test_the_scan_finds_typed_verdicts(tmp_path):
    src = tmp_path / "demo.py"
    src.write_text('Claim("w", "c", 1, 2, "qualitative", "why")\n'
                   'Claim("w", "c", 1, 2, verdict="reproduced")\n'
                   'on_trace(ref, "w", "c", 1, 2, "qualitative", "why")\n'
                   'Claim("w", "c", 1, 2, **({"verdict": "qualitative"} if x else {}))\n'
                   'Claim("w", "c", 1, 2, holds(x), "why")\n'
                   'Claim.not_attempted("w", "c", 1, "why")\n')
    assert _typed_verdicts(src) == ["demo.py:1", "demo.py:2", "demo.py:3", "demo.py:4"]


# ------------------------------------------------------------- reproduce_all on fake experiments

def _fake(monkeypatch, runs):
    """Replace the registry by experiments (``Experiment``) whose one configuration's measure
    gives a row, or raises ``runs[name]`` when it is an exception; their claims ``runs[name]``."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    specs = {}
    for name, claims in runs.items():
        def measure(ctx, config, claims=claims):
            if isinstance(claims, BaseException):
                raise claims
            return {"x": config}
        specs[name] = Experiment(name, name, "p", "c", number=3, configs=lambda ctx: [1],
                                 measure=measure, plot=lambda rows: plt.figure(),
                                 ours=lambda rows: "ours", claims=lambda rows, c=claims: c)
    monkeypatch.setattr(_common, "EXPERIMENTS", {k: "fake" for k in runs})
    monkeypatch.setattr(_common, "_spec", lambda name: specs[name])


def test_reproduce_all_gathers_rows_and_reports_failures(tmp_path, monkeypatch):
    ok = [Claim("Fig. 2", "a", 1.0, 1.0, tol=0.1),
          Claim.not_attempted("Fig. 3", "b", "x", "r", ours="y", paper=5, kind="figure")]
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
                                 checks=read(out / "checks.csv"),
                                 md=(out / "claims.md").read_text())


def test_reproduce_all_quick(ledger):
    rows, checks = ledger.rows, ledger.checks
    assert set(COLUMNS) <= set(rows[0]) and len(rows) >= 45
    assert {r["verdict"] for r in rows + checks} <= set(VERDICTS)
    # six groups: papers 1-5 by number, then the literature (rows citing their paper)
    assert {group(r["paper"]) for r in rows} == set(range(1, len(GROUPS) + 1)) and \
        {r["paper"] for r in rows if group(r["paper"]) <= 5} == {"1", "2", "3", "4", "5"}
    assert sum(group(r["paper"]) == 6 for r in rows) >= 8       # issue 32: sourced ones only
    assert sum(r["experiment"] == "literature" for r in checks) >= 16
    assert verdict_table(rows) in ledger.md          # counts by paper and verdict
    assert {r["kind"] for r in rows} == set(KINDS)
    # every experiment contributes, to the papers' claims or to the project's own checks
    assert {r["experiment"] for r in rows + checks} == set(EXPERIMENTS)
    for r in rows:                 # paper_value: empty where the paper prints no value
        assert r["source"].strip() and r["claim"].strip() and r["kind"] in KINDS
        assert r["setting"] == "paper's" or r["setting"].startswith("stand-in: ")
        if r["verdict"] != "reproduced":
            assert len(r["why"].strip()) > 10, r
    assert tally(rows) in ledger.md
    for name in EXPERIMENTS:                 # each summary lists its own rows
        summary = (ledger.out / name / "summary.md").read_text()
        mine = [r for r in rows + checks if r["experiment"] == name]
        assert ("**Claims**" in summary or "**Checks**" in summary)
        assert all(r["verdict"] in summary for r in mine)


def test_the_projects_own_checks_are_apart(ledger):
    """Issue 20: sim-vs-real's rows (their target 1.00 is ours) and the estimator's rule are the
    project's own checks: ``checks.csv`` and the end of ``claims.md``, outside the papers'
    tallies."""
    assert {r["experiment"] for r in ledger.checks} >= {"sim-vs-real", "sgc-estimator"}
    assert not any(r["experiment"] == "sim-vs-real" for r in ledger.rows)
    assert tuple(ledger.checks[0]) == ("experiment",) + CHECK_COLUMNS
    head, own = ledger.md.split("## The project's own checks")
    assert f"{len(ledger.rows)} claims of papers 1-5" in head and tally(ledger.checks) in own
    assert "| sim-vs-real |" in own and "| sim-vs-real |" not in head.split("| --- |")[-1]


def test_the_ledger_order_is_stable(ledger):
    """Rows by paper, then by experiment (``EXPERIMENTS``' order), then as given."""
    order = {name: i for i, name in enumerate(EXPERIMENTS)}
    keys = [(group(r["paper"]), order[r["experiment"]]) for r in ledger.rows]
    assert keys == sorted(keys)
    for name in EXPERIMENTS:
        mine = [r["claim"] for r in ledger.rows if r["experiment"] == name]
        given = [r["claim"] for r in read(ledger.out / name / "claims.csv")]
        assert sorted(mine, key=given.index) == mine


def test_one_claim_one_row(ledger):
    """A statement two experiments check is one row: "every coding scheme beats no coding" and
    Fig. 2(a)'s ranking are sgc-table1's (with Table 1's parameters, the schedule sgc-switching
    replays), Fig. 20 is sgc-switching's, Fig. 1(b)'s bursts are sgc-table1's."""
    def rows_of(text):
        return [r["experiment"] for r in ledger.rows if text in r["claim"]]
    assert rows_of("beats no coding") == ["sgc-table1"]
    assert not any("significantly outperforms no coding" in r["claim"] for r in ledger.rows)
    assert rows_of("ranking of the run times") == ["sgc-table1"]
    assert rows_of("ResNet-18 on CIFAR-100 (mu = 5, T_probe = 20") == ["sgc-switching"]
    assert rows_of("isolated short") == ["sgc-table1"]


def test_no_evidence_is_counted_twice(ledger):
    """Issue 32: two rows with the same measured value and the same reason are one claim
    counted twice (paper 2's Thm 6 and Alg. 4 once shared their 2375 of 2425 cases)."""
    seen = {}
    for r in ledger.rows:
        if r["verdict"] == "not attempted":
            continue
        key = (r["ours"], r["why"])
        assert key not in seen, (seen.get(key), r["claim"])
        seen[key] = r["claim"]
