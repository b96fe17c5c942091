"""Random programs run on chainrule and on PyTorch: values and gradients agree.

Hypothesis draws a program: one to three input shapes that broadcast together, then one to
six steps, each a unary, binary, reduction, shape or indexing op on the latest value (a
binary op takes an earlier value or a fresh input as its other operand). Both frameworks
run it, and the output is reduced by a random weighted sum, so every input's gradient is
checked against a random upstream gradient. The same kind of programs are also checked
for second-order gradients, in anomaly mode (which must not object to finite programs) and
in float32. Denominators are kept away from 0 and exp's argument clamped, so values stay
finite but for the rare overflow (such programs are skipped) and the deliberate edge cases
(empty slices and masks, ties from relu, clamp and expand).

The suite runs a fixed, derandomized set of examples; CHAINRULE_FUZZ_EXAMPLES=N (as
``make fuzz`` sets) runs N random ones of each test instead.
"""

from __future__ import annotations

import contextlib
import math
import os
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import chainrule as cr
import chainrule.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional

_ENV = os.environ.get("CHAINRULE_FUZZ_EXAMPLES")


def fuzz_settings(default_examples: int) -> settings:
    return settings(
        max_examples=int(_ENV) if _ENV else default_examples,
        derandomize=not _ENV,
        database=None,
        deadline=None,
        print_blob=True,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.filter_too_much,
        ],
    )


# -- programs --------------------------------------------------------------------------------


@dataclass
class Program:
    """Leaves (arrays, whether each requires grad) and steps. A step is (op, operands,
    params); an operand is ("leaf", i) or ("value", j), value j being made by step j."""

    leaves: list[np.ndarray] = field(default_factory=list)
    requires_grad: list[bool] = field(default_factory=list)
    steps: list[tuple[str, tuple, dict]] = field(default_factory=list)
    weights: np.ndarray | None = None


UNARY = [
    "exp",
    "tanh",
    "sigmoid",
    "relu",
    "abs",
    "sin",
    "cos",
    "neg",
    "square",
    "scale",
    "pow",
    "rsub",
    "radd",
    "rdiv",
    "rpow",
    "log",
    "sqrt",
    "erf",
    "clamp",
    "gelu",
]
BINARY = [
    "add",
    "sub",
    "mul",
    "div",
    "maximum",
    "minimum",
    "matmul",
    "where",
    "tensor_pow",
    "cat",
    "stack",
    "einsum",
]
REDUCE = [
    "sum",
    "mean",
    "amax",
    "amin",
    "logsumexp",
    "softmax",
    "log_softmax",
    "var",
    "std",
    "norm",
]
SHAPE = [
    "reshape",
    "permute",
    "transpose",
    "unsqueeze",
    "squeeze",
    "expand",
    "broadcast_to",
    "flatten",
    "mT",
    "split",
    "chunk",
    "pad",
]
INDEX = ["basic", "int_array", "two_arrays", "mask", "mask_prefix", "gather"]
CATEGORIES = {"unary": UNARY, "binary": BINARY, "reduce": REDUCE, "shape": SHAPE, "index": INDEX}
CATEGORY_NAMES = sorted(CATEGORIES)


class _Draw:
    """The draw of st.composite, with labels, for the helpers below."""

    def __init__(self, draw: Any, rng: np.random.Generator) -> None:
        self._draw, self.rng = draw, rng

    def __call__(self, strategy: Any, label: str | None = None) -> Any:
        return self._draw(strategy, label=label)

    def pick(self, options: Any, label: str | None = None) -> Any:
        return self._draw(st.sampled_from(list(options)), label=label)

    def coin(self, label: str | None = None) -> bool:
        return self._draw(st.booleans(), label=label)


def _sub_shape(d: _Draw, shape: tuple[int, ...]) -> tuple[int, ...]:
    """A shape that broadcasts against ``shape``: leading dims dropped, some dims set to 1."""
    drop = d.pick(range(len(shape) + 1), "dropped leading dims")
    return tuple(1 if d.coin() else n for n in shape[drop:])


def _leaf(
    d: _Draw, prog: Program, shape: tuple[int, ...], away_from_zero: bool = False
) -> tuple[str, int]:
    arr = d.rng.standard_normal(shape)
    if away_from_zero:  # a safe denominator: |x| in [0.5, 2]
        arr = np.where(arr < 0, -1.0, 1.0) * d.rng.uniform(0.5, 2.0, shape)
    prog.leaves.append(arr)
    prog.requires_grad.append(d.coin("leaf requires grad"))
    return ("leaf", len(prog.leaves) - 1)


def _dims_arg(d: _Draw, nd: int) -> Any:
    """A reduction's dim as a user writes it: None, an int or a tuple, negative or not."""
    kind = d.pick(["none", "int", "tuple"])
    if kind == "none":
        return None
    if nd == 0:
        return d.pick([0, -1]) if kind == "int" else ()
    if kind == "int":
        return d.pick(range(-nd, nd))
    picked = d(st.lists(st.integers(0, nd - 1), min_size=1, max_size=nd, unique=True))
    return tuple(i - nd if d.coin() else i for i in picked)


def norm_dims(dim: Any, nd: int) -> tuple[int, ...]:
    if dim is None or dim == () or nd == 0:
        return tuple(range(nd))
    dims = (dim,) if isinstance(dim, int) else dim
    return tuple(sorted(i % nd for i in dims))


def _slice(d: _Draw, n: int) -> slice:
    """A slice of a dim of size n with a positive step; empty once in a while."""
    if n == 0 or d.pick(range(8)) == 0:
        return slice(n, None) if d.coin() else slice(1, 1)
    start = d.pick(range(n))
    stop = d.pick(range(start + 1, n + 1))
    step = d.pick([1, 2, 3])
    if d.coin():  # the same slice written from the end
        return slice(start - n, stop - n if stop < n else None, step)
    return slice(start, stop, step)


def _index(d: _Draw, kind: str, shape: tuple[int, ...]) -> tuple | None:
    """An index of one of the INDEX kinds (not gather) for an array of ``shape``; None where
    the kind does not apply. Once in a while the result is empty."""
    nd, rng = len(shape), d.rng
    if nd == 0:
        return None
    if kind == "basic":
        out: list[Any] = []
        for n in shape:
            how = d.pick(["all", "slice", "int", "none"])
            if how == "all":
                out.append(slice(None))
            elif how == "slice":
                out.append(_slice(d, n))
            elif how == "int" and n > 0:
                out.append(d.pick(range(-n, n)))
            elif how == "none":
                out += [None, slice(None)]
            else:
                out.append(slice(None))
        k = d.pick(range(len(out)))
        if all(i == slice(None) for i in out[k:]) and d.coin():
            out = out[:k] + [Ellipsis]  # the same index, spelled with ...
        return tuple(out)
    if kind == "int_array":
        dim = d.pick(range(nd))
        size = d.pick([(1,), (3,), (5,), (2, 2), (1,), (3,), (4,), (0,)])
        if shape[dim] == 0 and size != (0,):
            return None
        arr = rng.integers(-shape[dim], max(shape[dim], 1), size)  # repeats and negatives
        return (slice(None),) * dim + (arr,)
    if kind == "two_arrays":
        if nd < 2:
            return None
        d0, d1 = sorted(d(st.lists(st.integers(0, nd - 1), min_size=2, max_size=2, unique=True)))
        k = d.pick([1, 2, 3, 4])
        if shape[d0] == 0 or shape[d1] == 0:
            return None
        a0 = rng.integers(0, shape[d0], (k,))
        a1 = rng.integers(-shape[d1], shape[d1], (1,) if d.coin() else (k,))
        idx: list[Any] = [slice(None)] * (d1 + 1)
        idx[d0], idx[d1] = a0, a1
        return tuple(idx)
    mask = rng.random(shape if kind == "mask" else shape[:1]) < 0.5
    if mask.size and d.pick(range(8)):
        mask.flat[rng.integers(0, mask.size)] = True  # at least one element picked
    return (mask,)


@st.composite
def programs(draw: Any) -> Program:
    d = _Draw(draw, np.random.default_rng(draw(st.integers(0, 2**32 - 1), label="seed")))
    prog = Program()
    nd = d.pick(range(4), "input dims")
    base = tuple(d.pick(range(1, 5)) for _ in range(nd))
    _leaf(d, prog, base)
    prog.requires_grad[0] = True
    for _ in range(d.pick(range(3), "extra inputs")):
        _leaf(d, prog, _sub_shape(d, base))
    shapes = {("leaf", i): a.shape for i, a in enumerate(prog.leaves)}
    current: tuple = ("leaf", 0)
    for _ in range(d.pick(range(1, 7), "depth")):
        made = _step(d, prog, current, shapes)
        if made is None:
            continue
        op, operands, params, out_shape = made
        prog.steps.append((op, operands, params))
        current = ("value", len(prog.steps) - 1)
        shapes[current] = out_shape
        for o in operands:
            if o not in shapes:  # a leaf made by this step
                shapes[o] = prog.leaves[o[1]].shape
    prog.weights = d.rng.standard_normal(shapes[current])
    return prog


def _step(d: _Draw, prog: Program, x: tuple, shapes: dict) -> tuple | None:
    shape = shapes[x]
    nd = len(shape)
    z = np.zeros(shape)  # shapes are worked out by doing the op on zeros
    category = d.pick(CATEGORY_NAMES, "category")
    op = d.pick(CATEGORIES[category], "op")
    if category == "unary":
        return op, (x,), _unary_params(d, op), shape
    if category == "binary":
        return _binary_step(d, prog, op, x, shapes)
    if category == "reduce":
        if op in ("softmax", "log_softmax"):
            return op, (x,), {"dim": d.pick(range(-max(nd, 1), max(nd, 1)))}, shape
        dim = _dims_arg(d, nd)
        if op in ("amax", "amin") and z.size == 0:
            return None  # chainrule refuses any empty input here (PyTorch only empty dims)
        params = {"dim": dim, "keepdim": d.coin("keepdim")}
        if op in ("var", "std"):
            n = math.prod(shape[i] for i in norm_dims(dim, nd))
            params["correction"] = d.pick([0, 1]) if n > 1 else 0
        return (
            op,
            (x,),
            params,
            np.sum(z, axis=norm_dims(dim, nd), keepdims=params["keepdim"]).shape,
        )
    if category == "shape":
        return _shape_step(d, op, x, shape)
    if op == "gather":
        if nd == 0 or 0 in shape:
            return None
        dim = d.pick(range(nd))
        size = list(shape)
        size[dim] = d.pick([1, 2, 3])
        index = d.rng.integers(0, shape[dim], size)
        return "gather", (x,), {"dim": dim - nd if d.coin() else dim, "index": index}, tuple(size)
    index = _index(d, op, shape)
    if index is None:
        return None
    form = d.pick(["array", "list", "tensor"], "index arrays as")
    return "index", (x,), {"index": index, "as": form}, z[index].shape


def _unary_params(d: _Draw, op: str) -> dict:
    if op == "scale":
        return {"c": d.pick([-2.5, -1.0, 0.5, 3.0])}
    if op == "pow":
        return {"k": d.pick([2, 3, -1, 0.5])}  # -1 and 0.5 on |x| + 0.5
    if op in ("rsub", "radd", "rdiv", "rpow"):
        return {"c": d.pick([-1.5, 2.0] if op != "rpow" else [0.5, 2.0])}
    if op == "clamp":
        lo, hi = d.pick([None, -1.0, -0.25]), d.pick([None, 0.25, 1.0])
        return {"lo": lo, "hi": 1.0 if lo is None and hi is None else hi}
    if op == "gelu":
        return {"approximate": d.pick(["none", "tanh"])}
    return {}


def _broadcasts(a: tuple, b: tuple) -> bool:
    try:
        np.broadcast_shapes(a, b)
    except ValueError:
        return False
    return True


def _binary_step(d: _Draw, prog: Program, op: str, x: tuple, shapes: dict) -> tuple | None:
    shape = shapes[x]
    nd = len(shape)
    if op == "matmul":
        return _matmul_step(d, prog, x, shape)
    if op in ("cat", "stack"):
        if op == "cat" and nd == 0:
            return None
        dim = d.pick(range(nd + (op == "stack")))
        other_shape = list(shape)
        if op == "cat":
            other_shape[dim] = d.pick([1, 2, 3])
        other = _leaf(d, prog, tuple(other_shape))
        swap = d.coin("operand order")
        ops = (other, x) if swap else (x, other)
        pair = (
            [np.zeros(other_shape), np.zeros(shape)]
            if swap
            else [np.zeros(shape), np.zeros(other_shape)]
        )
        out = (np.concatenate if op == "cat" else np.stack)(pair, axis=dim).shape
        written = dim - (nd + (op == "stack")) if d.coin() else dim
        return op, ops, {"dim": written}, out
    if op == "einsum":
        if nd == 0:
            return None
        letters = "abcdefgh"[:nd]
        shared = [c for c in letters if d.coin()]
        extra = d.pick(["", "u", "uv"])
        sizes = dict(zip(letters, shape, strict=True)) | {c: d.pick([1, 2, 3]) for c in extra}
        other_letters = "".join(d(st.permutations(shared + list(extra))))
        union = sorted(set(letters) | set(other_letters))
        out_letters = "".join(c for c in d(st.permutations(union)) if d.coin())
        if not other_letters:
            equation = f"{letters}->{out_letters}"
            return "einsum", (x,), {"equation": equation}, tuple(sizes[c] for c in out_letters)
        other = _leaf(d, prog, tuple(sizes[c] for c in other_letters))
        equation = f"{letters},{other_letters}->{out_letters}"
        return "einsum", (x, other), {"equation": equation}, tuple(sizes[c] for c in out_letters)
    pool = [k for k, s in shapes.items() if k != x and _broadcasts(s, shape)]
    if pool and d.coin("operand from the pool"):
        other = d.pick(sorted(pool))
        other_shape = shapes[other]
    else:
        other_shape = _sub_shape(d, shape)
        other = _leaf(d, prog, other_shape, away_from_zero=op == "div")
    swap = d.coin("operand order")
    ops = (other, x) if swap else (x, other)
    out = np.broadcast_shapes(shape, other_shape)
    # a safe denominator: a fresh leaf away from 0, else the op divides by |b| + 1
    params: dict = {"safe": op == "div" and (swap or other in shapes)}
    if op == "where":
        params["cond"] = np.asarray(d.rng.random(_sub_shape(d, out)) < 0.5)
        # a number in place of the other operand (where that leaves the shape as it is)
        params["number"] = d.pick([None, None, 0.0, -2.5]) if out == shape else None
        params["number_at"] = 0 if swap else 1
    return op, ops, params, out


def _matmul_step(d: _Draw, prog: Program, x: tuple, shape: tuple) -> tuple | None:
    """x @ other or other @ x, other a fresh leaf: a vector, a matrix or a batch of them."""
    nd = len(shape)
    if nd == 0:
        return None
    right = d.coin("x on the right")
    k = shape[-2] if right and nd > 1 else shape[-1]
    m = d.pick([1, 2, 3])
    form = d.pick(["vector", "matrix", "batched"])
    mat = (m, k) if right else (k, m)
    if form == "vector":
        other_shape: tuple = (k,)
    elif form == "matrix":
        other_shape = mat
    else:
        batch = _sub_shape(d, shape[:-2]) if nd > 2 else (d.pick([1, 2, 3]),)
        other_shape = batch + mat
    other = _leaf(d, prog, other_shape)
    a, b = (other_shape, shape) if right else (shape, other_shape)
    out = np.matmul(np.zeros(a), np.zeros(b)).shape
    return "matmul", ((other, x) if right else (x, other)), {}, out


def _shape_step(d: _Draw, op: str, x: tuple, shape: tuple) -> tuple | None:
    nd = len(shape)
    z = np.zeros(shape)
    if op == "reshape":
        if z.size == 0:
            return None
        rest, dims = z.size, []
        for _ in range(d.pick(range(4))):
            k = d.pick([k for k in range(1, rest + 1) if rest % k == 0])
            dims.append(k)
            rest //= k
        dims.append(rest)
        if d.coin():  # one dim left for reshape to work out
            dims[d.pick(range(len(dims)))] = -1
        return "reshape", (x,), {"shape": tuple(dims)}, z.reshape(dims).shape
    if op in ("permute", "transpose", "mT", "split", "chunk", "pad") and nd == 0:
        return None
    if op == "permute":
        perm = tuple(d(st.permutations(range(nd))))
        written = tuple(p - nd if d.coin() else p for p in perm)
        return "permute", (x,), {"dims": written}, z.transpose(perm).shape
    if op == "transpose":
        a, b = d.pick(range(-nd, nd)), d.pick(range(-nd, nd))
        return "transpose", (x,), {"dims": (a, b)}, np.swapaxes(z, a, b).shape
    if op == "mT":
        return ("mT", (x,), {}, np.swapaxes(z, -1, -2).shape) if nd >= 2 else None
    if op == "unsqueeze":
        dim = d.pick(range(-nd - 1, nd + 1))
        return "unsqueeze", (x,), {"dim": dim}, np.expand_dims(z, dim).shape
    if op == "squeeze":
        how = d.pick(["all", "one", "tuple"])
        ones = [i for i, n in enumerate(shape) if n == 1]
        if how == "all" or nd == 0:
            return "squeeze", (x,), {"dim": None}, tuple(n for n in shape if n != 1)
        if how == "one":
            dim = d.pick(range(nd))  # a dim of size > 1 is left as it is
            out = tuple(n for i, n in enumerate(shape) if not (i == dim and n == 1))
            return "squeeze", (x,), {"dim": dim - nd if d.coin() else dim}, out
        if not ones:
            return None
        dims = tuple(d(st.lists(st.sampled_from(ones), min_size=1, unique=True)))
        return (
            "squeeze",
            (x,),
            {"dim": dims},
            tuple(n for i, n in enumerate(shape) if i not in dims),
        )
    if op == "flatten":
        if nd == 0:
            return "flatten", (x,), {"dims": (0, -1)}, (1,)
        s = d.pick(range(nd))
        e = d.pick(range(s, nd))
        out = shape[:s] + (math.prod(shape[s : e + 1]),) + shape[e + 1 :]
        return "flatten", (x,), {"dims": (s, e)}, out
    if op in ("split", "chunk"):
        dim = d.pick(range(nd))
        n = shape[dim]
        if n == 0:
            return None
        size = d.pick(range(1, n + 1)) if op == "split" else None
        chunks = d.pick([1, 2, 3, 4]) if op == "chunk" else None
        step = size or -(-n // chunks)
        pieces = [min(step, n - i) for i in range(0, n, step)]
        piece = d.pick(range(len(pieces)))
        out = shape[:dim] + (pieces[piece],) + shape[dim + 1 :]
        return op, (x,), {"n": size or chunks, "dim": dim, "piece": piece}, out
    if op == "pad":
        widths = tuple(d.pick([0, 1, 2]) for _ in range(2 * d.pick(range(1, min(nd, 2) + 1))))
        out = list(shape)
        for i in range(len(widths) // 2):
            out[nd - 1 - i] += widths[2 * i] + widths[2 * i + 1]
        return "pad", (x,), {"pad": widths, "value": d.pick([0.0, -1.5])}, tuple(out)
    # expand / broadcast_to: size-1 dims grow, and up to two leading dims are added
    lead = tuple(d.pick([1, 2, 3]) for _ in range(d.pick(range(3))))
    grown = tuple(d.pick([1, 2, 3]) if n == 1 else n for n in shape)
    if op == "expand":
        kept = tuple(-1 if n == g and d.coin() else g for n, g in zip(shape, grown, strict=True))
        return "expand", (x,), {"sizes": lead + kept}, lead + grown
    return "broadcast_to", (x,), {"shape": lead + grown}, lead + grown


# -- running a program -----------------------------------------------------------------------


ILL_CONDITIONED: list[str] = []  # what the last PyTorch run found too close to call
NON_FINITE: list[str] = []  # whether a step of the last PyTorch run made NaN or inf


def _note_flat_spread(x: Any, dims: tuple[int, ...]) -> None:
    """Values (almost) equal along the reduced dims, not all zero: the gradient of var/std
    divides by their spread, whose digits are then mostly rounding, which each side does its
    own way (PyTorch's formula also drops a term that is 0 only in exact arithmetic)."""
    n = math.prod(x.shape[i] for i in dims)
    if n > 1:
        spread = (x - x.mean(dims, keepdim=True)).abs().amax(dims)
        size = x.abs().amax(dims)
        # float64 keeps 1e-8 of a spread of 1e-6 (relative); float32 2e-4 of 1e-2
        flat = 1e-6 if x.dtype == torch.float64 else 1e-2
        if bool(((spread < flat * size) & (size > 0)).any()):
            ILL_CONDITIONED.append("var/std of nearly equal values")


def run(prog: Program, lib: str, dtype: str = "float64", order: int = 1) -> tuple[Any, list]:
    """Run ``prog`` on 'cr' or 'torch' and backpropagate a weighted sum of its output (for
    ``order`` 2, a weighted sum of that gradient). Returns the output and the leaves."""
    T = lib == "torch"
    dt = getattr(torch if T else cr, dtype)

    def leaf(arr: np.ndarray, grad: bool) -> Any:
        return (torch if T else cr).tensor(arr, dtype=dt, requires_grad=grad)

    leaves = [leaf(a, g) for a, g in zip(prog.leaves, prog.requires_grad, strict=True)]
    values: list[Any] = []
    for op, operands, params in prog.steps:
        args = [leaves[i] if kind == "leaf" else values[i] for kind, i in operands]
        values.append(apply(T, op, args, params))
    if T and not all(bool(torch.isfinite(v).all()) for v in values):
        NON_FINITE.append("a step made NaN or inf")
    out = values[-1] if values else leaves[0]
    loss = (out * leaf(prog.weights, False)).sum()
    if order == 1:
        loss.backward()
        return out, leaves
    wanted = [t for t in leaves if t.requires_grad]
    grads = (torch.autograd if T else cr).grad(loss, wanted, create_graph=True, allow_unused=True)
    rng = np.random.default_rng(len(prog.steps))
    second = [
        (g * leaf(rng.standard_normal(g.shape), False)).sum()
        for g in grads
        if g is not None and g.requires_grad
    ]
    if second:
        sum(second).backward()
    return out, leaves


def apply(T: bool, op: str, args: list[Any], p: dict) -> Any:
    """One step on torch (T) or chainrule: the same code wherever the APIs agree."""
    lib = torch if T else cr
    x = args[0]
    if op == "exp":
        return x.clamp(-3.0, 3.0).exp()
    if op in ("tanh", "sigmoid", "relu", "abs", "sin", "cos", "erf", "square"):
        return getattr(x, op)()
    if op in ("log", "sqrt"):
        return getattr(x.abs() + 0.5, op)()
    if op == "neg":
        return -x
    if op == "scale":
        return x * p["c"]
    if op == "pow":
        return x ** p["k"] if p["k"] in (2, 3) else (x.abs() + 0.5) ** p["k"]
    if op == "rsub":
        return p["c"] - x
    if op == "radd":
        return p["c"] + x
    if op == "rdiv":
        return p["c"] / (x.abs() + 1.0)
    if op == "rpow":
        return p["c"] ** x.clamp(-3.0, 3.0)
    if op == "clamp":
        return x.clamp(min=p["lo"], max=p["hi"])
    if op == "gelu":
        return (TF if T else F).gelu(x, approximate=p["approximate"])
    if op in ("add", "sub", "mul", "div", "maximum", "minimum", "tensor_pow", "where"):
        a, b = args
        if op == "div":
            return a / (b.abs() + 1.0 if p["safe"] else b)
        if op == "tensor_pow":
            return (a.abs() + 0.5) ** b
        if op == "where":
            cond = torch.from_numpy(p["cond"]) if T else cr.tensor(p["cond"])
            if p["number"] is not None:
                a, b = (p["number"], b) if p["number_at"] == 0 else (a, p["number"])
            return lib.where(cond, a, b)
        if op in ("maximum", "minimum"):
            return getattr(lib, op)(a, b)
        if op == "add":
            return a + b
        return a - b if op == "sub" else a * b
    if op == "matmul":
        return args[0] @ args[1]
    if op in ("cat", "stack"):
        return getattr(lib, op)(args, dim=p["dim"])
    if op == "einsum":
        return lib.einsum(p["equation"], *args)
    if op in ("sum", "mean", "amax", "amin", "logsumexp", "var", "std", "norm"):
        dim = norm_dims(p["dim"], x.ndim) if T else p["dim"]
        if T and op in ("var", "std"):
            _note_flat_spread(x.detach(), dim)
        kw = {"correction": p["correction"]} if op in ("var", "std") else {}
        if op == "norm":
            if T:
                return torch.linalg.vector_norm(x, 2, dim=dim, keepdim=p["keepdim"])
            return x.norm(2, dim, keepdim=p["keepdim"])
        return getattr(x, op)(dim=dim, keepdim=p["keepdim"], **kw)
    if op in ("softmax", "log_softmax"):
        return getattr(x, op)(p["dim"])
    if op == "reshape":
        return x.reshape(p["shape"])
    if op in ("permute", "transpose", "flatten"):
        return getattr(x, op)(*p["dims"])
    if op == "mT":
        return x.mT
    if op == "unsqueeze":
        return x.unsqueeze(p["dim"])
    if op == "squeeze":
        return x.squeeze() if p["dim"] is None else x.squeeze(p["dim"])
    if op == "expand":
        # spread where it can be (a 0-d tensor's empty size is given whole, as PyTorch asks)
        return x.expand(list(p["sizes"])) if T or not p["sizes"] else x.expand(*p["sizes"])
    if op == "broadcast_to":
        return x.broadcast_to(p["shape"])
    if op in ("split", "chunk"):
        return getattr(x, op)(p["n"], p["dim"])[p["piece"]]
    if op == "pad":
        return (TF if T else cr).pad(x, p["pad"], value=p["value"])
    if op == "gather":
        index = torch.from_numpy(p["index"]) if T else cr.tensor(p["index"])
        return x.gather(p["dim"], index)
    if op == "index":
        return x[_index_for(T, p["index"], p["as"])]
    raise AssertionError(op)


def _index_for(T: bool, index: tuple, form: str) -> Any:
    def convert(i: Any) -> Any:
        if not isinstance(i, np.ndarray):
            return i
        if T:
            return torch.from_numpy(i)
        if form == "list" and i.size:  # (an empty list would not say if it was a mask)
            return i.tolist()
        return cr.tensor(i) if form == "tensor" else i

    out = tuple(convert(i) for i in index)
    return out[0] if len(out) == 1 and form == "list" else out


# -- checking --------------------------------------------------------------------------------


def tnp(t: Any) -> np.ndarray:
    if t._is_zerotensor():  # PyTorch's stand-in for a gradient known to be all zeros
        return np.zeros(tuple(t.shape))
    return t.detach().numpy()


def close(ours: Any, theirs: Any, what: str, rtol: float, exact: Any = None) -> None:
    """Equal to rtol relative to each value, or to rtol/100 of the largest value (for sums
    that cancel to about zero). Given ``exact`` (PyTorch in float64 beside PyTorch in
    float32), ours is compared with it, allowing also 10x PyTorch's own largest error."""
    assert ours.dtype == {torch.float64: cr.float64, torch.float32: cr.float32}[theirs.dtype], (
        f"{what}: dtype {ours.dtype}, PyTorch {theirs.dtype}"
    )
    a, b = ours.numpy(), tnp(theirs)
    assert a.shape == b.shape, f"{what}: shape {a.shape}, PyTorch {b.shape}"
    slack = 0.0
    if exact is not None:
        b, b_low = tnp(exact), b
        slack = 10 * float(np.abs(b_low - b).max(initial=0.0))
    scale = max(1.0, float(np.abs(b).max(initial=0.0)))
    atol = rtol * 1e-2 * scale + slack
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=what)


def _grad(t: Any, lib: Any) -> Any:
    """A leaf's gradient, zeros where it got none (a second-order gradient may be None on
    one side where it is 0 on the other)."""
    return t.grad if t.grad is not None else lib.zeros(tuple(t.shape), dtype=t.dtype)


def check(
    prog: Program, dtype: str = "float64", order: int = 1, rtol: float = 1e-8, anomaly: bool = False
) -> None:
    """Run ``prog`` on both and compare; with ``anomaly``, chainrule runs in detect_anomaly
    mode, which must not object to a program that makes no NaN or inf. In float32, PyTorch
    also runs in float64, to tell rounding (which sums that cancel make large) from errors."""
    ILL_CONDITIONED.clear()
    NON_FINITE.clear()
    with warnings.catch_warnings():  # var of one element: PyTorch warns, and so gives NaN
        warnings.filterwarnings("ignore", "std|var", UserWarning)
        t_out, t_leaves = run(prog, "torch", dtype, order)
        high = dtype != "float64"
        x_out, x_leaves = run(prog, "torch", "float64", order) if high else (None, None)
    assume(not ILL_CONDITIONED and not (anomaly and NON_FINITE))
    refs = [tnp(t_out)] + [tnp(t.grad) for t in t_leaves if t.grad is not None]
    assume(all(np.isfinite(r).all() and np.abs(r).max(initial=0.0) < 1e30 for r in refs))
    # NumPy warns of the log 0 = -inf and inf - inf = NaN that PyTorch makes silently
    with cr.detect_anomaly() if anomaly else contextlib.nullcontext(), np.errstate(all="ignore"):
        out, leaves = run(prog, "cr", dtype, order)
    close(out, t_out, "value", rtol, x_out)
    for i, (ours, theirs) in enumerate(zip(leaves, t_leaves, strict=True)):
        if theirs.grad is None and ours.grad is None:
            continue
        if order == 1:  # a gradient exactly where PyTorch has one
            assert ours.grad is not None and theirs.grad is not None, f"leaf {i}: gradient"
        exact = None if x_leaves is None else _grad(x_leaves[i], torch)
        close(_grad(ours, cr), _grad(theirs, torch), f"gradient of leaf {i}", rtol, exact)


@fuzz_settings(1500)
@given(programs())
def test_random_programs_match_pytorch(prog: Program) -> None:
    check(prog)


@fuzz_settings(300)
@given(programs())
def test_random_programs_without_the_fast_path_match_pytorch(prog: Program) -> None:
    """The plain rules alone (every speed trick off) give PyTorch's gradients too."""
    with cr.autograd.fastpath.disabled():
        check(prog)


@fuzz_settings(500)
@given(programs())
def test_random_programs_second_order_gradients_match_pytorch(prog: Program) -> None:
    check(prog, order=2)


@fuzz_settings(300)
@given(programs())
def test_random_programs_in_anomaly_mode_match_pytorch(prog: Program) -> None:
    check(prog, anomaly=True)


@fuzz_settings(500)
@given(programs())
def test_random_programs_in_float32_match_pytorch(prog: Program) -> None:
    check(prog, dtype="float32", rtol=2e-4)


# -- regressions: what the fuzzer (and its edge cases) found ---------------------------------


@pytest.mark.parametrize(
    "fn",
    [
        lambda t: t.std(correction=0),
        lambda t: t.std(dim=0),
        lambda t: t.norm(),
        lambda t: t.norm(dim=0),
        lambda t: t.norm(p=1),
        lambda t: t.norm(p=3, dim=0),
    ],
    ids=["std", "std-dim", "norm", "norm-dim", "norm-p1", "norm-p3"],
)
@pytest.mark.parametrize("values", [[0.0, 0.0], [1.5, 1.5], [1.0, -2.0]])
def test_regression_std_and_norm_gradient_where_the_result_is_zero(fn, values) -> None:
    """Regression: std and norm were sqrt (or the p-th root) of a sum, whose gradient at a
    zero sum is inf * 0 = NaN; PyTorch's (and now chainrule's) is 0 there."""
    x = cr.tensor(values, dtype=cr.float64, requires_grad=True)
    tx = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    y, ty = fn(x), fn(tx)
    y.backward()
    ty.backward()
    np.testing.assert_allclose(y.numpy(), ty.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", ["logsumexp", "softmax", "log_softmax"])
def test_regression_softmax_family_over_an_empty_dim(op, dtype) -> None:
    """Regression: the max taken to shift exp failed on an empty dim (NumPy has no max of
    nothing); PyTorch gives -inf for logsumexp and an empty result for the softmaxes, in the
    input's dtype."""
    x = cr.ones(0, 3, dtype=getattr(cr, dtype), requires_grad=True)
    tx = torch.ones(0, 3, dtype=getattr(torch, dtype), requires_grad=True)
    with np.errstate(divide="ignore"):
        y, ty = getattr(x, op)(0), getattr(tx, op)(0)
    assert y.shape == tuple(ty.shape) and y.dtype == x.dtype
    np.testing.assert_array_equal(y.numpy(), ty.detach().numpy())
    y.backward(cr.ones(*y.shape, dtype=x.dtype))
    assert x.grad.shape == (0, 3)


def test_regression_empty_list_index_picks_nothing() -> None:
    """Regression: [] became a float array, refused as an index; NumPy and PyTorch take it as
    an empty integer index."""
    x = cr.ones(2, 3, requires_grad=True)
    y = x[:, []]
    assert y.shape == tuple(torch.ones(2, 3)[:, []].shape) == (2, 0)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros((2, 3)))


@pytest.mark.parametrize(
    ("shape", "dims"),
    [((0, 1), (1, 1)), ((1, 0), (0, 0)), ((2, 0, 3), (0, -1)), ((2, 0, 3), (1, 2))],
)
def test_regression_flatten_of_an_empty_tensor(shape, dims) -> None:
    """Regression: flatten reshaped to (..., -1, ...), which a tensor of 0 elements cannot
    resolve ('shape (0, -1) is invalid')."""
    x = cr.zeros(*shape, requires_grad=True)
    y = x.flatten(*dims)
    assert y.shape == tuple(torch.zeros(shape).flatten(*dims).shape)
    y.sum().backward()
    assert x.grad.shape == shape


@pytest.mark.parametrize(
    ("a", "b"), [((1, 1, 0), (0, 2)), ((2, 3, 0), (0, 4)), ((0, 2, 3), (3, 2))]
)
def test_regression_batched_matmul_gradient_with_no_elements(a, b) -> None:
    """Regression: the gradient of a matrix against a batch folded the batch with
    reshape(-1, k), which fails on a batch with no elements (k = 0 or an empty batch)."""
    rng = np.random.default_rng(0)
    xa, xb = rng.standard_normal(a), rng.standard_normal(b)
    x, y = cr.tensor(xa, requires_grad=True), cr.tensor(xb, requires_grad=True)
    tx, ty = torch.tensor(xa, requires_grad=True), torch.tensor(xb, requires_grad=True)
    w = rng.standard_normal(np.matmul(xa, xb).shape)
    ((x @ y) * cr.tensor(w)).sum().backward()
    ((tx @ ty) * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(y.grad.numpy(), ty.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize(("n_in", "n_out", "rows"), [(0, 3, 2), (3, 0, 2), (3, 2, 0)])
def test_regression_linear_gradient_with_zero_features(n_in, n_out, rows) -> None:
    """Regression: Linear's backward reshaped with -1, which fails once in_features or
    out_features is 0 (the layer accepts both)."""
    layer = cr.nn.Linear(n_in, n_out)
    x = cr.ones(rows, n_in, requires_grad=True)
    layer(x).sum().backward()
    assert x.grad.shape == (rows, n_in) and layer.weight.grad.shape == (n_out, n_in)
    np.testing.assert_array_equal(layer.bias.grad.numpy(), np.full(n_out, float(rows)))
    np.testing.assert_array_equal(layer.weight.grad.numpy(), np.full((n_out, n_in), rows))


def test_regression_where_selects_the_gradient_instead_of_multiplying_by_the_mask() -> None:
    """Regression: where's backward multiplied the gradient by its mask, so a NaN or inf
    gradient leaked into the branch not taken (NaN * 0 = NaN). It broke the double-where
    idiom std uses at 0 (found as std -> x / std -> clamp: PyTorch 0, chainrule NaN)."""
    with np.errstate(all="ignore"):
        x = cr.tensor([0.0, 4.0], dtype=cr.float64, requires_grad=True)
        safe = cr.where(x > 0, x, 1.0)
        y = cr.where(x > 0, safe.sqrt(), 0.0)  # sqrt, with gradient 0 at 0
        (1.0 / y).clamp(max=3.0).sum().backward()  # 1/0 = inf, cut by the clamp
        np.testing.assert_array_equal(x.grad.numpy(), [0.0, -1.0 / 16])
        for lib in (cr, torch):
            a = lib.tensor([0.5, 2.0], dtype=lib.float64, requires_grad=True)
            g = lib.tensor([np.nan, np.inf], dtype=lib.float64)
            lib.where(lib.tensor([False, True]), a, 0.0).backward(g)
            b = lib.tensor([0.5, 2.0], dtype=lib.float64, requires_grad=True)
            b.clamp(max=1.0).backward(lib.tensor([np.inf, np.nan], dtype=lib.float64))
            assert a.grad.tolist()[0] == 0.0 and np.isinf(a.grad.tolist()[1])
            assert b.grad.tolist()[1] == 0.0 and np.isinf(b.grad.tolist()[0])
        x = cr.tensor([-1.0, 2.0], dtype=cr.float64, requires_grad=True)
        y = cr.where(x > 0, x.log(), 0.0).sum()  # log(-1) is NaN, in the branch not taken
        (g,) = cr.grad(y, x, create_graph=True)
        np.testing.assert_array_equal(g.numpy(), [0.0, 0.5])
        g.sum().backward()  # and its second derivative
        np.testing.assert_array_equal(x.grad.numpy(), [0.0, -0.25])


def test_regression_relu_backward_keeps_a_nan_gradient_out_of_the_zeros() -> None:
    """Regression: relu's backward multiplied the gradient by its mask, so a NaN or inf
    incoming gradient leaked where the input was <= 0 (PyTorch gives 0 there). Checked on
    the first-order path (arrays) and under create_graph (Tensor ops)."""
    x0 = np.array([-1.0, 0.0, 2.0, 3.0])
    g0 = np.array([np.nan, np.inf, np.nan, 5.0])
    got = {}
    for lib in (cr, torch):
        for create_graph in (False, True):
            x = lib.tensor(x0, dtype=lib.float64, requires_grad=True)
            with np.errstate(invalid="ignore"):  # inf * 0, before the selection
                (gx,) = lib.autograd.grad(lib.relu(x), x, lib.tensor(g0), create_graph=create_graph)
            got[lib.__name__, create_graph] = gx.tolist()
    assert len({str(v) for v in got.values()}) == 1, got
    assert got["chainrule", False][:2] == [0.0, 0.0] and got["chainrule", False][3] == 5.0


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("from_op", [False, True], ids=["gradient-given", "gradient-from-an-op"])
def test_relu_mask_zeroes_nan_and_inf_exactly_in_both_float_dtypes(dtype, from_op) -> None:
    """relu's backward masks the gradient's bits read as integers: where the output is 0 the
    gradient is +0.0 even for NaN, inf or a negative value upstream, elsewhere it passes
    unchanged, with no floating-point warning; as torch in each float dtype, into a new array
    (the caller holds the gradient) or into the gradient itself (made by the op above)."""
    x0 = np.array([-1.0, 0.0, 2.0, 3.0, -2.0, 4.0, np.nan, -0.5])
    g0 = np.array([np.nan, np.inf, -np.inf, np.nan, -3.0, -0.0, 7.0, -np.inf])
    got = []
    for lib in (cr, torch):
        x = lib.tensor(x0, dtype=getattr(lib, dtype), requires_grad=True)
        g = lib.tensor(g0, dtype=getattr(lib, dtype))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            y = x.relu() * 1.0 if from_op else x.relu()  # mul's backward makes g * 1 afresh
            (gx,) = lib.autograd.grad(y, x, g)
        got.append(np.asarray(gx.detach().numpy(), dtype=np.float64))
    ours, theirs = got
    np.testing.assert_array_equal(ours, theirs)  # NaN where NaN; -inf, 7.0 and -0.0 passed
    assert ours[[0, 1, 4, 7]].tolist() == [0.0] * 4 and not np.signbit(ours[[0, 1, 4, 7]]).any()
    assert np.signbit(ours[5]) and np.isneginf(ours[2]) and ours[6] == 7.0


@pytest.mark.parametrize("from_op", [False, True], ids=["gradient-given", "gradient-from-an-op"])
def test_relu_mask_in_long_double_selects_instead(from_op) -> None:
    """A long double (float128 here) has no integer of its width to read its bits as, so
    relu's mask selects instead: the same zeros where the output is 0, NaN and inf kept
    out of them, values passed elsewhere (torch has no such dtype to compare with)."""
    x = cr.tensor(np.array([-1.0, 0.0, 2.0, 3.0], dtype=np.longdouble), requires_grad=True)
    g = cr.tensor(np.array([np.nan, np.inf, np.nan, 5.0], dtype=np.longdouble))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (gx,) = cr.autograd.grad(x.relu() * 1.0 if from_op else x.relu(), x, g)
    assert gx.dtype == np.longdouble
    np.testing.assert_array_equal(gx.data, np.array([0.0, 0.0, np.nan, 5.0]))


def test_regression_relu_passes_the_gradient_where_its_input_is_nan() -> None:
    """Regression: relu's mask was a > 0, false at NaN, so the gradient stopped there;
    PyTorch's is "not a <= 0" and lets it pass (relu(NaN) is NaN). Both paths, as above."""
    x0 = np.array([np.nan, -1.0, 0.0, 2.0])
    got = {}
    for lib in (cr, torch):
        for create_graph in (False, True):
            x = lib.tensor(x0, dtype=lib.float64, requires_grad=True)
            (gx,) = lib.autograd.grad(
                lib.relu(x), x, lib.tensor(np.full(4, 3.0)), create_graph=create_graph
            )
            got[lib.__name__, create_graph] = gx.tolist()
    assert all(v == [3.0, 0.0, 0.0, 3.0] for v in got.values()), got
