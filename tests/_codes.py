"""The code instances every contract test runs over (small enough for exhaustive checks)."""

import gradcode
from gradcode.registry import CODES, code_class


def _examples(single_round: bool):
    """``(name, params)`` for every example of every registered scheme (the class attribute
    ``examples``, in the scheme's own file): a new scheme is covered by giving its own."""
    out = []
    for name in CODES:
        cls = code_class(name)
        if (not cls.waitout_rules) == single_round:
            out += [(name, dict(p)) for p in getattr(cls, "examples", ())]
    return out


SMALL_CODES = _examples(single_round=True)

#: the sequential schemes of paper 4, small enough to replay
SEQUENTIAL_SCHEMES = _examples(single_round=False)

#: one list over every registered name (the contract suite checks it against the registry)
ALL_SCHEMES = SMALL_CODES + SEQUENTIAL_SCHEMES


def available(entries):
    """(id, code) for the entries whose module exists yet."""
    out = []
    for name, params in entries:
        try:
            code = gradcode.make_code(name, **params)
        except ModuleNotFoundError:
            continue
        out.append((f"{name}{sorted(params.items())}", code))
    return out
