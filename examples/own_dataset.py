"""Train on your own data: a map-style ``torch.utils.data.Dataset`` and your own model.

Run: ``.venv/bin/python examples/own_dataset.py [--rounds 40] [--backend local|ray|virtual]``

The Dataset below makes each row from its index (as a Dataset reading files would); gradcode
splits the indices into the code's partitions, and each worker materialises only its own rows.
The loss is PyTorch's default ``CrossEntropyLoss()`` (a mean over the batch): gradcode keeps
its meaning, each partition sending the sum form of its loss and the master dividing by the
samples recovered, so with every partition recovered a round is PyTorch's full-batch step.  A
held-out share (``test_fraction``) gives test loss and accuracy every ``eval_every`` rounds.
"""

from __future__ import annotations

import argparse

import numpy as np
import torch

from gradcode.runtime import TrainConfig, train


class Rings(torch.utils.data.Dataset):
    """Two noisy concentric rings in 2-D: class 1 outside radius 1."""

    def __init__(self, n: int = 2000, seed: int = 0):
        self.n, self.seed = n, seed

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        g = np.random.default_rng([self.seed, i])
        label = i % 2
        r = (0.5 if label == 0 else 1.5) + 0.25 * g.standard_normal()
        a = g.uniform(0, 2 * np.pi)
        x = torch.tensor([r * np.cos(a), r * np.sin(a)], dtype=torch.float32)
        return x, torch.tensor(label)


def model() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(2, 16), torch.nn.Tanh(), torch.nn.Linear(16, 2))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("--backend", default="local", choices=["local", "ray", "virtual"])
    args = ap.parse_args(argv)
    cfg = TrainConfig(code="isgc-cr", code_params={"n": 6, "c": 2}, wait="fastest:4",
                      delay="exp:0.02", rounds=args.rounds, lr=0.5, test_fraction=0.25,
                      eval_every=10, backend=args.backend)
    res = train(cfg, model=model(), loss_fn=torch.nn.CrossEntropyLoss(),
                data=Rings(), progress=False)
    s = res.summary
    print(f"{s['rounds']} rounds, {s['total_time_s']:.2f} s training (+ {s['eval_time_s']:.2f} s "
          f"evaluating): held-out accuracy {s['final_test_accuracy']:.1%}")


if __name__ == "__main__":
    main()
