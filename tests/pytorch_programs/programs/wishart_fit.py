"""A covariance fitted by maximum likelihood under a Wishart prior, as a statistics notebook
writes it: the Gaussian log-likelihood through one LU factorisation (torch.linalg.lu_factor,
lu_solve for the quadratic form, the log-determinant from U's diagonal), the Wishart's
normaliser by torch.mvlgamma, a chained product by torch.linalg.multi_dot, and an induced
1-norm penalty by torch.linalg.matrix_norm; trained by Adam on a factor of the covariance."""

import math

import torch


def main(seed=0, init=None, steps=20):
    torch.manual_seed(seed)
    d, n = 4, 40
    mix = torch.randn(d, d, dtype=torch.float64) / 2 + torch.eye(d, dtype=torch.float64)
    X = torch.randn(n, d, dtype=torch.float64) @ mix.T  # (n, d), correlated
    params = [torch.eye(d, dtype=torch.float64).clone().requires_grad_(True)]
    if init is not None:
        init(params)
    (F,) = params
    opt = torch.optim.Adam(params, lr=0.05)
    dof = torch.tensor(d + 2.0, dtype=torch.float64)
    prior = torch.eye(d, dtype=torch.float64)
    losses, names = [], set()
    for _ in range(steps):
        opt.zero_grad()
        S = torch.linalg.multi_dot([F, F.T]) + 0.1 * prior  # (d, d), positive definite
        LU, pivots = torch.linalg.lu_factor(S)
        solved = torch.linalg.lu_solve(LU, pivots, X.T)  # (d, n): S^-1 x_i
        quad = (X.T * solved).sum()
        logdet = LU.diagonal().abs().log().sum()
        nll = 0.5 * quad + 0.5 * n * logdet
        trace = torch.linalg.lu_solve(LU, pivots, prior).diagonal().sum()  # tr(S^-1)
        wishart = 0.5 * (dof - d - 1) * logdet + 0.5 * trace + torch.mvlgamma(dof / 2, d)
        penalty = 1e-2 * torch.linalg.matrix_norm(F, 1)
        loss = nll + wishart + penalty + 0.5 * d * n * math.log(2 * math.pi)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        names |= {node.grad_fn.name() for node in (S, solved, penalty) if node.grad_fn}
    return {
        "losses": losses,
        "F": F.detach().numpy().copy(),
        "names": sorted(names),
        "mvlgamma_node": torch.mvlgamma(dof.clone().requires_grad_(True), d).grad_fn.name(),
    }
