"""A user's loss as the sum over samples that gradient coding needs.

Coded workers send sums of partition gradients and the master divides the decoded sum by the
samples it covers, so the loss of a batch must be a *sum* over its samples.  PyTorch's losses
average by default (``reduction="mean"``): taken as it is, each partition's gradient would be
divided by its size a second time and training would barely move.  ``summed`` therefore accepts
every usual form and returns the sum form:

- a loss with a ``reduction`` attribute (every ``torch.nn`` loss, ``"mean"``, ``"none"``,
  ``KLDivLoss``'s ``"batchmean"``): a copy with ``reduction="sum"`` (exactly the sum form, class
  weights included; the user's object is left as it is);
- any other callable: probed once on two rows of the data, against the same two rows twice
  over: a sum doubles (taken as it is), a mean stays (multiplied by the batch size), a
  per-sample vector is summed; anything else is refused.
"""

from __future__ import annotations

import copy

import torch

REDUCTIONS = ("sum", "mean", "none", "batchmean")


class LossError(ValueError):
    """The loss is in none of the forms ``summed`` accepts (its message names ``loss_fn``)."""


class Summed:
    """``loss(output, target)`` as a sum over the samples: ``kind`` ``"mean"`` multiplies by
    the batch size, ``"none"`` sums the per-sample losses.  Picklable (Ray ships it)."""

    def __init__(self, loss, kind: str):
        self.loss, self.kind = loss, kind

    def __call__(self, output, target):
        value = self.loss(output, target)
        if self.kind == "none":
            return value.sum()
        return value * len(target)

    def __repr__(self) -> str:
        return f"Summed({self.loss!r}, {self.kind!r})"


def summed(loss, model, X, y):
    """``loss`` as a sum over samples (module doc); ``X, y`` two or more rows to probe a plain
    callable with.  ``LossError`` (a ValueError) naming ``loss_fn`` when it is neither a sum
    nor a mean."""
    reduction = getattr(loss, "reduction", None)
    if reduction is None:
        return _probed(loss, model, X, y)
    if reduction not in REDUCTIONS:
        raise LossError(f"loss_fn: reduction: expected one of {', '.join(REDUCTIONS)}, got "
                         f"{reduction!r}")
    if reduction == "sum":
        return loss
    loss = copy.deepcopy(loss)
    loss.reduction = "sum"
    return loss


def _probed(loss, model, X, y):
    """A plain callable: compare its value on ``X, y`` with its value on them twice."""
    training = model.training
    model.eval()                           # dropout would make the two passes differ
    try:
        with torch.no_grad():
            once = loss(model(X), y)
            twice = loss(model(torch.cat([X, X])), torch.cat([y, y]))
    finally:
        model.train(training)
    if torch.is_tensor(once) and once.ndim and once.shape[0] == len(y):
        return Summed(loss, "none")        # one loss per sample
    a, b = float(once), float(twice)
    if a == 0.0 or abs(b - 2 * a) <= 1e-4 * abs(a):
        return loss                        # a sum (or nothing to tell: taken as given)
    if abs(b - a) <= 1e-4 * abs(a):
        return Summed(loss, "mean")
    raise LossError(f"loss_fn: expected a loss summed or averaged over the samples; on "
                     f"{len(y)} rows it gives {a:.6g}, on the same rows twice {b:.6g} "
                     f"(a sum gives {2 * a:.6g}, a mean {a:.6g})")
