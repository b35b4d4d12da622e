"""The code instances every contract test runs over (small enough for exhaustive checks)."""

import gradcode

SMALL_CODES = [
    ("uncoded", dict(n=5)),
    ("ignore", dict(n=6)),
    ("gc-fr", dict(n=6, s=1)),
    ("gc-fr", dict(n=6, s=2)),
    ("gc-fr", dict(n=4, s=3)),
    ("gc-cr", dict(n=7, s=2)),
    ("gc-cr", dict(n=5, s=4, seed=3)),
    ("gc-cr", dict(n=10, s=3, seed=1)),
    ("isgc-fr", dict(n=8, c=2)),
    ("isgc-fr", dict(n=9, c=3)),
    ("isgc-cr", dict(n=7, c=3)),
    ("isgc-cr", dict(n=9, c=2)),
    ("isgc-cr", dict(n=4, c=4)),
    ("isgc-cr", dict(n=10, c=4)),
    ("isgc-hr", dict(n=8, c1=2, c2=2, groups=2)),
    ("isgc-hr", dict(n=8, c1=1, c2=3, groups=2)),
    ("isgc-hr", dict(n=9, c1=2, c2=1, groups=3)),
    ("isgc-hr", dict(n=10, c1=3, c2=1, groups=2)),
    ("isgc-hr", dict(n=10, c1=2, c2=1, groups=2)),
    ("heter", dict(speeds=[1, 2, 3, 4, 4], s=1, k=7)),
    ("heter", dict(speeds=[1, 1, 2, 2, 3, 3], s=2, k=6, seed=2)),
    ("heter-group", dict(speeds=[1, 2, 3, 4, 4], s=1, k=7)),
    ("heter-group", dict(speeds=[2, 2, 1, 1, 2, 2], s=1, k=4)),
    ("gc-partial", dict(n=3, s=1, alpha=2.0)),
    ("gc-partial", dict(n=5, s=2, alpha=1.5)),
    ("matrix", dict(B=[[1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1], [1, 0, 0, 1]])),
    ("matrix", dict(B=[[1, 1, 0, 0], [1, 1, 0, 0], [0, 0, 1, 1], [0, 0, 1, 1]], s=1,
                    partition_sizes=[0.1, 0.2, 0.3, 0.4])),
    ("matrix", dict(B=[[0.5, 1, 0], [0, 1, -1], [2, 0, 1]])),
]

#: the sequential schemes of paper 4 (every registered one), small enough to replay
SEQUENTIAL_SCHEMES = [
    ("gc-seq", dict(n=5, s=2)),
    ("gc-seq", dict(n=4, s=0, seed=2)),
    ("sr-sgc", dict(n=6, B=2, W=3, lam=2)),
    ("sr-sgc", dict(n=6, B=1, W=3, lam=5, seed=1)),
    ("sr-sgc-rep", dict(n=8, B=1, W=2, lam=2)),
    ("m-sgc", dict(n=4, B=2, W=3, lam=2)),
    ("m-sgc", dict(n=4, B=1, W=2, lam=4)),
    ("m-sgc-rep", dict(n=4, B=1, W=2, lam=1)),
]

#: one list over every registered name (the contract suite checks it against the registry)
ALL_SCHEMES = SMALL_CODES + SEQUENTIAL_SCHEMES


def available(entries):
    """(id, code) for the entries whose module exists yet."""
    out = []
    for name, params in entries:
        try:
            code = gradcode.make_code(name, **params)
        except ModuleNotFoundError:
            continue
        out.append((f"{name}{sorted(params.items())}", code))
    return out
