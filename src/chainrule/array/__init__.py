"""The array layer: the only place that imports NumPy (and CuPy).

Everything above asks this package for arrays and dtypes, by one name (``array.xp``,
``array.to_host``, ``array.float32``, ...):

- ``modules.py``: the array modules (``xp``, NumPy on the CPU, the accelerator's for CUDA)
  and what differs between them (writeable, data_ptr, strided views);
- ``devices.py``: ``cr.device``, the default device, moving arrays between devices, and the
  one error for a device that cannot be used here;
- ``dtypes.py``: the dtypes, PyTorch's names for them, the default float dtype, arrays made
  from Python data;
- ``generator.py``: the random state (``manual_seed``, ``Generator``);
- ``cuda_standin.py``: the CUDA stand-in for tests (NumPy with CuPy's refusals), the CUDA
  device under ``CHAINRULE_ARRAY_BACKEND=strict``;
- ``tensor_type.py``: the Tensor class, registered by tensor/ for the layers below it.

Nothing reaches host memory unawares: arrays go out through ``to_host`` and between
devices through ``to_device``. A process computes on one GPU, its current one
(``cr.cuda.set_device(N)``), as data-parallel jobs run one GPU per process; tensors move
between GPUs with ``to("cuda:N")``. The default dtype and device change at run time: read
them with ``get_default_dtype()`` and ``get_default_device()``.
"""

from .devices import (
    CPU,
    TYPES,
    cuda_count,
    cuda_device,
    device,
    device_of,
    from_host,
    get_default_device,
    like,
    no_cuda,
    no_pinning,
    on_device_of,
    resolve_device,
    set_default_device,
    to_device,
)
from .dtypes import (
    DTYPE_NAMES,
    as_dtype,
    bfloat16,
    bool_,
    dtype_object,
    finfo,
    float16,
    float32,
    float64,
    from_data,
    get_default_dtype,
    holds,
    iinfo,
    int8,
    int16,
    int32,
    int64,
    is_floating,
    promote_all,
    promote_types,
    result_type,
    set_default_dtype,
    uint8,
    uint16,
    uint32,
    uint64,
)
from .generator import (
    Generator,
    decode_state,
    default_generator,
    encode_state,
    generator,
    initial_seed,
    manual_seed,
    seed,
)
from .modules import (
    ACCELERATED,
    ARRAY_BACKEND,
    accelerator,
    copy_order,
    data_ptr,
    errstate,
    host,
    make_read_only,
    module_of,
    moved_types,
    ndarray,
    result_array,
    strided_view,
    to_host,
    writeable,
    xp,
)

__all__ = [
    "ACCELERATED", "ARRAY_BACKEND", "CPU", "DTYPE_NAMES", "Generator", "TYPES", "accelerator",
    "as_dtype", "bfloat16", "bool_", "copy_order", "cuda_count", "cuda_device", "data_ptr",
    "decode_state", "default_generator", "device", "device_of", "dtype_object", "encode_state",
    "errstate", "finfo", "float16", "float32", "float64", "from_data", "from_host", "generator",
    "get_default_device", "get_default_dtype", "holds", "host", "iinfo", "initial_seed", "int16",
    "int32", "int64", "int8", "is_floating", "like", "make_read_only", "manual_seed", "module_of",
    "moved_types", "ndarray", "no_cuda", "no_pinning", "on_device_of", "promote_all",
    "promote_types", "resolve_device", "result_array", "result_type", "seed", "set_default_device",
    "set_default_dtype", "strided_view", "to_device", "to_host", "uint16", "uint32", "uint64",
    "uint8", "writeable", "xp",
]  # fmt: skip
