"""float32 randn's Box-Muller (PyTorch's AVX2 kernel) takes the log of 1 - u and the sine
and cosine of 2 pi u for 24-bit uniforms u: 2**24 inputs each. Over every one of them,
chainrule's block form (float64 sums rounded once to float32, float32 sums where a product
is exact, the octant's swap and signs on the bits) equals avx_mathfun's ``log256_ps`` and
``sincos256_ps`` written below op for op, each fused multiply-add an exact ``fmaf``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from chainrule.array import torch_streams as ts

F32, F64 = np.float32, np.float64
C = ts._C


def log256(x: np.ndarray, fma: Any = ts.fma32) -> np.ndarray:
    """avx_mathfun's ``log256_ps`` for x in (0, 1], with GCC's fused multiply-adds."""
    f = np.float32
    bits = x.view(np.int32)
    e = ((bits >> 23) - 126).astype(F32)
    m = ((bits & ~0x7F800000) | 0x3F000000).view(F32)
    small = m < C["SQRTHF"]
    xm = m - f(1)
    e -= small
    xm += m * small
    wide = xm.astype(F64)
    z = xm * xm
    y = fma(C["p0"], wide, C["p1"])
    for k in ("p2", "p3", "p4", "p5", "p6", "p7", "p8"):
        y = fma(y, wide, C[k])
    y *= xm
    y = fma(y, z.astype(F64), e * C["q1"])
    y -= z * f(0.5)
    return fma(e, C["q2"], xm + y)


def sincos256(x: np.ndarray, fma: Any = ts.fma32) -> tuple[np.ndarray, np.ndarray]:
    """avx_mathfun's ``sincos256_ps`` for x >= 0, with GCC's fused multiply-adds."""
    f = np.float32
    j = (x * C["FOPI"]).astype(np.int32)
    j += 1
    j &= ~1
    y = j.astype(F32)
    sign_sin = (j & 4) << 29
    sign_cos = (~(j - 2) & 4) << 29
    poly = (j & 2) == 0
    wide = y.astype(F64)
    for k in ("DP1", "DP2", "DP3"):
        x = fma(C[k], wide, x)
    z = x * x
    z64 = z.astype(F64)
    yc = fma(C["c0"], z64, C["c1"])
    yc = fma(yc, z64, C["c2"])
    yc *= z
    yc = fma(yc, z64, -(z * f(0.5)))
    yc += f(1)
    ys = fma(C["s0"], z64, C["s1"])
    ys = fma(ys, z64, C["s2"])
    ys *= z
    ys = fma(ys, x, x)
    s = np.where(poly, ys, yc) + f(0)  # + 0: as the kernel's blend, -0 becomes +0
    c = np.where(poly, yc, ys) + f(0)
    return (s.view(np.int32) ^ sign_sin).view(F32), (c.view(np.int32) ^ sign_cos).view(F32)


def check(k: np.ndarray) -> None:
    """The block form against the kernel for the uniforms k * 2**-24."""
    d = k.astype(F32) * F32(2.0**-24)
    scratch = ts._Scratch(d.size)
    radius, sin, cos = (np.empty(d.size, F32) for _ in range(3))
    ts._radius_avx2(d, radius, scratch)
    ts._sincos_avx2(d, sin, cos, scratch)
    want = np.sqrt(F32(-2) * log256(F32(1) - d))
    assert (radius.view(np.uint32) == want.view(np.uint32)).all(), k[radius != want][:4]
    for got, kernel in zip((sin, cos), sincos256(C["two_pi"] * d), strict=True):
        differ = got.view(np.uint32) != kernel.view(np.uint32)
        assert not differ.any(), k[differ][:4]


def test_block_form_is_the_kernel_on_a_spread_of_uniforms() -> None:
    edges = np.r_[0:64, 2**23 - 64 : 2**23 + 64, 2**24 - 64 : 2**24]
    check(np.unique(np.r_[edges, np.arange(0, 2**24, 997)]).astype(np.uint64))


@pytest.mark.slow
def test_block_form_is_the_kernel_on_every_uniform() -> None:
    step = 2**20
    for start in range(0, 2**24, step):
        check(np.arange(start, start + step, dtype=np.uint64))
