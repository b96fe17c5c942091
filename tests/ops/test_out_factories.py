"""PyTorch's ``out=`` on the factories and on where, against torch: every factory of
chainrule whose torch counterpart takes out= (the list derived from torch's signatures) run
both ways into outs of each dtype and shape (empty, the right shape, another shape, a
transposed view): out's dtype decides the values', out is resized (arange with the warning),
a random factory draws into out bit for bit, an out that requires grad is refused, and
``requires_grad=True`` marks out; refusals where torch refuses."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule import factories
from tests.ops.test_out import _torch_takes_out

# name -> the call of lib's factory into out (the tensors it takes made of lib)
CALLS: dict[str, Callable[..., Any]] = {
    "zeros": lambda lib, out, **k: lib.zeros(2, 3, out=out, **k),
    "ones": lambda lib, out, **k: lib.ones((2, 3), out=out, **k),
    "empty": lambda lib, out, **k: lib.empty(2, 3, out=out, **k),
    "full": lambda lib, out, **k: lib.full((2, 3), 1.5, out=out, **k),
    "arange": lambda lib, out, **k: lib.arange(0, 3, 0.5, out=out, **k),
    "linspace": lambda lib, out, **k: lib.linspace(0, 10, 6, out=out, **k),
    "logspace": lambda lib, out, **k: lib.logspace(0, 2, 5, base=2.0, out=out, **k),
    "eye": lambda lib, out, **k: lib.eye(2, 3, out=out, **k),
    "rand": lambda lib, out, **k: lib.rand(4, 5, out=out, **k),
    "randn": lambda lib, out, **k: lib.randn(4, 5, out=out, **k),
    "randint": lambda lib, out, **k: lib.randint(0, 5, (2, 3), out=out, **k),
    "randperm": lambda lib, out, **k: lib.randperm(6, out=out, **k),
    "normal": lambda lib, out, **k: lib.normal(1.0, 2.0, (4, 5), out=out, **k),
}
# more calls of some of them: other arguments, other paths
MORE: dict[str, Callable[..., Any]] = {
    "arange of ints": lambda lib, out, **k: lib.arange(7, out=out, **k),
    "randn of 32": lambda lib, out, **k: lib.randn(4, 8, out=out, **k),
    "randint of 0 and 1": lambda lib, out, **k: lib.randint(0, 2, (2, 3), out=out, **k),
    "normal of a tensor mean": lambda lib, out: lib.normal(lib.arange(5.0), 1.0, out=out),
    "normal of a tensor std": lambda lib, out: lib.normal(1.0, lib.arange(5.0), out=out),
    "normal of tensors": lambda lib, out: lib.normal(lib.arange(5.0), lib.ones(4, 5), out=out),
}
RANDOM = {"rand", "randn", "randint", "randperm", "normal"}

OUTS: dict[str, Callable[[Any], Any]] = {
    "empty float32": lambda lib: lib.empty(0),
    "empty float64": lambda lib: lib.empty(0, dtype=lib.float64),
    "int64": lambda lib: lib.empty(0, dtype=lib.int64),
    "int32": lambda lib: lib.empty(0, dtype=lib.int32),
    "uint8": lambda lib: lib.empty(0, dtype=lib.uint8),
    "bool": lambda lib: lib.empty(0, dtype=lib.bool),
    "(4, 5)": lambda lib: lib.zeros(4, 5),
    "(5, 4) float64 transposed": lambda lib: lib.zeros(5, 4, dtype=lib.float64).T,
    "(8, 4) transposed": lambda lib: lib.zeros(8, 4).T,
    "(7,)": lambda lib: lib.zeros(7),
}


def test_every_factory_whose_torch_counterpart_takes_out_is_run_here() -> None:
    wanted = {n for n in factories.__all__ if _torch_takes_out(n)}
    assert len(wanted) >= 13  # the stub file read
    assert wanted == set(CALLS)


def _run(lib: Any, call: Callable[..., Any], make_out: Callable[[Any], Any], **k: Any) -> Any:
    """(dtype, shape, values, requires_grad, warnings) of the call into a fresh out from seed
    0, or the exception."""
    lib.manual_seed(0)
    out = make_out(lib)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            got = call(lib, out, **k)
        except (RuntimeError, TypeError, ValueError) as err:  # NotImplementedError is one
            return err
    assert got is out
    values = got.detach().numpy().copy()
    dtype = str(got.dtype).split(".")[-1]
    return dtype, tuple(got.shape), values, got.requires_grad, len(caught)


def _check(name: str, call: Callable[..., Any], **k: Any) -> None:
    for oname, make_out in OUTS.items():
        theirs, ours = _run(torch, call, make_out, **k), _run(cr, call, make_out, **k)
        where = f"{name} into {oname} {k}"
        if isinstance(theirs, Exception):
            assert isinstance(ours, Exception), f"{where}: torch refuses ({theirs}); we write"
            continue
        assert not isinstance(ours, Exception), f"{where}: torch writes; we refuse: {ours}"
        assert ours[:2] == theirs[:2] and ours[3:] == theirs[3:], where
        if name == "empty":
            continue  # uninitialised
        if name == "logspace" and ours[0] == "float64":  # pow's last bit, outside out= too
            np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-15, err_msg=where)
        else:
            np.testing.assert_array_equal(ours[2], theirs[2], err_msg=where)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_a_factory_writes_into_out_as_torch(name: str) -> None:
    _check(name, CALLS[name])
    _check(name, CALLS[name], requires_grad=True)


@pytest.mark.parametrize("name", sorted(MORE))
def test_more_factory_calls_write_into_out_as_torch(name: str) -> None:
    _check(name, MORE[name])


def test_a_random_factory_draws_into_out_in_its_order_in_memory() -> None:
    """Into a transposed out of the right shape (kept, not resized), the draws follow its
    memory, as torch's ``normal_`` of a tensor not contiguous does."""
    drawn = []
    for lib in (cr, torch):
        lib.manual_seed(3)
        out = lib.zeros(6, 5).T  # (5, 6), columns first in memory
        drawn.append(lib.randn(5, 6, out=out).numpy())
        assert out.stride() == (1, 5)
    np.testing.assert_array_equal(*drawn)


def test_the_refusals_name_the_factory() -> None:
    with pytest.raises(RuntimeError, match=r"^zeros: dtype .*float32 does not match out's"):
        cr.zeros(2, out=cr.empty(0, dtype=cr.float64), dtype=cr.float32)
    with pytest.raises(RuntimeError, match=r"^rand\(\): functions with out=\.\.\. arguments"):
        cr.rand(2, out=cr.empty(0, requires_grad=True))
    with pytest.raises(TypeError, match=r"^randn: out must be a floating-point tensor"):
        cr.randn(2, out=cr.empty(0, dtype=cr.int64))
    with pytest.raises(TypeError, match=r"^eye: out must be a Tensor; got list"):
        cr.eye(2, out=[])
    with pytest.raises(ValueError, match=r"^randint: low and high - 1 must be within bool"):
        cr.randint(0, 5, (2,), out=cr.empty(0, dtype=cr.bool))
    with cr.no_grad():  # no gradient wanted: written
        out = cr.ones(2, out=cr.empty(0, requires_grad=True))
    assert out.tolist() == [1.0, 1.0]


def test_an_out_of_the_right_shape_keeps_its_memory() -> None:
    base = cr.zeros(2, 3)
    view = base[:, 1]
    assert cr.full((2,), 7.0, out=view) is view
    assert base.tolist() == [[0.0, 7.0, 0.0], [0.0, 7.0, 0.0]]


# -- where ------------------------------------------------------------------------------------


def _where(lib: Any, out_dtype: str, shape: tuple = (0,), numbers: bool = False) -> Any:
    c = lib.tensor([True, False, True])
    a, b = (1.0, 2.0) if numbers else (lib.arange(3.0), lib.zeros(3))
    out = lib.empty(shape, dtype=getattr(lib, out_dtype))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            got = lib.where(c, a, b, out=out)
        except (RuntimeError, TypeError) as err:
            return type(err).__name__ if isinstance(err, TypeError) else "RuntimeError"
    assert got is out
    return got.tolist(), str(got.dtype).split(".")[-1], len(caught)


@pytest.mark.parametrize(
    ("out_dtype", "shape", "numbers"),
    [("float32", (0,), False), ("float32", (5,), False), ("float64", (0,), False)]
    + [("int64", (0,), False), ("bool", (0,), False), ("float32", (0,), True)],
)
def test_where_writes_into_out_as_torch(out_dtype: str, shape: tuple, numbers: bool) -> None:
    assert _where(cr, out_dtype, shape, numbers) == _where(torch, out_dtype, shape, numbers)


def test_where_with_out_refuses_a_gradient() -> None:
    c = cr.tensor([True, False])
    x = cr.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"^where\(\): functions with out=\.\.\. arguments"):
        cr.where(c, x, cr.zeros(2), out=cr.empty(2))
    with pytest.raises(RuntimeError, match=r"^where: expected out tensor to have dtype"):
        cr.where(c, cr.ones(2), cr.zeros(2), out=cr.empty(2, dtype=cr.float64))
    with pytest.raises(TypeError, match=r"^where: with out=, input and other must be tensors"):
        cr.where(c, 1.0, cr.zeros(2), out=cr.empty(2))
