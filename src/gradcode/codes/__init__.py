"""The codes layer: every single-round gradient code (pure NumPy/SciPy, no I/O)."""

from ._base import Code, Decoding, optimal_weights
from ._conflict import conflict_graph, max_independent_set
from ._custom import from_matrix
from ._registry import CODES, code_class, code_parameters, make_code

__all__ = ["Code", "Decoding", "CODES", "code_class", "code_parameters", "conflict_graph",
           "from_matrix", "make_code", "max_independent_set", "optimal_weights"]
