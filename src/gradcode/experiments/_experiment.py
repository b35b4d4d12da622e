"""One way to declare an experiment: ``Experiment``, a frozen record of what it runs and how it
reports, and the ``Context`` / ``Output`` it runs with.

An experiment file holds only what is specific to its paper: its sizes (quick, full), its
configurations and what one configuration measures (``configs``, ``measure``), the facts its
report rests on (``analyse``), its figure (``plot``), its paragraph (``ours``), its claims
(``claims``) and extra files (``files``).  ``Experiment.output`` does the shared work once: the
sizes ``ctx.quick`` picks, the progress bar over the configurations, the rows appended as they
finish (Ctrl-C writes the finished ones), the ``Output``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Callable, Mapping


@dataclass
class Context:
    """What an experiment gets: size (``quick``), a seed, where traces are, a progress factory.

    >>> from gradcode.experiments import Context
    >>> ctx = Context(quick=True, seed=1, progress=False)
    >>> list(ctx.bar(range(3), desc="configurations"))      # no progress bar: the iterable
    [0, 1, 2]
    >>> ctx.rows.append({"experiment": "demo", "n": 4})     # the finished rows, as they come
    >>> ctx.notes.append("a note for summary.md")
    >>> len(ctx.rows), ctx.traces
    (1, None)
    >>> rows = ctx.each([2, 8], lambda n: {"experiment": "demo", "n": n})   # one row each
    >>> [r["n"] for r in rows]
    [4, 2, 8]
    """
    quick: bool = False
    seed: int = 0
    traces: Path | None = None
    progress: bool = True
    notes: list[str] = field(default_factory=list)
    #: the experiment's result rows, appended as they finish (Ctrl-C writes the finished ones)
    rows: list[dict] = field(default_factory=list)
    #: this run's sizes: of each ``(quick, full)`` pair an ``Experiment`` declares, the one
    #: ``quick`` picks
    sizes: dict = field(default_factory=dict)
    #: what the configurations share (a delay profile, a data set): the experiment's ``setup``
    shared: Any = None

    def bar(self, iterable, desc: str = "", total: int | None = None):
        if not self.progress:
            return iterable
        from tqdm.auto import tqdm
        return tqdm(iterable, desc=desc, total=total, leave=False, mininterval=0.5)

    def each(self, configs, measure, desc: str = "") -> list[dict]:
        """``measure(config)`` for every configuration, under a progress bar, its row (a dict)
        or rows (a list) appended to ``rows`` as each finishes; returns ``rows``."""
        for config in self.bar(list(configs), desc=desc):
            got = measure(config)
            self.rows.extend([got] if isinstance(got, dict) else got)
        return self.rows


@dataclass
class Output:
    """What an experiment produces: its result rows (``results.csv``), a figure (``plot.png``),
    a paragraph on what we measured, extra files to write and its claims.

    >>> from matplotlib.figure import Figure
    >>> from gradcode.experiments import Claim, Output, holds
    >>> fig = Figure()
    >>> _ = fig.subplots().plot([1, 2, 4], [1.0, 0.6, 0.4])
    >>> out = Output(rows=[{"experiment": "demo", "n": n} for n in (1, 2, 4)], figure=fig,
    ...              ours="time per step falls with n.",
    ...              claims=[Claim("Fig. 1", "faster with more workers", "falls", "falls",
    ...                            verdict=holds(0.4 < 1.0), why="rule: time at n = 4 below "
    ...                            "n = 1's", kind="direction", paper=1,
    ...                            setting="stand-in: another machine")])
    >>> len(out.rows), out.claims[0].verdict, out.extra_files
    (3, 'reproduced', {})
    """
    rows: list[dict]
    figure: object            # a matplotlib Figure
    ours: str                 # what we measured, in one paragraph (markdown)
    extra_files: dict[str, str] = field(default_factory=dict)
    #: the papers' claims this experiment checks, with our values and verdicts (``Claim``),
    #: and the project's own checks (``Check`` rows, written to ``checks.csv``)
    claims: list = field(default_factory=list)


def _no_claims(facts) -> list:
    return []


def _no_files(facts) -> dict:
    return {}


@dataclass(frozen=True)
class Experiment:
    """One experiment of a paper, declared: what it runs and how it reports.

    Measuring: ``setup(ctx)`` prepares what the configurations share (``ctx.shared``: a
    profile, a data set), ``configs(ctx)`` lists the configurations and ``measure(ctx,
    config)`` returns one configuration's row (a dict) or rows (a list), appended to
    ``ctx.rows`` as each finishes; ``analyse(ctx, rows)`` then gives the facts the report rests
    on (default: the rows).  An experiment whose control flow is its own gives ``run(ctx)``
    instead, which appends its rows to ``ctx.rows`` itself (its loops through ``ctx.each``)
    and returns the facts.  ``sizes``: name -> ``(quick, full)``; ``ctx.sizes[name]`` is the
    one the run's ``quick`` picks.

    Reporting, from the facts: ``plot`` (a matplotlib figure), ``ours`` (a paragraph),
    ``claims`` (``Claim`` / ``Check`` rows; default none) and ``files`` (extra files, name ->
    text; default none).

    >>> from matplotlib.figure import Figure
    >>> from gradcode.experiments import Claim, Context, Experiment, holds
    >>> def square(ctx, n):
    ...     return {"n": n, "time_s": 1.0 / n}
    >>> def plot(rows):
    ...     fig = Figure()
    ...     fig.subplots().plot([r["n"] for r in rows], [r["time_s"] for r in rows])
    ...     return fig
    >>> def claims(rows):
    ...     falls = rows[-1]["time_s"] < rows[0]["time_s"]
    ...     return [Claim("Fig. 1", "faster with more workers", "falls", "falls",
    ...                   verdict=holds(falls), why="rule: the last n's time below the first's",
    ...                   kind="direction")]
    >>> demo = Experiment("demo", "A demo", "paper 1, Fig. 1", "time falls with n", number=1,
    ...                   sizes={"ns": ((1, 2), (1, 2, 4, 8))},
    ...                   configs=lambda ctx: ctx.sizes["ns"], measure=square, plot=plot,
    ...                   ours=lambda rows: f"{len(rows)} configurations.", claims=claims)
    >>> out = demo.output(Context(quick=True, progress=False))
    >>> out.rows, out.ours, out.claims[0].verdict
    ([{'n': 1, 'time_s': 1.0}, {'n': 2, 'time_s': 0.5}], '2 configurations.', 'reproduced')
    """
    name: str
    title: str
    paper: str
    claim: str
    number: int | None = None
    sizes: Mapping[str, tuple] = field(default_factory=dict)
    setup: Callable[[Context], Any] | None = None
    configs: Callable[[Context], Any] | None = None
    measure: Callable[[Context, Any], dict | list] | None = None
    analyse: Callable[[Context, list], Any] | None = None
    run: Callable[[Context], Any] | None = None
    plot: Callable[[Any], Any] | None = None
    ours: Callable[[Any], str] | None = None
    claims: Callable[[Any], list] = _no_claims
    files: Callable[[Any], dict] = _no_files

    def __post_init__(self):
        loop = self.configs is not None and self.measure is not None
        if loop == (self.run is not None) or (self.configs is None) != (self.measure is None):
            raise ValueError(f"experiment {self.name!r}: expected configs and measure, or run, "
                             "got " + (", ".join(k for k in ("configs", "measure", "run")
                                                 if getattr(self, k) is not None) or "none"))
        if self.plot is None or self.ours is None:
            raise ValueError(f"experiment {self.name!r}: expected plot and ours")

    def output(self, ctx: Context) -> Output:
        """Run the experiment in ``ctx`` (its sizes and shared set-up set, its rows appended to
        ``ctx.rows``) and assemble its ``Output`` from the declared report."""
        ctx.sizes = {k: v[0] if ctx.quick else v[1] for k, v in self.sizes.items()}
        ctx.shared = None if self.setup is None else self.setup(ctx)
        facts = self.run(ctx) if self.run is not None else self._loop(ctx)
        return Output(ctx.rows, self.plot(facts), self.ours(facts), self.files(facts),
                      self.claims(facts))

    def _loop(self, ctx: Context):
        rows = ctx.each(self.configs(ctx), partial(self.measure, ctx), self.name)
        return rows if self.analyse is None else self.analyse(ctx, rows)


def as_experiment(name: str, spec) -> Experiment:
    """``spec`` as an ``Experiment``: itself, or a registry entry of the older form, a dict
    ``{"title", "paper", "claim", "number", "run"}`` whose ``run(ctx)`` returns an ``Output``
    (the ``theorems`` experiment).

    >>> from matplotlib.figure import Figure
    >>> from gradcode.experiments import Context, Output
    >>> from gradcode.experiments._experiment import as_experiment
    >>> e = as_experiment("demo", {"title": "A demo", "run": lambda ctx: Output(
    ...     [{"n": 1}], Figure(), "one row.")})
    >>> e.title, e.output(Context(progress=False)).ours
    ('A demo', 'one row.')
    """
    if isinstance(spec, Experiment):
        return spec
    run = spec["run"]

    def legacy(ctx: Context) -> Output:
        out = run(ctx)
        ctx.rows[:] = out.rows
        return out
    return Experiment(name, spec["title"], spec.get("paper", ""), spec.get("claim", ""),
                      spec.get("number"), run=legacy, plot=_figure_of, ours=_ours_of,
                      claims=_claims_of, files=_files_of)


def _figure_of(out: Output):
    return out.figure


def _ours_of(out: Output) -> str:
    return out.ours


def _claims_of(out: Output) -> list:
    return out.claims


def _files_of(out: Output) -> dict:
    return out.extra_files


_ANY = object()


def derive_seed(ctx: Context, *keys: int) -> int:
    """An integer seed for ``simulate`` derived from ``ctx.seed`` and the configuration keys."""
    import numpy as np
    return int(np.random.SeedSequence([ctx.seed, *keys]).generate_state(1)[0])


def find(rows: list[dict], key: str | None = None, default=_ANY, **match):
    """The first of ``rows`` whose fields equal ``match`` (a field a row lacks reads as None),
    or its field ``key``; ``default`` when none matches (without one: ``LookupError``)."""
    for r in rows:
        if all(r.get(k) == v for k, v in match.items()):
            return r if key is None else r[key]
    if default is _ANY:
        raise LookupError(f"no row with {match}")
    return default


def plural(count: int, word: str) -> str:
    """``1 wait-out``, ``3 wait-outs``."""
    return f"{count} {word}{'' if count == 1 else 's'}"
