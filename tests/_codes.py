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
]


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
