"""Checkpoints: ``out/checkpoint.pt`` holds what continues a run (the round to start from, the
config, the dropped workers, the learner's models and optimizers, the planner, the results later
rounds still combine, the delay model and its random stream)."""

from __future__ import annotations

import torch

#: settings a resumed run must share with the checkpointed one to continue the same run
SAME_RUN = ("code", "code_params", "dataset", "model", "seed", "batch", "shuffle", "optimizer")


def save_checkpoint(out, cfg, next_round: int, elapsed: float, dropped: set, **state) -> None:
    """Written to a temporary file first, so a crash never leaves a half-written one."""
    tmp = out / "checkpoint.pt.tmp"
    torch.save({"round": next_round, "elapsed": elapsed, "config": cfg.as_dict(),
                "dropped": sorted(dropped), **state}, tmp)
    tmp.replace(out / "checkpoint.pt")


def load_checkpoint(out, cfg) -> dict:
    """The checkpoint in ``out``; ValueError if there is none or it is another run's (a setting
    of ``SAME_RUN`` differs)."""
    ckpt = out / "checkpoint.pt"
    if not ckpt.is_file():
        raise ValueError(f"resume: no checkpoint in {str(out)!r}")
    state = torch.load(ckpt, weights_only=False)
    mine = cfg.as_dict()
    for key in SAME_RUN:
        if state["config"].get(key) != mine[key]:
            raise ValueError(f"resume: the checkpoint in {str(out)!r} is of a run with {key} = "
                             f"{state['config'].get(key)!r}, not {mine[key]!r}")
    return state


def resumed_events(out, state) -> tuple[list, set]:
    """``(events, dropped)`` of the checkpointed run: its log so far (kept, and the resume noted)
    and the workers it had dropped for good."""
    log = out / "events.log"
    events = log.read_text().splitlines() if log.is_file() else []
    events.append(f"resumed from the checkpoint at round {state['round']}")
    return events, set(state.get("dropped", ()))
