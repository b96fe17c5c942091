"""embedding_bag as PyTorch's one EmbeddingBagBackward0 node, on the weight and the
per-sample weights: its edges, its gradients to both (padding, empty bags, a last offset,
scaled by frequency, the max), a second derivative, and decreasing offsets refused."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr

INPUT, OFFSETS = [1, 2, 4, 5, 4, 3, 2, 4, 0, 0], [0, 3, 3, 7]
CALLS: dict[str, dict[str, Any]] = {
    "sum, weighted": dict(mode="sum", psw=True),
    "sum, padding, weighted": dict(mode="sum", psw=True, padding_idx=4),
    "mean, padding": dict(mode="mean", padding_idx=-2),
    "mean, by frequency": dict(mode="mean", scale_grad_by_freq=True),
    "sum, last offset": dict(mode="sum", include_last_offset=True),
    "max": dict(mode="max"),
    "max, padding": dict(mode="max", padding_idx=0),
}


def _run(lib: Any, call: dict[str, Any]) -> tuple[Any, ...]:
    rng = np.random.default_rng(0)
    w = lib.tensor(rng.standard_normal((6, 3)), requires_grad=True)
    p = lib.tensor(rng.standard_normal(10), requires_grad=True)
    kw = {k: v for k, v in call.items() if k != "psw"}
    y = lib.nn.functional.embedding_bag(
        lib.tensor(INPUT), w, lib.tensor(OFFSETS), per_sample_weights=p if "psw" in call else None,
        **kw,
    )  # fmt: skip
    g = lib.tensor(rng.standard_normal(tuple(y.shape)))
    y.backward(g)
    edges = [None if f is None else type(f).__name__ for f, _ in y.grad_fn.next_functions]
    grads = [t.grad.numpy() if t.grad is not None else None for t in (w, p)]
    return y.grad_fn.name(), edges, y.detach().numpy(), grads


@pytest.mark.parametrize("name", list(CALLS))
def test_embedding_bag_is_torchs_one_node(name: str) -> None:
    ours, theirs = _run(cr, CALLS[name]), _run(torch, CALLS[name])
    assert ours[:2] == theirs[:2] and ours[0] == "EmbeddingBagBackward0"
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-12)
    for a, b in zip(ours[3], theirs[3], strict=True):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_the_gradients_differentiate_again(mode: str) -> None:
    """PyTorch has no second derivative here; the rule's, in Tensor ops, is the numerical one."""
    rng = np.random.default_rng(1)
    w = cr.tensor(rng.standard_normal((6, 3)), requires_grad=True)
    p = cr.tensor(rng.standard_normal(10), requires_grad=True)
    psw = (p,) if mode == "sum" else ()

    def bag(w: Any, *psw: Any) -> Any:
        args = dict(mode=mode, per_sample_weights=psw[0] if psw else None, padding_idx=2)
        return cr.nn.functional.embedding_bag(cr.tensor(INPUT), w, cr.tensor(OFFSETS), **args)

    assert cr.autograd.gradgradcheck(bag, (w, *psw))


def test_decreasing_offsets_are_refused() -> None:
    with pytest.raises(ValueError, match=r"^embedding_bag: offsets must not decrease; got \[0, 5"):
        cr.nn.functional.embedding_bag(cr.arange(8), cr.ones(8, 3), cr.tensor([0, 5, 3]))
