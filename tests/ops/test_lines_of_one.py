"""The short ways through the order statistics and scans against PyTorch: lines of one value
(a 0-d tensor, a dim of size 1), where the choice is the value itself at index 0 with no
search; and quantile's ranks of a tensor q over lines without NaN, values and gradients."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr

NAN = float("nan")

# each op along dim d, (values, indices)
ONE_EACH = {
    "cummax": lambda x, d: tuple(x.cummax(d)),
    "cummin": lambda x, d: tuple(x.cummin(d)),
    "median": lambda x, d: tuple(x.median(d)),
    "nanmedian_keepdim": lambda x, d: tuple(x.nanmedian(d, keepdim=True)),
    "mode": lambda x, d: tuple(x.mode(d)),
    "kthvalue_keepdim": lambda x, d: tuple(x.kthvalue(1, d, True)),
    "max": lambda x, d: tuple(x.max(d)),
    "min_keepdim": lambda x, d: tuple(x.min(d, keepdim=True)),
    "topk": lambda x, d: tuple(x.topk(1, d)),
    "sort_descending": lambda x, d: tuple(x.sort(d, descending=True)),
}


# a 0-d input's values are still a view of it here (PyTorch's are a tensor of their own)
ZERO_D_VIEWS = {"max", "min_keepdim", "topk", "sort_descending"}


@pytest.mark.parametrize("op", list(ONE_EACH))
@pytest.mark.parametrize("shape", [(), (3, 1, 2), (0, 1, 2)], ids=["0d", "size1", "empty"])
def test_a_line_of_one_value_is_chosen_as_torch_chooses_it(op: str, shape: tuple) -> None:
    fn, d = ONE_EACH[op], 1 if shape else 0
    data = np.random.default_rng(0).standard_normal(shape)
    if data.size > 1:
        data.reshape(-1)[1] = NAN  # a NaN is its line's choice too
    xt = torch.tensor(data, requires_grad=True)
    xc = cr.tensor(data, requires_grad=True)
    want, got = fn(xt, d), fn(xc, d)
    for w, g in zip(want, got, strict=True):
        assert tuple(g.shape) == tuple(w.shape)
        assert str(g.dtype) == str(w.dtype).replace("torch.", "chainrule.")
        np.testing.assert_array_equal(g.detach().numpy(), w.detach().numpy())
    assert got[0].grad_fn.name() == want[0].grad_fn.name()
    seed = np.random.default_rng(1).standard_normal(tuple(want[0].shape))
    want[0].backward(torch.tensor(seed))
    got[0].backward(cr.tensor(seed))
    np.testing.assert_array_equal(xc.grad.numpy(), xt.grad.numpy())
    if not shape and op in ZERO_D_VIEWS:
        return
    # the values are the op's own: writing into them leaves the input as it was
    before = data.copy()
    with cr.no_grad():
        got[0].add_(1.0)
    np.testing.assert_array_equal(xc.detach().numpy(), before)


@pytest.mark.parametrize("q", [0.3, [0.2, 0.9]], ids=["0d", "1d"])
@pytest.mark.parametrize("dim", [None, 0, -1])
@pytest.mark.parametrize("how", ["linear", "midpoint", "lower"])
def test_quantile_of_a_tensor_q_without_nan_is_torchs(q: Any, dim: Any, how: str) -> None:
    data = np.random.default_rng(2).standard_normal((3, 4, 5))
    seed = None
    grads = []
    for m in (torch, cr):
        x = m.tensor(data, requires_grad=True)
        qt = m.tensor(q, dtype=m.float64, requires_grad=True)
        out = m.quantile(x, qt, dim, dim == 0, interpolation=how)
        seed = np.random.default_rng(3).standard_normal(tuple(out.shape))
        out.backward(m.tensor(seed))
        grads.append((out.detach().numpy(), x.grad.numpy(), qt.grad))
    (out_t, gx_t, gq_t), (out_c, gx_c, gq_c) = grads
    assert out_c.shape == out_t.shape
    np.testing.assert_allclose(out_c, out_t, rtol=1e-12)
    np.testing.assert_allclose(gx_c, gx_t, rtol=1e-12, atol=1e-15)
    if how == "linear":  # the others' ranks are constants of q
        np.testing.assert_allclose(gq_c.numpy(), gq_t.numpy(), rtol=1e-10, atol=1e-15)
