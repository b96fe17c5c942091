"""Copying weights and buffers between a chainrule module and its PyTorch twin (the module of
the same shape), in either direction. Copies that rename keys or pick a subset stay in their
tests."""

from __future__ import annotations

from typing import Any

import torch

import chainrule as cr


def _same_keys_and_shapes(ours: Any, theirs: Any, into: str) -> None:
    """Both state_dicts have the same keys in the same order and the same shapes; else an
    AssertionError naming the first difference."""
    a = [(k, tuple(v.shape)) for k, v in ours.state_dict().items()]
    b = [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        assert x == y, (
            f"{into}: entry {i} of the state_dicts differs; chainrule has {x[0]!r} of shape "
            f"{x[1]}, torch has {y[0]!r} of shape {y[1]}"
        )
    assert len(a) == len(b), (
        f"{into}: chainrule's state_dict has {len(a)} entries, torch's {len(b)}; the first "
        f"unmatched is {(a if len(a) > len(b) else b)[min(len(a), len(b))][0]!r}"
    )


def copy_into(ours: cr.nn.Module, theirs: torch.nn.Module) -> None:
    """torch's weights and buffers (``theirs``) copied into the chainrule twin ``ours``."""
    _same_keys_and_shapes(ours, theirs, "copy_into")
    ours.load_state_dict(
        {k: cr.tensor(v.detach().cpu().numpy()) for k, v in theirs.state_dict().items()}
    )


def copy_back(theirs: torch.nn.Module, ours: cr.nn.Module) -> None:
    """chainrule's weights and buffers (``ours``) copied into the torch twin ``theirs``."""
    _same_keys_and_shapes(ours, theirs, "copy_back")
    theirs.load_state_dict(
        {k: torch.tensor(v.detach().cpu().numpy()) for k, v in ours.state_dict().items()}
    )
