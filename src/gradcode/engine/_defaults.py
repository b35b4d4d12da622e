"""The wait policy a scheme was designed for (what ``train`` and ``simulate`` wait with when no
policy is given), and the warning for a policy that makes a code's redundancy pointless.

- a sequential scheme (paper 4): ``mu:1``, the paper's straggler rule with the value of all its
  experiments (a worker slower than twice the fastest is a straggler); its planner waits a
  round out when its rule says so;
- an exact code (``s`` set: uncoded, gc-fr, gc-cr, heter, gc-partial, cyclic-mds,
  comm-efficient, a matrix given its ``s``): ``decodable``, stop as soon as the arrivals decode
  the full gradient;
- a code that says its own (``own_wait``; ``bcc``: ``covered``);
- any other (ignore-straggler and approximate codes): the fastest ``n - (c - 1)`` workers when
  each partition is on ``c`` of them, as many as gradient coding with the same storage waits for
  (paper 2's comparison), one straggler ignored when ``c = 1``; the master decodes what they hold.
"""

from __future__ import annotations

import numpy as np


def copies(scheme) -> int:
    """The most workers (messages) holding one partition.

    >>> import gradcode
    >>> copies(gradcode.make_code("isgc-cr", n=6, c=3)), copies(gradcode.make_code("ignore", n=4))
    (3, 1)
    """
    held = np.concatenate([np.asarray(p, int).ravel() for p in scheme.placement])
    return int(np.bincount(held).max()) if held.size else 0


def design_wait(scheme) -> tuple[str, str]:
    """``(policy SPEC, why)``: the wait policy ``scheme`` was designed for (module doc).

    >>> import gradcode
    >>> design_wait(gradcode.make_code("gc-cr", n=6, s=2))[0]
    'decodable'
    >>> design_wait(gradcode.make_code("isgc-cr", n=6, c=3))
    ('fastest:4', 'ignore-straggler or approximate: the fastest n - (c - 1) = 4 of 6 workers, as many as gradient coding with c = 3 copies of each partition waits for; the master decodes what they hold')
    >>> design_wait(gradcode.make_code("m-sgc", n=4, B=1, W=2, lam=2))[0]
    'mu:1'
    """
    n = int(scheme.n_workers)
    own = getattr(scheme, "own_wait", None)
    if own:
        return own
    if int(scheme.T) or tuple(scheme.waitout_rules):
        return ("mu:1", "paper 4's straggler rule with its experiments' mu = 1 (a worker slower "
                "than twice the fastest is a straggler); the planner waits a round out when its "
                "rule says so")
    s = getattr(scheme, "s", None)
    if s is not None:
        return ("decodable", f"an exact code: stop as soon as the arrivals decode the full "
                f"gradient (any {n - s} of {n} messages do)")
    c = copies(scheme)
    w = max(1, n - max(c - 1, 1))
    return (f"fastest:{w}", f"ignore-straggler or approximate: the fastest n - (c - 1) = {w} of "
            f"{n} workers, as many as gradient coding with c = {c} copies of each partition "
            "waits for; the master decodes what they hold")


def pointless_wait(scheme, spec: str) -> str | None:
    """A one-line warning when waiting with ``spec`` makes the code's redundancy pointless:
    ``all`` for a single-round code holding some partition on several workers (their extra
    work buys nothing, since every worker is waited for); else None.

    >>> import gradcode
    >>> print(pointless_wait(gradcode.make_code("gc-cr", n=4, s=1), "all"))
    wait all waits for every worker, so gc-cr's redundancy (partitions on up to 2 workers) buys nothing; its own policy is decodable
    >>> pointless_wait(gradcode.make_code("uncoded", n=4), "all") is None
    True
    """
    c = copies(scheme)
    if spec.strip() != "all" or int(scheme.T) or c < 2:
        return None
    return (f"wait all waits for every worker, so {scheme.name}'s redundancy (partitions on up "
            f"to {c} workers) buys nothing; its own policy is "
            f"{design_wait(scheme)[0]}")


def resolve_wait(scheme, spec: str | None) -> tuple[str, list[str]]:
    """``(SPEC, lines)``: the policy a run of ``scheme`` waits with (``spec``, or the scheme's own
    when None) and the lines a run starts with to say so: the policy taken by default and why,
    and ``pointless_wait``'s warning.

    >>> import gradcode
    >>> resolve_wait(gradcode.make_code("gc-fr", n=4, s=1), None)[0]
    'decodable'
    >>> resolve_wait(gradcode.make_code("gc-fr", n=4, s=1), "all")[1]
    ["warning: wait all waits for every worker, so gc-fr's redundancy (partitions on up to 2 workers) buys nothing; its own policy is decodable"]
    """
    lines = []
    if spec is None:
        spec, why = design_wait(scheme)
        lines.append(f"wait {spec}, {scheme.name}'s own: {why}")
    warning = pointless_wait(scheme, spec)
    if warning:
        lines.append(f"warning: {warning}")
    return spec, lines
