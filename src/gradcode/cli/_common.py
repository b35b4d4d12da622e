"""What the subcommands share: the one-line-error parser, code parameters from flags, progress."""

from __future__ import annotations

import argparse
import inspect
import sys

from ..registry import CODES, code_parameters, make_code


class UsageError(Exception):
    """Bad input from the command line: reported in one line, exit code 2."""


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors: ``gradcode train: error: argument --backend: invalid choice:
    ... (see gradcode train --help)`` and exit 2; the usage block only with ``--help``.  Flags are
    never abbreviated (``--c`` is a code parameter, not ``--code``)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message):
        message = " ".join(str(message).split())
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def progress(args) -> bool:
    """Progress bars only on a terminal (no ``\\r`` frames in logs) and never with ``--quiet``."""
    return sys.stderr.isatty() and not getattr(args, "quiet", False)


def add_quiet(parser) -> None:
    parser.add_argument("--quiet", action="store_true",
                        help="no progress bar (there is none when stderr is not a terminal)")


def _value(text: str):
    """Parse a flag value: int, float, or a comma-separated list of numbers."""
    parts = [p.strip() for p in text.split(",")]
    out = []
    for p in parts:
        for kind in (int, float):
            try:
                out.append(kind(p))
                break
            except ValueError:
                continue
        else:
            out.append(p)
    return out if len(parts) > 1 else out[0]


def parse_code_params(name: str, extra: list[str]) -> dict:
    """Turn ``--param value`` pairs into ``make_code`` keywords for the code ``name``."""
    if name not in CODES:
        raise UsageError(f"name: unknown code {name!r}; expected one of: {', '.join(sorted(CODES))}")
    expected = code_parameters(name)
    params, i = {}, 0
    while i < len(extra):
        flag = extra[i]
        if not flag.startswith("--"):
            raise UsageError(f"unexpected argument {flag!r}; code parameters are --name value")
        key, _, val = flag[2:].partition("=")
        key = key.replace("-", "_")
        if key not in expected:
            raise UsageError(f"--{key}: not a parameter of {name!r}; it takes "
                             + ", ".join(f"--{k}" for k in expected))
        if not val:
            if i + 1 >= len(extra):
                raise UsageError(f"--{key}: expected a value")
            val, i = extra[i + 1], i + 1
        params[key] = _value(val)
        i += 1
    missing = [k for k, p in expected.items()
               if p.default is inspect.Parameter.empty and k not in params]
    if missing:
        raise UsageError(f"--{missing[0]}: {name!r} needs " + ", ".join(f"--{k}" for k in missing))
    return params


def code_from(args, extra):
    """The code named by ``--code`` with its parameters (``--code-seed`` is the code's seed)."""
    extra = ["--seed" if a == "--code-seed" else
             ("--seed=" + a.split("=", 1)[1] if a.startswith("--code-seed=") else a) for a in extra]
    if not args.code:
        raise UsageError("--code: expected a code name, e.g. --code isgc-cr --n 8 --c 2")
    return make_code(args.code, **parse_code_params(args.code, extra))


def fmt(x: float) -> str:
    """A matrix entry or weight, short: ``.`` for zero, integers without a point."""
    if x == 0:
        return "."
    if float(x).is_integer():
        return str(int(x))
    return f"{x:.4g}"
