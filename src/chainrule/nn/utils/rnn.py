"""torch.nn.utils.rnn: sequences of different lengths as one padded tensor (pad_sequence,
unpad_sequence) or as a PackedSequence, every sequence's steps in time order with the number of
sequences still running at each step (pack_*, pad_packed_sequence, unpack_sequence). Each
function is a composite of differentiable ops (a cat, a stack, one index); the recurrent layers
that read a PackedSequence are nn/rnn.py's.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from ... import array
from ...factories import full, tensor
from ...functions import cat, stack
from ...tensor import Tensor, as_tensor

__all__ = [
    "PackedSequence",
    "invert_permutation",
    "pack_padded_sequence",
    "pack_sequence",
    "pad_packed_sequence",
    "pad_sequence",
    "unpack_sequence",
    "unpad_sequence",
]


class _PackedFields(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


class PackedSequence(_PackedFields):
    """Sequences of different lengths, sorted longest first, as one tensor: ``data``
    (sum of lengths, *) holds step 0 of every sequence, then step 1 of those that have one,
    and so on; ``batch_sizes`` (int64, on the CPU) the number of sequences at each step.
    ``sorted_indices`` gives, for each place in that order, the sequence's index in the
    input (None when the input came sorted), ``unsorted_indices`` its inverse. Made by
    pack_padded_sequence and pack_sequence; ``PackedSequence((data, batch_sizes))`` works too,
    as PyTorch's."""

    def __new__(
        cls,
        data: Any,
        batch_sizes: Tensor | None = None,
        sorted_indices: Tensor | None = None,
        unsorted_indices: Tensor | None = None,
    ) -> PackedSequence:
        if batch_sizes is None:
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise TypeError(
                    f"PackedSequence: expected data and batch_sizes, or one pair (data, "
                    f"batch_sizes); got {type(data).__name__} alone"
                )
            data, batch_sizes = data
        _check_packed(data, batch_sizes, sorted_indices, unsorted_indices)
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def _with_data(self, data: Tensor) -> PackedSequence:
        """self with data converted (self where nothing changed); the indices follow data to
        its device, batch_sizes stay on the CPU, as PyTorch's."""
        if data is self.data:
            return self
        sorted_, unsorted = (
            None if i is None else i.to(data.device)
            for i in (self.sorted_indices, self.unsorted_indices)
        )
        return type(self)(data, self.batch_sizes, sorted_, unsorted)

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """data as ``Tensor.to(*args, **kwargs)`` makes it: self where that is data itself."""
        return self._with_data(self.data.to(*args, **kwargs))

    def cpu(self) -> PackedSequence:
        return self._with_data(self.data.cpu())

    def cuda(self, *args: Any, **kwargs: Any) -> PackedSequence:
        return self._with_data(self.data.cuda(*args, **kwargs))

    def pin_memory(self) -> PackedSequence:
        return self._with_data(self.data.pin_memory())

    def double(self) -> PackedSequence:
        return self._with_data(self.data.double())

    def float(self) -> PackedSequence:
        return self._with_data(self.data.float())

    def half(self) -> PackedSequence:
        return self._with_data(self.data.half())

    def long(self) -> PackedSequence:
        return self._with_data(self.data.long())

    def int(self) -> PackedSequence:
        return self._with_data(self.data.int())

    @property
    def is_cuda(self) -> bool:
        return self.data.is_cuda

    def is_pinned(self) -> bool:
        return self.data.is_pinned()


def _check_packed(data: Any, batch_sizes: Any, sorted_: Any, unsorted: Any) -> None:
    """A PackedSequence made by hand holds together, or says what does not: batch_sizes a 1-D
    int64 CPU tensor, non-empty, not growing, whose sum is data's rows; the indices
    permutations of the first batch size, unsorted_indices the inverse of sorted_indices.
    (PyTorch checks these in pad_packed_sequence and the recurrent layers, or not at all: a
    sum short of data's rows, or indices that disagree, give it wrong answers silently.)"""
    op = "PackedSequence"
    if not isinstance(batch_sizes, Tensor) or not isinstance(data, Tensor):
        raise TypeError(
            f"{op}: data and batch_sizes must be tensors; got {type(data).__name__} and "
            f"{type(batch_sizes).__name__}"
        )
    if batch_sizes.is_cuda:
        raise ValueError(
            f"{op}: batch_sizes should always be on CPU; got device "
            f"{str(batch_sizes.device)!r}; make PackedSequences with pack_sequence or "
            "pack_padded_sequence"
        )
    if batch_sizes.ndim != 1 or batch_sizes.dtype != array.int64:
        raise TypeError(
            f"{op}: batch_sizes must be a 1-D int64 tensor; got shape {batch_sizes.shape} and "
            f"dtype {batch_sizes.dtype}"
        )
    sizes = batch_sizes.tolist()
    if not sizes or sizes[0] < 1 or sizes[-1] < 0:
        raise ValueError(f"{op}: batch_sizes must be positive and not empty; got {sizes}")
    if any(a < b for a, b in zip(sizes, sizes[1:], strict=False)):
        raise ValueError(
            f"{op}: batch_sizes must not grow (each step holds the sequences still running, "
            f"longest first); got {sizes}"
        )
    if data.ndim == 0 or data.shape[0] != sum(sizes):
        raise ValueError(
            f"{op}: data must have one row per step of every sequence, sum(batch_sizes) = "
            f"{sum(sizes)}; got data of shape {data.shape} and batch_sizes {sizes}"
        )
    for name, indices in (("sorted_indices", sorted_), ("unsorted_indices", unsorted)):
        order = None if indices is None else as_tensor(indices).tolist()
        if order is not None and sorted(order) != list(range(sizes[0])):
            raise ValueError(
                f"{op}: {name} must be a permutation of 0..{sizes[0] - 1} (one index per "
                f"sequence); got {order} for batch_sizes {sizes}"
            )
    if sorted_ is not None and unsorted is not None:
        if as_tensor(sorted_)[as_tensor(unsorted)].tolist() != list(range(sizes[0])):
            raise ValueError(
                f"{op}: unsorted_indices must be the inverse of sorted_indices; got "
                f"{sorted_.tolist()} and {unsorted.tolist()}"
            )


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse of a permutation of 0..n-1 (out[permutation[i]] = i), None for None."""
    if permutation is None:
        return None
    order = permutation.tolist()
    inverse = [0] * len(order)
    for i, p in enumerate(order):
        inverse[p] = i
    return tensor(inverse, dtype=array.int64, device=permutation.device)


def pad_sequence(
    sequences: Tensor | Iterable[Tensor],
    batch_first: bool = False,
    padding_value: float = 0.0,
    padding_side: str = "right",
) -> Tensor:
    """The sequences, each (L_i, *), padded with padding_value to the longest length L and
    stacked: (L, B, *), or (B, L, *) with batch_first. padding_side 'right' pads after each
    sequence, 'left' before it."""
    if padding_side not in ("left", "right"):
        raise ValueError(
            f"pad_sequence: padding_side must be 'left' or 'right'; got {padding_side!r}"
        )
    seqs = [as_tensor(s) for s in sequences]
    if not seqs:
        raise RuntimeError("pad_sequence: received an empty list of sequences")
    shapes = [s.shape for s in seqs]
    if any(len(s) == 0 for s in shapes) or len({s[1:] for s in shapes}) > 1:
        raise ValueError(
            f"pad_sequence: every sequence needs at least one dim and the same sizes after "
            f"its first; got shapes {[tuple(s) for s in shapes]}"
        )
    longest = max(s[0] for s in shapes)
    padded = []
    for s in seqs:
        if s.shape[0] < longest:
            size = (longest - s.shape[0], *s.shape[1:])
            pad = full(size, padding_value, s.dtype, device=s.device)
            s = cat([s, pad] if padding_side == "right" else [pad, s])  # (L, *)
        padded.append(s)
    return stack(padded, 0 if batch_first else 1)  # (B, L, *) or (L, B, *)


def unpad_sequence(
    padded_sequences: Tensor, lengths: Tensor, batch_first: bool = False
) -> list[Tensor]:
    """The padded (L, B, *) (or (B, L, *) with batch_first) back to its B sequences, the i-th
    its first lengths[i] steps: a list of (lengths[i], *)."""
    x = padded_sequences if batch_first else padded_sequences.transpose(0, 1)  # (B, L, *)
    lens = _lengths(lengths, "unpad_sequence", cpu_only=False)
    if len(lens) != x.shape[0]:
        raise ValueError(
            f"unpad_sequence: expected one length per sequence; got {len(lens)} lengths for "
            f"padded_sequences of shape {padded_sequences.shape} (batch_first={batch_first})"
        )
    return [x[i, :n] for i, n in enumerate(lens)]


def pack_padded_sequence(
    input: Tensor, lengths: Any, batch_first: bool = False, enforce_sorted: bool = True
) -> PackedSequence:
    """The padded input (L, B, *) (or (B, L, *) with batch_first) as a PackedSequence of its
    B sequences, the i-th of lengths[i] steps (the steps past it are dropped). With
    enforce_sorted the lengths must come longest first; otherwise the sequences are sorted
    (stably, longest first) and sorted_indices records the order."""
    x = as_tensor(input)
    op = "pack_padded_sequence"
    lens = _lengths(lengths, op)
    if x.ndim < 2:
        raise ValueError(
            f"{op}: expected input of at least 2 dims (steps and batch); got shape {x.shape}"
        )
    steps, batch = (x.shape[1], x.shape[0]) if batch_first else x.shape[:2]
    if len(lens) != batch:
        raise RuntimeError(
            f"{op}: Expected `len(lengths)` to be equal to batch_size, but got {len(lens)} "
            f"(batch_size={batch}); input shape {x.shape}, batch_first={batch_first}"
        )
    if min(lens) <= 0:
        raise RuntimeError(
            f"{op}: Length of all samples has to be greater than 0, but found an element in "
            f"'lengths' that is <= 0; got lengths {lens}"
        )
    if max(lens) > steps:
        raise ValueError(
            f"{op}: a length exceeds the input's {steps} steps; got lengths {lens} for input "
            f"of shape {x.shape} (batch_first={batch_first})"
        )
    if enforce_sorted:
        if any(a < b for a, b in zip(lens, lens[1:], strict=False)):
            raise RuntimeError(
                f"{op}: `lengths` array must be sorted in decreasing order when "
                f"`enforce_sorted` is True; got lengths {lens}. You can pass "
                "`enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to "
                "sidestep this requirement if you do not need ONNX exportability."
            )
        order = list(range(batch))
        sorted_indices = None
    else:
        order = sorted(range(batch), key=lambda i: -lens[i])  # stable, as torch.sort's
        sorted_indices = tensor(order, dtype=array.int64, device=x.device)
    sizes = [sum(n > t for n in lens) for t in range(max(lens))]
    # data row by row: step t of the sequences in sorted order, while they last
    at_t = [t for t, b in enumerate(sizes) for _ in range(b)]
    at_b = [order[j] for b in sizes for j in range(b)]
    where = [at_b, at_t] if batch_first else [at_t, at_b]
    index = tuple(tensor(w, dtype=array.int64, device=x.device) for w in where)
    data = x[index]  # (sum of lengths, *)
    return PackedSequence(data, tensor(sizes, dtype=array.int64, device=array.CPU), sorted_indices)


def pad_packed_sequence(
    sequence: PackedSequence,
    batch_first: bool = False,
    padding_value: float = 0.0,
    total_length: int | None = None,
) -> tuple[Tensor, Tensor]:
    """The inverse of pack_padded_sequence: the padded (L, B, *) (or (B, L, *) with
    batch_first), in the input's order of sequences, L the longest length or total_length,
    and the lengths (int64, B). The padding is padding_value."""
    op = "pad_packed_sequence"
    if not isinstance(sequence, PackedSequence):
        raise TypeError(f"{op}: expected a PackedSequence; got {type(sequence).__name__}")
    data, sizes = sequence.data, sequence.batch_sizes.tolist()
    longest, batch = len(sizes), sizes[0]
    if total_length is not None:
        if total_length < longest:
            raise ValueError(
                f"{op}: Expected total_length to be at least the length of the longest "
                f"sequence in input, but got total_length={total_length} and max sequence "
                f"length being {longest}"
            )
        longest = total_length
    order = list(range(batch))
    if sequence.sorted_indices is not None:
        order = sequence.sorted_indices.tolist()
    # row[t][i]: the row of data with step t of sequence i, or the padding row past its end
    pad_row = len(data)
    row = [[pad_row] * batch for _ in range(longest)]
    start = 0
    for t, b in enumerate(sizes):
        for j in range(b):
            row[t][order[j]] = start + j
        start += b
    lengths = [0] * batch
    for j, i in enumerate(order):
        lengths[i] = sum(b > j for b in sizes)
    if batch_first:
        row = [list(r) for r in zip(*row, strict=True)]
    pad = full((1, *data.shape[1:]), padding_value, data.dtype, device=data.device)
    index = tensor(row, dtype=array.int64, device=data.device)
    padded = cat([data, pad])[index]  # (L, B, *) or (B, L, *)
    return padded, tensor(lengths, dtype=array.int64, device=array.CPU)


def pack_sequence(sequences: Sequence[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """The sequences, each (L_i, *), as one PackedSequence (pad_sequence, then
    pack_padded_sequence)."""
    seqs = list(sequences)
    if not seqs:
        raise RuntimeError("pack_sequence: received an empty list of sequences")
    padded = pad_sequence(seqs)  # (L, B, *)
    lengths = [as_tensor(s).shape[0] for s in seqs]
    return pack_padded_sequence(padded, lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The inverse of pack_sequence: the list of sequences, each (L_i, *), in the input's
    order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)


def _lengths(lengths: Any, op: str, cpu_only: bool = True) -> list[int]:
    """lengths (a list of ints, or a 1-D integer tensor, on the CPU where cpu_only) as a
    list of ints."""
    if isinstance(lengths, Tensor):
        if (cpu_only and lengths.is_cuda) or lengths.ndim != 1:
            raise RuntimeError(
                f"{op}: 'lengths' argument should be a 1D CPU int64 tensor, but got "
                f"{lengths.ndim}D {lengths.device} {lengths.dtype.name} tensor"  # as "CPU int64"
            )
        return [int(n) for n in lengths.tolist()]
    try:
        return [int(n) for n in lengths]
    except (TypeError, ValueError):
        raise RuntimeError(
            f"{op}: 'lengths' argument should be a 1D list of ints or a 1D CPU int64 tensor; "
            f"got {lengths!r}"
        ) from None
