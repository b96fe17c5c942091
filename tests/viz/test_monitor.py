"""Hooks on modules and optimizers against PyTorch's (call order, arguments, replaced values,
removal), and the Monitor built on them: its numbers against NumPy on tiny models, its
warnings on constructed cases, its JSON, and `chainrule train --diagnostics`."""

from __future__ import annotations

import math
import os
from contextlib import nullcontext

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule import nn
from chainrule.tools import monitor as monitor_module
from tests.twins import copy_into


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
    copy_into(ours, theirs)
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


# ---------------------------------------------------------------------------------------
# The Monitor


def tiny_mlp():
    """Linear(3, 4), Tanh, Linear(4, 4), ReLU, Linear(4, 2) with fixed weights, and a batch;
    the second layer's last unit is dead on it (a large negative bias)."""
    rng = np.random.default_rng(5)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2))
    weights = {
        "0.weight": rng.standard_normal((4, 3)) * 1.5,
        "0.bias": rng.standard_normal(4) * 0.1,
        "2.weight": rng.standard_normal((4, 4)),
        "2.bias": np.array([0.1, -0.2, 0.3, -50.0]),
        "4.weight": rng.standard_normal((2, 4)),
        "4.bias": np.zeros(2),
    }
    model.double().load_state_dict(weights)
    x = rng.standard_normal((6, 3))
    y = rng.standard_normal((6, 2))
    return model, weights, x, y


def by_hand(w, x, y):
    """The tiny MLP's forward and backward of the mean squared error, in NumPy: each layer's
    output and the loss's gradient with respect to it, and each parameter's gradient."""
    h1 = x @ w["0.weight"].T + w["0.bias"]
    a1 = np.tanh(h1)
    h2 = a1 @ w["2.weight"].T + w["2.bias"]
    a2 = np.maximum(h2, 0)
    out = a2 @ w["4.weight"].T + w["4.bias"]
    g_out = 2 * (out - y) / out.size
    g_a2 = g_out @ w["4.weight"]
    g_h2 = g_a2 * (h2 > 0)
    g_a1 = g_h2 @ w["2.weight"]
    g_h1 = g_a1 * (1 - a1**2)
    outputs = {
        "0": (h1, g_h1),
        "1": (a1, g_a1),
        "2": (h2, g_h2),
        "3": (a2, g_a2),
        "4": (out, g_out),
    }
    grads = {
        "0.weight": g_h1.T @ x, "0.bias": g_h1.sum(0),
        "2.weight": g_h2.T @ a1, "2.bias": g_h2.sum(0),
        "4.weight": g_out.T @ a2, "4.bias": g_out.sum(0),
    }  # fmt: skip
    return outputs, grads


def counts(x, lo, hi):
    return np.histogram(x, bins=50, range=(lo, hi))[0].tolist()


def test_monitor_records_what_numpy_computes_by_hand():
    model, w, x, y = tiny_mlp()
    opt = cr.optim.SGD(model.parameters(), lr=0.1)
    monitor = cr.viz.Monitor(model, opt)
    loss = nn.functional.mse_loss(model(cr.tensor(x)), cr.tensor(y))
    opt.zero_grad()
    loss.backward()
    opt.step()
    outputs, grads = by_hand(w, x, y)
    assert list(monitor.layers) == ["0", "1", "2", "3", "4"]  # forward order, by module name
    assert [s["type"] for s in monitor.layers.values()] == ["Linear", "Tanh", "Linear", "ReLU",
                                                             "Linear"]  # fmt: skip
    for name, (out, g) in outputs.items():
        s = monitor.layers[name]
        assert s["steps"] == [0]
        assert s["act_mean"][0] == pytest.approx(out.mean(), rel=1e-9, abs=1e-12)
        assert s["act_std"][0] == pytest.approx(out.std(), rel=1e-9)
        assert s["grad_mean"][0] == pytest.approx(g.mean(), rel=1e-9, abs=1e-15)
        assert s["grad_std"][0] == pytest.approx(g.std(), rel=1e-9)
        lo, hi = (-1.0, 1.0) if name == "1" else (out.min(), out.max())
        assert s["act_hist"][0] == {"lo": lo, "hi": hi, "counts": counts(out, lo, hi)}
        assert s["grad_hist"][0]["counts"] == counts(g, g.min(), g.max())
    a1, a2 = outputs["1"][0], outputs["3"][0]
    assert monitor.layers["1"]["saturated"] == [np.mean(np.abs(a1) > 0.97)]
    assert monitor.layers["3"]["dead"] == [0.25] == [np.mean((a2 == 0).all(axis=0))]
    assert "saturated" not in monitor.layers["0"] and "dead" not in monitor.layers["0"]
    for name, g in grads.items():
        s, data = monitor.params[name], w[name]
        assert s["shape"] == list(data.shape) and s["steps"] == [0]
        if name == "4.bias":  # all zeros: no ratio to its size
            assert s["grad_data_ratio"] == s["update_log10"] == [None]
            continue
        assert s["grad_data_ratio"][0] == pytest.approx(g.std() / data.std(), rel=1e-9)
        # SGD's update is -lr * grad
        assert s["update_log10"][0] == pytest.approx(np.log10(0.1 * g.std() / data.std()))
    assert monitor.recorded == [0] and monitor.steps_done == 1


def test_monitor_records_every_nth_step_and_skips_evaluation_forwards():
    model, w, x, y = tiny_mlp()
    opt = cr.optim.SGD(model.parameters(), lr=0.01)
    monitor = cr.viz.Monitor(model, opt, every=3)
    calls = []
    model[1].register_forward_hook(lambda *a: calls.append(1))  # the Monitor's hooks ran too
    for _ in range(7):
        loss = nn.functional.mse_loss(model(cr.tensor(x)), cr.tensor(y))
        opt.zero_grad()
        loss.backward()
        opt.step()
        with cr.no_grad():
            model(cr.tensor(x))  # an evaluation: not recorded
    assert monitor.recorded == [0, 3, 6] and monitor.steps_done == 7 and len(calls) == 14
    for s in [*monitor.layers.values(), *monitor.params.values()]:
        assert s["steps"] == [0, 3, 6]
    assert all(v is not None for v in monitor.layers["1"]["grad_std"])
    assert all(v is not None for v in monitor.params["0.weight"]["update_log10"])


def test_without_an_optimizer_every_forward_is_a_step_and_step_records_the_update():
    model, w, x, y = tiny_mlp()
    monitor = cr.viz.Monitor(model)
    for k in range(2):
        loss = nn.functional.mse_loss(model(cr.tensor(x)), cr.tensor(y))
        model.zero_grad()
        loss.backward()
        if k == 0:
            grads = {n: p.grad.numpy().copy() for n, p in model.named_parameters()}
            before = {n: p.numpy().copy() for n, p in model.named_parameters()}
        with cr.no_grad():
            for p in model.parameters():
                p -= 0.05 * p.grad
        if k == 0:
            monitor.step()
    assert monitor.recorded == [0, 1] and monitor.layers["3"]["steps"] == [0, 1]
    s = monitor.params["2.weight"]
    assert s["steps"] == [0]  # step() was called once
    assert s["grad_data_ratio"][0] == pytest.approx(
        grads["2.weight"].std() / before["2.weight"].std()
    )
    assert s["update_log10"][0] == pytest.approx(
        np.log10(0.05 * grads["2.weight"].std() / before["2.weight"].std())
    )
    with pytest.raises(RuntimeError, match="Monitor.step: the optimizer's steps are recorded"):
        cr.viz.Monitor(model, cr.optim.SGD(model.parameters(), lr=0.1)).step()


def test_monitor_on_the_scalar_engine_against_numpy():
    import random

    from chainrule.scalar import Value
    from chainrule.scalar.nn import MLP

    random.seed(3)
    model = MLP(3, [4, 2])
    xs = np.random.default_rng(0).standard_normal((5, 3))
    monitor = cr.viz.Monitor(model, every=2)
    W = [np.array([[w.data for w in n.w] for n in layer.neurons]) for layer in model.layers]
    b = [np.array([n.b.data for n in layer.neurons]) for layer in model.layers]
    for _ in range(3):
        outs = [model(list(x)) for x in xs]
        loss = sum((o * o for out in outs for o in out), Value(0))
        model.zero_grad()
        loss.backward()
        for p in model.parameters():
            p.data -= 0.01 * p.grad
        monitor.step()
    # the first step, by hand: h = relu(x W0^T + b0), out = h W1^T + b1, loss = sum(out^2)
    h = np.maximum(xs @ W[0].T + b[0], 0)
    out = h @ W[1].T + b[1]
    g_out = 2 * out
    g_h = g_out @ W[1]
    assert monitor.recorded == [0, 2] and monitor.steps_done == 3
    s0, s1 = monitor.layers["layers.0"], monitor.layers["layers.1"]
    assert (s0["type"], s1["type"]) == ("ReLU", "Linear") and s0["steps"] == [0, 2]
    assert s0["act_mean"][0] == pytest.approx(h.mean()) and s0["act_std"][0] == pytest.approx(
        h.std()
    )
    assert s0["dead"][0] == np.mean((h == 0).all(axis=0))
    assert s0["grad_std"][0] == pytest.approx(g_h.std())
    assert s1["act_std"][0] == pytest.approx(out.std()) and s1["grad_mean"][0] == pytest.approx(
        g_out.mean()
    )
    g_w1 = g_out.T @ h
    p = monitor.params["layers.1.weight"]
    assert p["shape"] == [2, 4]
    assert p["grad_data_ratio"][0] == pytest.approx(g_w1.std() / W[1].std())
    assert p["update_log10"][0] == pytest.approx(np.log10(0.01 * g_w1.std() / W[1].std()))
    monitor.remove()
    assert type(model.layers[0]) is type(model.layers[1]) is cr.scalar.nn.Layer
    model(list(xs[0]))
    assert all(not rows for rows in monitor._pending.values())


def train_steps(model, opt, x, y, steps, loss=nn.functional.cross_entropy):
    for _ in range(steps):
        out = loss(model(x), y)
        opt.zero_grad()
        out.backward()
        opt.step()


def classification(n=64, d=10, k=3, seed=0):
    rng = np.random.default_rng(seed)
    return cr.tensor(rng.standard_normal((n, d)).astype(np.float32)), cr.tensor(
        rng.integers(0, k, n)
    )


def test_warnings_name_dead_relus_saturated_tanh_and_shrinking_gradients():
    cr.manual_seed(0)
    x, y = classification()
    model = nn.Sequential(nn.Linear(10, 20), nn.ReLU(), nn.Linear(20, 20), nn.Tanh(),
                          nn.Linear(20, 3))  # fmt: skip
    with cr.no_grad():
        model[0].bias.fill_(-100.0)  # every unit of layer 1 is 0 on every example
        model[2].weight.mul_(100.0)
        model[2].bias.fill_(3.0)  # layer 3 saturates
    opt = cr.optim.SGD(model.parameters(), lr=1e-3)
    with cr.viz.Monitor(model, opt) as monitor:
        train_steps(model, opt, x, y, 2)
    warnings = monitor.warnings()
    assert "layer 1 (ReLU): 100% of units dead" in warnings
    assert "tanh layer 3: 100% saturated" in warnings
    assert "warnings:\n  layer 1 (ReLU): 100% of units dead" in monitor.summary()

    cr.manual_seed(0)
    deep = nn.Sequential(*[m for _ in range(5) for m in (nn.Linear(10, 10), nn.Tanh())],
                         nn.Linear(10, 3))  # fmt: skip
    with cr.no_grad():
        for m in deep:
            if isinstance(m, nn.Linear):
                m.weight.mul_(0.3)  # each tanh layer passes on a fraction of its gradient
    opt = cr.optim.SGD(deep.parameters(), lr=1e-3)
    monitor = cr.viz.Monitor(deep, opt)
    train_steps(deep, opt, x, y, 1)
    stds = [s["grad_std"][0] for s in monitor.layers.values() if s["type"] == "Tanh"]
    shrink = stds[-1] / stds[0]
    assert shrink > 10
    assert f"gradients shrink {shrink:.0f}x from the last layer to the first" in monitor.warnings()


def test_a_learning_rate_100x_too_high_is_named_and_a_good_one_is_not():
    def warnings_at(lr):
        cr.manual_seed(0)
        x, y = classification()
        model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 3))
        opt = cr.optim.SGD(model.parameters(), lr=lr)
        monitor = cr.viz.Monitor(model, opt)
        train_steps(model, opt, x, y, 5)
        return monitor, monitor.warnings()

    good, quiet = warnings_at(0.01)
    assert quiet == []
    assert -3.8 < good.params["2.weight"]["update_log10"][-1] < -2.3  # about the 1e-3 guide
    high, said = warnings_at(1.0)
    assert "update/data about 1e-1 on 2.weight: learning rate likely too high" in said
    low, said = warnings_at(1e-5)
    assert (
        "update/data about 1e-6 on 0.weight: it barely learns (learning rate too low, or its "
        "gradient vanishes)" in said
    )


def test_a_module_called_twice_is_recorded_at_its_last_call():
    shared = nn.Linear(3, 3).double()
    model = nn.Sequential(shared, nn.Tanh(), shared)
    opt = cr.optim.SGD(model.parameters(), lr=0.1)
    monitor = cr.viz.Monitor(model, opt)
    x = cr.tensor(np.random.default_rng(0).standard_normal((4, 3)))
    with cr.no_grad():
        out = shared(shared(x).tanh())  # before the step
    g = np.random.default_rng(1).standard_normal((4, 3))
    train_steps(model, opt, x, cr.tensor(g), 1, lambda out, g: (out * g).sum())
    s = monitor.layers["0"]
    assert s["steps"] == [0]
    assert s["act_mean"][0] == pytest.approx(out.numpy().mean())
    assert s["grad_std"][0] == pytest.approx(g.std())  # the last call's output gradient


def test_remove_takes_out_every_hook_and_recording_stops():
    model, w, x, y = tiny_mlp()
    opt = cr.optim.Adam(model.parameters())
    monitor = cr.viz.Monitor(model, opt)
    train_steps(model, opt, cr.tensor(x), cr.tensor(y), 1, nn.functional.mse_loss)
    monitor.remove()
    monitor.remove()  # twice does nothing
    for m in model.modules():
        h = m._hooks
        assert h is None or not (h.forward_pre or h.forward or h.backward or h.backward_pre)
    assert not opt._optimizer_step_pre_hooks and not opt._optimizer_step_post_hooks
    before = monitor.to_dict()
    train_steps(model, opt, cr.tensor(x), cr.tensor(y), 2, nn.functional.mse_loss)
    assert monitor.to_dict() == before and monitor.steps_done == 1


def test_to_json_is_strict_and_atomic(tmp_path):
    import json

    model, w, x, y = tiny_mlp()
    opt = cr.optim.SGD(model.parameters(), lr=0.1)
    monitor = cr.viz.Monitor(model, opt)
    x[0, 0] = np.nan  # NaN activations and gradients: their statistics are NaN
    train_steps(model, opt, cr.tensor(x), cr.tensor(y), 1, nn.functional.mse_loss)
    assert np.isnan(monitor.layers["0"]["act_mean"][0])
    path = tmp_path / "diagnostics.json"
    path.write_text("old")
    monitor.to_json(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["diagnostics.json"]  # no temporary left

    def refuse(constant):
        raise ValueError(f"not strict JSON: {constant}")

    data = json.loads(path.read_text(), parse_constant=refuse)
    assert data["layers"]["0"]["act_mean"] == [None]
    assert data["layers"]["1"]["act_hist"][0]["lo"] == -1.0  # finite values still counted
    assert data["parameters"]["4.bias"]["shape"] == [2]
    assert data["recorded"] == [0] and data["every"] == 1
    assert set(data["weight_grad_hist"]) == set(dict(model.named_parameters()))
    with pytest.raises(FileNotFoundError):
        monitor.to_json(tmp_path / "missing" / "d.json")


def test_plot_draws_the_four_panels(tmp_path):
    pytest.importorskip("matplotlib")
    model, w, x, y = tiny_mlp()
    opt = cr.optim.SGD(model.parameters(), lr=0.1)
    monitor = cr.viz.Monitor(model, opt)
    train_steps(model, opt, cr.tensor(x), cr.tensor(y), 3, nn.functional.mse_loss)
    monitor.plot(tmp_path / "d.png")
    assert (tmp_path / "d.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert [p.name for p in tmp_path.iterdir()] == ["d.png"]


def test_monitor_checks_its_arguments():
    with pytest.raises(ValueError, match="Monitor: every must be a positive int; got 0"):
        cr.viz.Monitor(nn.Linear(2, 2), every=0)
    with pytest.raises(TypeError, match="Monitor: model must be a chainrule.nn.Module"):
        cr.viz.Monitor(torch.nn.Linear(2, 2))
    with pytest.raises(TypeError, match="Monitor: optimizer must be a chainrule optimizer"):
        cr.viz.Monitor(nn.Linear(2, 2), torch.optim.SGD(torch.nn.Linear(2, 2).parameters()))
    assert cr.viz.Monitor(nn.Linear(2, 2)).summary() == "Monitor: nothing recorded yet"


def test_train_with_diagnostics_writes_the_monitors_files_and_warnings(tmp_path, capsys):
    import json

    pytest.importorskip("sklearn")
    from chainrule.tools import cli, recipes

    out = tmp_path / "run"
    args = ["train", "moons", "--epochs", "2", "--seed", "0", "--out", str(out), "--quiet"]
    assert cli.main([*args, "--diagnostics"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert "diagnostics.json, diagnostics.png" in printed[0]
    assert printed[2].startswith("diagnostics: ")  # after the metrics, the warnings
    with open(out / "diagnostics.json") as f:
        data = json.load(f)
    model = recipes.load("moons").model()
    names = [n for n, m in model.named_modules() if isinstance(m, (cr.nn.Linear, cr.nn.ReLU))]
    assert list(data["layers"]) == names
    assert set(data["parameters"]) == set(dict(model.named_parameters()))
    assert printed[3:] == [f"  {w}" for w in data["warnings"]]
    steps = data["steps_done"]
    assert steps > 0 and len(data["recorded"]) == len(range(0, steps, data["every"]))
    assert (out / "diagnostics.png").read_bytes()[:4] == b"\x89PNG"
    assert not [p for p in os.listdir(out) if p.endswith(".tmp")]
    plain = tmp_path / "plain"
    assert cli.main([*args[:-2], str(plain), "--quiet"]) == 0  # without the flag: none
    assert "diagnostics:" not in capsys.readouterr().out
    assert not [p for p in os.listdir(plain) if p.startswith("diagnostics")]
    assert cli.main(["train", "moons-scalar", "--diagnostics", "--out", str(out)]) == 2
    assert "records no diagnostics; got --diagnostics" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------
# docs/diagnostics.md runs: its ```python blocks in order, in one namespace (a block marked
# no-run is an illustration), with fewer steps and the figures written to a temporary folder.
# Run this file as a script to redraw the doc's figures into docs/img at full size.

DOC = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "diagnostics.md")


def run_doc(steps: int | None, out: str) -> dict:
    import re

    with open(DOC, encoding="utf-8") as f:
        text = f.read()
    blocks = re.findall(r"^```python([^\n]*)\n(.*?)^```\s*$", text, re.M | re.S)
    code = [body for info, body in blocks if "no-run" not in info]
    assert len(code) >= 5
    namespace: dict = {}
    for i, body in enumerate(code):
        if i == 0:  # the settings
            assert re.search(r"^STEPS = \d+", body, re.M) and re.search(r"^OUT = ", body, re.M)
            if steps is not None:
                body = re.sub(r"^STEPS = \d+", f"STEPS = {steps}", body, flags=re.M)
            body = re.sub(r"^OUT = .*$", f"OUT = {out!r}", body, flags=re.M)
        exec(compile(body, f"{DOC} block {i + 1}", "exec"), namespace)
    return namespace


def test_the_diagnostics_doc_runs_and_says_what_its_runs_show(tmp_path, capsys):
    pytest.importorskip("sklearn")
    pytest.importorskip("matplotlib")
    ns = run_doc(40, str(tmp_path))
    names = ["default", "large", "kaiming_batchnorm", "lr_too_high"]
    assert sorted(os.listdir(tmp_path)) == sorted(f"diagnostics_{n}.png" for n in names)
    assert any("saturated" in w for w in ns["large"].warnings())
    assert ns["kaiming"].warnings() == []
    assert any("learning rate likely too high" in w for w in ns["too_high"].warnings())
    assert "layers.0" in capsys.readouterr().out  # the scalar engine's summary


if __name__ == "__main__":
    run_doc(None, os.path.join(os.path.dirname(DOC), "img"))


def test_layer_hooks_are_in_only_during_recorded_steps():
    model, w, x, y = tiny_mlp()
    opt = cr.optim.SGD(model.parameters(), lr=0.1)
    monitor = cr.viz.Monitor(model, opt, every=3)
    seen = []
    for _ in range(7):
        out = model(cr.tensor(x))
        seen.append([len(m._hooks.forward) if m._hooks else 0 for m in model])
        loss = nn.functional.mse_loss(out, cr.tensor(y))
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert [sum(s) for s in seen] == [5, 0, 0, 5, 0, 0, 5]
    assert monitor.recorded == [0, 3, 6]
    assert all(s["steps"] == [0, 3, 6] for s in monitor.layers.values())
    assert all(s["steps"] == [0, 3, 6] for s in monitor.params.values())
    monitor.remove()  # during a recorded step's hooks: all out
    assert all(not (m._hooks.forward or m._hooks.forward_pre) for m in [model, *model])


def test_a_users_hook_stays_when_the_monitor_takes_its_own_out():
    model, w, x, y = tiny_mlp()
    calls = []
    model[0].register_forward_hook(lambda m, a, o: calls.append(o.shape))
    monitor = cr.viz.Monitor(model, every=2)
    for _ in range(3):
        model(cr.tensor(x))
    monitor.remove()
    model(cr.tensor(x))
    assert len(calls) == 4 and monitor.recorded == [0, 2]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_moments_where_the_mean_dwarfs_the_spread(dtype):
    rng = np.random.default_rng(0)
    x = (1e4 + rng.standard_normal(10_000)).astype(dtype)
    mean, std = monitor_module.moments(x)
    assert mean == pytest.approx(float(x.astype(np.float64).mean()), rel=1e-6)
    assert std == pytest.approx(float(x.astype(np.float64).std()), rel=1e-4)
    y = rng.standard_normal(10_000).astype(dtype)
    spread = float(y.astype(np.float64).std())
    assert monitor_module.moments(y)[1] == pytest.approx(spread, rel=1e-5)
    assert math.isnan(monitor_module.moments(np.array([1.0, np.nan]))[1])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dead_units_from_column_sums_are_the_units_zero_over_the_batch(dtype):
    """A ReLU's dead fraction and mean come from one BLAS product of column sums: the same
    units as a look at every value (NaN alive, -0.0 and denormals what they are), in any
    layout, batched 2-D or 4-D, unbatched 1-D, or empty."""
    rng = np.random.default_rng(2)
    x = np.maximum(rng.standard_normal((64, 8, 3, 3)), 0).astype(dtype)
    x[:, :2] = 0.0  # two channels dead: 18 of 72 units
    x[:, 2, 0, 0] = -0.0
    x[5, 3, 1, 1] = np.nan  # otherwise dead: alive, as NaN is not 0
    x[:, 3, 1, 1] = np.where(np.arange(64) == 5, np.nan, 0.0)
    x[7, 4, 2, 2] = np.finfo(dtype).smallest_subnormal
    x[:, 4, 2, 2] = np.where(np.arange(64) == 7, x[7, 4, 2, 2], 0.0)
    x[:, 5, 0, 1] = 0.0
    for arr in (x, np.asfortranarray(x.reshape(64, -1)), x.reshape(64, -1)[:, ::-1], x[0, 0, 0]):
        rows = arr.reshape(arr.shape[0], -1) if arr.ndim >= 2 else arr.reshape(1, -1)
        expected = 1.0 - np.count_nonzero((rows != 0).any(axis=0)) / rows.shape[1]
        sums = monitor_module.column_sums(arr)
        assert monitor_module.dead_fraction(sums) == expected
    assert monitor_module.dead_fraction(monitor_module.column_sums(x)) == (18 + 2) / 72
    finite = np.nan_to_num(x)
    mean, std = monitor_module.moments(finite, float(monitor_module.column_sums(finite).sum()))
    assert mean == pytest.approx(float(finite.astype(np.float64).mean()), rel=1e-5)
    assert std == pytest.approx(float(finite.astype(np.float64).std()), rel=1e-5)
    assert monitor_module.dead_fraction(monitor_module.column_sums(np.zeros((4, 0), dtype))) == 0.0


def test_narrow_floats_are_summed_in_float32():
    """float16's largest value is 65504: a float16 sum of squares of a few thousand values
    of 8 overflows, so the statistics sum such tensors as float32."""
    x = np.random.default_rng(3).uniform(6.0, 10.0, (64, 128)).astype(np.float16)
    wide = x.astype(np.float64)
    mean, std = monitor_module.moments(x)
    assert mean == pytest.approx(wide.mean(), rel=1e-5)
    assert std == pytest.approx(wide.std(), rel=1e-4)
    sums = monitor_module.column_sums(x)
    assert sums.dtype == np.float32 and np.allclose(sums, wide.sum(axis=0), rtol=1e-6)
    relu = np.maximum(x - np.float16(8.0), 0)
    assert monitor_module.dead_fraction(monitor_module.column_sums(relu)) == np.mean(
        (relu == 0).all(axis=0)
    )
