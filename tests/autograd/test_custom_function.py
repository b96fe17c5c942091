"""PyTorch's custom autograd Function on chainrule: each Function below is written once, for
a library ``lib`` (torch or chainrule), and run on both, with the same inputs, gradients and
errors: ctx.save_for_backward and saved_tensors, needs_input_grad, non-Tensor arguments,
setup_context, several outputs, mark_non_differentiable, set_materialize_grads, mark_dirty,
once_differentiable, double backward, gradcheck."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr

LIBS = [torch, cr]


def _grad(lib: Any) -> Any:
    return torch.autograd.grad if lib is torch else cr.grad


def functions(lib: Any) -> dict[str, Any]:
    F = lib.autograd.Function

    class Exp(F):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            return grad * y

    class Legendre3(F):  # PyTorch's tutorial's P3(x) = (5x^3 - 3x) / 2
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return 0.5 * (5 * x**3 - 3 * x)

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * 1.5 * (5 * x**2 - 1)

    class Scale(F):  # a number and a keyword among the arguments
        @staticmethod
        def forward(ctx, x, factor, *, shift=0.0):
            ctx.factor = factor
            ctx.seen = ctx.needs_input_grad
            return x * factor + shift

        @staticmethod
        def backward(ctx, grad):
            return grad * ctx.factor, None

    class Mul(F):  # the newer form: forward without ctx, then setup_context
        @staticmethod
        def forward(a, b):
            return a * b

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(*inputs)

        @staticmethod
        def backward(ctx, grad):
            a, b = ctx.saved_tensors
            return (grad * b if ctx.needs_input_grad[0] else None,
                    grad * a if ctx.needs_input_grad[1] else None)  # fmt: skip

    class SinCos(F):  # two outputs
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.sin(), x.cos()

        @staticmethod
        def backward(ctx, gs, gc):
            (x,) = ctx.saved_tensors
            return gs * x.cos() - gc * x.sin()

    class SinCosLazy(F):  # unused outputs' gradients arrive as None
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            ctx.save_for_backward(x)
            return x.sin(), x.cos()

        @staticmethod
        def backward(ctx, gs, gc):
            (x,) = ctx.saved_tensors
            ctx.got = (gs is None, gc is None)
            out = x * 0
            if gs is not None:
                out = out + gs * x.cos()
            if gc is not None:
                out = out - gc * x.sin()
            return out

    class SortedValues(F):  # a float output marked non-differentiable
        @staticmethod
        def forward(ctx, x):
            doubled = x * 2
            ctx.mark_non_differentiable(doubled)
            return x * 3, doubled

        @staticmethod
        def backward(ctx, g, g_doubled):
            ctx.zeros = bool((g_doubled == 0).all())
            return g * 3

    class AddOneInPlace(F):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad

    once = lib.autograd.function.once_differentiable  # where PyTorch's programs import it

    class OnceCube(F):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        @once
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * 3 * x**2

    return {k: v for k, v in locals().items() if isinstance(v, type)}


def _x(lib: Any, dtype: str = "float64") -> Any:
    return lib.tensor([0.3, -1.2, 2.0], dtype=getattr(lib, dtype), requires_grad=True)


@pytest.mark.parametrize("name", ["Exp", "Legendre3"])
def test_first_and_second_derivatives_match_torch(name: str) -> None:
    got = {}
    for lib in LIBS:
        f = functions(lib)[name]
        x = _x(lib)
        y = f.apply(x)
        (g,) = _grad(lib)(y.sum(), x, create_graph=True)
        (h,) = _grad(lib)(g.sum(), x)
        got[lib] = (y.detach().numpy(), g.detach().numpy(), h.numpy())
        named = y.grad_fn.name()
        assert named == f"{name}Backward"
    for a, b in zip(got[cr], got[torch], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_gradcheck_and_gradgradcheck_accept_it() -> None:
    fs = functions(cr)
    x = _x(cr)
    assert cr.autograd.gradcheck(fs["Legendre3"].apply, (x,))
    assert cr.autograd.gradgradcheck(fs["Exp"].apply, (x,))


def test_numbers_keywords_and_needs_input_grad() -> None:
    for lib in LIBS:
        f = functions(lib)["Scale"]
        x = _x(lib)
        y = f.apply(x, 2.5)
        y.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), [2.5, 2.5, 2.5])
        assert y.grad_fn is not None


def test_the_newer_form_with_setup_context() -> None:
    got = []
    for lib in LIBS:
        a = _x(lib)
        b = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)  # needs no gradient
        functions(lib)["Mul"].apply(a, b).sum().backward()
        got.append(a.grad.numpy())
        assert b.grad is None
    np.testing.assert_allclose(got[0], got[1])


@pytest.mark.parametrize("use", ["both", "first", "second"])
def test_several_outputs(use: str) -> None:
    got = []
    for lib in LIBS:
        x = _x(lib)
        s, c = functions(lib)["SinCos"].apply(x)
        assert s.grad_fn.name() == c.grad_fn.name() == "SinCosBackward"
        loss = {"both": s.sum() + 2 * c.sum(), "first": s.sum(), "second": c.sum()}[use]
        loss.backward()
        got.append((s.detach().numpy(), c.detach().numpy(), x.grad.numpy()))
    for a, b in zip(*got, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_unmaterialized_gradients_arrive_as_none() -> None:
    for lib in LIBS:
        x = _x(lib)
        s, c = functions(lib)["SinCosLazy"].apply(x)
        s.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), np.cos([0.3, -1.2, 2.0]))


def test_a_non_differentiable_output_takes_no_gradient() -> None:
    for lib in LIBS:
        x = _x(lib)
        y, doubled = functions(lib)["SortedValues"].apply(x)
        assert y.requires_grad and not doubled.requires_grad
        y.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0, 3.0])


def test_mark_dirty_writes_in_place_and_keeps_the_history() -> None:
    got = []
    for lib in LIBS:
        x = _x(lib)
        y = x * 2
        z = functions(lib)["AddOneInPlace"].apply(y)
        assert z is y
        (z * z).sum().backward()
        got.append((z.detach().numpy(), x.grad.numpy()))
    for a, b in zip(*got, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    for lib in LIBS:
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            functions(lib)["AddOneInPlace"].apply(_x(lib))


def test_once_differentiable_refuses_a_second_derivative() -> None:
    for lib in LIBS:
        x = _x(lib)
        v = lib.ones(3, dtype=lib.float64, requires_grad=True)  # an upstream in a graph
        y = functions(lib)["OnceCube"].apply(x)
        (g,) = _grad(lib)(y, x, v, create_graph=True)
        np.testing.assert_allclose(g.detach().numpy(), 3 * np.array([0.3, -1.2, 2.0]) ** 2)
        assert g.requires_grad
        with pytest.raises(
            RuntimeError,
            match="differentiate twice a function that was marked with @once_differentiable",
        ):
            g.sum().backward()
        (g,) = _grad(lib)(functions(lib)["OnceCube"].apply(x).sum(), x, create_graph=True)
        assert not g.requires_grad  # the seed is no graph's: nothing to refuse, as PyTorch


def test_a_saved_tensor_written_in_place_is_refused() -> None:
    for lib in LIBS:
        x = _x(lib)
        y = x * 1
        z = functions(lib)["Legendre3"].apply(y)
        with lib.no_grad():
            y.mul_(2)
        with pytest.raises(RuntimeError, match="modified by an in.?place operation"):
            z.sum().backward()


def test_without_grad_nothing_is_recorded() -> None:
    for lib in LIBS:
        with lib.no_grad():
            y = functions(lib)["Exp"].apply(_x(lib))
        assert not y.requires_grad and y.grad_fn is None


def test_misuse_is_named() -> None:
    fs = functions(cr)
    with pytest.raises(RuntimeError, match="Exp: a Function is not instantiated; call Exp.apply"):
        fs["Exp"]()

    class TwoGrads(cr.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad, grad

    with pytest.raises(RuntimeError, match=r"TwoGrads.backward: returned 2 gradients for the 1"):
        TwoGrads.apply(_x(cr)).sum().backward()


def test_the_internal_primitives_keep_a_name_of_their_own() -> None:
    from chainrule.autograd import primitive

    assert cr.autograd.Function is not primitive.Function
    assert not issubclass(primitive.Function, cr.autograd.Function)


def test_torch_autograd_function_is_the_users_function() -> None:
    """``from torch.autograd.function import Function, FunctionCtx`` gives what PyTorch's does."""
    from chainrule.autograd import function

    assert function.Function is cr.autograd.Function
    assert function.FunctionCtx is cr.autograd.FunctionCtx
    assert function.once_differentiable is cr.autograd.once_differentiable
    for name in ("Function", "FunctionCtx", "once_differentiable"):
        assert hasattr(torch.autograd.function, name)


def outputs_functions(lib: Any) -> dict[str, Any]:
    """Functions whose outputs are saved, written in place, or views of their inputs."""
    F = lib.autograd.Function

    class ExpTwice(F):  # two outputs, the first saved: its gradient depends on it
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y, y * 2

        @staticmethod
        def backward(ctx, g1, g2):
            (y,) = ctx.saved_tensors
            return (g1 + 2 * g2) * y

    class ExpTwiceLater(F):  # the same, saved by setup_context (the newer form)
        @staticmethod
        def forward(x):
            y = x.exp()
            return y, y * 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(output[0])

        @staticmethod
        def backward(ctx, g1, g2):
            (y,) = ctx.saved_tensors
            return (g1 + 2 * g2) * y

    class DoubleInPlace(F):  # writes its input and returns it
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class DoubleInPlaceLost(F):  # writes its input and returns a copy: refused
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class Rows(F):  # two outputs, each a view of the input
        @staticmethod
        def forward(ctx, x):
            return x[0], x[1]

        @staticmethod
        def backward(ctx, g0, g1):
            return lib.stack([g0, 3 * g1])  # not the views' own rule: the node's must run

    class Row0(F):  # one output, a view of the input
        @staticmethod
        def forward(ctx, x):
            return x[0]

        @staticmethod
        def backward(ctx, g):
            return lib.stack([3 * g, lib.zeros_like(g)])

    class RowsOneMarked(F):  # two views, the second marked non-differentiable
        @staticmethod
        def forward(ctx, x):
            a, b = x[0], x[1]
            ctx.mark_non_differentiable(b)
            return a, b

        @staticmethod
        def backward(ctx, g0, g1):
            return lib.stack([3 * g0, lib.zeros_like(g0)])

    once = lib.autograd.function.once_differentiable  # where PyTorch's programs import it

    class SeesGradMode(F):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        @once
        def backward(ctx, g):
            ctx.seen = lib.is_grad_enabled()
            SEEN.append(ctx.seen)
            return g * 2

    made = {k: v for k, v in locals().items() if isinstance(v, type)}
    return {"Exp": functions(lib)["Exp"], **made}  # Exp: one output, saved


SEEN: list[bool] = []


@pytest.mark.parametrize("used", ["both", "first", "second"])
@pytest.mark.parametrize("name", ["ExpTwice", "ExpTwiceLater", "Exp"])
def test_saved_outputs_join_the_graph_under_create_graph(name: str, used: str) -> None:
    """A saved output unpacked in a backward recorded with create_graph is the output in the
    graph (its node's), so a second derivative goes through it, whether the output is still
    held (both) or was dropped by the program (first, second)."""
    got = []
    for lib in LIBS:
        x = _x(lib)
        outs = outputs_functions(lib)[name].apply(x)
        outs = outs if isinstance(outs, tuple) else (outs,)
        picked = {"both": outs, "first": outs[:1], "second": outs[-1:]}[used]
        loss = sum((o * o).sum() for o in picked)
        del outs, picked
        (g,) = _grad(lib)(loss, x, create_graph=True)
        assert g.requires_grad and g.grad_fn is not None
        (h,) = _grad(lib)(g.sum(), x)
        got.append((g.detach().numpy(), h.numpy()))
    for a, b in zip(*got, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12)


@pytest.mark.parametrize("name", ["ExpTwice", "ExpTwiceLater", "Exp"])
def test_a_function_that_saves_its_output_frees_its_graph_without_the_collector(
    name: str,
) -> None:
    """The saved output is kept by ctx weakly, so the node does not hold itself alive."""
    import gc
    import weakref

    gc.disable()
    try:
        y = outputs_functions(cr)[name].apply(_x(cr))
        node = weakref.ref(y[0].grad_fn if isinstance(y, tuple) else y.grad_fn)
        del y
        assert node() is None
    finally:
        gc.enable()


def test_mark_dirty_of_an_input_not_returned_is_refused() -> None:
    for lib in LIBS:
        for requires_grad in (True, False):
            x = lib.ones(2, requires_grad=requires_grad) * 1
            with pytest.raises(RuntimeError, match="(?i)some elements marked as dirty during "
                               "the forward method were not returned as output"):  # fmt: skip
                outputs_functions(lib)["DoubleInPlaceLost"].apply(x)


def test_mark_dirty_of_a_view_gives_its_base_the_functions_node() -> None:
    """Written through a view, the base's gradient goes through the Function's backward
    (a CopySlices node, as a built-in in-place op on a view), the base's other views see the
    write, and earlier readers of the view's old value keep theirs."""
    got = []
    for lib in LIBS:
        w = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=lib.float64, requires_grad=True)
        h = w * 4
        row, col = h[0], h[:, 0]  # col, another view, sees the write: it is re-pointed
        before = row + 1  # reads the old value
        r = outputs_functions(lib)["DoubleInPlace"].apply(row)
        assert r is row and h.grad_fn.name().endswith("CopySlices")
        ((h * h).sum() + (r * 5).sum() + before.sum() + (col * 7).sum()).backward()
        got.append((h.detach().numpy(), w.grad.numpy()))
    for a, b in zip(*got, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    for lib in LIBS:  # a view of a leaf that requires grad may not be written
        w = lib.ones(2, 3, requires_grad=True)
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            outputs_functions(lib)["DoubleInPlace"].apply(w[0])


@pytest.mark.parametrize("name", ["Rows", "Row0", "RowsOneMarked"])
def test_outputs_that_are_views_of_the_input_are_views(name: str) -> None:
    got = []
    for lib in LIBS:
        x = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=lib.float64, requires_grad=True)
        h = x * 1
        outs = outputs_functions(lib)[name].apply(h)
        outs = outs if isinstance(outs, tuple) else (outs,)
        assert all(o._base is h for o in outs)
        assert all(np.shares_memory(o.detach().numpy(), h.detach().numpy()) for o in outs)
        sum(((k + 1) * o).sum() for k, o in enumerate(outs) if o.requires_grad).backward()
        got.append(x.grad.numpy())
    np.testing.assert_allclose(got[0], got[1], rtol=1e-12)


@pytest.mark.parametrize(
    ("name", "which", "pattern"),
    [
        ("Rows", 1, "This view is the output of a function that returns multiple views"),
        ("Row0", 0, "This view was created inside a custom Function"),
        ("RowsOneMarked", 0, "This view was created inside a custom Function"),
        ("RowsOneMarked", 1, "A view was created in no_grad mode and is being modified inplace"),
    ],
)
def test_a_view_a_function_returns_is_not_written_in_place(
    name: str, which: int, pattern: str
) -> None:
    for lib in LIBS:
        h = lib.ones(2, 3, requires_grad=True) * 1
        outs = outputs_functions(lib)[name].apply(h)
        outs = outs if isinstance(outs, tuple) else (outs,)
        with pytest.raises(RuntimeError, match=pattern):
            outs[which].mul_(2)


@pytest.mark.parametrize("create_graph", [False, True])
def test_grad_mode_is_off_inside_a_once_differentiable_backward(create_graph: bool) -> None:
    for lib in LIBS:
        SEEN.clear()
        x = _x(lib)
        y = outputs_functions(lib)["SeesGradMode"].apply(x)
        _grad(lib)(y.sum(), x, create_graph=create_graph)
        assert SEEN == [False]


def test_the_node_reads_as_its_ctx_until_backward_frees_it() -> None:
    for lib in LIBS:
        x = _x(lib)
        y = outputs_functions(lib)["Exp"].apply(x)
        node = y.grad_fn
        np.testing.assert_allclose(node.saved_tensors[0].detach().numpy(), np.exp([0.3, -1.2, 2.0]))
        assert node.needs_input_grad == (True,)
        z = functions(lib)["Scale"].apply(x, 2.5)
        assert z.grad_fn.factor == 2.5  # what forward set on ctx
        y.sum().backward()
        with pytest.raises(RuntimeError, match="(?i)backward through the graph a second time"):
            _ = node.saved_tensors


def test_the_marks_take_tensors_and_mark_dirty_takes_inputs() -> None:
    for lib in LIBS:

        class MarksANumber(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, mark):
                getattr(ctx, mark)(3)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2, None

        class DirtiesANewTensor(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = x * 2
                ctx.mark_dirty(y)
                return y

            @staticmethod
            def backward(ctx, g):
                return g * 2

        for mark in ("mark_dirty", "mark_non_differentiable"):
            with pytest.raises(RuntimeError, match=f"{mark}.* (accepts|accept) (variable|Tensor)"):
                MarksANumber.apply(_x(lib), mark)
        with pytest.warns(UserWarning, match="mark_dirty.* (received|receives) a tensor that"):
            DirtiesANewTensor.apply(_x(lib) * 1)


@pytest.mark.parametrize("through", ["tensor", "view"])
@pytest.mark.parametrize("writes", [1, 2])
def test_earlier_readers_of_a_dirty_input_keep_its_old_value(writes: int, through: str) -> None:
    """A node recorded before the Function wrote (z = h + 1) reaches h's value before the
    write, however many times forward wrote, and saved_tensors takes the versions forward
    left; the version counts as PyTorch's (each write, and one for mark_dirty)."""
    got = []
    for lib in LIBS:

        class Writes(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                for _ in range(writes):
                    x.mul_(2)
                ctx.mark_dirty(x)
                ctx.save_for_backward(x)
                return x

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return g * 2**writes

        w = lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=lib.float64, requires_grad=True)
        h = w * 1
        z = h + 1
        seen = h._version
        Writes.apply(h if through == "tensor" else h[0])
        (z * lib.tensor([1.0, 3.0], dtype=lib.float64)).sum().backward(retain_graph=True)
        first = w.grad.numpy().copy()
        (10 * h).sum().backward()
        got.append((h._version - seen, first, w.grad.numpy()))
    assert got[0][0] == got[1][0]
    for a, b in zip(got[0][1:], got[1][1:], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12)
