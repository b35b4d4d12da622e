"""A user's loss as gradient coding needs it: per partition, a sum and its denominator.

PyTorch's mean-reduced losses divide a sum over the batch by something that depends on the data:
the number of samples or of elements, the summed class weights of the targets, the targets that
are not ignored.  Over the whole training set that mean is ``sum_p S_p / sum_p D_p``: each
partition ``p`` contributes the sum form ``S_p`` of its loss (whose gradient the workers code) and
its denominator ``D_p`` (which every copy of a partition computes alike, so the master needs only
one), and the master divides the decoded sum by the decoded denominator.  That is PyTorch's
full-batch gradient for every loss, to float32 rounding.

``Objective`` finds the pair for any loss, a ``torch.nn`` loss object or a function:

- every call of one of ``torch.nn.functional``'s losses made while the loss runs is observed (a
  ``TorchFunctionMode``), with the denominator of its mean by PyTorch's own rule
  (``DENOMINATORS``): the partition's sum form is then ``D * value``, so that whatever the
  function adds to that mean (a penalty) is weighted as the full batch weights it.  Several
  averaged calls in one loss take the first one's denominator: exact when the others keep the
  same ratio to it in every partition (all proportional to the samples, say);
- a loss returning one value per sample (``reduction="none"``): its sum over its elements
  ``numel`` (its mean, as a trainer takes it);
- a sum (``reduction="sum"``, or a function summing): the objective is the sum over the whole
  training set, so the decoded mean over the samples covered is multiplied by all the round's
  samples (``kind`` ``"sum"``);
- a function averaging by hand (no observed call): taken as a mean over the samples;
- a function may also return ``(sum, denominator)`` itself, for any other normalisation.

Which of a mean or a sum the loss is comes from one probe, its value on two rows against the
same rows twice: a mean stays (a penalty added to it too), a sum doubles.  A sum plus a term that
does not grow with the samples (a penalty) fails the probe, since that term would be counted
once per partition: add it to a mean, or use weight decay.  Anything else is refused in one line
naming ``loss_fn``.
"""

from __future__ import annotations

import inspect
import math

import torch
from torch.nn import functional as F
from torch.overrides import TorchFunctionMode

from ._data import concat, forward
from ._layout import evaluating

REDUCTIONS = ("sum", "mean", "none", "batchmean")


class LossError(ValueError):
    """The loss is in none of the forms ``Objective`` accepts (its message names ``loss_fn``)."""


def _elements(none, a):
    return none.numel()


def _classes(none, a):
    """Class indices: the summed weights of the targets not ignored; probabilities: elements."""
    target = a["target"]
    if target.is_floating_point():
        return none.numel()
    kept = target[target != a.get("ignore_index", -100)]
    weight = a.get("weight")
    return kept.numel() if weight is None else weight[kept].sum()


def _weighted(none, a):
    """``mse_loss``, ``l1_loss``, ``huber_loss`` with a ``weight``: its sum."""
    weight = a.get("weight")
    return none.numel() if weight is None else weight.sum()


def _kl(none, a):
    batch = a["input"].dim() and a["input"].shape[0]
    return (batch or 1) if a["reduction"] == "batchmean" else none.numel()


#: the functional losses observed, and the denominator of each one's mean (PyTorch's rules)
DENOMINATORS = {
    F.cross_entropy: _classes, F.nll_loss: _classes, F.kl_div: _kl, F.ctc_loss: _elements,
    F.mse_loss: _weighted, F.l1_loss: _weighted, F.huber_loss: _weighted,
    **{f: _elements for f in (
        F.smooth_l1_loss, F.binary_cross_entropy, F.binary_cross_entropy_with_logits,
        F.poisson_nll_loss, F.gaussian_nll_loss, F.soft_margin_loss, F.hinge_embedding_loss,
        F.margin_ranking_loss, F.cosine_embedding_loss, F.multilabel_margin_loss,
        F.multilabel_soft_margin_loss, F.multi_margin_loss, F.triplet_margin_loss,
        F.triplet_margin_with_distance_loss)},
}
_SIGNATURES = {f: inspect.signature(f) for f in DENOMINATORS}


class _Observed(TorchFunctionMode):
    """While active, every call of a loss in ``DENOMINATORS`` is computed per element
    (``reduction="none"``) and reduced here: ``seen`` gets ``(reduction, denominator, name)``;
    a mean is returned as ``sum / denominator`` (``sum`` where the denominator is 0: every target
    ignored gives a zero contribution rather than PyTorch's NaN)."""

    def __init__(self):
        super().__init__()
        self.seen: list[tuple] = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        rule = DENOMINATORS.get(func)
        if rule is None:
            return func(*args, **kwargs)
        bound = _SIGNATURES[func].bind(*args, **kwargs)
        bound.apply_defaults()
        a = bound.arguments
        reduction = a["reduction"]
        if a.get("size_average") is not None or a.get("reduce") is not None:
            reduction = _legacy(a["size_average"], a["reduce"])
            a["size_average"] = a["reduce"] = None
        if reduction not in ("mean", "sum", "batchmean"):
            return func(*bound.args, **bound.kwargs)
        a["reduction"] = "none"
        none = func(*bound.args, **bound.kwargs)
        if func is F.ctc_loss and reduction == "mean":   # each sequence by its target length
            lengths = torch.as_tensor(a["target_lengths"], dtype=none.dtype, device=none.device)
            none = none / lengths.clamp(min=1)
        total = none.sum()
        a["reduction"] = reduction
        if reduction == "sum":
            self.seen.append(("sum", None, func.__name__))
            return total
        d = rule(none, a)
        self.seen.append(("mean", d, func.__name__))
        return total / d if float(d) > 0 else total


def _legacy(size_average, reduce) -> str:
    """The reduction of PyTorch's deprecated ``size_average`` and ``reduce`` (None is True)."""
    if reduce is False:
        return "none"
    return "sum" if size_average is False else "mean"


def samples(target) -> int:
    """The samples in a batch: the targets' first dimension."""
    return int(target.shape[0]) if torch.is_tensor(target) and target.ndim else 1


class Objective:
    """The user's ``loss`` split as the workers and the master need it (module doc).

    ``split(output, target) -> (S, D)``: the batch's sum form (a scalar tensor to differentiate)
    and its denominator (a float); over batches, the mean PyTorch would compute on all of them is
    ``sum S / sum D``.  ``kind`` is ``"mean"`` or ``"sum"`` (then the objective is the sum:
    ``D`` is the batch's samples and the master multiplies the decoded mean by all of them).
    ``probabilities``: the loss takes probabilities (``binary_cross_entropy``), so a binary
    accuracy thresholds outputs at 0.5, not 0.  Picklable (Ray ships it).

    >>> import torch
    >>> obj = Objective.of(torch.nn.CrossEntropyLoss(weight=torch.tensor([1.0, 3.0])),
    ...                    torch.nn.Linear(2, 2), torch.zeros(2, 2), torch.tensor([0, 1]))
    >>> obj.kind
    'mean'
    >>> S, D = obj.split(torch.zeros(3, 2), torch.tensor([0, 1, 1]))   # weights 1 + 3 + 3
    >>> round(float(S), 4), D, round(float(S) / D, 4)                  # log 2, as PyTorch's
    (4.852, 7.0, 0.6931)
    """

    def __init__(self, loss, kind: str = "mean", by_hand: bool = False,
                 probabilities: bool = False, observed: tuple = (), outputs: int = 1):
        self.loss, self.kind, self.by_hand = loss, kind, by_hand
        self.probabilities, self.observed, self.outputs = probabilities, observed, outputs

    @classmethod
    def of(cls, loss, model, X, y) -> "Objective":
        """``loss``'s objective, found on the rows ``X, y`` (two or more) in evaluation mode;
        ``LossError`` naming ``loss_fn`` for a loss in none of the accepted forms."""
        if not callable(loss):
            raise LossError(f"loss_fn: expected a torch.nn loss or a function of (output, "
                            f"target), got {type(loss).__name__}")
        reduction = getattr(loss, "reduction", None)
        if reduction is not None and reduction not in REDUCTIONS:
            raise LossError(f"loss_fn: reduction: expected one of {', '.join(REDUCTIONS)}, got "
                            f"{reduction!r}")
        with evaluating(model):
            out = forward(model, X)
            with _Observed() as seen:
                value = loss(out, y)
        names = tuple(name for _, _, name in seen.seen)
        about = dict(probabilities="binary_cross_entropy" in names, observed=names,
                     outputs=int(out.shape[-1]) if torch.is_tensor(out) and out.ndim > 1 else 1)
        if isinstance(value, tuple) or (torch.is_tensor(value) and value.ndim):
            return cls(loss, "mean", **about)
        kinds = {kind for kind, _, _ in seen.seen}
        kind = _probed(loss, model, X, y, value, "sum" if kinds == {"sum"} else "mean")
        return cls(loss, kind, not kinds, **about)

    def split(self, output, target) -> tuple:
        """``(S, D)`` of one batch (class doc)."""
        with _Observed() as seen:
            value = self.loss(output, target)
        if isinstance(value, tuple):
            if len(value) != 2:
                raise LossError(f"loss_fn: a tuple must be (sum, denominator), got "
                                f"{len(value)} values")
            return value[0], float(value[1])
        if not torch.is_tensor(value):
            raise LossError(f"loss_fn: expected a tensor, got {type(value).__name__}")
        if value.ndim:                                    # one loss per sample: their mean
            return value.sum(), float(value.numel())
        n = float(samples(target))
        if self.kind == "sum":
            return value, n
        means = [d for kind, d, _ in seen.seen if kind == "mean"]
        d = float(means[0]) if means else n
        return value * d, d

    def __repr__(self) -> str:
        return f"Objective({self.loss!r}, {self.kind!r})"


def _probed(loss, model, X, y, once, otherwise: str) -> str:
    """``"sum"`` if the loss's value doubles on the same rows twice, ``"mean"`` if it stays
    (``otherwise`` when it is 0 or not finite: nothing to tell; a non-finite loss is reported
    where training meets it); LossError if neither."""
    with evaluating(model):
        twice = loss(forward(model, concat([X, X])), torch.cat([y, y]))
    a, b = float(once), float(twice)
    if a == 0.0 or not (math.isfinite(a) and math.isfinite(b)):
        return otherwise
    if abs(b - 2 * a) <= 1e-4 * abs(a):
        return "sum"
    if abs(b - a) <= 1e-4 * abs(a):
        return "mean"
    raise LossError(f"loss_fn: expected a loss summed or averaged over the samples; on "
                    f"{len(y)} rows it gives {a:.6g}, on the same rows twice {b:.6g} "
                    f"(a sum gives {2 * a:.6g}, a mean {a:.6g}); or return (sum, denominator)")
