"""Shared by the doctests of ``src/gradcode`` (run with ``--doctest-modules``) and ``tests/``."""
import numpy as np
import pytest


@pytest.fixture(autouse=True)
def _doctests_in_a_scratch_folder(request, tmp_path, monkeypatch, doctest_namespace):
    """Every doctest runs in its own empty folder (what it writes stays out of the checkout),
    with ``np`` at hand as in the docstrings."""
    if isinstance(request.node, pytest.DoctestItem):
        monkeypatch.chdir(tmp_path)
        doctest_namespace["np"] = np
