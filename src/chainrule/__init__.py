"""chainrule: a deep-learning framework from first principles on NumPy. This file only
re-exports: the factories, functions and forms by their modules' ``__all__``, the rest by name."""

from . import (
    accelerator,
    amp,
    autograd,
    backends,
    constants,
    copies,
    cuda,
    data,
    datasets,
    distributed,
    factories,
    fft,
    forms,
    func,
    functions,
    linalg,
    multiprocessing,
    nn,
    optim,
    random,
    sparse,
    special,
    testing,
    utils,
    viz,
)
from . import array as _array
from .amp import autocast
from .array import (
    Generator,
    bfloat16,
    default_generator,
    device,
    float16,
    float32,
    float64,
    get_default_device,
    initial_seed,
    int8,
    int16,
    int32,
    int64,
    manual_seed,
    seed,
    set_default_device,
    set_default_dtype,
    uint8,
    uint16,
    uint32,
    uint64,
)
from .array import bool_ as bool
from .autograd import (
    detect_anomaly,
    enable_grad,
    grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .backends import compile, get_float32_matmul_precision, set_float32_matmul_precision
from .constants import *
from .copies import *
from .factories import *
from .forms.indexing import *
from .forms.inplace import *
from .forms.linalg import *
from .forms.math import *
from .forms.pointwise import *
from .forms.reductions import *
from .forms.shape import *
from .functions import *
from .integrate import cumulative_trapezoid, trapezoid, trapz
from .linalg.decompose import lu_unpack
from .serialization import load, save
from .sparse import layout, sparse_coo, sparse_coo_tensor, spmm, strided
from .tensor import Tensor, as_tensor
from .tensor.printing import get_printoptions, printoptions, set_printoptions
from .tensor.size import Size
from .viz import explain

# torch.autograd.gradcheck's place: chainrule.testing sits above the Tensor, autograd below it
autograd.gradcheck, autograd.gradgradcheck = testing.gradcheck, testing.gradgradcheck

# The dtypes as chainrule's dtype objects (chainrule.float32), and PyTorch's aliases (each
# shadows a builtin inside this namespace only)
dtype = _array.dtypes.dtype
float32, float64, float16, bfloat16 = (
    _array.dtype_object(d) for d in (float32, float64, float16, bfloat16)
)
int64, int32, int16, int8 = (_array.dtype_object(d) for d in (int64, int32, int16, int8))
uint8, uint16, uint32, uint64 = (_array.dtype_object(d) for d in (uint8, uint16, uint32, uint64))
bool = _array.dtype_object(bool)  # noqa: A001
float = float32  # noqa: A001
double = float64
half = float16
long = int64
int = int32  # noqa: A001  (torch.int is int32)
short = int16


def get_default_dtype() -> dtype:
    """PyTorch's ``torch.get_default_dtype``: the dtype Python floats and the float
    factories make (float32 unless set_default_dtype changed it)."""
    return _array.dtype_object(_array.get_default_dtype())


__version__ = "0.1.0"

_SUBPACKAGES = ["accelerator", "amp", "autograd", "backends", "cuda", "data", "datasets"]
__all__ = [
    *constants.__all__,
    *copies.__all__,
    *factories.__all__,
    *functions.__all__,
    *forms.__all__,
    *_SUBPACKAGES,
    *["distributed", "func", "multiprocessing", "nn", "optim", "random", "testing", "utils"],
    "viz",
    *["Tensor", "as_tensor", "autocast", "compile", "device", "dtype", "explain", "load", "save"],
    *["detect_anomaly", "enable_grad", "grad", "inference_mode", "is_grad_enabled", "no_grad"],
    *["set_grad_enabled", "get_float32_matmul_precision", "set_float32_matmul_precision"],
    *["is_inference_mode_enabled"],
    *["Generator", "default_generator", "get_default_device", "get_default_dtype"],
    *["initial_seed", "manual_seed", "seed", "set_default_device", "set_default_dtype"],
    *["bool", "bfloat16", "float16", "float32", "float64", "int8", "int16", "int32", "int64"],
    *["uint8", "uint16", "uint32", "uint64", "float", "double", "half", "long", "int", "short"],
    *["Size", "get_printoptions", "printoptions", "set_printoptions"],
    *["sparse", "layout", "sparse_coo", "sparse_coo_tensor", "spmm", "strided"],
    "linalg",
    "special",
    "fft",
    "lu_unpack",
    *["cumulative_trapezoid", "trapezoid", "trapz"],
]


def __getattr__(name: str) -> object:  # cr.onnx: chainrule.onnx, imported on first use
    if name != "onnx":
        raise AttributeError(f"module 'chainrule' has no attribute {name!r}")
    return __import__("chainrule.onnx").onnx
