"""What makes a figure readable on its own, checked on every figure the project writes.

``problems(fig)`` lists, in words, what a reader of ``fig`` alone would miss: no figure title
(a single panel's own title will do), an axis without a label, panel letters used twice, tick
labels that overlap, a legend drawn over the data.  The test suite checks every figure any test
saves (``tests/conftest.py``), so every plot the project writes is held to it.
"""

from __future__ import annotations

import re

import numpy as np

#: share of a panel's data points a legend may cover ("best" placement cannot always avoid all)
LEGEND_COVER = 0.02


def problems(fig) -> list[str]:
    """What a reader of ``fig`` alone would miss, in words (module docstring); empty when none.
    ``fig`` needs a canvas that renders (pyplot's, or Agg's as here).

    >>> from matplotlib.figure import Figure
    >>> from matplotlib.backends.backend_agg import FigureCanvasAgg
    >>> fig = Figure()
    >>> _ = FigureCanvasAgg(fig)
    >>> ax = fig.subplots()
    >>> _ = ax.plot([0, 1, 2], [1.0, 0.5, 0.4])
    >>> problems(fig)
    ['no figure title', 'panel 1: no x-axis label', 'panel 1: no y-axis label']
    >>> _ = ax.set(title="Training loss", xlabel="round", ylabel="loss")
    >>> problems(fig)
    []
    """
    fig.draw_without_rendering()         # the layout and the text boxes, no pixels (half the
    renderer = fig.canvas.get_renderer()  # time of a draw; the boxes are the same)
    suptitle = fig.get_suptitle().strip()
    out, letters = [], {}
    panels = [ax for ax in fig.axes if ax.get_visible() and ax.axison and _has_data(ax)
              and ax.get_label() != "<colorbar>"]
    if panels and not suptitle and (len(panels) > 1
                                    or not any(ax.get_title().strip() for ax in panels)):
        out.append("no figure title")
    for k, ax in enumerate(panels):
        name = ax.get_title().strip() or f"panel {k + 1}"
        if not _labelled(ax, "x"):
            out.append(f"{name}: no x-axis label")
        if not _labelled(ax, "y"):
            out.append(f"{name}: no y-axis label")
        m = re.match(r"\(([a-z])\)", ax.get_title().strip())
        if m:
            letters.setdefault(m.group(1), []).append(name)
        out += [f"{name}: {p}" for p in _ticks(ax, renderer) + _legend(ax, renderer)]
    out += [f"panel letter ({c}) used by {len(v)} panels" for c, v in letters.items()
            if len(v) > 1]
    return out


def _labelled(ax, which: str) -> bool:
    """The axis has a label, or shares it with a panel that has one (a row sharing y, a column
    sharing x), or its ticks are named categories."""
    get = (lambda a: a.get_xlabel()) if which == "x" else (lambda a: a.get_ylabel())
    if get(ax).strip():
        return True
    shared = ax.get_shared_x_axes() if which == "x" else ax.get_shared_y_axes()
    if any(get(other).strip() for other in shared.get_siblings(ax) if other is not ax):
        return True
    axis = ax.xaxis if which == "x" else ax.yaxis
    texts = [t.get_text().strip() for t in axis.get_ticklabels() if t.get_text().strip()]
    return bool(texts) and not any(_number(t) for t in texts)


def _number(text: str) -> bool:
    try:
        float(text.replace("\u2212", "-").replace("%", ""))
    except ValueError:
        return False
    return True


def _has_data(ax) -> bool:
    return bool(ax.lines or ax.collections or ax.patches or ax.images)


def _ticks(ax, renderer) -> list[str]:
    """Tick labels of one axis whose boxes overlap (unreadable)."""
    out = []
    for axis, which in ((ax.xaxis, "x"), (ax.yaxis, "y")):
        boxes = [t.get_window_extent(renderer) for t in axis.get_ticklabels()
                 if t.get_visible() and t.get_text().strip()]
        boxes.sort(key=lambda b: (b.x0, b.y0))
        for a, b in zip(boxes, boxes[1:]):
            if a.overlaps(b) and a.intersection(a, b).width * a.intersection(a, b).height > 1:
                out.append(f"{which}-axis tick labels overlap")
                break
    return out


def _legend(ax, renderer) -> list[str]:
    """A legend covering more than ``LEGEND_COVER`` of the panel's data points."""
    legend = ax.get_legend()
    if legend is None or not legend.get_visible():
        return []
    box = legend.get_window_extent(renderer)
    twins = [a for a in ax.figure.axes                 # twinx/twiny panels share the space
             if a.get_position().bounds == ax.get_position().bounds]
    lines = [line for a in twins for line in a.lines if len(line.get_xdata())]
    points = [line.get_transform().transform(np.column_stack(line.get_data()).astype(float))
              for line in lines]
    points += [c.get_offset_transform().transform(c.get_offsets()) for a in twins
               for c in a.collections if len(c.get_offsets())]
    if not points:
        return []
    xy = np.concatenate(points)
    xy = xy[np.isfinite(xy).all(axis=1)]
    inside = ((xy[:, 0] >= box.x0) & (xy[:, 0] <= box.x1) & (xy[:, 1] >= box.y0)
              & (xy[:, 1] <= box.y1))
    if len(xy) and inside.mean() > LEGEND_COVER:
        return [f"the legend covers {inside.mean():.0%} of the data points"]
    return []
