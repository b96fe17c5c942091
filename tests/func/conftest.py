"""What vmap's tests share: counting the ops that ran once per example, and the calls of the
function vmap maps (once where it runs on the whole batch)."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from chainrule import batching


@pytest.fixture
def loops(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The ops that ran once per example (batching.loop, wherever a module holds it)."""
    ran: list[str] = []
    loop = batching.loop

    def counted(cls: Any, args: dict, batched: dict, size: int) -> Any:
        ran.append(cls.__name__)
        return loop(cls, args, batched, size)

    for name, module in list(sys.modules.items()):
        if name.startswith("chainrule") and getattr(module, "loop", None) is loop:
            monkeypatch.setattr(module, "loop", counted)
    return ran


class Calls(list):
    """One entry for each call of the functions ``counted`` wraps."""

    def counted(self, f: Any) -> Any:
        def call(*args: Any) -> Any:
            self.append(1)
            return f(*args)

        return call


@pytest.fixture
def calls() -> Calls:
    return Calls()
