"""vmap runs tile/repeat and glu, one node each, once on the whole batch by their rules (the
per-example loop never called), with the values and per-example gradients of torch.func."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
import torch.func as tf

import chainrule as cr
import chainrule.func as cf
from chainrule import batching


@pytest.fixture
def looped(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The ops that reach the per-example loop, recorded (and still run)."""
    seen: list[str] = []
    loop = batching.loop

    def counted(cls: Any, *rest: Any) -> Any:
        seen.append(cls.__name__)
        return loop(cls, *rest)

    monkeypatch.setattr(batching, "loop", counted)
    return seen


CALLS = {
    "repeat": lambda x: x.repeat(2, 1, 3),
    "repeat_more_dims": lambda x: x.repeat(2, 2, 1, 1),
    "tile": lambda x: x.tile((2,)),
    "glu_last": lambda x: torch_or_cr(x).nn.functional.glu(x),
    "glu_first": lambda x: torch_or_cr(x).nn.functional.glu(x, 0),
}


def torch_or_cr(x: Any) -> Any:
    return torch if isinstance(x, torch.Tensor) else cr


@pytest.mark.parametrize("name", CALLS)
def test_batched_by_the_rule_as_torch_func(name: str, looped: list[str]) -> None:
    f = CALLS[name]
    data = np.random.default_rng(0).standard_normal((3, 4, 6))
    ours = cf.vmap(f)(cr.tensor(data))
    theirs = tf.vmap(f)(torch.tensor(data))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-12)

    def loss(lib: Any) -> Any:
        return lambda x: (f(x) ** 2).sum()

    g_ours = cf.vmap(cf.grad(loss(cr)))(cr.tensor(data))
    g_theirs = tf.vmap(tf.grad(loss(torch)))(torch.tensor(data))
    np.testing.assert_allclose(g_ours.numpy(), g_theirs.numpy(), rtol=1e-12, atol=1e-12)
    assert looped == []
