"""``chainrule.utils.data``: the same objects as ``chainrule.data``, at PyTorch's path."""

from ..data import DataLoader, Dataset, Subset, TensorDataset, default_collate, random_split

__all__ = ["DataLoader", "Dataset", "Subset", "TensorDataset", "default_collate", "random_split"]
