"""Training watched in TensorBoard: ``chainrule train RECIPE --tensorboard DIR`` logs the loss
per step, the learning rate and each epoch's metrics (with --diagnostics, the Monitor's
histograms and update ratios per layer), read back with TensorBoard's own reader and compared
with the run's metrics.json; the Monitor writes to a SummaryWriter it is given."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("tensorboard")

from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402

import chainrule as cr  # noqa: E402
from chainrule.tools import cli  # noqa: E402
from chainrule.utils.tensorboard import SummaryWriter  # noqa: E402


def _read(folder) -> EventAccumulator:
    acc = EventAccumulator(str(folder), size_guidance={"scalars": 0, "histograms": 0})
    acc.Reload()
    return acc


def test_train_logs_the_loss_the_metrics_and_the_diagnostics(tmp_path) -> None:
    out, tb = tmp_path / "run", tmp_path / "tb"
    code = cli.main(["train", "moons", "--epochs", "3", "--quiet", "--out", str(out),
                     "--tensorboard", str(tb), "--diagnostics"])  # fmt: skip
    assert code == 0
    acc = _read(tb)
    tags = acc.Tags()
    wanted = {"loss/train_step", "lr", "epoch/train_loss", "epoch/test_accuracy"}
    assert wanted <= set(tags["scalars"])
    history = json.loads((out / "metrics.json").read_text())["history"]
    logged = [e.value for e in acc.Scalars("epoch/test_accuracy")]
    np.testing.assert_allclose(logged, [row["test_accuracy"] for row in history], rtol=1e-6)
    assert [e.step for e in acc.Scalars("epoch/test_accuracy")] == [1, 2, 3]
    steps = [e.step for e in acc.Scalars("loss/train_step")]
    assert steps == sorted(steps) and len(steps) > 3
    assert any(t.startswith("activations/") for t in tags["histograms"])
    assert any(t.startswith("gradients/") for t in tags["histograms"])
    assert any(t.startswith("update_to_data_log10/") for t in tags["scalars"])


def test_a_language_recipe_logs_its_evaluations(tmp_path) -> None:
    tb = tmp_path / "tb"
    code = cli.main(["train", "names", "--steps", "20", "--quiet", "--out",
                     str(tmp_path / "run"), "--tensorboard", str(tb)])  # fmt: skip
    assert code == 0
    acc = _read(tb)
    assert [e.step for e in acc.Scalars("loss/train_step")] == list(range(1, 21))
    assert "eval/test_loss" in acc.Tags()["scalars"]


def test_the_monitor_writes_what_it_records(tmp_path) -> None:
    cr.manual_seed(0)
    model = cr.nn.Sequential(cr.nn.Linear(3, 8), cr.nn.ReLU(), cr.nn.Linear(8, 1))
    opt = cr.optim.SGD(model.parameters(), lr=0.1)
    with SummaryWriter(tmp_path / "tb") as writer:
        mon = cr.viz.Monitor(model, opt, every=2, writer=writer)
        for _ in range(4):
            opt.zero_grad()
            model(cr.randn(16, 3)).pow(2).mean().backward()
            opt.step()
    acc = _read(tmp_path / "tb")
    assert [e.step for e in acc.Histograms("activations/1.ReLU")] == mon.recorded == [0, 2]
    assert {"gradients/0.Linear", "gradients/2.Linear"} < set(acc.Tags()["histograms"])
    assert [e.step for e in acc.Scalars("dead_fraction/1.ReLU")] == [0, 2]
    assert [e.step for e in acc.Scalars("update_to_data_log10/0.weight")] == [0, 2]
    levels = [v for v in mon.params["0.weight"]["update_log10"] if v is not None]
    np.testing.assert_allclose([e.value for e in acc.Scalars("update_to_data_log10/0.weight")],
                               levels, rtol=1e-6)  # fmt: skip
