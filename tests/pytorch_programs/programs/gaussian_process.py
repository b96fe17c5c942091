"""Gaussian-process regression as an older course notebook writes it, with the Tensor methods
of torch's linear algebra: the marginal likelihood through K.cholesky(), cholesky_solve and
logdet, its hyperparameters fitted by Adam; then the posterior mean by K.inverse(), by
cholesky_inverse, by an LU solve and by two triangular solves, which must agree; and the
data's noise drawn by randn_like on a transposed tensor (filled in memory order)."""

import math

import torch


def kernel(a, b, log_len, log_scale):
    """The squared-exponential kernel between the rows of a (n, d) and b (m, d)."""
    d2 = (a.unsqueeze(1) - b.unsqueeze(0)).pow(2).sum(-1)  # (n, m)
    return (2 * log_scale).exp() * (-0.5 * d2 / (2 * log_len).exp()).exp()


def main(seed=0, init=None, steps=25):
    torch.manual_seed(seed)
    X = torch.rand(2, 30, dtype=torch.float64).t() * 4  # (30, 2), column-major
    noise = torch.randn_like(X)  # drawn in X's memory order, as torch fills
    y = (X[:, :1].sin() + X[:, 1:].cos()) + 0.1 * noise[:, :1]  # (30, 1)
    params = [torch.zeros(1, dtype=torch.float64, requires_grad=True) for _ in range(3)]
    if init is not None:
        init(params)
    log_len, log_scale, log_noise = params
    opt = torch.optim.Adam(params, lr=0.05)
    eye = torch.eye(len(X), dtype=torch.float64)
    losses = []
    for _ in range(steps):
        K = kernel(X, X, log_len, log_scale) + (2 * log_noise).exp() * eye
        L = K.cholesky()
        alpha = y.cholesky_solve(L)  # K^-1 y
        nll = 0.5 * (y * alpha).sum() + 0.5 * K.logdet() + 0.5 * len(X) * math.log(2 * math.pi)
        losses.append(nll.item())
        opt.zero_grad()
        nll.backward()
        opt.step()
    with torch.no_grad():
        K = kernel(X, X, log_len, log_scale) + (2 * log_noise).exp() * eye
        L = K.cholesky()
        LU, pivots = K.lu()
        sign, logabs = K.slogdet()
        Q, R = K.qr()
        U, S, V = X.svd()
        means = {
            "inverse": K.inverse() @ y,
            "cholesky_inverse": L.cholesky_inverse() @ y,
            "lu_solve": y.lu_solve(LU, pivots),
            "triangular": y.triangular_solve(L, upper=False)[0].triangular_solve(
                L, upper=False, transpose=True
            )[0],
            "pinverse": K.pinverse() @ y,
        }
        return {
            "losses": losses,
            "noise": noise.tolist(),
            "hyper": [p.item() for p in params],
            "means": {k: v.reshape(-1).tolist() for k, v in means.items()},
            "logdet": [
                K.logdet().item(),
                logabs.item(),
                sign.item(),
                2 * L.diagonal().log().sum().item(),
            ],
            "det_small": (K[:3, :3] * 10).det().item(),
            "R_diag": R.diagonal().abs().tolist(),
            "Q_orthogonal": (Q.mT @ Q - eye).abs().max().item(),
            "singular_values": S.tolist(),
            "V_squared": (V**2).tolist(),
            "power": (K.matrix_power(3) - K @ K @ K).abs().max().item(),
            "exp_trace": (0.1 * K[:4, :4]).matrix_exp().trace().item(),
        }


if __name__ == "__main__":
    print(main())
