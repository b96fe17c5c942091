"""Whole PyTorch programs whose numbers all come from the random generator
(programs/seeded_streams.py: makemore's sampled names, a nanoGPT-style model's initial
weights and dropout, a DataLoader's shuffles) give the same numbers on PyTorch and on
chainrule, bit for bit; only the logits, which pass through matrix products summed in
another order, are compared within float32 rounding."""

from __future__ import annotations

import numpy as np
import pytest

from tests.pytorch_programs.programs.aliasing import run

pytest.importorskip("torch")


@pytest.fixture(scope="module")
def both() -> tuple[dict, dict]:
    return run("seeded_streams", on_chainrule=False), run("seeded_streams", on_chainrule=True)


def test_makemore_samples_the_same_names(both: tuple[dict, dict]) -> None:
    theirs, ours = (r["makemore"] for r in both)
    assert ours["p"] == theirs["p"]
    assert ours["drawn"] == theirs["drawn"]
    assert ours["W"].tobytes() == theirs["W"].tobytes()
    assert ours["names"] == theirs["names"] and len(ours["names"]) == 20


def test_nanogpt_starts_from_the_same_weights(both: tuple[dict, dict]) -> None:
    theirs, ours = (r["nanogpt"] for r in both)
    assert list(ours["weights"]) == list(theirs["weights"])
    for name, value in theirs["weights"].items():
        assert ours["weights"][name].tobytes() == value.tobytes(), name
    assert ours["idx"] == theirs["idx"]
    # the same dropout masks: a different one would move logits by ~0.1, not ~1e-6
    np.testing.assert_allclose(ours["logits"], theirs["logits"], rtol=0, atol=2e-5)


def test_dataloader_shuffles_in_the_same_order(both: tuple[dict, dict]) -> None:
    theirs, ours = (r["shuffled"] for r in both)
    assert ours["epochs"] == theirs["epochs"]
    assert ours["epochs"][0] != ours["epochs"][1]
    assert ours["after"] == theirs["after"]  # the global stream is where PyTorch's is
