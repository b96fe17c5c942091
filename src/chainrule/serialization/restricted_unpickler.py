"""What ``load(weights_only=True)`` may unpickle, as PyTorch's restricted loading: a pickled
object (a Module saved whole) loads only when every class and function its pickle names is
allowed (chainrule's tensors and PyTorch's containers by default, the rest by
``add_safe_globals`` or ``safe_globals``); anything else is refused by name before any of its
code runs. The package's __init__ calls it and re-exports its public names."""

from __future__ import annotations

import collections
import contextlib
import os
import pickle
import warnings
from collections.abc import Iterable, Iterator
from typing import Any, BinaryIO

from .. import array
from ..array import device
from ..autograd.versions import Counter
from ..nn.module import Parameter
from ..tensor import Tensor
from ..tensor.size import Size

__all__ = [
    "add_safe_globals",
    "clear_safe_globals",
    "get_safe_globals",
    "safe_globals",
]

_TRUE = ("1", "y", "yes", "true")  # the values PyTorch's environment switches take
_user: list[Any] = []  # what add_safe_globals and safe_globals allowed, in order


def _name(entry: Any) -> str:
    """An allowed entry's pickled name: ``module.qualname``, or the name an
    ``(object, "module.name")`` pair gives it."""
    if isinstance(entry, tuple):
        obj, name = entry
        return name
    return f"{entry.__module__}.{entry.__qualname__}"


def _defaults() -> dict[str, Any]:
    """What a Tensor's, a Parameter's and a state's pickle name: chainrule's own classes,
    NumPy's array rebuilding, and Python's containers."""
    rebuild: Any = array.host.zeros(1).__reduce__()[0]  # NumPy's own name for it, by version
    allowed: list[Any] = [Tensor, Parameter, Counter, Size, device, array.dtypes.dtype]
    allowed += [array.dtypes.dtype_object]  # a chainrule dtype's pickle: by its name
    allowed += [array.host.ndarray, array.host.dtype, collections.OrderedDict, set, frozenset]
    allowed += [slice, complex, bytearray]
    out = {_name(obj): obj for obj in allowed}
    out[f"{rebuild.__module__}.{rebuild.__name__}"] = rebuild
    kinds: list[Any] = [array.float16, array.float32, array.float64, array.bfloat16, array.bool_]
    kinds += [array.int8, array.int16, array.int32, array.int64, array.uint8]
    for kind in kinds:  # a dtype pickles by its class or its scalar type (bfloat16's)
        for named in (type(array.host.dtype(kind)), array.host.dtype(kind).type):
            out[_name(named)] = named
    return out


def add_safe_globals(safe_globals: Iterable[Any]) -> None:
    """Allow these classes and functions (or ``(object, "module.name")`` pairs) in every
    later ``load(weights_only=True)``, as ``torch.serialization.add_safe_globals``."""
    for entry in safe_globals:
        _check(entry)
        _user.append(entry)


def get_safe_globals() -> list[Any]:
    """What add_safe_globals and open safe_globals contexts allow now."""
    return list(_user)


def clear_safe_globals() -> None:
    """Forget every allowed entry add_safe_globals gave."""
    _user.clear()


@contextlib.contextmanager
def safe_globals(safe_globals: Iterable[Any]) -> Iterator[None]:
    """``with safe_globals([...]):`` allows these entries for the loads inside it only."""
    before = list(_user)
    add_safe_globals(safe_globals)
    try:
        yield
    finally:
        _user[:] = before


def _check(entry: Any) -> None:
    if isinstance(entry, tuple):
        ok = len(entry) == 2 and isinstance(entry[1], str) and "." in entry[1]
    else:
        ok = hasattr(entry, "__module__") and hasattr(entry, "__qualname__")
    if not ok:
        raise TypeError(
            "add_safe_globals: each entry must be a class or function, or a pair (object, "
            f"'module.name'); got {entry!r}"
        )


def allowed() -> dict[str, Any]:
    return {**_defaults(), **{_name(e): (e[0] if isinstance(e, tuple) else e) for e in _user}}


class _Inert:
    """What a not-allowed name stands for while a pickle is only being read for its names:
    it takes any arguments and state and runs nothing."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __setstate__(self, state: Any) -> None:
        pass

    def append(self, item: Any) -> None:
        pass

    def extend(self, items: Any) -> None:
        pass

    def __setitem__(self, key: Any, value: Any) -> None:
        pass


class _Restricted(pickle.Unpickler):
    """An unpickler that finds only allowed names: the others are refused (``unsafe`` None)
    or listed in ``unsafe`` and stood in for by an inert class."""

    def __init__(self, f: BinaryIO, where: Any, unsafe: list[str] | None = None) -> None:
        super().__init__(f)
        self.allowed, self.where, self.unsafe = allowed(), where, unsafe

    def find_class(self, module: str, name: str) -> Any:
        key = f"{module}.{name}"
        if key in self.allowed:
            return self.allowed[key]
        if self.unsafe is not None:
            if key not in self.unsafe:
                self.unsafe.append(key)
            return _Inert
        raise pickle.UnpicklingError(
            f"load: weights only load failed: {self.where} names {key}, which is not an "
            "allowed global by default. If you trust it, allow it with "
            f"chainrule.serialization.add_safe_globals([{name}]) or within "
            f"`with chainrule.serialization.safe_globals([{name}]):` (torch.serialization's "
            "names); or, only if you trust the whole file (unpickling can run arbitrary "
            "code), load it with weights_only=False. Nothing of the file's own code ran. To "
            "need no trust, save the state_dict() instead and load it with load_state_dict."
        )

    def persistent_load(self, pid: Any) -> Any:
        raise pickle.UnpicklingError(
            f"load: weights only load failed: {self.where} holds a persistent id, which "
            "chainrule's files never do"
        )


def settled(given: bool | None) -> bool:
    """weights_only as PyTorch settles it from the argument and its environment switches."""

    def switch(name: str) -> bool:
        return any(
            os.getenv(f"{lib}_{name}", "0").lower() in _TRUE for lib in ("TORCH", "CHAINRULE")
        )

    force, force_no = switch("FORCE_WEIGHTS_ONLY_LOAD"), switch("FORCE_NO_WEIGHTS_ONLY_LOAD")
    if force and force_no:
        raise RuntimeError(
            "load: only one of TORCH_FORCE_WEIGHTS_ONLY_LOAD and TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD "
            "(or their CHAINRULE_ names) should be set, but both were set"
        )
    if force:
        return True
    if given is None and force_no:
        warnings.warn(
            "load: TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD is set and weights_only was not given, so "
            "weights_only=False",
            UserWarning,
            stacklevel=3,
        )
        return False
    return True if given is None else bool(given)


def unpickle(f: BinaryIO, where: Any) -> Any:
    """The object a pickle holds, if it names only allowed classes and functions."""
    return _Restricted(f, where).load()


def unsafe_names(f: BinaryIO, where: Any) -> list[str]:
    """The names a pickle holds that are not allowed, read with inert stand-ins for them."""
    unsafe: list[str] = []
    try:
        _Restricted(f, where, unsafe).load()
    except Exception:  # an inert stand-in may not take what follows it: the names so far
        pass
    return unsafe
