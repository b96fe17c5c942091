"""``torch.func``: autograd as functions of functions. ``grad(f)`` is the function that
returns f's gradient, ``vjp`` and ``jacrev`` pull cotangents back, ``jvp``, ``jacfwd`` and
``linearize`` push tangents forward (each as two reverse passes, autograd.functional's
double-backward trick: the second differentiates the first's result with respect to its
cotangent, which it is linear in), ``hessian`` composes them, and ``functional_call`` runs a
module with other parameters. Every transform records onto the ordinary graph, so they nest
in any order. ``vmap`` runs func once on batched tensors (batching.py: each op by its
batching rule); where func does what cannot be batched, the call goes on as the first
example's and func is called for each of the others; grad inside vmap gives per-example
gradients."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from . import array, batching, random_batching
from .autograd import enable_grad, is_grad_enabled
from .autograd import grad as autograd_grad
from .autograd.functional import pushforward
from .batching import real
from .factories import ones_like, zeros_like
from .functions import cat, stack
from .nn.module import Module
from .random import get_rng_state, set_rng_state
from .tensor import Tensor

__all__ = [
    "functional_call",
    "grad",
    "grad_and_value",
    "hessian",
    "jacfwd",
    "jacrev",
    "jvp",
    "linearize",
    "stack_module_state",
    "vjp",
    "vmap",
]


# -- trees of tensors: tuples, lists, dicts and named tuples nesting tensors and other leaves --


def _flatten(tree: Any) -> tuple[list[Any], Any]:
    """The leaves of a tree in order, and what rebuilds it from them."""
    leaves: list[Any] = []
    specs: list[Any] = []
    if isinstance(tree, (tuple, list)):
        for child in tree:
            got, spec = _flatten(child)
            leaves += got
            specs.append((len(got), spec))
        return leaves, (type(tree), specs)
    if isinstance(tree, dict):
        for key, child in tree.items():
            got, spec = _flatten(child)
            leaves += got
            specs.append((key, len(got), spec))
        return leaves, (dict, specs)
    return [tree], None


def _unflatten(spec: Any, leaves: Sequence[Any]) -> Any:
    if spec is None:
        return leaves[0]
    kind, specs = spec
    if kind is dict:
        out, at = {}, 0
        for key, n, child in specs:
            out[key] = _unflatten(child, leaves[at : at + n])
            at += n
        return out
    items, at = [], 0
    for n, child in specs:
        items.append(_unflatten(child, leaves[at : at + n]))
        at += n
    return kind(*items) if hasattr(kind, "_fields") else kind(items)


def _map(fn: Callable[[Any], Any], tree: Any) -> Any:
    leaves, spec = _flatten(tree)
    return _unflatten(spec, [fn(leaf) for leaf in leaves])


# -- the inputs a transform differentiates -----------------------------------------------------


def _argnums(op: str, argnums: int | tuple[int, ...], n: int) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    if not nums or not all(isinstance(i, int) for i in nums):
        raise ValueError(
            f"{op}: argnums must be an int or a non-empty tuple of ints; got {argnums!r}"
        )
    for i in nums:
        if not -n <= i < n:
            raise RuntimeError(f"{op}: got argnum={i}, but only {n} positional inputs")
    return tuple(i % n for i in nums)


def _watched(op: str, t: Any) -> Tensor:
    """A tensor this transform differentiates with respect to: joined to the graph that made
    ``t`` when an enclosing transform (or the user) differentiates ``t`` too, else a fresh
    leaf."""
    if not isinstance(t, Tensor):
        raise TypeError(
            f"{op}: can only differentiate with respect to Tensors; got {type(t).__name__}"
        )
    if not array.is_floating(t.dtype):
        raise RuntimeError(
            f"{op}: only Tensors of floating point dtype can be differentiated; got dtype {t.dtype}"
        )
    if t.requires_grad and is_grad_enabled():
        return t.view_as(t)  # a new node on the same graph: an outer transform sees through it
    return t.detach().requires_grad_()


def _per_example(op: str, t: Any) -> Tensor:
    """Inside vmap: a leaf holding one copy of ``t`` per example (``t`` batched at every
    open level), so that the gradient of the examples' sum is each example's own."""
    _watched(op, t)  # the same checks
    if not isinstance(t, batching.BatchedTensor) and len(batching.levels) == 1:
        n = batching.levels[0][1]  # one level: the copies are a view, not n copies
        return t.detach().unsqueeze(0).expand(n, *t.shape).requires_grad_()
    return real(batching.batched_everywhere(t)).detach().requires_grad_()


def _looped_in_vmap(op: str, tree: Any) -> Any:
    """Transforms other than grad are not batched: inside vmap, the call goes on as the first
    example's (vmap calls func for the others); the tree of arguments as that example's."""
    if batching.active():
        batching.degrade()
    return _map(batching.first, tree) if batching.degraded() else tree


def _nested(tensors: Sequence[Any]) -> bool:
    """Whether an outer transform differentiates these inputs, so the result must be
    differentiable too (its gradient is recorded with create_graph)."""
    return is_grad_enabled() and any(isinstance(t, Tensor) and t.requires_grad for t in tensors)


def _gradients(
    outputs: list[Tensor], inputs: list[Tensor], cotangents: list[Any], nested: bool
) -> list[Tensor]:
    """d(outputs)/d(inputs) against the cotangents, zeros for inputs the outputs do not reach."""
    cotangents = [
        ones_like(o) if c is None and o.dim() else c
        for o, c in zip(outputs, cotangents, strict=True)
    ]
    pairs = [(o, c) for o, c in zip(outputs, cotangents, strict=True) if o.requires_grad]
    if not pairs:
        return [zeros_like(x) for x in inputs]
    got = autograd_grad(
        [o for o, _ in pairs],
        inputs,
        [c for _, c in pairs],
        retain_graph=True,
        create_graph=nested,
        allow_unused=True,
    )
    return [zeros_like(x) if g is None else g for g, x in zip(got, inputs, strict=True)]


def _plain(t: Any, nested: bool) -> Any:
    """A result as the caller sees it: cut from this transform's graph unless an outer
    transform differentiates it."""
    return t if nested or not isinstance(t, Tensor) else t.detach()


def _split_aux(op: str, out: Any, has_aux: bool) -> tuple[Any, Any]:
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(
            f"{op}: with has_aux=True, the function must return a (output, aux) tuple; got "
            f"{type(out).__name__}"
        )
    return out


# -- reverse mode --------------------------------------------------------------------------------


def grad_and_value(
    func: Callable[..., Any], argnums: int | tuple[int, ...] = 0, has_aux: bool = False
) -> Callable[..., Any]:
    """A function returning ``(gradient, value)`` of ``func``, whose output must be a 0-d
    tensor: the gradient with respect to the positional arguments ``argnums`` names (a tree
    of tensors each; a tuple of them for a tuple of argnums), zeros where the output does not
    depend on one. With ``has_aux``, func returns ``(output, aux)`` and the value is too."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        nums = _argnums("grad_and_value", argnums, len(args))
        inside = batching.active()  # in vmap: per-example gradients, of the real values
        nested = not inside and _nested([leaf for i in nums for leaf in _flatten(args[i])[0]])
        with enable_grad():
            given = list(args)
            reals = {}
            for i in nums:
                if inside:
                    reals[i] = _map(lambda t: _per_example("grad_and_value", t), given[i])
                    given[i] = _map(batching.wrap_all, reals[i])
                else:
                    given[i] = _map(lambda t: _watched("grad_and_value", t), given[i])
            batching.differentiating[0] += inside
            try:
                out, aux = _split_aux("grad_and_value", func(*given, **kwargs), has_aux)
            finally:
                batching.differentiating[0] -= inside
            if not isinstance(out, Tensor) or out.dim() != 0:
                shape = (
                    f"a tensor of shape {tuple(out.shape)}"
                    if isinstance(out, Tensor)
                    else type(out).__name__
                )
                raise RuntimeError(
                    f"grad_and_value(f)(*args): expected f(*args) to return a 0-d Tensor; got "
                    f"{shape}; maybe you want vjp or jacrev"
                )
            if inside:  # the sum over examples, each example's own copy of the inputs
                went_on = batching.degraded()  # func went on as the first example's call
                if not went_on:
                    out = real(batching.batched_everywhere(out))
                leaves = [_flatten(reals[i]) for i in nums]
                flat = [leaf for got, _ in leaves for leaf in got]
                grads = [batching.wrap_all(g) for g in _gradients([out], flat, [None], False)]
                if went_on:
                    grads = [batching.first(g) for g in grads]
                else:
                    out = batching.wrap_all(out)
            else:
                leaves = [_flatten(given[i]) for i in nums]
                flat = [leaf for got, _ in leaves for leaf in got]
                grads = _gradients([out], flat, [None], nested)
        trees, at = [], 0
        for got, spec in leaves:
            trees.append(_unflatten(spec, grads[at : at + len(got)]))
            at += len(got)
        g = trees[0] if isinstance(argnums, int) else tuple(trees)
        value = _plain(out, nested)
        if has_aux:
            return g, (value, _map(lambda t: _plain(t, nested), aux))
        return g, value

    return wrapper


def grad(
    func: Callable[..., Any], argnums: int | tuple[int, ...] = 0, has_aux: bool = False
) -> Callable[..., Any]:
    """A function returning the gradient of ``func`` (see grad_and_value), and with
    ``has_aux`` the pair ``(gradient, aux)``."""
    both = grad_and_value(func, argnums, has_aux)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        g, value = both(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return wrapper


def vjp(func: Callable[..., Any], *primals: Any, has_aux: bool = False) -> Any:
    """``(output, vjp_fn)``: func's output at ``primals``, and the function that takes
    cotangents shaped as that output and returns a tuple with one tree of gradients per
    primal (``(output, vjp_fn, aux)`` with has_aux)."""
    primals = _looped_in_vmap("vjp", primals)
    nested = _nested([leaf for p in primals for leaf in _flatten(p)[0]])
    with enable_grad():
        watched = [_map(lambda t: _watched("vjp", t), p) for p in primals]
        out, aux = _split_aux("vjp", func(*watched), has_aux)
    outs, out_spec = _flatten(out)
    if not all(isinstance(o, Tensor) for o in outs):
        raise RuntimeError("vjp: the function must return Tensors (a tree of them)")
    specs = [_flatten(w) for w in watched]
    flat = [leaf for got, _ in specs for leaf in got]

    def vjp_fn(*cotangents: Any) -> tuple[Any, ...]:
        given = _looped_in_vmap("vjp_fn", cotangents[0] if len(cotangents) == 1 else cotangents)
        cots, _ = _flatten(given)
        if len(cots) != len(outs):
            raise RuntimeError(
                f"vjp_fn: expected cotangents shaped as the output's {len(outs)} tensors; got "
                f"{len(cots)}"
            )
        for o, c in zip(outs, cots, strict=True):
            if tuple(c.shape) != tuple(o.shape):
                raise RuntimeError(
                    f"vjp_fn: a cotangent's shape differs from its output's; got shapes "
                    f"{tuple(c.shape)} and {tuple(o.shape)}"
                )
        with enable_grad():
            grads = _gradients(outs, flat, list(cots), nested or _nested(cots))
        trees, at = [], 0
        for got, spec in specs:
            trees.append(_unflatten(spec, grads[at : at + len(got)]))
            at += len(got)
        return tuple(trees)

    shown = _unflatten(out_spec, [_plain(o, nested) for o in outs])
    if has_aux:
        return shown, vjp_fn, _map(lambda t: _plain(t, nested), aux)
    return shown, vjp_fn


def _jacobian_of(outs: list[Tensor], flat: list[Tensor], nested: bool) -> list[list[Tensor]]:
    """jac[i][j]: d outs[i] / d flat[j], of shape outs[i].shape + flat[j].shape, a reverse pass
    per output element."""
    jac = []
    for o in outs:
        rows: list[list[Tensor]] = [[] for _ in flat]
        for k in range(o.numel()):
            seed = zeros_like(o).reshape(-1)
            seed[k] = 1.0
            got = _gradients([o], flat, [seed.reshape(o.shape)], nested)
            for j, g in enumerate(got):
                rows[j].append(g)
        pairs = zip(rows, flat, strict=True)
        blocks = [(stack(r) if r else zeros_like(x).reshape(0, *x.shape), x) for r, x in pairs]
        jac.append([b.reshape((*o.shape, *x.shape)) for b, x in blocks])  # whole: 0-d too
    return jac


def _assembled(
    op: str, func: Callable[..., Any], argnums: Any, args: tuple, has_aux: bool, jac_fn: Callable
) -> Any:
    """A Jacobian's trees: by the output's tree, then (for a tuple of argnums) by input."""
    args = _looped_in_vmap(op, args)
    nums = _argnums(op, argnums, len(args))
    nested = _nested([leaf for i in nums for leaf in _flatten(args[i])[0]])
    with enable_grad():
        given = list(args)
        for i in nums:
            given[i] = _map(lambda t: _watched(op, t), given[i])
        out, aux = _split_aux(op, func(*given), has_aux)
        outs, out_spec = _flatten(out)
        specs = [_flatten(given[i]) for i in nums]
        flat = [leaf for got, _ in specs for leaf in got]
        jac = jac_fn(outs, flat, nested)
    per_output = []
    for row in jac:
        trees, at = [], 0
        for got, spec in specs:
            trees.append(_unflatten(spec, [_plain(t, nested) for t in row[at : at + len(got)]]))
            at += len(got)
        per_output.append(trees[0] if isinstance(argnums, int) else tuple(trees))
    result = _unflatten(out_spec, per_output)
    return (result, _map(lambda t: _plain(t, nested), aux)) if has_aux else result


def jacrev(
    func: Callable[..., Any],
    argnums: int | tuple[int, ...] = 0,
    *,
    has_aux: bool = False,
    chunk_size: int | None = None,
    _preallocate_and_copy: bool = False,
) -> Callable[..., Any]:
    """A function returning func's Jacobian with respect to the arguments ``argnums`` names,
    by reverse passes (one per output element): shaped output's shape + input's shape, in the
    output's tree and, for a tuple of argnums, a tuple over inputs. ``chunk_size`` (how many
    rows a pass computes in PyTorch) is checked and changes nothing here."""
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"jacrev: chunk_size must be a positive int or None; got {chunk_size!r}")

    def wrapper(*args: Any) -> Any:
        return _assembled("jacrev", func, argnums, args, has_aux, _jacobian_of)

    return wrapper


# -- forward mode, as a reverse pass differentiated once more -------------------------------


def _pushed(
    outs: list[Tensor], flat: list[Tensor], tangents: list[Tensor], nested: bool
) -> list[Tensor]:
    """J·v for each output, by autograd.functional's double-backward trick."""
    with enable_grad():
        return list(pushforward(outs, flat, tangents, nested))


def jvp(
    func: Callable[..., Any],
    primals: Any,
    tangents: Any,
    *,
    strict: bool = False,
    has_aux: bool = False,
) -> Any:
    """``(output, jvp_out)``: func's output at ``primals`` (a tuple of trees) and its
    directional derivative along ``tangents`` (trees of the same shapes); with has_aux
    ``(output, jvp_out, aux)``."""
    primals, tangents = _looped_in_vmap("jvp", (primals, tangents))
    if not isinstance(primals, tuple) or not isinstance(tangents, tuple):
        raise RuntimeError("jvp: expected primals and tangents to be tuples (of trees of Tensors)")
    p_leaves, _ = _flatten(primals)
    t_leaves, _ = _flatten(tangents)
    if len(p_leaves) != len(t_leaves) or any(
        tuple(p.shape) != tuple(t.shape) for p, t in zip(p_leaves, t_leaves, strict=True)
    ):
        raise RuntimeError("jvp: expected tangents of the primals' structure and shapes")
    nested = _nested(p_leaves) or _nested(t_leaves)
    with enable_grad():
        watched = [_map(lambda t: _watched("jvp", t), p) for p in primals]
        out, aux = _split_aux("jvp", func(*watched), has_aux)
        outs, spec = _flatten(out)
        flat = _flatten(tuple(watched))[0]
        pushed = _pushed(outs, flat, t_leaves, nested)
    result = (_unflatten(spec, [_plain(o, nested) for o in outs]), _unflatten(spec, pushed))
    return (*result, _map(lambda t: _plain(t, nested), aux)) if has_aux else result


def linearize(func: Callable[..., Any], *primals: Any) -> tuple[Any, Callable[..., Any]]:
    """``(output, jvp_fn)``: func's output at ``primals``, and the function of tangents that
    gives its directional derivative there (the forward pass is run once)."""
    primals = _looped_in_vmap("linearize", primals)
    with enable_grad():
        watched = [_map(lambda t: _watched("linearize", t), p) for p in primals]
        outs, spec = _flatten(func(*watched))
    flat = _flatten(tuple(watched))[0]

    def jvp_fn(*tangents: Any) -> Any:
        t_leaves = _flatten(_looped_in_vmap("linearize's jvp_fn", tangents))[0]
        if [tuple(t.shape) for t in t_leaves] != [tuple(p.shape) for p in flat]:
            raise RuntimeError("linearize's jvp_fn: expected tangents of the primals' shapes")
        return _unflatten(spec, _pushed(outs, flat, t_leaves, False))

    return _unflatten(spec, [o.detach() for o in outs]), jvp_fn


def _forward_jacobian(outs: list[Tensor], flat: list[Tensor], nested: bool) -> list[list[Tensor]]:
    """jac[i][j] by forward passes: one per input element, a basis tangent each."""
    cols: list[list[list[Tensor]]] = [[[] for _ in flat] for _ in outs]
    for j, x in enumerate(flat):
        for k in range(x.numel()):
            tangents = [zeros_like(y) for y in flat]
            basis = zeros_like(x).reshape(-1)
            basis[k] = 1.0
            tangents[j] = basis.reshape(x.shape)
            for i, col in enumerate(_pushed(outs, flat, tangents, nested)):
                cols[i][j].append(col)
    return [
        [
            (stack(c, dim=-1) if c else zeros_like(o).unsqueeze(-1)[..., :0]).reshape(
                (*o.shape, *x.shape)
            )
            for c, x in zip(row, flat, strict=True)
        ]
        for row, o in zip(cols, outs, strict=True)
    ]


def jacfwd(
    func: Callable[..., Any],
    argnums: int | tuple[int, ...] = 0,
    has_aux: bool = False,
    *,
    randomness: str = "error",
) -> Callable[..., Any]:
    """func's Jacobian by forward passes (one per input element); as jacrev otherwise."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(
            f"jacfwd: randomness must be 'error', 'different' or 'same'; got {randomness!r}"
        )

    def wrapper(*args: Any) -> Any:
        return _assembled("jacfwd", func, argnums, args, has_aux, _forward_jacobian)

    return wrapper


def hessian(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0) -> Callable[..., Any]:
    """The Jacobian of the gradient: ``jacfwd(jacrev(func, argnums), argnums)``."""
    return jacfwd(jacrev(func, argnums), argnums)


# -- mapping over a batch ------------------------------------------------------------------


def _moved(op: str, t: Any, dim: int | None, size: int | None) -> Any:
    if dim is None:
        return t
    if not isinstance(t, Tensor):
        raise ValueError(
            f"{op}: in_dim {dim} is given for an input that is not a Tensor ({type(t).__name__})"
        )
    if not -t.dim() <= dim < max(t.dim(), 1) or t.dim() == 0:
        raise ValueError(
            f"{op}: in_dim {dim} is out of range for an input of shape {tuple(t.shape)}"
        )
    return t.movedim(dim, 0)


def vmap(
    func: Callable[..., Any],
    in_dims: Any = 0,
    out_dims: Any = 0,
    randomness: str = "error",
    *,
    chunk_size: int | None = None,
) -> Callable[..., Any]:
    """``func`` mapped over a dimension of its inputs (``in_dims``: an int or None for all
    positional arguments, or a tuple with one per argument, itself a tree for a tree), its
    results stacked along ``out_dims``.

    func runs once, on batched tensors (batching.py): each op by its rule, an op without one
    once per example. Where func does what cannot be batched (reads a value in Python, writes
    into a batched tensor in place, computes arrays from an example outside an op, calls vjp
    or jvp), its call goes on as the first example's and func is called once for each of the
    others: a loop, each example run once. At a batch of 64, sin of 100 numbers takes 0.25 ms
    by its rule, 0.9 ms looped as an op, 1.3 ms as the function's loop (a Python loop: 0.4).
    ``chunk_size`` runs that many examples at a time. ``randomness`` as PyTorch's
    (random_batching.py): 'error' refuses a draw, 'same' gives every example one draw of an
    example's shape, 'different' one of the batch's shape: torch.func.vmap's numbers."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(
            f"vmap: randomness must be 'error', 'different' or 'same'; got {randomness!r}"
        )
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size must be a positive int or None; got {chunk_size!r}")
    name = getattr(func, "__name__", "func")

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        op = f"vmap({name}, ...)"
        dims = in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(args)
        if len(dims) != len(args):
            raise ValueError(
                f"{op}: in_dims has {len(dims)} entries for {len(args)} positional inputs"
            )
        mapped, sizes = [], []
        for a, d in zip(args, dims, strict=True):
            leaves, spec = _flatten(a)
            ds = [d] * len(leaves) if not isinstance(d, (tuple, list, dict)) else _flatten(d)[0]
            moved = [_moved(op, t, dd, None) for t, dd in zip(leaves, ds, strict=True)]
            sizes += [m.shape[0] for m, dd in zip(moved, ds, strict=True) if dd is not None]
            mapped.append((spec, moved, ds))
        if not sizes:
            raise ValueError(f"{op}: at least one input must be mapped (in_dims all None)")
        if len(set(sizes)) != 1:
            raise ValueError(
                f"vmap: expected all tensors to have the same size in the mapped dimension; got "
                f"sizes {sizes} for the mapped dimension"
            )
        on_host = all(
            type(real(m)._array) is array.host.ndarray
            for _, moved, ds in mapped
            for m, dd in zip(moved, ds, strict=True)
            if dd is not None
        )
        if not on_host or sizes[0] == 0:
            results = _looped(op, func, mapped, range(sizes[0]), randomness, kwargs)
            return _stacked(op, name, results, out_dims)
        chunk = chunk_size or sizes[0]
        start = get_rng_state()
        spans = [(lo, min(lo + chunk, sizes[0])) for lo in range(0, sizes[0], chunk)]
        try:
            pieces = [
                _batched(op, name, func, mapped, lo, hi, out_dims, randomness, kwargs, start)
                for lo, hi in spans
            ]
        except batching.Refused:
            raise
        except Exception:  # noqa: BLE001
            # a gradient's path cut (batching.differentiating), or an op that fails on a
            # batch: func once per example, from the start (which raises again where func
            # itself fails)
            set_rng_state(start)
            results = _looped(op, func, mapped, range(sizes[0]), randomness, kwargs)
            return _stacked(op, name, results, out_dims)
        if len(pieces) == 1:
            return pieces[0]
        leaves0, spec0 = _flatten(pieces[0])
        odims = _out_dims(out_dims, len(leaves0))
        columns = zip(*[_flatten(p)[0] for p in pieces], strict=True)
        joined = [c[0] if d is None else cat(c, dim=d) for c, d in zip(columns, odims, strict=True)]
        return _unflatten(spec0, joined)

    return wrapper


def _out_dims(out_dims: Any, n: int) -> list[Any]:
    if isinstance(out_dims, (tuple, list, dict)):
        return _flatten(out_dims)[0]
    return [out_dims] * n


def _batched(
    op: str,
    name: str,
    func: Callable,
    mapped: list,
    lo: int,
    hi: int,
    out_dims: Any,
    randomness: str,
    kwargs: dict,
    start: Any,
) -> Any:
    """func run once on examples lo..hi as batched tensors; its results taken apart. Where
    func did what cannot be batched, its call went on as example lo's, and func is called for
    each of the others."""
    level = random_batching.enter(hi - lo, randomness)
    if randomness == "same":  # every chunk draws from the state at the start, as torch's
        set_rng_state(start)
    try:
        call = [
            _unflatten(
                spec,
                [
                    batching.wrap(m[lo:hi], level) if dd is not None else m
                    for m, dd in zip(moved, ds, strict=True)
                ],
            )
            for spec, moved, ds in mapped
        ]
        out = func(*call, **kwargs)
        if randomness == "error" and not get_rng_state().equal(start):  # a draw not ruled
            random_batching._refuse_random(f"a draw in {name}")
        leaves, spec = _flatten(out)
        _only_tensors(op, name, leaves)
        odims = _out_dims(out_dims, len(leaves))
        if not batching.degraded() and all(
            isinstance(t, batching.BatchedTensor) and t._level == level for t in leaves
        ):
            return _unflatten(
                spec,
                [_taken_apart(t, level, hi - lo, d) for t, d in zip(leaves, odims, strict=True)],
            )
        # a result not batched may hold the first example's values alone (computed from them
        # outside an op, or written into a tensor in place): func goes on as its call
        batching.degrade()
        firsts = [batching.first_result(t) for t in leaves]
    finally:
        random_batching.leave(level)
    rest = _looped(op, func, mapped, range(lo + 1, hi), randomness, kwargs, start)
    return _stacked(op, name, [_unflatten(spec, firsts), *rest], out_dims)


def _taken_apart(t: Any, level: int, size: int, out_dim: int | None) -> Tensor:
    """A result of func as vmap returns it: its batch dim moved to out_dim."""
    value = t._value
    return value if out_dim in (0, None) else value.movedim(0, out_dim)


def _only_tensors(op: str, name: str, leaves: list[Any]) -> None:
    if not all(isinstance(t, Tensor) for t in leaves):
        kinds = sorted({type(t).__name__ for t in leaves if not isinstance(t, Tensor)})
        raise ValueError(f"{op}: {name} must only return Tensors; got {', '.join(kinds)}")


def _looped(
    op: str,
    func: Callable,
    mapped: list,
    examples: range,
    randomness: str,
    kwargs: dict,
    start: Any = None,
) -> list[Any]:
    """func called once per example (off the host, or those left after a call that went on
    as the first example's); with randomness 'same' each from the state at ``start``."""
    results = []
    before = (get_rng_state() if start is None else start) if randomness != "different" else None
    for b in examples:
        if randomness == "same":
            set_rng_state(before)
        call = [
            _unflatten(
                spec, [m[b] if dd is not None else m for m, dd in zip(moved, ds, strict=True)]
            )
            for spec, moved, ds in mapped
        ]
        results.append(func(*call, **kwargs))
    if before is not None and randomness == "error" and not get_rng_state().equal(before):
        random_batching._refuse_random(f"a draw in {getattr(func, '__name__', 'func')}")
    return results


def _stacked(op: str, name: str, results: list[Any], out_dims: Any) -> Any:
    leaves0, spec0 = _flatten(results[0])
    _only_tensors(op, name, leaves0)
    outs = [_flatten(r)[0] for r in results]
    stacked = []
    for k, d in enumerate(_out_dims(out_dims, len(leaves0))):
        column = [o[k] for o in outs]
        stacked.append(column[0] if d is None else stack(column, dim=d))
    return _unflatten(spec0, stacked)


# -- modules as functions of their parameters ---------------------------------------------------


@contextlib.contextmanager
def _swapped(
    module: Module, values: dict[str, Any], tie_weights: bool, strict: bool
) -> Iterator[None]:
    """The module with each named parameter or buffer replaced by the given tensor (the tied
    names of one too, with tie_weights), put back on leaving."""
    owners: dict[str, tuple[Module, str]] = {}
    named: dict[str, Any] = {}
    for prefix, m in module.named_modules(remove_duplicate=False):
        for kind, attr, value in m._members():
            if kind in ("parameter", "buffer"):
                full = f"{prefix}.{attr}" if prefix else attr
                owners[full], named[full] = (m, attr), value
    if strict:
        missing = sorted(set(named) - set(values))
        unexpected = sorted(set(values) - set(named))
        if missing or unexpected:
            parts = [f"Missing key(s): {', '.join(map(repr, missing))}." if missing else ""]
            parts.append(
                f"Unexpected key(s): {', '.join(map(repr, unexpected))}." if unexpected else ""
            )
            raise RuntimeError(
                f"functional_call: error(s) in reparametrizing for {type(module).__name__}: "
                + " ".join(p for p in parts if p)
            )
    chosen = {k: v for k, v in values.items() if k in named}
    if tie_weights:
        for k in list(chosen):
            for other, value in named.items():
                if value is named[k] and other != k:
                    if other in values and values[other] is not chosen[k]:
                        raise ValueError(
                            f"functional_call: {k!r} and {other!r} are tied in the module but "
                            "given different tensors"
                        )
                    chosen.setdefault(other, chosen[k])
    saved = {k: owners[k][0].__dict__[owners[k][1]] for k in chosen}
    try:
        for k, v in chosen.items():
            m, attr = owners[k]
            m.__dict__[attr] = v
        yield
    finally:
        for k, v in saved.items():
            m, attr = owners[k]
            m.__dict__[attr] = v


def functional_call(
    module: Module,
    parameter_and_buffer_dicts: dict[str, Any] | Sequence[dict[str, Any]],
    args: Any = None,
    kwargs: dict[str, Any] | None = None,
    *,
    tie_weights: bool = True,
    strict: bool = False,
) -> Any:
    """``module(*args, **kwargs)`` with its parameters and buffers taken from the dicts (by
    their dotted names; those not given keep the module's own), the module unchanged after.
    ``strict`` requires every name, and only those; ``tie_weights`` gives tied names the same
    tensor."""
    dicts = (
        [parameter_and_buffer_dicts]
        if isinstance(parameter_and_buffer_dicts, dict)
        else list(parameter_and_buffer_dicts)
    )
    values: dict[str, Any] = {}
    for d in dicts:
        twice = sorted(set(values) & set(d))
        if twice:
            raise ValueError(
                f"functional_call: {twice} appear in more than one dict; which to use is ambiguous"
            )
        values.update(d)
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _swapped(module, values, tie_weights, strict):
        return module(*args, **(kwargs or {}))


def stack_module_state(models: Sequence[Module]) -> tuple[dict[str, Tensor], dict[str, Tensor]]:
    """The parameters and buffers of models of one architecture, each stacked along a new
    first dim (parameters as leaves that require grad), for vmap over functional_call."""
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: expected at least one model; got none")
    if len({type(m) for m in models}) != 1:
        raise RuntimeError("stack_module_state: expected all models to be of the same class")
    if any(m.training != models[0].training for m in models):
        raise RuntimeError(
            "stack_module_state: expected all models to be in the same training mode"
        )
    params = {
        name: stack([dict(m.named_parameters())[name].detach() for m in models]).requires_grad_()
        for name, _ in models[0].named_parameters()
    }
    buffers = {
        name: stack([dict(m.named_buffers())[name] for m in models])
        for name, _ in models[0].named_buffers()
    }
    return params, buffers
