"""Real optimisation inside the simulator: NumPy models trained with the decoded gradient.

The data are split into the code's partitions (by ``partition_sizes``); each round the partial
gradient ``g_j`` of every partition is its *sum* over a mini-batch drawn with a seed of
(round, partition), so every copy of a partition computes the same thing; the decoded gradient is
``recovered @ G`` and the step uses its mean over the samples it covers.
"""

from __future__ import annotations

import numpy as np

from ..datasets import Dataset, check_model


def _softmax(z):
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


class Model:
    """``init(rng, d, classes) -> params``; ``loss_grad(params, X, y) -> (loss sum, grad sum)``.

    A model of your own: least squares without intercept, trained by ``Trainer`` in a
    simulated cluster (``loss`` is the mean over the samples after each round):

    >>> import gradcode
    >>> from gradcode.datasets import load_dataset
    >>> from gradcode.sim import simulate
    >>> class LeastSquares(Model):
    ...     def init(self, rng, d, classes):
    ...         return np.zeros(d)
    ...     def loss_grad(self, w, X, y):
    ...         r = X @ w - y
    ...         return 0.5 * float(r @ r), X.T @ r
    >>> trainer = Trainer(load_dataset("diabetes"), LeastSquares(), lr=0.2)
    >>> res = simulate(gradcode.make_code("gc-cr", n=4, s=1), "exp:0.1", "decodable", 30,
    ...                trainer=trainer)
    >>> [round(r.loss, 3) for r in res.records[::10]], trainer.w.shape
    ([0.313, 0.244, 0.243], (10,))
    """

    def init(self, rng, d, classes):
        raise NotImplementedError

    def loss_grad(self, w, X, y):
        raise NotImplementedError


class Linear(Model):
    def init(self, rng, d, classes):
        return np.zeros(d + 1)

    def loss_grad(self, w, X, y):
        r = X @ w[:-1] + w[-1] - y
        return 0.5 * float(r @ r), np.append(X.T @ r, r.sum())


class Logistic(Model):
    def init(self, rng, d, classes):
        return np.zeros(d + 1)

    def loss_grad(self, w, X, y):
        z = X @ w[:-1] + w[-1]
        loss = float(np.sum(np.logaddexp(0, z) - y * z))
        r = 1 / (1 + np.exp(-z)) - y
        return loss, np.append(X.T @ r, r.sum())


class Softmax(Model):
    def init(self, rng, d, classes):
        self.shape = (d + 1, classes)
        return np.zeros((d + 1) * classes)

    def loss_grad(self, w, X, y):
        W = w.reshape(self.shape)
        P = _softmax(X @ W[:-1] + W[-1])
        idx = y.astype(int)
        loss = -float(np.sum(np.log(P[np.arange(len(y)), idx] + 1e-300)))
        P[np.arange(len(y)), idx] -= 1
        return loss, np.vstack([X.T @ P, P.sum(0)]).ravel()


class MLP(Model):
    """One hidden tanh layer; a softmax output for classes, a linear one (squared error, as
    ``Linear``) for regression (``classes = 1``)."""

    def __init__(self, hidden: int = 32):
        self.hidden = hidden

    def init(self, rng, d, classes):
        h = self.hidden
        self.dims = (d, h, 1 if classes == 1 else max(classes, 2))
        W1 = rng.standard_normal((d + 1, h)) / np.sqrt(d)
        W2 = rng.standard_normal((h + 1, self.dims[2])) / np.sqrt(h)
        return np.concatenate([W1.ravel(), W2.ravel()])

    def loss_grad(self, w, X, y):
        d, h, k = self.dims
        W1 = w[:(d + 1) * h].reshape(d + 1, h)
        W2 = w[(d + 1) * h:].reshape(h + 1, k)
        H = np.tanh(X @ W1[:-1] + W1[-1])
        Z = H @ W2[:-1] + W2[-1]
        if k == 1:                                # regression: 0.5 (z - y)^2
            P = Z - y[:, None]
            loss = 0.5 * float(np.sum(P ** 2))
        else:
            P = _softmax(Z)
            idx = y.astype(int)
            loss = -float(np.sum(np.log(P[np.arange(len(y)), idx] + 1e-300)))
            P[np.arange(len(y)), idx] -= 1
        gW2 = np.vstack([H.T @ P, P.sum(0)])
        dH = (P @ W2[:-1].T) * (1 - H ** 2)
        gW1 = np.vstack([X.T @ dH, dH.sum(0)])
        return loss, np.concatenate([gW1.ravel(), gW2.ravel()])


MODELS = {"linear": Linear, "logistic": Logistic, "softmax": Softmax, "mlp": MLP}
DEFAULT_MODEL = {"regression": "linear", "binary": "logistic", "multiclass": "softmax"}


class Trainer:
    """Gradient descent on ``data`` with the decoded gradient of each simulated round.

    ``batch``: samples drawn per partition and round (``None``: the whole partition, i.e. full
    gradient descent).  ``lr`` applies to the mean gradient over the recovered samples.

    >>> import gradcode
    >>> from gradcode.datasets import load_dataset
    >>> from gradcode.sim import simulate
    >>> trainer = Trainer(load_dataset("iris"), lr=0.5)            # softmax, iris' default
    >>> res = simulate(gradcode.make_code("gc-cr", n=6, s=1), "exp:0.1", "decodable", 20,
    ...                trainer=trainer)
    >>> round(res.records[0].loss, 3), round(res.records[-1].loss, 3)
    (0.728, 0.325)
    >>> type(trainer.model).__name__, trainer.w.shape, trainer.steps_skipped
    ('Softmax', (15,), 0)
    """

    def __init__(self, data: Dataset, model: str | Model | None = None, lr: float = 0.1,
                 batch: int | None = None, seed: int = 0):
        if not (isinstance(lr, (int, float)) and lr > 0):
            raise ValueError(f"lr: expected a number > 0, got {lr!r}")
        if batch is not None and not (isinstance(batch, (int, np.integer)) and batch >= 1):
            raise ValueError(f"batch: expected an integer >= 1 (samples per partition and round), "
                             f"got {batch!r}")
        if isinstance(model, str) or model is None:
            name = model or DEFAULT_MODEL[data.task]
            if name not in MODELS:
                raise ValueError(f"model: unknown {name!r}; expected one of {', '.join(MODELS)}")
            check_model(name, data.name, data.task)          # the runtime's rule too
            model = MODELS[name]()
        self.data, self.model, self.lr, self.batch, self.seed = data, model, lr, batch, seed

    def start(self, code, rng: np.random.Generator) -> None:
        X, y = self.data.X, self.data.y
        order = rng.permutation(len(y))
        bounds = np.round(np.cumsum(np.r_[0, code.partition_sizes]) * len(y)).astype(int)
        self.parts = [order[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
        self.w = self.model.init(rng, X.shape[1], self.data.classes)
        self.steps_skipped = 0

    def partial_gradients(self, round: int):
        """``(G, counts)``: per-partition gradient sums and sample counts for this round."""
        G, counts = [], []
        for j, idx in enumerate(self.parts):
            if self.batch is not None and len(idx) > self.batch:
                r = np.random.default_rng([self.seed, round, j])
                idx = r.choice(idx, self.batch, replace=False)
            if len(idx):
                G.append(self.model.loss_grad(self.w, self.data.X[idx], self.data.y[idx])[1])
            else:
                G.append(np.zeros_like(self.w))
            counts.append(len(idx))
        return np.array(G), np.array(counts, float)

    def step(self, round: int, recovered: np.ndarray) -> np.ndarray | None:
        """One step with the mean gradient over the ``recovered`` partitions (returned; None
        when they hold no sample and the step is skipped)."""
        G, counts = self.partial_gradients(round)
        covered = float(recovered @ counts)
        if covered <= 0:
            self.steps_skipped += 1
            return None
        g = (recovered @ G) / covered
        self.w = self.w - self.lr * g
        return g

    def loss(self) -> float:
        return self.model.loss_grad(self.w, self.data.X, self.data.y)[0] / self.data.n_samples
