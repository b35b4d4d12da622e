import os

from hypothesis import HealthCheck, settings

settings.register_profile("default", deadline=None, max_examples=40,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", deadline=None, max_examples=40, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci" if os.environ.get("CI") else "default")


import pytest  # noqa: E402


@pytest.fixture(scope="session")
def quick(tmp_path_factory):
    """``quick(name)``: the folder of experiment ``name``'s ``--quick`` run.  Every experiment is
    run once per session, by one ``reproduce all --quick`` (whose ledger ``claims.csv`` /
    ``claims.md`` sit in the folder's parent), on the first request."""
    from gradcode.experiments import reproduce_all
    root = []

    def folder(name):
        if not root:
            root.append(tmp_path_factory.mktemp("reproduce-all"))
            reproduce_all(quick=True, out_root=root[0], progress=False)
        return root[0] / name
    return folder


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
