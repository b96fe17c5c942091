"""ONNX export of the pools given an unbatched input (C, *spatial), which their primitives
take as it is (one node, as PyTorch's): the input unsqueezed to a batch of one, the pool's own
converter (converters.py, more_converters.py), the result squeezed back."""

from __future__ import annotations

from dataclasses import replace

from ..tensor import Tensor
from .export import CONVERTERS, Converter, Graph, converts
from .trace import Step

# each pool's number of spatial dims, by its primitive
_SPATIAL = {
    "MaxPool2d": 2,
    "AvgPool2d": 2,
    "AdaptiveAvgPool2d": 2,
    "AdaptiveAvgPool3d": 3,
    "AvgPool3d": 3,
    "MaxPool3dWithIndices": 3,
}


def _batch_of_one(convert: Converter, spatial: int) -> Converter:
    """convert, and for an unbatched input: Unsqueeze, convert, Squeeze."""

    def converted(g: Graph, s: Step) -> str:
        x = s.inputs[0]
        a = x._array if isinstance(x, Tensor) else x
        if a.ndim != spatial + 1:
            return convert(g, s)
        one = Tensor._make(a[None])  # (1, C, *spatial): a view, named as the Unsqueeze
        g.bind(one._array, g.add("Unsqueeze", [g.value(x), g.ints([0])]))
        batched = replace(s, inputs=(one, *s.inputs[1:]), out=Tensor._make(s.out._array[None]))
        return g.add("Squeeze", [convert(g, batched), g.ints([0])])

    return converted


for _op, _spatial in _SPATIAL.items():  # each wraps the converter registered before it
    converts(_op)(_batch_of_one(CONVERTERS[_op], _spatial))
