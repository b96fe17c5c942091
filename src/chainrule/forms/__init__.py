"""The function form of each Tensor method that PyTorch also offers as a function: ``cr.exp(x)``
is ``x.exp()``, ``input`` made a Tensor first, each form with its method's parameters. One
module a kind: math, reductions, shape (views, indexing, scatters) and inplace."""

from __future__ import annotations

from . import inplace, math, reductions, shape
from .inplace import *  # noqa: F403
from .math import *  # noqa: F403
from .reductions import *  # noqa: F403
from .shape import *  # noqa: F403

__all__: list[str] = []
__all__ += math.__all__
__all__ += reductions.__all__
__all__ += shape.__all__
__all__ += inplace.__all__
