"""PyTorch's import paths: ``chainrule.utils.data`` is ``chainrule.data``."""

from . import data

__all__ = ["data"]
