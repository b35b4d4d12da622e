"""Reproductions of the papers' experiments: ``gradcode reproduce NAME [--quick]``.

Each experiment module declares its experiments, ``SPECS = {name: Experiment(...)}``: what one
runs (its sizes, configurations and what one configuration measures) and how it reports (its
figure, paragraph and claims); ``reproduce`` writes ``results/NAME/`` with
``results.csv``, ``plot.png``, ``claims.csv`` and ``summary.md`` (the paper's claims next to
ours, with a verdict each, computed by a stated rule: ``holds``, ``within``, ``ranks`` or a
tolerance; the project's own checks, ``Check`` rows, in ``checks.csv``); ``reproduce_all``
(``gradcode reproduce all``) runs them all and gathers the claims ledger ``claims.csv`` /
``claims.md`` (and ``checks.csv``).
"""

from ._common import (EXPERIMENTS, Context, Experiment, Output, list_experiments, reproduce,
                      reproduce_all)
from ._ledger import KINDS, PAPERS, VERDICTS, Check, Claim, holds, ranks, tally, within

__all__ = ["EXPERIMENTS", "KINDS", "PAPERS", "VERDICTS", "Check", "Claim", "Context",
           "Experiment", "Output", "holds", "list_experiments", "ranks", "reproduce", "reproduce_all", "tally",
           "within"]
