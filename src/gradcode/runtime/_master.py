"""The master loop of real training: broadcast, wait for the fastest workers, decode, step.

One loop drives both executors (in-process threads, Ray actors).  Each round: sample the injected
delays (the simulator's delay models), broadcast the parameters once, collect results under the
wait policy (results carry their round; stale ones are dropped; a busy or failed worker is a
straggler; non-finite results are erasures), decode with the code, and step a ``torch.optim``
optimizer with the decoded gradient divided by the number of samples it covers.  A round whose
arrivals decode nothing skips the step and says so.  Writes ``rounds.csv`` (the simulator's
``Record`` columns, ``time_s`` wall-clock), ``events.log``, ``plot.png`` and ``checkpoint.pt``.
"""

from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from ..codes import make_code
from ..records import Record, finished, read_records, summarize, write_records
from ..sim import parse_wait
from ..sim._simulate import message_layout
from ..stragglers._delays import parse_compute, parse_delay
from ._config import DEFAULT_LR, TrainConfig
from ._models import DEFAULT_MODEL, TorchData, build_model, load_torch_data, loss_for
from ._executors import make_executor, measure_speeds
from ._worker import batch_indices


@dataclass
class TrainResult:
    records: list[Record]
    model: torch.nn.Module
    out: Path | None
    events: list[str] = field(default_factory=list)
    backend_info: str = ""
    master_s: list[float] = field(default_factory=list)   # per round: time not blocked on workers
    interrupted: bool = False        # Ctrl-C: the finished rounds are kept and written

    @property
    def summary(self) -> dict:
        return summarize(self.records)


@dataclass
class RoundInfo:
    executor: object
    decoding: object
    gradient: np.ndarray | None      # the mean gradient applied (None: step skipped)
    params: np.ndarray               # parameters the round was computed at
    rows: list                       # rows of B that arrived (workers, unless shuffled)
    counts: np.ndarray               # samples per partition in a round


def _split(data: TorchData, sizes: np.ndarray, rng) -> dict:
    order = torch.from_numpy(rng.permutation(len(data.y)))
    bounds = np.round(np.cumsum(np.r_[0, sizes]) * len(data.y)).astype(int)
    return {j: (data.X[order[a:b]].contiguous(), data.y[order[a:b]].contiguous())
            for j, (a, b) in enumerate(zip(bounds[:-1], bounds[1:]))}


def _inputs(cfg, model, loss_fn, data):
    """``(cfg, data, model, loss_fn)``: the given ones, or the config's (and ``cfg`` with its
    default learning rate filled in); ValueError if they don't fit."""
    data = data if data is not None else load_torch_data(cfg.dataset, cfg.seed, cfg.data_dir)
    name = None
    if model is None:
        name = cfg.model or DEFAULT_MODEL.get(cfg.dataset, "mlp")
        model = build_model(name, data, cfg.seed)
    loss_fn = loss_fn if loss_fn is not None else loss_for(data)
    _check_fits(model, loss_fn, data)
    if cfg.lr is None:
        lr = DEFAULT_LR.get((cfg.optimizer, name), DEFAULT_LR[cfg.optimizer])
        cfg = dataclasses.replace(cfg, lr=lr)
    return cfg, data, model, loss_fn


def _eval_set(cfg, data):
    """The fixed sample (``cfg.eval_samples`` rows) on which every round's loss is measured."""
    idx = torch.from_numpy(np.random.default_rng(cfg.seed).permutation(len(data.y))[:cfg.eval_samples])
    return data.X[idx], data.y[idx]


def _progress(progress: bool, cfg, start: int, desc: str, info: str, events: list):
    """``(bar or None, log)``: ``log(msg)`` appends to ``events`` and prints above the bar."""
    bar = None
    if progress:
        from tqdm.auto import tqdm
        bar = tqdm(total=cfg.rounds, initial=start, unit="round", desc=desc)
        bar.write(info)

    def log(msg):
        events.append(msg)
        if bar is not None:
            bar.write(msg)
    return bar, log


def _submit(ex, r: int, params, tasks, delays, n: int, dropped: set, log) -> int:
    """Start round ``r``; returns how many workers will answer.  Busy workers (still computing
    an earlier round) are this round's stragglers; what the executor noticed (a dead Ray host
    restarted) is logged."""
    busy = ex.submit(r, params, tasks, delays, skip=dropped)
    for note in ex.notes:
        log(f"round {r}: {note}")
    ex.notes.clear()
    if busy:
        log(f"round {r}: workers {sorted(busy)} still busy with an earlier round "
            "(stragglers this round)")
    return n - len(busy) - len(dropped)


def _usable(res, r: int, cfg, dropped: set, log) -> bool:
    """Whether round ``r``'s result ``res`` brings coded vectors; a busy or failed worker is a
    straggler this round (logged; a failed one dropped for good if ``on_worker_death='drop'``)."""
    if res.error and res.error.startswith("busy"):
        log(f"round {r}: worker {res.worker} still busy with an earlier round "
            "(a straggler this round)")
    elif res.error:
        log(f"round {r}: worker {res.worker} failed ({res.error}); a straggler")
        if cfg.on_worker_death == "drop":
            dropped.add(res.worker)
            log(f"round {r}: worker {res.worker} dropped for the rest of training")
    return not res.error


def _write_outputs(out, events, records, extra: dict, title: str) -> None:
    """A finished run's ``events.log``, ``summary.json`` (with ``extra``) and ``plot.png``."""
    (out / "events.log").write_text("".join(e + "\n" for e in events))
    (out / "summary.json").write_text(json.dumps({**summarize(records), **extra}, indent=2,
                                                 default=str))
    plot_training(records, out / "plot.png", title)


def _check_fits(model, loss_fn, data: TorchData) -> None:
    try:
        with torch.no_grad():
            loss_fn(model(data.X[:2]), data.y[:2])
    except Exception as exc:
        raise ValueError(f"model: does not fit dataset {data.name!r} "
                         f"(inputs {tuple(data.X.shape[1:])}): {exc}".splitlines()[0]) from None


def train(config: TrainConfig, *, model=None, loss_fn=None, data: TorchData | None = None,
          progress: bool = True, on_round=None) -> TrainResult:
    """Train ``model`` (default: built from ``config``) with coded gradients; see module doc.

    ``on_round(round, record, info)`` is called after each round with a ``RoundInfo`` (the
    executor, the decoding, the applied gradient, ...); tests inject faults through it.
    """
    from ._pipeline import is_sequential, train_pipelined
    if is_sequential(config):      # sequential schemes: M = T + 1 models pipelined (paper 4 App. I)
        return train_pipelined(config, model=model, loss_fn=loss_fn, data=data,
                               progress=progress, on_round=on_round)
    cfg = config.validate()
    code = make_code(cfg.code, **cfg.code_params)
    wait, delay, compute = parse_wait(cfg.wait), parse_delay(cfg.delay), parse_compute(cfg.compute)
    cfg, data, model, loss_fn = _inputs(cfg, model, loss_fn, data)
    out = Path(cfg.out) if cfg.out else None
    seeds = np.random.SeedSequence(cfg.seed).spawn(5)
    data_rng, delay_rng, decode_rng, shuffle_rng, probe_rng = (
        np.random.Generator(np.random.PCG64(s)) for s in seeds)
    if cfg.measure_speeds:               # paper 3 with measured throughputs c_i (resume: stored)
        ckpt = out / "checkpoint.pt" if out else None
        speeds = (torch.load(ckpt, weights_only=False)["config"]["code_params"]["speeds"]
                  if cfg.resume and ckpt and ckpt.is_file() else
                  measure_speeds(cfg, code.n_workers, model, loss_fn, data, compute, probe_rng,
                                 cfg.measure_speeds))
        cfg = dataclasses.replace(cfg, code_params={**cfg.code_params, "speeds": speeds})
        code = make_code(cfg.code, **cfg.code_params)
    partitions = _split(data, np.asarray(code.partition_sizes), data_rng)
    counts = np.array([len(batch_indices(len(partitions[j][1]), cfg.batch, 0, 0, j))
                       for j in range(code.n_partitions)], float)
    n = code.n_workers
    if cfg.shuffle and hasattr(code, "sender"):
        raise ValueError(f"shuffle: not supported for {code.name} (a machine sends its messages "
                         "in order, so its rows cannot move to other machines)")
    placement = code.placement
    Bd = code.B_sparse
    row_tasks = [([int(j) for j in placement[i]],
                  [float(Bd[i, int(j)]) for j in placement[i]]) for i in range(n)]
    held = [range(code.n_partitions) if cfg.shuffle else placement[i] for i in range(n)]
    dtype = np.float32 if code.is_sum_code else np.float64
    layout = message_layout(code)
    load = float(np.mean(layout[2]))     # per machine, as the simulator records it
    for model_ in (delay, compute):      # validates: a trace's or the speeds' worker count
        model_.start(delay_rng, int(layout[0].max()) + 1)
    wait.check(n)

    flat, spans = _flatten_parameters(model)
    gbuf, g32buf = None, np.empty(len(flat), np.float32)     # reused every round
    optimizer = (torch.optim.SGD(model.parameters(), lr=cfg.lr, momentum=cfg.momentum)
                 if cfg.optimizer == "sgd" else torch.optim.Adam(model.parameters(), lr=cfg.lr))
    start_round, elapsed, events = 0, 0.0, []
    records: list[Record] = []
    master_s: list[float] = []
    dropped: set[int] = set()
    if out and cfg.resume:           # a failed resume leaves no empty folder
        state = load_checkpoint(out, cfg)
        events, dropped = _resumed(out, state)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        for rng, st in zip((delay_rng, decode_rng, shuffle_rng), state["rngs"]):
            rng.bit_generator.state = st
        start_round, elapsed = state["round"], state["elapsed"]
        records = read_records(out / "rounds.csv")[:start_round]
        delay = state.get("delay_model", delay)

    X_eval, y_eval = _eval_set(cfg, data)

    def eval_loss() -> float:
        with torch.no_grad():
            return float(loss_fn(model(X_eval), y_eval)) / len(y_eval)

    ex, info = make_executor(cfg, n, held, partitions, model, loss_fn, dtype)
    bar, interrupted = None, False
    try:
        ex.ping()
        if out:                          # only now: bad input (even a dead Ray address) writes nothing
            out.mkdir(parents=True, exist_ok=True)
            write_records(out / "rounds.csv", records)
        bar, log = _progress(progress, cfg, start_round, cfg.code, info, events)
        if cfg.measure_speeds and not cfg.resume:
            log(f"measured worker speeds (paper 3's c_i, fastest = 1): {cfg.code_params['speeds']}")

        for r in range(start_round, cfg.rounds):
            perm = shuffle_rng.permutation(n) if cfg.shuffle else np.arange(n)
            tasks = [[(r, *row_tasks[int(perm[i])])] for i in range(n)]
            # a worker keeps its own delay and speed; with shuffling it computes row perm[i]
            # (and that row's load): paper 5's slow workers stay slow, their rows move
            delays = _injected(layout if not cfg.shuffle else
                               (layout[0], layout[1][perm], layout[2][perm]),
                               delay, compute, delay_rng, r)
            params = flat.numpy()                 # the executor snapshots it (one broadcast)
            snapshot = params.copy() if on_round is not None else None
            t0, blocked0 = time.perf_counter(), ex.blocked_s
            expected = _submit(ex, r, params, tasks, delays, n, dropped, log)
            rows, vecs = _collect(ex, r, t0, n, expected, wait, code, perm, cfg, dropped, log)
            ex.end_round(r)
            d, g = _decode(code, rows, vecs, counts, decode_rng, r, log, gbuf)
            if g is None:
                log(f"round {r}: nothing decodable from {len(rows)} workers; step skipped")
            else:
                gbuf = g
                if g.dtype == np.float32:
                    g32 = torch.from_numpy(g)
                else:
                    np.copyto(g32buf, g, casting="same_kind")
                    g32 = torch.from_numpy(g32buf)
                for p, (a, b) in zip(model.parameters(), spans):
                    p.grad = g32[a:b].view_as(p)
                _step(optimizer)
            dt = time.perf_counter() - t0
            elapsed += dt
            master_s.append(dt - (ex.blocked_s - blocked0))
            rec = Record(round=r, time_s=dt, elapsed_s=elapsed, workers_arrived=len(rows),
                         recovered_fraction=d.recovered_fraction,
                         decode_error=d.error, exact=d.exact, load=load,
                         loss=eval_loss())
            records.append(rec)
            if out:
                write_records(out / "rounds.csv", [rec], append=True)
                if (r + 1) % cfg.checkpoint_every == 0 or r + 1 == cfg.rounds:
                    save_checkpoint(out, cfg, r + 1, elapsed, dropped, model=model.state_dict(),
                                    optimizer=optimizer.state_dict(), delay_model=delay,
                                    rngs=[g.bit_generator.state
                                          for g in (delay_rng, decode_rng, shuffle_rng)])
            if bar is not None:
                bar.set_postfix(loss=f"{rec.loss:.4f}", rec=f"{rec.recovered_fraction:.2f}",
                                s_per_round=f"{dt:.3f}")
                bar.update(1)
            if on_round is not None:
                on_round(r, rec, RoundInfo(ex, d, None if g is None else g.copy(), snapshot,
                                           rows, counts))
    except KeyboardInterrupt:
        interrupted = _interrupted(events, records)
    finally:
        if bar is not None:
            bar.close()
        ex.close()
    if out:
        _write_outputs(out, events, records, {"config": cfg.as_dict(), "backend": info,
                                              "interrupted": interrupted}, f"{code!r}")
    return finished(TrainResult(records, model, out, events, info, master_s, interrupted))


def _interrupted(events: list, records: list) -> bool:
    """Ctrl-C: log it; the finished rounds stay (rounds.csv has them, the outputs are written,
    ``gradcode.records.Interrupted`` carries them, ``--resume`` continues from the last
    checkpoint)."""
    events.append(f"interrupted (Ctrl-C) after {len(records)} rounds")
    return True


def _injected(layout, delay, compute, rng, r) -> np.ndarray:
    """Injected seconds before each row of B is sent in round ``r``: the sender machine's delay
    plus its compute up to that message.  A machine sends its messages in order (gc-partial:
    the naive part, then the coded part), as in the simulator's ``arrival_times``."""
    sender, cum, machine_load = layout
    total = compute.sample(rng, r, machine_load)
    share = np.divide(cum, machine_load[sender], out=np.ones_like(cum),
                      where=machine_load[sender] > 0)
    return delay.sample(rng, r, machine_load)[sender] + total[sender] * share


def _step(optimizer) -> None:
    """``optimizer.step()`` on one thread: the step is memory-bound, and on a machine shared with
    workers a multi-threaded step waits for descheduled threads (measured at 1 M parameters on
    2 cores: 3.3 ms a step on 2 threads, 0.5 ms on 1)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        optimizer.step()
    finally:
        torch.set_num_threads(threads)


def _flatten_parameters(model) -> tuple[torch.Tensor, list]:
    """Make the model's parameters views into one flat float32 vector; returns it and each
    parameter's span.  The master then broadcasts without concatenating every round."""
    params = list(model.parameters())
    bad = [p.dtype for p in params if p.dtype != torch.float32]
    if bad:
        raise ValueError(f"model: parameters must be float32, got {bad[0]}")
    with torch.no_grad():
        flat = torch.cat([p.detach().reshape(-1) for p in params])
    spans, offset = [], 0
    for p in params:
        spans.append((offset, offset + p.numel()))
        p.data = flat[offset:offset + p.numel()].view_as(p)
        offset += p.numel()
    return flat, spans


def _collect(ex, r, t0, n, expected, wait, code, perm, cfg, dropped, log):
    """Results of round ``r`` under the wait policy: ``(rows of B that arrived, their vectors)``.
    Stale results are dropped; busy, failed and timed-out workers are this round's stragglers."""
    times, rows, vecs, answered = [], [], [], 0
    while True:
        now = time.perf_counter() - t0
        t_stop = min(wait.online_stop(times, n, code, rows) if expected > 0 else now,
                     cfg.round_timeout_s)
        if answered >= expected or now >= t_stop:
            if now >= cfg.round_timeout_s and answered < expected:
                log(f"round {r}: timed out after {cfg.round_timeout_s:.1f} s")
            return rows, vecs
        wanted = wait.wanted(len(times), len(times) + expected - answered)
        for res in ex.poll(t_stop - now, wanted):
            if res.round != r:
                continue                                 # stale: an earlier round's straggler
            answered += 1
            if not res.finite:
                log(f"round {r}: worker {res.worker} returned non-finite values; erased")
            elif _usable(res, r, cfg, dropped, log) and res.coded[0] is not None:
                vecs.append(res.coded[0])
                times.append(time.perf_counter() - t0)
                rows.append(int(perm[res.worker]))
                if times[-1] >= wait.online_stop(times, n, code, rows):
                    break                                # the policy stops here (e.g. w-th arrival)


def _decode(code, rows, vecs, counts, rng, r, log, out=None):
    """Decode the arrivals and combine their vectors into the mean gradient (``None``: nothing
    decodable), in ``out`` when it fits.  A worker whose vector is not finite is erased and the
    round decoded again (checked on the combination: one pass a round, not one per worker)."""
    while True:
        d = code.decode(rows, rng=rng)
        covered = float(d.recovered @ counts)
        if not rows or covered <= 0 or not np.any(d.weights):
            return d, None
        g = _combine(d.weights[rows] / covered, vecs, out)
        if np.isfinite(g.sum()) or np.isfinite(g).all():   # (the sum: one pass, no temporary)
            return d, g
        bad = [k for k, v in enumerate(vecs) if not np.isfinite(v).all()]
        if not bad:
            log(f"round {r}: the decoded gradient overflowed; step skipped")
            return d, None
        for k in reversed(bad):
            log(f"round {r}: worker at row {rows[k]} returned non-finite values; erased")
            del rows[k], vecs[k]


def _combine(weights: np.ndarray, vecs: list, out: np.ndarray | None = None) -> np.ndarray:
    """``sum_i weights[i] * vecs[i]`` in one pass per vector (BLAS axpy), in the wire dtype, into
    ``out`` when it fits (a buffer reused across rounds: fresh pages cost page faults)."""
    from scipy.linalg.blas import get_blas_funcs

    g = None
    for w, v in zip(weights, vecs):
        if w == 0.0:
            continue
        if g is None:
            fits = out is not None and out.dtype == v.dtype and out.shape == v.shape
            g = np.multiply(v, v.dtype.type(w), out=out if fits else None)
        else:
            axpy = get_blas_funcs("axpy", (g, v))
            g = axpy(v, g, a=w)
    return g if g is not None else np.zeros_like(vecs[0])


def save_checkpoint(out, cfg, next_round: int, elapsed: float, dropped: set, **state) -> None:
    """``out/checkpoint.pt``: the round to continue from, the config, the dropped workers and
    ``state``; written to a temporary file first, so a crash never leaves a half-written one."""
    tmp = out / "checkpoint.pt.tmp"
    torch.save({"round": next_round, "elapsed": elapsed, "config": cfg.as_dict(),
                "dropped": sorted(dropped), **state}, tmp)
    tmp.replace(out / "checkpoint.pt")


#: settings a resumed run must share with the checkpointed one to continue the same run
SAME_RUN = ("code", "code_params", "dataset", "model", "seed", "batch", "shuffle", "optimizer")


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


def _resumed(out, state) -> tuple[list, set]:
    """``(events, dropped)`` of the checkpointed run: its log so far (kept, and the resume noted)
    and the workers it had dropped for good."""
    log = out / "events.log"
    events = log.read_text().splitlines() if log.is_file() else []
    events.append(f"resumed from the checkpoint at round {state['round']}")
    return events, set(state.get("dropped", ()))


def plot_training(records: list[Record], path, title: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if not records:
        return
    fig, ax = plt.subplots(1, 3, figsize=(13, 3.6))
    r = [x.round for x in records]
    loss = [x.loss for x in records]
    ax[0].plot([x.elapsed_s for x in records], loss)
    ax[0].set(xlabel="wall-clock time (s)", ylabel="training loss", title="loss vs time")
    ax[1].plot(r, loss)
    ax[1].set(xlabel="round", ylabel="training loss", title="loss vs round")
    ax[2].plot(r, [x.recovered_fraction for x in records], label="recovered fraction")
    ax[2].set(xlabel="round", ylabel="fraction of the gradient", ylim=(-0.05, 1.05),
              title="recovered per round")
    for a in ax:
        a.grid(alpha=0.3)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
