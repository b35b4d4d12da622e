"""The main demo (``make run``): real training with injected stragglers, IS-GC vs synchronous SGD.

n = 8 workers train logistic regression on paper 1's synthetic data; every worker's reply is
delayed by an exponential straggler delay (mean 0.1 s, paper 2 Sec. VIII-B).  Synchronous SGD waits
for all 8, gradient coding (cyclic, s = 2) until it can decode, IS-GC (cyclic, c = 2) for the
fastest 4.  Prints time per round and wall-clock time to a common target loss.
"""

from __future__ import annotations

import numpy as np

SCHEMES = [
    ("synchronous SGD", "uncoded", {"n": 8}, "all"),
    ("GC cyclic s=2", "gc-cr", {"n": 8, "s": 2}, "decodable"),
    ("IS-GC cyclic c=2, fastest 4", "isgc-cr", {"n": 8, "c": 2}, "fastest:4"),
]


def main(backend: str = "local", rounds: int = 40, out: str | None = None,
         progress: bool = True) -> int:
    """Train the three schemes of ``SCHEMES`` on ``backend`` for ``rounds`` rounds, print the
    comparison and return 0 (2 when torch is missing); ``out`` keeps each run's files in
    ``out/CODE/``.  ``make run`` is ``main()``; on the ``virtual`` backend a round's time is its
    injected delays alone, so a few rounds take a second:

    >>> main(backend="virtual", rounds=3, progress=False)
    gradcode demo: logistic regression ... backend virtual, 3 rounds
    scheme                          s/round  final loss  recovered ...
    synchronous SGD                   0.391 ...
    GC cyclic s=2                     0.135 ...
    IS-GC cyclic c=2, fastest 4       0.073 ...
    IS-GC: 0.19x the time per round of synchronous SGD, ...
    0
    """
    try:
        from .runtime import TrainConfig, load_torch_data, train
    except ImportError:
        print("the demo trains with torch: pip install 'gradcode[train]' (make run does)")
        return 2
    data = load_torch_data("synthetic", seed=0, n_samples=4000)
    print(f"gradcode demo: logistic regression on paper 1's synthetic data (4000 x 100), n = 8 "
          f"workers, injected delays ~ Exp(mean 0.1 s), backend {backend}, {rounds} rounds\n")
    runs = {}
    for label, code, params, wait in SCHEMES:
        cfg = TrainConfig(code=code, code_params=params, wait=wait, delay="exp:0.1", rounds=rounds,
                          lr=2.0, backend=backend, seed=0,
                          out=f"{out}/{code}" if out else None)
        runs[label] = train(cfg, data=data, progress=progress)
    target = max(r.records[-1].loss for r in runs.values()) * 1.02
    base = runs[SCHEMES[0][0]]
    base_t = _time_to(base, target)
    print(f"\n{'scheme':<30}{'s/round':>9}{'final loss':>12}{'recovered':>11}"
          f"{'time to loss ' + format(target, '.3f'):>22}")
    for label, res in runs.items():
        s = res.summary
        t = _time_to(res, target)
        print(f"{label:<30}{s['mean_round_time_s']:>9.3f}{s['final_loss']:>12.4f}"
              f"{s['mean_recovered_fraction']:>11.0%}{t:>13.2f} s ({t / base_t:.2f}x)")
    isgc = runs[SCHEMES[2][0]].summary["mean_round_time_s"]
    print(f"\nIS-GC: {isgc / base.summary['mean_round_time_s']:.2f}x the time per round of "
          f"synchronous SGD, {_time_to(runs[SCHEMES[2][0]], target) / base_t:.2f}x its time to "
          "the target loss.")
    print("Next: `gradcode train --help`, `gradcode simulate --help`, `gradcode reproduce --list`.")
    return 0


def _time_to(res, target: float) -> float:
    for r in res.records:
        if r.loss <= target:
            return r.elapsed_s
    return float(np.nan)
