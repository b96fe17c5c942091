"""The factories of ``cr.*``: tensors made from data (``cr.tensor``, ``cr.from_numpy``,
PyTorch's legacy ``cr.FloatTensor`` and friends), filled (zeros, ones, empty, full, eye,
arange, linspace, the ``*_like``s) or drawn (rand, randn, normal, randint, randperm).
"""

from __future__ import annotations

import builtins
import math
import warnings
from collections.abc import Callable, Sequence
from itertools import repeat
from typing import Any

from . import array, batching, random_batching
from .arguments import (
    need_float,
    no_grad_source,
    no_pinning,
    positive_int,
    resolve_device,
    size_arg,
)
from .autograd.mode import is_grad_enabled
from .autograd.versions import bump
from .constants import channels_last_order, laid_out, memory_order, strided
from .ops import elementwise
from .tensor import Tensor
from .tensor.inplace import RESIZED
from .tensor.sampling import check_std
from .tensor.size import Size

__all__ = [
    "tensor",
    "zeros",
    "ones",
    "empty",
    "full",
    "full_like",
    "zeros_like",
    "ones_like",
    "empty_like",
    "rand",
    "randn",
    "rand_like",
    "randn_like",
    "randint_like",
    "normal",
    "randint",
    "randperm",
    "arange",
    "linspace",
    "logspace",
    "eye",
    "from_numpy",
    "FloatTensor",
    "DoubleTensor",
    "HalfTensor",
    "LongTensor",
    "IntTensor",
    "ByteTensor",
    "BoolTensor",
    "ShortTensor",
    "CharTensor",
    "BFloat16Tensor",
]


def tensor(
    data: Any,
    dtype: Any = None,
    requires_grad: bool = False,
    *,
    device: Any = None,
    pin_memory: bool = False,
) -> Tensor:
    dev = _device(device, pin_memory, "tensor")
    no_grad_source(data, "tensor")
    if isinstance(data, Tensor):  # a copy, on the tensor's own device unless one is given
        dev = data.device if device is None else dev
        data = data._array
    return _make_new(array.from_data(data, dtype, dev), requires_grad)


def _device(device: Any, pin_memory: bool, op: str) -> Any:
    """A factory's ``device=`` and ``pin_memory=``, checked: the device to make the tensor
    on (the default device where none is given)."""
    if pin_memory:
        no_pinning(pin_memory, op)
    return array.get_default_device() if device is None else resolve_device(device, op)


def _make_new(arr: Any, requires_grad: bool) -> Tensor:
    t = Tensor._make(arr)
    return t.requires_grad_() if requires_grad else t


def _float(dtype: Any) -> Any:
    return array.as_dtype(dtype) or array.get_default_dtype()


def _sizes(sizes: tuple, size: Any, op: str) -> tuple:
    """A factory's size, given as ``zeros(2, 3)``, ``zeros((2, 3))`` or ``zeros(size=(2, 3))``."""
    if size is None:
        return sizes
    if sizes:
        raise TypeError(f"{op}: the size is given twice, as {sizes} and as size={size!r}")
    return (size,)


def _filled(
    make: Any, size: tuple, dtype: Any, device: Any, requires_grad: bool, pin: bool, op: str
) -> Tensor:
    """zeros, ones or empty (``make``, NumPy's, made beside an array of the device)."""
    like = array.like(_device(device, pin, op))
    return _make_new(make(size_arg(size, op), dtype=_float(dtype), like=like), requires_grad)


def _drawn(
    draw: str,
    size: tuple,
    generator: Any,
    dtype: Any,
    device: Any,
    requires_grad: bool,
    pin: bool,
    op: str,
) -> Tensor:
    """rand or randn: the generator's ``draw`` (uniform, normal) on the host, in the dtype
    PyTorch draws in (float64, else float32), moved to the device."""
    dev = _device(device, pin, op)
    shape, dtype = size_arg(size, op), _float(dtype)
    batch = random_batching.draw_sizes(op)  # inside vmap: its batch's draw
    drawn = array.float64 if dtype == array.float64 else array.float32
    values = getattr(array.generator(generator, op), draw)(math.prod(batch + shape), drawn)
    values = values.reshape(batch + shape).astype(dtype)
    out = _make_new(array.from_host(values, dev), requires_grad)
    return random_batching.drawn(out)


# -- out=, as PyTorch's factories take it ----------------------------------------------------


def _into(out: Any, dtype: Any, shape: Any, op: str, warn: bool = False) -> None:
    """out checked, and resized to ``shape`` (None: not yet known), for a factory's values,
    as PyTorch's: a Tensor not requiring grad, whose dtype is the values' (a dtype given
    must be it); of another shape, new memory (arange's with the warning of an out with
    elements)."""
    if not isinstance(out, Tensor):
        raise TypeError(f"{op}: out must be a Tensor; got {type(out).__name__}")
    if is_grad_enabled() and out.requires_grad:
        raise RuntimeError(
            f"{op}(): functions with out=... arguments don't support automatic "
            "differentiation, but one of the arguments requires grad"
        )
    if dtype is not None and array.as_dtype(dtype) != out._array.dtype:
        raise RuntimeError(f"{op}: dtype {array.as_dtype(dtype)} does not match out's {out.dtype}")
    if shape is not None and tuple(out.shape) != tuple(shape):
        if warn and out.numel():
            warnings.warn(RESIZED.format(list(out.shape), list(shape)), stacklevel=4)
        out._array = array.xp.empty(tuple(shape), dtype=out._array.dtype, like=out._array)


def _written(out: Any, dtype: Any, grad: bool, op: str, make: Callable, warn: bool = False) -> Any:
    """A filled factory with out=: ``make(out's dtype)``'s values written into out, returned
    (requiring grad where asked, as PyTorch marks it); empty's only resized."""
    _into(out, dtype, None, op)
    if out._array.dtype == array.bool_ and op in ("arange", "linspace", "logspace", "randperm"):
        raise TypeError(f"{op}: makes no bool values, as PyTorch's; got out of dtype {out.dtype}")
    values = make(out.dtype)._array
    _into(out, None, values.shape, op, warn)
    if op != "empty":
        out._array[...] = values
    bump(out)
    return out.requires_grad_() if grad else out


def _drawn_into(out: Any, shape: Any, dtype: Any, grad: bool, op: str, fill: Callable) -> Any:
    """A random factory with out=: out resized, then ``fill(out)`` draws into it in its
    order in memory, as PyTorch's (``rand(out=t)`` is ``t.uniform_()``)."""
    _into(out, dtype, shape, op)
    if op != "randint" and not array.is_floating(out._array.dtype):
        raise TypeError(f"{op}: out must be a floating-point tensor; got dtype {out.dtype}")
    fill(out)
    return out.requires_grad_() if grad else out


def zeros(
    *sizes: Any,
    size: Any = None,
    out: Any = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    size = _sizes(sizes, size, "zeros")
    if out is not None:
        return _written(out, dtype, requires_grad, "zeros", lambda d: zeros(*size, dtype=d))
    return _filled(array.xp.zeros, size, dtype, device, requires_grad, pin_memory, "zeros")


def ones(
    *sizes: Any,
    size: Any = None,
    out: Any = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    size = _sizes(sizes, size, "ones")
    if out is not None:
        return _written(out, dtype, requires_grad, "ones", lambda d: ones(*size, dtype=d))
    return _filled(array.xp.ones, size, dtype, device, requires_grad, pin_memory, "ones")


def empty(
    *sizes: Any,
    size: Any = None,
    out: Any = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    size = _sizes(sizes, size, "empty")
    if out is not None:
        return _written(out, dtype, requires_grad, "empty", lambda d: empty(*size, dtype=d))
    return _filled(array.xp.empty, size, dtype, device, requires_grad, pin_memory, "empty")


def full(
    size: Sequence[int],
    fill_value: Any,
    dtype: Any = None,
    requires_grad: bool = False,
    *,
    out: Any = None,
    device: Any = None,
    pin_memory: bool = False,
) -> Tensor:
    if out is not None:
        make = lambda d: full(size, fill_value, d)  # noqa: E731
        return _written(out, dtype, requires_grad, "full", make)
    like = array.like(_device(device, pin_memory, "full"))
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    if dtype is None:
        dtype = array.from_data(fill_value, None, array.CPU).dtype
    shape = size_arg((size,), "full")
    arr = array.xp.full(shape, fill_value, dtype=array.as_dtype(dtype), like=like)
    return _make_new(arr, requires_grad)


def full_like(
    input: Tensor,
    fill_value: Any,
    dtype: Any = None,
    requires_grad: bool = False,
    *,
    device: Any = None,
    memory_format: Any = None,
) -> Tensor:
    dev = input.device if device is None else resolve_device(device, "full_like")
    dtype = dtype or input.dtype
    out = _laid_out_like(full(input.shape, fill_value, dtype, device=dev), input, memory_format)
    return out.requires_grad_() if requires_grad else out


def _like(fn: Any) -> Any:
    def like(
        input: Tensor,
        dtype: Any = None,
        requires_grad: bool = False,
        *,
        device: Any = None,
        memory_format: Any = None,
    ) -> Tensor:
        dev = input.device if device is None else resolve_device(device, like.__name__)
        dtype = dtype or input.dtype
        out = _laid_out_like(fn(*input.shape, dtype=dtype, device=dev), input, memory_format)
        return out.requires_grad_() if requires_grad else out

    like.__name__ = fn.__name__ + "_like"
    like.__doc__ = (
        f"{fn.__name__} with the shape (and, by default, the dtype and the layout in memory) "
        "of input."
    )
    return like


def _laid_out_like(out: Tensor, input: Tensor, memory_format: Any) -> Tensor:
    """A new tensor laid out in memory as memory_format says, by default (preserve_format)
    as input is where input's elements lie without gaps, else as PyTorch suggests for it
    (channels last where its steps are a channels-last tensor's, row-major otherwise), as
    PyTorch's ``*_like``."""
    order = memory_order(memory_format, input.ndim, "like")
    if order is None:  # input's own order: its dims by decreasing step, a dim of size 1
        arr = input._array  # inside the dim of its step, which keeps that step
        order = tuple(sorted(range(arr.ndim), key=lambda d: (-arr.strides[d], arr.shape[d] == 1)))
        if not laid_out(arr, order):
            order = channels_last_order(arr) or tuple(range(arr.ndim))
    if order == tuple(range(out.ndim)):
        return out
    return elementwise.Cast.apply(out, dtype=out.dtype, order=order)


zeros_like = _like(zeros)

ones_like = _like(ones)

empty_like = _like(empty)


def _to_draw_into(input: Tensor, dtype: Any, device: Any, memory_format: Any, op: str) -> Tensor:
    """The tensor a ``*_like`` draw fills: ``empty_like(input)`` on input's device unless
    another is given, laid out in memory as PyTorch's (the draws follow that order)."""
    dev = input.device if device is None else resolve_device(device, op)
    if batching.active():  # vmap: per example or shared, as its randomness says
        return random_batching.like_draw(
            op, input, lambda t: empty_like(t, dtype, device=dev, memory_format=memory_format)
        )
    return empty_like(input, dtype, device=dev, memory_format=memory_format)


def randint_like(
    input: Tensor,
    low: int = 0,
    high: int | None = None,
    *,
    generator: Any = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    memory_format: Any = None,
) -> Tensor:
    """randint with input's shape (and, by default, dtype and layout in memory):
    ``randint_like(input, high)`` or ``randint_like(input, low, high)``; drawn into
    ``empty_like(input)`` in its memory order, as PyTorch's ``random_(low, high)``."""
    low, high = (0, low) if high is None else (low, high)
    if high <= low:
        raise ValueError(f"randint_like: expected low < high; got low={low} and high={high}")
    out = _to_draw_into(input, dtype, device, memory_format, "randint_like")
    out.random_(low, high, generator=generator)
    return out.requires_grad_() if requires_grad else out


def rand(
    *sizes: Any,
    size: Any = None,
    generator: Any = None,
    out: Any = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    size = _sizes(sizes, size, "rand")
    if out is not None:
        fill = lambda t: t.uniform_(generator=generator)  # noqa: E731
        return _drawn_into(out, size_arg(size, "rand"), dtype, requires_grad, "rand", fill)
    return _drawn("uniform", size, generator, dtype, device, requires_grad, pin_memory, "rand")


def randn(
    *sizes: Any,
    size: Any = None,
    generator: Any = None,
    out: Any = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    draw, size = "normal", _sizes(sizes, size, "randn")
    if out is not None:
        fill = lambda t: t.normal_(generator=generator)  # noqa: E731
        return _drawn_into(out, size_arg(size, "randn"), dtype, requires_grad, "randn", fill)
    return _drawn(draw, size, generator, dtype, device, requires_grad, pin_memory, "randn")


def rand_like(
    input: Tensor,
    dtype: Any = None,
    requires_grad: bool = False,
    *,
    generator: Any = None,
    device: Any = None,
    memory_format: Any = None,
) -> Tensor:
    """rand with input's shape (and, by default, dtype and layout in memory): drawn into
    ``empty_like(input)`` in its memory order, as PyTorch's ``uniform_()``."""
    out = _to_draw_into(input, dtype, device, memory_format, "rand_like")
    need_float(out, "rand_like")
    out.uniform_(generator=generator)
    return out.requires_grad_() if requires_grad else out


def randn_like(
    input: Tensor,
    dtype: Any = None,
    requires_grad: bool = False,
    *,
    generator: Any = None,
    device: Any = None,
    memory_format: Any = None,
) -> Tensor:
    """randn with input's shape (and, by default, dtype and layout in memory): drawn into
    ``empty_like(input)`` in its memory order, as PyTorch's ``normal_()``."""
    out = _to_draw_into(input, dtype, device, memory_format, "randn_like")
    out.normal_(generator=generator)
    return out.requires_grad_() if requires_grad else out


def normal(
    mean: Any,
    std: Any = 1.0,
    size: Any = None,
    *,
    generator: Any = None,
    out: Any = None,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """Normal draws with the given means and standard deviations (tensors, broadcast, of the
    tensor's dtype), or two numbers and a size (the default float dtype), as PyTorch."""
    dev = _device(device, pin_memory, "normal")
    if layout not in (None, strided):
        raise ValueError(f"normal: draws are dense tensors (layout=torch.strided); got {layout}")
    check_std(std, "normal")
    gen = array.generator(generator, "normal")
    tensors = [t for t in (mean, std) if isinstance(t, Tensor)]
    if out is not None and not tensors:
        fill = lambda t: t.normal_(mean, std, generator=generator)  # noqa: E731
        shape = size_arg((size,), "normal")  # None refused
        return _drawn_into(out, shape, dtype, requires_grad, "normal", fill)
    if out is not None:  # PyTorch's normal_out: out's own shape stands for a number std's
        if dtype is not None or requires_grad:
            raise TypeError("normal: of tensors takes no dtype= nor requires_grad=; got one")
        shapes = [tuple(t.shape) for t in tensors] + [() if tensors[-1] is std else out.shape]
        _into(out, None, array.xp.broadcast_shapes(*shapes), "normal", warn=True)
        out.normal_(0.0, 1.0 if tensors[-1] is std else std, generator=generator)
        return (out.mul_(std) if tensors[-1] is std else out).add_(mean)
    if not tensors:
        if size is None:
            raise TypeError("normal: two numbers need a size; got mean, std and no size")
        shape, dtype = size_arg((size,), "normal"), _float(dtype)
        shape = random_batching.draw_sizes("normal") + shape  # inside vmap: its batch's draw
        drawn = array.float64 if dtype == array.float64 else array.float32
        values = gen.normal(math.prod(shape), drawn, mean, std).reshape(shape)
        out = _make_new(array.from_host(values.astype(dtype), dev), requires_grad)
        return random_batching.drawn(out)
    if batching.active():  # vmap: means and stds per example, or one draw for all
        return random_batching.pointwise_draw(
            "normal", (mean, std), lambda m, s: normal(m, s, generator=generator)
        )
    # As PyTorch: standard draws (std alone a number: of that std), then * std, + mean
    like = tensors[0]._array
    m = mean._array if isinstance(mean, Tensor) else mean
    s = std._array if isinstance(std, Tensor) else std
    shape = array.xp.broadcast_shapes(array.xp.shape(m), array.xp.shape(s))
    scale = 1.0 if isinstance(std, Tensor) else std
    drawn = array.float64 if like.dtype == array.float64 else array.float32
    values = gen.normal(math.prod(shape), drawn, 0.0, scale).reshape(shape).astype(like.dtype)
    values = array.from_host(values, like)
    if isinstance(std, Tensor):
        values = values * s
    return _make_new((values + m).astype(like.dtype), requires_grad)


def randint(
    *args: Any,
    size: Sequence[int] | None = None,
    low: int | None = None,
    high: int | None = None,
    generator: Any = None,
    out: Any = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """Integers drawn uniformly from [low, high), as PyTorch's: ``randint(high, size)`` or
    ``randint(low, high, size)`` (low defaults to 0), size a tuple; int64 unless dtype
    says otherwise."""
    dev = _device(device, pin_memory, "randint")
    rest = list(args)
    if size is None and rest:
        size = rest.pop()
    if high is None and rest:
        high = rest.pop()
    if low is None:
        low = rest.pop() if rest else 0
    if rest or high is None or size is None:
        raise TypeError(
            f"randint: expected (high, size) or (low, high, size); got {len(args)} positional "
            f"arguments{'' if size is None else ' and size'}"
        )
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"randint: size must be a tuple of ints; got {size!r}")
    if high <= low:
        raise ValueError(f"randint: expected low < high; got low={low} and high={high}")
    if out is not None:
        kind = out._array.dtype if isinstance(out, Tensor) else array.float32
        lo, hi = (0, 1) if kind == array.bool_ else (-math.inf, math.inf)
        if kind.kind in "iu":  # PyTorch's bounds of out's dtype
            lo, hi = int(array.iinfo(kind).min), int(array.iinfo(kind).max)
        if not lo <= low < high <= hi + 1:
            raise ValueError(f"randint: low and high - 1 must be within {kind}; got {low}, {high}")
        fill = lambda t: t.random_(low, high, generator=generator)  # noqa: E731
        return _drawn_into(out, tuple(size), dtype, requires_grad, "randint", fill)
    shape = random_batching.draw_sizes("randint") + tuple(size)  # inside vmap: its batch's
    draws = array.generator(generator, "randint").integers(low, high, math.prod(shape))
    draws = draws.reshape(shape).astype(array.as_dtype(dtype) or array.int64)
    out = _make_new(array.from_host(draws, dev), requires_grad)
    return random_batching.drawn(out)


def randperm(
    n: int,
    *,
    generator: Any = None,
    out: Any = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """A random permutation of 0, ..., n - 1 (int64 unless dtype says otherwise)."""
    if out is not None:
        make = lambda d: randperm(n, generator=generator, dtype=d)  # noqa: E731
        return _written(out, dtype, requires_grad, "randperm", make)
    dev = _device(device, pin_memory, "randperm")
    n = positive_int(n, "n", "randperm", zero_ok=True)
    batch = random_batching.draw_sizes("randperm")  # inside vmap: one for each example
    gen = array.generator(generator, "randperm")
    orders = [gen.permutation(n) for _ in range(math.prod(batch))]  # torch's Fisher-Yates
    # drawn as functorch's loops, the innermost level's outermost: (*reversed(batch), n)
    order = array.host.stack(orders).reshape(*batch[::-1], n)
    order = array.host.ascontiguousarray(order.transpose(*range(len(batch))[::-1], len(batch)))
    order = order.astype(array.as_dtype(dtype) or array.int64)
    out = _make_new(array.from_host(order, dev), requires_grad)
    return random_batching.drawn(out)


def arange(
    start: float,
    end: float | None = None,
    step: float = 1,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    *,
    out: Any = None,
    pin_memory: bool = False,
) -> Tensor:
    if out is not None:  # resized with the warning of an out with elements, as PyTorch's
        make = lambda d: arange(start, end, step, d)  # noqa: E731
        return _written(out, dtype, requires_grad, "arange", make, warn=True)
    like = array.like(_device(device, pin_memory, "arange"))
    if end is None:
        start, end = 0, start
    if step == 0 or (end - start) * step < 0:  # no number of steps reaches end
        raise ValueError(
            f"arange: step must be nonzero and point from start to end; got start={start}, "
            f"end={end} and step={step}"
        )
    if dtype is None:
        ints = builtins.all(isinstance(v, int) for v in (start, end, step))
        dtype = array.int64 if ints else array.get_default_dtype()
    dtype = array.as_dtype(dtype)
    if dtype.kind not in "iu":
        arr = array.xp.arange(start, end, step, dtype=dtype, like=like)
        return _make_new(arr, requires_grad)
    # PyTorch's integer arange: start + step * i with the ends and step truncated to
    # integers, i < ceil((end - start) / step) from the float values, or for int64 from the
    # truncated ones, in integer arithmetic (NumPy takes its step from the first two floats)
    first, last, stride = (math.trunc(v) for v in (start, end, step))
    if dtype == array.int64:
        if stride == 0:
            raise ValueError(f"arange: step must be nonzero; got step={step} for dtype int64")
        size = (last - first + stride - (1 if stride > 0 else -1)) // stride  # >= 0 here
    else:
        size = math.ceil((float(end) - float(start)) / float(step))
    arr = array.xp.arange(size, dtype=array.int64, like=like) * stride + first
    return _make_new(arr.astype(dtype, copy=False), requires_grad)


def linspace(
    start: float,
    end: float,
    steps: int,
    dtype: Any = None,
    requires_grad: bool = False,
    *,
    out: Any = None,
    device: Any = None,
    pin_memory: bool = False,
) -> Tensor:
    if out is not None:
        make = lambda d: linspace(start, end, steps, d)  # noqa: E731
        return _written(out, dtype, requires_grad, "linspace", make)
    dev = _device(device, pin_memory, "linspace")
    positive_int(steps, "steps", "linspace", zero_ok=True)
    dtype = _float(dtype)
    if dtype.kind in "iu":
        values = _integer_linspace(start, end, steps).astype(dtype)
    else:
        values = array.host.linspace(start, end, steps, dtype=dtype)  # no like= for it
    return _make_new(array.from_host(values, dev), requires_grad)


def logspace(
    start: float,
    end: float,
    steps: int,
    base: float = 10.0,
    dtype: Any = None,
    requires_grad: bool = False,
    *,
    out: Any = None,
    device: Any = None,
    pin_memory: bool = False,
) -> Tensor:
    """base ** v for steps values v evenly spaced from start to end (float64 powers, then
    dtype's values; an integer dtype truncates them, as PyTorch's)."""
    if out is not None:
        make = lambda d: logspace(start, end, steps, base, d)  # noqa: E731
        return _written(out, dtype, requires_grad, "logspace", make)
    dev = _device(device, pin_memory, "logspace")
    positive_int(steps, "steps", "logspace", zero_ok=True)
    dtype = _float(dtype)
    exponents = _log_exponents(start, end, steps, dtype)
    values = array.host.fromiter(map(math.pow, repeat(float(base)), exponents), float, steps)
    if steps == 1 and not _fits(float(values[0]), dtype):
        raise RuntimeError(
            f"logspace: {base} ** {start} = {values[0]} does not fit in {dtype}; "
            "one step is the value itself (with more steps the powers wrap, as PyTorch's)"
        )
    if dtype.kind in "iu":
        values = array.host.trunc(values)
    return _make_new(array.from_host(values.astype(dtype), dev), requires_grad)


def _fits(value: float, dtype: Any) -> bool:
    """Whether a number converts to dtype as PyTorch's checked conversion allows: a float
    within the dtype's range (infinity and NaN in a floating dtype), a Python int within
    it (negative ints wrap into uint8)."""
    if dtype.kind == "f":
        info: Any = array.host.finfo(dtype)
        return not math.isfinite(value) or info.min <= value <= info.max
    info = array.host.iinfo(dtype)
    if isinstance(value, int):
        low = -info.max if dtype == array.host.uint8 else info.min
        return bool(low <= value <= info.max)
    return math.isfinite(value) and bool(info.min <= value <= info.max)


def _log_exponents(start: float, end: float, steps: int, dtype: Any) -> list[float]:
    """PyTorch's exponents for logspace: the ends in dtype (an integer dtype truncates them),
    their difference taken in dtype (in int below 32 bits, as C++ promotes) over steps - 1 in
    float64, counted up from start over the first half and down from end over the rest.
    The powers are the C library's (NumPy's vector power differs in the last bit)."""
    if steps < 2:
        return [float(start)] * steps
    for name, value in (("start", start), ("end", end)):
        if not _fits(value, dtype):
            raise RuntimeError(f"logspace: {name} {value} does not fit in {dtype}")
    if dtype.kind in "iu":  # truncated, and wrapped into the dtype (-1 is 255 in uint8)
        ends = array.host.array([math.trunc(start), math.trunc(end)], array.int64)
        first, last = ends.astype(dtype)
    else:
        first, last = dtype.type(start), dtype.type(end)
    if dtype.kind in "iu" and dtype.itemsize < 4:
        diff = float(int(last) - int(first))
    else:
        with array.host.errstate(over="ignore"):
            diff = float(last - first)
    step, half = diff / (steps - 1), steps // 2
    s, e = float(first), float(last)
    return [s + step * i if i < half else e - step * (steps - 1 - i) for i in range(steps)]


def _integer_linspace(start: Any, end: Any, steps: int) -> Any:
    """PyTorch's linspace into an integer dtype: the ends truncated to integers s and e,
    the step (e - s) / (steps - 1) in float64, and each value truncated from s + step * i
    over the first half, e - step * (steps - 1 - i) over the rest, each of them rounded
    once (PyTorch's kernel compiles to a fused multiply-add). Exact in Python's integers:
    the step is n / 2**k, and int / int rounds once."""
    first, last = math.trunc(float(start)), math.trunc(float(end))
    if steps == 1:
        return array.host.array([first], dtype=array.int64)
    step = (float(last) - float(first)) / (steps - 1)
    num, den = step.as_integer_ratio()
    half = steps // 2
    i = array.host.arange(steps, dtype=object)  # Python ints: no overflow in num * i
    values = array.host.where(i < half, first * den + num * i, last * den - num * (steps - 1 - i))
    return array.host.trunc((values / den).astype(array.float64)).astype(array.int64)


def eye(
    n: int,
    m: int | None = None,
    dtype: Any = None,
    requires_grad: bool = False,
    *,
    out: Any = None,
    device: Any = None,
    pin_memory: bool = False,
) -> Tensor:
    if out is not None:
        return _written(out, dtype, requires_grad, "eye", lambda d: eye(n, m, d))
    like = array.like(_device(device, pin_memory, "eye"))
    positive_int(n, "n", "eye", zero_ok=True)
    positive_int(m, "m", "eye", zero_ok=True, none_ok=True)
    return _make_new(array.xp.eye(n, m, dtype=_float(dtype), like=like), requires_grad)


def from_numpy(ndarray: Any) -> Tensor:
    """A CPU tensor on ``ndarray``'s memory, as PyTorch's: a write through either one is
    seen by the other. Its dtype is the array's."""
    if not isinstance(ndarray, array.host.ndarray):
        raise TypeError(f"from_numpy: expected a numpy.ndarray; got {type(ndarray).__name__}")
    if not array.holds(ndarray.dtype):
        raise TypeError(
            f"from_numpy: cannot make a tensor of an array of dtype {ndarray.dtype}; chainrule "
            "holds bool, integer and floating-point numbers"
        )
    return Tensor._make(ndarray)


class _LegacyType(type):
    """The metaclass of PyTorch's legacy constructors (cr.FloatTensor, ...): calling one
    makes a tensor of its dtype (``FloatTensor([1, 2])``; ``FloatTensor(2, 3)`` zeros, where
    PyTorch leaves memory uninitialised), and isinstance asks a tensor's dtype. bfloat16 is
    a storage dtype: cast, saved, loaded."""

    dtype: Any

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Tensor) and obj.dtype == cls.dtype

    def __call__(cls, *args: Any, device: Any = None) -> Tensor:  # type: ignore[override]
        """``X()`` an empty tensor; ``X(2, 3)`` (sizes) uninitialised; ``X(data)`` (a list,
        tuple, array or Tensor) the data in X's dtype."""
        dev = _device(device, False, cls.__name__)
        if len(args) == 1 and builtins.isinstance(args[0], Size):
            args = tuple(args[0])  # t.shape: sizes, as PyTorch's
        if len(args) == 1 and not builtins.isinstance(args[0], int):
            data = args[0]
            data = data._array if builtins.isinstance(data, Tensor) else data
            return Tensor._make(array.from_data(data, cls.dtype, dev))
        if not builtins.all(builtins.isinstance(n, int) for n in args):
            raise TypeError(
                f"{cls.__name__}: expected sizes (ints) or one sequence of data; got {args!r}"
            )
        like = array.like(dev)
        return Tensor._make(array.xp.zeros(args or (0,), dtype=cls.dtype, like=like))


def _legacy(name: str, dtype: Any) -> Any:
    doc = f"PyTorch's legacy constructor of {array.host.dtype(dtype).name} tensors."
    return _LegacyType(name, (), {"dtype": dtype, "__doc__": doc, "__module__": __name__})


FloatTensor = _legacy("FloatTensor", array.float32)
DoubleTensor = _legacy("DoubleTensor", array.float64)
HalfTensor = _legacy("HalfTensor", array.float16)
LongTensor = _legacy("LongTensor", array.int64)
IntTensor = _legacy("IntTensor", array.int32)
ByteTensor = _legacy("ByteTensor", array.uint8)
BoolTensor = _legacy("BoolTensor", array.bool_)
ShortTensor = _legacy("ShortTensor", array.int16)
CharTensor = _legacy("CharTensor", array.int8)
BFloat16Tensor = _legacy("BFloat16Tensor", array.bfloat16)
