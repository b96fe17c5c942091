"""GroupNorm, InstanceNorm1d/2d/3d, RMSNorm, LocalResponseNorm and BatchNorm3d against torch
with copied weights: forward, gradients of input and parameters, running statistics in
training and evaluation, unbatched inputs, state_dict keys, repr, and the errors."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr
from tests.tolerances import LAYER, tol
from tests.twins import copy_into

RNG = np.random.default_rng(0)

MODULES: list[tuple[str, tuple, dict[str, Any], tuple[int, ...]]] = [
    ("GroupNorm", (2, 4), {}, (3, 4, 5)),
    ("GroupNorm", (3, 6), {"affine": False, "eps": 1e-3}, (2, 6, 3, 2)),
    ("GroupNorm", (1, 4), {"bias": False}, (2, 4)),
    ("RMSNorm", ((3, 4),), {}, (2, 3, 4)),
    ("RMSNorm", (4,), {"eps": 1e-4, "elementwise_affine": False}, (2, 3, 4)),
    ("InstanceNorm1d", (4,), {"affine": True, "track_running_stats": True}, (3, 4, 5)),
    ("InstanceNorm1d", (4,), {}, (4, 5)),
    ("InstanceNorm2d", (3,), {"affine": True}, (2, 3, 4, 4)),
    ("InstanceNorm2d", (3,), {"track_running_stats": True, "momentum": None}, (3, 4, 4)),
    ("InstanceNorm3d", (2,), {"affine": True, "track_running_stats": True}, (2, 2, 3, 2, 2)),
    ("BatchNorm3d", (3,), {}, (2, 3, 2, 3, 2)),
    ("LocalResponseNorm", (3,), {"alpha": 0.3, "beta": 0.6, "k": 1.5}, (2, 5, 3, 3)),
]


@pytest.mark.parametrize("name, args, kwargs, shape", MODULES, ids=[m[0] for m in MODULES])
def test_modules_match_torch_in_training_and_evaluation(
    name: str, args: tuple, kwargs: dict, shape: tuple
) -> None:
    theirs = getattr(torch.nn, name)(*args, **kwargs).double()
    typed = {} if name == "LocalResponseNorm" else {"dtype": cr.float64}  # no parameters
    ours = getattr(cr.nn, name)(*args, **kwargs, **typed)
    assert repr(ours) == repr(theirs)
    with torch.no_grad():  # weights away from their initial ones and zeros
        for p in theirs.parameters():
            p.copy_(torch.tensor(RNG.normal(size=tuple(p.shape))))
    copy_into(ours, theirs)
    for mode in ("train", "eval", "train"):
        getattr(ours, mode)()
        getattr(theirs, mode)()
        x = RNG.normal(size=shape) * 2 + 0.5
        cx, tx = cr.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        cy, ty = ours(cx), theirs(tx)
        np.testing.assert_allclose(
            cy.detach().numpy(), ty.detach().numpy(), **tol("float64", LAYER)
        )
        g = RNG.normal(size=shape)
        cy.backward(cr.tensor(g))
        ty.backward(torch.tensor(g))
        np.testing.assert_allclose(cx.grad.numpy(), tx.grad.numpy(), **tol("float64", LAYER))
        for (key, p), q in zip(ours.named_parameters(), theirs.parameters(), strict=True):
            np.testing.assert_allclose(
                p.grad.numpy(), q.grad.numpy(), **tol("float64", LAYER), err_msg=key
            )
        for (key, b), c in zip(ours.named_buffers(), theirs.buffers(), strict=True):
            np.testing.assert_allclose(b.numpy(), c.numpy(), **tol("float64", LAYER), err_msg=key)


def test_instance_norm_without_affine_warns_on_a_channel_mismatch() -> None:
    with pytest.warns(UserWarning, match=r"InstanceNorm1d: expected input with 3 channels"):
        cr.nn.InstanceNorm1d(3)(cr.randn(2, 4, 5))
    with pytest.raises(ValueError, match=r"InstanceNorm1d: expected input with 3 channels"):
        cr.nn.InstanceNorm1d(3, affine=True)(cr.randn(2, 4, 5))


def test_errors_name_the_op_and_shapes() -> None:
    F = cr.nn.functional
    with pytest.raises(ValueError, match=r"group_norm: the channels \(dim 1\) must divide"):
        F.group_norm(cr.randn(2, 5, 3), 2)
    with pytest.raises(ValueError, match=r"group_norm: expected more than 1 value per group"):
        F.group_norm(cr.randn(1, 2), 2)
    with pytest.raises(ValueError, match=r"GroupNorm: num_channels must divide into num_groups"):
        cr.nn.GroupNorm(3, 4)
    with pytest.raises(ValueError, match=r"instance_norm: expected more than 1 spatial element"):
        F.instance_norm(cr.randn(2, 3, 1))
    with pytest.raises(ValueError, match=r"instance_norm: expected weight of shape \(3,\)"):
        F.instance_norm(cr.randn(2, 3, 4), weight=cr.ones(4))
    with pytest.raises(ValueError, match=r"rms_norm: expected input with trailing shape \(4,\)"):
        F.rms_norm(cr.randn(2, 3), (4,))
    with pytest.raises(ValueError, match=r"local_response_norm: expected input of 3 or more"):
        F.local_response_norm(cr.randn(2, 3), 2)
    with pytest.raises(ValueError, match=r"InstanceNorm2d: expected input of shape"):
        cr.nn.InstanceNorm2d(3)(cr.randn(2, 3))
    with pytest.raises(ValueError, match=r"BatchNorm3d: expected input of shape \(N, C, D, H, W\)"):
        cr.nn.BatchNorm3d(3)(cr.randn(2, 3, 4, 4))


def test_rms_norm_default_eps_is_the_dtypes_and_halves_compute_in_float32() -> None:
    x = RNG.normal(size=(3, 4)) * 1e-5
    for dtype in ("float32", "float64", "float16"):
        ours = cr.nn.functional.rms_norm(cr.tensor(x, dtype=getattr(cr, dtype)), (4,))
        theirs = torch.nn.functional.rms_norm(torch.tensor(x, dtype=getattr(torch, dtype)), (4,))
        assert ours.dtype == getattr(cr, dtype)
        np.testing.assert_allclose(
            ours.float().numpy(), theirs.float().numpy(), rtol=1e-3 if dtype == "float16" else 1e-5
        )


def test_local_response_norm_of_integers_is_torchs() -> None:
    x = RNG.integers(-4, 5, (2, 5, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = cr.nn.functional.local_response_norm(cr.tensor(x), 3, alpha=0.5)
        theirs = torch.nn.functional.local_response_norm(torch.tensor(x), 3, alpha=0.5)
    assert ours.dtype == cr.float32
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), **tol("float32", LAYER))
