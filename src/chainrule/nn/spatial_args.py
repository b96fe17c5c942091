"""The argument checks that convolution, pooling and resampling share: sizes given as an int
or a tuple, batched or unbatched inputs, the dtypes PyTorch's CPU kernels take, padding and
whether a kernel fits. The ops themselves live in conv.py, pooling.py and resampling.py.
"""

from __future__ import annotations

from typing import Any

from .. import array
from ..arguments import is_int, need_float, need_number
from ..tensor import Tensor, as_tensor


def ntuple(value: Any, n: int, op: str, name: str) -> tuple[int, ...]:
    """An int or a length-n sequence of ints (a 1-tuple too, as PyTorch's ``_single``,
    ``_pair`` and ``_triple`` take one), as a tuple of n ints."""
    if isinstance(value, (tuple, list)) and len(value) == 1 and n > 1:
        value = value[0]
    if is_int(value):
        return (int(value),) * n
    if isinstance(value, (tuple, list)) and len(value) == n and all(map(is_int, value)):
        return tuple(int(v) for v in value)
    raise TypeError(f"{op}: {name} must be an int or a tuple of {n} ints; got {value!r}")


def check_positive(values: tuple[int, ...], op: str, name: str) -> None:
    if any(v <= 0 for v in values):
        raise ValueError(f"{op}: {name} must be positive; got {values}")


# the integer dtypes PyTorch's CPU kernels take, by op (the others: floating ones only)
_EVERY = ("conv1d", "conv2d", "conv3d", "max_pool2d", "max_pool3d")
INTEGERS: dict[str, Any] = dict.fromkeys(_EVERY, "all")
for _op in ("conv_transpose1d", "conv_transpose2d", "conv_transpose3d"):
    INTEGERS[_op] = (array.int64,)
for _op in ("avg_pool1d", "avg_pool2d", "avg_pool3d", "lp_pool1d", "lp_pool2d", "lp_pool3d"):
    INTEGERS[_op] = (array.int64,)
# the ops PyTorch's CPU kernels refuse in float16 and bfloat16
NO_HALF = ("avg_pool3d", "lp_pool3d")
for _op in ("pixel_shuffle", "pixel_unshuffle", "channel_shuffle"):
    INTEGERS[_op] = "every"  # bool too


def batched(x: Any, spatial: int, op: str) -> tuple[Tensor, bool]:
    """x as a batched tensor (N, C, *spatial) and whether it came unbatched; its dtype one
    the op takes (INTEGERS)."""
    x = as_tensor(x)
    if x.ndim not in (spatial + 1, spatial + 2):
        raise ValueError(
            f"{op}: expected a {spatial + 1}-D (unbatched) or {spatial + 2}-D (batched) input; "
            f"got shape {x.shape}"
        )
    check_dtype(x, op)
    return (x.unsqueeze(0), True) if x.ndim == spatial + 1 else (x, False)


def check_dtype(x: Tensor, op: str) -> None:
    """The dtype check of a spatial op, by INTEGERS."""
    integers = INTEGERS.get(op, ())
    if op in NO_HALF and x.dtype in (array.float16, array.bfloat16):
        raise TypeError(f"{op}: not defined for {x.dtype} on the CPU, as in PyTorch")
    if integers == "every" or (op in ("unfold", "fold") and x._array.dtype.kind == "b"):
        return  # unfold and fold take bools too, as PyTorch's
    if integers == "all" or x.dtype in integers:
        need_number(x, op)
    else:
        need_float(x, op)


def conv_padding(
    padding: Any, kernel: tuple, stride: tuple, dilation: tuple, op: str
) -> tuple[tuple[int, int], ...]:
    """(before, after) per spatial axis; 'same' splits odd totals with the extra one after,
    as PyTorch does."""
    if isinstance(padding, str):
        if padding == "valid":
            return tuple((0, 0) for _ in kernel)
        if padding != "same":
            raise ValueError(
                f"{op}: padding must be 'valid', 'same', an int or a tuple; got {padding!r}"
            )
        if any(s != 1 for s in stride):
            raise ValueError(f"{op}: padding='same' needs stride 1; got stride {stride}")
        totals = [d * (k - 1) for k, d in zip(kernel, dilation, strict=True)]
        return tuple((t // 2, t - t // 2) for t in totals)
    pad = ntuple(padding, len(kernel), op, "padding")
    if any(p < 0 for p in pad):
        raise ValueError(f"{op}: padding must be non-negative; got {pad}")
    return tuple((p, p) for p in pad)


def check_fits(
    op: str, x: Tensor, kernel: tuple, dilation: tuple, padding: tuple, got: str
) -> None:
    """The (dilated) kernel must fit in the padded input; ``got`` names the shapes given."""
    padded = tuple(n + lo + hi for n, (lo, hi) in zip(x.shape[2:], padding, strict=True))
    span = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilation, strict=True))
    if any(s > n for s, n in zip(span, padded, strict=True)):
        raise ValueError(
            f"{op}: the kernel {tuple(kernel)} (spanning {span} with dilation) is larger than "
            f"the padded input {padded}; got {got} and padding {padding}"
        )
