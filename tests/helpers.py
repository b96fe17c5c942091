"""Small helpers shared by the tests."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_off() -> Iterator[None]:
    """No cyclic collector inside: whatever is freed there is freed by reference counting."""
    was = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
