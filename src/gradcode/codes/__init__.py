"""The codes layer: every single-round gradient code (pure NumPy/SciPy, no I/O)."""

from ._base import EXACT_RTOL, Code, Decoding, exact_within, optimal_weights
from ._checks import Immutable, check_int, check_rng, check_shares, readonly
from ._conflict import conflict_graph, max_independent_set
from ._custom import from_matrix
from ._cyclic import GCCR
from ._heterogeneous import check_speeds
from ._planner import decode_rng, result_weights
from ._repetition import GCFR
from ._robust import ROBUST_EXHAUSTIVE_LIMIT, ROBUST_RTOL, straggler_set_not_tolerated

#: names of ``gradcode.registry`` re-exported here, imported on first use (the registry also
#: names the sequential schemes, which sit above this layer)
_REGISTRY = ("CODES", "code_class", "code_parameters", "make_code")

__all__ = ["Code", "Decoding", "CODES", "EXACT_RTOL", "GCCR", "GCFR", "Immutable", "check_shares",
           "ROBUST_EXHAUSTIVE_LIMIT", "ROBUST_RTOL", "check_int", "check_rng", "check_speeds",
           "code_class", "code_parameters", "conflict_graph", "decode_rng", "exact_within",
           "from_matrix", "make_code", "max_independent_set", "optimal_weights", "readonly",
           "result_weights", "straggler_set_not_tolerated"]


def __getattr__(name):
    if name in _REGISTRY:
        from .. import registry
        return getattr(registry, name)
    raise AttributeError(f"module 'gradcode.codes' has no attribute {name!r}")
