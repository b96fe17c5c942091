"""torch.amp's names on a CPU: ``autocast`` and ``GradScaler``.

``autocast`` with ``enabled=False`` is a pass-through, so a script that switches mixed
precision on only for CUDA runs unchanged. chainrule has no mixed precision: on the CPU with
bfloat16 or float16 it is refused with an error that says so (every op computes in its
inputs' dtype), and on CUDA with the one CPU error of chainrule.array.devices.

``GradScaler`` is PyTorch's loss scaling. For ``device="cpu"`` it is PyTorch's CPU
GradScaler step for step: the loss is multiplied by the scale, ``unscale_`` divides the
gradients by it and looks for inf and NaN, ``step`` skips the optimizer's step when it finds
any, and ``update`` backs the scale off after such a step or grows it after
``growth_interval`` clean ones. For ``device="cuda"`` (its default, as in PyTorch) it warns
that it is disabled and passes everything through, as PyTorch's does where CUDA is missing.
``enabled=False`` passes everything through on either.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

from . import array
from .array import TYPES, no_cuda
from .tensor import Tensor

xp = array.xp

__all__ = ["GradScaler", "autocast"]


class autocast:  # noqa: N801 (PyTorch's name: torch.autocast)
    """PyTorch's ``torch.autocast(device_type, dtype=None, enabled=True,
    cache_enabled=None)``, as a block or a decorator.

    ``enabled=False``: nothing changes (a pass-through). Enabled, on 'cuda' or another
    accelerator: refused, chainrule computes on the CPU. Enabled on 'cpu' with bfloat16
    (PyTorch's default there) or float16: refused, chainrule has no mixed precision. A
    float32 or float64 dtype on 'cpu' is a pass-through with PyTorch's warning (PyTorch
    disables CPU autocast for those dtypes too).
    """

    def __init__(
        self,
        device_type: str,
        dtype: Any = None,
        enabled: bool = True,
        cache_enabled: bool | None = None,
    ) -> None:
        if not isinstance(device_type, str) or device_type not in TYPES:
            raise ValueError(
                f"autocast: device_type must be a device type such as 'cpu' or 'cuda'; got "
                f"{device_type!r}"
            )
        self.device_type = device_type
        self.fast_dtype = array.bfloat16 if dtype is None else array.as_dtype(dtype)
        self._enabled = bool(enabled)
        if not self._enabled:
            return
        if device_type != "cpu":
            no_cuda("autocast", f"device_type {device_type!r} (chainrule has no mixed precision)")
        if self.fast_dtype in (array.bfloat16, array.float16):
            raise NotImplementedError(
                f"autocast: chainrule has no mixed precision; got device_type='cpu' and dtype "
                f"{self.fast_dtype} (every op computes in its inputs' dtype: leave autocast out, "
                "or pass enabled=False)"
            )
        warnings.warn(
            "autocast: CPU autocast only supports dtype bfloat16 or float16; got "
            f"{self.fast_dtype}, so it is disabled",
            UserWarning,
            stacklevel=2,
        )
        self._enabled = False

    def __enter__(self) -> autocast:
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def __call__(self, fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            with self:
                return fn(*args, **kwargs)

        return wrapped


class GradScaler:
    """PyTorch's ``torch.amp.GradScaler(device="cuda", init_scale=2.0**16,
    growth_factor=2.0, backoff_factor=0.5, growth_interval=2000, enabled=True)``; see the
    module's docstring for what it does on 'cpu' and 'cuda'.

    The scale is a float32 number, as PyTorch keeps it; ``get_scale()`` gives it as a Python
    float (1.0 when disabled) and ``state_dict()`` saves it with the growth tracker.
    """

    def __init__(
        self,
        device: str = "cuda",
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        self._device = str(device)
        self._enabled = bool(enabled)
        if self._enabled and self._device.partition(":")[0] != "cpu":
            warnings.warn(
                f"GradScaler: chainrule computes on the CPU, so a GradScaler for device "
                f"{self._device!r} is disabled (scale() returns the loss, step() calls "
                "optimizer.step()); pass device='cpu' for loss scaling",
                UserWarning,
                stacklevel=2,
            )
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise ValueError(f"GradScaler: growth_factor must be > 1.0; got {growth_factor}")
            if backoff_factor >= 1.0:
                raise ValueError(f"GradScaler: backoff_factor must be < 1.0; got {backoff_factor}")
        self._scale = xp.float32(init_scale)
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._growth_tracker = 0
        self._states: dict[int, dict[str, Any]] = {}  # per optimizer: stage and found_inf

    def is_enabled(self) -> bool:
        return self._enabled

    def _state(self, optimizer: Any) -> dict[str, Any]:
        return self._states.setdefault(id(optimizer), {"stage": "ready", "found_inf": None})

    def scale(self, outputs: Any) -> Any:
        """``outputs`` (a Tensor, or lists, tuples and dicts of them) times the scale;
        as it is when disabled."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            scale = xp.asarray(self._scale, dtype=array.float32, like=outputs._array)
            return outputs * Tensor._make(scale)
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        if isinstance(outputs, dict):
            return {k: self.scale(v) for k, v in outputs.items()}
        raise TypeError(
            f"GradScaler.scale: outputs must be Tensors or lists, tuples or dicts of them; got "
            f"{type(outputs).__name__}"
        )

    def unscale_(self, optimizer: Any) -> None:
        """Divide the optimizer's gradients by the scale (multiply by its float32
        reciprocal, as PyTorch) and note whether any is inf or NaN. Once per step."""
        if not self._enabled:
            return
        state = self._state(optimizer)
        if state["stage"] == "unscaled":
            raise RuntimeError(
                "GradScaler.unscale_: already called on this optimizer since the last update()"
            )
        if state["stage"] == "stepped":
            raise RuntimeError("GradScaler.unscale_: called after step()")
        inv = xp.float32(1.0 / float(self._scale))  # the reciprocal in float64, as PyTorch
        found = False
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                g = p.grad._array
                if g.dtype == array.float16:
                    raise ValueError("GradScaler.unscale_: attempting to unscale float16 gradients")
                unscaled = g * inv.astype(g.dtype)
                found = found or not bool(xp.isfinite(unscaled).all())
                p.grad = Tensor._make(unscaled)  # a new array: a grad may be a read-only view
        state["found_inf"], state["stage"] = found, "unscaled"

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """Unscale (unless done), then ``optimizer.step(*args, **kwargs)`` unless a gradient
        was inf or NaN; returns what step returned (None when skipped)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("GradScaler.step: a closure is not supported while enabled")
        state = self._state(optimizer)
        if state["stage"] == "stepped":
            raise RuntimeError("GradScaler.step: already called since the last update()")
        if state["stage"] == "ready":
            self.unscale_(optimizer)
        out = None if state["found_inf"] else optimizer.step(*args, **kwargs)
        state["stage"] = "stepped"
        return out

    def update(self, new_scale: Any = None) -> None:
        """Back the scale off (times backoff_factor) if any optimizer met inf or NaN since
        the last update, else count a clean step and grow it (times growth_factor) every
        growth_interval of them; or set it to ``new_scale``."""
        if not self._enabled:
            return
        if new_scale is not None:
            value = new_scale.item() if isinstance(new_scale, Tensor) else new_scale
            self._scale = xp.float32(value)
        else:
            checked = [s["found_inf"] for s in self._states.values() if s["found_inf"] is not None]
            if not checked:
                raise RuntimeError("GradScaler.update: no inf checks were recorded before it")
            if any(checked):
                self._scale = xp.float32(self._scale * xp.float32(self._backoff_factor))
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    with array.errstate(over="ignore"):  # inf: not taken, as PyTorch
                        grown = xp.float32(self._scale * xp.float32(self._growth_factor))
                    if xp.isfinite(grown):
                        self._scale = grown
                    self._growth_tracker = 0
        self._states = {}

    def get_scale(self) -> float:
        return float(self._scale) if self._enabled else 1.0

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = int(new_interval)

    def state_dict(self) -> dict[str, Any]:
        """PyTorch's keys; empty when disabled."""
        if not self._enabled:
            return {}
        return {
            "scale": self.get_scale(),
            "growth_factor": self._growth_factor,
            "backoff_factor": self._backoff_factor,
            "growth_interval": self._growth_interval,
            "_growth_tracker": self._growth_tracker,
        }

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        if not self._enabled:
            return
        if not state_dict:
            raise RuntimeError(
                "GradScaler.load_state_dict: the state dict is empty, possibly saved from a "
                "disabled GradScaler"
            )
        self._scale = xp.float32(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])
