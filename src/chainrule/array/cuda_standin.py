"""A strict stand-in for a GPU array module: NumPy underneath, CuPy's rules on top, so that a
machine without a GPU can show that chainrule never reaches host memory unawares.

With ``CHAINRULE_ARRAY_BACKEND=strict`` set before chainrule is imported, this module's
:data:`module` is the backend's accelerator: a CUDA tensor (``device="cuda"``) holds an
:class:`ndarray` of it, beside CPU tensors holding NumPy's. Where CuPy differs from NumPy,
this module does as CuPy does:

- no implicit conversion to NumPy: ``numpy.asarray(a)`` (``__array__``) raises TypeError;
  the host is reached with ``a.get()`` or ``asnumpy(a)``, explicitly;
- NumPy arrays are refused as operands of its operators, ufuncs and functions (and in
  indexing and item assignment); ``asarray``/``array`` of one is the explicit upload, a copy;
- results are its own arrays, 0-d arrays for full reductions and single elements (where
  NumPy gives a NumPy scalar);
- ``ndarray`` is its own type with a ``device`` of its own.

It leaves the rest to NumPy: numbers and dtypes are NumPy's, so answers equal NumPy's.
Names CuPy lacks are missing here too, with a message naming the backend's helper:
``errstate`` (CuPy never warns; array.errstate is NumPy's under NumPy and this module).
Ufunc methods (``add.at``, ``reduce``, ``reduceat``, ``accumulate``, ``outer``) work as
NumPy's; CuPy's ufuncs have them in its recent releases (older ones had
``cupyx.scatter_add`` for ``add.at``).
"""

from __future__ import annotations

import types
import weakref
from typing import Any

import numpy as np

# One wrapper per NumPy array while the wrapper lives: the engine compares arrays by
# identity (``a.base is b``, sets of ids), which must hold for the wrappers too. The wrapper
# holds its array, so an id in this table is never reused while its entry is there.
_wrappers: weakref.WeakValueDictionary[int, ndarray] = weakref.WeakValueDictionary()

_HOST_MESSAGE = (
    "strict array: implicit conversion to a NumPy array is not allowed (as with CuPy); "
    "use .get() or asnumpy(a) to copy it to the host explicitly"
)


class Device:
    """The stand-in device every strict array lives on (CuPy's ``cupy.cuda.Device(0)``)."""

    id = 0

    def __repr__(self) -> str:
        return "<strict device 0>"


DEVICE = Device()


def _refuse(x: Any) -> None:
    raise TypeError(
        f"strict array: a numpy.ndarray of shape {x.shape} given where a device array is "
        "expected (CuPy refuses them too); move it with xp.asarray(x) explicitly"
    )


def wrap(x: Any) -> Any:
    """NumPy's result as the module's: arrays wrapped (once each), NumPy scalars as 0-d
    arrays, tuples (named ones too) and lists of them item by item; anything else as it is."""
    t = type(x)
    if t is np.ndarray:
        w = _wrappers.get(id(x))
        if w is None:
            w = object.__new__(ndarray)
            w._a = x
            _wrappers[id(x)] = w
        return w
    if isinstance(x, np.generic):
        return wrap(np.asarray(x))
    if t is tuple or t is list:
        return t(wrap(v) for v in x)
    if isinstance(x, tuple) and hasattr(x, "_fields"):  # a named result: linalg.svd's
        return t(*(wrap(v) for v in x))
    return x


def unwrap(x: Any) -> Any:
    """An argument as NumPy takes it: the module's arrays unwrapped (in tuples, lists and
    slices too); a NumPy array refused."""
    t = type(x)
    if t is ndarray:
        return x._a
    if t is np.ndarray:
        _refuse(x)
    if t is tuple or t is list:
        return t(unwrap(v) for v in x)
    if t is slice:
        return slice(unwrap(x.start), unwrap(x.stop), unwrap(x.step))
    if t is dict:
        return {k: unwrap(v) for k, v in x.items()}
    return x


def _call(fn: Any, args: Any, kwargs: dict[str, Any]) -> Any:
    return wrap(fn(*unwrap(args), **unwrap(kwargs)))


def asnumpy(a: Any) -> Any:
    """A copy on the host (CuPy's ``cupy.asnumpy``): a NumPy array of the same values."""
    if type(a) is ndarray:
        return a._a.copy(order="K")  # the layout kept, as NumPy's copy of it would
    return np.asarray(a)


def asarray(a: Any, dtype: Any = None, order: Any = None) -> ndarray:
    """The explicit way in: the module's array of ``a`` (the same array if it already is one
    of the dtype asked); a NumPy array is copied, as an upload to a device would be."""
    if type(a) is ndarray:
        return a if dtype is None or a.dtype == dtype else a.astype(dtype)
    if type(a) is np.ndarray:
        return wrap(np.array(a, dtype=dtype, order=order or "K", copy=True))
    return wrap(np.asarray(unwrap(a), dtype=dtype, order=order))


def result(x: Any) -> ndarray:
    """An op's result as the module's array (a number becomes a 0-d one); a NumPy array is
    refused, as the host array it is."""
    if type(x) is np.ndarray:
        _refuse(x)
    return asarray(x)


def array(a: Any, dtype: Any = None, copy: bool = True, order: Any = "K", ndmin: int = 0) -> Any:
    """``numpy.array`` for the module's arrays; a NumPy array is copied in (uploaded)."""
    if type(a) is np.ndarray:
        return wrap(np.array(a, dtype=dtype, copy=True, order=order, ndmin=ndmin))
    return wrap(np.array(unwrap(a), dtype=dtype, copy=copy, order=order, ndmin=ndmin))


def ascontiguousarray(a: Any, dtype: Any = None) -> Any:
    if type(a) is np.ndarray:
        return wrap(np.array(a, dtype=dtype, order="C", copy=True))
    return wrap(np.ascontiguousarray(unwrap(a), dtype=dtype))


def _operand(x: Any) -> Any:
    """The other operand of an operator as NumPy takes it, or NotImplemented (a Tensor then
    answers with its reflected operator); NumPy arrays are refused."""
    t = type(x)
    if t is ndarray:
        return x._a
    if t is np.ndarray:
        _refuse(x)
    if t is int or t is float or t is bool or t is complex or isinstance(x, np.generic):
        return x
    return NotImplemented


def _binary(uf: Any, reflected: bool = False) -> Any:
    if reflected:

        def op(self: ndarray, other: Any) -> Any:
            o = _operand(other)
            return o if o is NotImplemented else wrap(uf(o, self._a))

    else:

        def op(self: ndarray, other: Any) -> Any:
            o = _operand(other)
            return o if o is NotImplemented else wrap(uf(self._a, o))

    return op


def _inplace(uf: Any) -> Any:
    def op(self: ndarray, other: Any) -> Any:
        o = _operand(other)
        if o is NotImplemented:
            return o
        uf(self._a, o, out=self._a)
        return self

    return op


def _method(name: str) -> Any:
    def method(self: ndarray, *args: Any, **kwargs: Any) -> Any:
        return _call(getattr(self._a, name), args, kwargs)

    method.__name__ = name
    return method


class ndarray:  # noqa: N801 (the array module's name for its array type, as cupy.ndarray)
    """An array on the stand-in device: a NumPy array inside, reached only through the
    module's functions, its operators and methods (results wrapped), or ``get()``."""

    __slots__ = ("_a", "__weakref__")
    _a: np.ndarray
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, shape: Any, dtype: Any = float) -> None:
        self._a = np.empty(shape, dtype)
        _wrappers[id(self._a)] = self

    # -- the host, explicitly ------------------------------------------------------------

    def get(self) -> np.ndarray:
        """A copy on the host (CuPy's ``ndarray.get``)."""
        return asnumpy(self)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise TypeError(_HOST_MESSAGE)

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        return _call(getattr(ufunc, method), inputs, kwargs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        return _call(func, args, kwargs)

    def __reduce__(self) -> Any:
        return (asarray, (self._a,))

    # -- attributes ----------------------------------------------------------------------
    # Those below give what __getattr__ would; spelled out because the engine reads them
    # on every op, and a property skips __getattr__'s lookup and wrapping.

    @property
    def device(self) -> Device:
        return DEVICE

    @property
    def shape(self) -> tuple[int, ...]:
        return self._a.shape

    @property
    def dtype(self) -> np.dtype:
        return self._a.dtype

    @property
    def ndim(self) -> int:
        return self._a.ndim

    @property
    def size(self) -> int:
        return self._a.size

    @property
    def itemsize(self) -> int:
        return self._a.itemsize

    @property
    def nbytes(self) -> int:
        return self._a.nbytes

    @property
    def strides(self) -> tuple[int, ...]:
        return self._a.strides

    @property
    def flags(self) -> Flags:
        return Flags(self._a.flags)

    @property
    def base(self) -> Any:
        return wrap(self._a.base)

    @property
    def T(self) -> ndarray:
        return wrap(self._a.T)

    @property
    def mT(self) -> ndarray:
        return wrap(self._a.mT)

    @property
    def real(self) -> ndarray:
        return wrap(self._a.real)

    @property
    def flat(self) -> Any:
        raise TypeError("strict array: flat iterates on the host; use .get().flat")

    def __getattr__(self, name: str) -> Any:
        # Protocols NumPy reads to convert an object (__array_interface__, ...) stay
        # missing: conversion must go through __array__, which refuses.
        if name.startswith("__"):
            raise AttributeError(name)
        value = getattr(self._a, name)
        if callable(value):
            return lambda *args, **kwargs: _call(value, args, kwargs)
        return wrap(value)

    # -- Python's protocols --------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._a)

    def __iter__(self) -> Any:
        for i in range(len(self._a)):
            yield wrap(self._a[i])

    def __getitem__(self, index: Any) -> Any:
        return wrap(self._a[unwrap(index)])

    def __setitem__(self, index: Any, value: Any) -> None:
        self._a[unwrap(index)] = unwrap(value)

    def __bool__(self) -> bool:
        return bool(self._a)

    def __float__(self) -> float:
        return float(self._a)

    def __int__(self) -> int:
        return int(self._a)

    def __index__(self) -> int:
        return self._a.__index__()

    def __complex__(self) -> complex:
        return complex(self._a)

    def __repr__(self) -> str:
        return repr(self._a).replace("array(", "strict_array(", 1)

    def __str__(self) -> str:
        return str(self._a)

    def __format__(self, spec: str) -> str:
        return format(self._a, spec)

    def __neg__(self) -> ndarray:
        return wrap(-self._a)

    def __pos__(self) -> ndarray:
        return wrap(+self._a)

    def __abs__(self) -> ndarray:
        return wrap(abs(self._a))

    def __invert__(self) -> ndarray:
        return wrap(~self._a)

    def __copy__(self) -> ndarray:
        return wrap(self._a.copy())

    def __deepcopy__(self, memo: Any) -> ndarray:
        return wrap(self._a.copy())


_OPERATORS = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "truediv": np.true_divide,
    "floordiv": np.floor_divide,
    "mod": np.remainder,
    "pow": np.power,
    "matmul": np.matmul,
    "and": np.bitwise_and,
    "or": np.bitwise_or,
    "xor": np.bitwise_xor,
    "lshift": np.left_shift,
    "rshift": np.right_shift,
}
for _name, _uf in _OPERATORS.items():
    setattr(ndarray, f"__{_name}__", _binary(_uf))
    setattr(ndarray, f"__r{_name}__", _binary(_uf, reflected=True))
    setattr(ndarray, f"__i{_name}__", _inplace(_uf))
for _name, _uf in {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
                   "gt": np.greater, "ge": np.greater_equal}.items():  # fmt: skip
    setattr(ndarray, f"__{_name}__", _binary(_uf))
for _name in (
    "astype reshape view copy fill sum mean max min prod all any argmax argmin cumsum "
    "transpose swapaxes squeeze ravel flatten take repeat clip nonzero dot var std round "
    "item tolist"
).split():
    setattr(ndarray, _name, _method(_name))


class Flags:
    """CuPy's flags: c_contiguous, f_contiguous and owndata, and no writeable flag (every
    CuPy array can be written; the backend's writeable() is the question to ask)."""

    __slots__ = ("_flags",)
    _NAMES = ("C_CONTIGUOUS", "F_CONTIGUOUS", "OWNDATA")

    def __init__(self, flags: Any) -> None:
        self._flags = flags

    @property
    def c_contiguous(self) -> bool:
        return bool(self._flags.c_contiguous)

    @property
    def f_contiguous(self) -> bool:
        return bool(self._flags.f_contiguous)

    @property
    def owndata(self) -> bool:
        return bool(self._flags.owndata)

    def __getitem__(self, name: str) -> bool:
        if name not in self._NAMES:
            raise KeyError(f"strict array: flags has only {', '.join(self._NAMES)}; got {name!r}")
        return bool(self._flags[name])

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(
            f"strict array: flags has no {name} (CuPy's has c_contiguous, f_contiguous and "
            "owndata); ask chainrule.array.writeable(a)"
        )


def writeable(a: ndarray) -> bool:
    """The backend's writeable() for this module: NumPy's flag underneath (False for
    broadcast views and arrays made read-only), so answers equal NumPy's."""
    return bool(a._a.flags.writeable)


def make_read_only(a: ndarray) -> None:
    a._a.flags.writeable = False


class _Ufunc:
    """A NumPy ufunc over the module's arrays: call, and its methods (``at``, ``reduce``,
    ``reduceat``, ``accumulate``, ``outer``), unwrap and wrap as the functions do."""

    def __init__(self, uf: np.ufunc) -> None:
        self._uf = uf
        self.__name__ = uf.__name__

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return _call(self._uf, args, kwargs)

    def at(self, *args: Any, **kwargs: Any) -> None:
        self._uf.at(*unwrap(args), **unwrap(kwargs))

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._uf, name)
        if callable(value):
            return lambda *args, **kwargs: _call(value, args, kwargs)
        return value

    def __repr__(self) -> str:
        return f"<strict ufunc {self.__name__!r}>"


class _Namespace(types.ModuleType):
    """NumPy's names (or a submodule's) over the module's arrays: functions unwrap their
    arguments and wrap their results, ufuncs likewise, submodules are namespaces of their
    own; types, dtypes and constants are NumPy's."""

    def __init__(self, name: str, inner: Any, own: dict[str, Any] | None = None) -> None:
        super().__init__(name)
        self._inner = inner
        self.__dict__.update(own or {})

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        if name in _MISSING:
            instead = _MISSING[name]
            raise AttributeError(f"strict array module: no {name} (CuPy has none); {instead}")
        value = getattr(self._inner, name)
        if isinstance(value, np.ufunc):
            value = _Ufunc(value)
        elif isinstance(value, types.ModuleType):
            value = _Namespace(f"{self.__name__}.{name}", value)
        elif callable(value) and not isinstance(value, type):
            value = _function(value)
        setattr(self, name, value)  # found once, then an attribute
        return value


class _IndexTrick:
    """``ogrid``, ``mgrid``, ``r_``...: indexed, they make the module's arrays."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __getitem__(self, key: Any) -> Any:
        return wrap(self._inner[unwrap(key)])


# NumPy's names that CuPy lacks, and what to use instead.
_MISSING = {"errstate": "use chainrule.array.errstate"}


def _function(fn: Any) -> Any:
    def function(*args: Any, **kwargs: Any) -> Any:
        return _call(fn, args, kwargs)

    function.__name__ = getattr(fn, "__name__", "function")
    function.__doc__ = getattr(fn, "__doc__", None)
    return function


# The backend's accelerator (the CUDA device's array module) under CHAINRULE_ARRAY_BACKEND=strict.
module = _Namespace(
    "chainrule.array.cuda_standin.module",
    np,
    {
        "ndarray": ndarray,
        "asarray": asarray,
        "array": array,
        "ascontiguousarray": ascontiguousarray,
        "asnumpy": asnumpy,
        **{name: _IndexTrick(getattr(np, name)) for name in ("ogrid", "mgrid", "r_", "c_")},
    },
)
