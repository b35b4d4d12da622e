"""Documentation as a contract: every public function and class has a docstring with a runnable
example (``>>>``; pytest runs them all as doctests, ``--doctest-modules`` in pyproject.toml), and
the README's Python blocks run as they are printed."""
import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import pytest

import gradcode

ROOT = Path(__file__).resolve().parents[1]


def public_objects():
    """Every function and class a public module of gradcode exports (``__all__``, else its
    public names), once each, with the first public name it is reached by."""
    modules = ["gradcode"] + [f"gradcode.{m.name}" for m in pkgutil.iter_modules(gradcode.__path__)
                              if not m.name.startswith("_")]
    found = {}
    for name in modules:
        module = importlib.import_module(name)
        for attr in getattr(module, "__all__", [a for a in dir(module) if not a.startswith("_")]):
            obj = getattr(module, attr)
            if not (inspect.isfunction(obj) or inspect.isclass(obj)):
                continue
            if not getattr(obj, "__module__", "").startswith("gradcode"):
                continue
            found.setdefault(id(obj), (f"{name}.{attr}", obj))
    return sorted(found.values(), key=lambda x: x[0])


def test_the_public_api_is_found():
    names = {name for name, _ in public_objects()}
    assert {"gradcode.make_code", "gradcode.runtime.train", "gradcode.sim.simulate",
            "gradcode.engine.Loop"} <= names
    assert len(names) > 100


def test_every_public_function_and_class_has_a_runnable_example():
    missing = [name for name, obj in public_objects()
               if ">>>" not in (inspect.getdoc(obj) or "")]
    assert not missing, f"{len(missing)} public objects without a `>>>` example: {missing}"


def readme_python_blocks():
    text = (ROOT / "README.md").read_text()
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


@pytest.mark.parametrize("index", range(len(readme_python_blocks())))
def test_readme_python_block_runs(index, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    exec(compile(readme_python_blocks()[index], f"README.md python block {index}", "exec"), {})


def test_the_readmes_ledger_figures_are_the_ledgers():
    """README's tally of the full ledger is docs/claims.csv's and docs/checks.csv's (a figure
    typed in by hand goes stale when the ledger is regenerated)."""
    import csv
    from collections import Counter
    root = Path(__file__).resolve().parents[1]
    text = " ".join((root / "README.md").read_text().split())
    m = re.search(r"\((\d+) claims, (\d+) of them the literature's: (\d+) reproduced, (\d+) not "
                  r"reproduced, (\d+) not attempted; and (\d+) of the project's own checks, (\d+) "
                  r"of them reproduced\)", text)
    assert m, "README: the ledger's tally sentence is missing"
    with open(root / "docs" / "claims.csv", newline="") as fh:
        claims = list(csv.DictReader(fh))
    with open(root / "docs" / "checks.csv", newline="") as fh:
        checks = list(csv.DictReader(fh))
    verdicts = Counter(r["verdict"] for r in claims)
    literature = sum(not r["paper"].isdigit() for r in claims)
    want = (len(claims), literature, verdicts["reproduced"], verdicts["not reproduced"],
            verdicts["not attempted"], len(checks),
            sum(r["verdict"] == "reproduced" for r in checks))
    assert tuple(map(int, m.groups())) == want
