"""A decomposition's parts (eigh's, svd's, qr's, lu's) made directly from LAPACK's arrays,
where no node would be recorded: without each part's apply and the copy it keeps apart for
its backward; with the switch off, each part's apply (fastpath/table.py; linalg/decompose.py
asks the switch)."""

from __future__ import annotations

from typing import Any

from ..autograd.mode import state as modes
from ..autograd.primitive import Function, batching, dual

_APPLIES = Function.__dict__  # the exporter's trace replaces its apply, and sees every op
_APPLY = _APPLIES["apply"]


def untracked(t: Any) -> bool:
    """Whether the ops on t would record nothing and nothing else watches them: no node (t
    needs no gradient, or grad mode is off), no vmap or dual level open, no exporter tracing
    the ops, no anomaly mode checking outputs. (Its caller asks the switch.)"""
    if t.requires_grad and modes.grad_enabled:
        return False
    if batching[0] is not None or dual[0] is not None or _APPLIES["apply"] is not _APPLY:
        return False
    return not modes.anomaly
