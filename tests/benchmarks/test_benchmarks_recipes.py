"""benchmarks/recipes_vs_torch.py trains two cheap recipes for one epoch on both frameworks
(no timing is asserted), and its PyTorch twin of a model computes what the model computes."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule import nn
from chainrule.tools import recipes
from tests.helpers import load_benchmark
from tests.twins import copy_back


@pytest.fixture
def bench(monkeypatch):
    return load_benchmark("recipes_vs_torch.py", monkeypatch)


def test_recipes_vs_torch_quick(bench, capsys) -> None:
    results = bench.main(["--quick", "--markdown", "--recipes", "breast-cancer", "moons"])
    assert list(results) == ["breast-cancer", "moons"]
    for r in results.values():
        assert r["metric"] == "test_accuracy" and r["epochs"] == 1
        assert 0 <= r["chainrule"]["value"] <= 1
        assert 0 <= r["pytorch"]["value"] <= 1
    out = capsys.readouterr().out
    assert "| recipe | epochs | metric | chainrule | s | PyTorch | s | time ratio |" in out
    assert "| moons | 1 | test accuracy |" in out


def test_mirror_computes_the_same_cnn(bench) -> None:
    """digits-cnn's model (conv, relu, max-pool, flatten, dropout, linear) and its twin, with
    the same weights, in eval mode: the same logits."""
    cr.manual_seed(0)
    ours = recipes.load("digits-cnn").model().eval()
    twin = bench.mirror(ours).eval()
    copy_back(twin, ours)
    x = np.random.default_rng(0).standard_normal((3, 1, 8, 8)).astype(np.float32)
    with cr.no_grad(), torch.no_grad():
        np.testing.assert_allclose(
            ours(cr.tensor(x)).numpy(), twin(torch.from_numpy(x)).numpy(), rtol=1e-5, atol=1e-5
        )


def test_mirror_names_a_layer_it_cannot_copy(bench) -> None:
    with pytest.raises(TypeError, match="mirror: no PyTorch twin for Tanh; known: Linear, ReLU"):
        bench.mirror(nn.Sequential(nn.Linear(2, 2), nn.Tanh()))
