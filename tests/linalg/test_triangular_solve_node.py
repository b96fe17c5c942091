"""torch.triangular_solve's solution and copy of A are the outputs of one node, as PyTorch's
TriangularSolveBackward0: its edges, its saved values, and the gradients of either output or
both (the copy's whole, the solution's kept to A's triangle), first and second order."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr

SHAPES = [((3, 2), (3, 3)), ((2, 3, 2), (3, 3)), ((4, 3, 1), (2, 1, 3, 3))]
OPTIONS = [(True, False, False), (False, True, False), (True, True, True), (False, False, True)]


def _solve(lib: Any, b: Any, A: Any, options: tuple[bool, bool, bool]) -> Any:
    upper, transpose, unitriangular = options
    with warnings.catch_warnings():  # PyTorch's deprecation of triangular_solve
        warnings.simplefilter("ignore")
        return lib.triangular_solve(b, A, upper, transpose, unitriangular)


@pytest.mark.parametrize("options", OPTIONS, ids=str)
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
@pytest.mark.parametrize("which", [(0, 1), (0,), (1,)], ids=str)
def test_gradients_of_either_output_are_torchs(
    shapes: tuple[tuple[int, ...], ...], options: tuple[bool, bool, bool], which: tuple[int, ...]
) -> None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal(shapes[1]) + 3 * np.eye(3)
    b = rng.standard_normal(shapes[0])
    ours = [cr.tensor(a, requires_grad=True), cr.tensor(b, requires_grad=True)]
    theirs = [torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)]
    got, want = _solve(cr, ours[1], ours[0], options), _solve(torch, theirs[1], theirs[0], options)
    weights = [rng.standard_normal(tuple(t.shape)) for t in want]
    loss = sum((got[k] * cr.tensor(weights[k])).sum() for k in which)
    loss_t = sum((want[k] * torch.tensor(weights[k])).sum() for k in which)
    grads = cr.autograd.grad(loss, ours, create_graph=True)
    grads_t = torch.autograd.grad(loss_t, theirs, create_graph=True)
    for g, t in zip(grads, grads_t, strict=True):
        np.testing.assert_allclose(g.detach().numpy(), t.detach().numpy(), rtol=1e-10, atol=1e-12)
    if which != (1,):  # second order, through the solution's rule
        h = [rng.standard_normal(t.shape) for t in grads_t]
        twice = cr.autograd.grad(grads, ours, [cr.tensor(x) for x in h])
        twice_t = torch.autograd.grad(grads_t, theirs, [torch.tensor(x) for x in h])
        for g, t in zip(twice, twice_t, strict=True):
            np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-9, atol=1e-12)


def test_the_two_outputs_share_one_node_with_torchs_edges_and_saved_values() -> None:
    rng = np.random.default_rng(1)
    a, b = np.tril(rng.standard_normal((3, 3))) + 3 * np.eye(3), rng.standard_normal((3, 2))
    for grads in [(True, True), (True, False), (False, True)]:
        found = []
        for lib in (cr, torch):
            A = lib.tensor(a, requires_grad=grads[0])
            B = lib.tensor(b, requires_grad=grads[1])
            X, M = _solve(lib, B, A, (False, True, False))
            fn = X.grad_fn
            assert M.grad_fn is fn and fn.name() == "TriangularSolveBackward0"
            edges = [None if f is None else type(f).__name__ for f, _ in fn.next_functions]
            saved = {k: getattr(fn, k) for k in dir(fn) if k.startswith("_saved_")}
            shown = {k: v if isinstance(v, bool) else v.detach().numpy() for k, v in saved.items()}
            found.append((edges, shown))
        (edges, saved), (edges_t, saved_t) = found
        assert edges == edges_t and sorted(saved) == sorted(saved_t)
        for k, v in saved.items():
            np.testing.assert_allclose(v, saved_t[k], rtol=1e-12)


def test_triangular_solve_refuses_mismatched_shapes_and_dtypes() -> None:
    with pytest.raises(ValueError, match=r"triangular_solve: .*\(3, 3\) and \(2, 1\)"):
        cr.triangular_solve(cr.ones(2, 1), cr.eye(3))
    with pytest.raises(TypeError, match="triangular_solve: .*float32 and .*float64"):
        cr.triangular_solve(cr.ones(3, 1, dtype=cr.float64), cr.eye(3))
