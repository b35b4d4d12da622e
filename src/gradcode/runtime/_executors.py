"""Executor construction, and measuring the workers' speeds for heterogeneity-aware codes.

``measure_speeds`` is paper 3's premise made operational: the heter codes allocate partitions in
proportion to each worker's throughput ``c_i`` (Sec. IV, eq. 5), which a user rarely knows.
Before training, every worker computes the gradient of the same probe batch for a few rounds
(with the injected compute model, so simulated slow machines are slow here too); ``c_i`` is the
probe's load over the worker's median time, scaled so the fastest worker has speed 1.
"""

from __future__ import annotations

import numpy as np

from ..engine import Outcome

from ._backends import backend
from ._worker import GradientWorkers


def make_executor(cfg, n: int, held, partitions: dict, model, loss_fn, dtype):
    """``(executor, one-line description)`` for ``cfg.backend`` (the table ``BACKENDS``): worker
    ``i`` holds the partitions ``held[i]`` (a dict partition -> (X, y) tensors in
    ``partitions``)."""
    if cfg.actors is not None and cfg.actors > n:
        raise ValueError(f"actors: at most one per worker, n = {n}, got {cfg.actors}")
    workers = GradientWorkers(model, loss_fn, tuple(tuple(int(j) for j in h) for h in held),
                              partitions, cfg.seed, cfg.batch, dtype, resolve_device(cfg.device))
    return backend(cfg.backend).from_config(cfg, workers)


def resolve_device(device: str) -> str:
    """``cpu`` or ``cuda``: ``auto`` is cuda where this machine has it; ``cuda`` without one is
    refused by name."""
    import torch
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise ValueError("device: cuda asked, but torch sees no CUDA device here (use cpu or auto)")
    return device


def measure_speeds(cfg, n: int, model, loss_fn, data, compute, rng, rounds: int,
                   probe: int = 256) -> list[float]:
    """Throughputs ``c_i`` of ``n`` workers measured over ``rounds`` probe rounds (module doc)."""
    if not isinstance(rounds, int) or rounds < 1:
        raise ValueError(f"measure_speeds: expected an integer >= 1 of probe rounds, got {rounds!r}")
    size = min(probe, len(data))
    part = {0: data.take(np.arange(size))}
    load = size / len(data)
    ex, _ = make_executor(cfg, n, [[0]] * n, part, model, loss_fn, np.float32)
    params = np.concatenate([p.detach().reshape(-1).numpy() for p in model.parameters()])
    seconds = np.full((rounds, n), np.nan)
    try:
        ex.ping()
        for r in range(rounds):
            delays = compute.sample(rng, r, np.full(n, load))
            ex.submit(r, params, [[(r, [0], [1.0])]] * n, delays)
            got = 0
            while got < n and ex.elapsed() < cfg.round_timeout_s:
                for res in ex.poll(cfg.round_timeout_s, n - got):
                    if res.round == r and res.status is Outcome.ARRIVED:
                        seconds[r, res.worker] = res.seconds
                    got += res.round == r
            ex.end_round(r)
    finally:
        ex.close()
    t = np.nanmedian(seconds, axis=0) if np.isfinite(seconds).any(axis=0).all() else None
    if t is None:
        raise ValueError("measure_speeds: some workers never answered a probe round "
                         f"(timeout {cfg.round_timeout_s} s)")
    c = 1.0 / np.maximum(t, 1e-9)
    return [float(f"{x:.3g}") for x in c / c.max()]
