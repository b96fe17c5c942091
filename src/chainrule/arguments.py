"""Argument checks shared by the tensor methods, layers, optimizers and data loaders: one
place for each rule and its wording (dims normalised, shapes inferred, indexes turned into
arrays), each error naming the op and every shape involved.
"""

from __future__ import annotations

import math
import numbers
import operator
from typing import TYPE_CHECKING, Any, Literal, overload

from . import array
from .array import device, no_cuda, no_pinning, resolve_device
from .autograd.primitive import tensor_type
from .autograd.saved_made import dims_taken

__all__ = ["no_cuda", "no_pinning", "resolve_device"]  # the device checks

if TYPE_CHECKING:
    from .tensor import Tensor


def is_int(value: Any) -> bool:
    """Whether value is an integer, Python's or NumPy's, and not a bool (which Python counts
    as an int)."""
    return isinstance(value, (int, array.xp.integer)) and not isinstance(value, bool)


@overload
def positive_int(
    value: Any, name: str, op: str, *, zero_ok: bool = ..., none_ok: Literal[False] = ...
) -> int: ...
@overload
def positive_int(
    value: Any, name: str, op: str, *, zero_ok: bool = ..., none_ok: bool
) -> int | None: ...
def positive_int(
    value: Any, name: str, op: str, *, zero_ok: bool = False, none_ok: bool = False
) -> int | None:
    """value as a Python int, if it is an integer (not a bool) above 0, or at least 0 with
    ``zero_ok``; None is returned as it is with ``none_ok``. Otherwise ValueError:
    ``<op>: <name> must be a positive int; got <value!r>``, the kind worded as allowed
    ("a non-negative int", "... or None")."""
    if value is None and none_ok:
        return None
    if is_int(value) and value >= (0 if zero_ok else 1):
        return int(value)
    kind = "a non-negative int" if zero_ok else "a positive int"
    if none_ok:
        kind += " or None"
    raise ValueError(f"{op}: {name} must be {kind}; got {value!r}")


# -- dims, shapes and indexes, for the tensor methods ------------------------------------


def no_grad_source(data: Any, op: str) -> None:
    """Refuse a torch.Tensor that requires grad as data for a new tensor, saying what to do:
    its values cannot be read without cutting it from its graph (torch.tensor of one copies
    it detached, warning that ``.detach().clone()`` is the way)."""
    if type(data).__module__.partition(".")[0] == "torch" and getattr(data, "requires_grad", False):
        raise RuntimeError(
            f"{op}: cannot read the values of a torch.Tensor that requires grad (shape "
            f"{tuple(data.shape)}); pass its detached values: cr.{op}(t.detach())"
        )


def _device_arg(dev: Any) -> Any:
    """A device argument as resolve_device takes it: another framework's device object (a
    torch.device) by its name, 'cuda:0'."""
    if isinstance(getattr(dev, "type", None), str) and type(dev).__name__ == "device":
        return str(dev)
    return dev


def to_args(args: tuple, kwargs: dict, op: str) -> tuple[Any, Any, bool]:
    """PyTorch's ``to`` arguments, for Tensor.to and Module.to: ``to(dtype, non_blocking,
    copy)``, ``to(device, dtype, non_blocking, copy)``, ``to(other_tensor, non_blocking,
    copy)`` (its dtype and device), and the keywords ``dtype``, ``device``, ``non_blocking``,
    ``copy`` and ``memory_format``. Every device is checked to be one that can be used.
    Returns (dtype or None, device or None, copy)."""
    unknown = set(kwargs) - {"dtype", "device", "non_blocking", "copy", "memory_format"}
    if unknown:
        raise TypeError(f"{op}: unexpected keyword arguments {sorted(unknown)}")
    if len(args) > 4:
        raise TypeError(f"{op}: expected at most (device, dtype, non_blocking, copy); got {args!r}")
    dtype = kwargs.get("dtype")
    dev = kwargs.get("device")
    if dev is not None:
        dev = resolve_device(_device_arg(dev), op)
    flags = []  # non_blocking, then copy, after the dtype, device or tensor
    for i, a in enumerate(args):
        if a is None:
            continue
        a = _device_arg(a)
        if isinstance(a, tensor_type()):
            dtype, dev = a.dtype, a.device
        elif (
            isinstance(a, device)
            or (isinstance(a, str) and a not in array.DTYPE_NAMES)
            or (is_int(a) and i == 0)
        ):  # an integer first: a CUDA device index, as PyTorch
            dev = resolve_device(a, op)
        elif isinstance(a, bool) and i > 0:
            flags.append(a)
        else:
            dtype = a
    copy = kwargs.get("copy", len(flags) > 1 and flags[1])
    return array.as_dtype(dtype), dev, bool(copy)


def numpy_dim_names(dim: Any, keepdim: bool, names: dict, op: str) -> tuple[Any, bool]:
    """Accept NumPy's axis/keepdims beside PyTorch's dim/keepdim."""
    if names:
        unknown = set(names) - {"axis", "keepdims"}
        if unknown:
            raise TypeError(f"{op}: unexpected keyword arguments {sorted(unknown)}")
        dim = names.get("axis", dim)
        keepdim = names.get("keepdims", keepdim)
    return dim, bool(keepdim)


def normalize_dim(dim: int, ndim: int, op: str, shape: tuple[int, ...]) -> int:
    """Normalise one dim to [0, ndim); the error names the op, the dim and the shape."""
    if type(dim) is int and -ndim <= dim < ndim:  # the common case, on every view's way
        return dim % ndim
    if not is_int(dim):
        raise TypeError(f"{op}: dim must be an int; got {type(dim).__name__}")
    lo = -max(ndim, 1)
    if not lo <= dim < max(ndim, 1):
        raise IndexError(
            f"{op}: dim {dim} is out of range for a tensor of shape {shape} (expected a dim in "
            f"[{lo}, {max(ndim, 1) - 1}])"
        )
    return int(dim) % max(ndim, 1)


def normalize_dims(dim: Any, t: Tensor, op: str) -> tuple[int, ...] | None:
    """None for all dims, else a sorted tuple of distinct normalised dims."""
    if dim is None:
        return None
    if type(dim) is int and -t._array.ndim <= dim < t._array.ndim:  # the common case, fast
        return (dim % t._array.ndim,)
    n = t._array.ndim
    if type(dim) is tuple and n:  # a tuple of distinct dims in range, the next case: a loop,
        norm = []  # not all() and sorted() over generators, a microsecond less
        for d in dim:
            if type(d) is not int or not -n <= d < n:
                break
            norm.append(d % n)
        else:
            if norm and len(set(norm)) == len(norm):
                norm.sort()
                return tuple(norm)
    return normalize_dims_of(dim, tuple(t.shape), op)


def normalize_dims_of(dim: Any, shape: tuple[int, ...], op: str) -> tuple[int, ...] | None:
    """normalize_dims for a tensor of ``shape`` (one without an array: a sparse tensor)."""
    if dim is None:
        return None
    if isinstance(dim, (int, array.xp.integer)) and not isinstance(dim, bool):
        dims: tuple = (dim,)
    elif isinstance(dim, (tuple, list)):
        dims = tuple(dim)
    else:
        raise TypeError(f"{op}: dim must be an int or a tuple of ints; got {type(dim).__name__}")
    if not dims:  # PyTorch's dim=(): every dim
        return None
    if not shape:
        for d in dims:
            normalize_dim(d, 0, op, shape)
        return None
    norm = tuple(sorted(normalize_dim(d, len(shape), op, shape) for d in dims))
    if len(set(norm)) != len(norm):
        raise ValueError(f"{op}: dim {tuple(dims)} repeats a dim; got shape {shape}")
    return norm


def shape_arg(args: tuple) -> tuple:
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return tuple(args[0])
    return tuple(args)


def broadcast_shape(op: str, *shapes: tuple[int, ...]) -> tuple[int, ...]:
    """The shape ``shapes`` broadcast to, or a ValueError naming ``op`` and every shape."""
    first = tuple(shapes[0])
    for s in shapes[1:]:  # equal shapes, the common case, without NumPy's Python function
        if tuple(s) != first:
            break
    else:
        return first
    try:
        return tuple(array.xp.broadcast_shapes(*shapes))
    except ValueError:
        shown = " and ".join(str(tuple(s)) for s in shapes)
        raise ValueError(f"{op}: shapes {shown} cannot be broadcast together") from None


def broadcasts_to(shape: tuple[int, ...], target: tuple[int, ...]) -> bool:
    """Whether ``shape`` broadcasts to ``target`` without growing it: as many dims or fewer,
    each equal to target's or 1 (an expand, a mask over scores, a loss's weight)."""
    if len(shape) > len(target):
        return False
    for a, b in zip(shape[::-1], target[::-1], strict=False):  # a loop: all() over a
        if a != b and a != 1:  # generator costs a microsecond on every call's way
            return False
    return True


def spread_or_keyword(spread: tuple, keyword: Any, name: str, op: str) -> tuple:
    """An argument PyTorch takes spread (``x.permute(1, 0)``), as one sequence
    (``x.permute((1, 0))``) or by keyword (``x.permute(dims=(1, 0))``): as the spread form.
    Given neither way, a TypeError as PyTorch's (a 0-d tensor's is ``x.permute(())``)."""
    if keyword is None:
        if not spread:
            raise TypeError(f"{op}() missing 1 required positional argument: {name!r}")
        return spread
    if spread:
        raise TypeError(f"{op}: {name} is given twice, as {spread} and as {name}={keyword!r}")
    return (keyword,)


def size_arg(args: tuple, op: str) -> tuple[int, ...]:
    """The size a factory is given, as ``zeros(2, 3)`` or ``zeros((2, 3))``: each entry a
    non-negative int (a 0-d integer tensor counts), else ValueError naming the factory."""
    size = shape_arg(args)
    try:  # operator.index: ints, NumPy ints and 0-d integer tensors, never floats
        out = tuple(operator.index(n) for n in size if not isinstance(n, bool))
    except TypeError:
        out = ()
    if len(out) != len(size) or any(n < 0 for n in out):
        raise ValueError(f"{op}: size must be non-negative ints; got {size!r}")
    return out


def infer_shape(shape: tuple, old: tuple[int, ...], op: str) -> tuple[int, ...]:
    size = math.prod(old)
    unknown = [i for i, n in enumerate(shape) if n == -1]
    known = math.prod(n for n in shape if n != -1)
    bad = len(unknown) > 1 or any(n < -1 for n in shape)
    if not bad and unknown:
        bad = known == 0 or size % known != 0
        if not bad:
            shape = tuple(size // known if n == -1 else n for n in shape)
    if bad or math.prod(shape) != size:
        raise ValueError(
            f"{op}: shape {tuple(shape)} is invalid for a tensor of shape {old} ({size} elements)"
        )
    return tuple(int(n) for n in shape)


def need_dims(t: Tensor, n: int, op: str) -> None:
    if t.ndim < n:
        raise ValueError(f"{op}: needs a tensor of at least {n} dims; got shape {t.shape}")


class DtypeNotImplementedError(NotImplementedError, TypeError):
    """PyTorch's NotImplementedError for a dtype an op has no kernel for ("leaky_relu_cpu"
    not implemented for 'Long'; a RuntimeError, its base, for some ops), and a TypeError, as
    chainrule's errors of kind are."""


def need_float(t: Tensor, op: str) -> None:
    """The dtype check of an op PyTorch defines for floating tensors only (softmax,
    leaky_relu, layer_norm, the smooth losses, ...): integers and bools are refused, where
    NumPy would compute in them or make float64."""
    if not array.is_floating(t._array.dtype):
        raise DtypeNotImplementedError(f"{op}: needs a floating-point tensor; got dtype {t.dtype}")


def need_number(t: Tensor, op: str) -> None:
    """The dtype check of an op PyTorch defines for numbers but not bools (relu, abs, matmul,
    threshold, ...)."""
    if t._array.dtype.kind == "b":
        raise DtypeNotImplementedError(
            f"{op}: not defined for bool tensors, as in PyTorch; got dtype {t.dtype}"
        )


def clamp_bounds(x: Tensor, lo: Any, hi: Any, op: str) -> None:
    """clamp's bounds checked: at least one; a bool result is refused, as PyTorch's, but for one
    tensor bound (a maximum or minimum of two bool tensors)."""
    bounds = [b for b in (lo, hi) if b is not None]
    if not bounds:
        raise ValueError(f"{op}: at least one of min and max must be given")
    pairs = [(b, isinstance(b, tensor_type())) for b in bounds]  # (bound, whether a tensor)
    if len(pairs) == 2 and pairs[0][1] != pairs[1][1]:
        # PyTorch has a tensor overload and a number one; a 0-d tensor that needs no
        # gradient passes for a number, any other tensor beside a number fits neither
        t = lo if pairs[0][1] else hi
        if t.ndim or t.requires_grad:
            got = ", ".join(
                f"{name}={f'a tensor of shape {b.shape}' if is_t else repr(b)}"
                for name, (b, is_t) in zip(("min", "max"), pairs, strict=True)
            )
            raise TypeError(
                f"{op}: min and max must be both numbers or both tensors, as in PyTorch (a "
                f"0-d tensor that needs no gradient counts as a number); got {got}"
            )
    if x._array.dtype.kind != "b" or [t for _, t in pairs] == [True]:
        return
    if all(b._array.dtype.kind == "b" if t else isinstance(b, bool) for b, t in pairs):
        got = " and ".join(f"shape {b.shape}" if t else repr(b) for b, t in pairs)
        raise TypeError(
            f"{op}: not implemented for bool, as in PyTorch; got a bool tensor of shape "
            f"{x.shape} and bounds {got}"
        )


def need_elements(t: Tensor, op: str, dims: tuple[int, ...] | None = None) -> None:
    """A max or min has no value over nothing: each dim reduced (all for None) must have
    elements; an empty tensor reduced over its non-empty dims gives an empty result."""
    if t._array.size:
        return
    for d in range(t.ndim) if dims is None else dims:
        if t.shape[d] == 0:
            where = "" if dims is None else f" over dim {d}, which has size 0"
            raise ValueError(f"{op}: the tensor is empty{where}; got shape {t.shape}")


def index_arg(index: Any, arr: Any) -> Any:
    """Turn an index of the array ``arr`` into one NumPy takes: Tensors and lists become
    arrays, on arr's device (a CPU index of a CUDA tensor is moved, as PyTorch moves it; a
    CUDA index of a CPU tensor is refused). A bad position or shape is reported by
    GetItem's forward (Function.apply names the op and shape).

    A slice alone is always a step (x[:] slices, PyTorch's SliceBackward0): ``slice(0,
    None)`` for ``:``, so that the node's name (autograd/saved_made.whole_dims) does not read
    it as nothing. The slices are kept as given, which the computation of an exported graph
    needs (x[:2] of a batch of 2 takes 2 rows of any batch)."""
    if type(index) is int:  # x[i]: nothing to turn
        return (index,)
    if type(index) is slice:  # x[i:j]
        return (_FROM_START if index.start is index.stop is index.step is None else index,)
    if not isinstance(index, tuple):
        index = (index,)
    cuda = type(arr) is not array.host.ndarray
    out: list[Any] = []
    for i in index:
        if isinstance(i, tensor_type()):
            i = i._array
        elif isinstance(i, list):
            i = array.xp.asarray(i)
            if i.size == 0:  # [] picks nothing (NumPy would make it a float array)
                i = i.astype(array.int64)
        if isinstance(i, array.ndarray):
            if i.dtype.kind not in "iub":
                raise IndexError(
                    f"getitem: index arrays must be integer or bool; got dtype {i.dtype}"
                )
            if type(i) is not type(arr):
                if not cuda:
                    raise IndexError(
                        f"getitem: indices should be on the CPU or on the indexed tensor's "
                        f"device (cpu); got an index on {array.device_of(i)}"
                    )
                i = array.from_host(i, arr)
            if i.dtype.kind == "b" and i.size == 0 and i.ndim:
                _empty_mask_fits(out, i, arr)
        out.append(i)
    return tuple(out)


def _empty_mask_fits(before: list, mask: Any, arr: Any) -> None:
    """Refuse, as PyTorch, an empty mask whose shape is not that of the dims it indexes
    (NumPy takes it, picking nothing), where no Ellipsis comes before it to place it."""
    if any(part is Ellipsis for part in before):
        return
    at = sum(dims_taken(part) for part in before)
    if tuple(mask.shape) != tuple(arr.shape[at : at + mask.ndim]):
        raise IndexError(
            f"getitem: the shape of the mask {list(mask.shape)} at index {len(before)} does "
            f"not match the shape of the indexed tensor {list(arr.shape)} at index {at}"
        )


_FROM_START = slice(0, None)


def split_index(index: tuple) -> tuple[tuple, tuple] | None:
    """PyTorch's order for an index of integers and index arrays together: the integers
    select first, then the arrays index what is left. NumPy counts an integer as one more
    index array, and puts the indexed dims first when the index arrays are not side by
    side, so the two differ where only integers stand between arrays and slices
    (x[0, :, [1, 2]] of (2, 3, 4): (2, 3) in NumPy, (3, 2) in PyTorch). The two steps
    (first, second) for such an index (0-d integer arrays count as integers, as PyTorch
    counts them), None where NumPy's one step means the same."""
    for i in index:  # the common case first: no index array, nothing to split
        if isinstance(i, array.ndarray):
            break
    else:
        return None

    def selects(i: Any) -> bool:  # an integer, or a 0-d integer array
        if isinstance(i, array.ndarray):
            return i.ndim == 0 and i.dtype.kind in "iu"
        return isinstance(i, numbers.Integral) and not isinstance(i, bool)

    def side_by_side(flags: list[bool]) -> bool:
        at = [k for k, f in enumerate(flags) if f]
        return not at or at[-1] - at[0] + 1 == len(at)

    ints = [selects(i) for i in index]
    arrays = [isinstance(i, array.ndarray) and not n for i, n in zip(index, ints, strict=True)]
    if not (True in ints and True in arrays):
        return None
    numpy_apart = not side_by_side([a or n for a, n in zip(arrays, ints, strict=True)])
    torch_together = side_by_side([a for a, n in zip(arrays, ints, strict=True) if not n])
    if not (numpy_apart and torch_together):
        return None
    first: list[Any] = []
    second: list[Any] = []
    for i in index:
        if selects(i):  # as an int, so that a write through the selection reaches the tensor
            first.append(int(i))
        elif i is None:
            second.append(None)
        elif i is Ellipsis:
            first.append(i)
            second.append(i)
        else:  # a slice, or an index array (a mask spans as many dims as it has)
            mask = isinstance(i, array.ndarray) and i.dtype.kind == "b"
            first.extend([slice(None)] * (i.ndim if mask else 1))
            second.append(i)
    return tuple(first), tuple(second)


def index_vector(index: Any, dim: int, t: Tensor, op: str) -> Any:
    """An index along one dim of t (index_select, index_add, index_fill) as a 1-D int64
    array on t's device: a Tensor, list or array of integers, of at most 1 dim, each in
    [0, size of dim)."""
    if isinstance(index, tensor_type()):
        index = index._array
    shape = t._array.shape or (1,)  # a plain tuple: no Size made
    arr = array.on_device_of(index, t._array)
    if arr.size == 0:
        arr = arr.astype(array.int64)
    if arr.dtype.kind not in "iu" or arr.ndim > 1:
        raise ValueError(
            f"{op}: index must be an integer tensor of at most 1 dim; got dtype {arr.dtype} and "
            f"shape {arr.shape}"
        )
    arr = arr.reshape(-1).astype(array.int64, copy=False)
    n = shape[dim] if shape else 1
    bad = arr[(arr < 0) | (arr >= n)]
    if bad.size:
        raise IndexError(
            f"{op}: index {int(bad[0])} is out of range for dim {dim} of size {n}; got shape "
            f"{shape}"
        )
    return arr
