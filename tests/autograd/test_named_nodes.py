"""A node takes its name as it is made: ``Op.named(name).apply`` records nodes of PyTorch's name
for the method calling a shared primitive, and the fused arithmetic ops (addcmul, addcdiv,
lerp, log2, log10, remainder) are one node each, with PyTorch's name, gradients, second
gradients and ``_saved_*``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule.ops import arithmetic as fused
from chainrule.ops import linalg


def test_a_named_op_records_nodes_of_its_name_and_is_the_op() -> None:
    bmm = linalg.MatMul.named("BmmBackward0")
    assert bmm is linalg.MatMul.named("BmmBackward0")  # made once per op and name
    a = cr.randn(2, 3, 4, requires_grad=True)
    b = cr.randn(2, 4, 5, requires_grad=True)
    out = bmm.apply(a, b)
    assert type(out.grad_fn) is bmm and out.grad_fn.name() == "BmmBackward0"
    assert out.grad_fn.op == "MatMul" and isinstance(out.grad_fn, linalg.MatMul)
    plain = linalg.MatMul.apply(a, b)  # the op itself keeps its own names
    assert plain.grad_fn.name() == "UnsafeViewBackward0"
    with cr.no_grad():
        assert bmm.apply(a, b).grad_fn is None
    out.sum().backward()
    want = np.ones((2, 3, 5)) @ b.detach().numpy().mT
    np.testing.assert_allclose(a.grad.numpy(), want, rtol=1e-5)


def test_a_named_ops_failure_names_the_op() -> None:
    bmm = linalg.MatMul.named("BmmBackward0")
    with pytest.raises(ValueError, match=r"^matmul: "):
        bmm.apply(cr.randn(2, 3, 4), cr.randn(2, 5, 4))


def _pair(shape: tuple[int, ...], seed: int, positive: bool = False) -> tuple[Any, Any]:
    a = np.random.default_rng(seed).standard_normal(shape)
    a = np.abs(a) + 0.5 if positive else a
    return cr.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)


FUSED = {
    "addcmul": lambda L, x, y, z: L.addcmul(x, y, z, value=0.5),
    "addcdiv": lambda L, x, y, z: L.addcdiv(x, y, z, value=-2),
    "lerp_number": lambda L, x, y, z: L.lerp(x, y, 0.75),
    "lerp_tensor": lambda L, x, y, z: L.lerp(x, y, z),
    "log2": lambda L, x, y, z: L.log2(z),
    "log10": lambda L, x, y, z: L.log10(z),
    "remainder": lambda L, x, y, z: L.remainder(x, z),
    "remainder_number": lambda L, x, y, z: L.remainder(x, 0.7),
}


@pytest.mark.parametrize("name", FUSED)
def test_a_fused_op_is_torchs_one_node_to_second_gradients(name: str) -> None:
    (x, tx), (y, ty), (z, tz) = _pair((3, 4), 0), _pair((4,), 1), _pair((3, 1), 2, True)
    out, want = FUSED[name](cr, x, y, z), FUSED[name](torch, tx, ty, tz)
    np.testing.assert_allclose(out.detach().numpy(), want.detach().numpy(), rtol=1e-13)
    assert out.grad_fn.name() == want.grad_fn.name()
    saved = sorted(k for k in dir(want.grad_fn) if k.startswith("_saved_"))
    assert sorted(k for k in dir(out.grad_fn) if k.startswith("_saved_")) == saved
    assert len(out.grad_fn.next_functions) == len(want.grad_fn.next_functions)
    ours, theirs = (x, y, z), (tx, ty, tz)
    g = cr.autograd.grad((out * out).sum(), ours, create_graph=True, allow_unused=True)
    tg = torch.autograd.grad((want * want).sum(), theirs, create_graph=True, allow_unused=True)
    used = [i for i, t in enumerate(tg) if t is not None]
    assert used == [i for i, t in enumerate(g) if t is not None]
    for i in used:
        np.testing.assert_allclose(g[i].detach().numpy(), tg[i].detach().numpy(), rtol=1e-12)
    gg = cr.autograd.grad(sum(g[i].sum() for i in used), ours, allow_unused=True)
    tgg = torch.autograd.grad(sum(tg[i].sum() for i in used), theirs, allow_unused=True)
    for a, b in zip(gg, tgg, strict=True):
        if b is None:
            assert a is None or not a.detach().numpy().any()
        else:
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-11, atol=1e-12)


def test_fused_ops_of_mixed_dtypes_promote_as_torchs() -> None:
    x = cr.ones(3, dtype=cr.float32)
    assert x.addcmul(cr.ones(3, dtype=cr.float64), cr.ones(3)).dtype == cr.float64
    assert cr.lerp(x, cr.zeros(3, dtype=cr.float32), 0.25).dtype == cr.float32
    assert (7 % cr.tensor([2, 3])).tolist() == [1, 1]  # a number's remainder: a composite
    with pytest.raises(RuntimeError, match="integer division by zero"):
        cr.tensor([1, 2]).remainder(cr.tensor([0, 1]))
    ints = cr.tensor([1, 2])
    assert ints.addcmul(ints, ints, value=0.5).tolist() == [1, 2]  # value cast to int, as torch
    with pytest.raises(TypeError, match=r"^addcdiv: integer division is not supported"):
        ints.addcdiv(ints, ints)
    with pytest.raises(TypeError, match=r"^addcmul: not implemented for bool"):
        (ints > 1).addcmul(ints > 1, ints > 1)
    with pytest.raises(TypeError, match=r"^lerp: expects floating tensors"):
        ints.lerp(ints, 0.5)


def test_a_fused_ops_saved_input_written_in_place_is_refused() -> None:
    a, t1 = cr.randn(3, requires_grad=True), cr.randn(3)
    t2 = cr.randn(3, requires_grad=True)
    out = a.addcmul(t1, t2)
    t1.add_(1)  # t2's gradient reads it
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


def test_fused_ops_under_vmap_and_forward_mode() -> None:
    x, y, z = cr.randn(5, 3), cr.randn(5, 3), cr.rand(5, 3) + 0.5
    got = cr.func.vmap(lambda a, b, c: a.addcdiv(b, c, value=3))(x, y, z)
    np.testing.assert_allclose(got.numpy(), (x + 3 * y / z).numpy(), rtol=1e-6)
    _, tangent = cr.func.jvp(lambda a: cr.lerp(a, y, z), (x,), (cr.ones_like(x),))
    np.testing.assert_allclose(tangent.numpy(), (1 - z).numpy(), rtol=1e-6)


def test_the_primitives_are_their_own_nodes() -> None:
    for op in (fused.Addcmul, fused.Addcdiv, fused.Lerp, fused.Log2, fused.Log10):
        assert op.rule and op.__doc__


ONE_NODE = {
    "rot90": lambda x: x.rot90(1, (0, 1)),
    "rot90_negative": lambda x: x.rot90(-3, (-1, 0)),
    "rot90_none": lambda x: x.rot90(4, (1, 0)),
    "round": lambda x: x.round(),
    "round_decimals": lambda x: x.round(decimals=1),
    "floor": lambda x: x.floor(),
    "ceil": lambda x: x.ceil(),
    "trunc": lambda x: x.trunc(),
    "index_ending_in_none": lambda x: x[1:, None],
    "index_none_after_ellipsis": lambda x: x[1, ..., None, :],
    "masked_scatter": lambda x: x.masked_scatter(x[0] > 0, x[1:].flip(0) * 3),
    "select_scatter": lambda x: x.select_scatter(x[:, 0] * 2, -1, -2),
    "slice_scatter": lambda x: x.slice_scatter(x[:, :2] * 2, 1, -3, None, 2),
    "number_over_tensor": lambda x: 2 / x,
    "number_minus_tensor": lambda x: 2.5 - x,
    "rsqrt": lambda x: (x * x).rsqrt(),
    "masked_fill": lambda x: x.masked_fill(x > 0, 1.5),
    "index_reduce": lambda x: x.index_reduce(
        1, x.new_tensor([0, 2, 0]).long(), x[:, :3] * 2, "amax", include_self=False
    ),
    "index_add": lambda x: x.index_add(1, x.new_tensor([0, 2, 0]).long(), x[:, :3] * 2, alpha=2),
    "scatter_add": lambda x: x.scatter_add(
        1,
        x.new_tensor([[0, 2], [1, 1], [3, 0]]).long(),
        x[:, :2] * 2,
    ),
    "index_copy": lambda x: x.index_copy(0, x.new_tensor([2, 0]).long(), x[:2] * 2),
    "gather_0d": lambda x: x[0, 1].gather(0, x.new_tensor(0).long()),
    "gather_empty": lambda x: x[0].gather(0, x.new_zeros((2, 0)).long()),
    "scatter_0d": lambda x: x[0, 1].scatter(0, x.new_tensor(0).long(), x[1, 1] * 2),
    "scatter_reduce_0d": lambda x: x[0, 1].scatter_reduce(
        0, x.new_tensor(0).long(), x[1, 1] * 2, "prod", include_self=False
    ),
    "index_reduce_0d": lambda x: x[0, 1].index_reduce(
        0, x.new_tensor([0]).long(), x[1, 1] * 2, "mean"
    ),
    "index_add_0d": lambda x: x[0, 1].index_add(0, x.new_tensor([0]).long(), x[1, 1] * 2),
    "index_copy_0d": lambda x: x[0, 1].index_copy(0, x.new_tensor([0]).long(), x[1, 1] * 2),
}


@pytest.mark.parametrize("name", ONE_NODE)
def test_an_op_of_one_pytorch_node_is_one_node(name: str) -> None:
    """Its name, _saved_* values (before and after backward), values and gradient as
    PyTorch's."""
    x, tx = _pair((3, 4), 3)
    out, want = ONE_NODE[name](x), ONE_NODE[name](tx)
    assert out.grad_fn.name() == want.grad_fn.name()
    np.testing.assert_array_equal(out.detach().numpy(), want.detach().numpy())
    assert tuple(out.stride()) == tuple(want.stride())
    grad = np.random.default_rng(4).standard_normal(tuple(want.shape))

    def saved(fn: Any) -> dict[str, Any]:  # the values that are no tensors; a freed one refused
        values = {}
        for k in [k for k in dir(fn) if k.startswith("_saved_")]:
            try:
                value = getattr(fn, k)
            except RuntimeError:
                value = "freed"
            if not hasattr(value, "shape"):
                values[k] = value
        return values

    assert saved(out.grad_fn) == saved(want.grad_fn)
    out.backward(cr.tensor(grad))
    want.backward(torch.tensor(grad))
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12)
    assert saved(out.grad_fn) == saved(want.grad_fn)


@pytest.mark.parametrize("k", [0, 2, -1])
def test_diag_of_a_vector_is_torchs_one_diag_embed_node(k: int) -> None:
    x, tx = _pair((4,), 7)
    out, want = x.diag(k), tx.diag(k)
    assert out.grad_fn.name() == want.grad_fn.name() == "DiagEmbedBackward0"
    assert out.grad_fn._saved_offset == k  # PyTorch shows -1 as 2**64 - 1
    np.testing.assert_array_equal(out.detach().numpy(), want.detach().numpy())
    grad = np.random.default_rng(8).standard_normal(tuple(want.shape))
    out.backward(cr.tensor(grad))
    want.backward(torch.tensor(grad))
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


def test_a_views_copy_is_a_node_of_its_own_with_the_views_rule() -> None:
    x = cr.randn(3, requires_grad=True)
    view = x.expand(2, 3)
    out = cr.expand_copy(x, (2, 3))
    assert (
        out.grad_fn.name()
        == torch.expand_copy(torch.zeros(3, requires_grad=True), (2, 3)).grad_fn.name()
    )
    assert type(out.grad_fn).primitive is type(view.grad_fn).primitive
    assert view.grad_fn.name() == "ExpandBackward0"  # a view made beside it keeps its name
    assert out._array.flags.c_contiguous and not np.shares_memory(out._array, x._array)
    (out * cr.tensor([[1.0], [2.0]])).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full(3, 3.0))


@pytest.mark.parametrize("p", [0.0, 0.5, 1.0, 2.0, 3.0, float("inf")])
def test_cdist_is_one_node_with_torchs_gradient_at_zero_distances(p: float) -> None:
    x, tx = _pair((2, 3, 4), 5)
    y = np.random.default_rng(6).standard_normal((5, 4))
    y[0] = x.detach().numpy()[0, 0]  # a distance of 0
    y[1, :2] = x.detach().numpy()[1, 1, :2]  # coordinates that differ by 0
    b, tb = cr.tensor(y, requires_grad=True), torch.tensor(y, requires_grad=True)
    mode = "donot_use_mm_for_euclid_dist"
    out, want = cr.cdist(x, b, p, mode), torch.cdist(tx, tb, p, mode)
    np.testing.assert_allclose(out.detach().numpy(), want.detach().numpy(), rtol=1e-12)
    assert out.grad_fn.name() == want.grad_fn.name() and out.grad_fn._saved_p == p
    grad = np.random.default_rng(7).standard_normal(tuple(want.shape))
    out.backward(cr.tensor(grad))
    want.backward(torch.tensor(grad))
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(b.grad.numpy(), tb.grad.numpy(), rtol=1e-10)


def test_the_in_place_forms_write_what_the_fused_rules_do_not_read() -> None:
    """addcdiv_, remainder_ and lerp_ (a number weight) on a non-leaf: the gradients PyTorch's
    give, the written tensor being no value their rules read."""
    grads = []
    for lib in (cr, torch):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        z = lib.tensor([1.5, 2.5, 0.7], requires_grad=True)
        y = x * 2
        y.addcdiv_(z, z + 3, value=0.5).remainder_(lib.tensor([0.9, 0.8, 1.1])).lerp_(z, 0.3)
        y.sum().backward()
        grads.append((x.grad.numpy(), z.grad.numpy()))
    for ours, theirs in zip(*grads, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6)


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_is_torchs_one_node_and_moves_the_running_statistics(training: bool) -> None:
    x, tx = _pair((3, 2, 4), 9)
    w, tw = _pair((2,), 10)
    stats = [np.array([0.5, -1.0]), np.array([2.0, 0.5])]
    mine, theirs = [cr.tensor(s.copy()) for s in stats], [torch.tensor(s.copy()) for s in stats]
    out = cr.nn.functional.batch_norm(x, *mine, w, w * 2, training=training, momentum=0.3)
    want = torch.nn.functional.batch_norm(tx, *theirs, tw, tw * 2, training=training, momentum=0.3)
    assert out.grad_fn.name() == want.grad_fn.name() == "NativeBatchNormBackward0"
    assert out.grad_fn._saved_training is training and out.grad_fn._saved_eps == 1e-5
    assert out.grad_fn._saved_result1.shape == tuple(want.grad_fn._saved_result1.shape)
    for a, b in zip(mine, theirs, strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12)
    np.testing.assert_allclose(out.detach().numpy(), want.detach().numpy(), rtol=1e-10)
    grad = np.random.default_rng(11).standard_normal((3, 2, 4))
    gx, gw = cr.autograd.grad(out, (x, w), cr.tensor(grad), create_graph=True)
    tgx, tgw = torch.autograd.grad(want, (tx, tw), torch.tensor(grad), create_graph=True)
    np.testing.assert_allclose(gx.detach().numpy(), tgx.detach().numpy(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(gw.detach().numpy(), tgw.detach().numpy(), rtol=1e-9, atol=1e-12)
    if training:  # second order (in eval grad_x does not depend on x)
        (gg,) = cr.autograd.grad((gx * gx).sum(), (x,))
        (tgg,) = torch.autograd.grad((tgx * tgx).sum(), (tx,))
        np.testing.assert_allclose(gg.numpy(), tgg.numpy(), rtol=1e-8, atol=1e-10)


def test_group_norm_of_an_empty_batch_is_torchs_one_node() -> None:
    outs = []
    for lib in (cr, torch):
        x, w = lib.zeros(0, 4, 3, requires_grad=True), lib.ones(4, requires_grad=True)
        out = lib.nn.functional.group_norm(x, 2, w, w * 2)
        node = (out.grad_fn.name(), tuple(out.grad_fn._saved_result1.shape))
        grads = lib.autograd.grad(out, (x, w), lib.ones(0, 4, 3))
        outs.append((*node, [tuple(g.shape) for g in grads], grads[1].numpy().tolist()))
    assert outs[0] == outs[1]


def test_index_put_accumulating_is_torchs_one_node() -> None:
    x, tx = _pair((3, 4), 12)
    out = x.index_put((cr.tensor([0, 2, 0]),), x[1] * 2, accumulate=True)
    want = tx.index_put((torch.tensor([0, 2, 0]),), tx[1] * 2, accumulate=True)
    assert out.grad_fn.name() == want.grad_fn.name() == "IndexPutBackward0"
    assert out.grad_fn._saved_accumulate is want.grad_fn._saved_accumulate is True
    (index,) = out.grad_fn._saved_indices
    np.testing.assert_array_equal(index.numpy(), want.grad_fn._saved_indices[0].numpy())
    np.testing.assert_array_equal(out.detach().numpy(), want.detach().numpy())
    grad = np.random.default_rng(13).standard_normal((3, 4))
    out.backward(cr.tensor(grad))
    want.backward(torch.tensor(grad))
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12)
