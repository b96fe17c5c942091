"""EmbeddingBag and embedding_bag: the sum, mean or max of bags of embedding rows, each bag
one row of a 2-D input or a run of a 1-D input marked by offsets. The checks and max_norm's
renorm (embedding's, layers.py) are here, with vmap's rule; the bags, the reduction and its
gradient, to the weight and the per-sample weights, are ops/bags.py's one node, as PyTorch's.
"""

from __future__ import annotations

from typing import Any

from .. import array, batching
from ..arguments import need_float, positive_int, resolve_device
from ..autograd.mode import no_grad
from ..ops.bags import EmbeddingBag as EmbeddingBagOp
from ..tensor import Tensor, as_tensor
from . import init
from .layers import embedding, per_example_rows
from .module import Module, Parameter

xp = array.xp


def _indices(x: Any, like: Any, what: str) -> Any:
    """x's integers as an array on like's device: a tensor's own array where it is there (an
    example's, under vmap: the op's rule finds the batch from it)."""
    a = x._array if isinstance(x, Tensor) else x
    a = a if isinstance(a, type(like)) else array.on_device_of(a, like)
    if a.dtype.kind not in "iu":
        raise TypeError(
            f"embedding_bag: {what} must be integers; got dtype {array.dtype_object(a.dtype)}"
        )
    return a


def _checked(input: Any, offsets: Any, like: Any) -> tuple[Any, Any]:
    """The indices and the offsets (None with a 2-D input) as arrays, checked: each bag a row
    of a 2-D input or a run of a 1-D one that offsets mark."""
    idx = _indices(input, like, "input")
    if idx.ndim == 2:
        if offsets is not None:
            raise ValueError(
                f"embedding_bag: offsets must be None for a 2-D input (each row a bag); got "
                f"input shape {idx.shape}"
            )
        return idx, None
    if idx.ndim != 1:
        raise ValueError(
            f"embedding_bag: input must be 1-D (with offsets) or 2-D (B, L); got shape {idx.shape}"
        )
    if offsets is None:
        raise ValueError("embedding_bag: offsets are needed with a 1-D input")
    starts = _indices(offsets, like, "offsets")
    if starts.ndim != 1:
        raise ValueError(f"embedding_bag: offsets must be 1-D; got shape {starts.shape}")
    if not starts.size:
        return idx, starts
    rows = batching.examples(starts).reshape(-1, starts.size)  # under vmap: every example's
    if xp.count_nonzero(rows[:, 0]):  # (count_nonzero: the cheapest test of a few numbers)
        raise ValueError(
            f"embedding_bag: offsets[0] must be 0 (the first bag's start); got "
            f"{rows[rows[:, 0] != 0, 0][0]}"
        )
    if (rows[:, 1:] < rows[:, :-1]).any():  # PyTorch reads past its bags
        falls = (rows[:, 1:] < rows[:, :-1]).any(1)  # (examples,)
        raise ValueError(f"embedding_bag: offsets must not decrease; got {rows[falls][0].tolist()}")
    if xp.count_nonzero(rows[:, -1] > idx.size):
        raise ValueError(
            f"embedding_bag: offsets[-1] can not be greater than input's length {idx.size}; got "
            f"{rows[:, -1].max()}"
        )
    return idx, starts


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
    a count of the input's indices, as PyTorch's CPU kernel picks it (ops/bags.py's
    frequency_scale).
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
    idx, starts = _checked(input, offsets, weight._array)
    every = batching.examples(idx)  # under vmap, every example's indices are checked
    if idx.size and (every.min() < 0 or every.max() >= n_rows):
        bad = every.min() if every.min() < 0 else every.max()
        raise IndexError(
            f"embedding: index {bad} is out of range for num_embeddings {n_rows}; got input "
            f"of shape {shape_in}"
        )
    if max_norm is not None and idx.size:
        with no_grad():  # embedding's renorm of the rows looked up, in place in weight
            embedding(idx, weight, None, max_norm, norm_type)
    psw = None
    if per_sample_weights is not None:
        psw = as_tensor(per_sample_weights)
        if tuple(psw.shape) != shape_in:
            raise ValueError(
                f"{op}: per_sample_weights must have the input's shape {shape_in}; got "
                f"{tuple(psw.shape)}"
            )
    # the factors where a gradient will reach the weight (under vmap, the batch's weight)
    by_freq = scale_grad_by_freq and mode != "max" and batching.real(weight).requires_grad
    # the indices and offsets as given (under vmap, an example's: its rule sees the batch's)
    return EmbeddingBagOp.apply(
        weight, psw, input=idx, offsets=starts, include_last_offset=include_last_offset,
        padding_idx=padding_idx, mode=mode, scale_grad_by_freq=by_freq,
    )  # fmt: skip


def _batched_bags(cls: Any, args: dict, batched: dict, size: int) -> Tensor:
    """vmap's rule for embedding_bag's primitive: the B examples' bags one list of B*bags
    bags, (B*bags, D) taken apart as (B, bags, D); per-example weights (B, V, D) one table of
    B*V rows, each example's indices (and padding row) moved to its own rows. Each example's
    last offset kept by include_last_offset left out (its last bag runs to its input's end
    all the same); scale_grad_by_freq told how many examples the indices hold, each counted
    on its own."""
    weight, psw, idx, starts = args["weight"], args["psw"], args["input"], args["offsets"]
    padding = args["padding_idx"]
    if not batched["input"]:  # the same bags in every example
        idx = xp.broadcast_to(idx, (size, *idx.shape))
    weight, idx, padding = per_example_rows(weight, idx, padding, batched["weight"], size)
    if psw is not None and not batched["psw"]:
        psw = psw.unsqueeze(0).expand(size, *psw.shape)
    last = False  # include_last_offset, once each example's last offset is left out
    if starts is None:  # 2-D examples (bags, L): B*bags rows
        bags = idx.shape[1]
        idx = idx.reshape(-1, idx.shape[-1])  # (B*bags, L)
    else:  # 1-D examples (n,): example b's runs start b*n further along the one input
        starts = starts if batched["offsets"] else xp.broadcast_to(starts, (size, *starts.shape))
        if args["include_last_offset"] and starts.shape[1]:
            starts = starts[:, :-1]  # (B, bags)
        else:
            last = args["include_last_offset"]  # none to leave out: the op's answer for it
        bags, n = starts.shape[1], idx.shape[1]
        starts = (starts + (xp.arange(size, like=starts) * n)[:, None]).reshape(-1)  # (B*bags,)
        idx = idx.reshape(-1)  # (B*n,)
    if psw is not None:
        psw = psw.reshape(idx.shape)
    given = {"weight": weight, "psw": psw, "input": idx, "offsets": starts, "padding_idx": padding}
    given |= {"include_last_offset": last, "examples": size * args.get("examples", 1)}
    out = batching.call(cls, {**args, **given})  # (B*bags, D)
    return out.reshape(size, bags, out.shape[-1])


batching.register({"EmbeddingBag": _batched_bags})


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
