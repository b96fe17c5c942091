"""The function form of each Tensor method that PyTorch also offers as a function: ``cr.exp(x)``
is ``x.exp()``, ``input`` made a Tensor first, each form with its method's parameters."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .factories import arange
from .tensor import Histogram, Tensor, ValuesIndices, as_tensor, write_out

__all__ = [
    "abs", "exp", "log", "isnan", "isinf", "isfinite", "isclose", "allclose", "equal",
    "histogram", "histc", "floor", "ceil", "trunc", "round", "clamp_min", "clamp_max",
    "unbind", "tile", "nonzero", "unique", "bincount", "prod", "dot", "mv", "addcmul",
    "addcdiv", "lerp", "diag", "index_fill", "unflatten", "log1p", "expm1", "log2", "log10",
    "remainder", "floor_divide", "rsqrt", "outer", "t", "mm", "bmm", "narrow", "sqrt", "sin",
    "cos", "tanh", "sigmoid", "relu", "erf", "sign", "clamp", "square", "sum", "mean", "var",
    "std", "amax", "amin", "max", "min", "argmax", "argmin", "logsumexp", "softmax",
    "log_softmax", "norm", "reshape", "flatten", "squeeze", "unsqueeze", "transpose",
    "permute", "broadcast_to", "split", "chunk", "gather", "take_along_dim", "tril", "triu",
    "cumsum", "flip", "roll", "index_select", "masked_select", "cumprod", "repeat_interleave",
    "sort", "argsort", "topk", "scatter", "scatter_add", "scatter_reduce", "index_add",
    "addmm", "baddbmm", "numel", "add", "sub", "mul", "div", "neg", "pow", "clip", "clone",
    "detach", "eq", "ne", "lt", "le", "gt", "ge", "all", "any", "masked_fill", "swapaxes",
    "swapdims", "index_put", "index_put_", "fill_", "zero_", "multinomial", "bernoulli",
    "get_device", "is_floating_point",
    "maximum", "minimum", "abs_", "clamp_", "clip_", "cos_", "exp_", "expm1_", "log1p_", "log_",
    "neg_", "relu_", "sigmoid_", "sin_", "sqrt_", "tanh_",
]


def abs(input: Tensor) -> Tensor:
    """The function form of Tensor.abs."""
    return as_tensor(input).abs()


def exp(input: Tensor) -> Tensor:
    """The function form of Tensor.exp."""
    return as_tensor(input).exp()


def log(input: Tensor) -> Tensor:
    """The function form of Tensor.log."""
    return as_tensor(input).log()


def isnan(input: Tensor) -> Tensor:
    """The function form of Tensor.isnan."""
    return as_tensor(input).isnan()


def isinf(input: Tensor) -> Tensor:
    """The function form of Tensor.isinf."""
    return as_tensor(input).isinf()


def isfinite(input: Tensor) -> Tensor:
    """The function form of Tensor.isfinite."""
    return as_tensor(input).isfinite()


def isclose(
    input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> Tensor:
    """The function form of Tensor.isclose."""
    return as_tensor(input).isclose(other, rtol, atol, equal_nan)


def allclose(
    input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> bool:
    """The function form of Tensor.allclose."""
    return as_tensor(input).allclose(other, rtol, atol, equal_nan)


def equal(input: Tensor, other: Tensor) -> bool:
    """The function form of Tensor.equal."""
    return as_tensor(input).equal(other)


def histogram(
    input: Tensor, bins: Any = 100, *, range: Any = None, weight: Any = None, density: bool = False
) -> Histogram:
    """The function form of Tensor.histogram."""
    return as_tensor(input).histogram(bins, range=range, weight=weight, density=density)


def histc(input: Tensor, bins: int = 100, min: float = 0, max: float = 0) -> Tensor:
    """The function form of Tensor.histc."""
    return as_tensor(input).histc(bins, min, max)


def floor(input: Tensor) -> Tensor:
    """The function form of Tensor.floor."""
    return as_tensor(input).floor()


def ceil(input: Tensor) -> Tensor:
    """The function form of Tensor.ceil."""
    return as_tensor(input).ceil()


def trunc(input: Tensor) -> Tensor:
    """The function form of Tensor.trunc."""
    return as_tensor(input).trunc()


def round(input: Tensor, *, decimals: int = 0) -> Tensor:
    """The function form of Tensor.round."""
    return as_tensor(input).round(decimals=decimals)


def clamp_min(input: Tensor, min: Any) -> Tensor:
    """The function form of Tensor.clamp_min."""
    return as_tensor(input).clamp_min(min)


def clamp_max(input: Tensor, max: Any) -> Tensor:
    """The function form of Tensor.clamp_max."""
    return as_tensor(input).clamp_max(max)


def unbind(input: Tensor, dim: int = 0) -> tuple[Tensor, ...]:
    """The function form of Tensor.unbind."""
    return as_tensor(input).unbind(dim)


def tile(input: Tensor, dims: Any) -> Tensor:
    """The function form of Tensor.tile."""
    return as_tensor(input).tile(dims)


def nonzero(input: Tensor, *, as_tuple: bool = False) -> Any:
    """The function form of Tensor.nonzero."""
    return as_tensor(input).nonzero(as_tuple=as_tuple)


def unique(
    input: Tensor,
    sorted: bool = True,
    return_inverse: bool = False,
    return_counts: bool = False,
    dim: int | None = None,
) -> Any:
    """The function form of Tensor.unique."""
    return as_tensor(input).unique(sorted, return_inverse, return_counts, dim)


def bincount(input: Tensor, weights: Any = None, minlength: int = 0) -> Tensor:
    """The function form of Tensor.bincount."""
    return as_tensor(input).bincount(weights, minlength)


def prod(
    input: Tensor, dim: int | None = None, keepdim: bool = False, *, dtype: Any = None
) -> Tensor:
    """The function form of Tensor.prod."""
    return as_tensor(input).prod(dim, keepdim, dtype=dtype)


def dot(input: Tensor, other: Any) -> Tensor:
    """The function form of Tensor.dot."""
    return as_tensor(input).dot(other)


def mv(input: Tensor, vec: Any) -> Tensor:
    """The function form of Tensor.mv."""
    return as_tensor(input).mv(vec)


def addcmul(input: Tensor, tensor1: Any, tensor2: Any, *, value: Any = 1) -> Tensor:
    """The function form of Tensor.addcmul."""
    return as_tensor(input).addcmul(tensor1, tensor2, value=value)


def addcdiv(input: Tensor, tensor1: Any, tensor2: Any, *, value: Any = 1) -> Tensor:
    """The function form of Tensor.addcdiv."""
    return as_tensor(input).addcdiv(tensor1, tensor2, value=value)


def lerp(input: Tensor, end: Any, weight: Any) -> Tensor:
    """The function form of Tensor.lerp."""
    return as_tensor(input).lerp(end, weight)


def diag(input: Tensor, diagonal: int = 0) -> Tensor:
    """The function form of Tensor.diag."""
    return as_tensor(input).diag(diagonal)


def index_fill(input: Tensor, dim: int, index: Any, value: Any) -> Tensor:
    """The function form of Tensor.index_fill."""
    return as_tensor(input).index_fill(dim, index, value)


def unflatten(input: Tensor, dim: int, sizes: Any) -> Tensor:
    """The function form of Tensor.unflatten."""
    return as_tensor(input).unflatten(dim, sizes)


def log1p(input: Tensor) -> Tensor:
    """The function form of Tensor.log1p."""
    return as_tensor(input).log1p()


def expm1(input: Tensor) -> Tensor:
    """The function form of Tensor.expm1."""
    return as_tensor(input).expm1()


def log2(input: Tensor) -> Tensor:
    """The function form of Tensor.log2."""
    return as_tensor(input).log2()


def log10(input: Tensor) -> Tensor:
    """The function form of Tensor.log10."""
    return as_tensor(input).log10()


def remainder(input: Any, other: Any) -> Tensor:
    """input % other, with the divisor's sign, as Tensor.remainder (a number on either side)."""
    return input % other if isinstance(other, Tensor) else as_tensor(input) % other


def floor_divide(input: Any, other: Any) -> Tensor:
    """input // other, rounded toward minus infinity, as Tensor.floor_divide."""
    return input // other if isinstance(other, Tensor) else as_tensor(input) // other


def rsqrt(input: Tensor) -> Tensor:
    """The function form of Tensor.rsqrt."""
    return as_tensor(input).rsqrt()


def outer(input: Tensor, vec2: Any) -> Tensor:
    """The function form of Tensor.outer."""
    return as_tensor(input).outer(vec2)


def t(input: Tensor) -> Tensor:
    """The function form of Tensor.t."""
    return as_tensor(input).t()


def mm(input: Tensor, mat2: Any) -> Tensor:
    """The function form of Tensor.mm."""
    return as_tensor(input).mm(mat2)


def bmm(input: Tensor, mat2: Any) -> Tensor:
    """The function form of Tensor.bmm."""
    return as_tensor(input).bmm(mat2)


def narrow(input: Tensor, dim: int, start: Any, length: int) -> Tensor:
    """The function form of Tensor.narrow."""
    return as_tensor(input).narrow(dim, start, length)


def sqrt(input: Tensor) -> Tensor:
    """The function form of Tensor.sqrt."""
    return as_tensor(input).sqrt()


def sin(input: Tensor) -> Tensor:
    """The function form of Tensor.sin."""
    return as_tensor(input).sin()


def cos(input: Tensor) -> Tensor:
    """The function form of Tensor.cos."""
    return as_tensor(input).cos()


def tanh(input: Tensor) -> Tensor:
    """The function form of Tensor.tanh."""
    return as_tensor(input).tanh()


def sigmoid(input: Tensor) -> Tensor:
    """The function form of Tensor.sigmoid."""
    return as_tensor(input).sigmoid()


def relu(input: Tensor) -> Tensor:
    """The function form of Tensor.relu."""
    return as_tensor(input).relu()


def erf(input: Tensor) -> Tensor:
    """The function form of Tensor.erf."""
    return as_tensor(input).erf()


def sign(input: Tensor) -> Tensor:
    """The function form of Tensor.sign."""
    return as_tensor(input).sign()


def clamp(input: Tensor, min: Any = None, max: Any = None) -> Tensor:
    """The function form of Tensor.clamp."""
    return as_tensor(input).clamp(min, max)


def square(input: Tensor) -> Tensor:
    """The function form of Tensor.square."""
    return as_tensor(input).square()


def sum(
    input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None, **np_names: Any
) -> Tensor:
    """The function form of Tensor.sum."""
    return as_tensor(input).sum(dim, keepdim, dtype=dtype, **np_names)


def mean(
    input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None, **np_names: Any
) -> Tensor:
    """The function form of Tensor.mean."""
    return as_tensor(input).mean(dim, keepdim, dtype=dtype, **np_names)


def var(
    input: Tensor, dim: Any = None, *, correction: int = 1, keepdim: bool = False, **np_names: Any
) -> Tensor:
    """The function form of Tensor.var."""
    return as_tensor(input).var(dim, correction=correction, keepdim=keepdim, **np_names)


def std(
    input: Tensor, dim: Any = None, *, correction: int = 1, keepdim: bool = False, **np_names: Any
) -> Tensor:
    """The function form of Tensor.std."""
    return as_tensor(input).std(dim, correction=correction, keepdim=keepdim, **np_names)


def amax(input: Tensor, dim: Any = None, keepdim: bool = False, **np_names: Any) -> Tensor:
    """The function form of Tensor.amax."""
    return as_tensor(input).amax(dim, keepdim, **np_names)


def amin(input: Tensor, dim: Any = None, keepdim: bool = False, **np_names: Any) -> Tensor:
    """The function form of Tensor.amin."""
    return as_tensor(input).amin(dim, keepdim, **np_names)


def max(input: Tensor, dim: Any = None, keepdim: bool = False, **np_names: Any) -> Any:
    """The function form of Tensor.max."""
    return as_tensor(input).max(dim, keepdim, **np_names)


def min(input: Tensor, dim: Any = None, keepdim: bool = False, **np_names: Any) -> Any:
    """The function form of Tensor.min."""
    return as_tensor(input).min(dim, keepdim, **np_names)


def argmax(input: Tensor, dim: int | None = None, keepdim: bool = False, **np_names: Any) -> Tensor:
    """The function form of Tensor.argmax."""
    return as_tensor(input).argmax(dim, keepdim, **np_names)


def argmin(input: Tensor, dim: int | None = None, keepdim: bool = False, **np_names: Any) -> Tensor:
    """The function form of Tensor.argmin."""
    return as_tensor(input).argmin(dim, keepdim, **np_names)


def logsumexp(input: Tensor, dim: Any = None, keepdim: bool = False, **np_names: Any) -> Tensor:
    """The function form of Tensor.logsumexp."""
    return as_tensor(input).logsumexp(dim, keepdim, **np_names)


def softmax(input: Tensor, dim: int = -1, **np_names: Any) -> Tensor:
    """The function form of Tensor.softmax."""
    return as_tensor(input).softmax(dim, **np_names)


def log_softmax(input: Tensor, dim: int = -1, **np_names: Any) -> Tensor:
    """The function form of Tensor.log_softmax."""
    return as_tensor(input).log_softmax(dim, **np_names)


def norm(input: Tensor, p: float = 2, dim: Any = None, keepdim: bool = False) -> Tensor:
    """The function form of Tensor.norm."""
    return as_tensor(input).norm(p, dim, keepdim)


def reshape(input: Tensor, *shape_list: Any, shape: Any = None) -> Tensor:
    """The function form of Tensor.reshape."""
    return as_tensor(input).reshape(*shape_list, shape=shape)


def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """The function form of Tensor.flatten."""
    return as_tensor(input).flatten(start_dim, end_dim)


def squeeze(input: Tensor, dim: Any = None) -> Tensor:
    """The function form of Tensor.squeeze."""
    return as_tensor(input).squeeze(dim)


def unsqueeze(input: Tensor, dim: int) -> Tensor:
    """The function form of Tensor.unsqueeze."""
    return as_tensor(input).unsqueeze(dim)


def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """The function form of Tensor.transpose."""
    return as_tensor(input).transpose(dim0, dim1)


def permute(input: Tensor, *dim_list: Any, dims: Any = None) -> Tensor:
    """The function form of Tensor.permute."""
    return as_tensor(input).permute(*dim_list, dims=dims)


def broadcast_to(input: Tensor, shape: Sequence[int]) -> Tensor:
    """The function form of Tensor.broadcast_to."""
    return as_tensor(input).broadcast_to(shape)


def split(input: Tensor, split_size_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
    """The function form of Tensor.split."""
    return as_tensor(input).split(split_size_or_sections, dim)


def chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """The function form of Tensor.chunk."""
    return as_tensor(input).chunk(chunks, dim)


def gather(input: Tensor, dim: int, index: Any) -> Tensor:
    """The function form of Tensor.gather."""
    return as_tensor(input).gather(dim, index)


def take_along_dim(input: Tensor, indices: Any, dim: int | None = None) -> Tensor:
    """The function form of Tensor.take_along_dim."""
    return as_tensor(input).take_along_dim(indices, dim)


def tril(input: Tensor, diagonal: int = 0) -> Tensor:
    """The function form of Tensor.tril."""
    return as_tensor(input).tril(diagonal)


def triu(input: Tensor, diagonal: int = 0) -> Tensor:
    """The function form of Tensor.triu."""
    return as_tensor(input).triu(diagonal)


def cumsum(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """The function form of Tensor.cumsum."""
    return as_tensor(input).cumsum(dim, dtype=dtype)


def flip(input: Tensor, *dim_list: Any, dims: Any = None) -> Tensor:
    """The function form of Tensor.flip."""
    return as_tensor(input).flip(*dim_list, dims=dims)


def roll(input: Tensor, shifts: Any, dims: Any = None) -> Tensor:
    """The function form of Tensor.roll."""
    return as_tensor(input).roll(shifts, dims)


def index_select(input: Tensor, dim: int, index: Any) -> Tensor:
    """The function form of Tensor.index_select."""
    return as_tensor(input).index_select(dim, index)


def masked_select(input: Tensor, mask: Any) -> Tensor:
    """The function form of Tensor.masked_select."""
    return as_tensor(input).masked_select(mask)


def cumprod(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """The function form of Tensor.cumprod."""
    return as_tensor(input).cumprod(dim, dtype=dtype)


def repeat_interleave(
    input: Any, repeats: Any = None, dim: int | None = None, *, output_size: int | None = None
) -> Tensor:
    """The function form of Tensor.repeat_interleave. Given only a 1-D integer tensor of
    counts, the positions each repeated that many times: [1, 0, 3] -> [0, 2, 2, 2]."""
    if repeats is not None:
        return as_tensor(input).repeat_interleave(repeats, dim, output_size=output_size)
    counts = as_tensor(input)
    if counts.ndim != 1 or dim is not None:
        raise ValueError(
            "repeat_interleave: without repeats, input must be a 1-D tensor of counts (and no "
            f"dim); got shape {counts.shape} and dim {dim}"
        )
    index = arange(counts.shape[0], device=counts.device)
    return index.repeat_interleave(counts, 0, output_size=output_size)


def sort(
    input: Tensor, dim: int = -1, descending: bool = False, *, stable: bool = False
) -> ValuesIndices:
    """The function form of Tensor.sort."""
    return as_tensor(input).sort(dim, descending, stable=stable)


def argsort(
    input: Tensor, dim: int = -1, descending: bool = False, *, stable: bool = False
) -> Tensor:
    """The function form of Tensor.argsort."""
    return as_tensor(input).argsort(dim, descending, stable=stable)


def topk(
    input: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True
) -> ValuesIndices:
    """The function form of Tensor.topk."""
    return as_tensor(input).topk(k, dim, largest, sorted)


def scatter(
    input: Tensor, dim: int, index: Any, src: Any = None, *, value: Any = None, reduce: Any = None
) -> Tensor:
    """The function form of Tensor.scatter."""
    return as_tensor(input).scatter(dim, index, src, value=value, reduce=reduce)


def scatter_add(input: Tensor, dim: int, index: Any, src: Any) -> Tensor:
    """The function form of Tensor.scatter_add."""
    return as_tensor(input).scatter_add(dim, index, src)


def scatter_reduce(
    input: Tensor, dim: int, index: Any, src: Any, reduce: str, *, include_self: bool = True
) -> Tensor:
    """The function form of Tensor.scatter_reduce."""
    return as_tensor(input).scatter_reduce(dim, index, src, reduce, include_self=include_self)


def index_add(input: Tensor, dim: int, index: Any, source: Any, *, alpha: float = 1) -> Tensor:
    """The function form of Tensor.index_add."""
    return as_tensor(input).index_add(dim, index, source, alpha=alpha)


def addmm(input: Tensor, mat1: Any, mat2: Any, *, beta: float = 1, alpha: float = 1) -> Tensor:
    """The function form of Tensor.addmm."""
    return as_tensor(input).addmm(mat1, mat2, beta=beta, alpha=alpha)


def baddbmm(
    input: Tensor, batch1: Any, batch2: Any, *, beta: float = 1, alpha: float = 1
) -> Tensor:
    """The function form of Tensor.baddbmm."""
    return as_tensor(input).baddbmm(batch1, batch2, beta=beta, alpha=alpha)


def numel(input: Tensor) -> int:
    """The function form of Tensor.numel."""
    return as_tensor(input).numel()


def add(input: Tensor, other: Any, *, alpha: Any = 1, out: Tensor | None = None) -> Tensor:
    """The function form of Tensor.add (``out=`` as PyTorch's)."""
    return write_out(as_tensor(input).add(other, alpha=alpha), out, "add")


def sub(input: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    """The function form of Tensor.sub."""
    return as_tensor(input).sub(other, alpha=alpha)


def mul(input: Tensor, other: Any, *, out: Tensor | None = None) -> Tensor:
    """The function form of Tensor.mul (``out=`` as PyTorch's)."""
    return write_out(as_tensor(input).mul(other), out, "mul")


def index_put(input: Tensor, indices: Any, values: Any, accumulate: bool = False) -> Tensor:
    """The function form of Tensor.index_put."""
    return as_tensor(input).index_put(indices, values, accumulate)


def index_put_(input: Tensor, indices: Any, values: Any, accumulate: bool = False) -> Tensor:
    """The function form of Tensor.index_put_."""
    return as_tensor(input).index_put_(indices, values, accumulate)


def div(input: Tensor, other: Any, *, rounding_mode: str | None = None) -> Tensor:
    """The function form of Tensor.div."""
    return as_tensor(input).div(other, rounding_mode=rounding_mode)


def neg(input: Tensor) -> Tensor:
    """The function form of Tensor.neg."""
    return as_tensor(input).neg()


def pow(input: Tensor, exponent: Any) -> Tensor:
    """The function form of Tensor.pow."""
    return as_tensor(input).pow(exponent)


def clip(input: Tensor, min: Any = None, max: Any = None) -> Tensor:
    """The function form of Tensor.clip."""
    return as_tensor(input).clip(min, max)


def clone(input: Tensor, *, memory_format: Any = None) -> Tensor:
    """The function form of Tensor.clone."""
    return as_tensor(input).clone(memory_format=memory_format)


def detach(input: Tensor) -> Tensor:
    """The function form of Tensor.detach."""
    return as_tensor(input).detach()


def eq(input: Tensor, other: Any) -> Tensor:
    """The function form of Tensor.eq."""
    return as_tensor(input).eq(other)


def ne(input: Tensor, other: Any) -> Tensor:
    """The function form of Tensor.ne."""
    return as_tensor(input).ne(other)


def lt(input: Tensor, other: Any) -> Tensor:
    """The function form of Tensor.lt."""
    return as_tensor(input).lt(other)


def le(input: Tensor, other: Any) -> Tensor:
    """The function form of Tensor.le."""
    return as_tensor(input).le(other)


def gt(input: Tensor, other: Any) -> Tensor:
    """The function form of Tensor.gt."""
    return as_tensor(input).gt(other)


def ge(input: Tensor, other: Any) -> Tensor:
    """The function form of Tensor.ge."""
    return as_tensor(input).ge(other)


def all(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    """The function form of Tensor.all."""
    return as_tensor(input).all(dim, keepdim)


def any(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    """The function form of Tensor.any."""
    return as_tensor(input).any(dim, keepdim)


def masked_fill(input: Tensor, mask: Any, value: float) -> Tensor:
    """The function form of Tensor.masked_fill."""
    return as_tensor(input).masked_fill(mask, value)


def swapaxes(input: Tensor, axis0: int, axis1: int) -> Tensor:
    """The function form of Tensor.swapaxes."""
    return as_tensor(input).swapaxes(axis0, axis1)


def swapdims(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """The function form of Tensor.swapdims."""
    return as_tensor(input).swapdims(dim0, dim1)


def fill_(input: Tensor, value: Any) -> Tensor:
    """The function form of Tensor.fill_."""
    return as_tensor(input).fill_(value)


def zero_(input: Tensor) -> Tensor:
    """The function form of Tensor.zero_."""
    return as_tensor(input).zero_()


def multinomial(
    input: Tensor, num_samples: int, replacement: bool = False, *, generator: Any = None
) -> Tensor:
    """The function form of Tensor.multinomial."""
    return as_tensor(input).multinomial(num_samples, replacement, generator=generator)


def bernoulli(input: Tensor, *, generator: Any = None) -> Tensor:
    """The function form of Tensor.bernoulli."""
    return as_tensor(input).bernoulli(generator=generator)


def get_device(input: Tensor) -> int:
    """The function form of Tensor.get_device."""
    return as_tensor(input).get_device()


def is_floating_point(input: Tensor) -> bool:
    """The function form of Tensor.is_floating_point."""
    return as_tensor(input).is_floating_point()


def maximum(input: Any, other: Any) -> Tensor:
    """Elementwise max; a number beside a Tensor takes the tensor's dtype (max is symmetric,
    ties included, so the Tensor's method serves either order)."""
    if not isinstance(input, Tensor) and isinstance(other, Tensor):
        return other.maximum(input)
    return as_tensor(input).maximum(other)


def minimum(input: Any, other: Any) -> Tensor:
    """Elementwise min, as maximum."""
    if not isinstance(input, Tensor) and isinstance(other, Tensor):
        return other.minimum(input)
    return as_tensor(input).minimum(other)


# -- in place: the function forms of the methods that write into their input -----------


def abs_(input: Tensor) -> Tensor:
    """The function form of Tensor.abs_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "abs_").abs_()


def clamp_(input: Tensor, min: Any = None, max: Any = None) -> Tensor:
    """The function form of Tensor.clamp_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "clamp_").clamp_(min, max)


def clip_(input: Tensor, min: Any = None, max: Any = None) -> Tensor:
    """The function form of Tensor.clip_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "clip_").clip_(min, max)


def cos_(input: Tensor) -> Tensor:
    """The function form of Tensor.cos_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "cos_").cos_()


def exp_(input: Tensor) -> Tensor:
    """The function form of Tensor.exp_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "exp_").exp_()


def expm1_(input: Tensor) -> Tensor:
    """The function form of Tensor.expm1_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "expm1_").expm1_()


def log1p_(input: Tensor) -> Tensor:
    """The function form of Tensor.log1p_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "log1p_").log1p_()


def log_(input: Tensor) -> Tensor:
    """The function form of Tensor.log_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "log_").log_()


def neg_(input: Tensor) -> Tensor:
    """The function form of Tensor.neg_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "neg_").neg_()


def relu_(input: Tensor) -> Tensor:
    """The function form of Tensor.relu_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "relu_").relu_()


def sigmoid_(input: Tensor) -> Tensor:
    """The function form of Tensor.sigmoid_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "sigmoid_").sigmoid_()


def sin_(input: Tensor) -> Tensor:
    """The function form of Tensor.sin_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "sin_").sin_()


def sqrt_(input: Tensor) -> Tensor:
    """The function form of Tensor.sqrt_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "sqrt_").sqrt_()


def tanh_(input: Tensor) -> Tensor:
    """The function form of Tensor.tanh_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "tanh_").tanh_()


def _inplace_target(input: Any, op: str) -> Tensor:
    if not isinstance(input, Tensor):
        raise TypeError(
            f"{op}: writes in place, so input must be a Tensor; got {type(input).__name__}"
        )
    return input
