"""The ``theorems`` experiment: the papers' statements checked by computation, in the ledger.

This file checks the framework (the verdict comes from the evidence), every paper's statements
against the verdicts pinned in the paper's own file (``test_theorems_<paper>.py``: ``VERDICTS``,
and for paper 2 ``COUNTEREXAMPLES``, what the first counterexample must show), and what
``reproduce all --quick`` puts in the ledger.  The paper files test their checks' building
blocks on deliberately wrong instances."""
import csv

import pytest

from gradcode.experiments._common import Context
from gradcode.experiments.theorems import Evidence, Statement, claim_of, statements, verdict

import test_theorems_approx
import test_theorems_heter
import test_theorems_isgc
import test_theorems_sgc
import test_theorems_tandon

#: each paper's test file, holding its pinned ``VERDICTS``
PAPERS = {1: test_theorems_tandon, 2: test_theorems_isgc, 3: test_theorems_heter,
          4: test_theorems_sgc, 5: test_theorems_approx}
#: paper 5 repeats a ``where`` ("Thm 1 (proof)"): its table names the statements by their checks
BY_CHECK = {5}


def _key(s: Statement) -> str:
    return s.check.__name__ if s.paper in BY_CHECK else s.where


def _mine(paper: int) -> dict:
    return {_key(s): s for s in statements() if s.paper == paper}


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


@pytest.mark.parametrize("paper", sorted(PAPERS))
def test_every_statement_is_listed(paper):
    """Each paper's statements are exactly those its file pins a verdict for, once each."""
    keys = [_key(s) for s in statements() if s.paper == paper]
    assert sorted(keys) == sorted(PAPERS[paper].VERDICTS) and len(set(keys)) == len(keys)
    assert all(len(s.claim) > 20 for s in _mine(paper).values())


@pytest.mark.parametrize("paper, key", [(p, k) for p in sorted(PAPERS)
                                        for k in sorted(PAPERS[p].VERDICTS)])
def test_verdict(paper, key, ledger):
    """Each statement's quick verdict as pinned (a regression in gradcode or in a check shows),
    with evidence: cases, how they were chosen, an example (and the pinned counterexample).
    Read from the row ``reproduce theorems --quick`` wrote (``claim_of``: ours "holds in H of N
    cases", why "how; e.g. example" or "how; counterexample: example"): the suite computes
    each statement's evidence once."""
    s = _mine(paper)[key]
    rows = [r for r in ledger if r["experiment"] == "theorems" and r["paper"] == str(paper)
            and r["source"] == s.where and r["claim"] == s.claim]
    assert len(rows) == 1, (paper, key)
    row = rows[0]
    cases = int(row["ours"].rsplit(" of ", 1)[1].split()[0])
    mark = "; counterexample: " if "; counterexample: " in row["why"] else "; e.g. "
    how, _, example = row["why"].partition(mark)
    assert cases > 0 and how and example, row
    assert row["verdict"] == PAPERS[paper].VERDICTS[key], row
    shows = getattr(PAPERS[paper], "COUNTEREXAMPLES", {}).get(key)
    assert shows is None or shows in example, example


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
    thm8 = [r for r in rows
            if r["paper"] == "2" and r["source"] == "Thm 8, Thm 9 (maximum reading)"]
    assert len(thm8) == 1 and thm8[0]["verdict"] == "not reproduced"
    assert "counterexample: HR(n=16, c1=1, c2=3, groups=4)" in thm8[0]["why"]   # g = c (issue 32)
    assert all(r["kind"] == "statement" or r["paper"] == "5" for r in rows)


def test_the_ledger_has_one_row_per_claim(ledger):
    keys = [(r["paper"], r["source"], r["claim"]) for r in ledger]
    assert len(keys) == len(set(keys)), [k for k in keys if keys.count(k) > 1][:3]
