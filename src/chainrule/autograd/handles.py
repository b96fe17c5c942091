"""``RemovableHandle``, what every ``register_*hook`` returns (PyTorch's
torch.utils.hooks.RemovableHandle): ``remove()`` takes the hook out again."""

from __future__ import annotations

import itertools
from typing import Any

_ids = itertools.count()


class RemovableHandle:
    """Holds the dict a hook was put in and the key it was put under; ``remove()`` (or the
    end of a ``with`` block) deletes it, once; removing twice does nothing."""

    def __init__(self, hooks: dict[int, Any]) -> None:
        self.hooks_dict_ref = hooks
        self.id = next(_ids)

    def remove(self) -> None:
        self.hooks_dict_ref.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def add_hook(hooks: dict[int, Any], hook: Any, prepend: bool = False) -> RemovableHandle:
    """Put ``hook`` into ``hooks`` (last, or first with ``prepend``) and return its handle."""
    if not callable(hook):
        raise TypeError(f"register hook: the hook must be callable; got {type(hook).__name__}")
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    if prepend:
        for key in [k for k in hooks if k != handle.id]:
            hooks[key] = hooks.pop(key)  # move the others after it, in their order
    return handle
