"""In-place writes as PyTorch has them: augmented assignment and the ``*_`` methods change
the tensor every name holds, ``.data`` and ``detach()`` share memory (``detach()`` the
version counter too, ``.data`` one of its own), and backward refuses values changed after a
node saved them. Each program runs on both frameworks: both raise the same kind of error, or
both give the same values and gradients.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule as cr
from tests.twins import copy_into

INPLACE = "modified by an inplace operation"
LEAF = "leaf"


def leaves(lib, *shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [lib.tensor(rng.standard_normal(s), requires_grad=True) for s in shapes]


def run(program, lib):
    """The program's outputs and its leaves' gradients as arrays, or the error it raised."""
    try:
        out, xs = program(lib)
    except RuntimeError as err:
        return err
    arrays = [np.asarray(o.detach().numpy()) for o in out]
    grads = [None if x.grad is None else x.grad.detach().numpy() for x in xs]
    return arrays, grads


def add_to_non_leaf(lib):
    (x,) = leaves(lib, (3,))
    h = x * 2
    h.add_(1)
    h.sum().backward()
    return [h], [x]


def used_before_and_after_the_write(lib):
    (x,) = leaves(lib, (3,))
    h = x * 2
    y = h + 1  # recorded before the write: its gradient reaches h's old value
    h.mul_(3)
    (y * 5 + h).sum().backward()
    return [y, h], [x]


def mul_by_a_tensor_that_requires_grad(lib):
    x, b = leaves(lib, (4,), (4,))
    h = x * 1.5
    h.mul_(b)
    h.pow(2).sum().backward()
    return [h], [x, b]


def exp_output_changed(lib):
    (x,) = leaves(lib, (3,))
    y = x.exp()
    y.add_(1)
    y.sum().backward()
    return [y], [x]


def sigmoid_output_changed_by_setitem(lib):
    (x,) = leaves(lib, (3,))
    y = x.sigmoid()
    with lib.no_grad():
        y[0] = 0.0
    y.sum().backward()
    return [y], [x]


def input_of_a_product_changed(lib):
    x, w = leaves(lib, (2, 3), (3, 4))
    h = x.tanh()
    out = h @ w
    h.zero_()
    out.sum().backward()
    return [out], [x, w]


def weight_changed_whose_value_no_gradient_needs(lib):
    (w,) = leaves(lib, (3, 4))
    x = lib.ones(2, 3, dtype=lib.float64)  # needs no gradient: x @ w reads w for nothing
    out = x @ w
    with lib.no_grad():
        w.mul_(2)
    out.sum().backward()
    return [out], [w]


def optimizer_step_between_forward_and_backward(lib):
    w1, w2 = leaves(lib, (4, 3), (2, 4))
    x = lib.ones(5, 3)
    opt = lib.optim.SGD([w1, w2], lr=0.1)
    out = (x @ w1.T).relu() @ w2.T
    loss = out.pow(2).sum()
    loss.backward(retain_graph=True)
    opt.step()
    loss.backward()
    return [loss], [w1, w2]


def leaf_written_with_grad_on(lib):
    (x,) = leaves(lib, (3,))
    x.add_(1)
    return [x], [x]


def leaf_written_under_no_grad(lib):
    (x,) = leaves(lib, (3,))
    with lib.no_grad():
        x.add_(1)
        x *= 2
        x -= 0.5
        x /= 4
        x.clamp_(-0.2, 0.4)
    (x * x).sum().backward()
    return [x], [x]


def relu_in_place_after_a_linear(lib):
    x, w, b = leaves(lib, (4, 3), (5, 3), (5,))
    h = lib.nn.functional.linear(x, w, b)
    h.relu_()
    h.sum().backward()
    return [h], [x, w, b]


def plain_tensor_joins_the_graph(lib):
    (w,) = leaves(lib, (3,))
    acc = lib.zeros(3)
    acc += w * 2
    acc += w.exp()
    acc.sum().backward()
    return [acc], [w]


def setitem_of_a_value_that_requires_grad(lib):
    (v,) = leaves(lib, (2,))
    canvas = lib.zeros(3, 2)
    canvas[1] = v * 3
    canvas[2, 0] = v[1]
    (canvas * lib.arange(6.0).reshape(3, 2)).sum().backward()
    return [canvas], [v]


def setitem_into_a_non_leaf(lib):
    x, v = leaves(lib, (2, 3), (3,))
    h = x * 2
    h[0] = v
    (h * h).sum().backward()
    return [h], [x, v]


def masked_fill_and_fill_on_a_non_leaf(lib):
    (x,) = leaves(lib, (2, 3))
    h = x * 1
    h.masked_fill_(lib.tensor([[True, False, False], [False, False, True]]), -1.0)
    g = x + 0
    g.fill_(2.0)
    (h * 3 + g).sum().backward()
    return [h, g], [x]


def copy_into_a_buffer(lib):
    (w,) = leaves(lib, (2, 2))
    buf = lib.zeros(2, 2)
    buf.copy_(w * 2)
    buf.sum().backward()
    return [buf], [w]


def write_through_detach_seen_by_backward(lib):
    (x,) = leaves(lib, (3,))
    y = x.sin()
    x.detach().zero_()
    y.sum().backward()
    return [y], [x]


def write_into_a_view_seen_by_backward(lib):
    (x,) = leaves(lib, (2, 3))
    h = x * 1
    y = h.tanh() * h  # saves h
    with lib.no_grad():
        h[0].mul_(2)
    y.sum().backward()
    return [y], [x]


def write_into_an_unrelated_view_is_fine(lib):
    (x,) = leaves(lib, (2, 3))
    y = x.exp().sum()
    other = lib.zeros(4)
    other[1:3].add_(1.0)
    y.backward()
    return [y, other], [x]


PROGRAMS = [
    add_to_non_leaf,
    used_before_and_after_the_write,
    mul_by_a_tensor_that_requires_grad,
    exp_output_changed,
    sigmoid_output_changed_by_setitem,
    input_of_a_product_changed,
    weight_changed_whose_value_no_gradient_needs,
    optimizer_step_between_forward_and_backward,
    leaf_written_with_grad_on,
    leaf_written_under_no_grad,
    relu_in_place_after_a_linear,
    plain_tensor_joins_the_graph,
    setitem_of_a_value_that_requires_grad,
    setitem_into_a_non_leaf,
    masked_fill_and_fill_on_a_non_leaf,
    copy_into_a_buffer,
    write_through_detach_seen_by_backward,
    write_into_a_view_seen_by_backward,
    write_into_an_unrelated_view_is_fine,
]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_in_place_programs_behave_as_in_torch(program) -> None:
    ours, theirs = run(program, cr), run(program, torch)
    if isinstance(theirs, RuntimeError):
        assert isinstance(ours, RuntimeError), f"torch raised {theirs!r}; we gave {ours!r}"
        for words in (INPLACE, LEAF):
            if words in str(theirs):
                assert words in str(ours), f"{ours} / torch: {theirs}"
        return
    assert not isinstance(ours, RuntimeError), f"we raised {ours!r}; torch did not"
    (outs, grads), (touts, tgrads) = ours, theirs
    for a, b in zip(outs, touts, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    for a, b in zip(grads, tgrads, strict=True):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_the_modified_error_names_the_op_the_shape_and_the_versions() -> None:
    x = cr.ones(2, 3, requires_grad=True)
    y = x.exp()
    y.add_(1)
    with pytest.raises(RuntimeError) as info:
        y.sum().backward()
    text = str(info.value)
    assert text.startswith("Exp: one of the variables needed for gradient computation has")
    assert "shape (2, 3)" in text and "version 1; expected version 0" in text


def test_version_counter_counts_as_torch_and_is_shared() -> None:
    for lib in (cr, torch):
        x = lib.zeros(2, 3)
        view, det = x[0], x.detach()
        x.add_(1)
        view.mul_(2)
        det += 1
        x[1, 1] = 5.0
        x.zero_()
        assert x._version == view._version == det._version == 5, lib
        assert lib.ones(2)._version == 0


# Ways to reach a tensor's memory without its graph, and whether a write through them
# counts for backward: .data has a counter of its own (PyTorch's escape hatch, so backward
# uses the new values), detach() shares the tensor's; views of either share theirs.
ALIASES = {
    "data": lambda w: w.data,
    "data[:2]": lambda w: w.data[:2],
    "data.view": lambda w: w.data.view(3),
    "data.detach": lambda w: w.data.detach(),
    "detach": lambda w: w.detach(),
    "detach[:2]": lambda w: w.detach()[:2],
    "detach.data": lambda w: w.detach().data,
}
WRITES = {
    "setitem": lambda t, lib: t.__setitem__(slice(None), 100.0),
    "copy_": lambda t, lib: t.copy_(lib.full(tuple(t.shape), 2.0)),
    "add_": lambda t, lib: t.add_(1.0),
    "mul_": lambda t, lib: t.mul_(2.0),
    "iadd": lambda t, lib: t.__iadd__(1.0),
    "fill_": lambda t, lib: t.fill_(3.0),
    "zero_": lambda t, lib: t.zero_(),
}


def alias_write(lib, alias, write, leaf):
    """Write through an alias of w (a leaf, or a non-leaf made from one) between forward
    and backward: what backward does, the gradient and the versions, in ``lib``."""
    a = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
    w = a if leaf else a * 1.0
    y = (w * w).sum()
    t = ALIASES[alias](w)
    WRITES[write](t, lib)
    try:
        y.backward()
    except RuntimeError as e:
        assert INPLACE in str(e)
        return "refused", w._version, t._version
    return a.grad.tolist(), w._version, t._version


@pytest.mark.parametrize("leaf", [True, False], ids=["leaf", "non-leaf"])
@pytest.mark.parametrize("write", sorted(WRITES))
@pytest.mark.parametrize("alias", sorted(ALIASES))
def test_a_write_through_data_is_not_counted_one_through_detach_is(alias, write, leaf) -> None:
    assert alias_write(cr, alias, write, leaf) == alias_write(torch, alias, write, leaf)


def test_augmented_assignment_keeps_the_same_tensor_everywhere() -> None:
    """PyTorch's tutorial loop: ``p -= lr * p.grad`` under no_grad trains the model's own
    Parameters, which the module and the optimizer still hold."""
    ours, theirs = cr.nn.Linear(3, 2), torch.nn.Linear(3, 2)
    copy_into(ours, theirs)
    x = np.random.default_rng(1).standard_normal((4, 3)).astype(np.float32)
    for lib, model in ((cr, ours), (torch, theirs)):
        params = list(model.parameters())
        for _ in range(3):
            model.zero_grad()
            model(lib.tensor(x)).pow(2).sum().backward()
            with lib.no_grad():
                for p in model.parameters():
                    p -= 0.1 * p.grad
        with lib.no_grad():
            model.weight *= 0.5
        assert [id(p) for p in model.parameters()] == [id(p) for p in params]
        assert type(model.weight).__name__ == "Parameter" and "weight" in model.state_dict()
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(p.numpy(), theirs.state_dict()[name].numpy(), rtol=1e-5)


def test_in_place_methods_and_operators_match_torch_values() -> None:
    rng = np.random.default_rng(3)
    a = rng.standard_normal((3, 4))
    other = rng.standard_normal(4)
    steps = [
        lambda t, lib: t.add_(lib.tensor(other), alpha=0.5),
        lambda t, lib: t.sub_(2.0, alpha=3),
        lambda t, lib: t.mul_(lib.tensor(other)),
        lambda t, lib: t.div_(4.0),
        lambda t, lib: t.abs_(),
        lambda t, lib: t.pow_(2),
        lambda t, lib: t.sqrt_(),
        lambda t, lib: t.clamp_(0.1, 0.9),
        lambda t, lib: t.tanh_(),
        lambda t, lib: t.sigmoid_(),
        lambda t, lib: t.log_(),
        lambda t, lib: t.exp_(),
        lambda t, lib: t.neg_(),
        lambda t, lib: t.relu_(),
        lambda t, lib: t.masked_fill_(lib.tensor(a > 0), 7.0),
        lambda t, lib: t.sin_(),
        lambda t, lib: t.cos_(),
        lambda t, lib: t.copy_(lib.tensor(other)),
        lambda t, lib: t.fill_(1.5),
        lambda t, lib: t.__iadd__(1),
        lambda t, lib: t.__imul__(lib.tensor(other)),
        lambda t, lib: t.__itruediv__(2),
        lambda t, lib: t.__isub__(lib.tensor(a)),
        lambda t, lib: t.__ipow__(2),
        lambda t, lib: t.zero_(),
    ]
    ours, theirs = cr.tensor(a), torch.tensor(a)
    for i, step in enumerate(steps):
        assert step(ours, cr) is ours and step(theirs, torch) is theirs
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, err_msg=str(i))
    square = np.eye(3) + 0.1
    m, tm = cr.tensor(square), torch.tensor(square)
    m @= cr.tensor(square)
    tm @= torch.tensor(square)
    np.testing.assert_allclose(m.numpy(), tm.numpy(), rtol=1e-12)
    assert cr.exp_(m) is m and cr.zero_(m) is m and float(m.sum()) == 0.0


def test_in_place_dtype_and_shape_rules_as_torch() -> None:
    for lib in (cr, torch):
        i = lib.tensor([1, 2, 3])
        i += 2  # stays int64
        assert i.dtype == lib.int64 and i.tolist() == [3, 4, 5]
        with pytest.raises(RuntimeError):
            i += 0.5  # a float result cannot go into an int64 tensor
        f = lib.zeros(3, dtype=lib.float32)
        f += lib.ones(3, dtype=lib.float64)
        assert f.dtype == lib.float32
        with pytest.raises(RuntimeError):
            f += lib.ones(2, 3)  # would grow the tensor
        f.copy_(lib.tensor([1.7, 2.2, -3.9]))
        j = lib.zeros(3, dtype=lib.int64)
        j.copy_(f)  # copy_ converts, truncating as torch
        assert j.tolist() == [1, 2, -3]
    with pytest.raises(RuntimeError, match=r"^add_: the result's shape \(2, 3\) does not match"):
        cr.zeros(3).add_(cr.ones(2, 3))
    with pytest.raises(RuntimeError, match=r"^add_: the tensor \(shape \(2, 3\)\) is a read-only"):
        cr.zeros(3).expand(2, 3).add_(1)


def test_random_fills_in_place_follow_the_seed() -> None:
    a, b = cr.empty(1000), cr.empty(1000)
    cr.manual_seed(5)
    a.normal_(2.0, 0.5)
    cr.manual_seed(5)
    b.normal_(2.0, 0.5)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert abs(float(a.mean()) - 2.0) < 0.1 and abs(float(a.std()) - 0.5) < 0.05
    u = cr.empty(1000).uniform_(-1, 3, generator=cr.Generator().manual_seed(1))
    assert -1 <= float(u.min()) and float(u.max()) < 3 and abs(float(u.mean()) - 1) < 0.2
