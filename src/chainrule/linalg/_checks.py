"""The argument checks every chainrule.linalg function shares: floating dtype, matrices,
square matrices, one wording for each refusal."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from .. import array
from ..array import xp
from ..tensor import Tensor, as_tensor, where
from ..tensor.inplace import write_out

F = TypeVar("F", bound=Callable[..., Any])


def matrices(A: Any, op: str, square: bool = False, numbers: bool = False) -> Tensor:
    """A as a Tensor of (batches of) float32 or float64 matrices, checked as PyTorch checks
    it: integers and bools refused (any dtype but bool where ``numbers``: an op of matrix
    products), at least 2 dims, square where ``square``."""
    A = A if isinstance(A, Tensor) else as_tensor(A)
    if not numbers or A._array.dtype == bool:
        floating(A, op)
    if A.ndim < 2:
        raise ValueError(
            f"{op}: the input must have at least 2 dimensions; got shape {tuple(A.shape)}"
        )
    if square and A.shape[-1] != A.shape[-2]:
        raise ValueError(f"{op}: A must be batches of square matrices; got shape {tuple(A.shape)}")
    return A


def floating(A: Tensor, op: str) -> None:
    """Refuse what LAPACK cannot take, as PyTorch: integers, bools and half precision."""
    if A._array.dtype.char not in "fd":  # float32, float64
        raise TypeError(
            f"{op}: expected a float32 or float64 tensor; got dtype {A.dtype}"
            + ("; complex tensors are not supported yet" if A._array.dtype.kind == "c" else "")
        )


def low_precision(A: Tensor) -> bool:
    """float16 or bfloat16: what PyTorch's norms and matrix_exp compute in float32."""
    return A._array.dtype.itemsize == 2 and array.is_floating(A._array.dtype)


def same_dtype(A: Tensor, B: Tensor, op: str) -> None:
    if A._array.dtype != B._array.dtype:
        raise TypeError(
            f"{op}: expected A and B to have the same dtype; got {A.dtype} and {B.dtype}"
        )


def tensor_of(x: Any) -> Tensor:
    return x if isinstance(x, Tensor) else as_tensor(x)


def constant(array: Any) -> Tensor:
    """An array as a Tensor that needs no gradient (a rank, a sign, a pivot)."""
    return Tensor._make(array)


def attached(value: Any, A: Tensor) -> Tensor:
    """``value`` (an array) as an output of A's graph with gradient 0, where PyTorch's output
    of the same op requires grad though nothing flows through it (a sign, an empty factor)."""
    if not A.requires_grad:
        return constant(value)
    keep = constant(xp.ones_like(value, dtype=bool))  # on value's device
    return where(keep, constant(value), A.sum() * 0.0)


def with_out(
    prefix: str, *, exact: bool | None = None, dtype_from_out: bool = False
) -> Callable[[F], F]:
    """PyTorch's ``out=`` for a function whose signature names it: the result written into
    ``out`` (a Tensor, or a tuple of them for a tuple of results) and ``out`` returned, in the
    named tuple of the results where there are several. PyTorch's dtype rule for the op:
    ``exact``, out must have the result's dtype (None: a tuple of results must, a single
    result is cast as write_out casts it); ``dtype_from_out``, out's dtype is the ``dtype=``
    the result is computed in where none is given (PyTorch's sum, cumsum, mean)."""

    def wrap(fn: F) -> F:
        op = f"{prefix}.{fn.__name__}" if prefix else fn.__name__

        @functools.wraps(fn)
        def call(*args: Any, out: Any = None, **kwargs: Any) -> Any:
            if dtype_from_out and isinstance(out, Tensor) and kwargs.get("dtype") is None:
                kwargs["dtype"] = out.dtype
            result = fn(*args, **kwargs)
            if out is None:
                return result
            if not isinstance(result, tuple):
                return write_out(result, out, op, exact=bool(exact))
            if not isinstance(out, (tuple, list)) or len(out) != len(result):
                raise TypeError(
                    f"{op}: out must be a tuple of {len(result)} tensors; got {type(out).__name__}"
                )
            every = exact is not False
            written = [write_out(r, o, op, every) for r, o in zip(result, out, strict=True)]
            return type(result)(*written) if hasattr(result, "_fields") else tuple(written)

        return call  # type: ignore[return-value]

    return wrap
