"""The ``--quick`` experiments the tests read (``tests/conftest.py``'s ``quick``), run once per
test run into one shared folder: a job is taken by creating ``NAME.claimed``, and its end is
``NAME.done`` (its seconds, then its error if it raised; the traceback in
``NAME.traceback``).

``python tests/_quick.py ROOT`` runs them in a process of its own, beside the tests from their
start (once a worker's collection has a test that asks: ``ROOT/wanted``), ``sim-vs-real``
first (``order``): the tests reading them run last (``conftest.py``), and
workers that reach them take what this process has not started yet.  Before, the workers ran
them when a test first asked, then sat idle until the last one ended: ``sim-vs-real`` mostly
waits (real delays, Ray and torch processes), and two idle cores for over a minute were the
result on 2 cores.
"""

import contextlib
import os
import sys
import time
import traceback
from pathlib import Path

#: experiments that wait more than they compute: started first
WAITING = ("sim-vs-real",)


def order() -> list[str]:
    """Every experiment, those ``WAITING`` first (``gradcode.experiments.EXPERIMENTS`` order)."""
    from gradcode.experiments import EXPERIMENTS
    return sorted(EXPERIMENTS, key=lambda name: name not in WAITING)


def claim(path) -> bool:
    """Create ``path`` if nobody has: the one way to take a job the workers share."""
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL))
        return True
    except FileExistsError:
        return False


def run(root: Path, name: str) -> None:
    """Experiment ``name``'s quick run into ``root`` (claimed by the caller), then its
    ``.done`` (an error is the ledger's to report, and the tests')."""
    from gradcode.experiments import reproduce
    t, error = time.perf_counter(), ""
    try:
        reproduce(name, quick=True, out_root=root, progress=False)
    except Exception as exc:                            # noqa: BLE001 -- the ledger says it
        error = f"{type(exc).__name__}: {exc}"
        (root / f"{name}.traceback").write_text(traceback.format_exc())
    (root / f"{name}.done").write_text(f"{time.perf_counter() - t}\n{error}")


@contextlib.contextmanager
def readable_figures():
    """Every figure saved inside is checked by ``gradcode.figures.problems`` as it is saved: a
    title, labelled axes, distinct panel letters, tick labels that do not overlap, no legend
    over the data (an ``AssertionError`` names the file)."""
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    from gradcode.figures import problems
    save = Figure.savefig

    def checked(fig, path, *args, **kwargs):
        found = problems(fig)
        assert not found, f"{path}: {found}"
        return save(fig, path, *args, **kwargs)
    Figure.savefig = checked
    try:
        yield
    finally:
        Figure.savefig = save


if __name__ == "__main__":
    root = Path(sys.argv[1])
    while not (root / "wanted").exists():              # no test asks: the session ends it
        time.sleep(0.2)
    with readable_figures():
        for name in order():
            if claim(root / f"{name}.claimed"):
                run(root, name)
