"""torch's shapes, legacy constructors and repr as a learner meets them, each against PyTorch:
cr.Size (t.shape, t.size()), cr.Tensor(2, 3) and its other forms, uniform_'s ``from`` and the
in-place random fills' keywords, and the repr of every kind of tensor (by hypothesis, and with
set_printoptions)."""

from __future__ import annotations

import pickle
import re
from collections.abc import Iterator
from typing import Any

import ml_dtypes
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import chainrule as cr
from tests.helpers import torch_dtype_text

# -- Size ------------------------------------------------------------------------------------


def _ours(text: str) -> str:
    """torch's text with chainrule's names (chainrule.Size, dtype=chainrule.float64)."""
    return text.replace("torch.", "chainrule.")


def test_shape_and_size_are_sizes_that_print_as_torchs() -> None:
    ours, theirs = cr.zeros(3, 4), torch.zeros(3, 4)
    for s, t in ((ours.shape, theirs.shape), (ours.size(), theirs.size())):
        assert type(s) is cr.Size and isinstance(s, tuple)
        assert repr(s) == str(s) == _ours(repr(t)) == "chainrule.Size([3, 4])"
    assert repr(cr.tensor(1.0).shape) == _ours(repr(torch.tensor(1.0).shape))
    assert repr(cr.Size()) == "chainrule.Size([])"
    assert str([ours.shape]) == _ours(str([theirs.shape]))
    assert ours.size(1) == 4 and type(ours.size(-1)) is int


def test_size_slices_adds_and_repeats_to_sizes_as_torchs() -> None:
    s, t = cr.Size([3, 4]), torch.Size([3, 4])
    for make in (
        lambda z: z[1:],
        lambda z: z[::-1],
        lambda z: z[:0],
        lambda z: z + (1,),
        lambda z: (1,) + z,
        lambda z: z + z,
        lambda z: z * 2,
        lambda z: 2 * z,
    ):
        ours, theirs = make(s), make(t)
        assert type(ours) is cr.Size and type(theirs) is torch.Size
        assert repr(ours) == _ours(repr(theirs))
    assert s[0] == 3 and type(s[-1]) is int
    with pytest.raises(TypeError):
        s + [1]  # noqa: RUF005  (a list is no tuple, as torch's)
    with pytest.raises(TypeError):
        t + [1]  # noqa: RUF005


def test_size_equals_tuples_hashes_as_them_and_counts_its_elements() -> None:
    s = cr.zeros(2, 3, 4).shape
    assert s == (2, 3, 4) and (2, 3, 4) == s and s != [2, 3, 4] and s == torch.Size([2, 3, 4])
    assert hash(s) == hash((2, 3, 4)) and {s: 1}[(2, 3, 4)] == 1
    assert s.numel() == torch.Size([2, 3, 4]).numel() == 24
    assert cr.Size().numel() == torch.Size().numel() == 1
    assert np.zeros(s).shape == (2, 3, 4) and cr.zeros(s).shape == s


def test_size_pickles_as_a_size() -> None:
    s = cr.zeros(2, 5).shape
    back = pickle.loads(pickle.dumps(s))
    assert type(back) is cr.Size and back == s


def test_size_takes_ints_only_as_torchs() -> None:
    assert cr.Size([np.int64(2), cr.tensor(3)]) == torch.Size([np.int64(2), torch.tensor(3)])
    assert cr.Size(cr.tensor([2, 3])) == (2, 3)
    for bad in ([1.5], ["a"]):
        with pytest.raises(TypeError):
            torch.Size(bad)
    with pytest.raises(TypeError, match="Size: takes an iterable of ints; got float at item 1"):
        cr.Size([2, 1.5])


# each makes a Size from ints, or is refused, in torch; lib is torch or chainrule
SIZE_CASES = {
    "add-float": lambda lib: lib.Size([2, 3]) + (2.5,),
    "add-str": lambda lib: lib.Size([2, 3]) + ("a",),
    "add-none": lambda lib: lib.Size([2, 3]) + (None,),
    "add-float-tensor": lambda lib: lib.Size([2, 3]) + (lib.tensor(2.0),),
    "radd-float": lambda lib: (2.5,) + lib.Size([2, 3]),
    "radd-str": lambda lib: ("a",) + lib.Size([2, 3]),
    "add-list": lambda lib: lib.Size([2, 3]) + [4],
    "mul-float": lambda lib: lib.Size([2, 3]) * 2.0,
    "make-float": lambda lib: lib.Size([2.5]),
    "make-str": lambda lib: lib.Size("ab"),
    "make-int": lambda lib: lib.Size(3),
    "make-float-tensor": lambda lib: lib.Size([lib.tensor(3.0)]),
    "add-ints": lambda lib: lib.Size([2, 3]) + (4,),
    "add-numpy-int": lambda lib: lib.Size([2, 3]) + (np.int64(4),),
    "add-0d-tensor": lambda lib: lib.Size([2, 3]) + (lib.tensor(4),),
    "add-bool": lambda lib: lib.Size([2, 3]) + (True,),
    "radd-numpy-int": lambda lib: (np.int64(4),) + lib.Size([2, 3]),
    "add-empty": lambda lib: lib.Size([2, 3]) + (),
    "mul-numpy-int": lambda lib: lib.Size([2, 3]) * np.int64(2),
    "mul-negative": lambda lib: lib.Size([2, 3]) * -1,
    "make-bool": lambda lib: lib.Size([True]),
    "make-1-element-tensor": lambda lib: lib.Size([lib.tensor([3])]),
    "make-negative": lambda lib: lib.Size([-1]),
    "make-generator": lambda lib: lib.Size(x for x in [1, 2]),
    "slice-step": lambda lib: lib.Size([2, 3, 4])[::2],
}


@pytest.mark.parametrize("name", list(SIZE_CASES))
def test_a_size_holds_only_ints_as_torchs(name: str) -> None:
    """Size([2, 3]) + (2.5,) was a Size holding a float (its + did not check the tuple)."""
    make = SIZE_CASES[name]
    try:
        theirs = make(torch)
    except TypeError:
        with pytest.raises(TypeError):
            make(cr)
        return
    ours = make(cr)
    assert type(ours) is cr.Size and ours == theirs
    assert all(type(n) is int for n in ours)


def test_a_shape_prints_as_torch_in_a_users_f_string_and_as_a_tuple_in_errors() -> None:
    s = cr.zeros(2, 3).shape
    assert f"{s}" == f"{s!r}" == format(s) == "chainrule.Size([2, 3])"  # torch.Size([2, 3])
    with pytest.raises(ValueError, match=r"got shapes \(2, 3\) and \(4, 1\)$"):
        cr.zeros(2, 3) @ cr.zeros(4, 1)


# -- legacy constructors ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [(2, 3), (4,) * 1 + (1,), (), (cr.Size([2, 3]),), ((2, 3),), ([1, 2],), ([[1.0, 2.0]],)],
    ids=["sizes", "two-sizes", "none", "a-Size", "a-tuple-is-data", "list", "nested"],
)
def test_tensor_constructor_forms_are_torchs(args: tuple) -> None:
    theirs_args = tuple(torch.Size(a) if isinstance(a, cr.Size) else a for a in args)
    ours, theirs = cr.Tensor(*args), torch.Tensor(*theirs_args)
    assert type(ours) is cr.Tensor and ours.shape == theirs.shape
    if any(isinstance(a, (list, tuple)) and not isinstance(a, cr.Size) for a in args):
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    if args and all(isinstance(a, int) for a in args) or not args:
        assert ours.dtype == cr.float32 == cr.get_default_dtype()


def test_tensor_of_sizes_takes_the_default_dtype_and_a_device() -> None:
    cr.set_default_dtype(cr.float64)
    try:
        assert cr.Tensor(2, 3).dtype == cr.float64
    finally:
        cr.set_default_dtype(cr.float32)
    t = cr.Tensor(2, 3, device="cpu", requires_grad=True)
    assert t.device == cr.device("cpu") and t.requires_grad and t.is_leaf
    assert cr.Tensor(cr.zeros(4, 5).shape).shape == (4, 5)


def test_tensor_constructor_errors_name_the_arguments() -> None:
    with pytest.raises(TypeError, match=r"Tensor: expected sizes \(ints\) or one sequence of data"):
        cr.Tensor(2, "a")
    with pytest.raises(TypeError):
        torch.Tensor(2, "a")
    with pytest.raises(ValueError, match=r"Tensor: size must be non-negative ints; got \(2, -1\)"):
        cr.Tensor(2, -1)
    with pytest.raises(RuntimeError):
        torch.Tensor(2, -1)


def test_as_tensor_of_a_number_is_that_number() -> None:
    assert cr.as_tensor(3).shape == () and cr.as_tensor(3).item() == 3
    assert cr.as_tensor([1, 2], dtype=cr.float64).dtype == cr.float64


# -- in-place random fills: torch's keywords -------------------------------------------------


def test_uniform_takes_from_as_torch_does() -> None:
    for lib in (cr, torch):
        t = lib.zeros(1000)
        t.uniform_(**{"from": 2.0, "to": 3.0})
        assert 2.0 <= float(t.min()) and float(t.max()) < 3.0
        t.uniform_(-5.0, -4.0)
        assert -5.0 <= float(t.min()) and float(t.max()) < -4.0
        t.uniform_(to=0.5)
        assert 0.0 <= float(t.min()) and float(t.max()) < 0.5
        with pytest.raises(TypeError):
            t.uniform_(from_=1.0)


@pytest.mark.parametrize(
    ("method", "kwargs", "mean"),
    [
        ("normal_", {"mean": 3.0, "std": 0.5}, 3.0),
        ("exponential_", {"lambd": 4.0}, 0.25),
        ("uniform_", {"to": 2.0}, 1.0),
    ],
)
def test_random_fills_take_torchs_keywords(method: str, kwargs: dict, mean: float) -> None:
    for lib in (cr, torch):
        t = lib.zeros(20000, dtype=lib.float64)
        out = getattr(t, method)(**kwargs, generator=None)
        assert out is t and abs(float(t.mean()) - mean) < 0.05


@pytest.fixture
def seeded() -> None:
    cr.manual_seed(0)
    torch.manual_seed(0)


@pytest.mark.usefixtures("seeded")
def test_random_fills_integers_in_torchs_ranges() -> None:
    for lib in (cr, torch):
        assert lib.zeros(5000, dtype=lib.int64).random_(5).unique().tolist() == [0, 1, 2, 3, 4]
        assert lib.zeros(5000).random_(2, 5).unique().tolist() == [2.0, 3.0, 4.0]
        assert lib.zeros(5000).random_(**{"from": 3, "to": 6}).unique().tolist() == [3, 4, 5]
        assert lib.zeros(5000).random_(to=2).unique().tolist() == [0.0, 1.0]
        assert lib.zeros(100, dtype=lib.bool).random_().unique().tolist() == [False, True]
        for dtype, top in ((lib.float16, 2**11), (lib.bfloat16, 2**8), (lib.uint8, 255)):
            t = lib.zeros(200000, dtype=dtype).random_()
            assert 0 <= float(t.min()) and top * 0.99 < float(t.max()) <= top, dtype
        assert float(lib.zeros(20000).random_().max()) > 2**23  # float32: up to 2**24
    with pytest.raises(ValueError, match="random_: from must be less than to; got from=5 and to=2"):
        cr.zeros(3).random_(5, 2)
    with pytest.raises(RuntimeError):
        torch.zeros(3).random_(5, 2)


@pytest.mark.usefixtures("seeded")
def test_bernoulli_geometric_cauchy_and_log_normal_fills_are_torchs() -> None:
    for lib in (cr, torch):
        t = lib.zeros(20000, dtype=lib.float64)
        assert abs(float(t.bernoulli_(p=0.3).mean()) - 0.3) < 0.02
        assert t.bernoulli_().unique().tolist() == [0.0, 1.0]
        mask = lib.tensor([0.0, 1.0, 0.0, 1.0])
        assert lib.zeros(2, 4, dtype=lib.int64).bernoulli_(mask).tolist() == [[0, 1, 0, 1]] * 2
        g = t.geometric_(p=0.25)
        assert float(g.min()) == 1.0 and bool((g == g.round()).all())
        assert abs(float(g.mean()) - 4.0) < 0.15
        assert abs(np.median(t.cauchy_(median=2.0, sigma=0.5).numpy()) - 2.0) < 0.05
        logs = t.log_normal_(mean=0.5, std=0.25).log()
        assert abs(float(logs.mean()) - 0.5) < 0.01 and abs(float(logs.std()) - 0.25) < 0.01
        assert lib.zeros(3, dtype=lib.int64).geometric_(0.5).dtype == lib.int64
    for fill, message in (
        (lambda t: t.geometric_(0.0), r"geometric_: p must be in \(0, 1\); got p=0.0"),
        (lambda t: t.bernoulli_(1.5), r"bernoulli_: p must be in \[0, 1\]; got p=1.5"),
        (lambda t: t.bernoulli_(cr.tensor([0.5, 2.0])), r"got shape \(2,\) with values outside"),
    ):
        with pytest.raises(ValueError, match=message):
            fill(cr.zeros(2))
    with pytest.raises(
        TypeError, match="cauchy_: needs a floating-point tensor; got dtype chainrule.int64"
    ):
        cr.zeros(2, dtype=cr.int64).cauchy_()


# -- repr ------------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def _default_print_options() -> Iterator[None]:
    yield
    cr.set_printoptions(profile="default")
    torch.set_printoptions(profile="default")


_SUFFIX_BREAK = re.compile(r",\n *(?=(?:dtype|size|requires_grad|grad_fn|device)=)")


def _same(ours: str, theirs: str) -> None:
    """chainrule's repr is torch's with chainrule's dtype names; those are longer, so a
    suffix that fits on torch's last line may move to a line of its own in ours: both are
    compared with every suffix on the last line."""
    assert _SUFFIX_BREAK.sub(", ", ours) == _SUFFIX_BREAK.sub(", ", _ours(theirs))


def _pair(a: np.ndarray, dtype: str, **kwargs: Any) -> tuple[cr.Tensor, torch.Tensor]:
    """The same values as a chainrule and a torch tensor of dtype (bfloat16 made from a
    bfloat16 array on both sides, so both hold the same rounded values)."""
    if dtype == "bfloat16":
        b = a.astype(ml_dtypes.bfloat16)
        return cr.tensor(b, **kwargs), torch.tensor(b.astype(np.float32), **kwargs).bfloat16()
    a = a.astype(dtype)
    return cr.tensor(a, **kwargs), torch.tensor(a, **kwargs)


SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, 1e-5, 3e-9, 1e9, 123456.789]
DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "uint8", "bool"]


@st.composite
def _arrays(draw: Any) -> tuple[np.ndarray, str]:
    dtype = draw(st.sampled_from(DTYPES))
    big = draw(st.booleans())  # past the threshold of 1000: summarised
    ndim = draw(st.integers(0, 3))
    side = st.integers(0, 40) if big else st.integers(0, 6)
    shape = tuple(draw(st.lists(side, min_size=ndim, max_size=ndim)))
    if big and np.prod(shape) <= 1000:
        shape = (*shape[:-1], 1001) if shape else (1001,)
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    scale = draw(st.sampled_from([1.0, 1e-6, 1e4, 1e10]))
    n = int(np.prod(shape))
    values = rng.standard_normal(n) * scale
    if draw(st.booleans()):
        values = np.round(values)  # whole numbers: printed as "3."
    if dtype != "bool" and draw(st.booleans()) and n:
        k = draw(st.integers(1, min(n, 5)))
        values[rng.choice(n, k, replace=False)] = rng.choice(SPECIAL, k)
    if dtype == "bool" or dtype.startswith(("int", "uint")):
        values = np.nan_to_num(values, posinf=7, neginf=-7)
        info = np.iinfo(dtype) if dtype != "bool" else None
        values = values > 0 if info is None else np.clip(values, info.min, info.max)
    return values.reshape(shape), dtype


@settings(max_examples=150, deadline=None, derandomize=True)
@given(case=_arrays())
def test_repr_is_torchs(case: tuple[np.ndarray, str]) -> None:
    a, dtype = case
    with np.errstate(over="ignore", invalid="ignore"):
        ours, theirs = _pair(a, dtype)
    _same(repr(ours), repr(theirs))


@pytest.mark.parametrize(
    "make",
    [
        lambda m: m.linspace(-1, 1, 2000),
        lambda m: m.arange(2000.0).reshape(2, 1000),
        lambda m: m.arange(2000).reshape(2, 10, 100),
        lambda m: m.arange(3000.0).reshape(10, 10, 30) / 7,
        lambda m: m.arange(1100).reshape(1100, 1) > 500,
        lambda m: m.tensor([1.0, float("nan"), float("inf"), -float("inf")]),
        lambda m: m.tensor([float("nan"), float("inf")]),
        lambda m: m.tensor([1e-5, float("nan"), 3.0]),
        lambda m: m.tensor([-0.0, 0.0]),
        lambda m: m.tensor(float("nan")),
        lambda m: m.tensor(-2.5, dtype=m.float64),
        lambda m: m.tensor(7, dtype=m.int32),
        lambda m: m.tensor(True),
        lambda m: m.tensor([1.1, 2.2, 3.3], dtype=m.float16),
        lambda m: m.tensor([1.123456, 300.7, -2.0], dtype=m.bfloat16),
        lambda m: m.zeros(0, 3),
        lambda m: m.zeros(2, 0, 4, dtype=m.int64),
        lambda m: m.zeros(0, dtype=m.bool),
        lambda m: m.zeros(0, dtype=m.float64),
        lambda m: m.tensor([1.0, 2.0], requires_grad=True),
        lambda m: m.tensor(2.0, requires_grad=True) * 3,
        lambda m: m.ones(3, 30, requires_grad=True) / 3,
        lambda m: m.arange(1001.0, requires_grad=True),
    ],
)
def test_repr_of_each_kind_is_torchs(make: Any) -> None:
    assert repr(make(cr)) == _ours(repr(make(torch)))


def test_a_suffix_past_the_line_width_goes_on_a_line_of_its_own() -> None:
    for n in range(10, 16):  # the last line grows one entry at a time
        ours, theirs = cr.ones(n, requires_grad=True) * 1.5, torch.ones(n, requires_grad=True) * 1.5
        assert repr(ours) == repr(theirs)


@pytest.mark.parametrize(
    "options",
    [
        {"precision": 2},
        {"precision": 7},
        {"sci_mode": True},
        {"sci_mode": False},
        {"threshold": 5},
        {"threshold": 5, "edgeitems": 1},
        {"threshold": 5, "edgeitems": 0},
        {"linewidth": 40},
        {"profile": "short"},
        {"profile": "full"},
    ],
    ids=str,
)
def test_set_printoptions_is_torchs(options: dict) -> None:
    makers = [
        lambda m: m.arange(12.0).reshape(3, 4) / 3,
        lambda m: m.tensor([1e-6, 1.0, 1e9]),
        lambda m: m.arange(20),
        lambda m: m.arange(1200.0).reshape(2, 3, 200),
        lambda m: m.tensor(3.14159265),
        lambda m: m.tensor([1.0, 2.0]),
    ]
    cr.set_printoptions(**options)
    torch.set_printoptions(**options)
    assert cr.get_printoptions() == torch._tensor_str.get_printoptions()
    for make in makers:
        assert repr(make(cr)) == _ours(repr(make(torch)))


def test_printoptions_is_a_block_and_a_bad_profile_is_named() -> None:
    with cr.printoptions(precision=1):
        assert repr(cr.tensor([1.25, 2.0])) == "tensor([1.2, 2.0])"
    assert repr(cr.tensor([1.25, 2.0])) == "tensor([1.2500, 2.0000])"
    with pytest.raises(ValueError, match=r"set_printoptions: profile must be one of .*'long'"):
        cr.set_printoptions(profile="long")


def test_repr_names_a_non_default_float_dtype() -> None:
    cr.set_default_dtype(cr.float64)
    torch.set_default_dtype(torch.float64)
    try:
        for make in (lambda m: m.tensor([1.0, 2.0]), lambda m: m.tensor([1.0], dtype=m.float32)):
            assert repr(make(cr)) == _ours(repr(make(torch)))
        assert repr(cr.zeros(0)) == _ours(repr(torch.zeros(0)))
    finally:
        cr.set_default_dtype(cr.float32)
        torch.set_default_dtype(torch.float32)


@pytest.mark.parametrize(
    "name",
    [
        "FloatTensor",
        "DoubleTensor",
        "HalfTensor",
        "BFloat16Tensor",
        "LongTensor",
        "IntTensor",
        "ShortTensor",
        "CharTensor",
        "ByteTensor",
        "BoolTensor",
    ],
)
def test_legacy_types_take_sizes_a_size_or_data_as_torchs(name: str) -> None:
    ours, theirs = getattr(cr, name), getattr(torch, name)
    for args in ((2, 3), (3,), (), ((2, 3),), ([1, 0],)):
        o, t = ours(*args), theirs(*args)
        assert o.shape == t.shape and torch_dtype_text(o.dtype) == str(t.dtype)
        assert isinstance(o, ours) and type(o) is cr.Tensor
    assert ours(cr.zeros(4, 5).shape).shape == theirs(torch.zeros(4, 5).shape).shape == (4, 5)
