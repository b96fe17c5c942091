"""The activations of a 0-d float32 or float64 tensor computed on its value, a NumPy scalar
(fastpath.on_value): the arrays' path's values bit for bit, PyTorch's values and gradients,
at the edges (signed zeros, the bends, overflow, inf, NaN), and the arrays' path where a
user's filter makes NumPy's warning an error."""

import warnings

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule import fastpath

# NumPy's overflow warnings, which chainrule's own filter silences outside pytest's capture
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
F, TF = cr.nn.functional, torch.nn.functional
EDGES = [0.5, -0.5, 0.0, -0.0, 3.0, -3.0, 2.9999998, 30.0, -30.0, 89.0, -89.0, 100.0, -710.0]
EDGES += [1e-30, -1e-30, 3e38, -3e38, np.inf, -np.inf, np.nan]
FNS = {
    "sigmoid": (lambda t: t.sigmoid(), torch.sigmoid),
    "selu": (F.selu, TF.selu),
    "elu": (lambda t: F.elu(t, 0.7), lambda t: TF.elu(t, 0.7)),
    "elu_negative_alpha": (lambda t: F.elu(t, -0.7), lambda t: TF.elu(t, -0.7)),
    "celu": (lambda t: F.celu(t, 2.5), lambda t: TF.celu(t, 2.5)),
    "hardswish": (F.hardswish, TF.hardswish),
    "mish": (F.mish, TF.mish),
    "softplus": (F.softplus, TF.softplus),
    "softplus_beta": (lambda t: F.softplus(t, 2.0, 5.0), lambda t: TF.softplus(t, 2.0, 5.0)),
}


def _value(fn, x, on):
    before = fastpath.enabled()
    fastpath.set_enabled(on)
    try:
        return fn(cr.tensor(x)).numpy()
    finally:
        fastpath.set_enabled(before)


@pytest.mark.parametrize("name", FNS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_0d_values_are_the_arrays_and_torchs(name, dtype):
    ours, theirs = FNS[name]
    for v in EDGES:
        x = np.array(v, dtype)
        fast, plain = _value(ours, x, True), _value(ours, x, False)
        assert type(fast) is np.ndarray and fast.shape == () and fast.dtype == dtype
        assert fast.tobytes() == plain.tobytes(), (v, fast, plain)  # -0.0 and NaN alike
        want = theirs(torch.tensor(x)).numpy()
        np.testing.assert_allclose(fast, want, rtol=2e-6, atol=1e-7, err_msg=str(v))


@pytest.mark.parametrize("name", FNS)
def test_0d_gradients_against_torch(name):
    ours, theirs = FNS[name]
    for v in (0.5, -0.5, -2.0, 4.0, 30.0):
        x = cr.tensor(np.float32(v), requires_grad=True)
        tx = torch.tensor(np.float32(v), requires_grad=True)
        ours(x).backward(cr.tensor(np.float32(0.7)))
        theirs(tx).backward(torch.tensor(np.float32(0.7)))
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=2e-6, atol=1e-7)


def test_0d_value_under_a_warnings_filter_takes_the_arrays_path():
    """exp(100) overflows in float32: with RuntimeWarning an error, the value's path gives up
    and the passes, which silence it, give PyTorch's values."""
    x = cr.tensor(np.float32(100.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        got = [F.mish(x).item(), F.softplus(x, 1.0, 1000.0).item(), (-x).sigmoid().item()]
    assert got == [100.0, np.inf, 0.0]
