"""What an op makes once for each shape is kept in a Bounded dict, which empties itself when
full; no module writes that bound out by hand."""

from __future__ import annotations

import re
from pathlib import Path

from chainrule.bounded import Bounded

SRC = Path(__file__).resolve().parents[2] / "src" / "chainrule"


def test_a_bounded_dict_starts_again_when_full() -> None:
    kept: Bounded[int, str] = Bounded(3)
    assert [kept.keep(k, str(k)) for k in range(3)] == ["0", "1", "2"]
    assert dict(kept) == {0: "0", 1: "1", 2: "2"}
    assert kept.keep(3, "3") == "3" and dict(kept) == {3: "3"}  # full: emptied, then kept
    assert kept.get(0) is None and kept.bound == 3


def test_no_module_bounds_a_cache_by_hand() -> None:
    by_hand = re.compile(r"if len\(_[A-Z_]+\) >= \d+:[^\n]*\n\s*_[A-Z_]+\.clear\(\)")
    found = [str(p.relative_to(SRC)) for p in SRC.rglob("*.py") if by_hand.search(p.read_text())]
    assert found == [], f"use chainrule.bounded.Bounded and its keep(): {found}"
