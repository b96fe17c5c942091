"""Gradient checks for tests and users: analytic gradients against central finite differences.

Works on any function of Tensors built from chainrule ops; the ops themselves live elsewhere.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from . import array as B
from .autograd import enable_grad, grad, no_grad
from .tensor import Tensor

xp = B.xp

__all__ = ["gradcheck", "gradgradcheck"]


def gradcheck(
    fn: Callable[..., Any],
    inputs: Tensor | Sequence[Any],
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
) -> bool:
    """Check the gradients of ``fn(*inputs)`` against central finite differences.

    Every input that is a Tensor with ``requires_grad`` is checked; it must be float64, as
    finite differences in float32 are too coarse to judge. The output (a Tensor, or a tuple
    or list of them; integer outputs such as indices are ignored) is contracted with a fixed
    random upstream gradient ``v``, so one backward pass gives the analytic ``v^T J``; its
    numeric counterpart perturbs each input entry by ``+-eps``. An entry passes when
    ``|analytic - numeric| <= atol + rtol * |numeric|``.

    Returns True, or raises AssertionError naming the input index, the worst entry's index
    and both values. Bad arguments (no input requiring grad, a float32 input) raise
    ValueError.
    """
    args = _as_args(inputs)
    checked = _checked(args, "gradcheck")
    outs = _float_outputs(fn(*args))
    vs = _upstream(outs)

    live = [(o, v) for o, v in zip(outs, vs, strict=True) if o.requires_grad]
    if live:
        analytic = grad(
            [o for o, _ in live],
            [args[i] for i in checked],
            grad_outputs=[v for _, v in live],
            allow_unused=True,
        )
    else:  # nothing depends on the inputs: every gradient is zero
        analytic = (None,) * len(checked)

    for i, g in zip(checked, analytic, strict=True):
        x = args[i]
        if g is not None and (g.shape != x.shape or g.dtype != x.dtype):
            raise AssertionError(
                f"gradcheck: input {i}: the gradient has shape {g.shape} and dtype {g.dtype}; "
                f"the input has shape {x.shape} and dtype {x.dtype}"
            )
        a = xp.zeros(x.shape, dtype=B.float64, like=x._array) if g is None else g._array
        n = _numeric(fn, args, x, vs, eps)
        err = xp.abs(a - n) - (atol + rtol * xp.abs(n))  # NaN where either is NaN
        if not xp.all(err <= 0):
            worst = int(xp.argmax(xp.where(xp.isnan(err), xp.inf, err)))
            at = tuple(int(k) for k in xp.unravel_index(worst, x.shape))
            worst_a, worst_n = float(a.reshape(-1)[worst]), float(n.reshape(-1)[worst])
            raise AssertionError(
                f"gradcheck: input {i} (shape {x.shape}): analytic and numeric gradients differ; "
                f"worst at index {at}: analytic {worst_a!r}, numeric {worst_n!r} "
                f"(atol {atol}, rtol {rtol})"
            )
    return True


def gradgradcheck(
    fn: Callable[..., Any],
    inputs: Tensor | Sequence[Any],
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
) -> bool:
    """Check second derivatives: ``gradcheck`` of the map ``inputs -> v^T J``, the backward
    pass recorded with ``create_graph=True`` (``v`` a fixed random upstream gradient).

    Same arguments, result and errors as ``gradcheck``.
    """
    args = _as_args(inputs)
    checked = _checked(args, "gradgradcheck")
    vs = _upstream(_float_outputs(fn(*args)))

    def vjp(*xs: Any) -> tuple[Tensor, ...]:
        with enable_grad():
            outs = _float_outputs(fn(*xs))
            live = [(o, v) for o, v in zip(outs, vs, strict=True) if o.requires_grad]
            targets = [xs[i] for i in checked]
            if not live:
                return tuple(
                    Tensor._make(xp.zeros(t.shape, t.dtype, like=t._array)) for t in targets
                )
            gs = grad(
                [o for o, _ in live],
                targets,
                grad_outputs=[v for _, v in live],
                create_graph=True,
                allow_unused=True,
            )
        return tuple(
            Tensor._make(xp.zeros(t.shape, dtype=t.dtype, like=t._array)) if g is None else g
            for g, t in zip(gs, targets, strict=True)
        )

    return gradcheck(vjp, args, eps=eps, atol=atol, rtol=rtol)


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
            for o in outs]


def _numeric(
    fn: Callable[..., Any], args: tuple[Any, ...], x: Tensor, vs: list[Tensor], eps: float
) -> Any:
    """d/dx of sum_k (v_k * out_k).sum(), by central differences, entry by entry."""

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
    out = xp.zeros(x._array.size, dtype=B.float64, like=x._array)
    with no_grad():
        for j in range(flat.size):
            orig = flat[j]
            flat[j] = orig + eps
            hi = f()
            flat[j] = orig - eps
            lo = f()
            flat[j] = orig
            out[j] = (hi - lo) / (2 * eps)
    return out.reshape(x.shape)
