"""Pixels stored as bytes (programs/quantized_pixels.py) run on torch and on chainrule with
``import torch`` aliased: the same bytes, signed bytes and shorts, the same legacy type names
and dtypes, the same strides of a new_empty_strided buffer, and the same training."""

from __future__ import annotations

import numpy as np

from tests.pytorch_programs.test_pytorch_programs import F32, assert_follows, twins


def test_pixels_kept_as_bytes_train_as_in_torch() -> None:
    theirs, ours = twins("quantized_pixels")
    assert_follows(ours["losses"], theirs["losses"], F32)
    assert ours["losses"][-1] < ours["losses"][0]  # it learns
    np.testing.assert_allclose(ours["logits"], theirs["logits"], rtol=1e-4, atol=1e-5)
    for key in ("buffer_stride", "counts", "types", "dtypes", "pixels", "centred"):
        assert ours[key] == theirs[key], key
