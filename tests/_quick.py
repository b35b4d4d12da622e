"""The ``--quick`` experiments the tests read (``tests/conftest.py``'s ``quick``), run once per
test run into one shared folder: a job is taken by creating ``NAME.claimed``, and its end is
``NAME.done`` (its seconds, then its error if it raised; the traceback in
``NAME.traceback``).

``python tests/_quick.py ROOT NAME`` runs one claimed experiment in a process of its own: the
suite starts ``sim-vs-real`` so at the start (``BACKGROUND``), because it mostly waits on real
delays and on Ray and torch processes, and workers that reached the tests reading it would
otherwise sit idle while it ran (about 70 s of two idle cores on 2 cores).
"""

import contextlib
import os
import sys
import time
import traceback
from pathlib import Path

#: experiments that wait more than they compute: run beside the tests from the start
BACKGROUND = ("sim-vs-real",)


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
    with readable_figures():
        run(Path(sys.argv[1]), sys.argv[2])
