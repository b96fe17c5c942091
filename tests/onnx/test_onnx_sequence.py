"""Export to ONNX of the sequence models: attention, the recurrent layers and the recipes'
language models. ONNX Runtime's output on fresh inputs of two batch sizes and two sequence
lengths (neither the export's) equals chainrule's (float32, 1e-5 relative); a forward that
reads a tensor's value into Python is refused, naming the operation and the line."""

import io

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import chainrule as cr  # noqa: E402
import chainrule.nn.functional as F  # noqa: E402
from chainrule import nn  # noqa: E402
from chainrule.onnx import export  # noqa: E402

TOL = dict(rtol=1e-5, atol=1e-5)
SIZES = [(3, 4), (1, 7)]  # (batch, length) of the fresh inputs; the export's is (2, 5)


class Fn(nn.Module):
    """A forward written inline, with the layers it uses as attributes."""

    def __init__(self, fn, **layers):
        super().__init__()
        self.fn = fn
        for name, layer in layers.items():
            setattr(self, name, layer)

    def forward(self, *xs):
        return self.fn(self, *xs)


def floats(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def tokens(*shape, seed=0, vocab=10):
    return np.random.default_rng(seed).integers(0, vocab, shape).astype(np.int64)


def ours(model, *arrays):
    model.eval()
    with cr.no_grad():
        out = model(*[cr.tensor(a) for a in arrays])
    flat = []

    def walk(x):
        if isinstance(x, (tuple, list)):
            for y in x:
                walk(y)
        else:
            flat.append(x.numpy())

    walk(out)
    return flat


def check(model, makers, axes, batch_dim=0, time_dim=1, sizes=SIZES, example=(2, 5)):
    """Export on example inputs with the batch and time dims free, then compare with ONNX
    Runtime on fresh inputs of each size. makers: one function (batch, length, seed) ->
    array per input; axes: their free axes by name, per input."""
    cr.manual_seed(0)
    inputs = [cr.tensor(make(*example, seed=1 + k)) for k, make in enumerate(makers)]
    in_names = [f"x{k}" for k in range(len(makers))]
    free = {n: a for n, a in zip(in_names, axes, strict=True) if a}
    buf = io.BytesIO()
    proto = export(model, tuple(inputs), buf, input_names=in_names, dynamic_axes=free)
    onnx.checker.check_model(proto, full_check=True)
    # ORT's extended fusions break the GPT graph (a Slice they make gets a 0-d start);
    # the basic optimizations run it as written
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    session = ort.InferenceSession(buf.getvalue(), options, providers=["CPUExecutionProvider"])
    for s, (n, t) in enumerate(sizes):
        fresh = [make(n, t, seed=10 + 7 * s + k) for k, make in enumerate(makers)]
        got = session.run(None, dict(zip(in_names, fresh, strict=True)))
        want = ours(model, *fresh)
        assert len(got) == len(want)
        for a, b in zip(got, want, strict=True):
            assert a.shape == b.shape
            np.testing.assert_allclose(a, b, **TOL)
    return proto


BT = {0: "batch", 1: "time"}
TB = {0: "time", 1: "batch"}


def seq(features):
    return lambda n, t, seed: floats(n, t, features, seed=seed)


# -- attention -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, fn",
    [
        ("plain", lambda m, q, k, v: F.scaled_dot_product_attention(q, k, v)),
        ("causal", lambda m, q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True)),
        ("scale", lambda m, q, k, v: F.scaled_dot_product_attention(q, k, v, scale=0.3)),
        (
            "float_mask",
            lambda m, q, k, v: F.scaled_dot_product_attention(
                q, k, v, attn_mask=q[..., :1] * k[..., 0, None, :1].mT
            ),
        ),
    ],
)
def test_scaled_dot_product_attention(name, fn):
    model = Fn(fn)
    make = lambda n, t, seed: floats(n, 2, t, 4, seed=seed)  # noqa: E731
    axes = [{0: "batch", 2: "time"}] * 3
    check(model, [make] * 3, axes)


def test_attention_with_a_boolean_mask_as_an_input_and_a_row_all_masked():
    model = Fn(lambda m, q, k, mask: F.scaled_dot_product_attention(q, k, k, attn_mask=mask))

    def mask(n, t, seed):
        keep = np.random.default_rng(seed).random((n, 1, t, t)) > 0.4
        keep[:, :, 0] = False  # the first query sees no key: its output is 0, not NaN
        return keep

    make = lambda n, t, seed: floats(n, 2, t, 4, seed=seed)  # noqa: E731
    axes = [{0: "batch", 2: "time"}] * 2 + [{0: "batch", 2: "time", 3: "time"}]
    check(model, [make, make, mask], axes)


def test_multihead_attention_across_two_sequences():
    layer = nn.MultiheadAttention(8, 2, batch_first=True)
    model = Fn(lambda m, x, y: m.mha(x, y, y)[0], mha=layer)
    check(model, [seq(8), seq(8)], [BT, BT])


@pytest.mark.parametrize("first", [True, False])
def test_transformer_encoder_and_decoder_layers(first):
    enc = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.1, batch_first=first)
    dec = nn.TransformerDecoderLayer(8, 2, 16, dropout=0.1, batch_first=first, norm_first=True)
    model = Fn(lambda m, x, y: m.dec(y, m.enc(x)), enc=enc, dec=dec)
    if first:
        check(model, [seq(8), seq(8)], [BT, BT])
    else:
        make = lambda n, t, seed: floats(t, n, 8, seed=seed)  # noqa: E731
        check(model, [make, make], [TB, TB])


# -- recurrent layers ------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize(
    "options",
    [
        dict(batch_first=True),
        dict(num_layers=2, bidirectional=True, batch_first=True),
        dict(num_layers=2, bias=False),
    ],
    ids=["one", "stacked_bidirectional", "time_first_no_bias"],
)
def test_recurrent_layers(kind, options):
    layer = getattr(nn, kind)(6, 5, **options)
    first = options.get("batch_first", False)
    if first:
        check(layer, [seq(6)], [BT])
    else:
        check(layer, [lambda n, t, seed: floats(t, n, 6, seed=seed)], [TB])


def test_rnn_relu_and_gru_lstm_with_initial_states_as_inputs():
    rnn = nn.RNN(4, 3, nonlinearity="relu", batch_first=True)
    gru = nn.GRU(4, 3, num_layers=2, batch_first=True)
    lstm = nn.LSTM(4, 3, bidirectional=True, batch_first=True)

    def fn(m, x, h, hh, c):
        a, _ = m.rnn(x)
        b, hg = m.gru(x, hh)
        o, (hl, cl) = m.lstm(x, (h, c))
        return a + b, o, hg, hl, cl

    model = Fn(fn, rnn=rnn, gru=gru, lstm=lstm)
    state = lambda n, t, seed: floats(2, n, 3, seed=seed)  # noqa: E731
    check(model, [seq(4), state, state, state], [BT, {1: "batch"}, {1: "batch"}, {1: "batch"}])


# -- sort, topk, argmax ----------------------------------------------------------------------


def test_sort_topk_argmax_are_onnx_ops():
    def fn(m, x):
        values, indices = x.sort(dim=-1, descending=True)
        top, where = x.topk(2, dim=1, largest=False)
        best, at = x.max(dim=-1)
        return values, indices, top, where, x.argmax(-1), x.argsort(-1), best, at

    proto = check(Fn(fn), [seq(3)], [BT])
    ops = {node.op_type for node in proto.graph.node}
    assert {"TopK", "ArgMax"} <= ops
