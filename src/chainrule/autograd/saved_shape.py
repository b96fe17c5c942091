"""What PyTorch's nodes of repeat, glu, scatter of a number and index_fill of a tensor save,
for saved.py's tables: the arguments each Tensor method or function records on its node
(node.named), by node name, and the tensors read from the node."""

from __future__ import annotations

from typing import Any

# PyTorch's node name -> the arguments it saves, as the method records them (dims as given)
ARGS: dict[str, str] = {
    "RepeatBackward0": "repeats self_sym_sizes",
    "GluBackward0": "dim",
    "ScatterBackward1": "dim",
    "IndexFillBackward1": "dim",
}

# PyTorch's node name -> its saved tensors, in saved.py's TensorSpec form
TENSORS: dict[str, dict[str, tuple[Any, ...]]] = {
    "GluBackward0": {"self": ("input", 0, None)},
    "ScatterBackward1": {"index": ("called", "index")},
    "IndexFillBackward1": {"index": ("called", "index")},
}
