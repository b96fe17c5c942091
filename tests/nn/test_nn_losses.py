"""Losses against PyTorch: values and gradients (random upstream gradient where the loss is
not a scalar) for every reduction, weights, ignore_index, label smoothing, extreme inputs."""

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import nn
from chainrule.testing import gradcheck, gradgradcheck
from tests import tolerances

REDUCTIONS = ["mean", "sum", "none"]


def both(fn_ours, fn_theirs, arrays, grads, dtype=np.float64, seed=0, ints=(), tol=None):
    """Run both losses on the same arrays; compare the value and the gradients of the
    arrays whose positions are in ``grads``. Arrays in ``ints`` are passed as integers."""
    tol = tol or tolerances.tol(dtype, tolerances.LAYER)
    cs, ts = [], []
    for i, a in enumerate(arrays):
        if a is None:
            cs.append(None)
            ts.append(None)
            continue
        a = np.asarray(a) if i in ints else np.asarray(a, dtype=dtype)
        cs.append(cr.tensor(a, requires_grad=i in grads))
        ts.append(torch.tensor(a, requires_grad=i in grads))
    yc, yt = fn_ours(*cs), fn_theirs(*ts)
    assert yc.shape == tuple(yt.shape) and yc.dtype == np.dtype(dtype)
    np.testing.assert_allclose(yc.numpy(), yt.detach().numpy(), **tol)
    g = np.random.default_rng(seed).standard_normal(yt.shape).astype(dtype)
    yc.backward(cr.tensor(g))
    yt.backward(torch.tensor(g))
    for i in grads:
        np.testing.assert_allclose(cs[i].grad.numpy(), ts[i].grad.numpy(), **tol)
    return yc


RNG = np.random.default_rng(0)


# -- regression losses --------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("ours, theirs", [(F.mse_loss, TF.mse_loss), (F.l1_loss, TF.l1_loss)])
def test_regression_losses_match_torch(dtype, reduction, ours, theirs):
    x, t = RNG.standard_normal((4, 3)), RNG.standard_normal((4, 3))
    x[0, 0] = t[0, 0]  # l1's kink: gradient 0 there in both
    both(
        lambda a, b: ours(a, b, reduction=reduction),
        lambda a, b: theirs(a, b, reduction=reduction),
        [x, t],
        grads=(0, 1),
        dtype=dtype,
    )


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("ours, theirs", [(F.mse_loss, TF.mse_loss), (F.l1_loss, TF.l1_loss)])
def test_weighted_regression_losses_match_torch(reduction, ours, theirs):
    x, t = RNG.standard_normal((4, 3)), RNG.standard_normal((4, 3))
    w = RNG.uniform(0, 2, (4, 3))
    both(
        lambda a, b, w: ours(a, b, reduction=reduction, weight=w),
        lambda a, b, w: theirs(a, b, reduction=reduction, weight=w),
        [x, t, w],
        grads=(0, 1, 2),
        dtype=np.float64,
    )
    with pytest.raises(
        ValueError,
        match=r"mse_loss: weight must have the input's shape \(4, 3\); "
        r"got \(3,\)",
    ):
        F.mse_loss(cr.tensor(x), cr.tensor(t), weight=cr.ones(3))


def test_regression_modules_and_shape_error():
    x, t = RNG.standard_normal(5), RNG.standard_normal(5)
    both(nn.MSELoss(reduction="sum"), torch.nn.MSELoss(reduction="sum"), [x, t], grads=(0,))
    both(nn.L1Loss(), torch.nn.L1Loss(), [x, t], grads=(0,))
    with pytest.raises(
        ValueError, match=r"mse_loss: input and target shapes differ; got \(3, 1\) and \(3,\)"
    ):
        F.mse_loss(cr.randn(3, 1), cr.randn(3))
    with pytest.raises(
        ValueError, match="l1_loss: reduction must be 'mean', 'sum' or 'none'; got 'avg'"
    ):
        F.l1_loss(cr.randn(3), cr.randn(3), reduction="avg")
    with pytest.raises(ValueError, match="MSELoss: reduction must be"):
        nn.MSELoss(reduction="avg")


# -- binary cross entropy -----------------------------------------------------------------


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_bce_matches_torch(reduction, weighted):
    p = RNG.uniform(0.02, 0.98, (4, 3))
    t = RNG.uniform(0, 1, (4, 3))
    w = RNG.uniform(0.5, 2, (3,)) if weighted else None
    both(
        lambda p, t, w: F.binary_cross_entropy(p, t, w, reduction=reduction),
        lambda p, t, w: TF.binary_cross_entropy(p, t, w, reduction=reduction),
        [p, t, w],
        grads=(0, 1),
    )


def test_bce_clamps_log_at_minus_100_and_gradient_is_finite():
    p = np.array([0.0, 1.0, 0.0, 1.0, 1e-50, 0.5])
    t = np.array([1.0, 0.0, 0.0, 1.0, 1.0, 1.0])
    y = both(
        lambda p, t: F.binary_cross_entropy(p, t, reduction="none"),
        lambda p, t: TF.binary_cross_entropy(p, t, reduction="none"),
        [p, t],
        grads=(0,),
        tol=dict(rtol=1e-8, atol=0),
    )  # PyTorch's 1e-12 floor on p(1-p) is rounded to float32
    np.testing.assert_allclose(y.numpy()[:2], 100.0)
    with pytest.raises(
        ValueError, match=r"binary_cross_entropy: input must hold probabilities in \[0, 1\]"
    ):
        F.binary_cross_entropy(cr.tensor([1.5]), cr.tensor([1.0]))


def test_bce_without_a_node_is_torchs_and_either_input_wanting_a_gradient_records_one():
    rng = np.random.default_rng(0)
    p, t = rng.random((3, 4)).astype(np.float32), rng.random((3, 4)).astype(np.float32)
    want = TF.binary_cross_entropy(torch.tensor(p), torch.tensor(t), reduction="none")
    got = F.binary_cross_entropy(cr.tensor(p), cr.tensor(t), reduction="none")
    assert got.grad_fn is None and got.dtype == cr.float32
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    for which in (0, 1):
        inputs = [cr.tensor(p), cr.tensor(t)]
        inputs[which].requires_grad_()
        out = F.binary_cross_entropy(*inputs, reduction="none")
        assert type(out.grad_fn).__name__ == "BinaryCrossEntropyBackward0"
        np.testing.assert_allclose(out.detach().numpy(), want.numpy(), rtol=1e-6)


@pytest.mark.filterwarnings("error")  # log(0) and log1p(-1) are clamped quietly, as PyTorch's
@pytest.mark.parametrize("edge", [0.0, 1.0])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_bce_at_one_edge_is_quiet_and_clamped(edge, reduction):
    p = np.array([edge, 0.3, 0.6], dtype=np.float32)  # only the least or the greatest at an edge
    t = np.array([0.5, 1.0, 0.0], dtype=np.float32)
    w = np.array([1.5, 0.5, 2.0], dtype=np.float32)
    for weight in (None, w):
        ours = F.binary_cross_entropy(
            cr.tensor(p),
            cr.tensor(t),
            None if weight is None else cr.tensor(weight),
            reduction=reduction,
        )
        theirs = TF.binary_cross_entropy(
            torch.tensor(p),
            torch.tensor(t),
            None if weight is None else torch.tensor(weight),
            reduction=reduction,
        )
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


@pytest.mark.filterwarnings("error")  # the backward's logs are quiet too, as PyTorch's
@pytest.mark.parametrize("target_grad", [False, True])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_bce_gradients_at_both_edges_are_quiet_and_torchs(reduction, target_grad):
    p = np.array([0.0, 1.0, 0.3, 1.0, 0.0], dtype=np.float64)
    t = np.array([0.5, 1.0, 0.0, 0.25, 0.0], dtype=np.float64)
    g = np.array([1.5, -0.5, 2.0, 0.75, 1.0])
    grads = []
    for lib, fn in ((cr, F), (torch, TF)):
        x, y = lib.tensor(p, requires_grad=True), lib.tensor(t, requires_grad=target_grad)
        loss = fn.binary_cross_entropy(x, y, reduction=reduction)
        seed = lib.tensor(g) if reduction == "none" else lib.tensor(1.5, dtype=lib.float64)
        loss.backward(seed)
        grads.append([x.grad.numpy()] + ([y.grad.numpy()] if target_grad else []))
    for ours, theirs in zip(*grads, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-7)  # p (1 - p) and (1 - p) p round apart


def test_bce_module_and_float32():
    p, t = RNG.uniform(0.1, 0.9, 6), RNG.integers(0, 2, 6).astype(float)
    both(nn.BCELoss(), torch.nn.BCELoss(), [p, t], grads=(0,), dtype=np.float32)
    w = RNG.uniform(0.5, 2, 6)
    both(
        nn.BCELoss(weight=cr.tensor(w)),
        torch.nn.BCELoss(weight=torch.tensor(w)),
        [p, t],
        grads=(0,),
    )


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize(
    "weighted, pos_weighted", [(False, False), (True, False), (False, True), (True, True)]
)
def test_bce_with_logits_matches_torch(reduction, weighted, pos_weighted):
    x = RNG.standard_normal((5, 3)) * 3
    x[0] = [0.0, 1000.0, -1000.0]  # x = 0 has gradient sigmoid(0) - t; +-1000 stays finite
    t = RNG.uniform(0, 1, (5, 3))
    w = RNG.uniform(0.5, 2, (5, 1)) if weighted else None
    pw = RNG.uniform(0.5, 3, (3,)) if pos_weighted else None
    y = both(
        lambda x, t, w, pw: F.binary_cross_entropy_with_logits(
            x, t, w, reduction=reduction, pos_weight=pw
        ),
        lambda x, t, w, pw: TF.binary_cross_entropy_with_logits(
            x, t, w, reduction=reduction, pos_weight=pw
        ),
        [x, t, w, pw],
        grads=(0, 1),  # PyTorch takes no gradient in pos_weight
    )
    assert np.isfinite(y.numpy()).all()


def test_bce_with_logits_extreme_logits_float32_and_module():
    x = np.array([1000.0, -1000.0, 1000.0, -1000.0, 30.0, -30.0])
    t = np.array([1.0, 0.0, 0.0, 1.0, 1.0, 0.0])
    y = both(
        lambda x, t: F.binary_cross_entropy_with_logits(x, t, reduction="none"),
        lambda x, t: TF.binary_cross_entropy_with_logits(x, t, reduction="none"),
        [x, t],
        grads=(0,),
        dtype=np.float32,
    )
    np.testing.assert_allclose(y.numpy()[:4], [0.0, 0.0, 1000.0, 1000.0])
    pw = RNG.uniform(1, 2, 6)
    ours = nn.BCEWithLogitsLoss(pos_weight=cr.tensor(pw))
    theirs = torch.nn.BCEWithLogitsLoss(pos_weight=torch.tensor(pw))
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["pos_weight"]
    both(ours, theirs, [x, t], grads=(0,))


def test_bce_with_logits_gradcheck():
    x = cr.tensor(RNG.standard_normal(4), requires_grad=True)
    t = cr.tensor(RNG.uniform(0, 1, 4), requires_grad=True)
    pw = cr.tensor(RNG.uniform(1, 2, 4))  # takes no gradient, as in PyTorch
    assert gradcheck(lambda x, t: F.binary_cross_entropy_with_logits(x, t, pos_weight=pw), [x, t])


# -- cross entropy and nll ----------------------------------------------------------------

CE_SHAPES = [((6, 5), (6,)), ((3, 4, 2, 3), (3, 2, 3)), ((5,), ())]


@pytest.mark.parametrize("shape, tshape", CE_SHAPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignore", [False, True])
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_cross_entropy_matches_torch(shape, tshape, reduction, weighted, ignore, smoothing):
    rng = np.random.default_rng(1)
    c = shape[1] if len(shape) > 1 else shape[0]
    x = rng.standard_normal(shape) * 2
    t = rng.integers(0, c, tshape)
    if ignore and t.ndim:
        t.flat[::2] = 1  # class 1 is ignored at several places
    w = rng.uniform(0.5, 2, c) if weighted else None
    ii = 1 if ignore else -100
    both(
        lambda x, t, w: F.cross_entropy(
            x, t, w, ignore_index=ii, reduction=reduction, label_smoothing=smoothing
        ),
        lambda x, t, w: TF.cross_entropy(
            x, t, w, ignore_index=ii, reduction=reduction, label_smoothing=smoothing
        ),
        [x, t, w],
        grads=(0,),
        ints=(1,),
    )


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("smoothing", [0.0, 0.1])
def test_cross_entropy_probability_targets_match_torch(reduction, weighted, smoothing):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 3, 2))
    t = rng.dirichlet(np.ones(3), (4, 2)).transpose(0, 2, 1)  # (4, 3, 2), sums to 1 on dim 1
    w = rng.uniform(0.5, 2, 3) if weighted else None
    both(
        lambda x, t, w: F.cross_entropy(x, t, w, reduction=reduction, label_smoothing=smoothing),
        lambda x, t, w: TF.cross_entropy(x, t, w, reduction=reduction, label_smoothing=smoothing),
        [x, t, w],
        grads=(0,),
    )


def test_cross_entropy_float32_large_logits_module_and_gradcheck():
    x = RNG.standard_normal((8, 10)) * 3
    x[0, 3] = 1000.0
    x[1, 2] = -1000.0
    t = RNG.integers(0, 10, 8)
    ours = nn.CrossEntropyLoss(label_smoothing=0.05)
    theirs = torch.nn.CrossEntropyLoss(label_smoothing=0.05)
    y = both(ours, theirs, [x, t], grads=(0,), dtype=np.float32, ints=(1,))
    assert np.isfinite(y.item())
    w = RNG.uniform(0.5, 2, 10)
    ours = nn.CrossEntropyLoss(weight=cr.tensor(w), ignore_index=3)
    theirs = torch.nn.CrossEntropyLoss(weight=torch.tensor(w), ignore_index=3)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["weight"]
    both(ours, theirs, [x, t], grads=(0,), ints=(1,))
    xs = cr.tensor(RNG.standard_normal((3, 4)), requires_grad=True)
    assert gradcheck(lambda x: F.cross_entropy(x, cr.tensor([0, 3, 1]), label_smoothing=0.1), [xs])


@pytest.mark.parametrize("shape, tshape", CE_SHAPES + [((0, 4), (0,))])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignore", [False, True])
@pytest.mark.filterwarnings("ignore:invalid value encountered")  # 'mean' of nothing: 0/0
def test_cross_entropy_second_order_matches_torch(shape, tshape, reduction, weighted, ignore):
    """Class-index cross-entropy is one node, CrossEntropy, whose gradient under create_graph
    is a graph of its own: its gradient (a Hessian-vector product) against PyTorch's."""
    rng = np.random.default_rng(4)
    c = shape[1] if len(shape) > 1 else shape[0]
    x, v = rng.standard_normal(shape) * 2, rng.standard_normal(shape)
    t = rng.integers(0, c, tshape)
    if ignore and t.ndim:
        t.flat[::2] = 1
    w = rng.uniform(0.5, 2, c) if weighted else None
    ii = 1 if ignore else -100
    hvps = []
    for lib, fn in ((cr, F.cross_entropy), (torch, TF.cross_entropy)):
        xs = lib.tensor(x, requires_grad=True)
        loss = fn(
            xs,
            lib.tensor(t),
            None if w is None else lib.tensor(w),
            ignore_index=ii,
            reduction=reduction,
        )
        up = lib.tensor(np.random.default_rng(5).uniform(0.5, 2, tuple(loss.shape)))
        (gx,) = lib.autograd.grad(loss, xs, up, create_graph=True)
        (gx * lib.tensor(v)).sum().backward()
        hvps.append((gx.detach().numpy(), xs.grad.numpy()))
    np.testing.assert_allclose(
        hvps[0][0], hvps[1][0], **tolerances.tol(np.float64, tolerances.LAYER)
    )
    np.testing.assert_allclose(
        hvps[0][1], hvps[1][1], **tolerances.tol(np.float64, tolerances.LAYER)
    )


def test_cross_entropy_is_one_node_with_finite_difference_gradients():
    x = cr.tensor(RNG.standard_normal((4, 3, 2)), requires_grad=True)
    t, w = cr.tensor([[0, 2], [1, 1], [2, 0], [1, 2]]), cr.tensor([0.5, 1.0, 2.0])
    loss = F.cross_entropy(x, t, w, ignore_index=2)
    assert loss.grad_fn.op == "CrossEntropy"
    assert [p.grad_fn for p in loss.grad_fn.inputs if isinstance(p, cr.Tensor)] == [None]
    for reduction in REDUCTIONS:

        def fn(x, reduction=reduction):
            return F.cross_entropy(x, t, w, ignore_index=2, reduction=reduction)

        assert gradcheck(fn, [x])
        assert gradgradcheck(fn, [x])


@pytest.mark.parametrize("shape, tshape", CE_SHAPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss_matches_torch(shape, tshape, reduction, weighted):
    rng = np.random.default_rng(3)
    c = shape[1] if len(shape) > 1 else shape[0]
    logp = rng.standard_normal(shape)
    t = rng.integers(0, c, tshape)
    if t.ndim:
        t.flat[0] = 2  # ignored below
    w = rng.uniform(0.5, 2, c) if weighted else None
    both(
        lambda x, t, w: F.nll_loss(x, t, w, ignore_index=2, reduction=reduction),
        lambda x, t, w: TF.nll_loss(x, t, w, ignore_index=2, reduction=reduction),
        [logp, t, w],
        grads=(0,),
        ints=(1,),
    )


def test_nll_loss_module_composes_with_log_softmax():
    x, t = RNG.standard_normal((5, 4)), RNG.integers(0, 4, 5)
    both(
        lambda x, t: nn.NLLLoss()(nn.LogSoftmax(dim=1)(x), t),
        lambda x, t: torch.nn.NLLLoss()(torch.nn.LogSoftmax(dim=1)(x), t),
        [x, t],
        grads=(0,),
        ints=(1,),
    )
    w = RNG.uniform(0.5, 2, 4)
    both(
        nn.NLLLoss(weight=cr.tensor(w), reduction="sum"),
        torch.nn.NLLLoss(weight=torch.tensor(w), reduction="sum"),
        [x, t],
        grads=(0,),
        ints=(1,),
    )


@pytest.mark.filterwarnings("ignore:invalid value encountered")
def test_all_targets_ignored_gives_nan_like_torch():
    """The loss is 0/0 = NaN, as PyTorch's; the gradient is 0, as PyTorch's (it was NaN)."""
    x, t = np.zeros((2, 3)), np.array([1, 1])
    xc, xt = cr.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    for reduction in ("mean", "sum"):
        ours = F.cross_entropy(xc, cr.tensor(t), ignore_index=1, reduction=reduction)
        theirs = TF.cross_entropy(xt, torch.tensor(t), ignore_index=1, reduction=reduction)
        np.testing.assert_array_equal(ours.item(), theirs.item())  # NaN for 'mean'
        ours.backward()
        theirs.backward()
        np.testing.assert_array_equal(xc.grad.numpy(), xt.grad.numpy())
    np.testing.assert_array_equal(xc.grad.numpy(), np.zeros((2, 3)))


def test_class_index_errors():
    x = cr.randn(3, 5)
    with pytest.raises(
        IndexError, match=r"cross_entropy: target index 7 is out of range for 5 classes \(C\)"
    ):
        F.cross_entropy(x, cr.tensor([0, 7, 1]))
    with pytest.raises(IndexError, match="nll_loss: target index -3 is out of range for 5 classes"):
        F.nll_loss(x, cr.tensor([0, -3, 1]))
    F.cross_entropy(x, cr.tensor([0, -100, 1]))  # the default ignore_index is allowed
    with pytest.raises(
        ValueError,
        match=r"cross_entropy: expected target of shape \(3,\) for input of shape \(3, 5\)",
    ):
        F.cross_entropy(x, cr.tensor([0, 1]))
    with pytest.raises(
        ValueError, match=r"expected weight of shape \(5,\) \(one per class\); got \(4,\)"
    ):
        F.cross_entropy(x, cr.tensor([0, 1, 2]), weight=cr.ones(4))
    with pytest.raises(ValueError, match=r"label_smoothing must be in \[0, 1\]; got 1.5"):
        F.cross_entropy(x, cr.tensor([0, 1, 2]), label_smoothing=1.5)


# -- one_hot ------------------------------------------------------------------------------


def test_one_hot_matches_torch():
    idx = np.array([[0, 2], [3, 1]])
    for n in (-1, 6):
        ours = F.one_hot(cr.tensor(idx), n)
        theirs = TF.one_hot(torch.tensor(idx), n)
        assert ours.dtype == cr.int64 and ours.shape == tuple(theirs.shape)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    with pytest.raises(IndexError, match="one_hot: index 3 is out of range for num_classes 3"):
        F.one_hot(cr.tensor([0, 3]), 3)
    with pytest.raises(
        TypeError, match="one_hot: indices must be integers; got dtype chainrule.float32"
    ):
        F.one_hot(cr.tensor([0.0]))


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8", "uint64"])
def test_class_index_targets_of_every_integer_dtype(dtype):
    """Targets of any integer dtype: in range, the loss and gradient are torch's (whose
    targets are int64); a negative one (seen as a huge unsigned value by the range check)
    or one past the last class is an error naming it, in both losses."""
    rng = np.random.default_rng(6)
    logits = rng.standard_normal((5, 4))
    target = np.array([3, 0, 2, 1, 3], dtype=dtype)
    x = cr.tensor(logits, requires_grad=True)
    xt = torch.tensor(logits, requires_grad=True)
    F.cross_entropy(x, cr.tensor(target)).backward()
    TF.cross_entropy(xt, torch.tensor(target.astype(np.int64))).backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-12, atol=1e-15)
    bad = [-1, 4] if np.dtype(dtype).kind == "i" else [4]
    for b in bad:
        t = target.copy()
        t[2] = b
        for loss, inp in ((F.cross_entropy, x), (F.nll_loss, x.log_softmax(1))):
            with pytest.raises(IndexError, match=f"target index {b} is out of range for 4"):
                loss(inp, cr.tensor(t))
