"""GPU path of the runtime (``--device cuda``).  Run on a machine with CUDA:
`python benchmarks/bench_gpu.py` (on one without, it says so and stops).

1. Correctness: the decoded gradient of every round equals the CPU one (same seed, same code,
   same data) to float32 tolerance, for gc-cr and isgc-cr.
2. Speed: median time per round of the local backend, n = 8 workers, gc-cr (s = 1), a CNN on
   Fashion-MNIST-sized images (synthetic, 1 x 28 x 28, 10 classes), each worker computing its
   partitions on the device; the baseline is the same run with ``device = cpu`` measured in the
   same run.  Reported as the CPU / CUDA ratio (above 1: the GPU is faster).
"""

from __future__ import annotations

import statistics
import sys
import time

import numpy as np
import torch
from torch import nn

from gradcode.runtime import TorchData, TrainConfig, train


def images(samples: int, seed: int = 0) -> TorchData:
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(samples, 1, 28, 28, generator=g)
    y = torch.randint(0, 10, (samples,), generator=g)
    return TorchData("images", X, y, "multiclass", 10, (1, 28, 28))


def cnn(width: int) -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(1, width, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(width, 2 * width, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(2 * width * 49, 10))


def run(device: str, code: str, params: dict, data: TorchData, width: int, rounds: int):
    grads, t0 = [], time.perf_counter()
    res = train(TrainConfig(code=code, code_params=params, rounds=rounds, device=device, lr=0.05,
                            eval_samples=256, test_fraction=0.0, seed=1),
                model=cnn(width), loss_fn=nn.CrossEntropyLoss(), data=data,
                progress=False, on_round=lambda r, rec, info: grads.append(info.gradient))
    wall = time.perf_counter() - t0
    per_round = statistics.median(r.time_s for r in res.records[1:])
    return grads, per_round, wall, res.records[-1].loss


def main() -> int:
    if not torch.cuda.is_available():
        print("no CUDA device: nothing to measure")
        return 0
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name(0)}, "
          f"{torch.get_num_threads()} CPU threads")
    print("\n1. decoded gradient, CUDA vs CPU: max |cuda - cpu| / max |cpu| in round 0 (same "
          "parameters) and over 5 rounds (the models drift apart), 2048 images, width 8")
    small = images(2048)
    for tf32 in (True, False):
        torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = tf32
        for code, params in (("gc-cr", {"n": 8, "s": 1}), ("isgc-cr", {"n": 8, "c": 2})):
            cpu, *_ = run("cpu", code, params, small, 8, 5)
            gpu, *_ = run("cuda", code, params, small, 8, 5)
            rel = [float(np.max(np.abs(a - b)) / (np.max(np.abs(a)) + 1e-12))
                   for a, b in zip(cpu, gpu)]
            print(f"   TF32 {'on ' if tf32 else 'off'} {code:8s} round 0: {rel[0]:.1e}, "
                  f"5 rounds: {max(rel):.1e}")
    torch.backends.cudnn.allow_tf32 = True
    print("\n2. median time per round (local backend, gc-cr n = 8, s = 1, 10 rounds)")
    print("   samples  width  cpu s/round  cuda s/round  cpu / cuda")
    for samples, width in ((8192, 16), (32768, 32)):
        data = images(samples)
        _, t_cpu, _, _ = run("cpu", "gc-cr", {"n": 8, "s": 1}, data, width, 10)
        _, t_gpu, _, _ = run("cuda", "gc-cr", {"n": 8, "s": 1}, data, width, 10)
        print(f"   {samples:7d}  {width:5d}  {t_cpu:11.3f}  {t_gpu:12.3f}  {t_cpu / t_gpu:10.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
