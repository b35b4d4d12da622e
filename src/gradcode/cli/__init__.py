"""The ``gradcode`` command, one module per subcommand (each has ``add_parser(sub)`` and its
``run(args, extra)``): ``_code`` (list, code, decode), ``_simulate``, ``_tune``, ``_reproduce``,
``_train`` (flags generated from ``TrainConfig``) and ``_demo``.

Code parameters are flags named exactly like ``make_code``'s keywords: ``--n 8 --s 2``,
``--c1 1``, ``--speeds 1,2,3,4,4``, ``--seed 3``.  Bad input prints one line and exits with 2.
"""

from __future__ import annotations

import argparse
import os
import sys
import textwrap

from ..records import Interrupted
from . import _code, _demo, _reproduce, _simulate, _train, _tune
from ._common import Parser, UsageError, parse_code_params

__all__ = ["UsageError", "build_parser", "main", "parse_code_params"]

DESCRIPTION = "gradcode: straggler-tolerant distributed training with gradient coding."
EPILOG = "`gradcode COMMAND --help` describes each command's flags."

#: subcommands whose unknown ``--flags`` are the code's parameters
TAKES_CODE_PARAMS = ("code", "decode", "simulate", "train")


def build_parser() -> argparse.ArgumentParser:
    """The ``gradcode`` argument parser, one subcommand per command (``parser.commands``: name ->
    its subparser); the code's ``--param value`` flags are left over by ``parse_known_args``.

    >>> parser = build_parser()
    >>> sorted(parser.commands)
    ['code', 'decode', 'demo', 'list', 'reproduce', 'simulate', 'train', 'tune']
    >>> args, extra = parser.parse_known_args(["code", "gc-cr", "--n", "8", "--s", "2"])
    >>> args.command, args.name, extra
    ('code', 'gc-cr', ['--n', '8', '--s', '2'])
    """
    import gradcode                    # the package root, for its version string only

    p = Parser(prog="gradcode", usage="gradcode [-h] [--version] COMMAND ...", epilog=EPILOG,
               formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"gradcode {gradcode.__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True, help=argparse.SUPPRESS)
    listed, add = [], sub.add_parser

    def add_parser(name, **kwargs):    # each module describes its commands; listed in --help
        listed.append((name, kwargs.get("help", "")))
        return add(name, prog=f"gradcode {name}", **kwargs)
    sub.add_parser = add_parser
    for module in (_code, _simulate, _tune, _reproduce, _train, _demo):
        module.add_parser(sub)
    p.description = DESCRIPTION + "\n\ncommands:\n" + "\n".join(
        textwrap.fill(text, 88, initial_indent=f"  {name:<11}", subsequent_indent=" " * 13)
        for name, text in listed)
    p.commands = sub.choices           # name -> subparser (its one-line errors name it)
    return p


def main(argv: list[str] | None = None) -> int:
    """Run the ``gradcode`` command on ``argv`` (default: ``sys.argv[1:]``) and return its exit
    code (0 when done; 2 for bad input, reported in one line on stderr; 130 on Ctrl-C).

    >>> main(["list"])
    bcc             n, r, seed=0
    bgc             n, d, seed=0
    comm-efficient  n, s, m=1, d=None, placement=cyclic
    ...
    uncoded         n
    0
    >>> main(["code", "gc-cr", "--n", "4", "--s", "1"])
    gc-cr(n=4, s=1, seed=0): 4 workers, 4 partitions
    exact with any 1 stragglers; load max 0.5, mean 0.5; ...
    0
    >>> main(["code", "gc-cr", "--n", "4"])      # no --s: "gradcode code: error: ..." on stderr
    2
    >>> main(["--version"])
    gradcode ...
    0
    """
    parser = build_parser()
    try:
        args, extra = parser.parse_known_args(argv)
        if extra and args.command not in TAKES_CODE_PARAMS:
            parser.commands[args.command].error(f"unrecognized arguments: {' '.join(extra)}")
    except SystemExit as exc:          # --help, --version (0); a usage error (2, one line)
        return exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    try:
        return args.func(args, extra)
    except (UsageError, ValueError, TypeError) as exc:     # one line, whatever the message
        print(f"gradcode {args.command}: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    except BrokenPipeError:            # `gradcode list | head`: the reader has gone, stop quietly
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 141
    except KeyboardInterrupt as exc:      # (an inner simulation's Interrupted: nothing to add)
        detail = "" if isinstance(exc, Interrupted) or not str(exc) else f"; {exc}"
        print(f"gradcode {args.command}: interrupted{detail}", file=sys.stderr)
        return 130

