"""Paper 3, Sec. IV-A: eq. 5 (each worker's share of partitions), eq. 6-7 (the cyclic support)
and Example 1, against gradcode's ``heter`` (``theorems``; see ``heter_common``)."""

from __future__ import annotations

from itertools import product

import numpy as np

from ...analysis import completion_time, is_robust
from ...registry import make_code
from ._framework import Evidence, Tally, statement
from .heter_common import (TOL, cached_code, condition1, eq6_copies, eq6_support, fmt_instance,
                           fmt_sizes, integer_instances, quotas, random_speed_instances)


def allocation_fails(speeds, s: int, k: int, allocation, B) -> str:
    """Eq. 5 (integer quotas): ``n_i = k(s+1) c_i / sum c_j`` and ``||b_i||_0 = n_i``."""
    q = quotas(speeds, s, k)
    n = np.rint(q).astype(int)
    if np.abs(q - n).max() > TOL * k * (s + 1):
        return f"quotas {q.tolist()} are not integers (outside eq. 5's assumption)"
    rows = (np.asarray(B) != 0).sum(axis=1)
    if not np.array_equal(np.asarray(allocation), n) or not np.array_equal(rows, n):
        return (f"eq. 5 gives n = {n.tolist()}, ours {list(allocation)}, "
                f"||b_i||_0 = {rows.tolist()}")
    return ""


@statement(3, "Eq. 5", "each worker gets n_i = k(s+1) c_i / sum_j c_j partitions (proportional to "
                       "its throughput c_i; quotas assumed integers <= k)")
def _eq5(ctx) -> Evidence:
    t = Tally()
    for speeds, s, k in integer_instances(ctx):
        code = cached_code("heter", speeds, s, k, ctx.seed)
        bad = allocation_fails(speeds, s, k, code.allocation, code.B)
        t.count(1, bool(bad), lambda: f"{fmt_instance(speeds, s, k)}: {bad}")
    return t.evidence(f"heter's allocation and row supports vs eq. 5: {fmt_sizes(ctx)} and "
                      f"random m <= {9 if ctx.quick else 14}, speeds c = scale * n",
                      "speeds [1, 2, 3, 4, 4], s = 1, k = 7: n = [1, 2, 3, 4, 4]")


def eq6_fails(n, k: int) -> str:
    """Sec. IV-A on eq. 6: each ``D_j`` gets exactly ``s+1`` copies on ``s+1`` distinct workers
    (``s + 1 = sum(n) / k``; needs ``n_i <= k``)."""
    copies = eq6_copies(n, k)
    s1 = sum(n) // k
    for i, parts in enumerate(copies):
        if len(set(parts)) != len(parts):
            return f"n = {list(n)}, k = {k}: worker {i + 1} gets a partition twice: {parts}"
    count = np.bincount([p for parts in copies for p in parts], minlength=k + 1)[1:]
    if not np.all(count == s1):
        return f"n = {list(n)}, k = {k}: copies per partition {count.tolist()} != s+1 = {s1}"
    return ""


@statement(3, "Sec. IV-A (eq. 6)", "the cyclic assignment of eq. 6 puts each partition D_j on "
                                   "exactly s+1 distinct workers")
def _eq6_copies(ctx) -> Evidence:
    t = Tally()
    typical = ""
    M, K = (5, 4) if ctx.quick else (7, 5)
    for m in range(1, M + 1):
        for k in range(1, K + 1):
            for n in product(range(k + 1), repeat=m):
                if sum(n) % k or sum(n) == 0 or sum(n) // k > m:
                    continue
                bad = eq6_fails(n, k)
                t.count(1, bool(bad), bad)
                typical = f"n = {n}, k = {k}: {sum(n) // k} copies of each of D_1..D_{k}"
    return t.evidence(f"every n with 0 <= n_i <= k, sum n_i = k(s+1) > 0, m <= {M}, k <= {K} "
                      "(eq. 6 computed as printed, 1-based)", typical)


@statement(3, "Eq. 6-7", "heter's support is the cyclic one of eq. 6: worker i holds D_{n'_i+1}, "
                         "..., D_{n'_i+n_i} (mod k), n'_i = sum_{j<i} n_j")
def _eq6_support(ctx) -> Evidence:
    t = Tally()
    for speeds, s, k in integer_instances(ctx) + random_speed_instances(ctx):
        code = cached_code("heter", speeds, s, k, ctx.seed)
        want = eq6_support(code.allocation, k)
        got = (code.B != 0).astype(int)
        t.count(1, not np.array_equal(want, got), lambda: (
            f"{fmt_instance(speeds, s, k)}: eq. 6 gives {want.tolist()}, ours {got.tolist()}"))
    return t.evidence(f"supp(B) of heter vs eq. 6 from its n_i: {fmt_sizes(ctx)}, random "
                      "integer-quota and random-speed instances",
                      "speeds [1, 2, 3, 4, 4], s = 1, k = 7: the matrix of Example 1")


#: Example 1 as printed: supp(B_{5x7}) for c = [1, 2, 3, 4, 4], s = 1
EXAMPLE1 = np.array([[1, 0, 0, 0, 0, 0, 0],
                     [0, 1, 1, 0, 0, 0, 0],
                     [0, 0, 0, 1, 1, 1, 0],
                     [1, 1, 1, 0, 0, 0, 1],
                     [0, 0, 0, 1, 1, 1, 1]])


def example1_fails(support, speeds=(1, 2, 3, 4, 4), s: int = 1, k: int = 7, seeds=range(5)):
    """Example 1's facts for the printed ``support``, one list entry per failed fact: eq. 5-6
    reproduce it; gradcode's heter has it as support, is robust to ``s`` stragglers and has
    ``T(B) = (s+1) k / sum c`` (= 1) for every seed."""
    support = np.asarray(support)
    bad, checked = [], 0
    n = np.rint(quotas(speeds, s, k)).astype(int)
    checked += 1
    if not np.array_equal(eq6_support(n, k), support):
        bad.append(f"eq. 5-6 give {eq6_support(n, k).tolist()}")
    for seed in seeds:
        code = make_code("heter", speeds=list(speeds), s=s, k=k, seed=seed)
        T = completion_time(code, list(speeds))
        checked += 3
        if not np.array_equal((code.B != 0).astype(int), support):
            bad.append(f"seed {seed}: heter's support {(code.B != 0).astype(int).tolist()}")
        if not is_robust(code) or condition1(code.B, s) is not None:
            bad.append(f"seed {seed}: not robust to {s} straggler(s)")
        if abs(T - (s + 1) * k / sum(speeds)) > TOL:
            bad.append(f"seed {seed}: T(B) = {T}")
    return checked, bad


@statement(3, "Example 1", "c = [1, 2, 3, 4, 4], s = 1, k = 7: supp(B_{5x7}) is the printed "
                           "matrix (n = c, cyclic), and every worker finishes at the same time")
def _example1(ctx) -> Evidence:
    checked, bad = example1_fails(EXAMPLE1)
    return Evidence(checked, len(bad), "eq. 5-6 and heter (seeds 0-4) vs the printed support; "
                    "robust (exhaustive) and T(B) = 14 / 14 = 1 (completion_time)",
                    "; ".join(bad) or "n = [1, 2, 3, 4, 4], support as printed, T(B) = 1")
