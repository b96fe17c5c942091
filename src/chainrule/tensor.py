"""Tensor: an array, its gradient, and the node that made it, with one-line methods and
operators over the ops.

Every method normalises its arguments with the helpers of arguments.py and calls a primitive
from ops/ (or composes them). Graph recording and the backward walk belong to autograd/; the
factories and the cr.* function forms, to functions.py.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

from . import backend
from .arguments import (
    broadcasts_to,
    index_arg,
    index_vector,
    infer_shape,
    is_int,
    need_dims,
    need_elements,
    need_float,
    no_pinning,
    normalize_dim,
    normalize_dims,
    numpy_dim_names,
    positive_int,
    resolve_device,
    shape_arg,
    to_args,
)
from .autograd import engine
from .autograd.function import Function, bump, counter, register_tensor_type, version
from .autograd.hooks import RemovableHandle, add_hook
from .autograd.mode import is_grad_enabled
from .devices import CPU, device
from .ops import elementwise, linalg, movement, reduce

xp = backend.xp
array_of = backend.array_of
_HOST_ARRAY = backend.host.ndarray  # a CPU tensor's array type (a CUDA one's is the accelerator's)


def _on_host_only(t: Any, op: str) -> None:
    raise TypeError(
        f"{op}: can't convert a {t.device} device tensor (shape {t.shape}) to a NumPy array; "
        "use Tensor.cpu() to copy it to host memory first"
    )
Number = (int, float, bool)


class Tensor:
    """An n-dimensional array that can record the operations made on it.

    ``numpy()`` is the underlying ``numpy.ndarray`` (``_array``); ``data`` is, as in
    PyTorch, a Tensor sharing that array, cut from the graph; ``grad`` is a Tensor (or None)
    filled by ``backward()``; ``grad_fn`` is the node that produced it (None for leaves).

    Every write into the array in place (``add_``, ``+=``, ``t[i] = v``, an optimizer's
    step) bumps a version counter that the tensor shares with its views, ``detach()`` and
    ``data``; backward compares the versions of what each node saved with those it saw, so
    a value changed after it was saved is an error, never a silently wrong gradient.
    """

    __slots__ = ("_array", "grad", "requires_grad", "grad_fn", "__dict__", "__weakref__")
    __array_ufunc__ = None  # NumPy defers to our reflected operators: array * Tensor works
    __hash__ = object.__hash__  # by identity, as == is elementwise
    _retains_grad = False  # retain_grad() sets it on the instance
    _vc: list[int] | None = None  # the version counter, a box shared with views (see above)
    _base: Tensor | None = None  # the tensor this one is a view of, where it is one
    _hooks: dict[int, Any] | None = None  # register_hook's, by handle id
    _post_hooks: dict[int, Any] | None = None  # register_post_accumulate_grad_hook's

    _array: Any
    grad: Tensor | None
    requires_grad: bool
    grad_fn: Function | None

    def __init__(self, data: Any, dtype: Any = None, requires_grad: bool = False) -> None:
        if isinstance(data, Tensor):
            data = data._array
        self._array = backend.to_array(data, dtype)
        self.grad = None
        self.grad_fn = None
        self.requires_grad = False
        if requires_grad:
            self.requires_grad_(True)

    @staticmethod
    def _make(data: Any, requires_grad: bool = False) -> Tensor:
        """Wrap an array an op made (no copy, no checks): the hot path of every op."""
        t = object.__new__(Tensor)
        t._array = data if type(data) is _HOST_ARRAY else array_of(data)
        t.grad = None
        t.grad_fn = None
        t.requires_grad = requires_grad
        return t

    # -- properties ------------------------------------------------------------------------

    @property
    def shape(self) -> tuple[int, ...]:
        return self._array.shape

    @property
    def dtype(self) -> Any:
        return self._array.dtype

    @property
    def ndim(self) -> int:
        return self._array.ndim

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def device(self) -> device:
        """Where the tensor lives: ``cr.device('cpu')``, or ``cr.device('cuda', N)`` for a
        tensor whose array is on GPU N."""
        arr = self._array
        return CPU if type(arr) is _HOST_ARRAY else backend.device_of(arr)

    @property
    def is_cuda(self) -> bool:
        return type(self._array) is not _HOST_ARRAY

    @property
    def is_cpu(self) -> bool:
        return type(self._array) is _HOST_ARRAY

    def get_device(self) -> int:
        """The CUDA device's index, or -1 on the CPU (PyTorch's)."""
        dev = self.device
        return -1 if dev.type == "cpu" else int(dev.index or 0)

    @property
    def T(self) -> Tensor:
        return self.permute(*reversed(range(self.ndim)))

    @property
    def mT(self) -> Tensor:
        need_dims(self, 2, "mT")
        return self.transpose(-2, -1)

    def dim(self) -> int:
        return self._array.ndim

    def numel(self) -> int:
        return int(self._array.size)

    def size(self, dim: int | None = None) -> Any:
        if dim is None:
            return self.shape
        return self.shape[normalize_dim(dim, self.ndim, "size", self.shape)]

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len: a 0-d tensor has no len()")
        return self.shape[0]

    # -- conversion ------------------------------------------------------------------------

    def numpy(self, *, force: bool = False) -> Any:
        """The NumPy array of a CPU tensor: its own array (shared memory). A CUDA tensor's
        values are reached through ``cpu()`` first, as in PyTorch, or with ``force=True``
        (a copy, as ``t.detach().cpu().numpy()``)."""
        arr = self._array
        if type(arr) is not _HOST_ARRAY:
            if not force:
                _on_host_only(self, "numpy")
            return backend.to_host(arr)
        return arr

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        arr = self._array
        if type(arr) is not _HOST_ARRAY:
            _on_host_only(self, "__array__")
        return arr if dtype is None else arr.astype(dtype)

    def item(self) -> Any:
        if self._array.size != 1:
            raise ValueError(f"item: only one-element tensors have an item; got shape {self.shape}")
        return self._array.item()

    def tolist(self) -> Any:
        return self._array.tolist()

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        """A one-element integer tensor as a Python int: a list index, a slice bound, a
        range's end (as PyTorch's)."""
        if self._array.size != 1 or self._array.dtype.kind not in "iu":
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self._array.reshape(()))

    def __format__(self, format_spec: str) -> str:
        """A 0-d tensor formats as its number (``f"{loss:.4f}"``); others as PyTorch's, by
        their repr, and with a format spec a TypeError."""
        if self._array.ndim == 0:
            return self.item().__format__(format_spec)
        return object.__format__(self, format_spec)

    def __bool__(self) -> bool:
        if self._array.size != 1:
            raise RuntimeError(
                f"bool: the truth value of a tensor of shape {self.shape} is ambiguous; use "
                ".any() or .all()"
            )
        return bool(self._array)

    def __iter__(self) -> Iterator[Tensor]:
        return (self[i] for i in range(len(self)))

    def __repr__(self) -> str:
        """PyTorch's layout: 4 decimals (or none for whole numbers, or scientific for wide
        ranges), one width for all entries, and the dtype where it is not the default."""
        arr = backend.to_host(self._array)  # printing happens on the host
        body = backend.host.array2string(
            arr,
            separator=", ",
            prefix="tensor(",
            max_line_width=81,  # 8 entries of 4 decimals a line, as PyTorch
            formatter=_float_formatter(arr),
        )
        extras = []
        empty = self._array.size == 0
        if empty and self.shape != (0,):
            extras.append(f"size={self.shape}")
        usual = (backend.float32, backend.int64, backend.bool_)
        if self.dtype not in usual or empty and self.dtype != backend.float32:
            extras.append(f"dtype={self.dtype}")
        if type(self._array) is not _HOST_ARRAY:
            extras.insert(0, f"device='{self.device}'")
        if self.grad_fn is not None:
            extras.append(f"grad_fn=<{self.grad_fn.name}Backward>")
        elif self.requires_grad:
            extras.append("requires_grad=True")
        return "tensor(" + ", ".join([body, *extras]) + ")"

    # -- graph -----------------------------------------------------------------------------

    def backward(
        self, gradient: Any = None, retain_graph: bool = False, create_graph: bool = False
    ) -> None:
        """Accumulate d(self)/d(leaf) into every leaf's ``.grad``.

        ``gradient`` is required unless self has one element. The graph's saved values are
        freed afterwards unless ``retain_graph`` (or ``create_graph``) is set; with
        ``create_graph`` the backward pass is itself recorded, for higher-order gradients.
        """
        engine.backward(self, gradient, retain_graph, create_graph)

    def detach(self) -> Tensor:
        """The same data (shared, not copied, with one version counter), cut from the
        graph."""
        t = Tensor._make(self._array, False)
        t._vc = counter(self)
        return t

    @property
    def data(self) -> Tensor:
        """PyTorch's ``.data``: this tensor's array as a Tensor cut from the graph, sharing
        memory and version counter (``p.data.add_(...)`` writes into ``p``). The array
        itself is ``numpy()``."""
        return self.detach()

    @data.setter
    def data(self, value: Any) -> None:
        arr = value._array if isinstance(value, Tensor) else backend.to_array(value)
        self._array = arr
        bump(self)  # a node that saved the old values must not read the new ones unawares

    @property
    def _version(self) -> int:
        """How many in-place writes this tensor's array has had (PyTorch's ``_version``)."""
        return version(self)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        if requires_grad and self._array.dtype == backend.bfloat16:
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

    def register_hook(self, hook: Any) -> RemovableHandle:
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

    def register_post_accumulate_grad_hook(self, hook: Any) -> RemovableHandle:
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

    def retain_grad(self) -> None:
        """Keep this non-leaf tensor's gradient in ``.grad`` after backward."""
        if not self.requires_grad:
            raise RuntimeError("retain_grad: the tensor does not require grad")
        self._retains_grad = True

    # -- in place ---------------------------------------------------------------------------
    # Every in-place op is its out-of-place op plus one write into this tensor's array
    # (_write). With nothing to record, the result is copied in and the version bumped.
    # When the result joins a graph, the tensor takes the op's node as its grad_fn (PyTorch
    # "rebases" it), and the node's input is a stand-in for the tensor's old value, so
    # nodes recorded before the write still reach the old one (engine.as_seen).

    def add_(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return self._write("add_", lambda t: t.add(other, alpha=alpha))

    def sub_(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return self._write("sub_", lambda t: t.sub(other, alpha=alpha))

    def mul_(self, other: Any) -> Tensor:
        return self._write("mul_", lambda t: t * other)

    def addcmul_(self, tensor1: Any, tensor2: Any, *, value: Any = 1) -> Tensor:
        return self._write("addcmul_", lambda t: t.addcmul(tensor1, tensor2, value=value))

    def lerp_(self, end: Any, weight: Any) -> Tensor:
        """self moved toward end by weight, in place (an average of weights kept with
        ema.lerp_(p, 1 - decay)); the gradient reaches the old value through lerp."""
        return self.copy_(self.lerp(end, weight))

    def addcdiv_(self, tensor1: Any, tensor2: Any, *, value: Any = 1) -> Tensor:
        return self._write("addcdiv_", lambda t: t.addcdiv(tensor1, tensor2, value=value))

    def div_(self, other: Any) -> Tensor:
        return self._write("div_", lambda t: t / other)

    def pow_(self, exponent: Any) -> Tensor:
        return self._write("pow_", lambda t: t**exponent)

    def matmul_(self, other: Any) -> Tensor:
        return self._write("matmul_", lambda t: t @ other)

    def neg_(self) -> Tensor:
        return self._write("neg_", lambda t: -t)

    def abs_(self) -> Tensor:
        return self._write("abs_", Tensor.abs)

    def exp_(self) -> Tensor:
        return self._write("exp_", Tensor.exp)

    def log_(self) -> Tensor:
        return self._write("log_", Tensor.log)

    def log1p_(self) -> Tensor:
        return self._write("log1p_", Tensor.log1p)

    def expm1_(self) -> Tensor:
        return self._write("expm1_", Tensor.expm1)

    def sqrt_(self) -> Tensor:
        return self._write("sqrt_", Tensor.sqrt)

    def sin_(self) -> Tensor:
        return self._write("sin_", Tensor.sin)

    def cos_(self) -> Tensor:
        return self._write("cos_", Tensor.cos)

    def tanh_(self) -> Tensor:
        return self._write("tanh_", Tensor.tanh)

    def sigmoid_(self) -> Tensor:
        return self._write("sigmoid_", Tensor.sigmoid)

    def relu_(self) -> Tensor:
        return self._write("relu_", Tensor.relu)

    def clamp_(self, min: Any = None, max: Any = None) -> Tensor:
        return self._write("clamp_", lambda t: t.clamp(min, max))

    clip_ = clamp_

    def scatter_(
        self, dim: int, index: Any, src: Any = None, *, value: Any = None, reduce: Any = None
    ) -> Tensor:
        return self._write(
            "scatter_", lambda t: t.scatter(dim, index, src, value=value, reduce=reduce)
        )

    def index_fill_(self, dim: int, index: Any, value: Any) -> Tensor:
        return self._write("index_fill_", lambda t: t.index_fill(dim, index, value))

    def tril_(self, diagonal: int = 0) -> Tensor:
        return self._write("tril_", lambda t: t.tril(diagonal))

    def triu_(self, diagonal: int = 0) -> Tensor:
        return self._write("triu_", lambda t: t.triu(diagonal))

    def masked_fill_(self, mask: Any, value: Any) -> Tensor:
        return self._write("masked_fill_", lambda t: t.masked_fill(mask, value))

    def copy_(self, src: Any, non_blocking: bool = False) -> Tensor:
        """Write ``src`` (broadcast to this shape, cast to this dtype) into this tensor;
        the gradient flows to ``src``, none to the old value."""
        src = src if isinstance(src, Tensor) else Tensor(src)
        if backend.ACCELERATED and type(src._array) is not type(self._array):
            src = src.to(self.device)  # across devices, as PyTorch's copy_
        return self._fill("copy_", src.to(self.dtype))

    def fill_(self, value: Any) -> Tensor:
        if isinstance(value, Tensor) and value.ndim:
            raise RuntimeError(
                f"fill_: the value must be a number or 0-d tensor; got shape {value.shape}"
            )
        return self._fill("fill_", value)

    def zero_(self) -> Tensor:
        return self.fill_(0)

    def normal_(self, mean: float = 0.0, std: float = 1.0, *, generator: Any = None) -> Tensor:
        rng = backend.generator(generator, "normal_")
        values = rng.standard_normal(self.shape) * std + mean
        return self._fill("normal_", backend.from_host(values.astype(self.dtype), self._array))

    def uniform_(self, from_: float = 0.0, to: float = 1.0, *, generator: Any = None) -> Tensor:
        rng = backend.generator(generator, "uniform_")
        values = rng.uniform(from_, to, self.shape)
        return self._fill("uniform_", backend.from_host(values.astype(self.dtype), self._array))

    def exponential_(self, lambd: float = 1.0, *, generator: Any = None) -> Tensor:
        """Fills with draws from the exponential distribution of rate lambd (mean 1 / lambd)."""
        rng = backend.generator(generator, "exponential_")
        values = rng.exponential(1.0 / lambd, self.shape).astype(self.dtype)
        return self._fill("exponential_", backend.from_host(values, self._array))

    def _fill(self, op: str, values: Any) -> Tensor:
        """Make ``values`` (broadcast to this shape) the tensor's new value, with a zero
        gradient for the old one: ``where(False, self, values)`` through _write. With no
        graph to join and values this dtype holds as they are, that is one assignment into
        the array (8x faster for a zero_ of a (512, 784) gradient), the same result."""
        src = values._array if isinstance(values, Tensor) else values
        arr = self._array
        wants = self.requires_grad or getattr(values, "requires_grad", False)
        joins = is_grad_enabled() and wants
        if joins or not backend.writeable(arr) or not _holds_as_is(src, arr):
            return self._write(op, lambda t: where(_false(t), t, values))
        arr[...] = src
        bump(self)
        return self

    def __iadd__(self, other: Any) -> Tensor:
        return self.add_(other)

    def __isub__(self, other: Any) -> Tensor:
        return self.sub_(other)

    def __imul__(self, other: Any) -> Tensor:
        return self.mul_(other)

    def __itruediv__(self, other: Any) -> Tensor:
        return self.div_(other)

    def __ipow__(self, other: Any) -> Tensor:
        return self.pow_(other)

    def __imatmul__(self, other: Any) -> Tensor:
        return self.matmul_(other)

    def __setitem__(self, index: Any, value: Any) -> None:
        index = index_arg(index, self._array)
        if isinstance(value, backend.moved_types) and self.is_cuda:  # moved, as an index is
            value = backend.from_host(value, self._array)
        self._write("setitem", lambda t: movement.IndexPut.apply(t, value, index=index))

    def _write(self, op: str, compute: Any) -> Tensor:
        """Make ``compute(self)`` the new value of this tensor, in place (see above).
        ``compute``'s last op must be the only one that takes the tensor as an input."""
        rebase = is_grad_enabled() and self.requires_grad
        if rebase and self.grad_fn is None:
            raise RuntimeError(
                f"{op}: a leaf tensor that requires grad (shape {self.shape}) is used in an "
                "in-place operation; do it under cr.no_grad(), or on a clone"
            )
        old = self
        if is_grad_enabled():  # a stand-in for the old value, which the result may record
            old = Tensor._make(self._array, self.requires_grad)
            old.grad_fn, old._vc = self.grad_fn, counter(self)
        new = compute(old)
        if not isinstance(new, Tensor):
            new = Tensor(new)
        arr, out = self._array, new._array
        if out.shape != arr.shape:
            raise RuntimeError(
                f"{op}: the result's shape {out.shape} does not match the tensor's shape "
                f"{arr.shape} written in place (the other operand must broadcast to it)"
            )
        if not xp.can_cast(out.dtype, arr.dtype, "same_kind"):
            raise RuntimeError(
                f"{op}: the result's dtype {out.dtype} cannot be written into a tensor of "
                f"dtype {arr.dtype} in place; use the out-of-place form"
            )
        fn = new.grad_fn
        if fn is not None:
            if self._base is not None:
                raise RuntimeError(
                    f"{op}: an in-place write that joins the graph into a view (shape "
                    f"{self.shape}) of another tensor (shape {self._base.shape}) is not "
                    "supported; write into the tensor itself (base[index] = value) or use "
                    "the out-of-place op"
                )
            if fn.saves_inputs and old is not self:  # the rule reads the old value: keep it
                old._array, old._vc = arr.copy(), [version(self)]
        if not backend.writeable(arr):
            raise RuntimeError(
                f"{op}: the tensor (shape {self.shape}) is a read-only view (expand or "
                "broadcast_to: several elements share one memory location); clone() it first"
            )
        if out is not arr:
            arr[...] = out
        bump(self)
        if fn is not None:
            self.__dict__.setdefault("_previous", {})[version(self) - 1] = old
            self.grad_fn, self.requires_grad = fn, True
            if fn.saves_out:
                fn.out_version = version(self)
        return self

    # -- dtype -----------------------------------------------------------------------------

    def to(self, *args: Any, **kwargs: Any) -> Tensor:
        """A tensor of another dtype or on another device, as PyTorch's: ``to(dtype)``,
        ``to(device)``, ``to(device, dtype)``, ``to(other)`` (other's dtype and device),
        ``to(dtype=..., device=..., copy=...)``. Differentiable between float dtypes and
        between devices (the gradient goes back to this tensor's device). The tensor itself
        where nothing changes (a copy with ``copy=True``)."""
        if len(args) == 1 and not kwargs and isinstance(args[0], xp.dtype):
            dtype, dev, copy = args[0], None, False  # the common case, to(cr.float64), fast
        else:
            dtype, dev, copy = to_args(args, kwargs, "to")
        if dev is not None and dev != self.device:
            moved = movement.ToDevice.apply(self, device=dev)
            return moved if dtype is None or dtype == moved.dtype else moved.to(dtype)
        if dtype is None or dtype == self.dtype:
            return self.clone() if copy else self
        if not (dtype.kind == "f" and self._array.dtype.kind == "f"):
            # integer, bool and bfloat16 tensors cannot require grad: off the graph
            return Tensor._make(self._array.astype(dtype))
        return elementwise.Cast.apply(self, dtype=dtype)

    def cpu(self, memory_format: Any = None) -> Tensor:
        """The tensor on the CPU: itself if it is there, else a copy (differentiable)."""
        if type(self._array) is _HOST_ARRAY:
            return self
        return movement.ToDevice.apply(self, device=CPU)

    def cuda(self, device: Any = None, non_blocking: bool = False, **kwargs: Any) -> Tensor:
        """The tensor on a CUDA device (``device``: an index, 'cuda:N' or a cr.device; the
        first GPU by default): itself if it is there, else a copy (differentiable)."""
        dev = backend.cuda_device(device, "cuda")
        return self if self.device == dev else movement.ToDevice.apply(self, device=dev)

    def pin_memory(self, device: Any = None) -> Tensor:
        """The tensor itself where there is a CUDA device (host arrays are uploaded as they
        are); without one, the CUDA error."""
        no_pinning(True, "pin_memory")
        return self

    def is_pinned(self, device: Any = None) -> bool:
        return False

    def clone(self) -> Tensor:
        return elementwise.Cast.apply(self, dtype=self.dtype)

    def contiguous(self, memory_format: Any = None) -> Tensor:
        return self

    def is_contiguous(self, memory_format: Any = None) -> bool:
        """True: chainrule's tensors are read as if contiguous (each op makes what it
        needs), so memory layout never changes a result."""
        return True

    def is_floating_point(self) -> bool:
        return backend.is_floating(self._array.dtype)

    def element_size(self) -> int:
        """Bytes per element."""
        return int(self._array.itemsize)

    def nelement(self) -> int:
        return int(self._array.size)

    def data_ptr(self) -> int:
        """The address of the first element of the tensor's array (in the GPU's memory for a
        CUDA tensor)."""
        return backend.data_ptr(self._array)

    def type(self, dtype: Any = None, non_blocking: bool = False, **kwargs: Any) -> Any:
        """No argument: the type's name as PyTorch's, with chainrule's ('chainrule.FloatTensor').
        With a dtype, a legacy type (cr.LongTensor) or such a name: ``to`` that dtype."""
        if dtype is None:
            return f"chainrule.{_TYPE_NAMES.get(self.dtype.name, 'Tensor')}"
        if isinstance(dtype, str) and dtype.partition(".")[0] in ("torch", "chainrule"):
            names = {v: k for k, v in _TYPE_NAMES.items()}
            name = dtype.partition(".")[2]
            if name not in names:
                raise ValueError(f"type: unknown tensor type {dtype!r}")
            dtype = names[name]
        dtype = getattr(dtype, "dtype", dtype)  # a legacy type such as cr.LongTensor
        return self.to(dtype)

    def type_as(self, other: Tensor) -> Tensor:
        """This tensor in other's dtype."""
        return self.to(other.dtype)

    def half(self) -> Tensor:
        return self.to(backend.float16)

    def bfloat16(self) -> Tensor:
        """This tensor in bfloat16, a storage dtype: cast, saved and loaded, off the graph."""
        return self.to(backend.bfloat16)

    # -- arithmetic ------------------------------------------------------------------------

    def __add__(self, other: Any) -> Tensor:
        return elementwise.Add.apply(*_pair(self, other, "add"))

    def __radd__(self, other: Any) -> Tensor:
        return elementwise.Add.apply(*_pair(other, self, "add"))

    def __sub__(self, other: Any) -> Tensor:
        return elementwise.Sub.apply(*_pair(self, other, "sub"))

    def __rsub__(self, other: Any) -> Tensor:
        return elementwise.Sub.apply(*_pair(other, self, "sub"))

    def __mul__(self, other: Any) -> Tensor:
        return elementwise.Mul.apply(*_pair(self, other, "mul"))

    def __rmul__(self, other: Any) -> Tensor:
        return elementwise.Mul.apply(*_pair(other, self, "mul"))

    def __truediv__(self, other: Any) -> Tensor:
        return elementwise.Div.apply(*_pair(_floating(self), other, "div"))

    def __rtruediv__(self, other: Any) -> Tensor:
        return elementwise.Div.apply(*_pair(other, _floating(self), "div"))

    def __pow__(self, other: Any) -> Tensor:
        return elementwise.Pow.apply(*_pair(self, other, "pow"))

    def __rpow__(self, other: Any) -> Tensor:
        return elementwise.Pow.apply(*_pair(other, self, "pow"))

    def __floordiv__(self, other: Any) -> Tensor:
        return _floor_divide(self, other)

    def __rfloordiv__(self, other: Any) -> Tensor:
        return _floor_divide(other, self)

    def __mod__(self, other: Any) -> Tensor:
        return _remainder(self, other)

    def __rmod__(self, other: Any) -> Tensor:
        return _remainder(other, self)

    def __neg__(self) -> Tensor:
        return elementwise.Neg.apply(self)

    def __pos__(self) -> Tensor:
        return self

    def __abs__(self) -> Tensor:
        return self.abs()

    def __matmul__(self, other: Any) -> Tensor:
        return matmul(self, other)

    def __rmatmul__(self, other: Any) -> Tensor:
        return matmul(other, self)

    def add(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return self + (other if alpha == 1 else other * alpha)

    def sub(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return self - (other if alpha == 1 else other * alpha)

    def addcmul(self, tensor1: Any, tensor2: Any, *, value: Any = 1) -> Tensor:
        """self + value * tensor1 * tensor2, within an ulp of PyTorch's (which fuses the last
        multiply and the add into one rounding)."""
        return self + value * as_tensor(tensor1) * tensor2

    def addcdiv(self, tensor1: Any, tensor2: Any, *, value: Any = 1) -> Tensor:
        """self + value * tensor1 / tensor2, in that order, as PyTorch (Adam's update)."""
        return self + value * as_tensor(tensor1) / tensor2

    def lerp(self, end: Any, weight: Any) -> Tensor:
        """self + weight * (end - self), computed from end's side where weight >= 0.5, as
        PyTorch (so weight 1 gives end exactly)."""
        diff = end - self
        if isinstance(weight, Tensor):
            return where(weight.abs() < 0.5, self + weight * diff, end - diff * (1 - weight))
        return self + weight * diff if abs(weight) < 0.5 else end - diff * (1 - weight)

    mul = __mul__
    div = __truediv__
    floor_divide = __floordiv__
    remainder = __mod__
    pow = __pow__
    neg = __neg__

    # comparisons make bool tensors and record nothing
    def __eq__(self, other: Any) -> Tensor:  # type: ignore[override]
        return _compare(xp.equal, self, other)

    def __ne__(self, other: Any) -> Tensor:  # type: ignore[override]
        return _compare(xp.not_equal, self, other)

    def __lt__(self, other: Any) -> Tensor:
        return _compare(xp.less, self, other)

    def __le__(self, other: Any) -> Tensor:
        return _compare(xp.less_equal, self, other)

    def __gt__(self, other: Any) -> Tensor:
        return _compare(xp.greater, self, other)

    def __ge__(self, other: Any) -> Tensor:
        return _compare(xp.greater_equal, self, other)

    def __invert__(self) -> Tensor:
        if self.dtype.kind not in "biu":
            raise TypeError(f"invert: needs a bool or integer tensor; got dtype {self.dtype}")
        return Tensor._make(~self._array)

    def __and__(self, other: Any) -> Tensor:
        return _compare(xp.logical_and, self, other)

    def __or__(self, other: Any) -> Tensor:
        return _compare(xp.logical_or, self, other)

    eq, ne, lt, le, gt, ge = __eq__, __ne__, __lt__, __le__, __gt__, __ge__

    def isnan(self) -> Tensor:
        return Tensor._make(xp.isnan(self._array))

    def isinf(self) -> Tensor:
        return Tensor._make(xp.isinf(self._array))

    def isfinite(self) -> Tensor:
        return Tensor._make(xp.isfinite(self._array))

    def isclose(
        self, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
    ) -> Tensor:
        """|self - other| <= atol + rtol * |other| elementwise (broadcast), in one dtype."""
        if not isinstance(other, Tensor) or other.dtype != self.dtype:
            got = other.dtype if isinstance(other, Tensor) else type(other).__name__
            raise TypeError(f"isclose: needs two tensors of one dtype; got {self.dtype} and {got}")

        def isclose(x: Any, y: Any) -> Any:
            return xp.isclose(x, y, rtol=rtol, atol=atol, equal_nan=equal_nan)

        return _compare(isclose, self, other)

    def allclose(
        self, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
    ) -> bool:
        """True when isclose holds everywhere."""
        return bool(self.isclose(other, rtol, atol, equal_nan).all())

    def equal(self, other: Tensor) -> bool:
        """True when both have one shape and equal values (of any dtypes)."""
        return self.shape == other.shape and bool(xp.array_equal(self._array, other._array))

    def any(self) -> Tensor:
        return Tensor._make(xp.any(self._array))

    def all(self) -> Tensor:
        return Tensor._make(xp.all(self._array))

    # -- sampling (no gradient) ------------------------------------------------------------

    def nonzero(self, *, as_tuple: bool = False) -> Any:
        """The indices of the nonzero elements: (n, ndim) int64, or as_tuple one (n,) tensor per
        dim (a 0-d tensor counts as 1-d)."""
        if as_tuple:
            return tuple(Tensor._make(i) for i in xp.nonzero(xp.atleast_1d(self._array)))
        return Tensor._make(xp.argwhere(self._array))

    def unique(
        self,
        sorted: bool = True,
        return_inverse: bool = False,
        return_counts: bool = False,
        dim: int | None = None,
    ) -> Any:
        """The distinct values (sorted; slices along dim when given), and as asked each
        element's index among them (input's shape) and each value's count, as PyTorch."""
        axis = None if dim is None else normalize_dim(dim, self.ndim, "unique", self.shape)
        values, inverse, counts = xp.unique(
            self._array, return_inverse=True, return_counts=True, axis=axis
        )
        if axis is None:
            inverse = inverse.reshape(self.shape)
        out = [Tensor._make(values)]
        if return_inverse:
            out.append(Tensor._make(inverse.astype(backend.int64)))
        if return_counts:
            out.append(Tensor._make(counts.astype(backend.int64)))
        return out[0] if len(out) == 1 else tuple(out)

    def bincount(self, weights: Any = None, minlength: int = 0) -> Tensor:
        """How often each value 0..max occurs in this 1-D non-negative integer tensor (at least
        minlength bins): int64, or the weights' sums (float32 weights stay float32, others
        float64, as PyTorch)."""
        x = self._array
        if x.ndim != 1 or x.dtype.kind not in "biu" or (x.size and x.min() < 0):
            raise ValueError(
                f"bincount: needs a 1-D tensor of non-negative integers; got shape {self.shape} "
                f"and dtype {self.dtype}"
            )
        if weights is None:
            return Tensor._make(xp.bincount(x, minlength=minlength).astype(backend.int64))
        w = backend.array_like(weights._array if isinstance(weights, Tensor) else weights, x)
        out = xp.bincount(x, weights=w, minlength=minlength)
        return Tensor._make(out.astype(w.dtype if w.dtype == backend.float32 else backend.float64))

    def histogram(
        self, bins: Any = 100, *, range: Any = None, weight: Any = None, density: bool = False
    ) -> Histogram:
        """Counts (or densities) in ``bins`` equal bins over ``range`` (the data's min and max
        by default), or between the edges of a 1-D tensor ``bins``; the last bin holds its
        right edge. Both in this tensor's floating dtype."""
        need_float(self, "histogram")
        edges = bins._array if isinstance(bins, Tensor) else bins
        w = weight._array if isinstance(weight, Tensor) else weight
        hist, edges = xp.histogram(self._array, edges, range=range, weights=w, density=density)
        as_dtype = self._array.dtype
        return Histogram(Tensor._make(hist.astype(as_dtype)), Tensor._make(edges.astype(as_dtype)))

    def histc(self, bins: int = 100, min: float = 0, max: float = 0) -> Tensor:
        """Counts in ``bins`` equal bins over [min, max] (the data's own when min == max); values
        outside are left out."""
        need_float(self, "histc")
        lo, hi = (min, max) if min != max else (self._array.min(), self._array.max())
        if lo == hi:  # every value equal: PyTorch widens the range by one either side
            lo, hi = lo - 1, hi + 1
        hist, _ = xp.histogram(self._array, bins, range=(lo, hi))
        return Tensor._make(hist.astype(self._array.dtype))

    def multinomial(
        self, num_samples: int, replacement: bool = False, *, generator: Any = None
    ) -> Tensor:
        """Category indices drawn with probabilities proportional to this tensor's weights
        (the last dim; 1-D: one distribution, 2-D: one per row): (num_samples,) or (rows,
        num_samples), int64. Without replacement, each index at most once per row, those of
        weight 0 only after every other one, as PyTorch's."""
        w = self._array
        if w.ndim not in (1, 2) or w.dtype.kind != "f":
            raise ValueError(
                f"multinomial: input must be a 1-D or 2-D floating-point tensor of weights; got "
                f"shape {self.shape} and dtype {self.dtype}"
            )
        n = positive_int(num_samples, "num_samples", "multinomial")
        rows = w.reshape(-1, w.shape[-1]).astype(backend.float64)  # (rows, categories)
        totals = rows.sum(axis=1)
        if not (xp.isfinite(rows).all() and (rows >= 0).all() and (totals > 0).all()):
            raise ValueError(
                f"multinomial: weights must be finite, non-negative and not all 0 in a row; "
                f"got shape {self.shape}"
            )
        rng = backend.generator(generator, "multinomial")
        if replacement:
            # the draws are made on the host, a loop over rows (distributions), each one
            # draw of n samples
            probs = backend.to_host(rows / totals[:, None])  # (rows, categories)
            draws = [rng.choice(probs.shape[1], size=n, p=row) for row in probs]
            out = backend.from_host(backend.host.stack(draws), w)  # (rows, n)
        else:
            if n > rows.shape[1]:
                raise ValueError(
                    f"multinomial: cannot draw {n} samples without replacement from "
                    f"{rows.shape[1]} categories; got shape {self.shape}"
                )
            # Each category's key log(u) / w, the n largest first (Efraimidis and Spirakis):
            # a weighted draw without replacement; weight 0 gives -inf, and those come last,
            # from the highest index down, as PyTorch's (a stable sort of the columns reversed)
            with backend.errstate(divide="ignore"):
                u = backend.from_host(rng.random(rows.shape), w)
                keys = xp.log(u) / rows  # (rows, categories)
            last = rows.shape[1] - 1
            out = last - xp.argsort(-keys[:, ::-1], axis=1, kind="stable")[:, :n]
        out = out.astype(backend.int64)
        return Tensor._make(out if w.ndim == 2 else out[0])

    def bernoulli(self, *, generator: Any = None) -> Tensor:
        """1 with the probability each element gives, else 0, in this tensor's dtype."""
        p = self._array
        if p.dtype.kind != "f":
            raise TypeError(f"bernoulli: needs a floating-point tensor; got dtype {self.dtype}")
        if not ((p >= 0) & (p <= 1)).all():  # NaN fails both
            raise ValueError(
                f"bernoulli: probabilities must be in [0, 1]; got shape {self.shape} with "
                f"values outside"
            )
        draws = backend.generator(generator, "bernoulli").random(p.shape)
        draws = backend.from_host(draws, p) < p
        return Tensor._make(draws.astype(p.dtype))

    # -- elementwise math ------------------------------------------------------------------

    def abs(self) -> Tensor:
        return elementwise.Abs.apply(self)

    def sign(self) -> Tensor:
        return elementwise.Sign.apply(self)

    # rounding: a step function, whose gradient is 0 (as PyTorch's), with the values written
    # through where(False, self, values); an integer tensor comes back as a copy

    def floor(self) -> Tensor:
        return self._rounded(xp.floor)

    def ceil(self) -> Tensor:
        return self._rounded(xp.ceil)

    def trunc(self) -> Tensor:
        return self._rounded(xp.trunc)

    def round(self, *, decimals: int = 0) -> Tensor:
        """To the nearest integer, halves to even; with decimals, as PyTorch computes it:
        rint(x * 10^d) / 10^d (d > 0) or rint(x / 10^-d) * 10^-d (d < 0), in x's dtype."""
        if decimals == 0:
            return self._rounded(xp.rint)
        scale = self._array.dtype.type(10.0 ** abs(decimals))
        if decimals > 0:
            return self._rounded(lambda x: xp.rint(x * scale) / scale)
        return self._rounded(lambda x: xp.rint(x / scale) * scale)

    def _rounded(self, fn: Any) -> Tensor:
        if self._array.dtype.kind != "f":
            return self.clone()
        return where(_false(self), self, Tensor._make(fn(self._array)))

    def exp(self) -> Tensor:
        return elementwise.Exp.apply(_floating(self))

    def log(self) -> Tensor:
        return elementwise.Log.apply(_floating(self))

    def log1p(self) -> Tensor:
        return elementwise.Log1p.apply(_floating(self))

    def expm1(self) -> Tensor:
        return elementwise.Expm1.apply(_floating(self))

    def log2(self) -> Tensor:
        """log(x) / log(2), within an ulp of PyTorch's (whose own log2 differs from NumPy's)."""
        return self.log() / math.log(2)

    def log10(self) -> Tensor:
        """log(x) / log(10), within an ulp of PyTorch's (whose own log10 differs from NumPy's)."""
        return self.log() / math.log(10)

    def sqrt(self) -> Tensor:
        return elementwise.Sqrt.apply(_floating(self))

    def sin(self) -> Tensor:
        return elementwise.Sin.apply(_floating(self))

    def cos(self) -> Tensor:
        return elementwise.Cos.apply(_floating(self))

    def tanh(self) -> Tensor:
        return elementwise.Tanh.apply(_floating(self))

    def sigmoid(self) -> Tensor:
        return elementwise.Sigmoid.apply(_floating(self))

    def relu(self) -> Tensor:
        return elementwise.Relu.apply(self)

    def erf(self) -> Tensor:
        return elementwise.Erf.apply(_floating(self))

    def rsqrt(self) -> Tensor:
        """1 / sqrt(x), of an integer tensor in float32."""
        x = self if self._array.dtype.kind == "f" else self.to(backend.default_float)
        return x**-0.5

    def outer(self, vec2: Any) -> Tensor:
        """The outer product of two 1-D tensors: (n,) and (m,) -> (n, m)."""
        other = as_tensor(vec2)
        if self.ndim != 1 or other.ndim != 1:
            raise ValueError(
                f"outer: expected two 1-D tensors; got shapes {self.shape} and {other.shape}"
            )
        return self.unsqueeze(1) * other.unsqueeze(0)

    # -- new tensors of this one's dtype (PyTorch's new_* methods) -------------------------

    def new_tensor(
        self, data: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False
    ) -> Tensor:
        """A copy of data as a tensor of this one's dtype (or dtype), on this one's device
        (or device)."""
        dev = self.device if device is None else resolve_device(device, "new_tensor")
        data = data._array if isinstance(data, Tensor) else data
        t = Tensor._make(backend.to_array(data, dtype or self.dtype, dev))
        return t.requires_grad_() if requires_grad else t

    def new_zeros(
        self, *size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False
    ) -> Tensor:
        return self._new(xp.zeros, size, dtype, device, requires_grad, "new_zeros")

    def new_ones(
        self, *size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False
    ) -> Tensor:
        return self._new(xp.ones, size, dtype, device, requires_grad, "new_ones")

    def new_empty(
        self, *size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False
    ) -> Tensor:
        return self._new(xp.empty, size, dtype, device, requires_grad, "new_empty")

    def new_full(
        self,
        size: Sequence[int],
        fill_value: Any,
        *,
        dtype: Any = None,
        device: Any = None,
        requires_grad: bool = False,
    ) -> Tensor:
        def fill(shape: Any, dtype: Any, like: Any) -> Any:
            return xp.full(shape, fill_value, dtype=dtype, like=like)

        return self._new(fill, (size,), dtype, device, requires_grad, "new_full")

    def _new(
        self, make: Any, size: tuple, dtype: Any, device: Any, requires_grad: bool, op: str
    ) -> Tensor:
        like = self._array if device is None else backend.like(resolve_device(device, op))
        dtype = backend.as_dtype(dtype) or self.dtype
        t = Tensor._make(make(shape_arg(size), dtype=dtype, like=like))
        return t.requires_grad_() if requires_grad else t

    def square(self) -> Tensor:
        return elementwise.Mul.apply(self, self)

    def clamp_min(self, min: Any) -> Tensor:
        return self.clamp(min=min)

    def clamp_max(self, max: Any) -> Tensor:
        return self.clamp(max=max)

    def clamp(self, min: Any = None, max: Any = None) -> Tensor:
        """Bounds are numbers or tensors (constants: no gradient flows to them)."""
        if min is None and max is None:
            raise ValueError("clamp: at least one of min and max must be given")
        lo = min._array if isinstance(min, Tensor) else min
        hi = max._array if isinstance(max, Tensor) else max
        x = self
        if x._array.dtype.kind != "f" and (isinstance(lo, float) or isinstance(hi, float)):
            x = x.to(backend.float32)  # an integer tensor clamped to a float bound becomes float32
        return elementwise.Clamp.apply(x, lo=lo, hi=hi)

    clip = clamp

    def where(self, condition: Any, other: Any) -> Tensor:
        """self where condition, else other: cr.where(condition, self, other)."""
        return where(condition, self, other)

    def maximum(self, other: Any) -> Tensor:
        return elementwise.Maximum.apply(*_pair(self, other, "maximum"))

    def minimum(self, other: Any) -> Tensor:
        return elementwise.Minimum.apply(*_pair(self, other, "minimum"))

    def masked_fill(self, mask: Any, value: float) -> Tensor:
        return where(mask, value, self)

    # -- reductions ------------------------------------------------------------------------

    def sum(
        self, dim: Any = None, keepdim: bool = False, *, dtype: Any = None, **np_names: Any
    ) -> Tensor:
        """The sum over dim (all for None); with dtype, of the input cast to it first."""
        dim, keepdim = numpy_dim_names(dim, keepdim, np_names, "sum")
        x = self if dtype is None else self.to(dtype)
        return reduce.Sum.apply(x, dims=normalize_dims(dim, x, "sum"), keepdim=keepdim)

    def mean(
        self, dim: Any = None, keepdim: bool = False, *, dtype: Any = None, **np_names: Any
    ) -> Tensor:
        """The mean over dim (all for None); with dtype, of the input cast to it first."""
        dim, keepdim = numpy_dim_names(dim, keepdim, np_names, "mean")
        x = self if dtype is None else self.to(dtype)
        need_float(x, "mean")
        return reduce.Mean.apply(x, dims=normalize_dims(dim, x, "mean"), keepdim=keepdim)

    def prod(self, dim: int | None = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
        """The product over dim (all for None): the last of cumprod, whose gradient is right
        where elements are 0. Integer and bool tensors multiply in int64, as PyTorch."""
        x = self if dtype is None else self.to(dtype)
        if dtype is None and x.dtype.kind in "biu":
            x = x.to(backend.int64)
        if dim is None:
            out = x.reshape(-1).cumprod(0)[-1] if x.numel() else x.new_ones(())
            return out.reshape((1,) * x.ndim) if keepdim else out
        d = normalize_dim(dim, x.ndim, "prod", x.shape)
        if x.ndim == 0:
            return x.clone()
        out = x.cumprod(d).narrow(d, x.shape[d] - 1, 1) if x.shape[d] else x.sum(d, True) + 1
        return out if keepdim else out.squeeze(d)

    def var(
        self, dim: Any = None, *, correction: int = 1, keepdim: bool = False, **np_names: Any
    ) -> Tensor:
        """Variance with Bessel's correction by default (``correction=1``), as PyTorch."""
        return _variance(self, dim, correction, keepdim, np_names, "var")

    def std(
        self, dim: Any = None, *, correction: int = 1, keepdim: bool = False, **np_names: Any
    ) -> Tensor:
        return _root(_variance(self, dim, correction, keepdim, np_names, "std"), 2)

    def amax(self, dim: Any = None, keepdim: bool = False, **np_names: Any) -> Tensor:
        dim, keepdim = numpy_dim_names(dim, keepdim, np_names, "amax")
        dims = normalize_dims(dim, self, "amax")
        need_elements(self, "amax", dims)
        return reduce.Amax.apply(self, dims=dims, keepdim=keepdim)

    def amin(self, dim: Any = None, keepdim: bool = False, **np_names: Any) -> Tensor:
        dim, keepdim = numpy_dim_names(dim, keepdim, np_names, "amin")
        dims = normalize_dims(dim, self, "amin")
        need_elements(self, "amin", dims)
        return reduce.Amin.apply(self, dims=dims, keepdim=keepdim)

    def max(self, dim: Any = None, keepdim: bool = False, **np_names: Any) -> Any:
        """No dim: the largest value (ties share the gradient). With dim: (values, indices),
        the gradient going to the index returned, as PyTorch. max(other Tensor): maximum."""
        if isinstance(dim, Tensor):
            return self.maximum(dim)
        dim, keepdim = numpy_dim_names(dim, keepdim, np_names, "max")
        if dim is None:  # amax, but with PyTorch's gradient at NaN (see Amax)
            need_elements(self, "max", None)
            return reduce.Amax.apply(self, dims=None, keepdim=False, nan_ties=True)
        return _select(self, dim, keepdim, xp.argmax, "max")

    def min(self, dim: Any = None, keepdim: bool = False, **np_names: Any) -> Any:
        if isinstance(dim, Tensor):
            return self.minimum(dim)
        dim, keepdim = numpy_dim_names(dim, keepdim, np_names, "min")
        if dim is None:
            need_elements(self, "min", None)
            return reduce.Amin.apply(self, dims=None, keepdim=False, nan_ties=True)
        return _select(self, dim, keepdim, xp.argmin, "min")

    def argmax(self, dim: int | None = None, keepdim: bool = False, **np_names: Any) -> Tensor:
        dim, keepdim = numpy_dim_names(dim, keepdim, np_names, "argmax")
        return _arg(self, dim, keepdim, xp.argmax, "argmax")

    def argmin(self, dim: int | None = None, keepdim: bool = False, **np_names: Any) -> Tensor:
        dim, keepdim = numpy_dim_names(dim, keepdim, np_names, "argmin")
        return _arg(self, dim, keepdim, xp.argmin, "argmin")

    def logsumexp(self, dim: Any = None, keepdim: bool = False, **np_names: Any) -> Tensor:
        dim, keepdim = numpy_dim_names(dim, keepdim, np_names, "logsumexp")
        dims = normalize_dims(dim, self, "logsumexp")
        return reduce.LogSumExp.apply(_floating(self), dims=dims, keepdim=keepdim)

    def softmax(self, dim: int = -1, **np_names: Any) -> Tensor:
        dim, _ = numpy_dim_names(dim, False, np_names, "softmax")
        dim = normalize_dim(dim, self.ndim, "softmax", self.shape)
        return reduce.Softmax.apply(_floating(self), dim=dim)

    def log_softmax(self, dim: int = -1, **np_names: Any) -> Tensor:
        dim, _ = numpy_dim_names(dim, False, np_names, "log_softmax")
        dim = normalize_dim(dim, self.ndim, "log_softmax", self.shape)
        return reduce.LogSoftmax.apply(_floating(self), dim=dim)

    def norm(self, p: float = 2, dim: Any = None, keepdim: bool = False) -> Tensor:
        """The vector p-norm over dim (all dims for None), as torch.norm: (sum |x|^p)^(1/p),
        with gradient 0 where the norm is 0 and, for 0 < p < 1, at each x = 0; for p = inf
        or -inf the largest or smallest |x| (ties share the gradient); for p = 0 the number
        of nonzero elements, a constant. Integer tensors are taken as float32."""
        self = _floating(self)
        if p == 2:
            return _root((self * self).sum(dim, keepdim=keepdim), 2)
        if p in (math.inf, -math.inf):
            a = self.abs()
            return a.amax(dim, keepdim) if p > 0 else a.amin(dim, keepdim)
        if p == 0:
            nonzero = (self._array != 0).sum(
                axis=normalize_dims(dim, self, "norm"), keepdims=keepdim
            )
            return Tensor._make(backend.array_like(nonzero, self._array, self.dtype))
        a = self.abs()
        zero = a._array == 0
        if 0 < p < 1 and zero.any():  # |x|^p has an infinite slope at 0: keep it out
            powered = where(zero, 0.0, where(zero, 1.0, a) ** p)
        else:
            powered = a**p
        return _root(powered.sum(dim, keepdim=keepdim), p)

    # -- shape -----------------------------------------------------------------------------

    def reshape(self, *shape: Any) -> Tensor:
        shape = shape_arg(shape)
        data = self._array
        try:  # NumPy infers -1 and checks the size: a view of contiguous data costs little
            ok = data.flags.c_contiguous and min(shape, default=0) >= -1  # NumPy takes -2 too
            new = data.reshape(shape).shape if ok else None
        except (ValueError, TypeError):
            new = None
        if new is None:
            new = infer_shape(shape, self.shape, "reshape")  # raises, naming both shapes
        return self if new == self.shape else movement.Reshape.apply(self, shape=new)

    def view(self, *shape: Any) -> Tensor:
        """reshape, as PyTorch's view of a contiguous tensor; ``view(dtype)``, which reads
        the bytes as another dtype, is refused."""
        if (
            len(shape) == 1
            and not isinstance(shape[0], (int, tuple, list))
            and not is_int(shape[0])
        ):
            raise TypeError(
                f"view: reading a tensor's bytes as another dtype (view({shape[0]})) is not "
                "supported; use .to(dtype) to convert the values"
            )
        return self.reshape(*shape)

    def t(self) -> Tensor:
        """The transpose of a 2-D tensor; a 0-D or 1-D tensor as it is."""
        if self.ndim > 2:
            raise ValueError(f"t: expects a tensor of at most 2 dims; got shape {self.shape}")
        return self if self.ndim < 2 else self.transpose(0, 1)

    def narrow(self, dim: int, start: Any, length: int) -> Tensor:
        """The slice start : start + length along dim (start may be negative)."""
        need_dims(self, 1, "narrow")
        d = normalize_dim(dim, self.ndim, "narrow", self.shape)
        n = self.shape[d]
        first = int(start) + n if int(start) < 0 else int(start)
        if not (0 <= first <= n and is_int(length) and 0 <= length <= n - first):
            raise IndexError(
                f"narrow: start {start} and length {length} are out of range for dim {d} of "
                f"size {n}; got shape {self.shape}"
            )
        start = first
        return self[(slice(None),) * d + (slice(start, start + length),)]

    def mm(self, mat2: Any) -> Tensor:
        """The product of two 2-D tensors, checked as PyTorch's (no broadcasting)."""
        other = as_tensor(mat2)
        if self.ndim != 2 or other.ndim != 2:
            raise ValueError(
                f"mm: expects two 2-D tensors (matrices); got shapes {self.shape} and {other.shape}"
            )
        if self.shape[1] != other.shape[0]:
            raise ValueError(
                f"mm: mat1 and mat2 shapes cannot be multiplied ({self.shape[0]}x"
                f"{self.shape[1]} and {other.shape[0]}x{other.shape[1]})"
            )
        return matmul(self, other)

    def mv(self, vec: Any) -> Tensor:
        """A 2-D tensor times a 1-D one, checked as PyTorch's (no broadcasting)."""
        other = as_tensor(vec)
        if self.ndim != 2 or other.ndim != 1 or self.shape[1] != other.shape[0]:
            raise ValueError(
                f"mv: expects a matrix (n, m) and a vector (m,); got shapes {self.shape} and "
                f"{other.shape}"
            )
        return matmul(self, other)

    def dot(self, other: Any) -> Tensor:
        """The inner product of two 1-D tensors of one size, as PyTorch's (no broadcasting)."""
        other = as_tensor(other)
        if self.ndim != 1 or other.ndim != 1 or self.shape != other.shape:
            raise ValueError(
                f"dot: expects two 1-D tensors of one size; got shapes {self.shape} and "
                f"{other.shape}"
            )
        return matmul(self, other)

    def bmm(self, mat2: Any) -> Tensor:
        """The product of two 3-D tensors batch by batch: (b, n, m) @ (b, m, p), checked as
        PyTorch's (one batch size, no broadcasting)."""
        other = as_tensor(mat2)
        if self.ndim != 3 or other.ndim != 3:
            raise ValueError(
                f"bmm: expects two 3-D tensors; got shapes {self.shape} and {other.shape}"
            )
        if self.shape[0] != other.shape[0] or self.shape[2] != other.shape[1]:
            raise ValueError(
                f"bmm: expected batch2 of shape ({self.shape[0]}, {self.shape[2]}, p) for batch1 "
                f"of shape {self.shape}; got {other.shape}"
            )
        return matmul(self, other)

    def view_as(self, other: Tensor) -> Tensor:
        return self.reshape(other.shape)

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor:
        if self.ndim == 0:
            return self.reshape(1)
        s = normalize_dim(start_dim, self.ndim, "flatten", self.shape)
        e = normalize_dim(end_dim, self.ndim, "flatten", self.shape)
        if s > e:
            raise ValueError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim}")
        # the merged size spelled out, not -1, which an empty tensor cannot resolve
        return self.reshape(*self.shape[:s], math.prod(self.shape[s : e + 1]), *self.shape[e + 1 :])

    def unflatten(self, dim: int, sizes: Any) -> Tensor:
        """Dim split into sizes (one of them may be -1): flatten's inverse, (N, 12) -> (N, 3, 4)."""
        d = normalize_dim(dim, self.ndim, "unflatten", self.shape)
        sizes = tuple(sizes)
        known = math.prod(n for n in sizes if n != -1)
        if sizes.count(-1) > 1 or (
            known != self.shape[d] if -1 not in sizes else known == 0 or self.shape[d] % known
        ):
            raise ValueError(
                f"unflatten: sizes {sizes} do not multiply to dim {dim}'s size {self.shape[d]}; "
                f"got shape {self.shape}"
            )
        return self.reshape(*self.shape[:d], *sizes, *self.shape[d + 1 :])

    def squeeze(self, dim: Any = None) -> Tensor:
        if dim is None:
            dims = [d for d, n in enumerate(self.shape) if n == 1]
        else:
            dims = list(normalize_dims(dim, self, "squeeze") or ())
        kept = tuple(n for d, n in enumerate(self.shape) if not (d in dims and n == 1))
        return self.reshape(kept)

    def unsqueeze(self, dim: int) -> Tensor:
        d = normalize_dim(dim, self.ndim + 1, "unsqueeze", self.shape)
        return self.reshape(self.shape[:d] + (1,) + self.shape[d:])  # a 1 inserted at d

    def transpose(self, dim0: int, dim1: int) -> Tensor:
        order = list(range(self.ndim))
        a = normalize_dim(dim0, self.ndim, "transpose", self.shape)
        b = normalize_dim(dim1, self.ndim, "transpose", self.shape)
        if a == b:  # also the only transpose a 0-d tensor has
            return self
        order[a], order[b] = order[b], order[a]
        return movement.Permute.apply(self, dims=tuple(order))  # dims already checked

    swapaxes = transpose

    def permute(self, *dims: Any) -> Tensor:
        dims = shape_arg(dims)
        norm = tuple(normalize_dim(d, self.ndim, "permute", self.shape) for d in dims)
        if sorted(norm) != list(range(self.ndim)):
            raise ValueError(
                f"permute: dims {tuple(dims)} are not a permutation of the {self.ndim} dims of a "
                f"tensor of shape {self.shape}"
            )
        return self if norm == tuple(range(self.ndim)) else movement.Permute.apply(self, dims=norm)

    def expand(self, *sizes: Any) -> Tensor:
        sizes = shape_arg(sizes)
        lead = len(sizes) - self.ndim
        if lead < 0:
            raise ValueError(
                f"expand: cannot expand shape {self.shape} to fewer dims {tuple(sizes)}"
            )
        shape = tuple(
            self.shape[i - lead] if n == -1 and i >= lead else n for i, n in enumerate(sizes)
        )
        return self.broadcast_to(shape)

    def broadcast_to(self, shape: Sequence[int]) -> Tensor:
        shape = tuple(shape)
        if shape == self.shape:
            return self
        if not broadcasts_to(self.shape, shape):
            raise ValueError(f"expand: shape {self.shape} cannot be broadcast to {shape}")
        return movement.Expand.apply(self, shape=shape)

    def expand_as(self, other: Tensor) -> Tensor:
        return self.broadcast_to(other.shape)

    def split(self, split_size_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
        need_dims(self, 1, "split")
        d = normalize_dim(dim, self.ndim, "split", self.shape)
        n = self.shape[d]
        if isinstance(split_size_or_sections, int):
            step = split_size_or_sections
            if step <= 0:
                raise ValueError(f"split: split_size must be positive; got {step}")
            sizes = [min(step, n - i) for i in range(0, n, step)] or [0]
        else:
            sizes = list(split_size_or_sections)
            if sum(sizes) != n:
                raise ValueError(
                    f"split: sections {sizes} sum to {sum(sizes)}, not to dim {dim}'s size {n}; "
                    f"got shape {self.shape}"
                )
        lead = (slice(None),) * d
        out, start = [], 0
        for s in sizes:
            out.append(self[lead + (slice(start, start + s),)])
            start += s
        return tuple(out)

    def unbind(self, dim: int = 0) -> tuple[Tensor, ...]:
        """The slices along dim, that dim removed: x.unbind(1) of (B, T, C) is T of (B, C)."""
        need_dims(self, 1, "unbind")
        d = normalize_dim(dim, self.ndim, "unbind", self.shape)
        return tuple(t.squeeze(d) for t in self.split(1, d)) if self.shape[d] else ()

    def chunk(self, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
        if chunks <= 0:
            raise ValueError(f"chunk: chunks must be positive; got {chunks}")
        need_dims(self, 1, "chunk")
        n = self.shape[normalize_dim(dim, self.ndim, "chunk", self.shape)]
        return self.split(max(1, -(-n // chunks)), dim)

    def __getitem__(self, index: Any) -> Tensor:
        return movement.GetItem.apply(self, index=index_arg(index, self._array))

    def gather(self, dim: int, index: Any) -> Tensor:
        d = normalize_dim(dim, self.ndim, "gather", self.shape)
        idx = backend.array_like(index._array if isinstance(index, Tensor) else index, self._array)
        if idx.dtype.kind not in "iu" or idx.ndim != self.ndim:
            raise ValueError(
                f"gather: index must be an integer tensor with {self.ndim} dims; got dtype "
                f"{idx.dtype} and shape {idx.shape}"
            )
        return movement.Gather.apply(self, idx, dim=d)

    take_along_dim = gather

    def diag(self, diagonal: int = 0) -> Tensor:
        """A 1-D tensor's values on a square matrix's diagonal (zeros elsewhere), or a 2-D
        tensor's diagonal as 1-D; diagonal > 0 is above the main one, < 0 below."""
        k = diagonal
        if self.ndim == 2:
            rows, cols = self.shape
            r = xp.arange(max(0, min(rows + min(k, 0), cols - max(k, 0))), like=self._array)
            return self[r - min(k, 0), r + max(k, 0)]
        if self.ndim != 1:
            raise ValueError(f"diag: expected a 1-D or 2-D tensor; got shape {self.shape}")
        n = self.shape[0] + abs(k)
        r, c = backend.module_of(self._array).indices((n, n))  # each (n, n): rows, columns
        on = c - r == k
        i = xp.where(k >= 0, r, c).clip(0, max(self.shape[0] - 1, 0))  # (n, n): x's index
        return where(on, self[i] if self.shape[0] else self.new_zeros((n, n)), 0)

    def tril(self, diagonal: int = 0) -> Tensor:
        """The lower triangle of the last two dims (column <= row + diagonal), zeros above."""
        need_dims(self, 2, "tril")
        rows, cols = self.shape[-2:]
        keep = xp.tri(rows, cols, k=diagonal, dtype=bool, like=self._array)  # (rows, cols)
        return where(keep, self, 0)

    def triu(self, diagonal: int = 0) -> Tensor:
        """The upper triangle of the last two dims (column >= row + diagonal), zeros below."""
        need_dims(self, 2, "triu")
        rows, cols = self.shape[-2:]
        keep = ~xp.tri(rows, cols, k=diagonal - 1, dtype=bool, like=self._array)
        return where(keep, self, 0)

    def cumsum(self, dim: int) -> Tensor:
        return reduce.Cumsum.apply(self, dim=normalize_dim(dim, self.ndim, "cumsum", self.shape))

    def sort(
        self, dim: int = -1, descending: bool = False, *, stable: bool = False
    ) -> ValuesIndices:
        """(values, indices) along dim, NaN counted largest, as PyTorch. The sort is always
        stable (equal values keep their order), which ``stable=False`` allows too."""
        return _top(self, None, dim, descending, "sort")

    def argsort(self, dim: int = -1, descending: bool = False, *, stable: bool = False) -> Tensor:
        return self.sort(dim, descending, stable=stable).indices.detach()

    def topk(
        self, k: int, dim: int = -1, largest: bool = True, sorted: bool = True
    ) -> ValuesIndices:
        """The k largest (or smallest) values along dim and their indices, in order (which
        ``sorted=False`` allows too); the gradient goes to the places they came from."""
        return _top(self, k, dim, largest, "topk")

    def cumprod(self, dim: int) -> Tensor:
        d = normalize_dim(dim, self.ndim, "cumprod", self.shape)
        return reduce.Cumprod.apply(self, dim=d)

    def flip(self, *dims: Any) -> Tensor:
        """The order of the values reversed along each of dims: one index of reversed slices,
        then a copy, since PyTorch's flip shares no memory with its input (a write into the
        result must not reach it)."""
        flipped = normalize_dims(shape_arg(dims), self, "flip") if dims and shape_arg(dims) else ()
        if not flipped:  # no dims (or a 0-d tensor): nothing to reverse
            return self.clone()
        index = tuple(
            slice(None, None, -1) if d in flipped else slice(None) for d in range(self.ndim)
        )
        return movement.GetItem.apply(self, index=index).clone()

    def roll(self, shifts: Any, dims: Any = None) -> Tensor:
        """Values shifted along dims, those pushed off the end coming back at the start; with
        no dims, along the flattened tensor. One index of source positions per dim."""
        if dims is None:
            if isinstance(shifts, (tuple, list)) and len(shifts) != 1:
                raise ValueError(
                    f"roll: without dims, shifts must be one int; got {tuple(shifts)} for shape "
                    f"{self.shape}"
                )
            return self.flatten().roll(shifts, 0).reshape(self.shape)
        shift_list = list(shifts) if isinstance(shifts, (tuple, list)) else [shifts]
        dim_list = list(dims) if isinstance(dims, (tuple, list)) else [dims]
        if len(shift_list) != len(dim_list):
            raise ValueError(
                f"roll: shifts {tuple(shift_list)} and dims {tuple(dim_list)} differ in length; "
                f"got shape {self.shape}"
            )
        out = self
        for s, dim in zip(shift_list, dim_list, strict=True):
            d = normalize_dim(dim, self.ndim, "roll", self.shape)
            n = self.shape[d] if self.ndim else 1
            if n and int(s) % n:
                source = (xp.arange(n, like=out._array) - int(s)) % n  # each value's source
                out = out[(slice(None),) * d + (source,)]
        return out if out is not self else self.clone()

    def tile(self, dims: Any) -> Tensor:
        """repeat, with leading 1s added to dims when it is shorter than the shape."""
        dims = (dims,) if isinstance(dims, int) else tuple(dims)
        return self.repeat(*(1,) * (self.ndim - len(dims)), *dims)

    def repeat(self, *sizes: Any) -> Tensor:
        """The tensor tiled sizes[i] times along each dim (leading 1s added to its shape when
        sizes is longer): a view with interleaved 1s, expanded, then merged."""
        sizes = shape_arg(sizes)
        if len(sizes) < self.ndim or not all(is_int(r) and r >= 0 for r in sizes):
            raise ValueError(
                f"repeat: sizes must be non-negative ints, at least one per dim; got sizes "
                f"{tuple(sizes)} for shape {self.shape}"
            )
        shape = (1,) * (len(sizes) - self.ndim) + self.shape
        ones = tuple(v for n in shape for v in (1, n))  # (1, n0, 1, n1, ...)
        tiled = tuple(v for r, n in zip(sizes, shape, strict=True) for v in (r, n))  # (r0, n0, ..)
        merged = tuple(r * n for r, n in zip(sizes, shape, strict=True))  # (r0 * n0, ...)
        return self.reshape(ones).expand(tiled).reshape(merged)

    def repeat_interleave(
        self, repeats: Any, dim: int | None = None, *, output_size: int | None = None
    ) -> Tensor:
        """Each value repeated along dim (over the flattened tensor for None): repeats is one
        count for all or one count per value. An index_select of the repeated positions."""
        if dim is None:
            return self.flatten().repeat_interleave(repeats, 0, output_size=output_size)
        d = normalize_dim(dim, self.ndim, "repeat_interleave", self.shape)
        counts = repeats._array if isinstance(repeats, Tensor) else repeats
        counts = backend.array_like(counts, self._array)
        n = self.shape[d] if self.ndim else 1
        if counts.dtype.kind not in "iu" or counts.ndim > 1 or counts.size not in (1, n):
            raise ValueError(
                f"repeat_interleave: repeats must be an int or an integer tensor of 1 or {n} "
                f"values (the size of dim {d}); got dtype {counts.dtype} and shape {counts.shape} "
                f"for shape {self.shape}"
            )
        if (counts < 0).any():
            raise ValueError(f"repeat_interleave: repeats must not be negative; got {counts}")
        source = xp.repeat(xp.arange(n, like=counts), counts.reshape(-1))  # each one's source
        if output_size is not None and output_size != len(source):
            raise ValueError(
                f"repeat_interleave: output_size {output_size} differs from the {len(source)} "
                f"values the repeats make; got shape {self.shape}"
            )
        return self.reshape(self.shape or (1,))[(slice(None),) * d + (source,)]

    def index_select(self, dim: int, index: Any) -> Tensor:
        d = normalize_dim(dim, self.ndim, "index_select", self.shape)
        idx = index_vector(index, d, self, "index_select")
        return self[(slice(None),) * d + (idx,)]

    def scatter(
        self, dim: int, index: Any, src: Any = None, *, value: Any = None, reduce: Any = None
    ) -> Tensor:
        """self with src (a tensor, or a number: ``value``) written at index along dim; for
        dim 1, out[i][index[i][j]] = src[i][j]. A repeated position keeps the last write.
        ``reduce`` 'add' or 'multiply' adds or multiplies src in instead (each repeat too)."""
        src = value if src is None else src
        src = src if isinstance(src, (Tensor, int, float)) else as_tensor(src)
        d, idx = _scatter_index(self, dim, index, src, "scatter")
        if reduce is not None:
            return _scatter_with_reduce(self, d, idx, src, reduce)
        return movement.Scatter.apply(self, src, index=idx, dim=d)

    def scatter_add(self, dim: int, index: Any, src: Any) -> Tensor:
        """self with src added at index along dim (repeated positions add up)."""
        src = as_tensor(src)
        d, idx = _scatter_index(self, dim, index, src, "scatter_add")
        if src.shape != idx.shape:  # only the corner of src as large as index is added
            src = src[tuple(slice(n) for n in idx.shape)]
        where = movement.along_dim(idx, d, self.ndim)
        return self + movement.IndexAdd.apply(src, shape=self.shape, index=where)

    def scatter_reduce(
        self, dim: int, index: Any, src: Any, reduce: str, *, include_self: bool = True
    ) -> Tensor:
        """self with src reduced into the places index names along dim: reduce 'sum',
        'prod', 'mean', 'amax' or 'amin', over self's value too unless include_self is False."""
        if reduce not in ("sum", "prod", "mean", "amax", "amin"):
            raise ValueError(
                "scatter_reduce: reduce must be 'sum', 'prod', 'mean', 'amax' or 'amin'; got "
                f"{reduce!r}"
            )
        src = as_tensor(src)
        d, idx = _scatter_index(self, dim, index, src, "scatter_reduce")
        options = dict(index=idx, dim=d, reduce=reduce, include_self=bool(include_self))
        return movement.ScatterReduce.apply(self, src, **options)

    def index_fill(self, dim: int, index: Any, value: Any) -> Tensor:
        """self with the slices index names along dim set to value (a number or 0-d tensor,
        which gets their gradient)."""
        d = normalize_dim(dim, self.ndim, "index_fill", self.shape)
        mask = xp.zeros(self.shape[d] if self.ndim else 1, dtype=bool, like=self._array)
        mask[index_vector(index, d, self, "index_fill")] = True
        return where(mask.reshape((-1,) + (1,) * (self.ndim - d - 1)), value, self)

    def index_add(self, dim: int, index: Any, source: Any, *, alpha: float = 1) -> Tensor:
        """self with alpha * source added at the positions index names along dim: source's
        slice k goes to index[k] (repeated positions add up)."""
        d = normalize_dim(dim, self.ndim, "index_add", self.shape)
        idx = index_vector(index, d, self, "index_add")
        source = as_tensor(source)
        expected = self.shape[:d] + (len(idx),) + self.shape[d + 1 :]  # self's, dim d len(idx)
        if source.shape != expected:
            raise ValueError(
                f"index_add: source must have shape {expected} (self's, with dim {d} as long as "
                f"index); got self {self.shape}, index {idx.shape} and source {source.shape}"
            )
        _same_dtype(self, source, "index_add", "source")
        added = movement.IndexAdd.apply(source, shape=self.shape, index=(slice(None),) * d + (idx,))
        return self + (added if alpha == 1 else added * alpha)

    def masked_select(self, mask: Any) -> Tensor:
        """The values where mask (broadcast with self) is True, as a 1-D tensor."""
        m = backend.array_like(mask._array if isinstance(mask, Tensor) else mask, self._array)
        if m.dtype != backend.bool_:
            raise TypeError(f"masked_select: mask must be a bool tensor; got dtype {m.dtype}")
        try:
            shape = xp.broadcast_shapes(self.shape, m.shape)
        except ValueError:
            raise ValueError(
                f"masked_select: shapes {self.shape} and {m.shape} cannot be broadcast together"
            ) from None
        return self.broadcast_to(shape)[xp.broadcast_to(m, shape)]

    def matmul(self, other: Any) -> Tensor:
        return matmul(self, other)

    def addmm(self, mat1: Any, mat2: Any, *, beta: float = 1, alpha: float = 1) -> Tensor:
        """beta * self + alpha * (mat1 @ mat2), mat1 and mat2 2-D; beta = 0 ignores self (NaN
        and inf included), as PyTorch."""
        return _add_product(self, mat1, mat2, beta, alpha, "addmm")

    def baddbmm(self, batch1: Any, batch2: Any, *, beta: float = 1, alpha: float = 1) -> Tensor:
        """beta * self + alpha * (batch1 @ batch2), batch1 and batch2 3-D with one batch size."""
        return _add_product(self, batch1, batch2, beta, alpha, "baddbmm")

    # Last in the class: these names shadow the builtins for the rest of its body.

    def float(self) -> Tensor:
        return self.to(backend.float32)

    def double(self) -> Tensor:
        return self.to(backend.float64)

    def long(self) -> Tensor:
        return self.to(backend.int64)

    def int(self) -> Tensor:
        return self.to(backend.int32)

    def bool(self) -> Tensor:
        return self.to(backend.bool_)


def _float_formatter(data: Any) -> Any:
    """The formatter of a float array's repr, one format for all entries: whole numbers as
    ``3.``, else ``3.1416``, or ``3.1416e+00`` when the magnitudes span over 1000x, pass 1e8
    or (for fractions) go below 1e-4. ``data`` is on the host."""
    hp = backend.host
    if data.dtype.kind != "f" or data.size == 0:
        return None
    if data.size > 1000:  # summarised: only 3 entries at each end of each dim are shown
        for ax, n in enumerate(data.shape):
            if n > 6:
                data = hp.take(data, [0, 1, 2, n - 3, n - 2, n - 1], axis=ax)
    finite = data[hp.isfinite(data)]
    mags = hp.abs(finite[finite != 0]).astype(backend.float64)
    whole = bool(hp.all(finite == hp.round(finite)))
    sci = mags.size > 0 and bool(
        mags.max() / mags.min() > 1000 or mags.max() > 1e8 or not whole and mags.min() < 1e-4
    )
    fmt = "{:.4e}" if sci else "{:.0f}." if whole else "{:.4f}"

    def one(v: Any) -> str:
        return fmt.format(v) if hp.isfinite(v) else str(v)

    width = max(len(one(v)) for v in data.flat)
    return {"float_kind": lambda v: one(v).rjust(width)}


# dtype names -> PyTorch's legacy type names, for Tensor.type()
_TYPE_NAMES = {
    "float32": "FloatTensor",
    "float64": "DoubleTensor",
    "float16": "HalfTensor",
    "bfloat16": "BFloat16Tensor",
    "int64": "LongTensor",
    "int32": "IntTensor",
    "int16": "ShortTensor",
    "int8": "CharTensor",
    "uint8": "ByteTensor",
    "bool": "BoolTensor",
}


class Histogram(NamedTuple):
    """What histogram returns, as PyTorch: the counts and the bins' edges."""

    hist: Tensor
    bin_edges: Tensor


class ValuesIndices(NamedTuple):
    """What max/min with a dim, sort and topk return, as PyTorch: values and indices."""

    values: Tensor
    indices: Tensor


# ---------------------------------------------------------------------------------------
# Shared argument helpers: one place for dims, shapes, indexes and operand coercion.


def as_tensor(x: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """x as a Tensor: a Tensor as it is (cast to dtype, moved to device, if given), anything
    else copied into a new one (on device, or the default device)."""
    if device is not None:
        device = resolve_device(device, "as_tensor")
    if isinstance(x, Tensor):
        if device is not None and device != x.device:
            x = x.to(device)
        return x if dtype is None else x.to(dtype)
    if device is None or device == backend.default_device:
        return Tensor(x, dtype=dtype)
    return Tensor._make(backend.to_array(x, dtype, device))


def _pair(a: Any, b: Any, op: str) -> tuple[Any, Any]:
    """Coerce the operands of a binary op: Tensors pass; Python numbers stay plain (the
    tensor's dtype wins, so float32 * 2.5 stays float32); lists become Tensors; an integer
    operand meeting a float one takes its dtype (see _promote)."""
    # The most common case first: a float tensor and a Python number, as in x * 0.5 + 1.
    if type(a) is Tensor and type(b) in (float, int) and a._array.dtype.kind == "f":
        return a, b
    ta, tb = isinstance(a, Tensor), isinstance(b, Tensor)
    if ta and tb:
        return (a, b) if _same_kind(a._array, b._array) else _promote(a, b)
    t, o = (a, b) if ta else (b, a)
    if isinstance(o, xp.generic):
        o = o.item()
    if isinstance(o, Number):
        if isinstance(o, float) and t._array.dtype.kind != "f":
            t = t.to(backend.float32)
    elif isinstance(o, backend.ndarray):
        if type(o) is not type(t._array):  # an array of another device
            where = "NumPy array" if type(o) is _HOST_ARRAY else f"{backend.device_of(o)} array"
            raise TypeError(
                f"{op}: a {where} meets a tensor on {t.device}; got shape {o.shape}; make "
                f"it a tensor on {t.device} first (cr.tensor(x, device=...) moves it)"
            )
        if not _same_kind(o, t._array):
            t, o = _promote(t, Tensor._make(o))
    elif isinstance(o, (list, tuple)):
        t, o = _promote(t, Tensor._make(backend.to_array(o, None, t.device)))
    else:
        raise TypeError(f"{op}: unsupported operand of type {type(o).__name__} with a Tensor")
    return (t, o) if ta else (o, t)


def _same_kind(a: Any, b: Any) -> bool:
    """True where NumPy's result dtype is already PyTorch's: equal kinds, or a bool mask
    with a float (float32 * bool stays float32), the common case in backward formulas."""
    ka, kb = a.dtype.kind, b.dtype.kind
    return ka == kb or (ka == "b" and kb == "f") or (ka == "f" and kb == "b")


def _promote(a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    """PyTorch's rule where NumPy's differs: an integer or bool tensor meeting a float one
    takes the float's dtype (NumPy makes int64 * float32 float64, PyTorch float32)."""
    if a._array.dtype.kind == "f" and b._array.dtype.kind != "f":
        return a, b.to(a.dtype)
    if b._array.dtype.kind == "f" and a._array.dtype.kind != "f":
        return a.to(b.dtype), b
    return a, b


def _holds_as_is(src: Any, arr: Any) -> bool:
    """Whether writing ``src`` into ``arr`` needs no cast or check of _write's: an array of
    arr's dtype that broadcasts to it, or a number of a kind arr's dtype holds (a float into
    floats, an int into ints or floats, a bool into anything)."""
    if isinstance(src, backend.ndarray):
        return (
            src.dtype == arr.dtype
            and type(src) is type(arr)
            and broadcasts_to(src.shape, arr.shape)
        )
    kind = arr.dtype.kind
    if isinstance(src, bool):
        return True
    if isinstance(src, int):
        return kind in "iuf"
    return isinstance(src, float) and kind == "f"


def _false(t: Tensor) -> Any:
    """An all-False mask of t's shape: where(_false(t), t, v) is v made t's shape, with a
    zero gradient for t (how fill_, copy_ and the random fills record)."""
    return xp.zeros(t.shape, dtype=bool, like=t._array)


def _floating(t: Tensor) -> Tensor:
    """The input of a floating op (division, exp, sigmoid, softmax, ...): an integer or bool
    tensor becomes the default float, float32, as in PyTorch (NumPy would compute in int64,
    or make float64)."""
    return t if t._array.dtype.kind == "f" else t.to(backend.default_float)


def _floor_divide(a: Any, b: Any) -> Tensor:
    """a // b rounded toward minus infinity, as PyTorch's floor_divide. It has no gradient,
    as in PyTorch: on a tensor that requires grad it is recorded, and backward through it
    is PyTorch's error (not a gradient silently left out)."""
    x, y = _pair(a, b, "floor_divide")
    xa, ya = (t._array if isinstance(t, Tensor) else t for t in (x, y))
    if xp.result_type(xa, ya).kind in "biu" and not xp.all(ya):
        raise RuntimeError("floor_divide: integer division by zero")
    return elementwise.FloorDivide.apply(x, y)


def _remainder(a: Any, b: Any) -> Tensor:
    """a % b with the divisor's sign, as Python's and PyTorch's remainder (C's fmod takes the
    dividend's). Gradient: 1 for a, -floor(a / b) for b."""
    a, b = _pair(a, b, "remainder")
    x, y = (t._array if isinstance(t, Tensor) else t for t in (a, b))
    if xp.result_type(x, y).kind in "biu" and not xp.all(y):
        raise RuntimeError("remainder: integer division by zero")
    with backend.errstate(divide="ignore", invalid="ignore"):  # float x % 0 is NaN
        value = xp.fmod(x, y)  # PyTorch's rule: fmod, then + b where the signs differ
        value = xp.where((value != 0) & ((value < 0) != (y < 0)), value + y, value)
        quotient = xp.floor_divide(x, y)
    if not any(isinstance(t, Tensor) and t.requires_grad for t in (a, b)):
        return Tensor._make(value)
    # the gradient is that of a - floor(a / b) * b with the floor a constant; the value is
    # PyTorch's (the composite may differ in the last bit): a constant makes it so
    out = a - Tensor._make(backend.array_of(quotient)) * b
    return out + Tensor._make(value - out._array)


def _compare(fn: Any, a: Tensor, b: Any) -> Tensor:
    b = b._array if isinstance(b, Tensor) else b
    try:
        return Tensor._make(fn(a._array, b))
    except ValueError:
        raise ValueError(
            f"{fn.__name__}: shapes {a.shape} and {xp.shape(b)} cannot be broadcast together"
        ) from None
    except TypeError:
        raise TypeError(
            f"{fn.__name__}: cannot compare a tensor of dtype {a.dtype} with {type(b).__name__}"
        ) from None


def _variance(t: Tensor, dim: Any, correction: int, keepdim: bool, names: dict, op: str) -> Tensor:
    """var's arguments, PyTorch's or NumPy's names (and ``unbiased``), checked for ``op``."""
    if "unbiased" in names:
        correction = int(names.pop("unbiased"))
    dim, keepdim = numpy_dim_names(dim, keepdim, names, op)
    need_float(t, op)
    dims = normalize_dims(dim, t, op)
    return reduce.Var.apply(t, dims=dims, correction=correction, keepdim=keepdim, op=op)


def _root(s: Tensor, p: float) -> Tensor:
    """s ** (1/p) for s >= 0 (std, norm), with gradient 0 where s is 0, as PyTorch, instead of
    inf * 0 = NaN; the inner where keeps the branch not taken finite."""
    zero = s._array == 0
    if not zero.any():
        return s.sqrt() if p == 2 else s ** (1.0 / p)
    safe = where(zero, 1.0, s)
    return where(zero, 0.0, safe.sqrt() if p == 2 else safe ** (1.0 / p))


def _arg(t: Tensor, dim: Any, keepdim: bool, fn: Any, op: str) -> Tensor:
    if dim is None:
        need_elements(t, op)
        out = fn(t._array)
        shape = (1,) * t.ndim if keepdim else ()
        return Tensor._make(backend.array_like(out, t._array, backend.int64).reshape(shape))
    d = normalize_dim(dim, t.ndim, op, t.shape)
    need_elements(t, op, (d,) if t.ndim else None)
    return Tensor._make(fn(t._array, axis=d, keepdims=keepdim).astype(backend.int64, copy=False))


def _scatter_index(t: Tensor, dim: int, index: Any, src: Any, op: str) -> tuple[int, Any]:
    """scatter's and scatter_add's dim and index checked: an integer index with self's dims,
    no larger than src in any dim nor than self but in dim, each value in range."""
    need_dims(t, 1, op)
    d = normalize_dim(dim, t.ndim, op, t.shape)
    idx = backend.array_like(index._array if isinstance(index, Tensor) else index, t._array)
    src_shape = src.shape if isinstance(src, Tensor) else None
    fits = idx.dtype.kind in "iu" and idx.ndim == t.ndim
    for k, m in enumerate(idx.shape if fits else ()):
        fits = fits and (k == d or m <= t.shape[k]) and (src_shape is None or m <= src_shape[k])
    if not fits:
        src_text = "" if src_shape is None else f" and src {src_shape}"
        raise ValueError(
            f"{op}: index must be an integer tensor with self's dims, no larger than src in any "
            f"dim nor than self in a dim but {d}; got index of dtype {idx.dtype} and shape "
            f"{idx.shape}, self {t.shape}{src_text}"
        )
    bad = idx[(idx < 0) | (idx >= t.shape[d])]
    if bad.size:
        raise IndexError(
            f"{op}: index {int(bad[0])} is out of range for dim {d} of size {t.shape[d]}; got "
            f"shape {t.shape}"
        )
    if isinstance(src, Tensor):
        _same_dtype(t, src, op, "src")
    return d, idx.astype(backend.int64, copy=False)


def _scatter_with_reduce(t: Tensor, d: int, idx: Any, src: Any, reduce: Any) -> Tensor:
    """scatter's reduce: 'add' and 'multiply' are scatter_reduce's 'sum' and 'prod' with
    self included; a number is reduced in at every place of index."""
    names = {"add": "sum", "multiply": "prod"}
    if reduce not in names:
        raise ValueError(f"scatter: reduce must be 'add' or 'multiply'; got {reduce!r}")
    if not isinstance(src, Tensor):
        src = Tensor._make(xp.full(idx.shape, src, dtype=t.dtype, like=t._array))
    options = dict(index=idx, dim=d, reduce=names[reduce], include_self=True)
    return movement.ScatterReduce.apply(t, src, **options)


def _same_dtype(t: Tensor, other: Tensor, op: str, name: str) -> None:
    if other.dtype != t.dtype:
        raise TypeError(f"{op}: {name} must have self's dtype; got {t.dtype} and {other.dtype}")


def _add_product(t: Tensor, a: Any, b: Any, beta: float, alpha: float, op: str) -> Tensor:
    """addmm's and baddbmm's beta * t + alpha * (a @ b), the shapes checked for op."""
    a, b = as_tensor(a), as_tensor(b)
    ndim = 2 if op == "addmm" else 3
    shapes = f"got shapes {a.shape} and {b.shape}"
    if a.ndim != ndim or b.ndim != ndim:
        raise ValueError(f"{op}: needs two {ndim}-D tensors; {shapes}")
    if a.shape[-1] != b.shape[-2] or a.shape[:-2] != b.shape[:-2]:
        raise ValueError(f"{op}: batch sizes or inner dimensions differ; {shapes}")
    shape = a.shape[:-1] + b.shape[-1:]  # (..., m, n)
    pairs = zip(t.shape[::-1], shape[::-1], strict=False)  # from the last dim, as broadcasting
    if t.ndim > ndim or any(n not in (1, m) for n, m in pairs):
        raise ValueError(
            f"{op}: input of shape {t.shape} cannot be broadcast to the product's shape {shape}; "
            f"{shapes}"
        )
    product = linalg.MatMul.apply(a, b)
    if alpha != 1:
        product = product * alpha
    if beta == 0:  # t is not read: 0 * NaN would be NaN; its gradient is 0
        return product + where(xp.zeros(t.shape, dtype=bool, like=t._array), t, 0)
    return product + (t if beta == 1 else t * beta)


def _top(t: Tensor, k: int | None, dim: int, largest: bool, op: str) -> ValuesIndices:
    """The first k (all for None) values along dim, sorted (largest first if ``largest``), and
    their indices; the values are gathered, so their gradient goes where they came from."""
    d = normalize_dim(dim, t.ndim, op, t.shape)
    x = t if t.ndim else t.reshape(1)  # a 0-d tensor is one value along dim 0
    n = x.shape[d]
    k = n if k is None else k
    if not is_int(k) or not 0 <= k <= n:
        raise ValueError(
            f"{op}: k {k!r} is out of range for dim {dim} of size {n}; got shape {t.shape}"
        )
    order = _sort_order(x._array, d, largest)[(slice(None),) * d + (slice(0, k),)]
    values, indices = movement.Gather.apply(x, order, dim=d), Tensor._make(order)
    if not t.ndim and k == 1:
        values, indices = values.reshape(()), indices.reshape(())
    return ValuesIndices(values, indices)


def _sort_order(a: Any, dim: int, descending: bool) -> Any:
    """The positions that sort a along dim (int64), stable, NaN last when ascending and first
    when descending, as PyTorch: descending is the ascending sort of a reversed, reversed
    back, so equal values keep their order there too."""
    if not descending:
        return xp.argsort(a, axis=dim, kind="stable").astype(backend.int64, copy=False)
    backwards = xp.argsort(xp.flip(a, axis=dim), axis=dim, kind="stable")  # positions in flip(a)
    return (a.shape[dim] - 1 - xp.flip(backwards, axis=dim)).astype(backend.int64, copy=False)


def _select(t: Tensor, dim: int, keepdim: bool, fn: Any, op: str) -> ValuesIndices:
    d = normalize_dim(dim, t.ndim, op, t.shape)
    need_elements(t, op, (d,) if t.ndim else None)
    if t.ndim == 0:  # its only dim is itself: the value, at index 0
        values = movement.Reshape.apply(t, shape=())  # a new tensor (reshape would return t)
        return ValuesIndices(values, Tensor._make(xp.zeros((), backend.int64, like=t._array)))
    idx = fn(t._array, axis=d, keepdims=True)  # (.., 1, ..)
    values = movement.Gather.apply(t, idx, dim=d)
    indices = Tensor._make(idx.astype(backend.int64, copy=False))
    if not keepdim:
        values, indices = values.squeeze(d), indices.squeeze(d)
    return ValuesIndices(values, indices)


# ---------------------------------------------------------------------------------------
# Functions of several tensors.


def matmul(a: Any, b: Any) -> Tensor:
    a, b = _promote(as_tensor(a), as_tensor(b))
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(
            f"matmul: both operands need at least 1 dim; got shapes {a.shape} and {b.shape}"
        )
    k_a = a.shape[-1]
    k_b = b.shape[0] if b.ndim == 1 else b.shape[-2]
    if k_a != k_b:
        raise ValueError(f"matmul: inner dimensions differ; got shapes {a.shape} and {b.shape}")
    if a.ndim > 2 or b.ndim > 2:
        try:
            xp.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        except ValueError:
            raise ValueError(
                f"matmul: batch dimensions cannot be broadcast; got shapes {a.shape} and {b.shape}"
            ) from None
    return linalg.MatMul.apply(a, b)


def where(condition: Any, input: Any, other: Any) -> Tensor:
    cond = condition._array if isinstance(condition, Tensor) else condition
    if not isinstance(cond, backend.ndarray):
        cond = xp.asarray(cond)
    if cond.dtype != backend.bool_:
        raise TypeError(f"where: condition must be a bool tensor; got dtype {cond.dtype}")
    x = input if isinstance(input, (Tensor, float, int)) else as_tensor(input)
    y = other if isinstance(other, (Tensor, float, int)) else as_tensor(other)
    if not isinstance(x, Tensor) and not isinstance(y, Tensor):
        x = as_tensor(x)  # two numbers: the dtype of a tensor made of them (float32 for floats)
    return elementwise.Where.apply(cond, *_pair(x, y, "where"))


register_tensor_type(Tensor)
