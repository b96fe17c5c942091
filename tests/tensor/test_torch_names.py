"""torch's constants and dtype limits by their names (cr.inf, cr.pi, cr.newaxis, cr.finfo,
cr.iinfo), cr.accelerator, the legacy autograd.Variable and size= on the factories, each
against PyTorch's."""

from __future__ import annotations

import math

import pytest
import torch

import chainrule as cr

FLOATS = ["float16", "bfloat16", "float32", "float64"]
INTS = ["uint8", "int8", "int16", "int32", "int64"]


def test_constants_are_torchs() -> None:
    for name in ("inf", "pi", "e"):
        assert getattr(cr, name) == getattr(torch, name)
    assert math.isnan(cr.nan) and cr.newaxis is torch.newaxis is None
    assert cr.ones(3)[:, cr.newaxis].shape == (3, 1)


@pytest.mark.parametrize("name", FLOATS)
def test_finfo_is_torchs(name: str) -> None:
    ours, theirs = cr.finfo(getattr(cr, name)), torch.finfo(getattr(torch, name))
    for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution"):
        assert getattr(ours, field) == pytest.approx(getattr(theirs, field), rel=1e-6), field
    assert repr(ours) == repr(theirs).replace("torch.", "")


@pytest.mark.parametrize("name", INTS)
def test_iinfo_is_torchs(name: str) -> None:
    ours, theirs = cr.iinfo(getattr(cr, name)), torch.iinfo(getattr(torch, name))
    assert (ours.bits, ours.max, ours.min) == (theirs.bits, theirs.max, theirs.min)


def test_finfo_of_the_default_dtype_and_the_errors() -> None:
    assert cr.finfo().dtype == cr.get_default_dtype()
    with pytest.raises(TypeError, match="finfo: needs a floating dtype; got int64"):
        cr.finfo(cr.int64)
    with pytest.raises(TypeError, match="iinfo: needs an integer dtype; got float32"):
        cr.iinfo(cr.float32)


def test_the_accelerator_is_cuda_or_none() -> None:
    assert cr.accelerator.is_available() == cr.cuda.is_available()
    if not cr.cuda.is_available():
        assert cr.accelerator.current_accelerator() is None
        assert cr.accelerator.device_count() == 0
        assert cr.accelerator.current_device_index() == -1
        cr.accelerator.synchronize()  # nothing to wait for


def test_variable_is_a_tensor_sharing_the_data() -> None:
    for lib in (torch, cr):
        t = lib.ones(2)
        v = lib.autograd.Variable(t, requires_grad=True)
        assert isinstance(v, lib.Tensor) and v is not t
        assert v.requires_grad and not t.requires_grad
        with lib.no_grad():
            v.mul_(3)
        assert t.tolist() == [3.0, 3.0]  # one array


@pytest.mark.parametrize("factory", ["zeros", "ones", "empty", "rand", "randn"])
def test_size_is_a_keyword_of_the_factories(factory: str) -> None:
    for lib in (torch, cr):
        assert tuple(getattr(lib, factory)(size=(2, 3)).shape) == (2, 3)
    with pytest.raises(TypeError, match=f"{factory}: the size is given twice"):
        getattr(cr, factory)(2, size=(3,))
