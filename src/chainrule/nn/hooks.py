"""A module's hooks, as PyTorch runs them: what each ``register_*hook`` of module.py keeps,
the call of a module that has some, and the backward hooks' wrapping of inputs and outputs.

The handles come from autograd/handles.py; the fast call of a module without hooks is
module.py's.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from .. import array
from ..autograd.handles import RemovableHandle, add_hook
from ..autograd.mode import is_grad_enabled
from ..autograd.primitive import Function
from ..tensor import Tensor


class ModuleHooks:
    """The hooks registered on one module (or, for ``GLOBAL``, on every module), each dict
    keyed by handle id in calling order. A forward (pre-)hook is kept as ``(hook,
    with_kwargs, always_call)``, a backward one as the hook itself.

    Not a dict, so the module walk (which looks inside dicts for submodules) passes it by.
    """

    __slots__ = ("forward_pre", "forward", "backward", "backward_pre")

    def __init__(self) -> None:
        self.forward_pre: dict[int, Any] = {}
        self.forward: dict[int, Any] = {}
        self.backward: dict[int, Any] = {}
        self.backward_pre: dict[int, Any] = {}

    def __bool__(self) -> bool:
        """Whether any hook is registered (one whose hooks were all removed is empty)."""
        return bool(self.forward_pre or self.forward or self.backward or self.backward_pre)

    def add(self, kind: str, hook: Callable, prepend: bool, *flags: bool) -> RemovableHandle:
        hooks = getattr(self, kind)
        handle = add_hook(hooks, hook, prepend)
        if flags:
            hooks[handle.id] = (hook, *flags)  # same key, so the same place in the order
        return handle


GLOBAL = ModuleHooks()  # register_module_forward_hook's and register_module_forward_pre_hook's


def register_module_forward_pre_hook(hook: Callable) -> RemovableHandle:
    """``hook(module, args)`` before every module's forward (before its own pre-hooks); a
    value it returns replaces the positional arguments (a non-tuple as a 1-tuple)."""
    return GLOBAL.add("forward_pre", hook, False, False, False)


def register_module_forward_hook(
    hook: Callable, *, with_kwargs: bool = False, always_call: bool = False
) -> RemovableHandle:
    """``hook(module, args, output)`` (``hook(module, args, kwargs, output)`` with
    ``with_kwargs``) after every module's forward, before its own forward hooks; a value it
    returns replaces the output. ``always_call`` runs it even when forward raised."""
    return GLOBAL.add("forward", hook, False, with_kwargs, always_call)


def call(module: Any, args: tuple, kwargs: dict) -> Any:
    """Call ``module`` with its hooks, in PyTorch's order: forward pre-hooks (global, then
    the module's), the backward hooks' wrapping of the inputs, forward, forward hooks
    (global, then the module's), the wrapping of the outputs. If forward or a hook raises,
    the ``always_call`` forward hooks not yet run are run (their own errors only warned)
    before the error goes on."""
    own = module._hooks or ModuleHooks()
    result = None
    called: set[int] = set()
    try:
        for _, (hook, with_kwargs, _always) in [
            *GLOBAL.forward_pre.items(),
            *own.forward_pre.items(),
        ]:
            if with_kwargs:
                new = hook(module, args, kwargs)
                if new is not None:
                    if not (isinstance(new, tuple) and len(new) == 2):
                        raise RuntimeError(
                            "forward pre-hook must return None or a tuple of (new_args, "
                            f"new_kwargs), but got {new}."
                        )
                    args, kwargs = new
            else:
                new = hook(module, args)
                if new is not None:
                    args = new if isinstance(new, tuple) else (new,)
        bw_hook = None
        if own.backward or own.backward_pre:
            bw_hook = BackwardHook(
                module, list(own.backward.values()), list(own.backward_pre.values())
            )
            args = bw_hook.setup_input_hook(args)
        result = module.forward(*args, **kwargs)
        for hook_id, (hook, with_kwargs, always_call) in [
            *GLOBAL.forward.items(),
            *own.forward.items(),
        ]:
            if always_call:
                called.add(hook_id)
            new = hook(module, args, kwargs, result) if with_kwargs else hook(module, args, result)
            if new is not None:
                result = new
        if bw_hook is not None:
            if not isinstance(result, (Tensor, tuple)):
                warnings.warn(
                    "For backward hooks to be called, module output should be a Tensor or a "
                    f"tuple of Tensors but received {type(result)}",
                    stacklevel=3,
                )
            result = bw_hook.setup_output_hook(result)
        return result
    except Exception:
        for hook_id, (hook, with_kwargs, always_call) in [
            *GLOBAL.forward.items(),
            *own.forward.items(),
        ]:
            if not always_call or hook_id in called:
                continue
            try:
                new = (
                    hook(module, args, kwargs, result)
                    if with_kwargs
                    else hook(module, args, result)
                )
                if new is not None:
                    result = new
            except Exception as e:
                warnings.warn(
                    "module forward hook with ``always_call=True`` raised an exception that "
                    f"was silenced as another error was raised in forward: {e}",
                    stacklevel=3,
                )
        raise


# ---------------------------------------------------------------------------------------
# Backward hooks. A Function has one output, so the tensors going into (or out of) a module
# are wrapped in two kinds of node: each tensor x in a BackwardHookFunction, which passes
# its array on and, in backward, only notes x's gradient; and all of them together in one
# BackwardHookGate, a 0-d stand-in that each BackwardHookFunction also takes. The engine
# runs the gate after every BackwardHookFunction (its consumers) and before any of the
# tensors (it consumes them): so the gate sees all the gradients at once, calls the hooks,
# and gives each tensor its gradient, as the hooks left it.


class BackwardHookFunction(Function):
    """out = x (sharing its array): a tensor wrapped on its way into or out of a module."""

    rule = "d/dx: noted for the module's hooks, passed on by the gate; d/dgate = 0"
    saves_inputs = False
    view = True

    def forward(self, x: Any, gate: Any, grads: list, k: int) -> Any:
        self.grads, self.k = grads, k
        return x.view()

    def backward(self, grad: Tensor, out: Tensor) -> tuple[Tensor | None, ...]:
        self.grads[self.k] = grad
        return None, Tensor._make(array.xp.zeros((), grad.dtype, like=grad._array))


class BackwardHookGate(Function):
    """out = 0 (a 0-d stand-in): the one node that sees the gradients of all the tensors a
    module's hooks wrapped, and hands each its own."""

    rule = "d/dx_i = the gradient of the wrapped x_i, after the module's hooks"
    saves_inputs = False

    def forward(self, *xs: Any, ready: Callable[[], tuple]) -> Any:
        self.ready = ready
        dtype = next((x.dtype for x in xs if array.is_floating(x.dtype)), None)
        like = next((x for x in xs if isinstance(x, array.ndarray)), None)
        like = array.like(array.get_default_device()) if like is None else like
        return array.xp.zeros((), dtype or array.get_default_dtype(), like=like)

    def backward(self, grad: Tensor, out: Tensor) -> tuple[Tensor | None, ...]:
        return self.ready()


def _pack(index: list[int], grads: list, n: int) -> tuple:
    """The gradients of the wrapped tensors at their places among n arguments; None
    elsewhere (as PyTorch's BackwardHook._pack_with_none)."""
    out: list[Any] = [None] * n
    for i, g in zip(index, grads, strict=True):
        out[i] = g
    return tuple(out)


class BackwardHook:
    """One call's backward hooks (PyTorch's torch.utils.hooks.BackwardHook): the module's
    full backward hooks and backward pre-hooks as they were at forward time, and the
    gradients of its outputs between the two gates."""

    def __init__(self, module: Any, hooks: list[Callable], pre_hooks: list[Callable]) -> None:
        self.module, self.hooks, self.pre_hooks = module, hooks, pre_hooks
        self.grad_outputs: tuple | None = None
        self.n_inputs = self.n_outputs = 0
        self.input_index: list[int] | None = None
        self.output_index: list[int] | None = None

    def setup_input_hook(self, args: tuple) -> tuple:
        self.n_inputs = len(args)
        new, self.input_index = self._wrap(args, self._inputs_ready)
        return new

    def setup_output_hook(self, result: Any) -> Any:
        is_tuple = isinstance(result, tuple)
        outs = result if is_tuple else (result,)
        self.n_outputs = len(outs)
        new, self.output_index = self._wrap(outs, self._outputs_ready)
        return new if is_tuple else new[0]

    def _wrap(self, args: tuple, ready: Callable[..., tuple]) -> tuple[tuple, list[int] | None]:
        """Route every tensor among ``args`` through the gate; (args, None) if none needs a
        gradient or grad mode is off."""
        index = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        if not is_grad_enabled() or not any(args[i].requires_grad for i in index):
            return args, None
        tensors = [args[i] for i in index]
        grads: list[Any] = [None] * len(tensors)
        gate = BackwardHookGate.apply(*tensors, ready=lambda: ready(grads, tensors))
        new = list(args)
        for k, (i, t) in enumerate(zip(index, tensors, strict=True)):
            if t.requires_grad:
                new[i] = BackwardHookFunction.apply(t, gate, grads=grads, k=k)
        return tuple(new), index

    def _outputs_ready(self, grads: list, outputs: list[Tensor]) -> tuple:
        """The gradients of all outputs are known: run the pre-hooks (which may replace
        them); if no input wanted a gradient, the full hooks too, with None for each."""
        assert self.output_index is not None
        self.grad_outputs = _pack(self.output_index, grads, self.n_outputs)
        for hook in self.pre_hooks:
            new = hook(self.module, self.grad_outputs)
            if new is None:
                continue
            if len(new) != len(self.grad_outputs):
                raise RuntimeError(
                    "Backward pre hook returned an invalid number of grad_output, got "
                    f"{len(new)}, but expected {len(self.grad_outputs)}"
                )
            self.grad_outputs = tuple(new)
        local = self.grad_outputs
        if self.input_index is None and self.hooks:
            warnings.warn(
                "Full backward hook is firing when gradients are computed with respect to "
                "module outputs since no inputs require gradients.",
                stacklevel=2,
            )
            none = (None,) * self.n_inputs
            for hook in self.hooks:
                res = hook(self.module, none, self.grad_outputs)
                if res is not None and not (isinstance(res, tuple) and all(r is None for r in res)):
                    raise RuntimeError(
                        "Backward hook for Modules where no input requires gradient should "
                        "always return None or None for all gradients."
                    )
            self.grad_outputs = None
        return tuple(local[i] for i in self.output_index)

    def _inputs_ready(self, grads: list, inputs: list[Tensor]) -> tuple:
        """The gradients of all inputs are known: run the full hooks (which may replace
        them) with the outputs' gradients; an input tensor that got none shows zeros."""
        assert self.input_index is not None
        if self.grad_outputs is None:  # the gradient reached the inputs by another way
            return tuple(grads)
        grads = [
            Tensor._make(array.xp.zeros_like(x._array)) if g is None else g
            for g, x in zip(grads, inputs, strict=True)
        ]
        res = _pack(self.input_index, grads, self.n_inputs)
        for hook in self.hooks:
            new = hook(self.module, res, self.grad_outputs)
            if new is None:
                continue
            if len(new) != len(res):
                raise RuntimeError(
                    "Backward hook returned an invalid number of grad_input, got "
                    f"{len(new)}, but expected {len(res)}"
                )
            res = tuple(new)
        self.grad_outputs = None
        return tuple(res[i] for i in self.input_index)
