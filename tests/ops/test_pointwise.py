"""The elementwise math beyond the operators against PyTorch where the catalog does not
reach: result dtypes of integer and bool inputs (or the refusal where PyTorch refuses), edge
values, 0-d and empty inputs, the in-place forms, node names and the error messages."""

from __future__ import annotations

import builtins
import contextlib
import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr

VALUES = {
    "float32": [[-2.5, -1.0, -0.0], [0.0, 0.5, 3.0]],
    "float64": [[-2.5, -1.0, -0.0], [0.0, 0.5, 3.0]],
    "int64": [[-3, -1, 0], [1, 2, 7]],
    "int32": [[-3, -1, 0], [1, 2, 7]],
    "bool": [[True, False, True], [False, True, True]],
}
OTHER = {  # a second operand of each dtype, nonzero (for fmod, gcd)
    "float32": [[1.5, -2.0, 0.25], [3.0, -0.5, 2.0]],
    "float64": [[1.5, -2.0, 0.25], [3.0, -0.5, 2.0]],
    "int64": [[2, -3, 5], [1, 4, 3]],
    "int32": [[2, -3, 5], [1, 4, 3]],
    "bool": [[True, True, True], [True, True, True]],
}
UNARY = (
    "tan asin acos atan sinh cosh asinh acosh atanh arcsin arccos arctan arcsinh arccosh "
    "arctanh reciprocal exp2 deg2rad rad2deg erfc erfinv lgamma digamma i0 sinc logit frac fix "
    "sgn signbit nan_to_num positive bitwise_not logical_not negative absolute isposinf "
    "isneginf isreal"
).split()
BINARY = (
    "atan2 arctan2 hypot logaddexp logaddexp2 xlogy ldexp float_power copysign fmod fmax fmin "
    "heaviside gcd lcm bitwise_and bitwise_or bitwise_xor bitwise_left_shift "
    "bitwise_right_shift logical_and logical_or logical_xor divide multiply subtract true_divide "
    "nextafter "
    "greater greater_equal less less_equal not_equal"
).split()


def _both(fn: Callable[[Any], Any], *values: Any) -> tuple[Any, Any]:
    """fn applied to chainrule's and torch's tensors of ``values`` ((data, dtype) pairs):
    each side's result, or the exception it raised."""
    out = []
    for m in (cr, torch):
        args = [m.tensor(v, dtype=getattr(m, d)) for v, d in values]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out.append(fn(*args))
        except Exception as e:  # a refusal, compared below
            out.append(e)
    return out[0], out[1]


def _agree(ours: Any, theirs: Any) -> None:
    if isinstance(theirs, Exception):
        assert isinstance(ours, Exception), f"PyTorch refuses ({theirs}); chainrule gave {ours}"
        return
    assert not isinstance(ours, Exception), f"chainrule refused ({ours}); PyTorch gave {theirs}"
    if isinstance(theirs, tuple):
        for o, t in zip(ours, theirs, strict=True):
            _agree(o, t)
        return
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert ours.shape == tuple(theirs.shape)
    want = theirs.detach().double().numpy() if theirs.dtype != torch.bool else theirs.numpy()
    np.testing.assert_allclose(ours.numpy().astype(want.dtype), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", list(VALUES))
@pytest.mark.parametrize("name", UNARY)
def test_unary_dtypes_and_refusals_are_torchs(name: str, dtype: str) -> None:
    ours, theirs = _both(lambda t: getattr(t, name)(), (VALUES[dtype], dtype))
    _agree(ours, theirs)


@pytest.mark.parametrize("dtypes", [("int64", "int32"), ("bool", "int64"), ("int32", "float32"),
                                    ("float32", "float64"), ("bool", "bool"), ("int64", "int64"),
                                    ("float64", "int64")], ids="&".join)  # fmt: skip
@pytest.mark.parametrize("name", BINARY)
def test_binary_dtypes_and_refusals_are_torchs(name: str, dtypes: tuple[str, str]) -> None:
    a, b = dtypes
    ours, theirs = _both(lambda x, y: getattr(x, name)(y), (VALUES[a], a), (OTHER[b], b))
    _agree(ours, theirs)


@pytest.mark.parametrize("name", ["atan2", "copysign", "xlogy", "fmod", "ldexp", "float_power"])
@pytest.mark.parametrize("number", [2, -1.5])
def test_a_number_operand_keeps_the_tensors_dtype(name: str, number: float) -> None:
    ours = getattr(cr.tensor(VALUES["float32"]), name)(number)
    other = torch.tensor(number) if name in ("atan2", "ldexp") else number  # torch's: tensors
    theirs = getattr(torch.tensor(VALUES["float32"]), name)(other)
    _agree(ours, theirs)


def test_frexp_returns_the_mantissa_and_an_int32_exponent() -> None:
    x = [0.0, -0.0, 1.0, -3.5, 1e-40, 3e38, math.inf, math.nan]
    ours, theirs = cr.frexp(cr.tensor(x)), torch.frexp(torch.tensor(x))
    assert ours.exponent.dtype == cr.int32 and ours.mantissa.dtype == cr.float32
    np.testing.assert_array_equal(ours.mantissa.numpy(), theirs.mantissa.numpy())
    np.testing.assert_array_equal(ours.exponent.numpy()[:6], theirs.exponent.numpy()[:6])


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8"])
@pytest.mark.parametrize("shift", [-1, 0, 3, 7, 8, 31, 32, 63, 64, 70])
def test_shifts_past_the_width_are_torchs(dtype: str, shift: int) -> None:
    data = [0, 1, 5, 100] if dtype == "uint8" else [-7, -1, 0, 1, 5, 2**20]
    for op in ("__lshift__", "__rshift__"):
        ours = getattr(cr.tensor(data, dtype=getattr(cr, dtype)), op)(shift)
        theirs = getattr(torch.tensor(data, dtype=getattr(torch, dtype)), op)(shift)
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_bitwise_operators_reflect_and_write_in_place() -> None:
    a, t = cr.tensor([5, 12, -3]), torch.tensor([5, 12, -3])
    for fn in (
        lambda x: 6 & x,
        lambda x: 6 | x,
        lambda x: 6 ^ x,
        lambda x: 1 << x.abs(),
        lambda x: 64 >> x.abs(),
        lambda x: ~x,
        lambda x: x & True,
    ):
        np.testing.assert_array_equal(fn(a).numpy(), fn(t).numpy())
    m, n = cr.tensor([True, False]), torch.tensor([True, False])
    assert (m & n.numpy()).dtype == cr.bool and (m ^ True).tolist() == (n ^ True).tolist()
    for op in ("__iand__", "__ior__", "__ixor__", "__ilshift__", "__irshift__"):
        x, y = a.clone(), t.clone()
        assert getattr(x, op)(2) is x
        getattr(y, op)(2)
        np.testing.assert_array_equal(x.numpy(), y.numpy())


@pytest.mark.parametrize("x", [[0.0, 1e-30, -1e-30, 1.0, 10.0, math.inf, -math.inf, math.nan]])
@pytest.mark.parametrize(
    "name", ["digamma", "lgamma", "erfinv", "erfc", "i0", "sinc", "logit", "reciprocal", "exp2"]
)
def test_special_values_are_torchs(name: str, x: list[float]) -> None:
    for dtype in ("float32", "float64"):
        ours, theirs = _both(lambda t: getattr(t, name)(), (x, dtype))
        want = theirs.numpy()
        np.testing.assert_allclose(ours.numpy(), want, rtol=2e-6, equal_nan=True)


@pytest.mark.parametrize("p", [1, 2, 5])
def test_mvlgamma_matches_torch_and_refuses_p_below_1(p: int) -> None:
    data = [2.6, 3.5, 7.25]
    ours, theirs = cr.tensor(data).mvlgamma(p), torch.tensor(data).mvlgamma(p)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)
    with pytest.raises(ValueError, match=r"^mvlgamma: p must be an integer >= 1; got 0$"):
        cr.mvlgamma(cr.tensor(data), 0)


def test_polygamma_takes_torchs_argument_order_and_refuses_a_negative_n() -> None:
    x = cr.tensor([0.5, 2.0])
    np.testing.assert_allclose(
        cr.polygamma(2, x).numpy(), torch.polygamma(2, torch.tensor([0.5, 2.0])).numpy(), 1e-6
    )
    assert cr.polygamma(x, 2).tolist() == cr.polygamma(2, x).tolist()
    with pytest.raises(ValueError, match=r"^polygamma: n must be a non-negative integer; got -1$"):
        x.polygamma(-1)


@pytest.mark.parametrize("eps", [None, 0.2])
def test_logit_gradient_outside_its_range_is_torchs(eps: float | None) -> None:
    data = [-0.5, 0.1, 0.5, 0.9, 1.5]
    x, t = cr.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    (gx,) = cr.grad(x.logit(eps).sum(), x)
    (gt,) = torch.autograd.grad(t.logit(eps).sum(), t)
    np.testing.assert_allclose(gx.numpy(), gt.numpy(), rtol=1e-6, equal_nan=True)


def test_nan_to_num_replacements_and_gradient() -> None:
    data = [math.nan, math.inf, -math.inf, 1.5]
    x, t = cr.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    for kwargs in ({}, {"nan": 2.0, "posinf": 9.0, "neginf": -9.0}):
        np.testing.assert_array_equal(
            x.nan_to_num(**kwargs).detach().numpy(), t.nan_to_num(**kwargs).detach().numpy()
        )
    assert cr.grad(x.nan_to_num().sum(), x)[0].tolist() == [0.0, 0.0, 0.0, 1.0]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # 3e38 and 1e300 made half precision
@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float32", "float64"])
@pytest.mark.parametrize("shape", [(), (10,)])
def test_nan_to_num_of_every_float_dtype_against_torch(dtype: str, shape: tuple) -> None:
    """Every replacement given or left to the dtype's limits (bfloat16's too, which NumPy's
    nan_to_num passes over), one beyond the dtype's range, finite values past the given
    numbers kept, and -0.0."""
    data = np.array([math.nan, math.inf, -math.inf, 1.5, -0.0, 3e38, -3e38, 65504.0, 1e-40, 7.0])
    for kwargs in (
        {},
        {"nan": 1.0, "posinf": 2.0, "neginf": -3.0},
        {"posinf": 1e300},
        {"nan": 0.5, "neginf": -7.0},
    ):
        for v in data if shape == () else [data]:
            ours, theirs = _both(lambda x, kw=kwargs: x.nan_to_num(**kw), (v, dtype))
            got, want = ours.float().numpy(), theirs.float().numpy()
            assert ours.dtype == getattr(cr, dtype) and got.shape == shape
            np.testing.assert_array_equal(got, want)
            assert np.array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda m, a, b: a.copysign(b), "CopysignBackward0"),
        (lambda m, a, b: a.copysign(2.0), "CopysignBackward1"),
        (lambda m, a, b: a.fmod(b), "FmodBackward1"),
        (lambda m, a, b: a.fmod(2.0), "FmodBackward0"),
        (lambda m, a, b: a.xlogy(b), "XlogyBackward0"),
        (lambda m, a, b: a.xlogy(2.0), "XlogyBackward2"),
        (lambda m, a, b: a.polygamma(0), "PolygammaBackward0"),
        (lambda m, a, b: a.float_power(b), "PowBackward1"),
    ],
)
def test_node_names_are_torchs(call: Any, name: str) -> None:
    for m in (cr, torch):
        a = m.tensor([0.5, -1.5], requires_grad=True)
        b = m.tensor([2.0, 3.0], requires_grad=True)
        assert call(m, a, b).grad_fn.name() == name


def test_in_place_forms_write_into_the_tensor_and_pass_gradients() -> None:
    data = [0.2, -0.4, 0.7]
    for name, args in [("tan_", ()), ("sinh_", ()), ("erfinv_", ()), ("hypot_", ([1.0] * 3,)),
                       ("clamp_min_", (0.0,)), ("clamp_max_", (0.1,)), ("logit_", (0.3,)),
                       ("xlogy_", (2.0,)), ("polygamma_", (1,)), ("divide_", (2.0,)),
                       ("round_", ()), ("floor_", ()), ("remainder_", (0.3,)),
                       ("mvlgamma_", (1,))]:  # fmt: skip
        x, t = cr.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
        y, u = x * 1.0, t * 1.0
        targs = [torch.tensor(a) if isinstance(a, list) else a for a in args]
        cargs = [cr.tensor(a) if isinstance(a, list) else a for a in args]
        version = y._version
        assert getattr(y, name)(*cargs) is y and y._version > version
        getattr(u, name)(*targs)
        np.testing.assert_allclose(y.detach().numpy(), u.detach().numpy(), rtol=1e-6)
        (gx,) = cr.grad(y.sum(), x)
        (gt,) = torch.autograd.grad(u.sum(), t)
        np.testing.assert_allclose(gx.numpy(), gt.numpy(), rtol=1e-5)


SPECIAL = [0.0, -0.0, math.nan, -math.inf, math.inf, 1e-45, -1e-45, 3e38, -3e38, 2.5, -2.5]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # 3e38 in float16, frac of inf
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize(
    "name, kwargs",
    [("sign_", {}), ("sgn_", {}), ("frac_", {}), ("floor_", {}), ("ceil_", {}), ("trunc_", {}),
     ("rsqrt_", {}), ("nan_to_num_", {}),
     ("nan_to_num_", {"nan": 0.5, "posinf": 1.0, "neginf": -2.0}),
     ("nan_to_num_", {"nan": math.inf, "posinf": 7.0, "neginf": math.nan})],
)  # fmt: skip
def test_unary_in_place_forms_write_torchs_values_into_the_array(
    name: str, kwargs: dict, dtype: str
) -> None:
    # 0-d, a strided view and ±0, NaN, infinities, denormals: the bits of PyTorch's result,
    # in the tensor's own buffer (with the switch on, the op's forward writes it directly)
    rng = np.random.default_rng(0)
    data = np.concatenate([SPECIAL, rng.standard_normal(29) * 4]).astype(dtype)
    ours, theirs = cr.tensor(data), torch.tensor(data)
    buffer, version = ours.numpy(), ours._version
    for o, t in [(ours[::2], theirs[::2]), (ours[1], theirs[1]), (ours, theirs)]:
        assert getattr(o, name)(**kwargs) is o
        getattr(t, name)(**kwargs)
    assert ours.numpy() is buffer or np.shares_memory(ours.numpy(), buffer)
    assert ours._version > version
    if name == "rsqrt_" and dtype == "float16":  # PyTorch's rounds float32's 1 / sqrt once
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-3)
        return
    np.testing.assert_array_equal(ours.numpy().view(np.uint8), theirs.numpy().view(np.uint8))


@pytest.mark.parametrize("name", ["eq_", "ne_", "lt_", "le_", "gt_", "ge_", "greater_",
                                  "less_equal_", "logical_and_", "logical_xor_",
                                  "nextafter_", "floor_divide_"])  # fmt: skip
def test_comparisons_in_place_keep_the_tensors_dtype(name: str) -> None:
    for dtype in ("float32", "int64"):
        ours, theirs = _both(
            lambda a, b: getattr(a, name)(b), (VALUES[dtype], dtype), (OTHER[dtype], dtype)
        )
        _agree(ours, theirs)


def test_in_place_forms_refuse_what_their_dtype_cannot_hold() -> None:
    with pytest.raises(RuntimeError, match=r"^tan_: the result's dtype float32 cannot be"):
        cr.tensor([1, 2]).tan_()
    with pytest.raises(RuntimeError, match=r"^float_power_: the base must be float64"):
        cr.tensor([1.0, 2.0]).float_power_(2)
    with pytest.raises(TypeError, match=r"^tan_: writes in place, so input must be a Tensor"):
        cr.tan_([1.0])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: cr.tensor([1.5]) & 1, TypeError,
         r"^bitwise_and: needs bool or integer tensors; got chainrule\.float32 and int$"),
        (lambda: cr.tensor([1.5]).bitwise_not(), TypeError,
         r"^bitwise_not: needs a bool or integer tensor; got dtype chainrule\.float32$"),
        (lambda: cr.tensor([True]).gcd(cr.tensor([True])), TypeError,
         r"^gcd: needs integer tensors \(not bool or floating\); got chainrule\.bool and "),
        (lambda: cr.tensor([1, 2]).frac(), TypeError,
         r"^frac: needs a floating-point tensor; got dtype chainrule\.int64$"),
        (lambda: cr.tensor([1, 2]).frexp(), TypeError,
         r"^frexp: needs a floating-point tensor; got dtype chainrule\.int64$"),
        (lambda: cr.tensor([1, 2]).hypot(cr.tensor([1, 2])), TypeError,
         r"^hypot: needs floating-point tensors, as in PyTorch; got chainrule\.int64 and "),
        (lambda: cr.tensor([1.0]).heaviside(cr.tensor([1])), TypeError,
         r"^heaviside: values must be a tensor of input's dtype; got chainrule\.float32 and "),
        (lambda: cr.tensor([True]).positive(), TypeError,
         r"^positive: not defined for bool tensors, as in PyTorch; got chainrule\.bool$"),
        (lambda: cr.tensor([3, 4]).fmod(cr.tensor([1, 0])), RuntimeError,
         r"^fmod: integer division by zero"),
        (lambda: cr.tensor([[1.0, 2.0]]).atan2(cr.tensor([1.0, 2.0, 3.0])), ValueError,
         r"^atan2: shapes \(1, 2\) and \(3,\) cannot be broadcast together$"),
        (lambda: cr.tensor([1, 2]).logical_and(cr.tensor([1, 2, 3])), ValueError,
         r"^logical_and: shapes \(2,\) and \(3,\) cannot be broadcast together$"),
    ],
)  # fmt: skip
def test_errors_name_the_op_and_what_is_wrong(call: Any, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        call()


@pytest.mark.parametrize("shape", [(), (0,), (2, 0, 3)])
@pytest.mark.parametrize("name", ["tan", "erfinv", "digamma", "sinc", "frac", "logaddexp", "fmax"])
def test_zero_dim_and_empty_inputs(shape: tuple[int, ...], name: str) -> None:
    data = np.full(shape, 0.25, dtype=np.float32)
    binary = name in ("logaddexp", "fmax")

    def call(t: Any) -> Any:
        return getattr(t, name)(t) if binary else getattr(t, name)()

    ours, theirs = call(cr.tensor(data)), call(torch.tensor(data))
    _agree(ours, theirs)


def test_a_missing_scipy_is_named_with_the_extra_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real_import = builtins.__import__

    def no_scipy(name: str, *args: Any, **kwargs: Any) -> Any:
        if name.startswith("scipy"):
            raise ImportError("No module named 'scipy'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_scipy)
    with pytest.raises(ImportError, match=r"^erfinv: .*pip install chainrule\[special\]$"):
        cr.tensor([0.5]).erfinv()


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("name", ["logaddexp", "logaddexp2"])
@pytest.mark.parametrize("switch", [True, False])
def test_logaddexp_of_many_values_and_of_infinities(name: str, dtype: str, switch: bool) -> None:
    """Past the few values NumPy's own ufunc serves: max + log1p(exp(min - max)), equal
    infinities (whose difference is NaN) giving that infinity, as PyTorch's."""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 40, 10)) * 30
    a[0, :5], b[0, :5] = [np.inf, -np.inf, np.inf, np.nan, 2.0], [np.inf, -np.inf, -np.inf, 1, 2]
    with contextlib.nullcontext() if switch else cr.fastpath.disabled():
        ours, theirs = _both(lambda x, y: getattr(x, name)(y), (a, dtype), (b, dtype))
    if dtype == "float16":  # both round PyTorch's float32 sum
        np.testing.assert_allclose(ours.float().numpy(), theirs.float().numpy(), rtol=1e-3)
    else:
        _agree(ours, theirs)
    assert np.array_equal(np.isnan(ours.numpy()), np.isnan(theirs.numpy()))


@pytest.mark.parametrize(
    "shapes", [((2, 40, 30), (40, 1), (1, 30)), ((40, 30), (2, 1, 1), (30,)), ((), (), ())]
)
@pytest.mark.parametrize("switch", [True, False])
def test_lerp_by_a_tensor_weight_of_every_side_against_torch(shapes: tuple, switch: bool) -> None:
    """A tensor weight on both sides of 0.5, +-1, NaN and past 1, each operand the largest in
    turn (the weight's shape wider than the ends', an end's narrower than the result's), with
    infinities and signed zeros in the ends: PyTorch's values, its NaNs where it has them."""
    rng = np.random.default_rng(0)
    w, a, b = (rng.standard_normal(s) for s in shapes)
    w.reshape(-1)[:8] = [0.5, -0.5, 1.0, -1.0, np.nan, 2.5, 0.49999997, 0.0][: w.size]
    a.reshape(-1)[:2] = [np.inf, -0.0][: a.size]
    b.reshape(-1)[:2] = [-0.0, np.inf][: b.size]
    with contextlib.nullcontext() if switch else cr.fastpath.disabled():
        ours, theirs = _both(
            lambda x, y, z: x.lerp(y, z), (a, "float32"), (b, "float32"), (w, "float32")
        )
    _agree(ours, theirs)
    assert np.array_equal(np.isnan(ours.numpy()), np.isnan(theirs.numpy()))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("shape", [(), (8,)])
def test_sign_is_zero_at_nan_and_positive_zero_at_negative_zero_as_torch(
    dtype: str, shape: tuple
) -> None:
    """sign and sgn: +0 at -0.0 in the half dtypes too (bfloat16 gave -0.0)."""
    data = np.array([math.nan, -0.0, 0.0, 1e-45, -2.5, math.inf, -math.inf, 7.0])
    for v in data if shape == () else [data]:
        for fn in (lambda x: x.sign(), lambda x: x.clone().sign_(), lambda x: x.sgn()):
            ours, theirs = _both(fn, (v, dtype))
            got, want = ours.double().numpy(), theirs.double().numpy()
            assert ours.dtype == getattr(cr, dtype) and got.shape == shape
            np.testing.assert_array_equal(got, want)
            assert np.array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_tanh_gradient_near_saturation_is_torchs_to_an_ulp(dtype: str) -> None:
    """1 - tanh(x)^2 where tanh(x) nears 1: PyTorch's fused kernel rounds once; 1 - out * out
    lost digits there (8.6e-5 relative in float32), (1 - out)(1 + out) does not. Compared on
    chainrule's own outputs (the two libraries' tanh may differ by an ulp, which near 1 is
    a large part of 1 - out^2); forward mode's tangent takes the same form."""
    x = cr.tensor(np.linspace(-9.0, 9.0, 2001), dtype=getattr(cr, dtype), requires_grad=True)
    out = x.tanh()
    seed = np.random.default_rng(0).normal(size=2001)
    out.backward(cr.tensor(seed, dtype=x.dtype))
    expected = torch.ops.aten.tanh_backward(
        torch.tensor(seed, dtype=getattr(torch, dtype)), torch.tensor(out.detach().numpy())
    ).numpy()
    eps = float(np.finfo(dtype).eps)
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=2 * eps, atol=0)
    with cr.autograd.forward_ad.dual_level():
        dual = cr.autograd.forward_ad.make_dual(x.detach(), cr.tensor(seed, dtype=x.dtype))
        tangent = cr.autograd.forward_ad.unpack_dual(dual.tanh()).tangent
    np.testing.assert_allclose(tangent.numpy(), expected, rtol=2 * eps, atol=0)
