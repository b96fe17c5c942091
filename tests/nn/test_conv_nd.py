"""Conv3d and the transposed convolutions of one and three dims against PyTorch's modules with
copied weights (outputs, every gradient, state_dict keys, reprs), padding modes, output_size,
1-tuples, integer inputs and the errors that name the op."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule as cr
from tests.tolerances import tol
from tests.twins import copy_into

rng = np.random.default_rng(1)


def assert_close(ours: cr.Tensor, theirs: torch.Tensor) -> None:
    want = theirs.detach().numpy()
    np.testing.assert_allclose(ours.detach().numpy(), want, **tol(want.dtype))


LAYERS = [
    ("Conv3d", (4, 6, (2, 3, 2)), {"stride": (1, 2, 1), "padding": 1, "groups": 2},
     (2, 4, 5, 6, 5)),
    ("Conv3d", (2, 3, 3), {"padding": "same", "dilation": (1, 2, 1), "bias": False}, (2, 4, 5, 6)),
    ("Conv3d", (2, 4, 3), {"padding": (1, 2, 0), "padding_mode": "reflect"}, (1, 2, 4, 5, 5)),
    ("Conv3d", (2, 4, 3), {"padding": 1, "padding_mode": "circular"}, (1, 2, 4, 5, 5)),
    ("ConvTranspose1d", (4, 6, 3), {"stride": 2, "padding": 1, "output_padding": 1, "groups": 2},
     (2, 4, 7)),
    ("ConvTranspose1d", (3, 2, 4), {"dilation": 2, "bias": False}, (3, 6)),
    ("ConvTranspose3d", (4, 6, (3, 2, 3)),
     {"stride": (2, 1, 2), "padding": (1, 0, 1), "output_padding": (1, 0, 0), "groups": 2},
     (2, 4, 3, 4, 3)),
    ("ConvTranspose3d", (2, 3, 2), {"stride": 3, "dilation": (2, 1, 1)}, (2, 3, 2, 3)),
]  # fmt: skip


@pytest.mark.parametrize("name, args, kwargs, shape", LAYERS)
def test_layers_match_torch_with_copied_weights(
    name: str, args: tuple, kwargs: dict, shape: tuple
) -> None:
    theirs = getattr(torch.nn, name)(*args, **kwargs).double()
    ours = getattr(cr.nn, name)(*args, **kwargs, dtype=cr.float64)
    assert repr(ours) == repr(theirs)
    copy_into(ours, theirs)  # the state_dict keys and shapes must be PyTorch's
    x = rng.standard_normal(shape)
    xc, xt = cr.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    yc, yt = ours(xc), theirs(xt)
    assert_close(yc, yt)
    g = rng.standard_normal(yt.shape)
    yc.backward(cr.tensor(g))
    yt.backward(torch.tensor(g))
    assert_close(xc.grad, xt.grad)
    for (key, p), q in zip(ours.named_parameters(), theirs.parameters(), strict=True):
        assert p.grad is not None, key
        assert_close(p.grad, q.grad)


def test_second_derivative_of_conv3d_matches_torch() -> None:
    x, w = rng.standard_normal((1, 2, 4, 4, 3)), rng.standard_normal((3, 2, 2, 2, 2))
    grads = []
    for m in (cr, torch):
        xs, ws = m.tensor(x, requires_grad=True), m.tensor(w, requires_grad=True)
        y = m.nn.functional.conv3d(xs, ws, stride=(2, 1, 1), padding=1)
        (gx,) = m.autograd.grad((y * y).sum(), xs, create_graph=True)
        (gw,) = m.autograd.grad((gx * gx).sum(), ws)
        grads.append(gw)
    assert_close(grads[0], grads[1])


def test_transposed_output_size_picks_the_output_padding() -> None:
    x = rng.standard_normal((1, 2, 3, 3, 4))
    theirs = torch.nn.ConvTranspose3d(2, 2, 3, stride=2).double()
    ours = cr.nn.ConvTranspose3d(2, 2, 3, stride=2, dtype=cr.float64)
    copy_into(ours, theirs)
    want = theirs(torch.tensor(x), output_size=(8, 7, 10))
    assert_close(ours(cr.tensor(x), output_size=(1, 2, 8, 7, 10)), want)
    with pytest.raises(ValueError, match=r"ConvTranspose3d: output_size \(9, 7, 10\) is out"):
        ours(cr.tensor(x), output_size=(9, 7, 10))


def test_one_tuples_and_integer_inputs() -> None:
    x, w = rng.integers(-3, 4, (2, 3, 5, 6)), rng.integers(-3, 4, (4, 3, 2, 3))
    ours = cr.nn.functional.conv2d(cr.tensor(x), cr.tensor(w), stride=(2,), padding=(1,))
    want = torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w), stride=(2,), padding=(1,))
    assert ours.dtype == cr.int64 and np.array_equal(ours.numpy(), want.numpy())
    x3, w3 = (
        rng.integers(-3, 4, (1, 2, 3, 3, 3), dtype=np.int32),
        rng.integers(-3, 4, (2, 2, 2, 2, 2), dtype=np.int32),
    )
    ours = cr.nn.functional.conv3d(cr.tensor(x3), cr.tensor(w3))
    assert np.array_equal(
        ours.numpy(), torch.nn.functional.conv3d(torch.tensor(x3), torch.tensor(w3)).numpy()
    )
    with pytest.raises(TypeError, match="conv_transpose3d: needs a floating-point tensor"):
        cr.nn.functional.conv_transpose3d(cr.tensor(x3), cr.tensor(w3))


def test_errors_name_the_op_and_shapes() -> None:
    f = cr.nn.functional
    x = cr.tensor(rng.standard_normal((2, 4, 3, 3, 3)))
    with pytest.raises(ValueError, match=r"conv3d: weight must have 5 dims"):
        f.conv3d(x, cr.tensor(rng.standard_normal((2, 4, 3, 3))))
    with pytest.raises(
        ValueError, match=r"conv3d: the input has 4 channels but the weight expects 2"
    ):
        f.conv3d(x, cr.tensor(rng.standard_normal((2, 2, 1, 1, 1))))
    with pytest.raises(ValueError, match=r"conv3d: the kernel \(4, 1, 1\)"):
        f.conv3d(x, cr.tensor(rng.standard_normal((2, 4, 4, 1, 1))))
    with pytest.raises(ValueError, match=r"conv_transpose1d: output_padding must be"):
        f.conv_transpose1d(x[0, 0], cr.tensor(rng.standard_normal((3, 1, 2))), output_padding=1)
    with pytest.raises(ValueError, match=r"conv_transpose3d: padding must be an int or a tuple"):
        f.conv_transpose3d(x, cr.tensor(rng.standard_normal((4, 1, 1, 1, 1))), padding="same")
    with pytest.raises(ValueError, match=r"ConvTranspose1d: only padding_mode 'zeros'"):
        cr.nn.ConvTranspose1d(2, 2, 3, padding_mode="reflect")


def _saved(fn: object) -> dict:
    """A node's saved values but its tensors, whose shapes are given instead."""
    out = {}
    for k in (a for a in dir(fn) if a.startswith("_saved_")):
        v = getattr(fn, k)
        out[k] = tuple(v.shape) if hasattr(v, "shape") else v
    return out


# every form of convolution: one node, PyTorch's ConvolutionBackward0 with its saved values
ONE_NODE = [
    ("conv1d", (2, 4, 7), (6, 2, 3), {"stride": 2, "padding": 1, "groups": 2}),
    ("conv1d", (2, 4, 7), (6, 4, 4), {"padding": "same"}),  # a pad first, as PyTorch's
    ("conv3d", (2, 4, 5, 6, 7), (6, 2, 2, 3, 3), {"dilation": (2, 1, 1), "groups": 2}),
    ("conv3d", (2, 4, 5, 6, 7), (6, 4, 2, 3, 3), {"padding": "valid"}),
    ("conv3d", (2, 4, 5, 6, 7), (6, 4, 2, 3, 3), {"padding": "same"}),
    ("conv_transpose1d", (2, 4, 5), (4, 3, 3),
     {"stride": 2, "padding": 1, "output_padding": 1, "groups": 2, "dilation": 2}),
    ("conv_transpose2d", (2, 4, 5, 5), (4, 3, 3, 2), {"stride": 3, "output_padding": 2}),
    ("conv_transpose3d", (1, 4, 3, 3, 3), (4, 2, 3, 2, 3),
     {"stride": (2, 1, 2), "padding": (1, 0, 1), "output_padding": (1, 0, 0), "groups": 2}),
]  # fmt: skip


@pytest.mark.filterwarnings("ignore:Using padding='same'")
@pytest.mark.parametrize("name, x_shape, w_shape, kwargs", ONE_NODE)
def test_every_convolution_is_one_node_with_torchs_saved_values(
    name: str, x_shape: tuple, w_shape: tuple, kwargs: dict
) -> None:
    x, w = rng.standard_normal(x_shape), rng.standard_normal(w_shape)
    transposed = name.startswith("conv_transpose")
    b = rng.standard_normal(w_shape[1] * kwargs.get("groups", 1) if transposed else w_shape[0])
    outs = []
    for lib in (cr, torch):
        args = [lib.tensor(a, requires_grad=True) for a in (x, w, b)]
        out = getattr(lib.nn.functional, name)(*args, **kwargs)
        outs.append(out)
        assert type(out.grad_fn).__name__ == "ConvolutionBackward0"
        parents = [type(f).__name__ for f, _ in out.grad_fn.next_functions]
        assert parents[1:] == ["AccumulateGrad", "AccumulateGrad"], (lib.__name__, parents)
    ours, theirs = outs
    assert _saved(ours.grad_fn) == _saved(theirs.grad_fn)
    assert_close(ours, theirs)


def test_a_bias_written_after_the_convolution_is_not_refused_as_torchs() -> None:
    """The bias's value serves no gradient: writing it in place before backward is allowed."""
    x, w, b = rng.standard_normal((2, 3, 5)), rng.standard_normal((4, 3, 2)), np.ones(4)
    grads = []
    for lib in (cr, torch):
        xt, wt = lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True)
        bt = lib.tensor(b, requires_grad=True) * 1
        f = lib.nn.functional
        outs = [f.conv1d(xt, wt, bt), f.conv_transpose1d(xt, wt.transpose(0, 1), bt)]
        bt.add_(1)  # after both nodes were made
        (outs[0].sum() + outs[1].sum()).backward()
        grads.append(xt.grad.numpy())
    np.testing.assert_allclose(*grads)
