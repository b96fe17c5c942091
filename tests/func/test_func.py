"""chainrule.func against torch.func: each transform on its own, nested, over modules, and
jvp over every row of the op catalog."""

import numpy as np
import pytest
import torch
import torch.func as tf

import chainrule as cr
import chainrule.func as cf
from tests.ops import test_ops as catalog

RNG = np.random.default_rng(0)


def both(*shapes):
    arrays = [RNG.standard_normal(s) for s in shapes]
    return [cr.tensor(a) for a in arrays], [torch.tensor(a) for a in arrays]


def same(ours, theirs, tol=1e-10):
    if isinstance(theirs, dict):
        assert list(ours) == list(theirs)
        for k in theirs:
            same(ours[k], theirs[k], tol)
    elif isinstance(theirs, (tuple, list)):
        assert type(ours) is type(theirs) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs, strict=True):
            same(a, b, tol)
    else:
        assert tuple(ours.shape) == tuple(theirs.shape)
        np.testing.assert_allclose(
            ours.detach().numpy(), theirs.detach().numpy(), rtol=tol, atol=tol
        )


def loss(lib, w, x):
    return (lib.tanh(x @ w) ** 2).sum() + w.exp().mean()


def test_grad_and_grad_and_value_match_torch():
    (w, x), (tw, tx) = both((3, 2), (4, 3))
    same(
        cf.grad(lambda w, x: loss(cr, w, x))(w, x), tf.grad(lambda w, x: loss(torch, w, x))(tw, tx)
    )
    ours = cf.grad_and_value(lambda w, x: loss(cr, w, x), argnums=(0, 1))(w, x)
    theirs = tf.grad_and_value(lambda w, x: loss(torch, w, x), argnums=(0, 1))(tw, tx)
    same(ours, theirs)
    assert ours[1].grad_fn is None and not w.requires_grad  # nothing leaks to the caller


def test_grad_of_a_dict_and_with_aux():
    (a, b), (ta, tb) = both((3,), (2,))

    def f(lib, p):
        return (p["a"].sin() * 2).sum(), {"kept": p["a"] * 3}

    ours = cf.grad(lambda p: f(cr, p), has_aux=True)({"a": a, "b": b})
    theirs = tf.grad(lambda p: f(torch, p), has_aux=True)({"a": ta, "b": tb})
    same(ours, theirs)  # the unused "b" gets zeros, as torch's


def test_grad_errors_name_what_is_wrong():
    with pytest.raises(RuntimeError, match="expected f\\(\\*args\\) to return a 0-d Tensor"):
        cf.grad(lambda x: x * 2)(cr.ones(2))
    with pytest.raises(RuntimeError, match="got argnum=3, but only 1 positional inputs"):
        cf.grad(lambda x: x.sum(), argnums=3)(cr.ones(2))
    with pytest.raises(RuntimeError, match="floating point"):
        cf.grad(lambda x: x.sum())(cr.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="has_aux=True, the function must return"):
        cf.grad(lambda x: x.sum(), has_aux=True)(cr.ones(2))


def test_vjp_jvp_and_linearize_match_torch():
    (w, x, u), (tw, tx, tu) = both((3, 2), (4, 3), (4, 2))
    out, fn = cf.vjp(lambda w, x: cr.tanh(x @ w), w, x)
    tout, tfn = tf.vjp(lambda w, x: torch.tanh(x @ w), tw, tx)
    same(out, tout)
    same(fn(u), tfn(tu))
    (v, dx), (tv, tdx) = both((3, 2), (4, 3))
    same(
        cf.jvp(lambda w, x: cr.tanh(x @ w), (w, x), (v, dx)),
        tf.jvp(lambda w, x: torch.tanh(x @ w), (tw, tx), (tv, tdx)),
    )
    out, fn = cf.linearize(lambda w: cr.sin(w) * w, w)
    tout, tfn = tf.linearize(lambda w: torch.sin(w) * w, tw)
    same(out, tout)
    same(fn(v), tfn(tv))


@pytest.mark.parametrize("transform", ["jacrev", "jacfwd"])
def test_jacobians_match_torch(transform):
    (w, x), (tw, tx) = both((3, 2), (4, 3))
    ours = getattr(cf, transform)(lambda w, x: cr.tanh(x @ w), argnums=(0, 1))(w, x)
    theirs = getattr(tf, transform)(lambda w, x: torch.tanh(x @ w), argnums=(0, 1))(tw, tx)
    same(ours, theirs)
    ours = getattr(cf, transform)(lambda d: {"s": d["p"].sin(), "e": d["p"].exp().sum()})({"p": x})
    theirs = getattr(tf, transform)(lambda d: {"s": d["p"].sin(), "e": d["p"].exp().sum()})(
        {"p": tx}
    )
    same(ours, theirs)
    (s,), (ts,) = both(())  # a 0-d input and output: a 0-d Jacobian
    same(
        getattr(cf, transform)(lambda s: (s * s).sin())(s),
        getattr(tf, transform)(lambda s: (s * s).sin())(ts),
    )


def test_hessians_and_nested_transforms_match_torch():
    (x,), (tx,) = both((4,))

    def f(lib, x):
        return (lib.sin(x) * x**2).sum() + x.prod()

    same(cf.hessian(lambda x: f(cr, x))(x), tf.hessian(lambda x: f(torch, x))(tx))
    same(cf.jacrev(cf.jacrev(lambda x: f(cr, x)))(x), tf.hessian(lambda x: f(torch, x))(tx))
    s, ts = x[0].detach(), tx[0].detach()
    second = tf.grad(tf.grad(lambda s: torch.sin(s) * s**3))(ts)
    same(cf.grad(cf.grad(lambda s: cr.sin(s) * s**3))(s), second)
    same(cf.jacfwd(cf.grad(lambda x: f(cr, x)))(x), tf.jacfwd(tf.grad(lambda x: f(torch, x)))(tx))


def test_a_transform_of_a_tensor_that_requires_grad_stays_differentiable():
    w = cr.tensor([0.5, -1.0], requires_grad=True)
    g = cf.grad(lambda w: (w**3).sum())(w)  # 3 w², differentiable in w
    g.sum().backward()
    same(w.grad, torch.tensor([3.0, -6.0]))


class MLP(cr.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = cr.nn.Linear(3, 5), cr.nn.Linear(5, 2)

    def forward(self, x):
        return self.fc2(cr.relu(self.fc1(x)))


def test_functional_call_uses_the_given_tensors_and_restores_the_module():
    cr.manual_seed(0)
    model = MLP()
    x = cr.randn(4, 3)
    params = {k: v.detach() * 2 for k, v in model.named_parameters()}
    before = {k: v.clone() for k, v in model.state_dict().items()}
    out = cf.functional_call(model, params, (x,))
    doubled = MLP()
    doubled.load_state_dict({k: v * 2 for k, v in before.items()})
    same(out, doubled(x))
    for k, v in model.state_dict().items():
        same(v, before[k], 0)
    assert all(isinstance(p, cr.nn.Parameter) for p in model.parameters())
    with pytest.raises(RuntimeError, match="Missing key\\(s\\): 'fc1.bias'"):
        cf.functional_call(
            model, {k: v for k, v in params.items() if k != "fc1.bias"}, x, strict=True
        )
    with pytest.raises(ValueError, match="appear in more than one dict"):
        cf.functional_call(model, (params, {"fc1.weight": params["fc1.weight"]}), x)


def test_functional_call_ties_tied_weights():
    emb = cr.nn.Embedding(5, 3)
    head = cr.nn.Linear(3, 5, bias=False)
    head.weight = emb.weight
    model = cr.nn.Sequential(emb, head)
    w = cr.randn(5, 3)
    out = cf.functional_call(model, {"0.weight": w}, (cr.tensor([1, 2]),))
    same(out, w[[1, 2]] @ w.T)
    untied = cf.functional_call(model, {"0.weight": w}, (cr.tensor([1, 2]),), tie_weights=False)
    same(untied, w[[1, 2]] @ emb.weight.T)


def test_per_sample_gradients_by_vmap_of_grad_equal_a_loop():
    """The tutorial: per-sample gradients of a model by vmap(grad(...)) over functional_call."""
    cr.manual_seed(0)
    model = MLP()
    params = {k: v.detach() for k, v in model.named_parameters()}
    data, targets = cr.randn(8, 3), cr.randint(0, 2, (8,))

    def loss_one(params, x, t):
        out = cf.functional_call(model, params, (x.unsqueeze(0),))
        return cr.nn.functional.cross_entropy(out, t.unsqueeze(0))

    per_sample = cf.vmap(cf.grad(loss_one), in_dims=(None, 0, 0))(params, data, targets)
    for i in range(8):
        model.zero_grad()
        cr.nn.functional.cross_entropy(model(data[i : i + 1]), targets[i : i + 1]).backward()
        for k, p in model.named_parameters():  # float32, batched by other products
            same(per_sample[k][i], p.grad, 1e-6)


def f_mapped(lib, a, b):
    return (a * b).sum(), lib.outer(a, a)


@pytest.mark.parametrize(
    "in_dims, out_dims, second",
    [((0, None), 0, (4,)), ((1, 0), (0, 2), (4,)), ((1, None), (0, 1), (3,)), (1, (0, 1), (3, 4))],
)
def test_vmap_matches_torch_over_in_dims_and_out_dims(in_dims, out_dims, second):
    (x, y), (tx, ty) = both((3, 4), second)
    ours = cf.vmap(lambda a, b: f_mapped(cr, a, b), in_dims, out_dims)(x, y)
    same(ours, tf.vmap(lambda a, b: f_mapped(torch, a, b), in_dims, out_dims)(tx, ty))


def test_vmap_refusals_and_randomness():
    with pytest.raises(ValueError, match="same size in the mapped dimension; got sizes \\[3, 4\\]"):
        cf.vmap(lambda a, b: a + b)(cr.ones(3, 2), cr.ones(4, 2))
    with pytest.raises(ValueError, match="must only return Tensors; got int"):
        cf.vmap(lambda a: 3)(cr.ones(3))
    with pytest.raises(RuntimeError, match="random operation while in randomness error mode"):
        cf.vmap(lambda a: a + cr.rand(1))(cr.ones(3))
    same_draws = cf.vmap(lambda a: a + cr.rand(1), randomness="same")(cr.zeros(3, 1))
    assert len(set(same_draws.flatten().tolist())) == 1
    different = cf.vmap(lambda a: a + cr.rand(1), randomness="different")(cr.zeros(3, 1))
    assert len(set(different.flatten().tolist())) == 3


def test_an_ensemble_runs_by_vmap_over_stacked_states():
    cr.manual_seed(0)
    models = [MLP() for _ in range(3)]
    params, buffers = cf.stack_module_state(models)
    assert params["fc1.weight"].shape == (3, 5, 3) and params["fc1.weight"].requires_grad
    x = cr.randn(4, 3)

    def one(p, b, x):
        return cf.functional_call(models[0], (p, b), (x,))

    outs = cf.vmap(one, in_dims=(0, 0, None))(params, buffers, x)
    for i, m in enumerate(models):
        same(outs[i], m(x), 1e-6)  # float32: one batched product against one per model
    with pytest.raises(RuntimeError, match="expected all models to be of the same class"):
        cf.stack_module_state([MLP(), cr.nn.Linear(2, 2)])


JVP_ROWS = [r for r in catalog.ROWS if r.grad and r.numeric]


@pytest.mark.parametrize("row", JVP_ROWS, ids=[r.name for r in JVP_ROWS])
def test_jvp_of_every_catalog_row_matches_torch(row):
    ours, theirs = catalog._inputs(row, np.float64)
    slots = [i for i, a in enumerate(ours) if isinstance(a, cr.Tensor)]
    rng = np.random.default_rng(1)
    tangents = [rng.standard_normal(tuple(ours[i].shape)) for i in slots]

    def call(lib, inputs):
        def f(*xs):
            full = list(inputs)
            for i, x in zip(slots, xs, strict=True):
                full[i] = x
            out = (row.torch_fn or row.fn)(lib, *full) if lib is torch else row.fn(lib, *full)
            outs = out if isinstance(out, tuple) else (out,)
            return tuple(o for o in outs if o.is_floating_point())

        return f

    prim = tuple(ours[i].detach() for i in slots)
    tprim = tuple(theirs[i].detach() for i in slots)
    got = cf.jvp(call(cr, ours), prim, tuple(cr.tensor(t) for t in tangents))
    ttangents = tuple(torch.tensor(t) for t in tangents)
    f = call(torch, theirs)
    # PyTorch's jvp: its forward mode's, or where that is missing or wrong, its reverse mode
    # differentiated again; each is taken only where central differences of PyTorch's function
    # confirm it (both are wrong for scatter_reduce's product over zeros), else those decide
    eps = 1e-6
    ups = f(*[p + eps * t for p, t in zip(tprim, ttangents, strict=True)])
    downs = f(*[p - eps * t for p, t in zip(tprim, ttangents, strict=True)])
    numeric = tuple((u - d) / (2 * eps) for u, d in zip(ups, downs, strict=True))
    want, tol = numeric, 1e-5
    for mode in (tf.jvp, torch.autograd.functional.jvp):
        try:
            answer = mode(f, tprim, ttangents)[1]
        except (NotImplementedError, RuntimeError):  # not implemented in PyTorch
            continue
        close = [
            torch.allclose(a, n, rtol=1e-4, atol=1e-5) for a, n in zip(answer, numeric, strict=True)
        ]
        if all(close):
            want, tol = answer, 1e-8
            break
    same(got[1], tuple(want), tol)
