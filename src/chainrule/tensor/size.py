"""Size: a tensor's shape as PyTorch gives it (``t.shape``, ``t.size()``), a tuple of ints that
prints as ``chainrule.Size([3, 4])`` and stays a Size when sliced, added to or repeated."""

from __future__ import annotations

import math
import operator
import sys
from collections.abc import Iterable
from typing import Any, SupportsIndex, overload

__all__ = ["Size"]


class Size(tuple[int, ...]):
    """The shape of a tensor: a tuple of ints (equal to the plain tuple, hashed as it), with
    ``numel()``, slices, ``+`` and ``*`` that stay Sizes, and PyTorch's repr, in a user's
    f-string too; in chainrule's own f-strings (every error message writes a shape so) it
    is the plain tuple, ``(3, 4)``.

    ``Size(ints)`` checks each is an int; ``t.shape`` makes one with ``new_size``, without
    the check (an array's shape holds ints)."""

    __slots__ = ()

    def __new__(cls, sizes: Iterable[Any] = ()) -> Size:
        """A Size of ints (Python or NumPy ints, bools as 0 and 1, one-element integer
        tensors), as ``torch.Size``; anything else is a TypeError."""
        ints = []
        for i, n in enumerate(sizes):
            try:
                ints.append(operator.index(n))
            except TypeError:  # a float, a string, None, a float tensor
                raise TypeError(
                    f"Size: takes an iterable of ints; got {type(n).__name__} at item {i}"
                ) from None
        return tuple.__new__(cls, ints)

    def numel(self) -> int:
        """The number of elements of a tensor of this shape (1 for ``Size([])``)."""
        return math.prod(self)

    @overload
    def __getitem__(self, key: SupportsIndex) -> int: ...
    @overload
    def __getitem__(self, key: slice) -> Size: ...
    def __getitem__(self, key: Any) -> Any:
        if type(key) is slice:
            return new_size(Size, _item(self, key))
        return _item(self, key)  # an index: about 85 ns over a tuple's, the Python call

    def __add__(self, other: Any) -> Size:  # type: ignore[override]
        if type(other) is Size:  # ints already: no check
            return new_size(Size, tuple.__add__(self, other))
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(self, other))  # a plain tuple's items are checked

    def __radd__(self, other: Any) -> Size:
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(other, self))

    def __mul__(self, n: SupportsIndex) -> Size:
        return new_size(Size, tuple.__mul__(self, n))

    __rmul__ = __mul__

    def __repr__(self) -> str:
        return f"chainrule.Size([{', '.join(map(str, self))}])"

    def __format__(self, spec: str) -> str:
        # the f-string's own frame says whose message it is: chainrule's, or the user's
        ours = sys._getframe(1).f_globals.get("__name__", "").startswith("chainrule.")
        return (tuple.__repr__(self) if ours else repr(self)).__format__(spec)

    def __reduce__(self) -> tuple[Any, tuple[tuple[int, ...]]]:
        return Size, (tuple(self),)


# tuple's own constructor: new_size(Size, shape) makes the Size of a shape that holds ints
# already, in one C call, without Size()'s checks in Python (t.shape is read on hot paths: it
# costs about 95 ns over the bare tuple this way, 230 through Size()).
new_size = tuple.__new__
_item = tuple.__getitem__
