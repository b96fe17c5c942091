"""Every optimizer steps a 0-d parameter as PyTorch's does, with the fast path and without
(the fast path's scratch arrays once assumed at least one dim)."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import chainrule as cr
from chainrule import fastpath

OPTIONS: dict[str, dict[str, Any]] = {
    "SGD": {"momentum": 0.9, "weight_decay": 0.01},
    "Adam": {"weight_decay": 0.01},
    "AdamW": {"amsgrad": True},
    "RMSprop": {"momentum": 0.9, "centered": True},
    "Adagrad": {"weight_decay": 0.01},
    "Adadelta": {},
    "Adamax": {},
    "NAdam": {},
    "RAdam": {},
    "ASGD": {},
    "Rprop": {},
}


def steps(lib: Any, name: str) -> list[float]:
    p = lib.nn.Parameter(lib.tensor(1.5, dtype=lib.float64))
    opt = getattr(lib.optim, name)([p], lr=0.1, **OPTIONS[name])
    seen = []
    for _ in range(4):
        opt.zero_grad()
        (p * p * p - p).backward()
        opt.step()
        seen.append(float(p))
    return seen


@pytest.mark.parametrize("fast", [True, False], ids=["fastpath", "plain"])
@pytest.mark.parametrize("name", list(OPTIONS))
def test_a_0d_parameter_steps_as_in_pytorch(name: str, fast: bool) -> None:
    if fast:
        ours = steps(cr, name)
    else:
        with fastpath.disabled():
            ours = steps(cr, name)
    assert ours == pytest.approx(steps(torch, name), rel=1e-12, abs=1e-14)
