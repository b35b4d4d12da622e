"""``theorems``: the papers' theorems, lemmas, propositions and worked examples, each checked by
computation (exhaustively on small cases, on random ones beyond).

A statement is declared once, beside its check, in the module of its paper's section::

    @statement(2, "Thm 8", "some maximum independent set meets every group's received workers")
    def _thm8(ctx) -> Evidence:
        ...
        return Evidence(cases=..., failures=..., example="...", how="all received sets, n <= 12")

Its ledger row's verdict comes from that evidence by one rule (``verdict``): ``reproduced`` when
it held on every case checked, ``not reproduced`` (with the first counterexample) when it failed
on any.  Nothing is typed in by hand: a change in the code can change the verdict.  Checks count
their cases with a ``Tally`` (``_framework``: ``Evidence``, ``Tally``, ``statement``).

The modules, one per section of a paper (``<paper>_common``: what a paper's sections share):

=====  ==========================  ===========================================================
paper  module                      statements
=====  ==========================  ===========================================================
1      ``tandon_setup``            General Setup: the worked example (n = 3, s = 1)
1      ``tandon_full``             Full Stragglers: condition (4), the Theorem (B's density)
1      ``tandon_fr``               Fractional Repetition Scheme (Alg. 1) and its figure
1      ``tandon_cr``               Cyclic Repetition Scheme (eq. (5), Alg. 2)
1      ``tandon_partial``          Partial Stragglers and its figure
2      ``isgc_hr_maximum``         Sec. VI-C, Thm 8-9: Alg. 3 is maximal, not maximum, for HR
2      ``isgc_fr``                 Sec. I-IV: Fig. 1-2's examples, FR's Alg. 1, equal chances
2      ``isgc_cr``                 Sec. V-A/B: CR's conflict graph, Alg. 2 (Thm 1-3), Fig. 3-4
2      ``isgc_fr_vs_cr``           Sec. V-C: FR against CR (Thm 4)
2      ``isgc_hr``                 Sec. VI: HR's placement and graphs (Thm 5-7), Alg. 4
2      ``isgc_bounds``             Sec. VII: the recovery bounds (Thm 10-11), convergence (Thm 12)
3      ``heter_allocation``        Sec. IV-A: eq. 5-7 (allocation, support), Example 1
3      ``heter_robustness``        Lemma 1-3, Alg. 1, Thm 4: robust to any s stragglers
3      ``heter_optimality``        eq. 3, Thm 5 and its proof: the completion time T(B)
3      ``heter_groups``            Sec. V: groups (Alg. 2, eq. 8, Thm 6), Example 2
4      ``sgc_sr``                  Sec. 3.1-3.2: GC round by round, SR-SGC (Prop. 3.1, App. D)
4      ``sgc_m``                   Sec. 3.3: M-SGC (Prop. 3.2, eq. 1, Remark 3.3)
4      ``sgc_bounds``              App. F: the load's lower bounds (Thm F.1, F.2, Remark F.1)
4      ``sgc_examples``            the worked examples: Fig. 6 (Sec. 3.3.1), Fig. 12 (Ex. F.1)
4      ``sgc_rep``                 App. G: the -Rep variants
4      ``sgc_setting``             Remark 2.3 (wait-out), App. I (Remark 2.1), App. B
5      ``approx_model``            Sec. II-III: the straggler model, eq. (2), the holders
5      ``approx_shuffling``        Sec. III: Prop. 1, Remark 1 (shuffling)
5      ``approx_frc``              Sec. IV: Thm 1 (FRC) and the steps of its proof
5      ``approx_crc``              Sec. IV-B: Lemma 1, the cycle classes, Thm 2 (CRC)
5      ``approx_sec5``             Remark 2 and Sec. V's numbers
=====  ==========================  ===========================================================
"""

from __future__ import annotations

import importlib

from .. import Context, Output
from ._framework import Evidence, Statement, Tally, claim_of, declared, statement, verdict

__all__ = ["MODULES", "SPECS", "Evidence", "Statement", "Tally", "claim_of", "run",
           "statement", "statements", "verdict"]

#: the modules declaring the statements, in the ledger's order (within a paper: as declared;
#: paper 2's Thm 8-9, the first statements checked, keep their place at the head of its rows)
MODULES = ("tandon_setup", "tandon_full", "tandon_fr", "tandon_cr", "tandon_partial",
           "isgc_hr_maximum", "isgc_fr", "isgc_cr", "isgc_fr_vs_cr", "isgc_hr", "isgc_bounds",
           "heter_allocation", "heter_robustness", "heter_optimality", "heter_groups",
           "sgc_sr", "sgc_m", "sgc_bounds", "sgc_examples", "sgc_rep", "sgc_setting",
           "approx_model", "approx_shuffling", "approx_frc", "approx_crc", "approx_sec5")


def statements() -> list[Statement]:
    """Every declared statement, by paper, in declaration order within a paper.

    >>> papers = [s.paper for s in statements()]
    >>> papers == sorted(papers) and sorted(set(papers))
    [1, 2, 3, 4, 5]
    """
    for name in MODULES:
        importlib.import_module(f"{__name__}.{name}")
    return sorted(declared(), key=lambda s: s.paper)


def run(ctx: Context) -> Output:
    """The ``theorems`` experiment: every statement's check, its row and its ledger claim."""
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
