"""nextafter of float32 and float64 arrays on their bits (fastpath/ulps.py): the same bits as
NumPy's ufunc (the plain line) and PyTorch's, at zeros, subnormals, the largest floats, inf,
NaN and equal pairs too, broadcast or not, in either mode."""

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule.fastpath import ulps
from tests.helpers import fast_path_on

rng = np.random.default_rng(0)
N = 2 * ulps.NEXTAFTER_MIN


def _pairs(dtype: type) -> dict:
    fi = np.finfo(dtype)
    edges = np.array(
        [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, fi.max, -fi.max, fi.smallest_subnormal,
         -fi.smallest_subnormal, fi.tiny, -fi.tiny, 0.5, -2.0],
        dtype=dtype,
    )  # fmt: skip
    x, y = np.meshgrid(edges, edges)  # every pair of edges, N elements: the passes apply
    a, b = rng.standard_normal((2, N)).astype(dtype)
    half = np.where(rng.random(N) < 0.5, a, b)  # equal pairs among unequal ones
    return {
        "edges": (np.resize(x.ravel(), N), np.resize(y.ravel(), N)),
        "normal": (a, b),
        "half": (a, half),
        "wide": (a.reshape(-1, 1), b[:8]),  # (N, 1) and (8,) broadcast to (N, 8)
        "zero_d": (a[:1].reshape(()), b),
    }


@pytest.mark.parametrize("name", ["edges", "normal", "half", "wide", "zero_d"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nextafter_gives_numpys_and_torchs_bits_in_either_mode(name: str, dtype: type) -> None:
    a, b = _pairs(dtype)[name]
    bits = np.int32 if dtype is np.float32 else np.int64
    want = torch.nextafter(torch.tensor(a), torch.tensor(b)).numpy()
    with fast_path_on():
        fast, plain = ulps.nextafter(a, b), np.nextafter(a, b)
        np.testing.assert_array_equal(fast.view(bits), plain.view(bits))
    before = cr.autograd.fastpath.enabled()
    for on in (True, False):
        cr.autograd.fastpath.set_enabled(on)
        try:
            got = cr.tensor(a).nextafter(cr.tensor(b)).numpy()
        finally:
            cr.autograd.fastpath.set_enabled(before)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got.view(bits), want.view(bits))  # NaN's bits too
