"""Ops that leave the order of equal elements unspecified: sort and argsort without
``stable=True``, and topk (PyTorch's documentation says so of each). Where chainrule's indices
differ from PyTorch's, they are judged by what they pick: the values exactly PyTorch's, and
the indices along the dim distinct, each picking its value from the input."""

from __future__ import annotations

from typing import Any

import torch

import chainrule as cr

UNSPECIFIED = {"sort", "argsort", "topk"}


def applies(op: str, args: Any, kwargs: Any) -> bool:
    """Whether `op`'s call leaves the order of ties to the implementation."""
    if op not in UNSPECIFIED or kwargs.get("stable", False):
        return False
    return op != "topk" or kwargs.get("sorted", args[3] if len(args) > 3 else True)


def _dim(op: str, args: Any, kwargs: Any) -> int:
    if "dim" in kwargs:
        return kwargs["dim"]
    position = 1 if op == "topk" else 0  # topk(input, k, dim, ...); sort(input, dim, ...)
    if len(args) > position and not isinstance(args[position], bool):
        return args[position]
    return -1


def same_but_for_ties(op: str, input: Any, args: Any, kwargs: Any, got: Any, want: Any) -> bool:
    """Whether chainrule's answer `got` is PyTorch's `want` up to the order of equal elements."""
    if not isinstance(input, torch.Tensor) or input.dim() == 0:
        return False
    dim = _dim(op, args, kwargs)
    if op == "argsort":
        values, indices = torch.gather(input, dim, want), got
    else:
        if not isinstance(got, (tuple, list)) or len(got) != 2:
            return False
        values, indices = want[0], got[1]
        if not torch.equal(torch.as_tensor(got[0].numpy()), values):
            return False
    indices = torch.as_tensor(indices.numpy())
    if indices.shape != values.shape or indices.dtype != torch.int64:
        return False
    if indices.numel() == 0:
        return True
    if indices.min() < 0 or indices.max() >= input.shape[dim]:
        return False
    if not torch.equal(torch.gather(input, dim, indices), values):
        return False
    n = indices.shape[dim]  # distinct along the dim: no element picked twice
    ordered = indices.sort(dim).values
    return n < 2 or bool((ordered.narrow(dim, 1, n - 1) != ordered.narrow(dim, 0, n - 1)).all())


# Outputs defined up to a sign: each eigenvector of a symmetric matrix (with distinct
# eigenvalues) may be v or -v, and LAPACK builds choose differently.
SIGN_GAUGED = {"linalg.eigh"}


def sign_aligned(op: str, got: Any, want: Any) -> Any:
    """chainrule's eigenvectors with each column's sign turned to PyTorch's (a product by
    constant signs, so the gradients then meet PyTorch's upstream gradient as PyTorch's
    vectors do)."""
    if op not in SIGN_GAUGED or not isinstance(got, tuple) or len(got) != 2:
        return got
    values, vectors = got
    agreement = (vectors.detach().numpy() * want[1].detach().numpy()).sum(axis=-2, keepdims=True)
    signs = torch.from_numpy(agreement).sign().numpy()
    signs[signs == 0] = 1
    return type(got)(values, vectors * cr.tensor(signs, dtype=vectors.dtype))
