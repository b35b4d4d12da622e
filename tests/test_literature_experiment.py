"""``gradcode reproduce literature``: every scheme at equal load, and the ledger's
sixth group, "literature" (rows citing their paper: Charles et al. 2017, Raviv et al. 2018, ...).

The quick run (its real sizes, the Lambda traces when ../shared/traces has them) once per module;
a smaller run without traces; the ledger's grouping of citation rows after papers 1-5."""

from __future__ import annotations

import csv
import importlib
import math
from pathlib import Path

import numpy as np
import pytest

from gradcode.experiments import EXPERIMENTS, VERDICTS, Claim, holds, list_experiments, reproduce
from gradcode.experiments import _common, literature
from gradcode.experiments._ledger import GROUPS, group, tally
from gradcode.records import write_csv
from test_ledger import _typed_verdicts

PACKAGE = Path(literature.__file__).parent
#: claims per citation in the quick run, and where they come from (the authors' code, abstracts)
MINE = {"Raviv et al. 2018": 5, "Wang et al. 2019 (ErasureHead)": 1, "Li et al. 2018": 1,
        "Ye and Abbe 2018": 3}


def read(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.fixture(scope="module")
def run(quick):
    """The literature experiment's folder of the test run's one ``reproduce all --quick``."""
    return quick("literature")


def test_registered_and_declared():
    assert EXPERIMENTS["literature"] == "gradcode.experiments.literature"
    assert "literature" in dict(list_experiments())
    assert set(literature.CLAIM_MODULES) == {"approximate", "mds", "coupon", "stochastic", "comm"}
    for name in literature.CLAIM_MODULES:          # each module exposes claims(ctx)
        assert callable(importlib.import_module(f"gradcode.experiments.literature.{name}").claims)


def test_the_quick_run_writes_its_files(run):
    names = sorted(p.name for p in run.iterdir())
    assert names == ["checks.csv", "claims.csv", "curves.csv", "plot.png", "results.csv",
                     "run.json", "summary.md"]
    summary = (run / "summary.md").read_text()
    assert "**Claims**" in summary and "Skipped" in summary


def test_every_scheme_at_every_load_runs_or_says_why(run):
    rows = read(run / "results.csv")
    schemes = literature.schemes()
    assert {"uncoded", "gc-cr", "isgc-cr", "cyclic-mds", "expander", "bgc",
            "frc-approx"} <= set(schemes)
    delays = {r["delay"] for r in rows}
    assert "shexp" in delays
    for key in delays:
        for d in literature.SIZES["loads"][0]:
            mine = [r for r in rows if r["delay"] == key and r["d"] == str(d)]
            assert [r["scheme"] for r in mine] == schemes
            for r in mine:
                assert r["status"] in ("ok", "skipped")
                if r["status"] == "skipped":
                    assert r["note"].startswith(r["scheme"] + ":")
                else:
                    assert float(r["time_to_target_s"]) >= 0
                    assert 0 <= float(r["rel_error"]) and r["wait"] == "fastest:21"
    by = {(r["delay"], r["d"], r["scheme"]): r for r in rows}
    assert by[("shexp", "2", "uncoded")]["status"] == "skipped"       # load 1/n only
    assert by[("shexp", "1", "uncoded")]["k_to_target"] == "24"       # waits for all
    assert float(by[("shexp", "4", "gc-cr")]["rel_error"]) == 0      # 3 stragglers, s = 3
    bgc = by[("shexp", "1", "bgc")]                  # d = 1: partitions nobody holds
    assert math.isinf(float(bgc["time_to_target_s"])) and bgc["k_to_target"] == ""


def test_every_claim_is_computed_and_in_the_literature_group(run):
    """Claims only with a source outside gradcode (the authors' code, an abstract); our own
    derivations and comparisons are checks (checks.csv)."""
    claims, checks = read(run / "claims.csv"), read(run / "checks.csv")
    assert claims and {c["verdict"] for c in claims + checks} <= set(VERDICTS)
    texts = [c["claim"] for c in claims]
    assert len(set(texts)) == len(texts)             # one text per row: the ledger's order
    assert all(group(c["paper"]) == 6 for c in claims)
    assert {c["paper"]: sum(r["paper"] == c["paper"] for r in claims) for c in claims} == MINE
    for c in claims:
        assert c["source"] == "abstract" or c["source"].startswith("code: "), c
        assert c["kind"] in ("value", "direction", "statement", "figure")
        assert c["verdict"] == "reproduced" or len(c["why"]) > 10
    verdicts = {(c["paper"], c["paper_value"]): c["verdict"] for c in claims}
    assert verdicts[("Ye and Abbe 2018", "-32.0 %")] == "not reproduced"   # -44 %: a bigger cut
    assert [c["verdict"] for c in claims if "sqrt(s/d)" in c["claim"]] == ["reproduced"]
    traced = (run / "summary.md").read_text().count("Trace: ") > 0
    for c in checks:                     # not attempted only for the trace, without traces
        assert c["verdict"] != "not attempted" or (not traced and "Lambda" in c["where"])
    big = [c for c in checks if "n = 64, s = 7" in c["check"]]
    assert len(big) == 1 and big[0]["verdict"] == "not reproduced"      # the counterexample
    assert sum(c["where"].startswith("comparison, ") for c in checks) == 6
    typed = [hit for f in sorted(PACKAGE.glob("*.py")) for hit in _typed_verdicts(f)]
    assert not typed, f"verdicts typed as string literals: {typed}"
    typed = [hit for f in sorted(PACKAGE.glob("*.py")) for hit in _typed_verdicts(f)]
    assert not typed, f"verdicts typed as string literals: {typed}"


@pytest.mark.slow
def test_without_traces_the_trace_rows_are_not_attempted(tmp_path, monkeypatch):
    monkeypatch.setitem(literature.SIZES, "n", (16, 48))
    monkeypatch.setitem(literature.SIZES, "loads", ((1, 2, 4), (1, 2, 4, 6, 8)))
    monkeypatch.setitem(literature.SIZES, "rounds", (10, 200))
    monkeypatch.setitem(literature.SIZES, "k_step", (4, 2))
    empty = tmp_path / "no-traces"
    empty.mkdir()
    folder = reproduce("literature", quick=True, out_root=tmp_path, progress=False,
                       traces=empty)
    rows = read(folder / "results.csv")
    assert {r["delay"] for r in rows} == {"shexp"} and {r["n"] for r in rows} == {"16"}
    trace = [c for c in read(folder / "checks.csv") if "Lambda" in c["where"]]
    assert trace and all(c["verdict"] == "not attempted" for c in trace)
    assert "Real Lambda traces not found" in (folder / "summary.md").read_text()


def test_parameters_at_a_load():
    assert literature.scheme_params("bgc", 24, 4) == {"n": 24, "d": 4}     # seed: its default
    assert literature.scheme_params("heter", 4, 2) == {"speeds": [1.0] * 4, "s": 1, "k": 4}
    assert literature.scheme_params("isgc-hr", 24, 4) == {"n": 24, "c1": 2, "c2": 2,
                                                          "groups": 6}
    code, why = literature.build("cyclic-mds", 24, 3)            # n + s even: refused
    assert code is None and why.startswith("cyclic-mds: s:")
    code, why = literature.build("uncoded", 24, 2)
    assert code is None and "load 1/n only" in why
    code, why = literature.build("gc-cr", 24, 4)
    assert why is None and code.s == 3


def test_sequential_schemes_at_the_loads_they_take(run):
    """Paper 4's schemes join the comparison (the issue's "every scheme"): gc-seq at every load
    (s = d - 1), the others at the first App. J parameter set of load d/n or skipped saying so;
    their first T rounds (no job due) do not make the error NaN."""
    import gradcode
    assert set(literature.SEQUENTIAL) <= set(literature.schemes())
    params = literature.scheme_params("sr-sgc", 24, 2)
    assert np.isclose(np.max(gradcode.make_code("sr-sgc", **params).load), 2 / 24)
    rows = [r for r in read(run / "results.csv") if r["family"] == "sequential"]
    assert {r["scheme"] for r in rows} == set(literature.SEQUENTIAL)
    for r in rows:
        if r["status"] == "ok":
            assert float(r["rel_error"]) == 0.0 and math.isfinite(float(r["time_to_target_s"]))
        else:
            assert "no parameter set with B <= 2, W <= 4 has load" in r["note"]
    assert all(r["status"] == "ok" for r in rows if r["scheme"] == "gc-seq")


# ------------------------------------------------------------------------- the sixth group
def test_a_claim_cites_a_paper_of_the_literature():
    c = Claim("Sec. 3", "x", 1.0, 1.0, tol=0.1, paper="Raviv et al. 2018")
    assert c.row()["paper"] == "Raviv et al. 2018" and group(c.row()["paper"]) == 6
    for bad in ("", " ", "7", 6, 0):
        with pytest.raises(ValueError, match="paper: expected 1..5 or a citation"):
            Claim("Sec. 3", "x", 1.0, 1.0, tol=0.1, paper=bad)
    assert GROUPS[-1] == "literature" and [group(p) for p in (1, "5", "x", None)] == [1, 5, 6, 0]


def test_the_ledger_puts_the_literature_after_papers_1_to_5(tmp_path):
    rows = {"literature": [Claim("w", "lit", "a", "a", verdict=holds(True), why="rule: r",
                                 paper="Charles et al. 2017", kind="statement")],
            "heter-clusters": [Claim("Fig. 1", "p3", 1.0, 1.0, tol=0.1, paper=3)],
            "sgc-table1": [Claim("Fig. 2", "p4", 1.0, 2.0, tol=0.1, paper=4)]}
    for name, claims in rows.items():
        (tmp_path / name).mkdir()
        write_csv(tmp_path / name / "claims.csv", [c.row() for c in claims])
    done = [(name, 1.0) for name in rows]
    path = _common.write_ledger(tmp_path, done, {}, quick=True, seed=0, seconds=3.0,
                                planned=list(rows))
    ledger = read(path)
    assert [r["claim"] for r in ledger] == ["p3", "p4", "lit"]
    md = (tmp_path / "claims.md").read_text()
    assert "3 claims of papers 1-5 and of the literature" in md
    assert tally(ledger[2:]) == "1 reproduced"
    assert "| literature | 1 | 0 | 0 | 1 |" in md and "| paper 4 | 0 | 1 | 0 | 1 |" in md
