"""Random ops judged by many draws: a sample's call repeated on each side, chainrule's draws
inside the distribution's support, and their mean and variance equal to PyTorch's own large
draw within five standard errors (seeded, so a run gives the same answer every time). The
calls themselves and the seeding are harness.py's."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

DRAWS = 10_000  # values per sample and side: a standard error of about 1% of the spread
REPEATS = (20, 1000)  # the fewest and most calls per sample and side
BOUND = 5.0  # standard errors a moment may differ by


def repeats(numel: int) -> int:
    """How many times to call a sample whose result holds `numel` values."""
    return min(max(math.ceil(DRAWS / max(numel, 1)), REPEATS[0]), REPEATS[1])


# --- support: where the draws of each op (op_db's name) must fall ---------------------------

Sample = tuple[Any, tuple[Any, ...], dict[str, Any]]  # PyTorch's input, args, kwargs


def _number(value: Any) -> float:
    return float(value.item() if isinstance(value, torch.Tensor) else value)


def _integers(x: np.ndarray) -> str:
    return "" if np.all(x == np.round(x)) else "a draw that is not an integer"


def _within(x: np.ndarray, low: float, high: float, closed: bool, what: str) -> str:
    outside = (x < low) | ((x > high) if closed else (x >= high))
    if np.any(outside):
        return f"a draw {float(x[outside].flat[0])!r} outside {what}"
    return ""


def _bernoulli(x: np.ndarray, sample: Sample) -> str:
    p = np.broadcast_to(sample[0].detach().numpy(), x.shape[1:])
    if not np.all((x == 0) | (x == 1)):
        return f"a draw {float(x[(x != 0) & (x != 1)].flat[0])!r} outside {{0, 1}}"
    if np.any((p == 0) & (x == 1)) or np.any((p == 1) & (x == 0)):
        return "a draw other than p where p is 0 or 1"
    return ""


def _multinomial(x: np.ndarray, sample: Sample) -> str:
    probs, args, kwargs = sample[0].detach().numpy(), sample[1], sample[2]
    replacement = kwargs.get("replacement", args[1] if len(args) > 1 else False)
    if why := _integers(x) or _within(x, 0, probs.shape[-1], False, "[0, categories)"):
        return why
    index = x.astype(np.int64)  # (repeats, [rows,] num_samples)
    rows = np.broadcast_to(probs, (*index.shape[:-1], probs.shape[-1]))
    if np.any(np.take_along_axis(rows, index, axis=-1) == 0):
        return "a category of probability 0 drawn"
    if not replacement and np.any(np.diff(np.sort(index, axis=-1), axis=-1) == 0):
        return "a category drawn twice in one row without replacement"
    return ""


def _randint(x: np.ndarray, sample: Sample) -> str:
    bounds = [sample[0], *sample[1][:-1]]  # randint(high, size) or randint(low, high, size)
    low, high = (0, bounds[0]) if len(bounds) == 1 else bounds[:2]
    return _integers(x) or _within(x, low, high, False, f"[{low}, {high})")


def _uniform(x: np.ndarray, sample: Sample) -> str:
    args = (*sample[1], *(0.0, 1.0)[len(sample[1]) :])  # uniform_(from=0, to=1)
    low, high = (_number(sample[2].get(k, a)) for k, a in zip(("from", "to"), args, strict=True))
    return _within(x, low, high, True, f"[{low}, {high}]")


def _dropout(x: np.ndarray, sample: Sample) -> str:
    values, kwargs = sample[0].detach().numpy(), sample[2]
    p, training = kwargs.get("p", 0.5), kwargs.get("training", True)
    kept = values if not training else values * 0 if p == 1 else values / (1 - p)
    same = np.isclose(x, kept, rtol=1e-6, atol=0)
    if training and p != 1:
        same |= x == 0
    return "" if np.all(same) else f"a value other than 0 and input / (1 - p) (p={p})"


SUPPORT: dict[str, Callable[[np.ndarray, Sample], str]] = {
    "bernoulli": _bernoulli,
    "multinomial": _multinomial,
    "randint": _randint,
    "uniform": _uniform,
    "nn.functional.dropout": _dropout,
    "geometric": lambda x, s: _integers(x) or _within(x, 1, np.inf, True, "[1, inf)"),
    "exponential": lambda x, s: _within(x, 0, np.inf, True, "[0, inf)"),
    "log_normal": lambda x, s: _within(x, 0, np.inf, True, "(0, inf)") or _nonzero(x),
}  # (op_db's rand_like entry calls randn_like: its draws are normal, as its moments show)


def _nonzero(x: np.ndarray) -> str:
    return "a draw of 0 where the support is (0, inf)" if np.any(x == 0) else ""


# Heavy-tailed draws compare through a map that gives them moments: a Cauchy draw has no
# mean, its arctangent has; a log-normal's log is normal.
TRANSFORMS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "cauchy": np.arctan,
    "log_normal": np.log,
}


# --- moments ----------------------------------------------------------------------------------


def moments(got: np.ndarray, want: np.ndarray) -> str:
    """Mean and variance of chainrule's draws (`got`, shape (repeats, *values)) against
    PyTorch's (`want`, the same shape): "" when each differs by at most BOUND standard
    errors of the difference, else what differs.

    Each value of the result may have its own distribution (normal's per-element means), so
    the mean is of all draws and the variance the mean of each value's variance over the
    repeats; their standard errors come from both sides' draws pooled, the distribution the
    two must share (so a rare value that only one side drew does not give a zero error)."""
    r = got.shape[0]
    got, want = got.reshape(r, -1), want.reshape(r, -1)
    n = got.shape[1]
    both = np.concatenate([got, want])  # (2 * repeats, values)
    var = both.var(axis=0, ddof=1)
    fourth = ((both - both.mean(axis=0)) ** 4).mean(axis=0)
    var_of_var = np.maximum(fourth - var**2 * (r - 3) / (r - 1), 0) / r  # of one side's s^2
    floor = 1e-6 * (float(np.abs(both).mean()) + 1e-300)  # the rounding of equal values
    checks = [
        ("mean", got.mean(), want.mean(), math.sqrt(2 * var.sum() / r) / n),
        (
            "variance",
            got.var(axis=0, ddof=1).mean(),
            want.var(axis=0, ddof=1).mean(),
            math.sqrt(2 * var_of_var.sum()) / n,
        ),
    ]
    for name, g, w, se in checks:
        if not abs(g - w) <= BOUND * se + floor:  # se > 0: equal draws have equal moments
            return (
                f"{name} {g:.5g} of {got.size} draws, PyTorch's {w:.5g}: {abs(g - w) / se:.1f} "
                f"standard errors apart (bound {BOUND:g})"
            )
    return ""


def compare(
    op: str, sample: Sample, draw_torch: Callable[[], list[Any]], draw_cr: Callable[[], list[Any]]
) -> str:
    """A sample of the random op `op` (op_db's name) drawn many times on each side (the
    callables give each call's result tensors as arrays, each side's generator seeded
    before): "" when chainrule's draws lie in the support and share PyTorch's moments, else
    what differs."""
    first = draw_cr()
    numel = sum(a.size for a in first)
    if numel == 0:
        return ""
    r = repeats(numel)
    wants = [np.stack(d) for d in zip(*(draw_torch() for _ in range(r)), strict=True)]
    gots = [np.stack(d) for d in zip(first, *(draw_cr() for _ in range(r - 1)), strict=True)]
    for k, (got, want) in enumerate(zip(gots, wants, strict=True)):
        got, want = got.astype(np.float64), want.astype(np.float64)
        support = SUPPORT.get(op)
        if why := support(got, sample) if support is not None else "":
            return f"draws: out[{k}]: {why}"
        transform = TRANSFORMS.get(op)
        if transform is not None:
            got, want = transform(got), transform(want)
        if why := moments(got, want):
            return f"draws: out[{k}]: {why}"
    return ""
