"""Each op's node has PyTorch's name, as its type's name (what torchviz and printing read) and
as ``grad_fn.name()``: on every row of the op catalog, and (slow) on every sample of PyTorch's
op database that chainrule runs. Where chainrule builds an op from several nodes and PyTorch
from one kernel (a composite: more nodes between the output and the leaves), the last node is
the composite's last op, named as that op's: skipped, and counted. The rest must agree, but
for the exceptions below, each with its reason."""

from __future__ import annotations

import inspect
import warnings
from collections import Counter
from functools import cache
from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr
from tests.ops import test_ops as catalog

# Where chainrule's node (the key) stands for one of several PyTorch nodes: one primitive serves
# several PyTorch ops, or PyTorch ends the op in a step chainrule does without. Each: why, and
# PyTorch's names it stands for. These stay: matching them would add a node (a view or a copy
# that changes nothing) to every call of the op, and so slow it.
EXCEPTIONS: dict[str, tuple[str, set[str]]] = {
    "ViewBackward0": (
        "einsum is one node (a product, viewed); PyTorch's einsum ends in whichever step its "
        "contraction of these operands takes last: a permute, a sum or a mul",
        {"PermuteBackward0", "SumBackward1", "MulBackward0"},
    ),
    "UnsqueezeBackward0": (
        "a nuclear norm with keepdim: PyTorch moves the two dims last and permutes them back "
        "after (a permute of dims already in place); ours reduces them where they are",
        {"PermuteBackward0"},
    ),
    "MulBackward0": (
        "PyTorch's dropout3d of an unbatched input unsqueezes it and squeezes the result; ours "
        "masks it as it is",
        {"SqueezeBackward1"},
    ),
    "UnsafeViewBackward0": (
        "a matrix times a batch: PyTorch multiplies the transposes and copies (or transposes) "
        "the product back; ours is one product, of the layout asked for",
        {"CloneBackward0", "TransposeBackward0"},
    ),
    "DivBackward0": (
        "PyTorch's cov squeezes its quotient (even of no size-1 dim), and cond divides slices "
        "of the singular values and squeezes; ours divides the values as they are",
        {"SqueezeBackward0", "SqueezeBackward1"},
    ),
    "CtcLossBackward0": (
        "PyTorch's zero_infinity zeroes an infinite loss by a where after its node; ours within "
        "its one node",
        {"WhereBackward0"},
    ),
    "ScaledDotProductFlashAttentionForCpuBackward0": (
        "PyTorch's CPU attention of some inputs (3-d ones among them) is its math composite, "
        "ending in a view of a product; ours is one node for every input",
        {"UnsafeViewBackward0"},
    ),
}


def excepted(ours: str, theirs: str) -> bool:
    return theirs in EXCEPTIONS.get(ours, ("", set()))[1]


def node_count(fn: Any) -> int:
    """The nodes behind ``fn`` (itself included, leaves' AccumulateGrad not)."""
    seen: set[int] = set()
    todo = [fn]
    while todo:
        f = todo.pop()
        if f is None or id(f) in seen or type(f).__name__ == "AccumulateGrad":
            continue
        seen.add(id(f))
        todo += [g for g, _ in f.next_functions]
    return len(seen)


@cache
def catalog_outputs() -> list[tuple[Any, list[Any], list[Any]]]:
    """Each catalog row that has gradients, with its outputs on chainrule and on torch
    (float64), run once for the tests below."""
    runs = []
    for row in catalog.ROWS:
        if row.grad:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                _, _, ours, theirs = catalog._run(row, np.float64)
            runs.append((row, ours, theirs))
    return runs


def differing(
    ours: list[Any], theirs: list[Any], used: set[tuple[str, str]] | None = None
) -> tuple[list[tuple[str, str]], int]:
    """The (ours, theirs) node names of the outputs that differ, not composites nor listed
    (those listed added to ``used``); and how many outputs were composites."""
    found, composites = [], 0
    for a, b in zip(ours, theirs, strict=False):
        fa, fb = getattr(a, "grad_fn", None), getattr(b, "grad_fn", None)
        if fa is None or fb is None:
            continue
        pair = (type(fa).__name__, type(fb).__name__)
        assert fa.name() == fb.name() or fa.name() == pair[0]
        if pair[0] == pair[1]:
            continue
        if excepted(*pair):
            if used is not None:
                used.add(pair)
            continue
        if node_count(fa) > node_count(fb):
            composites += 1
            continue
        found.append(pair)
    return found, composites


def test_every_catalog_row_names_its_node_as_torch() -> None:
    wrong, composites, agreed = [], 0, 0
    for row, ours, theirs in catalog_outputs():
        pairs, composite = differing(ours, theirs)
        composites += composite
        wrong += [f"{row.name}: {a}, PyTorch's {b}" for a, b in pairs]
        agreed += sum(
            type(getattr(a, "grad_fn", None)).__name__ == type(getattr(b, "grad_fn", None)).__name__
            for a, b in zip(ours, theirs, strict=False)
            if getattr(b, "grad_fn", None) is not None
        )
    assert wrong == [], "\n".join(wrong)
    assert agreed > 450 and composites <= 1, (agreed, composites)


def op_database_outputs() -> Any:
    """Each float64 op-database sample (of an entry with gradients) that both libraries run,
    with its outputs on chainrule and on torch: (op, chainrule's, torch's)."""
    from tests.opinfo import harness

    for case in harness.cases():
        if case.form != "fn" or case.dtype != "float64":
            continue
        op = harness.entry(case.op)
        if not op.supports_autograd:
            continue
        form = next(f for f in harness.forms(op) if f.name == case.form)
        samples, _ = harness._samples(op, torch.float64, True, harness.full_samples())
        for sample in samples:
            try:
                c = harness.to_cr((sample.input, list(sample.args), dict(sample.kwargs)))
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    harness._seed()
                    want = harness._call(form.torch_fn, form, *_parts(sample))
                    harness._seed()
                    got = harness._call(form.cr_fn, form, *c)
            except Exception:  # a refusal: the op database's own tests judge it
                continue
            yield case.op, _flat(got), _flat(want)


@pytest.mark.slow
def test_every_op_database_sample_names_its_node_as_torch() -> None:
    """And every exception is still needed: by a catalog row or an op-database sample."""
    wrong: Counter[str] = Counter()
    used: set[tuple[str, str]] = set()
    for name, ours, theirs in op_database_outputs():
        pairs, _ = differing(ours, theirs, used)
        wrong.update(f"{name}: {a}, PyTorch's {b}" for a, b in pairs)
    assert not wrong, "\n".join(f"{n} x {k}" for k, n in wrong.most_common())
    for _, ours, theirs in catalog_outputs():
        differing(ours, theirs, used)
    listed = {(a, b) for a, (_, names) in EXCEPTIONS.items() for b in names}
    unused = sorted(f"{a}: {b}" for a, b in listed - used)
    assert not unused, f"{__file__}: EXCEPTIONS no output needs any more: {unused}"


def _parts(sample: Any) -> tuple[Any, list[Any], dict[str, Any]]:
    return sample.input, list(sample.args), dict(sample.kwargs)


def _flat(out: Any) -> list[Any]:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def test_a_few_nodes_by_name() -> None:
    """The names a tutorial meets, by call: sum and mean over dims, pow's three overloads,
    matmul by rank, clone, selection and slicing."""
    x = cr.randn(3, 4, requires_grad=True)
    v = cr.randn(4, requires_grad=True)
    named = {
        "SumBackward0": x.sum(),
        "SumBackward1": x.sum(0),
        "MeanBackward1": x.mean((0, 1)),
        "PowBackward0": x**2,
        "PowBackward1": x.exp() ** x,
        "PowBackward2": 2**x,
        "MmBackward0": x @ x.mT,
        "MvBackward0": x @ v,
        "DotBackward0": v @ v,
        "SqueezeBackward4": v @ x.mT.mT.T,
        "CloneBackward0": x.clone(),
        "SelectBackward0": x[0],
        "SliceBackward0": x[:, 1:],
        "IndexBackward0": x[[0, 2]],
        "Log1PBackward0": x.exp().log1p(),
        "AddmmBackward0": cr.nn.functional.linear(x, x, v[:3]),
    }
    got = {name: (type(t.grad_fn).__name__, t.grad_fn.name()) for name, t in named.items()}
    assert got == {name: (name, name) for name in named}
    assert repr(x.exp().grad_fn).startswith("<ExpBackward0 object at 0x")


def _by_method(lib: Any) -> dict[str, Any]:
    """One output per Tensor method whose primitive serves several PyTorch ops."""
    lib.manual_seed(0)
    x = lib.randn(3, 4, requires_grad=True)
    y = lib.randn(3, 1, 4, requires_grad=True)
    return {
        "t": x.t(), "T": x.T, "T of 3 dims": y.T, "mT": x.mT, "permute(1, 0)": x.permute(1, 0),
        "transpose": x.transpose(0, 1), "movedim": y.movedim(0, 1), "H": x.H,
        "squeeze()": y.squeeze(), "squeeze(1)": y.squeeze(1), "squeeze((1,))": y.squeeze((1,)),
        "unsqueeze": x.unsqueeze(-1), "0-d unsqueeze": x[0, 0].unsqueeze(0),
        "view": x.view(12), "reshape": x.reshape(2, 6), "copying reshape": x.t().reshape(12),
        "copying flatten": x.t().flatten(), "ravel": x.t().ravel(), "expand": y.expand(3, 2, 4),
        "max()": x.max(), "min()": x.min(), "max(dim)": x.max(1)[0], "min(dim)": x.min(1)[0],
        "max(dim, keepdim)": x.max(0, keepdim=True)[0], "0-d max(0)": x[0, 0].max(0)[0],
        "amax": x.amax(), "sort": x.sort()[0], "stable sort": x.sort(stable=True)[0],
        "sort(stable=False)": x.sort(stable=False)[0], "torch.sort": lib.sort(x, 0)[0],
        "rsqrt": x.exp().rsqrt(), "square": x.square(), "vdot": lib.vdot(x[0], x[1]),
        "bmm": lib.bmm(y, y.mT), "prod()": x.prod(), "prod(1)": x.prod(1), "std": x.std(1),
        "norm(3)": x.norm(3), "aminmax": lib.aminmax(x, dim=0).max,
        "0-d sort": x[0, 0].sort()[0], "msort": x.msort(), "topk": x.topk(2)[0],
        "index_select": x.index_select(1, lib.tensor([0, 2])), "tril": x.tril(), "triu": x.triu(1),
        "masked_fill": x.masked_fill(x > 0, 0.0), "masked_fill(tensor)": x.masked_fill(
            x > 0, lib.tensor(0.0)
        ), "2 - x": 2 - x, "x - y": x - x, "x - 2": x - 2,
        "scatter(value)": x.scatter(1, lib.tensor([[0], [2], [1]]), 2.0), "flip(())": x.flip(()),
        "0-d index_select": x[0, 0].index_select(0, lib.tensor([0])), "tile": x.tile((2,)),
        "index_fill(tensor)": x.index_fill(1, lib.tensor([0, 2]), x[0, 0]), "diff(n=0)": x.diff(0),
    }  # fmt: skip


def test_the_method_names_its_node() -> None:
    """Where one primitive serves several PyTorch ops (a permute, a reshape, a gather, a
    where), the Tensor method calling it names the node as PyTorch's own op does."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = _by_method(cr), _by_method(torch)
    got = {k: t.grad_fn.name() for k, t in ours.items()}
    assert got == {k: t.grad_fn.name() for k, t in theirs.items()}
    # rsub's number is an argument, not an input: one edge, to x, as PyTorch's
    assert len(ours["2 - x"].grad_fn.next_functions) == len(theirs["2 - x"].grad_fn.next_functions)


def test_a_method_names_only_the_node_it_made() -> None:
    """A view of the input's own shape (squeeze of no size-1 dim, permute in order) is a new
    view with its own node, as PyTorch's, and leaves the input's node as it was."""
    x = cr.randn(3, 4, requires_grad=True).exp()
    views = [x.squeeze(), x.permute(0, 1), x.reshape(3, 4)]
    assert [v.grad_fn.name() for v in views if v is not x] == [
        "SqueezeBackward0", "PermuteBackward0", "ViewBackward0"
    ]  # fmt: skip
    assert x.grad_fn.name() == "ExpBackward0"
    with cr.no_grad():
        assert x.t().grad_fn is None and x.unsqueeze(0).grad_fn is None


def test_a_node_type_is_its_op() -> None:
    """The named type adds nothing to the op: the same rule, docstring and op name."""
    from chainrule.ops.elementwise import Mul

    fn = (cr.randn(2, requires_grad=True) * 3).grad_fn
    assert isinstance(fn, Mul) and type(fn) is not Mul
    assert fn.op == "Mul" and type(fn).rule == Mul.rule and type(fn).__doc__ == Mul.__doc__
    assert not type(fn).__module__.startswith("chainrule.ops")  # the ops' lists stay as they are


def _saved(fn: Any, lib: Any) -> dict[str, Any]:
    """A node's _saved_*: a tensor by its shape, "refused" where reading it raises (freed by
    backward); PyTorch's negative ints (a dim or index as given, which it prints as an
    unsigned 64-bit number) as negative."""
    out = {}
    for attr in [a for a in dir(fn) if a.startswith("_saved_")]:
        try:
            value = getattr(fn, attr)
        except RuntimeError:
            value = "refused"
        if isinstance(value, lib.Tensor):
            value = tuple(value.shape)
        elif isinstance(value, int) and value >= 2**63:
            value -= 2**64
        elif isinstance(value, tuple):
            value = tuple(v - 2**64 if isinstance(v, int) and v >= 2**63 else v for v in value)
        out[attr] = value
    return out


def _written_after_saving(lib: Any) -> dict[str, Any]:
    """Nodes whose saved input is then written in place, keyed by the _saved_* that reads it."""
    x = lib.ones(2, 3, requires_grad=True) * 1
    w = lib.ones(3, requires_grad=True) * 1
    src = lib.ones(2, 2, requires_grad=True) * 1
    index = lib.tensor([[0, 2], [1, 1]])
    nodes = {
        "var._saved_self": x.var(0).grad_fn,
        "layer_norm._saved_weight": lib.nn.functional.layer_norm(x, (3,), w).grad_fn,
        "scatter_reduce._saved_src": x.scatter_reduce(1, index, src, "amax").grad_fn,
        "gather._saved_self": x.gather(1, index).grad_fn,
        "pow._saved_exponent": x.pow(x).grad_fn,
    }
    for t in (x, w, src):
        t.mul_(2)
    return nodes


def test_a_saved_input_written_in_place_is_refused_as_torchs() -> None:
    for lib in (torch, cr):
        for name, fn in _written_after_saving(lib).items():
            with pytest.raises(RuntimeError, match="(?i)modified by an in-?place operation"):
                _ = getattr(fn, name.split(".")[1])
    fn = _written_after_saving(cr)["layer_norm._saved_weight"]
    ours = r"^NativeLayerNormBackward0: _saved_weight: input 1, of shape \(3,\), was modified"
    with pytest.raises(RuntimeError, match=ours):
        _ = fn._saved_weight


def _numbers_and_bounds(lib: Any) -> dict[str, Any]:
    """Nodes that save a number (pow's base, xlogy's other), an optional tensor bound, or a
    mask beside a tensor value."""
    x = (lib.rand(2, 3, dtype=lib.float64) + 0.5).requires_grad_()
    m = lib.rand(3, dtype=lib.float64, requires_grad=True)
    return {
        "1.7 ** x": 1.7**x, "xlogy(x, 1.7)": lib.xlogy(x, 1.7), "clamp(max=m)": x.clamp(max=m),
        "clamp(min=m)": x.clamp(min=m), "clamp(0, m)": x.clamp(m * 0, m + 1),
        "clamp(0.1, 0.9)": x.clamp(0.1, 0.9), "masked_fill(mask, m[0])": x.masked_fill(x > 1, m[0]),
    }  # fmt: skip


def test_saved_numbers_and_bounds_are_torchs_before_and_after_backward() -> None:
    """A number is a value, kept after backward; a bound not given is None, before and after."""
    shown = []
    for lib in (torch, cr):
        seen = {}
        for name, y in _numbers_and_bounds(lib).items():
            before = _saved(y.grad_fn, lib)
            y.sum().backward()
            seen[name] = (y.grad_fn.name(), before, _saved(y.grad_fn, lib))
        shown.append(seen)
    assert shown[1] == shown[0]
    assert shown[1]["clamp(max=m)"][2]["_saved_min"] is None


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 3), (3, 5)])
def test_linalg_lu_saves_torchs_factors(shape: tuple[int, ...]) -> None:
    """P, L and U, rebuilt from the LU and pivots the node keeps, are PyTorch's values."""
    a = np.random.default_rng(0).standard_normal(shape)
    factors = []
    for lib in (torch, cr):
        fn = lib.linalg.lu(lib.tensor(a, requires_grad=True))[1].grad_fn
        assert fn.name() == "LinalgLuBackward0" and fn._saved_pivot is True
        factors.append([getattr(fn, f"_saved_{k}").detach().numpy() for k in "PLU"])
    for ours, theirs in zip(factors[1], factors[0], strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


# A reduction's dim left out, or given as None or (): PyTorch's overload without dim
# (SumBackward0) or with it (SumBackward1, which keeps dim as given).
REDUCTION_SPELLINGS: dict[str, Any] = {
    "sum()": lambda m, x: x.sum(),
    "sum(None)": lambda m, x: x.sum(None),
    "sum(dim=None)": lambda m, x: x.sum(dim=None, keepdim=True),
    "sum(())": lambda m, x: x.sum(()),
    "sum(dim=[])": lambda m, x: x.sum(dim=[]),
    "sum(0)": lambda m, x: x.sum(0),
    "sum(dtype=)": lambda m, x: x.sum(dtype=m.float32),
    "torch.sum(x)": lambda m, x: m.sum(x),
    "torch.sum(x, None)": lambda m, x: m.sum(x, None),
    "sum of a 0-d over 0": lambda m, x: x[0, 0].sum(0),
    "mean()": lambda m, x: x.mean(),
    "mean(None)": lambda m, x: x.mean(None),
    "mean(())": lambda m, x: x.mean(()),
    "mean(1)": lambda m, x: x.mean(1),
    "torch.mean(x, dim=None)": lambda m, x: m.mean(x, dim=None),
    "nansum()": lambda m, x: x.nansum(),
    "nansum(None)": lambda m, x: x.nansum(None),
    "nansum((0, 1), True)": lambda m, x: m.nansum(x, (0, 1), True),
    "amax(None)": lambda m, x: x.amax(None),
}


@pytest.mark.parametrize("spelling", list(REDUCTION_SPELLINGS), ids=list(REDUCTION_SPELLINGS))
def test_each_spelling_of_a_reductions_dim_names_its_node_as_torch(spelling: str) -> None:
    shown = []
    for lib in (torch, cr):
        x = lib.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
        y = REDUCTION_SPELLINGS[spelling](lib, x)
        before = _saved(y.grad_fn, lib)
        y.sum().backward()
        shown.append((y.grad_fn.name(), tuple(y.shape), before, _saved(y.grad_fn, lib)))
    assert shown[1] == shown[0]


def test_the_signatures_print_dims_default_as_torchs() -> None:
    """The default that tells sum() from sum(None) prints as None."""
    for f in (cr.Tensor.sum, cr.Tensor.mean, cr.sum, cr.mean):
        assert "dim: 'Any' = None," in str(inspect.signature(f))


def _in_place(lib: Any) -> dict[str, Any]:
    """The in-place activations' outputs: PyTorch's op_ records a node of its own (Backward1,
    saving its result) where its out-of-place node saves the input, or the same node."""
    F = lib.nn.functional
    calls = {
        "leaky_relu(inplace)": lambda y: F.leaky_relu(y, 0.1, inplace=True),
        "leaky_relu_": F.leaky_relu_, "elu_": F.elu_, "elu(inplace)": lambda y: F.elu(y, 0.5, True),
        "selu_": F.selu_, "celu_": lambda y: F.celu_(y, 0.5), "rrelu_": F.rrelu_,
        "threshold_": lambda y: F.threshold_(y, 0.1, 2.0), "hardtanh_": F.hardtanh_,
        "relu6(inplace)": lambda y: F.relu6(y, True), "ReLU6(inplace)": lib.nn.ReLU6(True),
        "LeakyReLU(inplace)": lib.nn.LeakyReLU(0.2, True), "ELU(inplace)": lib.nn.ELU(inplace=True),
        "relu_": F.relu_, "rrelu_(training)": lambda y: F.rrelu_(y, training=True),
        "rrelu(training)": lambda y: F.rrelu(y, training=True),
    }  # fmt: skip
    x = lib.tensor(np.linspace(-2, 2, 12).reshape(3, 4), requires_grad=True)
    return {name: f(x * 1) for name, f in calls.items()}


def test_in_place_activations_name_and_save_as_torch() -> None:
    shown = []
    for lib in (torch, cr):
        seen = {}
        for name, y in _in_place(lib).items():
            fn, before = y.grad_fn, _saved(y.grad_fn, lib)
            result = getattr(fn, "_saved_result", None)
            assert result is None or np.array_equal(result.detach().numpy(), y.detach().numpy())
            y.sum().backward()
            seen[name] = (fn.name(), len(fn.next_functions), before, _saved(fn, lib))
        shown.append(seen)
    assert shown[1] == shown[0]
    assert shown[1]["leaky_relu_"][2]["_saved_result"] == (3, 4)


def _gradients_twice(lib: Any) -> dict[str, Any]:
    """The gradient of each piecewise activation, taken with create_graph, and its gradient."""
    F = lib.nn.functional
    calls = {
        "relu": F.relu, "leaky_relu": lambda y: F.leaky_relu(y, 0.1), "hardtanh": F.hardtanh,
        "leaky_relu_": lambda y: F.leaky_relu(y * 1, 0.1, True), "relu6": F.relu6,
        "threshold": lambda y: F.threshold(y, 0.1, 2.0), "rrelu": F.rrelu,
        "threshold_": lambda y: F.threshold_(y * 1, 0.1, 2.0), "softshrink": F.softshrink,
        "hardshrink": F.hardshrink, "rrelu(training)": lambda y: F.rrelu(y, training=True),
    }  # fmt: skip
    out = {}
    for name, f in calls.items():
        x = lib.tensor(np.linspace(-2, 2, 12).reshape(3, 4), requires_grad=True)
        (g,) = lib.autograd.grad(f(x), x, lib.ones(3, 4, dtype=x.dtype), create_graph=True)
        (gg,) = lib.autograd.grad(g, x, lib.ones(3, 4, dtype=x.dtype), create_graph=True)
        out[name] = (g, gg)
    return out


def test_the_gradient_of_a_piecewise_activations_gradient_is_torchs() -> None:
    """leaky_relu_backward's node is LeakyReluBackwardBackward0, relu's threshold_backward's
    ThresholdBackwardBackward0, with PyTorch's saved values; the second derivative is zeros."""
    shown = []
    for lib in (torch, cr):
        seen = {}
        for name, (g, gg) in _gradients_twice(lib).items():
            fn = g.grad_fn if g.grad_fn.name() != "MulBackward0" else g.grad_fn.next_functions[0][0]
            seen[name] = (fn.name(), _saved(fn, lib), gg.detach().numpy().tolist())
        shown.append(seen)
    assert shown[1] == shown[0]
    assert shown[1]["leaky_relu"][0] == "LeakyReluBackwardBackward0"


def _smooth_gradients(lib: Any) -> dict[str, Any]:
    """The gradient of each smooth activation, taken with create_graph from a gradient that
    requires grad too, and its gradients in x and in that gradient."""
    F = lib.nn.functional
    calls = {
        "elu": lambda y: F.elu(y, 1.5), "selu": F.selu, "celu": lambda y: F.celu(y, 0.7),
        "elu_": lambda y: F.elu(y * 1, 1.5, True), "celu_": lambda y: F.celu_(y * 1, 0.7),
        "gelu": F.gelu, "gelu(tanh)": lambda y: F.gelu(y, approximate="tanh"),
        "softplus": lambda y: F.softplus(y, 2.0, 2.0), "logsigmoid": F.logsigmoid,
        "hardswish": F.hardswish,
    }  # fmt: skip
    out = {}
    for name, f in calls.items():
        x = lib.tensor(np.linspace(-4, 4, 12).reshape(3, 4), requires_grad=True)
        g = lib.tensor(np.linspace(1, 2, 12).reshape(3, 4), requires_grad=True)
        (gx,) = lib.autograd.grad(f(x), x, g, create_graph=True)
        h = lib.tensor(np.linspace(-1, 1, 12).reshape(3, 4))
        out[name] = (gx, lib.autograd.grad(gx, (x, g), h, create_graph=True))
    return out


def test_the_gradient_of_a_smooth_activation_is_torchs_one_node() -> None:
    """elu_backward's node is EluBackwardBackward0 (selu's and celu's too), gelu_backward's
    GeluBackwardBackward0, ...: one node on the gradient and the input (an in-place elu's
    result), saving what PyTorch's saves; its gradients are PyTorch's."""
    shown, grads = [], []
    for lib in (torch, cr):
        seen, numbers = {}, {}
        for name, (gx, second) in _smooth_gradients(lib).items():
            fn = gx.grad_fn  # an in-place elu's of x * 1: the product's, on PyTorch's node
            fn = fn if fn.name() != "MulBackward0" else fn.next_functions[0][0]
            edges = [None if n is None else n.name() for n, _ in fn.next_functions]
            seen[name] = (fn.name(), edges, _saved(fn, lib))
            numbers[name] = [t.detach().numpy() for t in second]
        shown.append(seen)
        grads.append(numbers)
    assert shown[1] == shown[0]
    assert shown[1]["elu_"][1][1] == "EluBackward1"
    for name, theirs in grads[0].items():
        for ours, want in zip(grads[1][name], theirs, strict=True):
            np.testing.assert_allclose(ours, want, rtol=1e-12, atol=1e-12, err_msg=name)


def _walked(fn: Any) -> list[tuple[str, list[Any]]]:
    """The graph behind ``fn``, node by node in the order of a walk: each name and its edges."""
    seen, order, todo = set(), [], [fn]
    while todo:
        f = todo.pop(0)
        if f is None or id(f) in seen or f.name().endswith("AccumulateGrad"):
            continue
        seen.add(id(f))
        order.append((f.name(), [None if n is None else n.name() for n, _ in f.next_functions]))
        todo += [n for n, _ in f.next_functions]
    return order


@pytest.mark.parametrize("op", ["silu", "mish"])
def test_the_gradient_of_silu_and_mish_is_torchs_composite(op: str) -> None:
    """PyTorch's silu and mish gradients under create_graph are compositions
    (infinitely_differentiable_silu_backward's): the same nodes, a sub and an add of a number
    among them (SubBackward0, AddBackward1), mish's softplus as log1p(exp(x))."""
    shown = []
    for lib in (torch, cr):
        x = lib.tensor(np.linspace(-4, 4, 12), requires_grad=True)
        g = lib.tensor(np.linspace(1, 2, 12), requires_grad=True)
        y = getattr(lib.nn.functional, op)(x)
        (gx,) = lib.autograd.grad(y, x, g, create_graph=True)
        shown.append(_walked(gx.grad_fn))
    assert shown[1] == shown[0]


@pytest.mark.parametrize("shape", [(4,), (2, 3, 4)], ids=["one slope", "a slope per channel"])
def test_the_gradient_of_prelu_is_torchs_one_node_of_two_outputs(shape: tuple[int, ...]) -> None:
    """_prelu_kernel_backward's node, PreluKernelBackwardBackward0: the input's gradient its
    output 0, the weight's summed from its output 1, on the gradient, x and w; the gradients
    taken through it are PyTorch's."""
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(shape), rng.random(shape[1] if len(shape) > 1 else 1)]
    arrays += [
        rng.standard_normal(shape),
        rng.standard_normal(shape),
        rng.standard_normal(arrays[1].shape),
    ]
    shown, grads = [], []
    for lib in (torch, cr):
        x, w, g = (lib.tensor(a, requires_grad=True) for a in arrays[:3])
        gx, gw = lib.autograd.grad(lib.nn.functional.prelu(x, w), (x, w), g, create_graph=True)
        fn = gx.grad_fn
        below = gw.grad_fn.next_functions[0][0]
        below = below if below.name() != "SumBackward1" else below.next_functions[0][0]
        shown.append((fn.name(), len(fn.next_functions), _saved(fn, lib), below is fn))
        upstream = (lib.tensor(arrays[3]), lib.tensor(arrays[4]))
        grads.append([t.detach().numpy() for t in lib.autograd.grad((gx, gw), (x, w, g), upstream)])
    assert shown[1] == shown[0]
    assert shown[1][0] == "PreluKernelBackwardBackward0" and shown[1][3]
    for ours, theirs in zip(grads[1], grads[0], strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


def _copies(lib: Any) -> dict[str, Any]:
    """The outputs whose node is PyTorch's hand-written copy_ node, CopyBackwards."""
    return _copies_of(lib, lib.tensor(np.linspace(-2, 2, 9).reshape(3, 3), requires_grad=True) * 1)


def _copies_of(lib: Any, x: Any) -> dict[str, Any]:
    return {"diff(n=0)": x.diff(0), "matrix_power(0)": lib.linalg.matrix_power(x, 0)}


def test_a_copys_node_has_torchs_two_edges() -> None:
    """copy_(dst, src)'s edges: dst's (none where dst needs no gradient), then src's."""
    shown = []
    for lib in (torch, cr):
        shown.append({
            k: [(None if n is None else n.name(), i) for n, i in y.grad_fn.next_functions]
            for k, y in _copies(lib).items()
        })  # fmt: skip
    assert shown[1] == shown[0]
    assert shown[1]["diff(n=0)"] == [(None, 0), ("MulBackward0", 0)]


def test_a_copys_node_hook_sees_and_gives_torchs_two_edges() -> None:
    """A hook of CopyBackwards gets the gradients of its two edges once, and what it returns
    in their places flows on, as PyTorch's."""
    shown = []
    for lib in (torch, cr):
        seen = {}
        for name in ("diff(n=0)", "matrix_power(0)"):
            x = lib.tensor(np.linspace(-2, 2, 9).reshape(3, 3), requires_grad=True)
            y = _copies_of(lib, x * 1)[name]
            calls: list[Any] = []

            def doubled(gi: Any, go: Any, calls: list[Any] = calls) -> Any:
                calls.append([None if g is None else tuple(g.shape) for g in gi])
                return tuple(None if g is None else g * 2 for g in gi)

            y.grad_fn.register_hook(doubled)
            (y * x).sum().backward()
            seen[name] = (calls, x.grad.numpy().tolist())
        shown.append(seen)
    assert shown[1] == shown[0]
    assert shown[1]["diff(n=0)"][0] == [[None, (3, 3)]]
