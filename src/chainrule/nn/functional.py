"""The functional forms of chainrule.nn (``import chainrule.nn.functional as F``): each is
defined beside its module and gathered here; ``pad`` is chainrule.pad, where PyTorch code
finds it (torch.nn.functional.pad).
"""

from ..functions import pad
from .activation import (
    celu,
    elu,
    gelu,
    glu,
    hardtanh,
    leaky_relu,
    log_softmax,
    mish,
    prelu,
    relu,
    relu6,
    selu,
    sigmoid,
    silu,
    softmax,
    softmin,
    softplus,
    softsign,
    tanh,
    threshold,
)
from .attention import scaled_dot_product_attention
from .conv import adaptive_avg_pool2d, avg_pool2d, conv1d, conv2d, max_pool2d
from .layers import cosine_similarity, dropout, embedding, linear, normalize
from .loss import (
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cross_entropy,
    huber_loss,
    l1_loss,
    mse_loss,
    nll_loss,
    one_hot,
    smooth_l1_loss,
)
from .normalization import batch_norm, layer_norm

__all__ = [
    "adaptive_avg_pool2d",
    "avg_pool2d",
    "conv1d",
    "conv2d",
    "max_pool2d",
    "batch_norm",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "cosine_similarity",
    "cross_entropy",
    "dropout",
    "embedding",
    "gelu",
    "huber_loss",
    "l1_loss",
    "layer_norm",
    "leaky_relu",
    "linear",
    "log_softmax",
    "mish",
    "mse_loss",
    "nll_loss",
    "normalize",
    "one_hot",
    "pad",
    "relu",
    "scaled_dot_product_attention",
    "sigmoid",
    "silu",
    "smooth_l1_loss",
    "softmax",
    "softplus",
    "tanh",
    "celu",
    "elu",
    "glu",
    "hardtanh",
    "prelu",
    "relu6",
    "selu",
    "softmin",
    "softsign",
    "threshold",
]
