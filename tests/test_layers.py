"""The import order of gradcode's layers, read from the source with ``ast`` (nothing imported).

Layers, lowest first; a module may import its own layer and the layers below it, never above:

====  ===========================  ==========================================================
rank  layer                        imports (of gradcode)
====  ===========================  ==========================================================
0     ``records``, ``datasets``,   nothing: leaf utilities anyone may use (``folders``: output
      ``folders``, ``figures``,    folders one run's at a time; ``figures``: readable plots;
      ``protocol``                 ``protocol``: the scheme and planner contracts, WaitOut)
1     ``codes``                    nothing (single-round schemes: NumPy/SciPy only)
2     ``stragglers``, ``analysis`` codes (not each other)
3     ``sequential``               codes, stragglers, analysis (paper 4's schemes and planner)
4     ``registry``                 imports the public classes of codes and sequential
5     ``engine``                   the master loop: codes, sequential, stragglers, records
6     ``sim``                      the vectorised simulator and tuning, over the engine
7     ``runtime``                  torch and Ray: workers, executors; the only torch/ray user
8     ``experiments``, ``demo``    the papers' experiments (may run the runtime), the demo
9     ``cli``                      every subcommand
10    ``gradcode``, ``__main__``   the package root (re-exports) and ``python -m gradcode``
====  ===========================  ==========================================================

Imports inside a function count too (a lazy import is still a dependency).  The only upward
import, inside a function so that importing the lower layer never loads the upper one: ``cli``
reading the package root's ``__version__`` for ``gradcode --version``.  ``make_code`` comes from
``gradcode`` or ``gradcode.registry``, never from ``gradcode.codes`` (the layer below it).
A layer that does not exist yet (e.g. ``engine``) is simply absent.

Across layers only public names are imported: no ``gradcode.X._private`` module of another
layer, except the known debts listed in ``KNOWN_PRIVATE`` (to be paid, not extended).
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "gradcode"

RANK = {"records": 0, "datasets": 0, "folders": 0, "figures": 0, "protocol": 0, "codes": 1, "stragglers": 2, "analysis": 2,
        "sequential": 3, "registry": 4, "engine": 5, "sim": 6, "runtime": 7,
        "experiments": 8, "demo": 8, "cli": 9, "gradcode": 10, "__main__": 10}

#: (importing module, imported module): upward imports allowed inside a function only
LAZY_UPWARD = {
    ("gradcode.cli", "gradcode"),                        # `gradcode --version`: __version__
}

#: (importing module, imported private module of another layer): debts, not precedents
KNOWN_PRIVATE: set = set()

#: only this layer imports them (``pip install gradcode[train]``)
HEAVY = ("torch", "ray")


def _modules():
    """``(module name, path)`` of every module under src/gradcode."""
    for path in sorted(SRC.rglob("*.py")):
        parts = ("gradcode",) + path.relative_to(SRC).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        yield ".".join(parts), path


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "gradcode"


def _imports(module: str, path: Path):
    """``(imported module, names, inside a function)`` for every import statement."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    tree = ast.parse(path.read_text(), str(path))
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            inside.update(id(n) for n in ast.walk(node) if n is not node)
    for node in ast.walk(tree):
        lazy = id(node) in inside
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, (), lazy
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            names = tuple(a.name for a in node.names)
            if node.level and not node.module:       # from . import x: x may be a module
                for name in names:
                    yield f"{target}.{name}", (), lazy
            else:
                yield target, names, lazy


MODULES = list(_modules())


@functools.cache
def edges() -> list:
    """``(module, imported module, names, inside a function)`` of every import statement:
    parsed when a test first asks (at import, every pytest-xdist worker parsed them all while
    collecting, ~2 s of CPU each)."""
    return [(m, target, names, lazy) for m, path in MODULES
            for target, names, lazy in _imports(m, path)]


def test_every_layer_is_ranked():
    layers = {_layer(m) for m, _ in MODULES}
    assert layers <= set(RANK), f"place these in RANK (and the docstring): {layers - set(RANK)}"
    assert {"codes", "sequential", "registry", "sim", "runtime", "cli"} <= layers


def test_imports_go_down_the_layers():
    bad = []
    for m, target, _, lazy in edges():
        if not target.startswith("gradcode"):
            continue
        a, b = _layer(m), _layer(target)
        if a == b or RANK[b] < RANK[a]:
            continue
        if lazy and any(m == x and (target == y or target.startswith(y + "."))
                        for x, y in LAZY_UPWARD):
            continue
        bad.append(f"{m} ({a}, rank {RANK[a]}) imports {target} ({b}, rank {RANK[b]})"
                   + (" inside a function" if lazy else ""))
    assert not bad, "imports against the layer order:\n" + "\n".join(sorted(set(bad)))


def test_codes_import_nothing_above_them():
    """``gradcode.codes`` imports neither the registry nor the sequential schemes, not even
    inside a function (the registry imports both: no codes <-> sequential cycle)."""
    for m, target, _, lazy in edges():
        if _layer(m) == "codes" and target.startswith("gradcode") and _layer(target) != "codes":
            raise AssertionError(f"{m} imports {target}" + (" inside a function" * lazy))


def test_only_the_runtime_imports_torch_or_ray():
    bad = sorted({f"{m} imports {t}" for m, t, _, _ in edges()
                  if t.split(".")[0] in HEAVY and _layer(m) != "runtime"})
    assert not bad, "\n".join(bad)


def _private(target: str, names: tuple) -> list[str]:
    """The private modules (or names) ``import target`` / ``from target import names`` reaches."""
    parts = target.split(".")
    for i, p in enumerate(parts[2:], start=2):
        if p.startswith("_") and not p.startswith("__"):
            return [".".join(parts[:i + 1])]
    return [f"{target}.{n}" for n in names if n.startswith("_") and not n.startswith("__")]


def test_no_private_module_of_another_layer():
    found = set()
    for m, target, names, _ in edges():
        if target.startswith("gradcode") and _layer(target) != _layer(m):
            found.update((m, p) for p in _private(target, names))
    new = sorted(found - KNOWN_PRIVATE)
    assert not new, ("imports of another layer's private module (export the name from the "
                     "package instead):\n" + "\n".join(f"{a} -> {b}" for a, b in new))


@pytest.mark.parametrize("layer", ["codes", "registry"])
def test_lower_layers_import_without_the_upper_ones(layer):
    """Checked by running Python: importing a low layer loads nothing above it (the package
    root, which Python runs first, imports only ``codes``: ``gradcode.make_code`` is loaded on
    first use)."""
    import subprocess
    import sys
    code = (f"import sys, gradcode.{layer}\n"
            "print(sorted({m.split('.')[1] for m in sys.modules if m.startswith('gradcode.')}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(eval(out.stdout.strip().splitlines()[-1]))
    above = {x for x in loaded if RANK[x] > RANK[layer]}
    assert not above, f"import gradcode.{layer} loads {sorted(above)}"
    if layer == "codes":
        assert loaded == {"codes"}, loaded


#: ``(module, private module it names in a string)``: debts, not precedents (issue 33 paid the
#: registry's and the runtime backend table's)
KNOWN_PRIVATE_STRINGS: set = set()


def test_no_string_names_a_private_module_of_another_layer():
    """A module is imported by an import statement (which the tests above see), not named in a
    string for ``importlib``: no string constant ``"gradcode.X._m"`` (``"gradcode.X._m:Name"``)
    naming a private module of another layer, and the registry uses no ``importlib`` at all."""
    found = set()
    for m, path in MODULES:
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                target = node.value.split(":")[0]
                if (re.fullmatch(r"gradcode(\.\w+)+", target) and _layer(target) != _layer(m)
                        and _private(target, ())):
                    found.add((m, _private(target, ())[0]))
    new = sorted(found - KNOWN_PRIVATE_STRINGS)
    assert not new, "\n".join(f"{a} names {b} in a string" for a, b in new)
    registry = (SRC / "registry.py").read_text()
    assert "importlib" not in registry and "import_module" not in registry
