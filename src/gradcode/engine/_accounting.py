"""Per-worker accounting: which rounds used each worker's result, and what became of the others.

A gradient code only decodes what it was told arrived; a worker that silently stops answering
(stuck busy, dead, always cut by the wait policy) biases the decoded gradient toward the other
partitions.  ``WorkerAccount`` makes that visible: ``summary.json``'s ``arrivals_by_worker``,
the counts at the end of ``events.log`` and the CLI's warning come from it.
"""

from __future__ import annotations

import numpy as np

from ._executor import Outcome

#: a worker "arrived in far fewer rounds than the others" below this share of the mean
FEW = 0.5



class WorkerAccount:
    """Per worker ``i``: ``arrivals[i]`` the rounds whose result of ``i`` the master received and
    used; ``counts[outcome][i]`` how often each outcome happened (``"cut"``: asked, but the
    round ended before it answered); ``longest_busy[i]`` its longest run of consecutive rounds
    busy with an earlier one.

    >>> from gradcode.engine import Outcome
    >>> acc = WorkerAccount(3)
    >>> acc.note(0, Outcome.ARRIVED); acc.note(1, Outcome.BUSY)   # worker 2 never answered
    >>> acc.close(0, asked=[0, 1, 2], used=[0])
    >>> acc.summary()["arrival_counts"], acc.counts["busy"], acc.counts["cut"]
    ([1, 0, 0], [0, 1, 0], [0, 0, 1])
    >>> acc.few()                                # used far less than the mean (1/3 round)
    [1, 2]
    """

    KINDS = [o.value for o in Outcome] + ["cut"]
    #: the first line of the counts that end ``events.log`` (a resumed run cuts them)
    HEADER = "per worker: rounds whose result was used (arrived), and the other outcomes"

    def __init__(self, n: int, state: dict | None = None):
        self.n = n
        state = state or {}
        self.arrivals: list[list[int]] = [list(a) for a in state.get("arrivals", [[]] * n)]
        self.counts = {k: list(state.get("counts", {}).get(k, [0] * n)) for k in self.KINDS}
        self.longest_busy = list(state.get("longest_busy", [0] * n))
        self._streak = list(state.get("streak", [0] * n))
        self._seen: set[int] = set()
        self._busy: set[int] = set()

    def note(self, worker: int, outcome: Outcome) -> None:
        """Worker ``worker`` answered this round with ``outcome``."""
        self._seen.add(worker)
        self.counts[outcome.value][worker] += 1
        if outcome is Outcome.BUSY:
            self._busy.add(worker)
            self._streak[worker] += 1
            self.longest_busy[worker] = max(self.longest_busy[worker], self._streak[worker])

    def close(self, r: int, asked, used) -> None:
        """Round ``r`` ended: ``asked`` the workers it started, ``used`` those whose results it
        used."""
        for i in asked:
            if i not in self._seen:
                self.counts["cut"][i] += 1
        for i in range(self.n):
            if i not in self._busy:
                self._streak[i] = 0
        for i in used:
            self.arrivals[i].append(int(r))
        self._seen, self._busy = set(), set()

    def state(self) -> dict:
        """What a checkpoint keeps (``WorkerAccount(n, state)`` continues it)."""
        return {"arrivals": self.arrivals, "counts": self.counts,
                "longest_busy": self.longest_busy, "streak": self._streak}

    def summary(self) -> dict:
        return {"arrivals_by_worker": self.arrivals,
                "arrival_counts": [len(a) for a in self.arrivals],
                "outcomes_by_worker": {k: v for k, v in self.counts.items() if any(v)},
                "longest_busy_by_worker": self.longest_busy}

    def few(self) -> list[int]:
        """Workers whose results were used in fewer than ``FEW`` times the mean count of rounds."""
        counts = np.array([len(a) for a in self.arrivals], float)
        if not counts.sum():
            return []
        return [int(i) for i in np.flatnonzero(counts < FEW * counts.mean())]

    def lines(self) -> list[str]:
        """The per-worker counts that end ``events.log``."""
        out = [self.HEADER]
        kinds = [k for k in self.KINDS[1:] if any(self.counts[k])]
        for i in range(self.n):
            others = ", ".join(f"{k} {self.counts[k][i]}" for k in kinds)
            out.append(f"worker {i}: arrived {len(self.arrivals[i])}"
                       + (f", {others}" if others else "")
                       + (f"; busy at most {self.longest_busy[i]} rounds in a row"
                          if self.longest_busy[i] else ""))
        warning = self.warning()
        return out + [warning] if warning else out

    def warning(self) -> str | None:
        """One line naming the workers used far less than the others, or None."""
        few = self.few()
        if not few:
            return None
        mean = np.mean([len(a) for a in self.arrivals])
        return (f"warning: workers {few} arrived in fewer than {FEW:.0%} of the mean "
                f"{mean:.1f} rounds ({', '.join(str(len(self.arrivals[i])) for i in few)}): "
                "their partitions count less in the decoded gradient")
