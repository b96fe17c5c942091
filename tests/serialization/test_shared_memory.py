"""A view saved beside its base is stored once and loads as a view again, as PyTorch keeps
one storage for both: the file holds the bytes once, and a write into one loaded tensor
shows in the other."""

from __future__ import annotations

import io
import json
import struct
from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr


def _saved(obj: Any) -> bytes:
    buf = io.BytesIO()
    cr.save(obj, buf)
    return buf.getvalue()


def _loaded(data: bytes) -> Any:
    return cr.load(io.BytesIO(data))


def _torch_size(obj: Any) -> int:
    buf = io.BytesIO()
    torch.save(obj, buf)
    return len(buf.getvalue())


# (name, the views of a (64, 64) float32 base x saved beside it, in this order)
CASES = [
    ("a row after its base", lambda x: {"x": x, "v": x[3]}),
    ("a row before its base", lambda x: {"v": x[3], "x": x}),
    ("a column", lambda x: {"x": x, "v": x[:, 5]}),
    ("a transpose", lambda x: {"x": x, "v": x.t()}),
    ("half of it, reshaped", lambda x: {"x": x, "v": x[32:].reshape(16, 128)}),
    ("a strided block", lambda x: {"x": x, "v": x[1:40:3, 2::5]}),
    ("several, nested", lambda x: {"x": x, "views": [x[0], x[1:3], {"c": x[:, -1]}]}),
]


@pytest.mark.parametrize(("name", "make"), CASES, ids=[c[0] for c in CASES])
def test_a_view_beside_its_base_is_stored_once(name: str, make: Any) -> None:
    x = cr.tensor(np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32))
    obj = make(x)
    data = _saved(obj)
    alone = len(_saved({"x": x}))
    assert len(data) < alone + 1024  # the header grows a little; no second copy of the data
    # PyTorch's file holds one storage too
    theirs = make(torch.tensor(x.numpy()))
    assert _torch_size(theirs) < _torch_size({"x": theirs["x"]}) + 2048
    got = _loaded(data)
    views = [t for t in _flat(got) if t is not got["x"]]
    shared_storage = [t for t in _flat(obj) if t is not x]
    for v, w in zip(views, shared_storage, strict=True):
        np.testing.assert_array_equal(v.numpy(), w.numpy())
        assert v.stride() == w.stride() and v.shape == w.shape
        assert np.shares_memory(v.numpy(), got["x"].numpy())
    got["x"].fill_(7.0)  # a write into the loaded base shows in every loaded view
    for v in views:
        assert (v.numpy() == 7.0).all()


def _flat(obj: Any) -> list[Any]:
    if isinstance(obj, dict):
        return [t for v in obj.values() for t in _flat(v)]
    if isinstance(obj, (list, tuple)):
        return [t for v in obj for t in _flat(v)]
    return [obj] if isinstance(obj, cr.Tensor) else []


def test_a_write_into_a_loaded_view_shows_in_its_loaded_base() -> None:
    x = cr.zeros(4, 5)
    got = _loaded(_saved({"x": x, "row": x[2]}))
    got["row"].add_(1.0)
    assert got["x"].sum().item() == 5.0 and got["x"][2].sum().item() == 5.0


def test_the_file_keeps_the_bytes_once() -> None:
    x = cr.zeros(256, 256)
    both = len(_saved({"x": x, "top": x[:128]}))
    assert both < 256 * 256 * 4 + 2048  # not 1.5 times the base's bytes
    assert len(_saved({"x": x, "top": x[:128].clone()})) > 256 * 256 * 4 * 1.5


def test_a_view_saved_twice_loads_as_one_tensor() -> None:
    x = cr.arange(12.0).reshape(3, 4)
    v = x[1]
    got = _loaded(_saved({"x": x, "v": v, "again": v}))
    assert got["v"] is got["again"]
    assert np.shares_memory(got["v"].numpy(), got["x"].numpy())


def test_views_without_their_base_are_written_whole() -> None:
    x = cr.arange(12.0).reshape(3, 4)
    got = _loaded(_saved({"a": x[0], "b": x[1:]}))
    np.testing.assert_array_equal(got["a"].numpy(), x[0].numpy())
    np.testing.assert_array_equal(got["b"].numpy(), x[1:].numpy())
    assert not np.shares_memory(got["a"].numpy(), got["b"].numpy())


def test_a_parameter_and_a_view_of_it_come_back_so() -> None:
    w = cr.nn.Parameter(cr.ones(3, 4))
    got = _loaded(_saved({"w": w, "row": w.detach()[1]}))
    assert isinstance(got["w"], cr.nn.Parameter) and got["w"].requires_grad
    got["w"].data.mul_(2.0)
    assert (got["row"].numpy() == 2.0).all()


def test_another_safetensors_reader_sees_the_base_by_its_name() -> None:
    """The base is an ordinary tensor of the file under its own key; the view lives in
    chainrule's structure only."""
    data = _saved({"x": cr.zeros(2, 3), "v": cr.zeros(2, 3)[0]})
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + size])
    assert "x" in header and header["x"]["shape"] == [2, 3]


def _with_view_entry(change: dict) -> bytes:
    """A saved base and view whose view entry is altered, the digests made to match again
    (as a crafted file would): loading must stay inside the base's memory."""
    x = cr.arange(6.0)
    obj = {"x": x, "v": x[1:3]}
    data = _saved(obj)
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + size])
    meta = header["__metadata__"]
    structure = json.loads(meta["chainrule.structure"])
    entry = structure["dict"][1][1]["tensor_of"]
    entry.update(change)
    tensors = {"x": x.numpy()}
    from chainrule import serialization

    text = json.dumps(structure)
    meta["chainrule.structure"] = text
    meta["chainrule.sha256"], meta["chainrule.sha256.all"] = serialization._digests(tensors, text)
    raw = json.dumps(header).encode()
    return struct.pack("<Q", len(raw)) + raw + data[8 + size :]


@pytest.mark.parametrize(
    "change",
    [{"offset": 5}, {"offset": -1}, {"stride": [100]}, {"shape": [9]}, {"offset": "1"}],
    ids=["past the end", "before the start", "a long stride", "too many", "not a number"],
)
def test_a_view_entry_outside_its_base_is_a_damaged_file(change: dict) -> None:
    with pytest.raises(ValueError, match="damaged structure"):
        _loaded(_with_view_entry(change))
