"""Layers and activations against PyTorch with copied weights: values and gradients with
respect to the input and every parameter, in training and eval mode, float64 and float32."""

import math
import warnings

import numpy as np
import pytest
import torch

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import nn
from chainrule.testing import gradcheck, gradgradcheck
from tests.helpers import assert_nan_and_inf_upstream_like_torch, fast_path_on
from tests.tolerances import LAYER, tol
from tests.twins import copy_into


def compare(ours, theirs, dtype):
    assert ours.dtype == np.dtype(dtype)
    np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), **tol(dtype, LAYER))


def run_both(ours, theirs, x, dtype, seed=0, grad_input=True):
    """Forward and backward (random upstream gradient) through both; compare the output,
    the input's gradient and every parameter's gradient (by name)."""
    x = x.astype(dtype)
    xc = cr.tensor(x, requires_grad=grad_input)
    xt = torch.tensor(x, requires_grad=grad_input)
    yc, yt = ours(xc), theirs(xt)
    compare(yc, yt, dtype)
    g = np.random.default_rng(seed).standard_normal(yt.shape).astype(dtype)
    yc.backward(cr.tensor(g))
    yt.backward(torch.from_numpy(g))
    if grad_input:
        compare(xc.grad, xt.grad, dtype)
    theirs_params = dict(theirs.named_parameters())
    ours_params = dict(ours.named_parameters())
    assert ours_params.keys() == theirs_params.keys()
    for name, p in ours_params.items():
        compare(p.grad, theirs_params[name].grad, dtype)
    return yc, yt


def pair(make_ours, make_theirs, dtype):
    torch.manual_seed(0)
    theirs = make_theirs()
    ours = make_ours()
    if dtype == np.float64:
        theirs.double()
        ours.double()
    copy_into(ours, theirs)
    return ours, theirs


DTYPES = [np.float64, np.float32]


# -- Linear -------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 4), (4,), (2, 3, 4)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_matches_torch(dtype, shape, bias):
    ours, theirs = pair(
        lambda: nn.Linear(4, 3, bias=bias), lambda: torch.nn.Linear(4, 3, bias=bias), dtype
    )
    x = np.random.default_rng(1).standard_normal(shape)
    run_both(ours, theirs, x, dtype)


def test_linear_output_through_order_sensitive_ops(tmp_path):
    """Linear computes a batch of rows as (W @ x^T)^T, copied into row-major order as
    PyTorch lays it out (view needs it): views, copies, indexing, convolution and saving see
    the logical order."""
    ours, theirs = pair(lambda: nn.Linear(6, 12), lambda: torch.nn.Linear(6, 12), np.float64)
    x = np.random.default_rng(3).standard_normal((5, 6))
    xc, xt = cr.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    conv = torch.nn.Conv2d(5, 2, 2).double()
    conv_ours = nn.Conv2d(5, 2, 2).double()
    copy_into(conv_ours, conv)

    def program(lib, y, conv):
        a = y.reshape(5, 3, 4).flatten(1) * y.T.T  # regrouped rows against the original
        b = y.view(60)[::7].sum() + y[1:4, ::5].sum() + y.transpose(0, 1)[3].sum()
        c = conv(y.reshape(1, 5, 3, 4)).sum()
        return a.sum() + b + c

    with fast_path_on():  # the transposed product is a speed trick: the switch on
        yc, yt = ours(xc), theirs(xt)
    assert yc.is_contiguous() and yc.stride() == yt.stride()  # PyTorch's layout
    lc, lt = program(cr, yc, conv_ours), program(torch, yt, conv)
    compare(lc, lt, np.float64)
    lc.backward()
    lt.backward()
    compare(xc.grad, xt.grad, np.float64)
    compare(ours.weight.grad, theirs.weight.grad, np.float64)
    compare(yc, yt, np.float64)
    assert yc.numpy().tolist() == yc.tolist()
    cr.save({"y": yc.detach()}, tmp_path / "y.pt")
    np.testing.assert_array_equal(cr.load(tmp_path / "y.pt")["y"].numpy(), yc.numpy())


def test_linear_shapes_init_and_state_keys():
    cr.manual_seed(0)
    m = nn.Linear(400, 300)
    assert m.weight.shape == (300, 400) and m.bias.shape == (300,)
    assert m.weight.dtype == cr.float32 and m.weight.requires_grad
    bound = 1 / math.sqrt(400)
    for p in (m.weight, m.bias):
        assert np.abs(p.numpy()).max() <= bound
        assert np.abs(p.numpy()).max() > 0.95 * bound
    # uniform(-b, b) has std b / sqrt(3)
    assert abs(m.weight.numpy().std() - bound / math.sqrt(3)) < 0.02 * bound
    assert list(m.state_dict()) == list(torch.nn.Linear(400, 300).state_dict())
    assert nn.Linear(2, 3, bias=False).bias is None
    assert nn.Linear(2, 3, dtype=cr.float64).weight.dtype == cr.float64


def test_linear_init_is_seeded_by_manual_seed():
    cr.manual_seed(3)
    a = nn.Linear(5, 4)
    cr.manual_seed(3)
    b = nn.Linear(5, 4)
    c = nn.Linear(5, 4)
    np.testing.assert_array_equal(a.weight.numpy(), b.weight.numpy())
    np.testing.assert_array_equal(a.bias.numpy(), b.bias.numpy())
    assert not np.array_equal(b.weight.numpy(), c.weight.numpy())


def test_linear_wrong_width_names_layer_and_shapes():
    with pytest.raises(
        ValueError,
        match=r"Linear: expected input with last dim 4 \(in_features\); got shape \(2, 3\)",
    ):
        nn.Linear(4, 2)(cr.randn(2, 3))


def test_linear_refuses_another_dtype_naming_both_as_chainrule_does():
    """A NumPy input's dtype is named as a tensor's is (chainrule.float64), not as NumPy's."""
    for x in (np.ones((2, 4)), cr.ones(2, 4, dtype=cr.float64)):
        with pytest.raises(
            RuntimeError,
            match=r"Linear: input and weight must have the same dtype; got chainrule\.float64 "
            r"and chainrule\.float32; convert",
        ):
            nn.Linear(4, 2)(x)


def test_functional_linear_matches_torch():
    rng = np.random.default_rng(2)
    x, w, b = rng.standard_normal((3, 4)), rng.standard_normal((2, 4)), rng.standard_normal(2)
    out = F.linear(cr.tensor(x), cr.tensor(w), cr.tensor(b))
    np.testing.assert_allclose(
        out.numpy(), torch.nn.functional.linear(*map(torch.tensor, (x, w, b))).numpy()
    )
    with pytest.raises(ValueError, match="linear: expected input with last dim 4"):
        F.linear(cr.randn(3, 5), cr.tensor(w))


def test_linear_gradcheck_and_double_backward():
    cr.manual_seed(0)
    m = nn.Linear(3, 2).double()
    x = cr.randn(4, 3, dtype=cr.float64, requires_grad=True)
    assert gradcheck(lambda x, w, b: F.linear(x, w, b), [x, m.weight, m.bias])
    assert gradgradcheck(lambda x, w, b: F.linear(x, w, b), [x, m.weight, m.bias])


# -- Linear then ReLU in a Sequential ------------------------------------------------------


def mlp_pair(dtype, bias=True, n_in=4, hidden=6):
    return pair(
        lambda: nn.Sequential(
            nn.Linear(n_in, hidden, bias=bias),
            nn.ReLU(),
            nn.Linear(hidden, 3, bias=bias),
            nn.ReLU(inplace=True),
        ),
        lambda: torch.nn.Sequential(
            torch.nn.Linear(n_in, hidden, bias=bias),
            torch.nn.ReLU(),
            torch.nn.Linear(hidden, 3, bias=bias),
            torch.nn.ReLU(inplace=True),
        ),
        dtype,
    )


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 4), (2, 4), (4,), (2, 3, 4), (0, 4)])
@pytest.mark.parametrize("bias", [True, False])
def test_sequential_linear_relu_matches_torch(dtype, shape, bias):
    """(2, 4) has fewer rows than the hidden layer's 6 outputs: its product is computed
    transposed and comes out column-major; (5, 4) does not."""
    ours, theirs = mlp_pair(dtype, bias)
    x = np.random.default_rng(1).standard_normal(shape)
    node = ours(cr.tensor(x.astype(dtype))).grad_fn
    assert node.op == "Relu" and node.inputs[0].grad_fn.op == "Linear"
    run_both(ours, theirs, x, dtype)


@pytest.mark.filterwarnings("ignore:invalid value encountered in matmul")  # inf - inf
@pytest.mark.parametrize("held", [True, False], ids=["gradient-given", "gradient-from-an-op"])
def test_sequential_linear_relu_keeps_nan_and_inf_out_of_the_masked_gradient(held):
    """An upstream gradient with NaN and inf: where relu's output is 0, PyTorch's gradient is
    0 (not NaN * 0); elsewhere they pass. Held by the caller, relu's mask multiplies into
    a new array; made by the op above, into the gradient itself."""
    ours, theirs = mlp_pair(np.float64)
    x = np.random.default_rng(2).standard_normal((8, 4))
    assert_nan_and_inf_upstream_like_torch(ours, theirs, x, held)


@pytest.mark.filterwarnings("ignore:invalid value encountered")
def test_sequential_linear_relu_passes_the_gradient_where_the_output_is_nan():
    """relu(NaN) is NaN in PyTorch and its gradient passes there, as chainrule's ReLU."""
    ours, theirs = mlp_pair(np.float64)
    x = np.random.default_rng(4).standard_normal((5, 4))
    x[1, 2] = np.nan
    yc, yt = run_both(ours, theirs, x, np.float64)
    assert np.isnan(yc.numpy()[1]).all()


def test_sequential_linear_relu_gradcheck_double_backward_and_no_grad():
    ours, theirs = mlp_pair(np.float64)
    x = cr.tensor(np.random.default_rng(3).standard_normal((5, 4)), requires_grad=True)
    params = list(ours.parameters())

    def fn(x, *ps):
        return ours(x)

    assert gradcheck(fn, [x, *params])
    assert gradgradcheck(fn, [x, *params])
    with cr.no_grad():
        y = ours(x)
    assert y.grad_fn is None
    np.testing.assert_allclose(y.numpy(), theirs(torch.tensor(x.numpy())).detach().numpy())


def test_sequential_runs_linear_and_relu_apart_when_either_is_customized():
    """A subclass, or a forward set on an instance, is called as it is."""

    class Shifted(nn.Linear):
        def forward(self, input):
            return super().forward(input) + 1.0

    x = cr.randn(3, 4)
    custom = nn.ReLU()
    custom.forward = lambda input: input * 2.0
    cases = [
        (nn.Sequential(Shifted(4, 2), nn.ReLU()), lambda m, x: m[0](x).relu(), "Relu"),
        (nn.Sequential(nn.Linear(4, 2), custom), lambda m, x: m[0](x) * 2.0, "Mul"),
        (nn.Sequential(nn.Linear(4, 2), nn.Tanh()), lambda m, x: m[0](x).tanh(), "Tanh"),
    ]
    for model, expected, last in cases:
        model.requires_grad_(True)
        y = model(x)
        assert y.grad_fn.op == last
        np.testing.assert_allclose(y.numpy(), expected(model, x).numpy())


def test_layers_take_a_dtype():
    layers = [
        nn.Linear(2, 3, dtype=cr.float64),
        nn.Embedding(4, 2, dtype=cr.float64),
        nn.LayerNorm(3, dtype=cr.float64),
        nn.BatchNorm1d(3, dtype=cr.float64),
    ]
    for m in layers:
        assert all(t.dtype == cr.float64 for t in m.parameters())
    assert layers[3].running_var.dtype == cr.float64


# -- Embedding ----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("padding_idx", [None, 2, -1])
def test_embedding_matches_torch_with_repeats(dtype, padding_idx):
    ours, theirs = pair(
        lambda: nn.Embedding(6, 3, padding_idx=padding_idx),
        lambda: torch.nn.Embedding(6, 3, padding_idx=padding_idx),
        dtype,
    )
    idx = np.array([[0, 2, 2, 5], [5, 1, 2, 0]])  # repeats accumulate; 2 and 5 may be padding
    yc, yt = ours(cr.tensor(idx)), theirs(torch.tensor(idx))
    compare(yc, yt, dtype)
    g = np.random.default_rng(0).standard_normal(yt.shape).astype(dtype)
    yc.backward(cr.tensor(g))
    yt.backward(torch.from_numpy(g))
    compare(ours.weight.grad, theirs.weight.grad, dtype)


@pytest.mark.parametrize(
    "options",
    [
        dict(max_norm=1.5),
        dict(max_norm=2.0, norm_type=1.0, padding_idx=2),
        dict(scale_grad_by_freq=True),
        dict(scale_grad_by_freq=True, padding_idx=-1, max_norm=1.0),
    ],
)
def test_embedding_options_match_torch(options):
    """max_norm rescales the looked-up rows in the weight itself (twice, to see it only
    touches rows above the norm); scale_grad_by_freq divides by each index's count."""
    ours, theirs = pair(
        lambda: nn.Embedding(6, 3, **options), lambda: torch.nn.Embedding(6, 3, **options),
        np.float64,
    )  # fmt: skip
    assert repr(ours) == repr(theirs)
    for idx in (np.array([[0, 2, 2, 5], [5, 1, 2, 0]]), np.array([3, 3, 3, 0])):
        yc, yt = ours(cr.tensor(idx)), theirs(torch.tensor(idx))
        compare(yc, yt, np.float64)
        compare(ours.weight, theirs.weight, np.float64)  # renormalised alike
        g = np.random.default_rng(0).standard_normal(yt.shape)
        ours.weight.grad = None
        theirs.weight.grad = None
        yc.backward(cr.tensor(g))
        yt.backward(torch.from_numpy(g))
        compare(ours.weight.grad, theirs.weight.grad, np.float64)
    f = F.embedding(cr.tensor([1, 1, 4]), ours.weight, **options)
    t = torch.nn.functional.embedding(torch.tensor([1, 1, 4]), theirs.weight, **options)
    compare(f, t, np.float64)
    with pytest.raises(ValueError, match="Embedding: sparse gradients are not supported"):
        nn.Embedding(6, 3, sparse=True, **options)


def test_embedding_init_and_errors():
    cr.manual_seed(0)
    m = nn.Embedding(1000, 20, padding_idx=3)
    assert m.padding_idx == 3 and m.weight.shape == (1000, 20)
    np.testing.assert_array_equal(m.weight.numpy()[3], 0)
    w = np.delete(m.weight.numpy(), 3, axis=0)
    assert abs(w.mean()) < 0.02 and abs(w.std() - 1) < 0.02  # normal(0, 1)
    with pytest.raises(
        IndexError, match="embedding: index 1000 is out of range for num_embeddings 1000"
    ):
        m(cr.tensor([1, 1000]))
    with pytest.raises(IndexError, match="index -1 is out of range"):
        m(cr.tensor([-1]))
    with pytest.raises(
        TypeError, match="embedding: indices must be integers; got dtype chainrule.float32"
    ):
        m(cr.tensor([1.0]))
    with pytest.raises(ValueError, match="padding_idx must be within num_embeddings 5"):
        nn.Embedding(5, 2, padding_idx=5)
    assert repr(m) == repr(torch.nn.Embedding(1000, 20, padding_idx=3))


# -- Dropout ------------------------------------------------------------------------------


def test_dropout_train_mask_scale_and_gradient():
    cr.manual_seed(0)
    x = cr.ones(200, 500, requires_grad=True)
    m = nn.Dropout(p=0.3)
    y = m(x)
    kept = y.numpy() != 0
    assert abs(kept.mean() - 0.7) < 0.01
    np.testing.assert_allclose(y.numpy()[kept], 1 / 0.7, rtol=1e-6)
    g = np.random.default_rng(0).standard_normal(y.shape).astype(np.float32)
    y.backward(cr.tensor(g))
    np.testing.assert_allclose(x.grad.numpy(), g * kept / 0.7, rtol=1e-6)


def test_dropout_eval_edges_and_seed():
    x = cr.randn(10, 10)
    m = nn.Dropout()
    assert m.p == 0.5 and repr(m) == repr(torch.nn.Dropout())
    m.eval()
    np.testing.assert_array_equal(m(x).numpy(), x.numpy())
    np.testing.assert_array_equal(F.dropout(x, 0.0).numpy(), x.numpy())
    np.testing.assert_array_equal(F.dropout(x, 1.0).numpy(), 0)
    np.testing.assert_array_equal(F.dropout(x, 0.5, training=False).numpy(), x.numpy())
    cr.manual_seed(5)
    a = F.dropout(x)
    cr.manual_seed(5)
    b = F.dropout(x)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    with pytest.raises(ValueError, match=r"Dropout: probability p must be in \[0, 1\]; got 1.5"):
        nn.Dropout(1.5)
    with pytest.raises(ValueError, match=r"dropout: probability p must be in \[0, 1\]; got -0.1"):
        F.dropout(x, -0.1)


# -- LayerNorm ----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "normalized_shape, shape", [(5, (4, 5)), ((3, 5), (2, 4, 3, 5)), (5, (5,))]
)
def test_layer_norm_matches_torch(dtype, normalized_shape, shape):
    def perturb(m):  # not the ones/zeros start, so the affine part is tested
        with torch.no_grad():
            m.weight.uniform_(0.5, 1.5)
            m.bias.uniform_(-1, 1)
        return m

    ours, theirs = pair(
        lambda: nn.LayerNorm(normalized_shape),
        lambda: perturb(torch.nn.LayerNorm(normalized_shape)),
        dtype,
    )
    x = np.random.default_rng(3).standard_normal(shape) * 3 + 1
    run_both(ours, theirs, x, dtype)


def test_layer_norm_options_repr_and_error():
    m = nn.LayerNorm(4, elementwise_affine=False)
    assert m.weight is None and list(m.parameters()) == []
    assert repr(m) == repr(torch.nn.LayerNorm(4, elementwise_affine=False))
    ours, theirs = pair(
        lambda: nn.LayerNorm(4, bias=False), lambda: torch.nn.LayerNorm(4, bias=False), np.float64
    )
    assert repr(ours) == repr(theirs) and ours.bias is None
    run_both(ours, theirs, np.random.default_rng(1).standard_normal((2, 4)), np.float64)
    x = np.random.default_rng(0).standard_normal((3, 4))
    ref = torch.nn.functional.layer_norm(torch.tensor(x), (4,), eps=1e-3)
    np.testing.assert_allclose(
        F.layer_norm(cr.tensor(x), 4, eps=1e-3).numpy(), ref.numpy(), rtol=1e-10
    )
    assert repr(nn.LayerNorm((2, 3))) == repr(torch.nn.LayerNorm((2, 3)))
    assert list(nn.LayerNorm(3).state_dict()) == list(torch.nn.LayerNorm(3).state_dict())
    with pytest.raises(
        ValueError,
        match=r"LayerNorm: expected input with trailing shape \(4,\) \(normalized_shape\); "
        r"got shape \(3, 5\)",
    ):
        nn.LayerNorm(4)(cr.randn(3, 5))


def test_layer_norm_gradcheck():
    rng = np.random.default_rng(0)
    x = cr.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    w = cr.tensor(rng.standard_normal(4), requires_grad=True)
    b = cr.tensor(rng.standard_normal(4), requires_grad=True)
    assert gradcheck(lambda x, w, b: F.layer_norm(x, 4, w, b), [x, w, b])
    assert gradgradcheck(lambda x: F.layer_norm(x, 4), [x])


@pytest.mark.parametrize(
    "shape, normalized", [((2, 0), (0,)), ((2, 0, 3), (0, 3)), ((2, 3, 0), (0,)), ((0, 3), (3,))]
)
def test_layer_norm_of_empty_input_as_torch(shape, normalized):
    """Nothing to normalise: an empty result and empty gradients, and PyTorch's statistics
    (mean 0, rstd NaN), quietly, as PyTorch's (the rows' reshape failed)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x, w, b = (cr.zeros(s, requires_grad=True) for s in (shape, normalized, normalized))
        xt, wt, bt = (torch.zeros(s, requires_grad=True) for s in (shape, normalized, normalized))
        y, yt = (
            F.layer_norm(x, normalized, w, b),
            torch.nn.functional.layer_norm(xt, normalized, wt, bt),
        )
        assert tuple(y.shape) == tuple(yt.shape) and y.grad_fn.name() == yt.grad_fn.name()
        for saved in ("_saved_result1", "_saved_result2"):
            ours, theirs = getattr(y.grad_fn, saved), getattr(yt.grad_fn, saved)
            np.testing.assert_array_equal(ours.numpy(), theirs.detach().numpy())
        y.sum().backward()
        yt.sum().backward()
        for ours, theirs in [(x, xt), (w, wt), (b, bt)]:
            assert tuple(ours.grad.shape) == tuple(theirs.grad.shape)
            np.testing.assert_array_equal(ours.grad.numpy(), theirs.grad.numpy())


# -- BatchNorm ----------------------------------------------------------------------------

BN_CASES = [
    (nn.BatchNorm1d, torch.nn.BatchNorm1d, (8, 3)),
    (nn.BatchNorm1d, torch.nn.BatchNorm1d, (4, 3, 5)),
    (nn.BatchNorm2d, torch.nn.BatchNorm2d, (4, 3, 2, 5)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ours_cls, theirs_cls, shape", BN_CASES)
@pytest.mark.parametrize("momentum", [0.1, None])
def test_batch_norm_train_steps_then_eval_match_torch(dtype, ours_cls, theirs_cls, shape, momentum):
    def perturb(m):
        with torch.no_grad():
            m.weight.uniform_(0.5, 1.5)
            m.bias.uniform_(-1, 1)
        return m

    ours, theirs = pair(
        lambda: ours_cls(3, momentum=momentum),
        lambda: perturb(theirs_cls(3, momentum=momentum)),
        dtype,
    )
    rng = np.random.default_rng(4)
    for step in range(3):  # training: batch statistics; running stats move each step
        for p in [*ours.parameters(), *theirs.parameters()]:
            p.grad = None
        x = rng.standard_normal(shape) * 2 + step
        run_both(ours, theirs, x, dtype, seed=step)
        for name in ("running_mean", "running_var"):
            compare(getattr(ours, name), getattr(theirs, name), dtype)
        assert int(ours.num_batches_tracked.item()) == step + 1
        assert ours.num_batches_tracked.dtype == cr.int64
    ours.eval()
    theirs.eval()
    for p in [*ours.parameters(), *theirs.parameters()]:
        p.grad = None
    run_both(ours, theirs, rng.standard_normal(shape), dtype, seed=9)
    assert int(ours.num_batches_tracked.item()) == 3  # eval leaves the statistics alone
    compare(ours.running_mean, theirs.running_mean, dtype)


def test_batch_norm_running_var_is_unbiased():
    m = nn.BatchNorm1d(2, momentum=1.0)
    x = np.random.default_rng(0).standard_normal((5, 2))
    m(cr.tensor(x))
    np.testing.assert_allclose(m.running_var.numpy(), x.var(axis=0, ddof=1), rtol=1e-5)
    np.testing.assert_allclose(m.running_mean.numpy(), x.mean(axis=0), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize(
    "affine, track, bias",
    [(False, True, True), (True, False, True), (False, False, True), (True, True, False)],
)
def test_batch_norm_options_match_torch(affine, track, bias):
    ours, theirs = pair(
        lambda: nn.BatchNorm2d(3, affine=affine, track_running_stats=track, bias=bias),
        lambda: torch.nn.BatchNorm2d(3, affine=affine, track_running_stats=track, bias=bias),
        np.float64,
    )
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert repr(ours) == repr(theirs)
    rng = np.random.default_rng(5)
    run_both(ours, theirs, rng.standard_normal((4, 3, 2, 2)), np.float64)
    ours.eval()
    theirs.eval()
    run_both(ours, theirs, rng.standard_normal((4, 3, 2, 2)), np.float64, seed=1)


def test_batch_norm_errors_repr_and_buffers():
    m = nn.BatchNorm1d(4)
    assert repr(m) == repr(torch.nn.BatchNorm1d(4))
    assert [n for n, _ in m.named_buffers()] == [
        "running_mean",
        "running_var",
        "num_batches_tracked",
    ]
    with pytest.raises(
        ValueError,
        match=r"BatchNorm1d: expected input with 4 channels \(num_features\) in dim 1; "
        r"got shape \(2, 3\)",
    ):
        m(cr.randn(2, 3))
    with pytest.raises(
        ValueError, match=r"BatchNorm2d: expected input of shape \(N, C, H, W\); got shape \(2, 4\)"
    ):
        nn.BatchNorm2d(4)(cr.randn(2, 4))
    with pytest.raises(ValueError, match="more than 1 value per channel when training"):
        m(cr.randn(1, 4))
    m.eval()
    assert m(cr.randn(1, 4)).shape == (1, 4)  # one sample is fine with running statistics


def test_batch_norm_gradcheck_train():
    rng = np.random.default_rng(0)
    x = cr.tensor(rng.standard_normal((4, 3, 2)), requires_grad=True)
    w = cr.tensor(rng.standard_normal(3), requires_grad=True)
    b = cr.tensor(rng.standard_normal(3), requires_grad=True)
    assert gradcheck(lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), [x, w, b])


# -- activations --------------------------------------------------------------------------

ACTIVATIONS = [
    (lambda: nn.ReLU(), lambda: torch.nn.ReLU()),
    (lambda: nn.LeakyReLU(), lambda: torch.nn.LeakyReLU()),
    (lambda: nn.LeakyReLU(0.2), lambda: torch.nn.LeakyReLU(0.2)),
    (lambda: nn.Tanh(), lambda: torch.nn.Tanh()),
    (lambda: nn.Sigmoid(), lambda: torch.nn.Sigmoid()),
    (lambda: nn.GELU(), lambda: torch.nn.GELU()),
    (lambda: nn.GELU(approximate="tanh"), lambda: torch.nn.GELU(approximate="tanh")),
    (lambda: nn.Softmax(dim=1), lambda: torch.nn.Softmax(dim=1)),
    (lambda: nn.Softmax(dim=-1), lambda: torch.nn.Softmax(dim=-1)),
    (lambda: nn.LogSoftmax(dim=1), lambda: torch.nn.LogSoftmax(dim=1)),
    (lambda: nn.LogSoftmax(dim=0), lambda: torch.nn.LogSoftmax(dim=0)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("make_ours, make_theirs", ACTIVATIONS)
def test_activation_modules_match_torch(dtype, make_ours, make_theirs):
    ours, theirs = make_ours(), make_theirs()
    assert repr(ours) == repr(theirs)
    x = np.random.default_rng(6).standard_normal((4, 5, 3)) * 3
    x[0, 0, :2] = 0.0  # the kinks' conventions
    run_both(ours, theirs, x, dtype)


FUNCTIONS = [
    (F.relu, torch.nn.functional.relu, {}),
    (F.leaky_relu, torch.nn.functional.leaky_relu, {"negative_slope": 0.3}),
    (F.tanh, torch.tanh, {}),
    (F.sigmoid, torch.sigmoid, {}),
    (F.gelu, torch.nn.functional.gelu, {}),
    (F.gelu, torch.nn.functional.gelu, {"approximate": "tanh"}),
    (F.softmax, torch.nn.functional.softmax, {"dim": 0}),
    (F.log_softmax, torch.nn.functional.log_softmax, {"dim": -1}),
]


@pytest.mark.parametrize("ours, theirs, kwargs", FUNCTIONS)
def test_activation_functions_match_torch_and_gradcheck(ours, theirs, kwargs):
    x = np.random.default_rng(7).standard_normal((3, 4)) * 2
    xc, xt = cr.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    yc, yt = ours(xc, **kwargs), theirs(xt, **kwargs)
    compare(yc, yt, np.float64)
    g = np.random.default_rng(8).standard_normal(x.shape)
    yc.backward(cr.tensor(g))
    yt.backward(torch.tensor(g))
    compare(xc.grad, xt.grad, np.float64)
    assert gradcheck(lambda x: ours(x, **kwargs), [cr.tensor(x, requires_grad=True)])


def test_softmax_implicit_dim_follows_torch():
    x = np.random.default_rng(0).standard_normal((2, 3))
    with pytest.warns(UserWarning, match="implicit dimension"):
        ours = F.softmax(cr.tensor(x))
    with pytest.warns(UserWarning):
        theirs = torch.nn.functional.softmax(torch.tensor(x))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)


def test_gelu_bad_approximate():
    with pytest.raises(ValueError, match="GELU: approximate must be 'none' or 'tanh'; got 'fast'"):
        nn.GELU("fast")
    with pytest.raises(ValueError, match="gelu: approximate must be"):
        F.gelu(cr.randn(2), approximate="erf")


def test_relu_inplace_flag_is_accepted():
    x = cr.tensor([-1.0, 2.0])
    m = nn.ReLU(inplace=True)
    assert repr(m) == repr(torch.nn.ReLU(inplace=True))
    np.testing.assert_array_equal(m(x).numpy(), [0.0, 2.0])


# -- erf (the primitive under GELU) -------------------------------------------------------


def test_erf_matches_torch_to_double_precision():
    rng = np.random.default_rng(9)
    x = np.concatenate(
        [
            rng.standard_normal(20000) * 3,
            np.linspace(-7, 7, 20001),
            [0.0, -0.0, 1e-300, -1e-300, 1e-8, 0.5, 1.0, -1.0, 6.0, -6.0, 30.0, np.inf, -np.inf],
        ]
    )
    ours = cr.tensor(x).erf().numpy()
    theirs = torch.erf(torch.tensor(x)).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-15, atol=1e-15)
    small = np.abs(x) < 1  # relative accuracy where erf is small
    np.testing.assert_allclose(ours[small], theirs[small], rtol=2e-15, atol=0)
    assert np.isnan(cr.tensor([np.nan]).erf().item())
    assert cr.tensor(0.5).erf().shape == ()
    x32 = x.astype(np.float32)
    out32 = cr.tensor(x32).erf()
    assert out32.dtype == cr.float32
    np.testing.assert_allclose(
        out32.numpy(), torch.erf(torch.tensor(x32)).numpy(), rtol=1e-6, atol=1e-7
    )


def test_erf_gradient_matches_torch_and_gradcheck():
    x = np.random.default_rng(10).standard_normal(50) * 2
    g = np.random.default_rng(11).standard_normal(50)
    xc, xt = cr.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    cr.erf(xc).backward(cr.tensor(g))
    torch.erf(xt).backward(torch.tensor(g))
    np.testing.assert_allclose(xc.grad.numpy(), xt.grad.numpy(), rtol=1e-13, atol=1e-15)
    assert gradcheck(lambda x: x.erf(), [cr.tensor(x[:10], requires_grad=True)])
    assert gradgradcheck(lambda x: x.erf(), [cr.tensor(x[:10], requires_grad=True)])


# -- Identity, Flatten --------------------------------------------------------------------


def test_identity_and_flatten_match_torch():
    x = np.random.default_rng(12).standard_normal((2, 3, 4, 5))
    xc = cr.tensor(x)
    assert nn.Identity(54, unused="arg")(xc) is xc
    for args in [(), (0,), (2,), (1, 2), (0, -2)]:
        ours, theirs = nn.Flatten(*args), torch.nn.Flatten(*args)
        assert repr(ours) == repr(theirs)
        run_both(ours, theirs, x, np.float64)


def test_layer_norm_without_bias_has_torch_state_and_takes_device():
    for affine, bias in [(True, False), (False, True), (True, True)]:
        ours = nn.LayerNorm((2, 3), elementwise_affine=affine, bias=bias, device="cpu")
        theirs = torch.nn.LayerNorm((2, 3), elementwise_affine=affine, bias=bias, device="cpu")
        assert list(ours.state_dict()) == list(theirs.state_dict())
        assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    m = nn.LayerNorm(3, bias=False, dtype=cr.float64)
    assert m.weight.dtype == np.float64 and m.bias is None
    with pytest.raises(ValueError, match="LayerNorm: chainrule computes on the CPU; got device"):
        nn.LayerNorm(3, device="cuda")
