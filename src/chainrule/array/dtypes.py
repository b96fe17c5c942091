"""The dtypes a tensor holds, PyTorch's names for them, the default float dtype, and the
making of arrays from Python data by chainrule's dtype rules. Inside, a dtype is NumPy's;
what a program sees (``t.dtype``, ``cr.float32``) is chainrule's ``dtype``, PyTorch's
``torch.dtype`` holding that NumPy dtype."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from .devices import from_host, to_device
from .modules import accelerator

float32 = np.dtype("float32")
float64 = np.dtype("float64")
float16 = np.dtype("float16")
# bfloat16 is ml_dtypes' NumPy dtype: a storage dtype (cast to and from, saved, printed);
# NumPy files it under kind "V", so it is never taken for a float that gradients flow in
bfloat16 = np.dtype(ml_dtypes.bfloat16)
int64 = np.dtype("int64")
int32 = np.dtype("int32")
int16 = np.dtype("int16")
int8 = np.dtype("int8")
uint8 = np.dtype("uint8")
uint16 = np.dtype("uint16")
uint32 = np.dtype("uint32")
uint64 = np.dtype("uint64")
bool_ = np.dtype("bool")
default_float = float32  # set_default_dtype changes it; read it with get_default_dtype()


DTYPE_NAMES: dict[str, np.dtype] = {
    "float32": float32,
    "float": float32,
    "float64": float64,
    "double": float64,
    "float16": float16,
    "half": float16,
    "bfloat16": bfloat16,
    "int64": int64,
    "long": int64,
    "int32": int32,
    "int": int32,  # as torch.int
    "int16": int16,
    "short": int16,
    "int8": int8,
    "uint8": uint8,
    "uint16": uint16,
    "uint32": uint32,
    "uint64": uint64,
    "bool": bool_,
}


class dtype:  # noqa: N801 (PyTorch's name: torch.dtype)
    """A tensor's dtype as a program sees it, PyTorch's ``torch.dtype``: one object per dtype,
    printed ``chainrule.float32``, with PyTorch's ``is_floating_point``, ``is_complex``,
    ``is_signed``, ``itemsize``, ``to_real()`` and ``to_complex()``.

    It holds the NumPy dtype the arrays use as ``.dtype``, which is how NumPy takes it
    (``np.zeros(3, dtype=chainrule.float32)``); it equals that NumPy dtype and hashes as it,
    so code keyed on NumPy dtypes keeps working, and NumPy's ``kind``, ``name`` and ``type``
    are there for that code too. Like PyTorch's, it equals no string, None or Python type."""

    __slots__ = ("dtype", "is_complex", "is_floating_point", "is_signed", "itemsize", "_name")

    def __init__(self, held: np.dtype, name: str) -> None:
        self.dtype, self._name = held, name
        self.is_floating_point = is_floating(held)
        self.is_complex = False  # no tensor holds complex numbers (dtype_object makes none)
        self.is_signed = self.is_floating_point or held.kind == "i"
        self.itemsize = int(held.itemsize)

    def __repr__(self) -> str:
        return f"chainrule.{self._name}"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        if isinstance(other, dtype):
            return self is other
        # NumPy's dtypes and scalar types only: NumPy itself also equates None, Python's
        # float and names with its default dtype, which PyTorch's dtype equals to nothing
        if isinstance(other, np.dtype) or isinstance(other, type) and issubclass(other, np.generic):
            return bool(self.dtype == other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.dtype)

    def __reduce__(self) -> tuple[Any, tuple[np.dtype]]:
        return dtype_object, (self.dtype,)  # loads (and copies) as the same object

    def to_real(self) -> dtype:
        """The real dtype of a complex one; a real dtype is its own."""
        return self

    def to_complex(self) -> dtype:
        raise TypeError(f"to_complex: chainrule holds no complex dtype; got {self}")

    @property
    def kind(self) -> str:
        return str(self.dtype.kind)

    @property
    def name(self) -> str:
        return str(self.dtype.name)

    @property
    def type(self) -> Any:
        return self.dtype.type


_dtype = dtype  # the class, where a parameter named dtype hides it
_OBJECTS: dict[np.dtype, dtype] = {}  # NumPy dtype -> its one dtype object, made as met


def dtype_object(held: Any) -> Any:
    """chainrule's dtype object for a NumPy dtype, or for anything ``as_dtype`` takes. A
    dtype no tensor holds (a string's, a complex number's) stays NumPy's, for messages that
    name what a user passed."""
    found = _OBJECTS.get(held)
    if found is None:
        d = held if isinstance(held, np.dtype) else as_dtype(held)
        assert d is not None, "dtype_object: needs a dtype; got None"
        if not holds(d):
            return d
        d = d.newbyteorder("=")  # a big-endian array's dtype is still its number type
        name = "bool" if d == bool_ else "bfloat16" if d == bfloat16 else d.name
        found = _OBJECTS.setdefault(d, dtype(d, name))
    return found


def as_dtype(dtype: Any) -> np.dtype | None:
    """Normalise a dtype given as chainrule's dtype object, a NumPy dtype, a Python type (as
    PyTorch: float is float64, int int64) or a name; None stays None. A dtype no tensor holds
    is refused."""
    if dtype is None:
        return None
    if isinstance(dtype, _dtype):
        return dtype.dtype
    if isinstance(dtype, str):
        if dtype not in DTYPE_NAMES:
            raise TypeError(
                f"dtype: unknown dtype name {dtype!r}; use one of {sorted(DTYPE_NAMES)}"
            )
        return DTYPE_NAMES[dtype]
    if dtype is float:
        return float64
    if dtype is int:
        return int64
    if dtype is bool:
        return bool_
    try:
        d = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"dtype: not a dtype; got {dtype!r}") from None
    if not holds(d):
        raise TypeError(f"dtype: chainrule holds bool, integer and floating-point numbers; got {d}")
    return d


def is_floating(dtype: Any) -> bool:
    """float16, float32, float64 or bfloat16 (PyTorch's is_floating_point); a NumPy dtype or
    chainrule's."""
    return dtype.kind == "f" or dtype == bfloat16


def set_default_dtype(dtype: Any) -> None:
    """PyTorch's ``torch.set_default_dtype``: the dtype of Python floats made tensors, of
    the float factories (zeros, rand, ...) and of new layers' parameters: float32 or
    float64."""
    global default_float
    d = as_dtype(dtype)
    if d not in (float32, float64):
        raise TypeError(
            f"set_default_dtype: chainrule's default dtype is float32 or float64; got {d}"
        )
    default_float = d


def get_default_dtype() -> np.dtype:
    return default_float


def from_data(data: Any, dtype: Any = None, to: Any = None) -> Any:
    """Turn data into an array with chainrule's dtype rules.

    Python floats (and lists of them) become float32, Python ints int64, bools bool; arrays
    keep their dtype unless one is asked for. Always returns a fresh array (a copy). An
    array stays on its device; data from the host is put together there, then moved once
    to ``to`` (a device; None is the default device).
    """
    dtype = as_dtype(dtype)
    if accelerator is not None and isinstance(data, accelerator.ndarray):
        _need_holds(data)  # a device array: copied where it lives, or to ``to``
        arr = data.astype(data.dtype if dtype is None else dtype, copy=True)
        return arr if to is None else to_device(arr, to)
    return from_host(_host_array(data, dtype), to)


def _need_holds(arr: Any) -> None:
    if not holds(arr.dtype):  # complex, object, strings, dates: no tensor of them
        raise TypeError(
            f"tensor: cannot make a tensor of an array of dtype {arr.dtype}; chainrule "
            "holds bool, integer and floating-point numbers"
        )


def _host_array(data: Any, dtype: Any) -> np.ndarray:
    """from_data's work for data on the host: a fresh NumPy array."""
    if isinstance(data, (np.ndarray, np.generic)):
        _need_holds(data)
        return np.array(data, dtype=dtype, copy=True)
    try:
        arr = np.array(data, dtype=dtype)
    except (ValueError, OverflowError) as e:  # ragged lists, strings for a float dtype, 2**63
        # for int64
        msg = str(e).rstrip(". ")
        raise ValueError(f"tensor: cannot make a tensor of {type(data).__name__}; {msg}") from None
    if dtype is None:
        if arr.dtype == np.float64:
            arr = arr.astype(default_float)
        elif arr.dtype.kind in "iu":
            if arr.dtype == uint64 and arr.size and arr.max() > np.iinfo(int64).max:
                raise ValueError(
                    "tensor: Python ints past int64's range need a dtype that holds them, as in "
                    f"PyTorch; got {int(arr.max())}; pass dtype=chainrule.uint64 or a floating one"
                )
            arr = arr.astype(int64)
        elif arr.dtype.kind == "O" and arr.size and isinstance(arr.flat[0], int):
            raise ValueError(  # NumPy keeps ints past uint64's or below int64's as objects
                "tensor: Python ints must lie in int64's range for an int64 tensor, as in "
                f"PyTorch; got {data!r:.60}; pass a dtype that holds them (a floating one)"
            )
        elif arr.dtype.kind not in "fb":
            raise TypeError(
                f"tensor: cannot make a tensor of {type(data).__name__} (dtype {arr.dtype})"
            )
    elif not holds(arr.dtype):
        raise TypeError(f"tensor: cannot make a tensor of dtype {arr.dtype}")
    return arr


def holds(dtype: Any) -> bool:
    """Whether a tensor can hold this dtype: bools, integers, floats and the named dtypes."""
    return dtype.kind in "biuf" or dtype in DTYPE_NAMES.values()


def _category(dtype: np.dtype) -> int:
    """PyTorch's categories of dtypes: bool 0, integers 1, floating 2."""
    return 2 if dtype.kind == "f" or dtype == bfloat16 else 0 if dtype.kind == "b" else 1


# PyTorch promotes these only with themselves and the floating dtypes (NumPy makes uint64
# with int64 float64, which would lose integers past 2**53)
_UNPROMOTED = (uint16, uint32, uint64)
# the Python ints PyTorch takes as a scalar operand (an int64, or a uint64's bits)
_SCALAR_INTS = range(-(2**63), 2**64)


def promote_types(a: Any, b: Any, op: str = "promote_types") -> np.dtype:
    """PyTorch's ``promote_types``: the dtype two dtypes meet in. A higher category wins
    (bool < integers < floating: int64 with float16 is float16, where NumPy says float64);
    float16 with bfloat16 is float32; otherwise NumPy's lattice, which is PyTorch's
    (uint8 with int8 is int16). uint16, uint32 and uint64 meet no other bool or integer
    dtype, as in PyTorch: a TypeError naming ``op``."""
    a, b = np.dtype(a), np.dtype(b)
    if a == b:
        return a
    ca, cb = _category(a), _category(b)
    if (a in _UNPROMOTED or b in _UNPROMOTED) and ca < 2 and cb < 2:
        raise TypeError(
            f"{op}: uint16, uint32 and uint64 are promoted only with themselves and floating "
            f"dtypes, as in PyTorch; got {dtype_object(a)} and {dtype_object(b)}; convert one "
            "of them first (.to(dtype))"
        )
    if ca != cb:
        return a if ca > cb else b
    if bfloat16 in (a, b):
        other = b if a == bfloat16 else a
        return float32 if other == float16 else other
    return np.result_type(a, b)


def result_type(*operands: Any, op: str = "result_type") -> np.dtype:
    """PyTorch's ``result_type``: the dtype an elementwise op computes in. Operands are ranked
    tensors (of at least one dim, arrays too), 0-d tensors and Python numbers (bool, int:
    int64, float: the default dtype); each rank's dtypes meet in ``promote_types``, and a
    lower rank counts only where its category is higher (a float16 tensor times a 0-d float64
    is float16, uint8 + 300 is uint8, an int tensor + 2.5 is the default float). A Python int
    outside [-2**63, 2**64) is refused as PyTorch refuses it (OverflowError), naming ``op``."""
    ranks: list[np.dtype | None] = [None, None, None]  # ranked, 0-d, Python numbers
    for x in operands:
        arr = getattr(x, "_array", x)
        dtype: np.dtype
        if isinstance(arr, bool):
            rank, dtype = 2, bool_
        elif isinstance(arr, int):
            if arr not in _SCALAR_INTS:
                raise OverflowError(
                    f"{op}: a Python int operand must lie in [-2**63, 2**64), as in PyTorch; "
                    f"got {arr}"
                )
            rank, dtype = 2, int64 if arr < 2**63 else uint64  # PyTorch's type for 2**63 on
        elif isinstance(arr, float):
            rank, dtype = 2, default_float
        else:
            rank, dtype = (1 if arr.ndim == 0 else 0), arr.dtype
        held = ranks[rank]
        ranks[rank] = dtype if held is None else promote_types(held, dtype, op)
    out = _combine(ranks[0], _combine(ranks[1], ranks[2], op), op)
    if out is None:
        raise TypeError(f"{op}: needs at least one operand")
    return out


def _combine(higher: np.dtype | None, lower: np.dtype | None, op: str) -> np.dtype | None:
    """A higher rank's dtype against a lower's, as PyTorch combines them."""
    if higher is None or lower is None:
        return lower if higher is None else higher
    if _category(higher) == 2:
        return higher
    if _category(higher) == 0 or _category(lower) == 2:
        return promote_types(higher, lower, op)
    return higher


def promote_all(dtypes: Any, op: str = "promote_all") -> Any:
    """The dtype several tensors meet in (cat, stack), by PyTorch's promote_types."""
    out = None
    for d in dtypes:
        out = d if out is None else promote_types(out, d, op)
    return out


class finfo:  # noqa: N801 (PyTorch's name: torch.finfo)
    """PyTorch's ``torch.finfo``: the limits of a floating dtype (the default dtype if none is
    given): bits, eps, max, min, tiny (= smallest_normal), resolution."""

    def __init__(self, type: Any = None) -> None:
        dtype = get_default_dtype() if type is None else as_dtype(type)
        if dtype is None or not is_floating(dtype):
            raise TypeError(f"finfo: needs a floating dtype; got {dtype}")
        info = ml_dtypes.finfo(dtype) if dtype == bfloat16 else np.finfo(dtype)
        self.dtype = dtype.name  # PyTorch's finfo names its dtype: 'float32'
        self.bits = int(info.bits)
        self.eps, self.max, self.min = float(info.eps), float(info.max), float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -int(info.precision)  # as PyTorch: a power of ten

    def __repr__(self) -> str:
        return (
            f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
            f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
            f"tiny={self.tiny:g}, dtype={self.dtype})"
        )


class iinfo:  # noqa: N801 (PyTorch's name: torch.iinfo)
    """PyTorch's ``torch.iinfo``: the limits of an integer dtype: bits, max, min."""

    def __init__(self, type: Any) -> None:
        dtype = as_dtype(type)
        if dtype is None or dtype.kind not in "iub":
            raise TypeError(f"iinfo: needs an integer dtype; got {dtype}")
        info = np.iinfo(dtype) if dtype.kind != "b" else None
        self.dtype = dtype.name  # as PyTorch's: 'int64'
        self.bits = 8 if info is None else int(info.bits)
        self.max = 1 if info is None else int(info.max)
        self.min = 0 if info is None else int(info.min)

    def __repr__(self) -> str:
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"
