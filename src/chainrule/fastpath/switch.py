"""The one switch of every speed trick: per thread, as grad mode is, starting in each thread at
the process default that CHAINRULE_FASTPATH sets (0 turns the tricks off)."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

DEFAULT = os.environ.get("CHAINRULE_FASTPATH", "1").strip() != "0"  # the process's, read once


class _State(threading.local):
    def __init__(self) -> None:
        self.on = DEFAULT  # every new thread starts here, whatever another thread set


state = _State()  # this thread's switch; read on every op, so a plain attribute


def enabled() -> bool:
    """Whether the speed tricks are on in this thread (the default; CHAINRULE_FASTPATH=0
    turns them off)."""
    return state.on


def set_enabled(on: bool) -> None:
    """Turn every speed trick on or off, in this thread."""
    state.on = bool(on)


@contextmanager
def disabled() -> Iterator[None]:
    """Run the block with every speed trick off in this thread (the plain rules only), then
    restore."""
    before = state.on
    state.on = False
    try:
        yield
    finally:
        state.on = before
