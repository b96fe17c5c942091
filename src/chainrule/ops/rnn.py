"""Recurrent layers as primitives: one layer in one direction over a whole sequence, its
forward a loop over time on arrays and its backward the loop back through time (BPTT).

The layers and cells themselves, their checks and the reference step of each cell in Tensor
ops, are nn/rnn.py's; the layers run these primitives where the fast path is on.

Shapes: x (L, N, I) in time order, h0 and c0 (N, H), w_ih (G * H, I), w_hh (G * H, H), b_ih
and b_hh (G * H,) or None, with G gates (1, 4, 3). A layer with ``reverse`` runs from the
last step to the first; its output stays in time order, so its final state is at step 0.

A primitive rather than the cell's step in Tensor ops, time after time: one node per layer
instead of about a dozen per step, the input's share of the gates for every step in one
product before the loop, the weights' gradients in one product each after it, and only the
gate activations kept between the passes.

Each ``backward`` is the rule in Tensor ops, so recorded backward passes (create_graph)
differentiate it: the activations are the saved ones, or, when the backward pass is itself
recorded, recomputed from the inputs and the output in Tensor ops, so that second-order
gradients see how they depend on the inputs. ``backward_arrays`` is the same rule on arrays,
with the per-step factors of the chain rule computed for every step at once before the loop.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import fastpath
from ..array import errstate, ndarray, xp
from ..autograd.mode import state
from ..autograd.primitive import Function, arrays_of, tensor_type
from .linalg import Linear
from .movement import Cat

if TYPE_CHECKING:
    from ..autograd.primitive import Grads
    from ..tensor import Tensor

# -- shared by the three layers ------------------------------------------------------------


def _steps(length: int, reverse: bool) -> range:
    """The time steps in the order forward visits them."""
    return range(length - 1, -1, -1) if reverse else range(length)


def _input_part(x: Any, w_ih: Any, bias: Any) -> Any:
    """x @ W_ih^T + bias for every step at once, in a fresh array: (L, N, I) -> (L, N, G*H)."""
    L, N, I = x.shape
    xw = xp.matmul(x.reshape(L * N, I), w_ih.T).reshape(L, N, len(w_ih))
    if bias is not None:
        xw += bias
    return xw


def _recurrent(w_hh: Any, n: int) -> tuple[Any, Any]:
    """W_hh^T, a row-major copy with the fast path on (the transposed view with it off), and
    a buffer for h @ W_hh^T, (n, G*H)."""
    w_hh_t = w_hh.T.copy(order="C") if fastpath.enabled() else w_hh.T
    return w_hh_t, xp.empty((n, w_hh.shape[0]), w_hh.dtype, like=w_hh)


def _bias(b_ih: Any, b_hh: Any) -> Any:
    """The sum of the biases that are there (None for none)."""
    if b_ih is None or b_hh is None:
        return b_hh if b_ih is None else b_ih
    return b_ih + b_hh


def _sigmoid_(a: Any) -> Any:
    """a = 1 / (1 + exp(-a)), in place (exp overflows to inf for a << 0, giving 0)."""
    xp.negative(a, out=a)
    xp.exp(a, out=a)
    a += 1.0
    return xp.reciprocal(a, out=a)


def _previous(hs: Any, h0: Any, reverse: bool) -> Any:
    """The state each step started from, (L, N, H): h0 at the first step visited, then the
    one before's output. Arrays or Tensors."""
    if isinstance(hs, ndarray):
        parts = [hs[1:], h0[None]] if reverse else [h0[None], hs[:-1]]
        return xp.concatenate(parts)
    parts = [hs[1:], h0.unsqueeze(0)] if reverse else [h0.unsqueeze(0), hs[:-1]]
    return Cat.apply(*parts, dim=0)


def _stack(ts: list[Any]) -> Any:
    """Tensors of one shape stacked along a new dim 0."""
    return Cat.apply(*[t.unsqueeze(0) for t in ts], dim=0)


def _saved(*arrays: Any) -> list[Any]:
    """Saved arrays as Tensors, for the rule in Tensor ops (constants: no graph)."""
    make = tensor_type()._make
    return [make(a) for a in arrays]


def _param_grads(
    needs: tuple[bool, ...], d_ih: Any, d_hh: Any, x: Any, prev: Any, w_ih: Any
) -> tuple[Any, ...]:
    """The gradients of x, w_ih, w_hh, b_ih and b_hh (None where not needed) from d_ih and
    d_hh (L, N, G*H), the gradients of the gates' input and hidden shares at every step, and
    prev (L, N, H), the state each step read. Arrays or Tensors alike: one product each."""
    need_x, need_wih, need_whh, need_bih, need_bhh = needs
    L, N, I = x.shape
    rows, G, H = L * N, d_ih.shape[-1], prev.shape[-1]
    di, dh = d_ih.reshape(rows, G), d_hh.reshape(rows, G)
    gx = (di @ w_ih).reshape(L, N, I) if need_x else None
    gw_ih = di.T @ x.reshape(rows, I) if need_wih else None  # (G, I)
    gw_hh = dh.T @ prev.reshape(rows, H) if need_whh else None  # (G, H)
    gb_ih = di.sum(axis=0) if need_bih else None
    if need_bhh:  # one sum where both biases get the same gradient (the engine copies it)
        gb_hh = gb_ih if d_hh is d_ih and gb_ih is not None else dh.sum(axis=0)
    return gx, gw_ih, gw_hh, gb_ih, gb_hh if need_bhh else None


# -- the layers ----------------------------------------------------------------------------


class RNNLayer(Function):
    """out[t] = act(x[t] @ W_ih^T + b_ih + out[t-1] @ W_hh^T + b_hh), out[-1] = h0, act tanh
    or relu (relu'(0) = 0).

    Backward through time, d[t] the gradient of step t's pre-activation:
    d[t] = (grad[t] + d[t+1] @ W_hh) * act'(out[t]); grad_h0 = d[first] @ W_hh;
    grad_x[t] = d[t] @ W_ih; grad_W_ih = sum_t d[t]^T x[t]; grad_W_hh = sum_t
    d[t]^T out[t-1]; grad_b_ih = grad_b_hh = sum_t d[t] summed over the batch.
    """

    rule = (
        "d[t] = (grad[t] + d[t+1] @ W_hh) * act'(out[t]); grad_x[t] = d[t] @ W_ih, "
        "grad_h0 = d[first] @ W_hh, grad_W_ih = sum d[t].T @ x[t], "
        "grad_W_hh = sum d[t].T @ out[t-1], grad_b = sum d[t]"
    )
    saves_out = True

    def forward(
        self,
        x: Any,
        h0: Any,
        w_ih: Any,
        w_hh: Any,
        b_ih: Any = None,
        b_hh: Any = None,
        *,
        reverse: bool,
        relu: bool,
    ) -> Any:
        self.reverse, self.relu = reverse, relu
        out = _input_part(x, w_ih, _bias(b_ih, b_hh))  # each step's pre-activation, then h
        w_hh_t, hw = _recurrent(w_hh, len(h0))
        h = h0
        for t in _steps(len(x), reverse):
            a = out[t]  # (N, H)
            a += xp.matmul(h, w_hh_t, out=hw)
            if relu:
                xp.maximum(a, 0, out=a)
            else:
                xp.tanh(a, out=a)
            h = a
        return out

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        x, h0, w_ih, w_hh, _, _ = self.inputs
        # act' from the output: 1 - out^2 for tanh (as (1 - out)(1 + out), tanh's), the
        # step (a constant) for relu
        slope = (out._array > 0).astype(out.dtype) if self.relu else (1.0 - out) * (1.0 + out)
        d: list[Any] = [None] * len(out)
        dh = None
        for t in reversed(_steps(len(out), self.reverse)):
            g = grad[t] if dh is None else grad[t] + dh
            d[t] = g * slope[t]
            dh = d[t] @ w_hh
        return self._grads(_stack(d), dh, x, out, h0, w_ih)

    def backward_arrays(self, grad: Any, out: Any) -> tuple[Any, ...]:
        x, h0, w_ih, w_hh, _, _ = arrays_of(self.inputs)
        d = (out > 0).astype(out.dtype) if self.relu else (1.0 - out) * (1.0 + out)  # act
        dh = None
        for t in reversed(_steps(len(out), self.reverse)):
            g = grad[t] if dh is None else grad[t] + dh
            d[t] *= g
            dh = xp.matmul(d[t], w_hh)
        return self._grads(d, dh, x, out, h0, w_ih)

    def _grads(self, d: Any, dh0: Any, x: Any, out: Any, h0: Any, w_ih: Any) -> Any:
        need_x, need_h0, *needs = self.needs_input_grad
        prev = _previous(out, h0, self.reverse)
        gx, gw_ih, gw_hh, gb_ih, gb_hh = _param_grads((need_x, *needs), d, d, x, prev, w_ih)
        return gx, dh0 if need_h0 else None, gw_ih, gw_hh, gb_ih, gb_hh


class LSTMLayer(Function):
    """With gates i, f, g, o = sigmoid, sigmoid, tanh, sigmoid of the four quarters of
    x[t] @ W_ih^T + b_ih + h[t-1] @ W_hh^T + b_hh: c[t] = f * c[t-1] + i * g,
    h[t] = o * tanh(c[t]); h[-1], c[-1] = h0, c0. out (L + 1, N, H) holds h[0..L-1] and,
    last, c_n (the final cell state: c[L-1], or c[0] in reverse).

    Backward through time, with dh[t] = grad[t] + (the gates' gradient at t+1) @ W_hh and
    dc[t] = dc[t+1] * f[t+1] + dh[t] * o * (1 - tanh(c[t])^2) (dc after the last step is
    c_n's gradient): the gates' gradients before their activations are
    di = dc * g * i(1-i), df = dc * c[t-1] * f(1-f), dg = dc * i * (1-g^2),
    do = dh * tanh(c) * o(1-o); the weights', x's and the biases' gradients follow from them
    as for RNNLayer; grad_h0 = (gates' gradient at the first step) @ W_hh,
    grad_c0 = dc[first] * f[first].
    """

    rule = (
        "dc[t] = dc[t+1] * f[t+1] + dh[t] * o * (1 - tanh(c)^2); di = dc * g * i(1-i), "
        "df = dc * c[t-1] * f(1-f), dg = dc * i * (1-g^2), do = dh * tanh(c) * o(1-o); "
        "dh[t-1] = grad[t-1] + d(gates) @ W_hh; grad_W_ih = sum d(gates).T @ x[t], "
        "grad_W_hh = sum d(gates).T @ h[t-1], grad_x[t] = d(gates) @ W_ih"
    )
    saves_out = True

    def forward(
        self,
        x: Any,
        h0: Any,
        c0: Any,
        w_ih: Any,
        w_hh: Any,
        b_ih: Any = None,
        b_hh: Any = None,
        *,
        reverse: bool,
    ) -> Any:
        self.reverse = reverse
        L, N, H = len(x), h0.shape[0], h0.shape[1]
        gates = _input_part(x, w_ih, _bias(b_ih, b_hh))  # (L, N, 4H), then activations
        # All four activations in one tanh: sigmoid(a) = 0.5 + 0.5 * tanh(a / 2), with the
        # sigmoid gates' pre-activations halved through their rows of the weights and
        # biases (exactly: a power of two). Five operations on a step's gates instead of ten.
        half = xp.ones((4, 1), gates.dtype, like=gates)  # i, f, g, o
        half[[0, 1, 3]] = 0.5
        shift = 1.0 - half  # 0.5 for the sigmoids, 0 for g
        gates.reshape(L, N, 4, H)[...] *= half
        if fastpath.enabled():  # row-major, as _recurrent's
            w_hh_t = xp.empty((H, 4 * H), gates.dtype, like=gates)
            xp.multiply(w_hh.T, half.repeat(H), out=w_hh_t)
        else:
            w_hh_t = w_hh.T * half.repeat(H)
        hw = xp.empty((N, 4 * H), gates.dtype, like=gates)
        out = xp.empty((L + 1, N, H), dtype=gates.dtype, like=gates)
        cs = xp.empty((L, N, H), gates.dtype, like=gates)
        tanh_cs = xp.empty((L, N, H), gates.dtype, like=gates)
        h, c = h0, c0
        for t in _steps(L, reverse):
            a = gates[t]  # (N, 4H): i, f, g, o, the sigmoids' halved
            a += xp.matmul(h, w_hh_t, out=hw)
            xp.tanh(a, out=a)
            a4 = a.reshape(N, 4, H)
            a4 *= half
            a4 += shift
            c_new = cs[t]
            xp.multiply(a[:, H : 2 * H], c, out=c_new)  # f * c
            c_new += a[:, :H] * a[:, 2 * H : 3 * H]  # + i * g
            xp.tanh(c_new, out=tanh_cs[t])
            xp.multiply(a[:, 3 * H :], tanh_cs[t], out=out[t])  # o * tanh(c)
            h, c = out[t], c_new
        out[L] = c
        self.gates, self.cs, self.tanh_cs = gates, cs, tanh_cs
        return out

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        x, h0, c0, w_ih, w_hh, b_ih, b_hh = self.inputs
        L, H = len(x), h0.shape[-1]
        hs = out[:L]
        if state.grad_enabled:  # recorded: the activations as functions of the inputs
            gates = Linear.apply(x, w_ih, b_ih) + Linear.apply(
                _previous(hs, h0, self.reverse), w_hh, b_hh
            )  # (L, N, 4H)
            i, f = gates[..., :H].sigmoid(), gates[..., H : 2 * H].sigmoid()
            g, o = gates[..., 2 * H : 3 * H].tanh(), gates[..., 3 * H :].sigmoid()
            cs: list[Any] = [None] * L
            c = c0
            for t in _steps(L, self.reverse):
                c = cs[t] = f[t] * c + i[t] * g[t]
            tanh_c = _stack(cs).tanh()
            c_prev = _previous(_stack(cs), c0, self.reverse)
        else:
            gates, tanh_c, c_prev = _saved(
                self.gates, self.tanh_cs, _previous(self.cs, c0._array, self.reverse)
            )
            i, f = gates[..., :H], gates[..., H : 2 * H]
            g, o = gates[..., 2 * H : 3 * H], gates[..., 3 * H :]
        d: list[Any] = [None] * L
        dh, dc = None, grad[L]
        for t in reversed(_steps(L, self.reverse)):
            dh = grad[t] if dh is None else grad[t] + dh
            dc = dc + dh * o[t] * (1.0 - tanh_c[t] * tanh_c[t])
            d[t] = Cat.apply(
                dc * g[t] * i[t] * (1.0 - i[t]),
                dc * c_prev[t] * f[t] * (1.0 - f[t]),
                dc * i[t] * (1.0 - g[t] * g[t]),
                dh * tanh_c[t] * o[t] * (1.0 - o[t]),
                dim=1,
            )  # (N, 4H)
            dh = d[t] @ w_hh
            dc = dc * f[t]
        return self._grads(_stack(d), dh, dc, x, hs, h0, w_ih)

    def backward_arrays(self, grad: Any, out: Any) -> tuple[Any, ...]:
        x, h0, c0, w_ih, w_hh, _, _ = arrays_of(self.inputs)
        L, N, H = len(x), h0.shape[0], h0.shape[1]
        gates, tanh_c = self.gates, self.tanh_cs
        i, f = gates[..., :H], gates[..., H : 2 * H]
        g, o = gates[..., 2 * H : 3 * H], gates[..., 3 * H :]
        # What multiplies dc (the first three quarters) or dh (the last) in each gate's
        # gradient, for every step at once, in place in one buffer (no temporaries): then a
        # step of the loop is four operations.
        by = xp.empty_like(gates)
        for q, (act, partner) in enumerate(((i, g), (f, None), (g, i), (o, tanh_c))):
            b = by[..., q * H : (q + 1) * H]
            if q == 2:  # tanh's derivative: 1 - g^2
                xp.multiply(g, g, out=b)
                xp.subtract(1.0, b, out=b)
            else:  # sigmoid's: s (1 - s)
                xp.subtract(1.0, act, out=b)
                b *= act
            b *= _previous(self.cs, c0, self.reverse) if partner is None else partner
        dc_by_dh = tanh_c * tanh_c  # o (1 - tanh(c)^2), (L, N, H)
        xp.subtract(1.0, dc_by_dh, out=dc_by_dh)
        dc_by_dh *= o
        d = xp.empty_like(gates)
        dh, dc = None, grad[L]
        for t in reversed(_steps(L, self.reverse)):
            dh = grad[t] if dh is None else grad[t] + dh
            dc = dc + dh * dc_by_dh[t]
            dt = d[t].reshape(N, 4, H)
            xp.multiply(by[t].reshape(N, 4, H)[:, :3], dc[:, None, :], out=dt[:, :3])
            xp.multiply(by[t, :, 3 * H :], dh, out=d[t, :, 3 * H :])
            dh = xp.matmul(d[t], w_hh)
            dc = dc * f[t]
        return self._grads(d, dh, dc, x, out[:L], h0, w_ih)

    def _grads(self, d: Any, dh0: Any, dc0: Any, x: Any, hs: Any, h0: Any, w_ih: Any) -> Any:
        need_x, need_h0, need_c0, *needs = self.needs_input_grad
        prev = _previous(hs, h0, self.reverse)
        gx, gw_ih, gw_hh, gb_ih, gb_hh = _param_grads((need_x, *needs), d, d, x, prev, w_ih)
        h0_grad, c0_grad = dh0 if need_h0 else None, dc0 if need_c0 else None
        return gx, h0_grad, c0_grad, gw_ih, gw_hh, gb_ih, gb_hh


class GRULayer(Function):
    """With r, z = sigmoid of the first two thirds of x[t] @ W_ih^T + b_ih +
    h[t-1] @ W_hh^T + b_hh, hn = the last third of h[t-1] @ W_hh^T + b_hh and
    n = tanh(the last third of x[t] @ W_ih^T + b_ih + r * hn):
    h[t] = (1 - z) * n + z * h[t-1]; h[-1] = h0.

    Backward through time, with dh[t] = grad[t] + dh[t+1] carried back: the gradients before
    the activations are dn = dh * (1-z) * (1-n^2), dr = dn * hn * r(1-r),
    dz = dh * (h[t-1] - n) * z(1-z); the input's share of the gates gets (dr, dz, dn), the
    hidden state's (dr, dz, dn * r); dh[t-1] = grad[t-1] + (dr, dz, dn * r) @ W_hh + dh * z.
    """

    rule = (
        "dn = dh * (1-z) * (1-n^2), dr = dn * hn * r(1-r), dz = dh * (h[t-1] - n) * z(1-z); "
        "d_ih = (dr, dz, dn), d_hh = (dr, dz, dn * r); dh[t-1] = grad[t-1] + d_hh @ W_hh + "
        "dh * z; grad_W_ih = sum d_ih.T @ x[t], grad_W_hh = sum d_hh.T @ h[t-1]"
    )
    saves_out = True

    def forward(
        self,
        x: Any,
        h0: Any,
        w_ih: Any,
        w_hh: Any,
        b_ih: Any = None,
        b_hh: Any = None,
        *,
        reverse: bool,
    ) -> Any:
        self.reverse = reverse
        L, N, H = len(x), h0.shape[0], h0.shape[1]
        gates = _input_part(x, w_ih, b_ih)  # (L, N, 3H): r, z, n, then their activations
        hn = xp.empty((L, N, H), gates.dtype, like=gates)
        out = xp.empty((L, N, H), gates.dtype, like=gates)
        w_hh_t, hw = _recurrent(w_hh, N)
        h = h0
        with errstate(over="ignore"):  # exp(-a) -> inf in the sigmoid: 0, as it should
            for t in _steps(L, reverse):
                xp.matmul(h, w_hh_t, out=hw)  # (N, 3H)
                if b_hh is not None:
                    hw += b_hh
                a = gates[t]
                a[:, : 2 * H] += hw[:, : 2 * H]
                _sigmoid_(a[:, : 2 * H])
                hn[t] = hw[:, 2 * H :]
                n = a[:, 2 * H :]
                n += a[:, :H] * hn[t]  # + r * hn
                xp.tanh(n, out=n)
                h_new = out[t]
                xp.subtract(h, n, out=h_new)
                h_new *= a[:, H : 2 * H]
                h_new += n  # n + z * (h - n)
                h = h_new
        self.gates, self.hn = gates, hn
        return out

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        x, h0, w_ih, w_hh, b_ih, b_hh = self.inputs
        H = h0.shape[-1]
        prev = _previous(out, h0, self.reverse)
        if state.grad_enabled:  # recorded: the activations as functions of the inputs
            xw, hw = Linear.apply(x, w_ih, b_ih), Linear.apply(prev, w_hh, b_hh)
            r = (xw[..., :H] + hw[..., :H]).sigmoid()
            z = (xw[..., H : 2 * H] + hw[..., H : 2 * H]).sigmoid()
            hn = hw[..., 2 * H :]
            n = (xw[..., 2 * H :] + r * hn).tanh()
        else:
            gates, hn = _saved(self.gates, self.hn)
            r, z, n = gates[..., :H], gates[..., H : 2 * H], gates[..., 2 * H :]
        d_ih: list[Any] = [None] * len(out)
        d_hh: list[Any] = [None] * len(out)
        dh = None
        for t in reversed(_steps(len(out), self.reverse)):
            dh = grad[t] if dh is None else grad[t] + dh
            dn = dh * (1.0 - z[t]) * (1.0 - n[t] * n[t])
            dr = dn * hn[t] * r[t] * (1.0 - r[t])
            dz = dh * (prev[t] - n[t]) * z[t] * (1.0 - z[t])
            d_ih[t] = Cat.apply(dr, dz, dn, dim=1)  # (N, 3H)
            d_hh[t] = Cat.apply(dr, dz, dn * r[t], dim=1)
            dh = d_hh[t] @ w_hh + dh * z[t]
        return self._grads(_stack(d_ih), _stack(d_hh), dh, x, prev, w_ih)

    def backward_arrays(self, grad: Any, out: Any) -> tuple[Any, ...]:
        x, h0, w_ih, w_hh, _, _ = arrays_of(self.inputs)
        L, N, H = len(x), h0.shape[0], h0.shape[1]
        gates, hn = self.gates, self.hn
        r, z, n = gates[..., :H], gates[..., H : 2 * H], gates[..., 2 * H :]
        prev = _previous(out, h0, self.reverse)
        # What multiplies dh in each gate's gradient, for every step at once (the input's
        # share; the hidden state's differs in the last third, times r).
        by_ih = xp.empty_like(gates)
        dn_by = by_ih[..., 2 * H :]
        xp.multiply(1.0 - z, 1.0 - n * n, out=dn_by)
        by_ih[..., :H] = dn_by * hn * r * (1.0 - r)
        by_ih[..., H : 2 * H] = (prev - n) * z * (1.0 - z)
        by_hh = by_ih.copy()
        by_hh[..., 2 * H :] *= r
        d_ih, d_hh = xp.empty_like(gates), xp.empty_like(gates)
        dh = None
        for t in reversed(_steps(L, self.reverse)):
            dh = grad[t] if dh is None else grad[t] + dh
            xp.multiply(by_ih[t].reshape(N, 3, H), dh[:, None, :], out=d_ih[t].reshape(N, 3, H))
            xp.multiply(by_hh[t].reshape(N, 3, H), dh[:, None, :], out=d_hh[t].reshape(N, 3, H))
            dh = xp.matmul(d_hh[t], w_hh) + dh * z[t]
        return self._grads(d_ih, d_hh, dh, x, prev, w_ih)

    def _grads(self, d_ih: Any, d_hh: Any, dh0: Any, x: Any, prev: Any, w_ih: Any) -> Any:
        need_x, need_h0, *needs = self.needs_input_grad
        gx, gw_ih, gw_hh, gb_ih, gb_hh = _param_grads((need_x, *needs), d_ih, d_hh, x, prev, w_ih)
        return gx, dh0 if need_h0 else None, gw_ih, gw_hh, gb_ih, gb_hh
