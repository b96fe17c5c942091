"""What a Tensor is: its array, gradient and node, its properties, conversions, graph
methods, dtype and device, repr, and ``cr.Tensor(...)``'s legacy constructor rules. The
methods of each other kind are in the files beside this one; tensor/__init__.py makes the
class of them all."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from .. import array
from ..arguments import (
    no_grad_source,
    no_pinning,
    normalize_dim,
    resolve_device,
    size_arg,
    to_args,
)
from ..array import CPU, device
from ..array.tensor_type import tensor_type
from ..autograd import engine
from ..autograd.handles import RemovableHandle, add_hook
from ..autograd.primitive import Function
from ..autograd.versions import bump, counter, version
from ..constants import laid_out, memory_order
from ..ops import elementwise, movement
from .printing import tensor_repr
from .size import Size, new_size

# The files of the class (this one and those beside it) never name Tensor at run time:
# tensor/__init__.py makes the class of theirs, so they cannot import it. They make a tensor
# with make() below (of the class tensor/ registers, as the engine makes its tensors) and
# recognise one with isinstance(x, Core), as no class but Tensor's own bases and subclasses
# derives from Core (tests/house/test_tensor_names.py checks both). Tensor in an annotation
# is for mypy alone.
if TYPE_CHECKING:
    from typing import TypeAlias

    from . import Tensor

    # The self of every method of the kinds' classes: the Tensor they are methods of, so mypy
    # checks each body against the whole class. mypy takes a declared self only where it is
    # a supertype of the class being defined (each kind is a base of Tensor, not the reverse);
    # the union with Any makes it one, and every use of self is still checked against Tensor.
    TensorSelf: TypeAlias = Tensor | Any

xp = array.xp
result_array = array.result_array
HOST_ARRAY = array.host.ndarray  # a CPU tensor's array type (a CUDA one's is the accelerator's)


def make(data: Any, requires_grad: bool = False) -> Tensor:
    """Wrap an array an op made in a Tensor (no copy, no checks): the hot path of every op."""
    t = object.__new__(tensor_type())
    t._array = data if type(data) is HOST_ARRAY else result_array(data)
    t._grad = None
    t.grad_fn = None
    t.requires_grad = requires_grad
    return t


class Core:
    """What every Tensor holds: its array, its gradient and the node that made it, with the
    version counter, view base and hooks the graph methods keep (see Tensor's docstring)."""

    __slots__ = ("_array", "_grad", "requires_grad", "grad_fn", "__dict__", "__weakref__")
    _retains_grad = False  # retain_grad() sets it on the instance
    _vc: list[Any] | None = None  # the version counter, a box shared with views (see Tensor)
    _base: Tensor | None = None  # the tensor this one is a view of, where it is one
    _multi_output: tuple | None = None  # (op, k[, why]): output k of split, unbind, ...
    _hooks: dict[int, Any] | None = None  # register_hook's, by handle id
    _post_hooks: dict[int, Any] | None = None  # register_post_accumulate_grad_hook's

    _array: Any
    is_sparse: ClassVar[Any]  # set on the class by sparse.py: False (a sparse tensor's: True)
    _grad: Tensor | None  # .grad, checked when assigned (the engine writes _grad itself)
    requires_grad: bool
    grad_fn: Function | None

    def __init__(
        self: TensorSelf,
        *data: Any,
        dtype: Any = None,
        requires_grad: bool = False,
        device: Any = None,
    ) -> None:
        """``Tensor(data)`` a copy of data, as ``cr.tensor``; PyTorch's legacy forms:
        ``Tensor()`` empty, ``Tensor(2, 3)`` or ``Tensor(t.shape)`` uninitialised, of the
        default float dtype (see legacy_array)."""
        self._array = legacy_array(data, dtype, device, "Tensor")
        self._grad = None
        self.grad_fn = None
        self.requires_grad = False
        if requires_grad:
            self.requires_grad_(True)

    _make = staticmethod(make)  # Tensor._make, for the layers that hold the class

    # -- properties ------------------------------------------------------------------------

    @property
    def shape(self: TensorSelf) -> Size:
        return new_size(Size, self._array.shape)  # chainrule's own code reads _array.shape

    @property
    def dtype(self: TensorSelf) -> Any:
        """chainrule's dtype object (``chainrule.float32``); the array's NumPy dtype is
        ``_array.dtype``."""
        return array.dtype_object(self._array.dtype)

    @property
    def ndim(self: TensorSelf) -> int:
        return self._array.ndim

    @property
    def is_leaf(self: TensorSelf) -> bool:
        return self.grad_fn is None

    @property
    def device(self: TensorSelf) -> device:
        """Where the tensor lives: ``cr.device('cpu')``, or ``cr.device('cuda', N)`` for a
        tensor whose array is on GPU N."""
        arr = self._array
        return CPU if type(arr) is HOST_ARRAY else array.device_of(arr)

    @property
    def is_cuda(self: TensorSelf) -> bool:
        return type(self._array) is not HOST_ARRAY

    @property
    def is_cpu(self: TensorSelf) -> bool:
        return type(self._array) is HOST_ARRAY

    def get_device(self: TensorSelf) -> int:
        """The CUDA device's index, or -1 on the CPU (PyTorch's)."""
        dev = self.device
        return -1 if dev.type == "cpu" else int(dev.index or 0)

    def dim(self: TensorSelf) -> int:
        return self._array.ndim

    def numel(self: TensorSelf) -> int:
        return int(self._array.size)

    def size(self: TensorSelf, dim: int | None = None) -> Any:
        shape = self._array.shape
        if dim is None:
            return new_size(Size, shape)
        return shape[normalize_dim(dim, len(shape), "size", shape)]

    def __len__(self: TensorSelf) -> int:
        if self.ndim == 0:
            raise TypeError("len: a 0-d tensor has no len()")
        return self._array.shape[0]

    # -- conversion ------------------------------------------------------------------------

    def numpy(self: TensorSelf, *, force: bool = False) -> Any:
        """The NumPy array of a CPU tensor: its own array (shared memory). A CUDA tensor's
        values are reached through ``cpu()`` first, as in PyTorch, or with ``force=True``
        (a copy, as ``t.detach().cpu().numpy()``)."""
        arr = self._array
        if type(arr) is not HOST_ARRAY:
            if not force:
                _on_host_only(self, "numpy")
            return array.to_host(arr)
        return arr

    def __array__(self: TensorSelf, dtype: Any = None, copy: Any = None) -> Any:
        arr = self._array
        if type(arr) is not HOST_ARRAY:
            _on_host_only(self, "__array__")
        return arr if dtype is None else arr.astype(dtype)

    def item(self: TensorSelf) -> Any:
        if self._array.size != 1:
            raise ValueError(f"item: only one-element tensors have an item; got shape {self.shape}")
        return self._array.item()

    def tolist(self: TensorSelf) -> Any:
        return self._array.tolist()

    def __float__(self: TensorSelf) -> float:
        return float(self.item())

    def __int__(self: TensorSelf) -> int:
        return int(self.item())

    def __index__(self: TensorSelf) -> int:
        """A one-element integer tensor as a Python int: a list index, a slice bound, a
        range's end (as PyTorch's)."""
        if self._array.size != 1 or self._array.dtype.kind not in "iu":
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self._array.reshape(()))

    def __format__(self: TensorSelf, format_spec: str) -> str:
        """A 0-d tensor formats as its number (``f"{loss:.4f}"``); others as PyTorch's, by
        their repr, and with a format spec a TypeError."""
        if self._array.ndim == 0:
            return self.item().__format__(format_spec)
        return object.__format__(self, format_spec)

    def __bool__(self: TensorSelf) -> bool:
        if self._array.size != 1:
            raise RuntimeError(
                f"bool: the truth value of a tensor of shape {self.shape} is ambiguous; use "
                ".any() or .all()"
            )
        return bool(self._array)

    def __repr__(self: TensorSelf) -> str:
        return tensor_repr(self)

    # -- graph -----------------------------------------------------------------------------

    def backward(
        self: TensorSelf,
        gradient: Any = None,
        retain_graph: bool = False,
        create_graph: bool = False,
        inputs: Any = None,
    ) -> None:
        """Accumulate d(self)/d(leaf) into every leaf's ``.grad`` (with ``inputs``, into
        those tensors' ``.grad`` alone).

        ``gradient`` is required unless self has one element. The graph's saved values are
        freed afterwards unless ``retain_graph`` (or ``create_graph``) is set; with
        ``create_graph`` the backward pass is itself recorded, for higher-order gradients.
        """
        engine.backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def detach(self: TensorSelf) -> Tensor:
        """The same data (shared, not copied, with one version counter), cut from the
        graph."""
        t = make(self._array, False)
        t._vc = counter(self)
        return t

    @property
    def data(self: TensorSelf) -> Tensor:
        """PyTorch's ``.data``: this tensor's array as a Tensor cut from the graph, sharing
        memory (``p.data.add_(...)`` writes into ``p``) but with a version counter of its
        own, as PyTorch's: a write through ``.data`` is the escape hatch backward does not
        count (hand-written updates, EMA, weight tying), where one through ``detach()`` is
        refused. The array itself is ``numpy()``."""
        return make(self._array, False)

    @data.setter
    def data(self: TensorSelf, value: Any) -> None:
        arr = value._array if isinstance(value, Core) else array.from_data(value)
        self._array = arr
        bump(self)  # a node that saved the old values must not read the new ones unawares

    @property
    def grad(self: TensorSelf) -> Tensor | None:
        """The gradient backward accumulated here (None before any): a Tensor of this
        tensor's shape, dtype and device."""
        return self._grad

    @grad.setter
    def grad(self: TensorSelf, value: Tensor | None) -> None:
        if value is not None:
            if not isinstance(value, Core):
                raise TypeError(
                    f"grad: assigned grad must be a Tensor or None; got {type(value).__name__}"
                )
            theirs, mine = value._array, self._array
            if theirs.shape != mine.shape or theirs.dtype != mine.dtype:
                raise RuntimeError(
                    f"grad: assigned grad has shape {value.shape} and dtype {value.dtype}, "
                    f"but the tensor has shape {self.shape} and dtype {self.dtype}; they must "
                    "match (cast or reshape the gradient first)"
                )
            if array.ACCELERATED and value.device != self.device:
                raise RuntimeError(
                    f"grad: assigned grad is on {value.device}, but the tensor is on "
                    f"{self.device}; move the gradient first"
                )
        self._grad = value

    @property
    def _version(self: TensorSelf) -> int:
        """How many in-place writes this tensor's array has had (PyTorch's ``_version``)."""
        return version(self)

    def requires_grad_(self: TensorSelf, requires_grad: bool = True) -> Tensor:
        if requires_grad and self._array.dtype == array.bfloat16:
            raise TypeError(
                "requires_grad: bfloat16 is a storage dtype in chainrule (cast, saved, loaded); "
                "gradients flow in float16, float32 or float64: cast with .float() first"
            )
        if requires_grad and self._array.dtype.kind != "f":
            raise TypeError(
                f"requires_grad: only floating-point tensors can require grad; got dtype "
                f"{self.dtype}"
            )
        if not self.is_leaf and not requires_grad:
            raise RuntimeError(
                "requires_grad_: a non-leaf tensor's requires_grad cannot be turned off; "
                "use detach()"
            )
        self.requires_grad = bool(requires_grad)
        return self

    def register_hook(self: TensorSelf, hook: Any) -> RemovableHandle:
        """Call ``hook(grad)`` when backward has this tensor's gradient, before it goes on
        (into ``.grad`` for a leaf, to the node that made it otherwise); a Tensor the hook
        returns replaces the gradient. ``.remove()`` on the handle takes the hook out."""
        if not self.requires_grad:
            raise RuntimeError(
                f"register_hook: cannot register a hook on a tensor that does not require "
                f"grad; got a tensor of shape {self.shape}"
            )
        if self._hooks is None:
            self._hooks = {}
        return add_hook(self._hooks, hook)

    def register_post_accumulate_grad_hook(self: TensorSelf, hook: Any) -> RemovableHandle:
        """Call ``hook(tensor)`` after backward has added into this leaf's ``.grad`` (where
        data-parallel training starts reducing a gradient, and optimizers can step early)."""
        if not self.requires_grad or not self.is_leaf:
            raise RuntimeError(
                "register_post_accumulate_grad_hook: post accumulate grad hooks can only be "
                f"registered on leaf tensors that require grad; got a "
                f"{'non-leaf' if self.requires_grad else 'tensor that does not require grad'}"
                f" of shape {self.shape}"
            )
        if self._post_hooks is None:
            self._post_hooks = {}
        return add_hook(self._post_hooks, hook)

    def retain_grad(self: TensorSelf) -> None:
        """Keep this non-leaf tensor's gradient in ``.grad`` after backward."""
        if not self.requires_grad:
            raise RuntimeError("retain_grad: the tensor does not require grad")
        self._retains_grad = True

    # -- dtype -----------------------------------------------------------------------------

    def to(self: TensorSelf, *args: Any, **kwargs: Any) -> Tensor:
        """A tensor of another dtype or on another device, as PyTorch's: ``to(dtype,
        non_blocking, copy)``, ``to(device, dtype, non_blocking, copy)``, ``to(other,
        non_blocking, copy)`` (other's dtype and device), each also by keyword, and
        ``memory_format=``. Differentiable between floating dtypes (bfloat16 among them)
        and between devices (the gradient goes back to this tensor's dtype and device). The
        tensor itself where nothing changes (a copy with ``copy=True``)."""
        x = self
        if len(args) == 1 and not kwargs and isinstance(args[0], xp.dtype):
            dtype, dev, copy = args[0], None, False  # the common case, to(cr.float64), fast
        else:
            dtype, dev, copy = to_args(args, kwargs, "to")
            order = memory_order(kwargs.get("memory_format"), x.ndim, "to")
            if order is not None and not laid_out(x._array, order):  # one copy, so laid out
                dtype = dtype or x.dtype
                floats = array.is_floating(dtype) and array.is_floating(x._array.dtype)
                x = elementwise.Cast.apply(x if floats else x.detach(), dtype=dtype, order=order)
                copy = False
        if dev is not None and dev != x.device:
            moved = movement.ToDevice.apply(x, device=dev)
            return moved if dtype is None or dtype == moved.dtype else moved.to(dtype)
        if dtype is None or dtype == x.dtype:
            return elementwise.Cast.apply(x, dtype=x.dtype) if copy else x
        if not (array.is_floating(dtype) and array.is_floating(x._array.dtype)):
            # integer and bool tensors cannot require grad: off the graph
            return make(x._array.astype(dtype))
        return elementwise.Cast.apply(x, dtype=dtype)

    def cpu(self: TensorSelf, memory_format: Any = None) -> Tensor:
        """The tensor on the CPU: itself if it is there, else a copy (differentiable)."""
        if memory_format is not None:  # a layout to keep or make: to's rule
            return self.to(CPU, memory_format=memory_format)
        if type(self._array) is HOST_ARRAY:
            return self
        return movement.ToDevice.apply(self, device=CPU)

    def cuda(
        self: TensorSelf, device: Any = None, non_blocking: bool = False, **kwargs: Any
    ) -> Tensor:
        """The tensor on a CUDA device (``device``: an index, 'cuda:N' or a cr.device; the
        first GPU by default): itself if it is there, else a copy (differentiable)."""
        dev = array.cuda_device(device, "cuda")
        return self if self.device == dev else movement.ToDevice.apply(self, device=dev)

    def pin_memory(self: TensorSelf, device: Any = None) -> Tensor:
        """The tensor itself where there is a CUDA device (host arrays are uploaded as they
        are); without one, the CUDA error."""
        no_pinning(True, "pin_memory")
        return self

    def is_pinned(self: TensorSelf, device: Any = None) -> bool:
        return False

    def clone(self: TensorSelf, *, memory_format: Any = None) -> Tensor:
        """A copy (differentiable) laid out as memory_format says, by default as this one."""
        order = memory_order(memory_format, self.ndim, "clone")
        return elementwise.Cast.apply(self, dtype=self.dtype, order=order, name="CloneBackward0")

    def is_floating_point(self: TensorSelf) -> bool:
        return array.is_floating(self._array.dtype)

    def nelement(self: TensorSelf) -> int:
        return int(self._array.size)


def _on_host_only(t: Any, op: str) -> None:
    raise TypeError(
        f"{op}: can't convert a {t.device} device tensor (shape {t.shape}) to a NumPy array; "
        "use Tensor.cpu() to copy it to host memory first"
    )


def _device_for(x: Any) -> Any:
    """Where as_tensor puts an array when no device is given, as PyTorch: a device array
    where it is, a host array on the default device."""
    return array.get_default_device() if type(x) is HOST_ARRAY else array.device_of(x)


def legacy_array(args: tuple, dtype: Any, device: Any, op: str) -> Any:
    """The array of ``op(*args, dtype=, device=)``: ``op()`` empty, ``op(2, 3)`` or
    ``op(size)`` (a Size, as ``t.shape``) uninitialised (of dtype, or the default float
    dtype), ``op(data)`` a copy of data (a list, tuple, array, number or tensor) in dtype, or
    the dtype data has (as ``cr.tensor``'s).

    Two differences from PyTorch's ``torch.Tensor``, where chainrule's code and programs
    rely on ``Tensor(x)`` copying x as ``cr.tensor`` does: one int is data (``Tensor(3)`` is
    a 0-d int64 tensor, PyTorch's a size), and data keeps its dtype (PyTorch's is cast to
    the default float dtype)."""
    dev = array.get_default_device() if device is None else resolve_device(device, op)
    if len(args) == 1 and not isinstance(args[0], Size):
        data = args[0]
        if isinstance(data, Core):
            data = data._array
        return array.from_data(data, dtype, dev)
    sizes = args[0] if len(args) == 1 and isinstance(args[0], Size) else args
    if not all(isinstance(n, int) for n in sizes):
        raise TypeError(f"{op}: expected sizes (ints) or one sequence of data; got {args!r}")
    shape = size_arg(sizes, op) or (0,)  # no sizes: PyTorch's empty tensor is (0,)
    kind = array.as_dtype(dtype) or array.get_default_dtype()
    return array.xp.empty(shape, dtype=kind, like=array.like(dev))


def as_tensor(x: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """x as a Tensor: a Tensor as it is (cast to dtype, moved to device, if given); an array
    of that dtype on that device on the array's own memory, as PyTorch's (a copy where its
    strides go backwards, which a tensor's never do); anything else copied into a new one
    (on device, or the default device)."""
    if device is not None:
        device = resolve_device(device, "as_tensor")
    if isinstance(x, Core):
        if device is not None and device != x.device:
            x = x.to(device)
        return x if dtype is None else x.to(dtype)
    if (
        isinstance(x, array.ndarray)
        and array.holds(x.dtype)
        and (dtype is None or array.as_dtype(dtype) == x.dtype)
        and array.device_of(x) == (device or _device_for(x))
        and min(x.strides, default=0) >= 0
    ):
        return make(x)
    no_grad_source(x, "as_tensor")
    return make(array.from_data(x, dtype, device))
