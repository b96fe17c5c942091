"""``chainrule.utils.data``: the same objects as ``chainrule.data``, at PyTorch's path."""

from ..data import *  # noqa: F403 - the whole of chainrule.data, listed once there
from ..data import __all__ as __all__
