"""EmbeddingBag and Bilinear against torch with copied weights: every mode, offsets with and
without the last one, 2-D input, per_sample_weights, padding_idx, max_norm, empty bags,
gradients of the weight and the per-sample weights; state_dict keys, repr, the errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule as cr
from tests.tolerances import LAYER, tol
from tests.twins import copy_into

RNG = np.random.default_rng(0)
INPUT = np.array([1, 2, 4, 5, 4, 3, 2, 9, 0, 0])


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize(
    "offsets, kwargs",
    [
        ([0, 3, 3, 7], {}),  # an empty bag
        ([0, 3, 3, 7], {"padding_idx": 2}),
        ([0, 3, 3, 7, 10], {"include_last_offset": True}),
        ([0, 3, 3, 7, 8], {"include_last_offset": True}),  # the last bag runs to the end
        (None, {"max_norm": 1.0}),  # 2-D input: one bag a row
    ],
)
def test_embedding_bag_module_matches_torch(mode: str, offsets: list | None, kwargs: dict) -> None:
    theirs = torch.nn.EmbeddingBag(10, 3, mode=mode, **kwargs).double()
    ours = cr.nn.EmbeddingBag(10, 3, mode=mode, **kwargs, dtype=cr.float64)
    assert repr(ours) == repr(theirs)
    copy_into(ours, theirs)
    x = INPUT if offsets is not None else INPUT.reshape(2, 5)
    off_c = None if offsets is None else cr.tensor(offsets)
    off_t = None if offsets is None else torch.tensor(offsets)
    cy, ty = ours(cr.tensor(x), off_c), theirs(torch.tensor(x), off_t)
    np.testing.assert_allclose(cy.detach().numpy(), ty.detach().numpy(), **tol("float64", LAYER))
    g = RNG.normal(size=tuple(ty.shape))
    cy.backward(cr.tensor(g))
    ty.backward(torch.tensor(g))
    np.testing.assert_allclose(
        ours.weight.grad.numpy(), theirs.weight.grad.numpy(), **tol("float64", LAYER)
    )
    np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy())


def test_per_sample_weights_weigh_each_row_and_get_gradients() -> None:
    w, psw = RNG.normal(size=(10, 3)), RNG.normal(size=10)
    cw, tw = cr.tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True)
    cp, tp = cr.tensor(psw, requires_grad=True), torch.tensor(psw, requires_grad=True)
    offsets = [0, 4, 4, 6]
    cy = cr.nn.functional.embedding_bag(
        cr.tensor(INPUT), cw, cr.tensor(offsets), mode="sum", per_sample_weights=cp
    )
    ty = torch.nn.functional.embedding_bag(
        torch.tensor(INPUT), tw, torch.tensor(offsets), mode="sum", per_sample_weights=tp
    )
    np.testing.assert_allclose(cy.detach().numpy(), ty.detach().numpy(), **tol("float64", LAYER))
    g = RNG.normal(size=(4, 3))
    cy.backward(cr.tensor(g))
    ty.backward(torch.tensor(g))
    np.testing.assert_allclose(cw.grad.numpy(), tw.grad.numpy(), **tol("float64", LAYER))
    np.testing.assert_allclose(cp.grad.numpy(), tp.grad.numpy(), **tol("float64", LAYER))


def test_from_pretrained_freezes_unless_asked() -> None:
    w = RNG.normal(size=(4, 2))
    frozen = cr.nn.EmbeddingBag.from_pretrained(cr.tensor(w), mode="sum")
    assert not frozen.weight.requires_grad
    out = frozen(cr.tensor([[0, 3], [1, 1]]))
    np.testing.assert_allclose(out.numpy(), [w[0] + w[3], 2 * w[1]])
    assert cr.nn.EmbeddingBag.from_pretrained(cr.tensor(w), freeze=False).weight.requires_grad


def test_embedding_bag_errors_name_the_op() -> None:
    F, w = cr.nn.functional, cr.randn(10, 3)
    with pytest.raises(ValueError, match=r"embedding_bag: per_sample_weights are only supported"):
        F.embedding_bag(cr.tensor(INPUT), w, cr.tensor([0]), per_sample_weights=cr.ones(10))
    with pytest.raises(ValueError, match=r"embedding_bag: offsets must be None for a 2-D input"):
        F.embedding_bag(cr.tensor(INPUT.reshape(2, 5)), w, cr.tensor([0, 5]))
    with pytest.raises(ValueError, match=r"embedding_bag: offsets are needed with a 1-D input"):
        F.embedding_bag(cr.tensor(INPUT), w)
    with pytest.raises(ValueError, match=r"embedding_bag: offsets\[0\] must be 0"):
        F.embedding_bag(cr.tensor(INPUT), w, cr.tensor([1, 4]))
    with pytest.raises(ValueError, match=r"embedding_bag: offsets\[-1\] can not be greater"):
        F.embedding_bag(cr.tensor(INPUT), w, cr.tensor([0, 11]))
    with pytest.raises(ValueError, match=r"embedding_bag: mode must be 'sum', 'mean' or 'max'"):
        F.embedding_bag(cr.tensor(INPUT), w, cr.tensor([0]), mode="min")
    with pytest.raises(IndexError, match=r"embedding: index 10 is out of range"):
        F.embedding_bag(cr.tensor([10]), w, cr.tensor([0]))
    with pytest.raises(ValueError, match=r"embedding_bag: sparse gradients are not supported"):
        F.embedding_bag(cr.tensor(INPUT), w, cr.tensor([0]), sparse=True)
    with pytest.raises(ValueError, match=r"EmbeddingBag: sparse gradients are not supported"):
        cr.nn.EmbeddingBag(3, 2, sparse=True)


@pytest.mark.parametrize("bias", [True, False])
def test_bilinear_module_matches_torch(bias: bool) -> None:
    theirs = torch.nn.Bilinear(3, 5, 2, bias=bias).double()
    ours = cr.nn.Bilinear(3, 5, 2, bias=bias, dtype=cr.float64)
    assert repr(ours) == repr(theirs)
    copy_into(ours, theirs)
    x1, x2 = RNG.normal(size=(2, 4, 3)), RNG.normal(size=(2, 4, 5))
    c1, c2 = cr.tensor(x1, requires_grad=True), cr.tensor(x2, requires_grad=True)
    t1, t2 = torch.tensor(x1, requires_grad=True), torch.tensor(x2, requires_grad=True)
    cy, ty = ours(c1, c2), theirs(t1, t2)
    np.testing.assert_allclose(cy.detach().numpy(), ty.detach().numpy(), **tol("float64", LAYER))
    g = RNG.normal(size=(2, 4, 2))
    cy.backward(cr.tensor(g))
    ty.backward(torch.tensor(g))
    params = zip(ours.parameters(), theirs.parameters(), strict=True)
    for ours_t, theirs_t in [(c1, t1), (c2, t2), *params]:
        np.testing.assert_allclose(
            ours_t.grad.numpy(), theirs_t.grad.numpy(), **tol("float64", LAYER)
        )


def test_bilinear_initialises_within_torchs_bound_and_refuses_bad_shapes() -> None:
    m = cr.nn.Bilinear(16, 3, 4)
    bound = 1 / 4
    assert np.abs(m.weight.detach().numpy()).max() <= bound
    assert np.abs(m.weight.detach().numpy()).max() > bound / 2
    with pytest.raises(ValueError, match=r"bilinear: expected weight \(out, 16, 3\)"):
        cr.nn.functional.bilinear(cr.randn(2, 16), cr.randn(2, 3), cr.randn(4, 3, 16))
    with pytest.raises(ValueError, match=r"bilinear: the inputs' batch dims"):
        m(cr.randn(2, 16), cr.randn(3, 3))


@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_scale_grad_by_freq_scales_as_torchs_cpu_kernel(mode: str) -> None:
    """Each distinct index's gradient divided by the count of the index of its rank in the
    sorted input, as PyTorch's kernel does (index 9 below gets 1/2, 4's count)."""
    rng = np.random.default_rng(3)
    for offsets, padding in (([0, 3, 3, 7], None), ([0, 4], 2), ([0], None)):
        w = rng.normal(size=(10, 2))
        cw, tw = cr.tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True)
        kwargs = {"mode": mode, "scale_grad_by_freq": True, "padding_idx": padding}
        cy = cr.nn.functional.embedding_bag(cr.tensor(INPUT), cw, cr.tensor(offsets), **kwargs)
        ty = torch.nn.functional.embedding_bag(
            torch.tensor(INPUT), tw, torch.tensor(offsets), **kwargs
        )
        g = rng.normal(size=tuple(ty.shape))
        cy.backward(cr.tensor(g))
        ty.backward(torch.tensor(g))
        np.testing.assert_allclose(cw.grad.numpy(), tw.grad.numpy(), **tol("float64", LAYER))
