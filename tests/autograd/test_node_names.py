"""Each op's node has PyTorch's name, as its type's name (what torchviz and printing read) and
as ``grad_fn.name()``: on every row of the op catalog, and (slow) on every sample of PyTorch's
op database that chainrule runs. Where chainrule builds an op from several nodes and PyTorch
from one kernel (a composite: more nodes between the output and the leaves), the last node is
the composite's last op, named as that op's: skipped, and counted. The rest must agree, but
for the exceptions below, each with its reason."""

from __future__ import annotations

import warnings
from collections import Counter
from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr
from tests.ops import test_ops as catalog

# (chainrule's name, PyTorch's) where one chainrule primitive serves several PyTorch ops, and
# the Tensor method that calls it does not yet say which: the primitive's name is given.
ONE_PRIMITIVE_SERVES = {
    ("SliceBackward0", "SplitBackward0"): "split's outputs are slices, one node each",
    ("SliceBackward0", "SplitWithSizesBackward0"): "split's outputs are slices, one node each",
    ("SliceBackward0", "UnsafeSplitBackward0"): "split's outputs are slices, one node each",
    ("ViewBackward0", "UnsqueezeBackward0"): "unsqueeze is a reshape",
    ("ViewBackward0", "SqueezeBackward0"): "squeeze is a reshape",
    ("ViewBackward0", "SqueezeBackward1"): "squeeze is a reshape",
    ("ViewBackward0", "SqueezeBackward4"): "squeeze is a reshape",
    ("ViewBackward0", "UnsafeViewBackward0"): "a reshape of a copy is a view of it",
    ("TransposeBackward0", "TBackward0"): "t() is a permute of two dims",
    ("TransposeBackward0", "PermuteBackward0"): "T and permute(1, 0) swap two dims",
    ("ViewBackward0", "PermuteBackward0"): "a permute of a dim of size 1 is a reshape",
    ("AmaxBackward0", "MaxBackward1"): "max() is amax()",
    ("AminBackward0", "MinBackward1"): "min() is amin()",
    ("AmaxBackward0", "AminmaxBackward0"): "aminmax is amin and amax",
    ("AminBackward0", "AminmaxBackward0"): "aminmax is amin and amax",
    ("GatherBackward0", "MaxBackward0"): "max(dim)'s values are gathered at its indices",
    ("ViewBackward0", "MaxBackward0"): "max(dim)'s values are gathered at its indices",
    ("ViewBackward0", "MinBackward0"): "min(dim)'s values are gathered at its indices",
    ("GatherBackward0", "SortBackward0"): "sort's values are gathered at its indices",
    ("GatherBackward0", "SortBackward1"): "sort's values are gathered at its indices",
    ("ViewBackward0", "SortBackward0"): "sort's values are gathered at its indices",
    ("GatherBackward0", "TopkBackward0"): "topk's values are gathered at its indices",
    ("IndexBackward0", "IndexSelectBackward0"): "index_select is indexing",
    ("IndexBackward0", "MaskedSelectBackward0"): "masked_select is indexing",
    ("IndexBackward0", "SelectBackward0"): "a 0-d index tensor indexes",
    ("IndexBackward0", "RollBackward0"): "roll is indexing",
    ("IndexBackward0", "ViewBackward0"): "repeat_interleave is indexing",
    ("IndexBackward0", "CopySlices"): "circular padding is indexing",
    ("IndexBackward0", "ReflectionPad1DBackward0"): "reflection padding is indexing",
    ("IndexBackward0", "StackBackward0"): "combinations is indexing",
    ("SliceBackward0", "UnsqueezeBackward0"): "None in an index is sliced",
    ("SelectBackward0", "UnsqueezeBackward0"): "None in an index is sliced",
    ("IndexPutBackward0", "CopySlices"): "index_put writes by index",
    ("IndexPutBackward0", "IndexCopyBackward0"): "index_copy writes by index",
    ("IndexPutBackward0", "SelectScatterBackward0"): "select_scatter writes by index",
    ("IndexPutBackward0", "SliceScatterBackward0"): "slice_scatter writes by index",
    ("ScatterReduceBackward0", "IndexReduceBackward0"): "index_reduce is scatter_reduce",
    ("ScatterBackward0", "ScatterBackward1"): "scatter of a number is scatter",
    ("WhereBackward0", "TrilBackward0"): "tril is a where",
    ("WhereBackward0", "TriuBackward0"): "triu is a where",
    ("WhereBackward0", "MaskedFillBackward0"): "masked_fill is a where",
    ("ThresholdBackward0", "HardtanhBackward0"): "hardtanh is a piecewise-linear op",
    ("LeakyReluBackward0", "RreluWithNoiseBackward0"): "rrelu in eval is leaky_relu",
    ("EluBackward0", "CeluBackward0"): "celu is elu",
    ("MulBackward0", "PowBackward0"): "square is a product",
    ("PowBackward0", "RsqrtBackward0"): "rsqrt is a power",
    ("DotBackward0", "VdotBackward0"): "vdot of reals is dot",
    ("UnsafeViewBackward0", "BmmBackward0"): "bmm is matmul",
    ("MmBackward0", "ViewBackward0"): "tensordot is a matmul",
    ("ViewBackward0", "SumBackward1"): "einsum is one node",
    ("ViewBackward0", "MulBackward0"): "einsum is one node",
    ("SumBackward0", "NansumBackward0"): "nansum is a sum of a where",
    ("SumBackward1", "NansumBackward0"): "nansum is a sum of a where",
    ("CatBackward0", "StackBackward0"): "stack is a cat",
    ("SubBackward0", "RsubBackward1"): "a number minus a tensor is a Sub",
    ("SumBackward0", "SumBackward1"): "sum(dim=None) is sum()",
    ("MeanBackward0", "MeanBackward1"): "mean(dim=None) is mean()",
    ("LinalgLuBackward0", "LinalgLuFactorExBackward0"): "lu_factor is lu",
    ("CholeskySolveBackward0", "CholeskyInverseBackward0"): "cholesky_inverse solves",
    ("LinalgCholeskyExBackward0", "CholeskyBackward0"): "cholesky is linalg.cholesky_ex",
    ("LinalgSolveTriangularBackward0", "LinalgLuSolveBackward0"): "lu_solve solves twice",
    ("LinalgSolveTriangularBackward0", "TriangularSolveBackward0"): "one triangular solve",
}

# (chainrule's name, PyTorch's) where the two build the op from different pieces, as many
ANOTHER_COMPOSITION = {
    ("ScaledDotProductFlashAttentionForCpuBackward0", "UnsafeViewBackward0"): (
        "PyTorch's CPU attention with these shapes is a composite; chainrule's one node"
    ),
    ("UnsafeViewBackward0", "CloneBackward0"): "PyTorch copies a broadcast matmul's result",
    ("SqueezeBackward4", "UnsafeViewBackward0"): "PyTorch folds a vector into the batch",
    ("UnsafeViewBackward0", "SqueezeBackward1"): "adaptive_avg_pool1d is a 2-D pool in PyTorch",
    ("ScatterBackward0", "SqueezeBackward1"): "max_unpool1d is a 2-D unpool in PyTorch",
    ("AddBackward0", "WhereBackward0"): "logdet's sign is a where in PyTorch",
    ("DivBackward0", "SqueezeBackward0"): "cov ends in a squeeze in PyTorch",
    ("DivBackward0", "MulBackward0"): "PyTorch's number / tensor is a reciprocal times it",
    ("MulBackward0", "MulBackward1"): "PyTorch's kernel scales by a number with mul.Scalar",
    ("SumBackward1", "DivBackward1"): "PyTorch's trapezoid halves last, chainrule's sums",
    ("CumsumBackward0", "DivBackward1"): "PyTorch's trapezoid halves last, chainrule's sums",
}

EXCEPTIONS = {**ONE_PRIMITIVE_SERVES, **ANOTHER_COMPOSITION}


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


def differing(ours: list[Any], theirs: list[Any]) -> tuple[list[tuple[str, str]], int]:
    """The (ours, theirs) node names of the outputs that differ, not composites nor listed;
    and how many outputs were composites."""
    found, composites = [], 0
    for a, b in zip(ours, theirs, strict=False):
        fa, fb = getattr(a, "grad_fn", None), getattr(b, "grad_fn", None)
        if fa is None or fb is None:
            continue
        pair = (type(fa).__name__, type(fb).__name__)
        assert fa.name() == pair[0]
        if pair[0] == pair[1] or pair in EXCEPTIONS:
            continue
        if node_count(fa) > node_count(fb):
            composites += 1
            continue
        found.append(pair)
    return found, composites


def test_every_catalog_row_names_its_node_as_torch() -> None:
    wrong, composites, agreed = [], 0, 0
    for row in catalog.ROWS:
        if not row.grad:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _, _, ours, theirs = catalog._run(row, np.float64)
        pairs, composite = differing(ours, theirs)
        composites += composite
        wrong += [f"{row.name}: {a}, PyTorch's {b}" for a, b in pairs]
        agreed += sum(
            type(getattr(a, "grad_fn", None)).__name__ == type(getattr(b, "grad_fn", None)).__name__
            for a, b in zip(ours, theirs, strict=False)
            if getattr(b, "grad_fn", None) is not None
        )
    assert wrong == [], "\n".join(wrong)
    assert agreed > 450 and composites < 120, (agreed, composites)


@pytest.mark.slow
def test_every_op_database_sample_names_its_node_as_torch() -> None:
    from tests.opinfo import harness

    wrong: Counter[str] = Counter()
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
            pairs, _ = differing(_flat(got), _flat(want))
            wrong.update(f"{case.op}: {a}, PyTorch's {b}" for a, b in pairs)
    assert not wrong, "\n".join(f"{n} x {k}" for k, n in wrong.most_common())


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


def test_a_node_type_is_its_op() -> None:
    """The named type adds nothing to the op: the same rule, docstring and op name."""
    from chainrule.ops.elementwise import Mul

    fn = (cr.randn(2, requires_grad=True) * 3).grad_fn
    assert isinstance(fn, Mul) and type(fn) is not Mul
    assert fn.op == "Mul" and type(fn).rule == Mul.rule and type(fn).__doc__ == Mul.__doc__
    assert not type(fn).__module__.startswith("chainrule.ops")  # the ops' lists stay as they are
