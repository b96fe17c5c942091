"""PyTorch's module paths for chainrule's nn classes. Programs name a class by the file
PyTorch defines it in (``torch.nn.modules.linear.Linear`` in isinstance checks, in the
allow-lists of ``torch.load``, ``class Focal(torch.nn.modules.loss._WeightedLoss)``), so
each ``chainrule.nn.modules.<file>`` here is a module holding chainrule's own classes under
those names, built from the table below (PyTorch's ``cls.__module__`` for each class);
nothing is defined twice. This package holds every public class too, as PyTorch's does, and
``utils`` (``_pair``, ``consume_prefix_in_state_dict_if_present``) is a file of its own.

Private bases are here where chainrule has one: ``loss._Loss`` and ``_WeightedLoss``,
``batchnorm._BatchNorm``, ``conv._ConvNd`` and ``_ConvTransposeNd``, ``pooling``'s
``_MaxPoolNd``, ``_AvgPoolNd``, ``_AdaptiveAvgPoolNd``, ``_AdaptiveMaxPoolNd``,
``_MaxUnpoolNd``, ``_LPPoolNd``, ``dropout._DropoutNd``, ``instancenorm._InstanceNorm`` and
``lazy.LazyModuleMixin``. chainrule has no ``_NormBase`` (its ``_BatchNorm`` holds what
PyTorch's two hold, and its ``_InstanceNorm`` derives from it).
"""

from __future__ import annotations

import sys
from types import ModuleType

from .. import (
    activation,
    attention,
    bilinear,
    container,
    conv,
    dropout,
    embedding_bag,
    fold,
    layers,
    lazy,
    likelihood_losses,
    loss,
    margin_losses,
    module,
    more_activations,
    normalization,
    padding,
    pooling_layers,
    resampling,
    rnn,
    transformer,
)
from . import utils as utils  # torch.nn.modules.utils: _pair and the like

# torch.nn.modules.<file>: the classes PyTorch defines there that chainrule has
FILES = {
    "activation": "CELU ELU GELU GLU Hardshrink Hardsigmoid Hardswish Hardtanh LeakyReLU "
    "LogSigmoid LogSoftmax Mish MultiheadAttention PReLU RReLU ReLU ReLU6 SELU SiLU Sigmoid "
    "Softmax Softmax2d Softmin Softplus Softshrink Softsign Tanh Tanhshrink Threshold",
    "batchnorm": "BatchNorm1d BatchNorm2d BatchNorm3d LazyBatchNorm1d LazyBatchNorm2d "
    "LazyBatchNorm3d SyncBatchNorm _BatchNorm",
    "channelshuffle": "ChannelShuffle",
    "container": "ModuleDict ModuleList ParameterDict ParameterList Sequential",
    "conv": "Conv1d Conv2d Conv3d ConvTranspose1d ConvTranspose2d ConvTranspose3d LazyConv1d "
    "LazyConv2d LazyConv3d LazyConvTranspose1d LazyConvTranspose2d LazyConvTranspose3d _ConvNd "
    "_ConvTransposeNd",
    "distance": "CosineSimilarity PairwiseDistance",
    "dropout": "AlphaDropout Dropout Dropout1d Dropout2d Dropout3d FeatureAlphaDropout _DropoutNd",
    "flatten": "Flatten Unflatten",
    "fold": "Fold Unfold",
    "instancenorm": "InstanceNorm1d InstanceNorm2d InstanceNorm3d _InstanceNorm",
    "lazy": "LazyModuleMixin",
    "linear": "Bilinear Identity LazyLinear Linear NonDynamicallyQuantizableLinear",
    "loss": "BCELoss BCEWithLogitsLoss CTCLoss CosineEmbeddingLoss CrossEntropyLoss "
    "GaussianNLLLoss HingeEmbeddingLoss HuberLoss KLDivLoss L1Loss MSELoss MarginRankingLoss "
    "MultiLabelMarginLoss MultiLabelSoftMarginLoss MultiMarginLoss NLLLoss PoissonNLLLoss "
    "SmoothL1Loss SoftMarginLoss TripletMarginLoss TripletMarginWithDistanceLoss _Loss "
    "_WeightedLoss",
    "module": "Module",
    "normalization": "GroupNorm LayerNorm LocalResponseNorm RMSNorm",
    "padding": " ".join(padding.__all__),
    "pixelshuffle": "PixelShuffle PixelUnshuffle",
    "pooling": "AdaptiveAvgPool1d AdaptiveAvgPool2d AdaptiveAvgPool3d AdaptiveMaxPool1d "
    "AdaptiveMaxPool2d AdaptiveMaxPool3d AvgPool1d AvgPool2d AvgPool3d LPPool1d LPPool2d "
    "LPPool3d MaxPool1d MaxPool2d MaxPool3d MaxUnpool1d MaxUnpool2d MaxUnpool3d _MaxPoolNd "
    "_AvgPoolNd _AdaptiveAvgPoolNd _AdaptiveMaxPoolNd _MaxUnpoolNd _LPPoolNd",
    "rnn": "GRU GRUCell LSTM LSTMCell RNN RNNBase RNNCell",
    "sparse": "Embedding EmbeddingBag",
    "transformer": "Transformer TransformerDecoder TransformerDecoderLayer TransformerEncoder "
    "TransformerEncoderLayer",
    "upsampling": "Upsample UpsamplingBilinear2d UpsamplingNearest2d",
}

# chainrule's files, where each class is found by name
_SOURCES = (activation, attention, bilinear, container, conv, dropout, embedding_bag, fold,
            layers, lazy, likelihood_losses, loss, margin_losses, module, more_activations,
            normalization, padding, pooling_layers, resampling, rnn, transformer)  # fmt: skip
_CLASSES = {k: v for src in _SOURCES for k, v in vars(src).items() if isinstance(v, type)}


def _file(name: str) -> ModuleType:
    """chainrule.nn.modules.<name>, registered so that ``import`` finds it."""
    made = ModuleType(f"{__name__}.{name}", f"torch.nn.modules.{name}'s classes, chainrule's.")
    for cls in FILES[name].split():
        setattr(made, cls, _CLASSES[cls])
        if not cls.startswith("_"):
            globals()[cls] = _CLASSES[cls]
    sys.modules[made.__name__] = made
    return made


for _name in FILES:
    globals()[_name] = _file(_name)
