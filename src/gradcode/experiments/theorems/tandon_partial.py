"""Paper 1, Partial Stragglers: the naive + coded split solved from the text, its figure
(``n = 3``, ``s = 1``, ``alpha = 2``) and gradcode's ``gc-partial`` under partial stragglers,
whose split must equal the text's (``theorems``; see ``tandon_common``)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ...registry import make_code
from ._framework import Evidence, Tally, statement
from .tandon_common import fmt_float, straggler_sets, weights_ok


def partial_split(n: int, s: int, alpha) -> tuple:
    """The partial scheme solved from the text (exact with ``Fraction`` inputs): each machine a
    naive share ``a`` (alone) and ``s + 1`` coded partitions of ``(1 - n a) / n``; a straggler's
    naive time ``alpha a`` equals a non-straggler's ``a + (s + 1)(1 - n a) / n``, so
    ``a = (s + 1) / (n (alpha + s))``: ``(a, coded share per machine, load per machine)``.

    >>> [str(x) for x in partial_split(3, 1, Fraction(2))]     # the figure: 4/9 each
    ['2/9', '2/9', '4/9']
    """
    a = Fraction(s + 1) / (n * (alpha + s))
    coded = (s + 1) * (1 - n * a) / n
    return a, coded, a + coded


@statement(1, "Partial Stragglers, figure (n = 3, s = 1, alpha = 2)",
           "each worker gets 4/9 of the data (as opposed to 2/3 in the full-straggler scheme)")
def _partial_figure(ctx) -> Evidence:
    n, s, alpha = 3, 1, 2
    a, coded, load = partial_split(n, s, Fraction(alpha))
    code = make_code("gc-partial", n=n, s=s, alpha=alpha)
    checks = {
        "ours 4/9": load == Fraction(4, 9),
        "ours 2/3 = (s + 1) / n": Fraction(s + 1, n) == Fraction(2, 3),
        "gc-partial 4/9": np.allclose(code.machine_load, 4 / 9, rtol=0, atol=1e-12),
        "gc-cr 2/3": np.allclose(make_code("gc-cr", n=n, s=s).load, 2 / 3, rtol=0, atol=1e-12),
    }
    bad = [k for k, v in checks.items() if not v]
    return Evidence(len(checks), len(bad), "the split solved exactly from the text (a straggler "
                    "alpha times slower finishes its naive part with a non-straggler's naive + "
                    "coded), and gradcode's gc-partial / gc-cr loads (1e-12)",
                    f"{bad[0]} fails: ours {load}, gc-partial "
                    f"{code.machine_load.round(6).tolist()}" if bad else
                    f"naive {a} + coded {coded} = {load} per worker (vs 2/3)")


def partial_tally(code, n: int, s: int, alpha: float, slow: np.ndarray,
                  rng: np.random.Generator) -> Tally:
    """gc-partial under partial stragglers: machines process their naive message, then their
    coded one (work = the data in the message's partitions); stragglers ``slow`` times slower
    (``<= alpha``).  At ``T``, when the non-stragglers finish, every set of ``s`` stragglers has
    sent its naive messages and gradcode decodes the full gradient from what arrived (weights
    verified); and the balance ``alpha x_naive = x_naive + x_coded`` holds, with the naive and
    coded shares those solved from the text (``partial_split``).  One case per straggler set
    and slowdown draw, and one for the split.

    >>> code = make_code("gc-partial", n=3, s=1, alpha=2.0)
    >>> t = partial_tally(code, 3, 1, 2.0, np.array([2.0]), np.random.default_rng(0))
    >>> t.cases, t.failures
    (4, 0)
    """
    B = np.array(code.B)
    work = (B != 0) @ code.partition_sizes                  # data per message
    naive, coded = work[:n], work[n:]
    a, c, _ = (float(x) for x in partial_split(n, s, Fraction(alpha)))
    t = Tally()
    t.count(1, not (np.allclose(alpha * naive, naive + coded, rtol=1e-12, atol=0)
                    and np.allclose(naive, a, rtol=1e-12, atol=0)
                    and np.allclose(coded, c, rtol=1e-12, atol=0)),
            lambda: f"n = {n}, s = {s}, alpha = {alpha}: naive {naive[0]}, coded {coded[0]} "
                    f"(the text's split: {a:.6g}, {c:.6g})")
    for got in straggler_sets(n, s):
        kappa = np.where(got, 1.0, slow[rng.integers(slow.size, size=n)])
        T = float((naive + coded)[got].max())
        arrived = np.concatenate([kappa * naive <= T * (1 + 1e-12),
                                  kappa * (naive + coded) <= T * (1 + 1e-12)])
        d = code.decode(np.flatnonzero(arrived))
        t.count(1, not (d.exact and weights_ok(d.weights, B, arrived)), lambda: (
            f"n = {n}, s = {s}, alpha = {alpha}, stragglers {np.flatnonzero(~got).tolist()} "
            f"x{np.round(kappa[~got], 3).tolist()}: not decoded at T = {fmt_float(T)}"))
    return t


@statement(1, "Partial Stragglers",
           "with the data split into naive and coded parts, s stragglers at most alpha times "
           "slower finish their naive parts when the others finish naive + coded, and the master "
           "then has the full gradient")
def _partial(ctx) -> Evidence:
    rng = np.random.default_rng(ctx.seed)
    n_max = 6 if ctx.quick else 9
    alphas = (1.0, 1.2, 1.5, 2.0, 3.0)
    t = Tally()
    for n in range(2, n_max + 1):
        for s in range(1, n):
            for alpha in alphas:
                code = make_code("gc-partial", n=n, s=s, alpha=alpha)
                slow = np.concatenate([[alpha], 1.0 + (alpha - 1.0) * rng.random(3)])
                t.merge(partial_tally(code, n, s, alpha, slow, rng))
    return t.evidence(f"gradcode's gc-partial, every n <= {n_max}, 1 <= s < n, alpha in "
                      f"{list(alphas)}: its naive and coded shares equal the split solved from "
                      "the text (1e-12); every set of s stragglers (slowdowns drawn in [1, "
                      "alpha], alpha itself included): arrivals by the non-stragglers' finish "
                      "time T, decoded, weights verified", _partial_typical())


def _partial_typical() -> str:
    code = make_code("gc-partial", n=3, s=1, alpha=2)
    work = (np.array(code.B) != 0) @ code.partition_sizes
    return (f"gc-partial n = 3, s = 1, alpha = 2: naive {work[0]:.4f} + coded {work[3]:.4f} = "
            f"T = {work[0] + work[3]:.4f}; a straggler's naive part 2 x {work[0]:.4f}")
