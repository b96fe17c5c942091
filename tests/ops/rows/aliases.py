"""Catalog rows of PyTorch's other spellings (``arccos`` for ``acos``, ``greater`` for ``gt``,
``fix`` for ``trunc``) and of the in-place forms (``asin_``, ``bitwise_and_``): each is run on
a fresh non-leaf (``a * k``), so its gradient flows through the write as PyTorch's does."""

from __future__ import annotations

from typing import Any

from tests.ops.rows import Row

S = ((2, 3),)  # one input
SS = ((2, 3), (2, 3))  # two of the same shape
SB = ((2, 3), (3,))  # the second broadcast


def ints(t: Any, scale: float = 4.0) -> Any:
    """Small integers drawn from a float input: the integer ops' operands."""
    return (t * scale).long()


def shifts(t: Any) -> Any:
    """Shift amounts in 0..7."""
    return (t * t * 2.0).long()


# name, call, domain: the unary spellings and in-place forms that carry a gradient
UNARY = [
    ("absolute", lambda m, a: a.absolute(), "away"),
    ("absolute_", lambda m, a: (a * 1.5).absolute_(), "away"),
    ("acos_", lambda m, a: (a * 0.4).acos_(), "pos"),
    ("arccos", lambda m, a: (a * 0.4).arccos(), "pos"),
    ("arccos_", lambda m, a: (a * -0.4).arccos_(), "pos"),
    ("arccosh", lambda m, a: (a + 1.0).arccosh(), "pos"),
    ("arcsin_", lambda m, a: (a * 0.4).arcsin_(), "pos"),
    ("arcsinh", lambda m, a: a.arcsinh(), "real"),
    ("arctan", lambda m, a: a.arctan(), "real"),
    ("arctan_", lambda m, a: (a * 1.5).arctan_(), "real"),
    ("asin_", lambda m, a: (a * -0.4).asin_(), "pos"),
    ("atan_", lambda m, a: (a * 0.5).atan_(), "real"),
    ("cosh_", lambda m, a: (a * 0.5).cosh_(), "real"),
    ("deg2rad_", lambda m, a: (a * 30.0).deg2rad_(), "real"),
    ("digamma_", lambda m, a: (a * 1.5).digamma_(), "pos"),
    ("erf_", lambda m, a: (a * 0.5).erf_(), "real"),
    ("erfc_", lambda m, a: (a * 0.5).erfc_(), "real"),
    ("exp2_", lambda m, a: (a * 0.5).exp2_(), "real"),
    ("frac_", lambda m, a: (a * 3.0).frac_(), "real"),
    ("i0_", lambda m, a: (a * 2.0).i0_(), "real"),
    ("lgamma_", lambda m, a: (a * 3.0).lgamma_(), "pos"),
    ("log10_", lambda m, a: (a * 2.0).log10_(), "pos"),
    ("log2_", lambda m, a: (a * 2.0).log2_(), "pos"),
    ("nan_to_num_", lambda m, a: (a.log() * 0.5).nan_to_num_(nan=0.5), "pos"),
    ("negative", lambda m, a: a.negative(), "real"),
    ("negative_", lambda m, a: (a * 2.0).negative_(), "real"),
    ("rad2deg_", lambda m, a: (a * 0.5).rad2deg_(), "real"),
    ("reciprocal_", lambda m, a: (a * 2.0).reciprocal_(), "away"),
    ("rsqrt_", lambda m, a: (a * 2.0).rsqrt_(), "pos"),
    ("sgn_", lambda m, a: (a * 2.0).sgn_() * a, "away"),
    ("sinc_", lambda m, a: (a * 0.5).sinc_(), "away"),
    ("square_", lambda m, a: (a * 2.0).square_(), "real"),
]

# name, call, domains: the binary spellings and in-place forms that carry a gradient
BINARY = [
    ("arctan2", lambda m, a, b: a.arctan2(b), ("real", "away")),
    ("arctan2_", lambda m, a, b: (a * 1.5).arctan2_(b), ("real", "away")),
    ("atan2_", lambda m, a, b: (a * 0.5).atan2_(b), ("real", "away")),
    ("copysign_", lambda m, a, b: (a * 2.0).copysign_(b), ("away", "away")),
    ("divide", lambda m, a, b: a.divide(b), ("real", "away")),
    ("divide_trunc", lambda m, a, b: (a * 3.0).divide(b, rounding_mode="trunc"), ("real", "away")),
    ("fmod_", lambda m, a, b: (a * 3.0).fmod_(b), ("real", "away")),
    ("ldexp_", lambda m, a, b: (a * 1.0).ldexp_(b), ("real", "real")),
    ("multiply_", lambda m, a, b: (a * 2.0).multiply_(b), ("real", "real")),
    ("subtract_", lambda m, a, b: (a * 2.0).subtract_(b, alpha=0.5), ("real", "real")),
    ("true_divide", lambda m, a, b: a.true_divide(b), ("real", "away")),
    ("true_divide_", lambda m, a, b: (a * 2.0).true_divide_(b), ("real", "away")),
]

# name, call, shapes: results without a gradient (comparisons, integer and logical ops)
NO_GRAD = [
    ("fix", lambda m, a: (a * 3.0).fix(), S),
    ("fix_", lambda m, a: (a * 3.0).fix_(), S),
    ("trunc_", lambda m, a: (a * 3.0).trunc_(), S),
    ("sign_", lambda m, a: (a * 2.0).sign_(), S),
    ("heaviside_", lambda m, a, b: (a * 1.0).heaviside_(b), SB),
    ("ge", lambda m, a, b: a.ge(b), SB),
    ("greater", lambda m, a, b: a.greater(b), SB),
    ("greater_equal", lambda m, a, b: a.greater_equal(b), SB),
    ("greater_equal_", lambda m, a, b: (a * 1.0).greater_equal_(b), SB),
    ("le", lambda m, a, b: a.le(b), SB),
    ("less_", lambda m, a, b: (a * 1.0).less_(b), SB),
    ("less_equal", lambda m, a, b: a.less_equal(b), SB),
    ("lt", lambda m, a, b: a.lt(b), SB),
    ("ne", lambda m, a, b: ints(a).ne(ints(b)), SB),
    ("not_equal", lambda m, a, b: ints(a).not_equal(ints(b)), SB),
    ("not_equal_", lambda m, a, b: ints(a * 1.0).float().not_equal_(ints(b)), SB),
    ("logical_not", lambda m, a: ints(a).logical_not(), S),
    ("logical_not_", lambda m, a: (ints(a) * 1.0).logical_not_(), S),
    ("logical_or", lambda m, a, b: ints(a).logical_or(ints(b)), SB),
    ("logical_or_", lambda m, a, b: (ints(a) * 1.0).logical_or_(ints(b)), SB),
    ("logical_xor", lambda m, a, b: ints(a).logical_xor(b), SB),
    ("bitwise_and", lambda m, a, b: ints(a).bitwise_and(ints(b)), SB),
    ("bitwise_and_", lambda m, a, b: ints(a).bitwise_and_(ints(b)), SB),
    ("bitwise_or", lambda m, a, b: ints(a).bitwise_or(ints(b)), SB),
    ("bitwise_or_", lambda m, a, b: ints(a).bitwise_or_(ints(b)), SB),
    ("bitwise_xor", lambda m, a, b: ints(a).bitwise_xor(ints(b)), SB),
    ("bitwise_xor_", lambda m, a, b: ints(a).bitwise_xor_(ints(b)), SB),
    ("bitwise_not_", lambda m, a: ints(a).bitwise_not_(), S),
    ("bitwise_left_shift", lambda m, a, b: ints(a).bitwise_left_shift(shifts(b)), SB),
    ("bitwise_left_shift_", lambda m, a, b: ints(a).bitwise_left_shift_(shifts(b)), SB),
    ("bitwise_right_shift", lambda m, a, b: ints(a, 40.0).bitwise_right_shift(shifts(b)), SB),
    ("bitwise_right_shift_", lambda m, a, b: ints(a, 40.0).bitwise_right_shift_(shifts(b)), SB),
    ("gcd_", lambda m, a, b: ints(a, 9.0).gcd_(ints(b, 6.0)), SB),
    ("lcm_", lambda m, a, b: ints(a, 9.0).lcm_(ints(b, 6.0)), SB),
    ("argwhere", lambda m, a: (a > 0.3).argwhere(), S),
]

# PyTorch has no derivative for these in-place forms (its backward refuses them); chainrule's is
# the out-of-place op's, so the rows compare with PyTorch's out-of-place gradient.
NO_TORCH_INPLACE_GRAD = [
    ("acosh_", lambda m, a: (a + 1.0).acosh_(), lambda m, a: (a + 1.0).acosh(), "pos"),
    ("arccosh_", lambda m, a: (a + 1.2).arccosh_(), lambda m, a: (a + 1.2).acosh(), "pos"),
    ("arcsinh_", lambda m, a: (a * 1.5).arcsinh_(), lambda m, a: (a * 1.5).asinh(), "real"),
    ("arctanh_", lambda m, a: (a * 0.4).arctanh_(), lambda m, a: (a * 0.4).atanh(), "pos"),
    ("asinh_", lambda m, a: (a * 0.5).asinh_(), lambda m, a: (a * 0.5).asinh(), "real"),
    ("atanh_", lambda m, a: (a * -0.4).atanh_(), lambda m, a: (a * -0.4).atanh(), "pos"),
]

ROWS = (
    [Row(name, fn, S, domain) for name, fn, domain in UNARY]
    + [Row(name, fn, S, dom, torch_fn=ref) for name, fn, ref, dom in NO_TORCH_INPLACE_GRAD]
    + [Row(name, fn, SS, domains) for name, fn, domains in BINARY]
    + [Row(name, fn, shapes, grad=False) for name, fn, shapes in NO_GRAD]
    + [
        Row("clip_", lambda m, a: (a * 2.0).clip_(-0.5, 0.7), S),
        Row("clip__tensor_bounds", lambda m, a, b: (a * 2.0).clip_(max=b), SB),
        Row("unsafe_split", lambda m, a: a.unsafe_split(2, dim=1)[1] * 2.0, ((2, 5),)),
        Row(
            "index_reduce__mean",
            lambda m, a, b: (a * 1.0).index_reduce_(0, m.tensor([0, 2, 0]), b, "mean"),
            ((3, 4), (3, 4)),
        ),
        Row(
            "index_reduce__prod_exclusive",
            lambda m, a, b: (a * 1.0).index_reduce_(
                1, m.tensor([3, 1, 3]), b, "prod", include_self=False
            ),
            ((2, 4), (2, 3)),
            "away",
        ),
        Row(
            "index_reduce__amax",
            lambda m, a, b: (a * 1.0).index_reduce_(0, m.tensor([1, 1]), b, "amax"),
            ((3, 2), (2, 2)),
        ),
    ]
)
