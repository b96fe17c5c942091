"""The forward-mode pass told step by step, for cr.explain(y, mode="forward", tangents=...):
the chain rule's other order on the same recorded graph. viz.explain owns the names and the
backward story; this module pushes tangents through the graph it is given."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .. import array
from ..autograd import engine
from ..autograd.engine import grad
from ..autograd.mode import enable_grad
from ..autograd.primitive import Function
from ..tensor import Tensor


def _shape(shape: Sequence[int]) -> str:
    return str(tuple(int(n) for n in shape))


def _norm(t: Tensor) -> float:
    x = t._array.astype(array.float64)
    return float(array.xp.sqrt(array.xp.sum(x * x)))


def _tangent_of(x: Tensor, given: Any) -> Tensor:
    """A leaf's tangent as given: a tensor of its shape, or a number for every element."""
    if isinstance(given, Tensor):
        if tuple(given.shape) != tuple(x.shape):
            raise ValueError(
                f"explain: a tangent's shape differs from its tensor's; got shapes "
                f"{_shape(given.shape)} and {_shape(x.shape)}"
            )
        return given.detach().to(x.dtype)
    return x.detach().new_full(tuple(x.shape), float(given))


def pushed(fn: Function, out: Tensor, tangents: list[Tensor | None]) -> Tensor:
    """J t of one recorded node, from its own backward rule, which is linear in the
    gradient u: the gradient of <J^T u, t> with respect to u."""
    with enable_grad():
        u = out.detach().new_ones(tuple(out.shape)).requires_grad_()
        back = fn.backward(u, out)
        total = None
        for i, (x, t, g) in enumerate(zip(fn.inputs, tangents, back, strict=True)):
            if t is None or g is None:
                continue
            part = (engine.fit(fn, i, x, g) * t).sum()
            total = part if total is None else total + part
        if total is None or not total.requires_grad:
            return out.detach().new_zeros(tuple(out.shape))
        (tangent,) = grad(total, [u], allow_unused=True)
    return out.detach().new_zeros(tuple(out.shape)) if tangent is None else tangent.detach()


def explain_forward(
    root: Tensor,
    tangents: Mapping[Tensor, Any],
    order: Sequence[Tensor],
    names: Mapping[int, str],
    rule: Callable[[Function], str],
    role: Callable[[Function, int, int], str],
) -> str:
    """Push ``tangents`` (leaf -> tensor or number) from the leaves to ``root`` through the
    nodes in ``order`` (inputs first), and tell each step: the node, the tangent each input
    carries and the one its output gets, J t."""
    given = {id(x): (x, t) for x, t in tangents.items()}
    leaves = {id(t) for t in order if t.grad_fn is None}
    stray = [x for x, _ in given.values() if id(x) not in leaves]
    if stray:
        raise ValueError(
            f"explain: tangents are given at the graph's leaves; got a tensor of shape "
            f"{_shape(stray[0].shape)} that is not one of the leaves behind the root"
        )
    nodes = [t for t in order if t.grad_fn is not None]
    step = {id(t): k for k, t in enumerate(nodes, 1)}

    def name(t: Tensor) -> str:
        return names.get(id(t), "leaf") if t.grad_fn is None else f"#{step[id(t)]} {t.grad_fn.op}"

    carried: dict[int, Tensor] = {}
    lines = [f"Forward pass of tangents to {name(root)} of shape {_shape(root.shape)}, from:"]
    for x, t in given.values():
        carried[id(x)] = _tangent_of(x, t)
        lines.append(
            f"    {name(x)} {_shape(x.shape)} with tangent norm {_norm(carried[id(x)]):.4f}"
        )
    lines.append("Nodes are visited in topological order, each after all of its inputs;")
    lines.append("each output's tangent is J t, the sum over inputs of their tangents pushed")
    lines.append("through the local derivative (the same rule the backward pass pulls through).")
    for t in nodes:
        fn = t.grad_fn
        assert fn is not None  # nodes have one
        ins = list(fn.inputs)
        ts = [carried.get(id(x)) if isinstance(x, Tensor) else None for x in ins]
        lines.append(f"{name(t)} -> {_shape(t.shape)}\n    rule: {rule(fn)}")
        for i, (x, tx) in enumerate(zip(ins, ts, strict=True)):
            if isinstance(x, Tensor):
                what = "no tangent" if tx is None else f"tangent {_shape(tx.shape)}"
                lines.append(f"    {role(fn, i, len(ins))} = {name(x)} carries {what}")
        if all(tx is None for tx in ts):
            lines.append("    no input carries a tangent: none flows on")
            continue
        carried[id(t)] = pushed(fn, t, ts)
        lines.append(f"    tangent out {_shape(t.shape)} (norm {_norm(carried[id(t)]):.4f})")
    result = carried.get(id(root))
    if result is None:
        lines.append(f"No tangent reaches {name(root)}: its derivative along these is 0.")
    elif result.numel() == 1:
        lines.append(
            f"The directional derivative of {name(root)} along the tangents: "
            f"{float(result._array.reshape(-1)[0]):.6g} (the backward pass gives the same "
            "number as the sum over leaves of <leaf.grad, tangent>)."
        )
    else:
        lines.append(
            f"The tangent of {name(root)}: shape {_shape(result.shape)}, norm {_norm(result):.4f}."
        )
    return "\n".join(lines) + "\n"
