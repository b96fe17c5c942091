"""vmap's randomness (batching.py's random rules) against torch.func.vmap, number for number
from the same seed: 'same' draws once for every example, 'different' once for the batch,
'error' refuses; and a func that does what cannot be batched runs once per example, never
once more."""

import numpy as np
import pytest
import torch
import torch.func as tf

import chainrule as cr
import chainrule.func as cf

B = 3


def _nn(lib):
    return lib.nn.functional


# (name, the draw as func of one mapped input for lib, shape of the input, in_dims, dtype)
CASES = [
    ("rand", lambda lib, a: a + lib.rand(4, dtype=lib.float64), (B, 4), 0, "float64"),
    ("randn_float32", lambda lib, a: a + lib.randn(20), (B, 20), 0, "float32"),
    ("randint", lambda lib, a: a + lib.randint(0, 10, (5,)), (B, 5), 0, "float64"),
    ("normal_numbers", lambda lib, a: a + lib.normal(0.0, 2.0, (5,)), (B, 5), 0, "float64"),
    ("randperm", lambda lib, a: a + lib.randperm(5), (B, 5), 0, "float64"),
    ("rand_like_dim1", lambda lib, a: lib.rand_like(a), (5, B), 1, "float64"),
    ("randn_like_dim1", lambda lib, a: lib.randn_like(a), (20, B), 1, "float32"),
    ("randint_like", lambda lib, a: lib.randint_like(a, 7), (B, 5), 0, "float64"),
    ("uniform_dim1", lambda lib, a: a.uniform_(), (5, B), 1, "float64"),
    ("normal_", lambda lib, a: a.normal_(), (B, 20), 0, "float64"),
    ("bernoulli_", lambda lib, a: a.bernoulli_(0.3), (B, 20), 0, "float64"),
    ("dropout", lambda lib, a: _nn(lib).dropout(a + 1, 0.5), (B, 6), 0, "float64"),
    ("dropout_dim1", lambda lib, a: _nn(lib).dropout(a + 1, 0.3), (6, B), 1, "float32"),
    ("dropout_of_a_constant",
     lambda lib, a: a + _nn(lib).dropout(lib.ones(6, dtype=lib.float64), 0.5), (B, 6), 0,
     "float64"),
]  # fmt: skip
# a draw from each example's values: 'same' is refused by both
PER_EXAMPLE = [
    ("bernoulli", lambda lib, a: lib.bernoulli(a + 0.5), (B, 5), 0, "float64"),
    ("normal_of_means_dim1", lambda lib, a: lib.normal(a, 2.0), (5, B), 1, "float64"),
]


def _both(fn, shape, in_dims, dtype, randomness, nested=False):
    """(ours, PyTorch's) from the same seed; an exception where one refuses."""
    x = np.zeros(shape)
    outs = []
    for lib, func in ((cr, cf), (torch, tf)):
        lib.manual_seed(0)
        if nested:
            mapped = func.vmap(func.vmap(lambda a, lib=lib: fn(lib, a), randomness=randomness),
                               randomness=randomness)  # fmt: skip
        else:
            mapped = func.vmap(lambda a, lib=lib: fn(lib, a), in_dims, randomness=randomness)
        try:
            outs.append(mapped(lib.tensor(x, dtype=getattr(lib, dtype))))
        except RuntimeError as err:
            outs.append(err)
    return outs


def _equal(ours, theirs):
    assert not isinstance(ours, Exception), ours
    assert not isinstance(theirs, Exception), theirs
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("randomness", ["same", "different"])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_draws_equal_torch_func_vmaps(case, randomness):
    _, fn, shape, in_dims, dtype = case
    _equal(*_both(fn, shape, in_dims, dtype, randomness))


@pytest.mark.parametrize("case", PER_EXAMPLE, ids=[c[0] for c in PER_EXAMPLE])
def test_draws_from_each_examples_values_equal_torch_or_are_refused_as_by_it(case):
    _, fn, shape, in_dims, dtype = case
    _equal(*_both(fn, shape, in_dims, dtype, "different"))
    ours, theirs = _both(fn, shape, in_dims, dtype, "same")
    assert isinstance(theirs, RuntimeError)
    with pytest.raises(RuntimeError, match="randomness='same' on a batched tensor"):
        raise ours


@pytest.mark.parametrize("randomness", ["same", "different"])
def test_nested_draws_equal_torch_func_vmaps(randomness):
    _equal(*_both(CASES[0][1], (2, B, 4), 0, "float64", randomness, nested=True))
    _equal(*_both(CASES[11][1], (2, B, 4), 0, "float64", randomness, nested=True))


def test_the_draws_of_the_same_and_of_different_examples_are_what_torch_draws():
    """'different' is one draw of the batch's shape, 'same' one of an example's shape."""
    ours = cf.vmap(lambda a: a + cr.rand(4, dtype=cr.float64), randomness="different")
    cr.manual_seed(5)
    got = ours(cr.zeros(B, 4, dtype=cr.float64))
    torch.manual_seed(5)
    np.testing.assert_array_equal(got.numpy(), torch.rand(B, 4, dtype=torch.float64).numpy())
    cr.manual_seed(5)
    got = cf.vmap(lambda a: a + cr.rand(4, dtype=cr.float64), randomness="same")(
        cr.zeros(B, 4, dtype=cr.float64)
    )
    torch.manual_seed(5)
    one = torch.rand(4, dtype=torch.float64).numpy()
    np.testing.assert_array_equal(got.numpy(), np.broadcast_to(one, (B, 4)))


@pytest.mark.parametrize(
    "case", CASES[:1] + CASES[8:9] + CASES[11:12], ids=["rand", "uniform_", "dropout"]
)
def test_a_draw_in_randomness_error_mode_is_refused_as_by_torch(case):
    _, fn, shape, in_dims, dtype = case
    ours, theirs = _both(fn, shape, in_dims, dtype, "error")
    assert isinstance(theirs, RuntimeError) and "randomness error mode" in str(theirs)
    with pytest.raises(RuntimeError, match="random operation while in randomness error mode"):
        raise ours


def test_different_draws_in_place_into_a_tensor_not_batched_at_the_level_are_refused():
    def inner(lib, a):
        return lambda b: b + a.uniform_()  # a is batched at the outer level only

    x, y = np.zeros((2, 4)), np.zeros((B, 4))
    with pytest.raises(RuntimeError, match="Cannot ask for different inplace randomness"):
        tf.vmap(lambda a: tf.vmap(inner(torch, a), randomness="different")(torch.tensor(y)),
                randomness="different")(torch.tensor(x))  # fmt: skip
    with pytest.raises(RuntimeError, match="uniform_ with randomness='different' on a tensor not"):
        cf.vmap(lambda a: cf.vmap(inner(cr, a), randomness="different")(cr.tensor(y)),
                randomness="different")(cr.tensor(x))  # fmt: skip


# -- each example runs once ------------------------------------------------------------------


def test_a_func_whose_ops_batch_runs_once():
    calls = []

    def f(a):
        calls.append(1)
        return a.sin() * 2

    cf.vmap(f)(cr.ones(5, 3))
    assert len(calls) == 1


def test_a_func_reading_a_value_runs_once_per_example_and_no_more():
    calls = []

    def f(a):
        calls.append(1)  # a side effect before what cannot be batched
        return a * 2 if a.sum().item() > 0 else -a

    x = np.random.default_rng(0).standard_normal((5, 3))
    got = cf.vmap(f)(cr.tensor(x))
    assert len(calls) == 5  # the first example's call went on; 4 more, not 1 + 5
    want = np.stack([r * 2 if r.sum() > 0 else -r for r in x])
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-15)


def test_a_func_writing_in_place_runs_batched_or_once_per_example():
    calls = []

    def f(lib):
        def write(a):
            calls.append(1)
            b = a * 2.0
            b.add_(1.0)  # in place on a batched tensor
            return b + a.sort().values

        return write

    x = np.random.default_rng(1).standard_normal((4, 3))
    got = cf.vmap(f(cr))(cr.tensor(x))
    assert len(calls) == 1  # no graph to record: the batch written in place
    want = tf.vmap(f(torch))(torch.tensor(x)).numpy()
    np.testing.assert_allclose(got.numpy(), want)
    calls.clear()
    got = cf.vmap(f(cr))(cr.tensor(x, requires_grad=True))
    assert len(calls) == 4  # recorded: the first example's call went on, then 3 more
    np.testing.assert_allclose(got.detach().numpy(), want)


def test_a_transform_inside_vmap_runs_once_per_example_and_no_more():
    calls = []

    def f(a):
        calls.append(1)
        return cf.jvp(lambda t: t.sin() * t, (a,), (a * 0 + 1,))[1]

    x = np.random.default_rng(2).standard_normal((3, 4))
    got = cf.vmap(f)(cr.tensor(x))
    assert len(calls) == 3
    want = tf.vmap(lambda a: tf.jvp(lambda t: t.sin() * t, (a,), (torch.ones_like(a),))[1])
    np.testing.assert_allclose(got.numpy(), want(torch.tensor(x)).numpy(), rtol=1e-12)


def test_nested_vmaps_reading_a_value_run_each_example_once():
    calls = []

    def f(b):
        calls.append(1)
        return b * 3 if b.sum().item() > 0 else b

    x = np.random.default_rng(3).standard_normal((2, 3, 4))
    got = cf.vmap(cf.vmap(f))(cr.tensor(x))
    assert len(calls) == 6
    want = np.stack([[r * 3 if r.sum() > 0 else r for r in rows] for rows in x])
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-15)
