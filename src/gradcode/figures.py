"""What makes a figure readable on its own, checked on every figure the project writes.

``problems(fig)`` lists, in words, what a reader of ``fig`` alone would miss: a panel with data
but no title (and no figure title), an axis without a label, panel letters used twice, tick
labels that overlap, a legend drawn over the data.  ``reproduce`` records an experiment's in
``run.json`` (``figure_problems``); the tests require none anywhere.
"""

from __future__ import annotations

import re

import numpy as np

#: share of a panel's data points a legend may cover ("best" placement cannot always avoid all)
LEGEND_COVER = 0.02


def problems(fig) -> list[str]:
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    suptitle = fig._suptitle.get_text().strip() if fig._suptitle is not None else ""
    out, letters = [], {}
    panels = [ax for ax in fig.axes if ax.get_visible() and ax.axison and _has_data(ax)]
    for k, ax in enumerate(panels):
        name = ax.get_title().strip() or f"panel {k + 1}"
        if not ax.get_title().strip() and not suptitle:
            out.append(f"{name}: no title (and no figure title)")
        if not ax.get_xlabel().strip():
            out.append(f"{name}: no x-axis label")
        if not ax.get_ylabel().strip():
            out.append(f"{name}: no y-axis label")
        m = re.match(r"\(([a-z])\)", ax.get_title().strip())
        if m:
            letters.setdefault(m.group(1), []).append(name)
        out += [f"{name}: {p}" for p in _ticks(ax, renderer) + _legend(ax, renderer)]
    out += [f"panel letter ({c}) used by {len(v)} panels" for c, v in letters.items()
            if len(v) > 1]
    return out


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
    points = [line.get_transform().transform(np.column_stack(line.get_data()).astype(float))
              for line in ax.lines if len(line.get_xdata())]
    points += [c.get_offset_transform().transform(c.get_offsets()) for c in ax.collections
               if len(c.get_offsets())]
    if not points:
        return []
    xy = np.concatenate(points)
    xy = xy[np.isfinite(xy).all(axis=1)]
    inside = ((xy[:, 0] >= box.x0) & (xy[:, 0] <= box.x1) & (xy[:, 1] >= box.y0)
              & (xy[:, 1] <= box.y1))
    if len(xy) and inside.mean() > LEGEND_COVER:
        return [f"the legend covers {inside.mean():.0%} of the data points"]
    return []
