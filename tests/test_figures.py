"""``gradcode.figures.problems``, the check every saved figure passes (``tests/_quick.py``): what
it measures on the laid-out figure (tick labels' and legends' boxes), not only its texts."""

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from gradcode.figures import problems


def _figure(**kwargs):
    fig = Figure(**kwargs)
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    ax.set(title="A panel", xlabel="x", ylabel="y")
    return fig, ax


def test_overlapping_tick_labels_are_found():
    fig, ax = _figure(figsize=(2, 2))
    x = np.arange(30)
    ax.plot(x, x)
    ax.set_xticks(x, [f"label {i}" for i in x])
    assert problems(fig) == ["A panel: x-axis tick labels overlap"]
    ax.set_xticks(x[::10], [f"{i}" for i in x[::10]])
    assert problems(fig) == []


def test_a_legend_over_the_data_is_found():
    fig, ax = _figure(figsize=(3, 3))
    ax.plot(np.linspace(0, 1, 200), np.full(200, 0.5), label="a line across the panel")
    ax.legend(loc="center")
    found = problems(fig)
    assert len(found) == 1 and found[0].startswith("A panel: the legend covers"), found
    ax.legend(loc="upper left")
    assert problems(fig) == []
