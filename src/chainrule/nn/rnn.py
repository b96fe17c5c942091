"""Recurrent layers: RNN, LSTM and GRU over whole sequences (stacked, bidirectional) and their
one-step cells RNNCell, LSTMCell and GRUCell, with PyTorch's parameters, shapes, gate order
and initialisation. One step of each cell is written here in Tensor ops: the reference. With
the fast path on, the layers run each layer and direction as one primitive of ops/rnn.py.
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

from .. import array, fastpath
from ..arguments import positive_int, resolve_device
from ..factories import zeros
from ..functions import cat, stack
from ..ops import linalg
from ..ops import rnn as rnn_ops
from ..tensor import Tensor, as_tensor
from . import init
from .layers import dropout
from .module import Module, Parameter
from .utils.rnn import PackedSequence

xp = array.xp

GATES = {"RNN": 1, "LSTM": 4, "GRU": 3}  # rows of weight_ih per hidden unit


# -- one step of each cell, in Tensor ops (the reference) --------------------------------
#
# Each takes xw = x @ W_ih^T + b_ih, the input's share of the gates, computed for a whole
# sequence at once by the layers and for one step by the cells.


def rnn_step(xw: Tensor, h: Tensor, w_hh: Tensor, b_hh: Tensor | None, relu: bool) -> Tensor:
    """h' = act(xw + h @ W_hh^T + b_hh), act tanh or relu."""
    pre = xw + linalg.Linear.apply(h, w_hh, b_hh)
    return pre.relu() if relu else pre.tanh()


def lstm_step(
    xw: Tensor,
    h: Tensor,
    c: Tensor,
    w_hh: Tensor,
    b_hh: Tensor | None,
    w_hr: Tensor | None = None,
) -> tuple[Tensor, Tensor]:
    """i, f, g, o = sigmoid, sigmoid, tanh, sigmoid of the four quarters of
    xw + h @ W_hh^T + b_hh; c' = f * c + i * g; h' = o * tanh(c') (then @ W_hr^T with a
    projection)."""
    i, f, g, o = (xw + linalg.Linear.apply(h, w_hh, b_hh)).chunk(4, -1)  # 4 x (N, H)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    h = o.sigmoid() * c.tanh()
    if w_hr is not None:
        h = linalg.Linear.apply(h, w_hr, None)  # (N, proj_size)
    return h, c


def gru_step(xw: Tensor, h: Tensor, w_hh: Tensor, b_hh: Tensor | None) -> Tensor:
    """r, z = sigmoid of the first two thirds of xw + h @ W_hh^T + b_hh;
    n = tanh(xw_n + r * (h @ W_hn^T + b_hn)); h' = (1 - z) * n + z * h."""
    xr, xz, xn = xw.chunk(3, -1)  # 3 x (N, H)
    hr, hz, hn = linalg.Linear.apply(h, w_hh, b_hh).chunk(3, -1)
    r = (xr + hr).sigmoid()
    z = (xz + hz).sigmoid()
    n = (xn + r * hn).tanh()
    return n + z * (h - n)


def run_direction(
    mode: str, x: Tensor, state: tuple[Tensor, ...], weights: list[Any], reverse: bool, relu: bool
) -> tuple[Tensor, tuple[Tensor, ...]]:
    """One layer in one direction over x (L, N, H_in), from state (h0,) or (h0, c0): the
    outputs (L, N, H_out) in time order and the final state. One primitive of ops/rnn.py
    with the fast path on (and no projection); otherwise the cell's step, time after time."""
    w_ih, w_hh, b_ih, b_hh = weights[:4]
    w_hr = weights[4] if len(weights) > 4 else None
    L = x.shape[0]
    if fastpath.enabled() and w_hr is None:
        if mode == "LSTM":
            hc = rnn_ops.LSTMLayer.apply(x, *state, w_ih, w_hh, b_ih, b_hh, reverse=reverse)
            out = hc[:L]  # (L, N, H); hc[L] is c_n
            return out, (out[0 if reverse else L - 1], hc[L])
        if mode == "GRU":
            out = rnn_ops.GRULayer.apply(x, state[0], w_ih, w_hh, b_ih, b_hh, reverse=reverse)
        else:
            out = rnn_ops.RNNLayer.apply(
                x, state[0], w_ih, w_hh, b_ih, b_hh, reverse=reverse, relu=relu
            )
        return out, (out[0 if reverse else L - 1],)
    # The input's share of the gates, (L, N, gates * H), every step at once, with both
    # biases in it (one sum, so each gets the one gradient of the fast path's primitive),
    # except in a GRU, whose b_hn is scaled by r inside the step.
    joined = mode != "GRU"
    xw = linalg.Linear.apply(x, w_ih, rnn_ops._bias(b_ih, b_hh) if joined else b_ih)
    b_step = None if joined else b_hh
    outs: list[Any] = [None] * L
    h = state[0]
    c: Any = state[1] if mode == "LSTM" else None
    for t in range(L - 1, -1, -1) if reverse else range(L):
        if mode == "LSTM":
            h, c = lstm_step(xw[t], h, c, w_hh, b_step, w_hr)
        elif mode == "GRU":
            h = gru_step(xw[t], h, w_hh, b_step)
        else:
            h = rnn_step(xw[t], h, w_hh, b_step, relu)
        outs[t] = h
    return stack(outs), ((h,) if c is None else (h, c))


def run_packed_direction(
    mode: str,
    x: Tensor,
    sizes: list[int],
    state: tuple[Tensor, ...],
    weights: list[Any],
    reverse: bool,
    relu: bool,
) -> tuple[Tensor, tuple[Tensor, ...]]:
    """One layer in one direction over packed steps: x (sum of sizes, H_in) holds step t of
    the first sizes[t] sequences (sizes not increasing), state (h0,) or (h0, c0) each
    (sizes[0], H). Each stretch of steps with one batch size runs as run_direction over the
    sequences it holds: forward, a sequence's state stops at its own last step; in reverse,
    a sequence starts from its h0 at its own last step. Returns the outputs (sum of sizes,
    H_out) in x's order and the final state of every sequence, (sizes[0], H) each."""
    spans = []  # (first row of x, steps, batch) of each stretch
    start = t = 0
    while t < len(sizes):
        end = t
        while end < len(sizes) and sizes[end] == sizes[t]:
            end += 1
        spans.append((start, end - t, sizes[t]))
        start, t = start + (end - t) * sizes[t], end
    outs: list[Any] = [None] * len(spans)
    finished: list[tuple[Tensor, ...]] = []  # forward: the rows each stretch ends, last first
    carry = state
    for i in reversed(range(len(spans))) if reverse else range(len(spans)):
        start, steps, b = spans[i]
        if not reverse:
            begin = tuple(s[:b] for s in carry)
        elif i == len(spans) - 1:
            begin = tuple(s[:b] for s in state)
        else:  # the sequences that end within this stretch join, from their h0
            have = carry[0].shape[0]
            begin = tuple(cat([c, s[have:b]]) for c, s in zip(carry, state, strict=True))
        seq = x[start : start + steps * b].reshape(steps, b, x.shape[1])  # (steps, b, H_in)
        out, carry = run_direction(mode, seq, begin, weights, reverse, relu)
        outs[i] = out.reshape(steps * b, out.shape[2])  # (steps * b, H_out)
        if not reverse:
            after = spans[i + 1][2] if i + 1 < len(spans) else 0
            finished.insert(0, tuple(c[after:] for c in carry))
    if not reverse:
        carry = tuple(cat(list(rows)) for rows in zip(*finished, strict=True))
    return cat(outs), carry


# -- the layers ----------------------------------------------------------------------------


def _dtype(dtype: Any, device: Any, layer: str) -> tuple[Any, Any]:
    """A layer's dtype, and an empty array on its device to make its parameters beside."""
    on = array.like(resolve_device(device, layer))
    return array.as_dtype(dtype) or array.get_default_dtype(), on


def _check_dtype(x: Tensor, weight: Tensor, layer: str) -> None:
    if x.dtype != weight.dtype:
        raise TypeError(
            f"{layer}: input and parameters must have one dtype; got input {x.dtype} and "
            f"parameters {weight.dtype}"
        )


def _shape_error(layer: str, what: str, expected: tuple[int, ...], got: Any) -> ValueError:
    return ValueError(f"{layer}: expected {what} of shape {expected}; got {tuple(got)}")


class RNNBase(Module):
    """What RNN, LSTM and GRU share: the parameters of each layer and direction, their
    initialisation, the checks of input and state, and the walk over layers and directions.

    Parameters, per layer k and direction (``_reverse`` for the backward one), as PyTorch's:
    weight_ih_lk (gates * hidden_size, input size of layer k), weight_hh_lk
    (gates * hidden_size, hidden state size), bias_ih_lk and bias_hh_lk (gates * hidden_size),
    and for an LSTM with proj_size > 0, weight_hr_lk (proj_size, hidden_size); all start
    uniform in +-1/sqrt(hidden_size).
    """

    def __init__(
        self,
        mode: str,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        layer = mode
        self.mode = mode
        self.input_size = positive_int(input_size, "input_size", layer, zero_ok=True)
        self.hidden_size = positive_int(hidden_size, "hidden_size", layer)
        self.num_layers = positive_int(num_layers, "num_layers", layer)
        self.proj_size = positive_int(proj_size, "proj_size", layer, zero_ok=True)
        if self.proj_size and mode != "LSTM":
            raise ValueError(f"{layer}: proj_size is for LSTM only; got proj_size={proj_size}")
        if self.proj_size >= self.hidden_size:
            raise ValueError(
                f"{layer}: proj_size must be smaller than hidden_size; got proj_size="
                f"{proj_size} and hidden_size={hidden_size}"
            )
        if (
            not isinstance(dropout, numbers.Number)
            or isinstance(dropout, bool)
            or not 0 <= dropout <= 1  # type: ignore[operator]
        ):
            raise ValueError(
                f"{layer}: dropout must be a number in [0, 1] (the probability of an element "
                f"being zeroed); got {dropout!r}"
            )
        if dropout > 0 and num_layers == 1:
            warnings.warn(
                f"{layer}: dropout applies between layers, after all but the last; with "
                f"num_layers=1 it does nothing; got dropout={dropout} and num_layers=1",
                stacklevel=3,
            )
        self.bias, self.batch_first = bool(bias), bool(batch_first)
        self.dropout, self.bidirectional = float(dropout), bool(bidirectional)
        dtype, on = _dtype(dtype, device, layer)
        rows = GATES[mode] * self.hidden_size
        out_size = self.proj_size or self.hidden_size
        directions = 2 if self.bidirectional else 1
        for k in range(self.num_layers):
            in_size = self.input_size if k == 0 else out_size * directions
            for d in range(directions):
                suffix = f"_l{k}" + ("_reverse" if d else "")
                shapes: dict[str, tuple[int, ...]] = {
                    "weight_ih": (rows, in_size),
                    "weight_hh": (rows, out_size),
                }
                if self.bias:
                    shapes |= {"bias_ih": (rows,), "bias_hh": (rows,)}
                if self.proj_size:
                    shapes["weight_hr"] = (self.proj_size, self.hidden_size)
                for name, shape in shapes.items():
                    setattr(self, name + suffix, Parameter(xp.empty(shape, dtype=dtype, like=on)))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1.0 / math.sqrt(self.hidden_size)
        for p in self.parameters():
            init.uniform_(p, -bound, bound)

    def flatten_parameters(self) -> None:
        """PyTorch packs the weights into one buffer for cuDNN here and does nothing on the
        CPU, as here: each layer reads its parameters as they are."""

    def _weights(self, k: int, d: int) -> list[Any]:
        """weight_ih, weight_hh, bias_ih, bias_hh (None without bias) and, with a
        projection, weight_hr of layer k, direction d."""
        suffix = f"_l{k}" + ("_reverse" if d else "")
        names = ["weight_ih", "weight_hh", "bias_ih", "bias_hh"]
        if self.proj_size:
            names.append("weight_hr")
        return [getattr(self, n + suffix, None) for n in names]

    def forward(self, input: Tensor | PackedSequence, hx: Any = None) -> tuple[Any, Any]:
        """input (L, N, H_in), or (N, L, H_in) with batch_first, or unbatched (L, H_in), or a
        PackedSequence of N sequences; hx the initial state (h_0, or (h_0, c_0) for an LSTM),
        each (num_layers * num_directions, N, H) or unbatched (num_layers * num_directions,
        H), zeros when None. Returns (output, h_n), or (output, (h_n, c_n)) for an LSTM:
        output (L, N, num_directions * H_out) (batch first as the input, a PackedSequence for
        one), h_n and c_n of hx's shape."""
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        layer = self.mode
        x = as_tensor(input)
        if x.ndim not in (2, 3):
            raise ValueError(
                f"{layer}: expected input of 2 dims (L, H_in; unbatched) or 3 dims (batched); "
                f"got shape {x.shape}"
            )
        if x.shape[-1] != self.input_size:
            raise ValueError(
                f"{layer}: expected input with last dim {self.input_size} (input_size); got "
                f"shape {x.shape}"
            )
        if x.shape[1 if x.ndim == 3 and self.batch_first else 0] == 0:
            raise ValueError(
                f"{layer}: expected a sequence of at least one step; got input of shape {x.shape}"
            )
        _check_dtype(x, self._weights(0, 0)[0], layer)
        batched = x.ndim == 3
        if not batched:
            x = x.unsqueeze(1)  # (L, 1, H_in)
        elif self.batch_first:
            x = x.transpose(0, 1)  # (N, L, H_in) -> (L, N, H_in)
        states = self._initial_states(hx, x, x.shape[1], batched)
        relu = getattr(self, "nonlinearity", "tanh") == "relu"

        def run(x: Tensor, state: tuple[Tensor, ...], weights: list[Any], reverse: bool) -> Any:
            return run_direction(self.mode, x, state, weights, reverse, relu)

        x, finals = self._walk(x, states, run)  # x (L, N, D * H_out)
        if not batched:
            output = x.squeeze(1)  # (L, D * H_out)
            finals = [f.squeeze(1) for f in finals]
        else:
            output = x.transpose(0, 1) if self.batch_first else x
        return output, (finals[0] if self.mode != "LSTM" else (finals[0], finals[1]))

    def _walk(self, x: Tensor, states: list[Tensor], run: Any) -> tuple[Tensor, list[Tensor]]:
        """Every layer and direction over x, each by run(x, state, weights, reverse) ->
        (output, final state), the directions' outputs side by side along the last dim (and
        through dropout in training, between layers) the next layer's input. Returns the last
        layer's output and the final states, (num_layers * D, N, H) each."""
        directions = 2 if self.bidirectional else 1
        finals: list[tuple[Tensor, ...]] = []
        for k in range(self.num_layers):
            outs = []
            for d in range(directions):
                state = tuple(s[k * directions + d] for s in states)
                out, final = run(x, state, self._weights(k, d), d == 1)
                outs.append(out)
                finals.append(final)
            x = outs[0] if directions == 1 else cat(outs, -1)  # (..., D * H_out)
            if self.dropout and self.training and k < self.num_layers - 1:
                x = dropout(x, self.dropout, True)
        return x, [stack(list(f)) for f in zip(*finals, strict=True)]

    def _forward_packed(self, packed: PackedSequence, hx: Any) -> tuple[PackedSequence, Any]:
        """forward over a PackedSequence: each sequence runs its own steps (run_packed_direction
        per layer and direction); hx and h_n (and c_n) in the order of the input's sequences,
        the output packed as the input."""
        layer = self.mode
        x, sizes = packed.data, packed.batch_sizes.tolist()
        if x.ndim != 2 or x.shape[-1] != self.input_size:
            raise ValueError(
                f"{layer}: expected packed data of shape (sum of lengths, {self.input_size}) "
                f"(input_size {self.input_size}); got shape {x.shape}"
            )
        _check_dtype(x, self._weights(0, 0)[0], layer)
        states = self._initial_states(hx, x, sizes[0], True)
        if packed.sorted_indices is not None:  # the states in the packed (sorted) order
            states = [s.index_select(1, packed.sorted_indices) for s in states]
        relu = getattr(self, "nonlinearity", "tanh") == "relu"

        def run(x: Tensor, state: tuple[Tensor, ...], weights: list[Any], reverse: bool) -> Any:
            return run_packed_direction(self.mode, x, sizes, state, weights, reverse, relu)

        x, finals = self._walk(x, states, run)  # x (sum of lengths, D * H_out)
        output = PackedSequence(
            x, packed.batch_sizes, packed.sorted_indices, packed.unsorted_indices
        )
        if packed.unsorted_indices is not None:  # back in the input's order
            finals = [f.index_select(1, packed.unsorted_indices) for f in finals]
        return output, (finals[0] if self.mode != "LSTM" else (finals[0], finals[1]))

    def _initial_states(self, hx: Any, x: Tensor, n: int, batched: bool) -> list[Tensor]:
        """h_0 (and c_0) as (num_layers * D, n, H) tensors of x's dtype and device, zeros
        where hx is None; each state given is checked against its expected shape."""
        layer = self.mode
        rows = self.num_layers * (2 if self.bidirectional else 1)
        sizes = [self.proj_size or self.hidden_size]
        if self.mode == "LSTM":
            sizes.append(self.hidden_size)
        if hx is None:
            return [zeros(rows, n, s, dtype=x.dtype, device=x.device) for s in sizes]
        given = list(hx) if self.mode == "LSTM" else [hx]
        if self.mode == "LSTM" and (not isinstance(hx, (tuple, list)) or len(given) != 2):
            raise TypeError(f"{layer}: expected hx as a tuple (h_0, c_0); got {type(hx).__name__}")
        names = ["hx[0] (h_0)", "hx[1] (c_0)"] if self.mode == "LSTM" else ["hx"]
        states = []
        for name, s, size in zip(names, given, sizes, strict=True):
            s = as_tensor(s)
            want = (rows, n, size) if batched else (rows, size)
            if s.shape != want:
                raise _shape_error(layer, name, want, s.shape)
            if s.dtype != x.dtype:
                raise TypeError(
                    f"{layer}: {name} and input must have one dtype; got {s.dtype} and {x.dtype}"
                )
            states.append(s if batched else s.unsqueeze(1))  # (rows, N, H)
        return states

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        nonlinearity = getattr(self, "nonlinearity", "tanh")
        if nonlinearity != "tanh":
            s += f", nonlinearity={nonlinearity!r}"
        if not self.bias:
            s += ", bias=False"
        if self.batch_first:
            s += ", batch_first=True"
        if self.dropout:
            s += f", dropout={self.dropout}"
        if self.bidirectional:
            s += ", bidirectional=True"
        return s


class RNN(RNNBase):
    """An Elman RNN: h_t = act(x_t @ W_ih^T + b_ih + h_{t-1} @ W_hh^T + b_hh), act tanh or
    relu, stacked num_layers deep (each layer's outputs are the next one's inputs, through
    dropout in training) and optionally bidirectional."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        nonlinearity: str = "tanh",
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(
                f"RNN: nonlinearity must be 'tanh' or 'relu'; got nonlinearity={nonlinearity!r}"
            )
        self.nonlinearity = nonlinearity
        super().__init__(
            "RNN", input_size, hidden_size, num_layers, bias, batch_first, dropout,
            bidirectional, device=device, dtype=dtype,
        )  # fmt: skip


class LSTM(RNNBase):
    """A long short-term memory layer: per step, gates i, f, g, o (sigmoid, sigmoid, tanh,
    sigmoid) of x_t @ W_ih^T + b_ih + h_{t-1} @ W_hh^T + b_hh, in that order along the rows
    of the weights; c_t = f * c_{t-1} + i * g, h_t = o * tanh(c_t) (times W_hr^T with
    proj_size > 0). Stacked and bidirectional as RNN."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(
            "LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout,
            bidirectional, proj_size, device, dtype,
        )  # fmt: skip


class GRU(RNNBase):
    """A gated recurrent unit layer: per step, r, z = sigmoid of x_t @ W_ir^T + b_ir +
    h @ W_hr^T + b_hr (and likewise z), n = tanh(x_t @ W_in^T + b_in + r * (h @ W_hn^T +
    b_hn)), h_t = (1 - z) * n + z * h_{t-1}; gates in the order r, z, n along the rows of the
    weights. Stacked and bidirectional as RNN."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(
            "GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout,
            bidirectional, device=device, dtype=dtype,
        )  # fmt: skip


# -- the cells -----------------------------------------------------------------------------


class RNNCellBase(Module):
    """What the cells share: weight_ih (gates * hidden_size, input_size), weight_hh
    (gates * hidden_size, hidden_size), bias_ih and bias_hh (gates * hidden_size), all
    uniform in +-1/sqrt(hidden_size); the checks of input (N, input_size) or unbatched
    (input_size,) and of the state."""

    def __init__(
        self, mode: str, input_size: int, hidden_size: int, bias: bool, device: Any, dtype: Any
    ) -> None:
        super().__init__()
        layer = mode + "Cell"
        self.mode = mode
        self.input_size = positive_int(input_size, "input_size", layer, zero_ok=True)
        self.hidden_size = positive_int(hidden_size, "hidden_size", layer)
        self.bias = bool(bias)
        dtype, on = _dtype(dtype, device, layer)
        rows = GATES[mode] * self.hidden_size
        self.weight_ih = Parameter(xp.empty((rows, self.input_size), dtype=dtype, like=on))
        self.weight_hh = Parameter(xp.empty((rows, self.hidden_size), dtype=dtype, like=on))
        self.bias_ih = Parameter(xp.empty(rows, dtype=dtype, like=on)) if bias else None
        self.bias_hh = Parameter(xp.empty(rows, dtype=dtype, like=on)) if bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1.0 / math.sqrt(self.hidden_size)
        for p in self.parameters():
            init.uniform_(p, -bound, bound)

    def _prepare(self, input: Any, hx: Any) -> tuple[Tensor, list[Tensor], bool]:
        """The input as (N, input_size), the states as (N, hidden_size) (zeros where hx is
        None), and whether the input was batched."""
        layer = self.mode + "Cell"
        x = as_tensor(input)
        if x.ndim not in (1, 2) or x.shape[-1] != self.input_size:
            raise ValueError(
                f"{layer}: expected input of shape (N, {self.input_size}) or "
                f"({self.input_size},) (input_size {self.input_size}); got {x.shape}"
            )
        _check_dtype(x, self.weight_ih, layer)
        batched = x.ndim == 2
        if not batched:
            x = x.unsqueeze(0)  # (1, input_size)
        n = x.shape[0]
        count = 2 if self.mode == "LSTM" else 1
        if hx is None:
            return x, [zeros(n, self.hidden_size, dtype=x.dtype, device=x.device)] * count, batched
        if self.mode == "LSTM" and (not isinstance(hx, (tuple, list)) or len(hx) != 2):
            raise TypeError(f"{layer}: expected hx as a tuple (h, c); got {type(hx).__name__}")
        given = list(hx) if self.mode == "LSTM" else [hx]
        names = ["hx[0] (h)", "hx[1] (c)"] if self.mode == "LSTM" else ["hx"]
        want = (n, self.hidden_size) if batched else (self.hidden_size,)
        states = []
        for name, s in zip(names, given, strict=True):
            s = as_tensor(s)
            if s.shape != want:
                raise _shape_error(layer, name, want, s.shape)
            if s.dtype != x.dtype:
                raise TypeError(
                    f"{layer}: {name} and input must have one dtype; got {s.dtype} and {x.dtype}"
                )
            states.append(s if batched else s.unsqueeze(0))
        return x, states, batched

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if not self.bias:
            s += ", bias=False"
        nonlinearity = getattr(self, "nonlinearity", "tanh")
        if nonlinearity != "tanh":
            s += f", nonlinearity={nonlinearity!r}"
        return s


class RNNCell(RNNCellBase):
    """One step of RNN: h' = act(x @ W_ih^T + b_ih + h @ W_hh^T + b_hh), act tanh or relu."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        nonlinearity: str = "tanh",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(
                f"RNNCell: nonlinearity must be 'tanh' or 'relu'; got nonlinearity={nonlinearity!r}"
            )
        self.nonlinearity = nonlinearity
        super().__init__("RNN", input_size, hidden_size, bias, device, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        """input (N, input_size) or (input_size,); hx of shape (N, hidden_size) or
        (hidden_size,), zeros when None. Returns h' of hx's shape."""
        x, (h,), batched = self._prepare(input, hx)
        xw = linalg.Linear.apply(x, self.weight_ih, self.bias_ih)
        h = rnn_step(xw, h, self.weight_hh, self.bias_hh, self.nonlinearity == "relu")
        return h if batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    """One step of LSTM: the gates i, f, g, o, then c' = f * c + i * g, h' = o * tanh(c')."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__("LSTM", input_size, hidden_size, bias, device, dtype)

    def forward(self, input: Tensor, hx: Any = None) -> tuple[Tensor, Tensor]:
        """input (N, input_size) or (input_size,); hx a tuple (h, c), each (N, hidden_size)
        or (hidden_size,), zeros when None. Returns (h', c')."""
        x, (h, c), batched = self._prepare(input, hx)
        xw = linalg.Linear.apply(x, self.weight_ih, self.bias_ih)
        h, c = lstm_step(xw, h, c, self.weight_hh, self.bias_hh)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One step of GRU: r, z, n, then h' = (1 - z) * n + z * h."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__("GRU", input_size, hidden_size, bias, device, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        """input (N, input_size) or (input_size,); hx (N, hidden_size) or (hidden_size,),
        zeros when None. Returns h' of hx's shape."""
        x, (h,), batched = self._prepare(input, hx)
        xw = linalg.Linear.apply(x, self.weight_ih, self.bias_ih)
        h = gru_step(xw, h, self.weight_hh, self.bias_hh)
        return h if batched else h.squeeze(0)
