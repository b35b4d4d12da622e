"""Paper 3 (Wang et al., *Heterogeneity-aware Gradient Coding*), Sec. VI: the ledger rows of
``heter-clusters`` (Fig. 2, 3, 5, Table II, the abstract's 3x), from the statistics its run
computes.
"""

from __future__ import annotations

import math

import numpy as np

from ._ledger import Claim, holds, within
from .heter_model import CLUSTER_RULE, CV, NOISE_LABEL, TABLE_II, TOL, UNIT_S


def _span(values) -> str:
    return f"{min(values):.0f}-{max(values):.0f}"


def _holds_upto(pts, key="speedup_mean") -> str:
    """The noise levels (from the smallest) up to which the speed-up stays within ``TOL``."""
    ok = [x["level"] for x in pts if all(r[key] >= 3 * (1 - TOL) for r in pts
                                         if r["level"] <= x["level"])]
    return f"up to level {max(ok):g}" if ok else "at no level tried"


def _noisy_3x(pts, key="speedup_mean") -> bool:
    """Whether the speed-up is within ``TOL`` of 3x at some noise level > 0 (not built in)."""
    return any(r[key] >= 3 * (1 - TOL) for r in pts if r["level"] > 0)


#: the rule of every row on the 3x: ``.format(where it is measured)``
THREE_X = (f"rule (every 3x row): qualitative if the speed-up is within ±{TOL:.0%} of 3x "
           f"({3 * (1 - TOL):.1f}-{3 * (1 + TOL):.1f}x) {{}}, not reproduced otherwise")


def _fig2_claims(st) -> list:
    w, v, ex, sp = "Sec. VI-A1, Fig. 2", st["vcpus"], st["exact"], st["speeds"]
    built = (f"built in: with throughput ~ vCPUs the noiseless ratio is mean c / min c of the "
             f"machines cyclic must wait for; Cluster-A's vCPUs {v}: mean {np.mean(v):g} / min "
             f"{min(v)} = {np.mean(v) / min(v):.2f}")
    c1, c2 = st["cyc"][1], st["cyc"][2]
    rise = {s: st["cyc"][s][1] / st["cyc"][s][0] - 1 for s in (1, 2)}
    grows = [s for s in (1, 2) if rise[s] > 0.2]
    naive = st["naive"][1]
    rising = all(b > a for a, b in zip(naive[:-2], naive[1:-1])) and math.isinf(naive[-1])
    claims = [
        Claim(w, "naive's time grows with the delay and it cannot run under a fault",
              "grows; never completes", f"{st['naive'][1][0]:.2f} -> {st['naive'][1][-2]:.2f} s "
              f"(s = 1, delay 0 -> {st['delays'][-2]:g} s); fault: "
              + ("never completes" if math.isinf(st["naive"][1][-1]) else "completes"),
              holds(rising), "rule: qualitative if naive's time rises at every delay step and "
              f"never completes under a fault; the paper gives no delay values: swept "
              f"0-{st['delays'][-2]:g} s and a fault; built in (naive waits for every worker)"),
        Claim(w, "cyclic's time also grows with the delay, toward the low-capacity workers' "
              "time under a fault", "grows", f"s = 1: {c1[0]:.2f} -> {c1[1]:.2f} s "
              f"({rise[1]:+.0%}); s = 2: {c2[0]:.2f} -> {c2[1]:.2f} s ({rise[2]:+.0%})",
              holds(grows), "rule: qualitative if it grows by over 20 % (no delay -> fault) "
              f"for some s: for s = {', '.join(map(str, grows)) or 'none'}: without "
              f"delay cyclic waits for the (s+1)-th slowest machine, c = {sp[1]:g} for s = 1 "
              f"(a 2-vCPU machine already), c = {sp[2]:g} for s = 2 until a delay forces a "
              "2-vCPU machine in"),
        Claim(w, "heter-aware and group-based: time almost unchanged by the delay",
              "almost unchanged", f"within {st['flat']:.0%} over every delay and a fault",
              holds(st["flat"] <= TOL), f"rule: qualitative if each stays within {TOL:.0%} of "
              "its fastest over the swept delays and a fault; built in: they wait for m - s "
              "machines that all finish together, the s delayed ones are never waited for"),
        Claim("Fig. 2 caption", "heter-aware / group-based perform best at every delay",
              "best", f"best at {st['best2']} of {st['n2']} (s, delay) points",
              holds(st["best2"] == st["n2"]), "rule: qualitative if one of them is the fastest "
              "at every (s, delay) point; throughput ~ vCPUs and the delays are ours (the paper "
              "gives neither)"),
        Claim(w, "under a fault, s = 1: heter-aware faster than cyclic", 3.0, st["fault"][1],
              within(st["fault"][1], 3 * (1 - TOL), 3 * (1 + TOL)),
              f"{THREE_X.format('under a fault')}; {built}, the "
              "exact expectation over fault sets is "
              f"{ex[1]:.2f}x; ours has {CV:.0%} fluctuation on top (heter-aware waits for m - s "
              "machines, so noise costs it more)", fmt="{:.2f}", unit="x"),
        Claim(w, "under a fault, s = 2: heter-aware faster than cyclic", 3.0, st["fault"][2],
              within(st["fault"][2], 3 * (1 - TOL), 3 * (1 + TOL)),
              f"{THREE_X.format('under a fault')}; {built} unless "
              "both 2-vCPU machines fail (1 in "
              f"{math.comb(len(v), 2)}): the exact expectation is {ex[2]:.2f}x; {CV:.0%} "
              "fluctuation on top", fmt="{:.2f}", unit="x")]
    for kind, label in NOISE_LABEL.items():
        p1, p2 = st["robust"][1, kind], st["robust"][2, kind]
        lo, hi = [r for r in p1 if r["level"] > 0][0], p1[-1]
        claims.append(Claim(
            w, f"the 3x under a fault where it is not built in: random per-worker noise "
            f"({label})", 3.0, f"s = 1: {lo['speedup_mean']:.2f} ± {lo['speedup_sd']:.2f} at "
            f"{lo['level']:g} ... {hi['speedup_mean']:.2f} ± {hi['speedup_sd']:.2f} at "
            f"{hi['level']:g} (mean ± sd over {lo['trials']} trials)",
            holds(_noisy_3x(p1) and _noisy_3x(p2)),
            f"{THREE_X.format('at some noise level > 0 tried, for s = 1 and s = 2')}: within "
            f"{TOL:.0%} of 3x {_holds_upto(p1)} for "
            f"s = 1, {_holds_upto(p2)} for s = 2 (level 0: no noise, built in), falling as "
            "the noise grows: it adds to both schemes' times and "
            "heter-aware waits for more machines; the paper gives no noise model"))
    return claims


def _fig35_claims(st) -> list:
    usage, comm, per = st["usage"], st["comm"], st["per"]
    nslow = {c: TABLE_II[c][next(i for i, x in enumerate(TABLE_II[c]) if x)] for c in TABLE_II}
    ccomm = "/".join(f"{comm[c]['speedup']:.1f}" for c in TABLE_II)
    low = [c[-1] for c in TABLE_II if comm[c]["naive"] < 20]
    missing = ("needs a model of communication (each worker's gradient upload per iteration: "
               "AlexNet's ~61 M parameters over QingCloud's network) and of background load, "
               "measured per machine; the paper gives neither")
    sizes = [sum(TABLE_II[c]) for c in TABLE_II]
    half = [u for n in ("heter-aware", "group-based") for u in usage[n]]
    return [
        Claim("Sec. VI, Table II", "clusters range from 8 to 48 workers", "8-48",
              ", ".join(f"{c[-1]}: {sum(TABLE_II[c])}" for c in TABLE_II),
              holds((min(sizes), max(sizes)) == (8, 48), qualitative=False),
              "rule: the text's range against the sums of Table II's columns: Cluster-D's "
              f"sums to {sum(TABLE_II['Cluster-D'])}; we use the table"),
        Claim("Sec. VI-A2, Fig. 3", "heter-aware and group-based are best on every cluster",
              "best on A-D", "best on A-D" if st["best_everywhere"] else "not on every cluster",
              holds(st["best_everywhere"]), f"{CLUSTER_RULE}; throughput ~ vCPUs, the 1.5 s "
              "unit and the Exp(1 s) delay are ours"),
        Claim("Sec. VI-A2, Fig. 3", "cyclic even worse than naive", "worse",
              f"worse on {', '.join(c[-1] for c in st['worse']) or 'none'}; cyclic / naive "
              + ", ".join(f"{c[-1]} {st['cn'][c]:.2f}" for c in TABLE_II),
              holds(len(st["worse"]) == len(TABLE_II)), f"{CLUSTER_RULE}; cyclic loads every "
              "machine (s+1)/m, so it waits for a slowest machine unless it "
              "can skip all of them (at most s = 1; machines with the fewest vCPUs: "
              + ", ".join(f"{c[-1]} {nslow[c]}" for c in TABLE_II) + "); on Cluster-C it "
              f"skips the one 2-vCPU machine and its 4-vCPU machines need {UNIT_S:g} s, exactly "
              "naive's slowest machine: there only the delays separate the two"),
        Claim("Abstract, Sec. VII", "up to 3x faster than cyclic", 3.0, max(per.values()),
              within(max(per.values()), 3 * (1 - TOL), 3 * (1 + TOL)),
              f"{THREE_X.format('on some cluster')}; per cluster (Fig. 3 runs): "
              + ", ".join(
                  f"{c[-1]} {v:.2f}x" for c, v in per.items()) + "; set by throughput ~ vCPUs; "
              f"a communication time leaving heter-aware half idle (Fig. 5) would cut them to "
              f"{ccomm}x", fmt="{:.2f}", unit="x"),
        Claim("Sec. VI-A, Fig. 5", "naive's resource usage", "< 20 %",
              f"{_span(usage['naive'])} %", holds(max(usage["naive"]) < 20),
              f"{CLUSTER_RULE}; {missing}; a constant communication time per iteration "
              "calibrated so "
              f"heter-aware uses 50 % gives naive {_span([comm[c]['naive'] for c in TABLE_II])} "
              f"% (A-D): below 20 % on {', '.join(low) or 'none'}" + ("" if len(low) == 4 else
                                                                     ", not on the others")),
        Claim("Sec. VI-A, Fig. 5", "cyclic uses more than naive (it discards stragglers)",
              "cyclic > naive", f"on {', '.join(st['cyc_gt_naive']) or 'none'}",
              holds(len(st["cyc_gt_naive"]) == len(TABLE_II)), f"{CLUSTER_RULE}; absolute "
              "values need the missing model"),
        Claim("Sec. VI-A, Fig. 5", "heter-aware / group-based: high usage, about half idle "
              "because of communication", "~50 %",
              f"{_span(usage['heter-aware'] + usage['group-based'])} %",
              holds(all(40 <= u <= 60 for u in half)),
              f"{CLUSTER_RULE} ('about half': 40-60 %); {missing}; with the constant "
              "communication time above (tau = "
              + "/".join(f"{comm[c]['tau']:.2f}" for c in TABLE_II) + " s, A-D) the "
              f"speed-up over cyclic falls to {ccomm}x"
              + (", so Fig. 5's idle half and the 3x are not both explained by a time added to "
                 "every scheme" if max(c["speedup"] for c in comm.values()) < 3 * (1 - TOL)
                 else "")),
        Claim("Fig. 5 caption", "group-based has the best resource usage", "best",
              f"best on {', '.join(st['grp_best']) or 'none'}",
              holds(len(st["grp_best"]) == len(TABLE_II)), f"{CLUSTER_RULE} (a tie counts); "
              "ties heter-aware where Alg. 2 finds no disjoint group (Cluster-C: sum c_i = 161 "
              "is odd, so no set of n_i = 2 c_i covers each partition once); the margin depends "
              "on the 10 % fluctuation we assume"),
    ]


def cluster_claims(st) -> list:
    """The ledger rows of ``heter-clusters`` from its statistics (``heter._cluster_stats``)."""
    return _fig35_claims(st)[:2] + _fig2_claims(st) + _fig35_claims(st)[2:]
