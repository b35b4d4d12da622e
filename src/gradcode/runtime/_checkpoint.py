"""Checkpoints and resuming: ``out/checkpoint.pt`` holds what continues a run (the round to start
from, the config, the dropped workers, the learner's models, optimizers and LR schedulers, the
planner, the results later rounds still combine, the delay model and its random stream);
``restore`` gives the state a run starts from (round 0, or the checkpoint's, checked against
``rounds.csv``).  ``out/model.pt`` is the trained model's ``state_dict`` alone (``save_model``)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import torch

from ..engine import WorkerAccount
from ..records import Record, read_records

#: settings a resumed run may change: how long it runs, where and how often it writes, where the
#: data and the Ray cluster are; any other change would make it another run
MAY_CHANGE = ("rounds", "out", "resume", "checkpoint_every", "data_dir", "address", "actors",
              "concurrency", "loader_workers", "eval_every", "eval_batch", "device", "audit",
              "aggregate", "plot")
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


def fingerprint(model, data, objective) -> dict:
    """What a checkpoint's run must share with the run resuming it, beyond its settings: the
    model's architecture (every state entry's name, shape and dtype), the number of samples and
    the loss (its type, and what it reduces with)."""
    loss = objective.loss
    name = type(loss).__name__ if isinstance(loss, torch.nn.Module) else getattr(
        loss, "__qualname__", type(loss).__name__)
    return {"model": [[k, list(v.shape), str(v.dtype).replace("torch.", "")]
                      for k, v in model.state_dict().items()],
            "samples": len(data), "loss": f"{name} ({objective.kind})"}


def save_model(out, model) -> None:
    """``out/model.pt``: the trained ``state_dict`` (tensors only: ``torch.load(path,
    weights_only=True)`` reads it), written to a temporary file first."""
    tmp = out / "model.pt.tmp"
    torch.save(model.state_dict(), tmp)
    tmp.replace(out / "model.pt")


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


@dataclass
class Resumed:
    """Where a run starts: round 0 with the planner and delay model it was built with, or the
    checkpointed run's state (``restore``)."""
    planner: object
    delay_model: object
    start: int = 0                     # the first round to run
    elapsed: float = 0.0               # the seconds of the rounds before it
    events: list = field(default_factory=list)
    records: list = field(default_factory=list)     # the rounds before it
    dropped: set = field(default_factory=set)       # workers never asked again
    store: dict = field(default_factory=dict)       # results later rounds still combine
    tasks: dict = field(default_factory=dict)       # the tasks of the rounds in ``store``
    rounding: dict = field(default_factory=dict)    # their float32 rounding (``Loop.rounding``)
    stats: dict = field(default_factory=dict)       # their partition stats (``Loop.stats``)
    account: dict | None = None        # the per-worker account so far (``WorkerAccount``)


def restore(out, cfg, T: int, planner, delay_model, learner, delay_rng,
            mine: dict | None = None) -> Resumed:
    """Where the run starts: round 0 (a fresh run, or ``resume`` of a run stopped before its
    first checkpoint: it starts over, and says so), else the checkpoint's state, with the
    learner and the delay stream restored (``resume_state``), once the checkpoint's
    ``fingerprint`` (model architecture, samples, loss) matches this run's, ``mine``."""
    fresh = Resumed(planner, delay_model)
    if out is None or not cfg.resume:
        return fresh
    if before_first_checkpoint(out):
        fresh.events.append(f"resume: the run in {str(out)!r} was interrupted before its first "
                            "checkpoint; started over from round 0 (the same seed gives the same "
                            "rounds)")
        return fresh
    return resume_state(out, cfg, T, learner, delay_rng, mine)


def check_fingerprint(out, saved: dict | None, mine: dict | None) -> None:
    """ValueError in one line when the checkpoint's run had another model architecture, number
    of samples or loss than this one (a checkpoint without a fingerprint is not checked)."""
    if not saved or not mine:
        return
    if saved["model"] != mine["model"]:
        theirs = {k: f"{shape} {dtype}" for k, shape, dtype in saved["model"]}
        ours = {k: f"{shape} {dtype}" for k, shape, dtype in mine["model"]}
        diff = next(k for k in [*ours, *theirs] if theirs.get(k) != ours.get(k))
        what = (f"its {diff!r} is {theirs.get(diff, 'absent')}, here "
                f"{ours.get(diff, 'absent')}")
        raise ValueError(f"resume: the checkpoint in {str(out)!r} is of another model ({what}); "
                         "nothing was changed")
    if saved.get("samples") != mine.get("samples"):
        raise ValueError(f"resume: the checkpoint in {str(out)!r} is of a run on "
                         f"{saved.get('samples')} samples, not {mine.get('samples')}; nothing "
                         "was changed")
    if saved.get("loss") != mine.get("loss"):
        raise ValueError(f"resume: the checkpoint in {str(out)!r} is of a run with the loss "
                         f"{saved.get('loss')}, not {mine.get('loss')}; nothing was changed")


def resume_state(out, cfg, T: int, learner, delay_rng, mine: dict | None = None) -> Resumed:
    """The checkpointed run's state, with the learner and the delay stream restored; its planner
    extended when the run is given more rounds.  A scheme with a wait-out rule (every sequential
    scheme, ``gc-seq``'s ``T = 0`` included) has jobs that depend on the rounds: it may be
    extended, never cut, and from its checkpoint of round ``rounds - T`` once it had gone past
    it."""
    state = load_checkpoint(out, cfg)
    check_fingerprint(out, state.get("fingerprint"), mine)
    planner, before = state["planner"], state["config"]["rounds"]
    if planner.rule is not None and cfg.rounds != before:   # a sequential scheme's jobs change
        if cfg.rounds < before:
            raise ValueError(f"rounds: a sequential scheme's run can be extended, not cut: the "
                             f"checkpoint is of a run of {before} rounds, got {cfg.rounds}")
        if state["round"] > before - T:    # past its last jobs' start: from the round before
            state = load_checkpoint(out, cfg, JOBS_CHECKPOINT)
            planner = state["planner"]
        planner = planner.extended(cfg.rounds - T)
    elif cfg.rounds > before:
        planner = planner.extended(cfg.rounds - T)
    events, dropped = resumed_events(out, state)
    learner.load_state(state["learner"])
    delay_rng.bit_generator.state = state["rng"]
    start = state["round"]
    return Resumed(planner, state["delay_model"], start, state["elapsed"], events,
                   records_until(out, start), dropped, state["store"], state.get("tasks", {}),
                   state.get("rounding", {}), state.get("stats", {}), state.get("account"))


def before_first_checkpoint(out) -> bool:
    """``out`` holds a run interrupted before it wrote a checkpoint (``--resume`` starts it over
    rather than refusing: nothing of it could be lost, the seed gives the same rounds)."""
    summary = out / "summary.json"
    if (out / "checkpoint.pt").exists() or not summary.is_file():
        return False
    try:
        return json.loads(summary.read_text()).get("interrupted") is True
    except (ValueError, AttributeError):
        return False


def records_until(out, start: int) -> list[Record]:
    """The rows of rounds ``0 .. start - 1`` in ``out/rounds.csv`` (by their ``round`` column;
    rows of later rounds, written after the checkpoint, are dropped); ValueError when the file is
    missing, unreadable or lacks one of those rounds: the folder is not the checkpoint's run."""
    path = out / "rounds.csv"
    try:
        records = read_records(path)
    except FileNotFoundError:
        raise ValueError(f"resume: {str(path)!r} is missing, so the folder does not hold the "
                         f"checkpoint's run (round {start}); nothing was changed") from None
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"resume: {str(path)!r} is not a rounds.csv gradcode wrote "
                         f"({type(exc).__name__}); nothing was changed") from None
    kept = sorted((r for r in records if r.round < start), key=lambda r: r.round)
    if [r.round for r in kept] != list(range(start)):
        have = sorted({r.round for r in kept})
        missing = sorted(set(range(start)) - set(have))
        what = f"lacks rounds {missing[:5]}" if missing else "holds some rounds twice"
        raise ValueError(f"resume: {str(path)!r} {what} of the checkpoint's {start}; the folder "
                         "is not one consistent run; nothing was changed")
    return kept
