"""DataParallel and data_parallel, at PyTorch's path torch.nn.parallel.data_parallel:
PyTorch's one-process wrapper, which runs the module on the one device it is on (several
devices are DistributedDataParallel's, one process each, in distributed.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ... import array
from ..module import Module

__all__ = ["DataParallel", "data_parallel"]


class DataParallel(Module):
    """PyTorch's DataParallel where there is one device to run on: ``module`` is reached as
    ``.module`` (state_dict keys gain the prefix ``module.``) and a call runs it. Without a
    GPU, as PyTorch's, ``device_ids`` is ``[]`` and the arguments are not kept; with one,
    ``device_ids`` names a single GPU (all of them by default, so one), and splitting the
    batch over several is refused: DistributedDataParallel runs one process per device."""

    def __init__(
        self,
        module: Module,
        device_ids: Sequence[Any] | None = None,
        output_device: Any = None,
        dim: int = 0,
    ) -> None:
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DataParallel: module must be a Module; got {type(module).__name__}")
        self.module = module
        if not array.cuda_count():  # PyTorch's CPU branch: nothing else is kept
            self.device_ids: list[int] = []
            return
        ids = range(array.cuda_count()) if device_ids is None else device_ids
        self.device_ids = [array.cuda_device(d, "DataParallel").index or 0 for d in ids]
        if len(self.device_ids) > 1:
            raise RuntimeError(
                f"DataParallel: splitting the batch over several GPUs is not supported; got "
                f"device_ids {self.device_ids}; use DistributedDataParallel (one process per "
                "GPU) or device_ids=[0]"
            )
        self.dim = dim
        self.output_device = self.device_ids[0] if output_device is None else output_device

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self.module(*inputs, **kwargs)


def data_parallel(
    module: Module,
    inputs: Any,
    device_ids: Sequence[Any] | None = None,
    output_device: Any = None,
    dim: int = 0,
    module_kwargs: Any = None,
) -> Any:
    """The function form of DataParallel, as PyTorch's: ``module(*inputs, **module_kwargs)``
    (``inputs`` a tuple, or one input) on the GPU ``device_ids`` names. Without a GPU PyTorch
    refuses it (it finds no device type to scatter to), and so does this."""
    if not array.cuda_count():
        raise RuntimeError(
            "data_parallel: device type could not be determined; got no GPU; call the module "
            "itself, or DataParallel(module), which runs it on the CPU"
        )
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    return DataParallel(module, device_ids, output_device, dim)(*inputs, **(module_kwargs or {}))
