"""``chainrule.utils.data``: the same objects as ``chainrule.data``, at PyTorch's path; its
submodules ``dataloader``, ``dataset``, ``distributed`` and ``sampler`` are there too, for
code that imports from them (``from torch.utils.data.dataloader import DataLoader``)."""

from ...data import *  # noqa: F403 - the whole of chainrule.data, listed once there
from ...data import __all__ as __all__
from . import dataloader, dataset, distributed, sampler  # noqa: F401 - PyTorch's submodule paths
