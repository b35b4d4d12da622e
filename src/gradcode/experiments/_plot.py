"""Figure helpers shared by the experiments: panel styling, log axes, grouped bars, legends."""

from __future__ import annotations


def panel(ax, title, xlabel=None, ylabel=None, grid="both", which="major"):
    """The experiments' panel style: a 10-pt title, axis labels, a light grid (``grid``: the
    axis it is drawn for, "both", "x" or "y"; ``which``: "major", "minor" or "both" ticks)."""
    ax.set_title(title, fontsize=10)
    if xlabel is not None:
        ax.set_xlabel(xlabel)
    if ylabel is not None:
        ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3, axis=grid, which=which)


def plain_log(ax, which="y", subs=None):
    """Log scale on axis ``which`` ("x" or "y") with plain tick labels (``0.5``, not
    ``5 x 10^-1``); ``subs``: major ticks at these multiples of each power of ten, minor
    ticks unlabelled."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
    getattr(ax, f"set_{which}scale")("log")
    axis = getattr(ax, f"{which}axis")
    if subs is not None:
        axis.set_major_locator(LogLocator(subs=subs))
        axis.set_minor_formatter(NullFormatter())
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))


def bar_x(x, j, count, width):
    """Positions of bar ``j`` of ``count`` side-by-side bars of ``width`` around each ``x``."""
    return x + (j - (count - 1) / 2) * width


def legend_below(fig, ax, bottom, **kw):
    """Lay ``fig`` out above ``bottom`` (a figure fraction) and put ``ax``'s legend entries in
    one figure legend below the panels (``kw``: ``fig.legend``'s options)."""
    fig.tight_layout(rect=(0, bottom, 1, 1))
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", **kw)


def figure(rows=1, cols=1, size=None, **kw):
    """A new figure and its ``rows`` x ``cols`` panels (``plt.subplots``; ``size``: inches)."""
    import matplotlib.pyplot as plt
    return plt.subplots(rows, cols, figsize=size, **kw)


def titled(fig, title):
    """``fig`` with its title (``suptitle``), laid out (``tight_layout``)."""
    fig.suptitle(title)
    fig.tight_layout()
    return fig
