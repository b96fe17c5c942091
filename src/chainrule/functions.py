"""The cr.* function forms of Tensor methods: ``cr.exp(x)`` is ``x.exp()``, with input made a
Tensor first. One real definition each, so grep, IDEs and mypy see every name; the methods
themselves, with their arguments' checks, are tensor.py's.

Defined after the builtins they shadow (sum, max, min, abs) are last used here: this module
uses none of them.
"""

from __future__ import annotations

from typing import Any

from .tensor import as_tensor


def abs(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.abs."""
    return as_tensor(input).abs(*args, **kwargs)


def exp(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.exp."""
    return as_tensor(input).exp(*args, **kwargs)


def log(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.log."""
    return as_tensor(input).log(*args, **kwargs)


def sqrt(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.sqrt."""
    return as_tensor(input).sqrt(*args, **kwargs)


def sin(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.sin."""
    return as_tensor(input).sin(*args, **kwargs)


def cos(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.cos."""
    return as_tensor(input).cos(*args, **kwargs)


def tanh(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.tanh."""
    return as_tensor(input).tanh(*args, **kwargs)


def sigmoid(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.sigmoid."""
    return as_tensor(input).sigmoid(*args, **kwargs)


def relu(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.relu."""
    return as_tensor(input).relu(*args, **kwargs)


def erf(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.erf."""
    return as_tensor(input).erf(*args, **kwargs)


def sign(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.sign."""
    return as_tensor(input).sign(*args, **kwargs)


def clamp(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.clamp."""
    return as_tensor(input).clamp(*args, **kwargs)


def square(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.square."""
    return as_tensor(input).square(*args, **kwargs)


def sum(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.sum."""
    return as_tensor(input).sum(*args, **kwargs)


def mean(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.mean."""
    return as_tensor(input).mean(*args, **kwargs)


def var(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.var."""
    return as_tensor(input).var(*args, **kwargs)


def std(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.std."""
    return as_tensor(input).std(*args, **kwargs)


def amax(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.amax."""
    return as_tensor(input).amax(*args, **kwargs)


def amin(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.amin."""
    return as_tensor(input).amin(*args, **kwargs)


def max(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.max."""
    return as_tensor(input).max(*args, **kwargs)


def min(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.min."""
    return as_tensor(input).min(*args, **kwargs)


def argmax(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.argmax."""
    return as_tensor(input).argmax(*args, **kwargs)


def argmin(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.argmin."""
    return as_tensor(input).argmin(*args, **kwargs)


def logsumexp(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.logsumexp."""
    return as_tensor(input).logsumexp(*args, **kwargs)


def softmax(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.softmax."""
    return as_tensor(input).softmax(*args, **kwargs)


def log_softmax(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.log_softmax."""
    return as_tensor(input).log_softmax(*args, **kwargs)


def norm(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.norm."""
    return as_tensor(input).norm(*args, **kwargs)


def reshape(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.reshape."""
    return as_tensor(input).reshape(*args, **kwargs)


def flatten(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.flatten."""
    return as_tensor(input).flatten(*args, **kwargs)


def squeeze(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.squeeze."""
    return as_tensor(input).squeeze(*args, **kwargs)


def unsqueeze(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.unsqueeze."""
    return as_tensor(input).unsqueeze(*args, **kwargs)


def transpose(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.transpose."""
    return as_tensor(input).transpose(*args, **kwargs)


def permute(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.permute."""
    return as_tensor(input).permute(*args, **kwargs)


def broadcast_to(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.broadcast_to."""
    return as_tensor(input).broadcast_to(*args, **kwargs)


def split(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.split."""
    return as_tensor(input).split(*args, **kwargs)


def chunk(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.chunk."""
    return as_tensor(input).chunk(*args, **kwargs)


def gather(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.gather."""
    return as_tensor(input).gather(*args, **kwargs)


def take_along_dim(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.take_along_dim."""
    return as_tensor(input).take_along_dim(*args, **kwargs)


def numel(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.numel."""
    return as_tensor(input).numel(*args, **kwargs)


def add(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.add."""
    return as_tensor(input).add(*args, **kwargs)


def sub(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.sub."""
    return as_tensor(input).sub(*args, **kwargs)


def mul(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.mul."""
    return as_tensor(input).mul(*args, **kwargs)


def div(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.div."""
    return as_tensor(input).div(*args, **kwargs)


def neg(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.neg."""
    return as_tensor(input).neg(*args, **kwargs)


def pow(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.pow."""
    return as_tensor(input).pow(*args, **kwargs)


def clip(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.clip."""
    return as_tensor(input).clip(*args, **kwargs)


def clone(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.clone."""
    return as_tensor(input).clone(*args, **kwargs)


def detach(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.detach."""
    return as_tensor(input).detach(*args, **kwargs)


def eq(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.eq."""
    return as_tensor(input).eq(*args, **kwargs)


def ne(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.ne."""
    return as_tensor(input).ne(*args, **kwargs)


def lt(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.lt."""
    return as_tensor(input).lt(*args, **kwargs)


def le(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.le."""
    return as_tensor(input).le(*args, **kwargs)


def gt(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.gt."""
    return as_tensor(input).gt(*args, **kwargs)


def ge(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.ge."""
    return as_tensor(input).ge(*args, **kwargs)


def all(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.all."""
    return as_tensor(input).all(*args, **kwargs)


def any(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.any."""
    return as_tensor(input).any(*args, **kwargs)


def masked_fill(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.masked_fill."""
    return as_tensor(input).masked_fill(*args, **kwargs)


def swapaxes(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.swapaxes."""
    return as_tensor(input).swapaxes(*args, **kwargs)


def fill_(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.fill_."""
    return as_tensor(input).fill_(*args, **kwargs)


def zero_(input: Any, *args: Any, **kwargs: Any) -> Any:
    """The function form of Tensor.zero_."""
    return as_tensor(input).zero_(*args, **kwargs)
