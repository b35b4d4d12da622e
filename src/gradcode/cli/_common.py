"""What the subcommands share: the one-line-error parser, code parameters from flags, progress,
checked numbers (argparse ``type=`` functions), the output-folder check and run descriptions."""

from __future__ import annotations

import argparse
import inspect
import math
import os
import sys
import tempfile
from pathlib import Path

from ..records import describe_code, describe_run  # noqa: F401  (the subcommands' headers)
from ..registry import CODES, code_parameters, make_code


class UsageError(Exception):
    """Bad input from the command line: reported in one line, exit code 2.

    >>> from gradcode.cli import UsageError, parse_code_params
    >>> try:
    ...     parse_code_params("gc-cr", ["--n", "8"])
    ... except UsageError as exc:
    ...     print(exc)
    --s: 'gc-cr' needs --s
    """


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


# -- numbers: argparse ``type=`` functions; a bad value is one line naming the flag -------------

def _number(kind, text: str, what: str, ok):
    try:
        value = kind(text)
    except ValueError:
        value = None
    if value is None or (kind is float and not math.isfinite(value)) or not ok(value):
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
    return value


def seed(text: str) -> int:
    """``--seed``-like flags: an integer >= 0 (NumPy refuses negative seeds without a name)."""
    return _number(int, text, "an integer >= 0", lambda v: v >= 0)


def positive_int(text: str) -> int:
    return _number(int, text, "an integer >= 1", lambda v: v >= 1)


def positive(text: str) -> float:
    return _number(float, text, "a finite number > 0", lambda v: v > 0)


def nonnegative(text: str) -> float:
    return _number(float, text, "a finite number >= 0", lambda v: v >= 0)


# -- output folders: one check for simulate, tune, train, reproduce (and demo) -----------------

def check_out(flag: str, path, outputs=(), overwrite: bool = False, *, sub: str | None = None,
              also: str = "") -> Path | None:
    """The output folder ``path`` (``path/sub`` when given), checked before any work: not a file
    (``/dev/null`` is one), creatable and writable (the nearest existing folder is probed: as
    root, permissions alone do not tell, e.g. ``/proc/x``), and not holding a finished run --
    any of ``outputs`` -- unless ``overwrite``.  Writes nothing; UsageError naming ``flag``.
    ``also``: what else the refusal of an existing run suggests (e.g. ``--resume``)."""
    if path is None:
        return None
    if not str(path).strip():
        raise UsageError(f"{flag}: expected a folder, got an empty path")
    target = Path(path) / sub if sub else Path(path)
    where = target
    while not where.exists():       # the nearest existing folder: the one we would create in
        if where.is_symlink():       # a dangling link
            raise UsageError(f"{flag}: {str(where)!r} is a broken link")
        where = where.parent
    if not where.is_dir():
        raise UsageError(f"{flag}: {str(where)!r} is not a folder")
    if not _writable(where):
        raise UsageError(f"{flag}: cannot write in {str(where)!r} (permission denied or a "
                         "read-only place)")
    if where == target and outputs and not overwrite:
        held = [name for name in outputs if (target / name).exists()]
        if held:
            raise UsageError(f"{flag}: {str(target)!r} already holds a run or files of "
                             f"yours ({held[0]}); use {also}--overwrite to replace them, or "
                             f"another {flag}")
    return target


def _writable(folder: Path) -> bool:
    if not os.access(folder, os.W_OK | os.X_OK):
        return False
    try:                             # access() says yes to root everywhere; ask the file system
        if os.statvfs(folder).f_flag & os.ST_RDONLY:
            return False
        if os.geteuid() == 0:
            os.rmdir(tempfile.mkdtemp(prefix=".gradcode-probe-", dir=folder))
    except OSError:
        return False
    return True


def clear_outputs(folder: Path | None, outputs) -> None:
    """Remove a previous run's ``outputs`` from ``folder`` (``--overwrite``: start afresh)."""
    if folder is not None:
        for name in outputs:
            (folder / name).unlink(missing_ok=True)


# -- runs described in words (titles and headers) ----------------------------------------------

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


def parse_code_params(name: str, extra: list[str], base: dict | None = None,
                      setting: str = "name") -> dict:
    """Turn ``--param value`` pairs into ``make_code`` keywords for the code ``name``, over
    ``base`` (e.g. a config file's ``code_params``: the flags override it); an unknown ``name``
    is refused naming ``setting`` (the flag or setting that gave it).

    A value is read as an integer, a float or a comma-separated list of them (other text stays
    a string); ``--param=value`` works too.

    >>> from gradcode.cli import parse_code_params
    >>> parse_code_params("gc-cr", ["--n", "8", "--s", "2"])
    {'n': 8, 's': 2}
    >>> parse_code_params("heter", ["--speeds", "1,2,3,4", "--s=1"], base={"k": 4, "s": 2})
    {'k': 4, 's': 1, 'speeds': [1, 2, 3, 4]}
    """
    if not isinstance(name, str) or name not in CODES:
        raise UsageError(f"{setting}: unknown code {name!r}; expected one of: "
                         f"{', '.join(sorted(CODES))}")
    expected = code_parameters(name)
    params, i = dict(base or {}), 0
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


def code_seed(extra: list[str]) -> list[str]:
    """``--code-seed`` (the code's own seed, beside the run's ``--seed``) as the code's ``--seed``,
    checked here so that the error names the flag the user typed."""
    out, i = [], 0
    while i < len(extra):
        a = extra[i]
        if a == "--code-seed" or a.startswith("--code-seed="):
            text = a.split("=", 1)[1] if "=" in a else (extra[i + 1] if i + 1 < len(extra) else "")
            i += 1 if "=" in a else 2
            try:
                seed(text)
            except argparse.ArgumentTypeError as exc:
                raise UsageError(f"--code-seed: {exc}") from None
            out += ["--seed", text]
            continue
        out.append(a)
        i += 1
    return out


def code_from(args, extra, base: dict | None = None, name: str | None = None):
    """The code named by ``--code`` (or ``name``, e.g. a config file's) with its parameters, over
    ``base`` (``--code-seed`` is the code's seed)."""
    name = args.code or name
    if not name:
        raise UsageError("--code: expected a code name, e.g. --code isgc-cr --n 8 --c 2")
    return make_code(name, **parse_code_params(name, code_seed(extra), base))


def fmt(x: float) -> str:
    """A matrix entry or weight, short: ``.`` for zero, integers without a point."""
    if x == 0:
        return "."
    if float(x).is_integer():
        return str(int(x))
    return f"{x:.4g}"
