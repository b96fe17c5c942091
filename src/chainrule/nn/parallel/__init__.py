"""PyTorch's torch.nn.parallel: DataParallel and its function form data_parallel
(data_parallel.py), and DistributedDataParallel with its bucket plan (distributed.py), each at
PyTorch's path (``torch.nn.parallel.distributed.DistributedDataParallel``)."""

from __future__ import annotations

from .data_parallel import DataParallel, data_parallel
from .distributed import DistributedDataParallel, bucket_assignment

__all__ = ["DataParallel", "DistributedDataParallel", "bucket_assignment", "data_parallel"]
