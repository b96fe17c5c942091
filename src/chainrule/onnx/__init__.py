"""Export to ONNX: ``chainrule.onnx.export(model, args, f, ...)``, PyTorch's call. Needs the
``onnx`` extra (``pip install 'chainrule[onnx]'``); onnx is imported when export runs."""

from . import converters, more_converters, pool_converters, sequence  # noqa: F401  (register)
from .export import UnsupportedOperatorError, export
from .trace import TracerWarning

__all__ = ["TracerWarning", "UnsupportedOperatorError", "export"]
