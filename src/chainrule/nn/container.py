"""Containers: Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict. Each keeps
its submodules or parameters as attributes named by position or key, so the module walker
(module.py) sees them like any other.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ..tensor import Tensor
from .module import Module, Parameter, walk_value


def _submodules(m: Module) -> list[tuple[str, Module]]:
    """(name, module) for each submodule m holds: what its _members gives of kind 'module',
    found without generators, since Sequential walks this list on every call."""
    items = []
    for name, value in vars(m).items():
        if isinstance(value, Module):
            items.append((name, value))
        elif isinstance(value, (list, tuple, dict)) and name != "_buffers":
            items += [(n, sub) for kind, n, sub in walk_value(name, value) if kind == "module"]
    return items


class _Indexed(Module):
    """Shared by Sequential and ModuleList: submodules held under the names '0', '1', ..."""

    def _items(self) -> list[tuple[str, Module]]:
        return _submodules(self)

    def _index(self, idx: int) -> str:
        n = len(self)
        if not -n <= idx < n:
            raise IndexError(f"{type(self).__name__}: index {idx} is out of range for length {n}")
        return self._items()[idx % n][0]

    def _renumber(self, modules: list[Module]) -> None:
        for name, _ in self._items():
            delattr(self, name)
        for i, m in enumerate(modules):
            self.add_module(str(i), m)

    def __len__(self) -> int:
        return len(self._items())

    def __iter__(self) -> Iterator[Module]:
        return iter([m for _, m in self._items()])

    def __setitem__(self, idx: int, module: Module) -> None:
        self.add_module(self._index(idx), module)

    def __delitem__(self, idx: int | slice) -> None:
        modules = list(self)
        del modules[idx]
        self._renumber(modules)

    def append(self, module: Module) -> _Indexed:
        self.add_module(str(len(self)), module)
        return self


class Sequential(_Indexed):
    """Modules called in order, each on the previous one's output.

    ``Sequential(m0, m1, ...)`` names them '0', '1', ...; ``Sequential(OrderedDict(...))``
    uses the given names. Indexing gives a module; a slice gives a Sequential keeping names.
    """

    def __init__(self, *args: Any) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, m in args[0].items():
                self.add_module(name, m)
        else:
            for i, m in enumerate(args):
                self.add_module(str(i), m)

    def __getitem__(self, idx: int | slice) -> Any:
        if isinstance(idx, slice):
            return Sequential(OrderedDict(self._items()[idx]))
        return getattr(self, self._index(idx))

    def forward(self, input: Any) -> Any:
        for _, m in self._items():
            input = m(input)
        return input


class ModuleList(_Indexed):
    """A list of modules whose parameters the parent finds; it has no forward."""

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, idx: int | slice) -> Any:
        if isinstance(idx, slice):
            return ModuleList(list(self)[idx])
        return getattr(self, self._index(idx))

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        for m in modules:
            self.append(m)
        return self

    def insert(self, index: int, module: Module) -> None:
        modules = list(self)
        modules.insert(index, module)
        self._renumber(modules)


class ModuleDict(Module):
    """A dict of modules by name, in insertion order; it has no forward."""

    def __init__(
        self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]] | None = None
    ) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def _items(self) -> list[tuple[str, Module]]:
        return _submodules(self)

    def __getitem__(self, key: str) -> Module:
        if key not in self:
            raise KeyError(f"ModuleDict: no module named {key!r}; has {self.keys()}")
        return getattr(self, key)

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        self[key]  # the KeyError names what exists
        delattr(self, key)

    def __contains__(self, key: object) -> bool:
        return any(name == key for name, _ in self._items())

    def __len__(self) -> int:
        return len(self._items())

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def keys(self) -> list[str]:
        return [name for name, _ in self._items()]

    def values(self) -> list[Module]:
        return [m for _, m in self._items()]

    def items(self) -> list[tuple[str, Module]]:
        return self._items()

    def update(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]]) -> None:
        pairs = modules.items() if isinstance(modules, Mapping) else modules
        for key, m in pairs:
            self[key] = m


def _as_parameter(value: Any) -> Any:
    """A tensor put in a ParameterList or ParameterDict becomes a Parameter (its array
    shared), as PyTorch; a Parameter stays itself."""
    return (
        Parameter(value)
        if isinstance(value, Tensor) and not isinstance(value, Parameter)
        else value
    )


def _size(p: Tensor) -> str:
    return "x".join(str(n) for n in p.shape)


def _parameter_names(module: Module) -> list[str]:
    """The names of a module's own parameters, in the order they were set."""
    return [name for kind, name, _ in module._members() if kind == "parameter"]


class ParameterList(Module):
    """A list of Parameters held under the names '0', '1', ...; tensors given become
    Parameters. The parent finds them as it finds any parameter."""

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        if values is not None:
            self.extend(values)

    def _names(self) -> list[str]:
        return _parameter_names(self)

    def __len__(self) -> int:
        return len(self._names())

    def __iter__(self) -> Iterator[Any]:
        return iter([getattr(self, name) for name in self._names()])

    def __getitem__(self, idx: int | slice) -> Any:
        if isinstance(idx, slice):
            return ParameterList(list(self)[idx])
        n = len(self)
        if not -n <= idx < n:
            raise IndexError(f"ParameterList: index {idx} is out of range for length {n}")
        return getattr(self, self._names()[idx % n])

    def __setitem__(self, idx: int, value: Any) -> None:
        self[idx]  # the IndexError names the length
        setattr(self, self._names()[idx % len(self)], _as_parameter(value))

    def append(self, value: Any) -> ParameterList:
        setattr(self, str(len(self)), _as_parameter(value))
        return self

    def extend(self, values: Iterable[Any]) -> ParameterList:
        for v in values:
            self.append(v)
        return self

    def extra_repr(self) -> str:
        return "\n".join(
            f"({name}): Parameter containing: [{p.dtype} of size {_size(p)}]"
            for name, p in zip(self._names(), self, strict=True)
        )


class ParameterDict(Module):
    """A dict of Parameters by name, in insertion order; tensors given become Parameters."""

    def __init__(self, parameters: Mapping[str, Any] | Iterable[tuple[str, Any]] | None = None):
        super().__init__()
        if parameters is not None:
            self.update(parameters)

    def keys(self) -> list[str]:
        return _parameter_names(self)

    def values(self) -> list[Any]:
        return [getattr(self, k) for k in self.keys()]

    def items(self) -> list[tuple[str, Any]]:
        return [(k, getattr(self, k)) for k in self.keys()]

    def __getitem__(self, key: str) -> Any:
        if key not in self:
            raise KeyError(f"ParameterDict: no parameter named {key!r}; has {self.keys()}")
        return getattr(self, key)

    def __setitem__(self, key: str, value: Any) -> None:
        self.register_parameter(key, _as_parameter(value))

    def __delitem__(self, key: str) -> None:
        self[key]  # the KeyError names what exists
        delattr(self, key)

    def __contains__(self, key: object) -> bool:
        return key in self.keys()

    def __len__(self) -> int:
        return len(self.keys())

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def update(self, parameters: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> None:
        pairs = parameters.items() if isinstance(parameters, Mapping) else parameters
        for key, value in pairs:
            self[key] = value

    def extra_repr(self) -> str:
        return "\n".join(
            f"({k}): Parameter containing: [{p.type()} of size {_size(p)}]" for k, p in self.items()
        )
