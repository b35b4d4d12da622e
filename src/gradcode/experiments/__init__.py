"""Reproductions of the papers' experiments: ``gradcode reproduce NAME [--quick]``.

Each experiment module defines ``SPECS = {name: {"title", "paper", "claim", "run"}}`` with
``run(ctx) -> Output``; ``reproduce`` writes ``results/NAME/`` with
``results.csv``, ``plot.png`` and ``summary.md`` (the paper's claim next to ours).
"""

from ._common import EXPERIMENTS, Context, Headline, Output, list_experiments, reproduce

__all__ = ["EXPERIMENTS", "Context", "Headline", "Output", "list_experiments", "reproduce"]
