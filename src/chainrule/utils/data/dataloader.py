"""``torch.utils.data.dataloader``'s path: the whole of ``chainrule.data``, as its package is."""

from ...data import *  # noqa: F403 - the whole of chainrule.data, listed once there
from ...data import __all__ as __all__
