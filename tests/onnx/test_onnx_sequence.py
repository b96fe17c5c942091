"""Export to ONNX of the sequence models: attention, the recurrent layers and the recipes'
language models. ONNX Runtime's output on fresh inputs of two batch sizes and two sequence
lengths (neither the export's) equals chainrule's (float32, 1e-5 relative); a forward that
reads a tensor's value into Python is refused, naming the operation and the line."""

import io
import warnings

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import chainrule as cr  # noqa: E402
import chainrule.nn.functional as F  # noqa: E402
from chainrule import nn  # noqa: E402
from chainrule.onnx import TracerWarning, export  # noqa: E402
from chainrule.tools.recipes import adder, gpt, names  # noqa: E402
from tests.onnx.test_onnx import Fn  # noqa: E402
from tests.tolerances import OP, tol  # noqa: E402

# forward only, in float32, against ONNX Runtime: whole models stay within one op's tolerance
TOL = tol(np.float32, OP)
SIZES = [(3, 4), (1, 7)]  # (batch, length) of the fresh inputs; the export's is (2, 5)


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
    session = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])
    for s, (n, t) in enumerate(sizes):
        fresh = [make(n, t, seed=10 + 7 * s + k) for k, make in enumerate(makers)]
        got = session.run(None, dict(zip(in_names, fresh, strict=True)))
        want = ours(model, *fresh)
        assert len(got) == len(want)
        for a, b, declared in zip(got, want, proto.graph.output, strict=True):
            assert a.shape == b.shape
            dims = declared.type.tensor_type.shape.dim
            assert [d.dim_value or n for d, n in zip(dims, a.shape, strict=True)] == list(a.shape)
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


def test_attention_with_fewer_key_heads_causal():
    def fn(m, q, k):
        return F.scaled_dot_product_attention(q, k, k, enable_gqa=True, is_causal=True)

    heads = lambda h: lambda n, t, seed: floats(n, h, t, 3, seed=seed)  # noqa: E731
    check(Fn(fn), [heads(4), heads(2)], [{0: "batch", 2: "time"}] * 2)


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
    model = Fn(lambda m, x, y: m.mha(x, y, y), mha=layer)  # the output and the weights
    check(model, [seq(8), seq(8)], [BT, BT])


def test_multihead_attention_with_a_float_key_padding_mask_as_an_input():
    layer = nn.MultiheadAttention(8, 2, batch_first=True)
    model = Fn(
        lambda m, x, pad: m.mha(x, x, x, key_padding_mask=pad, need_weights=False)[0], mha=layer
    )

    def pad(n, t, seed):  # -inf at about a third of the keys, never at the first
        out = np.where(np.random.default_rng(seed).random((n, t)) > 0.7, -np.inf, 0.0)
        out[:, 0] = 0.0
        return out.astype(np.float32)

    check(model, [seq(8), pad], [BT, BT])


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


# -- the recipes' models ---------------------------------------------------------------------


@pytest.mark.parametrize("kind", list(names.MODELS))
def test_names_models(kind):
    model = names.build(kind, 12, **names.MODELS[kind][0])
    check(model, [lambda n, t, seed: tokens(n, t, seed=seed, vocab=12)], [BT])


def test_gpt_model():
    config = gpt.GPTConfig(vocab_size=11, block_size=16, n_layer=2, n_head=2, n_embd=16)
    check(gpt.GPT(config), [lambda n, t, seed: tokens(n, t, seed=seed, vocab=11)], [BT])


def test_adder_model():
    model, _, _ = adder.setup({"seed": 0})
    assert model.config.block_size == 6  # the export's length 2 (6 in its second forward)
    check(model, [tokens], [BT], sizes=[(3, 6), (1, 4)], example=(3, 2))


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


# -- values read into Python -----------------------------------------------------------------


def _line(fn):
    return f"test_onnx_sequence.py:{fn.__code__.co_firstlineno}"


READS = {
    "item()": lambda m, x: x * x.sum().item(),
    "bool()": lambda m, x: x if x.sum() > 0 else -x,
    "int()": lambda m, x: x * int(x[0, 0]),
    "float()": lambda m, x: x * float(x[0, 0]),
    "tolist()": lambda m, x: x * x[0, 0].tolist(),
    "numpy()": lambda m, x: x * cr.tensor(x.numpy()),
    "__index__()": lambda m, x: x[:, : (x[0, 0] > 0).to(cr.int64) + 1],
    "__array__()": lambda m, x: x * float(np.asarray(x).sum()),
}


@pytest.mark.parametrize("op", list(READS))
def test_a_value_read_into_python_is_refused_naming_the_line(op):
    fn = READS[op]
    x = cr.tensor(floats(2, 3))
    message = f"{op[:-2].strip('_')}.*{_line(fn)}"
    with pytest.raises(RuntimeError, match=message):
        export(Fn(fn), x, io.BytesIO())


def test_constants_allowed_warn_and_export():
    fn = READS["item()"]
    x = cr.tensor(floats(2, 3))
    with pytest.warns(TracerWarning, match=f"item.*{_line(fn)}") as caught:
        buf = io.BytesIO()
        export(Fn(fn), x, buf, constants="allow")
    assert len([w for w in caught if issubclass(w.category, TracerWarning)]) == 1
    session = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])
    got = session.run(None, {"input_0": x.numpy()})[0]
    np.testing.assert_allclose(got, ours(Fn(fn), x.numpy())[0], **TOL)
    with pytest.raises(ValueError, match="constants must be 'refuse' or 'allow'; got 'yes'"):
        export(Fn(fn), x, io.BytesIO(), constants="yes")


def test_a_forward_without_reads_exports_without_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        export(nn.LSTM(3, 2), cr.tensor(floats(4, 2, 3)), io.BytesIO())


def test_in_place_on_an_input_is_in_the_graph():
    def fn(m, x):
        x.mul_(2.0)
        x += 1.0
        x[:, -1] = 0.5  # the last step of a free length, by ScatterND
        x[1:, ::2] = x[:1, ::2] * 3.0
        y = x * 0.0
        y.copy_(x.tanh())
        z = x * 1.0
        z.fill_(2.0)
        w = x * 1.0
        w.zero_()
        return x, y, z, w

    check(Fn(fn), [seq(3)], [BT])


@pytest.mark.parametrize(
    "fn",
    [
        lambda m, x: (y := x * 1.0, y[0].fill_(2.0), y + 0.0)[-1],  # into a view of y
        lambda m, x: (y := x * 1.0, v := y[:, 1], y.add_(1.0), v * 1.0)[-1],  # y, under a view
        lambda m, x: (y := x * 1.0, y.t().mul_(2.0), y + 0.0)[-1],
    ],
    ids=["view", "under_a_view", "transposed"],
)
def test_in_place_through_shared_memory_is_refused(fn):
    with pytest.raises(RuntimeError, match="shares memory with another value used after it"):
        export(Fn(fn), cr.tensor(floats(2, 3)), io.BytesIO())


def test_chainrule_onnx_is_loaded_on_first_use():
    import subprocess
    import sys

    code = (
        "import sys, chainrule as cr; assert 'chainrule.onnx' not in sys.modules; "
        "assert 'onnx' not in sys.modules; assert cr.onnx.export is not None"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_an_output_made_outside_the_ops_that_changes_is_refused():
    model = Fn(lambda m, x: (x * 2.0, cr.zeros(x.shape[0]) + 1.0))  # the second: a constant
    free = {"input_0": [0]}
    with pytest.raises(RuntimeError, match="output 1 is not computed from the inputs"):
        export(model, cr.tensor(floats(2, 3)), io.BytesIO(), dynamic_axes=free)
    export(model, cr.tensor(floats(2, 3)), io.BytesIO())  # right where the batch is fixed


@pytest.mark.parametrize("opset", [13, 18])
def test_other_opsets(opset):
    enc = nn.TransformerEncoderLayer(8, 2, 16, batch_first=True)
    lstm = nn.LSTM(8, 4, batch_first=True, bidirectional=True)

    def fn(m, x):
        y = m.enc(x, is_causal=False)
        values, _ = y.topk(2, dim=-1)
        return m.lstm(y)[0], values, y.argmax(-1)

    model = Fn(fn, enc=enc, lstm=lstm)
    x = cr.tensor(floats(2, 5, 8))
    buf = io.BytesIO()
    proto = export(model, x, buf, opset_version=opset, input_names=["x"], dynamic_axes={"x": BT})
    assert proto.opset_import[0].version == opset
    session = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])
    fresh = floats(3, 4, 8, seed=5)
    for got, want in zip(session.run(None, {"x": fresh}), ours(model, fresh), strict=True):
        np.testing.assert_allclose(got, want, **TOL)


def test_comparisons_and_casts_are_in_the_graph():
    def fn(m, x, tokens):
        keep = (x > 0.5) | (x <= -1.0)
        pad = (tokens == 0).to(cr.float32) * 2.0 + (tokens != 1) + (~(tokens >= 3)).long()
        return cr.where(keep, x, 0.0), x.masked_fill(x < 0, -1.0), pad, (x * 3).to(cr.int64)

    check(Fn(fn), [seq(3), lambda n, t, seed: tokens(n, t, seed=seed, vocab=4)], [BT, BT])
