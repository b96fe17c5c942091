"""Optimizer: parameter groups, per-parameter state, zero_grad, step and state_dict.

Subclasses hold only their update rule (``_update``) and hyperparameter checks (``_check``).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from .. import array
from ..autograd import enable_grad
from ..autograd.engine import clear_grad
from ..autograd.handles import RemovableHandle, add_hook
from ..autograd.versions import bump
from ..tensor import Tensor

xp = array.xp


def add_scaled_(p: Any, g: Any, alpha: float) -> None:
    """``p += alpha * g`` in place, never writing to ``g`` (performance.md tells of the
    blocked update this once was, and why it went)."""
    p += alpha * g


def with_step_hooks(step: Callable) -> Callable:
    """``step`` preceded by the optimizer's step pre-hooks and followed by its post-hooks,
    as PyTorch's profile_hook_step: each is called ``hook(optimizer, args, kwargs)`` with
    ``args`` the step's positional arguments, the optimizer first. A step called from inside
    another (a subclass's ``step`` that calls ``super().step()``) runs them once."""

    @functools.wraps(step)
    def hooked(*args: Any, **kwargs: Any) -> Any:
        self = args[0]
        pre, post = self._optimizer_step_pre_hooks, self._optimizer_step_post_hooks
        if not (pre or post) or self._in_hooked_step:
            return step(*args, **kwargs)
        self._in_hooked_step = True
        try:
            for hook in list(pre.values()):
                new = hook(self, args, kwargs)
                if new is not None:
                    if not (isinstance(new, tuple) and len(new) == 2):
                        raise RuntimeError(
                            f"{hook} must return None or a tuple of (new_args, new_kwargs), "
                            f"but got {new}."
                        )
                    args, kwargs = new
            out = step(*args, **kwargs)
            for hook in list(post.values()):
                hook(self, args, kwargs)
            return out
        finally:
            self._in_hooked_step = False

    return hooked


class Optimizer:
    """The base of every optimizer.

    ``params`` is an iterable of Tensors, or of dicts each holding ``"params"`` and the
    options that group overrides (the rest come from ``defaults``). ``param_groups`` is the
    resulting list of dicts; ``state[p]`` is the dict of buffers kept for parameter ``p``.
    Updates act on the parameter's array in place with NumPy, so they record no graph in any
    grad mode, and bump its version: a graph that saved the old values refuses to backward.
    """

    _in_hooked_step = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "step" in cls.__dict__:  # an optimizer with a step of its own runs the hooks too
            cls.step = with_step_hooks(cls.__dict__["step"])  # type: ignore[method-assign]

    def __init__(self, params: Iterable[Any], defaults: dict[str, Any]) -> None:
        self.defaults = dict(defaults)
        self._optimizer_step_pre_hooks: dict[int, Callable] = {}
        self._optimizer_step_post_hooks: dict[int, Callable] = {}
        self.state: dict[Tensor, dict[str, Any]] = {}
        self.param_groups: list[dict[str, Any]] = []
        name = type(self).__name__
        if isinstance(params, Tensor):
            raise TypeError(
                f"{name}: params must be an iterable of Tensors or dicts; got a single Tensor; "
                "wrap it in a list"
            )
        if isinstance(params, (set, frozenset)):
            # A set of Tensors has no stable order, so state_dict indices would change per run.
            raise TypeError(f"{name}: params must be an ordered collection; got a set")
        groups = list(params)
        if not groups:
            raise ValueError(f"{name}: got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    # -- groups ----------------------------------------------------------------------------

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Append a group: its ``"params"`` plus options, the missing ones from defaults."""
        name = type(self).__name__
        if not isinstance(param_group, dict):
            raise TypeError(
                f"{name}: a param group must be a dict; got {type(param_group).__name__}"
            )
        group = dict(param_group)
        params = group.get("params")
        if params is None:
            raise ValueError(
                f"{name}: a param group needs a 'params' entry; got keys {sorted(group)}"
            )
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, (set, frozenset)):
            raise TypeError(f"{name}: params must be an ordered collection; got a set")
        params = list(params)
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError(f"{name}: can only optimize Tensors; got {type(p).__name__}")
            if p.dtype.kind != "f":
                raise TypeError(
                    f"{name}: can only optimize floating-point tensors; got dtype {p.dtype}"
                )
            if not p.is_leaf:
                raise ValueError(
                    f"{name}: cannot optimize a non-leaf tensor; got one made by "
                    f"{p.grad_fn.op if p.grad_fn else '?'}"
                )
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        for p in params:
            if id(p) in seen:
                raise ValueError(
                    f"{name}: a parameter appears more than once in the parameter groups; got "
                    f"shape {p.shape} twice"
                )
            seen.add(id(p))
        group["params"] = params
        for key, value in self.defaults.items():
            group.setdefault(key, value)
        self._check(group)
        self.param_groups.append(group)

    def _check(self, group: dict[str, Any]) -> None:
        """Validate (and normalise to Python numbers) one group's options. PyTorch's
        ``foreach`` and ``fused`` (kernel choices) are kept and change nothing; its
        ``differentiable`` and ``capturable`` (a step autograd records, CUDA graphs) are
        refused when set."""
        name = type(self).__name__
        group["lr"] = check_number(name, "lr", group["lr"])
        require(group["lr"] >= 0, name, "invalid learning rate", group["lr"])
        if group.get("differentiable"):
            raise ValueError(
                f"{name}: differentiable=True is not supported (chainrule's optimizer steps are "
                "not recorded by autograd); leave it False"
            )
        if group.get("capturable"):
            raise ValueError(
                f"{name}: capturable=True is for CUDA graphs, and chainrule computes on the CPU; "
                "leave it False"
            )

    # -- the training loop's calls ---------------------------------------------------------

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget every gradient: ``grad = None`` (the default), or zeros written into it in
        place, as PyTorch (see autograd.engine.clear_grad)."""
        for group in self.param_groups:
            for p in group["params"]:
                clear_grad(p, set_to_none)

    def register_step_pre_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(optimizer, args, kwargs)`` before each ``step``; it may return ``(new_args,
        new_kwargs)`` for the step to use."""
        return add_hook(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(optimizer, args, kwargs)`` after each ``step``."""
        return add_hook(self._optimizer_step_post_hooks, hook)

    @with_step_hooks
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient; returns ``closure()`` if given."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if p.grad._array.shape != p._array.shape:
                    raise ValueError(
                        f"{type(self).__name__}.step: a gradient's shape differs from its "
                        f"parameter's; got shapes {p.grad.shape} and {p.shape}"
                    )
                self._update(p, p._array, p.grad._array, group)
                bump(p)
        return loss

    def _update(self, param: Tensor, p: Any, grad: Any, group: dict[str, Any]) -> None:
        """Update the array ``p`` (param._array) in place from ``grad``; never write to grad."""
        raise NotImplementedError

    # -- checkpoints -----------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """PyTorch's layout: ``{"state": {index: {...}}, "param_groups": [{..., "params":
        [index, ...]}]}``, parameters numbered in group order. Buffers are copies, so the
        dict is a snapshot that later steps leave alone."""
        index: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            packed["params"] = [index.setdefault(id(p), len(index)) for p in group["params"]]
            groups.append(packed)
        params = [p for group in self.param_groups for p in group["params"]]
        state = {
            i: {
                k: Tensor._make(v._array.copy()) if isinstance(v, Tensor) else v
                for k, v in self.state[p].items()
            }
            for i, p in enumerate(params)
            if p in self.state
        }
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore what ``state_dict`` returned (options and buffers, copied in), matching
        parameters by position; floating buffers take their parameter's dtype. A state dict
        of torch.optim's (its tensors as they are, made chainrule Tensors, or through
        cr.save and cr.load) loads too: the layouts and the buffers' names are the same."""
        name = type(self).__name__
        saved = state_dict["param_groups"]
        if len(saved) != len(self.param_groups):
            raise ValueError(
                f"{name}.load_state_dict: the state dict has {len(saved)} parameter groups; the "
                f"optimizer has {len(self.param_groups)}"
            )
        by_index: dict[int, Tensor] = {}
        for i, (old, group) in enumerate(zip(saved, self.param_groups, strict=True)):
            if len(old["params"]) != len(group["params"]):
                raise ValueError(
                    f"{name}.load_state_dict: parameter group {i} holds {len(old['params'])} "
                    f"parameters in the state dict; got {len(group['params'])} in the optimizer"
                )
            by_index.update(zip((int(j) for j in old["params"]), group["params"], strict=True))
            _same_kind(self, old, group)
        state: dict[Tensor, dict[str, Any]] = {}
        for key, buffers in state_dict["state"].items():
            if int(key) not in by_index:
                raise ValueError(
                    f"{name}.load_state_dict: state for parameter {key}, which no group lists"
                )
            p = by_index[int(key)]
            state[p] = {k: _restore(name, int(key), k, v, p) for k, v in buffers.items()}
        groups = []
        for old, group in zip(saved, self.param_groups, strict=True):
            # The saved options over this optimizer's own: a state dict saved before an
            # option existed (maximize, say) keeps the value this optimizer was made with.
            new = {**group, **{k: v for k, v in old.items() if k != "params"}}
            new["params"] = group["params"]
            self._check(new)
            groups.append(new)
        self.state = state
        self.param_groups = groups

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {k}: {group[k]}" for k in sorted(group) if k != "params"]
        return "\n".join([*lines, ")"])


def _optimizers(cls: type) -> Iterator[type]:
    sub: type
    for sub in cls.__subclasses__():
        yield sub
        yield from _optimizers(sub)


def _options(cls: type) -> set[str]:
    """An optimizer's options: its constructor's arguments but params (its groups' keys)."""
    return set(inspect.signature(cls).parameters) - {"params"}


def _same_kind(opt: Optimizer, saved: dict[str, Any], group: dict[str, Any]) -> None:
    """A saved group's options that this optimizer lacks but another optimizer takes mean
    the state dict is that one's (SGD's momentum in Adam: its buffers would be missing at
    the first step). Keys of no optimizer's (an LR scheduler's initial_lr) are kept."""
    mine = type(opt)
    others = [c for c in _optimizers(Optimizer) if not (issubclass(mine, c) or issubclass(c, mine))]
    foreign = (set(saved) - set(group)) & set().union(*map(_options, others))
    if foreign:
        writer = max(others, key=lambda c: len(_options(c) & set(saved))).__name__
        name = mine.__name__
        raise ValueError(
            f"{name}.load_state_dict: the state dict was saved by {writer}, not {name} (its "
            f"parameter groups hold {', '.join(sorted(foreign))}, options {name} does not "
            f"take); load it into {writer}, or let {name} start from its own fresh state"
        )


# Per-parameter state PyTorch keeps as 0-d tensors and chainrule as Python numbers: the step
# count, and NAdam's and ASGD's running scalars.
NUMBERS = {"step": int, "mu_product": float, "eta": float, "mu": float}


def scalar_state(value: float, times: float = 1.0) -> float:
    """A running scalar of an optimizer's state as PyTorch keeps it: a 0-d tensor of the
    default dtype, so rounded to float32 unless the default dtype is float64. With ``times``,
    the product as that tensor's in-place multiply makes it (both factors in its dtype)."""
    kind = array.get_default_dtype().type
    return float(kind(value) * kind(times))


def _restore(name: str, index: int, key: str, value: Any, p: Tensor) -> Any:
    """One buffer from a state dict, copied, in the parameter's dtype and checked in shape."""
    if key in NUMBERS:
        return NUMBERS[key](value.item() if hasattr(value, "item") else value)
    if isinstance(value, Tensor):
        value = value._array
    elif hasattr(value, "__array__") and not isinstance(value, array.ndarray):
        value = xp.asarray(value)  # another framework's tensor: torch.optim's own state_dict()
    if not isinstance(value, array.ndarray):
        return value
    if value.shape != p.shape:
        raise ValueError(
            f"{name}.load_state_dict: buffer {key!r} of parameter {index} does not match the "
            f"parameter's shape; got shapes {value.shape} and {p.shape}"
        )
    dtype = p.dtype if value.dtype.kind == "f" else value.dtype
    moved = array.on_device_of(value, p._array, dtype)  # on the parameter's device, as PyTorch
    return Tensor._make(moved.copy() if moved is value else moved)


def check_number(op: str, what: str, value: Any) -> float:
    """A hyperparameter as a Python float, so NumPy keeps float32 buffers float32."""
    if isinstance(value, bool) or not isinstance(value, (int, float, xp.number)):
        raise TypeError(f"{op}: {what} must be a number; got {type(value).__name__}")
    return float(value)


def penalized(p: Any, grad: Any, group: dict[str, Any]) -> Any:
    """The gradient an update follows, PyTorch's first lines of every rule: negated with
    ``maximize``, then the weight decay λ, decoupled (p shrunk in place by 1 - γλ, as AdamW)
    where the group says so, else the L2 term λp added to it."""
    if group["maximize"]:
        grad = -grad
    decay = group.get("weight_decay", 0)
    if decay and group.get("decoupled_weight_decay"):
        p *= 1 - group["lr"] * decay
    elif decay:
        grad = grad + decay * p
    return grad


def check_betas(op: str, group: dict[str, Any]) -> None:
    """A group's ``betas``: a pair of numbers, each in [0, 1), made Python floats."""
    betas = group["betas"]
    if not isinstance(betas, (tuple, list)) or len(betas) != 2:
        raise ValueError(f"{op}: betas must be a pair of numbers; got {betas!r}")
    group["betas"] = tuple(check_number(op, "betas", b) for b in betas)
    for i, beta in enumerate(group["betas"]):
        require(0 <= beta < 1, op, f"invalid beta parameter at index {i}", beta)


def check_nonnegative(op: str, group: dict[str, Any], *keys: str) -> None:
    """Each named option of a group a number at least 0, made a Python float."""
    for key in keys:
        group[key] = check_number(op, key, group[key])
        require(group[key] >= 0, op, f"invalid {key} value", group[key])


def require(ok: bool, op: str, what: str, value: Any) -> None:
    if not ok:
        raise ValueError(f"{op}: {what}; got {value}")
