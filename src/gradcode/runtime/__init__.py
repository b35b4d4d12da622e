"""Runtime layer: real coded training of PyTorch models, in-process or on Ray.

The only package of gradcode that imports torch and ray (``pip install gradcode[train]``).

>>> from gradcode.runtime import TrainConfig, train
>>> result = train(TrainConfig(code="isgc-cr", code_params={"n": 4, "c": 2}, wait="fastest:2",
...                            delay="exp:0.05", rounds=20, out="runs/demo"))
"""

from ._config import TrainConfig, load_config
from ._train import TrainResult, split_partitions, train
from ._models import DATASETS, TorchData, build_model, load_torch_data, loss_for

__all__ = ["DATASETS", "TorchData", "TrainConfig", "TrainResult", "build_model", "load_config",
           "load_torch_data", "loss_for", "split_partitions", "train"]
