"""Run a PyTorch program on chainrule: while ``torch_is_chainrule()`` is active, ``import torch``
and every ``import torch.x.y`` (``from torch.utils.data import DataLoader``, ``import
torch.nn.functional as F``) give chainrule's module of the same path; real torch's modules
come back when it ends. ``load`` runs a program's file as a fresh module on either library."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).parent


def _is_torch(name: str) -> bool:
    return name == "torch" or name.startswith("torch.")


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``torch.x`` as chainrule's ``chainrule.x`` (its import error, if chainrule has
    none, names the chainrule module that is missing) and loads it as that very module."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if not _is_torch(fullname):
            return None
        module = importlib.import_module("chainrule" + fullname[len("torch") :])
        return importlib.machinery.ModuleSpec(
            fullname, self, loader_state=(module, module.__spec__)
        )

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return spec.loader_state[0]  # type: ignore[no-any-return]

    def exec_module(self, module: ModuleType) -> None:
        # the import system stamped the alias's spec on the module; it gets its own back, so
        # chainrule's modules are as they were
        module.__spec__ = module.__spec__.loader_state[1]  # type: ignore[union-attr]


@contextmanager
def torch_is_chainrule() -> Iterator[None]:
    """``import torch...`` resolves to chainrule inside the block, to torch again after it."""
    saved = {name: module for name, module in sys.modules.items() if _is_torch(name)}
    for name in saved:
        del sys.modules[name]
    finder = _Alias()
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
        for name in [name for name in sys.modules if _is_torch(name)]:
            del sys.modules[name]
        sys.modules.update(saved)


def load(program: str, on_chainrule: bool) -> ModuleType:
    """A fresh module from ``programs/<program>.py`` (beside this file), its ``import torch``
    lines run on chainrule when ``on_chainrule`` (its functions keep the library they
    imported)."""
    path = HERE / f"{program}.py"
    name = f"program_{program}_{'chainrule' if on_chainrule else 'torch'}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(program: str, on_chainrule: bool, entry: str = "main", **kwargs: Any) -> Any:
    """``<program>.main(**kwargs)`` (or ``entry``), with torch aliased to chainrule for the
    whole run when ``on_chainrule``, so imports made inside functions are aliased too."""
    if not on_chainrule:
        return getattr(load(program, False), entry)(**kwargs)
    with torch_is_chainrule():
        main: Callable[..., Any] = getattr(load(program, True), entry)
        return main(**kwargs)
