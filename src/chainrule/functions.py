"""What ``cr.*`` offers besides the Tensor class: the factories (``cr.tensor``, ``cr.zeros``,
``cr.randn``, ...), the functions of several tensors (``cr.cat``, ``cr.stack``, ``cr.einsum``,
``cr.pad``, ...), and the function form of each Tensor method (``cr.exp(x)`` is
``x.exp()``, with input made a Tensor first). One real definition each, so grep, IDEs and
mypy see every name; the methods themselves are tensor.py's.

Some names shadow builtins (sum, max, min, abs, all, any): this module calls those as
``builtins.any`` and so on.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Sequence
from typing import Any

from . import backend
from .arguments import no_pinning, normalize_dim, positive_int, resolve_device, size_arg
from .ops import linalg, movement
from .tensor import Tensor, as_tensor, matmul, where

__all__ = ["matmul", "where"]  # defined in tensor.py, which its methods need; cr.* from here

# ---------------------------------------------------------------------------------------
# Factories.


def tensor(
    data: Any,
    dtype: Any = None,
    requires_grad: bool = False,
    *,
    device: Any = None,
    pin_memory: bool = False,
) -> Tensor:
    dev = _device(device, pin_memory, "tensor")
    if isinstance(data, Tensor):  # a copy, on the tensor's own device unless one is given
        dev = data.device if device is None else dev
        data = data._array
    return _make_new(backend.to_array(data, dtype, dev), requires_grad)


def _device(device: Any, pin_memory: bool, op: str) -> Any:
    """A factory's ``device=`` and ``pin_memory=``, checked: the device to make the tensor
    on (the default device where none is given)."""
    if pin_memory:
        no_pinning(pin_memory, op)
    return backend.default_device if device is None else resolve_device(device, op)


def _make_new(arr: Any, requires_grad: bool) -> Tensor:
    t = Tensor._make(arr)
    return t.requires_grad_() if requires_grad else t


def _float(dtype: Any) -> Any:
    return backend.as_dtype(dtype) or backend.default_float


def _filled(
    make: Any, size: tuple, dtype: Any, device: Any, requires_grad: bool, pin: bool, op: str
) -> Tensor:
    """zeros, ones or empty (``make``, NumPy's, made beside an array of the device)."""
    like = backend.like(_device(device, pin, op))
    return _make_new(make(size_arg(size, op), dtype=_float(dtype), like=like), requires_grad)


def _drawn(
    draw: str, size: tuple, generator: Any, dtype: Any, device: Any, requires_grad: bool,
    pin: bool, op: str,
) -> Tensor:
    """rand or randn: the generator's ``draw`` (random, standard_normal) on the host, moved
    to the device."""
    dev = _device(device, pin, op)
    values = getattr(backend.generator(generator, op), draw)(size_arg(size, op))
    return _make_new(backend.from_host(values.astype(_float(dtype)), dev), requires_grad)


def zeros(
    *size: Any,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    return _filled(backend.xp.zeros, size, dtype, device, requires_grad, pin_memory, "zeros")


def ones(
    *size: Any,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    return _filled(backend.xp.ones, size, dtype, device, requires_grad, pin_memory, "ones")


def empty(
    *size: Any,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    return _filled(backend.xp.empty, size, dtype, device, requires_grad, pin_memory, "empty")


def full(
    size: Sequence[int],
    fill_value: Any,
    dtype: Any = None,
    requires_grad: bool = False,
    *,
    device: Any = None,
    pin_memory: bool = False,
) -> Tensor:
    like = backend.like(_device(device, pin_memory, "full"))
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    if dtype is None:
        dtype = backend.to_array(fill_value, None, backend.CPU).dtype
    shape = size_arg((size,), "full")
    arr = backend.xp.full(shape, fill_value, dtype=backend.as_dtype(dtype), like=like)
    return _make_new(arr, requires_grad)


def rand(
    *size: Any,
    generator: Any = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    return _drawn("random", size, generator, dtype, device, requires_grad, pin_memory, "rand")


def randn(
    *size: Any,
    generator: Any = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    draw = "standard_normal"
    return _drawn(draw, size, generator, dtype, device, requires_grad, pin_memory, "randn")


def normal(
    mean: Any,
    std: Any = 1.0,
    size: Any = None,
    *,
    generator: Any = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """Normal draws with the given means and standard deviations (tensors, broadcast, of the
    tensor's dtype), or two numbers and a size (the default float dtype), as PyTorch."""
    dev = _device(device, pin_memory, "normal")
    rng = backend.generator(generator, "normal")
    tensors = [t for t in (mean, std) if isinstance(t, Tensor)]
    if not tensors:
        if size is None:
            raise TypeError("normal: two numbers need a size; got mean, std and no size")
        values = rng.standard_normal(size_arg((size,), "normal")) * std + mean
        return _make_new(backend.from_host(values.astype(_float(dtype)), dev), requires_grad)
    m = mean._array if isinstance(mean, Tensor) else mean
    s = std._array if isinstance(std, Tensor) else std
    shape = backend.xp.broadcast_shapes(backend.xp.shape(m), backend.xp.shape(s))
    values = backend.from_host(rng.standard_normal(shape), tensors[0]._array) * s + m
    return _make_new(values.astype(tensors[0].dtype), requires_grad)


def var_mean(input: Any, *args: Any, **kwargs: Any) -> tuple[Tensor, Tensor]:
    """(var, mean) with var's arguments (dim, correction, keepdim)."""
    x = as_tensor(input)
    var = x.var(*args, **kwargs)
    return var, _mean_as(x, var, args, kwargs)


def std_mean(input: Any, *args: Any, **kwargs: Any) -> tuple[Tensor, Tensor]:
    """(std, mean) with std's arguments (dim, correction, keepdim)."""
    x = as_tensor(input)
    std = x.std(*args, **kwargs)
    return std, _mean_as(x, std, args, kwargs)


def _mean_as(x: Tensor, spread: Tensor, args: tuple, kwargs: dict) -> Tensor:
    """The mean over the dims var or std reduced, kept as they kept them."""
    dim = args[0] if args else kwargs.get("dim")
    return x.mean(dim, keepdim=bool(kwargs.get("keepdim", False))).reshape(spread.shape)


def meshgrid(*tensors: Any, indexing: str = "ij") -> tuple[Tensor, ...]:
    """Grids from 0-D or 1-D tensors (or one list of them), each expanded to all their
    lengths; ``indexing='xy'`` swaps the first two dims, as NumPy and PyTorch do."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing not in ("ij", "xy"):
        raise ValueError(f"meshgrid: indexing must be 'ij' or 'xy'; got {indexing!r}")
    ts = [as_tensor(t) for t in tensors]
    if [t for t in ts if t.ndim > 1]:
        raise ValueError(f"meshgrid: expects 0-D or 1-D tensors; got {[t.shape for t in ts]}")
    ts = [t.reshape(-1) for t in ts]
    swap = indexing == "xy" and len(ts) >= 2
    if swap:  # build the grids as 'ij' over (y, x, ...), then swap the first two dims back
        ts[0], ts[1] = ts[1], ts[0]
    shape = tuple(t.shape[0] for t in ts)
    grids = [
        t.reshape((1,) * i + (-1,) + (1,) * (len(ts) - i - 1)).expand(*shape)  # along dim i
        for i, t in enumerate(ts)
    ]
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def randint(
    *args: Any,
    size: Sequence[int] | None = None,
    low: int | None = None,
    high: int | None = None,
    generator: Any = None,
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
    draws = backend.generator(generator, "randint").integers(low, high, tuple(size))
    draws = draws.astype(backend.as_dtype(dtype) or backend.int64)
    return _make_new(backend.from_host(draws, dev), requires_grad)


def randperm(
    n: int,
    *,
    generator: Any = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """A random permutation of 0, ..., n - 1 (int64 unless dtype says otherwise)."""
    dev = _device(device, pin_memory, "randperm")
    n = positive_int(n, "n", "randperm", zero_ok=True)
    order = backend.generator(generator, "randperm").permutation(n)
    order = order.astype(backend.as_dtype(dtype) or backend.int64)
    return _make_new(backend.from_host(order, dev), requires_grad)


def arange(
    start: float,
    end: float | None = None,
    step: float = 1,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    *,
    pin_memory: bool = False,
) -> Tensor:
    like = backend.like(_device(device, pin_memory, "arange"))
    if end is None:
        start, end = 0, start
    if step == 0 or (end - start) * step < 0:  # no number of steps reaches end
        raise ValueError(
            f"arange: step must be nonzero and point from start to end; got start={start}, "
            f"end={end} and step={step}"
        )
    if dtype is None:
        ints = builtins.all(isinstance(v, int) for v in (start, end, step))
        dtype = backend.int64 if ints else backend.default_float
    arr = backend.xp.arange(start, end, step, dtype=backend.as_dtype(dtype), like=like)
    return _make_new(arr, requires_grad)


def linspace(
    start: float,
    end: float,
    steps: int,
    dtype: Any = None,
    requires_grad: bool = False,
    *,
    device: Any = None,
    pin_memory: bool = False,
) -> Tensor:
    dev = _device(device, pin_memory, "linspace")
    positive_int(steps, "steps", "linspace", zero_ok=True)
    values = backend.host.linspace(start, end, steps, dtype=_float(dtype))  # no like= for it
    return _make_new(backend.from_host(values, dev), requires_grad)


def eye(
    n: int,
    m: int | None = None,
    dtype: Any = None,
    requires_grad: bool = False,
    *,
    device: Any = None,
    pin_memory: bool = False,
) -> Tensor:
    like = backend.like(_device(device, pin_memory, "eye"))
    positive_int(n, "n", "eye", zero_ok=True)
    positive_int(m, "m", "eye", zero_ok=True, none_ok=True)
    return _make_new(backend.xp.eye(n, m, dtype=_float(dtype), like=like), requires_grad)


def get_rng_state() -> Tensor:
    """The global generator's whole state as a uint8 tensor (as torch.get_rng_state);
    ``set_rng_state`` of it makes the same draws again from that point."""
    return backend.default_generator.get_state()


def set_rng_state(new_state: Any) -> None:
    """Put back a state ``get_rng_state`` made (or ``Generator.get_state``)."""
    state = new_state._array if isinstance(new_state, Tensor) else new_state
    backend.default_generator.set_state(state)


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
        return fn(*input.shape, dtype=dtype, device=dev, requires_grad=requires_grad)

    like.__name__ = fn.__name__ + "_like"
    like.__doc__ = f"{fn.__name__} with the shape (and, by default, the dtype) of input."
    return like


zeros_like = _like(zeros)


ones_like = _like(ones)


empty_like = _like(empty)


rand_like = _like(rand)


randn_like = _like(randn)


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
    return full(input.shape, fill_value, dtype, requires_grad, device=dev)


def from_numpy(ndarray: Any) -> Tensor:
    """A CPU tensor on ``ndarray``'s memory, as PyTorch's: a write through either one is
    seen by the other. Its dtype is the array's."""
    if not isinstance(ndarray, backend.host.ndarray):
        raise TypeError(f"from_numpy: expected a numpy.ndarray; got {type(ndarray).__name__}")
    if not backend.holds(ndarray.dtype):
        raise TypeError(
            f"from_numpy: cannot make a tensor of an array of dtype {ndarray.dtype}; chainrule "
            "holds bool, integer and floating-point numbers"
        )
    return Tensor._make(ndarray)


def is_tensor(obj: Any) -> bool:
    return isinstance(obj, Tensor)


def get_device(input: Tensor) -> int:
    """The CUDA device index of a tensor, or -1 on the CPU."""
    return as_tensor(input).get_device()


def is_floating_point(input: Tensor) -> bool:
    return as_tensor(input).is_floating_point()


class _LegacyType(type):
    """The metaclass of PyTorch's legacy constructors (cr.FloatTensor, ...): calling one
    makes a tensor of its dtype, and isinstance asks a tensor's dtype."""

    dtype: Any

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Tensor) and obj.dtype == cls.dtype

    def __call__(cls, *args: Any, device: Any = None) -> Tensor:  # type: ignore[override]
        """``X()`` an empty tensor; ``X(2, 3)`` (sizes) uninitialised; ``X(data)`` (a list,
        tuple, array or Tensor) the data in X's dtype."""
        dev = _device(device, False, cls.__name__)
        if len(args) == 1 and not builtins.isinstance(args[0], int):
            data = args[0]
            data = data._array if builtins.isinstance(data, Tensor) else data
            return Tensor._make(backend.to_array(data, cls.dtype, dev))
        if not builtins.all(builtins.isinstance(n, int) for n in args):
            raise TypeError(
                f"{cls.__name__}: expected sizes (ints) or one sequence of data; got {args!r}"
            )
        like = backend.like(dev)
        return Tensor._make(backend.xp.zeros(args or (0,), dtype=cls.dtype, like=like))


class FloatTensor(metaclass=_LegacyType):
    """PyTorch's legacy constructor of float32 tensors: ``FloatTensor([1, 2])``,
    ``FloatTensor(2, 3)`` (zeros, where PyTorch leaves memory uninitialised)."""

    dtype = backend.float32


class DoubleTensor(metaclass=_LegacyType):
    """PyTorch's legacy constructor of float64 tensors."""

    dtype = backend.float64


class HalfTensor(metaclass=_LegacyType):
    """PyTorch's legacy constructor of float16 tensors."""

    dtype = backend.float16


class LongTensor(metaclass=_LegacyType):
    """PyTorch's legacy constructor of int64 tensors."""

    dtype = backend.int64


class IntTensor(metaclass=_LegacyType):
    """PyTorch's legacy constructor of int32 tensors."""

    dtype = backend.int32


class ByteTensor(metaclass=_LegacyType):
    """PyTorch's legacy constructor of uint8 tensors."""

    dtype = backend.uint8


class BoolTensor(metaclass=_LegacyType):
    """PyTorch's legacy constructor of bool tensors."""

    dtype = backend.bool_


# ---------------------------------------------------------------------------------------
# Functions of several tensors.


def einsum(equation: str, *operands: Any) -> Tensor:
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    return linalg.Einsum.apply(*[as_tensor(x) for x in operands], equation=equation)


def cat(tensors: Sequence[Any], dim: int = 0) -> Tensor:
    ts = [as_tensor(t) for t in tensors]
    if not ts:
        raise ValueError("cat: expected a non-empty sequence of tensors")
    d = normalize_dim(dim, ts[0].ndim, "cat", ts[0].shape)
    first = ts[0].shape
    for t in ts[1:]:
        pairs = enumerate(zip(t.shape, first, strict=False))
        if t.ndim != len(first) or builtins.any(a != b for i, (a, b) in pairs if i != d):
            raise ValueError(
                f"cat: shapes must match except in dim {dim}; got shapes {[x.shape for x in ts]}"
            )
    dtype = backend.result_dtype(t.dtype for t in ts)
    return movement.Cat.apply(*[t.to(dtype) for t in ts], dim=d)


def stack(tensors: Sequence[Any], dim: int = 0) -> Tensor:
    ts = [as_tensor(t) for t in tensors]
    if not ts:
        raise ValueError("stack: expected a non-empty sequence of tensors")
    if builtins.any(t.shape != ts[0].shape for t in ts):
        raise ValueError(
            f"stack: all tensors must have one shape; got shapes {[t.shape for t in ts]}"
        )
    d = normalize_dim(dim, ts[0].ndim + 1, "stack", ts[0].shape)
    return cat([t.unsqueeze(d) for t in ts], d)


def maximum(input: Any, other: Any) -> Tensor:
    """Elementwise max; a number beside a Tensor takes the tensor's dtype (max is symmetric,
    ties included, so the Tensor's method serves either order)."""
    if not isinstance(input, Tensor) and isinstance(other, Tensor):
        return other.maximum(input)
    return as_tensor(input).maximum(other)


def minimum(input: Any, other: Any) -> Tensor:
    """Elementwise min, as maximum."""
    if not isinstance(input, Tensor) and isinstance(other, Tensor):
        return other.minimum(input)
    return as_tensor(input).minimum(other)


_PAD_MODES = ("constant", "reflect", "replicate", "circular")


def pad(input: Tensor, pad: Sequence[int], mode: str = "constant", value: float = 0.0) -> Tensor:
    """Pad the last dims, PyTorch's way: ``pad`` = (left, right, top, bottom, ...) starting
    from the last dim. ``mode``: 'constant' (``value``), or 'reflect' (mirrored, the edge not
    repeated), 'replicate' (the edge repeated) or 'circular' (wrapped around), which pad the
    last 1, 2 or 3 dims of an input with one or two more dims, as PyTorch's.

    The non-constant modes index the input with an array of source positions per padded
    dim, so their gradient sums what each position lent to the padding (any order)."""
    if mode not in _PAD_MODES:
        modes = ", ".join(map(repr, _PAD_MODES))
        raise ValueError(f"pad: mode must be one of {modes}; got {mode!r}")
    if len(pad) % 2 or len(pad) // 2 > input.ndim:
        raise ValueError(
            f"pad: pad {tuple(pad)} must have an even length of at most 2*ndim; got shape "
            f"{input.shape}"
        )
    if builtins.any(p < 0 for p in pad):
        raise ValueError(f"pad: negative padding is not supported; got {tuple(pad)}")
    k = len(pad) // 2
    if mode == "constant":
        widths = [(0, 0)] * input.ndim
        for i in range(k):
            widths[input.ndim - 1 - i] = (int(pad[2 * i]), int(pad[2 * i + 1]))
        return movement.Pad.apply(input, widths=tuple(widths), value=value)
    if k not in (1, 2, 3) or input.ndim not in (k + 1, k + 2):
        raise ValueError(
            f"pad: mode={mode!r} pads the last 1, 2 or 3 dims of an input with one or two "
            f"dims more (2 or 3 dims for 1, 3 or 4 for 2, 4 or 5 for 3); got pad {tuple(pad)} "
            f"for shape {input.shape}"
        )
    out = input
    for i in range(k):
        dim = input.ndim - 1 - i
        lo, hi, n = int(pad[2 * i]), int(pad[2 * i + 1]), input.shape[dim]
        if not (lo or hi):
            continue
        need = {
            "reflect": ("each padding smaller than the size of the dim it pads", n - 1),
            "circular": ("each padding at most the size of the dim it pads", n),
            "replicate": ("a dim that is not empty", math.inf if n else -1),
        }[mode]
        if builtins.max(lo, hi) > need[1]:
            raise ValueError(
                f"pad: mode={mode!r} needs {need[0]}; got padding ({lo}, {hi}) for dim {dim} of "
                f"size {n} (shape {input.shape})"
            )
        out = out[(slice(None),) * dim + (_pad_index(n, lo, hi, mode),)]
    return out


def _pad_index(n: int, lo: int, hi: int, mode: str) -> Any:
    """The source position of each of the lo + n + hi positions along a padded dim."""
    i = backend.xp.arange(-lo, n + hi)
    if mode == "reflect":
        i = backend.xp.abs(i)
        return backend.xp.where(i > n - 1, 2 * (n - 1) - i, i)
    if mode == "replicate":
        return backend.xp.clip(i, 0, n - 1)
    return i % n  # circular


# ---------------------------------------------------------------------------------------
# Function forms of the Tensor methods.


def abs(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.abs."""
    return as_tensor(input).abs(*args, **kwargs)


def exp(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.exp."""
    return as_tensor(input).exp(*args, **kwargs)


def log(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.log."""
    return as_tensor(input).log(*args, **kwargs)


def isnan(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.isnan."""
    return as_tensor(input).isnan(*args, **kwargs)


def isinf(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.isinf."""
    return as_tensor(input).isinf(*args, **kwargs)


def isfinite(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.isfinite."""
    return as_tensor(input).isfinite(*args, **kwargs)


def isclose(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.isclose."""
    return as_tensor(input).isclose(*args, **kwargs)


def allclose(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.allclose."""
    return as_tensor(input).allclose(*args, **kwargs)


def equal(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.equal."""
    return as_tensor(input).equal(*args, **kwargs)


def histogram(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.histogram."""
    return as_tensor(input).histogram(*args, **kwargs)


def histc(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.histc."""
    return as_tensor(input).histc(*args, **kwargs)


def floor(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.floor."""
    return as_tensor(input).floor(*args, **kwargs)


def ceil(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.ceil."""
    return as_tensor(input).ceil(*args, **kwargs)


def trunc(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.trunc."""
    return as_tensor(input).trunc(*args, **kwargs)


def round(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.round."""
    return as_tensor(input).round(*args, **kwargs)


def clamp_min(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.clamp_min."""
    return as_tensor(input).clamp_min(*args, **kwargs)


def clamp_max(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.clamp_max."""
    return as_tensor(input).clamp_max(*args, **kwargs)


def unbind(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.unbind."""
    return as_tensor(input).unbind(*args, **kwargs)


def tile(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.tile."""
    return as_tensor(input).tile(*args, **kwargs)


def nonzero(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.nonzero."""
    return as_tensor(input).nonzero(*args, **kwargs)


def unique(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.unique."""
    return as_tensor(input).unique(*args, **kwargs)


def bincount(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.bincount."""
    return as_tensor(input).bincount(*args, **kwargs)


def prod(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.prod."""
    return as_tensor(input).prod(*args, **kwargs)


def dot(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.dot."""
    return as_tensor(input).dot(*args, **kwargs)


def mv(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.mv."""
    return as_tensor(input).mv(*args, **kwargs)


def addcmul(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.addcmul."""
    return as_tensor(input).addcmul(*args, **kwargs)


def addcdiv(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.addcdiv."""
    return as_tensor(input).addcdiv(*args, **kwargs)


def lerp(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.lerp."""
    return as_tensor(input).lerp(*args, **kwargs)


def diag(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.diag."""
    return as_tensor(input).diag(*args, **kwargs)


def index_fill(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.index_fill."""
    return as_tensor(input).index_fill(*args, **kwargs)


def unflatten(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.unflatten."""
    return as_tensor(input).unflatten(*args, **kwargs)


def log1p(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.log1p."""
    return as_tensor(input).log1p(*args, **kwargs)


def expm1(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.expm1."""
    return as_tensor(input).expm1(*args, **kwargs)


def log2(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.log2."""
    return as_tensor(input).log2(*args, **kwargs)


def log10(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.log10."""
    return as_tensor(input).log10(*args, **kwargs)


def remainder(input: Any, other: Any) -> Tensor:
    """input % other, with the divisor's sign, as Tensor.remainder (a number on either side)."""
    return input % other if isinstance(other, Tensor) else as_tensor(input) % other


def floor_divide(input: Any, other: Any) -> Tensor:
    """input // other, rounded toward minus infinity, as Tensor.floor_divide."""
    return input // other if isinstance(other, Tensor) else as_tensor(input) // other


def rsqrt(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.rsqrt."""
    return as_tensor(input).rsqrt(*args, **kwargs)


def outer(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.outer."""
    return as_tensor(input).outer(*args, **kwargs)


def t(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.t."""
    return as_tensor(input).t(*args, **kwargs)


def mm(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.mm."""
    return as_tensor(input).mm(*args, **kwargs)


def bmm(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.bmm."""
    return as_tensor(input).bmm(*args, **kwargs)


def narrow(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.narrow."""
    return as_tensor(input).narrow(*args, **kwargs)


def sqrt(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.sqrt."""
    return as_tensor(input).sqrt(*args, **kwargs)


def sin(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.sin."""
    return as_tensor(input).sin(*args, **kwargs)


def cos(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.cos."""
    return as_tensor(input).cos(*args, **kwargs)


def tanh(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.tanh."""
    return as_tensor(input).tanh(*args, **kwargs)


def sigmoid(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.sigmoid."""
    return as_tensor(input).sigmoid(*args, **kwargs)


def relu(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.relu."""
    return as_tensor(input).relu(*args, **kwargs)


def erf(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.erf."""
    return as_tensor(input).erf(*args, **kwargs)


def sign(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.sign."""
    return as_tensor(input).sign(*args, **kwargs)


def clamp(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.clamp."""
    return as_tensor(input).clamp(*args, **kwargs)


def square(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.square."""
    return as_tensor(input).square(*args, **kwargs)


def sum(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.sum."""
    return as_tensor(input).sum(*args, **kwargs)


def mean(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.mean."""
    return as_tensor(input).mean(*args, **kwargs)


def var(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.var."""
    return as_tensor(input).var(*args, **kwargs)


def std(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.std."""
    return as_tensor(input).std(*args, **kwargs)


def amax(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.amax."""
    return as_tensor(input).amax(*args, **kwargs)


def amin(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.amin."""
    return as_tensor(input).amin(*args, **kwargs)


def max(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.max."""
    return as_tensor(input).max(*args, **kwargs)


def min(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.min."""
    return as_tensor(input).min(*args, **kwargs)


def argmax(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.argmax."""
    return as_tensor(input).argmax(*args, **kwargs)


def argmin(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.argmin."""
    return as_tensor(input).argmin(*args, **kwargs)


def logsumexp(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.logsumexp."""
    return as_tensor(input).logsumexp(*args, **kwargs)


def softmax(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.softmax."""
    return as_tensor(input).softmax(*args, **kwargs)


def log_softmax(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.log_softmax."""
    return as_tensor(input).log_softmax(*args, **kwargs)


def norm(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.norm."""
    return as_tensor(input).norm(*args, **kwargs)


def reshape(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.reshape."""
    return as_tensor(input).reshape(*args, **kwargs)


def flatten(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.flatten."""
    return as_tensor(input).flatten(*args, **kwargs)


def squeeze(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.squeeze."""
    return as_tensor(input).squeeze(*args, **kwargs)


def unsqueeze(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.unsqueeze."""
    return as_tensor(input).unsqueeze(*args, **kwargs)


def transpose(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.transpose."""
    return as_tensor(input).transpose(*args, **kwargs)


def permute(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.permute."""
    return as_tensor(input).permute(*args, **kwargs)


def broadcast_to(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.broadcast_to."""
    return as_tensor(input).broadcast_to(*args, **kwargs)


def split(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.split."""
    return as_tensor(input).split(*args, **kwargs)


def chunk(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.chunk."""
    return as_tensor(input).chunk(*args, **kwargs)


def gather(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.gather."""
    return as_tensor(input).gather(*args, **kwargs)


def take_along_dim(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.take_along_dim."""
    return as_tensor(input).take_along_dim(*args, **kwargs)


def tril(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.tril."""
    return as_tensor(input).tril(*args, **kwargs)


def triu(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.triu."""
    return as_tensor(input).triu(*args, **kwargs)


def cumsum(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.cumsum."""
    return as_tensor(input).cumsum(*args, **kwargs)


def flip(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.flip."""
    return as_tensor(input).flip(*args, **kwargs)


def roll(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.roll."""
    return as_tensor(input).roll(*args, **kwargs)


def index_select(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.index_select."""
    return as_tensor(input).index_select(*args, **kwargs)


def masked_select(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.masked_select."""
    return as_tensor(input).masked_select(*args, **kwargs)


def cumprod(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.cumprod."""
    return as_tensor(input).cumprod(*args, **kwargs)


def repeat_interleave(
    input: Any, repeats: Any = None, dim: int | None = None, *, output_size: int | None = None
) -> Any:
    """The function form of Tensor.repeat_interleave. Given only a 1-D integer tensor of
    counts, the positions each repeated that many times: [1, 0, 3] -> [0, 2, 2, 2]."""
    if repeats is not None:
        return as_tensor(input).repeat_interleave(repeats, dim, output_size=output_size)
    counts = as_tensor(input)
    if counts.ndim != 1 or dim is not None:
        raise ValueError(
            "repeat_interleave: without repeats, input must be a 1-D tensor of counts (and no "
            f"dim); got shape {counts.shape} and dim {dim}"
        )
    index = arange(counts.shape[0], device=counts.device)
    return index.repeat_interleave(counts, 0, output_size=output_size)


def sort(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.sort."""
    return as_tensor(input).sort(*args, **kwargs)


def argsort(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.argsort."""
    return as_tensor(input).argsort(*args, **kwargs)


def topk(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.topk."""
    return as_tensor(input).topk(*args, **kwargs)


def scatter(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.scatter."""
    return as_tensor(input).scatter(*args, **kwargs)


def scatter_add(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.scatter_add."""
    return as_tensor(input).scatter_add(*args, **kwargs)


def scatter_reduce(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.scatter_reduce."""
    return as_tensor(input).scatter_reduce(*args, **kwargs)


def index_add(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.index_add."""
    return as_tensor(input).index_add(*args, **kwargs)


def addmm(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.addmm."""
    return as_tensor(input).addmm(*args, **kwargs)


def baddbmm(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.baddbmm."""
    return as_tensor(input).baddbmm(*args, **kwargs)


def numel(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.numel."""
    return as_tensor(input).numel(*args, **kwargs)


def add(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.add."""
    return as_tensor(input).add(*args, **kwargs)


def sub(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.sub."""
    return as_tensor(input).sub(*args, **kwargs)


def mul(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.mul."""
    return as_tensor(input).mul(*args, **kwargs)


def div(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.div."""
    return as_tensor(input).div(*args, **kwargs)


def neg(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.neg."""
    return as_tensor(input).neg(*args, **kwargs)


def pow(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.pow."""
    return as_tensor(input).pow(*args, **kwargs)


def clip(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.clip."""
    return as_tensor(input).clip(*args, **kwargs)


def clone(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.clone."""
    return as_tensor(input).clone(*args, **kwargs)


def detach(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.detach."""
    return as_tensor(input).detach(*args, **kwargs)


def eq(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.eq."""
    return as_tensor(input).eq(*args, **kwargs)


def ne(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.ne."""
    return as_tensor(input).ne(*args, **kwargs)


def lt(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.lt."""
    return as_tensor(input).lt(*args, **kwargs)


def le(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.le."""
    return as_tensor(input).le(*args, **kwargs)


def gt(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.gt."""
    return as_tensor(input).gt(*args, **kwargs)


def ge(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.ge."""
    return as_tensor(input).ge(*args, **kwargs)


def all(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.all."""
    return as_tensor(input).all(*args, **kwargs)


def any(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.any."""
    return as_tensor(input).any(*args, **kwargs)


def masked_fill(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.masked_fill."""
    return as_tensor(input).masked_fill(*args, **kwargs)


def swapaxes(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.swapaxes."""
    return as_tensor(input).swapaxes(*args, **kwargs)


def fill_(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.fill_."""
    return as_tensor(input).fill_(*args, **kwargs)


def zero_(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.zero_."""
    return as_tensor(input).zero_(*args, **kwargs)


def multinomial(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.multinomial."""
    return as_tensor(input).multinomial(*args, **kwargs)


def bernoulli(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.bernoulli."""
    return as_tensor(input).bernoulli(*args, **kwargs)


# -- in place: the function forms of the methods that write into their input -----------


def abs_(input: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """The function form of Tensor.abs_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "abs_").abs_(*args, **kwargs)


def clamp_(input: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """The function form of Tensor.clamp_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "clamp_").clamp_(*args, **kwargs)


def clip_(input: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """The function form of Tensor.clip_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "clip_").clip_(*args, **kwargs)


def cos_(input: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """The function form of Tensor.cos_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "cos_").cos_(*args, **kwargs)


def exp_(input: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """The function form of Tensor.exp_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "exp_").exp_(*args, **kwargs)


def expm1_(input: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """The function form of Tensor.expm1_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "expm1_").expm1_(*args, **kwargs)


def log1p_(input: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """The function form of Tensor.log1p_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "log1p_").log1p_(*args, **kwargs)


def log_(input: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """The function form of Tensor.log_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "log_").log_(*args, **kwargs)


def neg_(input: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """The function form of Tensor.neg_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "neg_").neg_(*args, **kwargs)


def relu_(input: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """The function form of Tensor.relu_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "relu_").relu_(*args, **kwargs)


def sigmoid_(input: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """The function form of Tensor.sigmoid_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "sigmoid_").sigmoid_(*args, **kwargs)


def sin_(input: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """The function form of Tensor.sin_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "sin_").sin_(*args, **kwargs)


def sqrt_(input: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """The function form of Tensor.sqrt_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "sqrt_").sqrt_(*args, **kwargs)


def tanh_(input: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """The function form of Tensor.tanh_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "tanh_").tanh_(*args, **kwargs)


def _inplace_target(input: Any, op: str) -> Tensor:
    if not isinstance(input, Tensor):
        raise TypeError(
            f"{op}: writes in place, so input must be a Tensor; got {type(input).__name__}"
        )
    return input
