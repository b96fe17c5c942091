"""The rules on arrays of svd's, eigh's and pinv's nodes (the fast path's) against their
rules in Tensor ops (the plain path's), each part alone and together, one matrix or a batch,
tall, wide or square, reduced or full."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import chainrule as cr
from chainrule import fastpath


def _grad(call: Callable[[Any], Any], a: np.ndarray, fast: bool) -> np.ndarray:
    """A's gradient of call's outputs against fixed random weights, with the switch as given."""
    before = fastpath.enabled()
    fastpath.set_enabled(fast)
    try:
        A = cr.tensor(a, requires_grad=True)
        outs = call(A)
        outs = outs if isinstance(outs, tuple) else (outs,)
        rng = np.random.default_rng(1)
        weights = [cr.tensor(rng.standard_normal(tuple(o.shape))) for o in outs]
        sum((o * w).sum() for o, w in zip(outs, weights, strict=True)).backward()
        return A.grad.numpy()
    finally:
        fastpath.set_enabled(before)


CALLS = {
    "svd": lambda A: tuple(cr.linalg.svd(A, full_matrices=False)),
    "svd full": lambda A: tuple(cr.linalg.svd(A)),
    "svd U": lambda A: cr.linalg.svd(A, full_matrices=False).U,
    "svd full Vh": lambda A: cr.linalg.svd(A).Vh,
    "svd S": lambda A: cr.linalg.svd(A).S,
    "svdvals": cr.linalg.svdvals,
    "pinv": cr.linalg.pinv,
}


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 4, 3), (2, 3, 4), (0, 3)])
@pytest.mark.parametrize("name", list(CALLS))
def test_svds_and_pinvs_rules_on_arrays_are_their_tensor_rules(name: str, shape: Any) -> None:
    a = np.random.default_rng(0).standard_normal(shape)
    fast, plain = _grad(CALLS[name], a, True), _grad(CALLS[name], a, False)
    np.testing.assert_allclose(fast, plain, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3)])
@pytest.mark.parametrize("part", [slice(0, 2), slice(0, 1), slice(1, 2)])
def test_eighs_rule_on_arrays_is_its_tensor_rule(shape: Any, part: slice) -> None:
    a = np.random.default_rng(0).standard_normal(shape)
    a = a + np.swapaxes(a, -1, -2)

    def call(A: Any) -> Any:
        return tuple(cr.linalg.eigh(A))[part]

    np.testing.assert_allclose(_grad(call, a, True), _grad(call, a, False), rtol=1e-10, atol=1e-12)


QRS = {
    "qr": lambda A: tuple(cr.linalg.qr(A)),
    "qr Q": lambda A: cr.linalg.qr(A).Q,
    "qr R": lambda A: cr.linalg.qr(A).R,
    "qr complete": lambda A: tuple(cr.linalg.qr(A, mode="complete")),
}


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 4, 3), (2, 3, 3)])
@pytest.mark.parametrize("name", list(QRS))
def test_qrs_rules_on_arrays_are_its_tensor_rules(name: str, shape: Any) -> None:
    if name == "qr complete" and shape[-2] > shape[-1]:
        pytest.skip("complete with more rows than columns has no gradient")
    a = np.random.default_rng(0).standard_normal(shape)
    fast, plain = _grad(QRS[name], a, True), _grad(QRS[name], a, False)
    np.testing.assert_allclose(fast, plain, rtol=1e-10, atol=1e-12)


def test_qrs_shared_node_runs_its_parts_rules_on_arrays(monkeypatch: Any) -> None:
    from chainrule.ops import lu_qr

    seen: list[str] = []
    tensor_rule = lu_qr.LinalgQr.backward

    def spy(fn: Any, grad: Any, out: Any) -> Any:
        seen.append(fn.part)
        return tensor_rule(fn, grad, out)

    monkeypatch.setattr(lu_qr.LinalgQr, "backward", spy)
    a = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    fast, plain = _grad(QRS["qr"], a, True), _grad(QRS["qr"], a, False)
    assert sorted(seen) == ["Q", "QR", "R"]  # the plain pass's only
    np.testing.assert_allclose(fast, plain, rtol=1e-4, atol=1e-5)
