import os

# One BLAS / OpenMP thread per process: the suite runs a process per core (pytest-xdist), and
# OpenBLAS's threads spin while they wait for a core, so two threads per process on a busy
# machine made every least-squares decode ~10x slower (0.09 s instead of 0.009 s at n = 256).
# Set before NumPy and torch start their pools; inherited by the subprocesses tests start.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

from hypothesis import HealthCheck, settings  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

threadpool_limits(1)          # the pools of libraries loaded before this file (NumPy's)

settings.register_profile("default", deadline=None, max_examples=40,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", deadline=None, max_examples=40, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci" if os.environ.get("CI") else "default")


import pytest  # noqa: E402


@pytest.fixture(scope="session")
def quick(tmp_path_factory):
    """``quick(name)``: the folder of experiment ``name``'s ``--quick`` run; ``quick.ledger()``:
    the folder holding every experiment's and the ledger ``claims.csv`` / ``claims.md``, as
    ``reproduce all --quick`` writes them.  Every experiment is run once per test run.  Under
    pytest-xdist the workers share the folder: each runs what it asks for unless another has
    started it, and while it waits for another's, it runs experiments nobody has started."""
    base = tmp_path_factory.getbasetemp()
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    return _Quick((base.parent if worker else base) / "reproduce-all",
                  int(worker[2:]) if worker else 0)


def _claim(path) -> bool:
    """Create ``path`` if nobody has: the one way to take a job the workers share."""
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL))
        return True
    except FileExistsError:
        return False


class _Quick:
    """The session's one ``reproduce all --quick``, shared by the xdist workers (``quick``)."""

    def __init__(self, root, rank: int, patience: float = 1200.0):
        from gradcode.experiments import EXPERIMENTS
        self.root, self.patience, self.planned = root, patience, list(EXPERIMENTS)
        self.names = self.planned[::-1] if rank % 2 else self.planned   # workers split them
        root.mkdir(parents=True, exist_ok=True)

    def __call__(self, name: str):
        self._wait([name])
        return self.root / name

    def ledger(self):
        from gradcode.experiments._common import write_ledger
        self._wait(self.names)
        root, names = self.root, self.planned
        if _claim(root / "ledger.claimed"):
            ends = {n: (root / f"{n}.done").read_text().split("\n", 1) for n in names}
            write_ledger(root, [(n, float(ends[n][0])) for n in names],
                         {n: e for n, (_, e) in ends.items() if e}, quick=True, seed=0,
                         seconds=sum(float(t) for t, _ in ends.values()), planned=names)
            (root / "ledger.done").touch()
        self._until(lambda: (root / "ledger.done").is_file(), "the ledger was never written")
        return root

    def _wait(self, need: list) -> None:
        """Run the experiments of ``need`` nobody has started, then, until the others' end,
        any experiment nobody has started."""
        for name in [n for n in self.names if n in need] + self.names:
            if all(self._done(n) for n in need):
                return
            self._run(name)
        self._until(lambda: all(self._done(n) for n in need),
                    "another worker's experiments never ended")

    def _done(self, name: str) -> bool:
        return (self.root / f"{name}.done").is_file()

    def _run(self, name: str) -> None:
        import time

        from gradcode.experiments import reproduce
        if not _claim(self.root / f"{name}.claimed"):
            return
        t, error = time.perf_counter(), ""
        try:
            reproduce(name, quick=True, out_root=self.root, progress=False)
        except Exception as exc:                        # noqa: BLE001 -- the ledger says it
            error = f"{type(exc).__name__}: {exc}"
        (self.root / f"{name}.done").write_text(f"{time.perf_counter() - t}\n{error}")

    def _until(self, ready, what: str) -> None:
        import time
        deadline = time.monotonic() + self.patience
        while not ready():
            assert time.monotonic() < deadline, f"{self.root}: {what}"
            time.sleep(0.5)


@pytest.fixture(scope="session", autouse=True)
def figures_are_readable():
    """Every figure any test saves (experiments, training plots, tune, examples) is checked by
    ``gradcode.figures.problems`` as it is saved: a title, labelled axes, distinct panel
    letters, tick labels that do not overlap, no legend over the data."""
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
    yield
    Figure.savefig = save
