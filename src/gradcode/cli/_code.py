"""``gradcode list``, ``gradcode code`` and ``gradcode decode``: inspect codes and decode them."""

from __future__ import annotations

import inspect
import json
import sys

import numpy as np

from ..codes import Code
from ..registry import CODES, code_class, code_parameters, make_code
from ._common import UsageError, describe_code, fmt, parse_code_params, seed

#: longest list (B's rows and columns, decode's weights and recovered) printed in full as text
SHOWN = 40


def add_parser(sub) -> None:
    names = ", ".join(sorted(CODES))
    ls = sub.add_parser("list", help="every code and sequential scheme with its parameters",
                        description="List every code and sequential scheme with its parameters "
                        "(flags of `gradcode code`, `decode`, `simulate` and `train`).")
    ls.set_defaults(func=run_list)
    c = sub.add_parser("code", help="a code's placement, coding matrix B, load and straggler tolerance",
                       description=f"Show a code. NAME is one of: {names}. "
                       "Parameters follow as --param value (see `gradcode list`).")
    c.add_argument("name", metavar="NAME")
    c.add_argument("--json", action="store_true", help="emit JSON")
    c.set_defaults(func=run_code)
    d = sub.add_parser("decode", help="decode a code from the set of workers that answered",
                       description=f"Decode a code from the workers that answered. NAME: {names}.")
    d.add_argument("name", metavar="NAME")
    d.add_argument("--received", default="", help="comma-separated worker indices, e.g. 0,2,5")
    d.add_argument("--method", default=None, choices=_methods(),
                   help="decoder: the scheme's own (default), optimal (least squares), or one the "
                        "scheme names (isgc-hr: alg3, paper 2's Alg. 3 as printed)")
    d.add_argument("--decode-seed", dest="seed", type=seed, default=0,
                   help="seed for random tie-breaking (default 0)")
    d.add_argument("--json", action="store_true", help="emit JSON")
    d.set_defaults(func=run_decode)


def run_list(args, extra) -> int:
    width = max(map(len, CODES))
    for name in sorted(CODES):
        params = ", ".join(k if p.default is inspect.Parameter.empty else f"{k}={p.default}"
                           for k, p in code_parameters(name).items())
        print(f"{name:<{width}}  {params}")
    return 0


def code_summary(code) -> dict:
    load = np.asarray(code.load)
    return {**code.describe(), "n_workers": code.n_workers, "n_partitions": code.n_partitions,
            "tolerates_s": code.s, "max_load": float(load.max()), "mean_load": float(load.mean()),
            "max_abs_coefficient": code.max_coefficient,
            "placement": [p.tolist() for p in code.placement],
            "B": code.B.tolist() if code.n_workers * code.n_partitions <= 250_000 else None,
            **_sliced_summary(code)}


def _sliced_summary(code) -> dict:
    """A code sending coded slices: ``slices`` and its ``(n, k, m)`` encoding (``B`` being then
    its 0/1 placement)."""
    m = int(getattr(code, "slices", 1))
    if m == 1:
        return {"slices": 1}
    small = code.n_workers * code.n_partitions * m <= 250_000
    return {"slices": m, "encoding": code.encoding.tolist() if small else None}


def _print_code(code, out) -> None:
    info = code_summary(code)
    params = ", ".join(f"{k}={v}" for k, v in code.params.items())
    print(f"{code.name}({params}): {code.n_workers} workers, {code.n_partitions} partitions", file=out)
    tol = f"exact with any {code.s} stragglers" if code.s is not None else code.decoder
    print(f"{tol}; load max {info['max_load']:.4g}, mean {info['mean_load']:.4g}; "
          f"largest |coefficient| {code.max_coefficient:.4g}", file=out)
    if code.n_workers > SHOWN or code.n_partitions > SHOWN:
        print(f"(B not shown for more than {SHOWN} workers or partitions; use --json)", file=out)
        return
    m = int(getattr(code, "slices", 1))
    if m == 1:
        return _print_matrix(code, code.B, out)
    print(f"each worker sends one coded vector of 1/{m} of the gradient's length: slice u of "
          f"its message is sum_j E[i, j, u] (slice u of g_j); B is its placement", file=out)
    for u in range(m):
        print(f"E[:, :, {u}] (slice {u}):", file=out)
        _print_matrix(code, code.encoding[:, :, u], out)


def _print_matrix(code, B, out) -> None:
    width = max(5, max(len(fmt(v)) for v in B.ravel()) + 1)
    head = "worker  load   " + "".join(f"g{j}".rjust(width) for j in range(code.n_partitions))
    print(head, file=out)
    for i, row in enumerate(B):
        print(f"{i:>6}  {code.load[i]:<6.3g} " + "".join(fmt(v).rjust(width) for v in row), file=out)


def _print_scheme(scheme, as_json: bool) -> None:
    """A sequential scheme (paper 4): delay T, load, parameters, the single-round code inside."""
    info = {**scheme.describe(), "T": scheme.T, "load": float(np.max(scheme.load)),
            "base_code": repr(scheme.base_code)}
    if as_json:
        print(json.dumps(info, default=str))
        return
    print(f"{scheme!r}: sequential scheme, decoding delay T = {scheme.T} rounds, "
          f"normalized load {info['load']:.4g}")
    print(f"parameters: {scheme.params}; single-round code inside: {scheme.base_code!r}")


def run_code(args, extra) -> int:
    code = make_code(args.name, **parse_code_params(args.name, extra))
    if not isinstance(code, Code):
        _print_scheme(code, args.json)
        return 0
    if args.json:
        print(json.dumps(code_summary(code)))
    else:
        _print_code(code, sys.stdout)
    return 0


def _methods() -> list[str]:
    """``decode --method`` choices: optimal and every registered code's named decoders."""
    named = {m for name in CODES for m in getattr(code_class(name), "methods", ())}
    return ["optimal", *sorted(named)]


def run_decode(args, extra) -> int:
    code = make_code(args.name, **parse_code_params(args.name, extra))
    if not isinstance(code, Code):
        raise UsageError(f"NAME: {args.name!r} is a sequential scheme; decode it across rounds with "
                         "gradcode.sequential.replay")
    received = _received(args.received, code.n_workers)
    if args.method not in (None, "optimal", *code.methods):
        raise UsageError(f"--method: {args.name} decodes by "
                         f"{', '.join(['optimal', *code.methods])}, got {args.method!r}")
    d = code.decode(received, method=args.method, rng=np.random.default_rng(args.seed))
    result = {"code": code.describe(), "received": received, "method": d.method,
              "weights": d.weights.tolist(), "recovered": d.recovered.tolist(), "exact": d.exact,
              "error": d.error}
    if args.json:
        print(json.dumps(result))
        return 0
    got = str(received) if len(received) <= SHOWN else f"{len(received)} workers"
    print(f"{describe_code(code)}: received {got} -> decoder {d.method}, "
          f"{'exact' if d.exact else 'not exact'}, error "
          f"{'||wB-1||^2' if d.weights.ndim == 1 else 'mean_u ||W_u E - e_u||^2'} = {d.error:.4g}")
    weights = [("weights:  ", d.weights, "workers")] if d.weights.ndim == 1 else [
        (f"weights[{u}]:", d.weights[:, u], "workers") for u in range(d.weights.shape[1])]
    for label, values, what in (*weights, ("recovered:", d.recovered, "partitions")):
        if len(values) <= SHOWN:
            print(f"{label} " + " ".join(fmt(v) for v in values))
        else:                            # shortened as `gradcode code` shortens B
            print(f"{label} {int(np.count_nonzero(values))} of {len(values)} {what} nonzero "
                  f"(not listed for more than {SHOWN} {what}; use --json)")
    return 0


def _received(text: str, n: int) -> list[int]:
    """``--received 0,2,5``: distinct worker indices in ``0..n-1``, no empty items (``0,,1``);
    an empty flag is no worker."""
    if not text.strip():
        return []
    out = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            raise UsageError(f"--received: empty item in {_clip(text)!r}; expected "
                             "comma-separated worker indices, e.g. 0,2,5")
        try:
            i = int(item)
        except ValueError:
            raise UsageError(f"--received: expected comma-separated worker indices, got "
                             f"{_clip(item)!r}") from None
        if not 0 <= i < n:
            raise UsageError(f"--received: worker {_clip(item)} out of range: the code has "
                             f"n = {n} workers, 0..{n - 1}")
        if i in out:
            raise UsageError(f"--received: worker {i} listed twice; expected each worker once")
        out.append(i)
    return out


def _clip(text: str, width: int = 40) -> str:
    """``text`` cut to ``width`` characters for a one-line error."""
    return text if len(text) <= width else text[:width - 3] + "..."
