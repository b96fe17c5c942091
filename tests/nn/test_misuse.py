"""Misuse that used to give a wrong answer quietly: losses check what PyTorch checks,
default_collate decides a batch's dtype from all of it, and threads that share a model
neither lose gradient updates nor garble its repr."""

from __future__ import annotations

import threading

import numpy as np
import pytest
import torch
import torch.utils.data as tdata

import chainrule as cr

F = cr.nn.functional
TF = torch.nn.functional


@pytest.mark.parametrize("dtype", ["bool", "float32"])
def test_class_targets_must_be_integers_as_in_torch(dtype) -> None:
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    t = np.array([1, 0, 1, 0]).astype(dtype)
    for fn, tfn in ((F.cross_entropy, TF.cross_entropy), (F.nll_loss, TF.nll_loss)):
        with pytest.raises(RuntimeError):
            tfn(torch.tensor(x), torch.tensor(t))
        if dtype == "float32" and fn is F.cross_entropy:
            continue  # float targets of the input's shape are probabilities; these are not
        message = r"class targets must be integers .*got dtype chainrule\." + dtype
        with pytest.raises(TypeError, match=message):
            fn(cr.tensor(x), cr.tensor(t))


def test_binary_cross_entropy_targets_lie_in_0_1() -> None:
    p, t = np.array([0.2, 0.7], np.float32), np.array([0.5, 1.5], np.float32)
    with pytest.raises(RuntimeError):
        TF.binary_cross_entropy(torch.tensor(p), torch.tensor(t))
    with pytest.raises(ValueError, match=r"^binary_cross_entropy: target must hold values in"):
        F.binary_cross_entropy(cr.tensor(p), cr.tensor(t))


@pytest.mark.parametrize("fn", ["binary_cross_entropy", "binary_cross_entropy_with_logits"])
def test_a_weight_that_would_grow_the_loss_is_refused_as_in_torch(fn) -> None:
    x, t, w = np.full((4, 1), 0.3, np.float32), np.ones((4, 1), np.float32), np.ones(4, np.float32)
    with pytest.raises(RuntimeError):
        getattr(TF, fn)(torch.tensor(x), torch.tensor(t), weight=torch.tensor(w))
    with pytest.raises(ValueError, match=fn + r": weight must broadcast to the input's shape"):
        getattr(F, fn)(cr.tensor(x), cr.tensor(t), weight=cr.tensor(w))
    good = np.array([[2.0]], np.float32)  # broadcasts without growing: allowed, as torch
    ours = getattr(F, fn)(cr.tensor(x), cr.tensor(t), weight=cr.tensor(good))
    theirs = getattr(TF, fn)(torch.tensor(x), torch.tensor(t), weight=torch.tensor(good))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


def test_pos_weight_that_would_grow_the_loss_is_refused() -> None:
    x = cr.zeros(4, 1)
    with pytest.raises(ValueError, match=r"pos_weight must broadcast to the input's shape"):
        F.binary_cross_entropy_with_logits(x, cr.ones(4, 1), pos_weight=cr.ones(3))


def test_adaptive_avg_pool_of_an_empty_spatial_dim_is_an_error() -> None:
    with pytest.raises(ValueError, match=r"^adaptive_avg_pool2d: the input's spatial dims"):
        F.adaptive_avg_pool2d(cr.ones(1, 1, 0, 3), 1)


@pytest.mark.parametrize(
    "batch", [[1, 2.5], [2.5, 1], [True, 2], [True, False], [1, 2], [0.5, 1.5]], ids=str
)
def test_default_collate_of_numbers_decides_the_dtype_from_all_as_torch(batch) -> None:
    ours = cr.data.default_collate(batch)
    theirs = tdata.default_collate(batch)
    expected = {"torch.float64": "chainrule.float32", "torch.float32": "chainrule.float32"}.get(
        str(theirs.dtype), str(theirs.dtype).replace("torch.", "chainrule.")
    )  # chainrule's default float for float batches (PyTorch's collate makes float64)
    assert str(ours.dtype) == expected
    np.testing.assert_allclose(ours.numpy().astype(float), theirs.numpy().astype(float))


def test_default_collate_refuses_none_as_torch() -> None:
    with pytest.raises(TypeError):
        tdata.default_collate([None, None])
    with pytest.raises(TypeError, match=r"^default_collate: a batch must hold .* found NoneType"):
        cr.data.default_collate([None, None])


def test_backward_from_several_threads_into_one_leaf_loses_no_update() -> None:
    x = cr.ones(512, 512, requires_grad=True)

    def work() -> None:
        for _ in range(10):
            (x * 1).sum().backward()

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert float(x.grad.min()) == float(x.grad.max()) == 40.0


def test_repr_of_one_model_from_several_threads_is_the_same() -> None:
    model = cr.nn.Sequential(
        cr.nn.Linear(3, 4), cr.nn.ReLU(), cr.nn.Sequential(cr.nn.Linear(4, 2), cr.nn.Tanh())
    )
    expected, seen = repr(model), []

    def work() -> None:
        seen.extend(repr(model) for _ in range(200))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(seen) == 800 and all(s == expected for s in seen)
