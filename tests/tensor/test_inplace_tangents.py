"""Forward-mode AD through in-place writes, against PyTorch's: the written tensor takes the
result's tangent, views of it see the change, and a write of a value with no tangent makes
the written elements' tangent zero."""

import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as tfw

import chainrule as cr
import chainrule.autograd.forward_ad as fw


def _program(lib, fwd, x, tx, c, tc):
    """In-place writes on a dual: returns the tangents of every tensor the program holds."""
    with fwd.dual_level():
        d = fwd.make_dual(lib.tensor(x), lib.tensor(tx))
        e = fwd.make_dual(lib.tensor(c), lib.tensor(tc))
        y = d * 1.0
        row = y[1]  # a view whose tangent is a view of y's
        y.mul_(e)
        y[0] = e * 3.0  # a setitem of a dual value
        row.add_(2.0)  # through the view: y's tangent unchanged
        y[:, 1].sin_()
        z = d * 1.0
        z.copy_(lib.ones(2, 3, dtype=lib.float64))  # a value with no tangent: zero
        w = d * 1.0
        w[1] = 5.0  # one row with no tangent
        u = d.clone()
        u.fill_(0.5)
        out = [fwd.unpack_dual(t).tangent for t in (y, row, z, w, u)]
        values = [t.detach() for t in (y, z, w, u)]
    return [np.zeros((2, 3)) if t is None else np.asarray(t.detach().numpy()) for t in out], [
        np.asarray(v.numpy()) for v in values
    ]


def test_in_place_writes_pass_tangents_as_torch():
    rng = np.random.default_rng(0)
    x, tx, c, tc = (rng.standard_normal(s) for s in ((2, 3), (2, 3), (3,), (3,)))
    ours, our_values = _program(cr, fw, x, tx, c, tc)
    theirs, their_values = _program(torch, tfw, x, tx, c, tc)
    for a, b in zip(our_values, their_values, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_a_write_into_a_view_of_a_plain_tensor_gives_its_base_a_tangent():
    with fw.dual_level():
        base = cr.zeros(2, 3, dtype=cr.float64)
        d = fw.make_dual(cr.tensor([1.0, 2.0, 3.0]), cr.tensor([0.5, 0.25, 2.0]))
        base[1] = d
        np.testing.assert_array_equal(
            fw.unpack_dual(base).tangent.numpy(), [[0, 0, 0], [0.5, 0.25, 2.0]]
        )
        view = base[0]
        view.add_(d)
        np.testing.assert_array_equal(
            fw.unpack_dual(base).tangent.numpy(), [[0.5, 0.25, 2.0], [0.5, 0.25, 2.0]]
        )


@pytest.mark.parametrize("op", ["add_", "mul_", "sub_", "div_"])
def test_an_in_place_op_on_a_dual_matches_its_out_of_place_tangent(op):
    a = np.array([0.3, -1.2, 2.0])
    with fw.dual_level():
        d = fw.make_dual(cr.tensor(a), cr.tensor([1.0, 2.0, 3.0]))
        e = fw.make_dual(cr.tensor([1.5, 0.5, -2.0]), cr.tensor([0.1, 0.2, 0.3]))
        want = fw.unpack_dual(getattr(d, op[:-1])(e)).tangent.numpy().copy()
        y = d * 1.0
        getattr(y, op)(e)
        np.testing.assert_allclose(fw.unpack_dual(y).tangent.numpy(), want, rtol=1e-15)
