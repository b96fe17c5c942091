"""prod, std, var_mean, std_mean and the vector norms as one node each, PyTorch's: the node the
two outputs of var_mean share, PyTorch's gradients where the formula is at its edges (a 0
among the factors of a product, no spread, no degrees of freedom), and the refusals."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr

C = [[1.0, 1.0, 1.0], [2.0, 3.0, 4.0]]  # a row without spread


def _grads(lib: Any, f: Any, x: Any) -> tuple[Any, Any]:
    t = lib.tensor(x, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = f(lib, t)
        outs = out if isinstance(out, tuple) else (out,)
        lib.autograd.backward([o.sum() for o in outs])
    return [o.detach().numpy() for o in outs], t.grad.numpy()


@pytest.mark.parametrize(
    "f",
    [
        lambda m, x: m.var_mean(x, 1),
        lambda m, x: m.std_mean(x, 1),
        lambda m, x: m.std_mean(x, 1, keepdim=True)[0],
        lambda m, x: x.std(1),  # the constant row: gradient 0, not sqrt's NaN
        lambda m, x: m.var_mean(x, correction=6)[1],  # no degrees of freedom: the mean only
        lambda m, x: m.std_mean(x, 1, correction=3)[1],
        lambda m, x: (x * m.tensor([[1.0, 0.0, 2.0], [0.0, 1.0, 1.0]])).prod(),  # two zeros
        lambda m, x: (x * m.tensor([[1.0, 0.0, 2.0], [0.0, 1.0, 1.0]])).prod(1),
    ],
    ids=["var_mean", "std_mean", "std_of_std_mean", "std", "mean_no_dof", "mean_std_no_dof"]
    + ["prod_two_zeros", "prod_dim_zeros"],
)
def test_values_and_gradients_at_the_edges_are_torchs(f: Any) -> None:
    (ours, g), (theirs, h) = _grads(cr, f, C), _grads(torch, f, C)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, equal_nan=True)
    np.testing.assert_allclose(g, h, rtol=1e-12, equal_nan=True)


def test_var_means_outputs_share_one_node() -> None:
    x = cr.randn(3, 4, requires_grad=True)
    v, m = cr.var_mean(x, 0)
    assert v.grad_fn is m.grad_fn and v.grad_fn.name() == "VarMeanBackward0"
    assert [(f.variable, k) for f, k in v.grad_fn.next_functions] == [(x, 0)]
    s, _ = cr.std_mean(x, 1)
    assert s.grad_fn.name() == "StdMeanBackward0" and s.grad_fn._saved_correction == 1
    assert s.grad_fn._saved_result0.shape == (3,)


def test_a_hook_on_var_means_node_sees_both_outputs_gradients() -> None:
    seen = []
    for lib in (torch, cr):
        x = lib.tensor(C, requires_grad=True)
        v, m = lib.var_mean(x, 1)
        v.grad_fn.register_hook(
            lambda gi, go: seen.append([None if g is None else g.tolist() for g in go])
        )
        (m * 2).sum().backward()
    assert seen[1] == seen[0] and seen[0][0] is None


def test_each_node_is_one_primitive() -> None:
    x = cr.randn(2, 3, requires_grad=True)
    names = {
        "StdBackward0": x.std(0),
        "ProdBackward0": x.prod(),
        "ProdBackward1": x.prod(1, keepdim=True),
        "LinalgVectorNormBackward0": x.norm(3),
    }
    for name, y in names.items():
        assert y.grad_fn.name() == name
        assert y.grad_fn.next_functions[0][0].variable is x  # straight to the leaf


def test_norm_of_order_zero_has_no_gradient_as_torchs() -> None:
    x = cr.randn(3, requires_grad=True)
    x.norm(0).backward()
    assert x.grad is None


def test_a_half_norm_is_computed_in_float32_as_one_node() -> None:
    x = np.array([[300.0, -400.0], [0.5, 2.0]], dtype=np.float16)  # 500^2 overflows a half
    ours, theirs = cr.tensor(x, requires_grad=True).norm(), torch.tensor(x).norm()
    assert ours.dtype == cr.float16 and ours.grad_fn.name() == "LinalgVectorNormBackward0"
    assert float(ours) == float(theirs) == 500.0


def test_the_refusals_name_the_op() -> None:
    with pytest.raises(ValueError, match=r"^norm: cannot compute the inf-norm of an empty"):
        cr.zeros(0, 3).norm(float("inf"))
    with pytest.raises(ValueError, match=r"^linalg.vector_norm: dim \(0, 0\) repeats a dim"):
        cr.linalg.vector_norm(cr.ones(2, 3), 2, (0, 0))
    with pytest.raises(TypeError, match=r"^var_mean: needs a floating-point tensor"):
        cr.var_mean(cr.tensor([1, 2, 3]))
    with pytest.raises(TypeError, match=r"^std_mean: give unbiased or correction, not both"):
        cr.std_mean(cr.ones(3), 0, True, correction=0)


@pytest.mark.parametrize("k", [0, 1])
@pytest.mark.parametrize("op", ["var_mean", "std_mean", "aminmax"])
def test_a_write_into_an_output_before_backward_is_caught_where_torchs_is(op: str, k: int) -> None:
    """The outputs share one node; a write into one the rule reads (std, aminmax's both) fails
    backward, a write into another (var_mean's, std_mean's mean) is differentiated, as
    PyTorch's."""
    results = []
    for lib in (torch, cr):
        x = lib.tensor(C, requires_grad=True)
        outs = tuple(lib.aminmax(x, dim=1)) if op == "aminmax" else getattr(lib, op)(x, 1)
        assert outs[0].grad_fn is outs[1].grad_fn
        outs[k].add_(1)
        try:
            (outs[0] * 2 + outs[1]).sum().backward()
        except RuntimeError as err:
            assert "modified by an inplace operation" in str(err)
            results.append(None)
        else:
            results.append(x.grad.numpy())
    if results[0] is None:
        assert results[1] is None
    else:
        np.testing.assert_allclose(results[1], results[0], rtol=1e-6)


@pytest.mark.parametrize("grad", [False, True])
@pytest.mark.parametrize("op", ["var_mean", "std_mean", "aminmax"])
def test_outputs_without_a_node_are_not_views_and_a_write_stays_in_its_own(
    op: str, grad: bool
) -> None:
    """With no node recorded, the two outputs are tensors of their own, as PyTorch's (no
    views of one packed result): a write into one changes neither the other nor the input."""
    for lib in (torch, cr):
        x = lib.tensor(C, requires_grad=grad)
        with lib.no_grad():
            outs = tuple(lib.aminmax(x, dim=1)) if op == "aminmax" else getattr(lib, op)(x, 1)
        assert [o._is_view() for o in outs] == [False, False]
        assert all(o.grad_fn is None and not o.requires_grad for o in outs)
        before = outs[1].clone()
        outs[0].add_(1)
        np.testing.assert_array_equal(outs[1].numpy(), before.numpy())
        np.testing.assert_array_equal(x.detach().numpy(), np.array(C))


@pytest.mark.parametrize("op", ["var_mean", "std_mean"])
@pytest.mark.parametrize(
    "dim,keepdim,correction",
    [(None, False, 1), (1, False, 1), ((0, 2), True, 0), (None, True, 1), (2, False, 4)],
    ids=["all", "dim_1", "dims_0_2_keepdim", "all_keepdim", "no_degrees_of_freedom"],
)
def test_outputs_without_a_node_are_torchs(op: str, dim: Any, keepdim: bool, correction: int):
    """With nothing recorded (each output made directly where the switch is on), the values,
    shapes and dtypes of both outputs are PyTorch's, float64 and float32."""
    a = np.random.default_rng(0).normal(size=(2, 3, 4))
    for dtype in (np.float64, np.float32):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # no degrees of freedom: inf, PyTorch warns too
            got, want = (
                getattr(lib, op)(
                    lib.tensor(a.astype(dtype)), dim, correction=correction, keepdim=keepdim
                )
                for lib in (cr, torch)
            )
        for g, w in zip(got, want, strict=True):
            assert g.shape == tuple(w.shape) and g.numpy().dtype == w.numpy().dtype
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6)
