"""Sparse COO tensors, as torch.sparse: SparseTensor (a Tensor holding an indices tensor and a
values tensor, no array of its own), cr.sparse_coo_tensor, and what graph networks use: the
product with a dense matrix, sums, coalescing, softmax over the given entries. The products
run on scipy.sparse (the ``sparse`` extra), imported by the first sparse call; every other
tensor op refuses a sparse tensor by name."""

from __future__ import annotations

import inspect
import math
import sys
from typing import Any

from . import array
from .arguments import is_int, normalize_dim, normalize_dims_of, size_arg
from .autograd.primitive import Function
from .constants import layout, sparse_coo, strided
from .ops import movement
from .tensor import Tensor, as_tensor

__all__ = ["SparseTensor", "layout", "matmul", "mm", "softmax", "sparse_coo", "sparse_coo_tensor"]
__all__ += ["log_softmax", "spmm", "strided", "sum"]

xp = array.host  # sparse tensors live on the host, where scipy computes
_SIZE = type(as_tensor(xp.zeros(0)).shape)  # a dense tensor's shape type, for S.shape


def _scipy_sparse() -> Any:
    """scipy.sparse, imported on first use, or an error that names the extra to install."""
    try:
        import scipy.sparse
    except ImportError as err:
        raise ImportError(
            "chainrule.sparse: sparse tensors need scipy; install it with pip install "
            '"chainrule[sparse]"'
        ) from err
    return scipy.sparse


# -- the primitives ---------------------------------------------------------------------------


class SparseCooTensorWithDimsAndTensors(Function):
    """out = values, as the values of a sparse tensor (the node that makes a sparse tensor of
    values that require grad a non-leaf, as PyTorch's); grad_values = grad."""

    rule = "grad_values = grad"
    saves_inputs = False
    view = True  # the values themselves, one version counter

    def forward(self, values):
        return values

    def backward(self, grad, out):
        return (grad,)


class ScatterAdd(Function):
    """out[j] = sum of values[k] over the k with index[k] = j, out of n rows (a coalesce sums
    duplicates so; to_dense so places entries); grad_values = grad[index]."""

    rule = "grad_values = grad[index]"
    saves_inputs = False

    def forward(self, values, *, index, n):
        self.index = index
        out = xp.zeros((n, *values.shape[1:]), dtype=values.dtype)
        xp.add.at(out, index, values)
        return out

    def backward(self, grad, out):
        return (grad[as_tensor(self.index)],)


class SparseMM(Function):
    """out = S @ dense, S the (m, k) matrix with entries values at (rows, cols), duplicates
    summed; dense (k, n) or (k,). grad_values[e] = grad[rows[e]] . dense[cols[e]],
    grad_dense = S.T @ grad (the product again, on the transposed matrix)."""

    rule = "grad_values = (grad[rows] * dense[cols]).sum(-1), grad_dense = S.T @ grad"
    saves_inputs = "others"

    def forward(self, values, dense, *, rows, cols, shape):
        self.rows, self.cols, self.shape = rows, cols, shape
        matrix = _scipy_sparse().csr_matrix((values, (rows, cols)), shape=shape)
        return xp.asarray(matrix @ dense, dtype=dense.dtype)

    def backward(self, grad, out):
        values, dense = self.inputs
        need_values, need_dense = self.needs_input_grad
        rows, cols = as_tensor(self.rows), as_tensor(self.cols)
        g_values = g_dense = None
        if need_values:
            products = grad[rows] * dense[cols]  # (nnz, n) or (nnz,)
            g_values = products.sum(-1) if dense.ndim == 2 else products
        if need_dense:
            m, k = self.shape
            g_dense = SparseMM.apply(values, grad, rows=self.cols, cols=self.rows, shape=(k, m))
        return g_values, g_dense


# -- the tensor -------------------------------------------------------------------------------


class SparseTensor(Tensor):
    """A sparse COO tensor: ``_indices()`` (sparse_dim, nnz) int64 and ``_values()`` (nnz,
    *dense sizes), of ``size``; entries at one index repeated are summed (``coalesce()`` does
    it once). It has no array: its gradient flows through its values, and ``S.grad`` of a
    sparse leaf is sparse, on S's entries (what ``torch.sparse.mm`` gives; ``torch.mm`` gives
    a dense one). Tensor methods it has no rule for raise, naming themselves."""

    __slots__ = ()

    _ind: Tensor
    _val: Tensor
    _size: tuple[int, ...]
    _coalesced: bool
    _leaf: bool  # its values are its own leaf (requires_grad=True) or need no gradient

    @staticmethod
    def _of(
        indices: Tensor, values: Tensor, size: tuple[int, ...], coalesced: bool, leaf: bool = False
    ) -> Any:
        """Wrap checked indices and values (no copy). Values in a graph get a node of the
        sparse tensor's own, unless it is a ``leaf`` (its values are its own leaf)."""
        s = object.__new__(SparseTensor)
        s._ind, s._size, s._coalesced = indices, size, coalesced
        s._leaf = leaf or not values.requires_grad
        s._val = values if s._leaf else SparseCooTensorWithDimsAndTensors.apply(values)
        return s

    def _with(self, values: Tensor, indices: Any = None, size: Any = None, coalesced: Any = None):
        """A sparse tensor of these values, the rest as self's unless given."""
        return SparseTensor._of(
            self._ind if indices is None else indices,
            values,
            self._size if size is None else tuple(size),
            self._coalesced if coalesced is None else coalesced,
        )

    @property
    def _array(self) -> Any:
        """A dense op reached for the array a sparse tensor has not: say which op, and why."""
        raise NotImplementedError(_refusal(_caller(sys._getframe(1)), self))

    # -- what a sparse tensor is ------------------------------------------------------------

    @property
    def shape(self) -> Any:
        return _SIZE(self._size)

    @property
    def dtype(self) -> Any:
        return self._val.dtype

    @property
    def ndim(self) -> int:
        return len(self._size)

    @property
    def device(self) -> Any:
        return array.CPU

    @property
    def is_cuda(self) -> bool:
        return False

    @property
    def is_cpu(self) -> bool:
        return True

    @property
    def layout(self) -> layout:
        return sparse_coo

    @property
    def is_sparse(self) -> bool:
        return True

    def dim(self) -> int:
        return len(self._size)

    def size(self, dim: int | None = None) -> Any:
        if dim is None:
            return self.shape
        return self._size[normalize_dim(dim, self.ndim, "size", self._size)]

    def numel(self) -> int:
        return math.prod(self._size)

    def __len__(self) -> int:
        if not self._size:
            raise TypeError("len: a 0-d tensor has no len()")
        return self._size[0]

    def sparse_dim(self) -> int:
        return int(self._ind.shape[0])

    def dense_dim(self) -> int:
        return self._val.ndim - 1

    def _nnz(self) -> int:
        return int(self._ind.shape[1])

    def _indices(self) -> Tensor:
        return self._ind

    def _values(self) -> Tensor:
        return self._val

    def indices(self) -> Tensor:
        if not self._coalesced:
            raise RuntimeError(
                "indices: Cannot get indices on an uncoalesced tensor, please call "
                ".coalesce() first"
            )
        return self._ind

    def values(self) -> Tensor:
        if not self._coalesced:
            raise RuntimeError(
                "values: Cannot get values on an uncoalesced tensor, please call .coalesce() first"
            )
        return self._val

    def is_coalesced(self) -> bool:
        return self._coalesced

    def is_floating_point(self) -> bool:
        return self._val.is_floating_point()

    # -- the graph, through the values --------------------------------------------------------

    @property
    def requires_grad(self) -> bool:
        return self._val.requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self.requires_grad_(value)

    @property
    def grad_fn(self) -> Any:  # type: ignore[override]  # read only: the values' node
        return None if self._leaf else self._val.grad_fn

    @property
    def grad(self) -> Any:
        """A leaf's gradient, sparse on its entries (each once, coalesced), or None."""
        g = self._val.grad if self._leaf else None
        if g is None:
            return None
        linear, unique, first, _ = _positions(self)
        indices = as_tensor(xp.stack(xp.unravel_index(unique, self._size[: self.sparse_dim()])))
        return SparseTensor._of(indices, g[as_tensor(first)], self._size, True)

    @grad.setter
    def grad(self, value: Any) -> None:
        if value is not None:
            raise RuntimeError("grad: a sparse tensor's gradient can only be set to None")
        self._val.grad = None

    def requires_grad_(self, requires_grad: bool = True) -> SparseTensor:
        if not self._leaf:
            raise RuntimeError(
                "requires_grad_: you can only change requires_grad flags of leaf variables"
            )
        self._val.requires_grad_(requires_grad)
        return self

    def detach(self) -> SparseTensor:
        return SparseTensor._of(self._ind, self._val.detach(), self._size, self._coalesced)

    def clone(self, *, memory_format: Any = None) -> SparseTensor:
        return self._with(self._val.clone())

    def to(self, *args: Any, **kwargs: Any) -> SparseTensor:
        """A dtype (the values'); sparse tensors stay on the CPU."""
        values = self._val.to(*args, **kwargs)
        if not values.is_cpu:
            raise ValueError(f"to: sparse tensors live on the CPU only; got {values.device}")
        return self._with(values)

    def double(self, memory_format: Any = None) -> SparseTensor:
        return self._with(self._val.double())

    def float(self, memory_format: Any = None) -> SparseTensor:
        return self._with(self._val.float())

    # -- conversion ---------------------------------------------------------------------------

    def to_dense(self, dtype: Any = None) -> Tensor:
        """The dense tensor, duplicates summed (differentiable in the values)."""
        sparse_size = self._size[: self.sparse_dim()]
        n = math.prod(sparse_size)
        linear = xp.ravel_multi_index(self._ind.numpy(), sparse_size)
        flat = ScatterAdd.apply(self._val, index=linear.astype(xp.int64), n=n)
        out = flat.reshape(self._size)  # (prod(sparse sizes), *dense) -> size
        return out if dtype is None else out.to(dtype)

    def to_sparse(self, *args: Any, **kwargs: Any) -> SparseTensor:
        return self

    def coalesce(self) -> SparseTensor:
        """Indices sorted and unique, the values of each index summed (itself if it is so)."""
        if self._coalesced:
            return self
        _, unique, _, inverse = _positions(self)
        indices = as_tensor(xp.stack(xp.unravel_index(unique, self._size[: self.sparse_dim()])))
        values = ScatterAdd.apply(self._val, index=inverse, n=unique.size)
        return SparseTensor._of(indices.reshape(self.sparse_dim(), -1), values, self._size, True)

    # -- ops ----------------------------------------------------------------------------------

    def t(self) -> SparseTensor:
        if self.ndim > 2 or self.dense_dim():
            raise RuntimeError(
                f"t: expects a tensor with <= 2 sparse and 0 dense dimensions; got size "
                f"{self._size} with {self.sparse_dim()} sparse and {self.dense_dim()} dense"
            )
        if self.ndim < 2:
            return self
        return self._with(self._val, self._ind.flip(0), self._size[::-1], False)

    @property
    def T(self) -> SparseTensor:  # noqa: N802 (PyTorch's name)
        return self.t()

    def transpose(self, dim0: int, dim1: int) -> SparseTensor:
        dims = {normalize_dim(d, self.ndim, "transpose", self._size) for d in (dim0, dim1)}
        if len(dims) == 1:  # a dim with itself: the same tensor, as PyTorch's
            return self
        if dims != {0, 1}:
            raise RuntimeError(
                f"transpose: only dims 0 and 1 of a sparse matrix swap; got dims {dim0} and "
                f"{dim1} of size {self._size}"
            )
        return self.t()

    def mm(self, mat2: Any) -> Tensor:
        return mm(self, mat2)

    def matmul(self, other: Any) -> Tensor:
        return mm(self, other)

    def __matmul__(self, other: Any) -> Tensor:
        return mm(self, other)

    def __rmatmul__(self, other: Any) -> Tensor:
        return _dense_mm(as_tensor(other), self)

    def sum(  # type: ignore[override]  # torch.sparse.sum's arguments, and keepdim=False
        self, dim: Any = None, keepdim: bool = False, *, dtype: Any = None
    ) -> Tensor:
        if keepdim:
            raise NotImplementedError(
                f"sum: keepdim=True is not supported on a sparse tensor; got size {self._size}; "
                "call .to_dense().sum(dim, keepdim=True)"
            )
        return sum(self, dim, dtype=dtype)

    def __add__(self, other: Any) -> Any:
        if isinstance(other, SparseTensor):
            _same_size("add", self, other)
            indices = as_tensor(xp.concatenate([self._ind.numpy(), other._ind.numpy()], axis=1))
            dtype = array.promote_all([self.dtype, other.dtype], "add")
            values = movement.Cat.apply(self._val.to(dtype), other._val.to(dtype), dim=0)
            return SparseTensor._of(indices, values, self._size, False)
        if isinstance(other, Tensor):
            raise RuntimeError(
                "add(sparse, dense) is not supported. Use add(dense, sparse) instead; got "
                f"sizes {self._size} and {tuple(other.shape)}"
            )
        return NotImplemented  # a number: as PyTorch, sparse + number is not defined

    def __radd__(self, other: Any) -> Any:
        if isinstance(other, Tensor):  # dense + sparse: dense
            _same_size("add", other, self)
            return other + self.to_dense()
        return NotImplemented

    def __sub__(self, other: Any) -> Any:
        if isinstance(other, SparseTensor):
            return self + (-other)
        return self.__add__(other)  # the same refusals as +

    def __rsub__(self, other: Any) -> Any:
        if isinstance(other, Tensor):
            _same_size("sub", other, self)
            return other - self.to_dense()
        return NotImplemented

    def __neg__(self) -> SparseTensor:
        return self._with(-self._val)

    def __mul__(self, other: Any) -> Any:
        if isinstance(other, Tensor) and other.ndim > 0:
            raise NotImplementedError(
                f"mul: of a sparse tensor by a tensor is not supported; got sizes {self._size} "
                f"and {tuple(other.shape)}; multiply by a number or a 0-d tensor"
            )
        if isinstance(other, (int, float, Tensor)):
            return self._with(self._val * other)
        return NotImplemented

    def __rmul__(self, other: Any) -> Any:
        return self.__mul__(other)

    def __truediv__(self, other: Any) -> Any:
        if (
            isinstance(other, Tensor)
            and other.ndim > 0
            or not isinstance(other, (int, float, Tensor))
        ):
            raise NotImplementedError(
                f"div: of a sparse tensor by anything but a number or a 0-d tensor is not "
                f"supported; got size {self._size} and {getattr(other, 'shape', type(other))}"
            )
        return self._with(self._val / other)

    def __repr__(self) -> str:
        """PyTorch's: the indices, the values (without their dtype), size, nnz, dtype where
        it is not the default float, int64 or bool, layout, and the graph."""
        values = repr(self._val.detach())
        values = values.split(", dtype=")[0].removesuffix(")") + ")"
        indices = repr(self._ind).replace("\n", "\n" + " " * len("tensor(indices="))
        values = values.replace("\n", "\n" + " " * len("       values="))
        extras = [f"size={self._size}", f"nnz={self._nnz()}"]
        if self.dtype not in (array.get_default_dtype(), array.int64, array.bool_):
            extras.append(f"dtype={self.dtype}")
        extras.append("layout=torch.sparse_coo")
        tail = ", ".join(extras)
        if self.grad_fn is not None:
            tail += f",\n       grad_fn=<{type(self.grad_fn).__name__}>"
        elif self.requires_grad:
            tail += ",\n       requires_grad=True"
        return f"tensor(indices={indices},\n       values={values},\n       {tail})"


def _caller(frame: Any) -> str:
    """The op that reached for the array: the primitive being applied (Function.apply's
    ``cls``), else the op a shared helper was told it serves (its ``op`` argument), else the
    first public function up the stack (a helper's caller)."""
    while frame is not None:
        cls = frame.f_locals.get("cls")
        if isinstance(cls, type) and issubclass(cls, Function):
            return cls.__name__.lower()
        op = frame.f_locals.get("op")
        if isinstance(op, str) and op.isidentifier():
            return op
        name = frame.f_code.co_name
        if not name.startswith(("_", "<")):
            return name
        frame = frame.f_back
    return "an op"


def _refusal(op: str, s: Any) -> str:
    return (
        f"{op}: not supported on a sparse tensor (layout=torch.sparse_coo, size {s._size}); "
        "call .to_dense() first"
    )


def _refuse(name: str, is_property: bool) -> Any:
    def refuse(self: Any, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(_refusal(name, self))

    refuse.__name__ = name
    return property(refuse) if is_property else refuse


# Every Tensor method and operator that a sparse tensor does not define refuses by name: the
# inherited ones would read an array it has not.
_KEPT = {"__init__", "__hash__", "__dict__", "__doc__", "__module__", "__slots__", "__weakref__"}
_KEPT |= {"__annotations__", "__array_ufunc__", "is_leaf", "get_device", "__class__"}
for _name in dir(Tensor):
    if (
        _name in SparseTensor.__dict__
        or _name in _KEPT
        or _name.startswith("_")
        and not (
            _name.startswith("__") and _name in {n for c in Tensor.__mro__[:-1] for n in vars(c)}
        )
    ):
        continue
    _static = inspect.getattr_static(Tensor, _name)
    if callable(_static) or isinstance(_static, property):
        _op = _name[2:-2] if _name.startswith("__") else _name  # __getitem__: getitem
        setattr(SparseTensor, _name, _refuse(_op, isinstance(_static, property)))


def _positions(s: SparseTensor) -> tuple[Any, Any, Any, Any]:
    """Each entry's linear index into the sparse dims, the sorted unique ones, the first entry
    of each, and each entry's place among the unique ones."""
    sparse_size = s.shape[: s.sparse_dim()]
    linear = xp.ravel_multi_index(s._ind.numpy(), sparse_size).astype(xp.int64)
    unique, first, inverse = xp.unique(linear, return_index=True, return_inverse=True)
    return linear, unique, first, inverse.reshape(-1)


def _same_size(op: str, a: Any, b: Any) -> None:
    if tuple(a.shape) != tuple(b.shape):
        raise ValueError(
            f"{op}: the sizes of the two tensors differ; got {tuple(a.shape)} and {tuple(b.shape)}"
        )


# -- the functions ----------------------------------------------------------------------------


def sparse_coo_tensor(
    indices: Any,
    values: Any,
    size: Any = None,
    *,
    dtype: Any = None,
    device: Any = None,
    pin_memory: bool = False,
    requires_grad: bool = False,
    check_invariants: bool | None = None,
    is_coalesced: bool | None = None,
) -> SparseTensor:
    """A sparse COO tensor of ``values`` (nnz, *dense sizes) at ``indices`` (sparse_dim, nnz),
    of ``size`` (by default the least that holds the indices). Values that require grad
    stay in the graph; ``requires_grad=True`` makes a sparse leaf. The indices are checked
    (PyTorch checks them only with check_invariants)."""
    _scipy_sparse()  # the first sparse call: say now, not at the first product, what is missing
    if device is not None and array.device(device).type != "cpu":
        raise ValueError(
            f"sparse_coo_tensor: sparse tensors live on the CPU only; got device {device!r}"
        )
    ind = indices.detach().numpy() if isinstance(indices, Tensor) else xp.asarray(indices)
    if ind.ndim != 2:
        raise ValueError(
            f"sparse_coo_tensor: indices must be 2-D (sparse_dim, nnz); got shape {ind.shape}"
        )
    if ind.size and ind.dtype.kind not in "iu":
        raise TypeError(
            "sparse_coo_tensor: indices must be integers; got dtype "
            f"{array.dtype_object(ind.dtype)}"
        )
    ind = ind.astype(xp.int64)
    vals = as_tensor(values, dtype=dtype)
    if vals.ndim == 0:
        raise ValueError("sparse_coo_tensor: values must have at least 1 dim (nnz, ...); got 0-d")
    sparse_dim, nnz = ind.shape
    if nnz != vals.shape[0]:
        raise ValueError(
            "sparse_coo_tensor: indices and values must have same nnz, but got nnz from "
            f"indices: {nnz}, nnz from values: {vals.shape[0]}"
        )
    if size is None:
        top = ind.max(axis=1) + 1 if nnz else xp.zeros(sparse_dim, dtype=xp.int64)
        size = (*(int(n) for n in top), *vals.shape[1:])
    if not isinstance(size, (tuple, list)):
        raise TypeError(
            f"sparse_coo_tensor: size must be a tuple of ints; got {type(size).__name__}"
        )
    size = size_arg((size,), "sparse_coo_tensor")
    if len(size) != sparse_dim + vals.ndim - 1:
        raise ValueError(
            "sparse_coo_tensor: 'len(size) == sparse_dim + dense_dim' is not satisfied: "
            f"len(size) = {len(size)}, sparse_dim = {sparse_dim}, dense_dim = {vals.ndim - 1}"
        )
    if tuple(vals.shape[1:]) != size[sparse_dim:]:
        raise ValueError(
            f"sparse_coo_tensor: values of shape {tuple(vals.shape)} do not fit size {size}: their "
            f"sizes after the first must be {size[sparse_dim:]}"
        )
    bad = [d for d in range(sparse_dim) if nnz and (ind[d].min() < 0 or ind[d].max() >= size[d])]
    if bad:
        d = bad[0]
        raise ValueError(
            f"sparse_coo_tensor: indices of dim {d} must lie in [0, {size[d]}); got "
            f"[{int(ind[d].min())}, {int(ind[d].max())}] for size {size}"
        )
    if requires_grad:
        vals = vals.detach().requires_grad_()
    coalesced = nnz <= 1 if is_coalesced is None else bool(is_coalesced)
    return SparseTensor._of(as_tensor(ind), vals, size, coalesced, leaf=requires_grad)


def _sparse_matrix(op: str, s: Any, other: Any, batched: bool = False) -> Tensor:
    """The dense operand of a product with the sparse matrix ``s``, checked: 1-D or 2-D, or
    of any rank where it is ``batched`` (a dense operand on the left)."""
    if not isinstance(s, SparseTensor) or s.sparse_dim() != 2 or s.dense_dim():
        raise ValueError(
            f"{op}: expects a sparse matrix (2 sparse dims, 0 dense) first; got "
            f"{_described(s)} and {_described(other)}"
        )
    if isinstance(other, SparseTensor):
        raise NotImplementedError(
            f"{op}: the product of two sparse tensors is not supported; got sizes {tuple(s.shape)} "
            f"and {tuple(other.shape)}; make one of them dense (.to_dense())"
        )
    d = as_tensor(other)
    if d.ndim == 0 or d.ndim > 2 and not batched:
        raise ValueError(f"{op}: expects a 1-D or 2-D dense operand; got shape {tuple(d.shape)}")
    if d.dtype != s.dtype:
        raise TypeError(
            f"{op}: expects the sparse and the dense operand of one dtype; got {s.dtype} and "
            f"{d.dtype}"
        )
    return d


def _described(t: Any) -> str:
    if isinstance(t, SparseTensor):
        return f"a sparse tensor of size {t._size}"
    return f"a dense tensor of shape {tuple(as_tensor(t).shape)}"


def mm(mat1: Any, mat2: Any) -> Tensor:
    """sparse (m, k) @ dense (k, n) (or (k,)) -> dense, on scipy's CSR product; gradients
    flow to the dense matrix and to the sparse one's values."""
    d = _sparse_matrix("mm", mat1, mat2)
    m, k = mat1.shape
    if d.shape[0] != k:
        raise ValueError(
            f"mm: the sparse matrix's columns and the dense one's rows differ; got sizes "
            f"{tuple(mat1.shape)} and {tuple(d.shape)}"
        )
    rows, cols = mat1._ind.numpy()
    return SparseMM.apply(mat1._val, d, rows=rows, cols=cols, shape=(m, k))


def spmm(input: Any, mat2: Any) -> Tensor:
    """PyTorch's ``torch.spmm``: ``mm`` of a sparse matrix and a dense one."""
    return mm(input, mat2)


def matmul(input: Any, other: Any) -> Tensor:
    """``input @ other`` where one of them is sparse (what cr.matmul calls then)."""
    if isinstance(input, SparseTensor):
        return mm(input, other)
    return _dense_mm(as_tensor(input), other)


def _dense_mm(d: Tensor, s: SparseTensor) -> Tensor:
    """dense (..., n, m) (or (m,)) @ sparse (m, k) -> dense, as (s.T @ d.T).T, a batch
    folded into the rows."""
    _sparse_matrix("matmul", s, d, batched=True)
    m, k = s.shape
    if d.shape[-1] != m:
        raise ValueError(
            f"matmul: the dense matrix's columns and the sparse one's rows differ; got sizes "
            f"{tuple(d.shape)} and {s._size}"
        )
    rows, cols = s._ind.numpy()
    if d.ndim == 1:
        return SparseMM.apply(s._val, d, rows=cols, cols=rows, shape=(k, m))  # (k,)
    flat = d.reshape(-1, m)  # (..., n, m) -> (rows, m)
    out = SparseMM.apply(s._val, flat.mT, rows=cols, cols=rows, shape=(k, m))  # (k, rows)
    return out.mT.reshape(*d.shape[:-1], k)  # (..., n, k)


def sum(input: SparseTensor, dim: Any = None, dtype: Any = None) -> Tensor:  # noqa: A001
    """PyTorch's ``torch.sparse.sum``: every entry (a 0-d dense tensor) for dim None; else
    over ``dim`` (an int or a tuple), sparse (coalesced) while sparse dims remain, dense
    when none does."""
    if not isinstance(input, SparseTensor):
        raise TypeError(f"sparse.sum: expects a sparse tensor; got {_described(input)}")
    values = input._val if dtype is None else input._val.to(dtype)
    if dim is None:
        return values.sum()
    dims = normalize_dims_of(dim, input._size, "sparse.sum")
    if dims is None:  # dim=(): PyTorch's sparse sum over no dim is the tensor as it is
        return input._with(values)
    n_sparse = input.sparse_dim()
    dense_dims = tuple(d - n_sparse + 1 for d in dims if d >= n_sparse)
    if dense_dims:
        values = values.sum(dim=dense_dims)  # (nnz, *dense sizes kept)
    kept = [d for d in range(n_sparse) if d not in dims]
    if not kept:
        return values.sum(0)
    size = [n for d, n in enumerate(input.shape) if d not in dims]
    indices = as_tensor(input._ind.numpy()[kept])
    return SparseTensor._of(indices, values, tuple(size), False).coalesce()


def softmax(input: SparseTensor, dim: int, *, dtype: Any = None) -> SparseTensor:
    """PyTorch's ``torch.sparse.softmax``: softmax along ``dim`` over the given entries only
    (the others count as -inf), coalesced; the same entries out."""
    s, shifted, where, inverse, n = _along("softmax", input, dim, dtype)
    e = shifted.exp()
    return s._with(e / ScatterAdd.apply(e, index=inverse, n=n)[where])


def log_softmax(input: SparseTensor, dim: int, *, dtype: Any = None) -> SparseTensor:
    """PyTorch's ``torch.sparse.log_softmax``: log of ``softmax``, as x - max - log sum exp."""
    s, shifted, where, inverse, n = _along("log_softmax", input, dim, dtype)
    total = ScatterAdd.apply(shifted.exp(), index=inverse, n=n)
    return s._with(shifted - total.log()[where])


def _along(op: str, input: Any, dim: int, dtype: Any) -> tuple:
    """For a softmax along ``dim``: the coalesced tensor, its values less their group's max
    (a group: the entries that share every other index), each entry's group (as a Tensor
    and an array) and the number of groups."""
    if not isinstance(input, SparseTensor) or input.dense_dim():
        raise ValueError(
            f"sparse.{op}: expects a sparse tensor of 0 dense dims; got {_described(input)}"
        )
    dim = normalize_dim(dim, input.ndim, f"sparse.{op}", input._size)
    s = input.coalesce()
    x = s._val if dtype is None else s._val.to(dtype)
    others = [d for d in range(s.ndim) if d != dim]
    ind = s._ind.numpy()
    key = xp.ravel_multi_index(ind[others], [s.shape[d] for d in others]) if others else ind[0] * 0
    groups, inverse = xp.unique(key, return_inverse=True)
    inverse = inverse.reshape(-1)
    top = xp.full(groups.size, -xp.inf, dtype=x.dtype)
    xp.maximum.at(top, inverse, x.detach().numpy())  # each group's max, for exp's range
    where = as_tensor(inverse)
    return s, x - as_tensor(top)[where], where, inverse, groups.size


# -- the dense tensor's side: to_sparse, to_dense, is_sparse, layout --------------------------
# (Set on the Tensor class here, where the sparse tensor is made, so that the Tensor's own
# files know nothing of sparse tensors.)


def _to_sparse(self: Tensor, sparse_dim: int | None = None) -> SparseTensor:
    """The nonzero entries (along the first ``sparse_dim`` dims, all by default), coalesced;
    differentiable in self."""
    _scipy_sparse()
    sd = self.ndim if sparse_dim is None else sparse_dim
    if not is_int(sd):
        raise TypeError(f"to_sparse: sparse_dim must be an int; got {type(sd).__name__}")
    if not 0 < sd <= self.ndim:
        raise ValueError(
            f"to_sparse: sparse_dim must lie in [1, {self.ndim}]; got {sparse_dim} for shape "
            f"{tuple(self.shape)}"
        )
    arr = self.detach().numpy()
    nonzero = arr != 0
    if sd < self.ndim:
        nonzero = nonzero.reshape(*arr.shape[:sd], -1).any(-1)  # (*sparse sizes)
    where = xp.nonzero(nonzero)
    values = self[tuple(as_tensor(i) for i in where)]  # (nnz, *dense sizes)
    return SparseTensor._of(as_tensor(xp.stack(where).astype(xp.int64)), values, self.shape, True)


Tensor.to_sparse = _to_sparse  # type: ignore[attr-defined]
