"""Robust regression on data with missing values and outliers: each column's gaps filled with
its nanmedian and the column centred on its median and scaled by its interquartile range
(nanquantile), a linear model trained on a trimmed loss (the residuals past their 0.9
quantile left out, the median residual added). Then the statistics a report reads: the steps'
changes of loss (diff), the best loss so far (cummin), a soft maximum of the losses so far
(logcumsumexp), the correlation of predictions and targets (corrcoef, cov), the most common
rounded prediction (mode), the second smallest residual (kthvalue); and the misuses both
libraries refuse."""

import numpy as np
import torch


def main(seed=0, steps=30, init=None):
    rng = np.random.default_rng(seed)
    n, d = 64, 4
    x = rng.standard_normal((n, d)).astype(np.float32)
    y = x @ np.array([1.5, -2.0, 0.5, 3.0], dtype=np.float32) + 0.1 * rng.standard_normal(n)
    y[::9] += 20.0  # outliers
    x[rng.random((n, d)) < 0.1] = np.nan  # missing values
    x, y = torch.tensor(x), torch.tensor(y, dtype=torch.float32)

    fill = x.nanmedian(dim=0).values  # (d,)
    x = torch.where(x.isnan(), fill, x)
    spread = x.nanquantile(0.75, dim=0) - x.nanquantile(0.25, dim=0)  # (d,)
    x = (x - x.median(dim=0, keepdim=True).values) / spread  # (n, d)
    low, high = torch.aminmax(x, dim=0)

    model = torch.nn.Linear(d, 1)
    if init is not None:
        init(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for _ in range(steps):
        residuals = (model(x).squeeze(1) - y).abs()  # (n,)
        cut = residuals.quantile(0.9).detach()
        inliers = residuals <= cut
        trimmed = torch.where(inliers, residuals, torch.full_like(residuals, float("nan")))
        loss = trimmed.nansum() / inliers.count_nonzero() + torch.median(residuals)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())

    history = torch.tensor(losses)
    with torch.no_grad():
        predictions = model(x).squeeze(1)
        residuals = (predictions - y).abs()
        paired = torch.stack([predictions, y])  # (2, n)
        report = {
            "changes": torch.diff(history, prepend=history[:1]).numpy(),
            "best_so_far": history.cummin(0).values.numpy(),
            "soft_max_so_far": torch.logcumsumexp(history, dim=0).numpy(),
            "correlation": torch.corrcoef(paired)[0, 1].item(),
            "covariance": torch.cov(paired, correction=0).numpy(),
            "common": torch.mode(predictions.round()).values.item(),
            "second_smallest": residuals.kthvalue(2).values.item(),
            "mean_of_present": torch.nanmean(trimmed).item(),
            "ranges": (high - low).numpy(),
        }

    mistakes = {
        "quantile-of-ints": lambda: torch.quantile(torch.arange(5), 0.5),
        "quantile-past-1": lambda: history.quantile(1.5),
        "kthvalue-past-the-end": lambda: history.kthvalue(steps + 1),
        "median-of-bools": lambda: inliers.median(),
        "cov-of-3d": lambda: torch.cov(torch.ones(2, 2, 2)),
        "logcumsumexp-of-ints": lambda: torch.arange(3).logcumsumexp(0),
    }
    refused = {}
    for name, make in mistakes.items():
        try:
            make()
            refused[name] = False
        except (RuntimeError, TypeError, ValueError, NotImplementedError):
            refused[name] = True
    return {"losses": losses, "report": report, "refused": refused}
