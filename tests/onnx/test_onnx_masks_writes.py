"""Export to ONNX of boolean attention masks, the clipping activations, item assignment with
index arrays and None, and the projected LSTM over a free length: ONNX Runtime's output on
fresh inputs of other sizes equals chainrule's and, where PyTorch has the model, PyTorch's
(float32, 1e-5 relative); an index ONNX cannot write is refused, naming it."""

import io

import numpy as np
import pytest
import torch

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import chainrule as cr  # noqa: E402
import chainrule.nn.functional as F  # noqa: E402
from chainrule import nn  # noqa: E402
from chainrule.onnx import UnsupportedOperatorError, export  # noqa: E402
from tests.onnx.test_onnx import Fn  # noqa: E402
from tests.onnx.test_onnx_sequence import BT, check, floats, ours, seq  # noqa: E402
from tests.tolerances import OP, tol  # noqa: E402
from tests.twins import copy_back  # noqa: E402

TOL = tol(np.float32, OP)


def session_of(model, inputs, names, axes):
    """The model exported on inputs (names, dynamic axes by name) and its ONNX Runtime
    session."""
    buf = io.BytesIO()
    proto = export(model, tuple(cr.tensor(x) for x in inputs), buf, input_names=names,
                   dynamic_axes=axes)  # fmt: skip
    onnx.checker.check_model(proto, full_check=True)
    return proto, ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])


# -- boolean attention masks -----------------------------------------------------------------


def padding(n, t, seed):
    """(n, t) bool: True at about a third of the keys, never at the first."""
    out = np.random.default_rng(seed).random((n, t)) > 0.65
    out[:, 0] = False
    return out


def later(n, t, seed):
    """(t, t) bool: True above the diagonal (the causal mask's form, as an input)."""
    return np.triu(np.ones((t, t), dtype=bool), 1)


@pytest.mark.parametrize("first", [True, False])
def test_multihead_attention_with_boolean_masks_as_inputs_matches_torch(first):
    cr.manual_seed(0)
    layer = nn.MultiheadAttention(8, 2, batch_first=first)
    theirs = torch.nn.MultiheadAttention(8, 2, batch_first=first)
    copy_back(theirs, layer)
    theirs.eval()

    def fn(m, x, pad, causal):
        out, weights = m.mha(x, x, x, key_padding_mask=pad, attn_mask=causal)
        alone, _ = m.mha(x, x, x, key_padding_mask=pad, need_weights=False)
        return out, weights, alone

    model = Fn(fn, mha=layer)
    layout = (lambda n, t: (n, t, 8)) if first else (lambda n, t: (t, n, 8))
    seq_axes = BT if first else {0: "time", 1: "batch"}
    names = ["x", "pad", "causal"]
    axes = {"x": seq_axes, "pad": BT, "causal": {0: "time", 1: "time"}}
    example = [floats(*layout(2, 5)), padding(2, 5, 1), later(2, 5, 1)]
    _, session = session_of(model, example, names, axes)
    for n, t in [(3, 4), (1, 7)]:
        fresh = [floats(*layout(n, t), seed=t), padding(n, t, n + t), later(n, t, 0)]
        got = session.run(None, dict(zip(names, fresh, strict=True)))
        for a, b in zip(got, ours(model, *fresh), strict=True):
            np.testing.assert_allclose(a, b, **TOL)
        out, weights, alone = got
        pad = fresh[1]
        assert weights.shape == (n, t, t)
        assert (weights.transpose(0, 2, 1)[pad] == 0).all()  # padded keys get no weight
        assert (np.triu(weights, 1) == 0).all()  # nor later keys
        x, p, c = (torch.tensor(a) for a in fresh)
        with torch.no_grad():
            want, want_weights = theirs(x, x, x, key_padding_mask=p, attn_mask=c)
            want_alone, _ = theirs(x, x, x, key_padding_mask=p, need_weights=False)
        np.testing.assert_allclose(out, want.numpy(), **TOL)
        np.testing.assert_allclose(weights, want_weights.numpy(), **TOL)
        np.testing.assert_allclose(alone, want_alone.numpy(), **TOL)


def test_transformer_encoder_and_decoder_with_boolean_padding_masks_as_inputs():
    enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, batch_first=True), 2)
    dec = nn.TransformerDecoderLayer(8, 2, 16, batch_first=True)

    def fn(m, x, y, pad):
        memory = m.enc(x, src_key_padding_mask=pad)
        return m.dec(y, memory, tgt_key_padding_mask=pad, memory_key_padding_mask=pad)

    check(Fn(fn, enc=enc, dec=dec), [seq(8), seq(8), padding], [BT, BT, BT])


# -- hardtanh, relu6, threshold --------------------------------------------------------------

CLIPS = {
    "hardtanh": (lambda f, x: f.hardtanh(x), "Clip"),
    "hardtanh_bounds": (lambda f, x: f.hardtanh(x, -0.5, 0.8), "Clip"),
    "relu6": (lambda f, x: f.relu6(x * 4.0), "Clip"),
    "threshold": (lambda f, x: f.threshold(x, 0.3, -2.0), "Where"),
    "threshold_below_zero": (lambda f, x: f.threshold(x, -0.2, 0.0), "Where"),
    "threshold_zero": (lambda f, x: f.threshold(x, 0.0, 0.0), "Where"),
}


@pytest.mark.parametrize("name", list(CLIPS))
def test_clipping_activations_match_torch(name):
    fn, op = CLIPS[name]
    model = Fn(lambda m, x: fn(F, x))
    proto, session = session_of(model, [floats(2, 6)], ["x"], {"x": [0]})
    assert op in {node.op_type for node in proto.graph.node}
    fresh = floats(5, 6, seed=3) * 3.0
    fresh[0, :4] = [-0.5, 0.8, 0.3, -0.2]  # at the bounds
    (got,) = session.run(None, {"x": fresh})
    np.testing.assert_allclose(got, ours(model, fresh)[0], **TOL)
    want = fn(torch.nn.functional, torch.tensor(fresh)).numpy()
    np.testing.assert_allclose(got, want, **TOL)


def test_clipping_layers_export():
    layers = nn.Sequential(nn.Hardtanh(-2.0, 0.5), nn.ReLU6(), nn.Threshold(0.1, 7.0))
    check(layers, [lambda n, t, seed: floats(n, t, seed=seed) * 3.0], [BT])


# -- item assignment -------------------------------------------------------------------------

ROWS = np.array([1, 0])  # constants of the index
NEGATIVE = np.array([[-1], [1]])

# x (N, 3, 4) and v of its shape; t makes a tensor of an index array (chainrule's or torch's)
WRITES = {
    "tensor": lambda x, v, t: x.__setitem__(t(ROWS), 7.0),
    "array_of_a_later_dim": lambda x, v, t: x.__setitem__((slice(None), ROWS), v[:, :1] * 2.0),
    "arrays_broadcast": lambda x, v, t: x.__setitem__((slice(None), NEGATIVE, t(ROWS)), -1.0),
    "arrays_apart": lambda x, v, t: x.__setitem__((t(ROWS), slice(None), [1, 3]), v[:2, :, 0]),
    # an int apart from an array: PyTorch selects the int first, which decides the layout
    # of a written tensor; a number lands on the same elements either way
    "int_and_array_apart": lambda x, v, t: x.__setitem__((0, slice(1, None), ROWS), 5.0),
    "none": lambda x, v, t: x.__setitem__((slice(None), None), v[:, None] + 1.0),
    "none_and_array": lambda x, v, t: x.__setitem__((Ellipsis, None, ROWS), v[..., None, :2]),
    "none_between": lambda x, v, t: x.__setitem__((slice(None), t(ROWS), None, -1), 3.0),
    "last_of_the_free_dim": lambda x, v, t: x.__setitem__((-1, ROWS), v[0, :2]),
}


@pytest.mark.parametrize("name", list(WRITES))
def test_item_assignment_with_index_arrays_and_none_matches_torch(name):
    """x (N, 3, 4) written at an index, the batch N free; torch's setitem agrees."""
    write = WRITES[name]

    def fn(m, x, v):
        y = x * 1.0
        write(y, v, cr.tensor)
        return y

    names, axes = ["x", "v"], {"x": [0], "v": [0]}
    proto, session = session_of(Fn(fn), [floats(2, 3, 4), floats(2, 3, 4, seed=1)], names, axes)
    assert "ScatterND" in {node.op_type for node in proto.graph.node}
    x, v = floats(5, 3, 4, seed=2), floats(5, 3, 4, seed=3)
    (got,) = session.run(None, {"x": x, "v": v})
    np.testing.assert_allclose(got, ours(Fn(fn), x, v)[0], **TOL)
    theirs = torch.tensor(x)
    write(theirs, torch.tensor(v), torch.tensor)
    np.testing.assert_allclose(got, theirs.numpy(), **TOL)


def test_item_assignment_at_an_index_given_as_an_input():
    def fn(m, x, rows, cols):
        y = x * 1.0
        y[rows, :, cols] = -x[:2, :, 0]  # (k, 3) at (rows[k], :, cols[k])
        return y

    def index(n, t, seed):
        return np.random.default_rng(seed).permutation(4)[:2] - 2  # negative ones too

    check(Fn(fn), [lambda n, t, seed: floats(4, 3, 4, seed=seed), index, index], [{}, {}, {}])


def test_item_assignment_at_repeated_constant_positions_is_refused():
    def fn(m, x):
        y = x * 1.0
        y[:, [1, 1]] = cr.tensor([[2.0], [3.0]]).mT
        return y

    with pytest.raises(UnsupportedOperatorError, match=r"IndexPut at repeated positions.*"
                       r"index \[slice\(None, None, None\), array\(2,\)\]"):  # fmt: skip
        export(Fn(fn), cr.tensor(floats(2, 3)), io.BytesIO())


def test_item_assignment_through_a_bool_mask_of_the_inputs_is_where():
    def fn(m, x, v):
        y = x * 1.0
        y[x[..., 0] > 0] = v[0, 0]  # (N, 3) mask over the first two dims, v broadcast to (4,)
        y[y < -0.5] = 2.0
        z = x * 1.0
        z[z > 0.5, ...] = -1.0
        return y, z

    proto = check(Fn(fn), [seq(4), seq(4)], [BT, BT])
    assert "Where" in {node.op_type for node in proto.graph.node}
    x, v = floats(3, 5, 4, seed=7), floats(3, 5, 4, seed=8)
    theirs = [torch.tensor(x), torch.tensor(v)]
    want = [fn(None, *theirs)[k].numpy() for k in range(2)]
    got = ours(Fn(fn), x, v)
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(a, b, **TOL)


@pytest.mark.parametrize(
    "index, value",
    [
        ((slice(None), np.array([True, False, True])), 0.0),  # not the first index
        (np.array([True, False]), cr.tensor([1.0, 2.0, 3.0])[None]),  # one value a position
    ],
    ids=["later", "values"],
)
def test_item_assignment_through_other_bool_masks_is_refused_naming_the_index(index, value):
    def fn(m, x):
        y = x * 1.0
        y[index] = value
        return y

    with pytest.raises(UnsupportedOperatorError, match=r"bool mask.*index \[.*array\("):
        export(Fn(fn), cr.tensor(floats(2, 3)), io.BytesIO())


# -- the projected LSTM ----------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore:LSTM with projections is not supported with oneDNN")
@pytest.mark.parametrize(
    "options",
    [
        dict(batch_first=True),
        dict(num_layers=2, bidirectional=True),
        dict(batch_first=True, bias=False),
    ],
    ids=["one", "stacked_bidirectional", "no_bias"],
)
def test_projected_lstm_over_a_free_length_matches_torch(options):
    cr.manual_seed(0)
    layer = nn.LSTM(4, 5, proj_size=3, **options)
    theirs = torch.nn.LSTM(4, 5, proj_size=3, **options)
    copy_back(theirs, layer)
    first = options.get("batch_first", False)
    layout = (lambda n, t: (n, t, 4)) if first else (lambda n, t: (t, n, 4))
    seq_axes = BT if first else {0: "time", 1: "batch"}
    proto = check(layer, [lambda n, t, seed: floats(*layout(n, t), seed=seed)], [seq_axes])
    assert "Scan" in {node.op_type for node in proto.graph.node}
    buf = io.BytesIO()
    export(layer, cr.tensor(floats(*layout(2, 5))), buf, input_names=["x"],
           dynamic_axes={"x": seq_axes})  # fmt: skip
    session = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])
    fresh = floats(*layout(3, 9), seed=4)
    with torch.no_grad():
        out, (h, c) = theirs(torch.tensor(fresh))
    for got, want in zip(session.run(None, {"x": fresh}), (out, h, c), strict=True):
        np.testing.assert_allclose(got, want.numpy(), **TOL)


def test_projected_lstm_with_initial_states_as_inputs():
    layer = nn.LSTM(4, 5, proj_size=2, batch_first=True)
    model = Fn(lambda m, x, h, c: m.lstm(x, (h, c)), lstm=layer)
    h = lambda n, t, seed: floats(1, n, 2, seed=seed)  # noqa: E731
    c = lambda n, t, seed: floats(1, n, 5, seed=seed)  # noqa: E731
    check(model, [seq(4), h, c], [BT, {1: "batch"}, {1: "batch"}])
