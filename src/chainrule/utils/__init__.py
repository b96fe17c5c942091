"""PyTorch's import paths: ``chainrule.utils.data`` is ``chainrule.data``;
``chainrule.utils.hooks``, the handles that hook registrations return; and
``chainrule.utils.tensorboard``, the SummaryWriter, imported on first use (it needs the
tensorboard package, which ``import chainrule`` must not)."""

import importlib
from typing import Any

from . import data, hooks

__all__ = ["data", "hooks"]  # tensorboard: by name only, so that * does not import it


def __getattr__(name: str) -> Any:
    if name == "tensorboard":
        return importlib.import_module(".tensorboard", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
