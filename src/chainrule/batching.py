"""vmap's batching rules, as functorch's: Function.apply hands every op that meets a batched
input (batched.py's ``BatchedTensor``, one example's view of a whole batch) to ``dispatch``,
which runs the op once on the whole batch by the op's rule (dims moved past the batch dim,
shapes given the batch, elementwise ops broadcast) and wraps the result; an op without a
rule runs once per example, stacked (correct, at the speed of a loop). Where func does what
cannot be batched (reads a value in Python, writes in place, computes arrays from an example
outside an op), the call goes on as the first example's (every batched tensor stands for its
first example) and vmap calls func for each of the others: each example runs once.

Nested vmaps are levels: a batched tensor of level 2 holds one of level 1, whose value is
real; each op is batched at the highest level among its inputs, then again below. The
transforms that differentiate (func.grad) differentiate the real values (``real``), so
gradients are per example; func.vmap makes and takes apart batched tensors, and opens and
closes the levels here. A rule for an op defined above this module is registered from the
op's side (``register``).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from . import array
from .autograd import primitive
from .batched import (  # noqa: F401  (batching's names: the batched tensors' module's)
    BatchedTensor,
    ExampleView,
    Refused,
    Unbatchable,
    active,
    batched_as,
    batched_everywhere,
    closed,
    degrade,
    degraded,
    differentiating,
    drawing,
    examples,
    first,
    first_result,
    levels,
    opened,
    padded,
    randomness_of,
    real,
    wrap,
    wrap_all,
)
from .tensor import Tensor

Rule = Callable[[Any, dict, dict, int], Tensor]
np = array.host  # batched tensors live on the host (vmap loops elsewhere)


def enter(size: int, randomness: str = "error") -> int:
    """Open a level of the given batch size and randomness; its number."""
    level = opened(size, randomness)
    primitive.batching[0] = dispatch
    return level


def leave(level: int) -> None:
    if closed(level):
        primitive.batching[0] = None


# -- the dispatcher -------------------------------------------------------------------------


def _signature(cls: Any) -> inspect.Signature:
    sig = cls.__dict__.get("_batching_signature")
    if sig is None:
        sig = inspect.signature(cls.forward)
        cls._batching_signature = sig  # the class's own (subclasses may differ)
    return sig


def _level_of(x: Any, op: str) -> int:
    if isinstance(x, tuple):  # an index's parts
        return max((_level_of(y, op) for y in x), default=0)
    if isinstance(x, BatchedTensor):
        return x._level
    arr = x._array if isinstance(x, Tensor) else x
    if isinstance(arr, ExampleView):
        if arr.batched is None:
            raise Unbatchable(
                f"vmap: {op} got an array computed from a batched tensor's values outside an "
                f"op (of shape {arr.shape} per example), whose batch cannot be known; vmap "
                "calls func once per example instead"
            )
        return arr.batched._level
    return 0


# The ops whose array options are indices: an index array not marked is a constant (made
# from a list or a tensor outside func), the same for every example.
INDEXED = {"GetItem", "Gather", "Scatter", "ScatterReduce", "ScatterAdd", "IndexAdd", "IndexPut"}
# The pools: their array options (windows, weights, matrices) come from shapes alone
POOLS = """AvgPool2d AvgPool2dBackward AvgPool3d AvgPool3dBackward MaxPool3dWithIndices
AdaptiveMaxPool2d AdaptiveMaxPool3d AdaptiveAvgPool2d AdaptiveAvgPool3d AdaptiveAvgPoolBackward
""".split()
INDEXED |= set(POOLS)
# Arrays made outside func, the same for every example: where's condition (one made inside is
# batched, or marked)
INDEXED |= {"Where"}


def _unknown_arrays(x: Any, op: str) -> None:
    """Refuse an array beside a batched input that is neither batched nor computed by NumPy
    from a batched tensor (marked), nor an index: made from one example's values by other
    code (a factorization's arrays, a NumPy number), its batch cannot be known."""
    if isinstance(x, tuple):
        for y in x:
            _unknown_arrays(y, op)
    elif isinstance(x, np.generic) or (
        isinstance(x, np.ndarray) and not isinstance(x, ExampleView) and op not in INDEXED
    ):
        raise Unbatchable(
            f"vmap: {op} got an array of shape {np.shape(x)} beside a batched tensor, not a "
            "tensor; its batch cannot be known; the call goes on as the first example's"
        )


def dispatch(cls: Any, inputs: tuple, options: dict) -> Tensor | None:
    """Function.apply's hook inside vmap: the op batched by its rule, or None where no input
    is batched; once func goes on as its first example's call, the op on first examples."""
    if degraded():
        return _on_first(cls, inputs, options)
    op = cls.__name__
    level = 0
    try:
        for x in (*inputs, *options.values()):
            if isinstance(x, (Tensor, np.ndarray, tuple)):
                level = max(level, _level_of(x, op))
        if not level:
            return None
        for x in (*inputs, *options.values()):
            _unknown_arrays(x, op)
    except Unbatchable:  # an array of an example's values: the first example's
        if differentiating[0]:  # computed off the graph a gradient must pass through
            raise
        degrade()
        return _on_first(cls, inputs, options)
    size = dict(levels)[level]
    _given[cls] = len(inputs)
    bound = _signature(cls).bind(None, *inputs, **options)
    args: dict[str, Any] = {}
    batched: dict[str, Any] = {}
    for name, value in list(bound.arguments.items())[1:]:
        if name == _varargs(cls) or isinstance(value, tuple):  # Cat's *arrays, an index
            pairs = [_unwrap(v, level) for v in value]
            args[name] = tuple(v for v, _ in pairs)
            batched[name] = tuple(b for _, b in pairs)
        else:
            args[name], batched[name] = _unwrap(value, level)
    if level in _running:  # the rule gave this level's batched tensors to an op again
        raise Unbatchable(f"vmap: {op} cannot be batched (it writes into its input)")
    rule = RULES.get(op, loop)
    _running.append(level)
    try:
        return wrap(rule(cls, args, batched, size), level)
    finally:
        _running.pop()


_running: list[int] = []  # the levels whose rules are running


def _on_first(cls: Any, inputs: tuple, options: dict) -> Tensor | None:
    """The op on the first example of each batched input (None where none is batched)."""

    def one(x: Any) -> Any:
        if isinstance(x, BatchedTensor):
            return first(x)
        if isinstance(x, ExampleView):  # the first example's, or computed from its values
            return x.view(np.ndarray) if x.batched is None else first(x.batched)._array
        if isinstance(x, Tensor) and isinstance(x._array, ExampleView):
            x._array = x._array.view(np.ndarray)  # made inside vmap: an ordinary array now
            return x
        if isinstance(x, tuple):
            got = tuple(one(y) for y in x)
            return x if all(a is b for a, b in zip(got, x, strict=True)) else got
        return x

    given = tuple(one(x) for x in inputs)
    opts = {k: one(v) for k, v in options.items()}
    if all(a is b for a, b in zip(given, inputs, strict=True)) and all(
        opts[k] is options[k] for k in options
    ):
        return None
    return cls.apply(*given, **opts)


def _unwrap(x: Any, level: int) -> tuple[Any, bool]:
    """(x's batch at this level, batch dim first, True), or (x, False) where x is not batched
    at it."""
    if isinstance(x, BatchedTensor) and x._level == level:
        return x._value, True
    if isinstance(x, ExampleView) and x.batched is not None and x.batched._level == level:
        return x.batched._value._array, True
    return x, False


def _varargs(cls: Any) -> str | None:
    """The name of forward's ``*arrays``, if it has one."""
    for p in _signature(cls).parameters.values():
        if p.kind is p.VAR_POSITIONAL:
            return p.name
    return None


# How many of an op's arguments its caller gave as inputs (the rest are options, which its
# backward returns no gradient for): the op's call as dispatch last saw it.
_given: dict[Any, int] = {}


def call(cls: Any, args: dict) -> Tensor:
    """The op on named arguments (the batched values, or examples), split into inputs and
    options as its caller split them."""
    rest = _varargs(cls)
    if rest is not None:
        return cls.apply(*args[rest], **{k: v for k, v in args.items() if k != rest})
    names = list(args)
    n = _given[cls]
    return cls.apply(*[args[k] for k in names[:n]], **{k: args[k] for k in names[n:]})


def loop(cls: Any, args: dict, batched: dict, size: int) -> Tensor:
    """An op without a rule: once per example, the results stacked (a loop's speed)."""
    from .functions import stack

    outs = []
    for b in range(size):
        one = {}
        for name, value in args.items():
            flag = batched[name]
            if isinstance(flag, tuple):
                one[name] = tuple(v[b] if f else v for v, f in zip(value, flag, strict=True))
            else:
                one[name] = value[b] if flag else value
        outs.append(call(cls, one))
    return stack(outs)


# -- rules ----------------------------------------------------------------------------------


def _rank(x: Any, batched: bool) -> int:
    return x.ndim - 1 if batched else getattr(x, "ndim", 0)


def _broadcast(x: Any, size: int) -> Any:
    """An input not batched, repeated along a new batch dim (a view)."""
    if isinstance(x, np.ndarray):
        return np.broadcast_to(x, (size, *x.shape))
    return x.unsqueeze(0).expand(size, *x.shape)


def elementwise(cls: Any, args: dict, batched: dict, size: int) -> Tensor:
    """Elementwise ops broadcast: each batched input padded to the largest example rank."""
    arrays = {k for k, v in args.items() if isinstance(v, (Tensor, np.ndarray))}
    rank = max(_rank(args[k], batched[k]) for k in arrays)
    return call(cls, {k: padded(v, rank) if batched[k] else v for k, v in args.items()})


def _dims(dims: Any, rank: int) -> Any:
    """Example dims as the batch's: None (all) is every dim after the batch's."""
    if dims is None:
        return tuple(range(1, rank + 1))
    if isinstance(dims, int):
        return dims % max(rank, 1) + 1
    return tuple(d % max(rank, 1) + 1 for d in dims)


def _only_first(rule: Rule) -> Rule:
    """A rule for an op batched in its first input only; the loop otherwise."""

    def checked(cls: Any, args: dict, batched: dict, size: int) -> Tensor:
        first = next(iter(args))
        if any(any(f) if isinstance(f, tuple) else f for k, f in batched.items() if k != first):
            return loop(cls, args, batched, size)
        return rule(cls, args, batched, size)

    return checked


@_only_first
def reduction(cls: Any, args: dict, batched: dict, size: int) -> Tensor:
    a = next(iter(args.values()))
    if a.ndim == 1:  # 0-d examples: their dim 0 is no dim of the batch's
        return loop(cls, args, batched, size)
    key = "dims" if "dims" in args else "dim"
    return call(cls, {**args, key: _dims(args[key], a.ndim - 1)})


@_only_first
def reshape(cls: Any, args: dict, batched: dict, size: int) -> Tensor:
    return call(cls, {**args, "shape": (size, *args["shape"])})


@_only_first
def permute(cls: Any, args: dict, batched: dict, size: int) -> Tensor:
    rank = args["a"].ndim - 1
    return call(cls, {**args, "dims": (0, *(d % rank + 1 for d in args["dims"]))})


@_only_first
def expand(cls: Any, args: dict, batched: dict, size: int) -> Tensor:
    shape = tuple(args["shape"])
    return call(cls, {**args, "a": padded(args["a"], len(shape)), "shape": (size, *shape)})


@_only_first
def repeat(cls: Any, args: dict, batched: dict, size: int) -> Tensor:
    sizes = args["sizes"]  # the batch's dim repeated once, before the example's sizes
    return call(cls, {**args, "a": padded(args["a"], len(sizes)), "sizes": (1, *sizes)})


def getitem(cls: Any, args: dict, batched: dict, size: int) -> Tensor:
    """Indexing by one integer array of each example's own (embedding's lookup): the rows of
    the one table each example's indices pick, or of its own table; else _indexed's."""
    index, flags = args["index"], batched["index"]
    if flags != (True,) or index[0].dtype.kind not in "iu":
        return _indexed(cls, args, batched, size)
    if not batched["a"]:  # (B, *idx): the rows of the one table, (B, *idx, ...)
        return call(cls, args)
    picks = index[0]  # (B, *idx): example b's rows of a[b]
    b = np.arange(size).reshape(size, *(1,) * (picks.ndim - 1))  # (B, 1, ...)
    return call(cls, {**args, "index": (b, picks)})


@_only_first
def _indexed(cls: Any, args: dict, batched: dict, size: int) -> Tensor:
    """Basic indexing after the batch's dim; advanced (arrays, the same for every example)
    too where its indices are adjacent, as NumPy then keeps their dims in place."""
    index = args["index"]
    parts = index if isinstance(index, tuple) else (index,)
    advanced = [
        k for k, p in enumerate(parts) if not (p is None or p is Ellipsis or isinstance(p, slice))
    ]
    arrays = [parts[k] for k in advanced if not isinstance(parts[k], int)]
    if arrays and (
        advanced != list(range(advanced[0], advanced[-1] + 1))
        or any(isinstance(a, ExampleView) or a.dtype.kind == "b" for a in arrays)
    ):
        return loop(cls, args, batched, size)  # per example
    return call(cls, {**args, "index": (slice(None), *parts)})


def joined(cls: Any, args: dict, batched: dict, size: int) -> Tensor:
    """Cat and Stack: inputs not batched repeated along the batch, dim moved past it."""
    arrays = tuple(
        v if f else _broadcast(v, size)
        for v, f in zip(args["arrays"], batched["arrays"], strict=True)
    )
    shapes = args.get("shapes")  # Cat's inputs read with more dims: the batch's first
    rank = (arrays[0].ndim - 1 if shapes is None else len(shapes[0])) + (cls.__name__ == "Stack")
    more = {} if shapes is None else {"shapes": tuple((size, *s) for s in shapes)}
    return call(cls, {**args, **more, "arrays": arrays, "dim": args["dim"] % rank + 1})


def matmul(cls: Any, args: dict, batched: dict, size: int) -> Tensor:
    """a @ b per example: a 1-D example made a row (or b's a column) and squeezed after;
    the example batch dims padded so the batch dims line up."""
    a, b = args["a"], args["b"]
    ba, bb = batched["a"], batched["b"]
    ra, rb = _rank(a, ba), _rank(b, bb)
    if ba and ra == 1:
        a = a.unsqueeze(1)  # (B, 1, k)
    if bb and rb == 1:
        b = b.unsqueeze(-1)  # (B, k, 1)
    ea, eb = max(ra, 2 if ba else ra), max(rb, 2 if bb else rb)
    rank = max(ea, eb)
    if ba:
        a = padded(a, rank)
    if bb:
        b = padded(b, rank)
    out = call(cls, {"a": a, "b": b})
    if bb and rb == 1:
        out = out.squeeze(-1)
    if ba and ra == 1:
        out = out.squeeze(-1 if rb == 1 else -2)  # a's row
    return out


def linear(cls: Any, args: dict, batched: dict, size: int) -> Tensor:
    """x @ W^T + b per example; with per-example weights (vmap over a model's parameters, or
    grad's per-example copies) one batched matmul."""
    from .functions import einsum

    x, w, b = args["x"], args["weight"], args["bias"]
    if not batched["weight"] and not batched["bias"]:
        return call(cls, args)  # x's batch dim is one more leading dim
    x = x if batched["x"] else _broadcast(x, size)
    if not batched["weight"]:
        w = _broadcast(w, size)
    rows = x.reshape(size, -1, x.shape[-1])  # (B, R, in)
    # einsum rather than a batched matmul: the weights' gradient, per-example outer
    # products when R is 1, runs 4x faster as einsum's loop than as B tiny matmuls
    out = einsum("bri,boi->bro", rows, w).reshape(*x.shape[:-1], w.shape[-2])  # (B, ..., out)
    if b is not None:
        b = b if batched["bias"] else _broadcast(b, size)  # (B, out)
        out = out + b.reshape(size, *(1,) * (x.ndim - 2), b.shape[-1])
    return out


def convolution(cls: Any, args: dict, batched: dict, size: int) -> Tensor:
    """Examples of (N, C, *spatial) as one batch of B*N; per-example weights as B groups."""
    x, w, b = args["x"], args["weight"], args["bias"]
    x = x if batched["x"] else _broadcast(x, size)
    n = x.shape[1]
    if not batched["weight"] and not batched["bias"]:
        out = call(cls, {**args, "x": x.reshape(size * n, *x.shape[2:])})  # (B*N, O, *outs)
        return out.reshape(size, n, *out.shape[1:])
    w = w if batched["weight"] else _broadcast(w, size)  # (B, O, C/g, *kernel)
    if b is not None:
        b = (b if batched["bias"] else _broadcast(b, size)).reshape(-1)  # (B*O,)
    planes = x.transpose(0, 1).reshape(n, -1, *x.shape[3:])  # (N, B*C, *spatial)
    out = call(
        cls,
        {
            **args,
            "x": planes,
            "weight": w.reshape(-1, *w.shape[2:]),  # (B*O, C/g, *kernel)
            "bias": b,
            "groups": args["groups"] * size,
        },
    )  # (N, B*O, *outs)
    return out.reshape(n, size, -1, *out.shape[2:]).transpose(0, 1)  # (B, N, O, *outs)


@_only_first
def pool2d(cls: Any, args: dict, batched: dict, size: int) -> Tensor:
    first = next(iter(args))  # a pool of any rank: (B, N, C, *spatial) as (B*N, C, *spatial)
    x = args[first]
    out = call(cls, {**args, first: x.reshape(-1, *x.shape[2:])})  # (B*N, C, *out)
    return out.reshape(size, x.shape[1], *out.shape[1:])


def nll(cls: Any, args: dict, batched: dict, size: int) -> Tensor:
    """NLLLoss and CrossEntropy: per-example losses of the B*N rows, then each example's
    reduction (per-element weights: the loop)."""
    first = "logp" if "logp" in args else "x"
    x, t = args[first], args["target"]
    if args["weight"] is not None or batched["weight"]:
        return loop(cls, args, batched, size)
    x = x if batched[first] else _broadcast(x, size)
    t = t if batched["target"] else _broadcast(t, size)
    if x.ndim == 2:  # examples of (C,): rows of the batch
        loss = call(cls, {**args, first: x, "target": t, "class_dim": 1, "reduction": "none"})
        return loss  # one row each: 'mean', 'sum' and 'none' alike
    rows = {first: x.reshape(-1, *x.shape[2:]), "target": t.reshape(-1, *t.shape[2:])}
    loss = call(cls, {**args, **rows, "reduction": "none"})  # (B*N, d1, ...)
    loss = loss.reshape(size, *t.shape[1:])
    if args["reduction"] == "none":
        return loss
    dims = tuple(range(1, loss.ndim))
    return loss.mean(dim=dims) if args["reduction"] == "mean" else loss.sum(dim=dims)


def einsum_rule(cls: Any, args: dict, batched: dict, size: int) -> Tensor:
    """einsum with a letter of its own for the batch, on the batched operands and first in
    the result (an equation without '->' or with '...' runs per example)."""
    equation = args["equation"].replace(" ", "")
    if "->" not in equation or "." in equation:
        return loop(cls, args, batched, size)
    ins, out = equation.split("->")
    letter = next(
        c for c in "ZYXWVUTSRQPONMLKJIHGFEDCBAzyxwvutsrqponmlkjihgfedcba" if c not in equation
    )
    specs = [
        letter + spec if f else spec
        for spec, f in zip(ins.split(","), batched["arrays"], strict=True)
    ]
    return call(cls, {**args, "equation": ",".join(specs) + "->" + letter + out})


def cast(cls: Any, args: dict, batched: dict, size: int) -> Tensor:
    """A dtype cast is elementwise; one that also lays the copy out in an order of the
    example's dims runs per example."""
    if args.get("order") is not None:
        return loop(cls, args, batched, size)
    return call(cls, args)


def scatter(cls: Any, args: dict, batched: dict, size: int) -> Tensor:
    """scatter and scatter_reduce along the dim after the batch's: the input, src and index
    each given the batch (repeated where not batched), so each example scatters into its own."""
    a, src, index = args["a"], args["src"], args["index"]
    rank = _rank(a, batched["a"])
    if rank == 0:  # 0-d examples: dim 0 is no dim of the batch's
        return loop(cls, args, batched, size)
    given = {
        "a": a if batched["a"] else _broadcast(a, size),
        "index": index if batched["index"] else _broadcast(index, size),
        "src": src if batched["src"] or not getattr(src, "ndim", 0) else _broadcast(src, size),
    }
    return call(cls, {**args, **given, "dim": args["dim"] % rank + 1})


@_only_first
def pad(cls: Any, args: dict, batched: dict, size: int) -> Tensor:
    return call(cls, {**args, "widths": ((0, 0), *args["widths"])})  # none for the batch's dim


@_only_first
def diagonal(cls: Any, args: dict, batched: dict, size: int) -> Tensor:
    rank = args["a"].ndim - 1
    return call(cls, {**args, "dim1": args["dim1"] % rank + 1, "dim2": args["dim2"] % rank + 1})


ELEMENTWISE = """Add Sub Mul Div Neg Pow Exp Log Log1p Expm1 Sqrt Sin Cos Tanh Sigmoid Relu Abs
Sign Where Maximum Minimum FloorDivide Clamp Elu Celu Softplus LogSigmoid Mish Tan Asin Acos
Atan Sinh Cosh Asinh Acosh Atanh Atan2 Hypot Reciprocal Logaddexp Logaddexp2 Copysign Fmod
Frac Fmax Fmin Exp2 Deg2Rad Rad2Deg Hardswish Hardsigmoid Softshrink Digamma Erf Erfc Erfinv
Gelu Ldexp Lgamma Logit Nextafter Polygamma Sinc I0 Xlogy NanToNum Sgn Silu
Addcmul Addcdiv Lerp Log2 Log10 Remainder Rounded""".split()
REDUCTIONS = """Sum Var Std Cumsum Cumprod LogCumSumExp Mean Amax Amin LogSumExp Softmax
LogSoftmax""".split()

RULES: dict[str, Rule] = {name: elementwise for name in ELEMENTWISE}
RULES.update(dict.fromkeys(REDUCTIONS, reduction))
RULES.update(
    {
        "Einsum": einsum_rule,
        "Cast": cast,
        **dict.fromkeys(("Unbind", "GetItem"), getitem),
        "Reshape": reshape,
        "Permute": permute,
        "Expand": expand,
        "Repeat": repeat,
        **dict.fromkeys(("Cat", "Stack"), joined),
        "MatMul": matmul,
        "Linear": linear,
        "Convolution": convolution,
        "MaxPool2d": pool2d,
        **dict.fromkeys(("NLLLoss", "CrossEntropy"), nll),
        **dict.fromkeys(("Scatter", "ScatterReduce"), scatter),
        "Pad": pad,
        "Diagonal": diagonal,
    }
)
RULES.update(dict.fromkeys(POOLS, pool2d))


def register(rules: dict[str, Rule]) -> None:
    """Rules written above this module, for ops whose array options come from shapes alone."""
    RULES.update(rules)
    INDEXED.update(rules)
