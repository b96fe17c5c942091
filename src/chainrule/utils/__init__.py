"""PyTorch's import paths: ``chainrule.utils.data`` is ``chainrule.data``; and
``chainrule.utils.hooks``, the handles that hook registrations return."""

from . import data, hooks

__all__ = ["data", "hooks"]
