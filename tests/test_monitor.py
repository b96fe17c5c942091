"""Hooks on modules and optimizers against PyTorch's: call order, arguments, replaced values,
removal."""

from __future__ import annotations

from contextlib import nullcontext

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule import nn


def arrays(values):
    """A hook argument as comparable arrays: tensors to NumPy, None kept, tuples walked."""
    if isinstance(values, (tuple, list)):
        return [arrays(v) for v in values]
    if values is None:
        return None
    if isinstance(values, (cr.Tensor, torch.Tensor)):
        return values.detach().numpy().copy()
    return values


def assert_same_log(ours, theirs):
    """Two hook logs of (event, module name, payload) agree: same events in the same order,
    payload arrays equal to float32 tolerance, None where PyTorch has None."""
    assert [e[:2] for e in ours] == [e[:2] for e in theirs]

    def same(a, b, where):
        if isinstance(b, list):
            assert isinstance(a, list) and len(a) == len(b), where
            for u, v in zip(a, b, strict=True):
                same(u, v, where)
        elif b is None:
            assert a is None, where
        else:
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, err_msg=str(where))

    for a, b in zip(ours, theirs, strict=True):
        same(a[2], b[2], a[:2])


def pair(seed=0):
    """Sequential(Linear(3, 4), Tanh, Linear(4, 2)) in both frameworks, same weights."""
    torch.manual_seed(seed)
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    ours = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    return ours, theirs


def attach(model, log, kinds):
    """Register logging hooks of the given kinds on every module of ``model``."""
    handles = []
    for name, m in model.named_modules():
        name = name or "root"
        if "pre" in kinds:
            handles.append(
                m.register_forward_pre_hook(
                    lambda mod, args, n=name: log.append(("pre", n, arrays(args)))
                )
            )
        if "fwd" in kinds:
            handles.append(
                m.register_forward_hook(
                    lambda mod, args, out, n=name: log.append(("fwd", n, arrays([args, out])))
                )
            )
        if "bpre" in kinds:
            handles.append(
                m.register_full_backward_pre_hook(
                    lambda mod, go, n=name: log.append(("bpre", n, arrays(go)))
                )
            )
        if "bwd" in kinds:
            handles.append(
                m.register_full_backward_hook(
                    lambda mod, gi, go, n=name: log.append(("bwd", n, arrays([gi, go])))
                )
            )
    return handles


X = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
G = np.random.default_rng(1).standard_normal((5, 2)).astype(np.float32)


def run_both(kinds, x_grad=True, setup=None):
    """Forward and backward through the pair with hooks of ``kinds`` on every module; the
    logs, x's gradients and the parameters' gradients of both."""
    ours, theirs = pair()
    logs = ([], [])
    for model, log in zip((ours, theirs), logs, strict=True):
        attach(model, log, kinds)
        if setup:
            setup(model)
    xc, xt = cr.tensor(X, requires_grad=x_grad), torch.tensor(X, requires_grad=x_grad)
    yc, yt = ours(xc), theirs(xt)
    # Both say so when a full backward hook fires with no input wanting a gradient.
    firing = "bwd" in kinds and not x_grad
    with (
        pytest.warns(UserWarning, match="Full backward hook is firing") if firing else nullcontext()
    ):
        yc.backward(cr.tensor(G))
    with (
        pytest.warns(UserWarning, match="Full backward hook is firing") if firing else nullcontext()
    ):
        yt.backward(torch.tensor(G))
    return ours, theirs, logs, (xc, xt)


@pytest.mark.parametrize("x_grad", [True, False])
def test_every_hook_is_called_in_pytorchs_order_with_its_values(x_grad):
    ours, theirs, (mine, ref), (xc, xt) = run_both(["pre", "fwd", "bpre", "bwd"], x_grad)
    assert len(ref) == 4 * 4  # four modules, four hooks each
    assert_same_log(mine, ref)
    if x_grad:
        np.testing.assert_allclose(xc.grad.numpy(), xt.grad.numpy(), rtol=1e-5)


def test_forward_hooks_replace_inputs_and_outputs_as_pytorch():
    def setup(model):
        model[0].register_forward_pre_hook(lambda m, args: args[0] * 2)  # not a tuple
        model[1].register_forward_hook(lambda m, args, out: out + 1)
        model[2].register_forward_pre_hook(lambda m, args: (args[0] - 0.5,))

    ours, theirs, (mine, ref), (xc, xt) = run_both(["fwd"], setup=setup)
    assert_same_log(mine, ref)
    np.testing.assert_allclose(xc.grad.numpy(), xt.grad.numpy(), rtol=1e-5)


def test_backward_hooks_replace_gradients_as_pytorch():
    def setup(model):
        model[2].register_full_backward_pre_hook(lambda m, go: (go[0] * 3,))
        model[1].register_full_backward_hook(lambda m, gi, go: (gi[0] * -0.5,))

    ours, theirs, (mine, ref), (xc, xt) = run_both(["bpre", "bwd"], setup=setup)
    assert_same_log(mine, ref)
    np.testing.assert_allclose(xc.grad.numpy(), xt.grad.numpy(), rtol=1e-5)
    for p, q in zip(ours.parameters(), theirs.parameters(), strict=True):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("lib", [cr, torch], ids=["chainrule", "torch"])
def test_prepend_puts_a_hook_first(lib):
    order = []
    m = lib.nn.Identity()
    m.register_forward_hook(lambda *a: order.append("a"))
    m.register_forward_hook(lambda *a: order.append("b"), prepend=True)
    m.register_forward_pre_hook(lambda *a: order.append("p1"))
    m.register_forward_pre_hook(lambda *a: order.append("p0"), prepend=True)
    m(lib.zeros(1))
    assert order == ["p0", "p1", "b", "a"]


def test_hooks_with_kwargs_see_and_replace_keyword_arguments():
    class Scale(nn.Module):
        def forward(self, x, factor=1.0):
            return x * factor

    class TorchScale(torch.nn.Module):
        def forward(self, x, factor=1.0):
            return x * factor

    def run(lib, m):
        seen = []
        m.register_forward_pre_hook(
            lambda mod, args, kwargs: (args, {**kwargs, "factor": kwargs["factor"] * 10}),
            with_kwargs=True,
        )
        m.register_forward_hook(
            lambda mod, args, kwargs, out: seen.append(kwargs["factor"]), with_kwargs=True
        )
        out = m(lib.ones(2), factor=2.0).numpy()
        assert seen == [20.0]
        return out

    np.testing.assert_array_equal(run(cr, Scale()), run(torch, TorchScale()))
    m = Scale()
    m.register_forward_pre_hook(lambda mod, args, kwargs: args, with_kwargs=True)
    with pytest.raises(RuntimeError, match="forward pre-hook must return None or a tuple"):
        m(cr.ones(2))


def test_always_call_runs_a_forward_hook_when_forward_raises():
    class Boom(nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    class TorchBoom(torch.nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    def run(lib, m):
        seen = []
        m.register_forward_hook(
            lambda mod, args, out: seen.append(("always", out)), always_call=True
        )
        m.register_forward_hook(lambda mod, args, out: seen.append("never"))
        with pytest.raises(ValueError, match="boom"):
            m(lib.ones(1))
        assert seen == [("always", None)]

    run(cr, Boom())
    run(torch, TorchBoom())


class Pair(nn.Module):
    """Two tensor inputs and a number; two outputs."""

    def forward(self, a, b, k):
        return a * b * k, a + b


class TorchPair(torch.nn.Module):
    def forward(self, a, b, k):
        return a * b * k, a + b


@pytest.mark.parametrize("b_grad", [True, False])
def test_backward_hooks_of_a_module_of_several_inputs_and_outputs(b_grad):
    rng = np.random.default_rng(2)
    a, b, g1, g2 = (rng.standard_normal(4).astype(np.float32) for _ in range(4))

    def run(lib, m):
        log = []

        def hook(mod, gi, go):
            log.append(("bwd", "m", arrays([gi, go])))
            return gi[0] * 2, gi[1], None

        m.register_full_backward_pre_hook(lambda mod, go: log.append(("bpre", "m", arrays(go))))
        m.register_full_backward_hook(hook)
        ta = lib.tensor(a, requires_grad=True)
        tb = lib.tensor(b, requires_grad=b_grad)
        y1, y2 = m(ta, tb, 3.0)
        ((y1 * lib.tensor(g1)).sum() + (y2 * lib.tensor(g2)).sum()).backward()
        return log, [ta.grad.numpy(), None if tb.grad is None else tb.grad.numpy()]

    (mine, ours), (ref, theirs) = run(cr, Pair()), run(torch, TorchPair())
    assert_same_log(mine, ref)
    grads = [ours, theirs]
    np.testing.assert_allclose(grads[0][0], grads[1][0], rtol=1e-6)
    if b_grad:
        np.testing.assert_allclose(grads[0][1], grads[1][1], rtol=1e-6)
    else:
        assert grads[0][1] is None and grads[1][1] is None


def test_a_backward_hook_returning_the_wrong_number_of_gradients_is_refused():
    m = nn.Linear(2, 2)
    m.register_full_backward_hook(lambda mod, gi, go: (gi[0], gi[0]))
    with pytest.raises(RuntimeError, match="invalid number of grad_input, got 2, but expected 1"):
        m(cr.ones(1, 2, requires_grad=True)).sum().backward()
    m = nn.Linear(2, 2)
    m.register_full_backward_pre_hook(lambda mod, go: ())
    with pytest.raises(RuntimeError, match="invalid number of grad_output, got 0, but expected 1"):
        m(cr.ones(1, 2)).sum().backward()


def test_removed_hooks_are_not_called_and_leave_nothing_behind():
    ours, _ = pair()
    log = []
    handles = attach(ours, log, ["pre", "fwd", "bpre", "bwd"])
    for h in handles:
        h.remove()
        h.remove()  # twice does nothing
    ours(cr.tensor(X, requires_grad=True)).sum().backward()
    assert log == []
    for m in ours.modules():
        hooks = m._hooks
        assert not (hooks.forward_pre or hooks.forward or hooks.backward or hooks.backward_pre)
    m = nn.Identity()
    with m.register_forward_hook(lambda *a: log.append("in")):
        m(cr.zeros(1))
    m(cr.zeros(1))
    assert log == ["in"]


def test_a_hooked_module_keeps_its_state_dict_and_repr():
    ours, _ = pair()
    keys, text = list(ours.state_dict()), repr(ours)
    attach(ours, [], ["pre", "fwd", "bwd"])
    assert list(ours.state_dict()) == keys and repr(ours) == text
    assert len(list(ours.modules())) == 4


def test_a_global_forward_hook_sees_every_module_before_its_own():
    from chainrule.nn.module import register_module_forward_hook, register_module_forward_pre_hook

    order = []
    m = nn.Sequential(nn.Identity())
    m[0].register_forward_hook(lambda *a: order.append("own"))
    with register_module_forward_hook(lambda mod, args, out: order.append(type(mod).__name__)):
        with register_module_forward_pre_hook(lambda mod, args: order.append("pre")):
            m(cr.zeros(1))
    m(cr.zeros(1))
    assert order == ["pre", "pre", "Identity", "own", "Sequential", "own"]


def test_optimizer_step_hooks_run_around_the_step_as_pytorch():
    def run(lib):
        log = []
        p = lib.nn.Parameter(lib.ones(3))
        p.grad = lib.ones(3)
        opt = lib.optim.SGD([p], lr=0.5)

        def logger(event):
            def hook(o, args, kwargs):
                assert o is opt and args[0] is opt  # the step's arguments, the optimizer first
                log.append((event, len(args), kwargs, p.detach().numpy().tolist()))

            return hook

        h1 = opt.register_step_pre_hook(logger("pre"))
        h2 = opt.register_step_post_hook(logger("post"))
        opt.step()
        opt.step(closure=None)
        h1.remove()
        with h2:
            pass
        opt.step()
        return log

    log = run(cr)
    assert log == run(torch)
    assert [e[0] for e in log] == ["pre", "post", "pre", "post"]


def test_a_step_pre_hook_may_replace_the_steps_arguments():
    p = nn.Parameter(cr.ones(2))
    p.grad = cr.ones(2)
    opt = cr.optim.Adam([p])
    calls = []
    opt.register_step_pre_hook(lambda o, args, kwargs: (args, {"closure": lambda: calls.append(1)}))
    opt.step()
    assert calls == [1]
    opt.register_step_pre_hook(lambda o, args, kwargs: "no")
    with pytest.raises(RuntimeError, match="must return None or a tuple"):
        opt.step()


def test_a_subclass_step_calling_super_runs_the_hooks_once():
    class Logged(cr.optim.SGD):
        def step(self, closure=None):
            return super().step(closure)

    p = nn.Parameter(cr.ones(2))
    p.grad = cr.ones(2)
    opt = Logged([p], lr=0.1)
    seen = []
    opt.register_step_pre_hook(lambda *a: seen.append("pre"))
    opt.register_step_post_hook(lambda *a: seen.append("post"))
    opt.step()
    assert seen == ["pre", "post"]
    np.testing.assert_allclose(p.numpy(), [0.9, 0.9])
