"""Export to ONNX: ``chainrule.onnx.export(model, args, f, ...)``, PyTorch's call. Needs the
``onnx`` extra (``pip install 'chainrule[onnx]'``); onnx is imported when export runs."""

from .export import UnsupportedOperatorError, export

__all__ = ["UnsupportedOperatorError", "export"]
