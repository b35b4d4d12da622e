"""No function or method in ``gradcode.runtime`` and ``gradcode.engine`` is longer than 50 lines
(issue 21: a long function is several steps that deserve names).

A function's length runs from its ``def`` line (decorators not counted) to the last line of its
body, *excluding its docstring*: docstrings carry the runnable ``>>>`` examples that
``tests/test_docs.py`` requires, and a longer example should never push a function over the
limit.  Nested functions count within their enclosing function and are also checked on their
own.
"""

import ast
from pathlib import Path

import gradcode

LIMIT = 50
PACKAGES = ("runtime", "engine")
ROOT = Path(gradcode.__file__).parent


def _docstring_lines(node) -> int:
    """Lines taken by ``node``'s docstring (0 if it has none)."""
    body = node.body
    if (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)):
        return body[0].end_lineno - body[0].lineno + 1
    return 0


def function_lengths(path: Path):
    """``(line, qualified name, length)`` of every function and method in ``path``."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []

    def visit(node, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = child.end_lineno - child.lineno + 1 - _docstring_lines(child)
                found.append((child.lineno, prefix + child.name, length))
                visit(child, prefix + child.name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    return found


def test_the_length_counts_from_def_to_the_end_without_the_docstring(tmp_path):
    src = tmp_path / "m.py"
    src.write_text('def f(x):\n    """Doc\n\n    >>> f(1)\n    1\n    """\n    y = x\n'
                   '    return y\n\n\nclass C:\n    def g(self):\n        pass\n')
    assert function_lengths(src) == [(1, "f", 3), (12, "C.g", 2)]


def test_no_function_in_runtime_and_engine_is_longer_than_50_lines():
    long = [f"{path.relative_to(ROOT.parent.parent)}:{line} {name} ({n} lines)"
            for pkg in PACKAGES for path in sorted((ROOT / pkg).glob("*.py"))
            for line, name, n in function_lengths(path) if n > LIMIT]
    assert not long, (f"{len(long)} functions longer than {LIMIT} lines (docstrings not "
                      "counted): split them into named steps\n" + "\n".join(long))
