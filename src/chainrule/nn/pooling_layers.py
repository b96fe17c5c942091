"""The pooling layers: each keeps PyTorch's attributes (sizes as given, or as tuples where
PyTorch's class makes them so, for an equal repr) and calls its function in pooling.py.
"""

from __future__ import annotations

from typing import Any

from ..tensor import Tensor
from .module import Module
from .pooling import (
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_avg_pool3d,
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    adaptive_max_pool3d,
    avg_pool1d,
    avg_pool2d,
    avg_pool3d,
    lp_pool1d,
    lp_pool2d,
    lp_pool3d,
    max_pool1d,
    max_pool2d,
    max_pool3d,
    max_unpool1d,
    max_unpool2d,
    max_unpool3d,
    stride_given,
)
from .spatial_args import check_positive, ntuple


class _PoolNd(Module):
    """What the max and average pools share: checks at construction, sizes kept as given
    (an int stays an int) unless the class stores them as tuples, as PyTorch's."""

    _spatial = 2
    _as_tuples = False  # AvgPool1d keeps 1-tuples, as PyTorch's

    def __init__(self, kernel_size: Any, stride: Any, padding: Any) -> None:
        super().__init__()
        layer, n = type(self).__name__, self._spatial  # checked here, not at the first forward
        check_positive(ntuple(kernel_size, n, layer, "kernel_size"), layer, "kernel_size")
        if stride_given(stride):  # (), [] and None are the kernel_size
            check_positive(ntuple(stride, n, layer, "stride"), layer, "stride")
        if any(p < 0 for p in ntuple(padding, n, layer, "padding")):
            raise ValueError(f"{layer}: padding must be non-negative; got {padding!r}")
        stride = kernel_size if stride is None else stride
        if self._as_tuples:
            kernel_size, stride, padding = (
                ntuple(v, n, layer, "size") for v in (kernel_size, stride, padding)
            )
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class _MaxPoolNd(_PoolNd):
    """The max of each window; with ``return_indices``, forward returns (output, indices)."""

    _fn: Any = None

    def __init__(
        self,
        kernel_size: int | tuple[int, ...],
        stride: int | tuple[int, ...] | None = None,
        padding: int | tuple[int, ...] = 0,
        dilation: int | tuple[int, ...] = 1,
        return_indices: bool = False,
        ceil_mode: bool = False,
    ) -> None:
        super().__init__(kernel_size, stride, padding)
        self.dilation, self.return_indices, self.ceil_mode = dilation, return_indices, ceil_mode

    def forward(self, input: Tensor) -> Any:
        return type(self)._fn(
            input, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode,
            self.return_indices,
        )  # fmt: skip

    def extra_repr(self) -> str:
        return f"{super().extra_repr()}, dilation={self.dilation}, ceil_mode={self.ceil_mode}"


class MaxPool1d(_MaxPoolNd):
    """The max of each window of (N, C, L) (see ``max_pool1d``)."""

    _spatial, _fn = 1, staticmethod(max_pool1d)


class MaxPool2d(_MaxPoolNd):
    """The max of each window of (N, C, H, W) (see ``max_pool2d``)."""

    _spatial, _fn = 2, staticmethod(max_pool2d)


class MaxPool3d(_MaxPoolNd):
    """The max of each window of (N, C, D, H, W) (see ``max_pool3d``)."""

    _spatial, _fn = 3, staticmethod(max_pool3d)


class AvgPool1d(_PoolNd):
    """The mean of each window of (N, C, L) (see ``avg_pool1d``)."""

    _spatial, _as_tuples = 1, True

    def __init__(
        self,
        kernel_size: int | tuple[int],
        stride: int | tuple[int] | None = None,
        padding: int | tuple[int] = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
    ) -> None:
        super().__init__(kernel_size, stride, padding)
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def forward(self, input: Tensor) -> Tensor:
        return avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                          self.count_include_pad)  # fmt: skip


class _AvgPoolNd(_PoolNd):
    _fn: Any = None

    def __init__(
        self,
        kernel_size: int | tuple[int, ...],
        stride: int | tuple[int, ...] | None = None,
        padding: int | tuple[int, ...] = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
        divisor_override: int | None = None,
    ) -> None:
        super().__init__(kernel_size, stride, padding)
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input: Tensor) -> Tensor:
        return type(self)._fn(
            input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
            self.count_include_pad, self.divisor_override,
        )  # fmt: skip


class AvgPool2d(_AvgPoolNd):
    """The mean of each window of (N, C, H, W) (see ``avg_pool2d``)."""

    _spatial, _fn = 2, staticmethod(avg_pool2d)


class AvgPool3d(_AvgPoolNd):
    """The mean of each window of (N, C, D, H, W) (see ``avg_pool3d``)."""

    _spatial, _fn = 3, staticmethod(avg_pool3d)


class _AdaptiveAvgPoolNd(Module):
    _fn: Any = None

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        return type(self)._fn(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    """Average pooling to a fixed output length (see ``adaptive_avg_pool1d``)."""

    _fn = staticmethod(adaptive_avg_pool1d)


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    """Average pooling to a fixed output size (see ``adaptive_avg_pool2d``)."""

    _fn = staticmethod(adaptive_avg_pool2d)


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    """Average pooling to a fixed output size (see ``adaptive_avg_pool3d``)."""

    _fn = staticmethod(adaptive_avg_pool3d)


class _AdaptiveMaxPoolNd(_AdaptiveAvgPoolNd):
    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__(output_size)
        self.return_indices = return_indices

    def forward(self, input: Tensor) -> Any:
        return type(self)._fn(input, self.output_size, self.return_indices)


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """Max pooling to a fixed output length (see ``adaptive_max_pool1d``)."""

    _fn = staticmethod(adaptive_max_pool1d)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """Max pooling to a fixed output size (see ``adaptive_max_pool2d``)."""

    _fn = staticmethod(adaptive_max_pool2d)


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """Max pooling to a fixed output size (see ``adaptive_max_pool3d``)."""

    _fn = staticmethod(adaptive_max_pool3d)


class _MaxUnpoolNd(Module):
    """The partial inverse of a max pool: ``forward(input, indices, output_size=None)``."""

    _spatial = 1
    _fn: Any = None

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        super().__init__()
        layer, n = type(self).__name__, self._spatial
        self.kernel_size = ntuple(kernel_size, n, layer, "kernel_size")
        self.stride = ntuple(kernel_size if stride is None else stride, n, layer, "stride")
        self.padding = ntuple(padding, n, layer, "padding")

    def forward(self, input: Tensor, indices: Tensor, output_size: Any = None) -> Tensor:
        return type(self)._fn(input, indices, self.kernel_size, self.stride, self.padding,
                              output_size)  # fmt: skip

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """The partial inverse of MaxPool1d (see ``max_unpool1d``)."""

    _spatial, _fn = 1, staticmethod(max_unpool1d)


class MaxUnpool2d(_MaxUnpoolNd):
    """The partial inverse of MaxPool2d (see ``max_unpool2d``)."""

    _spatial, _fn = 2, staticmethod(max_unpool2d)


class MaxUnpool3d(_MaxUnpoolNd):
    """The partial inverse of MaxPool3d (see ``max_unpool3d``)."""

    _spatial, _fn = 3, staticmethod(max_unpool3d)


class _LPPoolNd(Module):
    _fn: Any = None

    def __init__(self, norm_type: float, kernel_size: Any, stride: Any = None,
                 ceil_mode: bool = False) -> None:  # fmt: skip
        super().__init__()
        self.norm_type, self.kernel_size = norm_type, kernel_size
        self.stride, self.ceil_mode = stride, ceil_mode

    def forward(self, input: Tensor) -> Tensor:
        return type(self)._fn(input, self.norm_type, self.kernel_size, self.stride,
                              self.ceil_mode)  # fmt: skip

    def extra_repr(self) -> str:
        return (
            f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
            f"ceil_mode={self.ceil_mode}"
        )


class LPPool1d(_LPPoolNd):
    """The p-norm of each window of (N, C, L) (see ``lp_pool1d``)."""

    _fn = staticmethod(lp_pool1d)


class LPPool2d(_LPPoolNd):
    """The p-norm of each window of (N, C, H, W) (see ``lp_pool2d``)."""

    _fn = staticmethod(lp_pool2d)


class LPPool3d(_LPPoolNd):
    """The p-norm of each window of (N, C, D, H, W) (see ``lp_pool3d``)."""

    _fn = staticmethod(lp_pool3d)


__all__ = [
    "MaxPool1d",
    "MaxPool2d",
    "MaxPool3d",
    "AvgPool1d",
    "AvgPool2d",
    "AvgPool3d",
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d",
    "AdaptiveAvgPool3d",
    "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d",
    "AdaptiveMaxPool3d",
    "MaxUnpool1d",
    "MaxUnpool2d",
    "MaxUnpool3d",
    "LPPool1d",
    "LPPool2d",
    "LPPool3d",
]
