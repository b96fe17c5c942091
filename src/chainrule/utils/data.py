"""``chainrule.utils.data``: the same objects as ``chainrule.data``, at PyTorch's path."""

from ..data import (
    BatchSampler,
    ChainDataset,
    ConcatDataset,
    DataLoader,
    Dataset,
    IterableDataset,
    RandomSampler,
    Sampler,
    SequentialSampler,
    Subset,
    SubsetRandomSampler,
    TensorDataset,
    WeightedRandomSampler,
    default_collate,
    default_convert,
    random_split,
)

__all__ = [
    "BatchSampler",
    "ChainDataset",
    "ConcatDataset",
    "DataLoader",
    "Dataset",
    "IterableDataset",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "Subset",
    "SubsetRandomSampler",
    "TensorDataset",
    "WeightedRandomSampler",
    "default_collate",
    "default_convert",
    "random_split",
]
