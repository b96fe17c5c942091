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
    second, in memory of its own (as PyTorch's)

    A quarter turn is a flip of the second dim and a swap of the two (three quarters, of
    the first dim), as NumPy's rot90."""

    rule = "grad_a = grad rotated -k quarter turns in the same plane"
    saves_inputs = False

    def forward(self, a: Any, k: int, dims: tuple[int, int]) -> Any:
        self.k, self.dims = k, dims  # as given, as PyTorch's node keeps them
        turns = k % 4
        if turns == 0:
            return a.copy()
        if turns == 2:
            return xp.flip(a, dims).copy()
        # a quarter turn: flipped along one dim (copied), then the two dims swapped (a view
        # of the copy, as PyTorch's result is)
        flipped = xp.flip(a, dims[1] if turns == 1 else dims[0]).copy()
        return xp.swapaxes(flipped, *dims)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return (grad.rot90(-self.k, self.dims),)
