"""Simulator layer: wait policies, the virtual-clock simulator, NumPy training, tuning."""

from ._simulate import SimResult, arrival_times, simulate
from ._train import MODELS, Trainer
from ._tune import (RuntimeEstimate, best_per_family, estimate_runtime, isgc_w_table,
                    parameter_grid, tune)
from ._wait import (All, Deadline, Fastest, FirstOf, MuRule, UntilDecodable, WaitPolicy,
                    parse_wait)

__all__ = ["isgc_w_table", "RuntimeEstimate", "best_per_family", "estimate_runtime", "parameter_grid", "tune",
           "All", "Deadline", "Fastest", "FirstOf", "MODELS", "MuRule", "SimResult", "Trainer",
           "UntilDecodable", "WaitPolicy", "arrival_times", "parse_wait", "simulate"]
