"""ONNX export of a pool given an unbatched input (C, *spatial), which its primitive takes as
it is: the exported graph gives chainrule's values (a batch of one, squeezed back)."""

from __future__ import annotations

import io

import numpy as np
import pytest

import chainrule as cr
from chainrule.onnx import export

ort = pytest.importorskip("onnxruntime")
F = cr.nn.functional

POOLS = {
    "max_pool2d": (lambda x: F.max_pool2d(x, 3, 2, 1), (3, 7, 6)),
    "avg_pool2d": (lambda x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False), (3, 7, 6)),
    "max_pool1d": (lambda x: F.max_pool1d(x, 2), (3, 8)),
    "adaptive_avg_pool2d": (lambda x: F.adaptive_avg_pool2d(x, (3, 2)), (3, 7, 6)),
    "max_pool3d": (lambda x: F.max_pool3d(x, 2, 1, 1), (2, 4, 5, 4)),
    "avg_pool3d": (lambda x: F.avg_pool3d(x, 2), (2, 4, 4, 6)),
    "adaptive_avg_pool3d": (lambda x: F.adaptive_avg_pool3d(x, (2, 3, 2)), (2, 4, 5, 4)),
}


class _Pool(cr.nn.Module):
    def __init__(self, fn) -> None:  # type: ignore[no-untyped-def]
        super().__init__()
        self.fn = fn

    def forward(self, x):  # type: ignore[no-untyped-def]
        return self.fn(x)


@pytest.mark.parametrize("name", list(POOLS))
def test_an_unbatched_pool_exports(name: str) -> None:
    fn, shape = POOLS[name]
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    buf = io.BytesIO()
    export(_Pool(fn), (cr.tensor(x),), buf, input_names=["x"], output_names=["y"])
    session = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])
    (got,) = session.run(None, {"x": x})
    want = fn(cr.tensor(x)).numpy()
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
