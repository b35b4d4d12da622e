"""Reproductions of the papers' experiments: ``gradcode reproduce NAME [--quick]``.

Each experiment module defines ``SPECS = {name: {"title", "paper", "claim", "run"}}`` with
``run(ctx) -> Output``; ``reproduce`` writes ``results/NAME/`` with
``results.csv``, ``plot.png``, ``claims.csv`` and ``summary.md`` (the paper's claims next to
ours, with a verdict each); ``reproduce_all`` (``gradcode reproduce all``) runs them all and
gathers the claims ledger ``claims.csv`` / ``claims.md``.
"""

from ._common import EXPERIMENTS, Context, Output, list_experiments, reproduce, reproduce_all
from ._ledger import Claim, VERDICTS, tally

__all__ = ["EXPERIMENTS", "VERDICTS", "Claim", "Context", "Output", "list_experiments",
           "reproduce", "reproduce_all", "tally"]
