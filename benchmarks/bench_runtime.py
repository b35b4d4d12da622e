"""Runtime benchmarks (issue 5).  Run: `.venv/bin/python benchmarks/bench_runtime.py`.

1. Master-side overhead per round on Ray at n = 8 and n = 32 with a 1 M-parameter model: our
   master loop (uncoded, gc-cr, isgc-cr; no injected delays, wait for everyone) against an
   uncoded parameter-server loop written plainly in the same run (one call per worker, sum,
   step).  The model's gradient costs almost nothing to compute (``Cheap``), so a round's time
   is the master-side overhead plus Ray's per-call cost, the same in both.  Target: coded within
   10 % of uncoded.
2. Decoding + combining w gradients of 1 M float64 entries, as effective read bandwidth, against
   the machine's copy bandwidth measured in the same run.  Target: >= 50 %.
"""

from __future__ import annotations

import time

import numpy as np
import torch
from torch import nn

from gradcode.runtime import TorchData, TrainConfig, train
from gradcode.runtime._ray import init_ray

P = 1_000_000        # parameters


class Cheap(nn.Module):
    """1 M parameters whose gradient costs almost nothing to compute, so that a round's time is
    the master-side overhead (broadcast, collect, decode, combine, step) plus Ray's per-call cost."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.zeros(P))

    def forward(self, x):
        return x[:, 0] * self.w[0] + x[:, 1] * self.w[1]


def data_and_model(n):
    g = torch.Generator().manual_seed(0)
    X = torch.randn(n, 2, generator=g)
    y = torch.randn(n, generator=g)
    return TorchData("bench", X, y, "regression", 1), Cheap(), nn.MSELoss(reduction="sum")


def ours(n, code, params, rounds):
    """(median round time, median master-side time) of our master loop."""
    data, model, loss = data_and_model(n)
    master = []
    res = train(TrainConfig(code=code, code_params=params, rounds=rounds, wait="all", backend="ray",
                            actors=2, lr=1e-3, eval_samples=1), model=model, loss_fn=loss,
                data=data, progress=False, on_round=lambda r, rec, info: master.append(info.master_s))
    return float(np.median([r.time_s for r in res.records[2:]])), float(np.median(master[2:]))


def plain(n, rounds, dtype=np.float32):
    """(median round time, median master-side time) of a plain uncoded PS loop."""
    import ray

    data, model, loss = data_and_model(n)

    @ray.remote(num_cpus=0)
    class Host:
        def __init__(self, model, loss, parts):
            torch.set_num_threads(1)
            self.model, self.loss, self.parts = model, loss, parts

        def grad(self, params, i):
            torch.nn.utils.vector_to_parameters(torch.as_tensor(params), self.model.parameters())
            self.model.zero_grad()
            X, y = self.parts[i]
            self.loss(self.model(X), y).backward()
            return torch.cat([p.grad.reshape(-1) for p in self.model.parameters()]).numpy().astype(dtype)

    parts = {i: (data.X[i:i + 1], data.y[i:i + 1]) for i in range(n)}
    hosts = [Host.remote(model, loss, {i: parts[i] for i in range(n) if i % 2 == a}) for a in range(2)]
    ray.get([h.grad.remote(np.zeros(P, np.float32), a) for a, h in enumerate(hosts)])
    params = torch.nn.utils.parameters_to_vector(model.parameters()).detach().numpy().copy()
    times, master = [], []
    for _ in range(rounds):
        t0 = time.perf_counter()
        ref = ray.put(params)
        refs = [hosts[i % 2].grad.remote(ref, i) for i in range(n)]    # one call per worker
        tw = time.perf_counter()
        ray.wait(refs, num_returns=n)                                   # blocked on workers
        blocked = time.perf_counter() - tw
        g = sum(ray.get(refs))
        params = (params - 1e-3 * g / n).astype(np.float32)
        times.append(time.perf_counter() - t0)
        master.append(times[-1] - blocked)
    for h in hosts:
        ray.kill(h)
    return float(np.median(times[2:])), float(np.median(master[2:]))


def bandwidth():
    a = np.ones(64 * 1024 * 1024 // 8 * 8)                         # 512 MB
    t = min(_timed(lambda: a.copy()) for _ in range(3))
    copy_bw = 2 * a.nbytes / t
    rows = []
    for w in (8, 32):
        buf = np.random.default_rng(0).standard_normal((w, 1_000_000))
        weights = np.random.default_rng(1).standard_normal(w)
        t = min(_timed(lambda: weights @ buf) for _ in range(10))
        rows.append((w, buf.nbytes / t))
    return copy_bw, rows


def _timed(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


if __name__ == "__main__":
    print(init_ray())
    rounds = 12
    print("master-side time = round time - time blocked waiting for the workers (ms, median)")
    for n in (8, 32):
        for dtype in (np.float32, np.float64):
            rt, mt = plain(n, rounds, dtype)
            print(f"n={n}: plain uncoded PS loop, {np.dtype(dtype).name} on the wire: round "
                  f"{rt * 1e3:.1f}, master-side {mt * 1e3:.1f}")
        for code, params in [("uncoded", {"n": n}), ("isgc-cr", {"n": n, "c": 2}),
                             ("gc-cr", {"n": n, "s": 2})]:
            rt, mt = ours(n, code, params, rounds)
            wire = "float32" if code != "gc-cr" else "float64"
            print(f"   ours {code:<8} ({wire}): round {rt * 1e3:7.1f}, master-side {mt * 1e3:6.1f}")
    copy_bw, rows = bandwidth()
    print(f"memory copy bandwidth (read+write): {copy_bw / 1e9:.2f} GB/s")
    for w, bw in rows:
        print(f"decode+combine of {w} x 1M float64: {bw / 1e9:.2f} GB/s read "
              f"({bw / copy_bw:.0%} of copy bandwidth)")
