"""RNN, LSTM, GRU and their cells against PyTorch with copied weights: outputs, final states
and every gradient under a random upstream gradient; central finite differences in float64;
the checks of arguments and shapes."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule.autograd import fastpath
from chainrule.nn import rnn
from chainrule.ops import rnn as rnn_ops
from tests.tolerances import LAYER, tol
from tests.twins import copy_back, copy_into

MODES = ["RNN", "LSTM", "GRU"]
TORCH_DTYPE = {np.float32: torch.float32, np.float64: torch.float64}


def twins(cls: str, dtype=np.float32, seed: int = 0, **kwargs):
    """The same layer in torch and chainrule, chainrule's weights copied from torch's."""
    torch.manual_seed(seed)
    theirs = getattr(torch.nn, cls)(**kwargs).to(TORCH_DTYPE[dtype])
    ours = getattr(cr.nn, cls)(**kwargs, dtype=dtype)
    copy_into(ours, theirs)
    return ours, theirs


def both(arr):
    """The array as a chainrule and a torch tensor, each a leaf that requires grad."""
    return cr.tensor(arr, requires_grad=True), torch.tensor(arr, requires_grad=True)


def flat(out):
    """A layer's or cell's result as a flat list of tensors."""
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in flat(o)]
    return [out]


def close(ours, theirs, dtype, what):
    np.testing.assert_allclose(
        ours.detach().numpy(), theirs.detach().numpy(), **tol(dtype, LAYER), err_msg=what
    )


def check_against_torch(ours, theirs, inputs, dtype, rng):
    """Run both on the inputs (arrays, or None), then backward from a random upstream
    gradient on every output; compare the outputs, the inputs' and parameters' gradients."""
    pairs = [None if a is None else both(a) for a in inputs]
    args_cr = [None if p is None else p[0] for p in pairs]
    args_t = [None if p is None else p[1] for p in pairs]
    outs_cr, outs_t = flat(ours(*nest(ours, args_cr))), flat(theirs(*nest(theirs, args_t)))
    assert len(outs_cr) == len(outs_t)
    loss_cr = loss_t = 0
    for i, (o, t) in enumerate(zip(outs_cr, outs_t, strict=True)):
        assert o.shape == tuple(t.shape), i
        close(o, t, dtype, f"output {i}")
        g = rng.standard_normal(o.shape).astype(dtype)
        loss_cr = loss_cr + (o * cr.tensor(g)).sum()
        loss_t = loss_t + (t * torch.tensor(g)).sum()
    loss_cr.backward()
    loss_t.backward()
    for i, p in enumerate(pairs):
        if p is not None:
            close(p[0].grad, p[1].grad, dtype, f"grad of input {i}")
    named_t = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        assert p.grad is not None, name
        assert p.grad.dtype == p.dtype
        close(p.grad, named_t[name].grad, dtype, f"grad of {name}")


def nest(module, args):
    """(input, hx) with an LSTM's two states as one tuple, as the layers take them."""
    x, *states = args
    if not states or states[0] is None:
        return (x,)
    if "LSTM" in type(module).__name__:
        return (x, tuple(states))
    return (x, states[0])


# -- layers against torch ------------------------------------------------------------------

# (num_layers, bidirectional, batch_first, initial state, bias, batched)
CONFIGS = [
    (1, False, False, False, True, True),
    (2, True, True, True, True, True),
    (2, False, False, True, False, True),
    (1, True, True, False, False, True),
    (2, True, False, True, True, False),
    (1, False, True, False, True, False),  # batch_first has no say over unbatched input
]


@pytest.mark.parametrize("fast", [True, False], ids=["fastpath", "plain"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("mode", MODES)
def test_layer_matches_torch(mode, config, dtype, fast):
    layers, bidirectional, batch_first, with_state, bias, batched = config
    L, N, I, H = 4, 3, 5, 6
    ours, theirs = twins(
        mode, dtype, input_size=I, hidden_size=H, num_layers=layers, bias=bias,
        batch_first=batch_first, bidirectional=bidirectional,
    )  # fmt: skip
    rng = np.random.default_rng(1)
    shape = (L, I) if not batched else ((N, L, I) if batch_first else (L, N, I))
    x = rng.standard_normal(shape).astype(dtype)
    rows = layers * (2 if bidirectional else 1)
    state_shape = (rows, N, H) if batched else (rows, H)
    states = [None]
    if with_state:
        states = [rng.standard_normal(state_shape).astype(dtype)]
        if mode == "LSTM":
            states.append(rng.standard_normal(state_shape).astype(dtype))
    with fastpath.disabled() if not fast else contextlib.nullcontext():
        check_against_torch(ours, theirs, [x, *states], dtype, rng)


@pytest.mark.parametrize("batched", [True, False])
def test_rnn_relu_matches_torch(batched):
    ours, theirs = twins("RNN", input_size=3, hidden_size=4, num_layers=2, nonlinearity="relu",
                         bidirectional=True)  # fmt: skip
    rng = np.random.default_rng(2)
    x = rng.standard_normal((5, 2, 3) if batched else (5, 3)).astype(np.float32)
    h0 = rng.standard_normal((4, 2, 4) if batched else (4, 4)).astype(np.float32)
    check_against_torch(ours, theirs, [x, h0], np.float32, rng)


@pytest.mark.parametrize("bidirectional", [False, True])
def test_lstm_with_projection_matches_torch(bidirectional):
    ours, theirs = twins("LSTM", np.float64, input_size=3, hidden_size=5, num_layers=2,
                         proj_size=2, bidirectional=bidirectional)  # fmt: skip
    rng = np.random.default_rng(3)
    d = 2 if bidirectional else 1
    x = rng.standard_normal((4, 2, 3))
    h0, c0 = rng.standard_normal((2 * d, 2, 2)), rng.standard_normal((2 * d, 2, 5))
    check_against_torch(ours, theirs, [x, h0, c0], np.float64, rng)


@pytest.mark.parametrize("mode", MODES)
def test_parameters_have_torch_names_shapes_and_init_range(mode):
    kwargs = dict(input_size=3, hidden_size=16, num_layers=2, bidirectional=True)
    ours, theirs = getattr(cr.nn, mode)(**kwargs), getattr(torch.nn, mode)(**kwargs)
    assert [(k, v.shape) for k, v in ours.state_dict().items()] == [
        (k, tuple(v.shape)) for k, v in theirs.state_dict().items()
    ]
    for p in ours.parameters():
        assert p.dtype == np.float32 and p.requires_grad
        assert np.abs(p.numpy()).max() <= 0.25  # 1 / sqrt(16)
    assert repr(ours) == repr(theirs)
    ours.flatten_parameters()  # what a ported script calls; nothing to do on the CPU
    assert [p.shape for p in ours.parameters()] == [tuple(p.shape) for p in theirs.parameters()]


@pytest.mark.parametrize("mode", MODES)
def test_dropout_in_eval_mode_equals_no_dropout(mode):
    with pytest.warns(UserWarning, match="num_layers=1"):
        getattr(cr.nn, mode)(3, 4, dropout=0.5)
    ours, theirs = twins(mode, input_size=3, hidden_size=4, num_layers=2, dropout=0.5)
    plain, _ = twins(mode, input_size=3, hidden_size=4, num_layers=2)
    x = cr.tensor(np.random.default_rng(4).standard_normal((5, 2, 3)).astype(np.float32))
    ours.eval()
    out, _ = ours(x)
    np.testing.assert_array_equal(out.numpy(), plain(x)[0].numpy())
    close(out, theirs.eval()(torch.tensor(x.numpy()))[0], np.float32, "eval output")
    ours.train()
    cr.manual_seed(0)
    assert not np.allclose(ours(x)[0].numpy(), out.numpy())  # dropout acts in training


def test_dropout_one_zeroes_what_the_second_layer_sees():
    """With p = 1 in training, the second layer runs on zeros: its output is what the same
    layer alone gives for an all-zero input."""
    lstm = cr.nn.LSTM(3, 4, num_layers=2, dropout=1.0)
    alone = cr.nn.LSTM(4, 4)
    alone.load_state_dict({k.replace("l1", "l0"): v for k, v in lstm.state_dict().items()
                           if k.endswith("l1")})  # fmt: skip
    out, _ = lstm(cr.randn(5, 2, 3))
    np.testing.assert_allclose(out.numpy(), alone(cr.zeros(5, 2, 4))[0].numpy(), rtol=1e-6)


@pytest.mark.parametrize("fast", [True, False], ids=["fastpath", "plain"])
@pytest.mark.parametrize("mode", MODES)
def test_the_two_biases_get_gradients_of_their_own(mode, fast):
    """Both biases of a layer have one gradient, computed once (both ways: the plain path
    adds them into the input's share as one sum): each .grad still owns its memory, so a
    change to one leaves the other as it was."""
    layer = getattr(cr.nn, mode)(3, 4)
    with fastpath.disabled() if not fast else contextlib.nullcontext():
        layer(cr.randn(5, 2, 3))[0].sum().backward()
    b_ih, b_hh = layer.bias_ih_l0.grad.numpy(), layer.bias_hh_l0.grad.numpy()
    assert not np.shares_memory(b_ih, b_hh)
    if mode != "GRU":  # a GRU's biases differ in the n gate
        np.testing.assert_array_equal(b_ih, b_hh)


def test_state_dict_goes_back_to_torch():
    ours = cr.nn.GRU(3, 4, num_layers=2, bidirectional=True)
    theirs = torch.nn.GRU(3, 4, num_layers=2, bidirectional=True)
    copy_back(theirs, ours)
    x = np.random.default_rng(5).standard_normal((5, 2, 3)).astype(np.float32)
    close(ours(cr.tensor(x))[0], theirs(torch.tensor(x))[0], np.float32, "output")


# -- cells ---------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "batched, with_state, bias", [(True, True, True), (True, False, False), (False, True, True),
                                  (False, False, True)]
)  # fmt: skip
@pytest.mark.parametrize("cls", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cell_matches_torch(cls, batched, with_state, bias, dtype):
    ours, theirs = twins(cls, dtype, input_size=5, hidden_size=4, bias=bias)
    rng = np.random.default_rng(6)
    x = rng.standard_normal((3, 5) if batched else (5,)).astype(dtype)
    shape = (3, 4) if batched else (4,)
    states = [None]
    if with_state:
        states = [rng.standard_normal(shape).astype(dtype) for _ in range(1 + (cls == "LSTMCell"))]
    check_against_torch(ours, theirs, [x, *states], dtype, rng)


def test_rnn_cell_relu_matches_torch():
    ours, theirs = twins("RNNCell", input_size=3, hidden_size=4, nonlinearity="relu")
    rng = np.random.default_rng(7)
    check_against_torch(ours, theirs, [rng.standard_normal((2, 3)).astype(np.float32),
                                       rng.standard_normal((2, 4)).astype(np.float32)],
                        np.float32, rng)  # fmt: skip


# -- finite differences --------------------------------------------------------------------


@pytest.mark.parametrize("fast", [True, False], ids=["fastpath", "plain"])
@pytest.mark.parametrize("mode", MODES)
def test_layer_gradients_match_finite_differences(mode, fast):
    cr.manual_seed(0)
    layer = getattr(cr.nn, mode)(2, 3, num_layers=2, bidirectional=True, dtype=cr.float64)
    x = cr.randn(3, 2, 2, dtype=cr.float64, requires_grad=True)
    h0 = cr.randn(4, 2, 3, dtype=cr.float64, requires_grad=True)
    hx = (h0, cr.randn(4, 2, 3, dtype=cr.float64)) if mode == "LSTM" else h0
    params = list(layer.parameters())

    def run(x, h0, *weights):  # the weights are the layer's own, perturbed in place
        return flat(layer(x, hx))

    with fastpath.disabled() if not fast else contextlib.nullcontext():
        assert cr.testing.gradcheck(run, [x, h0, params[1], params[3], params[-4]])


@pytest.mark.parametrize("cls", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cell_gradients_match_finite_differences(cls):
    cr.manual_seed(0)
    cell = getattr(cr.nn, cls)(2, 3, dtype=cr.float64)
    x = cr.randn(2, 2, dtype=cr.float64, requires_grad=True)
    h = cr.randn(2, 3, dtype=cr.float64, requires_grad=True)
    hx = (h, cr.randn(2, 3, dtype=cr.float64)) if cls == "LSTMCell" else h
    assert cr.testing.gradcheck(lambda x, h, *w: cell(x, hx), [x, h, *cell.parameters()])


@pytest.mark.parametrize("mode", MODES)
def test_second_order_gradients(mode):
    cr.manual_seed(0)
    layer = getattr(cr.nn, mode)(2, 2, dtype=cr.float64)
    x = cr.randn(3, 1, 2, dtype=cr.float64, requires_grad=True)
    w = layer.weight_hh_l0
    assert cr.testing.gradgradcheck(lambda x, w: layer(x)[0], [x, w])


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("mode, relu", [("RNN", False), ("RNN", True), ("LSTM", False),
                                        ("GRU", False)])  # fmt: skip
def test_primitive_rule_in_tensor_ops_matches_its_rule_on_arrays(mode, relu, reverse):
    """A layer's primitive: its backward (Tensor ops, on the saved activations) and its
    backward_arrays give one gradient; and its output is the cell's step run time after
    time."""
    cr.manual_seed(0)
    layer = getattr(cr.nn, mode)(3, 4, bias=not reverse, dtype=cr.float64)
    x, h0, c0 = (cr.randn(*s, dtype=cr.float64, requires_grad=True)
                 for s in [(5, 2, 3), (2, 4), (2, 4)])  # fmt: skip
    state = (h0, c0) if mode == "LSTM" else (h0,)
    names = ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"]
    weights = [getattr(layer, n, None) for n in names]  # no biases without bias
    op = {"RNN": rnn_ops.RNNLayer, "LSTM": rnn_ops.LSTMLayer, "GRU": rnn_ops.GRULayer}[mode]
    options = {"relu": relu} if mode == "RNN" else {}
    leaves = [x, *state, *[w for w in weights if w is not None]]
    upstream = None
    results = []
    for fast in (True, False):
        with fastpath.disabled() if not fast else contextlib.nullcontext():
            out = op.apply(x, *state, *weights, reverse=reverse, **options)
            if upstream is None:
                upstream = cr.randn(*out.shape, dtype=cr.float64)
            results.append([out.numpy(), *cr.grad([out], leaves, [upstream])])
    for a, b in zip(*results, strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12, atol=1e-14)
    with fastpath.disabled():
        composite, final = rnn.run_direction(mode, x, state, weights, reverse, relu)
    L = x.shape[0]
    np.testing.assert_allclose(results[0][0][:L], composite.numpy(), rtol=1e-12)
    if mode == "LSTM":
        np.testing.assert_allclose(results[0][0][L], final[1].numpy(), rtol=1e-12)


def test_anomaly_mode_runs_the_primitives_rule_in_tensor_ops():
    lstm, theirs = twins("LSTM", input_size=3, hidden_size=4, num_layers=2)
    x = np.random.default_rng(8).standard_normal((5, 2, 3)).astype(np.float32)
    with cr.detect_anomaly():
        lstm(cr.tensor(x))[0].sum().backward()
    theirs(torch.tensor(x))[0].sum().backward()
    for name, p in theirs.named_parameters():
        close(getattr(lstm, name).grad, p.grad, np.float32, name)


# -- errors --------------------------------------------------------------------------------


def test_input_and_state_shapes_are_checked():
    lstm = cr.nn.LSTM(3, 4, num_layers=2)
    with pytest.raises(ValueError, match=r"LSTM: expected input with last dim 3 \(input_size\); "
                       r"got shape \(5, 2, 6\)"):  # fmt: skip
        lstm(cr.zeros(5, 2, 6))
    with pytest.raises(ValueError, match=r"LSTM: expected input of 2 dims .*got shape \(5,\)"):
        lstm(cr.zeros(5))
    with pytest.raises(ValueError, match=r"LSTM: expected hx\[1\] \(c_0\) of shape \(2, 2, 4\); "
                       r"got \(2, 3, 4\)"):  # fmt: skip
        lstm(cr.zeros(5, 2, 3), (cr.zeros(2, 2, 4), cr.zeros(2, 3, 4)))
    with pytest.raises(TypeError, match=r"LSTM: expected hx as a tuple \(h_0, c_0\); got Tensor"):
        lstm(cr.zeros(5, 2, 3), cr.zeros(2, 2, 4))
    with pytest.raises(ValueError, match=r"GRU: expected hx of shape \(2, 4\); got \(1, 2, 4\)"):
        cr.nn.GRU(3, 4, bidirectional=True)(cr.zeros(5, 3), cr.zeros(1, 2, 4))
    with pytest.raises(ValueError, match=r"GRUCell: expected input of shape \(N, 3\) or \(3,\) "
                       r"\(input_size 3\); got \(2, 4\)"):  # fmt: skip
        cr.nn.GRUCell(3, 4)(cr.zeros(2, 4))
    with pytest.raises(ValueError, match=r"RNNCell: expected hx of shape \(2, 4\); got \(4,\)"):
        cr.nn.RNNCell(3, 4)(cr.zeros(2, 3), cr.zeros(4))
    with pytest.raises(ValueError, match=r"RNN: expected a sequence of at least one step; got "
                       r"input of shape \(2, 0, 3\)"):  # fmt: skip
        cr.nn.RNN(3, 4, batch_first=True)(cr.zeros(2, 0, 3))
    assert cr.nn.GRU(3, 4)(cr.zeros(5, 0, 3))[0].shape == (5, 0, 4)  # an empty batch
    with pytest.raises(TypeError, match="LSTMCell: hx\\[1\\] \\(c\\) and input must have one "
                       "dtype; got chainrule.float64 and chainrule.float32"):  # fmt: skip
        cr.nn.LSTMCell(3, 4)(cr.zeros(3), (cr.zeros(4), cr.zeros(4, dtype=cr.float64)))
    with pytest.raises(TypeError, match="GRU: input and parameters must have one dtype; got "
                       "input chainrule.float64 and parameters chainrule.float32"):  # fmt: skip
        cr.nn.GRU(3, 4)(cr.zeros(5, 2, 3, dtype=cr.float64))


def test_constructor_values_are_checked():
    with pytest.raises(ValueError, match="RNN: nonlinearity must be 'tanh' or 'relu'; got "
                       "nonlinearity='sigmoid'"):  # fmt: skip
        cr.nn.RNN(3, 4, nonlinearity="sigmoid")
    with pytest.raises(ValueError, match=r"GRU: dropout must be a number in \[0, 1\].*got 2"):
        cr.nn.GRU(3, 4, dropout=2)
    with pytest.raises(ValueError, match="LSTM: hidden_size must be a positive int; got 0"):
        cr.nn.LSTM(3, 0)
    with pytest.raises(ValueError, match="RNN: num_layers must be a positive int; got 1.5"):
        cr.nn.RNN(3, 4, num_layers=1.5)
    with pytest.raises(ValueError, match="LSTM: proj_size must be smaller than hidden_size; got "
                       "proj_size=4 and hidden_size=4"):  # fmt: skip
        cr.nn.LSTM(3, 4, proj_size=4)
    with pytest.raises(ValueError, match="LSTMCell: input_size must be a non-negative int"):
        cr.nn.LSTMCell(-1, 4)
    with pytest.raises(ValueError, match="RNNCell: nonlinearity must be"):
        cr.nn.RNNCell(3, 4, nonlinearity="gelu")
    with pytest.raises(
        ValueError, match="GRUCell: chainrule computes on the CPU; got device 'cuda'"
    ):
        cr.nn.GRUCell(3, 4, device="cuda")
    assert cr.nn.LSTM(3, 4, device="cpu").weight_ih_l0.shape == (16, 3)
