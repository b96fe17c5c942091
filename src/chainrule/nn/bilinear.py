"""Bilinear and bilinear: y_o = x1^T W_o x2 + b_o, composed from a matmul, a product and a
sum on the rows, viewed back last as PyTorch's, so its gradients (and second derivatives)
come free; Linear is in layers.py.
"""

from __future__ import annotations

import math
from typing import Any

from .. import array
from ..arguments import need_number, positive_int, resolve_device
from ..ops import movement
from ..tensor import Tensor, as_tensor
from . import init
from .module import Module, Parameter

xp = array.xp


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """(*, in1) and (*, in2) -> (*, out): sum_ij x1_i W[o, i, j] x2_j + b_o, weight
    (out, in1, in2) and bias (out,)."""
    x1, x2, w = as_tensor(input1), as_tensor(input2), as_tensor(weight)
    op = "bilinear"
    for x in (x1, x2, w):
        need_number(x, op)
    if x1.shape[:-1] != x2.shape[:-1] or x1.ndim == 0:
        raise ValueError(
            f"{op}: the inputs' batch dims (all but the last) must agree; got shapes "
            f"{x1.shape} and {x2.shape}"
        )
    if w.ndim != 3 or (x1.shape[-1], x2.shape[-1]) != w.shape[1:]:
        raise ValueError(
            f"{op}: expected weight (out, {x1.shape[-1]}, {x2.shape[-1]}) for inputs of shapes "
            f"{x1.shape} and {x2.shape}; got weight shape {w.shape}"
        )
    if bias is not None and tuple(bias.shape) != w.shape[:1]:
        raise ValueError(f"{op}: expected bias of shape ({w.shape[0]},); got {tuple(bias.shape)}")
    out, in1, in2 = w.shape
    lead = x1.shape[:-1]
    # bfloat16's products, each rounded, would lose what the sum cancels: in float32, the
    # result rounded once, as PyTorch's
    low = x1.dtype == x2.dtype == w.dtype == array.bfloat16
    if low:
        x1, x2, w = x1.float(), x2.float(), w.float()
    m = math.prod(lead)
    # on the rows (M, in1) and (M, in2), viewed back to (*, out) last, as PyTorch's
    mixed = x1.reshape(m, in1) @ w.permute(1, 0, 2).reshape(in1, out * in2)  # (M, out * in2)
    terms = mixed.reshape(m, out, in2) * x2.reshape(m, 1, in2)  # (M, out, in2)
    y = terms.sum(-1).to(terms.dtype)  # (M, out); integers keep their width, as PyTorch's
    y = movement.Reshape.apply(y, shape=lead + (out,))  # (*, out): a view even of (M, out)
    if low:
        y = y.to(array.bfloat16)
    return y if bias is None else y + bias


class Bilinear(Module):
    """bilinear with learned weight (out, in1, in2) and bias (out,), both uniform in
    +-1/sqrt(in1_features), as PyTorch's."""

    bias: Parameter | None

    def __init__(
        self,
        in1_features: int,
        in2_features: int,
        out_features: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        on = array.like(resolve_device(device, "Bilinear"))
        for name, n in (
            ("in1_features", in1_features),
            ("in2_features", in2_features),
            ("out_features", out_features),
        ):
            positive_int(n, name, "Bilinear", zero_ok=True)
        self.in1_features, self.in2_features = in1_features, in2_features
        self.out_features = out_features
        dtype = array.as_dtype(dtype) or array.get_default_dtype()
        shape = (out_features, in1_features, in2_features)
        self.weight = Parameter(xp.empty(shape, dtype=dtype, like=on))
        self.register_parameter(
            "bias", Parameter(xp.empty(out_features, dtype=dtype, like=on)) if bias else None
        )
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1.0 / math.sqrt(self.weight.shape[1]) if self.weight.shape[1] else 0.0
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
            f"out_features={self.out_features}, bias={self.bias is not None}"
        )
