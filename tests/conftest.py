import os

# One BLAS / OpenMP / span-test thread per process: the suite runs a process per core
# (pytest-xdist), and OpenBLAS's threads spin while they wait for a core, so two threads per
# process on a busy machine made every least-squares decode ~10x slower (0.09 s instead of
# 0.009 s at n = 256); gradcode's own (codes._span's rounds) would only contend.
# Set before NumPy and torch start their pools; inherited by the subprocesses tests start.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "GRADCODE_THREADS"):
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


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session):
    """Under pytest-xdist, before its workers start: the numba kernels compiled once, in one
    process per core (``tests/_warm.py`` says why); then the quick experiments start beside the
    tests (``tests/_quick.py``)."""
    config = session.config
    if hasattr(config, "workerinput") or not getattr(config.option, "numprocesses", None):
        return
    import subprocess
    import sys
    from pathlib import Path

    here = Path(__file__).parent
    parts = min(2, os.cpu_count() or 1)
    procs = [subprocess.Popen([sys.executable, str(here / "_warm.py"), str(p), str(parts)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
             for p in range(parts)]            # a failure here is the tests' to report
    for proc in procs:
        proc.wait()
    root = _root(Path(config._tmp_path_factory.getbasetemp()))
    root.mkdir(parents=True, exist_ok=True)
    config.stash[_BACKGROUND] = [subprocess.Popen(
        [sys.executable, str(here / "_quick.py"), str(root)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]


_BACKGROUND = pytest.StashKey[list]()


def pytest_sessionfinish(session):
    """The background experiments end with the session (those no test waited for included)."""
    for proc in session.config.stash.get(_BACKGROUND, []):
        proc.terminate()
        proc.wait()


#: how long a worker waits for the others' experiments (and for the ledger), in seconds
PATIENCE = 1200.0


def pytest_collection_modifyitems(config, items):
    """The tests that ask for ``quick`` run last, when the experiments run beside the tests
    are done or nearly (``tests/_quick.py``, started once some test asks: ``wanted``).  Such a
    test may run its worker's share of them before its own lines: its time limit is the
    experiments' ``PATIENCE``, not one test's 300 s (on a loaded machine a share took more than
    300 s, and the experiment it stopped left the ledger without its rows)."""
    def asks(item) -> bool:
        return "quick" in getattr(item, "fixturenames", ())
    items.sort(key=asks)
    asking = [item for item in items if asks(item)]
    for item in asking:
        item.add_marker(pytest.mark.timeout(PATIENCE))
    if asking:
        root = _root(config._tmp_path_factory.getbasetemp())
        root.mkdir(parents=True, exist_ok=True)
        (root / "wanted").touch()


def _root(basetemp):
    """The folder of the quick experiments: one per test run, the workers' and the process
    beside them (a worker's ``basetemp`` is ``popen-gwN`` in the run's)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    return (basetemp.parent if worker else basetemp) / "reproduce-all"


@pytest.fixture(scope="session")
def quick(tmp_path_factory):
    """``quick(name)``: the folder of experiment ``name``'s ``--quick`` run.  Every experiment is
    run once per test run, as ``reproduce all --quick`` runs them, on the first request, and the
    ledger ``claims.csv`` / ``claims.md`` is gathered in the folder's parent.  Under pytest-xdist
    the workers share the folder with the process running them beside the tests
    (``tests/_quick.py``): each claims the experiments nobody has started, waits for the others'
    and the first to see all done writes the ledger."""
    root, ready = _root(tmp_path_factory.getbasetemp()), []

    def folder(name):
        if not ready:
            _shared_quick_run(root)
            ready.append(True)
        return root / name
    return folder


def _shared_quick_run(root, patience: float = PATIENCE) -> None:
    import time

    from gradcode.experiments._common import write_ledger

    from _quick import claim, order, run
    root.mkdir(parents=True, exist_ok=True)
    names = order()
    for name in names[::-1]:                       # the other end from the process beside
        if claim(root / f"{name}.claimed"):
            run(root, name)
    deadline = time.monotonic() + patience
    while not all((root / f"{n}.done").is_file() for n in names):
        assert time.monotonic() < deadline, f"{root}: another worker's experiments never ended"
        time.sleep(0.5)
    if claim(root / "ledger.claimed"):
        ends = {n: (root / f"{n}.done").read_text().split("\n", 1) for n in names}
        write_ledger(root, [(n, float(ends[n][0])) for n in names],
                     {n: e for n, (_, e) in ends.items() if e}, quick=True, seed=0,
                     seconds=sum(float(t) for t, _ in ends.values()), planned=names)
        (root / "ledger.done").touch()
    while not (root / "ledger.done").is_file():
        assert time.monotonic() < deadline, f"{root}: the ledger was never written"
        time.sleep(0.5)


@pytest.fixture(scope="session", autouse=True)
def figures_are_readable():
    """Every figure any test saves (experiments, training plots, tune, examples) is checked as
    it is saved (``_quick.readable_figures``)."""
    from _quick import readable_figures
    with readable_figures():
        yield
