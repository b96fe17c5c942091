"""cr.explain(mode="forward"): tangents pushed through the recorded graph in topological
order, each node's J t; the result is forward mode's (and PyTorch's) directional derivative,
and the backward pass's <grad, tangent>."""

import re

import numpy as np
import pytest
import torch

import chainrule as cr


def _graph(lib, x, w):
    return ((x * w).tanh() + x @ lib.ones(4, 1, dtype=lib.float64)).sum()


def test_forward_story_gives_the_directional_derivative_of_both_modes():
    rng = np.random.default_rng(0)
    xa, wa, ta = (
        rng.standard_normal((3, 4)),
        rng.standard_normal((1, 4)),
        rng.standard_normal((3, 4)),
    )
    x = cr.tensor(xa, requires_grad=True)
    w = cr.tensor(wa, requires_grad=True)
    y = _graph(cr, x, w)
    text = cr.explain(y, params={"x": x, "w": w}, mode="forward", tangents={x: cr.tensor(ta), w: 1})
    got = float(re.search(r"along the tangents: (\S+) ", text).group(1))
    tx, tw = torch.tensor(xa), torch.tensor(wa)
    _, want = torch.func.jvp(
        lambda a, b: _graph(torch, a, b),
        (tx, tw),
        (torch.tensor(ta), torch.ones(1, 4, dtype=torch.float64)),
    )
    assert got == pytest.approx(float(want), rel=1e-5)
    assert "#1 Mul -> (3, 4)" in text and "a = x carries tangent (3, 4)" in text
    assert "b = w carries tangent (1, 4)" in text  # broadcast: summed back by the rule
    assert x.grad is None  # nothing ran backward
    y.backward()
    assert got == pytest.approx(float((x.grad * cr.tensor(ta)).sum() + w.grad.sum()), rel=1e-5)


def test_a_leaf_without_a_tangent_passes_none_on():
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    w = cr.tensor([3.0, 4.0], requires_grad=True)
    text = cr.explain((w.exp() * 2 + x).sum(), mode="forward", tangents={x: 1})
    assert "no input carries a tangent: none flows on" in text
    assert "along the tangents: 2 " in text


def test_forward_story_refusals():
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    with pytest.raises(ValueError, match="explain: mode must be 'backward' or 'forward'; got 'up'"):
        cr.explain(y, mode="up")
    with pytest.raises(
        ValueError, match=r"explain: a tangent's shape differs .* \(3,\) and \(2,\)"
    ):
        cr.explain(y, mode="forward", tangents={x: cr.ones(3)})
    with pytest.raises(ValueError, match="tangents are given at the graph's leaves"):
        cr.explain(y, mode="forward", tangents={x * 2: 1})
