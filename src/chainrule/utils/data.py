"""``chainrule.utils.data``: the same objects as ``chainrule.data``, at PyTorch's path."""

from ..data import (
    DataLoader,
    Dataset,
    IterableDataset,
    Subset,
    TensorDataset,
    default_collate,
    default_convert,
    random_split,
)

__all__ = [
    "DataLoader",
    "Dataset",
    "IterableDataset",
    "Subset",
    "TensorDataset",
    "default_collate",
    "default_convert",
    "random_split",
]
