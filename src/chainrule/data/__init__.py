"""Datasets and batching: Dataset, IterableDataset, TensorDataset, Subset, random_split,
DataLoader, default_collate and default_convert."""

from .dataloader import DataLoader, default_collate, default_convert
from .dataset import Dataset, IterableDataset, Subset, TensorDataset, random_split

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
