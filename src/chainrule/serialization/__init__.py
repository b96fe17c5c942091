"""save and load: nested dicts and lists of Tensors in the safetensors format; any other
object (a whole Module) pickled, in a file of its own kind that loads only when asked.

Arrays go into the file as safetensors tensors named by their dotted path (a model's
state_dict keeps its own keys, so any safetensors reader can load it); everything else is
kept as JSON in the file's metadata. Loading such a file only parses; it never runs code.
Also here: writing one file atomically (run_files.py replaces a run's set of files as one).
What a pickled object may name is restricted_unpickler.py's; tensors sharing memory,
shared_storage.py's.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import io
import json
import math
import os
import pickle
import re
import secrets
import struct
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

from .. import array
from ..array import CPU, device
from ..nn.module import Module, Parameter
from ..sparse import SparseTensor, sparse_coo_tensor
from ..tensor import Tensor
from . import restricted_unpickler
from .restricted_unpickler import (
    add_safe_globals,
    clear_safe_globals,
    get_safe_globals,
    safe_globals,
)
from .shared_storage import view_in, views_of_others

__all__ = [
    "add_safe_globals",
    "clear_safe_globals",
    "get_safe_globals",
    "get_unsafe_globals_in_checkpoint",
    "load",
    "safe_globals",
    "save",
]

xp = array.host  # files are written from host memory and read into it

_STRUCTURE = "chainrule.structure"  # metadata key: the object's shape, as JSON
_DIGEST = "chainrule.sha256"  # metadata key: a digest of every tensor (name, dtype, shape, bytes)
_DIGEST_ALL = "chainrule.sha256.all"  # the same with the structure first: the whole file
# A pickled file's first line: its own kind, never read as safetensors (whose first 8 bytes,
# a header length, would be far larger than the file). The object's type name follows.
_PICKLED = b"chainrule pickled object\n"


def save(obj: Any, f: str | os.PathLike | BinaryIO) -> None:
    """Write ``obj`` to ``f``: a path, written atomically (a temporary file in the same
    folder, flushed to disk, then renamed over it: a failure leaves any old file as it
    was), or a binary file object the caller opened (``open(p, "wb")``, ``io.BytesIO()``).
    The header goes first, then each array straight from its own memory: a save makes no
    copy of the data.

    ``obj`` is a Tensor, a NumPy array, or dicts (keys str or int), lists and tuples nesting
    Tensors, arrays, numbers, strings, bools and None: a model's or an optimizer's
    state_dict, or a checkpoint holding both. NumPy scalars are saved as Python numbers.
    As PyTorch's, a tensor held twice (tied weights) is written once and loads as one
    (the same object, or tensors sharing memory, as saved); a view saved beside the tensor
    whose memory it lies in is written as a view into it and loads as one, sharing memory
    (see shared_storage.py); Parameters and tensors that require grad come back so; the
    structure in the metadata records which.

    Any other object (a Module or an optimizer itself, or a structure holding one) is
    pickled, as ``torch.save`` does, into a file marked as pickled, which :func:`load` opens
    only with ``weights_only=False``; a state_dict() needs no trust to load.
    """
    tensors: dict[str, Any] = {}
    # held: by Tensor id and by memory, the key each was written under (see _encode); and
    # the views to write as views, with the entries waiting for their cover's key
    held: dict = {"views": views_of_others(obj), "pending": []}
    try:
        structure = _encode(obj, "", tensors, (), held)
        for entry, cover in held["pending"]:  # a view saved before the tensor it views
            if id(cover) not in held:  # the span of views no saved tensor covers: its own
                key = f"{entry['name']}.storage"
                while key in tensors:
                    key += "_"
                tensors[key], held[id(cover)] = _host_bytes(cover._array, key), key
            entry["key"] = held[id(cover)]
    except _NotData as e:
        _save_pickled(obj, f, e.kind)
        return
    if "__metadata__" in tensors:  # the format's own header key: load would refuse the file
        raise ValueError(
            "save: an entry may not be named '__metadata__' (the safetensors header uses it); "
            "rename that key"
        )
    text = json.dumps(structure)
    tensor_digest, whole_digest = _digests(tensors, text)
    metadata = {_STRUCTURE: text, _DIGEST: tensor_digest, _DIGEST_ALL: whole_digest}
    header, order = _header(tensors, metadata)

    def write(out: Any) -> None:
        # The header, then each array's own memory: no copy of the data is made.
        _write(out, header)
        for key in order:
            _write(out, tensors[key].reshape(-1).view(xp.uint8))

    if hasattr(f, "write"):
        write(f)
        if hasattr(f, "flush"):
            f.flush()
        return
    _atomic_write(Path(os.path.realpath(f)), write)  # through a symlink: its target


def load(
    f: str | os.PathLike | BinaryIO,
    map_location: Any = None,
    weights_only: bool | None = None,
    **kwargs: Any,
) -> Any:
    """Read what :func:`save` wrote, from a path or a binary file object (read from its
    position to its end), rebuilding its nesting; Tensors come back as Tensors and NumPy
    arrays as arrays. A safetensors file from elsewhere loads as a dict of Tensors by name
    (F16 as float16, BF16 as bfloat16; a dtype chainrule lacks, such as F8_E4M3, is refused
    by name). Each tensor is read straight into its own array, so a load holds one copy of
    the data. A file that is truncated, not safetensors, or altered since it was written
    raises ValueError.

    A file holds host arrays; a tensor saved from a CUDA device records that device, and
    comes back there, as PyTorch's do, unless ``map_location`` says otherwise: a device or
    its name (every tensor goes there: 'cpu' loads a GPU checkpoint on a machine without
    one), a dict from saved locations to devices (``{'cuda:0': 'cpu'}``), or a callable
    ``fn(tensor, location)`` returning the tensor to use (``lambda storage, loc:
    storage``). A tensor saved on CUDA, loaded where there is none and with no
    map_location, is the CUDA error.

    ``weights_only`` is PyTorch's (True unless given): a file of a pickled object (what
    :func:`save` wrote for a whole Module) loads only if every class and function it names
    is allowed (tensors and containers, and what ``add_safe_globals`` or ``with
    safe_globals([...])`` allow: restricted_unpickler.py), since unpickling can run any code;
    otherwise it is refused by the name, unless weights_only is False.
    TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1 (or CHAINRULE_FORCE_...) makes the default False,
    and TORCH_FORCE_WEIGHTS_ONLY_LOAD=1 makes it True even when given.
    A pickled Module is moved where a device ``map_location`` says."""
    unknown = set(kwargs) - {"mmap", "pickle_module"}
    if unknown:
        raise TypeError(f"load: unexpected keyword arguments {sorted(unknown)}")
    weights_only = restricted_unpickler.settled(weights_only)
    place = _map_location(map_location)
    if hasattr(f, "read"):
        name = getattr(f, "name", "the file object")
        return _load_from(f, name, map_location, place, weights_only, kwargs)
    _clear_orphans(Path(os.path.realpath(f)))
    with open(f, "rb") as opened:
        return _load_from(opened, Path(f), map_location, place, weights_only, kwargs)


def get_unsafe_globals_in_checkpoint(f: str | os.PathLike | BinaryIO) -> list[str]:
    """The classes and functions a pickled file names that ``load(weights_only=True)`` would
    refuse (``module.name`` each), read without running any of them; a file of tensors
    names none."""
    if not hasattr(f, "read"):
        with open(f, "rb") as opened:  # type: ignore[arg-type]
            return get_unsafe_globals_in_checkpoint(opened)
    assert not isinstance(f, (str, os.PathLike))
    if f.read(len(_PICKLED)) != _PICKLED:
        return []
    f.readline()
    return restricted_unpickler.unsafe_names(f, getattr(f, "name", "the file object"))


def _save_pickled(obj: Any, f: Any, kind: str) -> None:
    """The object pickled whole, behind the line that marks the file as pickled and its
    type's name (what load's refusal names without unpickling)."""
    try:
        payload = pickle.dumps(obj)
    except Exception as e:  # a lambda, a lock, an open file inside it
        raise TypeError(
            f"save: pickling failed ({type(e).__name__}: {e}); the object is pickled whole "
            f"since it holds a {kind}, which is not tensors and their containers; save "
            "tensors only, e.g. a model's state_dict()"
        ) from None
    head = _PICKLED + type(obj).__qualname__.encode("utf-8", "replace") + b"\n"

    def write(out: Any) -> None:
        _write(out, head)
        _write(out, payload)

    if hasattr(f, "write"):
        write(f)
        if hasattr(f, "flush"):
            f.flush()
        return
    _atomic_write(Path(os.path.realpath(f)), write)


def _load_pickled(f: Any, path: Any, where: Any, weights_only: bool, kwargs: dict) -> Any:
    kind = f.readline().decode("utf-8", "replace").strip()
    if weights_only and kwargs.get("pickle_module") is not None:
        raise RuntimeError(
            "load: cannot load weights only safely with an explicit pickle_module; leave "
            "pickle_module out, or pass weights_only=False if you trust the file"
        )
    if weights_only:
        obj = restricted_unpickler.unpickle(f, f"{path} (a {kind}, saved whole by cr.save)")
    else:
        obj = (kwargs.get("pickle_module") or pickle).load(f)
    is_device = isinstance(where, (str, device)) or hasattr(where, "type")
    if where is not None and is_device and isinstance(obj, Module):
        obj.to(array.resolve_device(str(where), "load"))
    return obj


def _load_from(f: Any, path: Any, where: Any, place: Any, weights_only: bool, kwargs: dict) -> Any:
    try:
        start = f.tell()
        first = f.read(len(_PICKLED))
        f.seek(start)
    except (AttributeError, OSError, ValueError):  # not seekable (a pipe): read it whole
        f = io.BytesIO(f.read())
        first = f.getvalue()[: len(_PICKLED)]
    if first == _PICKLED:
        f.read(len(_PICKLED))
        return _load_pickled(f, path, where, weights_only, kwargs)
    tensors, metadata = _read(f, path)
    if not any(key.startswith("chainrule.") for key in metadata):  # another program's file
        return {name: place(Tensor._make(arr), "cpu") for name, arr in tensors.items()}
    # Files since the whole-file digest are checked whole: the structure (keys, numbers,
    # strings, hyperparameters) as well as the tensors; older ones, their tensors.
    text = metadata.get(_STRUCTURE)
    if _DIGEST_ALL in metadata or _DIGEST not in metadata or text is None:
        intact = text is not None and metadata.get(_DIGEST_ALL) == _digests(tensors, text)[1]
    else:
        intact = metadata[_DIGEST] == _digests(tensors, "")[0]
    if not intact:
        raise ValueError(
            f"load: {path} was altered or damaged after it was written (its "
            "contents no longer match the digest saved with them)"
        )
    try:
        return _decode(json.loads(text or ""), tensors, {}, place)
    except _PlaceError as e:  # map_location's own error (or no CUDA): as it was raised
        raise e.error from None
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError, OverflowError) as e:
        raise ValueError(f"load: {path} holds a damaged structure ({e})") from None


class _PlaceError(Exception):
    """An error of placing a loaded tensor, carried out of _decode unchanged (its own
    errors mean a damaged file)."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


def _placed(place: Any, t: Tensor, location: str) -> Tensor:
    try:
        return place(t, location)
    except Exception as e:
        raise _PlaceError(e) from None


def _map_location(where: Any) -> Any:
    """map_location checked, as the function that puts each loaded tensor (on the CPU, as
    read) where it goes, given the location it was saved from ('cpu', 'cuda:0', ...)."""
    if where is None:
        return _to_location
    if callable(where) and not isinstance(where, (str, device)):

        def call(t: Tensor, location: str) -> Tensor:
            out = where(t, location)
            if not isinstance(out, Tensor):
                raise TypeError(
                    f"load: map_location's callable must return the tensor it is given (or "
                    f"another Tensor); got {type(out).__name__}"
                )
            return out

        return call
    if isinstance(where, dict):
        targets = {str(k): array.resolve_device(str(v), "load") for k, v in where.items()}

        def mapped(t: Tensor, location: str) -> Tensor:
            target = targets.get(location)
            return _to_location(t, location) if target is None else t.to(target)

        return mapped
    if isinstance(where, str) or hasattr(where, "type"):  # a string or a device
        target = array.resolve_device(str(where), "load")
        return lambda t, location: t if target == CPU else t.to(target)
    raise TypeError(
        f"load: map_location must be None, a device, a string, a dict or a callable; got "
        f"{type(where).__name__}"
    )


def _to_location(t: Tensor, location: str) -> Tensor:
    """A tensor read on the CPU, put back on the device it was saved from."""
    if location == "cpu":
        return t
    if not array.ACCELERATED:
        raise RuntimeError(
            f"load: a tensor (shape {t.shape}) was saved on {location}, but CUDA is not "
            "available here; pass map_location='cpu' (or another device) to load it there"
        )
    return t.to(array.resolve_device(location, "load"))


# -- the object's structure as JSON ------------------------------------------------------
# Scalars are JSON values; every container or array is a one-key object naming its kind,
# so a string can never be mistaken for one.


def _encode(
    obj: Any, name: str, tensors: dict[str, Any], within: tuple[int, ...], held: dict
) -> Any:
    """obj's structure as JSON, its arrays put into ``tensors`` under dotted names;
    ``within`` holds the ids of the containers above obj, so a cycle is found, not
    followed until the interpreter's recursion limit; ``held`` the key each Tensor (by id)
    and each tensor's memory (pointer, shape, strides, dtype) was first written under."""
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, (dict, list, tuple)):
        if id(obj) in within:
            raise ValueError(
                f"save: the object contains itself at {name!r} (a cycle); only trees of "
                "dicts, lists and tuples can be saved"
            )
        within = (*within, id(obj))
        if len(within) > _MAX_DEPTH:  # before the interpreter's own limit, in save or load
            raise ValueError(
                f"save: the object nests containers more than {_MAX_DEPTH} deep (at "
                f"{name[:60]!r}...); a checkpoint's dicts and lists must nest less"
            )
    if isinstance(obj, xp.generic):
        return obj.item()
    if isinstance(obj, SparseTensor):  # its indices and values, each a tensor of the file
        key = name or "tensor"
        if ("sparse", id(obj)) in held:  # held twice: it loads as one object, as PyTorch's
            return {"sparse_coo": {"same": held["sparse", id(obj)]}}
        held["sparse", id(obj)] = key
        parts = {p: _encode(t, f"{key}.{p}", tensors, within, held)
                 for p, t in (("indices", obj._indices()), ("values", obj._values()))}  # fmt: skip
        # requires_grad is not kept: PyTorch's loaded sparse tensors need no gradient
        return {"sparse_coo": {**parts, "name": key, "size": list(obj.shape),
                               "coalesced": obj.is_coalesced()}}  # fmt: skip
    if isinstance(obj, Tensor):
        return _encode_tensor(obj, name or "tensor", tensors, held)
    if isinstance(obj, array.ndarray):
        key = name or "tensor"
        if key in tensors:
            raise ValueError(f"save: two entries have the same dotted name {key!r}")
        tensors[key] = _host_bytes(obj, key)
        return {"array": key}
    if isinstance(obj, dict):
        items = []
        for k, v in obj.items():
            if isinstance(k, bool) or not isinstance(k, (str, int)):
                raise TypeError(f"save: dict keys must be str or int; got {type(k).__name__}")
            items.append([k, _encode(v, f"{name}.{k}" if name else str(k), tensors, within, held)])
        return {"dict": items}
    if isinstance(obj, (list, tuple)):
        kind = "tuple" if isinstance(obj, tuple) else "list"
        return {
            kind: [
                _encode(v, f"{name}.{i}" if name else str(i), tensors, within, held)
                for i, v in enumerate(obj)
            ]
        }
    raise _NotData(f"{type(obj).__name__} at {name!r}" if name else type(obj).__name__)


class _NotData(Exception):
    """An object that is not tensors, arrays, numbers, strings and their containers (its
    type and where it is): save pickles the whole object instead."""

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind


def _host_bytes(arr: Any, key: str) -> Any:
    """An array as the file holds it: on the host, native byte order (so the digest sees the
    bytes a reader will see), C-contiguous; a dtype the format lacks is refused here, before
    any digest or write."""
    if (arr.dtype if arr.dtype.isnative else arr.dtype.newbyteorder("=")) not in _NAMES:
        hint = "; an object array holds Python objects: save them as a list" if (
            arr.dtype.kind == "O") else ""  # fmt: skip
        raise TypeError(
            f"save: cannot save {key!r} of dtype {arr.dtype}; a safetensors file holds "
            f"bool, integers, float16, bfloat16, float32 and float64{hint}"
        )
    arr = array.to_host(arr)
    if not arr.dtype.isnative:
        arr = arr.astype(arr.dtype.newbyteorder("="))
    return arr if arr.flags.c_contiguous else arr.copy(order="C")


def _encode_tensor(t: Tensor, key: str, tensors: dict[str, Any], held: dict) -> Any:
    """A Tensor's entry: ``{"tensor": key}`` for a plain one on the CPU (as older files),
    else ``{"tensor_of": {...}}`` naming what else comes back: the device it was on, that it
    is a Parameter, that it requires grad, and, for a tensor already written under another
    key, whether it is that very object ("same"), shares its memory ("memory"), or is a view
    into another's memory ("view": its offset, shape and strides there, in elements)."""
    a = t._array
    # an empty array's pointer says nothing: two of them may share one
    memory = (array.data_ptr(a), a.shape, a.strides, a.dtype.str) if a.size else id(t)
    entry: dict[str, Any] = {"key": key}
    view = held["views"].get(id(t))
    if id(t) in held:
        entry.update(key=held[id(t)], alias="same")
    elif memory in held:
        entry.update(key=held[memory], alias="memory")
    elif view is not None:  # a view into the memory of the tensor that covers it
        cover, offset = view
        steps = [s // a.itemsize for s in a.strides]
        entry.update(alias="view", name=key, offset=offset, shape=list(a.shape), stride=steps)
        entry["key"] = held.get(id(cover), key)
        if id(cover) not in held:  # written later: its key is filled in at the end of save
            held["pending"].append((entry, cover))
    else:
        if key in tensors:
            raise ValueError(f"save: two entries have the same dotted name {key!r}")
        tensors[key] = _host_bytes(a, key)
        held[memory] = key
    held[id(t)] = entry.get("name", entry["key"])  # a view saved again: that view
    if t.is_cuda:  # where it comes back to
        entry["device"] = str(t.device)
    if isinstance(t, Parameter):
        entry["parameter"] = True
    if t.requires_grad:
        entry["requires_grad"] = True
    return {"tensor": key} if list(entry) == ["key"] else {"tensor_of": entry}


def _decode(node: Any, tensors: dict[str, Any], loaded: dict[Any, Any], place: Any) -> Any:
    """The object back from its structure; ``loaded`` holds, by key, the tensor each file
    tensor became (for the entries that alias it)."""
    if node is None or isinstance(node, (bool, int, float, str)):
        return node
    if not isinstance(node, dict) or len(node) != 1:
        raise TypeError(f"entry {str(node)[:200]}")
    ((kind, value),) = node.items()
    if kind == "array":
        if not isinstance(value, str) or value in loaded or value not in tensors:
            raise TypeError(f"array entry {value!r}")
        loaded[value] = None
        return tensors[value]
    if kind in ("tensor", "tensor_on", "tensor_of"):
        return _decode_tensor(kind, value, tensors, loaded, place)
    if kind == "sparse_coo":  # sparse_coo_tensor checks the indices against the size
        if not isinstance(value, dict) or not (
            {"same"} == set(value)
            or {"indices", "values", "name", "size", "coalesced"} == set(value)
        ):
            raise TypeError(f"sparse entry {str(value)[:200]}")
        if "same" in value:
            if not isinstance(value["same"], str) or ("sparse", value["same"]) not in loaded:
                raise ValueError(f"sparse entry {value!r} names a tensor not given before it")
            return loaded["sparse", value["same"]]
        indices, values = (_decode(value[p], tensors, loaded, place) for p in ("indices", "values"))
        if not isinstance(indices, Tensor) or not isinstance(values, Tensor):
            raise TypeError(f"sparse entry {str(value)[:200]}")
        made = sparse_coo_tensor(indices, values.detach(), value["size"],
                                 is_coalesced=value["coalesced"] is True)  # fmt: skip
        loaded["sparse", value["name"]] = made
        return made

    if kind == "dict":
        out = {}
        for k, v in value:
            if isinstance(k, bool) or not isinstance(k, (str, int)):
                raise TypeError(f"dict key of type {type(k).__name__}")
            out[k] = _decode(v, tensors, loaded, place)
        return out
    if kind in ("list", "tuple"):
        items = [_decode(v, tensors, loaded, place) for v in value]
        return tuple(items) if kind == "tuple" else items
    raise ValueError(f"unknown entry kind {kind!r} in {str(node)[:200]}")


def _decode_tensor(kind: str, value: Any, tensors: dict, loaded: dict, place: Any) -> Tensor:
    if kind == "tensor_of" and isinstance(value, dict):
        entry = dict(value)
    elif kind == "tensor_on" and isinstance(value, list) and len(value) == 2:  # older files
        entry = {"key": value[0], "device": value[1]}  # a tensor saved on a device
    elif kind == "tensor":
        entry = {"key": value}
    else:
        raise TypeError(f"tensor entry {str({kind: value})[:200]}")
    key, location, alias = entry.get("key"), entry.get("device", "cpu"), entry.get("alias")
    if not isinstance(key, str) or not isinstance(location, str):
        raise TypeError(f"tensor entry {value!r}")
    if alias is None:
        if key in loaded or key not in tensors:
            raise ValueError(
                f"tensor entry {key!r} names a tensor the file lacks, or one given already"
            )
        t = _placed(place, Tensor._make(tensors[key]), location)
    elif alias == "view" and key in tensors:  # it may come before the tensor it views
        t = _placed(place, Tensor._make(view_in(tensors[key], entry)), location)
        loaded[str(entry.get("name"))] = t  # for a "same" entry of this view
    elif not isinstance(loaded.get(key), Tensor):
        raise ValueError(f"tensor {key!r} is aliased before it is given")
    elif alias == "same":
        return loaded[key]
    elif alias == "memory":
        t = Tensor._make(loaded[key]._array)  # the memory placed once, shared
    else:
        raise ValueError(f"unknown alias {alias!r}")
    if entry.get("parameter"):
        t = Parameter(t, requires_grad=bool(entry.get("requires_grad")))
    elif entry.get("requires_grad"):
        t.requires_grad_(True)
    if alias is None:
        loaded[key] = t
    return t


# -- the file ------------------------------------------------------------------------------


# safetensors: the header's length (8 bytes, little endian), a JSON header naming each
# tensor's dtype, shape and data_offsets (from the end of the header), then the bytes.
_DTYPES = {
    "BOOL": xp.dtype(bool), "U8": xp.dtype(xp.uint8), "I8": xp.dtype(xp.int8),
    "U16": xp.dtype(xp.uint16), "I16": xp.dtype(xp.int16), "U32": xp.dtype(xp.uint32),
    "I32": xp.dtype(xp.int32), "U64": xp.dtype(xp.uint64), "I64": xp.dtype(xp.int64),
    "F16": array.float16, "BF16": array.bfloat16, "F32": xp.dtype(xp.float32),
    "F64": xp.dtype(xp.float64),
}  # fmt: skip
_NAMES = {dtype: name for name, dtype in _DTYPES.items()}
_MAX_HEADER = 100_000_000  # the safetensors readers' own limit
_MAX_DIMS = 64  # NumPy's most
_MAX_DEPTH = 200  # containers nested deeper are refused: save, JSON and load all recurse


def _digests(tensors: dict[str, Any], structure: str) -> tuple[str, str]:
    """(a digest of every tensor: name, dtype, shape and bytes; the same with the structure
    first: the whole file), in one pass over the arrays' own memory."""
    alone, whole = hashlib.sha256(), hashlib.sha256()
    whole.update(structure.encode("utf-8") + b"\0")
    for name in sorted(tensors):
        a = tensors[name]
        for h in (alone, whole):
            h.update(json.dumps([name, a.dtype.str, list(a.shape)]).encode())
        data = xp.ascontiguousarray(a).reshape(-1).view(xp.uint8).data
        alone.update(data)
        whole.update(data)
    return alone.hexdigest(), whole.hexdigest()


def _header(tensors: dict[str, Any], metadata: dict[str, str]) -> tuple[bytes, list[str]]:
    """The file's first bytes (length and JSON header, keys sorted so the same state makes
    the same bytes) and the order the tensors follow it in: widest dtype first, then by
    name, so each starts aligned to its item size."""
    order = sorted(tensors, key=lambda k: (-tensors[k].dtype.itemsize, k))
    header: dict[str, Any] = {"__metadata__": metadata}
    offset = 0
    for key in order:
        a = tensors[key]
        header[key] = {"dtype": _NAMES[a.dtype], "shape": list(a.shape),
                       "data_offsets": [offset, offset + a.nbytes]}  # fmt: skip
        offset += a.nbytes
    text = json.dumps(header, sort_keys=True, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)  # the data starts 8-byte aligned, as the format wants
    return struct.pack("<Q", len(text)) + text, order


class _Unreadable(Exception):
    """Why a file is not a safetensors file."""


def _read(f: Any, path: Any) -> tuple[dict[str, Any], dict[str, str]]:
    """(the tensors by name, the header's metadata) from the file object ``f``: each tensor
    read straight into its own new array, so a load holds one copy of the data."""
    try:
        start = f.tell()
        size = f.seek(0, os.SEEK_END) - start
        f.seek(start)
    except (AttributeError, OSError, ValueError):  # not seekable (a pipe): read it whole
        f = io.BytesIO(f.read())
        size = len(f.getbuffer())
    entries, metadata = _checked_header(f, size, path)
    tensors = {}
    for name, dtype_name, shape, _ in entries:
        if dtype_name not in _DTYPES:
            raise ValueError(
                f"load: {path}: tensor {name!r} has dtype {dtype_name}, which chainrule cannot "
                f"load (it loads {', '.join(_DTYPES)}); convert it to one of those first"
            )
        arr = xp.empty(shape, dtype=_DTYPES[dtype_name])
        view = arr.reshape(-1).view(xp.uint8).data
        done = 0
        while done < len(view):  # readinto may return less than asked
            n = f.readinto(view[done:]) if hasattr(f, "readinto") else _read_some(f, view[done:])
            if not n:
                raise ValueError(f"load: {path} is not a readable safetensors file (it ends "
                                 f"inside tensor {name!r})")  # fmt: skip
            done += n
        tensors[name] = arr
    return tensors, metadata


def header_shapes(path: str | os.PathLike) -> dict[str, tuple[int, ...]]:
    """Each tensor's shape in the safetensors file at ``path``, from its header alone (checked
    as load checks it; the data is not read): what a model built from sizes read elsewhere
    must match before it is built."""
    with open(path, "rb") as f:
        entries, _ = _checked_header(f, f.seek(0, os.SEEK_END) - f.seek(0), path)
    return {name: shape for name, _, shape, _ in entries}


def _checked_header(f: Any, size: int, path: Any) -> tuple[list, dict]:
    """_parse_header's result, or the ValueError naming the file and what is wrong."""
    try:
        return _parse_header(f, size)
    except (_Unreadable, ValueError, TypeError, KeyError, RecursionError, struct.error) as e:
        raise ValueError(f"load: {path} is not a readable safetensors file ({e})") from None


def _read_some(f: Any, into: memoryview) -> int:
    data = f.read(len(into))
    into[: len(data)] = data
    return len(data)


def _parse_header(f: Any, size: int) -> tuple[list[tuple[str, str, tuple, int]], dict]:
    """The header's entries (name, dtype, shape, offset) in the order of their data, checked
    as the safetensors readers check them (the data follows without gaps or overlaps and
    ends with the file), and its metadata; the file is left at the data's start."""
    if size < 8:
        raise _Unreadable(f"{size} bytes, fewer than the header's length takes")
    (n,) = struct.unpack("<Q", f.read(8))
    if n > min(size - 8, _MAX_HEADER):
        raise _Unreadable(f"a header of {n} bytes in a file of {size}")
    header = json.loads(f.read(n).decode("utf-8"))
    if not isinstance(header, dict):
        raise _Unreadable("the header is not a JSON object")
    metadata = header.pop("__metadata__", None) or {}
    if not isinstance(metadata, dict) or not all(isinstance(v, str) for v in metadata.values()):
        raise _Unreadable("the header's __metadata__ is not a map of strings")
    entries = []
    for name, info in header.items():
        shape, begin, end = _entry(name, info)
        entries.append((name, info["dtype"], tuple(shape), begin, end))
    entries.sort(key=lambda e: (e[3], e[4]))
    at = 0
    for name, _, _, begin, end in entries:
        if begin != at or end < begin:
            raise _Unreadable(f"tensor {name!r}'s data does not follow the one before it")
        if end > size - 8 - n:
            raise _Unreadable(f"tensor {name!r} ends at byte {end} of data; the file holds "
                              f"{size - 8 - n}")  # fmt: skip
        at = end
    if at != size - 8 - n:
        raise _Unreadable(f"the tensors take {at} bytes; the file holds {size - 8 - n}")
    return [(name, dtype, shape, begin) for name, dtype, shape, begin, _ in entries], metadata


def _entry(name: str, info: Any) -> tuple[list[int], int, int]:
    """A header entry's (shape, begin, end), checked: a dtype name, a shape of at most
    _MAX_DIMS integers (true is an int to Python, not to the format) whose array could
    exist (NumPy multiplies the non-zero ones, so 10**30 beside a 0 holds no bytes yet
    fits no array), and data_offsets that hold exactly its bytes."""
    if not isinstance(info, dict) or not {"dtype", "shape", "data_offsets"} <= set(info):
        raise _Unreadable(f"tensor {name!r} has a malformed entry {str(info)[:200]}")
    shape, offsets, dtype = info["shape"], info["data_offsets"], info["dtype"]
    numbers = [*shape, *offsets] if isinstance(shape, list) and isinstance(offsets, list) else []
    if (
        not isinstance(dtype, str)
        or not numbers
        or len(offsets) != 2
        or not all(type(d) is int and d >= 0 for d in numbers)
    ):
        raise _Unreadable(f"tensor {name!r} has a malformed entry {str(info)[:200]}")
    (begin, end), item = offsets, _DTYPES[dtype].itemsize if dtype in _DTYPES else 1
    if len(shape) > _MAX_DIMS or math.prod(d for d in shape if d) * item > sys.maxsize:
        raise _Unreadable(f"tensor {name!r} has shape {shape}, which no array can have")
    if dtype in _DTYPES and end - begin != math.prod(shape) * item:
        raise _Unreadable(f"tensor {name!r}'s data_offsets do not fit its shape {shape}")
    return shape, begin, end


def write_atomically(path: str | os.PathLike, write: Callable[[str], Any]) -> None:
    """``write(tmp)`` to a new file beside ``path``, then rename it over ``path``: a reader
    sees the old file or the whole new one, never half of it (metrics, plots, JSON). The
    checkpoints' own path below also flushes to disk and clears killed saves' orphans."""
    folder, base = os.path.split(os.fspath(path))
    stem, ext = os.path.splitext(base)  # kept last: matplotlib reads the format from it
    tmp = os.path.join(folder, f".{stem}.{secrets.token_hex(8)}.tmp{ext}")
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _atomic_write(path: Path, write: Callable[[BinaryIO], Any]) -> None:
    folder = path.parent
    _clear_orphans(path)
    tmp = folder / f".{path.name}.{os.getpid()}.{secrets.token_hex(8)}.tmp"
    # O_EXCL: never reuse a file someone else made; mode 0o666 lets the umask decide, as for
    # any new file (mkstemp would leave it readable by its owner only).
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    except FileNotFoundError:  # OSError's own message would name the temporary file
        raise FileNotFoundError(
            f"save: the folder {str(folder)!r} does not exist; got path {str(path)!r}"
        ) from None
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    # The rename itself must reach the disk too: flush the folder's entry (POSIX only).
    if hasattr(os, "O_DIRECTORY"):
        dir_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def _clear_orphans(path: Path) -> None:
    """Remove the temporary files earlier saves to ``path`` left when killed mid-write (save
    and load of a path call this): those named ``.NAME.<hex>.tmp`` or
    ``.NAME.<pid>.<hex>.tmp`` as save names them, and only those, once untouched for
    ``_STALE`` seconds (a live save writes to its file all along) or at once when the process
    they name is gone."""
    pattern = re.compile(rf"\.{re.escape(path.name)}\.(?:(\d+)\.)?[0-9a-f]{{16}}\.tmp")
    now = time.time()
    with contextlib.suppress(OSError):
        for tmp in path.parent.glob(f".{glob.escape(path.name)}.*.tmp"):
            named = pattern.fullmatch(tmp.name)
            if named is None:
                continue
            with contextlib.suppress(OSError):
                gone = named[1] is not None and not _alive(int(named[1]))
                if gone or now - tmp.lstat().st_mtime > _STALE:
                    tmp.unlink()


_STALE = 60.0  # seconds: a temporary file untouched for longer is a killed save's


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # it exists but belongs to someone else
        return True
    return True


def _write(f: Any, payload: Any) -> None:
    """Write bytes or an array's memory in 64 MiB pieces (the seam the tests break to check
    atomicity)."""
    view = memoryview(payload)
    for start in range(0, len(view), 1 << 26):
        f.write(view[start : start + (1 << 26)])
