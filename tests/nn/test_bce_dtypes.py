"""The binary cross entropies' dtypes with an input and a target of two float dtypes, against
PyTorch: binary_cross_entropy refuses the pair, and binary_cross_entropy_with_logits gives
its loss in the target's dtype (PyTorch's loss is ``1 - target`` written into in place) and
the input's gradient in the input's."""

import contextlib

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule import fastpath

PAIRS = [("float32", "float64"), ("float64", "float32"), ("float16", "float32")]
PAIRS += [("float32", "float16"), ("float32", "float32")]
OPTIONS = [{}, {"reduction": "none"}, {"pos_weight": True}, {"weight": True, "reduction": "sum"}]


def _loss(lib, x_dtype: str, t_dtype: str, options: dict):  # noqa: ANN001, ANN202
    x = lib.tensor([0.3, -1.2, 2.0], dtype=getattr(lib, x_dtype), requires_grad=True)
    t = lib.tensor([0.0, 1.0, 0.25], dtype=getattr(lib, t_dtype))
    given = {
        k: lib.tensor([1.5, 0.5, 2.0], dtype=getattr(lib, x_dtype)) if v is True else v
        for k, v in options.items()
    }
    loss = lib.nn.functional.binary_cross_entropy_with_logits(x, t, **given)
    loss.sum().backward()
    return loss, x.grad


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("options", OPTIONS)
@pytest.mark.parametrize(("x_dtype", "t_dtype"), PAIRS)
def test_logits_loss_takes_the_targets_dtype(
    fast: bool, options: dict, x_dtype: str, t_dtype: str
) -> None:
    with fastpath.disabled() if not fast else contextlib.nullcontext():
        ours, our_grad = _loss(cr, x_dtype, t_dtype, options)
    theirs, their_grad = _loss(torch, x_dtype, t_dtype, options)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert str(our_grad.dtype).split(".")[-1] == str(their_grad.dtype).split(".")[-1]
    assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__
    np.testing.assert_allclose(
        ours.detach().float().numpy(), theirs.detach().float().numpy(), rtol=2e-3
    )
    np.testing.assert_allclose(our_grad.float().numpy(), their_grad.float().numpy(), rtol=2e-3)


@pytest.mark.parametrize(("x_dtype", "t_dtype"), [p for p in PAIRS if p[0] != p[1]])
def test_probabilities_loss_refuses_two_dtypes(x_dtype: str, t_dtype: str) -> None:
    with pytest.raises(RuntimeError, match="Found dtype"):
        torch.nn.functional.binary_cross_entropy(
            torch.rand(3, dtype=getattr(torch, x_dtype)),
            torch.rand(3, dtype=getattr(torch, t_dtype)),
        )
    p = cr.rand(3, dtype=getattr(cr, x_dtype))
    t = cr.rand(3, dtype=getattr(cr, t_dtype))
    with pytest.raises(RuntimeError, match=r"binary_cross_entropy: target must have the input's"):
        cr.nn.functional.binary_cross_entropy(p, t)
    with pytest.raises(RuntimeError, match=r"binary_cross_entropy: target"):
        cr.nn.BCELoss()(p, t)
