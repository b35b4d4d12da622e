"""``theorems``: the papers' theorems, lemmas, propositions and worked examples, each checked by
computation (exhaustively on small cases, on random ones beyond).

A statement is declared once, beside its check, in the module of its paper
(``theorems_tandon``, ``theorems_isgc``, ``theorems_heter``, ``theorems_sgc``,
``theorems_approx``)::

    @statement(2, "Thm 8", "some maximum independent set meets every group's received workers")
    def _thm8(ctx) -> Evidence:
        ...
        return Evidence(cases=..., failures=..., example="...", how="all received sets, n <= 12")

Its ledger row's verdict comes from that evidence by one rule (``verdict``): ``reproduced`` when
it held on every case checked, ``not reproduced`` (with the first counterexample) when it failed
on any.  Nothing is typed in by hand: a change in the code can change the verdict.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ._common import Context, Output
from ._ledger import Claim

#: the modules declaring the statements, one per paper
MODULES = ("theorems_tandon", "theorems_isgc", "theorems_heter", "theorems_sgc",
           "theorems_approx")


@dataclass(frozen=True)
class Evidence:
    """What a check found: ``failures`` of ``cases`` instances contradict the statement;
    ``example`` shows the first failure (or a typical instance when none failed); ``how`` says
    which instances were checked."""
    cases: int
    failures: int
    how: str
    example: str = ""


class Tally:
    """A check's running count: ``cases``, ``failures``, the first counterexample (``example``)
    and a typical case that held (``typical``), turned into ``Evidence`` by ``evidence(how)``.

    Three ways in, by the shape of what was checked: ``case(ok, text)`` one case;
    ``count(cases, failures, example)`` many at once; ``add(bad, what)`` a bool array of failed
    cases (``what(k)`` describes the first failed one) or a list of one case's problems.  Texts
    may be callables, evaluated only when kept."""

    def __init__(self):
        self.cases = self.failures = 0
        self.example = self.typical = ""

    def case(self, ok: bool, text) -> None:
        self.count(1, not ok, text)
        if ok:
            self.typical = _text(text)

    def count(self, cases: int, failures: int, example="") -> None:
        self.cases += int(cases)
        self.failures += int(failures)
        if failures and not self.example:
            self.example = _text(example)

    def add(self, bad, what) -> None:
        if isinstance(bad, np.ndarray):
            k = int(bad.sum())
            self.count(bad.size, k, lambda: _text(what, int(np.argmax(bad))) if k else "")
        else:
            self.count(1, bool(bad), lambda: _text(what) + ": " + "; ".join(bad[:3]))

    def merge(self, other: "Tally") -> "Tally":
        self.count(other.cases, other.failures, other.example)
        self.typical = other.typical or self.typical
        return self

    def evidence(self, how: str, typical: str = "") -> Evidence:
        return Evidence(self.cases, self.failures, how, self.example or self.typical or typical)


def _text(text, *args) -> str:
    return text(*args) if callable(text) else text


@dataclass(frozen=True)
class Statement:
    paper: int
    where: str
    claim: str
    check: Callable[[Context], Evidence]


_STATEMENTS: list[Statement] = []


def statement(paper: int, where: str, claim: str):
    """Declare ``claim`` (paper ``paper``, at ``where``) checked by the decorated function."""
    def register(check):
        _STATEMENTS.append(Statement(paper, where, claim, check))
        return check
    return register


def statements() -> list[Statement]:
    """Every declared statement, by paper, in declaration order within a paper."""
    for name in MODULES:
        importlib.import_module(f"{__package__}.{name}")
    return sorted(_STATEMENTS, key=lambda s: s.paper)


def verdict(e: Evidence) -> str:
    """The rule: reproduced iff the statement held on every one of at least one case."""
    return "reproduced" if e.cases > 0 and e.failures == 0 else "not reproduced"


def claim_of(s: Statement, e: Evidence) -> Claim:
    held = e.cases - e.failures
    why = f"{e.how}; " + (f"counterexample: {e.example}" if e.failures else
                          f"e.g. {e.example}" if e.example else "")
    return Claim(s.where, s.claim, "", f"holds in {held} of {e.cases} cases", verdict(e),
                 why.rstrip("; "), paper=s.paper)


def run(ctx: Context) -> Output:
    import matplotlib.pyplot as plt

    rows, claims = [], []
    for s in ctx.bar(statements(), desc="theorems"):
        e = s.check(ctx)
        claims.append(claim_of(s, e))
        rows.append({"experiment": "theorems", "paper": s.paper, "where": s.where,
                     "cases": e.cases, "failures": e.failures, "verdict": verdict(e),
                     "how": e.how, "example": e.example})
        ctx.rows.append(rows[-1])
    fig = _plot(rows, plt)
    bad = [f"paper {r['paper']} {r['where']}" for r in rows if r["failures"]]
    ours = (f"{len(rows)} statements checked by computation, "
            f"{sum(r['cases'] for r in rows):,} cases in all; "
            + (f"contradicted: {', '.join(bad)}." if bad else "every one held."))
    return Output(rows, fig, ours, claims=claims)


def _plot(rows, plt):
    import numpy as np
    from matplotlib.patches import Patch
    fig, ax = plt.subplots(figsize=(8, 1.6 + 0.2 * len(rows)))
    y = np.arange(len(rows))[::-1]
    cases = np.array([r["cases"] for r in rows], float)
    bad = np.array([r["failures"] > 0 for r in rows])
    ax.barh(y, cases - 0.5, left=0.5, color=np.where(bad, "tab:red", "tab:green"))
    for yi, r in zip(y, rows):
        if r["failures"]:
            ax.text(r["cases"] * 1.3, yi, f"{r['failures']:,} counterexample"
                    f"{'s' if r['failures'] > 1 else ''}", va="center", fontsize=6)
    ax.set_yticks(y, [f"paper {r['paper']}, {r['where']}" for r in rows], fontsize=7)
    ax.set_ylim(-0.7, len(rows) - 0.3)
    ax.set_xscale("log")
    ax.set_xlim(0.5, cases.max() * 30)
    ax.set_xlabel("cases checked (log scale)")
    ax.set_title("The papers' theorems, lemmas and examples, checked by computation", fontsize=10)
    ax.grid(alpha=0.3, axis="x")
    fig.tight_layout(rect=(0, 0.6 / fig.get_figheight(), 1, 1))
    fig.legend([Patch(color="tab:green"), Patch(color="tab:red")],
               ["holds in every case (reproduced)", "counterexamples found (not reproduced)"],
               loc="lower center", ncol=2, fontsize=8, frameon=False)
    return fig


SPECS = {
    "theorems": {
        "title": "The five papers' theorems, lemmas and worked examples, checked by computation",
        "paper": "papers 1-5, their statements", "number": None,
        "claim": "Every statement of the five papers that a computation can check: constructions "
                 "(B matrices, placements), bounds, decodability and maximality, worked "
                 "examples.", "run": run},
}
