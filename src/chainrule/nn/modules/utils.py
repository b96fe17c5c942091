"""torch.nn.modules.utils, as PyTorch's: the argument helpers that layers written outside
PyTorch import from it (``_pair(3)`` is ``(3, 3)``), and
``consume_prefix_in_state_dict_if_present``, which strips the ``module.`` that
DataParallel and DistributedDataParallel put before each key of a saved state_dict.
chainrule's own layers check their arguments with nn/spatial_args.py.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import repeat
from typing import Any

__all__ = ["consume_prefix_in_state_dict_if_present"]


def _ntuple(n: int, name: str = "parse") -> Callable[[Any], tuple]:
    """A function that makes a tuple of ``n`` from one value, or a tuple from an iterable."""

    def parse(x: Any) -> tuple:
        if isinstance(x, Iterable):
            return tuple(x)
        return tuple(repeat(x, n))

    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t: tuple, n: int) -> tuple:
    """Each value of ``t``, last first, ``n`` times: F.pad's order of a padding tuple."""
    return tuple(x for x in reversed(t) for _ in range(n))


def _list_with_default(out_size: Any, defaults: list[int]) -> Any:
    """An adaptive pooling's output size with each None filled from the input's sizes."""
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(
            f"adaptive pooling: the input needs more dims than the output size has; got output "
            f"size {out_size} and input sizes {defaults}"
        )
    sizes = defaults[-len(out_size) :]
    return [v if v is not None else d for v, d in zip(out_size, sizes, strict=True)]


def consume_prefix_in_state_dict_if_present(state_dict: dict[str, Any], prefix: str) -> None:
    """Strip ``prefix`` from each key of ``state_dict`` that starts with it, in place."""
    for key in list(state_dict):
        if key.startswith(prefix):
            state_dict[key[len(prefix) :]] = state_dict.pop(key)
