"""``--lr-schedule SPEC``: learning-rate schedules as PyTorch's own schedulers.

A SPEC is one or two parts joined by ``+``, a warm-up first:

- ``step:EVERY[,GAMMA]`` -- the rate times GAMMA (default 0.1) every EVERY steps (``StepLR``);
- ``cosine[:STEPS[,MIN_LR]]`` -- cosine annealing to MIN_LR (default 0) over STEPS steps
  (default: the rest of the run; ``CosineAnnealingLR``);
- ``warmup:STEPS`` -- a linear warm-up: step ``k < STEPS`` uses the rate times
  ``(k + 1) / STEPS`` (``LinearLR``), then the part after ``+`` (``SequentialLR``).

A step is one of the model's optimizer steps (a round for a single-model code); the scheduler is
stepped once after each.  Parsing (``parse_schedule``) imports no torch: the CLI checks a SPEC
before any work.
"""

from __future__ import annotations

import math

SCHEDULE_HELP = ("step:EVERY[,GAMMA], cosine[:STEPS[,MIN_LR]] or warmup:STEPS, a warm up "
                 "followed by one of the others with + (STEPS, EVERY: optimizer steps of the "
                 "model, one per round for a code with one model)")
_ARGS = {"step": (1, 2), "cosine": (0, 2), "warmup": (1, 1)}


def parse_schedule(spec: str) -> list[tuple[str, list[float]]]:
    """``[(name, arguments)]`` of a SPEC (module doc); ValueError naming ``lr_schedule``.

    >>> parse_schedule("warmup:5+cosine")
    [('warmup', [5.0]), ('cosine', [])]
    >>> parse_schedule("step:0")
    Traceback (most recent call last):
    ...
    ValueError: lr_schedule: step:EVERY needs an integer EVERY >= 1, got '0'
    """
    parts = spec.split("+")
    if not spec or len(parts) > 2 or (len(parts) == 2 and not parts[0].startswith("warmup")):
        raise ValueError(f"lr_schedule: expected {SCHEDULE_HELP}, got {spec!r}")
    out = []
    for part in parts:
        name, _, rest = part.partition(":")
        if name not in _ARGS:
            raise ValueError(f"lr_schedule: unknown schedule {name!r} in {spec!r}; expected "
                             f"step, cosine or warmup")
        args = rest.split(",") if rest else []
        lo, hi = _ARGS[name]
        if not lo <= len(args) <= hi:
            raise ValueError(f"lr_schedule: {name} takes {lo} to {hi} numbers, got {part!r}")
        out.append((name, [_number(name, i, a) for i, a in enumerate(args)]))
    if parts[-1].startswith("warmup") and len(parts) == 2:
        raise ValueError(f"lr_schedule: a warm-up comes first, got {spec!r}")
    return out


def _number(name: str, i: int, text: str) -> float:
    """Argument ``i`` of schedule ``name``: the first is a count of steps, the second a number."""
    counts = i == 0
    try:
        x = float(text)
    except ValueError:
        x = math.nan
    what = {("step", 0): "EVERY", ("step", 1): "GAMMA", ("cosine", 0): "STEPS",
            ("cosine", 1): "MIN_LR", ("warmup", 0): "STEPS"}[name, i]
    if counts and not (math.isfinite(x) and x == int(x) and x >= 1):
        raise ValueError(f"lr_schedule: {name}:{what} needs an integer {what} >= 1, got {text!r}")
    if not counts and not (math.isfinite(x) and x >= 0):
        raise ValueError(f"lr_schedule: {name}'s {what} must be a finite number >= 0, got "
                         f"{text!r}")
    return x


def scheduler_for(spec: str, steps: int):
    """``optimizer -> scheduler`` for SPEC, a model taking ``steps`` optimizer steps in all."""
    import torch.optim.lr_scheduler as lr

    parts = parse_schedule(spec)

    def one(opt, name, args, left):
        if name == "step":
            return lr.StepLR(opt, int(args[0]), args[1] if len(args) > 1 else 0.1)
        if name == "cosine":
            return lr.CosineAnnealingLR(opt, int(args[0]) if args else max(1, left),
                                        args[1] if len(args) > 1 else 0.0)
        warm = int(args[0])
        return lr.LinearLR(opt, 1 / warm, 1.0, max(1, warm - 1))

    def make(opt):
        if len(parts) == 1:
            return one(opt, *parts[0], steps)
        warm = int(parts[0][1][0])
        return lr.SequentialLR(opt, [one(opt, *parts[0], steps),
                                     one(opt, *parts[1], steps - warm)], [warm])
    return make
