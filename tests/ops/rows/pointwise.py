"""Catalog rows of the elementwise math beyond the operators (tensor/pointwise.py): the
trigonometric and hyperbolic families, the special functions, the floating binary ops."""

from __future__ import annotations

from tests.ops.rows import NUM, Row

# Inputs are drawn per domain (real: normal; pos: in [0.5, 2]; away: |x| in [0.2, 2]), and
# scaled inside the call where an op's domain is narrower.
UNARY = [
    ("tan", lambda m, a: (a * 0.5).tan(), "real"),
    ("asin", lambda m, a: (a * 0.4).asin(), "pos"),
    ("acos", lambda m, a: (a * -0.4).acos(), "pos"),
    ("atan", lambda m, a: a.atan(), "real"),
    ("sinh", lambda m, a: a.sinh(), "real"),
    ("cosh", lambda m, a: a.cosh(), "real"),
    ("asinh", lambda m, a: a.asinh(), "real"),
    ("acosh", lambda m, a: (a + 1.0).acosh(), "pos"),
    ("atanh", lambda m, a: (a * 0.4).atanh(), "pos"),
    ("arcsin_fn", lambda m, a: m.arcsin(a * 0.4), "pos"),
    ("arctanh_fn", lambda m, a: m.arctanh(a * -0.4), "pos"),
    ("reciprocal", lambda m, a: a.reciprocal(), "away"),
    ("exp2", lambda m, a: a.exp2(), "real"),
    ("deg2rad", lambda m, a: a.deg2rad(), "real"),
    ("rad2deg", lambda m, a: m.rad2deg(a), "real"),
    ("frac", lambda m, a: (a * 3.0).frac(), "real"),
    ("nan_to_num", lambda m, a: (a.log() * 0.5).nan_to_num(), "pos"),
    ("erfc", lambda m, a: (a * 2.0).erfc(), "real"),
    ("erfinv", lambda m, a: (a * 0.4).erfinv(), "pos"),
    ("lgamma", lambda m, a: (a * 3.0).lgamma(), "pos"),
    ("digamma", lambda m, a: a.digamma(), "pos"),
    ("polygamma1", lambda m, a: a.polygamma(1), "pos"),
    ("polygamma3_fn", lambda m, a: m.polygamma(3, a), "pos"),
    ("i0", lambda m, a: (a * 2.0).i0(), "real"),
    ("mvlgamma3", lambda m, a: (a + 1.5).mvlgamma(3), "pos"),
    ("sinc", lambda m, a: a.sinc(), "away"),
    ("logit", lambda m, a: (a * 0.4).logit(), "pos"),
    ("logit_eps", lambda m, a: (a * 0.5).logit(eps=0.3), "pos"),
    ("sgn", lambda m, a: a.sgn() * a, "away"),
    ("frexp", lambda m, a: m.frexp(a * 5.0)[0], "away"),
]

SETS = [((2, 3), (2, 3)), ((), (2, 3)), ((3, 1), (1, 4)), ((2, 3), NUM)]

BINARY = [
    ("atan2", lambda m, a, b: a.atan2(b), ("real", "away")),
    ("hypot", lambda m, a, b: m.hypot(a, b), ("away", "away")),
    ("logaddexp", lambda m, a, b: a.logaddexp(b), ("real", "real")),
    ("logaddexp2", lambda m, a, b: m.logaddexp2(a, b), ("real", "real")),
    ("xlogy", lambda m, a, b: a.xlogy(b), ("real", "pos")),
    ("copysign", lambda m, a, b: a.copysign(b), ("away", "away")),
    ("fmod", lambda m, a, b: (a * 3.0).fmod(b), ("real", "away")),
    ("fmax", lambda m, a, b: a.fmax(b), ("real", "real")),
    ("fmin", lambda m, a, b: m.fmin(a, b), ("real", "real")),
    ("ldexp", lambda m, a, b: a.ldexp(b), ("real", "real")),
    ("float_power", lambda m, a, b: a.float_power(b), ("pos", "real")),
    ("nextafter", lambda m, a, b: a.nextafter(b), ("real", "real")),
]

# the binary ops whose PyTorch forms take a Python number as other (the rest take tensors)
NUMBERS = ("xlogy", "copysign", "fmod", "float_power")

ROWS: list[Row] = []
for _name, _fn, _dom in UNARY:
    ROWS.append(Row(_name, _fn, ((2, 3, 4),), _dom, second=_name != "frexp"))
    ROWS.append(Row(_name + "[0d]", _fn, ((),), _dom))
for _name, _fn, _doms in BINARY:
    for _shapes in SETS:
        _label = "&".join("num" if s is NUM else str(s).replace(" ", "") for s in _shapes)
        if NUM in _shapes and _name not in NUMBERS:
            continue
        ROWS.append(Row(f"{_name}[{_label}]", _fn, _shapes, _doms, second=True))

# the in-place forms and predicates no other row calls
ROWS += [
    Row("ceil_", lambda m, a: (a * 3.0).ceil_(), ((2, 3),), grad=False),
    Row("floor_", lambda m, a: (a * 3.0).floor_(), ((2, 3),), grad=False),
    Row("round_", lambda m, a: (a * 3.0).round_(decimals=1), ((2, 3),), grad=False),
    Row("floor_divide_", lambda m, a, b: (a * 3.0).floor_divide_(b), ((2, 3), (2, 3)),
        ("real", "away"), grad=False),
    Row("remainder_", lambda m, a, b: (a * 3.0).remainder_(b), ((2, 3), (3,)), ("real", "away")),
    Row("nextafter_", lambda m, a, b: (a * 1.0).nextafter_(b), ((2, 3), (2, 3))),
    Row("mvlgamma_", lambda m, a: (a + 1.5).mvlgamma_(2), ((2, 3),), "pos"),
    Row("isposinf", lambda m, a: (a / 0.0).isposinf(), ((2, 3),), "away", grad=False),
    Row("isneginf", lambda m, a: m.isneginf(a / 0.0), ((2, 3),), "away", grad=False),
    Row("isreal", lambda m, a: a.isreal(), ((2, 3),), grad=False),
]  # fmt: skip
