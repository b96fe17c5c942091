"""torch.nn.parallel's paths: DataParallel, data_parallel and DistributedDataParallel where
PyTorch keeps them (the package and its files data_parallel and distributed), the same objects
at each, and data_parallel without a GPU refused as PyTorch refuses it."""

from __future__ import annotations

import importlib

import pytest
import torch

import chainrule as cr
from chainrule import array
from tests.pytorch_programs.programs.aliasing import torch_is_chainrule

PATHS = [
    ("", "DataParallel"),
    ("", "DistributedDataParallel"),
    ("", "data_parallel"),
    (".data_parallel", "DataParallel"),
    (".distributed", "DistributedDataParallel"),
]


@pytest.mark.parametrize(("file", "name"), PATHS)
def test_each_name_is_at_pytorchs_path(file: str, name: str) -> None:
    theirs = importlib.import_module(f"torch.nn.parallel{file}")
    ours = importlib.import_module(f"chainrule.nn.parallel{file}")
    assert hasattr(theirs, name)
    assert getattr(ours, name) is getattr(cr.nn.parallel, name)


def test_the_package_exports_what_torchs_does_that_chainrule_has() -> None:
    assert set(cr.nn.parallel.__all__) >= {"DataParallel", "DistributedDataParallel"}
    assert cr.nn.DataParallel is cr.nn.parallel.DataParallel
    assert callable(cr.nn.parallel.data_parallel)  # the function, as torch's attribute is


def test_a_program_imports_the_modules_with_torch_aliased() -> None:
    with torch_is_chainrule():
        import torch.nn.parallel.distributed as distributed  # noqa: PLC0415
        from torch.nn.parallel import DistributedDataParallel, data_parallel  # noqa: PLC0415

        assert distributed is cr.nn.parallel.distributed
        assert DistributedDataParallel is cr.nn.parallel.DistributedDataParallel
        assert data_parallel is cr.nn.parallel.data_parallel


@pytest.mark.skipif(array.cuda_count() > 0, reason="PyTorch refuses it where there is no GPU")
def test_data_parallel_without_a_gpu_is_refused_as_torchs() -> None:
    with pytest.raises(RuntimeError, match="device type could not be determined"):
        torch.nn.parallel.data_parallel(torch.nn.Linear(3, 2), torch.ones(2, 3))
    with pytest.raises(RuntimeError, match="data_parallel: device type could not be determined"):
        cr.nn.parallel.data_parallel(cr.nn.Linear(3, 2), cr.ones(2, 3))


@pytest.mark.skipif(array.cuda_count() == 0, reason="data_parallel runs where there is a GPU")
def test_data_parallel_on_a_gpu_runs_the_module() -> None:
    layer = cr.nn.Linear(3, 2).cuda()
    x = cr.ones(2, 3, device="cuda")
    out = cr.nn.parallel.data_parallel(layer, x, device_ids=[0])
    assert cr.equal(out, layer(x))
    assert cr.equal(cr.nn.parallel.data_parallel(layer, (x,), module_kwargs={}), layer(x))
