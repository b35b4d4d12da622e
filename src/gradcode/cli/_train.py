"""``gradcode train``: real PyTorch training; one flag per ``TrainConfig`` field.

The flags are generated from ``dataclasses.fields(TrainConfig)``: each field's help, flag name
(when not ``--`` + the name with dashes), choices and metavar are its metadata, its type the
annotation (int, float, str; a bool field is a switch), the default shown in ``--help`` the
dataclass's.  A flag left out is ``None`` here, so a ``--config`` file's value stands.  ``code``
and ``code_params`` are ``--code NAME`` plus the code's own flags.
"""

from __future__ import annotations

import argparse
import sys
import dataclasses
import types
import typing
from pathlib import Path

from ..records import Diverged, Interrupted
from ..runtime import TrainConfig
from ._common import UsageError, code_from, progress

#: fields set by ``--code NAME`` and the code's own flags, not by a flag of their own
CODE_FIELDS = ("code", "code_params")


def flag_fields() -> list[dataclasses.Field]:
    """The TrainConfig fields that have a flag of their own (every one but the code's)."""
    return [f for f in dataclasses.fields(TrainConfig) if f.name not in CODE_FIELDS]


def flag_name(f: dataclasses.Field) -> str:
    return f.metadata.get("flag", "--" + f.name.replace("_", "-"))


def _kind(annotation) -> type:
    """int, float, str or bool from an annotation such as ``int | None``."""
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        annotation = next(a for a in typing.get_args(annotation) if a is not type(None))
    return annotation


def _help(f: dataclasses.Field) -> str:
    text = f.metadata.get("help", "")
    if not any(f.default is x for x in (None, False, dataclasses.MISSING)) and "default" not in text:
        text += f" (default {f.default})"
    return text.replace("%", "%%")               # argparse formats help with %


def _add_config_flags(parser) -> None:
    hints = typing.get_type_hints(TrainConfig)
    for f in flag_fields():
        kind = _kind(hints[f.name])
        kw = dict(dest=f.name, default=None, help=_help(f))
        if kind is bool:
            parser.add_argument(flag_name(f), action="store_true", **kw)
            continue
        if "choices" in f.metadata:
            kw["choices"] = list(f.metadata["choices"])
        if "metavar" in f.metadata:
            kw["metavar"] = f.metadata["metavar"]
        parser.add_argument(flag_name(f), type=kind, **kw)


def add_parser(sub) -> None:
    from ..datasets import DATASETS
    from ..engine import WAIT_HELP
    from ..stragglers import DELAY_HELP

    datasets = {**DATASETS, "fashion-mnist": "Fashion-MNIST IDX files from --data-dir (default "
                "/usr/share/datasets/fashion-mnist); model: cnn"}
    tr = sub.add_parser(
        "train", help="real PyTorch training with a code: local threads, Ray, or virtual time",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Train a real PyTorch model: --code NAME plus the code's parameters (the code's\n"
        "seed is --code-seed); everything else from flags or --config FILE (TOML or YAML; its\n"
        "keys are the flags' names with underscores, e.g. round_timeout_s; flags override it).",
        epilog="datasets (and the model each uses by default):\n"
        + "\n".join(f"  {k:<14}{v}" for k, v in datasets.items())
        + "\nmodels: linear, logistic, softmax, mlp, cnn"
        f"\n--delay: {DELAY_HELP}\n--wait: {WAIT_HELP}")
    code = next(f for f in dataclasses.fields(TrainConfig) if f.name == "code")
    tr.add_argument("--code", metavar="NAME", help=code.metadata["help"])
    tr.add_argument("--config", metavar="FILE",
                    help="TOML or YAML file of settings (flags override it)")
    _add_config_flags(tr)
    tr.add_argument("--quiet", action="store_true",
                    help="no progress bar (there is none when stderr is not a terminal)")
    tr.set_defaults(func=run)


def _config(args, extra) -> TrainConfig:
    """The validated configuration: the ``--config`` file, overridden by the flags given."""
    from ..runtime import load_config

    settings = load_config(args.config) if args.config else {}
    if args.code:
        code = code_from(args, extra)
        settings["code"], settings["code_params"] = code.name, code.params
    elif extra:
        raise UsageError("code parameters need --code NAME")
    for f in flag_fields():
        val = getattr(args, f.name)
        if val is not None:
            settings[f.name] = val
    if "code" not in settings:
        raise UsageError("--code: expected a code name (or a config file with code and code_params)")
    cfg = TrainConfig(**settings).validate()
    if cfg.out and not cfg.resume and (Path(cfg.out) / "checkpoint.pt").exists():
        raise UsageError(f"--out: {cfg.out} already holds a run; use --resume or another --out")
    return cfg


def run(args, extra) -> int:
    try:
        from ..runtime import train
    except ImportError as exc:
        raise UsageError(f"train needs torch (pip install 'gradcode[train]'): {exc}")
    cfg = _config(args, extra)
    try:
        res = train(cfg, progress=progress(args))
    except (Interrupted, Diverged) as exc:     # Ctrl-C, divergence: report the finished rounds
        res = exc.result
    summ = res.summary
    print(f"{summ['rounds']} rounds in {summ['total_time_s']:.2f} s "
          f"({summ['mean_round_time_s'] * 1e3:.1f} ms/round), final loss "
          f"{summ.get('final_loss', float('nan')):.4f}, "
          f"mean recovered {summ['mean_recovered_fraction']:.1%}")
    if cfg.out:
        print(f"written: {cfg.out}/rounds.csv, plot.png, checkpoint.pt, events.log")
    if res.interrupted:
        print("interrupted: the finished rounds are reported"
              + (f"; --resume continues from the last checkpoint (every {cfg.checkpoint_every} "
                 "rounds)" if cfg.out else ""))
        return 130
    if res.diverged is not None:
        print(f"gradcode train: error: {Diverged(res)}", file=sys.stderr)
        return 1
    return 0
