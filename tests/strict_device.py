"""A pytest plugin for the runs on the strict stand-in (``CHAINRULE_ARRAY_BACKEND=strict
python -m pytest -p strict_device ...``, as test_strict_backend runs them): tensors made with
no device go to the stand-in's CUDA device (``cr.set_default_device("cuda")``), so the test
files exercise every op on device arrays. The files compare results on the host through
``numpy()``, which PyTorch (and chainrule) refuse for a CUDA tensor; here it copies, as
``numpy(force=True)`` does. Nothing else changes: the library itself never calls it on a
hot path."""

from __future__ import annotations

from typing import Any

import chainrule as cr
from chainrule import backend
from chainrule.tensor import Tensor

assert backend.ARRAY_BACKEND == "strict", "strict_device is for CHAINRULE_ARRAY_BACKEND=strict"
cr.set_default_device("cuda")


def _numpy(self: Tensor, *, force: bool = False) -> Any:
    return backend.to_host(self._array)


def _array(self: Tensor, dtype: Any = None, copy: Any = None) -> Any:
    arr = backend.to_host(self._array)
    return arr if dtype is None else arr.astype(dtype)


Tensor.numpy = _numpy  # type: ignore[method-assign]
Tensor.__array__ = _array  # type: ignore[method-assign]
