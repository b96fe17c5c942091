"""Save never writes what load cannot read: every kind of tensor a state or a checkpoint
holds (views of every rank, 0-d, empty, non-contiguous, expanded, sparse, Parameters,
tied, requires_grad) in every dtype chainrule has, saved and loaded by chainrule and by
PyTorch, comes back with the same values, dtypes, shapes, flags and memory sharing."""

from __future__ import annotations

import io
import itertools
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr

# every dtype chainrule names (cr.float32, cr.uint16, ...), each once
DTYPES = sorted(
    {str(v).split(".")[-1] for v in vars(cr).values() if isinstance(v, type(cr.float32))}
)
# the dtypes a tensor that requires grad may have (bfloat16 is a storage dtype in chainrule)
FLOATS = [d for d in DTYPES if "float" in d and d != "bfloat16"]


def base(lib: Any, dtype: str) -> Any:
    """A (4, 6) tensor of the dtype: 0..4 repeating (bool: mostly True)."""
    return (lib.arange(24) % 5).reshape(4, 6).to(getattr(lib, dtype))


# kind -> what is saved, built from the base x with the library's own calls (same API)
KINDS: dict[str, Callable[[Any, Any], Any]] = {
    "plain": lambda lib, x: {"x": x},
    "0-d": lambda lib, x: {"s": x[1, 2].clone()},
    "0-d view beside its base": lambda lib, x: {"x": x, "e": x[1, 2]},
    "0-d view before its base": lambda lib, x: {"e": x[3, 5], "x": x},
    "0-d view alone": lambda lib, x: {"e": x[1, 2]},
    "0-d views of a 1-d base": lambda lib, x: {"r": x[0], "a": x[0, 0], "b": x[0, -1]},
    "row view": lambda lib, x: {"x": x, "r": x[1]},
    "column view": lambda lib, x: {"x": x, "c": x[:, 2]},
    "transposed beside its base": lambda lib, x: {"x": x, "t": x.t()},
    "transposed alone": lambda lib, x: {"t": x.t()},
    "strided view": lambda lib, x: {"x": x, "s": x[::2, 1::3]},
    "expanded beside its base": lambda lib, x: {"x": x, "e": x[0].expand(3, 6)},
    "expanded alone": lambda lib, x: {"e": x[:, :1].expand(4, 5)},
    "reshaped view": lambda lib, x: {"x": x, "v": x.reshape(3, 8)},
    "views of views, every rank": lambda lib, x: (
        lambda y: {"y": y, "a": y[1], "b": y[1, 0], "c": y[1, 0, 5], "d": y[:, 1, ::2]}
    )(x.reshape(2, 2, 6)),
    "empty": lambda lib, x: {"z": x[:0].clone()},
    "views of empty beside a base": lambda lib, x: {"x": x, "z": x[2:2], "w": x[:, 3:3]},
    "empty base and its view": lambda lib, x: (lambda z: {"z": z, "v": z[:, 1:]})(x[:0].clone()),
    "tied": lambda lib, x: {"a": x, "b": x, "in": [x]},
    "same memory, two tensors": lambda lib, x: {"a": x, "b": x.view(-1).view(4, 6)},
    "two columns without their base": lambda lib, x: {"a": x[:, 0], "b": x[:, 1]},
    "a row and a transpose without their base": lambda lib, x: {"r": x[1], "t": x.t()},
    "contiguous copy beside a view": lambda lib, x: {"x": x, "c": x.t().contiguous()},
}
FLOAT_KINDS: dict[str, Callable[[Any, Any], Any]] = {
    "Parameter": lambda lib, x: {"w": lib.nn.Parameter(x.clone())},
    "Parameter without grad": lambda lib, x: {"w": lib.nn.Parameter(x.clone(), False)},
    "tied Parameters": lambda lib, x: (lambda p: {"a": p, "b": p})(lib.nn.Parameter(x.clone())),
    "requires_grad": lambda lib, x: {"w": x.clone().requires_grad_()},
    "a result in a graph, and its view": lambda lib, x: (lambda y: {"y": y, "r": y[1]})(
        x.clone().requires_grad_() * 2
    ),
    "a view of a Parameter": lambda lib, x: (lambda p: {"p": p, "r": p[1]})(
        lib.nn.Parameter(x.clone())
    ),
    "a Linear's state with a view of its weight": lambda lib, x: (
        lambda m: {"model": m.state_dict(), "row": m.weight.data[0], "s": m.bias.data[1]}
    )(_linear(lib, x)),
}
SPARSE_KINDS: dict[str, Callable[[Any, Any], Any]] = {
    "sparse": lambda lib, x: {"s": _sparse(lib, x)},
    "sparse coalesced, twice": lambda lib, x: (lambda s: {"s": s, "again": [s]})(
        _sparse(lib, x).coalesce()
    ),
    "sparse beside its values": lambda lib, x: (lambda s: {"s": s, "v": s._values()})(
        _sparse(lib, x)
    ),
}


def _linear(lib: Any, x: Any) -> Any:
    """A Linear(6, 4) of x's dtype holding x as its weight."""
    m = lib.nn.Linear(6, 4, dtype=x.dtype)
    with lib.no_grad():
        m.weight.copy_(x)
        m.bias.copy_(x[0, :4])
    return m


def _sparse(lib: Any, x: Any) -> Any:
    indices = lib.tensor([[0, 3, 1, 3], [5, 0, 2, 0]])
    return lib.sparse_coo_tensor(indices, x[0, :4].clone(), (4, 6))


TABLE = [
    *((f"{kind} {dtype}", KINDS[kind], dtype) for kind, dtype in itertools.product(KINDS, DTYPES)),
    *((f"{kind} {d}", FLOAT_KINDS[kind], d) for kind, d in itertools.product(FLOAT_KINDS, FLOATS)),
    *((f"{kind} {d}", SPARSE_KINDS[kind], d) for kind in SPARSE_KINDS for d in ("float32", "int8")),
]
assert TABLE and len(DTYPES) >= 13, DTYPES


def _flat(obj: Any, tensors: bool = True) -> Iterator[Any]:
    """The tensors of obj in order (or, not ``tensors``, everything else: keys and leaves)."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if not tensors:
                yield k
            yield from _flat(v, tensors)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _flat(v, tensors)
    elif isinstance(obj, (torch.Tensor, cr.Tensor)) == tensors:
        yield obj


def _round_trip(save: Any, load: Any, obj: Any) -> Any:
    buf = io.BytesIO()
    save(obj, buf)
    buf.seek(0)
    return load(buf)


def _values(t: Any) -> np.ndarray:
    dense = t.to_dense() if t.is_sparse else t
    return np.asarray(dense.detach().double().numpy())


def _memory(t: Any) -> np.ndarray | None:
    """The tensor's own memory as a NumPy array (torch's bfloat16 seen as int16)."""
    if t.is_sparse or t.numel() == 0:
        return None
    t = t.detach()
    if isinstance(t, torch.Tensor) and t.dtype == torch.bfloat16:
        t = t.view(torch.int16)
    return t.numpy()


def _relations(tensors: list[Any]) -> list[tuple[int, int, bool, bool]]:
    """For each pair: (i, j, the same object, sharing memory)."""
    out = []
    for i, j in itertools.combinations(range(len(tensors)), 2):
        a, b = _memory(tensors[i]), _memory(tensors[j])
        shared = a is not None and b is not None and bool(np.shares_memory(a, b))
        out.append((i, j, tensors[i] is tensors[j], shared))
    return out


@pytest.mark.parametrize(("name", "make", "dtype"), TABLE, ids=[row[0] for row in TABLE])
def test_what_is_saved_loads_back_as_pytorch_keeps_it(name: str, make: Any, dtype: str) -> None:
    ours = make(cr, base(cr, dtype))
    theirs = make(torch, base(torch, dtype))
    got = _round_trip(cr.save, cr.load, ours)
    expected = _round_trip(torch.save, lambda f: torch.load(f, weights_only=True), theirs)
    assert type(got) is type(ours) and list(_flat(got)) != []
    saved, loaded, oracle = list(_flat(ours)), list(_flat(got)), list(_flat(expected))
    assert len(loaded) == len(oracle) == len(saved)
    for before, t, e in zip(saved, loaded, oracle, strict=True):
        assert str(t.dtype).split(".")[-1] == str(e.dtype).split(".")[-1] == dtype, name
        assert tuple(t.shape) == tuple(e.shape) == tuple(before.shape)
        assert t.requires_grad == e.requires_grad
        assert isinstance(t, cr.nn.Parameter) == isinstance(e, torch.nn.Parameter)
        assert t.is_sparse == e.is_sparse
        if t.is_sparse:
            assert t.is_coalesced() == e.is_coalesced()
        np.testing.assert_array_equal(_values(t), _values(before))
        np.testing.assert_array_equal(_values(t), _values(e))
    assert _relations(loaded) == _relations(oracle)
    assert list(_flat(got, tensors=False)) == list(_flat(ours, tensors=False))
