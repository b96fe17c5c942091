"""chainrule.nn.utils.rnn against torch.nn.utils.rnn: padding, packing and unpacking of
sequences of different lengths (values, lengths, sort orders and the gradient back to the
inputs under a random upstream gradient), their errors, PackedSequence's conversions; and
RNN, LSTM and GRU over a PackedSequence against torch's with copied weights (outputs, h_n and
c_n, the gradients of the input, the initial states and every weight), over random lengths."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.nn.utils import rnn as trnn

import chainrule as cr
from chainrule.autograd import fastpath
from chainrule.nn.utils import rnn
from tests.tolerances import LAYER, OP, STACK, tol
from tests.twins import copy_into

ROOT = Path(__file__).resolve().parents[2]


def both(arr):
    """The array as a chainrule and a torch tensor, each a leaf that requires grad."""
    return cr.tensor(arr, requires_grad=True), torch.tensor(arr, requires_grad=True)


def close(ours, theirs, depth=OP, what=""):
    ours = ours.detach().numpy() if isinstance(ours, cr.Tensor) else np.asarray(ours)
    theirs = theirs.detach().numpy() if isinstance(theirs, torch.Tensor) else np.asarray(theirs)
    assert ours.shape == theirs.shape, (what, ours.shape, theirs.shape)
    np.testing.assert_allclose(ours, theirs, **tol(np.float64, depth), err_msg=what)


def backward_both(ours, theirs, rng):
    """Backward from one random upstream gradient on each pair of outputs."""
    loss_cr = loss_t = 0
    for o, t in zip(ours, theirs, strict=True):
        g = rng.standard_normal(tuple(t.shape))
        loss_cr = loss_cr + (o * cr.tensor(g)).sum()
        loss_t = loss_t + (t * torch.tensor(g)).sum()
    loss_cr.backward()
    loss_t.backward()


def sequences(lengths, rest=(3,), seed=0):
    """Random float64 sequences of the lengths, each (length, *rest), as chainrule and torch
    leaves."""
    rng = np.random.default_rng(seed)
    pairs = [both(rng.standard_normal((n, *rest))) for n in lengths]
    return [p[0] for p in pairs], [p[1] for p in pairs]


def same_packed(ours, theirs, depth=OP):
    close(ours.data, theirs.data, depth, "data")
    assert ours.batch_sizes.tolist() == theirs.batch_sizes.tolist()
    assert ours.batch_sizes.dtype == cr.int64 and not ours.batch_sizes.is_cuda
    for name in ("sorted_indices", "unsorted_indices"):
        a, b = getattr(ours, name), getattr(theirs, name)
        assert (a is None) == (b is None), name
        if a is not None:
            assert a.tolist() == b.tolist() and a.dtype == cr.int64, name


# -- pad_sequence, unpad_sequence ---------------------------------------------------------------


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("padding_side", ["right", "left"])
@pytest.mark.parametrize("rest", [(), (3,), (2, 3)])
def test_pad_sequence(batch_first, padding_side, rest) -> None:
    ours, theirs = sequences([3, 5, 1, 5], rest)
    kw = dict(batch_first=batch_first, padding_value=-2.5, padding_side=padding_side)
    a, b = rnn.pad_sequence(ours, **kw), trnn.pad_sequence(theirs, **kw)
    close(a, b)
    backward_both([a], [b], np.random.default_rng(1))
    for s, t in zip(ours, theirs, strict=True):
        close(s.grad, t.grad)


def test_pad_sequence_takes_a_tensor_as_its_sequences() -> None:
    x = np.arange(12.0).reshape(3, 4)
    close(rnn.pad_sequence(cr.tensor(x)), trnn.pad_sequence(torch.tensor(x)))


@pytest.mark.parametrize("batch_first", [False, True])
def test_unpad_sequence(batch_first) -> None:
    rng = np.random.default_rng(2)
    shape = (4, 5, 2) if batch_first else (5, 4, 2)
    a, b = both(rng.standard_normal(shape))
    lengths = [5, 2, 4, 1]
    ours = rnn.unpad_sequence(a, cr.tensor(lengths), batch_first)
    # torch's transposes its argument in place (refused on a leaf): give it a copy
    theirs = trnn.unpad_sequence(b.clone(), torch.tensor(lengths), batch_first)
    for s, t in zip(ours, theirs, strict=True):
        close(s, t)
    backward_both(ours, theirs, rng)
    close(a.grad, b.grad)


# -- pack_padded_sequence, pad_packed_sequence ----------------------------------------------------


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize(
    "lengths, enforce_sorted",
    [([5, 5, 3, 1], True), ([2, 5, 2, 5, 1], False), ([3, 3, 3], False), ([4], True)],
)
def test_pack_padded_sequence(batch_first, lengths, enforce_sorted) -> None:
    rng = np.random.default_rng(3)
    batch, steps = len(lengths), 6  # one step past the longest: dropped
    a, b = both(rng.standard_normal((batch, steps, 2) if batch_first else (steps, batch, 2)))
    kw = dict(batch_first=batch_first, enforce_sorted=enforce_sorted)
    ours = rnn.pack_padded_sequence(a, lengths, **kw)
    theirs = trnn.pack_padded_sequence(b, torch.tensor(lengths), **kw)
    assert isinstance(ours, rnn.PackedSequence) and isinstance(ours, tuple)
    same_packed(ours, theirs)
    backward_both([ours.data], [theirs.data], rng)
    close(a.grad, b.grad)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("total_length", [None, 7])
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_pad_packed_sequence(batch_first, total_length, enforce_sorted) -> None:
    lengths = [5, 4, 4, 2] if enforce_sorted else [4, 2, 5, 4]
    ours, theirs = sequences(lengths, (2,), seed=4)
    packed_cr = rnn.pack_sequence(ours, enforce_sorted)
    packed_t = trnn.pack_sequence(theirs, enforce_sorted)
    same_packed(packed_cr, packed_t)
    kw = dict(batch_first=batch_first, padding_value=0.5, total_length=total_length)
    a, la = rnn.pad_packed_sequence(packed_cr, **kw)
    b, lb = trnn.pad_packed_sequence(packed_t, **kw)
    close(a, b)
    assert la.tolist() == lb.tolist() == lengths and la.dtype == cr.int64
    backward_both([a], [b], np.random.default_rng(5))
    for s, t in zip(ours, theirs, strict=True):
        close(s.grad, t.grad)


@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_pack_and_unpack_sequence(enforce_sorted) -> None:
    lengths = [4, 3, 1] if enforce_sorted else [1, 4, 3, 4]
    ours, theirs = sequences(lengths, (2, 2), seed=6)
    a = rnn.unpack_sequence(rnn.pack_sequence(ours, enforce_sorted))
    b = trnn.unpack_sequence(trnn.pack_sequence(theirs, enforce_sorted))
    for s, t in zip(a, b, strict=True):
        close(s, t)
    backward_both(a, b, np.random.default_rng(7))
    for s, t in zip(ours, theirs, strict=True):
        close(s.grad, t.grad)


@settings(max_examples=25, deadline=None)
@given(
    lengths=st.lists(st.integers(1, 6), min_size=1, max_size=6),
    batch_first=st.booleans(),
)
def test_packing_over_random_lengths(lengths, batch_first) -> None:
    ours, theirs = sequences(lengths, (2,), seed=len(lengths))
    a = rnn.pack_sequence(ours, enforce_sorted=False)
    b = trnn.pack_sequence(theirs, enforce_sorted=False)
    same_packed(a, b)
    pa, la = rnn.pad_packed_sequence(a, batch_first)
    pb, lb = trnn.pad_packed_sequence(b, batch_first)
    close(pa, pb)
    assert la.tolist() == lb.tolist()


# -- errors ----------------------------------------------------------------------------------------


def test_pack_padded_sequence_errors() -> None:
    x = cr.zeros(3, 2, 4)
    with pytest.raises(RuntimeError, match=r"`lengths` array must be sorted in decreasing order"):
        rnn.pack_padded_sequence(x, [2, 3])
    for enforce_sorted in (True, False):
        with pytest.raises(RuntimeError, match=r"greater than 0.*got lengths \[3, 0\]"):
            rnn.pack_padded_sequence(x, [3, 0], enforce_sorted=enforce_sorted)
    with pytest.raises(RuntimeError, match=r"got 1 \(batch_size=2\); input shape \(3, 2, 4\)"):
        rnn.pack_padded_sequence(x, [3])
    with pytest.raises(RuntimeError, match="should be a 1D CPU int64 tensor, but got 2D cpu"):
        rnn.pack_padded_sequence(x, cr.tensor([[3, 2]]))
    with pytest.raises(RuntimeError, match=r"a 1D list of ints .*; got \[\[3, 2\]\]"):
        rnn.pack_padded_sequence(x, [[3, 2]])
    with pytest.raises(ValueError, match=r"exceeds the input's 3 steps; got lengths \[4, 3\]"):
        rnn.pack_padded_sequence(x, [4, 3])
    with pytest.raises(ValueError, match=r"at least 2 dims .*got shape \(3,\)"):
        rnn.pack_padded_sequence(cr.zeros(3), [3])


def test_pack_padded_sequence_takes_lengths_as_torch_does() -> None:
    x = np.arange(12.0).reshape(3, 2, 2)
    for lengths in ([3, 2], (3, 2), cr.tensor([3, 2]), cr.tensor([3.0, 2.0])):
        ours = rnn.pack_padded_sequence(cr.tensor(x), lengths)
        same_packed(ours, trnn.pack_padded_sequence(torch.tensor(x), [3, 2]))


def test_cuda_lengths_and_batch_sizes_are_refused() -> None:
    """On the strict stand-in's CUDA device (a subprocess: the array module is chosen at
    import), as PyTorch refuses lengths and batch_sizes off the CPU."""
    code = (
        "import chainrule as cr\n"
        "from chainrule.nn.utils import rnn\n"
        "on = cr.tensor([3, 2], device='cuda')\n"
        "for f in (lambda: rnn.pack_padded_sequence(cr.ones(3, 2, 1), on),\n"
        "          lambda: rnn.PackedSequence(cr.ones(5, 1), on)):\n"
        "    try:\n"
        "        f()\n"
        "    except (RuntimeError, ValueError) as e:\n"
        "        print(type(e).__name__, e)\n"
        "p = rnn.pack_padded_sequence(cr.ones(3, 2, 1), [2, 3], enforce_sorted=False)\n"
        "q = p.to('cuda')\n"
        "print(q.is_cuda, q.sorted_indices.device, q.batch_sizes.device, p.is_cuda)\n"
        "cr.set_default_device('cuda')  # batch_sizes and lengths stay on the CPU still\n"
        "s = rnn.pack_sequence([cr.ones(2, 1), cr.ones(1, 1)])\n"
        "out, h = cr.nn.GRU(1, 2)(s)\n"
        "padded, n = rnn.pad_packed_sequence(out)\n"
        "print(s.batch_sizes.device, out.batch_sizes.device, n.device, padded.device, h.device)\n"
        "print([tuple(p.shape) for p in rnn.unpad_sequence(padded, n.to('cuda'))])  # any device\n"
    )
    env = {**os.environ, "CHAINRULE_ARRAY_BACKEND": "strict"}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == (
        "RuntimeError pack_padded_sequence: 'lengths' argument should be a 1D CPU int64 tensor, "
        "but got 1D cuda:0 int64 tensor"
    )
    assert lines[1].startswith("ValueError PackedSequence: batch_sizes should always be on CPU")
    assert lines[2] == "True cuda:0 cpu False"
    assert lines[3] == "cpu cpu cpu cuda:0 cuda:0"
    assert lines[4] == "[(2, 2), (1, 2)]"


def test_padding_errors() -> None:
    with pytest.raises(RuntimeError, match="pad_sequence: received an empty list of sequences"):
        rnn.pad_sequence([])
    with pytest.raises(RuntimeError, match="pack_sequence: received an empty list of sequences"):
        rnn.pack_sequence([])
    with pytest.raises(ValueError, match=r"same sizes after its first; got shapes \[\(2, 3\)"):
        rnn.pad_sequence([cr.zeros(2, 3), cr.zeros(3, 4)])
    with pytest.raises(ValueError, match="at least one dim"):
        rnn.pad_sequence([cr.zeros(2), cr.tensor(1.0)])
    with pytest.raises(ValueError, match="padding_side must be 'left' or 'right'; got 'up'"):
        rnn.pad_sequence([cr.zeros(2)], padding_side="up")
    packed = rnn.pack_sequence([cr.zeros(3, 1), cr.zeros(2, 1)])
    with pytest.raises(ValueError, match="got total_length=2 and max sequence length being 3"):
        rnn.pad_packed_sequence(packed, total_length=2)
    with pytest.raises(TypeError, match="pad_packed_sequence: expected a PackedSequence; got"):
        rnn.pad_packed_sequence(cr.zeros(3, 2))
    with pytest.raises(ValueError, match=r"one length per sequence; got 1 lengths .*\(3, 2\)"):
        rnn.unpad_sequence(cr.zeros(3, 2), [3])
    with pytest.raises(
        RuntimeError, match=r"Length of all samples has to be greater than 0.*\[2, 0\]"
    ):
        rnn.pack_sequence([cr.zeros(2, 1), cr.zeros(0, 1)], enforce_sorted=False)


# -- PackedSequence ------------------------------------------------------------------------------


def test_packed_sequence_is_a_named_tuple_with_torchs_conversions() -> None:
    packed = rnn.pack_sequence([cr.ones(2, 3), cr.ones(3, 3)], enforce_sorted=False)
    data, batch_sizes, sorted_indices, unsorted_indices = packed
    assert packed._fields == trnn.PackedSequence._fields
    assert data is packed.data and batch_sizes.tolist() == [2, 2, 1]
    assert sorted_indices.tolist() == [1, 0] and unsorted_indices.tolist() == [1, 0]
    assert packed.to(cr.float32) is packed and packed.cpu() is packed and not packed.is_cuda
    assert not packed.is_pinned()
    wide = packed.double()
    assert type(wide) is rnn.PackedSequence and wide.data.dtype == cr.float64
    assert wide.batch_sizes is packed.batch_sizes and wide.sorted_indices.tolist() == [1, 0]
    assert packed.to(dtype=cr.float64).data.dtype == cr.float64
    assert packed.long().data.dtype == cr.int64 and packed.int().data.dtype == cr.int32
    assert packed.half().data.dtype == cr.float16 and wide.float().data.dtype == cr.float32
    pair = rnn.PackedSequence((data, batch_sizes))  # PyTorch's other spelling
    assert pair.data is data and pair.sorted_indices is None and pair.unsorted_indices is None
    made = rnn.PackedSequence(data, batch_sizes, sorted_indices)  # the inverse is worked out
    assert made.unsorted_indices.tolist() == [1, 0]
    with pytest.raises(TypeError, match="PackedSequence: expected data and batch_sizes"):
        rnn.PackedSequence(data)


def test_the_utils_package_keeps_its_names() -> None:
    assert cr.nn.utils.rnn is rnn and cr.nn.utils.rnn.pad_sequence is rnn.pad_sequence
    for name in ("clip_grad_norm_", "clip_grad_value_", "parameters_to_vector", "get_total_norm"):
        assert callable(getattr(cr.nn.utils, name)), name
    assert set(rnn.__all__) <= set(dir(trnn))


# -- RNN, LSTM and GRU over packed sequences -------------------------------------------------------

MODES = ["RNN", "LSTM", "GRU"]
LAYOUTS = [  # num_layers, bidirectional, batch_first, enforce_sorted, with initial states
    (1, False, False, True, False),
    (1, True, True, False, True),
    (2, False, True, False, False),
    (2, True, False, True, True),
    (3, True, True, False, True),
]


def layer_twins(mode, seed=0, **kwargs):
    torch.manual_seed(seed)
    theirs = getattr(torch.nn, mode)(**kwargs).double()
    ours = getattr(cr.nn, mode)(**kwargs, dtype=cr.float64)
    copy_into(ours, theirs)
    return ours, theirs


def check_packed_layer(mode, lengths, layers, bidirectional, batch_first, enforce_sorted, hx, **kw):
    """The layer over the padded input packed with the lengths, against torch's: the packed
    output, h_n (and c_n) and every gradient from a random upstream gradient on all of them."""
    rng = np.random.default_rng(len(lengths) + layers)
    size, hidden = 3, 4
    ours, theirs = layer_twins(
        mode, input_size=size, hidden_size=hidden, num_layers=layers,
        bidirectional=bidirectional, batch_first=batch_first, **kw,
    )  # fmt: skip
    batch, steps = len(lengths), max(lengths)
    x_cr, x_t = both(
        rng.standard_normal((batch, steps, size) if batch_first else (steps, batch, size))
    )
    rows = layers * (2 if bidirectional else 1)
    states = [both(rng.standard_normal((rows, batch, kw.get("proj_size") or hidden)))]
    if mode == "LSTM":
        states.append(both(rng.standard_normal((rows, batch, hidden))))
    args_cr, args_t = [], []
    if hx:
        args_cr = [tuple(s[0] for s in states) if mode == "LSTM" else states[0][0]]
        args_t = [tuple(s[1] for s in states) if mode == "LSTM" else states[0][1]]
    pack = dict(batch_first=batch_first, enforce_sorted=enforce_sorted)
    out_cr, h_cr = ours(rnn.pack_padded_sequence(x_cr, lengths, **pack), *args_cr)
    out_t, h_t = theirs(trnn.pack_padded_sequence(x_t, lengths, **pack), *args_t)
    assert isinstance(out_cr, rnn.PackedSequence)
    same_packed(out_cr, out_t, STACK)
    finals_cr = list(h_cr) if mode == "LSTM" else [h_cr]
    finals_t = list(h_t) if mode == "LSTM" else [h_t]
    for i, (a, b) in enumerate(zip(finals_cr, finals_t, strict=True)):
        close(a, b, STACK, f"final state {i}")
    backward_both([out_cr.data, *finals_cr], [out_t.data, *finals_t], rng)
    close(x_cr.grad, x_t.grad, STACK, "grad of input")
    if hx:
        for i, (a, b) in enumerate(states):
            close(a.grad, b.grad, STACK, f"grad of initial state {i}")
    for (name, p), q in zip(ours.named_parameters(), theirs.parameters(), strict=True):
        close(p.grad, q.grad, STACK, f"grad of {name}")


@pytest.mark.parametrize("fast", [True, False], ids=["fused", "cells"])
@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda c: "-".join(str(int(v)) for v in c))
@pytest.mark.parametrize("mode", MODES)
def test_layers_over_packed_sequences(mode, layout, fast) -> None:
    lengths = [5, 5, 3, 2, 1] if layout[3] else [2, 5, 1, 5, 3, 2]
    with fastpath.disabled() if not fast else contextlib.nullcontext():
        check_packed_layer(mode, lengths, *layout)


def test_lstm_with_projection_and_relu_rnn_over_packed_sequences() -> None:
    check_packed_layer("LSTM", [4, 1, 3], 2, True, False, False, True, proj_size=2)
    check_packed_layer("RNN", [4, 1, 3], 2, True, True, False, True, nonlinearity="relu")


def test_dropout_between_layers_over_packed_sequences() -> None:
    # dropout 1 zeroes every value between the layers in training: the one draw both agree on
    check_packed_layer("LSTM", [4, 1, 3], 3, True, False, False, True, dropout=1.0)


@settings(max_examples=15, deadline=None)
@given(
    mode=st.sampled_from(MODES),
    lengths=st.lists(st.integers(1, 5), min_size=1, max_size=5),
    bidirectional=st.booleans(),
)
def test_layers_over_random_lengths(mode, lengths, bidirectional) -> None:
    check_packed_layer(mode, lengths, 2, bidirectional, True, False, True)


def test_packed_equals_each_sequence_run_alone() -> None:
    """A sequence's own run, unpadded and by itself, is its part of the packed run: its
    outputs and its h_n, in both directions."""
    torch.manual_seed(0)
    lstm = cr.nn.LSTM(3, 4, bidirectional=True, dtype=cr.float64)
    rng = np.random.default_rng(8)
    seqs = [cr.tensor(rng.standard_normal((n, 3))) for n in (2, 5, 3)]
    out, (h_n, c_n) = lstm(rnn.pack_sequence(seqs, enforce_sorted=False))
    for i, (s, o) in enumerate(zip(seqs, rnn.unpack_sequence(out), strict=True)):
        alone, (h, c) = lstm(s.unsqueeze(1))  # (L_i, 1, 2 * 4)
        close(o, alone.squeeze(1), LAYER, f"output of sequence {i}")
        close(h_n[:, i], h.squeeze(1), LAYER, f"h_n of sequence {i}")
        close(c_n[:, i], c.squeeze(1), LAYER, f"c_n of sequence {i}")


def test_packed_input_errors() -> None:
    gru = cr.nn.GRU(3, 5)
    packed = rnn.pack_sequence([cr.zeros(3, 4), cr.zeros(2, 4)])
    with pytest.raises(
        ValueError, match=r"GRU: expected packed data of shape \(sum of lengths, 3\)"
    ):
        gru(packed)
    lstm = cr.nn.LSTM(4, 5)
    with pytest.raises(ValueError, match=r"LSTM: expected hx\[0\] \(h_0\) of shape \(1, 2, 5\)"):
        lstm(packed, (cr.zeros(1, 3, 5), cr.zeros(1, 3, 5)))
    with pytest.raises(
        TypeError,
        match="LSTM: input and parameters must have one dtype; got input chainrule.float64 and "
        "parameters chainrule.float32",
    ):
        lstm(packed.double())


# -- PackedSequences made by hand -------------------------------------------------------------

# (name, data rows, batch_sizes, sorted_indices, unsorted_indices, our message, what torch does
# with it: "construct" refuses at once, "later" lets it through to fail in pad_packed_sequence
# and the GRU, "silent" gives answers from it without a word, "undefined" reads memory it never
# wrote, failing or not from run to run)
HAND_MADE = [
    ("sum-past-rows", 5, [3, 3], None, None, "data must have one row per step", "later"),
    ("sum-short-of-rows", 5, [2, 1], None, None, "data must have one row per step", "silent"),
    ("growing", 5, [2, 3], None, None, "batch_sizes must not grow", "later"),
    ("negative", 3, [4, -1], None, None, "batch_sizes must be positive", "later"),
    ("empty", 0, [], None, None, "batch_sizes must be positive and not empty", "later"),
    ("float-batch-sizes", 5, [3.0, 2.0], None, None, "batch_sizes must be a 1-D int64", "later"),
    ("int32-batch-sizes", 5, "int32", None, None, "batch_sizes must be a 1-D int64", "later"),
    (
        "repeated-index",
        5,
        [3, 2],
        [0, 0, 1],
        None,
        "sorted_indices must be a permutation",
        "undefined",
    ),
    (
        "index-out-of-range",
        5,
        [3, 2],
        [0, 1, 5],
        None,
        "sorted_indices must be a perm",
        "construct",
    ),
    ("too-few-indices", 5, [3, 2], [1, 0], None, "sorted_indices must be a permutation", "silent"),
    (
        "unsorted-not-a-perm",
        5,
        [3, 2],
        None,
        [0, 2, 2],
        "unsorted_indices must be a perm",
        "silent",
    ),
    ("indices-disagree", 5, [3, 2], [2, 0, 1], [0, 1, 2], "must be the inverse", "silent"),
]


def _hand_made(lib, rows, sizes, sorted_, unsorted):
    data = lib.tensor(np.arange(rows * 2, dtype=np.float32).reshape(rows, 2))
    if sizes == "int32":
        batch_sizes = lib.tensor([3, 2], dtype=lib.int32)
    else:
        batch_sizes = lib.tensor(sizes, dtype=None if sizes else lib.int64)
    index = [None if i is None else lib.tensor(i) for i in (sorted_, unsorted)]
    return lib.nn.utils.rnn.PackedSequence(data, batch_sizes, *index)


@pytest.mark.parametrize("case", HAND_MADE, ids=[c[0] for c in HAND_MADE])
def test_a_hand_made_packed_sequence_that_does_not_hold_together_is_refused(case) -> None:
    """Batch sizes summing past data's rows padded a row with zeros, growing ones ended in a
    bare IndexError, indices that were no permutation were taken; torch refuses these at once,
    later (in pad_packed_sequence or an RNN), or, where marked silent, not at all."""
    _, rows, sizes, sorted_, unsorted, message, torch_does = case
    with pytest.raises((TypeError, ValueError), match=rf"^PackedSequence: .*{message}"):
        _hand_made(cr, rows, sizes, sorted_, unsorted)
    try:
        packed = _hand_made(torch, rows, sizes, sorted_, unsorted)
    except (RuntimeError, IndexError):
        assert torch_does == "construct"
        return
    assert torch_does != "construct"
    if torch_does == "undefined":
        return
    failures = 0
    for use in (trnn.pad_packed_sequence, torch.nn.GRU(2, 3)):
        try:
            use(packed)
        except (RuntimeError, IndexError, TypeError):
            failures += 1
    assert failures == (2 if torch_does == "later" else 0)


def test_a_hand_made_packed_sequence_that_holds_together_runs_as_torchs() -> None:
    ours = _hand_made(cr, 5, [3, 2], [2, 0, 1], None)
    theirs = _hand_made(torch, 5, [3, 2], [2, 0, 1], None)
    assert ours.unsorted_indices.tolist() == theirs.unsorted_indices.tolist()
    for a, b in zip(rnn.unpack_sequence(ours), trnn.unpack_sequence(theirs), strict=True):
        close(a, b)
    trailing_zero = [_hand_made(lib, 3, [3, 0], None, None) for lib in (cr, torch)]
    close(
        rnn.pad_packed_sequence(trailing_zero[0])[0], trnn.pad_packed_sequence(trailing_zero[1])[0]
    )
