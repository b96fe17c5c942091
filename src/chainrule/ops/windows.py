"""Where a strided window falls along one axis: how many fit (PyTorch's floor formula) and
the positions each reads in the padded axis; conv.py's, pool.py's and gathered.py's, below
all three. The windows themselves are theirs."""

from __future__ import annotations

from typing import Any

from .. import array


def out_hw(size: tuple, kernel: tuple, stride: tuple, dilation: tuple, padding: tuple) -> tuple:
    """The number of window positions along each axis (PyTorch's floor formula)."""
    return tuple(
        (n + lo + hi - d * (k - 1) - 1) // s + 1
        for n, k, s, d, (lo, hi) in zip(size, kernel, stride, dilation, padding, strict=True)
    )


def strided_windows(n_out: int, kernel: int, stride: int, dilation: int) -> Any:
    """(n_out, kernel) positions in a padded axis: window i reads i*stride + p*dilation."""
    host = array.host
    return host.arange(n_out)[:, None] * stride + host.arange(kernel) * dilation
