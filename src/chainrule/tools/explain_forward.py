"""The forward-mode pass told step by step, for cr.explain(y, mode="forward", tangents=...)
and the walkthrough page's forward mode: the chain rule's other order on the same recorded
graph. viz owns the names and the backward story; this module pushes tangents through the
graph it is given."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from .. import array
from ..autograd import engine
from ..autograd.engine import grad
from ..autograd.mode import enable_grad
from ..autograd.primitive import Function
from ..scalar.engine import Value, rule_of
from ..tensor import Tensor


def _shape(shape: Sequence[int]) -> str:
    return str(tuple(int(n) for n in shape))


def _norm(t: Tensor) -> float:
    x = t._array.astype(array.float64)
    return float(array.xp.sqrt(array.xp.sum(x * x)))


def _tangent_of(x: Tensor, given: Any, op: str) -> Tensor:
    """A leaf's tangent as given: a tensor of its shape, or a number for every element."""
    if isinstance(given, Tensor):
        if tuple(given.shape) != tuple(x.shape):
            raise ValueError(
                f"{op}: a tangent's shape differs from its tensor's; got shapes "
                f"{_shape(given.shape)} and {_shape(x.shape)}"
            )
        return given.detach().to(x.dtype)
    return x.detach().new_full(tuple(x.shape), float(given))


def seeds(tangents: Mapping[Tensor, Any], order: Sequence[Tensor], op: str) -> dict[int, Tensor]:
    """The given tangents by the id of their leaf, each checked to be a leaf behind the root
    (a tensor of the graph that no op made) and of its leaf's shape."""
    leaves = {id(t) for t in order if t.grad_fn is None}
    stray = [x for x in tangents if id(x) not in leaves]
    if stray:
        raise ValueError(
            f"{op}: tangents are given at the graph's leaves; got a tensor of shape "
            f"{_shape(stray[0].shape)} that is not one of the leaves behind the root"
        )
    return {id(x): _tangent_of(x, t, op) for x, t in tangents.items()}


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
    carried = seeds(tangents, order, "explain")
    nodes = [t for t in order if t.grad_fn is not None]
    step = {id(t): k for k, t in enumerate(nodes, 1)}

    def name(t: Tensor) -> str:
        return names.get(id(t), "leaf") if t.grad_fn is None else f"#{step[id(t)]} {t.grad_fn.op}"

    lines = [f"Forward pass of tangents to {name(root)} of shape {_shape(root.shape)}, from:"]
    for x in tangents:
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


# ---------------------------------------------------------------------------------------
# The walkthrough page's forward mode: each step one node, the tangent it gets and the
# part each input's tangent contributes to it, J_i t_i, by the jvp rule named below.

# The jvp rules of forward_ad.JVP_RULES as formulas, t_a the tangent of input a, out the
# op's output (a test keeps the two tables' keys equal). Another op's tangent is found from
# its backward rule, which is linear in the gradient.
JVP_TEXT = {
    "Add": "t_out = t_a + t_b",
    "Sub": "t_out = t_a - t_b",
    "Mul": "t_out = t_a * b + a * t_b",
    "Div": "t_out = t_a / b - t_b * out / b",
    "Neg": "t_out = -t_a",
    "Exp": "t_out = t_a * out",
    "Log": "t_out = t_a / a",
    "Sqrt": "t_out = t_a / (2 * out)",
    "Sin": "t_out = t_a * cos(a)",
    "Cos": "t_out = -t_a * sin(a)",
    "Tanh": "t_out = t_a * (1 - out^2)",
    "Sigmoid": "t_out = t_a * out * (1 - out)",
    "Relu": "t_out = t_a * (out != 0)",
    "Sum": "t_out = t_a summed over the dims a was",
    "Mean": "t_out = t_a averaged over the dims a was",
    "MatMul": "t_out = t_a @ b + a @ t_b",
    "Linear": "t_out = t_x @ W^T + x @ t_W^T + t_bias",
    "Softmax": "t_out = out * (t_a - sum(t_a * out, dim))",
    "LogSoftmax": "t_out = t_a - sum(t_a * exp(out), dim)",
}


def jvp_rule(fn: Function, rule: Callable[[Function], str]) -> str:
    """The jvp rule that gives a node its tangent, as a formula."""
    if type(fn).view:
        return "t_out = the same view of t_a (a view is linear in its input)"
    if fn.op in JVP_TEXT:
        return JVP_TEXT[fn.op]
    return f"t_out = J t, from the backward rule ({rule(fn)}): linear in grad"


class ForwardStep(NamedTuple):
    """One node of the forward pass: its tangent, its inputs (kept: a backward pass frees the
    node's) and, for each input carrying a tangent, its position, that tangent and what it
    contributes (J_i t_i); a seeded leaf has none. Tensors, or for a scalar Value's graph,
    Values and numbers."""

    node: Any
    tangent: Any
    inputs: tuple[Any, ...]
    parts: list[tuple[int, Any, Any]]


def push_forward(tangents: Mapping[Any, Any], order: Sequence[Any]) -> list[ForwardStep]:
    """The forward pass of ``tangents`` (leaf -> tensor or number) through the nodes in
    ``order`` (inputs first, ending at the root): the seeded leaves and every node an input's
    tangent reaches, each with its tangent, the sum of its parts."""
    if not tangents:
        raise ValueError(
            "walkthrough: forward mode pushes tangents from leaves; got none; give "
            "tangents={leaf: tensor or number}"
        )
    if isinstance(order[-1], Value):
        return _push_values(tangents, order)
    carried = seeds(tangents, order, "walkthrough")
    steps = []
    for t in order:
        fn = t.grad_fn
        if fn is None:
            if id(t) in carried:
                steps.append(ForwardStep(t, carried[id(t)], (), []))
            continue
        ins = list(fn.inputs)
        ts = [carried.get(id(x)) if isinstance(x, Tensor) else None for x in ins]
        parts = []
        for i, tx in enumerate(ts):
            if tx is not None:
                alone: list[Tensor | None] = [tx if j == i else None for j in range(len(ts))]
                parts.append((i, tx, pushed(fn, t, alone)))
        if not parts:
            continue
        total = parts[0][2]
        for part in parts[1:]:
            total = total + part[2]
        carried[id(t)] = total
        steps.append(ForwardStep(t, total, tuple(ins), parts))
    return steps


def _push_values(tangents: Mapping[Any, Any], order: Sequence[Value]) -> list[ForwardStep]:
    """Forward mode on micrograd's scalar graph: a node's tangent is the sum over its
    parents of its local derivative times the parent's tangent."""
    leaves = {id(v) for v in order if not v._prev}
    if any(id(v) not in leaves for v in tangents):
        raise ValueError(
            "walkthrough: tangents are given at the graph's leaves; got a Value that is not "
            "one of the leaves behind the root"
        )
    carried = {id(v): float(t) for v, t in tangents.items()}
    steps = []
    for v in order:
        if not v._prev:
            if id(v) in carried:
                steps.append(ForwardStep(v, carried[id(v)], (), []))
            continue
        parts = [
            (i, carried[id(p)], d * carried[id(p)])
            for i, (p, d) in enumerate(zip(v._prev, v._local, strict=True))
            if id(p) in carried
        ]
        if parts:
            carried[id(v)] = sum(part for _, _, part in parts)
            steps.append(ForwardStep(v, carried[id(v)], v._prev, parts))
    return steps


def forward_steps(
    steps: Sequence[ForwardStep],
    objects: Sequence[Any],
    values: Callable[[Any], tuple[str, str]],
    rule: Callable[[Function], str],
    role: Callable[[Function, int, int], str],
    value_roles: Callable[[Value], list[str]],
) -> list[dict[str, Any]]:
    """The forward pass as the page's record: node indices are places in ``objects`` (the
    page's nodes), texts ``values``'s (short, full); a Value's part shows its local
    derivative, d/da * t_a."""
    index = {id(x): i for i, x in enumerate(objects)}
    out = []
    for step in steps:
        v, takes = step.node, []
        for i, tx, part in step.parts:
            if isinstance(v, Value):
                r = value_roles(v)[i]
                shown = (
                    values(part)[0],
                    f"d/d{r} * t_{r} = {v._local[i]:.6g} * {tx:.6g} = {part:.6g}",
                )
            else:
                r, shown = role(v.grad_fn, i, len(step.inputs)), values(part)
            takes.append(
                {"from": index[id(step.inputs[i])], "role": r, "tangent": list(values(tx)),
                 "part": list(shown)}
            )  # fmt: skip
        if not step.parts:
            jvp = ""
        elif isinstance(v, Value):
            jvp = f"t_out = the sum of d/da * t_a over the inputs a ({rule_of(v._op)})"
        else:
            jvp = jvp_rule(v.grad_fn, rule)
        out.append(
            {"node": index[id(v)], "tangent": list(values(step.tangent)), "takes": takes,
             "jvp": jvp}
        )  # fmt: skip
    return out
