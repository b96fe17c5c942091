"""chainrule.autograd.forward_ad against torch.autograd.forward_ad: every catalog row's
tangent, the dual tensors' semantics (levels, requires_grad, views, memory, backward through
a tangent), custom Functions' jvp, and PyTorch's errors."""

import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as tfw

import chainrule as cr
import chainrule.autograd.forward_ad as fw
from tests.ops import test_ops as catalog

ROWS = [pytest.param(r, id=r.name) for r in catalog.ROWS if r.grad and r.numeric]


def as_np(t):
    return t.detach().numpy() if isinstance(t, torch.Tensor) else np.asarray(t.detach()._array)


@pytest.mark.parametrize("row", ROWS)
def test_tangent_of_every_catalog_row_matches_torch(row):
    ours, theirs = catalog._inputs(row, np.float64)
    slots = [i for i, a in enumerate(ours) if isinstance(a, cr.Tensor) and a.is_floating_point()]
    rng = np.random.default_rng(1)
    tangents = [rng.standard_normal(tuple(ours[i].shape)) for i in slots]

    def outputs(lib, fn, inputs):
        out = fn(lib, *inputs)
        outs = out if isinstance(out, tuple) else (out,)
        return [o for o in outs if o.is_floating_point()]

    with fw.dual_level():
        full = list(ours)
        for i, t in zip(slots, tangents, strict=True):
            full[i] = fw.make_dual(ours[i].detach(), cr.tensor(t))
        got = [fw.unpack_dual(o).tangent for o in outputs(cr, row.fn, full)]
    assert not any(fw.tangent_of(o) is not None for o in full)  # dropped with the level

    # PyTorch's forward mode where central differences of its function confirm it, else those
    fn = row.torch_fn or row.fn
    prim = [t.detach() if isinstance(t, torch.Tensor) else t for t in theirs]

    def moved(eps):
        xs = list(prim)
        for i, t in zip(slots, tangents, strict=True):
            xs[i] = prim[i] + eps * torch.tensor(t)
        return outputs(torch, fn, xs)

    eps = 1e-6
    numeric = [(u - d) / (2 * eps) for u, d in zip(moved(eps), moved(-eps), strict=True)]
    want, tol = [n.numpy() for n in numeric], 1e-5
    try:
        with tfw.dual_level():
            xs = list(prim)
            for i, t in zip(slots, tangents, strict=True):
                xs[i] = tfw.make_dual(prim[i], torch.tensor(t))
            answer = [tfw.unpack_dual(o).tangent for o in outputs(torch, fn, xs)]
        if all(
            a is not None and torch.allclose(a, n, rtol=1e-4, atol=1e-5)
            for a, n in zip(answer, numeric, strict=True)
        ):
            want, tol = [a.numpy() for a in answer], 1e-8
    except (NotImplementedError, RuntimeError):  # not implemented in PyTorch's forward mode
        pass
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        g = np.zeros_like(w) if g is None else as_np(g)
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


def test_dual_semantics_match_torch():
    x = cr.tensor([1.0, 2.0, 3.0])
    with fw.dual_level():
        d = fw.make_dual(x, cr.tensor([1.0, 0.5, 0.25]))
        assert not d.requires_grad and d.grad_fn is None
        assert np.shares_memory(d._array, x._array)
        p, t = fw.unpack_dual(d)
        assert np.shares_memory(p._array, x._array) and fw.tangent_of(p) is None
        assert fw.unpack_dual(x).tangent is None
        y = d.exp() * d
        assert not y.requires_grad
        np.testing.assert_allclose(
            as_np(fw.unpack_dual(y).tangent), (np.exp([1, 2, 3]) * [2, 3, 4]) * [1, 0.5, 0.25]
        )
        v = d[1:]  # a view's tangent is the view of the tangent
        tv = fw.unpack_dual(v).tangent
        assert np.shares_memory(tv._array, t._array)
        np.testing.assert_allclose(as_np(tv), [0.5, 0.25])
        assert fw.unpack_dual(d.detach()).tangent is None  # as PyTorch's detach
        np.testing.assert_allclose(as_np(fw.unpack_dual(d.clone()).tangent), [1, 0.5, 0.25])
    assert fw.unpack_dual(y).tangent is None


def test_tangent_of_a_gradient_and_of_a_requires_grad_primal():
    a = np.array([0.3, -1.2, 2.0])
    w, tw = cr.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    with fw.dual_level(), tfw.dual_level():
        d = fw.make_dual(w, cr.ones(3))
        td = tfw.make_dual(tw, torch.ones(3, dtype=torch.float64))
        z, tz = (d.sin() * d).sum(), (td.sin() * td).sum()
        assert z.requires_grad
        t, tt = fw.unpack_dual(z).tangent, tfw.unpack_dual(tz).tangent
        np.testing.assert_allclose(as_np(t), as_np(tt))
        (g,) = cr.autograd.grad(t, w)  # d/dw of the directional derivative: H @ 1
        (tg,) = torch.autograd.grad(tt, tw)
        np.testing.assert_allclose(as_np(g), as_np(tg))


def test_levels_and_errors_match_torch():
    with pytest.raises(RuntimeError, match="no level exists"):
        fw.make_dual(cr.ones(3), cr.ones(3))
    assert fw.unpack_dual(cr.ones(2)).tangent is None
    with fw.dual_level():
        with pytest.raises(RuntimeError, match="Nested forward mode AD is not supported"):
            fw.enter_dual_level()
        with pytest.raises(RuntimeError, match=r"of size \[3\] while the given forward"):
            fw.make_dual(cr.ones(3), cr.ones(4))
        with pytest.raises(ValueError, match="Expected primal to be floating point"):
            fw.make_dual(cr.ones(3, dtype=cr.int64), cr.ones(3))
        with pytest.raises(ValueError, match="Expected tangent to be floating point"):
            fw.make_dual(cr.ones(3), cr.ones(3, dtype=cr.int64))
        d = fw.make_dual(cr.ones(3), cr.ones(3))
        assert fw.unpack_dual(d.argmax()).tangent is None  # integer outputs carry none
    level = fw.enter_dual_level()
    fw.exit_dual_level(level=level)
    with pytest.raises(RuntimeError, match="exit_dual_level"):
        fw.exit_dual_level()


class Exp(cr.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        ctx.save_for_forward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y

    @staticmethod
    def jvp(ctx, t):
        (y,) = ctx.saved_tensors
        return t * y


class Double(cr.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


def test_custom_function_jvp_and_its_absence():
    x = cr.tensor([0.5, 1.5])
    with fw.dual_level():
        d = fw.make_dual(x, cr.tensor([1.0, -2.0]))
        y = Exp.apply(d)
        np.testing.assert_allclose(as_np(fw.unpack_dual(y).tangent), np.exp([0.5, 1.5]) * [1, -2])
        with pytest.raises(NotImplementedError, match="You must implement the jvp function"):
            Double.apply(d)
        assert fw.unpack_dual(Double.apply(x)).tangent is None  # no dual reached it


def test_ordinary_ops_carry_no_tangent_outside_a_level():
    x = cr.ones(3, requires_grad=True)
    y = (x * 2).sum()
    assert fw.tangent_of(y) is None and "_tangent" not in y.__dict__


class WrongJvp(Double):
    @staticmethod
    def jvp(ctx, t):
        return t * 3


def test_gradcheck_checks_forward_mode():
    x = cr.tensor(np.random.default_rng(2).standard_normal(3), requires_grad=True)
    w = cr.tensor(np.random.default_rng(3).standard_normal((3, 3)), requires_grad=True)
    f = lambda a, b: (b @ a.sin()).exp()  # noqa: E731
    assert cr.testing.gradcheck(f, (x, w), check_forward_ad=True)
    assert cr.testing.gradcheck(f, (x, w), check_forward_ad=True, check_backward_ad=False)
    assert cr.testing.gradcheck(f, (x, w), check_forward_ad=True, fast_mode=True)
    assert cr.testing.gradcheck(WrongJvp.apply, (x,))  # its backward is right
    with pytest.raises(cr.testing.GradcheckError, match="forward-mode and numeric"):
        cr.testing.gradcheck(WrongJvp.apply, (x,), check_forward_ad=True)
    assert not cr.testing.gradcheck(
        WrongJvp.apply, (x,), check_forward_ad=True, fast_mode=True, raise_exception=False
    )
