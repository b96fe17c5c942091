"""chainrule.utils.tensorboard.SummaryWriter against PyTorch's: each kind of record is written by
both writers, read back by TensorBoard's own EventAccumulator, and compared."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("tensorboard")

import torch  # noqa: E402
from tensorboard.backend.event_processing import event_accumulator as ea  # noqa: E402
from tensorboard.util import tensor_util  # noqa: E402
from torch.utils.tensorboard import SummaryWriter as TorchWriter  # noqa: E402

import chainrule as cr  # noqa: E402
from chainrule.utils.tensorboard import SummaryWriter  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def load(log_dir: Path | str) -> ea.EventAccumulator:
    """Every record of the run in ``log_dir``, as TensorBoard reads it (nothing sampled away)."""
    guidance = {kind: 0 for kind in ea.DEFAULT_SIZE_GUIDANCE}
    return ea.EventAccumulator(str(log_dir), size_guidance=guidance).Reload()


def both(tmp_path: Path, write: Callable[[Any], None]) -> tuple[Path, Path]:
    """``write(writer)`` with our writer and with PyTorch's, each in a folder of its own."""
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    with SummaryWriter(str(ours)) as w:
        write(w)
    with TorchWriter(str(theirs)) as w:
        write(w)
    return ours, theirs


def scalars(acc: ea.EventAccumulator, tag: str) -> list[tuple[int, float]]:
    return [(e.step, e.value) for e in acc.Scalars(tag)]


# -- scalars ------------------------------------------------------------------------------


def test_scalars_equal_torchs(tmp_path: Path) -> None:
    values = [cr.tensor(2.5), np.float32(1.25), 0.5, cr.tensor([[0.125]]), 7]

    def write(w: Any) -> None:
        for step, v in enumerate(values):
            if isinstance(v, cr.Tensor) and not isinstance(w, SummaryWriter):
                v = torch.tensor(v.numpy())  # PyTorch's writer gets the same value as its tensor
            w.add_scalar("loss", v, step * 10)
        w.add_scalar("lr", 0.1, 3, walltime=1234.5)

    ours, theirs = map(load, both(tmp_path, write))
    assert scalars(ours, "loss") == scalars(theirs, "loss")
    assert scalars(ours, "loss") == [(0, 2.5), (10, 1.25), (20, 0.5), (30, 0.125), (40, 7.0)]
    assert [e.wall_time for e in ours.Scalars("lr")] == [1234.5]
    assert ours.Tags()["scalars"] == theirs.Tags()["scalars"] == ["loss", "lr"]


@pytest.mark.parametrize("double", [False, True])
def test_new_style_scalars_equal_torchs(tmp_path: Path, double: bool) -> None:
    def write(w: Any) -> None:
        w.add_scalar("x", 1 / 3, 1, new_style=True, double_precision=double)

    ours, theirs = map(load, both(tmp_path, write))
    [a], [b] = ours.Tensors("x"), theirs.Tensors("x")
    assert a.tensor_proto == b.tensor_proto
    assert tensor_util.make_ndarray(a.tensor_proto).dtype == (np.float64 if double else np.float32)
    assert ours.SummaryMetadata("x") == theirs.SummaryMetadata("x")


def test_scalar_of_many_values_is_refused(tmp_path: Path) -> None:
    with SummaryWriter(str(tmp_path)) as w:
        with pytest.raises(ValueError, match=r"add_scalar: .* one element; got shape \(3,\)"):
            w.add_scalar("x", cr.ones(3))


def test_add_scalars_writes_a_run_per_key_as_torch(tmp_path: Path) -> None:
    def write(w: Any) -> None:
        for step in range(3):
            w.add_scalars("run/loss", {"train": 1.0 / (step + 1), "test": step}, step)

    ours, theirs = both(tmp_path, write)
    subruns = sorted(p.name for p in ours.iterdir() if p.is_dir())
    assert subruns == sorted(p.name for p in theirs.iterdir() if p.is_dir())
    assert subruns == ["run_loss_test", "run_loss_train"]
    for sub in subruns:
        a, b = load(ours / sub), load(theirs / sub)
        assert scalars(a, "run/loss") == scalars(b, "run/loss")
    assert scalars(load(ours / "run_loss_test"), "run/loss") == [(0, 0.0), (1, 1.0), (2, 2.0)]


def test_purge_step_hides_the_steps_a_restart_rewrites(tmp_path: Path) -> None:
    def runs(writer: Any, folder: Path) -> list[tuple[int, float]]:
        with writer(str(folder)) as w:
            for step in range(6):
                w.add_scalar("x", step, step)
        with writer(str(folder), purge_step=3) as w:
            for step in range(3, 5):
                w.add_scalar("x", 10 + step, step)
        return scalars(load(folder), "x")

    ours = runs(SummaryWriter, tmp_path / "ours")
    assert ours == runs(TorchWriter, tmp_path / "theirs")
    assert ours == [(0, 0), (1, 1), (2, 2), (3, 13), (4, 14)]


def test_default_log_dir_is_torchs_pattern(tmp_path: Path, monkeypatch: Any) -> None:
    import re
    import socket

    monkeypatch.chdir(tmp_path)
    w = SummaryWriter(comment="_lr0.1")
    w.close()
    pattern = rf"runs/[A-Z][a-z]{{2}}\d\d_\d\d-\d\d-\d\d_{re.escape(socket.gethostname())}_lr0\.1"
    assert re.fullmatch(pattern, w.get_logdir().replace(os.sep, "/"))
    theirs = TorchWriter(comment="_lr0.1")
    theirs.close()
    assert re.fullmatch(pattern, theirs.get_logdir().replace(os.sep, "/"))
    assert (tmp_path / w.get_logdir()).is_dir()


def test_close_flushes_and_a_later_record_opens_a_new_file(tmp_path: Path) -> None:
    w = SummaryWriter(str(tmp_path), filename_suffix=".v1")
    w.add_scalar("x", 1.0, 0)
    w.flush()
    assert scalars(load(tmp_path), "x") == [(0, 1.0)]
    w.close()
    w.close()  # twice is harmless
    w.add_scalar("x", 2.0, 1)
    w.close()
    files = sorted(p.name for p in tmp_path.iterdir())
    assert len(files) == 2 and all(f.startswith("events.out.tfevents.") for f in files)
    assert all(f.endswith(".v1") for f in files)
    assert scalars(load(tmp_path), "x") == [(0, 1.0), (1, 2.0)]


def test_importing_chainrule_leaves_tensorboard_unimported() -> None:
    code = (
        "import sys, chainrule, chainrule.utils\n"
        "assert 'tensorboard' not in sys.modules, 'imported'\n"
        "chainrule.utils.tensorboard.SummaryWriter\n"
        "assert 'tensorboard' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_without_tensorboard_the_error_says_how_to_install_it() -> None:
    code = (
        "import sys\n"
        "sys.modules['tensorboard'] = None  # as if it were not installed\n"
        "try:\n"
        "    import chainrule.utils.tensorboard\n"
        "except ImportError as err:\n"
        "    print(err)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, cwd=ROOT, capture_output=True, text=True
    )
    assert "pip install chainrule[tensorboard]" in out.stdout
