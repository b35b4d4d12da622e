"""Checkpoints: ``out/checkpoint.pt`` holds what continues a run (the round to start from, the
config, the dropped workers, the learner's models and optimizers, the planner, the results later
rounds still combine, the delay model and its random stream)."""

from __future__ import annotations

import torch

from ..engine import WorkerAccount

#: settings a resumed run may change: how long it runs, where and how often it writes, where the
#: data and the Ray cluster are; any other change would make it another run
MAY_CHANGE = ("rounds", "out", "resume", "checkpoint_every", "data_dir", "address", "actors",
              "eval_every", "device", "audit")
#: what a checkpoint must hold
KEYS = ("round", "elapsed", "config", "learner", "planner", "store", "delay_model", "rng")


#: a sequential scheme's checkpoint of round ``rounds - T``, before its last jobs finish: a
#: resumed run of more rounds continues from it (the trailing rounds start new jobs there)
JOBS_CHECKPOINT = "checkpoint-jobs.pt"


def save_checkpoint(out, cfg, next_round: int, elapsed: float, dropped: set,
                    name: str = "checkpoint.pt", **state) -> None:
    """Written to a temporary file first, so a crash never leaves a half-written one."""
    tmp = out / f"{name}.tmp"
    torch.save({"round": next_round, "elapsed": elapsed, "config": cfg.as_dict(),
                "dropped": sorted(dropped), **state}, tmp)
    tmp.replace(out / name)


def load_checkpoint(out, cfg, name: str = "checkpoint.pt") -> dict:
    """The checkpoint in ``out``; ValueError naming the file if there is none or it cannot be
    read, or naming the setting if the resumed run changes one that is not in ``MAY_CHANGE``."""
    ckpt = out / name
    if not ckpt.is_file():
        raise ValueError(f"resume: no checkpoint in {str(out)!r}")
    try:
        state = torch.load(ckpt, weights_only=False)
        missing = [k for k in KEYS if k not in state]
    except Exception as exc:       # truncated, empty, garbage: whatever torch/pickle says
        raise ValueError(f"resume: {str(ckpt)!r} is not a readable checkpoint "
                         f"({type(exc).__name__}); nothing was changed") from None
    if missing or not isinstance(state["config"], dict):
        raise ValueError(f"resume: {str(ckpt)!r} is not a gradcode checkpoint (no "
                         f"{(missing or ['config'])[0]!r}); nothing was changed")
    mine = cfg.as_dict()
    for key, value in mine.items():
        if key not in MAY_CHANGE and state["config"].get(key) != value:
            raise ValueError(f"resume: the checkpoint in {str(out)!r} is of a run with {key} = "
                             f"{state['config'].get(key)!r}, not {value!r} (only "
                             f"{', '.join(MAY_CHANGE[:2])} and output options may change)")
    return state


def resumed_events(out, state) -> tuple[list, set]:
    """``(events, dropped)`` of the checkpointed run: its log so far (kept, and the resume noted)
    and the workers it had dropped for good."""
    log = out / "events.log"
    events = log.read_text().splitlines() if log.is_file() else []
    if WorkerAccount.HEADER in events:      # the per-worker counts so far: written anew
        events = events[:events.index(WorkerAccount.HEADER)]
    events.append(f"resumed from the checkpoint at round {state['round']}")
    return events, set(state.get("dropped", ()))
