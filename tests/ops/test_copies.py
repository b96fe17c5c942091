"""The *_copy functions against PyTorch's: the list is torch's own, each result is a
contiguous tensor of its own memory (written in place freely, leaving the input as it was),
its node named as PyTorch's, out= on one tensor and on the split family's lists."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule as cr

# torch's *_copy functions chainrule leaves out, each with the reason
ABSENT = {
    # the sparse layouts' index and value tensors: chainrule's sparse tensors are COO only
    **dict.fromkeys(["ccol_indices_copy", "col_indices_copy", "crow_indices_copy"], "sparse"),
    **dict.fromkeys(["row_indices_copy", "indices_copy", "values_copy"], "sparse"),
    # complex dtypes
    **dict.fromkeys(["view_as_complex_copy", "view_as_real_copy"], "complex"),
}

CALLS = {
    "alias_copy": lambda m, x: m.alias_copy(x),
    "as_strided_copy": lambda m, x: m.as_strided_copy(x, (2, 2), (1, 3), 1),
    "diagonal_copy": lambda m, x: m.diagonal_copy(x, -1),
    "expand_copy": lambda m, x: m.expand_copy(x[:1], (2, 3)),
    "permute_copy": lambda m, x: m.permute_copy(x, (1, 0)),
    "select_copy": lambda m, x: m.select_copy(x, 1, 2),
    "slice_copy": lambda m, x: m.slice_copy(x, 0, 1, 4, 2),
    "split_copy": lambda m, x: m.split_copy(x, 3),
    "split_with_sizes_copy": lambda m, x: m.split_with_sizes_copy(x, [1, 3], 0),
    "squeeze_copy": lambda m, x: m.squeeze_copy(x[:, None], 1),
    "t_copy": lambda m, x: m.t_copy(x),
    "transpose_copy": lambda m, x: m.transpose_copy(x, 1, 0),
    "unbind_copy": lambda m, x: m.unbind_copy(x, -1),
    "unfold_copy": lambda m, x: m.unfold_copy(x, 0, 2, 2),
    "unsqueeze_copy": lambda m, x: m.unsqueeze_copy(x, 2),
    "view_copy": lambda m, x: m.view_copy(x, (3, 4)),
}


def test_every_copy_function_of_torch_is_here_or_named_absent() -> None:
    theirs = {n for n in dir(torch) if n.endswith("_copy") and not n.startswith("_")}
    # a scatter, not a view's copy; Tensor.narrow_copy's form, with the methods (forms/)
    theirs -= {"index_copy", "narrow_copy"}
    assert theirs - set(ABSENT) == {n for n in cr.__all__ if n in theirs} | {"detach_copy"} - (
        set(ABSENT)
    )
    assert theirs - set(ABSENT) <= set(CALLS) | {"detach_copy"}


def _run(lib: object, name: str) -> tuple[list, object]:
    x = lib.tensor(np.arange(12.0).reshape(4, 3), requires_grad=True)  # type: ignore[attr-defined]
    got = CALLS[name](lib, x)
    return ([got] if isinstance(got, lib.Tensor) else list(got)), x  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", sorted(CALLS))
def test_values_node_and_layout_as_torchs(name: str) -> None:
    (theirs, tx), (ours, cx) = _run(torch, name), _run(cr, name)
    assert len(ours) == len(theirs)
    for t, c in zip(theirs, ours, strict=True):
        np.testing.assert_array_equal(c.detach().numpy(), t.detach().numpy())
        assert c.grad_fn.name() == t.grad_fn.name()
        assert c.is_contiguous() and c._base is None
        assert not np.shares_memory(c._array, cx._array)
    weights = [np.arange(t.numel(), dtype=np.float64).reshape(t.shape) for t in theirs]
    sum((t * torch.tensor(w)).sum() for t, w in zip(theirs, weights, strict=True)).backward()
    sum((c * cr.tensor(w)).sum() for c, w in zip(ours, weights, strict=True)).backward()
    np.testing.assert_array_equal(cx.grad.numpy(), tx.grad.numpy())


def test_a_copy_is_written_in_place_in_a_graph_leaving_its_input() -> None:
    x = cr.ones(2, 3, requires_grad=True)
    pieces = cr.split_copy(x * 1.0, 1)  # split's own pieces refuse this: views of one node
    pieces[0].mul_(3.0)
    (pieces[0].sum() + pieces[1].sum()).backward()
    assert x.grad.tolist() == [[3.0, 3.0, 3.0], [1.0, 1.0, 1.0]]
    y = cr.zeros(2, 3)
    cr.t_copy(y).add_(1.0)
    assert y.sum().item() == 0.0


def test_a_squeeze_with_nothing_to_squeeze_keeps_the_inputs_node() -> None:
    x = cr.ones(2, 3, requires_grad=True) * 2.0
    y = cr.squeeze_copy(x)
    assert x.grad_fn.name() == "MulBackward0"
    assert (
        y.grad_fn.name()
        == torch.squeeze_copy(torch.ones(2, 3, requires_grad=True) * 2.0).grad_fn.name()
    )


def test_detach_copy_is_a_copy_outside_the_graph() -> None:
    x = cr.ones(2, requires_grad=True)
    y = cr.detach_copy(x)
    assert not y.requires_grad and y.grad_fn is None
    assert not np.shares_memory(y._array, x._array)


def test_out_writes_one_tensor_as_torchs() -> None:
    out = cr.empty(0)
    assert cr.permute_copy(cr.ones(2, 3), (1, 0), out=out) is out
    assert tuple(out.shape) == (3, 2)


def test_out_of_the_split_family_is_a_list_of_shaped_tensors_and_returns_none() -> None:
    x = np.arange(8.0).reshape(4, 2)
    theirs = [torch.empty(2, 2), torch.empty(2, 2)]
    ours = [cr.empty(2, 2), cr.empty(2, 2)]
    assert torch.split_copy(torch.tensor(x), 2, out=theirs) is None
    assert cr.split_copy(cr.tensor(x), 2, out=ours) is None
    for t, c in zip(theirs, ours, strict=True):
        np.testing.assert_array_equal(c.numpy(), t.numpy())
    with pytest.raises(RuntimeError, match=r"^unbind_copy: expected an out= argument of 4"):
        cr.unbind_copy(cr.tensor(x), out=[cr.empty(2)])
    with pytest.raises(RuntimeError, match=r"^split_copy: each out tensor must have its piece"):
        cr.split_copy(cr.tensor(x), 2, out=[cr.empty(0), cr.empty(0)])


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: cr.slice_copy(cr.ones(3), 0, 0, 2, 0), r"^slice_copy: step must be positive"),
        (lambda: cr.slice_copy(cr.ones(3), 1), r"slice_copy"),
        (lambda: cr.split_with_sizes_copy(cr.ones(4), [1, 2]), r"^split_with_sizes_copy: "),
        (lambda: cr.split_copy(cr.ones(4), 0), r"^split_copy: split_size must be positive"),
        (lambda: cr.unbind_copy(cr.tensor(1.0)), r"unbind_copy"),
    ],
)
def test_mistakes_are_refused_naming_the_function(call: object, message: str) -> None:
    with pytest.raises((ValueError, IndexError, RuntimeError), match=message):
        call()  # type: ignore[operator]
