"""torch's numeric constants: ``cr.inf``, ``cr.nan``, ``cr.pi``, ``cr.e`` and ``cr.newaxis``."""

from __future__ import annotations

import math

inf = math.inf
nan = math.nan
pi = math.pi
e = math.e
newaxis = None  # x[:, cr.newaxis] adds a dim, as None does

__all__ = ["e", "inf", "nan", "newaxis", "pi"]
