"""How a statement is declared and judged: ``@statement`` beside its check, the check's
``Evidence`` (counted with a ``Tally``), and the one rule from evidence to verdict."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from .. import PAPERS, Claim, Context


@dataclass(frozen=True)
class Evidence:
    """What a check found: ``failures`` of ``cases`` instances contradict the statement;
    ``example`` shows the first failure (or a typical instance when none failed); ``how`` says
    which instances were checked.

    >>> Evidence(10, 1, "ten cases", "n = 4").failures
    1
    """
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
    may be callables, evaluated only when kept.

    >>> t = Tally()
    >>> t.case(True, "n = 2 holds")
    >>> t.add(np.array([False, True]), lambda k: f"case {k} fails")
    >>> t.evidence("three cases")
    Evidence(cases=3, failures=1, how='three cases', example='case 1 fails')
    """

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
    """A declared statement: paper ``paper``'s ``claim`` at ``where`` (the row's ``source``),
    checked by ``check``; ``setting`` as ``Claim``'s (a partial check says what it leaves out).

    >>> s = Statement(1, "Thm 1", "a claim", lambda ctx: Evidence(1, 0, "one case"))
    >>> s.check(None).cases
    1
    """
    paper: int
    where: str
    claim: str
    check: Callable[[Context], Evidence]
    setting: str = PAPERS
    kind: str = "statement"


_STATEMENTS: list[Statement] = []


def statement(paper: int, where: str, claim: str, setting: str = PAPERS,
              kind: str = "statement"):
    """Declare ``claim`` (paper ``paper``, at ``where``) checked by the decorated function;
    ``setting`` and ``kind`` as ``Claim``'s (``value``: a printed number checked to its
    digits).

    >>> register = statement(1, "Example", "a demonstration")   # applied to a check: declared
    >>> callable(register)
    True
    """
    def register(check):
        _STATEMENTS.append(Statement(paper, where, claim, check, setting, kind))
        return check
    return register


def declared() -> list[Statement]:
    """The statements declared so far (by the modules imported so far), in declaration order.

    >>> all(isinstance(s, Statement) for s in declared())
    True
    """
    return list(_STATEMENTS)


def verdict(e: Evidence) -> str:
    """The rule: reproduced iff the statement held on every one of at least one case.

    >>> verdict(Evidence(3, 0, "three cases")), verdict(Evidence(3, 1, "three cases", "x"))
    ('reproduced', 'not reproduced')
    """
    return "reproduced" if e.cases > 0 and e.failures == 0 else "not reproduced"


def claim_of(s: Statement, e: Evidence) -> Claim:
    """The ledger row of statement ``s`` given its evidence ``e``.

    >>> s = Statement(2, "Thm 8", "a claim", lambda ctx: Evidence(5, 2, "five cases", "W'"))
    >>> claim_of(s, s.check(None)).row()["ours"]
    'holds in 3 of 5 cases'
    """
    held = e.cases - e.failures
    why = f"{e.how}; " + (f"counterexample: {e.example}" if e.failures else
                          f"e.g. {e.example}" if e.example else "")
    return Claim(s.where, s.claim, "", f"holds in {held} of {e.cases} cases", verdict(e),
                 why.rstrip("; "), paper=s.paper, kind=s.kind, setting=s.setting)
