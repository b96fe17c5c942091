"""Bounded: a dict of values made once for each key (index arrays, plans, parsed arguments)
that starts again, empty, when it is full: a bound on what a process keeps."""

from __future__ import annotations

from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class Bounded(dict[K, V], Generic[K, V]):
    """A dict of at most ``bound`` entries: ``keep`` empties it when full, then adds."""

    def __init__(self, bound: int) -> None:
        super().__init__()
        self.bound = bound

    def keep(self, key: K, value: V) -> V:
        """value, kept under key (the dict emptied first where it holds ``bound`` entries)."""
        if len(self) >= self.bound:
            self.clear()
        self[key] = value
        return value
