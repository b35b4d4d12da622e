"""Two rules of gradcode's structure, read from the source with ``ast`` (nothing is imported).

Rule 1 -- no import cycles.  The graph's nodes are the modules of ``src/gradcode`` (a package is
its ``__init__``: ``gradcode.codes``).  Every ``import`` statement is an edge, at module level or
inside a function alike (a lazy import is still a dependency; it only moves the failure from
import time to the first call).  ``import a.b.c`` is an edge to ``a.b.c``; ``from P import name``
(relative imports resolved) is an edge to ``P.name`` when that is a module, else to ``P`` --
except when ``P`` is a package *enclosing* the importing module (``from . import x``, ``from
..codes import GCCR`` inside ``gradcode.codes.*``).  Python runs ``P``'s ``__init__`` before any
module inside ``P``, so an edge to ``P`` itself would be a cycle by construction; the edge goes
instead to where ``name`` comes from: the module ``P``'s ``__init__`` imports it from (followed
through further re-exports), and only a name ``P``'s ``__init__`` defines itself (or serves
through its ``__getattr__``) gives an edge to ``P`` -- a true cycle whenever ``P``'s ``__init__``
imports the importing module (the partially initialised module of ``from P import name``).  The
parents Python imports implicitly (``import a.b.c`` runs ``a`` and ``a.b`` first) are not edges,
for the same reason; modules named by a string (``importlib.import_module(name)``: the tables
of ``gradcode.analysis`` and of the runtime's backends, imported on first use) are not followed
(tests/test_layers.py allows no such string into another layer's private module).  The
test fails listing every strongly connected component of two or more modules (or a module
importing itself), as a cycle through it (``a -> b -> a``, each arrow with the importing file's
line) and, when the cycle does not visit them all, the component's members.

Rule 2 -- no module uses another module's private names.  A private name starts with ``_`` and
is not a dunder (``__x__``); ``_`` alone is no name.  Violations:

(a) Imports.  ``from X import _name`` when ``X._name`` is not a module; and any private *module*
    ``P._m`` (``import P._m``, ``from P._m import x``, ``from P import _m``, relative or not)
    imported by a module of another package than ``P`` (a subpackage of ``P`` is another
    package): ``from ._base import Code`` is fine in ``gradcode.codes`` and its modules, and from
    elsewhere only the package's public ``__init__`` is (``from ..codes import GCCR``, not
    ``from ..codes._base import Code``).  Third-party packages are held to the same rule
    (``from ray._private import x``).
(b) Attributes.  ``obj._name`` (also ``getattr``/``hasattr``/``setattr``/``delattr`` with the
    name as a string constant) where ``_name`` is not *defined in the same module*: by a
    ``def``/``class``, as a name assigned or bound by ``import ... as`` anywhere in it, as a
    class attribute or ``__slots__`` entry, or on the instance, ``self._name = ...`` (also
    ``setattr(self, "_name", ...)`` and ``self._set(_name=...)``, the immutable classes'
    constructor helper), ``self``/``cls`` being the first parameter of the enclosing method.
    One allowance: ``self._name``, ``cls._name`` and ``super()._name`` inside a method of class
    ``C`` are fine when a base class of ``C`` (followed statically through gradcode's classes)
    defines ``_name``.  That is the protected interface between a class and its subclasses, and
    it is needed: the template-method hooks (``Code._decode``, which ``Code.decode`` calls and
    every code of ``gradcode.codes`` overrides in its own module, some calling
    ``super()._decode``), and the helpers a base class offers its subclasses only
    (``Immutable._set``, documented by the public ``gradcode.codes.Immutable``;
    ``SequentialScheme._freeze`` and ``_rows``), which as public names would become part of
    every code's and scheme's interface.  No other receiver gets the
    allowance: ``scheme._weights(...)`` from a planner is a violation although ``scheme`` is a
    ``SequentialScheme``; what another module calls is public.
(c) Third-party private names count too (``np.random._x``, ``torch._C``, ``fig._suptitle``,
    ``from ray._private import ...``), except the entries of ``THIRD_PARTY_ALLOWED``, each with
    the reason it cannot be avoided.

The test fails listing ``file:line: name`` for each violation.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "gradcode"

#: ``(gradcode module, name as reported)`` -> why no public way exists: third-party private
#: names used on purpose.  Empty: keep it that way if you can.
THIRD_PARTY_ALLOWED: dict[tuple[str, str], str] = {
    ("gradcode.runtime._ray", "ray._private"):
        "Ray reads RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER only when first imported; once ray is "
        "imported, no public switch keeps a local instance on 127.0.0.1",
}


def is_private(name: str) -> bool:
    """``_x``, ``__x`` (mangled) -- not ``__x__`` and not ``_`` alone."""
    return name.startswith("_") and name != "_" and not (name.startswith("__")
                                                         and name.endswith("__"))


# ------------------------------------------------------------------------------- the modules
@dataclass
class Module:
    name: str
    path: Path
    tree: ast.Module
    is_package: bool
    #: private names defined in the module (rule 2b)
    defined: set = field(default_factory=set)

    @property
    def package(self) -> str:
        """The package relative imports start from."""
        return self.name if self.is_package else self.name.rpartition(".")[0]


def load_modules(src: Path = SRC, top: str = "gradcode") -> dict[str, Module]:
    """Every module under ``src`` by dotted name (a package under its own name)."""
    out = {}
    for path in sorted(src.rglob("*.py")):
        parts = (top,) + path.relative_to(src).with_suffix("").parts
        package = parts[-1] == "__init__"
        name = ".".join(parts[:-1] if package else parts)
        out[name] = Module(name, path, ast.parse(path.read_text(), str(path)), package)
    return out


def resolve(module: Module, node: ast.ImportFrom) -> str:
    """The absolute module name ``from ... import`` reads from."""
    if not node.level:
        return node.module or ""
    base = module.package.split(".")
    base = base[:len(base) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def encloses(package: str, module: str) -> bool:
    return module.startswith(package + ".")


def annotate(tree: ast.AST) -> None:
    """Give every node ``parent`` (its parent node)."""
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            child.parent = node


def in_function(node: ast.AST) -> bool:
    node = getattr(node, "parent", None)
    while node is not None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return True
        node = getattr(node, "parent", None)
    return False


# ------------------------------------------------------------------------------ rule 1: cycles
def origin(mods: dict[str, Module], package: str, name: str, importer: str) -> str:
    """The module ``name`` of ``package`` (a package enclosing ``importer``) comes from: where
    its ``__init__`` imports it from (followed through the re-exports of packages that enclose
    ``importer`` too), else the package itself."""
    init = mods.get(package)
    if init is None:
        return package
    for node in init.tree.body:
        if not isinstance(node, ast.ImportFrom):
            continue
        for alias in node.names:
            if (alias.asname or alias.name) != name:
                continue
            source = resolve(init, node)
            if f"{source}.{alias.name}" in mods:
                return f"{source}.{alias.name}"
            if encloses(source, importer) and source != package:
                return origin(mods, source, alias.name, importer)
            return source
    return package


def import_edges(mods: dict[str, Module], m: Module):
    """``(target module, line, inside a function)`` for every import of a gradcode module."""
    top = m.name.split(".")[0]
    for node in ast.walk(m.tree):
        targets = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            source = resolve(m, node)
            for alias in node.names:
                if f"{source}.{alias.name}" in mods:
                    targets.append(f"{source}.{alias.name}")
                elif encloses(source, m.name) and alias.name != "*":
                    targets.append(origin(mods, source, alias.name, m.name))
                else:
                    targets.append(source)
        for t in targets:
            if t.split(".")[0] == top and t in mods:
                yield t, node.lineno, in_function(node)


def import_graph(mods: dict[str, Module]) -> dict[str, dict[str, tuple[int, bool]]]:
    """``graph[a][b] = (line, lazy)``: module ``a`` imports ``b`` (at module level if it does)."""
    graph: dict[str, dict[str, tuple[int, bool]]] = {name: {} for name in mods}
    for m in mods.values():
        annotate(m.tree)
        for target, line, lazy in sorted(import_edges(mods, m), key=lambda e: (e[2], e[1])):
            graph[m.name].setdefault(target, (line, lazy))
    return graph


def strongly_connected(graph) -> list[list[str]]:
    """Tarjan's strongly connected components (iterative), each sorted."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    out.append(sorted(comp))
    return out


def cycle_through(graph, comp: list[str]) -> list[str]:
    """A shortest cycle from the component's first module back to it, inside the component."""
    start, members = comp[0], set(comp)
    prev, frontier = {start: None}, [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph[v]):
                if w == start:
                    path = [v]
                    while prev[path[-1]] is not None:
                        path.append(prev[path[-1]])
                    return path[::-1] + [start]
                if w in members and w not in prev:
                    prev[w] = v
                    nxt.append(w)
        frontier = nxt
    raise AssertionError(f"no cycle through {comp}")


def import_cycles(mods: dict[str, Module]) -> list[str]:
    """One line per cycle: ``a -> b (line 3, in a function) -> a (line 9)  [members]``."""
    graph = import_graph(mods)
    found = []
    for comp in strongly_connected(graph):
        if len(comp) == 1 and comp[0] not in graph[comp[0]]:
            continue
        path = cycle_through(graph, comp)
        text = path[0]
        for a, b in zip(path, path[1:]):
            line, lazy = graph[a][b]
            text += f" -> {b} ({mods[a].path.name}:{line}{', in a function' if lazy else ''})"
        if len(comp) > len(path) - 1:
            text += f"  [component: {', '.join(comp)}]"
        found.append(text)
    return found


# ----------------------------------------------------------------------- rule 2: private names
FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
ATTR_FUNCS = {"getattr", "hasattr", "setattr", "delattr"}


def enclosing_method(node: ast.AST):
    """``(method, class)`` of the nearest enclosing function defined directly in a class body
    (skipping nested functions and lambdas), else ``(None, None)``."""
    node = getattr(node, "parent", None)
    while node is not None:
        if isinstance(node, FUNCS) and isinstance(getattr(node, "parent", None), ast.ClassDef):
            return node, node.parent
        if isinstance(node, ast.ClassDef):
            return None, None
        node = getattr(node, "parent", None)
    return None, None


def self_name(method) -> str | None:
    """The name of a method's ``self``/``cls`` parameter (None for a static method)."""
    if method is None or any(isinstance(d, ast.Name) and d.id == "staticmethod"
                             for d in method.decorator_list):
        return None
    args = method.args.posonlyargs + method.args.args
    return args[0].arg if args else None


def on_self(receiver: ast.AST) -> ast.ClassDef | None:
    """The class whose ``self``/``cls``/``super()`` ``receiver`` is, else None."""
    method, cls = enclosing_method(receiver)
    if isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Name) \
            and receiver.func.id == "super":
        return cls
    if isinstance(receiver, ast.Name) and receiver.id == self_name(method):
        return cls
    return None


def attribute_uses(tree: ast.AST):
    """``(node, receiver, name, store)`` for every ``x.name`` and constant-string
    ``getattr``-family call."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            yield node, node.value, node.attr, isinstance(node.ctx, (ast.Store, ast.Del))
        elif (isinstance(node, ast.Call) and len(node.args) >= 2
              and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) \
                else ""
            if name in ATTR_FUNCS or name == "__setattr__":
                yield node, node.args[0], node.args[1].value, name in ("setattr", "__setattr__")


def class_defines(cls: ast.ClassDef) -> set[str]:
    """The names a class defines: its body's functions, classes, assignments and ``__slots__``,
    and what its methods set on ``self`` (assignment, ``setattr``, ``self._set(name=...)``)."""
    out = set()
    for node in cls.body:
        if isinstance(node, (*FUNCS, ast.ClassDef)):
            out.add(node.name)
        for t in ast.walk(node) if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) \
                else ():
            if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store):
                out.add(t.id)
                if t.id == "__slots__":
                    out.update(c.value for c in ast.walk(node.value)
                               if isinstance(c, ast.Constant) and isinstance(c.value, str))
    for node in ast.walk(cls):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr == "_set" and on_self(node.func.value) is cls:
            out.update(k.arg for k in node.keywords if k.arg)
    for node, receiver, name, store in attribute_uses(cls):
        if store and on_self(receiver) is cls:
            out.add(name)
    return out


def module_defines(m: Module) -> set[str]:
    """The private names ``m`` defines (module docstring, rule 2b)."""
    out = set()
    for node in ast.walk(m.tree):
        if isinstance(node, (*FUNCS, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
        elif isinstance(node, ast.alias):
            out.add(node.asname or node.name.split(".")[0])
        if isinstance(node, ast.ClassDef):
            out |= class_defines(node)
    return {x for x in out if is_private(x)}


class Classes:
    """gradcode's classes, ``(module, name) -> ClassDef``, and their bases followed statically."""

    def __init__(self, mods: dict[str, Module]):
        self.mods = mods
        self.defs = {(m.name, node.name): node for m in mods.values() for node in m.tree.body
                     if isinstance(node, ast.ClassDef)}
        self.owner = {id(node): key[0] for key, node in self.defs.items()}
        self._defines: dict[int, set] = {}

    def find(self, module: str, name: str, depth: int = 0):
        """The class ``name`` means at the top level of ``module`` (through imports)."""
        if (module, name) in self.defs:
            return self.defs[module, name]
        m = self.mods.get(module)
        if m is None or depth > 10:
            return None
        for node in m.tree.body:
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if (alias.asname or alias.name) == name:
                        return self.find(resolve(m, node), alias.name, depth + 1)
        return None

    def ancestors(self, cls: ast.ClassDef):
        """``cls`` and every base class of it found in gradcode."""
        out, todo = [], [cls]
        while todo:
            c = todo.pop()
            if c in out:
                continue
            out.append(c)
            module = self.owner.get(id(c))
            for b in c.bases:
                if isinstance(b, ast.Name) and module is not None:
                    found = self.find(module, b.id)
                    if found is not None:
                        todo.append(found)
        return out

    def inherits(self, cls: ast.ClassDef, name: str) -> bool:
        for c in self.ancestors(cls):
            if id(c) not in self._defines:
                self._defines[id(c)] = class_defines(c)
            if name in self._defines[id(c)]:
                return True
        return False


def private_module_owner(dotted: str) -> str | None:
    """The package owning the first private module in ``dotted`` (``a.b._c.d`` -> ``a.b``)."""
    parts = dotted.split(".")
    for i, p in enumerate(parts[1:], start=1):
        if is_private(p):
            return ".".join(parts[:i])
    return None


def import_violations(mods: dict[str, Module], m: Module):
    """``(line, name)`` for rule 2a."""
    def outside(dotted):
        owner = private_module_owner(dotted)
        return owner is not None and owner != m.package

    for node in ast.walk(m.tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if outside(alias.name):
                    yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            source = resolve(m, node)
            if outside(source):
                yield node.lineno, source
                continue
            for alias in node.names:
                full = f"{source}.{alias.name}"
                if is_private(alias.name) and (full not in mods or outside(full)):
                    yield node.lineno, full         # a private name, or private module


def attribute_violations(m: Module, classes: Classes):
    """``(line, name)`` for rules 2b and 2c."""
    defined = m.defined
    for node, receiver, name, store in attribute_uses(m.tree):
        if not is_private(name) or name in defined:
            continue
        cls = on_self(receiver)
        if cls is not None and classes.inherits(cls, name):
            continue
        yield node.lineno, name


def private_violations(mods: dict[str, Module], root: Path = ROOT) -> list[str]:
    """``file:line: name`` for every use of another module's private name."""
    classes = Classes(mods)
    out = []
    for m in mods.values():
        annotate(m.tree)
        m.defined = module_defines(m)
    for m in mods.values():
        where = m.path.relative_to(root) if m.path.is_relative_to(root) else m.path
        found = sorted(x for x in set(import_violations(mods, m))
                       | set(attribute_violations(m, classes))
                       if (m.name, x[1]) not in THIRD_PARTY_ALLOWED)
        out += [f"{where}:{line}: {name}" for line, name in found]
    return out


# ------------------------------------------------------------------------------------ the tests
def test_no_import_cycles():
    cycles = import_cycles(load_modules())
    assert not cycles, ("import cycles (break each: move the shared code to a small module of "
                        "its own, or pass in what is needed):\n" + "\n".join(cycles))


def test_no_module_uses_another_modules_private_names():
    bad = private_violations(load_modules())
    assert not bad, (f"{len(bad)} uses of another module's private names (give the name a "
                     "public name, or move the code to the module that owns it):\n"
                     + "\n".join(bad))


# ------------------------------------------------------------- the checker, on a toy package
def toy(tmp_path: Path, files: dict[str, str]) -> dict[str, Module]:
    for name, text in files.items():
        path = tmp_path / "pkg" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return load_modules(tmp_path / "pkg", top="pkg")


def test_the_checker_finds_cycles_lazy_ones_too(tmp_path):
    mods = toy(tmp_path, {
        "__init__.py": "from .a import A\n",
        "a.py": "from .b import B\nA = 1\n",
        "b.py": "B = 2\ndef f():\n    from .a import A\n",
        "c.py": "from . import A\n",             # A comes from .a: not a cycle with __init__
        "sub/__init__.py": "from ._x import X\n",
        "sub/_x.py": "X = 1\n",
        "sub/y.py": "from . import X\nfrom ..sub import X\n",
        "d.py": "from . import VERSION\n",
    })
    cycles = import_cycles(mods)
    assert cycles == ["pkg.a -> pkg.b (a.py:1) -> pkg.a (b.py:3, in a function)"], cycles
    mods["pkg"].tree.body += ast.parse("from . import d\nVERSION = 1").body
    assert import_cycles(mods)[1] == "pkg -> pkg.d (__init__.py:1) -> pkg (d.py:1)"  # a real one


def test_the_checker_finds_private_uses(tmp_path):
    mods = toy(tmp_path, {
        "__init__.py": "from ._base import Base\n",
        "_base.py": ("class Base:\n    def _hook(self):\n        return 1\n"
                     "    def _set(self, **kw):\n        pass\n"),
        "impl.py": ("from ._base import Base\nimport numpy as np\n"
                    "class Impl(Base):\n"
                    "    def __init__(self):\n        self._set(_p=1)\n        self._q = 2\n"
                    "    def run(self, other):\n"
                    "        return self._hook() + super()._hook() + self._p + self._q"
                    " + other._hook() + np.random._x\n"
                    "def f(x):\n    return x._q + getattr(x, '_hook')\n"),
        "sub/__init__.py": "",
        "sub/user.py": ("from .._base import Base\nfrom ..impl import _helper\n"
                        "from .. import Base as B\nimport pkg._base\n"),
    })
    bad = [line.split("pkg/")[-1] for line in private_violations(mods, root=tmp_path)]
    assert bad == ["impl.py:8: _hook", "impl.py:8: _x", "impl.py:10: _hook",
                   "sub/user.py:1: pkg._base", "sub/user.py:2: pkg.impl._helper",
                   "sub/user.py:4: pkg._base"], bad
