"""Every node's ``_saved_*`` (autograd/saved.py) is PyTorch's: the same names, tensors of the
same shape, dtype and values (or None), the same other values, on every catalog row and
(slow) on every op-database sample whose node is PyTorch's node of the same name over the same
graph; a node PyTorch saves nothing on lists nothing. The exceptions below are nodes that
stand for other work than PyTorch's node of the name, each with its reason."""

from __future__ import annotations

import warnings
from collections import Counter
from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule.autograd import saved
from tests.autograd.test_node_names import catalog_outputs, node_count, op_database_outputs
from tests.ops import test_ops as catalog

# chainrule's node (its table key) -> why its _saved_* are not compared with PyTorch's node of
# the same name: chainrule's one node does the work of several of PyTorch's.
EXCEPTIONS = {
    "Einsum.ViewBackward0": "einsum's one node is PyTorch's products and its last view",
    "EmbeddingBagBackward0": "PyTorch's node keeps its CPU kernel's work arrays (offset2bag, "
    "bag sizes, max indices), which chainrule's one reduction per bag does not make",
}
# Saved values whose contents PyTorch leaves undefined: compared by name only (the nodes, why).
UNDEFINED = {
    "_saved_result1": (
        ("CtcLossBackward0",),
        "ctc_loss's alpha, which PyTorch's kernel leaves unwritten past each input's length "
        "(whatever memory held)",
    ),
    "_saved_noise": (
        ("RreluWithNoiseBackward0", "RreluWithNoiseBackward1"),
        "rrelu's in eval, which PyTorch's kernel never writes (whatever memory held)",
    ),
}
# Catalog rows whose nodes are not compared, each with its reason.
ROWS = {
    "nextafter_": "PyTorch's in-place nextafter saves a clone of self; chainrule's node saves "
    "self itself, then written (nextafter has no gradient in either)",
}
# Op-database entries whose nodes are not compared, each with its reason.
OPS = {
    "nn.functional.adaptive_avg_pool1d": "chainrule pools an unbatched input as (1, C, L), "
    "PyTorch as (C, 1, L): the squeeze's sizes differ",
    "linalg.matrix_power": "chainrule multiplies the powers in another order",
}
# Where chainrule's node holds another value than PyTorch's by design: an eigenvector's or a
# singular vector's sign (LAPACK's drivers choose it differently; either is a
# decomposition), compared up to sign; an integer operand of arithmetic, which chainrule
# casts to the result's dtype before the node saves it, and an index, which chainrule keeps
# as int64 (the values are compared); a random op's draws (dropout's mask), compared by
# shape and dtype.
SIGN_FREE = ("svd", "eigh", "eigvalsh")


def _value(value: Any, lib: Any) -> Any:
    """A saved value in a form both libraries share: a tensor as (shape, dtype, float64
    values), PyTorch's negative ints (printed as unsigned 64-bit numbers) as negative."""
    if isinstance(value, lib.Tensor):
        dtype = str(value.dtype).split(".")[-1]
        return ("tensor", tuple(value.shape), dtype, value.detach().numpy().astype(np.float64))
    if isinstance(value, int) and not isinstance(value, bool) and value >= 2**63:
        return value - 2**64
    if isinstance(value, (tuple, list)):
        return tuple(_value(v, lib) for v in value)
    return value


def read(fn: Any, lib: Any) -> dict[str, Any]:
    """A node's every _saved_*, "refused" where reading it raises (freed by backward)."""
    out = {}
    for attr in [a for a in dir(fn) if a.startswith("_saved_")]:
        try:
            out[attr] = _value(getattr(fn, attr), lib)
        except RuntimeError:
            out[attr] = "refused"
    return out


def _same(got: Any, want: Any, signed: bool | None = True) -> bool:
    if isinstance(got, tuple) and isinstance(want, tuple):
        if got[:1] == ("tensor",) and want[:1] == ("tensor",):
            cast = got[2].startswith("float") and want[2].startswith("int")  # arithmetic's
            index = got[2] == "int64" and want[2].startswith(("int", "uint"))
            a, b = (got[3], want[3]) if signed else (abs(got[3]), abs(want[3]))
            return (
                got[1] == want[1]
                and (got[2] == want[2] or cast or index)
                and (signed is None or np.allclose(a, b, rtol=1e-9, atol=1e-11, equal_nan=True))
            )
        return len(got) == len(want) and all(
            _same(g, w, signed) for g, w in zip(got, want, strict=True)
        )
    if isinstance(got, float) and isinstance(want, float):
        return got == want or (np.isnan(got) and np.isnan(want))
    return type(got) is type(want) and got == want


def _one_call(attr: str, got: Any, want: Any) -> bool:
    """A 0-d input's dim 0 given to a reduction, which chainrule keeps as no dims; var() and
    var(dim=None), one call in chainrule, whose correction PyTorch's node keeps as None and 1."""
    return (got, want) == ((), (0,)) or attr == "_saved_correction" and (got, want) == (1, None)


def _negative(value: Any) -> bool:
    parts = value if isinstance(value, tuple) else (value,)
    return any(isinstance(v, int) and not isinstance(v, bool) and v < 0 for v in parts)


def differences(fa: Any, fb: Any, signed: bool | None = True) -> str:
    """What chainrule's node fa shows that PyTorch's fb does not ("" where they agree). A dim
    or bound PyTorch keeps negative, as given, chainrule keeps normalized: not compared.
    ``signed`` False: tensors compared up to sign; None: by shape and dtype only."""
    got, want = read(fa, cr), read(fb, torch)
    if sorted(got) != sorted(want):
        return f"names {sorted(got)}, PyTorch's {sorted(want)}"
    wrong = [
        f"{k}: {_short(got[k])}, PyTorch's {_short(want[k])}"
        for k in got
        if not _same(got[k], want[k], signed)
        and not _negative(want[k])
        and not _one_call(k, got[k], want[k])
        and not _undefined(fa, k, got)
    ]
    return "; ".join(wrong)


def _undefined(fa: Any, attr: str, got: dict[str, Any]) -> bool:
    """Whether PyTorch's node leaves this value unwritten (rrelu's noise: in eval only)."""
    nodes = UNDEFINED.get(attr, ((), ""))[0]
    return type(fa).__name__ in nodes and got.get("_saved_training") is not True


def _short(value: Any) -> Any:
    if isinstance(value, tuple) and value[:1] == ("tensor",):
        return f"tensor{value[1]} {value[2]} {np.array2string(value[3].ravel()[:4], precision=4)}"
    if isinstance(value, tuple):
        return tuple(_short(v) for v in value)
    return value


def _stand_in(fn: Any) -> bool:
    """A _copy op's node that is an index of the whole input, standing for a view that gave
    its input itself (a permute in order) or for a split's piece: it keeps none of the view's
    arguments."""
    name = type(fn).__name__
    return name.endswith("_copy") and fn.op == "GetItem" and not name.startswith(("Sel", "Sli"))


def compared(
    ours: list[Any], theirs: list[Any], signed: bool | None = True
) -> tuple[int, list[str]]:
    """How many of the outputs' nodes were compared, and the differences found: a node is
    compared where it is PyTorch's node of the same name over as many nodes."""
    count, wrong = 0, []
    for a, b in zip(ours, theirs, strict=False):
        fa, fb = getattr(a, "grad_fn", None), getattr(b, "grad_fn", None)
        if fa is None or fb is None or type(fa).__name__ != type(fb).__name__:
            continue
        if saved.key_of(fa) in EXCEPTIONS or node_count(fa) != node_count(fb) or _stand_in(fa):
            continue
        count += 1
        found = differences(fa, fb, signed)
        if found:
            wrong.append(f"{type(fa).__name__}: {found}")
    return count, wrong


def _catalog(rows: Any) -> tuple[int, list[str]]:
    count, wrong = 0, []
    for row, ours, theirs in rows:
        number_first = not isinstance(row.shapes[0], tuple)  # maximum(2, x): x first in ours
        if row.name in ROWS or number_first and ("maximum" in row.name or "minimum" in row.name):
            continue
        n, found = compared(ours, theirs, not any(s in row.name for s in SIGN_FREE))
        count += n
        wrong += [f"{row.name}: {w}" for w in found]
    return count, wrong


def _backward(outs: list[Any], lib: Any) -> bool:
    """One backward pass through every floating output that has a node, freeing its graph."""
    ends = [o for o in outs if getattr(o, "grad_fn", None) is not None and o.is_floating_point()]
    try:
        lib.autograd.backward([o.sum() for o in ends])
    except RuntimeError:  # an op with no backward (PyTorch's not implemented): kept as it is
        return False
    return bool(ends)


def test_every_catalog_rows_saved_values_are_torchs() -> None:
    count, wrong = _catalog(catalog_outputs())
    assert wrong == [], "\n".join(wrong)
    assert count > 550, count


def _freed(rows: list[tuple[Any, list[Any], list[Any]]]) -> tuple[int, int, list[str]]:
    """Each row's graph freed by a backward pass on both sides, then compared: the tensors
    refused, the other values kept. How many were freed and compared, and the differences."""
    freed = sum(_backward(ours, cr) and _backward(theirs, torch) for _, ours, theirs in rows)
    return (freed, *_catalog(rows))


@pytest.mark.slow
def test_every_catalog_rows_saved_values_are_torchs_after_backward() -> None:
    freed, count, wrong = _freed(catalog_outputs())
    assert wrong == [], "\n".join(wrong)
    assert freed > 300 and count > 550, (freed, count)


# One row of each kind of saved value: an input, the result, a number kept, a call's argument,
# a tensor made as it is read, an optional tensor not given.
FEW = (
    "mul[(2,3)&(2,3)]", "exp", "softplus", "squeeze_dim", "nll_loss", "linalg_det", "max_pool2d",
    "median_dim", "index_int_tensor", "scaled_dot_product_attention_causal", "clamp_min",
)  # fmt: skip


def test_a_few_rows_saved_values_are_torchs_after_backward() -> None:
    rows = [row for row in catalog.ROWS if row.name in FEW]
    runs = []
    for row in rows:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _, _, ours, theirs = catalog._run(row, np.float64)
        runs.append((row, ours, theirs))
    freed, count, wrong = _freed(runs)
    assert wrong == [], "\n".join(wrong)
    assert freed == count == len(rows) > 8, (freed, count, [r.name for r in rows])


@pytest.mark.slow
def test_every_op_database_samples_saved_values_are_torchs() -> None:
    wrong: Counter[str] = Counter()
    count = 0
    from tests.opinfo import harness

    for name, ours, theirs in op_database_outputs():
        if name in OPS:
            continue
        random = {name, name.split(".")[-1]} & harness.RANDOM_OPS or "dropout" in name
        n, found = compared(ours, theirs, None if random else not any(s in name for s in SIGN_FREE))
        count += n
        wrong.update(f"{name}: {w}" for w in found)
    assert not wrong, "\n".join(f"{n} x {k}" for k, n in wrong.most_common())
    assert count > 1000, count


def _saving_nothing(lib: Any) -> dict[str, Any]:
    x = lib.ones(2, 3, requires_grad=True) * 1
    return {"neg": -x, "clone": x.clone(), "t": x.t(), "frac": x.frac(), "sign": x.sign()}


def test_a_node_that_saves_nothing_lists_nothing_and_has_no_saved_self() -> None:
    for lib in (torch, cr):
        for name, y in _saving_nothing(lib).items():
            fn = y.grad_fn
            assert [a for a in dir(fn) if a.startswith("_saved_")] == [], (lib.__name__, name)
            with pytest.raises(AttributeError, match="_saved_self"):
                _ = fn._saved_self


def _written_after_saving(lib: Any) -> dict[str, Any]:
    """Nodes of the kinds saved.py makes tensors for, whose input is then written in place."""
    x = lib.rand(2, 3, dtype=lib.float64) + 0.5
    a = lib.eye(3, dtype=lib.float64) * 2 + 0.1
    x.requires_grad_(), a.requires_grad_()
    x, a = x * 1, a * 1
    nodes = {
        "softplus._saved_self": lib.nn.functional.softplus(x).grad_fn,
        "nll_loss._saved_self": lib.nn.functional.nll_loss(x, lib.tensor([0, 2])).grad_fn,
        "det._saved_A": lib.linalg.det(a).grad_fn,
        "det._saved_LU": lib.linalg.det(a).grad_fn,
        "logsigmoid._saved_buffer": lib.nn.functional.logsigmoid(x).grad_fn,
        "cummax._saved_self": x.cummax(1)[0].grad_fn,
    }
    x.mul_(2), a.mul_(2)
    return nodes


def test_a_saved_input_written_in_place_is_refused_as_torchs() -> None:
    """Reading a saved tensor of an input written in place since is refused (chainrule's
    words name the node, the value and the input), and so is a tensor made from it (det's
    LU, logsigmoid's buffer), which would be made from the written values."""
    for lib in (torch, cr):
        for name, fn in _written_after_saving(lib).items():
            attr = name.split(".")[1]
            if lib is torch and attr in ("_saved_LU", "_saved_buffer"):
                continue  # PyTorch's kernel made these from the values before the write
            with pytest.raises(RuntimeError, match="(?i)modified by an in-?place operation"):
                _ = getattr(fn, attr)
    fn = _written_after_saving(cr)["det._saved_LU"]
    with pytest.raises(RuntimeError, match=r"^LinalgDetBackward0: _saved_LU: input 0, of shape"):
        _ = fn._saved_LU


def test_a_freed_graphs_saved_tensors_are_refused_its_values_kept() -> None:
    x = cr.rand(2, 3, dtype=cr.float64, requires_grad=True)
    y = cr.nn.functional.softplus(x, beta=2)
    y.sum().backward()
    assert y.grad_fn._saved_beta == 2 and y.grad_fn._saved_threshold == 20
    with pytest.raises(RuntimeError, match=r"^SoftplusBackward0: _saved_self: its saved values"):
        _ = y.grad_fn._saved_self


PRODUCTS = [
    ((5, 2, 3), (3, 4)), ((5, 2, 3), (3,)), ((2, 5, 2, 3), (2, 5, 3, 4)), ((5, 2, 3), (1, 3, 4)),
    ((3,), (5, 3, 4)), ((2, 1, 2, 3), (5, 3, 4)), ((3,), (3, 4)),
]  # fmt: skip


@pytest.mark.parametrize(("a", "b"), PRODUCTS)
def test_a_matmuls_one_node_tells_the_sizes_of_torchs_product(a: tuple, b: tuple) -> None:
    """Where PyTorch's matmul is a product and a view (or squeeze) after it, chainrule's one
    node tells the view's saved values: the product's sizes, as PyTorch folds the batch."""
    shown = []
    for lib in (torch, cr):
        x, y = lib.ones(*a, requires_grad=True), lib.ones(*b, requires_grad=True)
        fn = (x @ y).grad_fn
        shown.append((fn.name(), read(fn, lib)))
    assert shown[1] == shown[0]


def test_a_linear_layers_one_node_tells_the_sizes_of_torchs_product() -> None:
    shown = []
    for lib in (torch, cr):
        x, w, b = (lib.ones(*s, requires_grad=True) for s in ((5, 2, 3), (4, 3), (4,)))
        f = lib.nn.functional
        nodes = [f.linear(x, w).grad_fn, f.linear(x, w, b).grad_fn, f.linear(x[0, 0], w).grad_fn]
        shown.append([(fn.name(), read(fn, lib)) for fn in nodes])
    assert shown[1] == shown[0]


MIXED = [
    (0, slice(1, None)), (slice(1, None), 2), (slice(0, 2), slice(1, None)), (slice(1, 3), -1),
    (0, slice(-3, None)), (0, slice(1, 10)), (Ellipsis, 1, slice(1, 3)), (None, 1, slice(2, None)),
    (slice(1, 3), None, 0), (0, slice(-4, -1)), (slice(None, None, 2), 1, slice(None, None, 2)),
    (slice(-2, None), slice(None), slice(1, None, 2)), (1, Ellipsis, slice(2, None)),
]  # fmt: skip


@pytest.mark.parametrize("index", MIXED)
def test_an_index_of_several_parts_saves_torchs_last_steps_values(index: tuple) -> None:
    """PyTorch indexes part by part, its node the last step's: its dim counts the dims the
    steps before it left, its sizes are the tensor it took, a negative bound unsigned; kept
    after backward."""
    shown = []
    for lib in (torch, cr):
        x = lib.ones(3, 4, 5, requires_grad=True)
        y = x[index]
        values = {a: getattr(y.grad_fn, a) for a in dir(y.grad_fn) if a.startswith("_saved_")}
        y.sum().backward()  # freed: the values are kept
        shown.append((y.grad_fn.name(), values, read(y.grad_fn, lib)))
    assert shown[1] == shown[0]


def test_nll_loss_shows_its_ignore_index_as_torch_does() -> None:
    """An int64 PyTorch prints unsigned: the default -100 is 2^64 - 100, before and after
    backward; a non-negative one is itself."""
    shown = []
    for lib in (torch, cr):
        F = lib.nn.functional
        x = lib.tensor(np.arange(12.0).reshape(3, 4) / 7, requires_grad=True)
        target = lib.tensor([0, 1, 2])
        losses = [F.nll_loss(x, target), F.nll_loss(x, target, ignore_index=2)]
        losses += [F.nll_loss(x, target, ignore_index=-5), F.cross_entropy(x, target)]
        seen = []
        for loss in losses:
            fn = loss.grad_fn
            before = fn._saved_ignore_index
            loss.backward()
            seen.append((fn.name(), before, fn._saved_ignore_index))
        shown.append(seen)
    assert shown[1] == shown[0]
    assert shown[1][0][1] == 2**64 - 100


def test_a_squeezes_negative_dim_and_quantiles_last_squeeze_are_torchs() -> None:
    """squeeze's and squeeze_'s dim shown unsigned (-1 is 2^64 - 1); quantile ends, as
    PyTorch's, in a squeeze of its values' last dim, whose sizes end in that 1."""
    shown = []
    for lib in (torch, cr):
        x = lib.tensor(np.arange(60.0).reshape(3, 4, 5) / 7, requires_grad=True)
        q = lib.tensor([0.2, 0.7], dtype=lib.float64)
        ys = [x[:, :1].squeeze(-2), (x * 1).squeeze_(-1), x[:, :1].squeeze((-2,))]
        ys += [x.quantile(0.3), x.quantile(q, 1, keepdim=True), x.nanquantile(0.5, -1, True)]
        shown.append([(y.grad_fn.name(), y.grad_fn._saved_dim, y.grad_fn._saved_self_sym_sizes)
                      for y in ys])  # fmt: skip
    assert shown[1] == shown[0]
    assert shown[1][4] == ("SqueezeBackward4", 2**64 - 1, (2, 3, 1, 5, 1))


# In-place activations whose node reads its result (PyTorch's saves it), and those whose does not
_RESULT_READERS = {
    "leaky_relu_": lambda F, a: F.leaky_relu_(a, 0.1),
    "leaky_relu(inplace)": lambda F, a: F.leaky_relu(a, inplace=True),
    "elu_": lambda F, a: F.elu_(a),
    "selu(inplace)": lambda F, a: F.selu(a, inplace=True),
    "celu_": lambda F, a: F.celu_(a, 0.5),
    "rrelu_": lambda F, a: F.rrelu_(a),
    "rrelu_ training": lambda F, a: F.rrelu_(a, training=True),
    "relu_": lambda F, a: F.relu_(a),
}
_INPUT_READERS = {
    "threshold_": lambda F, a: F.threshold_(a, 0.0, 2.0),
    "hardtanh_": lambda F, a: F.hardtanh_(a),
    "relu6(inplace)": lambda F, a: F.relu6(a, inplace=True),
    "silu(inplace)": lambda F, a: F.silu(a, inplace=True),
}


def _written_again(lib: Any, make: Any, write: bool, of_view: bool = False) -> tuple[Any, Any]:
    """An in-place activation's output, the input it has, and its node, written in place
    again (through its base where ``of_view``) if ``write``."""
    torch.manual_seed(0), cr.manual_seed(0)
    x = lib.tensor([[-1.0, 0.5, 2.0], [3.0, -0.25, 0.0]], dtype=lib.float64, requires_grad=True)
    base = x * 1
    y = make(lib.nn.functional, base[0] if of_view else base)
    fn = y.grad_fn
    if write:
        (base if of_view else y).add_(1)
    return x, y, fn


@pytest.mark.parametrize("of_view", [False, True])
@pytest.mark.parametrize("op", sorted(_RESULT_READERS))
def test_an_in_place_activations_result_written_again_is_refused_as_torchs(
    op: str, of_view: bool
) -> None:
    """After ``y = leaky_relu_(a)`` (elu_, rrelu_, relu_ ...), a write into y (or its base)
    makes ``_saved_result`` and backward refuse, as PyTorch's; unwritten, both work."""
    words = "(?i)modified by an in-?place operation"
    for lib in (torch, cr):
        x, y, fn = _written_again(lib, _RESULT_READERS[op], write=True, of_view=of_view)
        if not of_view:  # a view's node is then PyTorch's AsStridedBackward0, saving none
            with pytest.raises(RuntimeError, match=words + ".*version 2; expected version 1"):
                _ = fn._saved_result
        with pytest.raises(RuntimeError, match=words):
            y.sum().backward()
    x, y, fn = _written_again(cr, _RESULT_READERS[op], write=False, of_view=of_view)
    np.testing.assert_array_equal(fn._saved_result.numpy(), y.detach().numpy())
    y.sum().backward()
    assert x.grad is not None


@pytest.mark.parametrize("op", sorted(_INPUT_READERS))
def test_an_in_place_activation_that_reads_no_result_may_be_written_again(op: str) -> None:
    """threshold_, hardtanh_ ...: PyTorch's node saves no result, so a later write into it
    leaves backward as it was (the gradient of the values before the write)."""
    grads = []
    for lib in (torch, cr):
        x, y, fn = _written_again(lib, _INPUT_READERS[op], write=True)
        assert not hasattr(fn, "_saved_result")
        y.backward(lib.ones_like(y) * 0.5)
        grads.append(x.grad.detach().numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12)


# Out-of-place nodes that save their result, and the ways a later write reaches that result
_RESULT_WRITES = {
    "add_": lambda lib, y: y.add_(1),
    "through a view": lambda lib, y: y[1:].mul_(2),
    "through a view, no grad": lambda lib, y: _no_grad(lib, lambda: y[1:].mul_(2)),
    "through detach": lambda lib, y: y.detach().zero_(),
}


def _no_grad(lib: Any, write: Any) -> None:
    with lib.no_grad():
        write()


@pytest.mark.parametrize("how", sorted(_RESULT_WRITES))
def test_an_out_of_place_result_written_since_is_refused_as_torchs(how: str) -> None:
    """``y = x.exp(); y.add_(1)``: reading exp's ``_saved_result`` is refused, as PyTorch's
    (and its backward); through .data, a write leaves it readable, its values the new ones."""
    words = "(?i)modified by an in-?place operation.*version 1; expected version 0"
    for lib in (torch, cr):
        x = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
        for op in (lib.exp, lib.sigmoid, lib.tanh):
            y = op(x)
            _RESULT_WRITES[how](lib, y)
            with pytest.raises(RuntimeError, match=words):
                _ = _made_by(y, op)._saved_result
        y = x.exp()
        y.data.add_(1)
        np.testing.assert_allclose(y.grad_fn._saved_result.detach().numpy(), y.detach().numpy())


def _made_by(y: Any, op: Any) -> Any:
    """The node of ``op`` behind y: y's own, or below the node of the write into y."""
    fn = y.grad_fn
    while not fn.name().lower().startswith(op.__name__.lower()):
        fn = fn.next_functions[0][0]
    return fn
