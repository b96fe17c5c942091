"""chainrule: a deep-learning framework from first principles on NumPy."""

from . import backend as _backend
from . import data, datasets, nn, optim, testing, utils, viz
from .autograd import detect_anomaly, enable_grad, grad, is_grad_enabled, no_grad, set_grad_enabled
from .backend import bool_ as bool
from .backend import float32, float64, int32, int64, manual_seed
from .serialization import load, save
from .tensor import FUNCTIONS as _FUNCTIONS
from .tensor import (
    Tensor,
    arange,
    as_tensor,
    cat,
    einsum,
    empty,
    empty_like,
    eye,
    full,
    full_like,
    linspace,
    matmul,
    maximum,
    minimum,
    ones,
    ones_like,
    pad,
    rand,
    rand_like,
    randint,
    randn,
    randn_like,
    stack,
    tensor,
    where,
    zeros,
    zeros_like,
)
from .viz import explain

globals().update(_FUNCTIONS)  # cr.exp, cr.sum, cr.max, ...: function forms of the methods

float = float32  # noqa: A001  (PyTorch's alias: cr.float is float32)
double = float64
long = int64

__version__ = "0.1.0"
