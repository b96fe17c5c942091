"""mt19937's 64-bit draws (``random64()``: two words, the first high) come from NumPy's own
64-bit draw of the engine for long runs: the same numbers as pairing the 32-bit words, the
engine left in the same state; a NumPy Generator passed as ``generator=`` keeps its words."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr
from chainrule import array
from chainrule.array import torch_streams as ts


def paired(w: np.ndarray) -> np.ndarray:
    return (w[0::2] << np.uint64(32)) | w[1::2]


@pytest.mark.parametrize("n", [1, ts.WIDE - 1, ts.WIDE, 3 * ts.WIDE + 5])
def test_wide_draws_are_paired_words(n: int) -> None:
    a, b = cr.Generator().manual_seed(7), cr.Generator().manual_seed(7)
    assert (ts.words64(a, n) == paired(b.words(2 * n))).all()
    assert (a.get_state().numpy() == b.get_state().numpy()).all()
    assert ts.words64(a, 3)[0] == paired(b.words(6))[0]  # the streams go on alike


def test_a_drawn_generator_is_no_longer_fresh() -> None:
    a, b = cr.Generator().manual_seed(7), cr.Generator().manual_seed(7)
    ts.words64(a, ts.WIDE)
    b.words(2 * ts.WIDE)
    assert (a.get_state().numpy() == b.get_state().numpy()).all()


def test_a_numpy_generator_keeps_its_own_words() -> None:
    g = array.generator(np.random.default_rng(3))  # its words, PyTorch's recipes
    words = np.random.default_rng(3).integers(0, 2**32, 2 * ts.WIDE, dtype=np.uint64)
    assert (ts.words64(g, ts.WIDE) == paired(words)).all()
