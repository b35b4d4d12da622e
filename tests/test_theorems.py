"""The ``theorems`` experiment: the papers' statements checked by computation, in the ledger.

Each paper's statements have their own test file (``test_theorems_<paper>.py``); this one checks
the framework (the verdict comes from the evidence) and what ``reproduce all --quick`` puts in
the ledger."""
import csv

import pytest

from gradcode.experiments._common import Context
from gradcode.experiments.theorems import Evidence, Statement, claim_of, statements, verdict


def test_the_verdict_is_computed_from_the_evidence():
    assert verdict(Evidence(10, 0, "all")) == "reproduced"
    assert verdict(Evidence(10, 1, "all", "x")) == "not reproduced"
    assert verdict(Evidence(0, 0, "nothing checked")) == "not reproduced"
    s = Statement(2, "Thm 8", "a claim", lambda ctx: Evidence(5, 2, "five cases", "W' = {7}"))
    row = claim_of(s, s.check(Context(quick=True, progress=False))).row()
    assert row["verdict"] == "not reproduced" and row["paper"] == 2
    assert row["ours"] == "holds in 3 of 5 cases" and "counterexample: W' = {7}" in row["why"]


def test_every_paper_declares_statements():
    papers = [s.paper for s in statements()]
    assert all(papers.count(p) >= 2 for p in (1, 2, 3, 4, 5)), papers
    keys = [(s.paper, s.where, s.claim) for s in statements()]
    assert len(keys) == len(set(keys)), "a statement declared twice"


@pytest.fixture(scope="module")
def ledger(quick):
    quick("theorems")
    with open(quick("theorems").parent / "claims.csv", newline="") as fh:
        return list(csv.DictReader(fh))


def test_reproduce_all_writes_the_theorem_rows(ledger):
    rows = [r for r in ledger if r["experiment"] == "theorems"]
    assert len(rows) >= 40
    for paper in "12345":
        assert sum(r["paper"] == paper for r in rows) >= 2, paper
    thm8 = [r for r in rows if r["paper"] == "2" and r["where"] == "Thm 8"]
    assert len(thm8) == 1 and thm8[0]["verdict"] == "not reproduced"
    assert "counterexample" in thm8[0]["why"]


def test_the_ledger_has_one_row_per_claim(ledger):
    keys = [(r["paper"], r["where"], r["claim"]) for r in ledger]
    assert len(keys) == len(set(keys)), [k for k in keys if keys.count(k) > 1][:3]
