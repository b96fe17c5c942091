"""Gradient checks for tests and users: analytic gradients against central finite differences,
with torch.autograd.gradcheck's and gradgradcheck's signatures.

Works on any function of Tensors built from chainrule ops; the ops themselves live elsewhere.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from . import array as B
from .autograd import enable_grad, grad, no_grad
from .tensor import Tensor

xp = B.xp

__all__ = ["GradcheckError", "gradcheck", "gradgradcheck"]


class GradcheckError(AssertionError, RuntimeError):
    """A gradient check that failed: a RuntimeError, as PyTorch's GradcheckError, and an
    AssertionError, as chainrule's checks raised before."""


def gradcheck(
    func: Callable[..., Any],
    inputs: Tensor | Sequence[Any],
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_batched_forward_grad: bool = False,
    check_forward_ad: bool = False,
    check_backward_ad: bool = True,
    fast_mode: bool = False,
    masked: bool | None = None,
) -> bool:
    """Check the gradients of ``func(*inputs)`` against central finite differences.

    Every input that is a Tensor with ``requires_grad`` is checked; it must be float64, as
    finite differences in float32 are too coarse to judge. The output (a Tensor, or a tuple
    or list of them; integer outputs such as indices are ignored) is contracted with a fixed
    random upstream gradient ``v``, so one backward pass gives the analytic ``v^T J``; its
    numeric counterpart perturbs each input entry by ``+-eps`` (with ``fast_mode``, the whole
    input along one random direction ``u``, comparing ``v^T J u`` alone). An entry passes
    when ``|analytic - numeric| <= atol + rtol * |numeric|``.

    As PyTorch's, it also checks that backward is reentrant (run twice, its gradients differ
    by at most ``nondet_tol``), that zero output gradients give zero input gradients, with
    ``check_undefined_grad`` that an output given no gradient is taken as zeros, and with
    ``check_grad_dtypes`` that each gradient has its input's dtype (its shape always). With
    ``check_forward_ad``, forward-mode derivatives too (autograd.forward_ad): ``v^T J e`` for
    each basis tangent ``e`` of each input (with ``fast_mode`` along ``u`` alone) against the
    same finite differences. With ``check_batched_grad``, ``v^T J`` for two upstream
    gradients at once by ``func.vmap`` over them must equal one backward pass each, as
    PyTorch's (it checks that func's ops batch). ``check_backward_ad=False`` skips the
    reverse-mode checks (``check_forward_ad`` must then be on). With
    ``check_batched_forward_grad`` (which needs ``check_forward_ad``), each input's
    forward-mode derivatives along two random tangents at once, by ``func.vmap`` over them,
    must equal one forward pass per tangent, as PyTorch's. The masked check is refused.

    Returns True; on a failed check, raises GradcheckError (naming the input, the worst
    entry's index and both values), or returns False with ``raise_exception=False``. Bad
    arguments (no input requiring grad, a float32 input) raise ValueError.
    """
    _refuse("gradcheck", masked=masked)
    if check_batched_forward_grad and not check_forward_ad:
        raise ValueError(
            "gradcheck: check_batched_forward_grad=True needs check_forward_ad=True; got "
            "check_forward_ad=False"
        )
    if not (check_backward_ad or check_forward_ad):
        raise ValueError(
            "gradcheck: expected at least one of check_forward_ad or check_backward_ad to be "
            "True; got both False"
        )
    args = _as_args(inputs)
    checked = _checked(args, "gradcheck")
    try:
        if check_backward_ad:
            _check(func, args, checked, eps, atol, rtol, nondet_tol, check_undefined_grad,
                   check_grad_dtypes, fast_mode)  # fmt: skip
            if check_batched_grad:
                _check_batched(func, args, checked, atol, rtol)
        if check_forward_ad:
            _check_forward(func, args, checked, eps, atol, rtol, fast_mode)
            if check_batched_forward_grad:
                _check_batched_forward(func, args, checked, atol, rtol)
    except GradcheckError:
        if raise_exception:
            raise
        return False
    return True


def gradgradcheck(
    func: Callable[..., Any],
    inputs: Tensor | Sequence[Any],
    grad_outputs: Tensor | Sequence[Any] | None = None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    gen_non_contig_grad_outputs: bool = False,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_fwd_over_rev: bool = False,
    check_rev_over_rev: bool = True,
    fast_mode: bool = False,
    masked: bool = False,
) -> bool:
    """Check second derivatives: ``gradcheck`` of the map ``(inputs, v) -> v^T J``, the
    backward pass recorded with ``create_graph=True``.

    ``v`` is ``grad_outputs`` where given (those that require grad are checked too), else a
    fixed random upstream gradient per output that requires grad, as PyTorch's (made
    non-contiguous with ``gen_non_contig_grad_outputs``). Other arguments, result and errors
    as ``gradcheck``'s; forward-over-reverse is refused.
    """
    _refuse("gradgradcheck", check_fwd_over_rev=check_fwd_over_rev, masked=masked)
    _needed("gradgradcheck", "check_rev_over_rev", check_rev_over_rev, "reverse over reverse")
    args = _as_args(inputs)
    checked = _checked(args, "gradgradcheck")
    outs = _float_outputs(func(*args))
    if grad_outputs is None:
        vs = [v.requires_grad_(v.dtype == B.float64) for v in _upstream(outs)]
        if gen_non_contig_grad_outputs:
            vs = [_non_contiguous(v) for v in vs]
    else:
        vs = list(_as_args(grad_outputs))
        if len(vs) != len(outs):
            raise ValueError(
                f"gradgradcheck: got {len(vs)} grad_outputs for {len(outs)} floating outputs; "
                "give one per output"
            )
    n = len(args)

    def vjp(*xs: Any) -> tuple[Tensor, ...]:
        given, ws = xs[:n], xs[n:]
        with enable_grad():
            outs = _float_outputs(func(*given))
            live = [(o, w) for o, w in zip(outs, ws, strict=True) if o.requires_grad]
            targets = [given[i] for i in checked]
            if not live:
                return tuple(_zeros(t) for t in targets)
            gs = grad(
                [o for o, _ in live],
                targets,
                grad_outputs=[w for _, w in live],
                create_graph=True,
                allow_unused=True,
            )
        return tuple(_zeros(t) if g is None else g for g, t in zip(gs, targets, strict=True))

    return gradcheck(vjp, (*args, *vs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, fast_mode=fast_mode,
                     check_batched_grad=check_batched_grad)  # fmt: skip


def _needed(op: str, name: str, value: bool, what: str) -> None:
    """The one check chainrule makes (``what``), which torch's option ``name`` turns off."""
    if not value:
        raise ValueError(
            f"{op}: {name}=False leaves nothing to check (chainrule checks {what} only); got "
            f"{name}=False"
        )


def _refuse(op: str, **options: Any) -> None:
    """The checks of torch's gradcheck that chainrule's does not make: refused when asked."""
    asked = [name for name, value in options.items() if value]
    if asked:
        got = ", ".join(f"{name}={options[name]!r}" for name in asked)
        raise ValueError(
            f"{op}: chainrule checks reverse-mode gradients of dense tensors one upstream "
            f"gradient at a time; got {got}; leave these False (masked None)"
        )


def _check(
    func: Callable[..., Any],
    args: tuple[Any, ...],
    checked: list[int],
    eps: float,
    atol: float,
    rtol: float,
    nondet_tol: float,
    undefined: bool,
    dtypes: bool,
    fast: bool,
) -> None:
    """gradcheck's checks, each raising GradcheckError on failure."""
    xs = [args[i] for i in checked]
    vs = _upstream(_float_outputs(func(*args)))
    analytic = _analytic(func, args, xs, vs)
    again = _analytic(func, args, xs, vs)
    silent = _analytic(func, args, xs, [_zeros(v) for v in vs])
    if undefined:
        _undefined(func, args, xs, vs)
    rng = B.host.random.default_rng(1)
    for i, g, g2, g0 in zip(checked, analytic, again, silent, strict=True):
        x = args[i]
        if g is not None and (g.shape != x.shape or dtypes and g.dtype != x.dtype):
            raise GradcheckError(
                f"gradcheck: input {i}: the gradient has shape {g.shape} and dtype {g.dtype}; "
                f"the input has shape {x.shape} and dtype {x.dtype}"
            )
        a = _array(g, x)
        apart = float(xp.max(xp.abs(a - _array(g2, x)), initial=0.0))
        if not apart <= nondet_tol:
            raise GradcheckError(
                f"gradcheck: input {i}: backward is not reentrant: run twice with the same "
                f"input and upstream gradient, its gradients differ by {apart!r} "
                f"(nondet_tol {nondet_tol})"
            )
        if bool(xp.any(_array(g0, x) != 0)):
            raise GradcheckError(
                f"gradcheck: input {i} (shape {x.shape}): backward not multiplied by "
                "grad_output: zero output gradients give a nonzero gradient"
            )
        if fast:
            u = B.from_host(rng.standard_normal(x.shape), x._array)
            a, n = xp.sum(a * u, dtype=B.float64), _numeric(func, args, x, vs, eps, u)
        else:
            n = _numeric(func, args, x, vs, eps)
        err = xp.abs(a - n) - (atol + rtol * xp.abs(n))  # NaN where either is NaN
        if not xp.all(err <= 0):
            worst = int(xp.argmax(xp.where(xp.isnan(err), xp.inf, err)))
            at = tuple(int(k) for k in xp.unravel_index(worst, xp.shape(a)))
            where = "along a random direction" if fast else f"worst at index {at}"
            worst_a, worst_n = float(xp.reshape(a, -1)[worst]), float(xp.reshape(n, -1)[worst])
            raise GradcheckError(
                f"gradcheck: input {i} (shape {x.shape}): analytic and numeric gradients differ; "
                f"{where}: analytic {worst_a!r}, numeric {worst_n!r} (atol {atol}, rtol {rtol})"
            )


def _check_batched(
    func: Callable[..., Any], args: tuple[Any, ...], checked: list[int], atol: float, rtol: float
) -> None:
    """check_batched_grad: v^T J for a batch of two upstream gradients per output, by vmap
    over them (func's forward batched, its backward on the batch), against one backward pass
    for each."""
    from .func import grad as func_grad
    from .func import vmap

    outs = _float_outputs(func(*args))
    rng = B.host.random.default_rng(2)
    batches = [
        Tensor._make(
            B.from_host(rng.standard_normal((2, *o.shape)), o._array).astype(o._array.dtype)
        )
        for o in outs
    ]

    def pulled(xs: tuple[Tensor, ...], vs: tuple[Tensor, ...]) -> Tensor:
        given = list(args)
        for i, x in zip(checked, xs, strict=True):
            given[i] = x
        parts = [(o * v).sum() for o, v in zip(_float_outputs(func(*given)), vs, strict=True)]
        return sum(parts[1:], parts[0])

    xs = tuple(args[i] for i in checked)
    batched = vmap(func_grad(pulled), in_dims=(None, 0))(xs, tuple(batches))
    for b in range(2):
        one = _analytic(func, args, list(xs), [v[b] for v in batches])
        for i, x, g, gb in zip(checked, xs, one, batched, strict=True):
            want, got = _array(g, x), gb._array[b]
            if not xp.all(xp.abs(got - want) <= atol + rtol * xp.abs(want)):
                worst = float(xp.max(xp.abs(got - want)))
                raise GradcheckError(
                    f"gradcheck: input {i} (shape {x.shape}): the gradient for upstream "
                    f"gradient {b} of a batch of 2 by vmap (check_batched_grad) differs from "
                    f"one backward pass's by {worst!r} (atol {atol}, rtol {rtol})"
                )


def _jvp(func: Callable[..., Any], args: tuple[Any, ...], i: int, tangent: Tensor) -> tuple:
    """The tangents of func's floating outputs along ``tangent`` for input i (the other
    inputs fixed), zeros where an output does not depend on it."""
    from .autograd import forward_ad as fw

    with fw.dual_level():
        full = [x.detach() if isinstance(x, Tensor) else x for x in args]
        full[i] = fw.make_dual(args[i].detach(), tangent)
        outs = [fw.unpack_dual(o) for o in _float_outputs(func(*full))]
        return tuple(_zeros(o.primal) if o.tangent is None else o.tangent for o in outs)


def _check_batched_forward(
    func: Callable[..., Any], args: tuple[Any, ...], checked: list[int], atol: float, rtol: float
) -> None:
    """check_batched_forward_grad: for each input, the jvp along a batch of two tangents by
    vmap over them (func's forward batched with its tangents) against one jvp per tangent."""
    from .func import vmap

    rng = B.host.random.default_rng(3)
    for i in checked:
        x = args[i]
        tangents = Tensor._make(
            B.from_host(rng.standard_normal((2, *x.shape)), x._array).astype(x._array.dtype)
        )
        one = [_jvp(func, args, i, tangents[b]) for b in range(2)]
        batched = vmap(lambda t, i=i: _jvp(func, args, i, t))(tangents)
        for k, got in enumerate(batched):
            for b in range(2):
                want, have = one[b][k]._array, got._array[b]
                if not xp.all(xp.abs(have - want) <= atol + rtol * xp.abs(want)):
                    worst = float(xp.max(xp.abs(have - want)))
                    raise GradcheckError(
                        f"gradcheck: input {i} (shape {x.shape}), output {k}: the forward-mode "
                        f"derivative along tangent {b} of a batch of 2 by vmap "
                        f"(check_batched_forward_grad) differs from one forward pass's by "
                        f"{worst!r} (atol {atol}, rtol {rtol})"
                    )


def _check_forward(
    func: Callable[..., Any],
    args: tuple[Any, ...],
    checked: list[int],
    eps: float,
    atol: float,
    rtol: float,
    fast: bool,
) -> None:
    """check_forward_ad: each input's forward-mode derivatives, contracted with the same
    upstream gradients, against central differences."""
    from .autograd import forward_ad as fw

    vs = _upstream(_float_outputs(func(*args)))
    rng = B.host.random.default_rng(1)

    def along(i: int, tangent: Any) -> float:
        with fw.dual_level():
            full = list(args)
            full[i] = fw.make_dual(args[i].detach(), Tensor._make(tangent))
            total = 0.0
            for o, v in zip(_float_outputs(func(*full)), vs, strict=True):
                t = fw.unpack_dual(o).tangent
                if t is not None:
                    total += float(xp.sum(v._array * t._array, dtype=B.float64))
        return total

    for i in checked:
        x = args[i]
        if fast:
            u = B.from_host(rng.standard_normal(x.shape), x._array)
            a = xp.full((), along(i, u), dtype=B.float64, like=x._array)
            n = _numeric(func, args, x, vs, eps, u)
        else:
            flat = xp.zeros(x._array.size, dtype=B.float64, like=x._array)
            for j in range(flat.size):
                e = xp.zeros(x._array.size, dtype=x._array.dtype, like=x._array)
                e[j] = 1
                flat[j] = along(i, e.reshape(x.shape))
            a, n = flat.reshape(x.shape), _numeric(func, args, x, vs, eps)
        err = xp.abs(a - n) - (atol + rtol * xp.abs(n))
        if not xp.all(err <= 0):
            worst = int(xp.argmax(xp.where(xp.isnan(err), xp.inf, err)))
            raise GradcheckError(
                f"gradcheck: input {i} (shape {x.shape}): forward-mode and numeric derivatives "
                f"differ (check_forward_ad); worst: forward {float(xp.reshape(a, -1)[worst])!r}, "
                f"numeric {float(xp.reshape(n, -1)[worst])!r} (atol {atol}, rtol {rtol})"
            )


def _undefined(
    func: Callable[..., Any], args: tuple[Any, ...], xs: list[Tensor], vs: list[Tensor]
) -> None:
    """check_undefined_grad: of several outputs, each in turn given no gradient at all (a
    custom Function with set_materialize_grads(False) sees None for it, where PyTorch's sees
    an undefined gradient) and the others zeros, backward must run and give zeros."""
    outs = _float_outputs(func(*args))
    live = [k for k, o in enumerate(outs) if o.requires_grad]
    for k in live if len(live) > 1 else ():
        outs = _float_outputs(func(*args))
        rest = [j for j in live if j != k]
        try:
            gs = grad([outs[j] for j in rest], xs, [_zeros(vs[j]) for j in rest],
                      allow_unused=True)  # fmt: skip
        except Exception as err:
            raise GradcheckError(
                f"gradcheck: backward fails when output {k} gets no gradient "
                f"(check_undefined_grad): {type(err).__name__}: {err}"
            ) from err
        for i, (g, x) in enumerate(zip(gs, xs, strict=True)):
            if bool(xp.any(_array(g, x) != 0)):
                raise GradcheckError(
                    f"gradcheck: input {i}: with output {k} given no gradient and the others "
                    "zeros, backward gives a nonzero gradient (check_undefined_grad)"
                )


def _analytic(
    func: Callable[..., Any], args: tuple[Any, ...], xs: list[Tensor], vs: list[Tensor]
) -> tuple[Any, ...]:
    """v^T J for each of ``xs`` by one forward and one backward pass (None where nothing
    depends on it)."""
    outs = _float_outputs(func(*args))
    live = [(o, v) for o, v in zip(outs, vs, strict=True) if o.requires_grad]
    if not live:  # nothing depends on the inputs: every gradient is zero
        return (None,) * len(xs)
    return grad([o for o, _ in live], xs, grad_outputs=[v for _, v in live], allow_unused=True)


def _array(g: Tensor | None, x: Tensor) -> Any:
    """A gradient's array, zeros of x's shape for None."""
    return xp.zeros(x.shape, dtype=B.float64, like=x._array) if g is None else g._array


def _zeros(t: Tensor) -> Tensor:
    return Tensor._make(xp.zeros(t.shape, dtype=t.dtype, like=t._array))


def _non_contiguous(v: Tensor) -> Tensor:
    """The same values in a tensor whose elements are not adjacent (every other one of a
    buffer twice as long in its last dim); a 0-d tensor as it is."""
    if v.ndim == 0:
        return v
    buffer = xp.zeros((*v.shape[:-1], 2 * v.shape[-1]), dtype=v.dtype, like=v._array)
    buffer[..., ::2] = v._array
    return Tensor._make(buffer[..., ::2], v.requires_grad)


def _as_args(inputs: Tensor | Sequence[Any]) -> tuple[Any, ...]:
    return (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)


def _checked(args: tuple[Any, ...], op: str) -> list[int]:
    """Indices of the inputs to check; each must be float64."""
    checked = [i for i, x in enumerate(args) if isinstance(x, Tensor) and x.requires_grad]
    if not checked:
        raise ValueError(f"{op}: no input is a Tensor with requires_grad=True")
    for i in checked:
        if args[i].dtype != B.float64:
            raise ValueError(
                f"{op}: input {i} has dtype {args[i].dtype}; finite differences need float64 "
                "(use .double())"
            )
    return checked


def _float_outputs(out: Any) -> list[Tensor]:
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    for k, o in enumerate(outs):
        if not isinstance(o, Tensor):
            raise ValueError(f"gradcheck: output {k} is a {type(o).__name__}, not a Tensor")
    return [o for o in outs if o.dtype.kind == "f"]


def _upstream(outs: list[Tensor]) -> list[Tensor]:
    """A fixed random upstream gradient per output (its own generator: the global one is
    left alone), drawn on the host as every draw is."""
    rng = B.host.random.default_rng(0)
    return [Tensor._make(B.from_host(rng.standard_normal(o.shape).astype(o.dtype), o._array))
            for o in outs]  # fmt: skip


def _numeric(
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    x: Tensor,
    vs: list[Tensor],
    eps: float,
    direction: Any = None,
) -> Any:
    """d/dx of sum_k (v_k * out_k).sum() by central differences: entry by entry, or, given
    a ``direction`` u, its derivative along u alone (one number)."""

    def f() -> float:
        outs = _float_outputs(fn(*args))
        pairs = zip(outs, vs, strict=True)
        return float(sum(xp.sum(v._array * o._array, dtype=B.float64) for o, v in pairs))

    if not B.writeable(x._array):  # a broadcast view: perturb a copy instead
        x._array = x._array.copy()
    flat = x._array.reshape(-1)  # a view when the array is contiguous
    if not xp.shares_memory(flat, x._array):
        x._array = x._array.copy()
        flat = x._array.reshape(-1)
    with no_grad():
        if direction is not None:
            orig = flat.copy()
            step = eps * direction.reshape(-1)
            flat[...] = orig + step
            hi = f()
            flat[...] = orig - step
            lo = f()
            flat[...] = orig
            return xp.full((), (hi - lo) / (2 * eps), dtype=B.float64, like=x._array)
        out = xp.zeros(x._array.size, dtype=B.float64, like=x._array)
        for j in range(flat.size):
            orig = flat[j]
            flat[j] = orig + eps
            hi = f()
            flat[j] = orig - eps
            lo = f()
            flat[j] = orig
            out[j] = (hi - lo) / (2 * eps)
    return out.reshape(x.shape)
