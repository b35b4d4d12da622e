"""Choosing IS-GC's ``w`` (paper 2): how many workers to wait for, by the simulated time to a
target training loss on a delay profile, for every ``w`` at once (``isgc_w_table``) and the
fastest (``pick_isgc_w``)."""

from __future__ import annotations

import math

import numpy as np

from ._search import check_profile
from ._tune import check_load_model


class _Reached(Exception):
    pass


def _time_to_target(code, delay, w, trainer, target_loss, max_rounds, seed):
    """Simulated ``(seconds, rounds)`` until the loss after a round is ``<= target_loss`` when
    the master waits for the fastest ``w`` (``(inf, None)`` if not within ``max_rounds``)."""
    from ._simulate import simulate
    from ..engine import Fastest

    hit = []

    def check(rec):
        if rec.loss <= target_loss:
            hit.append((rec.elapsed_s, rec.round + 1))
            raise _Reached

    try:
        simulate(code, delay, Fastest(w), max_rounds, seed=seed, trainer=trainer, on_record=check)
    except _Reached:
        pass
    return hit[0] if hit else (math.inf, None)


def isgc_w_table(code, delays, alpha: float = 0.0, base_load: float = 0.0, seed: int = 0, *,
                 data=None, model=None, target_loss: float | None = None, max_rounds: int = 200,
                 lr: float = 0.1, batch: int | None = None, ws=None) -> list[dict]:
    """IS-GC's trade-off (paper 2, Sec. VIII): for each w, the mean round time when the master
    waits for the fastest w workers of the load-adjusted profile, the mean fraction of the
    gradient the decoder recovers from them, and ``time_per_recovered_s`` (their ratio, a proxy
    for time to a target loss).

    With a dataset (``data``, a ``gradcode.datasets.Dataset``; ``model`` a name from
    ``gradcode.sim.MODELS`` or a ``Model``, default by task; ``lr``, ``batch`` as for
    ``Trainer``) and ``target_loss``, each row also gets ``time_to_target_s``: the simulated
    time (``simulate`` with ``Fastest(w)`` on the profile replayed round by round, seed
    ``seed``) until the training loss after a round is ``<= target_loss``, ``inf`` if not within
    ``max_rounds`` rounds, and ``rounds_to_target`` (None if not reached).  ``ws``: the w values
    to tabulate (default ``1..n``).

    Exactly one row has ``picked = True``: the w to use (``pick_isgc_w``), the smallest
    ``time_to_target_s`` with a dataset (unless no w reaches the target), else the smallest
    ``time_per_recovered_s``.

    >>> import gradcode
    >>> rng = np.random.default_rng(0)
    >>> D = 0.5 + rng.exponential(0.2, (30, 8))                  # 30 rounds x 8 workers
    >>> rows = isgc_w_table(gradcode.make_code("isgc-cr", n=8, c=2), D)
    >>> [(r["w"], round(r["mean_recovered_fraction"], 3)) for r in rows[::2]]
    [(1, 0.25), (3, 0.583), (5, 0.817), (7, 1.0)]
    >>> [r["w"] for r in rows if r["picked"]]
    [6]

    With a dataset, w is picked by the simulated time to a target training loss:

    >>> from gradcode.datasets import load_dataset
    >>> rows = isgc_w_table(gradcode.make_code("isgc-cr", n=8, c=2), D, ws=[2, 4, 8],
    ...                     data=load_dataset("iris"), target_loss=0.5, lr=0.5)
    >>> [(r["w"], round(r["time_to_target_s"], 2), r["rounds_to_target"], r["picked"])
    ...  for r in rows]
    [(2, 2.11, 4, True), (4, 2.51, 4, False), (8, 4.54, 4, False)]
    """
    from ..datasets import Dataset
    from ..stragglers import Trace
    from ._train import Trainer

    D = check_profile(delays)
    alpha, base_load = check_load_model(alpha, base_load)
    n = code.n_workers
    if n != D.shape[1]:
        raise ValueError(f"delays: the profile has {D.shape[1]} workers, the code {n}")
    if ws is None:
        ws = list(range(1, n + 1))
    else:
        ws = [ws] if np.ndim(ws) == 0 else list(ws)
        if not ws or any(isinstance(w, bool) or not isinstance(w, (int, np.integer))
                         or not 1 <= w <= n for w in ws):
            raise ValueError(f"ws: expected integers w with 1 <= w <= n = {n}, got {ws!r}")
        ws = sorted({int(w) for w in ws})
    trained = data is not None or target_loss is not None or model is not None
    if trained:
        if data is None:
            raise ValueError("data: time to a target loss needs a dataset (gradcode.datasets)")
        if not isinstance(data, Dataset):
            raise ValueError(f"data: expected a gradcode.datasets.Dataset, got {type(data).__name__}")
        if target_loss is None:
            raise ValueError("target_loss: a dataset needs a target loss to pick w by")
        if isinstance(target_loss, bool) or not isinstance(target_loss, (int, float, np.number)) \
                or not math.isfinite(target_loss):
            raise ValueError(f"target_loss: expected a finite number, got {target_loss!r}")
        if isinstance(max_rounds, bool) or not isinstance(max_rounds, (int, np.integer)) \
                or max_rounds < 1:
            raise ValueError(f"max_rounds: expected an integer >= 1, got {max_rounds!r}")
        if not (isinstance(lr, (int, float, np.number)) and lr > 0 and math.isfinite(lr)):
            raise ValueError(f"lr: expected a finite learning rate > 0, got {lr!r}")
        if batch is not None and (isinstance(batch, bool) or not isinstance(batch, (int, np.integer))
                                  or batch < 1):
            raise ValueError(f"batch: expected an integer >= 1 or None, got {batch!r}")
        Trainer(data, model)                                # validates model
    Dl = D + (np.asarray(code.load, float) - base_load) * alpha
    order = np.argsort(Dl, axis=1)
    Ds = np.sort(Dl, axis=1)
    rng = np.random.default_rng(seed)
    rows = []
    for w in ws:
        t = Ds[:, w - 1]
        rec = [code.decode(o[:w], rng=rng).recovered_fraction for o in order]
        row = {"w": w, "mean_round_time_s": float(t.mean()),
               "mean_recovered_fraction": float(np.mean(rec)),
               "time_per_recovered_s": float(t.mean() / max(np.mean(rec), 1e-12))}
        if trained:
            trainer = Trainer(data, model, lr=lr, batch=batch, seed=seed)
            secs, k = _time_to_target(code, Trace(D, alpha, base_load), w, trainer,
                                      float(target_loss), int(max_rounds), seed)
            row.update(time_to_target_s=float(secs), rounds_to_target=k)
        rows.append(row)
    best = pick_isgc_w(rows)
    for r in rows:
        r["picked"] = r is best
    return rows


def pick_isgc_w(rows: list[dict]) -> dict:
    """The row of ``isgc_w_table`` to use: the smallest ``time_to_target_s`` when the table has
    that column and some w reaches the target, else the smallest ``time_per_recovered_s`` (the
    proxy).  Ties go to the smaller w."""
    if not rows:
        raise ValueError("rows: expected a non-empty isgc_w_table")
    timed = [r for r in rows if math.isfinite(r.get("time_to_target_s", math.inf))]
    if timed:
        return min(timed, key=lambda r: (r["time_to_target_s"], r["w"]))
    return min(rows, key=lambda r: (r["time_per_recovered_s"], r["w"]))
