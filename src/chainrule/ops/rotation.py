"""rot90 as PyTorch computes it, one op: its node is PyTorch's one node (Rot90Backward0, its
``_saved_k`` and ``_saved_dims``), where flips and a transpose would make two or three."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..array import xp
from ..autograd.primitive import Function

if TYPE_CHECKING:
    from ..autograd.primitive import Grads
    from ..tensor import Tensor


class Rot90(Function):
    """out = a rotated k quarter turns in the plane of dims, from the first dim toward the
    second, in memory of its own (as PyTorch's)"""

    rule = "grad_a = grad rotated -k quarter turns in the same plane"
    saves_inputs = False

    def forward(self, a: Any, k: int, dims: tuple[int, int]) -> Any:
        self.k, self.dims = k, dims  # as given, as PyTorch's node keeps them
        return xp.rot90(a, k % 4, dims).copy()

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return (grad.rot90(-self.k, self.dims),)
