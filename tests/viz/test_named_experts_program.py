"""A PyTorch program whose layers carry odd labels (programs/named_experts.py) runs on torch
and, with ``import torch`` aliased, on chainrule: the same losses, the same TensorBoard
records under the same names, and an ONNX export that replaces the earlier one whole."""

from __future__ import annotations

import errno
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("tensorboard")

from google.protobuf import text_format  # noqa: E402
from tensorboard.backend.event_processing import event_accumulator as ea  # noqa: E402
from tensorboard.plugins.projector.projector_config_pb2 import ProjectorConfig  # noqa: E402

import chainrule as cr  # noqa: E402
from tests.pytorch_programs.programs.aliasing import run  # noqa: E402
from tests.pytorch_programs.programs.named_experts import LABELS  # noqa: E402
from tests.viz.test_output_files import FullDisk  # noqa: E402


def records(log_dir: Path) -> dict[str, Any]:
    """What TensorBoard reads of a run: the scalar and text tags, each text, and the
    embedding (its name and the labels of its points)."""
    guidance = {kind: 0 for kind in ea.DEFAULT_SIZE_GUIDANCE}
    acc = ea.EventAccumulator(str(log_dir), size_guidance=guidance).Reload()
    texts = {
        tag: acc.Tensors(tag)[0].tensor_proto.string_val[0].decode("utf-8")
        for tag in acc.Tags()["tensors"]
    }
    config = text_format.Parse(
        (log_dir / "projector_config.pbtxt").read_text(encoding="utf-8"), ProjectorConfig()
    )
    (info,) = config.embeddings
    return {
        "scalars": sorted(acc.Tags()["scalars"]),
        "texts": texts,
        "embedding": info.tensor_name,
        "metadata": (log_dir / info.metadata_path).read_text(encoding="utf-8"),
        "graph": acc.Graph() is not None,
    }


def test_odd_labels_log_the_same_records_on_torch_and_chainrule(tmp_path: Path) -> None:
    saved: list[dict[str, np.ndarray]] = []

    def record(model: Any) -> None:
        saved.append({k: v.detach().numpy().copy() for k, v in model.state_dict().items()})

    def replay(model: Any) -> None:
        model.load_state_dict({k: cr.tensor(v) for k, v in saved.pop().items()})

    theirs = run("named_experts", False, log_dir=str(tmp_path / "torch"), init=record)
    ours = run("named_experts", True, log_dir=str(tmp_path / "chainrule"), init=replay)
    np.testing.assert_allclose(ours["losses"], theirs["losses"], rtol=1e-5)
    a, b = records(tmp_path / "torch"), records(tmp_path / "chainrule")
    assert b["scalars"] == a["scalars"]
    assert {f"grad_norm/experts.{label}.weight" for label in LABELS} <= set(b["scalars"])
    assert b["texts"] == a["texts"]
    assert {f"{label}/text_summary" for label in LABELS} == set(b["texts"])
    assert b["embedding"] == a["embedding"] == f"{LABELS[0]}:00000"
    assert b["metadata"] == a["metadata"] == "".join(LABELS[i % 5] + "\n" for i in range(16))
    assert b["graph"] and a["graph"]


def test_an_export_over_an_earlier_one_on_a_full_disk_keeps_the_earlier(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    onnx = pytest.importorskip("onnx")
    import chainrule.tools.outputs

    onnx_path = tmp_path / "experts.onnx"
    run("named_experts", True, log_dir=str(tmp_path / "a"), onnx_path=str(onnx_path))
    earlier = onnx_path.read_bytes()
    assert [i.name for i in onnx.load_from_string(earlier).graph.input] == ["x"]

    def full_disk(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        return FullDisk(open(file, mode, *args, **kwargs))  # 100 bytes, then ENOSPC

    monkeypatch.setattr(chainrule.tools.outputs, "open", full_disk, raising=False)
    with pytest.raises(OSError) as caught:
        run("named_experts", True, log_dir=str(tmp_path / "b"), onnx_path=str(onnx_path))
    assert caught.value.errno == errno.ENOSPC
    assert onnx_path.read_bytes() == earlier
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b", "experts.onnx"]
