"""PyTorch's ``out=``: every function of ``cr.*`` whose PyTorch counterpart takes ``out=`` takes
it too (the list derived from torch's own signatures, the deliberate gaps named with their
reasons), each writes op_db's samples into the given tensors, and the rules against torch's:
the resize and its warning, which dtypes an out may have, gradients refused, a view written
through."""

from __future__ import annotations

import ast
import inspect
import warnings
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr
from tests.opinfo import harness

# Functions torch gives out= that chainrule's do not take it, each with the reason (none now:
# the factories' out= is tested in test_out_factories.py).
GAPS: dict[str, str] = {}


@cache
def _torch_signatures() -> dict[str, bool]:
    """Whether each of torch's C functions takes out= in any overload, from its stub file."""
    stub = Path(torch.__file__).parent / "_C" / "_VariableFunctions.pyi"
    takes: dict[str, bool] = {}
    for node in ast.parse(stub.read_text()).body:
        if isinstance(node, ast.FunctionDef):
            names = [a.arg for a in node.args.args + node.args.kwonlyargs]
            takes[node.name] = takes.get(node.name, False) or "out" in names
    return takes


def _torch_takes_out(name: str) -> bool:
    fn = getattr(torch, name, None)
    if fn is None or inspect.isclass(fn) or inspect.ismodule(fn):
        return False
    if getattr(torch._C._VariableFunctions, name, None) is fn:
        return _torch_signatures().get(name, False)
    try:  # a function torch writes in Python (torch.functional's norm, ...)
        return "out" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return _torch_signatures().get(name, False)


def _takes_out(fn: Any) -> bool:
    return "out" in inspect.signature(fn).parameters


def _functions() -> list[str]:
    return sorted(
        n
        for n in set(cr.__all__)
        if callable(getattr(cr, n)) and not inspect.isclass(getattr(cr, n))
    )


def test_every_function_whose_torch_counterpart_takes_out_takes_it() -> None:
    wanted = [n for n in _functions() if _torch_takes_out(n)]
    assert len(wanted) > 200  # the stub file read, torch's functions found
    missing = [n for n in wanted if n not in GAPS and not _takes_out(getattr(cr, n))]
    assert missing == [], (
        f"torch.{missing[0]} takes out=: give cr.{missing[0]} out= (forms/: @with_out and "
        "`*, out: Any = None`), or name it in GAPS with the reason"
    )
    stale = [n for n in GAPS if _takes_out(getattr(cr, n)) or not _torch_takes_out(n)]
    assert stale == [], f"GAPS names functions that are no gap: {stale}"


def _torch_out_kind(name: str) -> Any:
    try:  # a function torch writes in Python (torch.norm, torch.tensordot) says where out goes
        params = inspect.signature(getattr(torch, name)).parameters
    except (TypeError, ValueError):
        return inspect.Parameter.KEYWORD_ONLY  # torch's C functions take it as a keyword
    # torch.lu is (*args, **kwargs) around _lu_impl(A, pivot, get_infos, out)
    return params["out"].kind if "out" in params else inspect.Parameter.POSITIONAL_OR_KEYWORD


def test_out_is_where_torchs_is() -> None:
    """out= is keyword-only, as in torch's C functions, or where torch's Python function
    has it."""
    kinds = {
        n: inspect.signature(getattr(cr, n)).parameters["out"].kind
        for n in _functions()
        if _takes_out(getattr(cr, n))
    }
    assert [n for n, kind in kinds.items() if kind != _torch_out_kind(n)] == []


# --- every function with out=, on op_db's samples ------------------------------------------


def _empties(result: Any) -> Any:
    """Tensors of no elements to write ``result`` into: one per tensor of it."""
    if isinstance(result, cr.Tensor):
        return cr.empty(0, dtype=result.dtype)
    return tuple(_empties(r) for r in result)


def _written(fn: Callable[..., Any]) -> Callable[..., Any]:
    """fn called with out=: the result must be the out tensors themselves, holding the
    values; what PyTorch's function returns is compared with them."""

    def call(*args: Any, **kwargs: Any) -> Any:
        with cr.no_grad():
            out = _empties(fn(*args, **kwargs))
        got = fn(*args, **kwargs, out=out)
        if got is None and isinstance(out, tuple):  # the split family's out=, as torch's
            got = out
        if isinstance(out, tuple):
            assert len(got) == len(out) and all(g is o for g, o in zip(got, out, strict=True))
        else:
            assert got is out
        return got

    return call


@cache
def _out_cases() -> tuple[harness.Case, ...]:
    """op_db's entries whose torch function takes out= and whose chainrule function has it:
    the function form, in one dtype (float32 where the entry has it), drawing no numbers."""
    chosen: dict[str, harness.Case] = {}
    for case in harness.cases():
        op = harness.entry(case.op)
        fn = harness._lookup(cr, op.name)
        if (
            case.form != "fn"
            or not op.supports_out
            or op.name in harness.RANDOM_OPS
            or getattr(op.op, "__name__", "") == "<lambda>"
            or not _takes_out(fn)
        ):
            continue
        if case.op not in chosen or case.dtype == "float32":
            chosen[case.op] = case
    return tuple(chosen.values())


def test_the_op_db_table_is_full() -> None:
    assert len(_out_cases()) > 150


# in `make test`: one op of each kind (the rest, some 200 entries, under -m slow)
FAST = {"exp", "add", "eq", "sum", "cumsum", "argmax", "max.reduction_with_dim", "sort", "cat"}
FAST |= {"permute_copy", "unbind_copy"}

# An out of another dtype than the result's, where chainrule's rule is not yet torch's:
DTYPE_GAPS = {
    # n=0 is a copy in PyTorch, which refuses an out of another dtype; every other n casts
    "diff": "n=0",
    # the reverse: n=0 and n=1 are copies, cast into; other n take only the result's dtype
    "linalg.matrix_power": "n=0, n=1",
    # complex results, which chainrule refuses whatever out is given
    **dict.fromkeys(["linalg.eig", "linalg.eigvals"], "complex"),
}


def _param(case: harness.Case) -> Any:
    marks = () if case.op in FAST else (pytest.mark.slow,)
    return pytest.param(case, id=case.id, marks=marks)


@pytest.mark.parametrize("case", [_param(c) for c in _out_cases()])
def test_op_db_samples_written_into_out(case: harness.Case) -> None:
    op = harness.entry(case.op)
    fn = harness._lookup(cr, op.name)
    tally = harness.run_case(case, 2, cr_override=_written(fn))
    failed = [f"{o.key}: {o.why}" for o in tally.outcomes if o.kind == "failed"]
    assert failed == []


OTHER = {"float32": "float64", "float64": "float32", "int64": "int32", "int32": "int64"}


def _other_outs(result: Any, lib: Any, k: int) -> Any:
    """Empty outs for ``result`` (torch's), the k-th of another dtype than its result's."""
    leaves = [result] if isinstance(result, torch.Tensor) else list(result)
    outs = []
    for i, leaf in enumerate(leaves):
        name = str(leaf.dtype).removeprefix("torch.")
        outs.append(lib.empty(0, dtype=getattr(lib, OTHER.get(name, name) if i == k else name)))
    return outs[0] if isinstance(result, torch.Tensor) else tuple(outs)


@pytest.mark.parametrize("case", [_param(c) for c in _out_cases() if c.op not in DTYPE_GAPS])
def test_op_db_out_of_another_dtype_taken_or_refused_as_torch(case: harness.Case) -> None:
    """An out of a wider or narrower dtype than the result's: cast into, computed in, or
    refused, as torch does for that op (the values to the input dtype's tolerance)."""
    op = harness.entry(case.op)
    fn = harness._lookup(cr, op.name)
    tol = dict.fromkeys(harness.tolerances(op), harness.tolerances(op)[torch.float32])
    samples, _ = harness._samples(op, getattr(torch, case.dtype), False, 2)
    for sample in samples:
        theirs_in = (sample.input, list(sample.args), sample.kwargs)
        try:
            want = op.op(theirs_in[0], *theirs_in[1], **theirs_in[2])
        except (RuntimeError, TypeError, ValueError, IndexError):
            continue
        ours_in = harness.to_cr(theirs_in)
        for k in range(1 if isinstance(want, torch.Tensor) else len(want)):
            theirs, ours = _both(
                lambda lib, k=k, t=theirs_in, c=ours_in, want=want: (
                    op.op(t[0], *t[1], **t[2], out=_other_outs(want, lib, k))
                    if lib is torch
                    else fn(c[0], *c[1], **c[2], out=_other_outs(want, lib, k))
                )
            )
            if isinstance(theirs, Exception):
                assert isinstance(ours, Exception), f"out {k}: torch refuses ({theirs}); we write"
            else:
                assert not isinstance(ours, Exception), f"out {k}: torch writes; we refuse {ours}"
                harness.compare(ours, theirs, tol)


# --- the rules, against torch's --------------------------------------------------------------


def _both(call: Callable[[Any], Any]) -> tuple[Any, Any]:
    """call(torch) and call(cr), each its result or the exception it raised."""
    results = []
    for lib in (torch, cr):
        try:
            results.append(call(lib))
        except (RuntimeError, TypeError, ValueError) as err:
            results.append(err)
    return results[0], results[1]


CASTS = [  # (function, inputs, out's dtype)
    ("add", lambda lib: (lib.arange(3), 1), "bool"),
    ("add", lambda lib: (lib.arange(3), 1), "float32"),
    ("add", lambda lib: (lib.arange(3), 1), "int8"),
    ("exp", lambda lib: (lib.arange(3),), "int64"),
    ("sqrt", lambda lib: (lib.ones(3),), "float64"),
    ("eq", lambda lib: (lib.arange(3), 1), "float32"),
    ("eq", lambda lib: (lib.arange(3), 1), "int32"),
    ("logical_not", lambda lib: (lib.tensor([True, False]),), "int64"),
    ("sum", lambda lib: (lib.ones(2, 3), 0), "int64"),
    ("argmax", lambda lib: (lib.ones(2, 3), 1), "float32"),
    ("floor_divide", lambda lib: (lib.arange(4), 3), "bool"),
]


@pytest.mark.parametrize(("name", "inputs", "dtype"), CASTS, ids=lambda v: str(v)[:20])
def test_which_dtypes_an_out_takes_as_torch(name: str, inputs: Any, dtype: str) -> None:
    def call(lib: Any) -> Any:
        out = lib.empty(3, dtype=getattr(lib, dtype))
        return getattr(lib, name)(*inputs(lib), out=out)

    theirs, ours = _both(call)
    if isinstance(theirs, Exception):
        assert isinstance(ours, RuntimeError), f"torch refuses: {theirs}"
        assert "can't be cast to the desired output type" in str(ours) or (
            "expected out tensor to have dtype" in str(ours)
        )
        assert str(ours).startswith(name + ":")
    else:
        assert not isinstance(ours, Exception), f"torch computes {theirs}; we refuse: {ours}"
        assert str(ours.dtype).removeprefix("chainrule.") == dtype
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


def _resize_warnings(lib: Any, out_shape: tuple[int, ...]) -> tuple[list[str], tuple]:
    out = lib.zeros(out_shape)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lib.mul(lib.ones(2, 3), 2, out=out)
    texts = [str(w.message).split(" (Triggered internally")[0] for w in caught]
    return texts, tuple(out.shape)


@pytest.mark.parametrize("shape", [(4,), (0,), (2, 3)])
def test_an_out_of_another_shape_is_resized_with_torchs_warning(shape: tuple) -> None:
    assert _resize_warnings(cr, shape) == _resize_warnings(torch, shape)


def test_out_is_returned_written_once_and_its_version_bumped() -> None:
    out = cr.empty(3)
    before = out._version
    assert cr.exp(cr.zeros(3), out=out) is out
    assert out._version == before + 1
    np.testing.assert_array_equal(out.numpy(), np.ones(3, np.float32))


def test_a_view_given_as_out_writes_its_base() -> None:
    for lib in (torch, cr):
        base = lib.zeros(2, 3)
        lib.add(lib.ones(2), 1, out=base[:, 1])
        assert base.tolist() == [[0.0, 2.0, 0.0], [0.0, 2.0, 0.0]]


def test_an_input_requiring_grad_is_refused_unless_grad_is_off() -> None:
    x = cr.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"^exp\(\): functions with out=\.\.\. arguments"):
        cr.exp(x, out=cr.empty(3))
    with pytest.raises(RuntimeError, match=r"^exp\(\): functions with out"):
        cr.exp(cr.ones(3), out=cr.empty(3, requires_grad=True))
    with cr.no_grad():
        out = cr.sum(x, 0, out=cr.empty(()))
    assert not out.requires_grad and out.item() == 3.0


def test_a_tuple_of_results_takes_a_tuple_of_outs() -> None:
    values, indices = cr.empty(0), cr.empty(0, dtype=cr.int64)
    got = cr.max(cr.tensor([[1.0, 5.0], [7.0, 2.0]]), 1, out=(values, indices))
    assert got.values is values and got.indices is indices
    assert values.tolist() == [5.0, 7.0] and indices.tolist() == [1, 0]
    with pytest.raises(TypeError, match=r"^sort: out must be a tuple of 2 tensors"):
        cr.sort(cr.ones(3), out=(cr.empty(0),))
    with pytest.raises(TypeError, match=r"^exp: out must be a Tensor; got list"):
        cr.exp(cr.ones(2), out=[1])
