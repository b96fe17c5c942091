"""The Monitor's TensorBoard tags name each layer by its module name and its kind, so that the
dashboard says what layer 1 is."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("tensorboard")

from tensorboard.backend.event_processing import event_accumulator as ea  # noqa: E402

import chainrule as cr  # noqa: E402
from chainrule.utils.tensorboard import SummaryWriter  # noqa: E402


def tags(model: cr.nn.Module, log_dir: Path) -> dict[str, list[str]]:
    opt = cr.optim.SGD(model.parameters(), lr=0.1)
    with SummaryWriter(str(log_dir)) as writer, cr.viz.Monitor(model, opt, writer=writer):
        opt.zero_grad()
        model(cr.randn(4, 3)).pow(2).mean().backward()
        opt.step()
    acc = ea.EventAccumulator(str(log_dir)).Reload()
    return {kind: sorted(acc.Tags()[kind]) for kind in ("histograms", "scalars")}


def test_a_layer_is_tagged_by_name_and_kind(tmp_path: Path) -> None:
    cr.manual_seed(0)
    model = cr.nn.Sequential(cr.nn.Linear(3, 4), cr.nn.Tanh(), cr.nn.Linear(4, 1))
    found = tags(model, tmp_path)
    assert [t for t in found["histograms"] if t.startswith("activations/")] == [
        "activations/0.Linear",
        "activations/1.Tanh",
        "activations/2.Linear",
    ]
    assert "gradients/1.Tanh" in found["histograms"]
    assert "update_to_data_log10/0.weight" in found["scalars"]  # parameters: their names


def test_a_one_layer_model_is_tagged_by_its_kind(tmp_path: Path) -> None:
    found = tags(cr.nn.Linear(3, 1), tmp_path)
    assert "activations/Linear" in found["histograms"]
