"""F.pad's reflect, replicate and circular modes as one op each (ops/padding.py): PyTorch's
values, gradients of every order, node names and saved values, on float32 and empty batches;
the index each is taken by is made once per key, and what is kept is bounded."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule.ops import padding

F = cr.nn.functional
CASES = [
    ("reflect", (2, 3, 5), (2, 1)),
    ("replicate", (3, 4, 2), (0, 2, 1, 1)),
    ("circular", (1, 2, 3, 2, 4), (1, 0, 2, 2, 0, 1)),
]


def _pair(a: np.ndarray) -> tuple[cr.Tensor, torch.Tensor]:
    return cr.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)


@pytest.mark.parametrize(("mode", "shape", "pad"), CASES)
def test_second_derivatives_are_torchs(mode: str, shape: tuple, pad: tuple) -> None:
    rng = np.random.default_rng(0)
    (x, t), out_shape = _pair(rng.standard_normal(shape)), None
    y, yt = F.pad(x, pad, mode=mode), torch.nn.functional.pad(t, pad, mode=mode)
    out_shape = tuple(yt.shape)
    g0 = rng.standard_normal(out_shape)
    g, gt = _pair(g0)
    (gx,) = cr.autograd.grad(y, x, g, create_graph=True)
    (gxt,) = torch.autograd.grad(yt, t, gt, create_graph=True)
    np.testing.assert_allclose(gx.detach().numpy(), gxt.detach().numpy(), rtol=1e-12)
    w = rng.standard_normal(shape)
    (gg,) = cr.autograd.grad((gx * cr.tensor(w)).sum(), g)
    (ggt,) = torch.autograd.grad((gxt * torch.tensor(w)).sum(), gt)
    np.testing.assert_allclose(gg.numpy(), ggt.numpy(), rtol=1e-12)
    if mode != "circular":  # a composite of copies in PyTorch
        assert type(gx.grad_fn).__name__ == type(gxt.grad_fn).__name__
        assert gx.grad_fn._saved_padding == gxt.grad_fn._saved_padding == pad


@pytest.mark.parametrize(("mode", "shape", "pad"), CASES[:2])
def test_nodes_save_torchs_values(mode: str, shape: tuple, pad: tuple) -> None:
    x, t = _pair(np.random.default_rng(1).standard_normal(shape))
    y, yt = F.pad(x, pad, mode=mode), torch.nn.functional.pad(t, pad, mode=mode)
    assert y.grad_fn.name() == yt.grad_fn.name()
    assert y.grad_fn._saved_padding == yt.grad_fn._saved_padding
    assert y.grad_fn._saved_self is x


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_float32_and_empty_batches(mode: str) -> None:
    rng = np.random.default_rng(2)
    for a in (
        rng.standard_normal((2, 3, 4)).astype(np.float32),
        np.zeros((0, 3, 4)),
    ):
        x, t = _pair(a)
        y, yt = F.pad(x, (2, 3), mode=mode), torch.nn.functional.pad(t, (2, 3), mode=mode)
        np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy())
        g = np.asarray(rng.standard_normal(tuple(yt.shape)), dtype=a.dtype)
        y.backward(cr.tensor(g))
        yt.backward(torch.tensor(g))
        assert x.grad.dtype == x.dtype
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-5)


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_vmap_pads_the_whole_batch_in_one_call(mode: str) -> None:
    assert cr.batching.RULES["IndexPad"] is cr.batching.RULES["PixelShuffle"]  # no loop
    x = cr.tensor(np.random.default_rng(3).standard_normal((4, 2, 3, 5)))
    w = cr.tensor(np.random.default_rng(4).standard_normal((4, 2, 6, 8)))

    def f(t: cr.Tensor, v: cr.Tensor) -> cr.Tensor:
        return (F.pad(t, (1, 2, 2, 1), mode=mode) * v).sum()

    got = cr.func.vmap(cr.func.grad(f))(x, w)
    for b in range(4):
        t = torch.tensor(x[b].numpy(), requires_grad=True)
        (
            torch.nn.functional.pad(t, (1, 2, 2, 1), mode=mode) * torch.tensor(w[b].numpy())
        ).sum().backward()
        np.testing.assert_allclose(got[b].numpy(), t.grad.numpy(), rtol=1e-12)


def test_the_index_is_made_once_per_key_and_what_is_kept_is_bounded() -> None:
    first = padding.flat_index((4, 5), (1, 2, 0, 3), "reflect")
    assert padding.flat_index((4, 5), (1, 2, 0, 3), "reflect") is first
    assert not first.flags.writeable
    for n in range(2, 300):
        padding.flat_index((n,), (1, 1), "replicate")
    assert len(padding._INDEXES) <= 256


def test_refusals_name_the_op() -> None:
    with pytest.raises(ValueError, match=r"pad: mode='reflect' needs each padding smaller"):
        F.pad(cr.ones(2, 3), (3, 0), mode="reflect")
    with pytest.raises(ValueError, match=r"pad: mode='circular' needs each padding at most"):
        F.pad(cr.ones(2, 3, 3), (0, 0, 0, 4), mode="circular")
    with pytest.raises(ValueError, match=r"pad: mode='replicate' needs a dim that is not empty"):
        F.pad(cr.ones(2, 0), (1, 0), mode="replicate")
    with pytest.raises(ValueError, match=r"pad: negative padding"):
        F.pad(cr.ones(2, 3), (-1, 0), mode="reflect")
    for shape, pad in (((2, 0), (0, 0)), ((3, 0, 4), (1, 1)), ((0, 4, 4), (1, 1, 1, 1))):
        with pytest.raises(ValueError, match=r"pad: mode='reflect' needs every dim but a batch"):
            F.pad(cr.ones(*shape), pad, mode="reflect")
    assert F.pad(cr.ones(0, 2, 4, 4), (1, 1, 1, 1), mode="replicate").shape == (0, 2, 6, 6)
    assert F.pad(cr.ones(3, 0, 4), (1, 1), mode="circular").shape == (3, 0, 6)
    with pytest.raises(TypeError, match="pad"):
        F.pad(cr.ones(2, 3, dtype=cr.bool), (1, 0), mode="reflect")
    assert F.pad(cr.ones(2, 3, dtype=cr.bool), (1, 0), mode="circular").shape == (2, 4)
