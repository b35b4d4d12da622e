"""Runtime layer: real coded training of PyTorch models, in-process or on Ray.

The only package of gradcode that imports torch and ray (``pip install gradcode[train]``).

>>> from gradcode.runtime import TrainConfig, train
>>> result = train(TrainConfig(code="isgc-cr", code_params={"n": 4, "c": 2}, wait="fastest:2",
...                            delay="exp:0.05", rounds=20, out="runs/demo"))
"""

from ..engine import StopTraining                   # on_round raises it to end a run cleanly
from ._backends import BACKENDS, backend            # torch-free: name -> executor class
from ._config import TrainConfig, load_config       # torch-free: the CLI builds train's flags
from ._resolve import DEFAULT_MODEL, RunSpec, resolve   # torch-free: a run resolved once

#: loaded on first use, so that ``import gradcode.runtime`` (the CLI, ``gradcode.runtime`` after
#: ``import gradcode``) imports neither torch nor ray until training is asked for
_LAZY = {"TrainResult": "_train", "split_partitions": "_train", "train": "_train",
         "DATASETS": "_models", "TorchData": "_models", "build_model": "_models",
         "load_torch_data": "_models", "loss_for": "_models",
         "ray_session": "_ray"}

__all__ = ["BACKENDS", "DATASETS", "DEFAULT_MODEL", "RunSpec", "StopTraining", "TorchData",
           "TrainConfig", "TrainResult", "backend", "build_model", "load_config",
           "load_torch_data", "loss_for", "ray_session", "resolve", "split_partitions", "train"]


def __getattr__(name):
    if name in _LAZY:
        import importlib
        value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
