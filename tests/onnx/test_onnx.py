"""Export to ONNX: for every supported layer and for the recipes' models, ONNX Runtime's
output on fresh inputs equals chainrule's (float32, 1e-5 relative), at another batch size
where the batch axis is free; what cannot be exported is refused, naming why."""

import io

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import chainrule as cr  # noqa: E402
import chainrule.nn.functional as F  # noqa: E402
from chainrule import nn  # noqa: E402
from chainrule.onnx import UnsupportedOperatorError, export  # noqa: E402
from chainrule.tools.recipes import (  # noqa: E402
    breast_cancer,
    digits_cnn,
    digits_mlp,
    mnist,
    moons,
    regression,
)
from tests.tolerances import OP, tol  # noqa: E402

# forward only, in float32, against ONNX Runtime: whole models stay within one op's tolerance
TOL = tol(np.float32, OP)


class Fn(nn.Module):
    """A forward written inline, with the layers it uses as attributes."""

    def __init__(self, fn, **layers):
        super().__init__()
        self.fn = fn
        for name, layer in layers.items():
            setattr(self, name, layer)

    def forward(self, *xs):
        return self.fn(self, *xs)


def floats(*shape, seed=0, positive=False):
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return np.abs(x) + 0.5 if positive else x


def to_onnx(model, args, **kwargs):
    buf = io.BytesIO()
    proto = export(model, args, buf, **kwargs)
    return proto, ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])


def ours(model, *arrays):
    model.eval()
    with cr.no_grad():
        out = model(*[cr.tensor(a) for a in arrays])
    return [t.numpy() for t in (out if isinstance(out, tuple) else (out,))]


def check(model, shape, make=floats, batch=(2, 5)):
    """Export at one batch size with dim 0 free; compare at another."""
    cr.manual_seed(0)
    free = {"x": {0: "batch"}, "y": {0: "batch"}}
    example = cr.tensor(make(batch[0], *shape, seed=1))
    _, session = to_onnx(
        model, (example,), input_names=["x"], output_names=["y"], dynamic_axes=free
    )
    fresh = make(batch[1], *shape, seed=2)
    (got,) = session.run(None, {"x": fresh})
    (want,) = ours(model, fresh)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, **TOL)


def batch_norm(layer):
    rng = np.random.default_rng(3)
    c = layer.running_mean.shape[0]
    layer.running_mean.data[...] = rng.standard_normal(c).astype(np.float32)
    layer.running_var.data[...] = rng.uniform(0.5, 2.0, c).astype(np.float32)
    layer.weight.data[...] = rng.standard_normal(c).astype(np.float32)
    layer.bias.data[...] = rng.standard_normal(c).astype(np.float32)
    return layer


def indexes(*shape, seed=0):
    return np.random.default_rng(seed).integers(0, 10, shape).astype(np.int64)


def catalog():
    """Every layer and op with the shape of one example (without the batch dim)."""
    cr.manual_seed(0)
    w = nn.Parameter(cr.randn(6, 3))
    mask = cr.tensor(np.arange(6) % 2 == 0)
    lo = nn.Parameter(cr.tensor(np.linspace(-1, 0, 6, dtype=np.float32)))
    return {
        "linear": (nn.Linear(6, 3), (6,)),
        "linear_3d": (nn.Linear(6, 3), (4, 6)),
        "linear_no_bias": (nn.Linear(6, 3, bias=False), (6,)),
        "relu": (nn.ReLU(), (6,)),
        "tanh": (nn.Tanh(), (6,)),
        "sigmoid": (nn.Sigmoid(), (6,)),
        "gelu": (nn.GELU(), (6,)),
        "gelu_tanh": (nn.GELU(approximate="tanh"), (6,)),
        "leaky_relu": (nn.LeakyReLU(0.1), (6,)),
        "log1p_expm1": (Fn(lambda m, x: x.abs().log1p() + (x * 0.5).expm1()), (6,)),
        "softmax": (nn.Softmax(dim=1), (6,)),
        "log_softmax": (nn.LogSoftmax(dim=-1), (6,)),
        "arithmetic": (Fn(lambda m, x: (x + 1.5) * x - x / 3 - 2.0 / (x * x + 1) + (-x)), (6,)),
        "pow_exp": (Fn(lambda m, x: x**2 + 2.0**x + x.exp() * 0.1), (6,)),
        "log_sqrt": (Fn(lambda m, x: (x.abs() + 1).log() + (x * x + 1).sqrt()), (6,)),
        "matmul": (Fn(lambda m, x: x @ m.w, w=w), (6,)),
        "flatten": (nn.Flatten(), (2, 3, 4)),
        "reshape": (Fn(lambda m, x: x.reshape(x.shape[0] * 2, 3).reshape(-1, 3, 2)), (6,)),
        "permute": (Fn(lambda m, x: x.permute(0, 2, 1) + x.transpose(1, 2)), (3, 4)),
        "sum_mean": (Fn(lambda m, x: x.sum(1) + x.mean(-2, keepdim=True).sum(1)), (3, 4)),
        "sum_all": (Fn(lambda m, x: x.sum(dim=(1, 2)) + x.mean((1, 2))), (3, 4)),
        "amax": (Fn(lambda m, x: x.amax(1) - x.amin(-1).sum(-1, keepdim=True)), (3, 4)),
        "logsumexp": (Fn(lambda m, x: x.logsumexp(1)), (6,)),
        "clamp": (Fn(lambda m, x: x.clamp(-0.5, 0.7) + x.clamp(min=0.1)), (6,)),
        "clamp_tensors": (
            Fn(lambda m, x: x.clamp(min=m.lo, max=x.amax(1, keepdim=True) * 0.5), lo=lo),
            (6,),
        ),
        "where": (Fn(lambda m, x: cr.where(mask, x, x * 3.0)), (6,)),
        "maximum": (Fn(lambda m, x: cr.maximum(x, x * 0.5) + cr.minimum(x, 0.2)), (6,)),
        "cat": (Fn(lambda m, x: cr.cat([x, x * 2, x[:, :2]], dim=1)), (6,)),
        "index": (
            Fn(
                lambda m, x: x[:, 1:5:2, None] + x[:, -1][:, None, None] + x[..., ::-1][:, :2, None]
            ),
            (6,),
        ),
        "pad": (Fn(lambda m, x: F.pad(x, (1, 2), value=0.5)), (6,)),
        "dropout": (nn.Dropout(0.5), (6,)),
        "layer_norm": (nn.LayerNorm(6), (6,)),
        "layer_norm_2d": (nn.LayerNorm((3, 4)), (3, 4)),
        "batch_norm_1d": (batch_norm(nn.BatchNorm1d(6)), (6,)),
        "batch_norm_2d": (batch_norm(nn.BatchNorm2d(3)), (3, 5, 5)),
        "conv2d": (nn.Conv2d(3, 4, 3), (3, 7, 7)),
        "conv2d_geometry": (
            nn.Conv2d(4, 6, 3, stride=2, padding=2, dilation=2, groups=2),
            (4, 9, 8),
        ),
        "conv2d_no_bias": (nn.Conv2d(3, 2, (1, 3), padding=(0, 1), bias=False), (3, 5, 6)),
        "max_pool2d": (nn.MaxPool2d(2), (3, 6, 6)),
        "max_pool2d_geometry": (nn.MaxPool2d(3, stride=2, padding=1, dilation=1), (2, 7, 7)),
        "max_pool2d_ceil": (nn.MaxPool2d(2, ceil_mode=True), (2, 5, 5)),
        "avg_pool2d": (nn.AvgPool2d(2), (3, 6, 6)),
        "avg_pool2d_padding": (
            nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False),
            (2, 7, 7),
        ),
        "adaptive_avg_pool2d": (nn.AdaptiveAvgPool2d((2, 3)), (3, 6, 7)),
        "sin_cos_sign": (Fn(lambda m, x: x.sin() * x.cos() + x.sign()), (6,)),
        "einsum": (Fn(lambda m, x: cr.einsum("bi,ij->bj", x, m.w), w=w), (6,)),
        "expand": (Fn(lambda m, x: x[:, :1].expand(x.shape[0], 4) + x.sum(1, keepdim=True)), (6,)),
        "cast": (Fn(lambda m, x: (x.to(cr.float64) * 3).to(cr.float32)), (6,)),
        "conv1d": (nn.Conv1d(3, 4, 3, padding=1), (3, 9)),
        "conv3d": (nn.Conv3d(2, 4, (2, 3, 2), stride=(1, 2, 1), padding=1, groups=2), (2, 4, 5, 4)),
        "conv_transpose1d": (nn.ConvTranspose1d(4, 6, 3, stride=2, padding=1, groups=2), (4, 5)),
        "conv_transpose2d": (
            nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1, output_padding=1, dilation=2),
            (3, 4, 5),
        ),
        "conv_transpose3d": (nn.ConvTranspose3d(2, 2, 2, stride=2, bias=False), (2, 2, 3, 2)),
        **{
            f"conv2d_{mode}": (nn.Conv2d(2, 3, 3, padding=1, padding_mode=mode), (2, 5, 5))
            for mode in ("reflect", "replicate", "circular")
        },
        "var_std": (Fn(lambda m, x: x.var(1) + x.std(dim=(1, 2), correction=0)[:, None]), (3, 4)),
        "var_all": (Fn(lambda m, x: x - x.var() + x.std(0, keepdim=True)), (6,)),
        "cumsum": (Fn(lambda m, x: x.cumsum(1) + x.cumsum(0)), (6,)),
        "breast_cancer_recipe": (breast_cancer.model(), (30,)),
        "regression_recipe": (regression.model(), (10,)),
        "moons_recipe": (moons.model(), (2,)),
        "mlp_recipe": (digits_mlp.model(), (64,)),
        "cnn_recipe": (digits_cnn.model(), (1, 8, 8)),
        "mnist_recipe": (mnist.model(), (784,)),
    }


LAYERS = list(catalog())


@pytest.mark.parametrize("name", LAYERS)
def test_onnx_runtime_matches_chainrule_at_another_batch_size(name):
    model, shape = catalog()[name]
    check(model, shape)


def test_embedding_takes_integer_indexes():
    model = nn.Sequential(nn.Embedding(10, 4), nn.Flatten())
    check(model, (3,), make=indexes)


def test_embedding_with_a_padding_index():
    model = nn.Embedding(10, 4, padding_idx=0)
    check(model, (3,), make=indexes)


def test_embedding_scaling_gradients_by_frequency():
    model = nn.Embedding(10, 4, scale_grad_by_freq=True)
    check(model, (3,), make=indexes)


def test_gather_takes_its_index_as_an_input():
    model = Fn(lambda m, x, i: x.gather(1, i) * 2.0)
    x, i = cr.tensor(floats(2, 6)), cr.tensor(indexes(2, 3) % 6)
    free = {"x": [0], "i": [0], "output_0": [0]}
    _, session = to_onnx(model, (x, i), input_names=["x", "i"], dynamic_axes=free)
    x2, i2 = floats(5, 6, seed=2), indexes(5, 3, seed=3) % 6
    got = session.run(None, {"x": x2, "i": i2})[0]
    np.testing.assert_allclose(got, ours(model, x2, i2)[0], **TOL)


def test_a_boolean_input_as_the_condition_of_where():
    model = Fn(lambda m, c, x: cr.where(c, x, -x))
    c, x = cr.tensor(floats(2, 3) > 0), cr.tensor(floats(2, 3, seed=1))
    _, session = to_onnx(model, (c, x), input_names=["c", "x"])
    c2, x2 = floats(2, 3, seed=2) > 0, floats(2, 3, seed=3)
    got = session.run(None, {"c": c2, "x": x2})[0]
    np.testing.assert_allclose(got, ours(model, c2, x2)[0], **TOL)


def test_names_initializers_and_a_file_path(tmp_path):
    model = digits_cnn.model()
    model.train()
    path = tmp_path / "model.onnx"
    export(model, cr.tensor(floats(2, 1, 8, 8)), path)
    assert model.training and all(m.training for m in model.modules())  # modes put back
    proto = onnx.load(str(path))
    onnx.checker.check_model(proto, full_check=True)
    graph = proto.graph
    assert [i.name for i in graph.input] == ["input_0"]
    assert [o.name for o in graph.output] == ["output_0"]
    keys = set(model.state_dict())
    assert keys <= {init.name for init in graph.initializer}
    weight = next(i for i in graph.initializer if i.name == "0.weight")
    np.testing.assert_array_equal(onnx.numpy_helper.to_array(weight), model[0].weight.numpy())
    dims = [d.dim_value for d in graph.input[0].type.tensor_type.shape.dim]
    assert dims == [2, 1, 8, 8]  # no dynamic_axes: every dim fixed
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    x = floats(2, 1, 8, 8, seed=4)
    np.testing.assert_allclose(session.run(None, {"input_0": x})[0], ours(model, x)[0], **TOL)


def test_several_inputs_and_outputs_with_dynamic_axes_as_a_list():
    model = Fn(lambda m, a, b: (m.lin(a) * b, (a @ b.mT).softmax(-1)), lin=nn.Linear(3, 3))
    a, b = cr.tensor(floats(2, 3)), cr.tensor(floats(2, 3, seed=1))
    free = {"a": [0], "b": [0], "p": [0], "q": [0, 1]}
    proto, session = to_onnx(
        model, (a, b), input_names=["a", "b"], output_names=["p", "q"], dynamic_axes=free
    )
    dim = proto.graph.input[0].type.tensor_type.shape.dim[0]
    assert dim.dim_param == "a_dynamic_axes_1"
    x, y = floats(4, 3, seed=5), floats(4, 3, seed=6)
    for got, want in zip(session.run(None, {"a": x, "b": y}), ours(model, x, y), strict=True):
        np.testing.assert_allclose(got, want, **TOL)


@pytest.mark.parametrize("opset", [13, 18])
def test_other_opsets(opset):
    model = Fn(
        lambda m, x: m.norm(x).amax(-1) + x.mean(1).sum(-1, keepdim=True) + x.var((0, 2)),
        norm=nn.LayerNorm(4),
    )
    proto, session = to_onnx(model, (cr.tensor(floats(2, 3, 4)),), opset_version=opset)
    assert proto.opset_import[0].version == opset
    x = floats(2, 3, 4, seed=3)
    np.testing.assert_allclose(session.run(None, {"input_0": x})[0], ours(model, x)[0], **TOL)


def test_an_op_with_no_mapping_is_named():
    target = cr.tensor([0, 2])
    model = Fn(lambda m, x: F.cross_entropy(x, target))
    with pytest.raises(
        UnsupportedOperatorError,
        match=r"onnx.export: op CrossEntropy has no ONNX mapping; got it applied to input "
        r"shapes \(2, 3\), \(2,\)",
    ):
        export(model, cr.tensor(floats(2, 3)), io.BytesIO())


def test_an_index_with_no_mapping_is_named():
    keep = cr.tensor(np.array([True, False, True]))
    model = Fn(lambda m, x: x[:, keep])
    with pytest.raises(UnsupportedOperatorError, match="op GetItem with this index"):
        export(model, cr.tensor(floats(2, 3)), io.BytesIO())


def test_values_that_bypass_the_ops_are_refused():
    # through NumPy, allowed (with a warning) and then caught by the second forward
    model = Fn(lambda m, x: cr.where(cr.tensor(x.numpy() > 0.5), x, 0.0))
    with (
        pytest.warns(UserWarning, match="numpy"),
        pytest.raises(RuntimeError, match="argument 0 of Where changes with the inputs"),
    ):
        export(model, cr.tensor(floats(2, 3)), io.BytesIO(), constants="allow")


def test_a_nan_constant_is_the_same_constant_in_both_forwards():
    """NaN != NaN, yet a NaN number or array is the same constant in the second forward."""
    nan = cr.tensor([float("nan"), 1.0, 2.0])
    check(Fn(lambda m, x: x * float("nan") + x.clamp(max=float("nan")) + nan), (3,))


def test_constants_the_size_of_a_dynamic_axis_are_refused():
    model = Fn(lambda m, x: x + cr.zeros(x.shape[0], 1))
    free = {"input_0": [0]}
    with pytest.raises(RuntimeError, match="argument 1 of Add changes with the inputs"):
        export(model, cr.tensor(floats(2, 3)), io.BytesIO(), dynamic_axes=free)
    export(model, cr.tensor(floats(2, 3)), io.BytesIO())  # fine where the batch is fixed


def test_a_reshape_that_cannot_follow_a_dynamic_axis_is_refused():
    # two dims that change with no free axis to read them from: one -1 cannot give both
    model = Fn(lambda m, x: x.reshape(x.shape[0] * 2, x.shape[1] * 2))
    free = {"input_0": {0: "batch", 1: "time"}}
    with pytest.raises(RuntimeError, match=r"Reshape to \(4, 10\) cannot follow the dynamic axes"):
        export(model, cr.tensor(floats(2, 5, 4)), io.BytesIO(), dynamic_axes=free)


def test_a_forward_that_fails_at_another_size_is_refused():
    model = Fn(lambda m, x: x.reshape(4, 3))
    free = {"input_0": [0]}
    with pytest.raises(RuntimeError, match="the forward fails for inputs of other values"):
        export(model, cr.tensor(floats(2, 6)), io.BytesIO(), dynamic_axes=free)


def test_control_flow_on_values_is_refused():
    model = Fn(lambda m, x: x.exp() if x[0, 0].item() > 0 else x)
    x = cr.tensor(np.array([[1.0, -1.0, -2.0]], dtype=np.float32))
    with (
        pytest.warns(UserWarning, match="item"),
        pytest.raises(RuntimeError, match="applies other ops for other inputs"),
    ):
        export(model, x, io.BytesIO(), constants="allow")


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(opset_version=12), "opset_version must be between 13 and"),
        (dict(dynamic_axes={"x": {0: "batch"}}), "dynamic_axes names 'x', which is no input"),
        (dict(input_names=["a", "b"]), "1 inputs need 1 input_names; got 2"),
    ],
)
def test_bad_arguments_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        export(nn.ReLU(), cr.tensor(floats(2, 3)), io.BytesIO(), **kwargs)


def test_args_must_be_tensors():
    with pytest.raises(TypeError, match="onnx.export: args must be Tensors; got ndarray"):
        export(nn.ReLU(), floats(2, 3), io.BytesIO())


def test_the_command_line_exports_a_trained_run(tmp_path, capsys):
    from chainrule.tools import cli

    run = tmp_path / "run"
    args = ["--epochs", "1", "--seed", "0", "--out", str(run), "--quiet"]
    assert cli.main(["train", "digits-cnn", *args]) == 0
    assert cli.main(["export", str(run)]) == 0
    assert f"written to {run / 'model.onnx'}" in capsys.readouterr().out
    model = digits_cnn.model()
    model.load_state_dict(cr.load(str(run / "model.safetensors")))
    x = digits_cnn.data(0, {})[2][:7].numpy()
    session = ort.InferenceSession(str(run / "model.onnx"), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(session.run(None, {"input": x})[0], ours(model, x)[0], **TOL)


@pytest.mark.slow  # heavy; `make test-all` runs it
def test_the_command_line_names_what_it_cannot_export(tmp_path, capsys):
    from chainrule.tools import cli

    run = tmp_path / "run"
    args = ["--epochs", "1", "--out", str(run), "--quiet"]
    assert cli.main(["train", "moons-scalar", *args]) == 0
    assert cli.main(["export", str(run), "--out", str(tmp_path / "m.onnx")]) == 2
    assert "scalar engine, which has no ONNX export" in capsys.readouterr().err
    assert cli.main(["export", str(tmp_path / "nothing")]) == 2
    assert "metrics.json" in capsys.readouterr().err


def test_a_plain_function_and_tied_weights():
    def fn(x):
        return (x * 2.0).tanh()

    proto, session = to_onnx(fn, (cr.tensor(floats(2, 3)),))
    x = floats(2, 3, seed=1)
    np.testing.assert_allclose(session.run(None, {"input_0": x})[0], np.tanh(x * 2), **TOL)
    first = nn.Linear(4, 4)
    model = nn.Sequential(first, nn.ReLU(), nn.Linear(4, 4))
    model[2].weight = first.weight  # one array under two names: exported once, first name
    proto, session = to_onnx(model, (cr.tensor(floats(2, 4)),))
    names = [init.name for init in proto.graph.initializer]
    assert sorted(names) == ["0.bias", "0.weight", "2.bias"]
    x = floats(2, 4, seed=2)
    np.testing.assert_allclose(session.run(None, {"input_0": x})[0], ours(model, x)[0], **TOL)


def test_batch_norm_running_statistics_are_initializers_named_by_their_keys():
    model = nn.Sequential(nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.ReLU())
    model.train()
    model(cr.randn(8, 1, 6, 6))  # running statistics away from their initial 0 and 1
    proto, session = to_onnx(model, (cr.randn(2, 1, 6, 6),))
    names = {i.name for i in proto.graph.initializer}
    assert {"1.running_mean", "1.running_var", "1.weight", "1.bias"} <= names
    x = floats(2, 1, 6, 6)  # the batch axis is fixed: no dynamic_axes given
    np.testing.assert_allclose(session.run(None, {"input_0": x})[0], ours(model, x)[0], **TOL)
