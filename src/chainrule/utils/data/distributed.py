"""``torch.utils.data.distributed``'s path: its DistributedSampler is chainrule.data's."""

from ...data import DistributedSampler

__all__ = ["DistributedSampler"]
