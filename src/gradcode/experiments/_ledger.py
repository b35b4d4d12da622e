"""The claims ledger: one ``Claim`` per claim of the papers, with our value and a verdict.

Every experiment returns its claims (``Output.claims``); ``reproduce`` lists them in the
experiment's ``summary.md`` and ``claims.csv``, and ``reproduce_all`` gathers every experiment's
into ``claims.csv`` / ``claims.md`` (the ledger).

Verdicts:

- ``reproduced``: under the paper's own setup, within the tolerance the row states (``tol``, a
  relative tolerance, decides it for a number: ``|ours / paper - 1| <= tol``);
- ``qualitative``: the claim's direction or shape holds, its number is not comparable (another
  machine, a constant the paper leaves open: the row says over which range it holds);
- ``not reproduced``: it does not hold here; ``why`` says why, checked by a computation where one
  exists;
- ``not attempted``: out of scope or impossible on one machine; ``why`` says why.

Verdicts are computed, never typed: ``reproduced`` / ``not reproduced`` by a tolerance (``tol``)
or by a rule on measured values -- ``holds`` (a condition: a direction, an identity), ``within``
(a band), ``ranks`` (an order) -- whose statement the row's ``why`` gives, so that a change in the
code can change the verdict; ``Claim.not_attempted`` is the only way to a ``not attempted`` row
(nothing is measured).  Rows that are not claims of a paper (the project's own premises: the
simulator against real backends, our estimator's rule) are ``Check`` rows: ``reproduce all``
writes them to ``checks.csv`` and the end of ``claims.md``, outside the papers' tallies.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

VERDICTS = ("reproduced", "qualitative", "not reproduced", "not attempted")
#: the ledger's groups: papers 1-5 (README, References), then the literature beyond them, whose
#: rows name their paper by a short citation (``Claim(..., paper="Raviv et al. 2018")``)
GROUPS = ("paper 1", "paper 2", "paper 3", "paper 4", "paper 5", "literature")
COLUMNS = ("paper", "where", "claim", "paper_value", "ours", "verdict", "why")
#: the columns of the project's own checks (``Check``): no paper, a target instead of its value
CHECK_COLUMNS = ("where", "check", "target", "ours", "verdict", "why")


def holds(condition, qualitative: bool = True) -> str:
    """The verdict of a rule on measured values: ``qualitative`` when ``condition`` holds
    (``reproduced`` with ``qualitative=False``: the paper's own setup, an exact statement),
    else ``not reproduced``.  The row's ``why`` states the rule.

    >>> from gradcode.experiments import holds
    >>> holds(3.1 < 4.0), holds(2 + 2 == 4, qualitative=False), holds(5.0 < 4.0)
    ('qualitative', 'reproduced', 'not reproduced')
    """
    return ("qualitative" if qualitative else "reproduced") if bool(condition) \
        else "not reproduced"


def within(value, low: float, high: float, qualitative: bool = True) -> str:
    """``holds(low <= value <= high)``: a band (a NaN value is outside every band).

    >>> from gradcode.experiments import within
    >>> within(0.52, 0.4, 0.6), within(0.9, 0.4, 0.6), within(float("nan"), 0.0, 1.0)
    ('qualitative', 'not reproduced', 'not reproduced')
    """
    return holds(low <= value <= high, qualitative)


def ranks(values: dict, order, qualitative: bool = True) -> str:
    """``holds`` for an order: the keys of ``values`` sorted by value (smallest first) are
    ``order``.

    >>> from gradcode.experiments import ranks
    >>> times = {"M-SGC": 1.0, "GC": 1.2, "no coding": 1.5}
    >>> ranks(times, ["M-SGC", "GC", "no coding"]), ranks(times, ["GC", "M-SGC", "no coding"])
    ('qualitative', 'not reproduced')
    """
    return holds(sorted(values, key=values.get) == list(order), qualitative)


@dataclass
class Claim:
    """One ledger row.  ``paper_value`` / ``ours`` are numbers (then ``ours / paper`` is shown)
    or short texts.  ``verdict`` may be left out for two numbers and a ``tol``: it is then
    ``reproduced`` when ``|ours / paper_value - 1| <= tol``, else ``not reproduced``.  Every
    verdict but ``reproduced`` needs a reason: ``why``, or for a verdict decided by ``tol`` the
    tolerance it missed (so a computed miss is a row, never an error); the tolerance is shown
    with ``why`` either way.
    ``paper`` (1-5, or a short citation of a paper of the literature, e.g. ``"Raviv et al.
    2018"``: the ledger's sixth group, ``group``) defaults to the experiment's
    (``Experiment.number``).  A verdict is
    computed (``tol``, ``holds``, ``within``, ``ranks``), never typed; a row with nothing
    measured is made by ``Claim.not_attempted``.

    >>> from gradcode.experiments import Claim, holds
    >>> c = Claim("Table 1", "M-SGC's load", paper_value=0.5, ours=0.52, tol=0.05)
    >>> c.verdict, round(c.ratio(), 3)
    ('reproduced', 1.04)
    >>> c.row(paper=4)
    {'paper': 4, 'where': 'Table 1', 'claim': "M-SGC's load", 'paper_value': '0.5',
     'ours': '0.52', 'verdict': 'reproduced', 'why': 'ours / paper = 1.04, tolerance ±5%'}
    >>> Claim("Fig. 3", "IS-GC is faster", "faster", "faster", verdict=holds(True))
    Traceback (most recent call last):
    ...
    ValueError: claim 'IS-GC is faster': why: a 'qualitative' verdict needs a reason, got none
    """
    where: str
    claim: str
    paper_value: float | str
    ours: float | str
    verdict: str | None = None
    why: str = ""
    tol: float | None = None
    paper: int | None = None
    fmt: str = "{:.3g}"
    unit: str = ""
    #: False only from ``not_attempted``: the one way to a row with nothing measured
    measured: bool = field(default=True, repr=False)
    _versus = "paper"              # what ``paper_value`` is, in ``why``'s tolerance

    @classmethod
    def not_attempted(cls, where: str, claim: str, paper_value, why: str, ours="-",
                      **kw) -> "Claim":
        """The only way to a ``not attempted`` row: nothing is measured (``ours`` says what
        stands in, if anything), ``why`` says why.

        >>> from gradcode.experiments import Claim
        >>> c = Claim.not_attempted("Fig. 13", "ResNet-18 on CIFAR-10", "Fig. 13", "no GPU")
        >>> c.verdict, c.ours
        ('not attempted', '-')
        """
        return cls(where, claim, paper_value, ours, "not attempted", why, measured=False, **kw)

    def __post_init__(self):
        if self.verdict == "not attempted" and self.measured:
            raise ValueError(f"claim {self.claim!r}: verdict: 'not attempted' rows come from "
                             "Claim.not_attempted (nothing measured), got a measured row")
        if self.verdict is None:
            r = self.ratio()
            if self.tol is None or r is None:
                raise ValueError(f"claim {self.claim!r}: verdict: expected one of {VERDICTS} "
                                 "(or two numbers and tol), got none")
            self.verdict = "reproduced" if abs(r - 1) <= self.tol else "not reproduced"
        if self.verdict not in VERDICTS:
            raise ValueError(f"claim {self.claim!r}: verdict: expected one of {VERDICTS}, "
                             f"got {self.verdict!r}")
        if self.verdict != "reproduced" and not self.reason().strip():
            raise ValueError(f"claim {self.claim!r}: why: a {self.verdict!r} verdict needs a "
                             "reason, got none")
        if self.paper is not None and self.paper not in (1, 2, 3, 4, 5) \
                and not _citation(self.paper):
            raise ValueError(f"claim {self.claim!r}: paper: expected 1..5 or a citation of the "
                             f"literature (a text), got {self.paper!r}")

    def ratio(self) -> float | None:
        if _number(self.paper_value) and _number(self.ours) and self.paper_value != 0 \
                and math.isfinite(self.ours):
            return float(self.ours) / float(self.paper_value)
        return None

    def show(self, value) -> str:
        if _number(value):
            return self.fmt.format(value) + (f" {self.unit}" if self.unit else "")
        return str(value)

    def reason(self) -> str:
        """``why``, with the tolerance that decided a numeric verdict."""
        if self.tol is None or self.ratio() is None:
            return self.why
        told = f"ours / {self._versus} = {self.ratio():.3g}, tolerance ±{self.tol:.0%}"
        return f"{told}; {self.why}" if self.why else told

    def row(self, paper: int | None = None) -> dict:
        """The ledger's CSV row (``paper`` when the claim names none)."""
        return {"paper": self.paper or paper, "where": self.where, "claim": self.claim,
                "paper_value": self.show(self.paper_value), "ours": self.show(self.ours),
                "verdict": self.verdict, "why": self.reason()}


@dataclass
class Check(Claim):
    """A row of the project's own checks, not a claim of a paper (the simulator against real
    backends, our estimator's rule against the authors'): ``claim`` says what is checked,
    ``paper_value`` is our target.  Its verdict is computed as a ``Claim``'s; ``reproduce all``
    writes these rows to ``checks.csv`` and the end of ``claims.md``, outside the papers'
    tallies.

    >>> from gradcode.experiments import Check
    >>> c = Check("runtime", "local time per round / virtual prediction", 1.0, 1.07, tol=0.2)
    >>> c.row()
    {'where': 'runtime', 'check': 'local time per round / virtual prediction', 'target': '1',
     'ours': '1.07', 'verdict': 'reproduced', 'why': 'ours / target = 1.07, tolerance ±20%'}
    """
    _versus = "target"

    def row(self, paper: int | None = None) -> dict:
        """The ``checks.csv`` row (``CHECK_COLUMNS``; ``paper`` is ignored)."""
        return {"where": self.where, "check": self.claim, "target": self.show(self.paper_value),
                "ours": self.show(self.ours), "verdict": self.verdict, "why": self.reason()}


def _citation(paper) -> bool:
    """A short citation (a non-empty text that is not a paper number)."""
    return isinstance(paper, str) and bool(paper.strip()) and not paper.strip().isdigit()


def group(paper) -> int:
    """The ledger group (1-6, ``GROUPS``) of a row's ``paper``: papers 1-5 by number (an int or
    its text, as ``claims.csv`` holds it), every citation of the literature 6; an empty one 0.

    >>> from gradcode.experiments._ledger import GROUPS, group
    >>> group(3), group("3"), group("Raviv et al. 2018"), GROUPS[group("literature") - 1]
    (3, 3, 6, 'literature')
    """
    text = str(paper if paper is not None else "").strip()
    if text.isdigit():
        return int(text)
    return len(GROUPS) if text else 0


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def claims_table(rows: list[dict], experiment: bool = False, columns=COLUMNS) -> str:
    """Markdown table of ledger rows (``Claim.row`` dicts; ``Check.row`` ones with
    ``columns=CHECK_COLUMNS``); ``experiment`` adds that column."""
    if not rows:
        return ""
    cols = (["experiment"] if experiment else []) + list(columns)
    lines = ["| " + " | ".join(c.replace("_", " ") for c in cols) + " |",
             "| " + " | ".join("---" for _ in cols) + " |"]
    lines += ["| " + " | ".join(_cell(r.get(c, "")) for c in cols) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def tally(rows: list[dict]) -> str:
    """``31 reproduced, 12 qualitative, ...`` over ``rows``.

    >>> from gradcode.experiments import Claim, holds, tally
    >>> claims = [Claim("Table 1", "M-SGC's load", 0.5, 0.52, tol=0.05, paper=4),
    ...           Claim("Fig. 3", "IS-GC is faster", "faster", "faster", verdict=holds(2 < 3),
    ...                 why="rule: 2 s < 3 s per step; another machine", paper=2),
    ...           Claim("Fig. 4", "CR beats FR", 2.0, 3.0, tol=0.1, why="fewer rounds", paper=1)]
    >>> [c.verdict for c in claims]
    ['reproduced', 'qualitative', 'not reproduced']
    >>> tally([c.row() for c in claims])
    '1 reproduced, 1 qualitative, 1 not reproduced'
    """
    counts = {v: sum(r["verdict"] == v for r in rows) for v in VERDICTS}
    return ", ".join(f"{c} {v}" for v, c in counts.items() if c)
