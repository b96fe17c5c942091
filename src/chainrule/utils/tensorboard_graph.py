"""The GraphDef that ``SummaryWriter.add_graph`` writes, nested by module as PyTorch's: read from
the graph autograd records in one forward pass, with each op placed in the module call that made
it. The writer (tensorboard.py) only puts it in an event file."""

from __future__ import annotations

import inspect
import re
from collections.abc import Mapping
from typing import Any

from tensorboard.compat.proto import (
    attr_value_pb2,
    graph_pb2,
    node_def_pb2,
    tensor_shape_pb2,
    versions_pb2,
)

from ..autograd.engine import toposort
from ..autograd.mode import enable_grad
from ..tensor import Tensor

# PyTorch's trace names an op by its aten function; chainrule's primitive is named like it
# (MaxPool2d -> aten::max_pool2d) except these.
_KINDS = {
    "Convolution": "aten::_convolution",
    "ConvTranspose": "aten::_convolution",
    "GetItem": "aten::index",
    "Cast": "aten::to",
    "ToDevice": "aten::to",
    "NLLLoss": "aten::nll_loss_nd",
    "CrossEntropy": "aten::cross_entropy_loss",
}
_CONSTRUCT: dict[type, str] = {tuple: "prim::TupleConstruct", list: "prim::ListConstruct"}


def graph_def(model: Any, input_to_model: Any, verbose: bool) -> Any:
    """``model(*input_to_model)`` as TensorBoard's GraphDef, named as PyTorch's add_graph names
    it: ``input/<forward's parameter>`` and ``output/output.<i>`` IO nodes; each parameter and
    buffer a ``prim::GetAttr`` node in the scope of its module's attribute path
    (``Net/ModuleList[blocks]/Block[0]/Linear[fc]/weight/weight``); each op an ``aten::<op>``
    node in the scope of the module calls that made it (``Net/Block[0]/Linear[fc]/linear``).
    An op belongs to the innermost module call whose outputs it reaches without passing through
    that call's inputs. Floating inputs and buffers are given requires_grad for the pass, so
    that the ops on them are recorded too; the model runs in eval mode, as PyTorch traces it."""
    inputs = _as_tuple(input_to_model)
    inputs = tuple(
        x.detach().requires_grad_() if isinstance(x, Tensor) and x.is_floating_point() else x
        for x in inputs
    )
    root = _escape(type(model).__name__)
    calls, out, arg_names = _run(model, inputs, root)
    roots = _tensors_in(out)
    if not roots:
        raise TypeError(
            f"add_graph: the model must return a Tensor or a list, tuple or dict of them; got "
            f"{type(out).__name__}"
        )
    order = toposort(roots, _parents)  # inputs first, so every edge's source is named
    # an input read as an index (an embedding's token ids) is no op's input: shown all the same
    reached = {id(t) for t in order}
    order = [x for x in _tensors_in(list(inputs)) if id(x) not in reached] + order
    scope = _op_scopes(calls, order, root)
    names: dict[int, str] = {}
    taken: set[str] = set()
    nodes = []
    leaves = _named_leaves(model, inputs, arg_names, root)
    for t in order:
        if id(t) in leaves:
            name, op, attr = leaves[id(t)]
        elif t.grad_fn is None:
            name, op, attr = (
                _unique(f"{scope.get(id(t), root)}/constant", taken),
                "prim::Constant",
                "",
            )
        else:
            op = _kind(t.grad_fn)
            name = _unique(f"{scope[id(t)]}/{op.split('::')[-1].lstrip('_')}", taken)
            attr = f"{{ name :  {t.grad_fn.name()} }}" if t.grad_fn.users_rule else "{}"
        names[id(t)] = name
        nodes.append(_node(name, op, [names[id(p)] for p in _parents(t)], attr, t))
    if isinstance(out, Tensor):
        end = names[id(out)]
    else:  # one output node, fed by the node that builds the tuple, list or dict
        kind = _CONSTRUCT.get(type(out), "prim::DictConstruct")
        end = _unique(f"{root}/{kind.split('::')[-1]}", taken)
        nodes.append(_node(end, kind, [names[id(t)] for t in roots], "{}", None))
    shaped = out if isinstance(out, Tensor) else None
    nodes.append(_node("output/output.1", "IO Node", [end], "", shaped))
    if verbose:
        for node in nodes:
            print(f"{node.name} = {node.op}({', '.join(node.input)})")
    return graph_pb2.GraphDef(node=nodes, versions=versions_pb2.VersionDef(producer=22))


def _as_tuple(input_to_model: Any) -> tuple:
    if input_to_model is None:
        return ()
    if isinstance(input_to_model, list | tuple):
        return tuple(input_to_model)
    return (input_to_model,)


def _run(model: Any, inputs: tuple, root: str) -> tuple[list, Any, dict[int, str]]:
    """Run the model once with a hook on each of its modules: every call's scope (PyTorch's
    ``Kind[attribute]`` per level of the call stack), the ids of its input tensors and its
    output tensors, in the order the calls ended (inner ones first); the output; and the name
    each intermediate tensor was last passed in under (a module's forward parameter), which is
    how PyTorch's tracer names its values."""
    calls: list[tuple[str, set[int], list[Tensor]]] = []
    arg_names: dict[int, str] = {}
    stack = [root]
    handles = []
    modules = list(model.named_modules()) if hasattr(model, "named_modules") else []

    def pre(module: Any, args: tuple, kwargs: dict, level: str) -> None:
        stack.append(level if module is model else f"{stack[-1]}/{level}")
        for pname, value in _bound(module, args, kwargs).items():
            for x in _tensors_in(value):
                arg_names[id(x)] = pname

    def post(module: Any, args: tuple, kwargs: dict, out: Any) -> None:
        ids = {id(x) for x in _tensors_in([list(args), kwargs])}
        calls.append((stack.pop(), ids, _tensors_in(out)))

    for name, m in modules:
        level = (
            root if m is model else f"{_escape(type(m).__name__)}[{_escape(name.split('.')[-1])}]"
        )
        handles.append(
            m.register_forward_pre_hook(
                lambda mod, a, k, level=level: pre(mod, a, k, level), with_kwargs=True
            )
        )
        handles.append(m.register_forward_hook(post, with_kwargs=True, always_call=True))
    training = getattr(model, "training", None)
    # floating buffers too are given requires_grad for the pass, so that the ops reading them
    # (a BatchNorm's running statistics in eval mode) are recorded, and they are drawn
    buffers = [
        b
        for b in (model.buffers() if hasattr(model, "buffers") else ())
        if b.is_floating_point() and not b.requires_grad
    ]
    try:
        if training:
            model.train(False)
        for b in buffers:
            b.requires_grad_()
        with enable_grad():
            out = model(*inputs)
    finally:
        for h in handles:
            h.remove()
        for b in buffers:
            b.requires_grad_(False)
        if training:
            model.train(True)
    return calls, out, arg_names


def _bound(module: Any, args: tuple, kwargs: dict) -> dict[str, Any]:
    """The arguments of a call by the names of forward's parameters (none where they do not
    bind, as for ``*args``)."""
    try:
        bound = inspect.signature(module.forward).bind(*args, **kwargs)
    except (TypeError, ValueError):
        return {}
    kinds = inspect.signature(module.forward).parameters
    return {
        k: v
        for k, v in bound.arguments.items()
        if kinds[k].kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    }


def _op_scopes(calls: list, order: list[Tensor], root: str) -> dict[int, str]:
    """Each op's scope: the first call (calls end inner first) whose outputs it reaches going
    back without passing through that call's inputs; the model's own scope for the rest. A
    constant takes the scope of the first op that reads it."""
    scope: dict[int, str] = {}
    for where, stops, outs in calls:
        seen: set[int] = set()
        todo = [t for t in outs if t.grad_fn is not None and id(t) not in stops]
        while todo:
            t = todo.pop()
            if id(t) in seen:
                continue
            seen.add(id(t))
            scope.setdefault(id(t), where)
            todo.extend(p for p in _parents(t) if p.grad_fn is not None and id(p) not in stops)
    for t in order:
        if t.grad_fn is None:
            continue
        scope.setdefault(id(t), root)
        for p in _parents(t):
            if p.grad_fn is None:
                scope.setdefault(id(p), scope[id(t)])
    return scope


def _named_leaves(
    model: Any, inputs: tuple, arg_names: dict[int, str], root: str
) -> dict[int, tuple[str, str, str]]:
    """id -> (node name, op, attributes) of the inputs, parameters and buffers. An input is
    named by the model's forward parameter, with PyTorch's tracer's ``.1`` where a value made
    inside took that name later (Sequential's ``input`` is ``input/input.1``)."""
    named: dict[int, tuple[str, str, str]] = {}
    bound = _bound(model, inputs, {}) if hasattr(model, "forward") else {}
    by_input = {id(x): pname for pname, v in bound.items() for x in _tensors_in(v)}
    later = {pname for i, pname in arg_names.items() if i not in by_input}
    for i, x in enumerate(_tensors_in(list(inputs))):
        pname = by_input.get(id(x), f"input.{i}")
        pname += ".1" if pname in later else ""
        named.setdefault(id(x), (f"input/{_escape(pname)}", "IO Node", ""))
    if not hasattr(model, "named_modules"):
        return named
    kinds = dict(model.named_modules())
    for what in ("named_parameters", "named_buffers"):
        for full, p in getattr(model, what)():
            *path, leaf = full.split(".")
            levels = [root] + [
                f"{_escape(type(kinds['.'.join(path[: k + 1])]).__name__)}[{_escape(part)}]"
                for k, part in enumerate(path)
            ]
            leaf = _escape(leaf)
            attr = f"{{ name :  {leaf} }}"
            named.setdefault(id(p), (f"{'/'.join(levels)}/{leaf}/{leaf}", "prim::GetAttr", attr))
    return named


def _kind(fn: Any) -> str:
    """PyTorch's trace's kind of the op that made a node: ``aten::`` and the primitive's name in
    snake case, ``prim::PythonOp`` for a user's Function."""
    if fn.users_rule:
        return "prim::PythonOp"
    op = fn.op
    return _KINDS.get(op) or "aten::" + re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", op).lower()


def _unique(name: str, taken: set[str]) -> str:
    """``name``, or ``name_<k>`` with the first k not yet taken."""
    out, k = name, 0
    while out in taken:
        k += 1
        out = f"{name}_{k}"
    taken.add(out)
    return out


def _node(name: str, op: str, inputs: list[str], attr: str, t: Tensor | None) -> Any:
    attrs = {"attr": attr_value_pb2.AttrValue(s=attr.encode("utf-8"))}
    if t is not None:
        dims = [tensor_shape_pb2.TensorShapeProto.Dim(size=int(d)) for d in t.shape]
        shape = tensor_shape_pb2.TensorShapeProto(dim=dims)
        attrs["_output_shapes"] = attr_value_pb2.AttrValue(
            list=attr_value_pb2.AttrValue.ListValue(shape=[shape])
        )
        attrs["dtype"] = attr_value_pb2.AttrValue(s=str(t.dtype).encode("utf-8"))
    return node_def_pb2.NodeDef(name=name, op=op, input=inputs, attr=attrs)


def _tensors_in(obj: Any) -> list[Tensor]:
    """The Tensors in a model's input or output: a Tensor, or lists, tuples and dicts of them."""
    if isinstance(obj, Tensor):
        return [obj]
    if isinstance(obj, Mapping):
        obj = list(obj.values())
    if isinstance(obj, list | tuple):
        return [t for item in obj for t in _tensors_in(item)]
    return []


def _parents(t: Tensor) -> list[Tensor]:
    """Every Tensor input of the op that made ``t`` (those without grad too), in order."""
    fn = t.grad_fn
    if fn is None or fn.inputs is None:
        return []
    return [x for x in fn.inputs if isinstance(x, Tensor)]


def _escape(name: str) -> str:
    """A user's name (a module's attribute, a class's, a parameter's) as one level of a node
    name that TensorBoard reads back as itself: / would open a scope, and in a node's inputs a
    leading ^ would make a control edge and :<digits> an output index, so /, ^ and : are written
    %2f, %5e and %3a (and % as %25)."""
    return name.replace("%", "%25").replace("/", "%2f").replace("^", "%5e").replace(":", "%3a")
