"""PyTorch's ``torch.autograd.functional``: ``vjp``, ``jvp``, ``jacobian``, ``hessian``,
``hvp`` and ``vhp`` of a function of Tensors (a Tensor or a tuple of Tensors in, the same
out), with PyTorch's signatures, results and errors.

Everything is the engine's ``grad``: ``jvp`` and ``hvp`` by the double-backward trick (the
gradient of a vector-Jacobian product with respect to its vector, as PyTorch's), ``jacobian``
a row per output element (reverse mode) or a column per input element (forward mode);
``vectorize=True`` is accepted and runs the same loop. Results are detached unless
``create_graph``; ``strict`` refuses outputs independent of an input, as PyTorch's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..array.tensor_type import tensor_type
from .engine import grad
from .mode import enable_grad, set_grad_enabled, state

_STAGES = {
    "back": "The output of the user-provided function is independent of input {i}. This is "
    "not allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the "
    "grad_outputs when using the double backward trick to compute forward mode gradients. "
    "This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. "
    "This is not allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry "
    "{i} in the grad_jacobian. This is not allowed in strict mode as it prevents from using "
    "the double backward trick to replace forward mode AD.",
}


def _as_tuple(x: Any, arg: str, fn: str) -> tuple[bool, tuple[Any, ...]]:
    """(whether x was a tuple, x as a tuple), each entry checked to be a Tensor."""
    is_tuple = isinstance(x, tuple)
    xs = x if is_tuple else (x,)
    for i, el in enumerate(xs):
        if not isinstance(el, tensor_type()):
            where = f"value at index {i}" if is_tuple else f"given {arg}"
            raise TypeError(
                f"The {arg} given to {fn} must be either a Tensor or a tuple of Tensors but the "
                f"{where} has type {type(el)}."
            )
    return is_tuple, xs


def _unpack(res: Any, is_tuple: Any) -> Any:
    """A tuple result as the caller gave its arguments: ``is_tuple`` a bool, or a pair (the
    outputs', the inputs') for a result per output and input."""
    if isinstance(is_tuple, tuple):
        if not is_tuple[1]:
            res = tuple(r[0] for r in res)
        return res if is_tuple[0] else res[0]
    return res if is_tuple else res[0]


def _prepare(xs: tuple, create_graph: bool, need_graph: bool) -> tuple:
    """Inputs func runs on: aliases of those that require grad when the result is to be
    differentiated (create_graph), fresh leaves otherwise."""
    out = []
    for x in xs:
        if create_graph and x.requires_grad:
            out.append(x[...])
        else:
            out.append(x.detach().requires_grad_(need_graph))
    return tuple(out)


def _post(xs: tuple, create_graph: bool) -> tuple:
    return tuple(x if create_graph else x.detach() for x in xs)


def _validate_v(v: tuple, other: tuple, is_tuple: bool) -> None:
    if len(v) != len(other):
        if is_tuple:
            raise RuntimeError(
                f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}."
            )
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (a, b) in enumerate(zip(v, other, strict=True)):
        if tuple(a.shape) != tuple(b.shape):
            pre = f"Entry {i} in " if is_tuple else ""
            raise RuntimeError(
                f"{pre}v has invalid size: should be {b.shape!s} but got {a.shape!s}."
            )


def _check_requires_grad(xs: tuple, kind: str, strict: bool) -> None:
    if not strict:
        return
    for i, x in enumerate(xs):
        if x is None:
            raise RuntimeError(_STAGES["back"].format(i=i))
        if x.requires_grad:
            continue
        if kind == "hessian":
            raise RuntimeError(
                f"The hessian of the user-provided function with respect to input {i} is "
                "independent of the input. This is not allowed in strict mode. You should "
                "ensure that your function is thrice differentiable and that the hessian "
                "depends on the inputs."
            )
        if kind == "jacobian":
            raise RuntimeError(
                "While computing the hessian, found that the jacobian of the user-provided "
                f"function with respect to input {i} is independent of the input. This is not "
                "allowed in strict mode. You should ensure that your function is twice "
                "differentiable and that the jacobian depends on the inputs (this would be "
                "violated by a linear function for example)."
            )
        if kind == "grad_inputs":
            raise RuntimeError(
                f"The gradient with respect to input {i} is independent of the inputs of the "
                "user-provided function. This is not allowed in strict mode."
            )
        raise RuntimeError(
            f"Output {i} of the user-provided function does not require gradients. The outputs "
            "must be computed in a differentiable manner from the input when running in strict "
            "mode."
        )


def _grad(outputs: tuple, inputs: tuple, vs: Any = None, create_graph: bool = False) -> tuple:
    """The engine's grad over the outputs that require grad (None for each input where none
    does), retaining the graph, unused inputs None."""
    if vs is None:
        vs = (None,) * len(outputs)
    outs, gs = [], []
    for o, v in zip(outputs, vs, strict=True):
        if o is not None and o.requires_grad:
            outs.append(o)
            gs.append(o.new_ones(o.shape) if v is None else v)
    if not outs:
        return (None,) * len(inputs)
    return tuple(
        grad(
            outs, list(inputs), gs, retain_graph=True, create_graph=create_graph, allow_unused=True
        )
    )


def _fill_in_zeros(gs: tuple, refs: tuple, strict: bool, create_graph: bool, stage: str) -> tuple:
    res = []
    for i, (g, ref) in enumerate(zip(gs, refs, strict=True)):
        if g is None:
            if strict:
                raise RuntimeError(_STAGES[stage].format(i=i))
            g = ref.detach().new_zeros(ref.shape)
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(
                f"The {what} of the user-provided function is independent of input {i}. This "
                "is not allowed in strict mode when create_graph=True."
            )
        res.append(g)
    return tuple(res)


def _outputs(func: Callable[..., Any], inputs: tuple, fn: str, strict: bool) -> tuple:
    is_tuple, outs = _as_tuple(func(*inputs), "outputs of the user-provided function", fn)
    _check_requires_grad(outs, "outputs", strict)
    return is_tuple, outs


def _inputs(inputs: Any, fn: str, create_graph: bool) -> tuple[bool, tuple]:
    is_in, ins = _as_tuple(inputs, "inputs", fn)
    return is_in, _prepare(ins, create_graph, True)


def _vector(v: Any, refs: tuple, is_tuple: bool, fn: str, create_graph: bool, of: str) -> Any:
    """The v of a product, checked against the tensors it pairs with (``of``: whose they
    are, for the error); None allowed only where those are one Tensor of one element."""
    if v is not None:
        _, vs = _as_tuple(v, "v", fn)
        vs = _prepare(vs, create_graph, False)
        _validate_v(vs, refs, is_tuple)
        return vs
    if len(refs) != 1 or refs[0].numel() != 1:
        raise RuntimeError(
            f"The vector v can only be None if {of} a single Tensor with a single element."
        )
    return None


def _detached_unless(create_graph: bool) -> Any:
    """Grad mode for a product's last pass: on to keep its graph (create_graph), else as the
    caller had it."""
    return set_grad_enabled(True if create_graph else state.grad_enabled)


def _results(outs: tuple, res: tuple, is_out: bool, is_res: bool, create_graph: bool) -> tuple:
    return _unpack(_post(outs, create_graph), is_out), _unpack(_post(res, create_graph), is_res)


def pushforward(
    outs: Any, ins: Any, vs: Any, create_graph: bool, strict: bool = False, hessian: bool = False
) -> tuple:
    """``J v`` by the double-backward trick: the reverse pass with a cotangent ``u`` that
    requires grad gives ``J^T u``, linear in u; its gradient with respect to u along ``v`` is
    ``J v``, whatever u is. u is ones, not zeros: a backward formula may pass through log|u|
    (logcumsumexp's does), which has no derivative at 0. Zeros for an output v does not
    reach (``hessian``: outs are a gradient, and the errors of strict mode say so)."""
    us = tuple(o.detach().new_ones(o.shape).requires_grad_(True) for o in outs)
    back = _grad(tuple(outs), tuple(ins), us, create_graph=True)
    _check_requires_grad(outs if hessian else back, "hessian" if hessian else "grad_inputs", strict)
    with _detached_unless(create_graph):
        res = _grad(back, us, vs, create_graph)
        stage = "double_back_trick" if hessian else "back_trick"
        return _fill_in_zeros(res, tuple(outs), strict, create_graph, stage)


def vjp(
    func: Callable[..., Any],
    inputs: Any,
    v: Any = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Any, Any]:
    """``(func(inputs), v^T J)``: the vector-Jacobian product at ``inputs``."""
    with enable_grad():
        is_in, ins = _inputs(inputs, "vjp", create_graph)
        is_out, outs = _outputs(func, ins, "vjp", strict)
        vs = _vector(v, outs, is_out, "vjp", create_graph, "the user-provided function returns")
        with _detached_unless(create_graph):
            res = _fill_in_zeros(
                _grad(outs, ins, vs, create_graph), ins, strict, create_graph, "back"
            )
    return _results(outs, res, is_out, is_in, create_graph)


def jvp(
    func: Callable[..., Any],
    inputs: Any,
    v: Any = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Any, Any]:
    """``(func(inputs), J v)``: the Jacobian-vector product, by the double-backward trick."""
    with enable_grad():
        is_in, ins = _inputs(inputs, "jvp", create_graph)
        of = "the input to the user-provided function is"
        vs = _vector(v, ins, is_in, "jvp", create_graph, of)
        is_out, outs = _outputs(func, ins, "jvp", strict)
        res = pushforward(outs, ins, vs, create_graph, strict)
    return _results(outs, res, is_out, is_out, create_graph)


def _place(total: Any, index: tuple, part: Any) -> Any:
    """total with ``part`` written at ``index`` (differentiably where part needs it)."""
    total[index] = part
    return total


def _unravel(k: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    idx = []
    for n in reversed(shape):
        idx.append(k % n)
        k //= n
    return tuple(reversed(idx))


def jacobian(
    func: Callable[..., Any],
    inputs: Any,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    strategy: str = "reverse-mode",
) -> Any:
    """The Jacobian of func at inputs: for each output and input, a Tensor of shape
    ``output.shape + input.shape`` (a tuple per output, of one per input, where tuples
    were given)."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
            'function has more outputs than inputs, "forward-mode" tends to be more '
            'performant. Otherwise, prefer to use "reverse-mode".'
        )
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                "torch.autograd.functional.jacobian: `create_graph=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either set '
                '`create_graph=False` or `strategy="reverse-mode"`.'
            )
        return _jacfwd(func, inputs, strict, vectorize)
    with enable_grad():
        is_in, ins = _as_tuple(inputs, "inputs", "jacobian")
        ins = _prepare(ins, create_graph, True)
        is_out, outs = _outputs(func, ins, "jacobian", strict)
        if vectorize and strict:
            raise RuntimeError(
                "torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are "
                "not supported together. Please either set `strict=False` or `vectorize=False`."
            )
        jac = []
        for i, out in enumerate(outs):
            rows = [
                ins[k].detach().new_zeros(tuple(out.shape) + tuple(ins[k].shape))
                for k in range(len(ins))
            ]
            flat = out.reshape(-1)
            for j in range(flat.numel()):
                gs = _grad((flat[j],), ins, None, create_graph)
                for k, g in enumerate(gs):
                    if g is None:
                        if strict:
                            raise RuntimeError(
                                f"Output {i} of the user-provided function is independent of "
                                f"input {k}. This is not allowed in strict mode."
                            )
                        continue
                    if strict and create_graph and not g.requires_grad:
                        raise RuntimeError(
                            "The jacobian of the user-provided function is independent of "
                            f"input {k}. This is not allowed in strict mode when "
                            "create_graph=True."
                        )
                    rows[k] = _place(rows[k], _unravel(j, tuple(out.shape)), g)
            jac.append(tuple(_post(tuple(rows), create_graph)))
    return _unpack(tuple(jac), (is_out, is_in))


def _jacfwd(func: Callable[..., Any], inputs: Any, strict: bool, vectorize: bool) -> Any:
    """The Jacobian a column per input element: jvp along each basis vector."""
    if strict:
        raise RuntimeError(
            'torch.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` '
            "are not supported together (yet). Please either set `strict=False` or "
            '`strategy="reverse-mode"`.'
        )
    if not vectorize:
        raise NotImplementedError(
            "Computing Jacobian using forward-AD or forward-over-reverse Hessian isonly "
            "implemented for `vectorize=True`."
        )
    is_in, ins = _as_tuple(inputs, "inputs", "jacobian")
    with enable_grad():
        is_out, outs = _as_tuple(func(*ins), "outputs of the user-provided function", "jacobian")
    cols = [[o.detach().new_zeros(tuple(o.shape) + tuple(x.shape)) for x in ins] for o in outs]
    for k, x in enumerate(ins):
        for j in range(x.numel()):
            vs = tuple(y.detach().new_zeros(y.shape) for y in ins)
            idx = _unravel(j, tuple(x.shape))
            vs[k][idx] = 1
            _, tangent = jvp(func, ins, vs)
            tangents = tangent if is_out else (tangent,)
            for i, t in enumerate(tangents):
                cols[i][k][(Ellipsis,) + idx] = t
    # lists, as PyTorch's forward mode gives them (a tuple only where inputs were one Tensor)
    return _unpack([list(c) for c in cols], (is_out, is_in))


def hessian(
    func: Callable[..., Any],
    inputs: Any,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    outer_jacobian_strategy: str = "reverse-mode",
) -> Any:
    """The Hessian of a function of one element: per pair of inputs, a Tensor of shape
    ``input_i.shape + input_j.shape``."""
    is_in, ins = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def single(*inp: Any) -> Any:
        out = func(*inp)
        is_tuple, outs = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(outs, "outputs", strict)
        if is_tuple:
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.numel() != 1:
            raise RuntimeError(
                "The Tensor returned by the function given to hessian should contain a single "
                "element"
            )
        return out.squeeze()

    def jac_func(*inp: Any) -> Any:
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(single, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    res = jacobian(
        jac_func,
        ins,
        create_graph=create_graph,
        strict=strict,
        vectorize=vectorize,
        strategy=outer_jacobian_strategy,
    )
    return _unpack(res, (is_in, is_in))


def _scalar_output(func: Callable[..., Any], ins: tuple, fn: str, strict: bool) -> tuple:
    is_out, outs = _outputs(func, ins, fn, strict)
    if is_out:
        raise RuntimeError(f"The function given to {fn} should return a single Tensor")
    if outs[0].numel() != 1:
        raise RuntimeError(
            f"The Tensor returned by the function given to {fn} should contain a single element"
        )
    return is_out, outs


def _hessian_product(
    func: Callable[..., Any], inputs: Any, v: Any, create_graph: bool, strict: bool, fn: str
) -> tuple[Any, Any]:
    """vhp (``v^T H``, the gradient's vjp) or hvp (``H v``, its jvp by the double-backward
    trick) of a function of one element."""
    with enable_grad():
        is_in, ins = _inputs(inputs, fn, create_graph)
        of = "the input to the user-provided function is"
        vs = _vector(v, ins, is_in, fn, create_graph, of)
        is_out, outs = _scalar_output(func, ins, fn, strict)
        jac = _grad(outs, ins, None, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        if fn == "hvp":
            res = pushforward(jac, ins, vs, create_graph, strict, hessian=True)
        else:
            with _detached_unless(create_graph):
                res = _fill_in_zeros(
                    _grad(jac, ins, vs, create_graph), ins, strict, create_graph, "double_back"
                )
    return _results(outs, res, is_out, is_in, create_graph)


def vhp(
    func: Callable[..., Any],
    inputs: Any,
    v: Any = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Any, Any]:
    """``(func(inputs), v^T H)``: a vector-Hessian product of a function of one element."""
    return _hessian_product(func, inputs, v, create_graph, strict, "vhp")


def hvp(
    func: Callable[..., Any],
    inputs: Any,
    v: Any = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Any, Any]:
    """``(func(inputs), H v)``: a Hessian-vector product of a function of one element, by the
    double-backward trick."""
    return _hessian_product(func, inputs, v, create_graph, strict, "hvp")


__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]
