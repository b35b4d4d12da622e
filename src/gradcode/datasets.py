"""Datasets shared by the simulator and the runtime (NumPy arrays; no downloads).

* ``synthetic``: paper 1's Gaussian mixture for logistic regression: x ~ 1/2 N(mu1, I) +
  1/2 N(mu2, I), y ~ Ber(p) with p = 1 / (exp(2 x^T beta*) + 1), dimension p = 100.
* scikit-learn's bundled sets (``diabetes``, ``iris``, ``digits``, ``breast_cancer``), standardised.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Dataset:
    """A dataset as NumPy arrays: features ``X (samples, features)``, targets ``y`` (class indices
    as floats for a classification ``task``), ``classes`` (1 for regression).

    >>> d = Dataset("toy", np.zeros((3, 2)), np.array([0.0, 1.0, 1.0]), "binary", classes=2)
    >>> d.n_samples, d.X.shape
    (3, (3, 2))
    """

    name: str
    X: np.ndarray
    y: np.ndarray
    task: str          # "regression", "binary" or "multiclass"
    classes: int = 1

    @property
    def n_samples(self) -> int:
        return len(self.y)


DATASETS = {
    "synthetic": "paper 1 Gaussian-mixture logistic data (p=100 features, binary); model: logistic",
    "diabetes": "scikit-learn diabetes (442 x 10, regression); model: linear",
    "iris": "scikit-learn iris (150 x 4, 3 classes); model: softmax",
    "digits": "scikit-learn digits (1797 x 64 = 8x8 images, 10 classes); model: softmax / mlp / cnn",
    "breast_cancer": "scikit-learn breast cancer (569 x 30, binary); model: logistic",
}


def synthetic_mixture(n_samples: int, p: int, rng: np.random.Generator) -> Dataset:
    """Paper 1's artificial dataset (Sec. Experiments), ``mu1, mu2, beta*`` drawn from ``rng``.

    >>> d = synthetic_mixture(200, p=5, rng=np.random.default_rng(0))
    >>> d.X.shape, d.task, sorted(set(d.y.tolist()))
    ((200, 5), 'binary', [0.0, 1.0])
    """
    mu1, mu2 = rng.standard_normal(p) / np.sqrt(p), rng.standard_normal(p) / np.sqrt(p)
    beta = rng.standard_normal(p) / np.sqrt(p)
    which = rng.random(n_samples) < 0.5
    X = np.where(which[:, None], mu1, mu2) + rng.standard_normal((n_samples, p))
    prob = 1.0 / (np.exp(2 * X @ beta) + 1.0)
    y = (rng.random(n_samples) < prob).astype(float)
    return Dataset("synthetic", X, y, "binary", 2)


def load_dataset(name: str, rng: np.random.Generator | None = None, n_samples: int = 4000,
                 p: int = 100) -> Dataset:
    """Load (or generate) ``name``; see ``DATASETS``.

    >>> iris = load_dataset("iris")                     # bundled with scikit-learn, standardised
    >>> iris.X.shape, iris.task, iris.classes
    ((150, 4), 'multiclass', 3)
    >>> round(float(iris.X.mean()), 6), round(float(iris.X.std()), 6)
    (0.0, 1.0)
    >>> load_dataset("synthetic", n_samples=100, p=10).X.shape
    (100, 10)
    """
    rng = rng if rng is not None else np.random.default_rng(0)
    if name == "synthetic":
        return synthetic_mixture(n_samples, p, rng)
    if name not in DATASETS:
        raise ValueError(f"dataset: unknown {name!r}; expected one of {', '.join(DATASETS)}")
    try:
        from sklearn import datasets as skd
    except ImportError:
        raise ValueError(f"dataset: {name!r} needs scikit-learn (pip install scikit-learn)") from None
    raw = getattr(skd, f"load_{name}")()
    X = np.asarray(raw.data, float)
    X = (X - X.mean(0)) / np.where(X.std(0) > 0, X.std(0), 1.0)
    y = np.asarray(raw.target, float)
    if name == "diabetes":
        return Dataset(name, X, (y - y.mean()) / y.std(), "regression")
    classes = int(y.max()) + 1
    return Dataset(name, X, y, "binary" if classes == 2 else "multiclass", classes)


#: the models gradcode trains (the simulator's NumPy ones and the runtime's PyTorch ones: the
#: same names, cnn the runtime's alone) and the tasks each one fits
MODEL_TASKS = {"linear": ("regression",), "logistic": ("binary",),
               "softmax": ("binary", "multiclass"), "mlp": ("regression", "binary", "multiclass"),
               "cnn": ("binary", "multiclass")}
#: the datasets whose rows are images (what the cnn needs)
IMAGE_DATASETS = ("digits", "fashion-mnist")


def check_model(model: str, dataset: str, task: str) -> None:
    """ValueError naming ``model`` unless it fits ``dataset`` (of ``task``): the one rule of
    ``simulate``, ``tune`` and ``train``.

    >>> check_model("softmax", "iris", "multiclass")
    >>> check_model("softmax", "diabetes", "regression")
    Traceback (most recent call last):
    ...
    ValueError: model: 'softmax' fits binary or multiclass data; dataset 'diabetes' is regression (models for it: linear, mlp)
    """
    if model not in MODEL_TASKS:
        raise ValueError(f"model: unknown {model!r}; expected one of {', '.join(MODEL_TASKS)}")
    fits = [m for m, tasks in MODEL_TASKS.items() if task in tasks
            and (m != "cnn" or dataset in IMAGE_DATASETS)]
    if model not in fits:
        what = (" or ".join(MODEL_TASKS[model]) + " data" if task not in MODEL_TASKS[model]
                else "an image dataset (" + ", ".join(IMAGE_DATASETS) + ")")
        kind = f"is {task}" if task not in MODEL_TASKS[model] else "is not one"
        raise ValueError(f"model: {model!r} fits {what}; dataset {dataset!r} {kind} (models for "
                         f"it: {', '.join(fits)})")
