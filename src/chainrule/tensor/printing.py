"""The Tensor's repr as PyTorch prints it (the rules of torch/_tensor_str.py): the print options,
one format for all of a tensor's entries, the summary past the threshold, and the suffixes
(device, size, dtype, grad_fn). The Tensor's __repr__ in core.py calls tensor_repr."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .. import array

__all__ = ["get_printoptions", "printoptions", "set_printoptions"]


@dataclasses.dataclass
class _Options:
    precision: int = 4  # decimals of a float (in both notations)
    threshold: float = 1000  # more elements than this: summarised
    edgeitems: int = 3  # entries shown at each end of each dim of a summary
    linewidth: int = 80  # entries per line: as many as fit
    sci_mode: bool | None = None  # None: chosen per tensor by its magnitudes


OPTIONS = _Options()

_PROFILES: dict[str, dict[str, Any]] = {
    "default": {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80},
    "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
    "full": {"precision": 4, "threshold": math.inf, "edgeitems": 3, "linewidth": 80},
}


def set_printoptions(
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: bool | None = None,
) -> None:
    """PyTorch's print options: ``profile`` ('default', 'short', 'full') first, then each
    option given; ``sci_mode`` is set by every call (None: scientific notation where a
    tensor's magnitudes ask for it)."""
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(
                f"set_printoptions: profile must be one of {sorted(_PROFILES)}; got {profile!r}"
            )
        for name, value in _PROFILES[profile].items():
            setattr(OPTIONS, name, value)
    for name, value in (
        ("precision", precision),
        ("threshold", threshold),
        ("edgeitems", edgeitems),
        ("linewidth", linewidth),
    ):
        if value is not None:
            setattr(OPTIONS, name, value)
    OPTIONS.sci_mode = sci_mode


def get_printoptions() -> dict[str, Any]:
    """The print options, as keywords ``set_printoptions`` takes."""
    return dataclasses.asdict(OPTIONS)


@contextmanager
def printoptions(**options: Any) -> Iterator[None]:
    """Print with these options (``set_printoptions``'s keywords) inside the block."""
    old = get_printoptions()
    set_printoptions(**options)
    try:
        yield
    finally:
        set_printoptions(**old)


class _Formatter:
    """One format and width for every entry of a tensor, chosen from the entries shown: ints
    and bools as Python prints them; floats with ``precision`` decimals, as ``3.`` where every
    finite entry is whole, or in scientific notation where the nonzero finite magnitudes span
    over 1000x, pass 1e8 or go below 1e-4. nan and inf take the width, not part in it."""

    def __init__(self, shown: Any) -> None:  # shown: a host array (float64 for any float)
        self.floating = shown.dtype.kind == "f"
        self.int_mode, self.sci_mode, self.width = True, False, 1
        if not self.floating:
            self.width = max([len(str(v)) for v in shown.ravel().tolist()], default=1)
            return
        hp = array.host
        values = shown[hp.isfinite(shown) & (shown != 0)]
        if values.size == 0:
            return
        mags = hp.abs(values)
        lo, hi = mags.min(), mags.max()
        self.int_mode = bool(hp.all(values == hp.ceil(values)))
        sci = OPTIONS.sci_mode
        self.sci_mode = bool(hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4) if sci is None else sci
        p = OPTIONS.precision
        if self.sci_mode:
            self.width = max(len(f"{v:.{p}e}") for v in values.tolist())
        elif self.int_mode:
            self.width = max(len(f"{v:.0f}") + 1 for v in values.tolist())  # and the "."
        else:
            self.width = max(len(f"{v:.{p}f}") for v in values.tolist())

    def format(self, value: Any) -> str:
        if not self.floating:
            text = f"{value}"
        elif self.sci_mode:
            text = f"{value:{self.width}.{OPTIONS.precision}e}"
        elif self.int_mode:
            text = f"{value:.0f}" + ("" if math.isinf(value) or math.isnan(value) else ".")
        else:
            text = f"{value:.{OPTIONS.precision}f}"
        return text.rjust(self.width)


def _summarised(a: Any) -> Any:
    """The entries a summary shows: ``edgeitems`` at each end of every dim longer than twice
    that (with none, nothing of a tensor of 2 or more dims; of a 1-D one, all, as PyTorch)."""
    e = OPTIONS.edgeitems
    if not e:
        return a if a.ndim <= 1 else a[(slice(0, 0),) * a.ndim]
    for axis, n in enumerate(a.shape):
        if n > 2 * e:
            a = array.host.take(a, [*range(e), *range(n - e, n)], axis=axis)
    return a


def _vector(values: list, indent: int, summarise: bool, fmt: _Formatter) -> str:
    per_line = max(1, math.floor((OPTIONS.linewidth - indent) / (fmt.width + 2)))
    e = OPTIONS.edgeitems
    if summarise and not e:
        data = ["..."]
    elif summarise and len(values) > 2 * e:
        data = [*map(fmt.format, values[:e]), " ...", *map(fmt.format, values[-e:])]
    else:
        data = [fmt.format(v) for v in values]
    lines = [", ".join(data[i : i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested(a: Any, indent: int, summarise: bool, fmt: _Formatter) -> str:
    """The entries of ``a`` in brackets, a dim per level: the rows of a matrix one per line,
    the matrices of a 3-D tensor a blank line apart, and so on."""
    if a.ndim == 0:
        return fmt.format(a.item())
    if a.ndim == 1:
        return _vector(a.tolist(), indent, summarise, fmt)
    n, e = a.shape[0], OPTIONS.edgeitems
    rows: list[int | None] = list(range(n))
    if summarise and n > 2 * e:
        rows = [*range(e), None, *range(n - e, n)]  # None: the "..." between the ends
    parts = ["..." if i is None else _nested(a[i], indent + 1, summarise, fmt) for i in rows]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(parts) + "]"


def _with_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    """``text, suffix, ...)``, a suffix on a line of its own where the line would pass the
    line width (PyTorch's count of the last line's length, two over, kept)."""
    parts = [text]
    last = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last + len(suffix) + 2 > OPTIONS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last += len(suffix) + 2
    return "".join(parts) + ")"


def tensor_repr(t: Any) -> str:
    """``tensor([...], suffixes)``: the entries as PyTorch lays them out, then the device off
    the CPU, the size of an empty tensor that is not (0,), the dtype where it is not the
    default float, int64 or bool (any but the default float's, when empty), and grad_fn or
    requires_grad. A dtype is named as chainrule names it (``chainrule.float64``)."""
    arr = array.to_host(t._array)  # printing happens on the host
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    if not t.is_cpu:
        suffixes.append(f"device='{t.device}'")
    default = array.get_default_dtype()
    if arr.size == 0:
        if arr.ndim != 1:
            suffixes.append(f"size={arr.shape}")
        if arr.dtype != default:
            suffixes.append(f"dtype={array.dtype_object(arr.dtype)}")
        body = "[]"
    else:
        if not OPTIONS.edgeitems:
            suffixes.append(f"size={arr.shape}")
        if arr.dtype not in (default, array.int64, array.bool_):
            suffixes.append(f"dtype={array.dtype_object(arr.dtype)}")
        if array.is_floating(arr.dtype):  # bfloat16 too, whose NumPy kind is "V"
            arr = arr.astype(array.float64)  # exact for every float dtype, and Python's floats
        summarise = arr.size > OPTIONS.threshold
        fmt = _Formatter(_summarised(arr) if summarise else arr)
        body = _nested(arr, indent, summarise, fmt)
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(t.grad_fn).__name__}>")  # as PyTorch prints it
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return _with_suffixes(prefix + body, suffixes, indent)
