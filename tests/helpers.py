"""Small helpers shared by the tests."""

from __future__ import annotations

import gc
import importlib.util
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import torch

import chainrule as cr
from tests import tolerances

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def load_benchmark(script: str, monkeypatch: Any) -> Any:
    """benchmarks/``script`` loaded as a module, with benchmarks/ on sys.path for the
    test's length (for its ``from common import ...``)."""
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    name = f"{Path(script).stem}_benchmark"
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@contextmanager
def gc_off() -> Iterator[None]:
    """No cyclic collector inside: whatever is freed there is freed by reference counting."""
    was = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def assert_nan_and_inf_upstream_like_torch(
    ours: Any, theirs: Any, x: np.ndarray, held: bool
) -> None:
    """Run x through chainrule's model ``ours`` and PyTorch's ``theirs`` (the same weights),
    then back from an upstream gradient of ones with NaN and inf at two places where the
    output is 0 and at two where it is positive: held by the caller (``backward(g)``) or,
    with ``held`` False, made by the op above (a product with g, summed), which the engine
    may hand over to be overwritten. x's and every parameter's gradients must equal
    PyTorch's, NaN for NaN and inf for inf, the finite values to one op's tolerance in
    x's dtype (their BLAS and ours may sum in another order)."""
    xc, xt = cr.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    yc, yt = ours(xc), theirs(xt)
    out = yt.detach().numpy()
    off, on = np.flatnonzero(out == 0), np.flatnonzero(out > 0)
    assert len(off) >= 2 and len(on) >= 2  # both kinds of position get a NaN and an inf
    g = np.ones_like(out)
    g[np.unravel_index(off[:2], out.shape)] = [np.nan, np.inf]
    g[np.unravel_index(on[:2], out.shape)] = [np.nan, -np.inf]
    if held:
        yc.backward(cr.tensor(g))
        yt.backward(torch.from_numpy(g))
    else:
        with np.errstate(invalid="ignore"):  # 0 * inf in the forward product
            (yc * cr.tensor(g)).sum().backward()
        (yt * torch.from_numpy(g)).sum().backward()
    tol = tolerances.tol(x.dtype, tolerances.OP)
    np.testing.assert_allclose(xc.grad.numpy(), xt.grad.numpy(), **tol)
    for (name, p), q in zip(ours.named_parameters(), theirs.parameters(), strict=True):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), **tol, err_msg=name)


@contextmanager
def fast_path_on() -> Iterator[None]:
    """The speed tricks on in this thread, whatever CHAINRULE_FASTPATH says: for a test of a
    trick itself (its layout), which the plain framework does not have."""
    before = cr.autograd.fastpath.enabled()
    cr.autograd.fastpath.set_enabled(True)
    try:
        yield
    finally:
        cr.autograd.fastpath.set_enabled(before)


def kernel_of_this_interpreter(tmp_path: Path, monkeypatch: Any) -> None:
    """A Jupyter kernel spec 'chainrule' running this very interpreter, found first
    (JUPYTER_PATH), whatever other kernels the machine has."""
    import json
    import sys

    spec = tmp_path / "jupyter" / "kernels" / "chainrule"
    spec.mkdir(parents=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    kernel = {"argv": argv, "display_name": "chainrule", "language": "python"}
    (spec / "kernel.json").write_text(json.dumps(kernel))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))


def torch_dtype_text(dtype: Any) -> str:
    """A chainrule dtype as PyTorch would print the same dtype (``torch.float32``), so a
    test compares ``torch_dtype_text(ours.dtype) == str(theirs.dtype)``."""
    assert isinstance(dtype, cr.dtype), f"expected a chainrule dtype object; got {dtype!r}"
    return str(dtype).replace("chainrule.", "torch.", 1)


def assert_value_and_grad_like_torch(got: Any, want: Any, ours: Any, theirs: Any, rng: Any) -> None:
    """got and want, chainrule's and PyTorch's result of one call on the leaves ours and
    theirs (float64), equal to 1e-12; and their gradients for one random upstream gradient
    of ``rng``'s to 1e-10."""
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12)
    v = rng.standard_normal(got.shape)
    (g,) = cr.grad(got, ours, cr.tensor(v))
    (tg,) = torch.autograd.grad(want, theirs, torch.tensor(v))
    np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-10, atol=1e-12)
