"""Datasets and batching: Dataset, TensorDataset, Subset, random_split, DataLoader."""

from .dataloader import DataLoader, default_collate
from .dataset import Dataset, Subset, TensorDataset, random_split

__all__ = ["DataLoader", "Dataset", "Subset", "TensorDataset", "default_collate", "random_split"]
