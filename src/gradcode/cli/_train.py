"""``gradcode train``: real PyTorch training; one flag per ``TrainConfig`` field.

The flags are generated from ``dataclasses.fields(TrainConfig)``: each field's help, flag name
(when not ``--`` + the name with dashes), choices and metavar are its metadata, its type the
annotation (int, float, str; a bool field is a switch), the default shown in ``--help`` the
dataclass's.  A flag left out is ``None`` here, so a ``--config`` file's value stands.  ``code``
and ``code_params`` are ``--code NAME`` plus the code's own flags.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import dataclasses
import types
import typing
from pathlib import Path

from ..folders import FolderLock
from ..records import Diverged, Interrupted, NothingRecovered
from ..runtime import RunSpec, TrainConfig, resolve
from ._common import (UsageError, check_out, clear_outputs, code_seed, describe_run,
                      parse_code_params, progress)

#: fields set by ``--code NAME`` and the code's own flags, not by a flag of their own
CODE_FIELDS = ("code", "code_params")
#: what a run writes: a folder holding any of them (a run, or a user's own plot.png) is refused
#: unless ``--resume`` continues the run or ``--overwrite`` replaces them
OUTPUTS = ("checkpoint.pt", "rounds.csv", "summary.json", "plot.png", "events.log",
           "checkpoint-jobs.pt", "model.pt")
#: what ``--overwrite`` removes before training afresh
ALL_OUTPUTS = OUTPUTS + ("checkpoint.pt.tmp", "checkpoint-jobs.pt.tmp", "model.pt.tmp")


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
    if (not any(f.default is x for x in (None, False, True, dataclasses.MISSING))
            and "default" not in text):
        text += f" (default {f.default})"
    return text.replace("%", "%%")               # argparse formats help with %


def _add_config_flags(parser) -> None:
    hints = typing.get_type_hints(TrainConfig)
    for f in flag_fields():
        kind = _kind(hints[f.name])
        kw = dict(dest=f.name, default=None, help=_help(f))
        if kind is bool:                     # a setting on by default: --no-NAME
            parser.add_argument(flag_name(f), action="store_false" if f.default else "store_true",
                                **kw)
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
    tr.add_argument("--overwrite", action="store_true",
                    help="train afresh in an --out that holds a run: its rounds.csv, summary.json, "
                    "plot.png, events.log and checkpoint.pt are removed once the settings are "
                    "checked (without it such an --out is refused; --resume continues it)")
    tr.add_argument("--quiet", action="store_true",
                    help="no progress bar (there is none when stderr is not a terminal)")
    tr.set_defaults(func=run)


def _config(args, extra) -> RunSpec:
    """The run resolved (``runtime.resolve``) before any work: the ``--config`` file, overridden
    by the flags given (code parameters on the command line apply to the file's code when there
    is no ``--code``, over the file's ``code_params``), the output folder checked."""
    from ..registry import code_parameters
    from ..runtime import load_config

    settings = load_config(args.config) if args.config else {}
    if args.code or extra:
        name, file_code = args.code or settings.get("code"), settings.get("code")
        if not name:
            raise UsageError("--code: code parameters need --code NAME (or a --config file "
                             "with code)")
        base = settings.get("code_params", {}) if name == file_code else {}
        if not isinstance(base, dict):
            raise UsageError(f"code_params: expected a table of the code's parameters, got "
                             f"{base!r}")
        params = parse_code_params(name, code_seed(extra), base, setting="code")
        keep = code_parameters(name)        # derived values (e.g. SR-SGC's s) are rebuilt
        settings["code"], settings["code_params"] = name, {
            k: v for k, v in params.items() if k in keep}
    for f in flag_fields():
        val = getattr(args, f.name)
        if val is not None:
            settings[f.name] = val
    if "code" not in settings:
        raise UsageError("--code: expected a code name (or a config file with code and code_params)")
    cfg = TrainConfig(**settings).validate()
    if args.overwrite and cfg.resume:
        raise UsageError("--overwrite: trains afresh, so it does not go with --resume")
    check_out("--out", cfg.out, () if cfg.resume else OUTPUTS, args.overwrite,
              also="--resume, ")
    return resolve(cfg)


def _title(spec: RunSpec) -> str:
    cfg, scheme = spec.config, spec.scheme
    return describe_run(scheme, dataset=cfg.dataset, model=spec.model, wait=cfg.wait,
                        delay=cfg.delay, compute=cfg.compute, models=int(scheme.T) + 1)


def run(args, extra) -> int:
    try:
        from ..runtime import train
    except ImportError as exc:
        raise UsageError(f"train needs torch (pip install 'gradcode[train]'): {exc}")
    spec = _config(args, extra)
    cfg, lines = spec.config, spec.notes
    bar = progress(args)
    out = Path(cfg.out) if cfg.out else None
    # a folder that exists is this run's before --overwrite clears it (train keeps it so)
    with FolderLock(out) if out and out.is_dir() else contextlib.nullcontext():
        if args.overwrite and out:
            clear_outputs(out, ALL_OUTPUTS)
        try:
            res = train(spec, progress=bar)
        except (Interrupted, Diverged) as exc:  # Ctrl-C, divergence: report the finished rounds
            res = exc.result
        except NothingRecovered as exc:         # one line, the outputs written
            print(f"gradcode train: error: {exc}", file=sys.stderr)
            return 1
    summ = res.summary
    if not bar:                       # the run's first lines (a progress bar showed them above)
        print("\n".join(lines), end="\n" if lines else "")
    print(_title(spec))
    if res.already_finished:
        print(f"the run in {cfg.out} had already finished its {summ['rounds']} rounds; nothing "
              f"to do (--rounds more than {summ['rounds']} continues it)")
    held = "".join(f", held-out {what} {summ[key]:{fmt}}" for key, what, fmt in (
        ("final_test_accuracy", "accuracy", ".1%"), ("final_test_loss", "loss", ".4f"))
        if summ.get(key) is not None and summ[key] == summ[key])
    print(f"{summ['rounds']} rounds in {summ['total_time_s']:.2f} s "
          f"({summ['mean_round_time_s'] * 1e3:.1f} ms/round; evaluating took "
          f"{summ['eval_time_s']:.2f} s more), final loss "
          f"{_num(summ.get('final_loss')):.4f}{held}, "
          f"mean recovered {summ['mean_recovered_fraction']:.1%}")
    if summ.get("waitout_rule") is not None:    # a sequential scheme (gc-seq's T = 0 included)
        print(f"wait-out rule {summ['waitout_rule']}: {summ['waitouts']} of {summ['rounds']} "
              f"rounds waited out ({summ['jobs']} jobs, {summ['models']} "
              f"model{'s' if summ['models'] > 1 else ''})")
    warning = res.account.warning() if res.account is not None else None
    if warning:
        print(warning + (f" ({cfg.out}/events.log)" if cfg.out else ""))
    if cfg.out:
        print(f"written: {cfg.out}/rounds.csv, plot.png, model.pt, checkpoint.pt, events.log")
    if res.interrupted:
        print(f"interrupted ({res.interrupted_by}): the finished rounds are reported"
              + ("; --resume continues the run" if cfg.out else ""))
        return 143 if res.interrupted_by == "SIGTERM" else 130
    if res.diverged is not None:
        print(f"gradcode train: error: {Diverged(res)}", file=sys.stderr)
        return 1
    return 0


def _num(x) -> float:
    """A summary figure for printing (None, a diverged run's last loss, shows as nan)."""
    return float("nan") if x is None else x
