"""gradcheck's check_batched_grad (vmap over upstream gradients against one backward pass
each) and check_backward_ad=False, as PyTorch's."""

import pytest
import torch

import chainrule as cr
import chainrule.batching as batching


def _x(*shape):
    cr.manual_seed(0)
    return cr.randn(*shape, dtype=cr.float64, requires_grad=True)


def _f(x, w):
    return (x @ w).tanh().softmax(-1), x.exp().sum(0)


def test_check_batched_grad_passes_where_the_ops_batch():
    args = (_x(3, 4), _x(4, 2))
    assert cr.testing.gradcheck(_f, args, check_batched_grad=True)
    assert cr.testing.gradgradcheck(lambda x: (x * x).sin(), (_x(3),), check_batched_grad=True)
    tx = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    tw = torch.randn(4, 2, dtype=torch.float64, requires_grad=True)

    def tf(x, w):
        return (x @ w).tanh().softmax(-1), x.exp().sum(0)

    assert torch.autograd.gradcheck(tf, (tx, tw), check_batched_grad=True)


def test_check_batched_grad_fails_where_a_batching_rule_is_wrong(monkeypatch):
    def wrong(cls, args, batched, size):  # each example's dims off by one
        a = args["a"]
        return cls.apply(a, dim=0) if "dim" in args else cls.apply(a)

    monkeypatch.setitem(batching.RULES, "Softmax", wrong)
    args = (_x(3, 4), _x(4, 2))
    assert cr.testing.gradcheck(_f, args)  # one upstream gradient at a time: nothing batched
    assert not cr.testing.gradcheck(_f, args, check_batched_grad=True, raise_exception=False)
    with pytest.raises(cr.testing.GradcheckError, match=r"input 0 \(shape .*check_batched_grad"):
        cr.testing.gradcheck(_f, args, check_batched_grad=True)


def test_check_backward_ad_false_skips_the_reverse_mode_checks():
    class ForwardRight(cr.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 3  # wrong: only reverse mode sees it

        @staticmethod
        def jvp(ctx, t):
            return t * 2

    x = _x(3)
    assert not cr.testing.gradcheck(ForwardRight.apply, (x,), raise_exception=False)
    assert cr.testing.gradcheck(
        ForwardRight.apply, (x,), check_backward_ad=False, check_forward_ad=True
    )
    with pytest.raises(ValueError, match="at least one of check_forward_ad or check_backward_ad"):
        cr.testing.gradcheck(ForwardRight.apply, (x,), check_backward_ad=False)


def test_check_batched_forward_grad_passes_where_the_ops_batch():
    args = (_x(3, 4), _x(4, 2))
    assert cr.testing.gradcheck(_f, args, check_forward_ad=True, check_batched_forward_grad=True)
    tx = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    tw = torch.randn(4, 2, dtype=torch.float64, requires_grad=True)

    def tf(x, w):
        return (x @ w).tanh().softmax(-1), x.exp().sum(0)

    assert torch.autograd.gradcheck(
        tf, (tx, tw), check_forward_ad=True, check_batched_forward_grad=True
    )


def test_check_batched_forward_grad_fails_where_a_batching_rule_is_wrong(monkeypatch):
    right = batching.RULES["Mul"]

    def wrong(cls, args, batched, size):  # the batch's examples swapped
        return right(cls, args, batched, size).flip(0)

    monkeypatch.setitem(batching.RULES, "Mul", wrong)  # in the tangents' rules
    args = (_x(3, 4), _x(4, 2))
    assert cr.testing.gradcheck(_f, args, check_forward_ad=True)  # one tangent at a time
    kw = {"check_forward_ad": True, "check_batched_forward_grad": True}
    assert not cr.testing.gradcheck(_f, args, raise_exception=False, **kw)
    with pytest.raises(
        cr.testing.GradcheckError, match=r"input 0 \(shape .*output 0.*check_batched_forward"
    ):
        cr.testing.gradcheck(_f, args, **kw)


def test_check_batched_forward_grad_needs_check_forward_ad():
    with pytest.raises(ValueError, match="check_batched_forward_grad=True needs check_forward"):
        cr.testing.gradcheck(_f, (_x(3, 4), _x(4, 2)), check_batched_forward_grad=True)
    tx = torch.randn(3, dtype=torch.float64, requires_grad=True)
    with pytest.raises(AssertionError, match="requires check_forward_ad"):
        torch.autograd.gradcheck(torch.sin, (tx,), check_batched_forward_grad=True)
