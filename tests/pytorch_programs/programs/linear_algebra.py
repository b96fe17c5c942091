"""A linear-algebra lab in the style of a machine-learning course: least squares and ridge
regression in closed form (torch.linalg.lstsq, solve, cholesky) and by gradient descent,
which must agree; PCA of correlated data by torch.linalg.svd (and eigh of the covariance);
and a small normalising flow, a stack of invertible linear maps and elementwise affine
couplings, trained by maximum likelihood through torch.linalg.slogdet."""

import math

import torch


def regression(n=200, d=5, lam=0.5, steps=300, lr=0.1):
    """Closed-form least squares and ridge, then the same fits by gradient descent."""
    X = torch.randn(n, d, dtype=torch.float64)
    w_true = torch.linspace(-1.0, 1.0, d, dtype=torch.float64)
    y = X @ w_true + 0.1 * torch.randn(n, dtype=torch.float64)

    w_ls = torch.linalg.lstsq(X, y.unsqueeze(-1)).solution.squeeze(-1)  # (d,)
    gram = X.T @ X + lam * torch.eye(d, dtype=torch.float64)  # (d, d)
    w_ridge = torch.linalg.solve(gram, X.T @ y)
    L = torch.linalg.cholesky(gram)  # the same ridge solution through its Cholesky factor
    w_chol = torch.cholesky_solve((X.T @ y).unsqueeze(-1), L).squeeze(-1)

    w = torch.zeros(d, dtype=torch.float64, requires_grad=True)
    v = torch.zeros(d, dtype=torch.float64, requires_grad=True)
    losses = []
    for _ in range(steps):
        loss = ((X @ w - y) ** 2).mean()
        ridge = ((X @ v - y) ** 2).sum() / n + lam / n * (v**2).sum()
        losses.append(loss.item())
        gw, gv = torch.autograd.grad([loss, ridge], [w, v])
        with torch.no_grad():
            w -= lr * gw
            v -= lr * gv
    residual = torch.linalg.vector_norm(X @ w_ls - y) ** 2
    return {
        "w_ls": w_ls.tolist(),
        "w_ridge": w_ridge.tolist(),
        "w_chol": w_chol.tolist(),
        "w_gd": w.detach().tolist(),
        "v_gd": v.detach().tolist(),
        "losses": losses,
        "residual": residual.item(),
        "cond": torch.linalg.cond(X).item(),
        "rank": torch.linalg.matrix_rank(X).item(),
    }


def pca(n=300, k=2):
    """The principal axes of 3-D data stretched along two directions."""
    mix = torch.tensor([[3.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 0.1]], dtype=torch.float64)
    data = torch.randn(n, 3, dtype=torch.float64) @ mix
    centred = data - data.mean(0)
    U, S, Vh = torch.linalg.svd(centred, full_matrices=False)
    explained = S**2 / (S**2).sum()
    projected = centred @ Vh[:k].T  # (n, k)
    cov = centred.T @ centred / (n - 1)
    eigenvalues, _ = torch.linalg.eigh(cov)
    # the axes up to sign: each as the outer product of itself
    axes = torch.stack([torch.outer(Vh[i], Vh[i]) for i in range(k)])
    return {
        "singular_values": S.tolist(),
        "explained": explained.tolist(),
        "eigenvalues": eigenvalues.flip(0).tolist(),
        "axes": axes.tolist(),
        "projected_norm": torch.linalg.matrix_norm(projected).item(),
        "reconstruction": torch.linalg.norm(centred - projected @ Vh[:k]).item(),
    }


class LinearFlow(torch.nn.Module):
    """z = (x W) * exp(s) + b per layer: log|det| = log|det W| + sum(s)."""

    def __init__(self, dim, layers):
        super().__init__()
        self.weights = torch.nn.ParameterList(
            [
                torch.nn.Parameter(torch.eye(dim) + 0.1 * torch.randn(dim, dim))
                for _ in range(layers)
            ]
        )
        self.scales = torch.nn.ParameterList(
            [torch.nn.Parameter(torch.zeros(dim)) for _ in range(layers)]
        )
        self.shifts = torch.nn.ParameterList(
            [torch.nn.Parameter(torch.zeros(dim)) for _ in range(layers)]
        )

    def forward(self, x):
        log_det = torch.zeros(())
        for W, s, b in zip(self.weights, self.scales, self.shifts, strict=True):
            x = (x @ W) * torch.exp(s) + b
            log_det = log_det + torch.linalg.slogdet(W).logabsdet + s.sum()
        return x, log_det


def flow(steps=60, n=256, init=None):
    """Fit a 2-D Gaussian with a correlated covariance by maximum likelihood."""
    cov = torch.tensor([[2.0, 1.2], [1.2, 1.0]])
    data = torch.randn(n, 2) @ torch.linalg.cholesky(cov).T + torch.tensor([1.0, -0.5])
    model = LinearFlow(2, 2)
    if init is not None:
        init(model)
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    losses = []
    for _ in range(steps):
        z, log_det = model(data)
        log_prob = -0.5 * (z**2).sum(1) - math.log(2 * math.pi) + log_det
        loss = -log_prob.mean()
        losses.append(loss.item())
        opt.zero_grad()
        loss.backward()
        opt.step()
    with torch.no_grad():
        W = model.weights[0]
        inv = torch.linalg.inv(W)
        round_trip = torch.linalg.matrix_norm(W @ inv - torch.eye(2)).item()
    return {"losses": losses, "round_trip": round_trip}


def main(seed=0, init=None):
    torch.manual_seed(seed)
    out = {"regression": regression(), "pca": pca()}
    out["flow"] = flow(init=init)
    return out


if __name__ == "__main__":
    print(main())
