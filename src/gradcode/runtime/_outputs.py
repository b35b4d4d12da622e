"""A run's outputs besides ``rounds.csv``: ``events.log``, ``summary.json`` and ``plot.png``."""

from __future__ import annotations

import json
import math

from ..records import Record, summarize


def write_outputs(out, events, records, extra: dict, title: str, plot: bool = True) -> None:
    """A finished (or interrupted) run's ``events.log``, ``summary.json`` (with ``extra``) and,
    if ``plot``, ``plot.png``."""
    (out / "events.log").write_text("".join(e + "\n" for e in events))
    (out / "summary.json").write_text(json.dumps({**summarize(records), **extra}, indent=2,
                                                 default=str))
    if plot:
        plot_training(records, out / "plot.png", title)


def plot_training(records: list[Record], path, title: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    if not records:
        return
    held = [x for x in records if not math.isnan(x.test_loss)]
    fig, ax = plt.subplots(1, 4 if held else 3, figsize=(17 if held else 13, 3.6))
    r = [x.round for x in records]
    loss = [x.loss for x in records]
    ax[0].plot([x.elapsed_s for x in records], loss)
    ax[0].set(xlabel="time (s)", ylabel="training loss", title="loss vs time")
    ax[1].plot(r, loss)
    ax[1].set(xlabel="round", ylabel="training loss", title="loss vs round")
    ax[2].plot(r, [x.recovered_fraction for x in records], label="recovered fraction")
    ax[2].set(xlabel="round", ylabel="fraction of the gradient", ylim=(-0.05, 1.05),
              title="recovered per round")
    if held:                    # accuracy for classification, else the held-out loss
        acc = not math.isnan(held[-1].test_accuracy)
        ax[3].plot([x.elapsed_s for x in held],
                   [x.test_accuracy if acc else x.test_loss for x in held], "o-")
        ax[3].set(xlabel="time (s)", ylabel="held-out " + ("accuracy" if acc else "loss"),
                  title="held-out " + ("accuracy" if acc else "loss") + " vs time")
    for a in ax:
        a.grid(alpha=0.3)
        a.xaxis.set_major_locator(MaxNLocator(5))      # readable ticks in a narrow panel
    for a in (ax[0], ax[3]) if held else (ax[0],):     # time from the start: a lone point
        a.set_xlim(left=0.0)                            # near 1e-4 s made long, crowded ticks
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
