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
    dm.add_argument("--out", default=None, help="also write each run under this folder")
    add_quiet(dm)
    dm.set_defaults(func=run)


def run(args, extra) -> int:
    from ..demo import main as demo
    if args.rounds < 2:
        raise UsageError(f"--rounds: expected an integer >= 2, got {args.rounds}")
    check_out("--out", args.out)
    return demo(backend=args.backend, rounds=args.rounds, out=args.out, progress=progress(args))
