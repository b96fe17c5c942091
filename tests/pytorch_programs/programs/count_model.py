"""A negative binomial regression of counts, its likelihood written with lgamma, xlogy and
logaddexp, its weights kept small by an asinh penalty, trained with Adam. Then a report
made of the elementwise math: digamma and trigamma of the dispersion, erfinv's quantiles,
the angles and radii of the inputs (atan2, hypot, rad2deg), the counts' integer arithmetic
(gcd, lcm, the bitwise ops and shifts), NaN-aware maxima, frexp, in-place forms; and the
misuses both libraries refuse."""

import math

import numpy as np
import torch


def main(seed=0, steps=40, init=None):
    rng = np.random.default_rng(seed)
    n = 96
    x = rng.standard_normal((n, 3)).astype(np.float32)
    rate = np.exp(0.5 + x @ np.array([0.4, -0.3, 0.2], dtype=np.float32))
    k = torch.tensor(rng.poisson(rate), dtype=torch.float32)  # (n,) counts
    x = torch.tensor(x)

    model = torch.nn.Linear(3, 2)  # log mean, log dispersion
    if init is not None:
        init(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
    losses = []
    for _ in range(steps):
        out = model(x)  # (n, 2)
        log_mu, log_r = out[:, 0], out[:, 1]
        mu, r = log_mu.exp(), log_r.exp()
        log_total = torch.logaddexp(log_r, log_mu)  # log(r + mu)
        likelihood = (
            torch.lgamma(k + r) - torch.lgamma(r) - torch.lgamma(k + 1)
            + torch.xlogy(r, r) + torch.xlogy(k, mu) - (k + r) * log_total
        )  # fmt: skip
        penalty = torch.asinh(model.weight).square().sum() + torch.sinc(model.bias).sum()
        loss = -likelihood.mean() + 0.01 * penalty
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())

    with torch.no_grad():
        r = model(x)[:, 1].exp()
        counts = k.long()
        angles = torch.atan2(x[:, 1], x[:, 0])
        history = torch.tensor(losses)
        with_gaps = torch.where(counts % 3 == 0, torch.tensor(math.nan), k)
        mantissa, exponent = torch.frexp(history)
        clamped = history.clone()
        clamped.clamp_min_(history.median()).tan_()
        flags = (counts > 1).float()
        flags.logical_and_(counts < 5)
        report = {
            "digamma": r.digamma().mean().item(),
            "trigamma": torch.polygamma(1, r).mean().item(),
            "quantiles": torch.erfinv(torch.linspace(-0.9, 0.9, 7)).tolist(),
            "i0": torch.i0(angles).mean().item(),
            "degrees": torch.rad2deg(angles)[:5].tolist(),
            "radius": torch.hypot(x[:, 0], x[:, 1]).mean().item(),
            "logit": torch.logit(torch.linspace(0, 1, 5), eps=1e-3).tolist(),
            "gcd": torch.gcd(counts, torch.tensor(6)).tolist(),
            "lcm": torch.lcm(counts[:8], torch.tensor(4)).tolist(),
            "bits": ((counts & 5) | (counts ^ 3)).tolist(),
            "shifts": ((counts << 2) >> 1).tolist(),
            "masks": (~(counts > 2) & (counts != 0)).tolist(),
            "fmax": torch.fmax(with_gaps, k.flip(0)).tolist(),
            "nan_to_num": torch.nan_to_num(with_gaps.log(), neginf=-1.0).tolist(),
            "mantissa": mantissa.tolist(),
            "exponent": exponent.tolist(),
            "copysign": torch.copysign(history[:4], -1.0).tolist(),
            "fmod": torch.fmod(k - 3, 2.5).tolist(),
            "clamped": clamped.tolist(),
            "flags": flags.tolist(),
            "float_power": torch.float_power(k[:4], 2).tolist(),
            "signbit": torch.signbit(x[:6, 0]).tolist(),
        }

    refused = {}
    for name, misuse in {
        "bitwise of floats": lambda: k & k,
        "gcd of floats": lambda: torch.gcd(k, k),
        "frac of integers": lambda: counts.frac(),
        "hypot of integers": lambda: torch.hypot(counts, counts),
        "frexp of integers": lambda: torch.frexp(counts),
    }.items():
        try:
            misuse()
            refused[name] = False
        except (TypeError, RuntimeError, ValueError):
            refused[name] = True
    return {"losses": losses, "report": report, "refused": refused}
