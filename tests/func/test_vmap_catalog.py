"""vmap of every op in the catalog against torch.func.vmap, over in_dims drawn at random for
each row (each input mapped at one of its dims, or not at all): the batching rules and the
per-example loop that serves ops without one give PyTorch's results. A few rows run in the
default suite; the whole catalog under -m slow."""

import zlib

import numpy as np
import pytest
import torch
import torch.func as tf

import chainrule as cr
import chainrule.func as cf
from tests.ops import test_ops as catalog
from tests.ops.rows import NUM

BATCH = 3
FAST = {
    "add[(3,1)&(1,4)]",
    "mul[(2,1,4)&(3,1)]",
    "sum[dim=(0, 2),keepdim=True]",
    "tanh",
    "linear",
    "layer_norm",
    "where_broadcast",
    "matmul_operator_chain",
}


def _case(row):
    """(our inputs, PyTorch's, in_dims) for a row: BATCH examples of each input, stacked at
    a dim drawn for it, or one example where it is not mapped."""
    rng = np.random.default_rng(zlib.crc32(row.name.encode()))
    examples = [catalog._arrays(row, seed=k) for k in range(BATCH)]
    dims = []
    for s in row.shapes:
        dims.append(None if s is NUM else int(rng.integers(-1, len(s) + 1)))
    tensors = [i for i, s in enumerate(row.shapes) if s is not NUM]
    if all(dims[i] in (None, -1) for i in tensors):
        dims[tensors[0]] = 0  # at least one input mapped
    dims = [None if d == -1 else d for d in dims]
    ours, theirs = [], []
    for i, d in enumerate(dims):
        if row.shapes[i] is NUM:
            ours.append(NUM)
            theirs.append(NUM)
            continue
        a = examples[0][i] if d is None else np.stack([e[i] for e in examples], axis=d)
        ours.append(cr.tensor(np.asarray(a, dtype=np.float64)))
        theirs.append(torch.tensor(np.asarray(a, dtype=np.float64)))
    return ours, theirs, tuple(dims)


def _floating(out):
    outs = out if isinstance(out, (tuple, list)) else (out,)
    return tuple(o for o in outs if o.is_floating_point())


def _torch_loop(fn, theirs, dims):
    outs = []
    for b in range(BATCH):
        xs = [x if d is None else x.select(d, b) for x, d in zip(theirs, dims, strict=True)]
        outs.append(_floating(fn(torch, *xs)))
    return tuple(torch.stack(col) for col in zip(*outs, strict=True))


def _check(row):
    ours, theirs, dims = _case(row)
    fn = row.torch_fn or row.fn
    try:
        looped = _torch_loop(fn, theirs, dims)  # what vmap means, by PyTorch's own ops
    except RuntimeError:  # a view of an example's strides that only vmap can take
        looped = None
    try:
        want = tf.vmap(lambda *xs: _floating(fn(torch, *xs)), in_dims=dims)(*theirs)
    except Exception:  # PyTorch's vmap cannot map it (data-dependent shapes, ...)
        want = looped
    if want is None:
        pytest.skip("PyTorch maps it neither by vmap nor by a loop")
    if looped is not None and not all(  # torch.func.vmap's few wrong answers
        w.shape == l.shape and torch.allclose(w, l, equal_nan=True)
        for w, l in zip(want, looped, strict=True)
    ):
        want = looped
    got = cf.vmap(lambda *xs: _floating(row.fn(cr, *xs)), in_dims=dims)(*ours)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert tuple(g.shape) == tuple(w.shape), (dims, tuple(g.shape), tuple(w.shape))
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-9, atol=1e-11, err_msg=str(dims))


ROWS = [r for r in catalog.ROWS if r.name in FAST]


def test_the_fast_rows_are_in_the_catalog():
    assert len(ROWS) >= 5, [r.name for r in ROWS]


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_vmap_of_a_catalog_op_matches_torch(row):
    _check(row)


# as_strided's strides and offset address an example's storage, which a batch's example
# does not have to itself (PyTorch's loop and its vmap disagree there too)
SWEPT = [r for r in catalog.ROWS if not r.name.startswith("as_strided")]


@pytest.mark.slow
@pytest.mark.parametrize("row", SWEPT, ids=[r.name for r in SWEPT])
def test_vmap_of_every_catalog_op_matches_torch(row):
    _check(row)
