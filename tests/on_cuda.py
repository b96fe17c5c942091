"""A pytest plugin that runs test files with every tensor made on the CUDA device
(``cr.set_default_device("cuda")``), so that they exercise every op on device arrays: on
the strict stand-in, as test_strict_backend runs them::

    CHAINRULE_ARRAY_BACKEND=strict python -m pytest -p tests.on_cuda tests/...

or on a GPU with ``CHAINRULE_ARRAY_BACKEND=cupy``. The files compare results on the host
through ``numpy()``, which PyTorch (and chainrule) refuse for a CUDA tensor; here it copies,
as ``numpy(force=True)`` does. Nothing else changes: the library itself never calls it on a
hot path."""

from __future__ import annotations

from typing import Any

import chainrule as cr
from chainrule import array
from chainrule.tensor import Tensor

assert array.accelerator is not None, "on_cuda needs a CUDA device: CuPy, or the stand-in"
cr.set_default_device("cuda")


def _numpy(self: Tensor, *, force: bool = False) -> Any:
    return array.to_host(self._array)


def _array(self: Tensor, dtype: Any = None, copy: Any = None) -> Any:
    arr = array.to_host(self._array)
    return arr if dtype is None else arr.astype(dtype)


Tensor.numpy = _numpy  # type: ignore[method-assign]
Tensor.__array__ = _array  # type: ignore[method-assign]


def pytest_collection_modifyitems(items: list[Any]) -> None:
    """Catalog rows whose op does not run on a CUDA device yet are skipped, with the reason
    their row gives (tests/ops/rows/__init__.py's HOST_ONLY)."""
    import pytest

    for item in items:
        row = getattr(getattr(item, "callspec", None), "params", {}).get("row")
        if getattr(row, "host_only", ""):
            item.add_marker(pytest.mark.skip(reason=f"{row.name}: {row.host_only}"))
