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
