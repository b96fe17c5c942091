"""Jacobians, Hessians and a neural tangent kernel in the style of PyTorch's torch.func
tutorials: the Jacobian of a small layer by jacrev, by jacfwd and by vmap over vjp (the
tutorial's "by hand" way), batched over examples with vmap; its Hessian by hessian and by
jacfwd(jacrev); a Hessian-vector product by jvp of grad; a small MLP's Jacobian in its
parameters by jacrev and jacfwd and its Hessian in its input by three transforms; then its
empirical NTK, once from the Jacobians of every parameter (jacrev over functional_call,
vmapped over examples, contracted with einsum) and once by vjp and jvp without building them."""

import numpy as np
import torch
import torch.nn.functional as F
from torch.func import functional_call, grad, hessian, jacfwd, jacrev, jvp, vjp, vmap


def predict(weight, bias, x):
    return F.linear(x, weight, bias).tanh()


def jacobians(rng):
    d = 6
    weight = torch.tensor(rng.standard_normal((d, d)), dtype=torch.float64)
    bias = torch.tensor(rng.standard_normal(d), dtype=torch.float64)
    x = torch.tensor(rng.standard_normal(d), dtype=torch.float64)

    by_rev = jacrev(predict, argnums=2)(weight, bias, x)
    by_fwd = jacfwd(predict, argnums=2)(weight, bias, x)
    _, pullback = vjp(lambda x: predict(weight, bias, x), x)
    by_rows = vmap(pullback)(torch.eye(d, dtype=torch.float64))[0]  # one row per basis vector
    both = jacrev(predict, argnums=(0, 1))(weight, bias, x)  # to weight and to bias

    xs = torch.tensor(rng.standard_normal((5, d)), dtype=torch.float64)
    batched = vmap(jacrev(predict, argnums=2), in_dims=(None, None, 0))(weight, bias, xs)

    def scalar(x):
        return predict(weight, bias, x).sum()

    hess = hessian(scalar)(x)
    hess_fr = jacfwd(jacrev(scalar))(x)
    v = torch.tensor(rng.standard_normal(d), dtype=torch.float64)
    _, hvp = jvp(grad(scalar), (x,), (v,))
    return {
        "jacrev": by_rev.numpy().copy(),
        "jacfwd": by_fwd.numpy().copy(),
        "vjp_rows": by_rows.numpy().copy(),
        "to_weight": both[0].numpy().copy(),
        "to_bias": both[1].numpy().copy(),
        "batched": batched.numpy().copy(),
        "hessian": hess.numpy().copy(),
        "jacfwd_jacrev": hess_fr.numpy().copy(),
        "hvp": hvp.numpy().copy(),
        "hessian_v": (hess @ v).numpy().copy(),
    }


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(4, 16)
        self.fc2 = torch.nn.Linear(16, 3)

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))


def ntk(rng, init=None):
    net = MLP().double()
    if init is not None:  # the harness's record of the weights (overwritten below)
        init(net)
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(torch.tensor(rng.standard_normal(tuple(p.shape)) * 0.5))
    params = {k: v.detach() for k, v in net.named_parameters()}
    x1 = torch.tensor(rng.standard_normal((5, 4)), dtype=torch.float64)
    x2 = torch.tensor(rng.standard_normal((7, 4)), dtype=torch.float64)

    def one(params, x):  # the model on one example, as the tutorial's fnet_single
        return functional_call(net, params, (x.unsqueeze(0),)).squeeze(0)

    def by_jacobians(x1, x2):
        j1 = vmap(jacrev(one), (None, 0))(params, x1)
        j2 = vmap(jacrev(one), (None, 0))(params, x2)
        j1 = [j.flatten(2) for j in j1.values()]
        j2 = [j.flatten(2) for j in j2.values()]
        pairs = zip(j1, j2, strict=True)
        return torch.stack([torch.einsum("Naf,Mbf->NMab", a, b) for a, b in pairs]).sum(0)

    def by_products(x1, x2):  # the tutorial's NTK-vector products: no Jacobian is built
        def pair(a, b):
            out, pullback = vjp(lambda p: one(p, a), params)

            def column(vec):
                (cotangent,) = pullback(vec)
                return jvp(lambda p: one(p, b), (params,), (cotangent,))[1]

            basis = torch.eye(out.numel(), dtype=out.dtype).view(out.numel(), -1)
            return vmap(column)(basis)

        return vmap(vmap(pair, (None, 0)), (0, None))(x1, x2)

    def energy(x):  # the MLP's summed output at one input: its Hessian by each transform
        return one(params, x).sum()

    mlp_hessians = [hessian(energy)(x1[0]), jacfwd(jacrev(energy))(x1[0])]
    mlp_hessians.append(jacrev(jacrev(energy))(x1[0]))
    kernel = by_jacobians(x1, x2)  # (N, M, a, b)
    products = by_products(x1, x2)  # (N, M, b, a): the same kernel, transposed per pair
    return {
        "kernel": kernel.numpy().copy(),
        "by_products": products.transpose(-1, -2).numpy().copy(),
        "trace": torch.einsum("NMaa->NM", kernel).numpy().copy(),
        "mlp_jacobian": jacrev(one)(params, x1[0])["fc1.weight"].numpy().copy(),
        "mlp_jacobian_fwd": jacfwd(one)(params, x1[0])["fc1.weight"].numpy().copy(),
        "mlp_hessians": torch.stack(mlp_hessians).numpy().copy(),
    }


def main(seed=0, init=None):
    rng = np.random.default_rng(seed)
    return {**jacobians(rng), **ntk(rng, init)}
