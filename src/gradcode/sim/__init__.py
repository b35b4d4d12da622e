"""Simulator layer: wait policies, the virtual-clock simulator, NumPy training, tuning."""

from ..engine import (All, Deadline, Fastest, FirstOf, MuRule, UntilCovered, UntilDecodable,
                      WaitPolicy, arrival_times, parse_wait)
from ._search import SearchResult, search_runtimes
from ._simulate import SimResult, simulate
from ._train import MODELS, Model, Trainer
from ._isgc_w import isgc_w_table
from ._tune import (LOAD_FAMILIES, RuntimeEstimate, best_per_family, estimate_runtime,
                    parameter_grid, tune)

__all__ = ["LOAD_FAMILIES", "isgc_w_table", "RuntimeEstimate", "best_per_family", "estimate_runtime", "parameter_grid", "tune",
           "All", "Deadline", "Fastest", "FirstOf", "MODELS", "Model", "MuRule", "SimResult", "Trainer",
           "UntilCovered", "UntilDecodable", "WaitPolicy", "arrival_times", "parse_wait", "SearchResult", "search_runtimes", "simulate"]
