"""The function form of each Tensor method that PyTorch also offers as a function: ``cr.exp(x)``
is ``x.exp()``, ``input`` made a Tensor first, each form with its method's parameters. One
module a kind: math, pointwise (the elementwise math beyond the operators), reductions,
shape (views, indexing, scatters), indexing (selections by index), inplace and linalg."""

from __future__ import annotations

from . import indexing, inplace, linalg, math, pointwise, reductions, shape
from .indexing import *  # noqa: F403
from .inplace import *  # noqa: F403
from .linalg import *  # noqa: F403
from .math import *  # noqa: F403
from .pointwise import *  # noqa: F403
from .reductions import *  # noqa: F403
from .shape import *  # noqa: F403

__all__: list[str] = []
__all__ += math.__all__
__all__ += pointwise.__all__
__all__ += reductions.__all__
__all__ += shape.__all__
__all__ += indexing.__all__
__all__ += inplace.__all__
__all__ += linalg.__all__
