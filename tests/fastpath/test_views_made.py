"""Views made directly (fastpath.view_made, slices_made) and expand by the array constructor:
the same values, view relations and nodes as the ops' apply, with the switch on and off."""

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule import fastpath

VIEWS = {
    "permute": lambda x: x.permute(2, 0, 1),
    "T": lambda x: x[0].T,
    "mT": lambda x: x.mT,
    "transpose": lambda x: x.transpose(0, 2),
    "reshape": lambda x: x.reshape(6, 4),
    "unsqueeze": lambda x: x.unsqueeze(1),
    "squeeze": lambda x: x[:1].squeeze(0),
    "narrow": lambda x: x.narrow(2, 1, 2),
    "expand": lambda x: x[:, :1].expand(2, 5, 4),
    "expand_new_dims": lambda x: x.expand(3, 2, 3, 4),
    "unbind": lambda x: x.unbind(1),
    "split": lambda x: x.split(2, dim=2),
    "split_sizes": lambda x: x.split([1, 3], dim=2),
    "chunk": lambda x: x.chunk(2, dim=-1),
    "tensor_split": lambda x: x.tensor_split([1, 3], dim=1),
    "hsplit": lambda x: x.hsplit(3),
    "unbind_to_0d": lambda x: x[0, 0].unbind(0),
}


def _outs(out):
    return list(out) if isinstance(out, tuple) else [out]


@pytest.mark.parametrize("name", sorted(VIEWS))
@pytest.mark.parametrize("on", [True, False])
def test_views_are_torchs_views_either_way(name, on):
    """Values, shape, strides, and the view relations (one version counter, the base) as
    PyTorch's, with nothing recorded and with a node."""
    with fastpath.disabled() if not on else _nothing():
        x = cr.arange(24.0).reshape(2, 3, 4)
        t = torch.arange(24.0).reshape(2, 3, 4)
        ours, theirs = _outs(VIEWS[name](x)), _outs(VIEWS[name](t))
        assert len(ours) == len(theirs)
        for o, w in zip(ours, theirs, strict=True):
            np.testing.assert_array_equal(o.numpy(), w.numpy())
            assert o.stride() == w.stride() and o._is_view() == w._is_view()
            assert o._base is x._base or o._base is x
            x.add_(0)  # a write through the base: every view's version moves with it
            assert o._version == x._version
        xg = cr.arange(24.0).reshape(2, 3, 4).requires_grad_()
        tg = torch.arange(24.0).reshape(2, 3, 4).requires_grad_()
        ours, theirs = _outs(VIEWS[name](xg)), _outs(VIEWS[name](tg))
        for o, w in zip(ours, theirs, strict=True):
            assert o.grad_fn.name() == w.grad_fn.name()
        sum(o.sum() * (k + 1) for k, o in enumerate(ours)).backward()
        sum(w.sum() * (k + 1) for k, w in enumerate(theirs)).backward()
        np.testing.assert_array_equal(xg.grad.numpy(), tg.grad.numpy())


class _nothing:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


@pytest.mark.parametrize("on", [True, False])
def test_expand_is_read_only_and_follows_its_base(on):
    with fastpath.disabled() if not on else _nothing():
        x = cr.tensor([[1.0], [2.0]])
        e = x.expand(3, 2, 5)
        assert not e._array.flags.writeable and e.stride() == (0, 1, 0)
        x.mul_(10)
        np.testing.assert_array_equal(e.numpy()[1], [[10.0] * 5, [20.0] * 5])
        t = x[:, :].t().expand(2, 2)  # a non-contiguous input: broadcast_to's own way
        np.testing.assert_array_equal(t.numpy(), [[10.0, 20.0]] * 2)
        assert cr.ones(0, 1).expand(0, 3).shape == (0, 3)


def test_views_inside_vmap_and_dual_levels_take_apply():
    """A vmap level or a dual level makes the view op's apply run (its batching or tangent)."""
    x = cr.arange(12.0).reshape(3, 4)
    got = cr.func.vmap(lambda r: r.unsqueeze(0).expand(2, 4).unbind(0)[1])(x)
    np.testing.assert_array_equal(got.numpy(), x.numpy())
    import chainrule.autograd.forward_ad as fwAD

    with fwAD.dual_level():
        d = fwAD.make_dual(x, cr.ones(3, 4))
        parts = d.mT.unbind(0)
        assert fwAD.unpack_dual(parts[1]).tangent is not None
