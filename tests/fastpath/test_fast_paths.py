"""The speed tricks: the rows scatter-add behind Embedding's gradient and the cube as
products against np.add.at and PyTorch (on both of add_rows' strategies, with repeats,
negative indices and empty lookups), erf, GELU and LayerNorm against PyTorch; the table of
tricks against the source (every switch has its row, every row its switch); and for each
switch, the fast line's results against the plain line's."""

import ast
import math
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule import fastpath
from chainrule.fastpath.rules import ADD_AT_MAX, add_rows


@contextmanager
def switch(on):
    """The block with the fast path on or off in this thread, then as it was."""
    before = fastpath.enabled()
    fastpath.set_enabled(on)
    try:
        yield
    finally:
        fastpath.set_enabled(before)


@pytest.fixture
def fast_path_on():
    """The fast path on, whatever CHAINRULE_FASTPATH says: for a test of a trick's own
    property, which its plain line does not have."""
    with switch(True):
        yield


def bound(idx, g, rows):
    """Per-row sum of |terms|: how far two summation orders may drift apart."""
    m = np.zeros((rows,) + g.shape[idx.ndim :])
    np.add.at(m, idx, np.abs(g).astype(np.float64))
    return m


# (rows, index shape, row shape): few distinct rows repeated often (reduceat), many
# distinct rows repeated rarely (rounds), a row of one element, one row repeated only
CASES = [(27, (32, 16), (64,)), (1000, (32, 64), (8,)), (5, (4000,), ()), (1, (300,), (3, 2))]


@pytest.mark.parametrize("rows,shape,row", CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_add_rows_matches_add_at(rows, shape, row, dtype):
    rng = np.random.default_rng(0)
    idx = rng.integers(-rows, rows, shape)
    g = (rng.standard_normal(shape + row) * 10.0 ** rng.integers(-3, 3, shape + row)).astype(dtype)
    want = np.zeros((rows,) + row, dtype)
    np.add.at(want, idx, g)
    got = np.zeros((rows,) + row, dtype)
    add_rows(got, idx, g)
    eps = np.finfo(dtype).eps
    assert (np.abs(got - want) <= 8 * eps * bound(idx, g, rows)).all()


def test_add_rows_rounds_are_add_at_bit_for_bit():
    rng = np.random.default_rng(1)
    idx = rng.integers(0, 5000, 4000)  # most rows once, a few twice or three times
    g = rng.standard_normal((4000, 16)).astype(np.float32)
    want = np.zeros((5000, 16), np.float32)
    np.add.at(want, idx, g)
    got = np.zeros((5000, 16), np.float32)
    add_rows(got, idx, g)
    assert np.array_equal(got, want)


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("shape", [(8, 40, 40), (3, 3, 4)])  # slices of 320+ and of 12 or fewer
def test_index_add_by_slices_is_add_at_bit_for_bit(dim, shape):
    rng = np.random.default_rng(2)
    x = rng.standard_normal(shape).astype(np.float32)
    idx = np.array([1, 0, 1, 2])  # 1 twice: its two slices add in index's order
    src_shape = list(shape)
    src_shape[dim] = len(idx)
    src = rng.standard_normal(src_shape).astype(np.float32)

    def run():
        return [cr.tensor(x).index_add(dim, cr.tensor(idx), cr.tensor(src), alpha=0.5)]

    assert_same(run, exact=True)
    want = torch.tensor(x).index_add(dim, torch.tensor(idx), torch.tensor(src), alpha=0.5)
    np.testing.assert_allclose(run()[0].numpy(), want.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("vocab,shape", [(27, (32, 16)), (500, (16, 40)), (3, (2, 0))])
def test_embedding_gradient_against_torch(vocab, shape):
    rng = np.random.default_rng(2)
    w = rng.standard_normal((vocab, 64)).astype(np.float32)
    idx = rng.integers(0, vocab, shape)
    up = rng.standard_normal(shape + (64,)).astype(np.float32)
    assert up.size == 0 or up.size > ADD_AT_MAX or shape == (2, 0)
    ours = cr.tensor(w, requires_grad=True)
    cr.nn.functional.embedding(cr.tensor(idx), ours).backward(cr.tensor(up))
    theirs = torch.tensor(w, requires_grad=True)
    torch.nn.functional.embedding(torch.tensor(idx), theirs).backward(torch.tensor(up))
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-5, atol=1e-5)


def test_negative_row_indices_gradient_against_torch():
    rng = np.random.default_rng(3)
    w = rng.standard_normal((50, 100))
    idx = rng.integers(-50, 50, 200)
    ours = cr.tensor(w, requires_grad=True)
    ours[cr.tensor(idx)].sum().backward()
    theirs = torch.tensor(w, requires_grad=True)
    theirs[torch.tensor(idx)].sum().backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("exponent", [3, 3.0])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.usefixtures("fast_path_on")  # a ** 3, the plain line, rounds otherwise
def test_cube_is_torch_bit_for_bit(exponent, dtype):
    x = np.random.default_rng(4).standard_normal(1000).astype(dtype) * 100
    x[:5] = [np.inf, -np.inf, np.nan, -0.0, 1e30]
    ours = cr.tensor(x, requires_grad=True)
    out = ours**exponent
    theirs = torch.tensor(x, requires_grad=True)
    expected = theirs**exponent
    assert out.dtype == cr.tensor(x).dtype
    np.testing.assert_array_equal(out.numpy(), expected.detach().numpy())
    out.sum().backward()
    expected.sum().backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-6)


def test_cube_of_integers_stays_integer():
    x = np.arange(-5, 6)
    np.testing.assert_array_equal((cr.tensor(x) ** 3).numpy(), (torch.tensor(x) ** 3).numpy())
    assert (cr.tensor(x) ** 3).dtype == cr.int64


def test_cube_of_a_0d_tensor_and_its_second_derivative():
    x = cr.tensor(1.5, dtype=cr.float64, requires_grad=True)
    (g,) = cr.autograd.grad(x**3, x, create_graph=True)
    (h,) = cr.autograd.grad(g, x)
    assert (x**3).item() == 1.5**3 and g.item() == 3 * 1.5**2 and h.item() == 6 * 1.5


def test_write_in_another_thread_between_forward_and_backward_is_caught():
    """Nodes skip comparing versions while the process's count of in-place writes is
    unchanged since they were recorded; a write from any thread changes it."""
    import threading

    w = cr.randn(3, 3, requires_grad=True)
    x = cr.randn(2, 3)
    loss = (x @ w).tanh().sum()  # tanh saves its output, matmul its inputs
    worker = threading.Thread(target=lambda: x.mul_(2.0))
    worker.start()
    worker.join()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


def test_unrelated_writes_leave_the_gradient_as_before():
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((4, 5)), rng.standard_normal((5, 2))
    ours = cr.tensor(a, requires_grad=True)
    loss = (ours @ cr.tensor(b)).sigmoid().sum()
    other = cr.zeros(3)
    other.add_(1.0)  # some other tensor written in place: every node now checks
    loss.backward()
    theirs = torch.tensor(a, requires_grad=True)
    (theirs @ torch.tensor(b)).sigmoid().sum().backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-12)


def ulps(ours, theirs):
    """|ours - theirs| in units in the last place of theirs (float32)."""
    return np.abs(ours.astype(np.float64) - theirs) / np.spacing(np.abs(theirs).astype(np.float32))


def test_float32_erf_within_one_ulp_of_torch():
    x = np.concatenate(
        [
            np.linspace(-6, 6, 400_001, dtype=np.float32),  # many pieces
            np.float32(10.0) ** np.linspace(-38, 1, 20_000, dtype=np.float32),
            np.array([0.0, -0.0, 1e-45, 3.9, 3.95, 4.0, 4.1, 1e30, np.inf, -np.inf], np.float32),
        ]
    )
    ours = cr.tensor(x).erf().numpy()
    theirs = torch.erf(torch.tensor(x)).numpy()
    assert ours.dtype == np.float32
    assert ulps(ours, theirs).max() <= 1
    assert np.signbit(ours[x == 0]).tolist() == np.signbit(theirs[x == 0]).tolist()
    assert np.isnan(cr.tensor(np.array([np.nan], np.float32)).erf().item())


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gelu_over_many_pieces_and_a_strided_input_against_torch(approximate, dtype):
    rng = np.random.default_rng(6)
    x = (rng.standard_normal((3, 40_000)) * 4).astype(dtype)
    up = rng.standard_normal((40_000, 3)).astype(dtype)
    ours = cr.tensor(x, requires_grad=True)
    out = cr.nn.functional.gelu(ours.t(), approximate=approximate)  # a strided view
    out.backward(cr.tensor(up))
    theirs = torch.tensor(x, requires_grad=True)
    expected = torch.nn.functional.gelu(theirs.t(), approximate=approximate)
    expected.backward(torch.tensor(up))
    tol = {"rtol": 2e-6, "atol": 1e-6} if dtype == np.float32 else {"rtol": 1e-13, "atol": 1e-15}
    if approximate == "tanh":  # where x << 0, 1 + tanh cancels: one ulp of the tanh (NumPy's
        # and PyTorch's differ by that) moves the gradient by about 1e-6 of its scale
        tol["atol"] = 1e-5 if dtype == np.float32 else 1e-13
    assert out.dtype == cr.tensor(x).dtype
    np.testing.assert_allclose(out.numpy(), expected.detach().numpy(), **tol)
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), **tol)


@pytest.mark.usefixtures("fast_path_on")  # Phi in float32; the plain line rounds erf's
def test_float32_gelu_and_its_slope_against_float64():
    """Phi made in float32 from exp(-x^2 / 2) and a polynomial: GELU and its slope within
    a few parts in 10^7 where values are ordinary, 4.2e-6 in the far tails (the rounding of
    x^2 in the exponent), and no cancellation for x << 0, where PyTorch's float32 loses all
    its digits."""
    x = np.concatenate([np.linspace(-12, 12, 600_001), [0.0, -0.0]]).astype(np.float32)
    ours = cr.tensor(x, requires_grad=True)
    out = cr.nn.functional.gelu(ours)
    out.backward(cr.ones(x.shape))
    wide = x.astype(np.float64)
    x64 = torch.tensor(wide, requires_grad=True)
    torch.nn.functional.gelu(x64).backward(torch.ones(x.shape, dtype=torch.float64))
    slope = x64.grad.numpy()  # Phi + x phi: float64's 0.5 (1 + erf) is off by 1e-16 at most
    # x Phi(x) as x erfc(-x / sqrt 2) / 2, which keeps its digits where 1 + erf cancels
    erfc = np.frompyfunc(math.erfc, 1, 1)
    exact = wide * erfc(-wide / math.sqrt(2)).astype(np.float64) / 2
    got, got_slope = out.numpy().astype(np.float64), ours.grad.numpy().astype(np.float64)
    ordinary = np.abs(x) < 3
    tiny = np.abs(exact) < 1e-37  # below float32's normal numbers
    rel = np.abs(got - exact) / np.abs(exact)
    assert rel[ordinary & (exact != 0)].max() < 6e-7
    assert rel[~tiny & (exact != 0)].max() < 5e-6
    assert np.abs(got - exact)[tiny].max() < 1e-37
    # the slope's Phi and x phi: relative to the larger of their magnitudes
    x_phi = wide * np.exp(-wide * wide / 2) / math.sqrt(2 * math.pi)
    scale = np.maximum(np.abs(slope - x_phi), np.abs(x_phi))
    assert (np.abs(got_slope - slope) / scale)[ordinary].max() < 2e-6
    assert np.abs(got_slope - slope).max() < 1e-6
    assert out.numpy()[-2:].tolist() == [0.0, 0.0] and np.signbit(out.numpy()[-1])
    assert ours.grad.numpy()[-2:].tolist() == [0.5, 0.5]
    special = cr.nn.functional.gelu(cr.tensor(np.array([np.inf, -np.inf, np.nan], np.float32)))
    # -inf * 0 is NaN, as in PyTorch; at +inf PyTorch's float32 gives NaN too, float64 inf
    np.testing.assert_array_equal(special.numpy(), [np.inf, np.nan, np.nan])


@pytest.mark.usefixtures("fast_path_on")  # Phi in float32, not 0.5 (1 + erf), the plain line
def test_gelu_refuses_integers_and_keeps_half_precision():
    x = np.arange(-4, 5)
    with pytest.raises(TypeError, match="gelu"):  # torch's CPU kernel refuses integers too
        cr.nn.functional.gelu(cr.tensor(x))
    with pytest.raises(RuntimeError):
        torch.nn.functional.gelu(torch.tensor(x))
    # Phi = 0.5 (1 + erf) cancels for x << 0: made in float64 from an erf good to 2e-9,
    # it is 3e-5 off at x = -4, where PyTorch's float32 is 1.6e-3 off; so compared with
    # PyTorch's float64
    np.testing.assert_allclose(
        cr.nn.functional.gelu(cr.tensor(x, dtype=cr.float32)).numpy(),
        torch.nn.functional.gelu(torch.tensor(x, dtype=torch.float64)).numpy(),
        rtol=5e-5,
    )
    h = np.linspace(-3, 3, 50).astype(np.float16)
    ours = cr.nn.functional.gelu(cr.tensor(h))
    assert ours.dtype == cr.float16
    np.testing.assert_allclose(
        ours.numpy().astype(np.float32),
        torch.nn.functional.gelu(torch.tensor(h).float()).numpy(),
        rtol=2e-3,
        atol=1e-3,
    )


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_layer_norm_primitive_against_torch(dtype):
    rng = np.random.default_rng(7)
    x = (rng.standard_normal((6, 40, 32)) * 3 + 1).astype(dtype)
    w, b = rng.standard_normal(32).astype(dtype), rng.standard_normal(32).astype(dtype)
    up = rng.standard_normal((40, 6, 32)).astype(dtype)
    ours = [cr.tensor(a, requires_grad=True) for a in (x, w, b)]
    out = cr.nn.functional.layer_norm(ours[0].transpose(0, 1), (32,), ours[1], ours[2])
    out.backward(cr.tensor(up))
    wide = np.float32 if dtype == np.float16 else dtype  # PyTorch's CPU half: as float32
    theirs = [torch.tensor(a.astype(wide), requires_grad=True) for a in (x, w, b)]
    expected = torch.nn.functional.layer_norm(theirs[0].transpose(0, 1), (32,), *theirs[1:])
    expected.backward(torch.tensor(up.astype(wide)))
    assert out.dtype == cr.tensor(x).dtype
    tol = {np.float32: 1e-5, np.float64: 1e-12, np.float16: 2e-2}[dtype]
    np.testing.assert_allclose(out.numpy(), expected.detach().numpy(), rtol=tol, atol=tol)
    for a, t in zip(ours, theirs, strict=True):
        assert a.grad.dtype == a.dtype
        np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=tol, atol=tol * 10)


def test_layer_norm_checks_its_weight_shape():
    with pytest.raises(ValueError, match=r"layer_norm: weight must have the normalized shape"):
        cr.nn.functional.layer_norm(cr.randn(2, 4), (4,), cr.ones(3))


# -- the table of tricks is complete -------------------------------------------------------

SRC = Path(cr.__file__).parent  # src/chainrule


def _module(path):
    """chainrule.ops.linalg for src/chainrule/ops/linalg.py."""
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _functions(tree):
    """(qualified name, node) of every function in a module: f, Class.method, f.inner."""
    found = []

    def walk(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found.append((prefix + child.name, child))
                walk(child, prefix + child.name + ".")
            elif isinstance(child, ast.ClassDef):
                walk(child, prefix + child.name + ".")
            else:
                walk(child, prefix)

    walk(tree, "")
    return found


def _calls(node, name):
    """Whether a function's own body (not a function nested in it) calls fastpath.<name>()."""
    todo = list(ast.iter_child_nodes(node))
    while todo:
        n = todo.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if (
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute)
            and n.func.attr == name
            and isinstance(n.func.value, ast.Name)
            and n.func.value.id == "fastpath"
        ):
            return True
        todo.extend(ast.iter_child_nodes(n))
    return False


def _asks_the_switch(node):
    """Whether a function chooses by the switch: it calls fastpath.enabled(), and not to put
    the switch back after setting it (as the ONNX export's trace does)."""
    return _calls(node, "enabled") and not _calls(node, "set_enabled")


def _sources():
    """{module name: (path, {qualified name: asks the switch})} for every file of src/chainrule."""
    out = {}
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        out[_module(path)] = (path, {name: _asks_the_switch(f) for name, f in _functions(tree)})
    return out


def test_every_switch_has_a_row_in_the_table():
    """Every function of src/chainrule that calls fastpath.enabled() is named by the ``where``
    of some row of TRICKS."""
    named = {t.where for t in fastpath.TRICKS}
    missing = [
        f"{path.relative_to(SRC.parent.parent)}: {name} calls fastpath.enabled(); add a Trick "
        f"whose where is '{module}:{name}' to src/chainrule/fastpath/table.py"
        for module, (path, functions) in _sources().items()
        for name, asks in functions.items()
        if asks and f"{module}:{name}" not in named
    ]
    assert not missing, "\n".join(missing)


def test_every_row_of_the_table_names_a_switch():
    """Every row's ``where`` names a function that exists and calls fastpath.enabled(), or a
    function of fastpath's own modules (which read the switch's state)."""
    sources = _sources()
    wrong = []
    for trick in fastpath.TRICKS:
        module, _, name = trick.where.partition(":")
        if module not in sources:
            wrong.append(f"{trick.name}: no module {module} in src/chainrule")
            continue
        path, functions = sources[module]
        where = path.relative_to(SRC.parent.parent)
        if name not in functions:
            wrong.append(f"{trick.name}: {where} has no function {name}; fix its row's where")
        elif not functions[name] and not module.startswith("chainrule.fastpath."):
            wrong.append(f"{trick.name}: {where}: {name} does not call fastpath.enabled()")
    assert not wrong, "\n".join(wrong)


def test_every_row_says_what_it_saves_and_what_runs_instead():
    for trick in fastpath.TRICKS:
        assert trick.name and trick.saves and trick.plain, trick


# -- each switch: the fast line and the plain line give the same results --------------------


def both_ways(run):
    """run() with the switch on, then off: two lists of arrays."""
    results = []
    for on in (True, False):
        with switch(on):
            results.append([np.asarray(a) for a in run()])
    return results


def assert_same(run, exact=False):
    fast, plain = both_ways(run)
    assert len(fast) == len(plain)
    for f, p in zip(fast, plain, strict=True):
        assert f.shape == p.shape and f.dtype == p.dtype
        if exact:
            np.testing.assert_array_equal(f, p)
        else:
            np.testing.assert_allclose(f, p, rtol=1e-5, atol=1e-6)


def values_and_grads(fn, *arrays):
    """fn's output and the gradients of every input, for a fixed random upstream gradient."""
    ts = [cr.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
    out = fn(*ts)
    up = np.random.default_rng(99).standard_normal(out.shape).astype(out.detach().numpy().dtype)
    out.backward(cr.tensor(up))
    return [out.detach().numpy()] + [t.grad.numpy() for t in ts if t.requires_grad]


RNG = np.random.default_rng(11)


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("rows", [8, 64])  # transposed (8 < 32 outputs) and not
def test_linear_transposed_product_and_gradient_order(rows):
    x, w, b, w2 = f32(rows, 24), f32(32, 24), f32(32), f32(16, 32)
    F = cr.nn.functional

    def two_layers(x, w, b, w2):  # the second one's input is the first's transposed output
        return F.linear(F.linear(x, w, b).relu(), w2)

    assert_same(lambda: values_and_grads(two_layers, x, w, b, w2))


def test_linear_batch_as_one_matrix():
    x, w, b = f32(3, 5, 24), f32(32, 24), f32(32)
    assert_same(lambda: values_and_grads(cr.nn.functional.linear, x, w, b))


@pytest.mark.parametrize(
    "shapes",
    [((3,), (3,)), ((3,), (3, 4)), ((2, 3), (3,)), ((1, 1), (1, 1)), ((2, 3), (3, 4)),
     ((5, 2, 3), (3, 4)), ((3,), (5, 3, 4)), ((5, 2, 3), (3,)), ((1, 5, 2, 3), (5, 3, 4)),
     ((2, 3), (5, 3, 4))],
)  # fmt: skip
@pytest.mark.parametrize("wants", ["both", "a", "b"])
def test_matmul_rule_on_arrays_every_rank(shapes, wants):
    a, b = f32(*shapes[0]), f32(*shapes[1])

    def product(a, b):
        a.requires_grad_(wants != "b")
        b.requires_grad_(wants != "a")
        return a @ b

    assert_same(lambda: values_and_grads(product, a, b))


@pytest.mark.parametrize("op", ["softmax", "log_softmax", "amax", "sum", "mean", "var",
                                "logsumexp"])  # fmt: skip
def test_column_major_copy_for_short_rows(op):
    x = f32(64, 10)  # 64 rows of 10: the copy's case
    assert_same(lambda: values_and_grads(lambda t: getattr(t, op)(-1), x))


@pytest.mark.parametrize("groups", [1, 2])
def test_conv_orientations(groups):
    x, w, b = f32(3, 4, 9, 8), f32(6, 4 // groups, 3, 3), f32(6)
    assert_same(lambda: values_and_grads(
        lambda x, w, b: cr.nn.functional.conv2d(x, w, b, stride=2, padding=1, groups=groups),
        x, w, b))  # fmt: skip


@pytest.mark.parametrize("mode", ["RNN", "LSTM", "GRU"])
def test_recurrent_weights_row_major(mode):
    from chainrule.ops import rnn as rnn_ops

    G = {"RNN": 1, "LSTM": 4, "GRU": 3}[mode]
    x, h0, c0 = f32(5, 2, 3), f32(2, 4), f32(2, 4)
    w_ih, w_hh, b_ih, b_hh = f32(G * 4, 3), f32(G * 4, 4), f32(G * 4), f32(G * 4)
    if mode == "LSTM":

        def layer(x, h0, c0, *w):
            return rnn_ops.LSTMLayer.apply(x, h0, c0, *w, reverse=False)

        arrays = (x, h0, c0, w_ih, w_hh, b_ih, b_hh)
    else:

        def layer(x, h0, *w):
            if mode == "GRU":
                return rnn_ops.GRULayer.apply(x, h0, *w, reverse=True)
            return rnn_ops.RNNLayer.apply(x, h0, *w, reverse=False, relu=False)

        arrays = (x, h0, w_ih, w_hh, b_ih, b_hh)
    assert_same(lambda: values_and_grads(layer, *arrays))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cube_as_products(dtype):
    x = (RNG.standard_normal(100) * 3).astype(dtype)
    assert_same(lambda: values_and_grads(lambda t: t**3, x))


def test_float32_erf():
    x = np.concatenate([np.linspace(-5, 5, 20001), [0.0, -0.0, np.inf, -np.inf]]).astype(np.float32)
    assert_same(lambda: values_and_grads(lambda t: t.erf(), x))


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gelu_pieces_and_slope(approximate, dtype):
    x = (RNG.standard_normal(40000) * 3).astype(dtype)  # three pieces
    assert_same(lambda: values_and_grads(
        lambda t: cr.nn.functional.gelu(t, approximate=approximate), x))  # fmt: skip


def test_attention_softmax_in_place():
    q, k, v = f32(2, 3, 6, 8), f32(2, 3, 7, 8), f32(2, 3, 7, 5)
    mask = RNG.random((6, 7)) > 0.3
    mask[0] = False  # a row with every key masked
    attention = cr.nn.functional.scaled_dot_product_attention

    def masked(q, k, v):
        return attention(q, k, v, cr.tensor(mask))

    def causal(q, k, v):
        return attention(q, k, v, is_causal=True)

    assert_same(lambda: values_and_grads(masked, q, k, v))
    assert_same(lambda: values_and_grads(causal, q, k, v))


@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm_in_place(affine):
    x, w, b = f32(4, 6, 32) * 3 + 1, f32(32), f32(32)
    arrays = (x, w, b) if affine else (x,)

    def norm(x, w=None, b=None):
        return cr.nn.functional.layer_norm(x, (32,), w, b)

    assert_same(lambda: values_and_grads(norm, *arrays))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_targets_by_plain_indexing(reduction):
    x, t = f32(16, 5), cr.tensor(RNG.integers(0, 5, 16))
    F = cr.nn.functional

    def cross_entropy(x):
        return F.cross_entropy(x, t, reduction=reduction)

    def nll_loss(x):
        return F.nll_loss(x.log_softmax(1), t, reduction=reduction)

    assert_same(lambda: values_and_grads(cross_entropy, x))
    assert_same(lambda: values_and_grads(nll_loss, x))


def test_monitor_moments_and_sample():
    from chainrule.tools.monitor import Sampler, moments

    x = f32(300, 70) * 2 + 0.5
    assert_same(lambda: [np.array(moments(x)), np.array(moments(x, float(x.sum())))])
    sampler = Sampler(1024)
    assert_same(lambda: [sampler(x)], exact=True)


@pytest.mark.parametrize("kernel,stride", [(2, 2), (3, 2)])  # windows apart, overlapping
def test_max_pool_gradient_in_place(kernel, stride):
    x = f32(2, 3, 9, 8)
    assert_same(
        lambda: values_and_grads(lambda t: cr.nn.functional.max_pool2d(t, kernel, stride), x),
        exact=True,
    )


# -- where each layout trick applies (with the switch off, nowhere) --------------------------


def test_class_rows_take_the_column_major_copy_only_with_the_switch_on():
    """A (64, 10) array reduced over its rows reaches _column_major's copy; fewer rows, more
    classes or another dim do not, and with the switch off nothing does."""
    from chainrule.ops.reduce import _column_major

    a = np.zeros((64, 10), np.float32)
    with switch(True):
        copy = _column_major(a, 1)
        assert copy.flags.f_contiguous and not copy.flags.c_contiguous
        lines = _column_major(np.zeros((4, 8, 3), np.float32), 2)  # 32 lines of 3
        assert lines.shape == (4, 8, 3) and lines.strides == (32, 4, 128)  # last outermost
        for other, dims in ((np.zeros((16, 10)), 1), (np.zeros((64, 32)), (1,)), (a, 0), (a, None)):
            assert _column_major(other, dims) is other
    with switch(False):
        assert _column_major(a, 1) is a


@pytest.mark.parametrize(("a", "b"), [((2, 3), (3,)), ((2, 1, 2), (3, 2)), ((), (2,))])
def test_kron_made_on_arrays_where_nothing_records(a, b):
    """kron of tensors that record nothing, with the switch on: the product of the spread
    arrays as one tensor of its own (no view of a product), PyTorch's values either way; a
    node still where an input requires grad."""
    x, y = f32(*a), f32(*b)
    want = torch.kron(torch.tensor(x), torch.tensor(y)).numpy()
    for on in (True, False):
        with switch(on):
            got = cr.kron(cr.tensor(x), cr.tensor(y))
            assert got._base is None or not on  # a tensor of its own, as PyTorch's
            recorded = cr.kron(cr.tensor(x, requires_grad=True), cr.tensor(y))
        assert got.shape == want.shape and got.dtype == cr.float32
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
        assert recorded.grad_fn is not None


@pytest.mark.parametrize("bias", [False, True])
def test_linear_short_batch_is_row_major_with_the_switch_on_or_off(bias):
    """Fewer rows than outputs: (W @ x^T)^T copied into row-major order with the switch on;
    x @ W^T with it off: PyTorch's layout both ways, so view works. Views, indexing and
    reshapes see the same values."""
    x, w, b = f32(5, 6), f32(12, 6), f32(12)
    outs = []
    for on in (True, False):
        with switch(on):
            y = cr.nn.functional.linear(cr.tensor(x), cr.tensor(w), cr.tensor(b) if bias else None)
            assert y.is_contiguous() and y.stride() == (12, 1)
            outs.append([y.numpy(), y.reshape(5, 3, 4).flatten(1).numpy(), y.view(60)[::7].numpy()])
    for fast, plain in zip(*outs, strict=True):
        np.testing.assert_allclose(fast, plain, rtol=1e-5, atol=1e-6)


def _optimizer_steps(make, steps=4):
    """Parameters after `steps` steps of the optimizer `make` builds, from fixed gradients."""
    rng = np.random.default_rng(5)
    params = [cr.nn.Parameter(cr.tensor(rng.standard_normal(s).astype(np.float32)))
              for s in [(6, 5), (5,)]]  # fmt: skip
    opt = make(params)
    for _ in range(steps):
        for p in params:
            p.grad = cr.tensor(rng.standard_normal(p.shape).astype(np.float32))
        opt.step()
    state = [v.numpy() for p in params for v in opt.state[p].values() if isinstance(v, cr.Tensor)]
    return [p.detach().numpy() for p in params] + state


@pytest.mark.parametrize(
    "make",
    [
        lambda ps: cr.optim.Adam(ps, lr=0.1, weight_decay=0.1, amsgrad=True),
        lambda ps: cr.optim.AdamW(ps, lr=0.1, maximize=True),
        lambda ps: cr.optim.RMSprop(ps, lr=0.1, weight_decay=0.1),
        lambda ps: cr.optim.RMSprop(ps, lr=0.1, centered=True, momentum=0.9),
    ],
    ids=["adam-amsgrad-decay", "adamw-maximize", "rmsprop-decay", "rmsprop-centered-momentum"],
)
def test_optimizers_one_scratch_array(make):
    assert_same(lambda: _optimizer_steps(make))


def _scalar_pass():
    """Gradients, twice accumulated, and every step an observer sees, of a small graph of
    Values with a shared node, a product, a weighted sum, a dead ReLU and an inf."""
    from chainrule.scalar import Value, weighted_sum

    a, b, c = Value(1.5), Value(-2.0), Value(0.0)
    h = a * b
    s = weighted_sum(c, [a, b, h], [h, 3.0, a])
    out = s.tanh() + (b.relu() * c.log()) + h * h  # b.relu() is dead, c.log() is -inf
    seen = []
    out.backward(lambda v, g, steps: seen.append([g] + [x for _, d, x in steps for x in (d, x)]))
    out.backward()
    return [np.array([v.grad for v in (a, b, c, h, s)])] + [np.array(r) for r in seen]


def test_scalar_walk_and_sweep():
    assert_same(_scalar_pass, exact=True)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int32])
@pytest.mark.parametrize("other", ["array", "number"])
def test_select_on_bits_is_where(dtype, other):
    """select(mask, x, y) past SELECT_MIN elements is where's result bit for bit: NaN,
    infinities and -0.0 kept, y an array of x's dtype or a number (rounded to x's dtype, as
    where's result has it)."""
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((5, 400)) * 3).astype(dtype)
    y = (rng.standard_normal((5, 400)) * 3).astype(dtype) if other == "array" else -2.7
    if dtype != np.int32:
        x[0, :4] = [np.nan, np.inf, -np.inf, -0.0]
    mask = rng.random((5, 400)) < 0.5
    want = np.where(mask, x, y).astype(dtype)
    for on in (True, False):
        with switch(on):
            got = fastpath.select(mask, x, y)
        assert got.dtype == dtype and got.shape == want.shape
        assert np.array_equal(got.view(np.uint8), want.view(np.uint8)), on


@pytest.mark.parametrize("op", ["addcmul", "addcdiv"])
@pytest.mark.parametrize(
    "shapes",
    [((2048, 3), (3,), (2048, 1)), ((2, 1024, 4), (1024, 1), (4,)), ((), (1, 2), (2048, 1))],
)
def test_short_rows_a_column_at_a_time(op, shapes):
    # the columns (ops/arithmetic.py:spread) give the plain broadcast's values bit for bit,
    # and PyTorch's to a rounding (its fused multiply-add)
    a, t1, t2 = (RNG.standard_normal(s).astype(np.float32) for s in shapes)
    t2 += np.float32(np.sign(t2) * 0.5)  # away from 0, for the division

    def run():
        return [getattr(cr, op)(cr.tensor(a), cr.tensor(t1), cr.tensor(t2), value=0.5)]

    assert_same(run, exact=True)
    theirs = getattr(torch, op)(*map(torch.tensor, (a, t1, t2)), value=0.5).numpy()
    np.testing.assert_allclose(run()[0].numpy(), theirs, rtol=2e-6, atol=1e-6)
