"""Compile the numba kernels once, before pytest-xdist's workers start (``tests/conftest.py``;
on a fresh install ``make test`` runs it beside pip, which keeps only one core busy, and the
suite then finds every kernel in numba's cache).

On a fresh clone every worker met the same uncompiled kernels within its first minute and
compiled each of them itself: the fast-path suite took 186 s of CPU cold against 58 s with the
kernels cached (2 cores, 3 workers), twice the compile work of one process.  Here the kernels
are compiled in ``parts`` processes, each a share of the families (single-round codes through
their fast paths, sequential schemes through replay and App. J), into numba's on-disk cache,
which the workers then load.  A kernel missed here is compiled where it is first needed, as
before: warming changes how long the suite takes, never what it checks.

``python tests/_warm.py PART PARTS``
"""

import sys

import numpy as np

WAITS = ("all", "fastest:3", "deadline:1.0", "mu:0.5", "decodable", "covered")


def _single_round(codes) -> None:
    from gradcode.sim import simulate
    from gradcode.stragglers import Compute, parse_delay

    for code in codes:
        for wait in WAITS:
            try:
                simulate(code, parse_delay("exp:1"), wait, 6, compute=Compute(0.5), seed=0)
            except ValueError:                   # a policy this code's n does not allow
                pass
        order = np.argsort(np.random.default_rng(0).random((3, code.n_workers)), axis=1)
        code.decodable_counts(order)


def _sequential(schemes) -> None:
    from gradcode.sim import estimate_runtime, simulate
    from gradcode.stragglers import Compute, parse_delay

    D = np.random.default_rng(0).uniform(1, 3, (12, 32))
    for x in schemes:                   # App. J first: the other part compiles the wait
        for rule in ("deadline", "model"):      # policies' kernels meanwhile (not both parts)
            estimate_runtime(x, D[:, :x.n_workers], jobs=12 - x.T, mu=1.0, alpha=2.0,
                             base_load=0.1, waitout=rule)
    for x in schemes:
        for rule in ("deadline", "model", "never"):
            simulate(x, parse_delay("exp:1"), "fastest:3", x.T + 4, compute=Compute(0.5),
                     seed=0, waitout=rule)


#: single-round codes warmed beside the sequential schemes: their recovery is the least-squares
#: kernel (``codes._downdate``, ~13 s to compile), the span test's (~28 s) is warmed with the
#: other codes: the two shares took 48 s and 28 s before, one core idle for the difference
BESIDE_SEQUENTIAL = ("bgc", "matrix")


def warm(part: int, parts: int) -> None:
    """Share ``part`` of ``parts``: the single-round codes but ``BESIDE_SEQUENTIAL``, then the
    sequential schemes and those."""
    from gradcode.sequential import SequentialScheme

    from _codes import ALL_SCHEMES, available
    schemes = [x for _, x in available(ALL_SCHEMES)]
    single = [x for x in schemes if not isinstance(x, SequentialScheme)]
    sequential = [x for x in schemes if isinstance(x, SequentialScheme)]
    if parts == 1 or part == 0:
        _single_round([x for x in single if x.name not in BESIDE_SEQUENTIAL])
    if parts == 1 or part == 1:
        _sequential(sequential)
        _single_round([x for x in single if x.name in BESIDE_SEQUENTIAL])


if __name__ == "__main__":
    warm(int(sys.argv[1]), int(sys.argv[2]))
