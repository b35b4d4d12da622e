"""gradcode: straggler-tolerant distributed training with gradient coding.

Layers: ``gradcode.codes`` (single-round schemes), ``gradcode.sequential`` (paper 4),
``gradcode.registry`` (``make_code``: every scheme by name),
``gradcode.stragglers`` (delay and pattern models), ``gradcode.analysis`` (bounds, expected
errors), ``gradcode.sim`` (virtual-clock simulator, tuning), ``gradcode.experiments`` (the papers'
figures), ``gradcode.runtime`` (real PyTorch training, local or Ray; the only layer importing
torch and ray), ``gradcode.records`` (the per-round record both write), ``gradcode.cli`` (the
``gradcode`` command).  Each is an attribute after ``import gradcode``, loaded on first use.
"""

from .codes import Code, Decoding, from_matrix

__version__ = "0.1.0"
__all__ = ["Code", "Decoding", "from_matrix", "make_code", "__version__"]

#: loaded on first use: ``import gradcode`` imports neither torch nor ray (``gradcode.runtime``
#: itself loads torch only when ``train`` & co. are first touched), nor the sequential schemes
#: (``make_code`` comes from ``gradcode.registry``, which imports every scheme's class)
_SUBMODULES = {"analysis", "cli", "codes", "engine", "registry", "sequential", "sim", "stragglers",
               "experiments", "records", "runtime"}


def __getattr__(name):
    """``gradcode.make_code``, ``gradcode.sequential`` etc. without importing every layer up
    front."""
    if name == "make_code":
        from .registry import make_code
        globals()["make_code"] = make_code      # once: later look-ups find it directly
        return make_code
    if name in ("estimate_runtime", "tune", "simulate"):
        from . import sim
        return getattr(sim, name)
    if name in _SUBMODULES:
        import importlib
        return importlib.import_module(f"gradcode.{name}")
    raise AttributeError(f"module 'gradcode' has no attribute {name!r}")
