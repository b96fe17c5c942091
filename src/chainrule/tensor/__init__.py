"""Tensor: an array, its gradient, and the node that made it, with one-line methods and
operators over the ops, the class made of one file per kind of method (core.py: what a
Tensor is; layout, casts, arithmetic, pointwise, reductions, shape, indexing, inplace,
sampling).

Every method normalises its arguments with the helpers of arguments.py and calls a primitive
from ops/ (or composes them). Graph recording and the backward walk belong to autograd/; the
factories and the cr.* function forms, to factories.py and forms/.
"""

from __future__ import annotations

from ..array.tensor_type import register_tensor_type
from .arithmetic import Arithmetic, matmul, where
from .casts import Casts
from .core import as_tensor
from .indexing import Indexing
from .inplace import InPlace, write_out
from .layout import Layout
from .linalg import LinalgMethods
from .pointwise import Pointwise
from .reductions import Reductions, ValuesIndices
from .restride import InPlaceShape
from .sampling import Histogram, Sampling
from .shape import Shape

__all__ = ["Histogram", "Tensor", "ValuesIndices", "as_tensor", "matmul", "where", "write_out"]


class Tensor(
    Layout,
    Casts,
    Arithmetic,
    Pointwise,
    Reductions,
    Shape,
    Indexing,
    InPlace,
    InPlaceShape,
    Sampling,
    LinalgMethods,
):
    """An n-dimensional array that can record the operations made on it.

    ``numpy()`` is the underlying ``numpy.ndarray`` (``_array``); ``data`` is, as in
    PyTorch, a Tensor sharing that array, cut from the graph; ``grad`` is a Tensor (or None)
    filled by ``backward()``; ``grad_fn`` is the node that produced it (None for leaves).

    Every write into the array in place (``add_``, ``+=``, ``t[i] = v``, an optimizer's
    step) bumps a version counter that the tensor shares with its views, ``detach()`` and
    ``data``; backward compares the versions of what each node saved with those it saw, so
    a value changed after it was saved is an error, never a silently wrong gradient.
    """

    __slots__ = ()


# Told, once, to the layers below that make tensors of it: the engine, the array layer
# and the files the class is made of (core.make).
register_tensor_type(Tensor)
