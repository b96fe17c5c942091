"""The argument handling of the shape, stacking and product functions, on their short paths
and their refusals: each against PyTorch."""

import itertools
import math

import numpy as np
import pytest
import torch

import chainrule as cr


def _same(ours, theirs):
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_movedim_of_one_dim_and_of_several_is_torchs():
    x = cr.arange(120.0).reshape(2, 3, 4, 5)
    t = torch.arange(120.0).reshape(2, 3, 4, 5)
    for s, d in itertools.product(range(-4, 4), repeat=2):
        _same(x.movedim(s, d), t.movedim(s, d))
    for k in (2, 3):
        for src in itertools.permutations(range(4), k):
            for dst in itertools.permutations(range(-4, 0), k):
                _same(x.movedim(src, dst), t.movedim(src, dst))
    with pytest.raises(ValueError, match="movedim: repeated dim"):
        x.movedim((0, 0), (1, 2))
    with pytest.raises(IndexError, match="movedim: dim 4 is out of range"):
        x.movedim(4, 0)


@pytest.mark.parametrize("dims", [(0, 1), (0, 0, 1), (0, 1, 2, 3), (0, 1, -1), (2, -3, 1)])
def test_permute_refuses_what_torch_refuses(dims):
    x, t = cr.zeros(2, 3, 4), torch.zeros(2, 3, 4)
    try:
        want = t.permute(dims)
    except (RuntimeError, IndexError):
        with pytest.raises((ValueError, IndexError), match="permute: "):
            x.permute(dims)
    else:
        _same(x.permute(dims), want)


def test_reshape_of_a_transposed_tensor_to_given_sizes():
    x = cr.arange(24.0).reshape(2, 3, 4).mT  # not contiguous: a copy, sizes given
    t = torch.arange(24.0).reshape(2, 3, 4).mT
    _same(x.reshape(4, 6), t.reshape(4, 6))
    _same(x.reshape(np.int64(4), -1), t.reshape(4, -1))
    with pytest.raises(ValueError, match=r"reshape: shape \(5, 5\) is invalid"):
        x.reshape(5, 5)


def test_cat_refusals_name_the_shapes():
    with pytest.raises(ValueError, match=r"cat: shapes must match except in dim 0; got shapes"):
        cr.cat([cr.ones(2, 3), cr.ones(2, 4)])
    with pytest.raises(ValueError, match=r"a 0-d tensor \(at position 1\) cannot be"):
        cr.cat([cr.ones(3), cr.ones(())])
    with pytest.raises(ValueError, match=r"a 0-d tensor \(at position 0\) cannot be"):
        cr.cat([cr.ones(()), cr.ones(())])
    with pytest.raises(ValueError, match="shapes must match"):  # shapes before dtypes
        cr.cat([cr.ones(2, 3), cr.ones(2, 4, dtype=cr.int64)])
    _same(
        cr.cat([cr.ones(2, 3), cr.ones(2, 1, dtype=cr.int64)], 1),
        torch.cat([torch.ones(2, 3), torch.ones(2, 1, dtype=torch.int64)], 1),
    )


def test_broadcast_tensors_names_itself():
    a, b = cr.broadcast_tensors(cr.ones(2, 1), cr.ones(()))
    assert a.shape == b.shape == (2, 1)
    with pytest.raises(ValueError, match=r"broadcast_tensors: shapes \(2,\) and \(3,\) cannot"):
        cr.broadcast_tensors(cr.ones(2), cr.ones(3))


@pytest.mark.parametrize("sizes", [(2, 3), (2, 3, 4), (0, 3), (1, 1)])
def test_cartesian_prod_is_torchs(sizes):
    xs = [cr.arange(float(n)) for n in sizes]
    ts = [torch.arange(float(n)) for n in sizes]
    _same(cr.cartesian_prod(*xs), torch.cartesian_prod(*ts))


def test_cartesian_prod_refusals():
    with pytest.raises(ValueError, match="cartesian_prod: expects 1-D tensors"):
        cr.cartesian_prod(cr.ones(2), cr.ones(2, 2))
    with pytest.raises(TypeError, match="cartesian_prod: expects tensors of one dtype"):
        cr.cartesian_prod(cr.ones(2), cr.ones(2, dtype=cr.int64))


@pytest.mark.parametrize(
    "shapes, dims",
    [
        (((3, 2, 4), (2, 5, 3)), ([1, 0], [0, 2])),
        (((3, 2, 4), (2, 4, 3)), 2),
        (((3, 2), (4, 5)), 0),
        (((2, 3), (2, 3)), 2),
        (((1, 3), (4, 3)), ([0, 1], [0, 1])),  # a size-1 dim against a longer one
    ],
)
def test_tensordot_is_torchs(shapes, dims):
    a = [np.arange(math.prod(s), dtype=np.float64).reshape(s) for s in shapes]
    got = cr.tensordot(cr.tensor(a[0]), cr.tensor(a[1]), dims)
    want = torch.tensordot(torch.tensor(a[0]), torch.tensor(a[1]), dims)
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.numpy(), want.numpy())


def test_tensordot_refuses_contracted_dims_of_other_sizes():
    with pytest.raises(ValueError, match="tensordot: contracted dims differ in size"):
        cr.tensordot(cr.ones(2, 3), cr.ones(4, 2), ([1], [0]))


def test_tensordot_refuses_a_dim_named_twice():
    with pytest.raises(ValueError, match=r"tensordot: a dim appears twice .*got \[0, 0\] and"):
        cr.tensordot(cr.ones(2, 2), cr.ones(2, 2), ([0, -2], [0, 1]))


def test_repeat_interleave_counts():
    x, t = cr.arange(6.0).reshape(2, 3), torch.arange(6.0).reshape(2, 3)
    for args in [(2,), (3, -1), (0, 1), (2, None)]:
        _same(x.repeat_interleave(*args), t.repeat_interleave(*args))
    _same(cr.tensor(3.0).repeat_interleave(2), torch.tensor(3.0).repeat_interleave(2))
    with pytest.raises(ValueError, match="repeat_interleave: repeats must not be negative"):
        x.repeat_interleave(-1)
    with pytest.raises(ValueError, match="output_size 5 differs"):
        x.repeat_interleave(2, 0, output_size=5)


@pytest.mark.parametrize("offset", [0, 1, -2])
@pytest.mark.parametrize("shape", [(2, 2), (3,), ()])
def test_diagflat_is_torchs(shape, offset):
    x = cr.arange(float(math.prod(shape))).reshape(shape)
    t = torch.arange(float(math.prod(shape))).reshape(shape)
    _same(x.diagflat(offset), t.diagflat(offset))
