"""The codes layer: every single-round gradient code (pure NumPy/SciPy, no I/O).

Each code is a public class here, named by its ``name`` (``GCCR.name == "gc-cr"``); build one
by that name with ``gradcode.make_code`` (``gradcode.registry``, the layer above).
"""

from ._approximate import BGC, FRCApprox
from ._base import EXACT_RTOL, Code, Decoding, exact_within, optimal_weights
from ._checks import Immutable, check_int, check_rng, check_shares, readonly
from ._comm import CommEfficient
from ._conflict import conflict_graph, max_independent_set
from ._coupon import BCC
from ._custom import MatrixCode, from_matrix
from ._cyclic import GCCR, ISGCCR
from ._expander import Expander
from ._heterogeneous import Heter, HeterGroup, check_speeds
from ._hybrid import ISGCHR
from ._mds import CyclicMDS
from ._partial import GCPartial
from ._planner import decode_rng, result_weights
from ._repetition import GCFR, ISGCFR, Ignore, Uncoded
from ._robust import ROBUST_EXHAUSTIVE_LIMIT, ROBUST_RTOL, straggler_set_not_tolerated
from ._stochastic import StochasticGC

__all__ = ["BCC", "BGC", "Code", "CommEfficient", "CyclicMDS", "Decoding", "EXACT_RTOL",
           "Expander", "FRCApprox", "GCCR", "GCFR", "GCPartial", "Heter", "HeterGroup", "ISGCCR",
           "ISGCFR", "ISGCHR", "Ignore", "Immutable", "MatrixCode", "ROBUST_EXHAUSTIVE_LIMIT",
           "ROBUST_RTOL", "StochasticGC", "Uncoded", "check_int", "check_rng", "check_shares",
           "check_speeds", "conflict_graph", "decode_rng", "exact_within", "from_matrix",
           "max_independent_set", "optimal_weights", "readonly", "result_weights",
           "straggler_set_not_tolerated"]
