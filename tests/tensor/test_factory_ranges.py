"""arange and linspace into integer dtypes, against PyTorch: the length and each value as
PyTorch's kernels compute them from float ends and steps."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

import chainrule as cr

ARANGES = [
    (0.1, -7.9, -4.0),
    (0.0, -8.000001, -4.0),
    (1.0, 5.000001, 2.0),
    (1.1, 5.1, 2.0),
    (-0.9, 2.1, 2.0),
    (2.1, -2.9, -1.0),
    (0, 3, 0.5),  # a step truncated to 0: refused for int64, zeros for int32
    (-1, 2, 2),
    (0, 10000, 1),
]


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16"])
@pytest.mark.parametrize("args", ARANGES)
def test_integer_arange_as_torch(args: tuple, dtype: str) -> None:
    try:
        theirs = torch.arange(*args, dtype=getattr(torch, dtype))
    except ValueError:
        with pytest.raises(ValueError, match="arange: step must be nonzero"):
            cr.arange(*args, dtype=getattr(cr, dtype))
        return
    ours = cr.arange(*args, dtype=getattr(cr, dtype))
    assert ours.dtype.name == dtype
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


LINSPACES = list(itertools.product((-2.0, 0, 4.3, 50), (-3, 0, 1, 4, 50), (0, 1, 50)))
LINSPACES += [(0, 7, 50), (-15, 39, 71), (90.62586796555979, -42.42441702871999, 91)]


@pytest.mark.parametrize("dtype", ["int64", "int32"])
def test_integer_linspace_as_torch(dtype: str) -> None:
    """Truncated steps, each value rounded once from its half's end (a fused multiply-add
    in PyTorch's kernel): -15 to 39 in 71 steps has 11 where two roundings give 12."""
    for start, end, steps in LINSPACES:
        theirs = torch.linspace(start, end, steps, dtype=getattr(torch, dtype))
        ours = cr.linspace(start, end, steps, dtype=getattr(cr, dtype))
        assert ours.dtype.name == dtype
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy(), err_msg=f"{start, end, steps}")
    ours = cr.linspace(cr.tensor(4.3), cr.tensor(-3), 50, dtype=getattr(cr, dtype))
    theirs = torch.linspace(torch.tensor(4.3), torch.tensor(-3), 50, dtype=getattr(torch, dtype))
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
