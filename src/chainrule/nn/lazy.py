"""The lazy modules, as PyTorch's: LazyLinear, LazyConv1d/2d/3d, LazyConvTranspose1d/2d/3d
and LazyBatchNorm1d/2d/3d read their input size (in_features, in_channels, num_features)
from the first input, or from the shapes of a state_dict loaded into them. Until then their
parameters are uninitialized (parameter.py); materialized, each becomes its concrete class
(a LazyLinear a Linear). The layers themselves are in layers.py, conv.py and
normalization.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import array
from ..tensor import Tensor
from . import conv, normalization
from .layers import Linear
from .module import Module
from .parameter import UninitializedBuffer, UninitializedParameter, is_lazy

__all__ = [
    "LazyBatchNorm1d",
    "LazyBatchNorm2d",
    "LazyBatchNorm3d",
    "LazyConv1d",
    "LazyConv2d",
    "LazyConv3d",
    "LazyConvTranspose1d",
    "LazyConvTranspose2d",
    "LazyConvTranspose3d",
    "LazyLinear",
    "LazyModuleMixin",
]

xp = array.xp


def _uninitialized(t: Any, kind: type = UninitializedParameter) -> Any:
    """An uninitialized stand-in for ``t`` (None stays None), with its dtype, device and
    requires_grad."""
    if t is None:
        return None
    u = kind(t.requires_grad)
    u._array = xp.empty(0, dtype=t._array.dtype, like=t._array)
    return u


class LazyModuleMixin:
    """What the lazy modules share. A subclass says how the input size is read from an
    input (``_in_size``) or from the shapes of loaded state (``_size_in_state``), and which
    shapes its parameters and buffers take for that size (``_materialize``)."""

    cls_to_become: type[Module]

    def has_uninitialized_params(self) -> bool:
        return any(is_lazy(t) for t in vars(self).values())

    def reset_parameters(self) -> None:
        """Nothing to draw before the shapes are known; materializing draws them."""

    def initialize_parameters(self, input: Tensor) -> None:
        """Materialize for ``input``'s size and draw the initial values, as the concrete
        class's ``reset_parameters``."""
        if self.has_uninitialized_params():
            self._become(self._in_size(input))
            self.reset_parameters()  # the concrete class's now

    def forward(self, input: Tensor, *args: Any, **kwargs: Any) -> Any:
        self.initialize_parameters(input)
        return self.forward(input, *args, **kwargs)  # the concrete class's forward

    def _materialize_from(self, state_dict: Mapping[str, Any], prefix: str) -> None:
        """load_state_dict's first step: shapes from the values this module is given (a
        value that is uninitialized, or empty as one saved to a file comes back, gives none);
        the values are copied after."""
        shapes = {}
        for name, t in vars(self).items():
            value = state_dict.get(f"{prefix}.{name}" if prefix else name)
            if is_lazy(t) and value is not None and not is_lazy(value) and value.numel():
                shapes[name] = tuple(value.shape)
        if shapes:
            self._become(self._size_in_state(shapes))

    def _become(self, n: int) -> None:
        for name, shape in self._materialize(n).items():
            t = getattr(self, name)
            if is_lazy(t):
                t.materialize(shape)
        self.__class__ = self.cls_to_become  # type: ignore[assignment]

    def _in_size(self, input: Tensor) -> int:
        raise NotImplementedError

    def _size_in_state(self, shapes: dict[str, tuple[int, ...]]) -> int:
        raise NotImplementedError

    def _materialize(self, n: int) -> dict[str, tuple[int, ...]]:
        """Set the size attribute to ``n``; the shapes of the members for it, by name."""
        raise NotImplementedError


class LazyLinear(LazyModuleMixin, Linear):
    """A Linear whose in_features is the last dim of its first input."""

    cls_to_become = Linear

    def __init__(
        self, out_features: int, bias: bool = True, device: Any = None, dtype: Any = None
    ) -> None:
        super().__init__(0, out_features, bias, device, dtype)
        self.weight = _uninitialized(self.weight)
        if self.bias is not None:
            self.bias = _uninitialized(self.bias)

    def _in_size(self, input: Tensor) -> int:
        if not input.shape:
            raise ValueError(f"LazyLinear: expected input with a last dim; got shape {input.shape}")
        return int(input.shape[-1])

    def _size_in_state(self, shapes: dict[str, tuple[int, ...]]) -> int:
        return shapes["weight"][1] if "weight" in shapes else 0

    def _materialize(self, n: int) -> dict[str, tuple[int, ...]]:
        self.in_features = n
        return {"weight": (self.out_features, n), "bias": (self.out_features,)}


class _LazyConvNd(LazyModuleMixin):
    """A convolution whose in_channels is the channel dim of its first input (dim 1, or 0
    unbatched)."""

    in_channels: int
    out_channels: int
    groups: int
    kernel_size: tuple[int, ...]
    weight: Any
    bias: Any

    def __init__(
        self,
        out_channels: int,
        kernel_size: Any,
        stride: Any = 1,
        padding: Any = 0,
        dilation: Any = 1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        # groups in_channels stand in until the input says how many (any multiple is valid)
        super().__init__(  # type: ignore[call-arg]
            groups, out_channels, kernel_size, stride, padding, dilation, groups, bias,
            padding_mode, device, dtype,
        )  # fmt: skip
        self.in_channels = 0
        self.weight = _uninitialized(self.weight)
        if self.bias is not None:
            self.bias = _uninitialized(self.bias)

    def _in_size(self, input: Tensor) -> int:
        k = len(self.kernel_size)
        if input.ndim not in (k + 1, k + 2):
            raise ValueError(
                f"{type(self).__name__}: expected {k + 1}D (unbatched) or {k + 2}D (batched) "
                f"input; got shape {input.shape}"
            )
        return int(input.shape[input.ndim - k - 1])

    def _size_in_state(self, shapes: dict[str, tuple[int, ...]]) -> int:
        return shapes["weight"][1] * self.groups if "weight" in shapes else 0

    def _materialize(self, n: int) -> dict[str, tuple[int, ...]]:
        if n % self.groups:
            raise ValueError(
                f"{type(self).__name__}: groups={self.groups} must divide in_channels; got "
                f"{n} input channels"
            )
        self.in_channels = n
        out = self.out_channels
        return {"weight": (out, n // self.groups, *self.kernel_size), "bias": (out,)}


class LazyConv1d(_LazyConvNd, conv.Conv1d):
    """A Conv1d whose in_channels is read from its first input."""

    cls_to_become = conv.Conv1d


class LazyConv2d(_LazyConvNd, conv.Conv2d):
    """A Conv2d whose in_channels is read from its first input."""

    cls_to_become = conv.Conv2d


class LazyConv3d(_LazyConvNd, conv.Conv3d):
    """A Conv3d whose in_channels is read from its first input."""

    cls_to_become = conv.Conv3d


class _LazyConvTransposeNd(_LazyConvNd):
    """A transposed convolution whose in_channels is read from its first input; its weight
    is (in_channels, out_channels/groups, *kernel)."""

    def __init__(
        self,
        out_channels: int,
        kernel_size: Any,
        stride: Any = 1,
        padding: Any = 0,
        output_padding: Any = 0,
        groups: int = 1,
        bias: bool = True,
        dilation: Any = 1,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        # _ConvTransposeNd's order of arguments, reached past _LazyConvNd's
        super(_LazyConvNd, self).__init__(  # type: ignore[call-arg]
            groups, out_channels, kernel_size, stride, padding, output_padding, groups, bias,
            dilation, padding_mode, device, dtype,
        )  # fmt: skip
        self.in_channels = 0
        self.weight = _uninitialized(self.weight)
        if self.bias is not None:
            self.bias = _uninitialized(self.bias)

    def _size_in_state(self, shapes: dict[str, tuple[int, ...]]) -> int:
        return shapes["weight"][0] if "weight" in shapes else 0

    def _materialize(self, n: int) -> dict[str, tuple[int, ...]]:
        shapes = super()._materialize(n)
        out = self.out_channels
        return {**shapes, "weight": (n, out // self.groups, *self.kernel_size)}


class LazyConvTranspose1d(_LazyConvTransposeNd, conv.ConvTranspose1d):
    """A ConvTranspose1d whose in_channels is read from its first input."""

    cls_to_become = conv.ConvTranspose1d


class LazyConvTranspose2d(_LazyConvTransposeNd, conv.ConvTranspose2d):
    """A ConvTranspose2d whose in_channels is read from its first input."""

    cls_to_become = conv.ConvTranspose2d


class LazyConvTranspose3d(_LazyConvTransposeNd, conv.ConvTranspose3d):
    """A ConvTranspose3d whose in_channels is read from its first input."""

    cls_to_become = conv.ConvTranspose3d


class _LazyBatchNorm(LazyModuleMixin, normalization._BatchNorm):
    """A batch normalisation whose num_features is the channel dim (1) of its first input;
    num_batches_tracked is a plain buffer from the start, as PyTorch's."""

    cls_to_become: type[normalization._BatchNorm]

    def __init__(
        self,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(0, eps, momentum, affine, track_running_stats, device, dtype)
        self.weight = _uninitialized(self.weight)
        self.bias = _uninitialized(self.bias)
        self.running_mean = _uninitialized(self.running_mean, UninitializedBuffer)
        self.running_var = _uninitialized(self.running_var, UninitializedBuffer)

    def _in_size(self, input: Tensor) -> int:
        become = self.cls_to_become
        if input.ndim not in become._shapes:
            raise ValueError(
                f"{type(self).__name__}: expected input of shape {become._layout}; got shape "
                f"{input.shape}"
            )
        return int(input.shape[1])

    def _size_in_state(self, shapes: dict[str, tuple[int, ...]]) -> int:
        return next(iter(shapes.values()))[0]  # each member is (num_features,)

    def _materialize(self, n: int) -> dict[str, tuple[int, ...]]:
        self.num_features = n
        return dict.fromkeys(("weight", "bias", "running_mean", "running_var"), (n,))


class LazyBatchNorm1d(_LazyBatchNorm):
    """A BatchNorm1d whose num_features is read from its first input."""

    cls_to_become = normalization.BatchNorm1d


class LazyBatchNorm2d(_LazyBatchNorm):
    """A BatchNorm2d whose num_features is read from its first input."""

    cls_to_become = normalization.BatchNorm2d


class LazyBatchNorm3d(_LazyBatchNorm):
    """A BatchNorm3d whose num_features is read from its first input."""

    cls_to_become = normalization.BatchNorm3d
