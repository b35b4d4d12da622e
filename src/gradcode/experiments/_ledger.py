"""The claims ledger: one ``Claim`` per claim of the papers, with our value and a verdict.

Every experiment returns its claims (``Output.claims``); ``reproduce`` lists them in the
experiment's ``summary.md`` and ``claims.csv``, and ``reproduce_all`` gathers every experiment's
into ``claims.csv`` / ``claims.md`` (the ledger).

Three verdicts (``VERDICTS``):

- ``reproduced``: the claim holds by a rule that states the paper's claim and is never weaker:
  a number within the tolerance the row states (``tol``, ``|ours / paper - 1| <= tol``), a
  stated direction strictly ("falls" is not "does not rise"), a statement on every case;
- ``not reproduced``: it does not hold here; a numeric claim whose number misses is not
  reproduced even where its direction holds (``why`` says so);
- ``not attempted``: nothing is measured (out of scope, impossible on one machine); ``why``
  says why.

What the old "qualitative" verdict mixed up is now two columns: ``kind`` (``KINDS``: a
``value`` the paper prints, a ``direction`` it states in words, a ``statement`` (a theorem, an
algorithm's property), a ``figure`` read off a plot) and ``setting`` (``"paper's"``, or
``"stand-in: ..."`` naming what differs: other data, a simulated cluster, a constant the paper
leaves open).  ``source`` says where the claim is made: the paper's section, the authors' code
(``code: owner/repo path``) or the abstract; our own derivations are not a source (such rows
are ``Check`` rows).

Verdicts are computed, never typed: by a tolerance (``tol``) or by a rule on measured values --
``holds`` (a condition: a direction, an identity), ``within`` (a band), ``ranks`` (an order) --
whose statement the row's ``why`` gives, so that a change in the code can change the verdict;
``Claim.not_attempted`` is the only way to a ``not attempted`` row.  Rows that are not claims
of a paper (the project's own premises, our derivations, gains beyond a paper) are ``Check``
rows: ``reproduce all`` writes them to ``checks.csv`` and the end of ``claims.md``, outside the
papers' tallies.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

VERDICTS = ("reproduced", "not reproduced", "not attempted")
#: what a claim is: a number the paper prints, a direction stated in words, a statement (a
#: theorem, an algorithm's property), or a figure's shape (no number in the text)
KINDS = ("value", "direction", "statement", "figure")
#: ``setting`` of a row run as the paper runs it; any other is ``"stand-in: <what differs>"``
PAPERS = "paper's"
STAND_IN = "stand-in: "
#: the ledger's groups: papers 1-5 (README, References), then the literature beyond them, whose
#: rows name their paper by a short citation (``Claim(..., paper="Raviv et al. 2018")``)
GROUPS = ("paper 1", "paper 2", "paper 3", "paper 4", "paper 5", "literature")
COLUMNS = ("paper", "source", "claim", "kind", "setting", "paper_value", "ours", "verdict",
           "why")
#: the columns of the project's own checks (``Check``): no paper, a target instead of its value
CHECK_COLUMNS = ("where", "check", "target", "ours", "verdict", "why")


def holds(condition) -> str:
    """The verdict of a rule on measured values: ``reproduced`` when ``condition`` holds, else
    ``not reproduced``.  The row's ``why`` states the rule, which must be the claim itself,
    never weaker.

    >>> from gradcode.experiments import holds
    >>> holds(3.1 < 4.0), holds(5.0 < 4.0)
    ('reproduced', 'not reproduced')
    """
    return "reproduced" if bool(condition) else "not reproduced"


def within(value, low: float, high: float) -> str:
    """``holds(low <= value <= high)``: a band (a NaN value is outside every band).

    >>> from gradcode.experiments import within
    >>> within(0.52, 0.4, 0.6), within(0.9, 0.4, 0.6), within(float("nan"), 0.0, 1.0)
    ('reproduced', 'not reproduced', 'not reproduced')
    """
    return holds(low <= value <= high)


def ranks(values: dict, order) -> str:
    """``holds`` for a strict order: the keys of ``values``, smallest first, are ``order``,
    with no two equal (a tie is no order).

    >>> from gradcode.experiments import ranks
    >>> times = {"M-SGC": 1.0, "GC": 1.2, "no coding": 1.5}
    >>> ranks(times, ["M-SGC", "GC", "no coding"]), ranks(times, ["GC", "M-SGC", "no coding"])
    ('reproduced', 'not reproduced')
    >>> ranks({"T_probe = 10": 36.08, "T_probe = 20": 36.08}, ["T_probe = 20", "T_probe = 10"])
    'not reproduced'
    """
    order = list(order)
    if sorted(values) != sorted(order):
        return holds(False)
    seq = [values[k] for k in order]
    return holds(all(a < b for a, b in zip(seq, seq[1:])))


@dataclass
class Claim:
    """One ledger row.  ``source`` says where the paper makes the claim (its section, the
    abstract, or ``code: owner/repo path`` for the authors' code); ``paper_value`` / ``ours``
    are numbers (then ``ours / paper`` is shown) or short texts.  ``verdict`` may be left out
    for two numbers and a ``tol``: it is then ``reproduced`` when ``|ours / paper_value - 1| <=
    tol``, else ``not reproduced``.  Every verdict but ``reproduced`` needs a reason: ``why``,
    or for a verdict decided by ``tol`` the tolerance it missed (so a computed miss is a row,
    never an error); the tolerance is shown with ``why`` either way.
    ``kind`` (``KINDS``) is ``value`` for a ``tol`` row or a number in ``paper_value`` (which
    must then be a ``value``) and must be given otherwise.  ``setting`` is ``"paper's"`` or
    ``"stand-in: <what differs>"``.
    ``paper`` (1-5, or a short citation of a paper of the literature, e.g. ``"Raviv et al.
    2018"``: the ledger's sixth group, ``group``) defaults to the experiment's
    (``Experiment.number``).  A verdict is computed (``tol``, ``holds``, ``within``,
    ``ranks``), never typed; a row with nothing measured is made by ``Claim.not_attempted``.

    >>> from gradcode.experiments import Claim, holds
    >>> c = Claim("Table 1", "M-SGC's load", paper_value=0.5, ours=0.52, tol=0.05)
    >>> c.verdict, c.kind, round(c.ratio(), 3)
    ('reproduced', 'value', 1.04)
    >>> c.row(paper=4)
    {'paper': 4, 'source': 'Table 1', 'claim': "M-SGC's load", 'kind': 'value',
     'setting': "paper's", 'paper_value': '0.5', 'ours': '0.52', 'verdict': 'reproduced',
     'why': 'ours / paper = 1.04, tolerance ±5%'}
    >>> Claim("Fig. 3", "IS-GC is faster", "faster", "slower", verdict=holds(False),
    ...       kind="direction")
    Traceback (most recent call last):
    ...
    ValueError: claim 'IS-GC is faster': why: a 'not reproduced' verdict needs a reason, got none
    """
    source: str
    claim: str
    paper_value: float | str
    ours: float | str
    verdict: str | None = None
    why: str = ""
    tol: float | None = None
    paper: int | None = None
    kind: str | None = None
    setting: str = PAPERS
    fmt: str = "{:.3g}"
    unit: str = ""
    #: False only from ``not_attempted``: the one way to a row with nothing measured
    measured: bool = field(default=True, repr=False)
    _versus = "paper"              # what ``paper_value`` is, in ``why``'s tolerance

    @classmethod
    def not_attempted(cls, source: str, claim: str, paper_value, why: str, ours="-",
                      **kw) -> "Claim":
        """The only way to a ``not attempted`` row: nothing is measured (``ours`` says what
        stands in, if anything), ``why`` says why.

        >>> from gradcode.experiments import Claim
        >>> c = Claim.not_attempted("Fig. 13", "ResNet-18 on CIFAR-10", "Fig. 13", "no GPU",
        ...                         kind="figure")
        >>> c.verdict, c.ours
        ('not attempted', '-')
        """
        return cls(source, claim, paper_value, ours, "not attempted", why, measured=False,
                   **kw)

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
        self._check_columns()

    def _check_columns(self) -> None:
        if self.kind is None and (self.tol is not None or _number(self.paper_value)):
            self.kind = "value"
        if self.kind not in KINDS:
            raise ValueError(f"claim {self.claim!r}: kind: expected one of {KINDS}, "
                             f"got {self.kind!r}")
        if _number(self.paper_value) and self.kind != "value":
            raise ValueError(f"claim {self.claim!r}: kind: the paper prints a number "
                             f"({self.paper_value!r}), so expected 'value', got {self.kind!r}")
        if not (self.setting == PAPERS or (self.setting.startswith(STAND_IN)
                                           and self.setting[len(STAND_IN):].strip())):
            raise ValueError(f"claim {self.claim!r}: setting: expected {PAPERS!r} or "
                             f"'{STAND_IN}<what differs>', got {self.setting!r}")
        if not self.source.strip() or "gradcode" in self.source.lower():
            raise ValueError(f"claim {self.claim!r}: source: expected the paper's section, "
                             "the abstract or the authors' code (not our own), "
                             f"got {self.source!r}")

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
        told = f"ours / {self._versus} = {self.ratio():.3g}, tolerance ±{self.tol * 100:.3g}%"
        return f"{told}; {self.why}" if self.why else told

    def row(self, paper: int | None = None) -> dict:
        """The ledger's CSV row (``paper`` when the claim names none)."""
        return {"paper": self.paper or paper, "source": self.source, "claim": self.claim,
                "kind": self.kind, "setting": self.setting,
                "paper_value": self.show(self.paper_value), "ours": self.show(self.ours),
                "verdict": self.verdict, "why": self.reason()}


@dataclass
class Check(Claim):
    """A row of the project's own checks, not a claim of a paper (the simulator against real
    backends, our estimator's rule against the authors'): ``claim`` says what is checked,
    ``paper_value`` is our target.  Its verdict is computed as a ``Claim``'s; ``reproduce all``
    writes these rows to ``checks.csv`` and the end of ``claims.md``, outside the papers'
    tallies.  ``source`` is where the check stands (it may be our own code); ``kind`` and
    ``setting`` do not apply.

    >>> from gradcode.experiments import Check
    >>> c = Check("runtime", "local time per round / virtual prediction", 1.0, 1.07, tol=0.2)
    >>> c.row()
    {'where': 'runtime', 'check': 'local time per round / virtual prediction', 'target': '1',
     'ours': '1.07', 'verdict': 'reproduced', 'why': 'ours / target = 1.07, tolerance ±20%'}
    """
    _versus = "target"

    def _check_columns(self) -> None:
        if not self.source.strip():
            raise ValueError(f"check {self.claim!r}: source: expected where it stands, got none")

    def row(self, paper: int | None = None) -> dict:
        """The ``checks.csv`` row (``CHECK_COLUMNS``; ``paper`` is ignored)."""
        return {"where": self.source, "check": self.claim, "target": self.show(self.paper_value),
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
    """``31 reproduced, 12 not reproduced, ...`` over ``rows``.

    >>> from gradcode.experiments import Claim, holds, tally
    >>> claims = [Claim("Table 1", "M-SGC's load", 0.5, 0.52, tol=0.05, paper=4),
    ...           Claim("Fig. 3", "IS-GC is faster", "faster", "faster", verdict=holds(2 < 3),
    ...                 why="rule: 2 s < 3 s per step", kind="direction", paper=2,
    ...                 setting="stand-in: a simulated cluster"),
    ...           Claim("Fig. 4", "CR beats FR", 2.0, 3.0, tol=0.1, why="fewer rounds", paper=1)]
    >>> [c.verdict for c in claims]
    ['reproduced', 'reproduced', 'not reproduced']
    >>> tally([c.row() for c in claims])
    '2 reproduced, 1 not reproduced'
    """
    counts = {v: sum(r["verdict"] == v for r in rows) for v in VERDICTS}
    return ", ".join(f"{c} {v}" for v, c in counts.items() if c)


def verdict_table(rows: list[dict]) -> str:
    """The ledger's summary: rows counted by group (``GROUPS``) and verdict, a markdown table.

    >>> from gradcode.experiments._ledger import verdict_table
    >>> print(verdict_table([{"paper": "2", "verdict": "reproduced"},
    ...                      {"paper": "Raviv et al. 2018", "verdict": "not attempted"}]))
    | group | reproduced | not reproduced | not attempted | rows |
    | --- | --- | --- | --- | --- |
    | paper 2 | 1 | 0 | 0 | 1 |
    | literature | 0 | 0 | 1 | 1 |
    | all | 1 | 0 | 1 | 2 |
    <BLANKLINE>
    """
    lines = ["| group | " + " | ".join(VERDICTS) + " | rows |",
             "| --- | " + " | ".join("---" for _ in VERDICTS) + " | --- |"]
    parts = [(label, [r for r in rows if group(r["paper"]) == g])
             for g, label in enumerate(GROUPS, 1)]
    for label, mine in [p for p in parts if p[1]] + [("all", rows)]:
        counts = [sum(r["verdict"] == v for r in mine) for v in VERDICTS]
        lines.append(f"| {label} | " + " | ".join(map(str, counts)) + f" | {len(mine)} |")
    return "\n".join(lines) + "\n"
