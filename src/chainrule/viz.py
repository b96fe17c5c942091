"""Seeing the graph: `draw_graph` draws the computation behind a Tensor or a scalar Value,
`explain` runs its backward pass and tells it step by step, and `walkthrough` records that
pass for a page that steps through it (drawn by walkthrough.py).

All walk the graph with autograd's `toposort`; the backward pass itself is autograd's (or
`Value.backward`), so explaining a graph leaves exactly the gradients `backward()` would.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from . import array
from .autograd import engine
from .autograd.engine import Observer, toposort
from .autograd.primitive import Function
from .scalar.engine import RULES as VALUE_RULES
from .scalar.engine import WEIGHTED_SUM, Value, rule_of
from .tensor import Tensor
from .tools.explain_forward import explain_forward, forward_steps, push_forward
from .tools.layout import fit_width, rankdir_for
from .tools.monitor import Monitor

if TYPE_CHECKING:
    import graphviz


# ---------------------------------------------------------------------------------------
# Local rules: a Tensor op's is its Function's ``rule``, in the words of the backward pass
# (`grad` the incoming gradient, `out` the op's output, a, b, ... its inputs in order).

# Names of the inputs where they are not a, b, c, ...
_ROLES: dict[str, tuple[str, ...]] = {"Where": ("cond", "x", "y"), "Gather": ("a", "index")}


def rule(fn: Function) -> str:
    """The local rule of a recorded op, as a short formula: its Function's ``rule``, or for a
    Function without one (a user's), its docstring's first line."""
    if fn.rule:
        return fn.rule
    doc = (type(fn).__doc__ or "").strip()
    return doc.splitlines()[0] if doc else f"{fn.op}: no rule recorded"


def _role(fn: Function, i: int, n: int) -> str:
    roles = _ROLES.get(fn.op)
    if roles is not None and i < len(roles):
        return roles[i]
    return "abcdefgh"[i] if n <= 8 else f"input {i}"


# ---------------------------------------------------------------------------------------
# Names and parents, shared by the drawing and the explanation so they agree.


def _param_names(params: Any) -> dict[int, str]:
    """Names by id from a Module (named_parameters), a mapping name -> Tensor or Value, or an
    object with parameters() (named p0, p1, ...)."""
    if params is None:
        return {}
    if isinstance(params, Mapping):
        items = list(params.items())
    elif hasattr(params, "named_parameters"):
        items = list(params.named_parameters())
    elif hasattr(params, "parameters"):
        items = [(f"p{i}", p) for i, p in enumerate(params.parameters())]
    else:
        raise TypeError(
            "params: expected a Module, a dict of name -> tensor, or an object with "
            f"parameters(); got {type(params).__name__}"
        )
    names: dict[int, str] = {}
    for name, p in items:
        names.setdefault(id(p), str(name))  # tied weights: the first name
    return names


def _tensor_parents(t: Tensor) -> list[Tensor]:
    fn = t.grad_fn
    if fn is None or fn.inputs is None:
        return []
    return [x for x in fn.inputs if isinstance(x, Tensor)]


def _is_freed(node: Any) -> bool:
    return isinstance(node, Tensor) and node.grad_fn is not None and node.grad_fn.inputs is None


def _is_leaf(node: Any) -> bool:
    return node.grad_fn is None if isinstance(node, Tensor) else not node._prev


def _walk(root: Any, op: str) -> tuple[list[Any], Callable[[Any], Sequence[Any]]]:
    """Every node behind ``root``, inputs first; and the parents function used."""
    if isinstance(root, Tensor):
        parents: Callable[[Any], Sequence[Any]] = _tensor_parents
    elif isinstance(root, Value):
        parents = _value_parents
    else:
        raise TypeError(f"{op}: root must be a Tensor or a Value; got {type(root).__name__}")
    return toposort((root,), parents), parents


def _value_parents(v: Value) -> tuple[Value, ...]:
    return v._prev


def _leaf_names(order: Sequence[Any], params: Any) -> dict[int, str]:
    """Parameter names where given; the other leaves x0, x1, ... in walk order."""
    given = _param_names(params)
    names: dict[int, str] = {}
    k = 0
    for node in order:
        if _is_leaf(node):
            if id(node) in given:
                names[id(node)] = given[id(node)]
            else:
                names[id(node)] = f"x{k}"
                k += 1
    return names


def _norm(t: Tensor) -> float:
    x = t._array.astype(array.float64)
    return float(array.xp.sqrt(array.xp.sum(x * x)))


def _shape(shape: Sequence[int]) -> str:
    return str(tuple(int(n) for n in shape))


def _dtype(t: Any) -> str:
    """A tensor's dtype as a node's short label says it: ``float32``, not the printed
    ``chainrule.float32`` (every label is chainrule's, so the prefix would only add width)."""
    return str(t.dtype.name)


# ---------------------------------------------------------------------------------------
# draw_graph


def _dot(text: str) -> str:
    """A user's text (a name, an op, a number's repr) as a line of a graphviz label shows it:
    a backslash doubled (dot reads \\N, \\l, ... as escapes), a line break as dot's."""
    return re.sub(r"\r\n?|\n", r"\\n", text.replace("\\", "\\\\"))


def _label(lines: Sequence[str]) -> str:
    """Lines of text as one plain graphviz label, never read as an HTML-like one (which a
    name such as ``<b>`` alone on a node would be)."""
    import graphviz

    return graphviz.nohtml("\\n".join(_dot(line) for line in lines))


def _record(field: str) -> str:
    """A user's text as a field of a graphviz record label."""
    field = _dot(field)
    for ch in "{}|<>":
        field = field.replace(ch, "\\" + ch)
    return field


def _data_text(t: Tensor) -> str:
    text = array.xp.array2string(
        t._array, precision=4, threshold=8, edgeitems=2, separator=", ", suppress_small=True
    )
    return " ".join(text.split())


_NO_DOT = (
    "draw_graph: the graphviz `dot` program, which turns this drawing into a picture, is not "
    "installed (apt-get install graphviz, or brew install graphviz); its DOT source:\n\n"
)


@functools.cache
def _drawing_class() -> type[graphviz.Digraph]:
    """The Digraph that draw_graph returns, made on first use as graphviz is optional: a
    notebook shows it as SVG drawn by `dot` or, where `dot` is not installed, as the text
    _NO_DOT and the graph's source instead of a traceback."""
    import graphviz

    class Drawing(graphviz.Digraph):
        def _repr_mimebundle_(
            self, include: Any = None, exclude: Any = None, **kwargs: Any
        ) -> dict[str, bytes | str]:
            try:
                bundle = super()._repr_mimebundle_(include, exclude, **kwargs)
            except graphviz.ExecutableNotFound:
                return {"text/plain": _NO_DOT + self.source}
            if "image/svg+xml" in bundle:
                bundle["image/svg+xml"] = fit_width(bundle["image/svg+xml"])
            return bundle

    Drawing.__qualname__ = "Drawing"  # pickled as chainrule.viz.Drawing (module __getattr__)
    return Drawing


def __getattr__(name: str) -> Any:
    if name == "Drawing":
        return _drawing_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def draw_graph(
    root: Tensor | Value,
    show_data: bool = False,
    show_grad: bool = True,
    params: Any = None,
    max_nodes: int = 200,
    rankdir: str | None = None,
) -> graphviz.Digraph:
    """A graphviz drawing of the computation that produced ``root``, data flowing left to right
    (``rankdir="LR"``) or, for a graph more than 30 nodes deep (tools/layout.py), top to bottom
    (``"TB"``), unless ``rankdir`` says which.

    For a Tensor: one box per leaf (its parameter name from ``params``, else x0, x1, ...;
    its shape and dtype; with ``show_grad``, the norm of its ``.grad`` once backward has
    run) and one ellipse per op (its name, output shape and dtype); Python numbers fed to
    an op appear as small plain nodes. ``show_data`` adds each tensor's values (abridged).
    For a scalar Value: micrograd's records ``{ data | grad }`` (the data always shown),
    each fed by a node naming its op.

    ``params`` is a Module (its ``named_parameters()``) or a dict name -> tensor. Beyond
    ``max_nodes`` tensors (or Values), those farthest from the root are folded into one
    note that says how many there are. backward() frees what each op saved, ending the
    walk there: draw before backward, or call ``backward(retain_graph=True)`` to draw the
    whole graph with its gradients (a freed op is drawn dashed, with a note saying so).

    Render with ``g.render("name", format="svg")`` or ``g.pipe(format="png")``, which need
    the graphviz system package (the ``dot`` program); ``g.source`` needs nothing. In a
    notebook, ``g`` is the cell's output, as SVG that shrinks to the cell's width, or as text
    saying that ``dot`` is missing.
    """
    try:
        drawing = _drawing_class()
    except ImportError:
        raise ImportError(
            "draw_graph: needs the graphviz Python package; pip install 'chainrule[viz]'"
        ) from None
    if max_nodes < 1:
        raise ValueError(f"draw_graph: max_nodes must be at least 1; got {max_nodes}")
    if rankdir not in (None, "LR", "TB"):
        raise ValueError(f"draw_graph: rankdir must be 'LR', 'TB' or None; got {rankdir!r}")
    order, parents = _walk(root, "draw_graph")
    names = _leaf_names(order, params)

    # Keep the max_nodes nodes nearest the root (breadth first); fold the rest.
    kept = {id(root)}
    frontier = [root]
    while frontier and len(kept) < max_nodes:
        nxt = []
        for node in frontier:
            for p in parents(node):
                if id(p) not in kept and len(kept) < max_nodes:
                    kept.add(id(p))
                    nxt.append(p)
        frontier = nxt
    folded = len(order) - len(kept)

    if rankdir is None:
        rankdir = rankdir_for([n for n in order if id(n) in kept], parents)
    g = drawing("chainrule", graph_attr={"rankdir": rankdir}, node_attr={"fontsize": "11"})
    ids = {id(node): f"n{i}" for i, node in enumerate(order)}
    freed = 0
    into_folded: list[str] = []
    for node in order:
        if id(node) not in kept:
            continue
        nid = ids[id(node)]
        if isinstance(node, Value):
            heads = _draw_value(g, node, nid, names, show_grad)
        else:
            heads = _draw_tensor(g, node, nid, names, show_data, show_grad)
            freed += _is_freed(node)
        ins: Sequence[Any] = parents(node)
        if isinstance(node, Tensor) and node.grad_fn is not None and node.grad_fn.inputs:
            ins = node.grad_fn.inputs  # numbers too, in operand order
        for i, x in enumerate(ins):
            if isinstance(x, (Tensor, Value)):
                if id(x) in kept:
                    g.edge(ids[id(x)], heads)
                elif heads not in into_folded:
                    into_folded.append(heads)
            elif x is not None:  # an optional input left out (a missing bias) draws nothing
                g.node(f"{nid}c{i}", _label([_short(x)]), shape="plaintext")
                g.edge(f"{nid}c{i}", heads)
    if folded:
        g.node(
            "folded",
            f"{folded} more nodes folded (max_nodes={max_nodes})\\n"
            "they feed the nodes drawn here; pass a larger max_nodes to see them",
            shape="note",
            style="filled",
            fillcolor="lightyellow",
        )
        for head in into_folded:
            g.edge("folded", head, style="dashed")
    if freed:
        g.node(
            "freed",
            f"the saved inputs of {freed} op(s) were freed by backward(), so the drawing "
            "stops there\\ndraw before backward(), or call backward(retain_graph=True)",
            shape="note",
            style="filled",
            fillcolor="mistyrose",
        )
    return g


def _short(x: Any) -> str:
    text = " ".join(repr(x).split())  # one line, however the value prints
    return text if len(text) <= 24 else text[:21] + "..."


def _draw_tensor(
    g: graphviz.Digraph,
    t: Tensor,
    nid: str,
    names: dict[int, str],
    show_data: bool,
    show_grad: bool,
) -> str:
    fn = t.grad_fn
    lines = [names[id(t)] if fn is None else fn.op, f"{_shape(t.shape)} {_dtype(t)}"]
    if show_data:
        lines.append(_data_text(t))
    if show_grad and t.grad is not None:
        lines.append(f"grad norm {_norm(t.grad):.4f}")
    label = _label(lines)
    if fn is None:
        color = "lightblue" if t.requires_grad else "white"
        g.node(nid, label, shape="box", style="filled", fillcolor=color)
    else:
        g.node(nid, label, shape="ellipse", style="dashed" if fn.inputs is None else "solid")
    return nid


def _draw_value(
    g: graphviz.Digraph, v: Value, nid: str, names: dict[int, str], show_grad: bool
) -> str:
    fields = [names[id(v)]] if id(v) in names else []
    fields.append(f"data {v.data:.4f}")
    if show_grad:
        fields.append(f"grad {v.grad:.4f}")
    g.node(nid, "{ " + " | ".join(_record(f) for f in fields) + " }", shape="record")
    if not v._prev:
        return nid
    g.node(nid + "op", _label([v._op]), shape="ellipse")
    g.edge(nid + "op", nid)
    return nid + "op"


# ---------------------------------------------------------------------------------------
# explain


def _summed_dims(shape: Sequence[int], raw: Sequence[int]) -> list[int]:
    """The dims of a gradient of shape ``raw`` that `autograd.sum_to_shape` sums to bring it
    back to an input of ``shape`` (leading dims added, size-1 dims expanded)."""
    lead = len(raw) - len(shape)
    dims = list(range(max(lead, 0)))
    if lead >= 0:
        dims += [lead + i for i, n in enumerate(shape) if n == 1 and raw[lead + i] != 1]
    return dims


def _broadcast(role: str, shape: Sequence[int], raw: Sequence[int]) -> str:
    """How the engine took a gradient of shape ``raw`` back to an input of ``shape``."""
    dims = _summed_dims(shape, raw)
    if not dims:
        return f"{role}: gradient reshaped from {_shape(raw)} to {_shape(shape)}"
    if len(dims) == 1:
        where = f"dim {dims[0]}"
    else:
        where = "dims " + ", ".join(str(d) for d in dims[:-1]) + f" and {dims[-1]}"
    return f"{role}: {_shape(shape)} was broadcast to {_shape(raw)}; gradient summed over {where}"


def _matmul_shapes(fn: Function, i: int, grad: Sequence[int]) -> str:
    """The product that made a MatMul input's gradient, in shapes (2-D operands only)."""
    a, b = fn.inputs  # type: ignore[misc]
    if a.ndim != 2 or b.ndim != 2:
        return ""
    g = _shape(grad)
    if i == 0:
        return f"grad @ b.T: {g} @ {_shape(b.shape[::-1])} -> {_shape(a.shape)}"
    return f"a.T @ grad: {_shape(a.shape[::-1])} @ {g} -> {_shape(b.shape)}"


def explain(
    root: Tensor | Value,
    gradient: Any = None,
    params: Any = None,
    retain_graph: bool = False,
    *,
    mode: str = "backward",
    tangents: Any = None,
) -> str:
    """Run the backward pass from ``root`` and return it told step by step.

    For each node in reverse topological order (each after all of its consumers): the op,
    its output shape, the incoming gradient's shape, the local rule applied, the gradient
    each input receives, and where broadcasting was undone, e.g.
    ``b: (2,) was broadcast to (4, 2); gradient summed over dim 0``. Leaves are named by
    ``params`` (a Module or a dict name -> tensor) where given, else x0, x1, ... as in
    `draw_graph`; other nodes by their step number, ``#k Op``.

    The gradients left in ``.grad`` are exactly those of ``root.backward(gradient,
    retain_graph)``, which this replaces (call one or the other). Works for a scalar
    ``Value`` too, then with ``gradient`` and ``retain_graph`` unused. ``mode="forward"``
    tells forward mode on a Tensor's graph instead (tools/explain_forward.py): ``tangents``
    (leaf -> tensor, or a number for every element) pushed from the leaves to the root,
    each node's tangent J t; nothing is run backward and no ``.grad`` changes.
    """
    if mode not in ("backward", "forward"):
        raise ValueError(f"explain: mode must be 'backward' or 'forward'; got {mode!r}")
    if isinstance(root, Value):
        if mode == "forward":
            raise ValueError("explain: mode='forward' needs a Tensor; got a Value (hint: "
                             "walkthrough(root, path, mode='forward') shows it)")  # fmt: skip
        return _explain_value(root, params)
    order, _ = _walk(root, "explain")
    names = _leaf_names(order, params)
    if mode == "forward":
        return explain_forward(root, tangents or {}, order, names, rule, _role)
    if not root.requires_grad:
        raise RuntimeError(
            "explain: the tensor does not require grad and has no grad_fn; set "
            "requires_grad=True on an input (or check for a no_grad block)"
        )
    seed = engine.seed(root, gradient, "explain")
    sweep = list(reversed(toposort((root,), engine.grad_parents)))  # run_backward's order
    step = {id(t): k for k, t in enumerate(sweep, 1)}

    def name(t: Tensor) -> str:
        if t.grad_fn is None:
            return names.get(id(t), "leaf")
        return f"#{step[id(t)]} {t.grad_fn.op}"

    how = "ones" if gradient is None else "the given gradient"
    lines = [
        f"Backward pass from {name(root)} of shape {_shape(root.shape)}, seeded with {how} "
        f"of shape {_shape(seed.shape)}.",
        "Nodes are swept in reverse topological order, each after all of its consumers.",
    ]

    class Teller(Observer):
        """Tells each step as the real backward pass takes it."""

        def node(self, t: Tensor, g: Tensor) -> None:
            fn = t.grad_fn
            if fn is None:
                lines.append(
                    f"#{step[id(t)]} leaf {name(t)} {_shape(t.shape)}: gradient "
                    f"{_shape(g.shape)} added to its .grad (norm {_norm(g):.4f})"
                )
                return
            self.incoming = g.shape
            lines.append(
                f"{name(t)} -> {_shape(t.shape)}, incoming grad {_shape(g.shape)}\n"
                f"    rule: {rule(fn)}"
            )

        def input(self, fn: Function, i: int, x: Tensor, raw: Tensor, final: Tensor) -> None:
            role = _role(fn, i, len(fn.inputs or ()))
            text = f"    {role} = {name(x)} {_shape(x.shape)} gets grad {_shape(raw.shape)}"
            if fn.op == "MatMul" and (detail := _matmul_shapes(fn, i, self.incoming)):
                text += f" = {detail}"
            lines.append(text)
            if raw.shape != final.shape:
                lines.append("      " + _broadcast(role, final.shape, raw.shape))
            if raw.dtype != final.dtype:
                lines.append(f"      {role}: gradient cast from {_dtype(raw)} to {_dtype(final)}")

    engine.backward(root, seed, retain_graph, observer=Teller(), op="explain")
    if not retain_graph:
        lines.append(
            "The graph's saved values are now freed (pass retain_graph=True to keep them)."
        )
    return "\n".join(lines) + "\n"


def _value_roles(v: Value) -> list[str]:
    """What explain calls each parent: b, w1, x1, w2, x2, ... for a weighted sum, else
    a, b, c, ... (then a27, a28, ... for a node made by hand with more parents)."""
    n = len(v._prev)
    if v._op == WEIGHTED_SUM and v._dl is None and n % 2 == 1:  # made by weighted_sum
        return ["b"] + [f"{r}{i}" for i in range(1, n // 2 + 1) for r in "wx"]
    letters = "abcdefghijklmnopqrstuvwxyz"
    return [letters[i] if i < len(letters) else f"a{i + 1}" for i in range(n)]


def _explain_value(root: Value, params: Any) -> str:
    order, _ = _walk(root, "explain")
    names = _leaf_names(order, params)
    step = {id(v): k for k, v in enumerate(reversed(order), 1)}  # Value.backward's sweep

    def name(v: Value) -> str:
        return names[id(v)] if not v._prev else f"#{step[id(v)]} {v._op}"

    lines = [
        f"Backward pass from {name(root)} (data {root.data:.4f}), seeded with grad 1.",
        "Nodes are swept in reverse topological order, each after all of its consumers.",
    ]

    def tell(v: Value, g: float, steps: list[tuple[Value, float, float]]) -> None:
        """Told by the real backward pass of each node it sweeps, with what it passed on."""
        if not v._prev:
            lines.append(f"#{step[id(v)]} leaf {name(v)} (data {v.data:.4f}): grad {g:.4f}")
            return
        lines.append(
            f"{name(v)} -> data {v.data:.4f}, incoming grad {g:.4f}\n    rule: {rule_of(v._op)}"
        )
        for role, (p, d, given) in zip(_value_roles(v), steps, strict=True):
            lines.append(f"    {role} = {name(p)} gets {g:.4f} * {d:.4f} = {given:.4f}")

    root.backward(on_step=tell)
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------
# walkthrough: the backward pass recorded through the engine's observer, then drawn as a
# page by walkthrough.py (which knows nothing of tensors: it gets the plain record below).

SMALL = 16  # tensors of at most this many elements are shown number by number
KEPT = 4096  # a leaf's final gradient is kept whole in the page up to this many elements


def _values(x: Any) -> tuple[str, str]:
    """A gradient or value as (short text for a node, full text for the side panel)."""
    if x is None:
        return "", "none"
    if isinstance(x, (int, float)):
        return f"{x:.4g}", f"{x:.6g}"
    a = _host(x)
    if a.size == 1:
        v = float(a.reshape(()))
        return f"{v:.4g}", f"{v:.6g} {_shape(x.shape)}"
    short = f"norm {float((a * a).sum()) ** 0.5:.4g}"
    if a.size <= SMALL:
        return short, _nested(a.tolist())
    full = (
        f"shape {_shape(x.shape)}, min {float(a.min()):.4g}, max {float(a.max()):.4g}, "
        f"mean {float(a.mean()):.4g}"
    )
    return short, full


def _nested(x: Any) -> str:
    if isinstance(x, list):
        return "[" + ", ".join(_nested(v) for v in x) + "]"
    return f"{x:.4g}"


def _host(x: Tensor) -> Any:
    """A tensor's values as a float64 array in host memory."""
    return x.detach().cpu().numpy().astype(array.float64)


def _kept(x: Any) -> Any:
    """A leaf's final gradient as the page keeps it (data-grad): numbers up to KEPT elements,
    else its shape and summary; None where it has none."""
    if x is None or isinstance(x, float):
        return x
    a = _host(x)
    if a.size <= KEPT:
        return a.tolist()
    return {"shape": list(x.shape), "min": float(a.min()), "max": float(a.max()),
            "mean": float(a.mean())}  # fmt: skip


def _modules(order: Sequence[Any], params: Any) -> dict[int, str]:
    """The module of each parameter (its name less the last part: ``h.0.attn.c_attn`` for
    ``h.0.attn.c_attn.weight``), by id; what walkthrough folds."""
    out = {}
    for key, name in _param_names(params).items():
        if "." in name:
            out[key] = name.rsplit(".", 1)[0]
    return out


def walkthrough(
    root: Tensor | Value,
    path: str = "backward.html",
    params: Any = None,
    gradient: Any = None,
    retain_graph: bool = False,
    *,
    mode: str = "backward",
    tangents: Any = None,
) -> str:
    """Run the backward pass from ``root`` and write it as a page that steps through it;
    return ``path``.

    The page (one HTML file, its script, style and drawing inline: it opens from disk)
    draws the forward graph as `draw_graph` does, numbers its nodes in the engine's order
    (step 0), then lights one node per step in the order the real backward pass swept
    them, recorded through its observer: the op's rule, the incoming gradient, what each
    input gets and, for an input reached by several consumers, its gradient summed as the
    contributions arrive; where broadcasting was undone, the shapes and the dims summed.
    The last step shows every leaf's ``.grad`` (each also in ``data-leaf`` /
    ``data-grad`` attributes). With ``params`` a Module, leaves take their parameter names
    and each module's ops fold into a box that opens on click.

    The gradients left in ``.grad`` are those of ``root.backward(gradient, retain_graph)``,
    which this replaces, as `explain` does; ``gradient`` and ``retain_graph`` are unused
    for a scalar ``Value``.

    ``mode="forward"`` steps through forward mode instead (tools/explain_forward.py): the
    ``tangents`` (leaf -> tensor or number) pushed to the root, each node's tangent and its
    jvp rule; nothing runs backward. ``mode="both"``: both passes, and a switch.
    """
    from .tools import walkthrough as page

    order, _ = _walk(root, "walkthrough")
    names = _leaf_names(order, params)
    forward = push_forward(tangents or {}, order) if page.forward_mode(mode) else []
    if mode == "forward":
        record = {**_finish(_Nodes(order, names), [], []), "leaves": []}
    elif isinstance(root, Value):
        record = _record_value(root, order, names)
    else:
        record = _record_tensor(root, order, names, gradient, retain_graph)
    if forward:
        record["forward"] = forward_steps(forward, record["objects"], _values, rule, _role,
                                          _value_roles)  # fmt: skip
    modules = _modules(order, params)
    for i, node in enumerate(record["objects"]):
        record["nodes"][i]["module"] = modules.get(id(node), "")
    del record["objects"]
    if hasattr(params, "named_modules"):  # a box is named by its module's class and path
        record["classes"] = {k: type(m).__name__ for k, m in params.named_modules() if k}
    page.write(path, record)
    return path


def _node_record(node: Any, names: dict[int, str]) -> dict[str, Any]:
    if isinstance(node, Value):
        leaf = not node._prev
        return {
            "kind": "leaf" if leaf else "op",
            "label": names.get(id(node), "leaf") if leaf else node._op,
            "shape": "",
            "value": f"data {node.data:.4g}",
            "rule": "" if leaf else rule_of(node._op),
        }
    fn = node.grad_fn
    if fn is None:
        kind = "leaf" if node.requires_grad else "data"
        label = names.get(id(node), "leaf")
    else:
        kind, label = "op", fn.op
    return {
        "kind": kind,
        "label": label,
        "shape": f"{_shape(node.shape)} {_dtype(node)}",
        "value": _values(node)[1],
        "rule": "" if fn is None else rule(fn),
    }


class _Nodes:
    """The page's nodes, in the forward walk's order, each with its inputs' indices."""

    def __init__(self, order: Sequence[Any], names: dict[int, str]) -> None:
        self.names = names
        self.objects: list[Any] = []
        self.nodes: list[dict[str, Any]] = []
        self.index: dict[int, int] = {}
        for node in order:
            self.add(node)
        for node in order:
            self.nodes[self.index[id(node)]]["inputs"] = self.inputs(node)

    def add(self, node: Any) -> int:
        if id(node) not in self.index:
            self.index[id(node)] = len(self.nodes)
            self.objects.append(node)
            self.nodes.append({**_node_record(node, self.names), "inputs": [], "num": None})
        return self.index[id(node)]

    def inputs(self, node: Any) -> list[int]:
        if isinstance(node, Value):
            return [self.index[id(p)] for p in node._prev]
        fn = node.grad_fn
        out = []
        for x in (fn.inputs or ()) if fn is not None else ():
            if isinstance(x, Tensor):
                out.append(self.index[id(x)])
            elif x is not None:  # a number fed to the op, drawn as draw_graph draws it
                self.objects.append(x)
                self.nodes.append(
                    {"kind": "const", "label": _short(x), "shape": "", "value": "", "rule": "",
                     "inputs": [], "num": None}
                )  # fmt: skip
                out.append(len(self.nodes) - 1)
        return out


def _finish(nodes: _Nodes, sweep: Sequence[Any], steps: list[dict[str, Any]]) -> dict[str, Any]:
    """Number the nodes in the sweep's order, count each node's contributions, and add the
    leaves' final gradients."""
    for k, node in enumerate(sweep, 1):
        nodes.nodes[nodes.add(node)]["num"] = k
    count: dict[int, int] = {}
    for step in steps:
        for give in step["gives"]:
            count[give["to"]] = count.get(give["to"], 0) + 1
    for step in steps:
        for give in step["gives"]:
            give["of"] = count[give["to"]]
    leaves = []
    for i, node in enumerate(nodes.objects):
        if nodes.nodes[i]["kind"] != "leaf":
            continue
        g = node.grad
        leaves.append(
            {"node": i, "name": nodes.nodes[i]["label"], "grad": _kept(g), "text": _values(g)[1]}
        )
    for step in steps:
        if nodes.nodes[step["node"]]["kind"] == "leaf":
            g = nodes.objects[step["node"]].grad
            step["final"] = list(_values(g))
    return {"objects": nodes.objects, "nodes": nodes.nodes, "steps": steps, "leaves": leaves}


def _record_tensor(
    root: Tensor, order: Sequence[Any], names: dict[int, str], gradient: Any, retain: bool
) -> dict[str, Any]:
    if not root.requires_grad:
        raise RuntimeError(
            "walkthrough: the tensor does not require grad and has no grad_fn; set "
            "requires_grad=True on an input (or check for a no_grad block)"
        )
    nodes = _Nodes(order, names)
    sweep = list(reversed(toposort((root,), engine.grad_parents)))  # run_backward's order
    steps: list[dict[str, Any]] = []
    totals: dict[int, Tensor] = {}
    parts: dict[int, int] = {}

    class Recorder(Observer):
        """Keeps each step as the real backward pass takes it."""

        def node(self, t: Tensor, g: Tensor) -> None:
            steps.append({"node": nodes.add(t), "grad": list(_values(g)), "gives": []})

        def input(self, fn: Function, i: int, x: Tensor, raw: Tensor, final: Tensor) -> None:
            j = nodes.add(x)
            total = final if j not in totals else totals[j] + final  # as the engine sums
            totals[j] = total
            parts[j] = parts.get(j, 0) + 1
            give: dict[str, Any] = {
                "to": j,
                "role": _role(fn, i, len(fn.inputs or ())),
                "raw": list(_values(raw)),
                "total": list(_values(total)),
                "part": parts[j],
            }
            if raw.shape != final.shape:
                give["fitted"] = [_shape(raw.shape), _shape(final.shape)]
                give["dims"] = _summed_dims(final.shape, raw.shape)
                give["given"] = list(_values(final))
            if raw.dtype != final.dtype:
                give["cast"] = f"{_dtype(raw)} to {_dtype(final)}"
            steps[-1]["gives"].append(give)

    seed = engine.seed(root, gradient, "walkthrough")
    engine.backward(root, seed, retain, observer=Recorder(), op="walkthrough")
    return _finish(nodes, sweep, steps)


def _record_value(root: Value, order: Sequence[Any], names: dict[int, str]) -> dict[str, Any]:
    nodes = _Nodes(order, names)
    steps: list[dict[str, Any]] = []
    totals: dict[int, float] = {}
    parts: dict[int, int] = {}

    def keep(v: Value, g: float, handed: list[tuple[Value, float, float]]) -> None:
        """Told by the real backward pass of each node it sweeps, with what it passed on."""
        gives = []
        for role, (p, d, given) in zip(_value_roles(v), handed, strict=True):
            j = nodes.add(p)
            totals[j] = totals.get(j, 0.0) + given  # as the engine adds into p.grad
            parts[j] = parts.get(j, 0) + 1
            gives.append(
                {"to": j, "role": role, "local": f"{d:.6g}",
                 "raw": list(_values(given)), "total": list(_values(totals[j])), "part": parts[j]}
            )  # fmt: skip
        steps.append({"node": nodes.add(v), "grad": list(_values(g)), "gives": gives})

    root.backward(on_step=keep)
    return _finish(nodes, list(reversed(order)), steps)


__all__ = ["draw_graph", "explain", "walkthrough", "rule", "VALUE_RULES", "Monitor"]
