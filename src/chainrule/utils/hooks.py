"""``chainrule.utils.hooks`` at PyTorch's path (torch.utils.hooks): the handle that every
``register_*hook`` returns, defined in autograd/handles.py."""

from ..autograd.handles import RemovableHandle

__all__ = ["RemovableHandle"]
