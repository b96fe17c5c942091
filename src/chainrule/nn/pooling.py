"""Pooling for users, in one, two and three spatial dims: max, average, adaptive, power-average
(lp) pools and max unpooling, as functions and modules. Every pool is a composition: 1-D
pools run the 2-D primitives (ops/conv.py) over a height of one, 3-D ones are separable into
a pass over each plane and one along the depth, and adaptive pools are matmuls (average) or
gathered windows (max).
"""

from __future__ import annotations

import math
from typing import Any

from .. import array, batching, fastpath
from ..arguments import is_int, positive_int
from ..autograd.mode import is_grad_enabled
from ..autograd.saved import record
from ..bounded import Bounded
from ..ops import conv as conv_ops
from ..ops import pool as pool_ops
from ..ops.windows import out_hw, strided_windows
from ..tensor import Tensor, as_tensor
from .activation import relu
from .spatial_args import batched, check_dtype, check_fits, check_positive, ntuple

xp = array.xp


# Each pool call's plan (what the input's shape and dtype and the arguments make of the call,
# once checked: the primitive's options, windows and weights, the node's saved arguments), by
# the op, the input's shape, dtype and array type and the arguments as given (ints, tuples of
# ints or None, and the flags): a pool called again the same way is not checked again
_PLANS: Bounded[tuple, Any] = Bounded(256)
# _parse_pool_args' answer: kernel, stride, dilation and the (before, after) padding an axis
Geometry = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[tuple[int, int], ...]]


def _planned(op: str, t: Tensor, given: tuple, flags: tuple, make: Any, *args: Any) -> Any:
    """make(*args): the plan of a pool of t, made once for each key of the op, t's shape,
    dtype and array type, the arguments ``given`` and the ``flags``; afresh where one of
    ``given`` is neither None, an int nor a tuple of them (a list, a float or a bool to
    refuse)."""
    if not plain_args(given):
        return make(*args)
    a = t._array
    key = (op, a.shape, a.dtype, type(a), *given, *flags)
    plan = _PLANS.get(key)
    if plan is None:
        plan = make(*args)  # the checks raise here, and nothing is kept
        _PLANS.keep(key, plan)
    return plan


def stride_given(stride: Any) -> bool:
    """Whether a pool was given a stride: None, () and [] all mean the kernel size, as
    PyTorch's (a NumPy integer is a stride, not compared with a tuple)."""
    return stride is not None and not (isinstance(stride, (tuple, list)) and len(stride) == 0)


def plain_args(values: tuple) -> bool:
    """Whether every value is None, an int or a tuple of ints and Nones (bools are not: they
    hash as ints, and a pool refuses them where it refuses what they equal)."""
    for v in values:
        if not (v is None or type(v) is int or (type(v) is tuple and _ints(v))):
            return False
    return True


def _ints(values: tuple) -> bool:
    for v in values:  # a loop, not all() over a generator: on every pool's way
        if type(v) is not int and v is not None:
            return False
    return True


def _parse_pool_args(
    op: str,
    x: Tensor,
    unbatched: bool,
    kernel_size: Any,
    stride: Any,
    padding: Any,
    dilation: Any = 1,
    ceil_mode: bool = False,
) -> Geometry:
    """kernel, stride, dilation and the padding ((before, after) per spatial axis) of a pool
    over x's spatial dims. With ``ceil_mode`` the after padding grows so that the windows
    PyTorch adds (rounding the output size up; the last must start inside the input or the
    before padding) fit: the growth holds nothing (-inf for max, 0 and not counted for
    average)."""
    n = x.ndim - 2
    kernel = ntuple(kernel_size, n, op, "kernel_size")
    stride = ntuple(stride, n, op, "stride") if stride_given(stride) else kernel
    pad = ntuple(padding, n, op, "padding")
    dil = ntuple(dilation, n, op, "dilation")
    check_positive(kernel, op, "kernel_size")
    check_positive(stride, op, "stride")
    check_positive(dil, op, "dilation")
    if any(p < 0 or p > k // 2 for p, k in zip(pad, kernel, strict=True)):  # as PyTorch,
        raise ValueError(  # whatever the dilation
            f"{op}: padding must be between 0 and half the kernel size; got padding {pad} and "
            f"kernel_size {kernel}"
        )
    span = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dil, strict=True))
    pairs = tuple((p, p) for p in pad)
    check_fits(op, x, kernel, dil, pairs, f"input shape {x.shape[unbatched:]}")
    if ceil_mode:
        grown = []
        for size, s, p, st in zip(x.shape[2:], span, pad, stride, strict=True):
            out = -(-(size + 2 * p - s) // st) + 1  # rounded up
            if (out - 1) * st >= size + p:  # the last window would start in the after padding
                out -= 1
            grown.append((p, p + max(0, (out - 1) * st + s - (size + 2 * p))))
        pairs = tuple(grown)
    return kernel, stride, dil, pairs


def _as_given(input: Any, spatial: int, op: str) -> tuple[Tensor, Tensor, bool]:
    """batched()'s checks; then (x as given, its batched form (N, C, *spatial), whether it came
    unbatched): ops/pool.py's primitives take an unbatched x as it is, one node as PyTorch's,
    and the batched form, a stand-in off the graph, serves the argument checks."""
    x = as_tensor(input)
    if x.ndim != spatial + 1:
        x, _ = batched(x, spatial, op)  # batched, or the error
        return x, x, False
    check_dtype(x, op)
    return x, Tensor._make(x._array[None]), True  # (1, C, *spatial): a view, for its shape


def _unit_height(args: tuple) -> tuple[Any, Any, Any, Any]:
    """A 1-D pool's arguments as a 2-D pool's over a height of one."""
    kernel, stride, dil, pad = args
    return (1, *kernel), (1, *stride), (1, *dil), ((0, 0), *pad)


def _bare(op: Any, t: Tensor, spatial: int, **options: Any) -> Tensor:
    """``op.apply`` of t where fastpath.off_graph(t): op's forward on t's array (a 1-D pool's
    (..., L) as (..., 1, L), its output's height dropped after), wrapped, no node made."""
    if spatial != 1:
        return Tensor._make(op().forward(t._array, **options))
    out = op().forward(t._array[..., None, :], **options)  # (..., 1, L) -> (..., 1, Lo)
    return Tensor._make(out[..., 0, :])  # (..., Lo)


def _height_one(t: Tensor) -> Tensor:
    """A 1-D pool's input (..., L) as (..., 1, L), a 2-D pool's of a height of one, as
    PyTorch's: its unsqueeze node, or off the graph a bare view, never seen outside."""
    return Tensor._make(t._array[..., None, :]) if fastpath.off_graph(t) else t.unsqueeze(-2)


def _height_dropped(t: Tensor) -> Tensor:
    """A 1-D pool's output (..., 1, Lo) as (..., Lo): its squeeze node, or off the graph a
    bare view of the pool's fresh output."""
    return Tensor._make(t._array[..., 0, :]) if fastpath.off_graph(t) else t.squeeze(-2)


# ---------------------------------------------------------------------------------------
# Max pooling.


def _max_planes(x: Tensor, kernel: tuple, stride: tuple, pad: tuple, dil: tuple, indices: bool):
    """MaxPool2d over x (N, C, H, W) or (C, H, W) and, with ``indices``, each maximum's flat
    index (row * W + column) as an int64 array."""
    if indices and fastpath.off_graph(x):  # no node: the maxima and their winners in one pass
        a = x._array[None] if x.ndim == 3 else x._array  # an unbatched x: a batch of one
        top, col_arg, row_arg = conv_ops.pool_max(a, kernel, stride, pad, dil)
        flat = conv_ops.pool_indices(col_arg, row_arg, x.shape[-2:], stride, pad, dil)
        return Tensor._make(top[0] if x.ndim == 3 else top), flat[0] if x.ndim == 3 else flat
    # the winners' offsets only where a node records (and keeps them); else found below
    records = is_grad_enabled() and x.requires_grad
    out = conv_ops.MaxPool2d.apply(
        x, kernel=kernel, stride=stride, padding=pad, dilation=dil, winners=records
    )
    if not indices:
        return out, None
    node: Any = out.grad_fn  # a MaxPool2d keeps the winners' offsets only when it records
    if node is not None:
        return out, node.indices()
    a = batching.examples(x._array)  # under vmap, every example's: its batch dims first
    planes = a.reshape(-1, *a.shape[-3:])  # (M, C, H, W): an unbatched x a batch of one
    _, col_arg, row_arg = conv_ops.pool_max(planes, kernel, stride, pad, dil)
    flat = conv_ops.pool_indices(col_arg, row_arg, x.shape[-2:], stride, pad, dil)
    return out, flat.reshape(*a.shape[:-3], *flat.shape[1:])  # (..., C, Ho, Wo)


def _max_pool(
    op: str,
    spatial: int,
    input: Any,
    kernel_size: Any,
    stride: Any,
    padding: Any,
    dilation: Any,
    ceil_mode: bool,
    return_indices: bool,
) -> Any:
    given = as_tensor(input)
    box, geometry, kept = _planned(
        op, given, (kernel_size, stride, padding, dilation), (bool(ceil_mode),), _max_plan,
        op, spatial, given, kernel_size, stride, padding, dilation, ceil_mode,
    )  # fmt: skip
    if box:  # one primitive over the box, as PyTorch's
        windows, pad = geometry
        box_max = pool_ops.MaxPool3dWithIndices
        out, idx = _windowed_max(box_max, given, windows, pad, return_indices)
    elif not return_indices and fastpath.off_graph(given):  # no node: the maxima alone
        kernel, step, pad, dil = geometry
        out = _bare(conv_ops.MaxPool2d, given, spatial, kernel=kernel, stride=step, padding=pad,
                    dilation=dil, winners=False)  # fmt: skip
        idx = None
    else:
        x = _height_one(given) if spatial == 1 else given  # (..., L) as (..., 1, L)
        kernel, step, pad, dil = geometry
        out, idx = _max_planes(x, kernel, step, pad, dil, return_indices)
        if spatial == 1:  # the flat index row * L + column is the column
            out, idx = _height_dropped(out), None if idx is None else idx[..., 0, :]
    if kept is not None:
        out = record(out, **kept)
    # the indices batched as the input is (under vmap, every example's)
    return (out, batching.batched_as(idx, given._array)) if return_indices else out


def _max_plan(
    op: str,
    spatial: int,
    given: Tensor,
    kernel_size: Any,
    stride: Any,
    padding: Any,
    dilation: Any,
    ceil_mode: bool,
) -> tuple[bool, Any, dict | None]:
    """A max pool's plan: whether it pools a box (3-D: windows, padding) or planes (kernel,
    stride, padding, dilation of a 2-D pool), and the arguments PyTorch's node keeps."""
    _, x, unbatched = _as_given(given, spatial, op)
    args = _parse_pool_args(op, x, unbatched, kernel_size, stride, padding, dilation, ceil_mode)
    kernel, step, dil, pad = args
    kept = None
    if spatial != 1:  # as PyTorch's node keeps them: stride () if not given
        kept = dict(
            kernel_size=kernel, stride=step if stride_given(stride) else (),
            padding=tuple(p for p, _ in pad), dilation=dil, ceil_mode=bool(ceil_mode),
        )  # fmt: skip
    if spatial == 3:
        return True, (_strided_windows(x, args), pad), kept
    kernel, step, dil, pad = _unit_height(args) if spatial == 1 else args
    return False, (kernel, step, pad, dil), kept  # in _max_planes' order


def _strided_windows(x: Tensor, args: tuple) -> tuple:
    """The positions each window of a pool of _parse_pool_args' geometry over x reads in the
    padded input, an (n_out, k) host array an axis."""
    kernel, stride, dil, pad = args
    outs = out_hw(x.shape[2:], kernel, stride, dil, pad)
    return tuple(
        strided_windows(o, k, s, d) for o, k, s, d in zip(outs, kernel, stride, dil, strict=True)
    )


def _windowed_max(op: Any, x: Tensor, windows: tuple, pad: tuple, indices: bool) -> tuple:
    """ops/pool.py's max over the windows (one (n_out, k) host array an axis) and, with
    ``indices``, each maximum's flat index in its input plane (an int64 array)."""
    if fastpath.off_graph(x):  # no node: the maxima (and their winners) in one pass
        bare = op()
        out = Tensor._make(bare.forward(x._array, windows=windows, padding=pad, winners=indices))
        return out, bare.indices() if indices else None
    records = is_grad_enabled() and x.requires_grad  # a node keeps the winners for indices
    out = op.apply(x, windows=windows, padding=pad, winners=indices and records)
    if not indices:
        return out, None
    node: Any = out.grad_fn  # a node keeps the winners only when it records
    if node is None:  # the winners found again, by a node of no graph (under vmap, of every
        node = op()  # example: the batch dims lead)
        node.forward(batching.examples(x._array), windows=windows, padding=pad, winners=True)
    return out, node.indices()


def max_pool1d(
    input: Tensor,
    kernel_size: int | tuple[int],
    stride: int | tuple[int] | None = None,
    padding: int | tuple[int] = 0,
    dilation: int | tuple[int] = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """The max of each window of input (N, C, L) or (C, L); see ``max_pool2d``."""
    return _max_pool("max_pool1d", 1, input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices)  # fmt: skip


def max_pool2d(
    input: Tensor,
    kernel_size: int | tuple[int, int],
    stride: int | tuple[int, int] | None = None,
    padding: int | tuple[int, int] = 0,
    dilation: int | tuple[int, int] = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """The max of each kernel_size window (stride defaults to the kernel; dilation spaces the
    window's elements), padding with -inf; the gradient goes to the first maximum of each
    window, as PyTorch's. With ``return_indices``, also that maximum's flat index in its
    input plane (row * W + column), an int64 Tensor of the output's shape."""
    return _max_pool("max_pool2d", 2, input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices)  # fmt: skip


def max_pool3d(
    input: Tensor,
    kernel_size: int | tuple[int, int, int],
    stride: int | tuple[int, int, int] | None = None,
    padding: int | tuple[int, int, int] = 0,
    dilation: int | tuple[int, int, int] = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """The max of each window of input (N, C, D, H, W) or (C, D, H, W); the index returned is
    d * H * W + h * W + w. See ``max_pool2d``."""
    return _max_pool("max_pool3d", 3, input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices)  # fmt: skip


# ---------------------------------------------------------------------------------------
# Average pooling.


def _avg_divisors(size: tuple, kernel: tuple, stride: tuple, padding: tuple, with_pad: bool) -> Any:
    """The output's shape of numbers: what an average pool divides each window's sum by,
    PyTorch's rule: the window clipped to the padded input (``with_pad``) or to the input
    itself, a product over the axes."""
    counts = []
    n_outs = out_hw(size, kernel, stride, (1,) * len(size), padding)
    for n, k, s, (lo, _), n_out in zip(size, kernel, stride, padding, n_outs, strict=True):
        start = array.host.arange(n_out) * s - lo  # on the host: a constant of the shapes
        end = array.host.minimum(start + k, n + lo)  # grown padding (ceil_mode) never counts
        if not with_pad:
            start, end = array.host.maximum(start, 0), array.host.minimum(end, n)
        counts.append((end - start).astype(float))
    out = counts[0]
    for c in counts[1:]:
        out = array.host.multiply.outer(out, c)
    return out


def _avg_pool(
    op: str,
    spatial: int,
    input: Any,
    kernel_size: Any,
    stride: Any,
    padding: Any,
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: Any,
) -> Tensor:
    given = as_tensor(input)
    kind, options, by, kept = _planned(
        op, given, (kernel_size, stride, padding, divisor_override),
        (bool(ceil_mode), bool(count_include_pad)), _avg_plan, op, spatial, given,
        kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override,
    )  # fmt: skip
    a = given._array
    weight = options["weight"]
    if type(a) is not array.host.ndarray and not isinstance(weight, float):
        options = {**options, "weight": array.from_host(weight, a)}  # on a's device
    if fastpath.off_graph(given):  # no node: the window sums straight from the array
        out = _bare(kind, given, spatial, **options)
    else:
        out = kind.apply(_height_one(given) if spatial == 1 else given, **options)
        out = _height_dropped(out) if spatial == 1 else out
    if by is not None:  # integer sums, divided toward zero
        by = by if is_int(by) else Tensor._make(array.from_host(by, a))
        out = out.div(by, rounding_mode="trunc")
    if kept is not None:
        out = record(out, **kept)
    return out


def _avg_plan(
    op: str,
    spatial: int,
    given: Tensor,
    kernel_size: Any,
    stride: Any,
    padding: Any,
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: Any,
) -> tuple[Any, dict, Any, dict | None]:
    """An average pool's plan: its primitive (AvgPool2d, or AvgPool3d over windows) and
    options, the weight in the kernel (1 / the divisor, one number or an array of them, in
    the input's dtype), an integer input's divisor (its sums are divided after, toward zero),
    and the arguments PyTorch's node keeps."""
    _, x, unbatched = _as_given(given, spatial, op)
    args = _parse_pool_args(op, x, unbatched, kernel_size, stride, padding, 1, ceil_mode)
    if divisor_override is not None and not (is_int(divisor_override) and divisor_override < 0):
        positive_int(divisor_override, "divisor_override", op)  # a negative one divides too
    if spatial == 1:  # (..., L) as (..., 1, L); x, off the graph, for the shapes
        args, x = _unit_height(args), Tensor._make(x._array[:, :, None])
    kernel, step, _, pad = args
    dtype = x._array.dtype
    if divisor_override is not None:
        divisor: Any = float(divisor_override)
    else:
        divisor = _avg_divisors(x.shape[2:], kernel, step, pad, count_include_pad)
        first = divisor.reshape(-1)[0] if divisor.size else 1.0
        divisor = float(first) if bool((divisor == first).all()) else divisor
    by = None
    if not array.is_floating(x.dtype):  # exact sums (an integer product), divided after
        weight: Any = 1.0
        by = divisor_override if divisor_override is not None else divisor
        by = int(by) if isinstance(by, (int, float)) else by.astype(dtype)
    elif isinstance(divisor, float):  # the weight in the kernel: one for every window
        weight = 1.0 / divisor
    else:  # or an array of them, shared by every call: read only
        weight = (1.0 / divisor).astype(dtype)
        weight.flags.writeable = False
    if spatial == 3:
        kind: Any = pool_ops.AvgPool3d
        options = dict(windows=_strided_windows(x, args), padding=pad, weight=weight)
    else:
        kind = conv_ops.AvgPool2d
        options = dict(kernel=kernel, stride=step, padding=pad, weight=weight)
    kept = None
    if spatial != 1 and by is None:  # as PyTorch's node keeps them: stride () if not given
        kept = dict(
            kernel_size=kernel, stride=step if stride_given(stride) else (),
            padding=(padding,) * spatial if is_int(padding) else tuple(padding),
            ceil_mode=bool(ceil_mode), count_include_pad=bool(count_include_pad),
            divisor_override=divisor_override,
        )  # fmt: skip
    return kind, options, by, kept


def avg_pool1d(
    input: Tensor,
    kernel_size: int | tuple[int],
    stride: int | tuple[int] | None = None,
    padding: int | tuple[int] = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
) -> Tensor:
    """The mean of each window of input (N, C, L) or (C, L); see ``avg_pool2d``."""
    return _avg_pool("avg_pool1d", 1, input, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, None)  # fmt: skip


def avg_pool2d(
    input: Tensor,
    kernel_size: int | tuple[int, int],
    stride: int | tuple[int, int] | None = None,
    padding: int | tuple[int, int] = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """The mean of each kernel_size window: its sum over the window's size, padded zeros
    counted (``count_include_pad``, PyTorch's default) or over the input elements it holds
    only; ``divisor_override`` divides every sum by that number instead. An int64 input's
    sums are divided toward zero, in integers, as PyTorch's.

    The window sums are one primitive (ops/conv.py's AvgPool2d), weighted by 1/(kh*kw) where
    every window has the same divisor, else by each window's 1 / divisor.
    """
    return _avg_pool("avg_pool2d", 2, input, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, divisor_override)  # fmt: skip


def avg_pool3d(
    input: Tensor,
    kernel_size: int | tuple[int, int, int],
    stride: int | tuple[int, int, int] | None = None,
    padding: int | tuple[int, int, int] = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """The mean of each window of input (N, C, D, H, W) or (C, D, H, W); see ``avg_pool2d``.
    Separable: window sums over each plane, then along the depth."""
    return _avg_pool("avg_pool3d", 3, input, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, divisor_override)  # fmt: skip


# ---------------------------------------------------------------------------------------
# Adaptive pooling: window i of n_out over n_in positions runs from floor(i*n_in/n_out) up
# to ceil((i+1)*n_in/n_out), PyTorch's windows.


def _adaptive_size(op: str, x: Tensor, output_size: Any, unbatched: bool) -> tuple[int, ...]:
    n = x.ndim - 2
    if 0 in x.shape[2:]:  # a pool over no values: an error, not zeros
        raise ValueError(
            f"{op}: the input's spatial dims must not be empty; got shape {x.shape[unbatched:]}"
        )
    given: Any = output_size
    if isinstance(given, (tuple, list)) and len(given) == n:  # None keeps the input's size
        given = tuple(size if s is None else s for s, size in zip(given, x.shape[2:], strict=True))
    size = ntuple(given, n, op, "output_size")
    check_positive(size, op, "output_size")
    return size


def _adaptive_avg(op: str, spatial: int, input: Any, output_size: Any) -> Tensor:
    """One primitive (ops/pool.py's): a window mean is separable, so each axis is one
    product with its averaging matrix; exact gradients of any order. 1-D is 2-D over a
    height of one, as PyTorch's. An unbatched input is pooled as it is."""
    x = as_tensor(input)
    kind, maps, dims = _planned(
        op, x, (output_size,), (), _adaptive_avg_plan, op, spatial, x, output_size
    )
    if kind is not None and fastpath.off_graph(x):  # no node: the products from the array
        return _bare(kind, x, spatial, maps=maps)
    x = _height_one(x) if spatial == 1 else x  # (..., L) as (..., 1, L)
    out = x.mean(dims, keepdim=True) if kind is None else kind.apply(x, maps=maps)
    return _height_dropped(out) if spatial == 1 else out


def _adaptive_avg_plan(op: str, spatial: int, x: Tensor, output_size: Any) -> tuple:
    """An adaptive average pool's plan: its primitive and each axis' averaging matrix (None
    where the sizes agree), or no primitive where the output is one window (the mean over
    the dims, as PyTorch's)."""
    _, shape_of, unbatched = _as_given(x, spatial, op)
    size = _adaptive_size(op, shape_of, output_size, unbatched)
    sizes = tuple(shape_of.shape[2:])
    if spatial == 1:  # a height of one
        size, sizes = (1, *size), (1, *sizes)
    dims = tuple(range(x.ndim + (spatial == 1) - len(size), x.ndim + (spatial == 1)))
    if all(o == 1 for o in size):  # one window: the mean, as PyTorch's
        return None, None, dims
    maps = tuple(pool_ops.averaging_matrix(n, o) for n, o in zip(sizes, size, strict=True))
    return (pool_ops.AdaptiveAvgPool3d if spatial == 3 else pool_ops.AdaptiveAvgPool2d), maps, dims


def adaptive_avg_pool1d(input: Tensor, output_size: int | tuple[int]) -> Tensor:
    """Average pooling of input (N, C, L) or (C, L) to a fixed output length."""
    return _adaptive_avg("adaptive_avg_pool1d", 1, input, output_size)


def adaptive_avg_pool2d(input: Tensor, output_size: int | tuple[int | None, int | None]) -> Tensor:
    """Average pooling to a fixed output size (None keeps that axis' input size)."""
    return _adaptive_avg("adaptive_avg_pool2d", 2, input, output_size)


def adaptive_avg_pool3d(input: Tensor, output_size: int | tuple[int | None, ...]) -> Tensor:
    """Average pooling of input (N, C, D, H, W) or (C, D, H, W) to a fixed output size."""
    return _adaptive_avg("adaptive_avg_pool3d", 3, input, output_size)


def _adaptive_max(op: str, spatial: int, input: Any, output_size: Any, return_indices: bool) -> Any:
    """One primitive (ops/pool.py's): the first maximum of each window in row-major order,
    as PyTorch's scan; its gradient goes there. 1-D is 2-D over a height of one. An
    unbatched input is pooled as it is."""
    x = as_tensor(input)
    windows = _planned(op, x, (output_size,), (), _adaptive_max_plan, op, spatial, x, output_size)
    kind = pool_ops.AdaptiveMaxPool3d if spatial == 3 else pool_ops.AdaptiveMaxPool2d
    x = _height_one(x) if spatial == 1 else x  # (..., L) as (..., 1, L), as PyTorch's
    out, idx = _windowed_max(kind, x, windows, ((0, 0),) * len(windows), return_indices)
    if spatial == 1:
        out, idx = _height_dropped(out), None if idx is None else idx[..., 0, :]
    # the indices batched as the input is (under vmap, every example's)
    return (out, batching.batched_as(idx, x._array)) if return_indices else out


def _adaptive_max_plan(op: str, spatial: int, x: Tensor, output_size: Any) -> tuple:
    """An adaptive max pool's plan: each axis' windows, (n_out, k) positions."""
    _, shape_of, unbatched = _as_given(x, spatial, op)
    size = _adaptive_size(op, shape_of, output_size, unbatched)
    sizes = tuple(shape_of.shape[2:])
    if spatial == 1:  # a height of one
        size, sizes = (1, *size), (1, *sizes)
    return tuple(pool_ops.adaptive_windows(n, o) for n, o in zip(sizes, size, strict=True))


def adaptive_max_pool1d(
    input: Tensor, output_size: int | tuple[int], return_indices: bool = False
) -> Any:
    """Max pooling of input (N, C, L) or (C, L) to a fixed output length; with
    ``return_indices``, also each maximum's position."""
    return _adaptive_max("adaptive_max_pool1d", 1, input, output_size, return_indices)


def adaptive_max_pool2d(
    input: Tensor, output_size: int | tuple[int | None, int | None], return_indices: bool = False
) -> Any:
    """Max pooling to a fixed output size (None keeps that axis' input size); with
    ``return_indices``, also each maximum's flat index in its plane (row * W + column)."""
    return _adaptive_max("adaptive_max_pool2d", 2, input, output_size, return_indices)


def adaptive_max_pool3d(
    input: Tensor, output_size: int | tuple[int | None, ...], return_indices: bool = False
) -> Any:
    """Max pooling of input (N, C, D, H, W) or (C, D, H, W) to a fixed output size; the index
    returned is d * H * W + h * W + w."""
    return _adaptive_max("adaptive_max_pool3d", 3, input, output_size, return_indices)


# ---------------------------------------------------------------------------------------
# Max unpooling and power-average pooling.


def _unpool_size(op: str, x: Tensor, kernel: tuple, stride: tuple, pad: tuple, wanted: Any):
    """PyTorch's output size: (n - 1) * stride - 2 * padding + kernel per axis, or
    ``output_size`` (its last len(kernel) sizes) where within a stride of it."""
    n = len(kernel)
    default = tuple(
        (size - 1) * s - 2 * p + k
        for size, k, s, p in zip(x.shape[-n:], kernel, stride, pad, strict=True)
    )
    if wanted is None:
        return default
    wanted = tuple(int(v) for v in wanted)
    if len(wanted) == n + 2:
        wanted = wanted[2:]
    if len(wanted) != n:
        raise ValueError(
            f"{op}: output_size must have {n} or {n + 2} elements; got output_size {wanted}"
        )
    for w, d, s in zip(wanted, default, stride, strict=True):
        if not d - s < w < d + s:
            raise ValueError(
                f"{op}: output_size {wanted} is out of reach: each size must lie strictly "
                f"between the default {default} minus and plus the stride {stride}"
            )
    return wanted


def _max_unpool(
    op: str,
    spatial: int,
    input: Any,
    indices: Any,
    kernel_size: Any,
    stride: Any,
    padding: Any,
    output_size: Any,
) -> Tensor:
    """One primitive (ops/pool.py's): zeros of the output's size with each input value
    written at its index in the flattened spatial dims; the gradient reads the incoming one
    at those indices. 1-D is 2-D over a height of one, as PyTorch's."""
    x, idx = as_tensor(input), as_tensor(indices)  # an unbatched input unpooled as it is
    size = _planned(
        op, x, (kernel_size, stride, padding, output_size), (idx.dtype, idx.shape),
        _unpool_plan, op, spatial, x, idx, kernel_size, stride, padding, output_size,
    )  # fmt: skip
    where = idx._array  # the input's shape, as given (under vmap, an example's)
    every = batching.examples(where)  # under vmap, every example's indices are checked
    if where.size and (every.min() < 0 or every.max() >= math.prod(size)):
        raise ValueError(
            f"{op}: indices must lie in [0, {math.prod(size)}) for the output size {size}; got "
            f"indices from {int(every.min())} to {int(every.max())}"
        )
    off = fastpath.off_graph(x)
    if spatial == 1:  # (..., L) as (..., L, 1), as PyTorch's: off the graph, the array's
        if off:  # (..., L, 1) -> (..., Lo, 1) -> (..., Lo)
            out = pool_ops.MaxUnpool2d().forward(x._array[..., None], index=where, size=(*size, 1))
            return Tensor._make(out[..., 0])
        out = pool_ops.MaxUnpool2d.apply(x.unsqueeze(-1), index=where, size=(*size, 1))
        return out.squeeze(-1)
    kind = pool_ops.MaxUnpool3d if spatial == 3 else pool_ops.MaxUnpool2d
    if off:  # no node: forward's array wrapped
        return Tensor._make(kind().forward(x._array, index=where, size=size))
    return kind.apply(x, index=where, size=size)


def _unpool_plan(
    op: str,
    spatial: int,
    x: Tensor,
    idx: Tensor,
    kernel_size: Any,
    stride: Any,
    padding: Any,
    output_size: Any,
) -> tuple[int, ...]:
    """max_unpool's plan, once its input and indices are checked: the output's spatial size."""
    _as_given(x, spatial, op)
    if idx.dtype != array.int64 or idx.shape != x.shape:
        raise ValueError(
            f"{op}: indices must be an int64 tensor of the input's shape; got indices of "
            f"dtype {idx.dtype} and shape {idx.shape}, input shape {tuple(x.shape)}"
        )
    kernel = ntuple(kernel_size, spatial, op, "kernel_size")
    step = kernel if stride is None else ntuple(stride, spatial, op, "stride")
    pad = ntuple(padding, spatial, op, "padding")
    return _unpool_size(op, x, kernel, step, pad, output_size)


def max_unpool1d(
    input: Tensor,
    indices: Tensor,
    kernel_size: int | tuple[int],
    stride: int | tuple[int] | None = None,
    padding: int | tuple[int] = 0,
    output_size: Any = None,
) -> Tensor:
    """The partial inverse of max_pool1d: each value put back at its index, zeros elsewhere."""
    return _max_unpool("max_unpool1d", 1, input, indices, kernel_size, stride, padding,
                       output_size)  # fmt: skip


def max_unpool2d(
    input: Tensor,
    indices: Tensor,
    kernel_size: int | tuple[int, int],
    stride: int | tuple[int, int] | None = None,
    padding: int | tuple[int, int] = 0,
    output_size: Any = None,
) -> Tensor:
    """The partial inverse of max_pool2d: each value put back at its flat index in its plane
    (row * W + column), zeros elsewhere."""
    return _max_unpool("max_unpool2d", 2, input, indices, kernel_size, stride, padding,
                       output_size)  # fmt: skip


def max_unpool3d(
    input: Tensor,
    indices: Tensor,
    kernel_size: int | tuple[int, int, int],
    stride: int | tuple[int, int, int] | None = None,
    padding: int | tuple[int, int, int] = 0,
    output_size: Any = None,
) -> Tensor:
    """The partial inverse of max_pool3d: each value put back at its flat index, zeros
    elsewhere."""
    return _max_unpool("max_unpool3d", 3, input, indices, kernel_size, stride, padding,
                       output_size)  # fmt: skip


def _lp_pool(spatial: int, input: Any, norm_type: float, kernel_size: Any, stride: Any,
             ceil_mode: bool) -> Tensor:  # fmt: skip
    """PyTorch's composition: (sign(s) * relu(|s|) * window size) ** (1/p), s the average
    pool of input ** p (no padding)."""
    op = f"lp_pool{spatial}d"
    kernel = ntuple(kernel_size, spatial, op, "kernel_size")
    x = as_tensor(input)
    out = _avg_pool(op, spatial, x.pow(norm_type), kernel, stride, 0, ceil_mode, True, None)
    return (out.sign() * relu(out.abs())).mul(math.prod(kernel)).pow(1.0 / norm_type)


def lp_pool1d(
    input: Tensor,
    norm_type: int | float,
    kernel_size: int,
    stride: int | None = None,
    ceil_mode: bool = False,
) -> Tensor:
    """The p-norm of each window of input (N, C, L) or (C, L), p = norm_type."""
    return _lp_pool(1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(
    input: Tensor,
    norm_type: int | float,
    kernel_size: int | tuple[int, int],
    stride: int | tuple[int, int] | None = None,
    ceil_mode: bool = False,
) -> Tensor:
    """The p-norm of each window, p = norm_type: p = 1 sums, p = inf is max pooling."""
    return _lp_pool(2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(
    input: Tensor,
    norm_type: int | float,
    kernel_size: int | tuple[int, int, int],
    stride: int | tuple[int, int, int] | None = None,
    ceil_mode: bool = False,
) -> Tensor:
    """The p-norm of each window of input (N, C, D, H, W) or (C, D, H, W)."""
    return _lp_pool(3, input, norm_type, kernel_size, stride, ceil_mode)


__all__ = [
    "max_pool1d",
    "max_pool2d",
    "max_pool3d",
    "avg_pool1d",
    "avg_pool2d",
    "avg_pool3d",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool1d",
    "adaptive_max_pool2d",
    "adaptive_max_pool3d",
    "max_unpool1d",
    "max_unpool2d",
    "max_unpool3d",
    "lp_pool1d",
    "lp_pool2d",
    "lp_pool3d",
]
