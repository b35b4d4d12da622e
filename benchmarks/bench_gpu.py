"""GPU rounds (issue 31): coded training of a ResNet-18 on one GPU against plain PyTorch steps
over the same samples, measured in the same run.  `python benchmarks/bench_gpu.py [--quick]` on
a machine with CUDA (on one without it says so and stops; ``--cpu`` runs the same on the CPU at
toy sizes, to check the script).

The model: ResNet-18 for 32 x 32 images with GroupNorm (11.2 M parameters), synthetic images,
10 classes, cross entropy, SGD; TF32 off.  gradcode: local backend, ``--device cuda``, n = 8,
``micro_batch`` rows per pass, no evaluation (``eval_every 0``), every worker waited for.
The plain step: the same model and loss over all the samples in chunks of ``micro_batch`` rows,
one SGD step.

1. Correctness: the first decoded gradient (gc-cr, s = 1) against the plain step's, and
   ``--audit``'s largest error, in float32 and under bf16 autocast.
2. Time per round (median of the rounds after the first) over the plain step's, and peak GPU
   memory (``torch.cuda.max_memory_allocated``) over the plain step's.  Targets: uncoded at most
   1.10, gc-cr s = 1 at most 2.2 (its load is 2), memory at most 1.5.
3. 32 768 samples at n = 8 fit (gc-cr, s = 1).
4. ``--device cuda:0`` with a randomly augmenting Dataset read every round (gc-cr, ``--audit``,
   two loader processes): the audit's largest error.
"""

from __future__ import annotations

import statistics
import sys
import time

import numpy as np
import torch
from torch import nn

from gradcode.runtime import TorchData, TrainConfig, train

QUICK, CPU = "--quick" in sys.argv, "--cpu" in sys.argv
DEVICE = "cpu" if CPU else "cuda"
MICRO = 16 if CPU else 1024


class Block(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int):
        super().__init__()
        self.c1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.n1 = nn.GroupNorm(32 if cout >= 32 else 1, cout)
        self.c2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.n2 = nn.GroupNorm(32 if cout >= 32 else 1, cout)
        self.skip = (nn.Sequential() if stride == 1 and cin == cout else nn.Sequential(
            nn.Conv2d(cin, cout, 1, stride, bias=False), nn.GroupNorm(32 if cout >= 32 else 1,
                                                                      cout)))

    def forward(self, x):
        out = torch.relu(self.n1(self.c1(x)))
        return torch.relu(self.n2(self.c2(out)) + self.skip(x))


def resnet18(width: int = 64) -> nn.Module:
    torch.manual_seed(0)
    w = [width, 2 * width, 4 * width, 8 * width]
    layers = [nn.Conv2d(3, w[0], 3, 1, 1, bias=False), nn.GroupNorm(32 if w[0] >= 32 else 1,
                                                                    w[0]), nn.ReLU()]
    cin = w[0]
    for i, cout in enumerate(w):
        layers += [Block(cin, cout, 1 if i == 0 else 2), Block(cout, cout, 1)]
        cin = cout
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, 10)]
    return nn.Sequential(*layers)


def images(samples: int) -> TorchData:
    g = torch.Generator().manual_seed(1)
    X = torch.randn(samples, 3, 32, 32, generator=g)
    y = torch.randint(0, 10, (samples,), generator=g)
    return TorchData("images", X, y, "multiclass", 10, (3, 32, 32))


def _sync():
    if DEVICE == "cuda":
        torch.cuda.synchronize()


def _reset_peak():
    if DEVICE == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()


def _peak() -> float:
    return torch.cuda.max_memory_allocated() / 2 ** 30 if DEVICE == "cuda" else float("nan")


def plain(data: TorchData, width: int, steps: int, bf16: bool = False):
    """``(median seconds per step, peak GiB, first gradient)`` of plain PyTorch steps."""
    model = resnet18(width).to(DEVICE)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss(reduction="sum")
    X, y = data.X.to(DEVICE), data.y.to(DEVICE)
    _reset_peak()
    times, first = [], None
    for _ in range(steps):
        _sync()
        t0 = time.perf_counter()
        opt.zero_grad()
        for a in range(0, len(y), MICRO):
            with torch.autocast(DEVICE, torch.bfloat16, enabled=bf16):
                loss = loss_fn(model(X[a:a + MICRO]), y[a:a + MICRO]) / len(y)
            loss.backward()
        if first is None:
            first = torch.cat([p.grad.reshape(-1) for p in model.parameters()]).cpu().numpy()
        opt.step()
        _sync()
        times.append(time.perf_counter() - t0)
    del X, y
    return statistics.median(times[1:] or times), _peak(), first


def coded(data: TorchData, width: int, code: str, params: dict, rounds: int, **kw):
    """``(median seconds per round, peak GiB, first decoded gradient, max audit error)``."""
    grads = []
    _reset_peak()
    res = train(TrainConfig(code=code, code_params=params, rounds=rounds, device=DEVICE, lr=0.01,
                            micro_batch=MICRO, eval_every=0, test_fraction=0.0, wait="all",
                            seed=1, **kw),
                model=resnet18(width), loss_fn=nn.CrossEntropyLoss(), data=data, progress=False,
                on_round=lambda r, rec, info: grads.append(info.gradient) if r == 0 else None)
    per_round = statistics.median(r.time_s for r in res.records[1:] or res.records)
    audit = max((r.audit_error for r in res.records), default=float("nan"))
    return per_round, _peak(), grads[0], audit


class Augmenting(torch.utils.data.Dataset):
    """Synthetic images plus noise drawn at every read."""

    def __init__(self, samples: int):
        self.data = images(samples)

    def __len__(self):
        return len(self.data)

    def __getitem__(self, i):
        return self.data.X[i] + 0.1 * torch.randn(3, 32, 32), self.data.y[i]


def rel(a, b) -> float:
    return float(np.linalg.norm(np.asarray(a, float) - b) / np.linalg.norm(b))


def main() -> int:
    if DEVICE == "cuda" and not torch.cuda.is_available():
        print("no CUDA device: nothing to measure (--cpu checks the script on the CPU)")
        return 0
    torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = False
    name = torch.cuda.get_device_name(0) if DEVICE == "cuda" else "CPU"
    width = 4 if CPU else 64
    small, sizes = (64, (64,)) if CPU else (2048, (8192,) if QUICK else (8192, 16384))
    print(f"torch {torch.__version__}, {name}; ResNet-18 (GroupNorm, width {width}), micro-batch "
          f"{MICRO}, n = 8, TF32 off")
    print("\n1. correctness: first decoded gradient vs the plain step's, and --audit")
    for bf16 in (False, True):
        data = images(small)
        ref = plain(data, width, 1, bf16)[2]
        _, _, g, audit = coded(data, width, "gc-cr", {"n": 8, "s": 1}, 2, audit=True,
                               precision="bf16" if bf16 else "float32")
        print(f"   {'bf16   ' if bf16 else 'float32'} gc-cr: relative difference "
              f"{rel(g, ref):.1e}, audit {audit:.1e}")
    print("\n2. per round and peak memory, over the plain step's")
    print("   samples  plain s  plain GiB   code         s/round  x plain  GiB    x plain")
    for samples in sizes:
        data = images(samples)
        t0, m0, _ = plain(data, width, 3)
        for code, params in (("uncoded", {"n": 8}), ("gc-cr", {"n": 8, "s": 1})):
            t, m, _, _ = coded(data, width, code, params, 3)
            print(f"   {samples:7d}  {t0:7.3f}  {m0:9.2f}   {code:10s}  {t:7.3f}  {t / t0:7.2f}  "
                  f"{m:5.2f}  {m / m0:7.2f}", flush=True)
    big = 256 if CPU else 32768
    print(f"\n3. {big} samples, gc-cr s = 1, n = 8:", end=" ", flush=True)
    t, m, _, _ = coded(images(big), width, "gc-cr", {"n": 8, "s": 1}, 2)
    print(f"fits: {t:.2f} s a round, peak {m:.2f} GiB")
    device = "cpu" if CPU else "cuda:0"
    res = train(TrainConfig(code="gc-cr", code_params={"n": 4, "s": 1}, rounds=3, device=device,
                            micro_batch=MICRO, eval_every=0, wait="all", audit=True,
                            loader_workers=2),
                model=resnet18(width), loss_fn=nn.CrossEntropyLoss(),
                data=Augmenting(64 if CPU else 1024), progress=False)
    print(f"\n4. {device}, an augmenting Dataset read every round by 2 loader processes, gc-cr: "
          f"audit {max(r.audit_error for r in res.records):.1e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
