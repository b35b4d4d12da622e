"""Stragglers: which workers straggle in which round.

Patterns (``_patterns``, paper 4 Sec. 2 and 2.1, App. C): boolean ``(rounds, n)`` arrays, the
deterministic s-stragglers-per-round, (B, W, λ)-bursty and (N, W′, λ′)-arbitrary models with their
conformance checks and random conforming generators, their windowed mixtures (``AnyOf``), the
Gilbert-Elliott random source and the μ-rule that turns response times into a pattern.
Delay models and measured traces live in ``_delays`` and ``_traces``.
"""

from ._patterns import (AnyOf, Arbitrary, Bursty, GilbertElliott, SPerRound, StragglerModel,
                        arbitrary_ok, bursty_ok, check_pattern, enumerate_patterns,
                        identify_stragglers, s_per_round_ok)

from ._delays import (Compute, Constant, DelayModel, Exponential, ShiftedExponential, SlowActive,
                      Trace, parse_compute, parse_delay, COMPUTE_HELP, DELAY_HELP)
from ._delays import GilbertElliott as GilbertElliottDelay
from ._traces import fit_load_slope, load_trace, traces_dir

__all__ = ["COMPUTE_HELP", "DELAY_HELP", "Compute", "Constant", "DelayModel", "Exponential", "GilbertElliottDelay",
           "ShiftedExponential", "SlowActive", "Trace", "fit_load_slope", "load_trace",
           "parse_compute", "parse_delay", "traces_dir",
           "AnyOf", "Arbitrary", "Bursty", "GilbertElliott", "SPerRound", "StragglerModel",
           "arbitrary_ok", "bursty_ok", "check_pattern", "enumerate_patterns",
           "identify_stragglers", "s_per_round_ok"]
