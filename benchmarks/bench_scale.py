"""Memory of coded training against a plain PyTorch loop, in model copies (issue 31).

`python benchmarks/bench_scale.py [--quick]`

A 6.3 M-parameter MLP (1024 -> 2048 -> 2048 -> 10, float32: 25 MB a copy), n = 8 workers on the
local backend (CPU), micro-batches of 64 rows, plain SGD, 3 rounds.  Each configuration runs in
its own process: the model and data are built, the process's peak resident memory is reset
(``/proc/self/clear_refs``), the run trains, and the extra peak (``VmHWM`` less the resident
memory before the run) is divided by the bytes of one copy of the parameters.  The baseline is
the plain PyTorch loop over the same rows (full-batch gradient accumulated over the same
micro-batches, one SGD step a round), measured in the same run.  What every configuration loads
once whatever the model (modules, a first backward pass) is loaded before the measurement.

Targets (issue 31): uncoded at most 14 copies, gc-cr s = 1 at most 24, whatever the rows.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import torch
from torch import nn

ROUNDS, MICRO, FEATURES, WIDTH, CLASSES = 3, 64, 1024, 2048, 10
CONFIGS = {"plain": None, "uncoded": ("uncoded", {"n": 8}),
           "isgc-cr": ("isgc-cr", {"n": 8, "c": 2}), "gc-cr s=1": ("gc-cr", {"n": 8, "s": 1})}
TARGETS = {"uncoded": 14, "gc-cr s=1": 24}


def _model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(FEATURES, WIDTH), nn.ReLU(), nn.Linear(WIDTH, WIDTH),
                         nn.ReLU(), nn.Linear(WIDTH, CLASSES))


def _data(rows: int):
    g = torch.Generator().manual_seed(1)
    return torch.randn(rows, FEATURES, generator=g), torch.randint(0, CLASSES, (rows,), generator=g)


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def _peak() -> int:
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) * 1024 for l in f if l.startswith("VmHWM"))


def _plain(model, X, y) -> None:
    opt, loss_fn = torch.optim.SGD(model.parameters(), lr=0.01), nn.CrossEntropyLoss(
        reduction="sum")
    for _ in range(ROUNDS):
        opt.zero_grad()
        for a in range(0, len(y), MICRO):
            (loss_fn(model(X[a:a + MICRO]), y[a:a + MICRO]) / len(y)).backward()
        opt.step()


def _gradcode(model, X, y, code, params) -> None:
    from gradcode.runtime import TorchData, TrainConfig, train
    data = TorchData("mlp", X, y, "multiclass", CLASSES, None)
    train(TrainConfig(code=code, code_params=params, rounds=ROUNDS, lr=0.01, micro_batch=MICRO,
                      eval_every=0, test_fraction=0.0, wait="all", seed=0),
          model=model, loss_fn=nn.CrossEntropyLoss(), data=data, progress=False)


def _imported() -> None:
    """What every configuration loads once, whatever the model's size (gradcode's modules,
    torch.optim's, a first backward pass): not counted."""
    import gradcode.runtime  # noqa: F401
    net = nn.Linear(2, 2)
    nn.CrossEntropyLoss()(net(torch.ones(2, 2)), torch.zeros(2, dtype=torch.long)).backward()
    torch.optim.SGD(net.parameters(), lr=0.1).step()


def one(name: str, rows: int) -> dict:
    """Run configuration ``name`` here; its extra peak memory in model copies."""
    torch.set_num_threads(2)
    _imported()
    model, (X, y) = _model(), _data(rows)
    copy = sum(p.numel() * p.element_size() for p in model.parameters())
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")                                  # reset the peak (VmHWM)
    before = _rss()
    if CONFIGS[name] is None:
        _plain(model, X, y)
    else:
        _gradcode(model, X, y, *CONFIGS[name])
    return {"name": name, "rows": rows, "copies": (_peak() - before) / copy}


def main() -> int:
    if sys.argv[1:2] == ["--one"]:
        print(json.dumps(one(sys.argv[2], int(sys.argv[3]))))
        return 0
    quick = "--quick" in sys.argv
    src = str(Path(__file__).resolve().parents[1] / "src")
    size = sum(p.numel() for p in _model().parameters()) / 1e6
    print(f"extra peak memory in copies of a {size:.1f} M-parameter MLP (n = 8, micro-batch "
          f"{MICRO}, local backend, CPU)\n")
    print(f"{'rows':>6}  " + "  ".join(f"{k:>10}" for k in CONFIGS))
    ok = True
    for rows in (4000,) if quick else (4000, 16000):
        got = {}
        for name in CONFIGS:
            out = subprocess.run([sys.executable, __file__, "--one", name, str(rows)],
                                 capture_output=True, text=True, check=True,
                                 env={"PYTHONPATH": src, "PATH": "/usr/bin:/bin"})
            got[name] = json.loads(out.stdout.strip().splitlines()[-1])["copies"]
        print(f"{rows:>6}  " + "  ".join(f"{got[k]:>10.1f}" for k in CONFIGS))
        ok &= all(got[k] <= t for k, t in TARGETS.items())
    print("\ntargets: " + ", ".join(f"{k} <= {t}" for k, t in TARGETS.items())
          + (": met" if ok else ": NOT met"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
