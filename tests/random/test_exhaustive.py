"""float32 randn's Box-Muller (PyTorch's AVX2 kernel) takes the log of 1 - u and the sine
and cosine of 2 pi u for 24-bit uniforms u: 2**24 inputs each. Over every one of them, each
fused multiply-add computed as one float64 sum rounded once to float32 equals the exact
``fmaf`` (which also rounds float32 ties correctly), so the fast form is exact there."""

from __future__ import annotations

import numpy as np
import pytest

from chainrule.array import torch_streams as ts


@pytest.mark.slow
def test_cephes_log_and_sincos_need_no_tie_check_on_any_uniform() -> None:
    step = 2**20
    for start in range(0, 2**24, step):
        k = np.arange(start, start + step, dtype=np.uint64)
        d = k.astype(np.float32) * np.float32(2.0**-24)
        u1 = np.float32(1) - d
        fast, exact = ts._log256(u1), ts._log256(u1, ts.fma32)
        assert (fast.view(np.uint32) == exact.view(np.uint32)).all(), start
        theta = ts.C_TWO_PI * d
        for f, e in zip(ts._sincos256(theta), ts._sincos256(theta, ts.fma32), strict=True):
            assert (f.view(np.uint32) == e.view(np.uint32)).all(), start
