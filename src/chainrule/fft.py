"""chainrule.fft, PyTorch's torch.fft: the shifts and the sample frequencies, which are real;
the transforms themselves make or take complex tensors, which chainrule does not have yet,
so each refuses by name."""

from __future__ import annotations

from typing import Any

from . import array
from .array import xp
from .tensor import Tensor, as_tensor


def _dims(x: Tensor, dim: Any) -> tuple[int, ...]:
    if dim is None:
        return tuple(range(x.ndim))
    return (dim,) if isinstance(dim, int) else tuple(dim)


def fftshift(input: Any, dim: Any = None) -> Tensor:
    """The zero frequency moved to the centre: a roll by n // 2 along each dim (every dim
    for None)."""
    x = input if isinstance(input, Tensor) else as_tensor(input)
    dims = _dims(x, dim)
    return x.roll([x.shape[d] // 2 for d in dims], dims) if dims else x.clone()


def ifftshift(input: Any, dim: Any = None) -> Tensor:
    """fftshift's inverse: a roll by -(n // 2) along each dim, given as PyTorch's node
    keeps it, (n + 1) // 2."""
    x = input if isinstance(input, Tensor) else as_tensor(input)
    dims = _dims(x, dim)
    return x.roll([(x.shape[d] + 1) // 2 for d in dims], dims) if dims else x.clone()


def _frequencies(values: Any, dtype: Any, requires_grad: bool) -> Tensor:
    """Frequencies (a float64 array) as a Tensor of ``dtype``, the default one for None."""
    t = as_tensor(xp.asarray(values, dtype=array.get_default_dtype()))
    return (t if dtype is None else t.to(dtype)).requires_grad_(requires_grad)


def fftfreq(
    n: int,
    d: float = 1.0,
    *,
    out: Any = None,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """The sample frequencies of an n-point transform with spacing d: [0, 1, ..., -1] / (d n)."""
    return _frequencies(xp.fft.fftfreq(n, d), dtype, requires_grad)


def rfftfreq(
    n: int,
    d: float = 1.0,
    *,
    out: Any = None,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """The sample frequencies of rfft's n // 2 + 1 outputs: [0, 1, ..., n // 2] / (d n)."""
    return _frequencies(xp.fft.rfftfreq(n, d), dtype, requires_grad)


def _complex(name: str) -> Any:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise TypeError(
            f"fft.{name}: complex tensors are not supported yet (the transform's input or "
            "output is complex)"
        )

    refuse.__name__ = refuse.__qualname__ = name
    refuse.__doc__ = f"Refused: torch.fft.{name} makes or takes complex tensors."
    return refuse


fft, ifft, fft2, ifft2, fftn, ifftn = (
    _complex(n) for n in ("fft", "ifft", "fft2", "ifft2", "fftn", "ifftn")
)
rfft, irfft, rfft2, irfft2, rfftn, irfftn = (
    _complex(n) for n in ("rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn")
)
hfft, ihfft, hfft2, ihfft2, hfftn, ihfftn = (
    _complex(n) for n in ("hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn")
)

__all__ = [
    "fft",
    "fft2",
    "fftfreq",
    "fftn",
    "fftshift",
    "hfft",
    "hfft2",
    "hfftn",
    "ifft",
    "ifft2",
    "ifftn",
    "ifftshift",
    "ihfft",
    "ihfft2",
    "ihfftn",
    "irfft",
    "irfft2",
    "irfftn",
    "rfft",
    "rfft2",
    "rfftfreq",
    "rfftn",
]
