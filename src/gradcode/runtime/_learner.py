"""The PyTorch side of the engine's learner contract: ``M`` model replicas (``M = T + 1`` for a
sequential scheme, paper 4 App. I; the given model itself when ``M = 1``), each with its own
optimizer and one flat float32 parameter vector, stepped with decoded gradients."""

from __future__ import annotations

import copy
import time

import numpy as np
import torch

from ..analysis import refine
from ..engine import combine


class TorchLearner:
    """``params()`` the vector(s) broadcast to the workers; ``apply(step, vectors)`` combines a
    decoded job's coded results into the mean gradient over the samples it covers and steps
    model ``step.model``; ``evaluate(round)`` the mean loss on the evaluation sample (training
    data) over the models and, every ``cfg.eval_every`` rounds and at the last, the held-out
    ``test_set``'s mean loss and accuracy (``task``: binary or multiclass; NaN for regression).
    A sliced code's step (``coefficients (n_vectors, m)``): each column combined (``combine``)
    into one slice, the slices concatenated and trimmed to the parameters' length."""

    def __init__(self, model, M: int, cfg, counts: np.ndarray, loss_fn, eval_set,
                 test_set=None, task: str = "regression"):
        self.models = [model] if M == 1 else [copy.deepcopy(model) for _ in range(M)]
        self.flats, self.spans = zip(*(_flatten_parameters(m) for m in self.models))
        self.optims = [torch.optim.SGD(m.parameters(), lr=cfg.lr, momentum=cfg.momentum)
                       if cfg.optimizer == "sgd" else torch.optim.Adam(m.parameters(), lr=cfg.lr)
                       for m in self.models]
        self.counts, self.loss_fn, (self.X_eval, self.y_eval) = counts, loss_fn, eval_set
        self.test_set, self.task = test_set, task
        self.every, self.rounds = cfg.eval_every, cfg.rounds
        self._buf, self._g32 = None, np.empty(len(self.flats[0]), np.float32)   # reused

    def params(self) -> np.ndarray:
        if len(self.models) == 1:
            return self.flats[0].numpy()             # the executor snapshots it (one broadcast)
        return np.stack([f.numpy() for f in self.flats])      # (M, P): one broadcast

    def apply(self, step, vectors):
        covered = float(step.recovered @ self.counts)
        if covered <= 0 or not np.any(step.coefficients):
            return f"nothing decodable from {len(vectors)} results"
        coef = step.coefficients / covered
        wide = step.wire is not None           # float32 rounding to bound: decode in float64
        if coef.ndim == 2:                     # a sliced code: column u decodes slice u
            g = np.concatenate([combine(coef[:, u], vectors, wide=wide)
                                for u in range(coef.shape[1])])
            g = g[:len(self._g32)]             # the slices' zero padding
        else:
            g = combine(coef, vectors, self._buf, wide)
        if wide:                               # within WIRE_TARGET of float64 messages
            g = refine(g, coef, step.wire)[0]
        if not (np.isfinite(g.sum()) or np.isfinite(g).all()):   # (the sum: one pass)
            return "the decoded gradient overflowed"
        self._buf = g
        if g.dtype == np.float32:
            g32 = torch.from_numpy(g)
        else:
            np.copyto(self._g32, g, casting="same_kind")
            g32 = torch.from_numpy(self._g32)
        m = step.model
        for p, (a, b) in zip(self.models[m].parameters(), self.spans[m]):
            p.grad = g32[a:b].view_as(p)
        _step(self.optims[m])
        return g

    def evaluate(self, round: int) -> dict:
        """``loss`` every round, ``test_loss``/``test_accuracy`` when due, and ``eval_s``."""
        t0 = time.perf_counter()
        with torch.no_grad():
            out = {"loss": float(np.mean([float(self.loss_fn(m(self.X_eval), self.y_eval))
                                          for m in self.models])) / len(self.y_eval)}
        if self.test_set is not None and ((round + 1) % self.every == 0
                                          or round + 1 == self.rounds):
            out.update(self._held_out())
        out["eval_s"] = time.perf_counter() - t0
        return out

    def _held_out(self) -> dict:
        X, y = self.test_set
        losses, accs = [], []
        with torch.no_grad():
            for m in self.models:
                out = m(X)
                losses.append(float(self.loss_fn(out, y)) / len(y))
                if self.task == "multiclass":
                    accs.append(float((out.argmax(-1) == y).float().mean()))
                elif self.task == "binary":
                    accs.append(float(((out > 0).to(y.dtype) == y).float().mean()))
        return {"test_loss": float(np.mean(losses)),
                "test_accuracy": float(np.mean(accs)) if accs else float("nan")}

    def state(self) -> dict:
        return {"models": [m.state_dict() for m in self.models],
                "optimizers": [o.state_dict() for o in self.optims]}

    def load_state(self, state: dict) -> None:
        for m, o, ms, os_ in zip(self.models, self.optims, state["models"], state["optimizers"]):
            m.load_state_dict(ms)
            o.load_state_dict(os_)


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
