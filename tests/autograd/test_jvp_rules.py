"""Each op's own jvp rule (forward_ad.JVP_RULES) against PyTorch's forward mode, and against
the double-backward route every other op takes: the same tangent, broadcasting included."""

import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as tfa

import chainrule as cr
import chainrule.autograd.forward_ad as fa

rng = np.random.default_rng(0)

# (rule name, a function of chainrule's or torch's module and the inputs, input shapes)
CASES = [
    ("Add", lambda m, a, b: a + b, [(3, 1), (1, 4)]),
    ("Sub", lambda m, a, b: a - b, [(2, 3, 4), (4,)]),
    ("Mul", lambda m, a, b: a * b, [(3, 1), (1, 4)]),
    ("Div", lambda m, a, b: a / (b * b + 1), [(2, 3), (3,)]),
    ("Neg", lambda m, a: -a, [(3,)]),
    ("Exp", lambda m, a: a.exp(), [(2, 3)]),
    ("Log", lambda m, a: (a * a + 1).log(), [(2, 3)]),
    ("Sqrt", lambda m, a: (a * a + 1).sqrt(), [(2, 3)]),
    ("Sin", lambda m, a: a.sin(), [(4,)]),
    ("Cos", lambda m, a: a.cos(), [(4,)]),
    ("Tanh", lambda m, a: a.tanh(), [(2, 3)]),
    ("Sigmoid", lambda m, a: a.sigmoid(), [(2, 3)]),
    ("Relu", lambda m, a: a.relu(), [(2, 3)]),
    ("Sum", lambda m, a: a.sum(dim=1, keepdim=True), [(2, 3)]),
    ("Mean", lambda m, a: a.mean(), [(2, 3)]),
    ("MatMul", lambda m, a, b: a @ b, [(2, 3), (3, 4)]),
    ("Linear", lambda m, x, w, b: m.nn.functional.linear(x, w, b), [(5, 3), (4, 3), (4,)]),
    ("Linear", lambda m, x, w: m.nn.functional.linear(x, w), [(5, 3), (4, 3)]),
    ("Softmax", lambda m, a: a.softmax(dim=-1), [(2, 5)]),
    ("LogSoftmax", lambda m, a: a.log_softmax(dim=0), [(2, 5)]),
]


def _tangent(lib, fad, fn, primals, tangents):
    with fad.dual_level():
        duals = [
            fad.make_dual(p, t) if t is not None else p
            for p, t in zip(primals, tangents, strict=True)
        ]
        return fad.unpack_dual(fn(lib, *duals)).tangent


@pytest.mark.parametrize("name,fn,shapes", CASES, ids=[c[0] for c in CASES])
def test_jvp_rule_matches_torch_and_the_double_backward_route(name, fn, shapes, monkeypatch):
    assert name in fa.JVP_RULES
    xs = [rng.standard_normal(s) for s in shapes]
    ts = [rng.standard_normal(s) for s in shapes]
    ts[-1] = None if len(shapes) > 1 else ts[-1]  # an input without a tangent, where two
    want = _tangent(
        torch, tfa, fn, [torch.tensor(x) for x in xs],
        [None if t is None else torch.tensor(t) for t in ts],
    )  # fmt: skip
    ours = [cr.tensor(x) for x in xs]
    tans = [None if t is None else cr.tensor(t) for t in ts]
    got = _tangent(cr, fa, fn, ours, tans)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10, atol=1e-12)
    monkeypatch.delitem(fa.JVP_RULES, name)
    slow = _tangent(cr, fa, fn, ours, tans)
    np.testing.assert_allclose(got.numpy(), slow.numpy(), rtol=1e-10, atol=1e-12)


def test_jvp_rules_stay_differentiable_for_forward_over_reverse():
    x = cr.tensor([0.5, -1.0, 2.0], dtype=cr.float64, requires_grad=True)
    with fa.dual_level():
        d = fa.make_dual(x, cr.ones(3, dtype=cr.float64))
        t = fa.unpack_dual((d.sin() * d).sum()).tangent
    (h,) = cr.autograd.grad(t, x)  # d/dx of sum(cos(x) x + sin(x)) = 2cos(x) - x sin(x)
    tx = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64)
    np.testing.assert_allclose(h.numpy(), (2 * tx.cos() - tx * tx.sin()).numpy(), rtol=1e-12)
