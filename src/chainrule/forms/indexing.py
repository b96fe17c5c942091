"""The function forms of tensor/indexing.py's methods: ``cr.f(x, ...)`` is ``x.f(...)``,
``input`` made a Tensor first."""

from __future__ import annotations

__all__: list[str] = []
