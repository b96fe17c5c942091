"""torch.nn.utils' training helpers: gradient clipping (by total norm or by value) and the
parameters as one flat vector. The clipping functions change each ``.grad`` in place. The
padded and packed sequences of the recurrent layers are in ``rnn``.
"""

from __future__ import annotations

import types
import warnings
from collections.abc import Iterable
from typing import Any

from ... import array
from ...autograd import no_grad
from ...functions import cat
from ...tensor import Tensor, as_tensor
from . import rnn as rnn

xp = array.xp

TensorOrTensors = Tensor | Iterable[Tensor]


def _as_list(tensors: TensorOrTensors) -> list[Tensor]:
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


def _vector_norm(arr: Any, p: float) -> Any:
    """The p-norm of all values of arr: max |x| for inf, min |x| for -inf, the count of
    non-zeros for 0, else (sum |x|^p)^(1/p); computed in float32 at least (float16's
    300 ** 2 is already inf) and returned in arr's dtype, as PyTorch's vector_norm."""
    wide = array.promote_types(arr.dtype, array.float32)
    return array.result_array(xp.linalg.norm(arr.reshape(-1).astype(wide), ord=p)).astype(arr.dtype)


def get_total_norm(
    tensors: TensorOrTensors,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """The p-norm of all the tensors' values as one vector: the norm of their norms.

    With no tensors it is 0. ``foreach`` is accepted for PyTorch's signature; every path is
    the same here.
    """
    arrays = [t._array for t in _as_list(tensors)]
    p = float(norm_type)
    if not arrays:
        return as_tensor(0.0)
    norms = [_vector_norm(a, p) for a in arrays]
    total = _vector_norm(xp.stack(norms), p)
    if error_if_nonfinite and not xp.isfinite(total):
        raise RuntimeError(
            f"The total norm of order {p} for gradients from `parameters` is non-finite, so it "
            "cannot be clipped. To disable this error and scale the gradients by the non-finite "
            "norm anyway, set `error_if_nonfinite=False`"
        )
    return as_tensor(total)


def clip_grads_with_norm_(
    parameters: TensorOrTensors,
    max_norm: float,
    total_norm: Tensor,
    foreach: bool | None = None,
) -> None:
    """Scale every gradient by min(max_norm / (total_norm + 1e-6), 1), in place."""
    grads = [p.grad._array for p in _as_list(parameters) if p.grad is not None]
    if not grads:
        return
    norm = total_norm._array
    coef = xp.minimum(float(max_norm) / (norm + 1e-6), 1.0).astype(norm.dtype)
    for g in grads:
        xp.multiply(g, coef.astype(g.dtype), out=g)


def clip_grad_norm_(
    parameters: TensorOrTensors,
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """Scale the gradients so their total p-norm (all of them as one vector) is at most
    max_norm: grad *= min(max_norm / (total_norm + 1e-6), 1). Returns the total norm from
    before clipping. ``norm_type`` may be ``inf`` (or ``'inf'``): the largest |grad|.
    """
    is_generator = isinstance(parameters, types.GeneratorType)
    params = _as_list(parameters)
    if is_generator and not params:
        warnings.warn(
            "`parameters` is an empty generator, no gradient clipping will occur.", stacklevel=2
        )
    with no_grad():
        total = get_total_norm(
            [p.grad for p in params if p.grad is not None], norm_type, error_if_nonfinite
        )
        clip_grads_with_norm_(params, max_norm, total)
    return total


def clip_grad_value_(
    parameters: TensorOrTensors, clip_value: float, foreach: bool | None = None
) -> None:
    """Clamp every gradient into [-clip_value, clip_value], in place."""
    c = float(clip_value)
    for p in _as_list(parameters):
        if p.grad is not None:
            g = p.grad._array
            xp.clip(g, -c, c, out=g)


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """The parameters flattened and joined into one 1-D tensor (differentiable, as a cat)."""
    return cat([p.reshape(-1) for p in _parameters(parameters, "parameters_to_vector")])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copy consecutive slices of the 1-D ``vec`` into the parameters, each reshaped to its
    parameter's shape; values past the parameters' total are left unused, as PyTorch."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    params = _parameters(parameters, "vector_to_parameters")
    values = vec.detach()._array.reshape(-1)
    needed = sum(p.numel() for p in params)
    if values.size < needed:
        raise ValueError(
            f"vector_to_parameters: vec holds fewer values than the parameters; got vec shape "
            f"{vec.shape} for {needed} values"
        )
    start = 0
    for p in params:
        n = p.numel()
        p._array[...] = values[start : start + n].reshape(p.shape)
        start += n


def _parameters(parameters: Iterable[Tensor], op: str) -> list[Tensor]:
    params = _as_list(parameters)
    for p in params:
        if not isinstance(p, Tensor):
            raise TypeError(f"{op}: expected Tensors; got {type(p).__name__}")
    return params
