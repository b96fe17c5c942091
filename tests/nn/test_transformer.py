"""Transformer layers, stacks and the whole model against torch.nn with copied weights: the
output and the gradient of the inputs and of every parameter (by name), in eval mode with
dropout on (so off) and in train mode with dropout 0; post- and pre-norm, relu, gelu and
callable activations, batch first or not, unbatched, masks of each kind, no biases."""

import copy

import numpy as np
import pytest
import torch

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import nn
from tests.tolerances import STACK, tol
from tests.twins import copy_into

D, H, FF = 8, 2, 16  # d_model, nhead, dim_feedforward
S, T, N = 5, 4, 3  # source and target lengths, batch
pytestmark = pytest.mark.filterwarnings(
    "ignore:Support for mismatched", "ignore:enable_nested_tensor is True"
)


def made(make_ours, make_theirs, dtype, train):
    """Both models, torch's weights copied into ours, in train or eval mode."""
    torch.manual_seed(0)
    theirs = make_theirs(torch.float64 if dtype == np.float64 else torch.float32)
    ours = make_ours(cr.float64 if dtype == np.float64 else cr.float32)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    copy_into(ours, theirs)
    ours.train(train)
    theirs.train(train)
    return ours, theirs


def compare(a, b, dtype, what):
    assert a.shape == tuple(b.shape), what
    np.testing.assert_allclose(a.numpy(), b.detach().numpy(), err_msg=what, **tol(dtype, STACK))


def run_both(ours, theirs, arrays, call_ours, call_theirs, dtype):
    """Forward through both, backward from one random upstream gradient; compare the
    output, each input's gradient and every parameter's gradient."""
    xs = [cr.tensor(a.astype(dtype), requires_grad=True) for a in arrays]
    ts = [torch.tensor(a.astype(dtype), requires_grad=True) for a in arrays]
    out, expected = call_ours(ours, *xs), call_theirs(theirs, *ts)
    compare(out, expected, dtype, "output")
    g = np.random.default_rng(7).standard_normal(expected.shape).astype(dtype)
    out.backward(cr.tensor(g))
    expected.backward(torch.tensor(g))
    for i, (x, t) in enumerate(zip(xs, ts, strict=True)):
        compare(x.grad, t.grad, dtype, f"input {i}")
    theirs_params = dict(theirs.named_parameters())
    ours_params = dict(ours.named_parameters())
    assert list(ours_params) == list(theirs_params)
    for name, p in ours_params.items():
        compare(p.grad, theirs_params[name].grad, dtype, name)


def seq(length, batch_first, batched=True, seed=0):
    """A (length, N, D) input, (N, length, D) batch first, or (length, D) unbatched."""
    shape = ((N, length, D) if batch_first else (length, N, D)) if batched else (length, D)
    return np.random.default_rng(seed).standard_normal(shape)


def padding(length, seed=1):
    """A bool key padding mask (N, length): True leaves a position out, never a whole row."""
    mask = np.random.default_rng(seed).random((N, length)) < 0.3
    mask[:, 0] = False
    return mask


# -- one encoder layer ---------------------------------------------------------------------

ACTIVATIONS = {
    "relu": (F.relu, torch.nn.functional.relu),
    "gelu_string": ("gelu", "gelu"),
    "gelu_function": (F.gelu, torch.nn.functional.gelu),
    "module": (nn.Tanh(), torch.nn.Tanh()),
    "lambda": (lambda x: F.leaky_relu(x, 0.1), lambda x: torch.nn.functional.leaky_relu(x, 0.1)),
}
CASES = [
    dict(norm_first=False),
    dict(norm_first=True),
    dict(norm_first=False, batch_first=True),
    dict(norm_first=True, batch_first=True, bias=False),
    dict(norm_first=False, bias=False, layer_norm_eps=1e-3),
]


def encoder_layer_pair(dtype, train, activation="relu", **options):
    ours_act, theirs_act = ACTIVATIONS[activation]
    dropout = 0.0 if train else 0.1  # eval mode turns dropout off
    return made(
        lambda dt: nn.TransformerEncoderLayer(
            D, H, FF, dropout, activation=ours_act, dtype=dt, **options
        ),
        lambda dt: torch.nn.TransformerEncoderLayer(
            D, H, FF, dropout, activation=theirs_act, dtype=dt, **options
        ),
        dtype,
        train,
    )


@pytest.mark.parametrize("train", [False, True], ids=["eval", "train"])
@pytest.mark.parametrize("options", CASES, ids=[str(c) for c in CASES])
def test_encoder_layer_matches_torch(options, train):
    ours, theirs = encoder_layer_pair(np.float64, train, **options)
    x = seq(S, options.get("batch_first", False))
    run_both(ours, theirs, [x], lambda m, x: m(x), lambda m, x: m(x), np.float64)


@pytest.mark.parametrize("activation", list(ACTIVATIONS))
def test_encoder_layer_activations_match_torch(activation):
    ours, theirs = encoder_layer_pair(np.float64, True, activation, norm_first=True)
    run_both(ours, theirs, [seq(S, False)], lambda m, x: m(x), lambda m, x: m(x), np.float64)


def test_encoder_layer_float32_and_unbatched():
    ours, theirs = encoder_layer_pair(np.float32, False, "gelu_string")
    run_both(ours, theirs, [seq(S, False)], lambda m, x: m(x), lambda m, x: m(x), np.float32)
    ours, theirs = encoder_layer_pair(np.float64, True, batch_first=True)
    x = seq(S, True, batched=False)
    run_both(ours, theirs, [x], lambda m, x: m(x), lambda m, x: m(x), np.float64)


def _masks(module, kind):
    """(src_mask, src_key_padding_mask, is_causal) in module's kind of tensors."""
    causal = module.nn.Transformer.generate_square_subsequent_mask(S, dtype=module.float64)
    scores = np.random.default_rng(4).standard_normal((S, S))
    pad = module.tensor(padding(S))
    return {
        "causal_float": (causal, None, False),
        "causal_hint": (causal, None, True),
        "causal_bool": (module.tensor(np.triu(np.ones((S, S), dtype=bool), 1)), None, False),
        "float": (module.tensor(scores), None, False),
        "padding": (None, pad, False),
        "causal_and_padding": (causal, pad, False),
        "per_head": (
            module.tensor(np.random.default_rng(5).standard_normal((N * H, S, S))),
            None,
            False,
        ),
    }[kind]


MASKS = [
    "causal_float",
    "causal_hint",
    "causal_bool",
    "float",
    "padding",
    "causal_and_padding",
    "per_head",
]


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("kind", MASKS)
def test_encoder_layer_masks_match_torch(kind, batch_first):
    ours, theirs = encoder_layer_pair(np.float64, False, batch_first=batch_first)
    m_ours, m_theirs = _masks(cr, kind), _masks(torch, kind)

    def call(masks):
        mask, pad, causal = masks
        return lambda m, x: m(x, src_mask=mask, src_key_padding_mask=pad, is_causal=causal)

    run_both(ours, theirs, [seq(S, batch_first)], call(m_ours), call(m_theirs), np.float64)


# -- one decoder layer ---------------------------------------------------------------------


def decoder_layer_pair(dtype, train, activation="relu", **options):
    ours_act, theirs_act = ACTIVATIONS[activation]
    dropout = 0.0 if train else 0.1
    return made(
        lambda dt: nn.TransformerDecoderLayer(
            D, H, FF, dropout, activation=ours_act, dtype=dt, **options
        ),
        lambda dt: torch.nn.TransformerDecoderLayer(
            D, H, FF, dropout, activation=theirs_act, dtype=dt, **options
        ),
        dtype,
        train,
    )


@pytest.mark.parametrize("train", [False, True], ids=["eval", "train"])
@pytest.mark.parametrize("options", CASES, ids=[str(c) for c in CASES])
def test_decoder_layer_matches_torch(options, train):
    ours, theirs = decoder_layer_pair(np.float64, train, **options)
    bf = options.get("batch_first", False)
    arrays = [seq(T, bf), seq(S, bf, seed=2)]
    run_both(ours, theirs, arrays, lambda m, t, s: m(t, s), lambda m, t, s: m(t, s), np.float64)


@pytest.mark.parametrize("activation", ["gelu_string", "lambda", "module"])
def test_decoder_layer_with_masks_and_activations_matches_torch(activation):
    ours, theirs = decoder_layer_pair(np.float64, True, activation, batch_first=True)
    arrays = [seq(T, True), seq(S, True, seed=2)]

    def call(module):
        tgt_mask = module.nn.Transformer.generate_square_subsequent_mask(T, dtype=module.float64)
        blocked = np.random.default_rng(3).random((T, S)) < 0.3
        blocked[:, 0] = False
        memory_mask = module.tensor(blocked)
        tgt_pad, mem_pad = module.tensor(padding(T)), module.tensor(padding(S, seed=5))
        return lambda m, t, s: m(
            t,
            s,
            tgt_mask=tgt_mask,
            memory_mask=memory_mask,
            tgt_key_padding_mask=tgt_pad,
            memory_key_padding_mask=mem_pad if activation != "module" else None,
            tgt_is_causal=activation == "lambda",
        )

    run_both(ours, theirs, arrays, call(cr), call(torch), np.float64)


def test_decoder_layer_unbatched_float32():
    ours, theirs = decoder_layer_pair(np.float32, False, norm_first=True)
    arrays = [seq(T, False, batched=False), seq(S, False, batched=False, seed=2)]
    run_both(ours, theirs, arrays, lambda m, t, s: m(t, s), lambda m, t, s: m(t, s), np.float32)


# -- the stacks and the whole model --------------------------------------------------------


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("is_causal", [None, True, False])
def test_encoder_stack_matches_torch(norm_first, is_causal):
    def make(module, dt):
        layer = module.nn.TransformerEncoderLayer(
            D, H, FF, 0.0, norm_first=norm_first, batch_first=True, dtype=dt
        )
        norm = module.nn.LayerNorm(D, dtype=dt)
        return module.nn.TransformerEncoder(layer, 3, norm, enable_nested_tensor=False)

    ours, theirs = made(lambda dt: make(cr, dt), lambda dt: make(torch, dt), np.float64, True)
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]

    def call(module):
        mask = module.nn.Transformer.generate_square_subsequent_mask(S, dtype=module.float64)
        pad = module.tensor(padding(S))
        return lambda m, x: m(x, mask=mask, src_key_padding_mask=pad, is_causal=is_causal)

    run_both(ours, theirs, [seq(S, True)], call(cr), call(torch), np.float64)


def test_decoder_stack_matches_torch():
    def make(module, dt):
        layer = module.nn.TransformerDecoderLayer(D, H, FF, 0.1, activation="gelu", dtype=dt)
        return module.nn.TransformerDecoder(layer, 2)  # no final norm

    ours, theirs = made(lambda dt: make(cr, dt), lambda dt: make(torch, dt), np.float64, False)
    assert ours.norm is None

    def call(module):
        mask = module.nn.Transformer.generate_square_subsequent_mask(T, dtype=module.float64)
        return lambda m, t, s: m(t, s, tgt_mask=mask)

    arrays = [seq(T, False), seq(S, False, seed=2)]
    run_both(ours, theirs, arrays, call(cr), call(torch), np.float64)


@pytest.mark.parametrize(
    "options",
    [dict(), dict(batch_first=True, norm_first=True), dict(bias=False, activation="gelu")],
    ids=["default", "batch_first_norm_first", "no_bias_gelu"],
)
def test_transformer_matches_torch(options):
    def make(module, dt):
        return module.nn.Transformer(D, H, 2, 2, FF, dropout=0.1, dtype=dt, **options)

    ours, theirs = made(lambda dt: make(cr, dt), lambda dt: make(torch, dt), np.float64, False)
    bf = options.get("batch_first", False)

    def call(module):
        tgt_mask = module.nn.Transformer.generate_square_subsequent_mask(T, dtype=module.float64)
        src_pad = module.tensor(padding(S))
        return lambda m, s, t: m(
            s, t, tgt_mask=tgt_mask, src_key_padding_mask=src_pad, memory_key_padding_mask=src_pad
        )

    arrays = [seq(S, bf), seq(T, bf, seed=2)]
    run_both(ours, theirs, arrays, call(cr), call(torch), np.float64)


def test_transformer_with_custom_encoder_and_decoder_matches_torch():
    """custom_encoder and custom_decoder take the stacks' places (here without final norms),
    and every mask of the whole model reaches its attention."""

    def make(module, dt):
        encoder = module.nn.TransformerEncoder(
            module.nn.TransformerEncoderLayer(D, H, FF, 0.0, dtype=dt), 1
        )
        decoder = module.nn.TransformerDecoder(
            module.nn.TransformerDecoderLayer(D, H, FF, 0.0, norm_first=True, dtype=dt), 2
        )
        return module.nn.Transformer(
            D, H, dim_feedforward=FF, custom_encoder=encoder, custom_decoder=decoder, dtype=dt
        )

    ours, theirs = made(lambda dt: make(cr, dt), lambda dt: make(torch, dt), np.float64, True)
    assert ours.encoder.norm is None and len(ours.decoder.layers) == 2

    def call(module):
        src_mask = module.tensor(np.random.default_rng(8).standard_normal((S, S)))
        blocked = np.random.default_rng(9).random((T, S)) < 0.3
        blocked[:, 0] = False
        memory_mask, tgt_pad = module.tensor(blocked), module.tensor(padding(T, seed=3))
        tgt_mask = module.nn.Transformer.generate_square_subsequent_mask(T, dtype=module.float64)
        return lambda m, s, t: m(
            s,
            t,
            src_mask=src_mask,
            tgt_mask=tgt_mask,
            memory_mask=memory_mask,
            tgt_key_padding_mask=tgt_pad,
            tgt_is_causal=True,
        )

    arrays = [seq(S, False), seq(T, False, seed=2)]
    run_both(ours, theirs, arrays, call(cr), call(torch), np.float64)


def test_transformer_state_dict_keys_and_initialisation():
    ours = nn.Transformer(D, H, 2, 3, FF)
    theirs = torch.nn.Transformer(D, H, 2, 3, FF)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    for (name, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters(), strict=True):
        assert p.shape == tuple(q.shape), name
        if p.ndim > 1:  # xavier uniform over (fan_in + fan_out), as torch's
            bound = np.sqrt(6.0 / (p.shape[0] + p.shape[1]))
            assert np.abs(p.numpy()).max() <= bound and np.abs(p.numpy()).max() > bound / 2
    no_bias = nn.Transformer(D, H, 1, 1, FF, bias=False)
    assert list(no_bias.state_dict()) == list(
        torch.nn.Transformer(D, H, 1, 1, FF, bias=False).state_dict()
    )
    assert not [k for k in no_bias.state_dict() if "bias" in k]


def test_stack_layers_are_independent_deep_copies():
    layer = nn.TransformerEncoderLayer(D, H, FF)
    stack = nn.TransformerEncoder(layer, 2)
    first, second = stack.layers[0], stack.layers[1]
    assert first is not layer and second is not first
    np.testing.assert_array_equal(first.linear1.weight.numpy(), layer.linear1.weight.numpy())
    first.linear1.weight.numpy()[...] = 0.0
    assert second.linear1.weight.numpy().any() and layer.linear1.weight.numpy().any()
    assert stack.num_layers == 2 and len(list(stack.parameters())) == 2 * len(
        list(layer.parameters())
    )
    decoder = nn.TransformerDecoder(nn.TransformerDecoderLayer(D, H, FF), 3)
    assert [n for n, _ in decoder.named_children()] == ["layers"]
    assert len({id(m.self_attn.in_proj_weight) for m in decoder.layers}) == 3


@pytest.mark.parametrize("sz", [1, 4])
def test_generate_square_subsequent_mask_matches_torch(sz):
    ours = nn.Transformer.generate_square_subsequent_mask(sz)
    theirs = torch.nn.Transformer.generate_square_subsequent_mask(sz)
    assert ours.dtype == np.float32
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    model = nn.Transformer(D, H, 1, 1, FF)
    assert model.generate_square_subsequent_mask(sz, dtype=cr.float64).dtype == np.float64


def test_errors():
    with pytest.raises(ValueError, match="TransformerEncoderLayer: activation should be"):
        nn.TransformerEncoderLayer(D, H, activation="swish")
    with pytest.raises(TypeError, match="TransformerDecoderLayer: activation must be 'relu'"):
        nn.TransformerDecoderLayer(D, H, activation=3)
    with pytest.raises(ValueError, match="chainrule computes on the CPU"):
        nn.Transformer(D, H, device="cuda")
    model = nn.Transformer(D, H, 1, 1, FF)
    with pytest.raises(ValueError, match="src and tgt must have the same batch size"):
        model(cr.zeros(S, 2, D), cr.zeros(T, 3, D))
    with pytest.raises(ValueError, match="the last dim of src and tgt must be d_model 8"):
        model(cr.zeros(S, 2, D), cr.zeros(T, 2, D + 1))
    with pytest.raises(TypeError, match="encoder_layer must be a Module; got int"):
        nn.TransformerEncoder(3, 2)


def test_eval_dropout_is_off_and_train_dropout_is_on():
    cr.manual_seed(0)
    layer = nn.TransformerEncoderLayer(D, H, FF, dropout=0.5)
    x = cr.tensor(seq(S, False).astype(np.float32))
    layer.eval()
    a, b = layer(x), layer(x)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    layer.train()
    assert not np.allclose(layer(x).numpy(), a.numpy())


def test_inference_equals_torchs_fast_path_off_the_padding():
    """Under no_grad in eval, torch's stack runs its fast path on nested tensors, which
    writes 0 at padded positions; everywhere else the outputs agree (ours computes the
    padded positions as in training)."""

    def make(module, dt):
        layer = module.nn.TransformerEncoderLayer(D, H, FF, batch_first=True, dtype=dt)
        return module.nn.TransformerEncoder(layer, 2)

    ours, theirs = made(lambda dt: make(cr, dt), lambda dt: make(torch, dt), np.float64, False)
    x = seq(S, True)
    pad = np.arange(S) >= np.array([[S], [3], [4]])  # (N, S): padding at the ends, as it needs
    with cr.no_grad(), torch.no_grad():
        out = ours(cr.tensor(x), src_key_padding_mask=cr.tensor(pad)).numpy()
        expected = theirs(torch.tensor(x), src_key_padding_mask=torch.tensor(pad)).numpy()
        assert (expected[pad] == 0).all()
        np.testing.assert_allclose(out[~pad], expected[~pad], rtol=1e-9, atol=1e-10)
        # one layer alone takes its own fast path, padded positions computed
        layer_out = ours.layers[0](cr.tensor(x), src_key_padding_mask=cr.tensor(pad)).numpy()
        layer_expected = theirs.layers[0](
            torch.tensor(x), src_key_padding_mask=torch.tensor(pad)
        ).numpy()
        np.testing.assert_allclose(layer_out, layer_expected, rtol=1e-9, atol=1e-10)


def test_exported_from_nn():
    for name in [
        "Transformer",
        "TransformerEncoder",
        "TransformerDecoder",
        "TransformerEncoderLayer",
        "TransformerDecoderLayer",
    ]:
        assert name in nn.__all__ and getattr(nn, name).__name__ == name
    assert copy.deepcopy(nn.TransformerEncoderLayer(D, H, FF)).self_attn.num_heads == H
