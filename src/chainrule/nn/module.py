"""Module and Parameter: one walker over a module's attributes serves every question about
its state (parameters, buffers, submodules, state_dict, train/eval, repr). Layers live in
the sibling files; containers in container.py.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple

from .. import array
from ..arguments import to_args
from ..array import CPU
from ..autograd.engine import clear_grad
from ..autograd.handles import RemovableHandle
from ..autograd.mode import no_grad
from ..autograd.versions import counter
from ..tensor import Tensor
from . import hooks
from .hooks import ModuleHooks
from .hooks import register_module_forward_hook as register_module_forward_hook
from .hooks import register_module_forward_pre_hook as register_module_forward_pre_hook

xp = array.xp


class Parameter(Tensor):
    """A Tensor marked trainable: a Module finds it by walking its attributes.

    Given a Tensor, the Parameter shares its array (as PyTorch); anything else is copied.
    """

    def __init__(self, data: Any = None, requires_grad: bool = True) -> None:
        if data is None:
            arr = xp.empty(0, dtype=array.get_default_dtype())
        elif isinstance(data, Tensor):
            arr = data._array
            self._vc = counter(data)  # one array, one version counter
        else:
            arr = array.from_data(data)
        self._array = arr
        self.grad = None
        self.grad_fn = None
        self.requires_grad = False
        self.requires_grad_(requires_grad)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()


def _move(t: Tensor, dtype: Any, dev: Any) -> None:
    """Module.to's work on one tensor, in place: its array cast (if floating) and moved."""
    arr = t._array
    if dtype is not None and array.is_floating(arr.dtype) and arr.dtype != dtype:
        arr = arr.astype(dtype)
    if dev is not None and array.device_of(arr) != dev:
        arr = array.to_device(arr, dev)
    t._array = arr


class IncompatibleKeys(NamedTuple):
    """What load_state_dict(strict=False) could not match, as PyTorch returns it."""

    missing_keys: list[str]
    unexpected_keys: list[str]


def walk_value(name: str, value: Any) -> Iterator[tuple[str, str, Any]]:
    """(kind, dotted name, value) for the Parameters and Modules in one attribute value,
    looking inside lists, tuples and dicts (in their order)."""
    if isinstance(value, Parameter):
        yield "parameter", name, value
    elif isinstance(value, Module):
        yield "module", name, value
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            yield from walk_value(f"{name}.{i}", v)
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from walk_value(f"{name}.{k}", v)


_GLOBAL = hooks.GLOBAL
# The module's own bookkeeping in vars(self), never a member: which names are buffers (and
# persistent), and which Parameter or submodule names hold None (still that kind, as PyTorch).
_RESERVED = ("_buffers", "_empty")
_REPR = threading.local()  # per thread, the modules whose repr is being made: a cycle ends


def _in_repr() -> set[int]:
    if not hasattr(_REPR, "ids"):
        _REPR.ids = set()
    return _REPR.ids


def _typename(value: Any) -> str:
    """A value's type as PyTorch's errors name it ('chainrule.FloatTensor', 'int',
    'chainrule.nn.layers.Linear')."""
    if isinstance(value, Tensor):
        return value.type()
    kind = type(value)
    return (
        kind.__qualname__
        if kind.__module__ == "builtins"
        else f"{kind.__module__}.{kind.__qualname__}"
    )


def _join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def _modules(
    m: Module, prefix: str, memo: set | None, ancestors: tuple[int, ...]
) -> Iterator[tuple[str, Module]]:
    """named_modules' depth-first walk; ``memo`` (None: keep duplicates) holds the modules
    already given, ``ancestors`` the ids on the path from the root."""
    if memo is not None:
        if m in memo:
            return
        memo.add(m)
    yield prefix, m
    ancestors += (id(m),)
    for kind, name, value in m._members():
        if kind == "module" and id(value) not in ancestors:
            yield from _modules(value, _join(prefix, name), memo, ancestors)


class Module:
    """Base class of every layer and model: subclasses set Parameters, buffers and
    submodules as attributes in ``__init__`` and define ``forward``.

    Attributes are found by walking ``vars(self)`` in definition order, so nothing has to be
    registered except buffers (tensors that are state but not trained, e.g. running means).
    """

    training: bool = True  # a class default, so a subclass that skips __init__ still works
    _hooks: ModuleHooks | None = None  # made by the first register_*hook (see hooks.py)

    def __init__(self) -> None:
        self.training = True

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            f"{type(self).__name__}: forward is not defined; a Module subclass defines forward()"
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # Without hooks (none registered, or all removed) a call is forward and two checks;
        # hooks.call runs them as PyTorch.
        if not self._hooks and not (_GLOBAL.forward or _GLOBAL.forward_pre):
            return self.forward(*args, **kwargs)
        return hooks.call(self, args, kwargs)

    # -- hooks (run by hooks.call; each returns a handle whose remove() takes it out) ------

    def _module_hooks(self) -> ModuleHooks:
        if self._hooks is None:
            self._hooks = ModuleHooks()
        return self._hooks

    def register_forward_pre_hook(
        self, hook: Callable, *, prepend: bool = False, with_kwargs: bool = False
    ) -> RemovableHandle:
        """``hook(module, args)`` before forward; a value it returns replaces the positional
        arguments (a non-tuple as a 1-tuple). With ``with_kwargs``, ``hook(module, args,
        kwargs)``, which may return ``(new_args, new_kwargs)``. ``prepend`` runs it first."""
        return self._module_hooks().add("forward_pre", hook, prepend, with_kwargs, False)

    def register_forward_hook(
        self,
        hook: Callable,
        *,
        prepend: bool = False,
        with_kwargs: bool = False,
        always_call: bool = False,
    ) -> RemovableHandle:
        """``hook(module, args, output)`` after forward (``hook(module, args, kwargs,
        output)`` with ``with_kwargs``); a value it returns replaces the output.
        ``always_call`` runs it even when forward (or an earlier hook) raised."""
        return self._module_hooks().add("forward", hook, prepend, with_kwargs, always_call)

    def register_full_backward_pre_hook(
        self, hook: Callable, prepend: bool = False
    ) -> RemovableHandle:
        """``hook(module, grad_output)`` when the gradients of the module's outputs are known,
        before they go into it; a tuple it returns replaces ``grad_output``."""
        return self._module_hooks().add("backward_pre", hook, prepend)

    def register_full_backward_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_input, grad_output)`` when the gradients of the module's
        positional inputs are known (None for an argument that is not a tensor needing one);
        a tuple it returns replaces ``grad_input``."""
        return self._module_hooks().add("backward", hook, prepend)

    # -- the walker ------------------------------------------------------------------------

    def _members(self) -> Iterator[tuple[str, str, Any]]:
        """(kind, name, value) for each Parameter, buffer and submodule held directly, in
        definition order; kind is 'parameter', 'buffer' or 'module'. None is skipped."""
        buffers = self.__dict__.get("_buffers", {})
        for name, value in vars(self).items():
            if value is None or name in _RESERVED:
                continue
            if name in buffers:
                yield "buffer", name, value
            else:
                yield from walk_value(name, value)

    def _state(self, prefix: str = "") -> Iterator[tuple[str, Tensor]]:
        """The (key, tensor) pairs of state_dict: each module's parameters, then its
        persistent buffers, module by module; a shared tensor appears under every name."""
        for mod_prefix, m in self.named_modules(prefix=prefix, remove_duplicate=False):
            members = list(m._members())
            persistent = m.__dict__.get("_buffers", {})
            for kind, name, value in members:
                if kind == "parameter":
                    yield _join(mod_prefix, name), value
            for kind, name, value in members:
                if kind == "buffer" and persistent[name]:
                    yield _join(mod_prefix, name), value

    def _named(self, kind: str, prefix: str, recurse: bool, remove_duplicate: bool) -> Iterator:
        if recurse:
            modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
        else:
            modules = iter([(prefix, self)])
        seen: set[int] = set()
        for mod_prefix, m in modules:
            for k, name, value in m._members():
                if k != kind:
                    continue
                if remove_duplicate:
                    if id(value) in seen:
                        continue
                    seen.add(id(value))
                yield _join(mod_prefix, name), value

    # -- what a module holds ---------------------------------------------------------------

    def named_modules(
        self, memo: set | None = None, prefix: str = "", remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Module]]:
        """This module and every submodule below it, depth first, each once by default
        (with ``remove_duplicate=False``, once per name). A module that holds one of its own
        ancestors (a cycle) does not lead back into it."""
        if remove_duplicate and memo is None:
            memo = set()
        return _modules(self, prefix, memo if remove_duplicate else None, ())

    def modules(self) -> Iterator[Module]:
        for _, m in self.named_modules():
            yield m

    def named_children(self) -> Iterator[tuple[str, Module]]:
        seen: set[int] = set()
        for kind, name, value in self._members():
            if kind == "module" and id(value) not in seen:
                seen.add(id(value))
                yield name, value

    def children(self) -> Iterator[Module]:
        for _, m in self.named_children():
            yield m

    def named_parameters(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Parameter]]:
        """Every Parameter with its dotted name; a tied Parameter counts once."""
        return self._named("parameter", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Tensor]]:
        return self._named("buffer", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    # -- registering -----------------------------------------------------------------------

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Hold a tensor that is state but not trained (saved in state_dict unless
        ``persistent=False``); None keeps the name with no value."""
        self._check_name(name, "register_buffer", Tensor)
        if tensor is not None and (not isinstance(tensor, Tensor) or isinstance(tensor, Parameter)):
            raise TypeError(
                f"register_buffer: buffer {name!r} must be a Tensor (not a Parameter) or None; "
                f"got {type(tensor).__name__}"
            )
        self.__dict__.setdefault("_buffers", {})[name] = bool(persistent)
        setattr(self, name, tensor)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"register_parameter: {name!r} must be a Parameter or None; got "
                f"{type(param).__name__}"
            )
        self._check_name(name, "register_parameter", Parameter)
        if param is None:  # still a Parameter's name: only a Parameter (or None) may follow
            self.__dict__.setdefault("_empty", {})[name] = "parameter"
        setattr(self, name, param)

    def add_module(self, name: str, module: Module | None) -> None:
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"add_module: {name!r} must be a Module; got {type(module).__name__}")
        self._check_name(name, "add_module", Module)
        if module is None:
            self.__dict__.setdefault("_empty", {})[name] = "module"
        setattr(self, name, module)

    register_module = add_module

    def _check_name(self, name: str, op: str, kind: type) -> None:
        """A name must be a non-empty string without '.', and may replace only a member of
        the same kind (or None), never a method or another attribute (as PyTorch)."""
        if not isinstance(name, str) or not name or "." in name or name == "_buffers":
            raise KeyError(f"{op}: invalid name {name!r} (a non-empty string without '.')")
        old = self.__dict__.get(name)
        same = isinstance(old, kind) and isinstance(old, Parameter) == (kind is Parameter)
        if hasattr(type(self), name) or not (old is None or same):
            raise KeyError(f"{op}: attribute {name!r} already exists")

    def __setattr__(self, name: str, value: Any) -> None:
        """PyTorch's rules for a member's name: a Parameter's name (even while None) takes
        only a Parameter or None, a submodule's a Module or None, and a buffer's name stays a
        buffer (a Tensor or None); otherwise a Parameter or a Module makes the name one,
        whatever it was, and anything else is a plain attribute. Only a name already held
        costs more than a plain assignment (a forward assigns nothing)."""
        d = self.__dict__
        if getattr(value, "_is_buffer", False) and name not in d.get("_buffers", {}):
            # an nn.Buffer (parameter.py) under a new name: registered, as PyTorch's
            if not isinstance(d.get(name), (Parameter, Module)) and name not in d.get("_empty", {}):
                self.register_buffer(name, value, value.persistent)
                return
        if name in _RESERVED or name not in d and "_empty" not in d:  # a new plain name
            object.__setattr__(self, name, value)
            return
        buffers, empty = d.get("_buffers", {}), d.get("_empty", {})
        old = d.get(name)
        if isinstance(value, Parameter):
            buffers.pop(name, None)
            empty.pop(name, None)
        elif isinstance(old, Parameter) or empty.get(name) == "parameter":
            if value is not None:
                raise TypeError(f"cannot assign {_typename(value)!r} as parameter {name!r} "
                                "(chainrule.nn.Parameter or None expected)")  # fmt: skip
            d.setdefault("_empty", {})[name] = "parameter"
        elif isinstance(value, Module):
            buffers.pop(name, None)
            empty.pop(name, None)
        elif isinstance(old, Module) or empty.get(name) == "module":
            if value is not None:
                raise TypeError(f"cannot assign {_typename(value)!r} as child module {name!r} "
                                "(chainrule.nn.Module or None expected)")  # fmt: skip
            d.setdefault("_empty", {})[name] = "module"
        elif name in buffers and value is not None and not isinstance(value, Tensor):
            raise TypeError(f"cannot assign {_typename(value)!r} as buffer {name!r} "
                            "(chainrule.Tensor or None expected)")  # fmt: skip
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        self.__dict__.get("_buffers", {}).pop(name, None)
        self.__dict__.get("_empty", {}).pop(name, None)
        super().__delattr__(name)

    # -- modes and gradients ---------------------------------------------------------------

    def train(self, mode: bool = True) -> Module:
        for m in self.modules():
            m.training = bool(mode)
        return self

    def eval(self) -> Module:
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Every parameter's gradient to None (the default) or to zeros in place, as
        PyTorch's (see autograd.engine.clear_grad)."""
        for p in self.parameters():
            clear_grad(p, set_to_none)

    def apply(self, fn: Callable[[Module], Any]) -> Module:
        """Call fn on every module below self, children before their parent (as PyTorch),
        each once, then on self; returns self."""
        seen: set[int] = set()

        def visit(m: Module) -> None:
            seen.add(id(m))
            for child in m.children():
                if id(child) not in seen:
                    visit(child)
            fn(m)

        visit(self)
        return self

    def to(self, *args: Any, **kwargs: Any) -> Module:
        """Move and cast parameters and buffers (and their grads) in place, as PyTorch's:
        ``to(dtype)``, ``to(device)``, ``to(device, dtype)``, ``to(tensor)`` or the keywords
        ``dtype=`` and ``device=``. Only floating-point ones change dtype; all of them move.
        Each keeps its identity (an optimizer made before still holds them)."""
        dtype, dev, _ = to_args(args, kwargs, "to")
        if dtype is not None and dtype.kind != "f":  # bfloat16 too: a storage dtype
            raise TypeError(
                f"to: only floating-point dtypes are allowed (float16, float32, float64); got "
                f"{array.dtype_object(dtype)}"
            )
        for t in [*self.parameters(), *self.buffers()]:
            _move(t, dtype, dev)
            if t.grad is not None:
                _move(t.grad, dtype, dev)
        return self

    def cpu(self) -> Module:
        """The module with its parameters and buffers on the CPU, in place."""
        return self.to(CPU)

    def cuda(self, device: Any = None) -> Module:
        """The module with its parameters and buffers on a CUDA device (an index, 'cuda:N'
        or a cr.device; the first GPU by default), in place."""
        return self.to(array.cuda_device(device, "cuda"))

    def half(self) -> Module:
        return self.to(array.float16)

    def float(self) -> Module:
        return self.to(array.float32)

    def double(self) -> Module:
        return self.to(array.float64)

    # -- state -----------------------------------------------------------------------------

    def state_dict(self, prefix: str = "", keep_vars: bool = False) -> OrderedDict[str, Tensor]:
        """Parameters and persistent buffers by dotted name (``0.weight``), as tensors that
        share the module's arrays but are cut from the graph (unless ``keep_vars``)."""
        return OrderedDict((key, t if keep_vars else t.detach()) for key, t in self._state(prefix))

    def load_state_dict(
        self, state_dict: Mapping[str, Any], strict: bool = True
    ) -> IncompatibleKeys:
        """Copy values (Tensors or arrays) into this module's parameters and buffers, cast to
        their dtypes. Every missing, unexpected (when strict) and mis-shaped key is checked
        before anything is copied, and all of them are named in one error. A lazy module's
        uninitialized parameters take their shapes from the values first (lazy.py)."""
        for prefix, m in self.named_modules():
            if hasattr(m, "_materialize_from"):
                m._materialize_from(state_dict, prefix)
        own = dict(self._state())
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        values, mismatched = {}, []
        for key, target in own.items():
            if key not in state_dict:
                continue
            v = state_dict[key]
            if v is None:  # a checkpoint that lost a value (PyTorch names its type too)
                mismatched.append(f"cannot load {key}: expected a Tensor or an array; got None")
                continue
            arr = v._array if isinstance(v, Tensor) else v
            if not isinstance(arr, array.ndarray):
                arr = xp.asarray(arr)
            if not array.holds(arr.dtype):  # found now, before any weight is written
                mismatched.append(f"cannot load {key}: a value of dtype {arr.dtype}")
                continue
            if arr.shape != target.shape:
                mismatched.append(
                    f"size mismatch for {key}: copying a param with shape {arr.shape}, the "
                    f"shape in the current model is {target.shape}"
                )
            values[key] = arr
        problems = []
        if strict and unexpected:
            problems.append("Unexpected key(s) in state_dict: " + ", ".join(map(repr, unexpected)))
        if strict and missing:
            problems.append("Missing key(s) in state_dict: " + ", ".join(map(repr, missing)))
        problems += mismatched
        if problems:
            raise RuntimeError(
                f"load_state_dict: error(s) in loading state_dict for {type(self).__name__}:\n\t"
                + "\n\t".join(problems)
            )
        for key, arr in values.items():
            target = own[key]
            with no_grad():
                target.copy_(arr)  # into the same tensor, which its holders see (moved there)
        return IncompatibleKeys(missing, unexpected)

    # -- repr ------------------------------------------------------------------------------

    def extra_repr(self) -> str:
        """The text between the parentheses of this module's repr; layers override it."""
        return ""

    def __repr__(self) -> str:
        making = _in_repr()
        if id(self) in making:  # a module that holds its own ancestor
            return f"{type(self).__name__}(...)"
        making.add(id(self))
        try:
            extra = self.extra_repr()
            lines = extra.split("\n") if extra else []
            children = [(n, repr(m)) for k, n, m in self._members() if k == "module"]
            shown = children
            if any(c.__name__ == "ModuleList" for c in type(self).__mro__):
                # as PyTorch's ModuleList: a run of equal children once, (0-11): 12 x Block(...)
                runs: list[list[Any]] = []  # [first name, last name, count, repr]
                for name, text in children:
                    if runs and runs[-1][3] == text:
                        runs[-1][1:3] = [name, runs[-1][2] + 1]
                    else:
                        runs.append([name, name, 1, text])
                shown = [(f"{a}-{b}", f"{n} x {t}") if n > 1 else (a, t) for a, b, n, t in runs]
            for name, text in shown:
                lines.append(f"({name}): " + text.replace("\n", "\n  "))
        finally:
            making.discard(id(self))
        if not children and len(lines) <= 1:
            return f"{type(self).__name__}({extra})"
        return f"{type(self).__name__}(\n  " + "\n  ".join(lines) + "\n)"
