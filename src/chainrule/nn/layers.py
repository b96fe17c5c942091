"""Basic layers and their functional forms: Identity, Flatten, Unflatten, Linear, Embedding,
Dropout, CosineSimilarity (and normalize), Softmax2d. Normalisation layers are in
normalization.py, the other activations in activation.py.
"""

from __future__ import annotations

import math
from typing import Any

from .. import array, batching, random_batching
from ..arguments import (
    broadcast_shape,
    need_float,
    need_number,
    positive_int,
    resolve_device,
)
from ..array.generator import laid_out
from ..autograd.mode import no_grad
from ..autograd.saved import record
from ..ops import linalg
from ..ops.bags import Embedding as EmbeddingOp
from ..tensor import Tensor, as_tensor
from . import init
from .module import Module, Parameter

xp = array.xp


def _check_last_dim(x: Tensor, n: int, layer: str, what: str) -> None:
    """The one wording for an input whose last dim does not fit a layer."""
    shape = x.shape
    if not shape or shape[-1] != n:
        raise ValueError(f"{layer}: expected input with last dim {n} ({what}); got shape {x.shape}")


# -- functional ---------------------------------------------------------------------------


def _check_dtype(x: Any, weight: Tensor, layer: str) -> None:
    """As PyTorch, no silent cast between the input's dtype and the weight's: NumPy would
    make an int64 or float64 input's product float64."""
    if getattr(x, "dtype", weight.dtype) != weight.dtype:
        raise RuntimeError(
            f"{layer}: input and weight must have the same dtype; got "
            f"{array.dtype_object(x.dtype)} and {weight.dtype}; convert the input (x.float()) "
            "or the layer (.double())"
        )


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """input @ weight.T + bias, with weight (out_features, in_features)."""
    input, weight = as_tensor(input), as_tensor(weight)
    if bias is not None and not isinstance(bias, Tensor):  # PyTorch refuses a list too
        raise TypeError(
            f"linear: bias must be a Tensor or None; got {type(bias).__name__}; make it one "
            "with cr.tensor(bias)"
        )
    if weight.ndim != 2 or (bias is not None and bias.shape != weight.shape[:1]):
        raise ValueError(
            f"linear: expected weight (out, in) and bias (out,); got shapes {weight.shape} and "
            f"{None if bias is None else bias.shape}"
        )
    _check_last_dim(input, weight.shape[1], "linear", "weight.shape[1]")
    _check_dtype(input, weight, "linear")
    need_number(input, "linear")
    return linalg.Linear.apply(input, weight, bias)


def embedding(
    input: Any,
    weight: Tensor,
    padding_idx: int | None = None,
    max_norm: float | None = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    """Rows of weight picked by the integer indices in input: (*) -> (*, embedding_dim).

    Repeated indices accumulate gradient; the row at padding_idx gets none. As PyTorch's:
    ``max_norm`` first rescales, in place in weight, each looked-up row whose
    ``norm_type``-norm exceeds it down to it (by max_norm / (norm + 1e-7));
    ``scale_grad_by_freq`` divides each row's gradient by how often input holds its index.
    """
    if sparse:
        raise ValueError("embedding: sparse gradients are not supported; got sparse=True")
    # the indices as given: under vmap an example's, whose batch the ops' rules see
    idx = input._array if isinstance(input, Tensor) else input
    idx = idx if isinstance(idx, type(weight._array)) else array.on_device_of(idx, weight._array)
    if idx.dtype.kind not in "iu":
        raise TypeError(
            f"embedding: indices must be integers; got dtype {array.dtype_object(idx.dtype)}"
        )
    n = weight.shape[0]
    every = batching.examples(idx)  # under vmap, every example's indices are checked
    if every.size and (every.min() < 0 or every.max() >= n):
        bad = every.min() if every.min() < 0 else every.max()
        raise IndexError(
            f"embedding: index {bad} is out of range for num_embeddings {n}; got indices of "
            f"shape {idx.shape}"
        )
    if max_norm is not None and idx.size:
        rows = xp.unique(idx)
        w = weight._array[rows]
        norms = xp.linalg.norm(w, ord=norm_type, axis=1)
        big = norms > max_norm
        with no_grad():  # PyTorch's renorm is in place too: a graph that saved weight sees it
            weight[rows[big]] = w[big] * (max_norm / (norms[big] + 1e-7))[:, None]
    padding_idx = None if padding_idx is None else padding_idx % n  # -1 is the last row
    # the indices as given (under vmap, an example's: the op's rule sees the batch's)
    out = EmbeddingOp.apply(
        weight, indices=idx, padding_idx=padding_idx, scale_grad_by_freq=scale_grad_by_freq
    )  # (*, embedding_dim)
    # PyTorch's node keeps padding_idx None as -1, shown as an unsigned 64-bit int
    padding = 2**64 - 1 if padding_idx is None else padding_idx
    return record(
        out, indices=idx, padding_idx=padding, scale_grad_by_freq=scale_grad_by_freq,
        sparse=sparse, weight_sym_argsize_0=n,
    )  # fmt: skip


def per_example_rows(weight: Any, idx: Any, padding: Any, tables: bool, size: int) -> tuple:
    """(weight, idx, padding) of a lookup under vmap, idx (B, *) every example's indices: with
    per-example ``tables`` (B, V, D), one table of B*V rows, example b's indices and padding row
    moved to its rows b*V ... b*V + V-1."""
    if not tables:
        return weight, idx, padding
    moved = xp.arange(size, like=idx) * weight.shape[1]  # (B,): where each example's rows start
    idx = idx + moved.reshape(-1, *(1,) * (idx.ndim - 1))
    padding = None if padding is None else moved + padding  # (B,): each one's padding row
    return weight.reshape(-1, weight.shape[-1]), idx, padding  # (B*V, D)


def _batched_lookup(cls: Any, args: dict, batched: dict, size: int) -> Tensor:
    """vmap's rule for embedding's primitive: one lookup of the whole batch, (B, *, D); the
    same indices for every example broadcast; per-example tables (B, V, D) one table of B*V
    rows, each example's indices (and padding row) moved to its own rows; scale_grad_by_freq
    told how many examples the indices hold, each counted on its own."""
    idx = args["indices"]
    if not batched["indices"]:  # the same indices in every example
        idx = xp.broadcast_to(idx, (size, *idx.shape))
    weight, idx, padding = per_example_rows(
        args["weight"], idx, args["padding_idx"], batched["weight"], size
    )
    given = {"weight": weight, "indices": idx, "padding_idx": padding}
    given |= {"examples": size * args.get("examples", 1)}
    return batching.call(cls, {**args, **given})  # (B, *, D)


batching.register({"Embedding": _batched_lookup})


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability p and scale the rest by 1/(1-p) (inverted
    dropout), so evaluation needs no rescaling; identity when not training. The mask comes
    from chainrule's global generator. With ``inplace``, the product is written into the
    input, which is returned."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout: probability p must be in [0, 1]; got {p}")
    input = as_tensor(input)
    if not training or p == 0.0:
        return input
    floating = array.is_floating(input.dtype)
    if p == 1.0:
        # every element zeroed: an integer or bool input keeps its dtype, as PyTorch's
        scale: Any = 0.0 if floating else xp.zeros((), dtype=input._array.dtype)
    elif not floating:  # PyTorch cannot write the scaled floats into it
        raise TypeError(
            f"dropout: needs a floating-point tensor when training with 0 < p < 1; got "
            f"dtype {input.dtype} and p {p}"
        )
    elif batching.active():  # vmap: one mask per example or one for all, as PyTorch's
        out = random_batching.dropout(input, p)
        return input._write("dropout_", lambda x: out) if inplace else out
    else:
        # PyTorch's: a mask drawn as bernoulli_(1 - p) in the input's layout, divided by 1 - p
        # (in the dtype), times the input
        arr = input._array
        keep = laid_out(array.generator().bernoulli(arr.size, 1.0 - p), arr)
        kept = array.host.ones((), arr.dtype) / array.host.asarray(1.0 - p, arr.dtype)
        scale = array.from_host(keep * kept, arr)
    if inplace:
        return input._write("dropout_", lambda x: x * scale)
    return input * scale


# -- modules ------------------------------------------------------------------------------


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Tensor:
    """input / max(||input||_p over dim, eps): unit vectors along dim, as PyTorch."""
    input = as_tensor(input)
    need_float(input, "normalize")
    return input / input.norm(p, dim, keepdim=True).clamp_min(eps)


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """sum(x1 / max(||x1||, eps) * x2 / max(||x2||, eps)) over dim, as PyTorch: the two
    broadcast against each other first, integer ones cast to the floating dtype they meet
    in; each divided by its norm first (the result stays within [-1, 1]); the floor eps set
    outside the graph, so the norm's gradient passes it unchanged."""
    x1, x2 = as_tensor(x1), as_tensor(x2)
    dtype = array.result_type(x1, x2, op="cosine_similarity")
    if not array.is_floating(dtype):
        raise TypeError(
            f"cosine_similarity: needs a floating-point tensor; got dtypes {x1.dtype} and "
            f"{x2.dtype}"
        )
    x1, x2 = (x if array.is_floating(x.dtype) else x.to(dtype) for x in (x1, x2))
    if x1.shape != x2.shape:
        shape = broadcast_shape("cosine_similarity", x1.shape, x2.shape)
        x1, x2 = x1.broadcast_to(shape), x2.broadcast_to(shape)
    n1 = x1.norm(2, dim, keepdim=True).clone()  # clones, written in place below
    n2 = x2.norm(2, dim, keepdim=True).clone()
    with no_grad():
        n1.clamp_(min=eps)
        n2.clamp_(min=eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


class Identity(Module):
    """Returns its input unchanged (a placeholder, e.g. for a removed layer)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Any) -> Any:
        return input


class Flatten(Module):
    """Flattens dims start_dim..end_dim into one: (N, C, H, W) -> (N, C*H*W) by default."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input: Tensor) -> Tensor:
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Splits dim into unflattened_size: Flatten's inverse, (N, 12) -> (N, 3, 4)."""

    def __init__(self, dim: int, unflattened_size: Any) -> None:
        super().__init__()
        self.dim, self.unflattened_size = dim, unflattened_size

    def forward(self, input: Tensor) -> Tensor:
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class Linear(Module):
    """y = x @ W.T + b: (*, in_features) -> (*, out_features).

    weight (out_features, in_features) and bias (out_features,) start as PyTorch's: uniform
    in +-1/sqrt(in_features) (kaiming_uniform_ with a = sqrt(5) for the weight).
    """

    bias: Parameter | None  # registered as a Parameter's name even when None, as PyTorch

    def __init__(
        self,
        in_features: int,
        out_features: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        on = array.like(resolve_device(device, "Linear"))
        self.in_features = positive_int(in_features, "in_features", "Linear", zero_ok=True)
        self.out_features = positive_int(out_features, "out_features", "Linear", zero_ok=True)
        dtype = array.as_dtype(dtype) or array.get_default_dtype()
        self.weight = Parameter(xp.empty((out_features, in_features), dtype=dtype, like=on))
        self.register_parameter(
            "bias", Parameter(xp.empty(out_features, dtype=dtype, like=on)) if bias else None
        )
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            bound = 1.0 / math.sqrt(self.in_features) if self.in_features > 0 else 0.0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        _check_last_dim(input, self.in_features, "Linear", "in_features")
        _check_dtype(input, self.weight, "Linear")
        return linalg.Linear.apply(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )


class NonDynamicallyQuantizableLinear(Linear):
    """Linear under the name PyTorch gives MultiheadAttention's ``out_proj`` (its quantization
    passes skip it); programs and checkpoints name it by this class."""


class Embedding(Module):
    """A lookup table: integer indices (*) -> rows of weight (*, embedding_dim).

    weight (num_embeddings, embedding_dim) starts normal(0, 1), with the padding_idx row (if
    any) zero and never updated by gradients.
    """

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        padding_idx: int | None = None,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
        _weight: Any = None,
        _freeze: bool = False,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        on = array.like(resolve_device(device, "Embedding"))
        positive_int(num_embeddings, "num_embeddings", "Embedding", zero_ok=True)
        positive_int(embedding_dim, "embedding_dim", "Embedding", zero_ok=True)
        if sparse:
            raise ValueError("Embedding: sparse gradients are not supported; got sparse=True")
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError(
                    f"Embedding: padding_idx must be within num_embeddings {num_embeddings}; "
                    f"got {padding_idx}"
                )
            padding_idx %= num_embeddings
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.padding_idx = padding_idx
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        dtype = array.as_dtype(dtype) or array.get_default_dtype()
        if _weight is None:
            self.weight = Parameter(xp.empty((num_embeddings, embedding_dim), dtype=dtype, like=on))
            self.reset_parameters()
        else:  # PyTorch's: the given weight as it is (from_pretrained passes it)
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise ValueError(
                    f"Embedding: _weight must have shape ({num_embeddings}, {embedding_dim}); "
                    f"got {tuple(_weight.shape)}"
                )
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    @classmethod
    def from_pretrained(
        cls,
        embeddings: Any,
        freeze: bool = True,
        padding_idx: int | None = None,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
    ) -> Embedding:
        """An Embedding whose weight is ``embeddings`` (2-D), trained unless ``freeze``."""
        weight = as_tensor(embeddings)
        if weight.ndim != 2:
            raise ValueError(
                f"Embedding.from_pretrained: embeddings must be 2-D; got shape {weight.shape}"
            )
        rows, dim = weight.shape
        return cls(
            rows, dim, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse,
            _weight=weight, _freeze=freeze,
        )  # fmt: skip

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx] = 0

    def forward(self, input: Any) -> Tensor:
        return embedding(
            input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
            self.scale_grad_by_freq,
        )  # fmt: skip

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq:
            s += ", scale_grad_by_freq=True"
        return s


class Dropout(Module):
    """Inverted dropout in training (see ``dropout``); the identity in eval mode."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"Dropout: probability p must be in [0, 1]; got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input: Tensor) -> Tensor:
        return dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class CosineSimilarity(Module):
    """cosine_similarity(x1, x2, dim, eps) as a module."""

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return cosine_similarity(x1, x2, self.dim, self.eps)


class Softmax2d(Module):
    """softmax over the channels at each location: (C, H, W) or (N, C, H, W), dim -3."""

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim not in (3, 4):
            raise ValueError(
                f"Softmax2d: expected input to be 3D or 4D; got {input.ndim}D (shape {input.shape})"
            )
        return input.softmax(-3)
