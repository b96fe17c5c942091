"""The op catalog's row type, and the rows kept in this package's modules: one module a kind
of op (each holds a ``ROWS`` list), gathered by ``discovered()`` into test_ops.py's catalog, so
a new kind of op adds a file here rather than lines to one long table."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

NUM = 1.7  # a Python number operand, in a row's shapes


@dataclass
class Row:
    name: str
    fn: Callable[..., Any]  # fn(module, *inputs): module is chainrule or torch
    shapes: tuple  # one entry per input: a shape, or NUM for a plain Python number
    domain: str | tuple[str, ...] = "real"  # per input: real, pos, away (from 0), unit
    torch_fn: Callable[..., Any] | None = None  # when PyTorch spells the call differently
    atol32: float = 1e-5
    rtol32: float = 1e-4
    grad: bool = True  # False: outputs carry no gradient (argmax, comparisons)
    second: bool = False  # also compare second derivatives with PyTorch
    numeric: bool = True  # False: the gradient is not the derivative by design (PyTorch's too)


def same(fn: Callable[..., Any]) -> Callable[..., Any]:
    """For torch_fn: turn Python numbers into tensors, for PyTorch functions that need them."""

    def call(m: Any, *xs: Any) -> Any:
        ref = next(x for x in xs if isinstance(x, torch.Tensor))
        return fn(
            m, *[x if isinstance(x, torch.Tensor) else torch.tensor(x, dtype=ref.dtype) for x in xs]
        )

    return call


def discovered() -> list[Row]:
    """The rows of every module of this package, module by module in name order."""
    rows: list[Row] = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        rows += importlib.import_module(f"{__name__}.{info.name}").ROWS
    return rows
