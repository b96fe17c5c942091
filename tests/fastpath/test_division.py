"""fmod, remainder and floor_divide of float32 arrays by passes in float64 (fastpath/division.py):
the same bits as NumPy's ufuncs (the plain line) and PyTorch's values, past the passes' bounds
(quotients of 2**22 and more, inf, NaN, a zero divisor, signed zeros) too."""

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule.fastpath import division
from chainrule.ops import arithmetic
from tests.helpers import fast_path_on

rng = np.random.default_rng(0)
N = 3 * division.DIVISION_MIN
EDGES = np.array(
    [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 3.0, -3.0, 0.5, 1e-45, -1e-45, 3.4e38,
     2.0**24, -(2.0**24), 2.0**22 + 1, 7.0, -7.0, 0.1, -2.5],
    dtype=np.float32,
)  # fmt: skip


def _pairs() -> dict:
    a = (rng.standard_normal(N) * 5).astype(np.float32)
    b = rng.standard_normal(N).astype(np.float32) + np.float32(0.1)
    x, y = np.meshgrid(EDGES, EDGES)  # every pair of edges, N elements: the passes apply
    edges = (np.resize(x.ravel(), N), np.resize(y.ravel(), N))
    whole = rng.integers(-50, 50, (2, N)).astype(np.float32)  # exact quotients: signed zeros
    big = (rng.integers(-(2**26), 2**26, N).astype(np.float32), np.float32(3.0))
    wide = (a.reshape(-1, 1)[:64].repeat(48, 1), b[:48])  # b broadcast to (64, 48)
    return {"normal": (a, b), "edges": edges, "whole": tuple(whole), "big": big, "wide": wide,
            "number": (a, 0.1), "zero": (a, -0.0), "inf": (a, float("inf")),
            "multiples": (whole[0], -3.0)}  # fmt: skip


PAIRS = _pairs()


def _same_bits(got: np.ndarray, want: np.ndarray) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    np.testing.assert_array_equal(got.view(np.int32)[~nan], want.view(np.int32)[~nan])


@pytest.mark.parametrize("name", sorted(PAIRS))
@pytest.mark.parametrize("op", ["fmod", "floor_divide"])
def test_the_passes_give_numpys_bits(name: str, op: str) -> None:
    a, b = PAIRS[name]
    with fast_path_on(), np.errstate(all="ignore"):
        _same_bits(getattr(division, op)(a, b), getattr(np, op)(a, b))


@pytest.mark.parametrize("name", sorted(set(PAIRS) - {"zero", "inf"}))
def test_the_remainders_passes_give_the_plain_bits(name: str) -> None:
    # a divisor array of EDGES too: inf, 0 and NaN divisors, signed zeros; the number pairs
    # "zero" and "inf" take the plain line whole
    a, b = PAIRS[name]
    b = b if np.ndim(b) else float(b)  # a number as the op has it
    with fast_path_on(), np.errstate(all="ignore"):
        got = division.remainder(a, b, arithmetic._remainder)
        assert got is not None
        _same_bits(got, arithmetic._remainder(a, b))


@pytest.mark.parametrize(
    "name", ["normal", "whole", "big", "wide", "number", "zero", "inf", "multiples"]
)
@pytest.mark.parametrize("op", ["fmod", "remainder", "floor_divide"])
def test_the_ops_give_torchs_values_in_either_mode(name: str, op: str) -> None:
    # PyTorch's vectorised fmod is exact where quotients are below 2**64 or so (not at EDGES)
    a, b = PAIRS[name]
    want = getattr(torch, op)(torch.tensor(a), torch.tensor(b) if np.ndim(b) else b).numpy()
    before = cr.autograd.fastpath.enabled()
    for on in (True, False):
        cr.autograd.fastpath.set_enabled(on)
        try:
            got = getattr(cr, op)(cr.tensor(a), cr.tensor(b) if np.ndim(b) else b).numpy()
        finally:
            cr.autograd.fastpath.set_enabled(before)
        _same_bits(got, want)
