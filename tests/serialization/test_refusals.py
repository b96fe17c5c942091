"""Every refusal of load names the file and the entry: a header entry no array can have
(a dimension of 10**30 beside a 0, `true` as a dimension), a malformed one, and a damaged
structure (an entry naming a tensor the file lacks, a view outside its tensor)."""

from __future__ import annotations

import json
import struct
from typing import Any

import numpy as np
import pytest

import chainrule as cr
from chainrule import serialization


def raw_file(path: Any, entry: Any, data: bytes = b"") -> None:
    """A safetensors file of one tensor, 'weight', with this header entry."""
    header = json.dumps({"weight": entry}).encode()
    path.write_bytes(struct.pack("<Q", len(header)) + header + data)


def f32(shape: Any, offsets: Any = None, dtype: Any = "F32") -> dict:
    return {"dtype": dtype, "shape": shape, "data_offsets": offsets or [0, 0]}


HEADERS = {
    "a dimension of 10**30 beside a 0": (f32([10**30, 0]), b""),
    "a dimension of 2**62 beside a 0": (f32([2**62, 0]), b""),
    "true as a dimension": (f32([True, 2], [0, 8]), bytes(8)),
    "true as the only dimension": (f32([True], [0, 4]), bytes(4)),
    "a float dimension": (f32([2.0], [0, 8]), bytes(8)),
    "a negative dimension": (f32([-1], [0, 0]), b""),
    "65 dimensions": (f32([1] * 65, [0, 4]), bytes(4)),
    "a string for a shape": (f32("2", [0, 8]), bytes(8)),
    "one offset": (f32([2], [8]), bytes(8)),
    "false as an offset": (f32([1], [False, 4]), bytes(4)),
    "a dtype that is a number": (f32([1], [0, 4], 5), bytes(4)),
    "no data_offsets": ({"dtype": "F32", "shape": [1]}, bytes(4)),
    "an entry that is a string": ("F32", bytes(4)),
    "data past the end of the file": (f32([100], [0, 400]), bytes(4)),
}


@pytest.mark.parametrize(("name", "case"), HEADERS.items(), ids=list(HEADERS))
def test_a_header_entry_no_array_can_have_is_refused_naming_file_and_entry(
    tmp_path, name, case
) -> None:
    path = tmp_path / "hostile.safetensors"
    raw_file(path, *case)
    with pytest.raises(ValueError) as e:
        cr.load(path)
    message = str(e.value)
    assert message.startswith(f"load: {path}") and "'weight'" in message, message


def crafted(path: Any, structure: Any, tensors: dict[str, np.ndarray]) -> None:
    """A file chainrule's digest accepts, holding this structure: only load's own checks of
    the structure stand between it and the caller."""
    text = json.dumps(structure)
    digest, whole = serialization._digests(tensors, text)
    metadata = {serialization._STRUCTURE: text, serialization._DIGEST: digest,
                serialization._DIGEST_ALL: whole}  # fmt: skip
    header, order = serialization._header(tensors, metadata)
    path.write_bytes(header + b"".join(tensors[k].tobytes() for k in order))


def view(**entry: Any) -> dict:
    return {"tensor_of": {"key": "weight", "alias": "view", "name": "v", **entry}}


# (the structure's entry for "w", what the refusal quotes of it)
STRUCTURES = {
    "a tensor the file lacks": ({"tensor": "missing_weight"}, "'missing_weight'"),
    "an array the file lacks": ({"array": "missing_weight"}, "'missing_weight'"),
    "a list where an entry belongs": ([{"tensor": "weight"}], "'weight'"),
    "an entry of two kinds": ({"tensor": "weight", "array": "weight"}, "'weight'"),
    "a kind unknown": ({"blob": "weight"}, "'blob'"),
    "a tensor_of that is a string": ({"tensor_of": "weight"}, "'weight'"),
    "a tensor_of without a key": ({"tensor_of": {"device": "cpu"}}, "{'device': 'cpu'}"),
    "a view past the end": (view(offset=5, shape=[4], stride=[1]), "'v'"),
    "a view of true elements": (view(offset=0, shape=[True], stride=[1]), "'v'"),
    "a view of 10**30 rows": (view(offset=0, shape=[10**30], stride=[0]), "'v'"),
    "a view with a negative size": (view(offset=0, shape=[-2], stride=[1]), "'v'"),
    "a sparse entry without values": (
        {"sparse_coo": {"indices": {"tensor": "weight"}}},
        "'indices'",
    ),
    "a sparse entry given twice before once": ({"sparse_coo": {"same": "weight"}}, "'weight'"),
}


@pytest.mark.parametrize(("name", "case"), STRUCTURES.items(), ids=list(STRUCTURES))
def test_a_damaged_structure_is_refused_naming_file_and_entry(tmp_path, name, case) -> None:
    structure, quoted = case
    path = tmp_path / "hostile.safetensors"
    crafted(path, {"dict": [["w", structure]]}, {"weight": np.zeros(6, np.float32)})
    with pytest.raises(ValueError) as e:
        cr.load(path)
    message = str(e.value)
    assert message.startswith(f"load: {path} holds a damaged structure"), message
    assert quoted in message, message
