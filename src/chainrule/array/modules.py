"""The array modules: NumPy on the CPU, and the accelerator's module (CuPy, or the CUDA
stand-in of :mod:`chainrule.array.cuda_standin`) for CUDA tensors.

A tensor's array is NumPy's on the CPU and the accelerator's on a CUDA device. The engine,
ops, Tensor, nn and optim compute with ``xp``, which is NumPy's namespace: an array of
another module given to its functions goes to that module through NumPy's protocols
(``__array_ufunc__``, ``__array_function__``), so ``xp.exp(a)`` runs where ``a`` lives.

The accelerator is chosen when chainrule is imported, by ``CHAINRULE_ARRAY_BACKEND``:

- ``auto`` (the default): CuPy, where it is installed (``pip install chainrule[cuda]``) and
  finds a GPU; otherwise none, and CUDA is the clear error of :func:`devices.no_cuda`.
- ``cupy``: CuPy, and an ImportError naming what is missing where it cannot be had.
- ``numpy``: none, without looking for CuPy.
- ``strict``: the CUDA stand-in (NumPy with CuPy's refusals) as the CUDA device, so that
  tests on a machine without a GPU show that nothing converts to the host implicitly and
  that CPU and CUDA tensors are kept apart as PyTorch keeps them.
"""

from __future__ import annotations

import importlib.util
import os
import warnings
from typing import Any

import numpy as np

from . import cuda_standin

ARRAY_BACKEND = os.environ.get("CHAINRULE_ARRAY_BACKEND", "auto")
_CHOICES = ("auto", "cupy", "numpy", "strict")
if ARRAY_BACKEND not in _CHOICES:
    raise ImportError(
        f"chainrule: CHAINRULE_ARRAY_BACKEND must be one of {', '.join(_CHOICES)}; got "
        f"{ARRAY_BACKEND!r}"
    )


def _find_cupy(required: bool) -> Any:
    """CuPy if it imports and sees a GPU; None (or, if required, an ImportError)."""
    why = "CuPy is not installed (pip install chainrule[cuda])"
    if importlib.util.find_spec("cupy") is not None:
        try:
            import cupy

            if cupy.cuda.runtime.getDeviceCount() > 0:
                return cupy
            why = "CuPy finds no GPU"
        except Exception as e:  # no driver, no libraries: CuPy's own errors
            why = f"CuPy cannot reach a GPU ({type(e).__name__}: {e})"
    if required:
        raise ImportError(f"chainrule: CHAINRULE_ARRAY_BACKEND=cupy, but {why}")
    return None


xp: Any = np  # the namespace every op computes with (arrays of other modules dispatch)
host = np  # the host's array module, for work that belongs there (printing, IO)
accelerator: Any = None  # the array module of CUDA tensors, or None
if ARRAY_BACKEND == "strict":
    accelerator = cuda_standin.module
elif ARRAY_BACKEND in ("auto", "cupy"):
    accelerator = _find_cupy(required=ARRAY_BACKEND == "cupy")
# Whether tensors may live on two devices in this process: every check of devices (an
# op's inputs, a copy between tensors) is skipped where there is only the CPU.
ACCELERATED = accelerator is not None

# What a tensor holds, for isinstance: NumPy's array type, and the accelerator's.
ndarray: tuple = (np.ndarray,) if accelerator is None else (np.ndarray, accelerator.ndarray)
# What must be moved to a CUDA tensor's device when given as its index or value: NumPy
# arrays where there is an accelerator; under NumPy alone no type, so that
# isinstance(x, moved_types) costs nothing on the way of every index.
moved_types: Any = () if accelerator is None else np.ndarray

# NumPy's floating-point error control (``with errstate(divide="ignore"): ...``) around a
# computation that makes inf or NaN on purpose. CuPy has none (it never warns), and NumPy's
# does nothing to CuPy's kernels, so this one context serves every device.
errstate = np.errstate

# NumPy warns where a float op makes inf or NaN (log(0), 1/0, exp overflow); PyTorch makes
# the same values silently, and so do chainrule's ops: the RuntimeWarnings raised from its
# own modules are ignored. The filter is appended, so one the user gives first
# (python -W error::RuntimeWarning, to find where a NaN starts) still applies; NumPy code of
# the user's own keeps its warnings.
warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"chainrule(\.|$)", append=True)


def module_of(arr: Any) -> Any:
    """The array module an array belongs to: NumPy, or the accelerator's."""
    return np if type(arr) is np.ndarray else accelerator


def result_array(x: Any) -> Any:
    """An op's result as an array: an array as it is; a NumPy scalar or a number as a 0-d
    NumPy array (CuPy's reductions give 0-d arrays already)."""
    return x if isinstance(x, ndarray) else np.asarray(x)


def to_host(arr: Any) -> np.ndarray:
    """An array as a NumPy array: itself on the CPU (no copy), an explicit copy from the
    device otherwise (CuPy's ``asnumpy``)."""
    return arr if type(arr) is np.ndarray else accelerator.asnumpy(arr)


def writeable(arr: Any) -> bool:
    """Whether an array may be written in place: NumPy's flag, False for a broadcast view
    (several elements share one memory location) or an array made read-only with
    :func:`make_read_only` (a cached constant). CuPy's arrays have no such flag (every one
    can be written), so for them the answer comes from the strides (a zero stride over more
    than one element); the strict stand-in keeps NumPy's flag underneath."""
    if type(arr) is np.ndarray:
        return arr.flags.writeable
    if ARRAY_BACKEND == "strict":
        return cuda_standin.writeable(arr)
    return all(s != 0 or n < 2 for s, n in zip(arr.strides, arr.shape, strict=True))


def data_ptr(arr: Any) -> int:
    """The address of an array's first element: in host memory for NumPy's, in the GPU's
    for CuPy's (the stand-in's, its NumPy array's)."""
    if type(arr) is np.ndarray:
        return _host_data_ptr(arr)
    if ARRAY_BACKEND == "strict":
        return _host_data_ptr(arr._a)
    return int(arr.data.ptr)


def _host_data_ptr(arr: np.ndarray) -> int:
    """A NumPy array's data pointer, by its ``ctypes`` attribute: half the time of
    ``__array_interface__``, which builds a dict of the shape, strides and type first."""
    return int(arr.ctypes.data or 0)


def strided_view(arr: Any, shape: tuple, strides: tuple) -> Any:
    """A read-only view of ``arr`` with the given shape and strides (windows over it), by
    the array's own module (NumPy's as_strided dispatches on nothing); read-only where the
    module can say so."""
    if type(arr) is np.ndarray:
        return np.lib.stride_tricks.as_strided(arr, shape, strides, writeable=False)
    view = accelerator.lib.stride_tricks.as_strided(arr, shape, strides)
    make_read_only(view)
    return view


def copy_order(arr: Any) -> tuple[int, ...] | None:
    """The order of dims (outermost first) in which a copy of ``arr`` lays out its elements,
    as PyTorch's preserve_format copy: the input's own order by stride, where a dim of
    stride 0 (expanded) or of one element keeps its place, as PyTorch's TensorIterator sorts
    them; None where that is row-major order."""
    if arr.flags.c_contiguous:
        return None
    strides, shape = arr.strides, arr.shape
    perm = list(range(arr.ndim))[::-1]  # innermost first, then sorted by insertion

    def swap(d0: int, d1: int) -> int:  # 1: d0 belongs inside d1; -1: keep; 0: no order
        s0, s1 = abs(strides[d0]), abs(strides[d1])
        if s0 == 0 or s1 == 0:
            return 0
        if s0 != s1:
            return 1 if s0 > s1 else -1
        return 1 if shape[d0] > shape[d1] else 0

    for i in range(1, len(perm)):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            way = swap(perm[d0], perm[d1])
            if way > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif way < 0:
                break
    order = tuple(perm[::-1])
    return None if order == tuple(range(arr.ndim)) else order


def make_read_only(arr: Any) -> None:
    """Mark a cached constant read-only where the array module can (NumPy, the stand-in);
    CuPy cannot, and its constants are never handed out to be written."""
    if type(arr) is np.ndarray:
        arr.flags.writeable = False
    elif ARRAY_BACKEND == "strict":
        cuda_standin.make_read_only(arr)
