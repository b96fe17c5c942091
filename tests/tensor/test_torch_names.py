"""torch's constants, dtypes and dtype limits by their names (cr.inf, cr.pi, cr.newaxis,
cr.float32 and the other dtype objects, cr.finfo, cr.iinfo), cr.accelerator, the legacy
autograd.Variable and size= on the factories, each against PyTorch's."""

from __future__ import annotations

import copy
import math
import pickle

import numpy as np
import pytest
import torch

import chainrule as cr
from tests.helpers import torch_dtype_text

FLOATS = ["float16", "bfloat16", "float32", "float64"]
INTS = ["uint8", "int8", "int16", "int32", "int64"]
# every dtype object chainrule names, aliases included (cr.float, cr.long, cr.int, ...)
DTYPE_NAMES = sorted(name for name, value in vars(cr).items() if isinstance(value, cr.dtype))


def test_constants_are_torchs() -> None:
    for name in ("inf", "pi", "e"):
        assert getattr(cr, name) == getattr(torch, name)
    assert math.isnan(cr.nan) and cr.newaxis is torch.newaxis is None
    assert cr.ones(3)[:, cr.newaxis].shape == (3, 1)


# -- dtype objects ----------------------------------------------------------------------------


def test_every_dtype_and_alias_is_named() -> None:
    assert {"float32", "float", "double", "half", "long", "int", "short", "bool"} <= set(
        DTYPE_NAMES
    )


@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_a_dtype_object_is_torchs(name: str) -> None:
    ours, theirs = getattr(cr, name), getattr(torch, name)
    assert type(ours) is cr.dtype and isinstance(theirs, torch.dtype)
    assert torch_dtype_text(ours) == str(theirs) and repr(ours) == str(ours)
    for field in ("is_floating_point", "is_signed", "is_complex", "itemsize"):
        assert getattr(ours, field) == getattr(theirs, field), field
    assert torch_dtype_text(ours.to_real()) == str(theirs.to_real())
    assert cr.zeros(2, dtype=ours).element_size() == ours.itemsize


@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_a_dtype_object_equals_and_hashes_as_the_numpy_dtype_it_holds(name: str) -> None:
    ours = getattr(cr, name)
    held = ours.dtype
    assert isinstance(held, np.dtype)
    assert ours == held and held == ours and hash(ours) == hash(held)
    assert {held: name}[ours] == {ours: name}[held] == name
    assert np.zeros(2, dtype=ours).dtype == held
    assert cr.tensor(np.zeros(2, dtype=held)).dtype is ours


def test_a_dtype_object_equals_numpys_types_and_no_string_as_torchs() -> None:
    assert cr.float32 == np.float32 and cr.float64 == np.dtype("float64")
    assert cr.float32 != np.float64 and cr.float32 != cr.float64
    for lib in (cr, torch):
        assert lib.float32 != "float32" and not lib.float32 == "float32"  # noqa: SIM201
        assert lib.float is lib.float32 and lib.int is lib.int32  # torch.int is int32


NOT_DTYPES = [None, float, int, bool, "float64", "float32", 0, 1.0, object()]


@pytest.mark.parametrize("name", DTYPE_NAMES)
# ids by type and value: repr(object()) holds an address, which differs between pytest-xdist's
# workers, and they must collect the same test names
@pytest.mark.parametrize(
    "other", NOT_DTYPES, ids=lambda v: "object()" if type(v) is object else repr(v)
)
def test_a_dtype_object_equals_nothing_but_dtypes_as_torchs(name: str, other: object) -> None:
    """NumPy's dtype equals None, Python's float and names (np.dtype(None) is float64):
    chainrule's dtype, like torch's, equals none of them, either side of == and !=."""
    for dtype in (getattr(cr, name), getattr(torch, name)):
        assert not dtype == other and dtype != other  # noqa: SIM201
        assert not other == dtype and other != dtype  # noqa: SIM201
        assert dtype not in (other,)


@pytest.mark.parametrize("lib", [cr, torch], ids=["chainrule", "torch"])
def test_a_dtype_object_pickles_and_copies_as_itself(lib: object) -> None:
    for name in ("float32", "bfloat16", "int64", "bool"):
        d = getattr(lib, name)
        assert pickle.loads(pickle.dumps(d)) is d  # noqa: S301 (our own bytes)
        assert copy.deepcopy(d) is d and copy.copy(d) is d
        assert copy.deepcopy({"dtype": d})["dtype"] is d


def test_what_chainrule_hands_back_is_a_dtype_object() -> None:
    assert cr.ones(2).dtype is cr.float32 and cr.tensor([1]).dtype is cr.int64
    assert cr.ones(2, dtype=np.float64).dtype is cr.float64  # NumPy's dtype in, ours out
    assert cr.ones(2, dtype="float16").dtype is cr.float16
    assert cr.get_default_dtype() is cr.float32
    cr.set_default_dtype(cr.float64)
    try:
        assert cr.get_default_dtype() is cr.float64
    finally:
        cr.set_default_dtype(cr.float32)
    pairs = [
        (cr.promote_types(cr.int64, cr.float16), torch.promote_types(torch.int64, torch.float16)),
        (cr.promote_types(np.uint8, "int8"), torch.promote_types(torch.uint8, torch.int8)),
        (cr.result_type(cr.ones(2), 2.5), torch.result_type(torch.ones(2), 2.5)),
        (cr.result_type(cr.tensor([1]), 2.5), torch.result_type(torch.tensor([1]), 2.5)),
        (
            cr.result_type(cr.tensor([1], dtype=cr.uint8), 300),
            torch.result_type(torch.tensor([1], dtype=torch.uint8), 300),
        ),
    ]
    for ours, theirs in pairs:
        assert type(ours) is cr.dtype and torch_dtype_text(ours) == str(theirs)


def test_a_dtype_named_by_a_string_is_the_object_of_that_name() -> None:
    for name in cr.array.DTYPE_NAMES:  # "int" is int32 as cr.int and torch.int are
        assert cr.ones(1, dtype=name).dtype is getattr(cr, name), name


@pytest.mark.parametrize("kind", [float, int, bool])
def test_a_python_type_as_a_dtype_is_torchs(kind: type) -> None:
    ours, theirs = cr.zeros(2, dtype=kind), torch.zeros(2, dtype=kind)
    assert torch_dtype_text(ours.dtype) == str(theirs.dtype)  # float is float64, not float32
    assert torch_dtype_text(cr.ones(2).to(kind).dtype) == str(torch.ones(2).to(kind).dtype)


@pytest.mark.parametrize("dtype", [np.complex64, np.str_, object])
def test_a_dtype_no_tensor_holds_is_refused(dtype: object) -> None:
    with pytest.raises(TypeError, match="chainrule holds bool, integer and floating-point"):
        cr.ones(2, dtype=dtype)
    with pytest.raises(TypeError, match="chainrule holds bool, integer and floating-point"):
        cr.ones(2).to(dtype)
    with pytest.raises(TypeError, match="chainrule holds bool, integer and floating-point"):
        cr.promote_types(dtype, cr.float32)


# -- dtype limits -----------------------------------------------------------------------------


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
    # finfo names its dtype as PyTorch's does, by the bare name, a string
    assert cr.finfo().dtype == torch.finfo().dtype == "float32"
    assert repr(cr.finfo()) == repr(cr.finfo(cr.get_default_dtype()))
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
        # programs check isinstance(p, torch.autograd.Variable): every tensor is one
        assert isinstance(t, lib.autograd.Variable) and isinstance(lib.nn.Parameter(t), lib.Tensor)
        assert isinstance(lib.nn.Parameter(t), lib.autograd.Variable)
        assert not isinstance(t.numpy(), lib.autograd.Variable) and not isinstance(
            3.0, lib.autograd.Variable
        )


@pytest.mark.parametrize("factory", ["zeros", "ones", "empty", "rand", "randn"])
def test_size_is_a_keyword_of_the_factories(factory: str) -> None:
    for lib in (torch, cr):
        assert tuple(getattr(lib, factory)(size=(2, 3)).shape) == (2, 3)
    with pytest.raises(TypeError, match=f"{factory}: the size is given twice"):
        getattr(cr, factory)(2, size=(3,))


@pytest.mark.parametrize(
    "call", ["permute", "view", "reshape", "expand", "repeat", "flip", "new_zeros", "new_ones"]
)
def test_a_spread_argument_given_no_way_is_refused_as_torch_refuses(call: str) -> None:
    """x.permute() is a TypeError in PyTorch even for a 0-d tensor (whose call is
    x.permute(())): nothing given is not the empty size."""
    for lib in (torch, cr):
        x = lib.tensor(3.0)
        with pytest.raises(TypeError, match=r"missing 1 required positional|got \(\)"):
            getattr(x, call)()
        assert tuple(getattr(x, call)(()).shape) == ()
