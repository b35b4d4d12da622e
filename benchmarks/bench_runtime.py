"""Runtime benchmarks (issue 5).  Run: `.venv/bin/python benchmarks/bench_runtime.py`.

1. Master-side overhead per round on Ray at n = 8 and n = 32 with a 1 M-parameter model: our
   master loop (uncoded, gc-cr, isgc-cr; no injected delays, wait for everyone) against an
   uncoded parameter-server loop written plainly in the same run (one call per worker, sum,
   step).  The model's gradient costs almost nothing to compute (``Cheap``), so a round's time
   is the master-side overhead plus Ray's per-call cost, the same in both.  Target: coded within
   10 % of uncoded.
2. Decoding + combining w gradients of 1 M float64 entries (gc-cr's decode and the master's
   ``engine.combine``), as effective read bandwidth of the w gradients, against
   the machine's copy bandwidth measured in the same run.  Target: >= 50 %.
3. Bytes on the wire per worker per round (``wire_bytes``; `bench_runtime.py bytes` runs only
   this): (a) every registered single-round code (its first example) with a float64 wire (the
   old behaviour for real coefficients: ``make_executor(..., np.float64)``) against float32
   (every code now), and their ratio; (b) ``comm-efficient`` (n = 6, s = 1) at m = 1, 2, 3,
   each message ``1 / m`` of the gradient.  Measured from the coded vectors the workers return.
"""

from __future__ import annotations

import time

import numpy as np
import torch
from torch import nn

from gradcode.runtime import TorchData, TrainConfig, train
from gradcode import make_code
from gradcode.engine import combine
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
    return TorchData("bench", X, y, "regression", 1), Cheap(), nn.MSELoss()


def ours(n, code, params, rounds):
    """(median round time, median master-side time) of our master loop."""
    data, model, loss = data_and_model(n)
    res = train(TrainConfig(code=code, code_params=params, rounds=rounds, wait="all", backend="ray",
                            actors=2, lr=1e-3, eval_samples=1), model=model, loss_fn=loss,
                data=data, progress=False)
    return float(np.median([r.time_s for r in res.records[2:]])), float(np.median(res.master_s[2:]))


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
    for w in (8, 32):           # the master's own decode + combine, as in a gc-cr round
        code = make_code("gc-cr", n=w + 2, s=2)
        vecs = list(np.random.default_rng(0).standard_normal((w, 1_000_000)))
        out = np.empty(1_000_000)

        def decode_combine():
            d = code.decode(list(range(w)))
            combine(d.weights[:w], vecs, out)
        t = min(_timed(decode_combine) for _ in range(10))
        rows.append((w, w * vecs[0].nbytes / t))
    return copy_bw, rows


def _timed(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


CASES = [("uncoded", {}, np.float32), ("isgc-cr", {"c": 2}, np.float32),
         ("gc-cr", {"s": 2}, np.float64)]


def overhead(n, rounds, reps):
    """Median master-side ms per case over ``reps`` interleaved repetitions (the machine's load
    drifts, so plain and ours alternate)."""
    got = {}
    for _ in range(reps):
        for dtype in (np.float32, np.float64):
            got.setdefault(("plain", np.dtype(dtype).name), []).append(plain(n, rounds, dtype)[1])
        for code, extra, _ in CASES:
            got.setdefault((code, ""), []).append(ours(n, code, {"n": n, **extra}, rounds)[1])
    return {k: 1e3 * float(np.median(v)) for k, v in got.items()}


def round_bytes(name: str, params: dict, dtype, data=None) -> tuple[float, int]:
    """``(bytes per machine in one round, gradient length)``: every message of round 0 of
    ``name`` computed by workers built as training builds them (``make_executor``, virtual
    backend) with ``dtype`` on the wire, a logistic model on 600 synthetic rows."""
    from types import SimpleNamespace
    from gradcode.engine import streams
    from gradcode.runtime import build_model, load_torch_data, loss_for, split_partitions
    from gradcode.runtime._executors import make_executor
    from gradcode.runtime._layout import Layout
    from gradcode.runtime._loss import Objective
    data = data if data is not None else load_torch_data("synthetic", seed=0, n_samples=600)
    code = make_code(name, **params)
    parts = split_partitions(data, code.partition_sizes, streams(0)["data"])
    model = build_model("logistic", data)
    cfg = SimpleNamespace(backend="virtual", address=None, actors=None, concurrency=None,
                          seed=0, batch=None, device="cpu", micro_batch=None,
                          precision="float32", loader_workers=0)
    X2, y2 = data.take([0, 1])
    ex = make_executor(cfg, code.placement, parts, model,
                       Objective.of(loss_for(data), model, X2, y2), Layout.of(model, X2), dtype)
    params_vec = torch.nn.utils.parameters_to_vector(model.parameters()).detach().numpy()
    tasks = code.planner(1).assign(0)
    coded = [v for i, w in enumerate(ex.workers) for v in w.run(0, params_vec, tasks[i]).coded]
    return sum(v.nbytes for v in coded if v is not None) / code.n_machines, len(params_vec)


def wire_bytes() -> None:
    """Prints (a) and (b) of the module docstring."""
    from gradcode.registry import CODES, code_class
    from gradcode.codes import Code
    print("bytes on the wire per worker per round (logistic model, synthetic data)")
    for name in CODES:
        cls = code_class(name)
        if not issubclass(cls, Code) or not cls.examples:
            continue
        params = dict(cls.examples[0])
        b64, l = round_bytes(name, params, np.float64)
        b32, _ = round_bytes(name, params, np.float32)
        print(f"  {name:<15} {str(params):<40} float64 {b64:8.0f}  float32 {b32:8.0f}  "
              f"ratio {b64 / b32:.2f}  (gradient: {l} floats)")
    base = None
    for m in (1, 2, 3):
        b, l = round_bytes("comm-efficient", {"n": 6, "s": 1, "m": m}, np.float32)
        base = base or b
        print(f"  comm-efficient n=6 s=1 m={m}: {b:.0f} bytes per worker per round "
              f"(float32; {b / 4:.0f} floats of l = {l}), {base / b:.2f}x fewer than m = 1")


if __name__ == "__main__":
    import sys

    if sys.argv[1:2] == ["bytes"]:
        wire_bytes()
        sys.exit(0)

    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    print(init_ray())
    # warm-up: the object store's shared memory is page-faulted in on first use (~100 ms a
    # round at n = 32 until the store recycles memory), which would favour whoever runs later
    for n in (32, 32):
        plain(n, 30, np.float64)
        ours(n, "uncoded", {"n": n}, 30)
    print("master-side time = round time - time blocked waiting for the workers "
          f"(ms, median over {reps} interleaved runs of 12 rounds)")
    for n in (8, 32):
        m = overhead(n, 12, reps)
        print(f"n={n}: plain PS loop float32 {m['plain', 'float32']:.1f}, "
              f"float64 {m['plain', 'float64']:.1f}")
        for code, _, dtype in CASES:
            base = m["plain", np.dtype(dtype).name]
            print(f"   ours {code:<8} ({np.dtype(dtype).name} wire): {m[code, '']:6.1f}  "
                  f"= {m[code, ''] / base:.2f}x the plain loop of the same dtype")
    copy_bw, rows = bandwidth()
    print(f"memory copy bandwidth (read+write): {copy_bw / 1e9:.2f} GB/s")
    for w, bw in rows:
        print(f"decode+combine of {w} x 1M float64: {bw / 1e9:.2f} GB/s read "
              f"({bw / copy_bw:.0%} of copy bandwidth)")
