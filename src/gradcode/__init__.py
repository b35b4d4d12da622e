"""gradcode: straggler-tolerant distributed training with gradient coding.

Layers: ``gradcode.codes`` (schemes), ``gradcode.analysis`` (bounds, expected errors),
``gradcode.cli`` (the ``gradcode`` command).
"""

from .codes import Code, Decoding, from_matrix, make_code

__version__ = "0.1.0"
__all__ = ["Code", "Decoding", "from_matrix", "make_code", "__version__"]
