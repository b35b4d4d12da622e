"""Analysis of codes: conflict graphs, recovery bounds, robustness (Condition 1), completion
time, loads, the float32 wire's error and its refinement, and paper 5's expected decoding error
under shuffling.

Names are imported lazily from the submodules listed in ``_EXPORTS``.
"""

import importlib

_EXPORTS = {
    "conflict_graph": "gradcode.codes",
    "recovery_bounds": "gradcode.analysis._bounds",
    "independence_numbers": "gradcode.analysis._bounds",
    "is_robust": "gradcode.analysis._bounds",
    "normalized_load": "gradcode.analysis._bounds",
    "float32_error": "gradcode.analysis._wire",
    "wire_errors": "gradcode.analysis._wire",
    "refined_wire_errors": "gradcode.analysis._wire",
    "digits_gradients": "gradcode.analysis._wire",
    "refine": "gradcode.analysis._wire",
    "Wire": "gradcode.analysis._wire",
    "WIRE_TARGET": "gradcode.analysis._wire",
    "completion_time": "gradcode.analysis._completion",
    "expected_error": "gradcode.analysis._shuffling",
    "shuffle_permutation": "gradcode.analysis._shuffling",
    "sample_slow": "gradcode.analysis._shuffling",
    "sample_stragglers": "gradcode.analysis._shuffling",
    "non_straggler_pmf": "gradcode.analysis._shuffling",
    "sgc_load": "gradcode.analysis._sequential",
    "SGC_SCHEMES": "gradcode.analysis._sequential",
    "check_m_sgc": "gradcode.analysis._sequential",
    "check_sr_sgc": "gradcode.analysis._sequential",
    "sr_sgc_s": "gradcode.analysis._sequential",
    "load_lower_bound_f1": "gradcode.analysis._sequential",
    "load_lower_bound_f2": "gradcode.analysis._sequential",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'gradcode.analysis' has no attribute {name!r}")
