"""Run every benchmark (``make bench``): each ``benchmarks/bench_*.py`` in turn, in its own process
with this interpreter, a header per file, and a last line naming the ones that failed (exit 1).

    .venv/bin/python benchmarks/run_all.py [--quick] [--list] [NAME ...]

``--quick`` runs the short form of the benchmarks that have one (fewer rounds or repetitions:
a smoke run, not a measurement); ``--list`` prints the files and the command each would run,
running nothing; ``NAME`` (e.g. ``sim`` or ``bench_sim.py``) runs only those.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: the short form of each benchmark that has one (the others run in full either way)
QUICK_ARGS = {"bench_sequential.py": ["--quick"], "bench_runtime.py": ["1"],   # 1 repetition
              "bench_ddp.py": ["--quick"]}


def benchmarks(names=()) -> list[Path]:
    found = sorted(HERE.glob("bench_*.py"))
    if not names:
        return found
    wanted = {n if n.endswith(".py") else f"bench_{n.removeprefix('bench_')}.py" for n in names}
    unknown = wanted - {p.name for p in found}
    if unknown:
        raise SystemExit(f"run_all: no such benchmark {', '.join(sorted(unknown))}; there are "
                         + ", ".join(p.name for p in found))
    return [p for p in found if p.name in wanted]


def command(path: Path, quick: bool) -> list[str]:
    return [sys.executable, str(path), *(QUICK_ARGS.get(path.name, []) if quick else [])]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("names", nargs="*", metavar="NAME", help="only these benchmarks")
    ap.add_argument("--quick", action="store_true", help="the short form where there is one")
    ap.add_argument("--list", action="store_true", help="print the files and commands, run nothing")
    args = ap.parse_args(argv)
    paths = benchmarks(args.names)
    if args.list:
        for path in paths:
            print(f"{path.name:<22}{' '.join(command(path, args.quick)[1:])}")
        return 0
    failed = []
    for path in paths:
        print(f"\n=== {path.name} ===", flush=True)
        start = time.perf_counter()
        rc = subprocess.run(command(path, args.quick), cwd=HERE.parent).returncode
        took = time.perf_counter() - start
        print(f"--- {path.name}: {'ok' if rc == 0 else f'FAILED (exit {rc})'} in {took:.0f} s",
              flush=True)
        if rc != 0:
            failed.append(path.name)
    print(f"\n{len(paths) - len(failed)} of {len(paths)} benchmarks ran; failed: "
          + (", ".join(failed) if failed else "none"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
