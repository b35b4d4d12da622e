"""The PyTorch side of the engine's learner contract: ``M`` models (``M = T + 1`` for a
sequential scheme, paper 4 App. I; the first is the user's model itself, trained in place, the
others copies of it made before training), each with its own optimizer (and LR scheduler), and
one broadcast vector (``Flat``: trainable parameters and tracked buffers), stepped with decoded
gradients as plain PyTorch steps with the full batch's."""

from __future__ import annotations

import copy
import dataclasses
import time

import numpy as np
import torch

from ..analysis import refine
from ..engine import combine
from ._data import forward, index
from ._layout import Flat, evaluating


def make_optimizer(cfg, optimizer=None):
    """``params -> torch.optim.Optimizer``: the user's factory (checked to return one), or the
    config's ``optimizer`` (sgd with ``momentum``, adam, adamw) with ``lr`` and
    ``weight_decay``."""
    if optimizer is not None:
        def made(params):
            opt = optimizer(params)
            if not isinstance(opt, torch.optim.Optimizer):
                raise ValueError(f"optimizer: expected a function of the parameters returning a "
                                 f"torch.optim.Optimizer, got {type(opt).__name__}")
            return opt
        return made
    kw = {"lr": cfg.lr, "weight_decay": cfg.weight_decay}
    if cfg.optimizer == "sgd":
        return lambda params: torch.optim.SGD(params, momentum=cfg.momentum, **kw)
    cls = torch.optim.AdamW if cfg.optimizer == "adamw" else torch.optim.Adam
    return lambda params: cls(params, **kw)


def check_own(cfg, optimizer, scheduler) -> None:
    """Settings that ``optimizer=`` or ``scheduler=`` would silently override are refused (the
    user's optimizer brings its own learning rate: ``lr`` is then unused)."""
    if optimizer is not None and not callable(optimizer):
        raise ValueError(f"optimizer: expected a function of the parameters returning a "
                         f"torch.optim.Optimizer, got {type(optimizer).__name__}")
    if scheduler is not None and not callable(scheduler):
        raise ValueError(f"scheduler: expected a function of the optimizer returning an LR "
                         f"scheduler, got {type(scheduler).__name__}")
    for name in ("momentum", "weight_decay"):
        if optimizer is not None and getattr(cfg, name):
            raise ValueError(f"{name}: has no effect with optimizer= (your optimizer's own "
                             f"settings apply), got {getattr(cfg, name)!r}")
    if scheduler is not None and cfg.lr_schedule is not None:
        raise ValueError(f"lr_schedule: give it or scheduler=, not both (got "
                         f"{cfg.lr_schedule!r} and a scheduler)")


class TorchLearner:
    """``params()`` the vector(s) broadcast to the workers; ``apply(step, vectors)`` combines a
    decoded job's coded results into the gradient of the objective (``normaliser``) and steps
    model ``step.model``: parameters that no recovered partition used get no gradient (the
    optimizer skips them, as PyTorch's does), tracked buffers become the sample-weighted mean of
    the recovered partitions' (``Layout``); ``evaluate(round)`` steps the schedulers of the
    models that stepped, then measures, in evaluation mode and in batches of ``eval_batch``
    rows (nothing at all with ``eval_every`` 0: ``measures_loss`` False), the loss on the
    evaluation sample (training data) over the models and, every ``cfg.eval_every`` rounds and
    at the last, the held-out ``test_set``'s loss and accuracy (``task``: binary or multiclass;
    NaN for regression).  A sliced code's step (``coefficients (n_vectors, m)``): each column
    combined (``combine``) into one slice, the slices concatenated and trimmed to the
    parameters' length."""

    #: what the master decodes into and the optimizer applies (a float64 decoding, accumulated
    #: in blocks, is rounded once into it: ``engine.combine``)
    decoded_dtype = np.float32

    def __init__(self, model, M: int, cfg, counts: np.ndarray, objective, layout, eval_set,
                 test_set=None, task: str = "regression", optimizer=None, scheduler=None):
        self.models = [model] + [copy.deepcopy(model) for _ in range(M - 1)]
        self.layout, self.objective = layout, objective
        self.flats = [Flat(m, layout) for m in self.models]
        make = make_optimizer(cfg, optimizer)
        self.optims = [make(m.parameters()) for m in self.models]
        self.schedulers = [scheduler(o) if scheduler is not None else None for o in self.optims]
        self.counts, (self.X_eval, self.y_eval) = counts, eval_set
        self.test_set, self.task = test_set, task
        self.every, self.rounds, self.eval_batch = cfg.eval_every, cfg.rounds, cfg.eval_batch
        self.measures_loss = self.every > 0      # eval_every 0: no evaluation at all
        self.steps = 0                    # optimizer steps taken (all models)
        self._stepped: set = set()        # models stepped since the last evaluation
        self._decoded = np.empty(layout.P, self.decoded_dtype)   # reused every step

    def params(self) -> np.ndarray:
        if len(self.models) == 1:
            return self.flats[0].vector()            # the executor snapshots it (one broadcast)
        return np.stack([f.vector() for f in self.flats])     # (M, P + Q): one broadcast

    def normaliser(self, step) -> float | None:
        """What turns a decoded sum into the objective's gradient: one over the decoded
        denominator (the loss's own, which the workers report per partition; else the samples),
        times all the round's samples for a summed loss; None when it covers nothing."""
        rec = np.asarray(step.recovered, float)
        on = rec != 0
        if step.stats is not None and not np.isnan(step.stats[on, 0]).any():
            covered = float(rec[on] @ step.stats[on, 0])
        else:
            covered = float(rec @ self.counts)
        if not covered > 0:
            return None
        return (float(self.counts.sum()) if self.objective.kind == "sum" else 1.0) / covered

    def apply(self, step, vectors):
        norm = self.normaliser(step)
        if norm is None or not np.any(step.coefficients):
            return f"nothing decodable from {len(vectors)} results"
        coef = step.coefficients * norm
        wide = step.wire is not None           # float32 rounding to bound: decode in float64
        out = self._decoded
        if torch.is_tensor(vectors[0]) and coef.ndim == 1:     # messages left on a GPU
            g = _decode_on_device(coef, vectors, step.wire, out)
        elif coef.ndim == 2:                   # a sliced code: column u decodes slice u
            vectors = [_host(v) for v in vectors]
            g = np.concatenate([combine(coef[:, u], vectors, wide=wide)
                                for u in range(coef.shape[1])])
            g = g[:len(out)]                   # the slices' zero padding
            if wide:                           # within WIRE_TARGET of float64 messages
                g = refine(g, coef, _fetched(step.wire))[0]
        else:
            g = combine(coef, vectors, out, wide)
            if wide:                           # the fetched residuals decoded with the rest
                terms = [coef, list(vectors)]

                def add(idx, residuals):
                    terms[0] = np.concatenate([terms[0], coef[idx]])
                    terms[1] += list(residuals)
                    return combine(terms[0], terms[1], out, True)
                g = refine(g, coef, step.wire, add=add)[0]
        if not (np.isfinite(g.sum()) or np.isfinite(g).all()):   # (the sum: one pass)
            return "the decoded gradient overflowed"
        if g is not out:
            np.copyto(out, g, casting="same_kind")
        g32 = torch.from_numpy(out)
        m, flat = step.model, self.flats[step.model]
        on = self._reported(step)
        used = (self.layout.used(step.stats[on]) if step.stats is not None
                else np.ones(len(flat.params), bool))
        for p, (a, b), u in zip(flat.params, flat.param_spans, used):
            p.grad = g32[a:b].view_as(p).to(p.dtype) if u else None
        _step(self.optims[m])
        if flat.buffers and on.any():
            self._set_buffers(flat, step.stats[on], self.counts[on])
        self.steps += 1
        self._stepped.add(m)
        return g

    @staticmethod
    def _reported(step) -> np.ndarray:
        """Per partition: recovered, with a stats row reported (none without stats)."""
        if step.stats is None:
            return np.zeros(len(step.recovered), bool)
        return (np.asarray(step.recovered, float) != 0) & ~np.isnan(step.stats[:, 0])

    @staticmethod
    def _set_buffers(flat, rows: np.ndarray, w: np.ndarray) -> None:
        """Tracked buffers: the mean of the recovered partitions' ``rows``, weighted by their
        samples ``w`` (computed in float64: one partition's, or equal ones, come out exactly)."""
        new = (w @ rows[:, 1 + len(flat.params):]) / w.sum()
        start = flat.buffer_spans[0][0]
        with torch.no_grad():
            for buf, (a, b) in zip(flat.buffers, flat.buffer_spans):
                value = torch.from_numpy(new[a - start:b - start])
                if not buf.is_floating_point():
                    value = value.round()
                buf.copy_(value.view_as(buf))

    def evaluate(self, round: int) -> dict:
        """The schedulers stepped, then ``loss`` every round, ``test_loss``/``test_accuracy``
        when due, and ``eval_s`` (nothing with ``eval_every`` 0)."""
        self._schedule()
        if not self.measures_loss:
            return {}
        t0 = time.perf_counter()
        out = {"loss": float(np.mean([self._measure(m, self.X_eval, self.y_eval)[0]
                                      for m in self.models]))}
        if self.test_set is not None and ((round + 1) % self.every == 0
                                          or round + 1 == self.rounds):
            measured = [self._measure(m, *self.test_set) for m in self.models]
            out["test_loss"] = float(np.mean([x[0] for x in measured]))
            out["test_accuracy"] = float(np.mean([x[1] for x in measured]))
        out["eval_s"] = time.perf_counter() - t0
        return out

    def _schedule(self) -> None:
        """Each stepped model's LR scheduler, once (``ReduceLROnPlateau`` with its model's loss
        on the evaluation sample)."""
        for m in sorted(self._stepped):
            sched = self.schedulers[m]
            if sched is None:
                continue
            if isinstance(sched, torch.optim.lr_scheduler.ReduceLROnPlateau):
                sched.step(self._measure(self.models[m], self.X_eval, self.y_eval)[0])
            else:
                sched.step()
        self._stepped.clear()

    def _measure(self, model, X, y) -> tuple[float, float]:
        """``(loss, accuracy)`` of ``model`` on ``X, y``: the objective's mean (a summed
        loss: per sample), in evaluation mode and batches of ``eval_batch`` rows; accuracy NaN
        for regression."""
        S = D = right = 0.0
        with evaluating(model):
            for a in range(0, len(y), self.eval_batch):
                part = slice(a, a + self.eval_batch)
                Xb, yb = index(X, part), y[part]
                out = forward(model, Xb)
                s, d = self.objective.split(out, yb)
                S, D = S + float(s), D + d
                right += self._right(out, yb)
        accuracy = right / len(y) if self.task in ("multiclass", "binary") else float("nan")
        return S / D if D > 0 else float("nan"), accuracy

    def _right(self, out, y) -> float:
        if not torch.is_tensor(out):                 # a model returning several outputs
            return float("nan")
        if self.task == "multiclass":
            return float((out.argmax(-1) == y).sum())
        if self.task == "binary":
            threshold = 0.5 if self.objective.probabilities else 0.0
            return float(((out > threshold).to(y.dtype) == y.reshape(out.shape)).sum())
        return 0.0

    def state(self) -> dict:
        return {"models": [m.state_dict() for m in self.models],
                "optimizers": [o.state_dict() for o in self.optims],
                "schedulers": [s.state_dict() if s is not None else None
                               for s in self.schedulers]}

    def load_state(self, state: dict) -> None:
        for m, o, ms, os_ in zip(self.models, self.optims, state["models"], state["optimizers"]):
            m.load_state_dict(ms)
            o.load_state_dict(os_)
        for s, ss in zip(self.schedulers, state.get("schedulers", [])):
            if s is not None and ss is not None:
                s.load_state_dict(ss)


def _host(v):
    return v.cpu().numpy() if torch.is_tensor(v) else v


def _fetched(wire):
    """``wire`` whose fetched residuals are NumPy arrays."""
    fetch = wire.fetch
    return dataclasses.replace(wire, fetch=lambda idx: (None if (got := fetch(idx)) is None
                                                        else [_host(e) for e in got]))


def _decode_on_device(coef: np.ndarray, vectors: list, wire, out: np.ndarray) -> np.ndarray:
    """``sum_i coef_i vectors_i`` of messages on a GPU, decoded there (float64 where ``wire``
    says float32 rounding is to be bounded, the fetched residuals decoded with the rest,
    ``refine``), and copied to the host's ``out`` once."""
    dt = torch.float64 if wire is not None or bool(np.any(coef < 0)) else vectors[0].dtype
    terms = [list(coef), list(vectors)]

    def decode():
        g = torch.zeros(vectors[0].shape, dtype=dt, device=vectors[0].device)
        for w, v in zip(*terms):
            if w != 0.0:
                g.add_(v, alpha=float(w))
        return g

    g = decode()
    if wire is not None:
        def add(idx, residuals):
            terms[0] += list(coef[idx])
            terms[1] += list(residuals)
            return decode()
        g = refine(g, coef, wire, add=add)[0]
    torch.from_numpy(out).copy_(g)
    return out


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
