"""User mistakes: each class raises the right exception with a message that names the op and
every shape, dim, dtype or value involved (`<op>: <what is wrong>; got <...>`)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import nn


def exactly(text: str) -> str:
    """A pattern that matches the whole message, literally."""
    return "^" + re.escape(text) + "$"


# -- broadcasting -----------------------------------------------------------------------------

BROADCAST = [
    ("add", lambda a, b: a + b),
    ("sub", lambda a, b: a - b),
    ("mul", lambda a, b: a * b),
    ("div", lambda a, b: a / b),
    ("pow", lambda a, b: a.abs() ** b),
    ("maximum", cr.maximum),
    ("minimum", cr.minimum),
    ("less", lambda a, b: a < b),
]


@pytest.mark.parametrize(("op", "fn"), BROADCAST, ids=[op for op, _ in BROADCAST])
def test_broadcast_mismatch_names_the_op_and_both_shapes(op, fn) -> None:
    x, y = cr.ones(2, 3), cr.ones(4)
    with pytest.raises(
        ValueError, match=exactly(f"{op}: shapes (2, 3) and (4,) cannot be broadcast together")
    ):
        fn(x, y)


def test_broadcast_mismatch_with_the_tensor_on_the_right_and_an_array() -> None:
    with pytest.raises(
        ValueError, match=exactly("add: shapes (5,) and (2, 3) cannot be broadcast together")
    ):
        np.ones(5) + cr.ones(2, 3)


def test_broadcast_mismatch_of_three_operands_in_where() -> None:
    with pytest.raises(
        ValueError, match=exactly("where: shapes (3,), (3,) and (2,) cannot be broadcast together")
    ):
        cr.where(cr.ones(3) > 0, cr.ones(3), cr.ones(2))


def test_expand_to_an_incompatible_shape() -> None:
    with pytest.raises(
        ValueError, match=exactly("expand: shape (2, 3) cannot be broadcast to (4, 3)")
    ):
        cr.ones(2, 3).expand(4, 3)


# -- matmul ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "what"),
    [
        ((2, 3), (4, 2), "inner dimensions differ"),
        ((3,), (2, 4), "inner dimensions differ"),
        ((2, 4), (3,), "inner dimensions differ"),
        ((5, 2, 3), (4, 2), "inner dimensions differ"),
        ((2, 3, 4), (3, 4, 5), "batch dimensions cannot be broadcast"),
        ((), (2, 3), "both operands need at least 1 dim"),
    ],
)
def test_matmul_mismatch_names_both_shapes(a, b, what) -> None:
    x, y = cr.ones(*a), cr.ones(*b)
    with pytest.raises(ValueError, match=exactly(f"matmul: {what}; got shapes {a} and {b}")):
        x @ y


def test_linear_functional_with_the_wrong_weight_width() -> None:
    with pytest.raises(
        ValueError,
        match=exactly("linear: expected input with last dim 5 (weight.shape[1]); got shape (2, 3)"),
    ):
        F.linear(cr.ones(2, 3), cr.ones(4, 5))


# -- reshape -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "shape"),
    [
        ("reshape", (4, 2)),
        ("reshape", (-1, 4)),
        ("view", (-1, -1)),
        ("reshape", (0, -1)),
        ("reshape", (-2, 3)),
    ],
)
def test_reshape_to_an_incompatible_shape(method, shape) -> None:
    x = cr.ones(2, 3)
    with pytest.raises(
        ValueError,
        match=exactly(
            f"reshape: shape {shape} is invalid for a tensor of shape (2, 3) (6 elements)"
        ),
    ):
        getattr(x, method)(*shape)


def test_permute_with_a_repeated_dim() -> None:
    with pytest.raises(
        ValueError,
        match=exactly(
            "permute: dims (1, 1) are not a permutation of the 2 dims of a tensor of shape (2, 3)"
        ),
    ):
        cr.ones(2, 3).permute(1, 1)


# -- dims --------------------------------------------------------------------------------------

DIM_OPS = [
    ("sum", 2, lambda x: x.sum(2)),
    ("sum", -3, lambda x: x.sum((0, -3))),
    ("mean", 2, lambda x: x.mean(dim=2)),
    ("mean", 5, lambda x: x.mean(axis=5)),
    ("amax", 2, lambda x: x.amax(2, keepdim=True)),
    ("logsumexp", -3, lambda x: x.logsumexp(-3)),
    ("softmax", 2, lambda x: x.softmax(2)),
    ("log_softmax", -3, lambda x: F.log_softmax(x, dim=-3)),
    ("max", 2, lambda x: x.max(2)),
    ("argmax", -3, lambda x: x.argmax(-3)),
    ("var", 3, lambda x: x.var(3)),
    ("transpose", 2, lambda x: x.transpose(0, 2)),
    ("permute", 2, lambda x: x.permute(2, 0)),
    ("squeeze", 2, lambda x: x.squeeze(2)),
    ("flatten", 2, lambda x: x.flatten(0, 2)),
    ("cat", 2, lambda x: cr.cat([x, x], dim=2)),
    ("split", 2, lambda x: x.split(1, dim=2)),
    ("gather", 2, lambda x: x.gather(2, cr.zeros(2, 3, dtype=cr.int64))),
    ("size", -3, lambda x: x.size(-3)),
]


@pytest.mark.parametrize(("op", "dim", "fn"), DIM_OPS, ids=[f"{o}-{d}" for o, d, _ in DIM_OPS])
def test_dim_out_of_range_names_the_op_dim_and_shape(op, dim, fn) -> None:
    with pytest.raises(
        IndexError,
        match=exactly(
            f"{op}: dim {dim} is out of range for a tensor of shape (2, 3) (expected a dim in "
            "[-2, 1])"
        ),
    ):
        fn(cr.ones(2, 3))


@pytest.mark.parametrize(
    ("op", "fn"), [("unsqueeze", lambda x: x.unsqueeze(3)), ("stack", lambda x: cr.stack([x], 3))]
)
def test_dims_that_insert_a_dim_allow_one_more(op, fn) -> None:
    x = cr.ones(2, 3)  # the valid range is one wider: -3..2
    with pytest.raises(
        IndexError,
        match=exactly(
            f"{op}: dim 3 is out of range for a tensor of shape (2, 3) (expected a dim in [-3, 2])"
        ),
    ):
        fn(x)


def test_repeated_reduction_dim() -> None:
    with pytest.raises(
        ValueError, match=exactly("sum: dim (0, -2) repeats a dim; got shape (2, 3)")
    ):
        cr.ones(2, 3).sum((0, -2))


def test_dim_of_the_wrong_type() -> None:
    with pytest.raises(
        TypeError, match=exactly("sum: dim must be an int or a tuple of ints; got float")
    ):
        cr.ones(2, 3).sum(1.0)


# -- dtypes ------------------------------------------------------------------------------------

INT_REQUIRES_GRAD = [
    ("chainrule.int64", lambda: cr.tensor([1, 2], requires_grad=True)),
    ("chainrule.int64", lambda: cr.arange(3).requires_grad_()),
    ("chainrule.int32", lambda: cr.zeros(2, dtype=cr.int32, requires_grad=True)),
    ("chainrule.int64", lambda: cr.full((2,), 3, requires_grad=True)),
    ("chainrule.bool", lambda: cr.tensor([True, False], requires_grad=True)),
    ("chainrule.int64", lambda: nn.Parameter(np.arange(3))),
]


@pytest.mark.parametrize(("dtype", "make"), INT_REQUIRES_GRAD)
def test_an_integer_or_bool_tensor_cannot_require_grad(dtype, make) -> None:
    with pytest.raises(
        TypeError,
        match=exactly(
            f"requires_grad: only floating-point tensors can require grad; got dtype {dtype}"
        ),
    ):
        make()


def test_integer_tensors_still_combine_with_float_ones() -> None:
    """The rule above is about gradients only: int * float promotes and differentiates."""
    w = cr.tensor([0.5, 2.0], requires_grad=True)
    (cr.arange(2) * w).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [0.0, 1.0])


def test_where_with_a_non_bool_condition() -> None:
    with pytest.raises(
        TypeError, match=exactly("where: condition must be a bool tensor; got dtype int64")
    ):
        cr.where(cr.tensor([1, 0]), 1.0, 0.0)


def test_mean_of_an_integer_tensor() -> None:
    with pytest.raises(
        TypeError, match=exactly("mean: needs a floating-point tensor; got dtype chainrule.int64")
    ):
        cr.arange(4).mean()


def test_unsupported_operand_type() -> None:
    with pytest.raises(
        TypeError, match=exactly("mul: unsupported operand of type str with a Tensor")
    ):
        cr.ones(2) * "2"


def test_unknown_dtype_name_lists_the_known_ones() -> None:
    with pytest.raises(
        TypeError,
        match=r"^dtype: unknown dtype name 'complex'; use one of "
        r"\['bfloat16', 'bool', 'double', 'float'",
    ):
        cr.zeros(2, dtype="complex")


def test_regression_ragged_list_names_the_op() -> None:
    """Regression: a ragged nested list surfaced NumPy's bare 'setting an array element with
    a sequence', naming neither chainrule's op nor the input."""
    with pytest.raises(
        ValueError,
        match=r"^tensor: cannot make a tensor of list; .*"
        r"inhomogeneous shape after 1 dimensions",
    ):
        cr.tensor([[1.0, 2.0], [3.0]])
    with pytest.raises(
        ValueError,
        match=r"^tensor: cannot make a tensor of list; could not "
        r"convert string to float: 'a'$",
    ):
        cr.tensor(["a", 1.0], dtype=cr.float32)


# -- indexing ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("index", "what"),
    [
        (5, "index 5 is out of bounds for axis 0 with size 2"),
        ((slice(None), [0, 3]), "index 3 is out of bounds for axis 1 with size 3"),
        ((0, 0, 0), "too many indices for array: array is 2-dimensional, but 3 were indexed"),
    ],
)
def test_index_out_of_bounds_names_the_shape(index, what) -> None:
    with pytest.raises(IndexError, match=exactly(f"getitem: {what}; got shape (2, 3)")):
        cr.ones(2, 3)[index]


def test_boolean_mask_of_the_wrong_length() -> None:
    with pytest.raises(
        IndexError,
        match=r"^getitem: boolean index did not match .* size of "
        r"axis is 2 but size of corresponding boolean axis is 3; "
        r"got shape \(2, 3\)$",
    ):
        cr.ones(2, 3)[cr.tensor([True, False, True])]


# One row per message of the reordering and selecting ops: (exception, message, call).
SELECTING = [
    (
        ValueError,
        "tril: needs a tensor of at least 2 dims; got shape (3,)",
        lambda: cr.ones(3).tril(),
    ),
    (
        ValueError,
        "triu: needs a tensor of at least 2 dims; got shape ()",
        lambda: cr.ones(()).triu(),
    ),
    (
        IndexError,
        "cumsum: dim 2 is out of range for a tensor of shape (2, 3) (expected a dim in [-2, 1])",
        lambda: cr.ones(2, 3).cumsum(2),
    ),
    (
        ValueError,
        "flip: dim (0, -2) repeats a dim; got shape (2, 3)",
        lambda: cr.ones(2, 3).flip(0, -2),
    ),
    (
        ValueError,
        "roll: shifts (1, 2) and dims (0,) differ in length; got shape (2, 3)",
        lambda: cr.ones(2, 3).roll((1, 2), 0),
    ),
    (
        ValueError,
        "roll: without dims, shifts must be one int; got (1, 2) for shape (2, 3)",
        lambda: cr.ones(2, 3).roll((1, 2)),
    ),
    (
        ValueError,
        "repeat: sizes must be non-negative ints, at least one per dim; got sizes (2,) for shape "
        "(2, 3)",
        lambda: cr.ones(2, 3).repeat(2),
    ),
    (
        ValueError,
        "repeat_interleave: repeats must be an int or an integer tensor of 1 or 3 values (the size "
        "of dim 1); got dtype int64 and shape (2,) for shape (2, 3)",
        lambda: cr.ones(2, 3).repeat_interleave(cr.tensor([1, 2]), 1),
    ),
    (
        ValueError,
        "repeat_interleave: repeats must not be negative; got [-1]",
        lambda: cr.ones(2, 3).repeat_interleave([-1]),
    ),
    (
        ValueError,
        "topk: k 4 is out of range for dim -1 of size 3; got shape (2, 3)",
        lambda: cr.ones(2, 3).topk(4),
    ),
    (
        IndexError,
        "sort: dim 2 is out of range for a tensor of shape (2, 3) (expected a dim in [-2, 1])",
        lambda: cr.ones(2, 3).sort(2),
    ),
    (
        ValueError,
        "scatter: index must be an integer tensor with self's dims, no larger than src in any dim "
        "nor than self in a dim but 1; got index of dtype int64 and shape (3, 1), self (2, 3) "
        "and src (2, 3)",
        lambda: cr.ones(2, 3).scatter(1, cr.tensor([[0], [1], [2]]), cr.ones(2, 3)),
    ),
    (
        IndexError,
        "scatter_add: index 2 is out of range for dim 0 of size 2; got shape (2, 3)",
        lambda: cr.ones(2, 3).scatter_add(0, cr.tensor([[2]]), cr.ones(2, 3)),
    ),
    (
        TypeError,
        "scatter: src must have self's dtype; got chainrule.float32 and chainrule.float64",
        lambda: cr.ones(2, 3).scatter(0, cr.tensor([[1]]), cr.ones(1, 1, dtype=cr.float64)),
    ),
    (
        ValueError,
        "index_add: source must have shape (2, 2) (self's, with dim 1 as long as index); got "
        "self (2, 3), index (2,) and source (2, 3)",
        lambda: cr.ones(2, 3).index_add(1, cr.tensor([0, 2]), cr.ones(2, 3)),
    ),
    (
        ValueError,
        "addmm: needs two 2-D tensors; got shapes (2, 3) and (3,)",
        lambda: cr.addmm(cr.ones(2), cr.ones(2, 3), cr.ones(3)),
    ),
    (
        ValueError,
        "baddbmm: batch sizes or inner dimensions differ; got shapes (2, 2, 3) and (3, 3, 4)",
        lambda: cr.baddbmm(cr.ones(4), cr.ones(2, 2, 3), cr.ones(3, 3, 4)),
    ),
    (
        ValueError,
        "addmm: input of shape (3,) cannot be broadcast to the product's shape (2, 4); got shapes "
        "(2, 3) and (3, 4)",
        lambda: cr.addmm(cr.ones(3), cr.ones(2, 3), cr.ones(3, 4)),
    ),
    (
        IndexError,
        "index_select: index 3 is out of range for dim 1 of size 3; got shape (2, 3)",
        lambda: cr.ones(2, 3).index_select(1, cr.tensor([0, 3])),
    ),
    (
        ValueError,
        "index_select: index must be an integer tensor of at most 1 dim; got dtype int64 and "
        "shape (1, 1)",
        lambda: cr.ones(2, 3).index_select(0, cr.tensor([[0]])),
    ),
    (
        TypeError,
        "masked_select: mask must be a bool tensor; got dtype float32",
        lambda: cr.ones(2, 3).masked_select(cr.ones(3)),
    ),
    (
        ValueError,
        "masked_select: shapes (2, 3) and (2,) cannot be broadcast together",
        lambda: cr.ones(2, 3).masked_select(cr.tensor([True, False])),
    ),
]


@pytest.mark.parametrize(("kind", "message", "call"), SELECTING, ids=[m for _, m, _ in SELECTING])
def test_reordering_and_selecting_ops_name_the_op_and_the_shapes(kind, message, call) -> None:
    with pytest.raises(kind, match=exactly(message)):
        call()


def test_float_index_array() -> None:
    with pytest.raises(
        IndexError,
        match=exactly("getitem: index arrays must be integer or bool; got dtype float32"),
    ):
        cr.ones(3)[cr.tensor([0.0, 1.0])]


# -- losses ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("op", "loss", "logits", "target", "bad", "shapes"),
    [
        (
            "cross_entropy",
            F.cross_entropy,
            (2, 3),
            [0, 3],
            3,
            "(2, 3) (classes in dim 1) and target shape (2,)",
        ),
        (
            "cross_entropy",
            F.cross_entropy,
            (2, 3, 4),
            [[0, 1, 2, 0], [0, -1, 0, 0]],
            -1,
            "(2, 3, 4) (classes in dim 1) and target shape (2, 4)",
        ),
        (
            "cross_entropy",
            F.cross_entropy,
            (3,),
            7,
            7,
            "(3,) (classes in dim 0) and target shape ()",
        ),
        (
            "nll_loss",
            F.nll_loss,
            (2, 3),
            [-2, 0],
            -2,
            "(2, 3) (classes in dim 1) and target shape (2,)",
        ),
        (
            "cross_entropy",
            nn.CrossEntropyLoss(),
            (2, 3),
            [5, 0],
            5,
            "(2, 3) (classes in dim 1) and target shape (2,)",
        ),
        (
            "nll_loss",
            nn.NLLLoss(),
            (2, 3),
            [0, 4],
            4,
            "(2, 3) (classes in dim 1) and target shape (2,)",
        ),
    ],
)
def test_regression_class_index_out_of_range_names_both_shapes(
    op, loss, logits, target, bad, shapes
) -> None:
    """Regression: the message named the index and the class count but neither the input
    nor the target shape, so a target for the wrong layout was hard to place."""
    x = cr.randn(*logits, requires_grad=True)
    with pytest.raises(
        IndexError,
        match=exactly(
            f"{op}: target index {bad} is out of range for 3 classes (C); got input shape "
            f"{shapes}; expected values in [0, 2] or ignore_index=-100"
        ),
    ):
        loss(x, cr.tensor(target))


def test_ignore_index_is_not_out_of_range() -> None:
    x = cr.randn(2, 3)
    loss = F.cross_entropy(x, cr.tensor([-100, 1]))
    np.testing.assert_allclose(loss.item(), -x.log_softmax(1)[1, 1].item(), rtol=1e-6)


def test_target_of_the_wrong_shape() -> None:
    with pytest.raises(
        ValueError,
        match=exactly(
            "cross_entropy: expected target of shape (2,) for input of shape (2, 3) (class dim 1); "
            "got (3,)"
        ),
    ):
        F.cross_entropy(cr.randn(2, 3), cr.tensor([0, 1, 2]))


def test_elementwise_loss_shapes_differ() -> None:
    with pytest.raises(
        ValueError, match=exactly("mse_loss: input and target shapes differ; got (3,) and (4,)")
    ):
        F.mse_loss(cr.ones(3), cr.ones(4))


def test_embedding_index_out_of_range() -> None:
    with pytest.raises(
        IndexError,
        match=exactly(
            "embedding: index 4 is out of range for num_embeddings 4; got indices of shape (2,)"
        ),
    ):
        nn.Embedding(4, 2)(cr.tensor([0, 4]))


# -- layers ------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(5, 4), (4,), (2, 7, 2)])
def test_linear_given_input_of_the_wrong_width(shape) -> None:
    layer = nn.Linear(3, 2)
    with pytest.raises(
        ValueError,
        match=exactly(f"Linear: expected input with last dim 3 (in_features); got shape {shape}"),
    ):
        layer(cr.ones(*shape))


def test_wrong_width_deep_in_a_sequential_names_the_layer() -> None:
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(6, 1))
    with pytest.raises(
        ValueError,
        match=exactly("Linear: expected input with last dim 6 (in_features); got shape (2, 8)"),
    ):
        model(cr.ones(2, 4))


def test_conv2d_given_the_wrong_number_of_channels() -> None:
    with pytest.raises(
        ValueError,
        match=exactly(
            "Conv2d: the input has 2 channels but the weight expects 3 (3 per group x 1 groups); "
            "got input shape (1, 2, 5, 5) and weight shape (4, 3, 3, 3)"
        ),
    ):
        nn.Conv2d(3, 4, 3)(cr.ones(1, 2, 5, 5))


def test_norm_layers_given_the_wrong_feature_count() -> None:
    with pytest.raises(
        ValueError,
        match=exactly(
            "BatchNorm1d: expected input with 4 channels (num_features) in dim 1; got shape (5, 3)"
        ),
    ):
        nn.BatchNorm1d(4)(cr.ones(5, 3))
    with pytest.raises(
        ValueError,
        match=exactly(
            "LayerNorm: expected input with trailing shape (4,) (normalized_shape); got "
            "shape (5, 3)"
        ),
    ):
        nn.LayerNorm(4)(cr.ones(5, 3))


# -- state dicts -------------------------------------------------------------------------------


def test_load_state_dict_lists_missing_unexpected_and_misshaped_keys_at_once() -> None:
    model = nn.Sequential(nn.Linear(3, 2), nn.ReLU(), nn.Linear(2, 1))
    before = {k: v.numpy().copy() for k, v in model.state_dict().items()}
    state = model.state_dict()
    del state["2.bias"], state["0.bias"]
    state["2.weight"] = cr.zeros(1, 5)
    state["0.weight"] = cr.zeros(3, 2)
    state["head.weight"] = cr.zeros(1)
    state["extra"] = cr.zeros(1)
    message = (
        "load_state_dict: error(s) in loading state_dict for Sequential:\n\t"
        "Unexpected key(s) in state_dict: 'head.weight', 'extra'\n\t"
        "Missing key(s) in state_dict: '0.bias', '2.bias'\n\t"
        "size mismatch for 0.weight: copying a param with shape (3, 2), the shape in the "
        "current model is (2, 3)\n\t"
        "size mismatch for 2.weight: copying a param with shape (1, 5), the shape in the "
        "current model is (1, 2)"
    )
    with pytest.raises(RuntimeError, match=exactly(message)):
        model.load_state_dict(state)
    for k, v in model.state_dict().items():  # nothing was copied
        np.testing.assert_array_equal(v.numpy(), before[k])


def test_load_state_dict_not_strict_still_refuses_a_wrong_shape() -> None:
    model = nn.Linear(3, 2)
    keys = model.load_state_dict({"weight": cr.zeros(2, 3), "other": cr.ones(1)}, strict=False)
    assert keys.missing_keys == ["bias"] and keys.unexpected_keys == ["other"]
    with pytest.raises(
        RuntimeError,
        match=r"size mismatch for bias: copying a param with shape "
        r"\(3,\), the shape in the current model is \(2,\)",
    ):
        model.load_state_dict({"bias": cr.zeros(3)}, strict=False)


# -- graph misuse ------------------------------------------------------------------------------


def test_backward_through_a_freed_graph() -> None:
    x = cr.ones(3, requires_grad=True)
    y = (x.exp() * 2.0).sum()
    y.backward()
    with pytest.raises(
        RuntimeError,
        match=r"^Sum: backward: trying to backward through the "
        r"graph a second time .* Pass retain_graph=True",
    ):
        y.backward()


def test_a_result_whose_graph_was_freed_cannot_be_reused() -> None:
    x = cr.ones(3, requires_grad=True)
    h = x.exp()
    (h * 2.0).sum().backward()
    with pytest.raises(
        RuntimeError,
        match=r"^Exp: backward: trying to backward through the "
        r"graph a second time",
    ):
        (h * 3.0).sum().backward()


def test_grad_through_a_freed_graph() -> None:
    x = cr.ones(3, requires_grad=True)
    y = x.sin().sum()
    cr.grad(y, x)
    with pytest.raises(
        RuntimeError,
        match=r"^Sum: backward: trying to backward through the "
        r"graph a second time",
    ):
        cr.grad(y, x)


@pytest.mark.parametrize("shape", [(3,), (2, 2), (1, 2)])
def test_backward_of_a_non_scalar_without_a_gradient(shape) -> None:
    y = cr.ones(*shape, requires_grad=True) * 2.0
    with pytest.raises(
        RuntimeError,
        match=exactly(
            "backward: grad can be implicitly created only for outputs with one element; got "
            f"shape {shape}; pass gradient= (grad_outputs=) of that shape"
        ),
    ):
        y.backward()
    with pytest.raises(
        RuntimeError,
        match=exactly(
            f"grad: grad can be implicitly created only for outputs with one element; got shape "
            f"{shape}; pass gradient= (grad_outputs=) of that shape"
        ),
    ):
        cr.grad(y, y)


def test_one_element_non_scalar_needs_no_gradient() -> None:
    x = cr.ones(1, 1, requires_grad=True)
    (x * 3.0).backward()
    assert x.grad.item() == 3.0


def test_backward_with_a_gradient_of_the_wrong_shape() -> None:
    y = cr.ones(3, requires_grad=True) * 2.0
    with pytest.raises(
        RuntimeError,
        match=exactly("backward: gradient has shape (2,) but the output has shape (3,)"),
    ):
        y.backward(cr.ones(2))


def test_backward_of_a_tensor_that_does_not_require_grad() -> None:
    with cr.no_grad():
        y = cr.ones(2, requires_grad=True).sum()
    with pytest.raises(
        RuntimeError,
        match=r"^backward: the tensor does not require grad and has "
        r"no grad_fn",
    ):
        y.backward()


def test_in_place_assignment_to_a_tensor_that_requires_grad() -> None:
    x = cr.ones(3, requires_grad=True)
    with pytest.raises(
        RuntimeError,
        match=exactly(
            "setitem: a leaf tensor that requires grad (shape (3,)) is used in an in-place "
            "operation; do it under cr.no_grad(), or on a clone"
        ),
    ):
        x[0] = 2.0


def test_item_of_a_tensor_with_many_elements() -> None:
    with pytest.raises(
        ValueError, match=exactly("item: only one-element tensors have an item; got shape (2, 3)")
    ):
        cr.ones(2, 3).item()


def test_truth_value_of_a_tensor_with_many_elements() -> None:
    with pytest.raises(
        RuntimeError,
        match=exactly(
            "bool: the truth value of a tensor of shape (2,) is ambiguous; use .any() or .all()"
        ),
    ):
        bool(cr.ones(2) > 0)


# -- optimizers, data, checkpoints -------------------------------------------------------------


def test_optimizer_hyperparameters_name_the_bad_value() -> None:
    params = list(nn.Linear(2, 2).parameters())
    with pytest.raises(ValueError, match=exactly("SGD: invalid learning rate; got -1.0")):
        cr.optim.SGD(params, lr=-1.0)
    with pytest.raises(
        ValueError, match=exactly("Adam: invalid beta parameter at index 0; got 1.5")
    ):
        cr.optim.Adam(params, betas=(1.5, 0.9))


def test_data_mistakes() -> None:
    with pytest.raises(
        ValueError, match=exactly("DataLoader: batch_size must be a positive int or None; got 0")
    ):
        cr.data.DataLoader(cr.data.TensorDataset(cr.ones(2)), batch_size=0)
    with pytest.raises(
        ValueError,
        match=exactly(
            "TensorDataset: all tensors must have the same size in dim 0; got shapes [(2, 3), (3,)]"
        ),
    ):
        cr.data.TensorDataset(cr.ones(2, 3), cr.ones(3))


def test_regression_save_into_a_missing_folder_names_it(tmp_path) -> None:
    """Regression: the error named the hidden temporary file, not the folder or the path."""
    path = tmp_path / "missing" / "model.safetensors"
    with pytest.raises(
        FileNotFoundError,
        match=exactly(
            f"save: the folder {str(path.parent)!r} does not exist; got path {str(path)!r}"
        ),
    ):
        cr.save({"w": cr.ones(2)}, path)
    assert list(tmp_path.iterdir()) == []


SILENT = """
import numpy as np
import chainrule as cr
x = cr.tensor([0.0, 1.0, -1.0], requires_grad=True)
y = x.log() + (1 / x) + x.sqrt() + (x * 1e30).exp()  # inf and NaN on purpose, as in torch
y.sum().backward()
np.log(np.zeros(1))  # the user's own NumPy code: its warning is kept
"""


def test_ops_making_inf_or_nan_are_silent_as_pytorchs_but_not_the_users_numpy() -> None:
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-c", SILENT], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    warned = [line for line in result.stderr.splitlines() if "RuntimeWarning" in line]
    assert len(warned) == 1 and "<string>:7" in warned[0], result.stderr  # the np.log line
    strict = subprocess.run([sys.executable, "-W", "error::RuntimeWarning", "-c", SILENT],
                            capture_output=True, text=True)  # fmt: skip
    assert strict.returncode != 0 and "log: divide by zero encountered in log" in strict.stderr


def test_backward_through_floor_divide_fails_as_pytorchs() -> None:
    """floor_divide has no derivative in PyTorch: backward through it raises there, and
    here, rather than leave its share of the gradient out silently."""
    import torch

    ours, theirs = cr.ones(2, requires_grad=True), torch.ones(2, requires_grad=True)
    assert (ours // 2).requires_grad == (theirs // 2).requires_grad is True
    with pytest.raises(RuntimeError, match="derivative for aten::floor_divide is not implemented"):
        ((theirs // 2) * theirs).sum().backward()
    with pytest.raises(RuntimeError, match="floor_divide: the derivative is not implemented"):
        ((ours // 2) * ours).sum().backward()
    detached = (ours.detach() // 2) * ours  # the way out: no gradient through the quotient
    detached.sum().backward()
    np.testing.assert_array_equal(ours.grad.numpy(), [0.0, 0.0])
    assert (cr.tensor([7, -7]) // 2).tolist() == [3, -4] and (7 // cr.tensor(2)).item() == 3
