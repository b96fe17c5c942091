"""Every nn.functional function and activation module against torch for each dtype a program
may hand it (int64, int32, uint8, bool, float16, bfloat16): where torch refuses the dtype,
chainrule refuses it with a message naming the function; where torch takes it, the result
has torch's dtype and values. The lists are derived from chainrule.nn, so a new function or
activation needs its call here."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule.nn import activation
from tests.nn.dtype_calls_more import calls as more_calls
from tests.nn.dtype_calls_spatial import calls as spatial_calls

DTYPES = ["int64", "int32", "uint8", "bool", "float16", "bfloat16"]


def _x(lib: Any, dtype: str, shape: tuple = (2, 3, 4)) -> Any:
    """Small values of the dtype (0 and 1 for bool; both signs for signed ones)."""
    rng = np.random.default_rng(0)
    if dtype == "bool":
        arr = rng.integers(0, 2, shape).astype(bool)
    elif dtype in ("uint8",):
        arr = rng.integers(0, 4, shape)
    elif dtype.startswith("int"):
        arr = rng.integers(-3, 4, shape)
    else:
        arr = rng.uniform(-2, 2, shape)
    return lib.tensor(arr).to(getattr(lib, dtype))


def _classes(lib: Any) -> Any:
    return lib.tensor([0, 2], dtype=lib.int64)


# name -> call(lib, F, dtype); every tensor operand of the dtype under test
CALLS: dict[str, Callable[[Any, Any, str], Any]] = {
    "adaptive_avg_pool2d": lambda lib, F, d: F.adaptive_avg_pool2d(_x(lib, d), 2),
    "avg_pool2d": lambda lib, F, d: F.avg_pool2d(_x(lib, d), 2),
    "batch_norm": lambda lib, F, d: F.batch_norm(
        _x(lib, d), _x(lib, d, (3,)), _x(lib, d, (3,)), training=False
    ),
    "binary_cross_entropy": lambda lib, F, d: F.binary_cross_entropy(
        _x(lib, d).clamp(0, 1), _x(lib, d).clamp(0, 1)
    ),
    "binary_cross_entropy_with_logits": lambda lib, F, d: F.binary_cross_entropy_with_logits(
        _x(lib, d), _x(lib, d)
    ),
    "celu": lambda lib, F, d: F.celu(_x(lib, d)),
    "conv1d": lambda lib, F, d: F.conv1d(_x(lib, d), _x(lib, d, (2, 3, 2))),
    "conv2d": lambda lib, F, d: F.conv2d(_x(lib, d, (1, 2, 3, 4)), _x(lib, d, (2, 2, 2, 2))),
    "conv_transpose2d": lambda lib, F, d: F.conv_transpose2d(
        _x(lib, d, (1, 2, 3, 4)), _x(lib, d, (2, 2, 2, 2))
    ),
    "cosine_similarity": lambda lib, F, d: F.cosine_similarity(_x(lib, d), _x(lib, d)),
    "cross_entropy": lambda lib, F, d: F.cross_entropy(_x(lib, d, (2, 3)), _classes(lib)),
    "dropout": lambda lib, F, d: F.dropout(_x(lib, d), 0.5, training=False),
    "elu": lambda lib, F, d: F.elu(_x(lib, d)),
    "embedding": lambda lib, F, d: F.embedding(_classes(lib), _x(lib, d, (3, 2))),
    "gelu": lambda lib, F, d: F.gelu(_x(lib, d)),
    "glu": lambda lib, F, d: F.glu(_x(lib, d)),
    "hardtanh": lambda lib, F, d: F.hardtanh(_x(lib, d)),
    "huber_loss": lambda lib, F, d: F.huber_loss(_x(lib, d), _x(lib, d)),
    "l1_loss": lambda lib, F, d: F.l1_loss(_x(lib, d), _x(lib, d)),
    "layer_norm": lambda lib, F, d: F.layer_norm(_x(lib, d), (4,)),
    "leaky_relu": lambda lib, F, d: F.leaky_relu(_x(lib, d)),
    "linear": lambda lib, F, d: F.linear(_x(lib, d), _x(lib, d, (2, 4))),
    "log_softmax": lambda lib, F, d: F.log_softmax(_x(lib, d), dim=-1),
    "logsigmoid": lambda lib, F, d: F.logsigmoid(_x(lib, d)),
    "max_pool2d": lambda lib, F, d: F.max_pool2d(_x(lib, d), 2),
    "mish": lambda lib, F, d: F.mish(_x(lib, d)),
    "mse_loss": lambda lib, F, d: F.mse_loss(_x(lib, d), _x(lib, d)),
    "nll_loss": lambda lib, F, d: F.nll_loss(_x(lib, d, (2, 3)), _classes(lib)),
    "normalize": lambda lib, F, d: F.normalize(_x(lib, d)),
    "one_hot": lambda lib, F, d: F.one_hot(_x(lib, d).abs().long() if d != "bool" else _x(lib, d)),
    "pad": lambda lib, F, d: F.pad(_x(lib, d), (1, 1)),
    "prelu": lambda lib, F, d: F.prelu(_x(lib, d), _x(lib, d, (1,))),
    "relu": lambda lib, F, d: F.relu(_x(lib, d)),
    "relu6": lambda lib, F, d: F.relu6(_x(lib, d)),
    "scaled_dot_product_attention": lambda lib, F, d: F.scaled_dot_product_attention(
        _x(lib, d), _x(lib, d), _x(lib, d)
    ),
    "selu": lambda lib, F, d: F.selu(_x(lib, d)),
    "sigmoid": lambda lib, F, d: F.sigmoid(_x(lib, d)),
    "silu": lambda lib, F, d: F.silu(_x(lib, d)),
    "smooth_l1_loss": lambda lib, F, d: F.smooth_l1_loss(_x(lib, d), _x(lib, d)),
    "softmax": lambda lib, F, d: F.softmax(_x(lib, d), dim=-1),
    "softmin": lambda lib, F, d: F.softmin(_x(lib, d), dim=-1),
    "softplus": lambda lib, F, d: F.softplus(_x(lib, d)),
    "softsign": lambda lib, F, d: F.softsign(_x(lib, d)),
    "tanh": lambda lib, F, d: F.tanh(_x(lib, d)),
    "threshold": lambda lib, F, d: F.threshold(_x(lib, d), 1, 0),
}
CALLS |= more_calls(_x, _classes)
CALLS |= spatial_calls(_x)

# activation modules: their constructor arguments (PReLU's weight is float32, as torch's)
MODULE_ARGS: dict[str, tuple] = {"GLU": (), "Softmax": (-1,), "LogSoftmax": (-1,)}
MODULE_ARGS |= {"Softmin": (-1,), "Threshold": (1, 0)}


def _activation_modules() -> list[str]:
    return sorted(
        n
        for n, c in vars(activation).items()
        if isinstance(c, type)
        and issubclass(c, cr.nn.Module)
        and c.__module__ == activation.__name__
    )


def test_every_function_has_a_call() -> None:
    missing = set(cr.nn.functional.__all__) - set(CALLS)
    assert not missing, f"add calls to CALLS in tests/nn/test_functional_dtypes.py: {missing}"
    assert len(_activation_modules()) > 15


def _outcome(call: Callable[[], Any]) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return call()
        except (RuntimeError, TypeError, ValueError, NotImplementedError) as e:
            return e


def _same_or_refused_alike(name: str, ours: Any, theirs: Any, dtype: str) -> None:
    """Both refuse, ours naming the function (a module by its function: LeakyReLU by
    leaky_relu; or the op PyTorch's message names: ReLU6 by hardtanh), or both give a result
    of one dtype and equal values (some chainrule ops compute bfloat16 in float32: their
    results are float32, with bfloat16's precision)."""
    if isinstance(theirs, Exception):
        assert isinstance(ours, Exception), f"{name} of {dtype}: torch refuses ({theirs})"
        assert isinstance(ours, (RuntimeError, TypeError, ValueError)), repr(ours)
        op = str(ours).split(":")[0].replace("_", "").lower()
        named = {name.replace("_", "").lower(), *str(theirs).replace("_", "").lower().split()}
        assert op in named, f"{name} of {dtype}: {ours}"  # ReLU6's is hardtanh's, as PyTorch's
        return
    assert not isinstance(ours, Exception), f"{name} of {dtype}: torch takes it; we refused: {ours}"
    expected = {str(theirs.dtype).removeprefix("torch.")}
    if expected == {"bfloat16"}:
        expected.add("float32")
    assert str(ours.dtype).removeprefix("chainrule.") in expected, (name, dtype)
    a = ours.detach().float().numpy()
    b = theirs.detach().float().numpy()
    tol = 1e-2 if dtype in ("float16", "bfloat16") else 1e-5
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol, err_msg=f"{name} of {dtype}")


# Where chainrule still differs from torch, with the reason: an xfail that must fail, so a
# fixed one is taken off the list.
KNOWN = {
    "upsample_bilinear": (("uint8",), "uint8 bilinear refused: PyTorch's rounds in fixed point"),
}

FUNCTION_CASES = [
    pytest.param(
        name,
        dtype,
        id=f"{name}-{dtype}",
        marks=[pytest.mark.xfail(strict=True, reason=KNOWN[name][1])]
        if dtype in KNOWN.get(name, ((), ""))[0]
        else [],
    )
    for name in sorted(CALLS)
    for dtype in DTYPES
]


@pytest.mark.parametrize(("name", "dtype"), FUNCTION_CASES)
def test_a_function_takes_or_refuses_a_dtype_as_torch(name: str, dtype: str) -> None:
    """F.leaky_relu of an int64 tensor gave integers and F.softmax of one float32: torch
    refuses both, and chainrule now does, naming the function."""
    ours = _outcome(lambda: CALLS[name](cr, cr.nn.functional, dtype))
    theirs = _outcome(lambda: CALLS[name](torch, torch.nn.functional, dtype))
    _same_or_refused_alike(name, ours, theirs, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", _activation_modules())
def test_an_activation_module_takes_or_refuses_a_dtype_as_torch(name: str, dtype: str) -> None:
    args = MODULE_ARGS.get(name, ())
    ours = _outcome(lambda: getattr(cr.nn, name)(*args)(_x(cr, dtype)))
    theirs = _outcome(lambda: getattr(torch.nn, name)(*args)(_x(torch, dtype)))
    op = {"PReLU": "prelu"}.get(name, name)
    _same_or_refused_alike(op, ours, theirs, dtype)
