"""``chainrule.utils.hooks`` at PyTorch's path (torch.utils.hooks): the handle that every
``register_*hook`` returns, defined in autograd/hooks.py."""

from ..autograd.hooks import RemovableHandle

__all__ = ["RemovableHandle"]
