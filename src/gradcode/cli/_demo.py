"""``gradcode demo``: the main demo (what ``make run`` shows)."""

from __future__ import annotations

from ._common import UsageError, add_quiet, check_out, progress


def add_parser(sub) -> None:
    dm = sub.add_parser("demo", help="the main demo (`make run`): IS-GC against synchronous SGD with stragglers",
                        description="Real training with injected stragglers: IS-GC against "
                        "synchronous SGD (and GC), printing time per round and time to loss.")
    dm.add_argument("--backend", choices=["local", "ray"], default="local",
                    help="local threads (default) or a local Ray instance")
    dm.add_argument("--rounds", type=int, default=40, help="rounds per scheme (default 40)")
    dm.add_argument("--out", default=None, help="also write each run under this folder "
                    "(OUT/uncoded, OUT/gc-cr, OUT/isgc-cr)")
    dm.add_argument("--overwrite", action="store_true",
                    help="replace the runs an --out holds (without it, such an --out is refused)")
    add_quiet(dm)
    dm.set_defaults(func=run)


def run(args, extra) -> int:
    from ..demo import main as demo
    if args.rounds < 2:
        raise UsageError(f"--rounds: expected an integer >= 2, got {args.rounds}")
    from ..demo import SCHEMES
    from ._train import ALL_OUTPUTS, OUTPUTS
    from ._common import clear_outputs
    for _, code, _, _ in SCHEMES:          # each run's folder: nothing of an earlier one replaced
        folder = check_out("--out", args.out, OUTPUTS, args.overwrite, sub=code)
        if folder is not None and args.overwrite and folder.is_dir():
            clear_outputs(folder, ALL_OUTPUTS)
    return demo(backend=args.backend, rounds=args.rounds, out=args.out, progress=progress(args))
