"""nn.Buffer, nn.Softmax2d, nn.SyncBatchNorm and nn.DataParallel against PyTorch's: state_dict
keys, reprs, outputs and gradients from the same weights."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import chainrule as cr
from tests.twins import copy_into


def _module_with_buffers(lib):
    class Scaled(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = lib.nn.Parameter(lib.ones(3))
            self.scale = lib.nn.Buffer(lib.full((3,), 2.0))
            self.cache = lib.nn.Buffer(lib.zeros(2), persistent=False)
            self.plain = lib.zeros(1)  # a plain tensor attribute is no buffer

        def forward(self, x):
            return x * self.weight * self.scale

    return Scaled()


def test_buffer_registers_itself_as_torchs():
    ours, theirs = _module_with_buffers(cr), _module_with_buffers(torch)
    assert [k for k, _ in ours.named_buffers()] == [k for k, _ in theirs.named_buffers()]
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["weight", "scale"]
    assert isinstance(ours.scale, cr.nn.Buffer) and not isinstance(ours.plain, cr.nn.Buffer)
    assert not isinstance(ours.weight, cr.nn.Buffer)
    ours.double()
    assert ours.scale.dtype == cr.float64  # moved with the module, as a buffer


def test_buffer_shares_the_data_and_keeps_requires_grad():
    t = cr.ones(2, requires_grad=True)
    b = cr.nn.Buffer(t)
    assert b.requires_grad and b.grad_fn is None and b.persistent
    with cr.no_grad():
        t.add_(1)
    assert b.tolist() == [2.0, 2.0]
    assert cr.nn.Buffer().shape == torch.nn.Buffer().shape == (0,)
    with pytest.raises(TypeError, match="Buffer: data must be a Tensor"):
        cr.nn.Buffer([1.0])


def test_buffer_given_to_register_buffer_and_over_other_members_as_torchs():
    for lib in (cr, torch):
        m = lib.nn.Module()
        m.register_buffer("b", lib.nn.Buffer(lib.ones(1)), persistent=False)  # the argument's
        assert list(m.state_dict()) == [] and [k for k, _ in m.named_buffers()] == ["b"]
        m.p, m.c = lib.nn.Parameter(lib.ones(1)), lib.nn.Linear(1, 1)
        with pytest.raises(TypeError, match="cannot assign .* as parameter 'p'"):
            m.p = lib.nn.Buffer(lib.ones(1))
        with pytest.raises(TypeError, match="cannot assign .* as child module 'c'"):
            m.c = lib.nn.Buffer(lib.ones(1))


def test_softmax2d_as_torchs():
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 5))
    g = np.random.default_rng(1).standard_normal((2, 3, 4, 5))
    assert repr(cr.nn.Softmax2d()) == repr(torch.nn.Softmax2d())
    for shape in [(2, 3, 4, 5), (3, 4, 5)]:
        a = cr.tensor(x.reshape(-1)[: np.prod(shape)].reshape(shape), requires_grad=True)
        b = torch.tensor(a.detach().numpy(), requires_grad=True)
        ya, yb = cr.nn.Softmax2d()(a), torch.nn.Softmax2d()(b)
        np.testing.assert_allclose(ya.detach().numpy(), yb.detach().numpy(), rtol=1e-12)
        up = g.reshape(-1)[: np.prod(shape)].reshape(shape)
        ya.backward(cr.tensor(up))
        yb.backward(torch.tensor(up))
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10, atol=1e-14)
    with pytest.raises(ValueError, match="Softmax2d: expected input to be 3D or 4D; got 2D"):
        cr.nn.Softmax2d()(cr.ones(2, 3))


def test_sync_batchnorm_on_one_process_is_batchnorm_as_torchs():
    ours, theirs = cr.nn.SyncBatchNorm(3, momentum=0.3), torch.nn.SyncBatchNorm(3, momentum=0.3)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    x = np.random.default_rng(0).standard_normal((4, 3, 2, 2, 2))  # any (N, C, *)
    for _ in range(2):
        got = ours(cr.tensor(x, dtype=cr.float32))
        want = theirs(torch.tensor(x, dtype=torch.float32))
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ours.running_var.numpy(), theirs.running_var.numpy(), rtol=1e-6)
    with pytest.raises(ValueError, match="SyncBatchNorm: expected input of shape \\(N, C, \\*\\)"):
        ours(cr.ones(3))


def test_convert_sync_batchnorm_keeps_the_parameters_as_torchs():
    def model(lib):
        return lib.nn.Sequential(
            lib.nn.Conv2d(1, 3, 1), lib.nn.BatchNorm2d(3), lib.nn.InstanceNorm2d(3),
            lib.nn.ModuleList([lib.nn.BatchNorm1d(2)]),
        )  # fmt: skip

    ours, theirs = model(cr), model(torch)
    bn = ours[1]
    ours.eval()
    converted = cr.nn.SyncBatchNorm.convert_sync_batchnorm(ours)
    assert repr(converted) == repr(torch.nn.SyncBatchNorm.convert_sync_batchnorm(theirs))
    assert converted[1].weight is bn.weight and converted[1].running_mean is bn.running_mean
    assert not converted[1].training
    assert type(converted[3][0]) is cr.nn.SyncBatchNorm


def test_data_parallel_on_the_cpu_as_torchs():
    ours = cr.nn.DataParallel(cr.nn.Linear(2, 3))
    theirs = torch.nn.DataParallel(torch.nn.Linear(2, 3))
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["module.weight", "module.bias"]
    assert ours.device_ids == theirs.device_ids == []
    copy_into(ours, theirs)
    x = np.random.default_rng(0).standard_normal((4, 2))
    got, want = ours(cr.tensor(x, dtype=cr.float32)), theirs(torch.tensor(x, dtype=torch.float32))
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-6)
    assert isinstance(ours.module, cr.nn.Linear)
    with pytest.raises(TypeError, match="DataParallel: module must be a Module"):
        cr.nn.DataParallel(lambda x: x)


@pytest.mark.slow  # a fresh interpreter on the CUDA stand-in: ~3 s
def test_data_parallel_on_one_gpu_runs_there_and_refuses_several():
    program = """
import chainrule as cr
d = cr.nn.DataParallel(cr.nn.Linear(2, 3).cuda())
assert (d.device_ids, d.output_device, d.dim) == ([0], 0, 0)
assert d(cr.ones(4, 2, device="cuda")).device == cr.device("cuda:0")
try:
    cr.nn.DataParallel(cr.nn.Linear(2, 3), device_ids=[0, 0])
except RuntimeError as e:
    assert "DataParallel: splitting the batch over several GPUs is not supported" in str(e)
else:
    raise AssertionError("several GPUs accepted")
print("ok")
"""
    env = {**os.environ, "CHAINRULE_ARRAY_BACKEND": "strict"}
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, env=env)
    assert done.stdout.strip() == "ok", done.stderr
