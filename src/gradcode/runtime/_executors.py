"""Executor construction, and measuring the workers' speeds for heterogeneity-aware codes.

``measure_speeds`` is paper 3's premise made operational: the heter codes allocate partitions in
proportion to each worker's throughput ``c_i`` (Sec. IV, eq. 5), which a user rarely knows.
Before training, every worker computes the gradient of the same probe batch for a few rounds
(with the injected compute model, so simulated slow machines are slow here too); ``c_i`` is the
probe's load over the worker's median time, scaled so the fastest worker has speed 1.
"""

from __future__ import annotations

import numpy as np

from ..codes import from_matrix
from ..engine import All, BackendOptions, Loop
from ..stragglers import Compute, Constant

from ._backends import backend
from ._worker import GradientWorkers


def make_executor(cfg, held, partitions: dict, model, objective, layout, dtype,
                  keep: int = 1, rows: dict | None = None):
    """The executor of ``cfg.backend`` (the table ``BACKENDS``; its ``description`` says where
    the workers run) for ``len(held)`` workers: worker ``i`` holds the partitions ``held[i]`` (a
    dict partition -> (X, y) tensors in ``partitions``; ``rows`` their sample indices) and keeps
    its rounding residuals of ``keep`` rounds.  The backend is given the ``BackendOptions`` of
    ``cfg`` (the device resolved) and the workers' factory, through which their data travels."""
    device = resolve_device(cfg.device)
    workers = GradientWorkers(model, objective, layout,
                              tuple(tuple(int(j) for j in h) for h in held), partitions,
                              cfg.seed, cfg.batch, dtype, device, keep, rows,
                              cfg.micro_batch, cfg.precision, cfg.loader_workers)
    return backend(cfg.backend).from_config(BackendOptions.of(cfg, device=device), workers)


def resolve_device(device: str) -> str:
    """``cpu``, ``cuda`` or ``cuda:K``: ``auto`` is cuda where this machine has it; ``cuda``
    without one, or a GPU K it does not have, is refused by name."""
    import torch
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda"):
        if not torch.cuda.is_available():
            raise ValueError(f"device: {device} asked, but torch sees no CUDA device here (use "
                             "cpu or auto)")
        k = int(device.partition(":")[2] or 0)
        if k >= torch.cuda.device_count():
            raise ValueError(f"device: expected cuda:K with K < {torch.cuda.device_count()} "
                             f"(the GPUs torch sees), got {device}")
    return device


def measure_speeds(cfg, n: int, model, objective, layout, data, compute, rng, rounds: int,
                   probe: int = 256) -> list[float]:
    """Throughputs ``c_i`` of ``n`` workers measured over ``rounds`` probe rounds (module doc):
    the engine's loop runs a code whose every worker holds the one probe partition, waiting for
    all, with the injected compute model charging the probe's share of the data."""
    if not isinstance(rounds, int) or rounds < 1:
        raise ValueError(f"measure_speeds: expected an integer >= 1 of probe rounds, got {rounds!r}")
    size = min(probe, len(data))
    load = size / len(data)
    ex = make_executor(cfg, [[0]] * n, {0: data.take(np.arange(size))}, model, objective,
                       layout, np.float32)
    code = from_matrix(np.ones((n, 1)))                   # every worker: the probe batch
    params = layout.vector(model)
    loop = Loop(code, code.planner(rounds), ex, All(), Constant(0.0),
                Compute(compute.seconds_per_load * load, compute.speeds), rng,
                learner=_Probe(params), timeout=cfg.round_timeout_s)
    try:
        ex.ping()
        seconds = np.array([loop.round(r)[1].seconds for r in range(rounds)])
    finally:
        ex.close()
    if not np.isfinite(seconds).any(axis=0).all():
        raise ValueError("measure_speeds: some workers never answered a probe round "
                         f"(timeout {cfg.round_timeout_s} s)")
    c = 1.0 / np.maximum(np.nanmedian(seconds, axis=0), 1e-9)
    return [float(f"{x:.3g}") for x in c / c.max()]


class _Probe:
    """The loop's learner for probe rounds: fixed parameters, no step taken."""

    counts = None

    def __init__(self, params):
        self._params = params

    def params(self):
        return self._params

    def apply(self, step, vectors):
        return "a probe round"

    def evaluate(self, round: int) -> dict:
        return {}
