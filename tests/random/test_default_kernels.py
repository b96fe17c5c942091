"""Under ``ATEN_CPU_CAPABILITY=default`` PyTorch runs its DEFAULT kernels, whose float32
normals (16 or more contiguous elements) are the scalar Box-Muller on the C library's logf,
cosf and sinf, the angle computed in double; chainrule, under the same variable, draws the
same bits. The fast case pins torch's bits; the slow one runs torch and chainrule in
processes of their own over a matrix of samplers."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import chainrule as cr
from chainrule.array import torch_streams

# torch 2.13 under ATEN_CPU_CAPABILITY=default: manual_seed(0), then randn(17), as uint32 bits
RANDN_17 = (
    "bf901b85 bfd91447 3f111002 3f4b235e 3f194d8b bfc70d5b beaec6c7 3fed2f4e 3eefaa55 "
    "bf15e324 be318efd 3e3be1a3 3fb1d6c0 3fcb0d01 3f72409c bf57fb34 3f6e8c31"
)
# ... and manual_seed(0), then empty(20).normal_(0.3, 1.7)
NORMAL_20 = (
    "bfce952f bfd45a85 be0101d8 bee00c53 3fa8b51d c015fe8e be8f851f 405cce9c 3f8c41fe "
    "3d029de2 4030452e 3f4095b0 402a5cf0 403fcb0e 3ff45085 bf912f20 3ff12a5d 401c2e22 "
    "406d5786 3ec85f63"
)


def _bits(t: cr.Tensor) -> str:
    return " ".join(f"{v:08x}" for v in t.numpy().view(np.uint32).tolist())


def test_float32_normals_are_the_default_kernels(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch_streams, "KERNELS", "default")
    cr.manual_seed(0)
    assert _bits(cr.randn(17)) == RANDN_17
    cr.manual_seed(0)
    assert _bits(cr.empty(20).normal_(0.3, 1.7)) == NORMAL_20


DRAWS = """
import sys, numpy as np
m = __import__(sys.argv[1])
out = []
for seed in (0, 42, 2147483647):
    for n in (1, 15, 16, 17, 100, 1000, 100_000):
        for dtype in (m.float32, m.float64):
            m.manual_seed(seed)
            out.append(m.randn(n, dtype=dtype).numpy().ravel())
            out.append(m.empty(n, dtype=dtype).normal_(0.0, 0.02).numpy())
            out.append(m.empty(n, dtype=dtype).normal_(0.3, 1.7).numpy())
            out.append(m.empty(n, 2, dtype=dtype).t().normal_(0.5, 2.0).numpy().ravel())
            out.append(m.rand(n, dtype=dtype).numpy())
            out.append(m.empty(n, dtype=dtype).uniform_(-0.3, 0.7).numpy())
            out.append(m.empty(n, dtype=dtype).exponential_().numpy())
np.save(sys.argv[2], np.concatenate([o.astype(np.float64) for o in out]))
"""


@pytest.mark.slow
def test_every_float_sampler_is_torchs_under_default_kernels(tmp_path: object) -> None:
    pytest.importorskip("torch")
    env = {**os.environ, "ATEN_CPU_CAPABILITY": "default"}
    saved = {}
    for lib in ("torch", "chainrule"):
        path = f"{tmp_path}/{lib}.npy"
        subprocess.run([sys.executable, "-c", DRAWS, lib, path], env=env, check=True)
        saved[lib] = np.load(path)
    theirs, ours = saved["torch"], saved["chainrule"]
    assert theirs.shape == ours.shape
    differ = np.flatnonzero(theirs.view(np.uint64) != ours.view(np.uint64))
    assert differ.size == 0, f"{differ.size} of {theirs.size} draws differ, first at {differ[:5]}"
