"""A PyTorch program that logs a residual CNN's graph and training for TensorBoard
(programs/graph_logged.py), run on torch and on chainrule with ``import torch`` aliased: the
graph nests by module as PyTorch's, with the same boxes and input and output nodes, and the
run trains and logs as torch's."""

from __future__ import annotations

import pytest

pytest.importorskip("tensorboard")

from tests.pytorch_programs.test_pytorch_programs import F32, assert_follows, twins  # noqa: E402


@pytest.mark.slow  # PyTorch's add_graph starts jit.trace: seconds
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_a_logged_residual_cnn_draws_as_torchs() -> None:
    theirs, ours = twins("graph_logged")
    assert ours["scopes"] == theirs["scopes"]
    assert {"Net/Block[1]/BatchNorm2d[norm]", "Net/ModuleList[blocks]/Block[0]/Conv2d[conv]"} < (
        ours["scopes"]
    )
    assert ours["io"] == theirs["io"] == {"input/image": [4, 1, 8, 8], "output/output.1": [4, 2]}
    assert ours["tags"] == theirs["tags"]
    assert_follows(ours["losses"], theirs["losses"], F32)
    assert ours["losses"][-1] < ours["losses"][0]
