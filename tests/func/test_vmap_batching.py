"""vmap's batching (batching.py): per-sample gradients of a CNN, batched weights, nesting,
chunks, and the loop it falls back to, each against torch.func or a loop."""

import numpy as np
import pytest
import torch
import torch.func as tf

import chainrule as cr
import chainrule.batching as batching
import chainrule.func as cf

RNG = np.random.default_rng(0)


def _both(*shapes):
    arrays = [RNG.standard_normal(s) for s in shapes]
    return [cr.tensor(a) for a in arrays], [torch.tensor(a) for a in arrays]


def _close(ours, theirs, tol=1e-10):
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=tol, atol=tol)


def _cnn(lib):
    nn = lib.nn
    return nn.Sequential(
        nn.Conv2d(2, 3, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(12, 4)
    ).double()


def test_per_sample_gradients_of_a_cnn_equal_torch_func_and_a_loop():
    ours, theirs = _cnn(cr), _cnn(torch)
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    (x,), (tx,) = _both((5, 2, 4, 4))
    y = RNG.integers(0, 4, 5)

    def loss(lib, func, model):
        def one(p, xi, yi):
            out = func.functional_call(model, p, (xi.unsqueeze(0),))
            return lib.nn.functional.cross_entropy(out, yi.unsqueeze(0))

        return one

    params = {k: v.detach() for k, v in ours.named_parameters()}
    tparams = {k: v.detach() for k, v in theirs.named_parameters()}
    got = cf.vmap(cf.grad(loss(cr, cf, ours)), in_dims=(None, 0, 0))(params, x, cr.tensor(y))
    want = tf.vmap(tf.grad(loss(torch, tf, theirs)), in_dims=(None, 0, 0))(
        tparams, tx, torch.tensor(y)
    )
    one = cf.grad(loss(cr, cf, ours))
    looped = [one(params, x[i], cr.tensor(y[i])) for i in range(5)]
    for k in want:
        _close(got[k], want[k])
        _close(got[k], cr.stack([g[k] for g in looped]), 1e-12)


def test_batched_weights_map_as_one_call_each():
    (x, w, b, k), (tx, tw, tb, tk) = _both((4, 3, 5), (4, 2, 5), (4, 2), (4, 3, 2, 2, 2))
    lin = cf.vmap(cr.nn.functional.linear)(x, w, b)
    _close(lin, tf.vmap(torch.nn.functional.linear)(tx, tw, tb))
    (im,), (tim,) = _both((4, 1, 2, 5, 5))
    conv = cf.vmap(lambda i, kk: cr.nn.functional.conv2d(i, kk, padding=1))(im, k)
    _close(conv, tf.vmap(lambda i, kk: torch.nn.functional.conv2d(i, kk, padding=1))(tim, tk))


def test_nested_vmap_grad_of_vmap_and_chunks_match_torch():
    (x, w), (tx, tw) = _both((3, 4, 5), (5, 2))

    def f(lib):
        return lambda a, m: (lib.tanh(a @ m) ** 2).sum(-1)

    _close(cf.vmap(cf.vmap(f(cr), (0, None)), (0, None))(x, w),
           tf.vmap(tf.vmap(f(torch), (0, None)), (0, None))(tx, tw))  # fmt: skip
    g = cf.grad(lambda m: cf.vmap(f(cr), (0, None))(x, m).sum())(w)
    _close(g, tf.grad(lambda m: tf.vmap(f(torch), (0, None))(tx, m).sum())(tw))
    _close(cf.vmap(f(cr), (1, None), chunk_size=3)(x, w), tf.vmap(f(torch), (1, None))(tx, tw))
    per_example = cf.vmap(cf.grad(lambda a, m: f(cr)(a, m).sum()), (0, None))(x, w)
    _close(per_example, tf.vmap(tf.grad(lambda a, m: f(torch)(a, m).sum()), (0, None))(tx, tw))


def test_what_cannot_be_batched_runs_once_per_example():
    (x,), (tx,) = _both((3, 4))

    def writes(lib):
        def f(a):
            b = a * 2.0
            b.add_(1.0)  # in place on a batched tensor
            return b + a.sort().values

        return f

    _close(cf.vmap(writes(cr))(x), tf.vmap(writes(torch))(tx))
    unbatched = cf.vmap(lambda a: cr.ones(2), in_dims=0)(x)  # the same for every example
    assert tuple(unbatched.shape) == (3, 2)


def test_values_read_in_python_run_once_per_example():
    (x,), (tx,) = _both((3, 2))
    flipped = cf.vmap(lambda a: a if a.sum() > 0 else -a)(x)  # control flow on values
    _close(flipped, torch.stack([a if a.sum() > 0 else -a for a in tx]))
    with pytest.raises(ValueError, match="must only return Tensors; got float"):
        cf.vmap(lambda a: a.sum().item())(x)
    assert not batching.active()  # every level closed, even after an error


@pytest.mark.parametrize("name", ["jacrev", "jacfwd", "hessian", "grad"])
def test_every_transform_maps_under_vmap(name):
    (x,), (tx,) = _both((3, 4))

    def f(lib):
        return lambda a: (a.sin() * a).sum()

    _close(cf.vmap(getattr(cf, name)(f(cr)))(x), tf.vmap(getattr(tf, name)(f(torch)))(tx))


def test_vjp_and_jvp_map_under_vmap():
    (x,), (tx,) = _both((3, 4))

    def g(a):
        return a.sin() * a

    ours = cf.vmap(lambda a: cf.jvp(g, (a,), (a * 0 + 1,))[1])(x)
    _close(ours, tf.vmap(lambda a: tf.jvp(g, (a,), (torch.ones_like(a),))[1])(tx))
    ours = cf.vmap(lambda a: cf.vjp(g, a)[1](a * 0 + 1)[0])(x)
    _close(ours, tf.vmap(lambda a: tf.vjp(g, a)[1](torch.ones_like(a))[0])(tx))


def test_indexing_by_batched_and_by_constant_index_tensors_matches_torch():
    x = np.arange(24.0).reshape(3, 2, 4)
    i = np.array([[0, 1], [2, 3], [1, 1]])
    got = cf.vmap(lambda a, k: a[:, k])(cr.tensor(x), cr.tensor(i))  # an index per example
    _close(got, tf.vmap(lambda a, k: a[:, k])(torch.tensor(x), torch.tensor(i)))
    calls = []

    def pick(lib):
        def f(a):
            calls.append(1)
            return a[lib.tensor([0, 1]), lib.tensor([2, 0])] + a[0, [3, 0]]

        return f

    ours = cf.vmap(pick(cr))(cr.tensor(x))
    assert len(calls) == 1  # batched by the rule, not looped
    _close(ours, tf.vmap(pick(torch))(torch.tensor(x)))


def test_an_in_place_op_on_a_batched_tensor_is_batched():
    calls = []

    def f(lib):
        def g(a):
            calls.append(1)
            b = a * 2.0
            b.sqrt_().add_(1.0)
            c = (a * 0.0).fill_(2.0)  # a fill, the same for every example
            return b + c.copy_(c * a)  # and a copy, each example its own

        return g

    x = np.abs(RNG.standard_normal((4, 3)))
    ours = cf.vmap(f(cr))(cr.tensor(x))
    assert len(calls) == 1
    _close(ours, tf.vmap(f(torch))(torch.tensor(x)))


@pytest.mark.parametrize("in_dims", [0, 1])
def test_sorts_maxima_and_comparisons_run_batched(in_dims):
    calls = []

    def f(lib):
        def g(a):
            calls.append(1)
            top = a.topk(2, dim=-1).values.sum(-1, keepdim=True) + a.sort(dim=0).values
            return lib.where(a > 0, a.max(dim=-1, keepdim=True).values, top.triu())

        return g

    x = RNG.standard_normal((3, 3, 3))
    ours = cf.vmap(f(cr), in_dims)(cr.tensor(x))
    assert len(calls) == 1
    _close(ours, tf.vmap(f(torch), in_dims)(torch.tensor(x)))


def test_scatters_by_constant_and_batched_indices_run_batched():
    calls = []
    x = RNG.standard_normal((3, 2, 4))
    index = np.array([[[0, 1, 0, 1]], [[1, 1, 1, 1]], [[0, 0, 0, 0]]])

    def f(lib):
        def g(a, i):
            calls.append(1)
            summed = a.scatter_reduce(1, lib.tensor([[0, 1], [1, 1]]), a[:, :2] * 2, "sum")
            return summed + a.scatter(0, i, 5.0)

        return g

    ours = cf.vmap(f(cr))(cr.tensor(x), cr.tensor(index))
    assert len(calls) == 1
    _close(ours, tf.vmap(f(torch))(torch.tensor(x), torch.tensor(index)))


@pytest.mark.parametrize("in_dims", [0, 2])
def test_pads_and_diagonals_run_batched(in_dims):
    calls = []

    def f(lib):
        def g(a):
            calls.append(1)
            padded = lib.nn.functional.pad(a, (1, 2, 0, 1), value=0.5)  # (4, 6)
            return padded.diagonal(offset=1) + a.diagonal(0, -1, 0).sum()

        return g

    x = RNG.standard_normal((3, 3, 3))
    ours = cf.vmap(f(cr), in_dims)(cr.tensor(x))
    assert len(calls) == 1
    _close(ours, tf.vmap(f(torch), in_dims)(torch.tensor(x)))


@pytest.mark.parametrize(
    "f",
    [
        lambda m, x, y, z: m.addcmul(x, y, z, value=2),
        lambda m, x, y, z: m.addcdiv(x, y, z.abs() + 1),
        lambda m, x, y, z: m.lerp(x, y, z),
        lambda m, x, y, z: m.log2(x.abs()) + m.log10(y.abs()),
        lambda m, x, y, z: m.remainder(x, z) + m.round(y, decimals=1) + x.floor(),
    ],
)
def test_the_one_node_elementwise_ops_are_batched_by_the_rule(monkeypatch, f):
    """addcmul, addcdiv, lerp, log2, log10, remainder and the roundings: one call on the
    batch (a batched and an unbatched operand broadcasting), not the per-example loop."""
    from chainrule import batching

    looped = []
    monkeypatch.setattr(batching, "loop", lambda *a: looped.append(a[0].__name__))
    x, y, z = (
        np.random.default_rng(k).standard_normal(s)
        for k, s in ((0, (4, 3)), (1, (4, 3)), (2, (3,)))
    )
    got = cf.vmap(lambda a, b: f(cr, a, b, cr.tensor(z)))(cr.tensor(x), cr.tensor(y))
    assert looped == []
    _close(
        got, tf.vmap(lambda a, b: f(torch, a, b, torch.tensor(z)))(torch.tensor(x), torch.tensor(y))
    )
