"""``gradcode.registry``: every scheme's public class, filed under the class's own ``name``.

The registry imports the classes (no module named in a string: tests/test_layers.py), so a
scheme is registered by its class; these tests keep the table and the packages in step.
"""

from __future__ import annotations

import pytest

import gradcode
from gradcode import codes, sequential
from gradcode.registry import CODES, SCHEMES, code_class

#: exported scheme classes that ``make_code`` does not build, each with why
NOT_REGISTERED = {
    codes.Code: "the base class of the single-round codes",
    sequential.SequentialScheme: "the base class of the sequential schemes",
    sequential.SingleRound: "wraps a built code (single_round(code)), not built from parameters",
}


def test_each_class_is_filed_under_its_own_name():
    """One class a name, the name the class defines itself (a subclass that forgot its own
    ``name`` would inherit its base's and shadow it)."""
    assert len(CODES) == len(SCHEMES)
    for cls in SCHEMES:
        assert "name" in vars(cls), f"{cls.__name__} inherits name {cls.name!r}"
        assert CODES[cls.name] is cls and code_class(cls.name) is cls


@pytest.mark.parametrize("package", [codes, sequential], ids=lambda p: p.__name__)
def test_every_exported_scheme_class_is_registered(package):
    """Registered classes are their package's public names, and every exported scheme class is
    registered (or listed in ``NOT_REGISTERED``)."""
    base = codes.Code if package is codes else sequential.SequentialScheme
    exported = {getattr(package, n) for n in package.__all__}
    schemes = {c for c in exported if isinstance(c, type) and issubclass(c, base)}
    mine = {c for c in SCHEMES if c.__module__.startswith(package.__name__ + ".")}
    assert mine <= exported, f"not exported by {package.__name__}: {mine - exported}"
    assert schemes - set(NOT_REGISTERED) == mine


def test_make_code_comes_from_the_package_root_or_the_registry():
    """``gradcode.codes`` is below the registry and no longer serves its names."""
    from gradcode import registry
    assert gradcode.make_code is registry.make_code
    for name in ("make_code", "CODES", "code_class", "code_parameters"):
        assert not hasattr(codes, name), name
    code = gradcode.make_code(**codes.GCCR(n=4, s=1).describe())
    assert type(code) is codes.GCCR and code.describe() == {"name": "gc-cr", "n": 4, "s": 1,
                                                            "seed": 0}
