"""EmbeddingBag and embedding_bag: the sum, mean or max of bags of embedding rows, each bag
one row of a 2-D input or a run of a 1-D input marked by offsets. The checks, the bags and
max_norm's renorm (embedding's, layers.py) are here; the reduction and its gradient, to the
weight and the per-sample weights, are ops/bags.py's one node, as PyTorch's.
"""

from __future__ import annotations

from typing import Any

from .. import array
from ..arguments import need_float, positive_int, resolve_device
from ..autograd.mode import no_grad
from ..ops.bags import EmbeddingBag as EmbeddingBagOp
from ..tensor import Tensor, as_tensor
from . import init
from .layers import embedding
from .module import Module, Parameter

xp = array.xp


def _indices(x: Any, like: Any, what: str) -> Any:
    a = array.on_device_of(x._array if isinstance(x, Tensor) else x, like)
    if a.dtype.kind not in "iu":
        raise TypeError(
            f"embedding_bag: {what} must be integers; got dtype {array.dtype_object(a.dtype)}"
        )
    return a


def _bags(input: Any, offsets: Any, include_last_offset: bool, like: Any) -> tuple[Any, Any, int]:
    """The flat indices (n,), each one's bag (n,; -1 for none) and the number of bags."""
    idx = _indices(input, like, "input")
    if idx.ndim == 2:
        if offsets is not None:
            raise ValueError(
                f"embedding_bag: offsets must be None for a 2-D input (each row a bag); got "
                f"input shape {idx.shape}"
            )
        bags, length = idx.shape
        return idx.reshape(-1), xp.repeat(xp.arange(bags, like=idx), length), bags
    if idx.ndim != 1:
        raise ValueError(
            f"embedding_bag: input must be 1-D (with offsets) or 2-D (B, L); got shape {idx.shape}"
        )
    if offsets is None:
        raise ValueError("embedding_bag: offsets are needed with a 1-D input")
    starts = _indices(offsets, like, "offsets")
    if starts.ndim != 1:
        raise ValueError(f"embedding_bag: offsets must be 1-D; got shape {starts.shape}")
    if starts.size and starts[0] != 0:
        raise ValueError(
            f"embedding_bag: offsets[0] must be 0 (the first bag's start); got {starts[0]}"
        )
    if starts.size > 1 and (starts[1:] < starts[:-1]).any():  # PyTorch reads past its bags
        raise ValueError(f"embedding_bag: offsets must not decrease; got {starts.tolist()}")
    if starts.size and starts[-1] > idx.size:
        raise ValueError(
            f"embedding_bag: offsets[-1] can not be greater than input's length {idx.size}; got "
            f"{starts[-1]}"
        )
    bags = starts.size - 1 if include_last_offset else starts.size
    of = xp.searchsorted(starts, xp.arange(idx.size, like=idx), side="right") - 1  # (n,)
    # past the last offset kept by include_last_offset: the last bag's, as PyTorch's
    of[of >= bags] = bags - 1
    return idx, of, max(bags, 0)


def _frequency_scale(idx: Any, n_rows: int, dtype: Any) -> Any:
    """scale_grad_by_freq's factor of each index's gradient (n, 1), as PyTorch 2.13's CPU
    kernel computes it: the k-th distinct index (in sorted order) divided by the count of
    the k-th smallest index (not, as documented, by its own count)."""
    ranked = xp.sort(idx)  # (n,)
    counts = xp.bincount(idx, minlength=n_rows)  # (num_embeddings,)
    distinct, group = xp.unique(idx, return_inverse=True)  # each index's rank among distinct
    divisor = counts[ranked[: distinct.size]]  # (distinct,)
    return (1.0 / divisor[group.reshape(-1)]).astype(dtype)[:, None]


def embedding_bag(
    input: Tensor,
    weight: Tensor,
    offsets: Tensor | None = None,
    max_norm: float | None = None,
    norm_type: float = 2,
    scale_grad_by_freq: bool = False,
    mode: str = "mean",
    sparse: bool = False,
    per_sample_weights: Tensor | None = None,
    include_last_offset: bool = False,
    padding_idx: int | None = None,
) -> Tensor:
    """(B, embedding_dim): for each bag, the sum, mean or max of its indices' rows of weight.

    A bag is a row of a 2-D input, or input[offsets[b]:offsets[b + 1]] of a 1-D one
    (offsets holding one more entry, the end, with ``include_last_offset``; the last bag
    runs to the input's end all the same, as PyTorch's).
    ``per_sample_weights`` (input's shape, mode 'sum') weighs each row; indices equal to
    ``padding_idx`` are left out of their bag (the mean counts the others); an empty bag
    gives zeros. ``scale_grad_by_freq`` (sum and mean) scales each row's gradient down by
    a count of the input's indices, as PyTorch's CPU kernel picks it (_frequency_scale).
    """
    op = "embedding_bag"
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"{op}: mode must be 'sum', 'mean' or 'max'; got {mode!r}")
    if weight.ndim != 2:
        raise ValueError(f"{op}: weight must be 2-D (num_embeddings, dim); got {weight.shape}")
    need_float(weight, op)
    if sparse:
        raise ValueError(f"{op}: sparse gradients are not supported; got sparse=True")
    if per_sample_weights is not None and mode != "sum":
        raise ValueError(
            f"{op}: per_sample_weights are only supported for mode='sum'; got mode={mode!r}"
        )
    n_rows = weight.shape[0]
    if padding_idx is not None:
        if not -n_rows <= padding_idx < n_rows:
            raise ValueError(
                f"{op}: padding_idx must be within num_embeddings {n_rows}; got {padding_idx}"
            )
        padding_idx %= n_rows
    shape_in = tuple(getattr(input, "shape", ()))
    idx, of, bags = _bags(input, offsets, include_last_offset, weight._array)
    if idx.size and (idx.min() < 0 or idx.max() >= n_rows):
        bad = idx.min() if idx.min() < 0 else idx.max()
        raise IndexError(
            f"embedding: index {bad} is out of range for num_embeddings {n_rows}; got input "
            f"of shape {shape_in}"
        )
    if max_norm is not None and idx.size:
        with no_grad():  # embedding's renorm of the rows looked up, in place in weight
            embedding(idx, weight, None, max_norm, norm_type)
    scale = None
    if scale_grad_by_freq and mode != "max" and weight.requires_grad and idx.size:
        scale = _frequency_scale(idx, n_rows, weight._array.dtype)  # (n, 1)
    psw = None
    if per_sample_weights is not None:
        psw = as_tensor(per_sample_weights)
        if tuple(psw.shape) != shape_in:
            raise ValueError(
                f"{op}: per_sample_weights must have the input's shape {shape_in}; got "
                f"{tuple(psw.shape)}"
            )
    at = None  # every position is in a bag (offsets[0] is 0), in order of the bags
    if padding_idx is not None:  # (k,): the positions whose index is not padding_idx
        at = xp.flatnonzero(idx != padding_idx)
        idx, of = idx[at], of[at]
        scale = None if scale is None else scale[at]
    options = dict(idx=idx, bag=of, at=at, bags=bags, mode=mode, scale=scale)
    return EmbeddingBagOp.apply(weight, psw, **options)


class EmbeddingBag(Module):
    """embedding_bag over a learned weight (num_embeddings, embedding_dim), initialised
    normal(0, 1) with the padding_idx row zero, as PyTorch's."""

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        mode: str = "mean",
        sparse: bool = False,
        _weight: Any = None,
        include_last_offset: bool = False,
        padding_idx: int | None = None,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        on = array.like(resolve_device(device, "EmbeddingBag"))
        positive_int(num_embeddings, "num_embeddings", "EmbeddingBag", zero_ok=True)
        positive_int(embedding_dim, "embedding_dim", "EmbeddingBag", zero_ok=True)
        if sparse:
            raise ValueError("EmbeddingBag: sparse gradients are not supported; got sparse=True")
        if mode not in ("sum", "mean", "max"):
            raise ValueError(f"EmbeddingBag: mode must be 'sum', 'mean' or 'max'; got {mode!r}")
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError(
                    f"EmbeddingBag: padding_idx must be within num_embeddings {num_embeddings}; "
                    f"got {padding_idx}"
                )
            padding_idx %= num_embeddings
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.mode, self.sparse = scale_grad_by_freq, mode, sparse
        self.include_last_offset, self.padding_idx = include_last_offset, padding_idx
        dtype = array.as_dtype(dtype) or array.get_default_dtype()
        if _weight is None:
            self.weight = Parameter(xp.empty((num_embeddings, embedding_dim), dtype=dtype, like=on))
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise ValueError(
                    f"EmbeddingBag: _weight must have shape ({num_embeddings}, {embedding_dim}); "
                    f"got {tuple(_weight.shape)}"
                )
            self.weight = Parameter(_weight)

    @classmethod
    def from_pretrained(
        cls,
        embeddings: Any,
        freeze: bool = True,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        mode: str = "mean",
        sparse: bool = False,
        include_last_offset: bool = False,
        padding_idx: int | None = None,
    ) -> EmbeddingBag:
        """An EmbeddingBag whose weight is ``embeddings`` (2-D), trained unless ``freeze``."""
        weight = as_tensor(embeddings)
        if weight.ndim != 2:
            raise ValueError(
                f"EmbeddingBag.from_pretrained: embeddings must be 2-D; got shape {weight.shape}"
            )
        bag = cls(
            weight.shape[0],
            weight.shape[1],
            max_norm,
            norm_type,
            scale_grad_by_freq,
            mode,
            sparse,
            weight,
            include_last_offset,
            padding_idx,
        )
        bag.weight.requires_grad = not freeze
        return bag

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx] = 0

    def forward(
        self, input: Tensor, offsets: Tensor | None = None, per_sample_weights: Tensor | None = None
    ) -> Tensor:
        return embedding_bag(
            input,
            self.weight,
            offsets,
            self.max_norm,
            self.norm_type,
            self.scale_grad_by_freq,
            self.mode,
            self.sparse,
            per_sample_weights,
            self.include_last_offset,
            self.padding_idx,
        )

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        s += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        return s
