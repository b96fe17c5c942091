"""grid_sample's primitives (GridSampler2d, GridSampler3d): an input read at arbitrary
positions, each output a weighted sum of taps gathered from the flattened input. Argument
checks live in nn/grid.py.

Along each axis a position gives its taps (the integer positions read: 2 for linear, 4 for
cubic, 1 for nearest) and their weights, functions of the position's fraction t; the taps of a
point are every combination of one tap an axis, weighted by the product of their axes'
weights, zero where a tap falls outside the input.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ..array import xp
from ..autograd.primitive import Function, tensor_type
from .movement import Stack

if TYPE_CHECKING:
    from ..autograd.primitive import Grads
    from ..tensor import Tensor

_CUBIC_A = -0.75  # PyTorch's cubic convolution coefficient


def _reflect(c: Any, twice_low: int, twice_high: int) -> tuple[Any, Any]:
    """c reflected into [twice_low / 2, twice_high / 2] as often as needed, and the sign of
    its slope (PyTorch's reflect_coordinates_set_grad)."""
    if twice_low == twice_high:
        return c * 0, c * 0
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    c = c - low
    sign = xp.where(c < 0, -1, 1).astype(c.dtype)
    c = xp.abs(c)
    extra = xp.fmod(c, span)
    even = xp.floor(c / span) % 2 == 0
    return xp.where(even, extra + low, span - extra + low), xp.where(even, sign, -sign)


def _clip(c: Any, n: int) -> tuple[Any, Any]:
    """c clipped to [0, n - 1] and its slope: 1 strictly inside, 0 elsewhere (PyTorch's
    clip_coordinates_set_grad)."""
    return xp.clip(c, 0, n - 1), ((c > 0) & (c < n - 1)).astype(c.dtype)


def _padded(c: Any, n: int, padding: str, corners: bool) -> tuple[Any, Any]:
    """A position along an axis of n with the padding applied, and its slope."""
    if padding == "border":
        return _clip(c, n)
    if padding == "reflection":
        c, sign = _reflect(c, 0, 2 * (n - 1)) if corners else _reflect(c, -1, 2 * n - 1)
        c, inside = _clip(c, n)
        return c, sign * inside
    return c, None


def _weights(t: Any, mode: str) -> list[Any]:
    """Each tap's weight at fraction t (an array or a Tensor): linear, cubic convolution
    (taps -1, 0, 1, 2) or nearest."""
    if mode == "bilinear":
        return [1 - t, t]
    if mode == "nearest":
        return [t * 0 + 1]
    a = _CUBIC_A

    def near(u: Any) -> Any:
        return ((a + 2) * u - (a + 3)) * u * u + 1

    def far(u: Any) -> Any:
        return ((a * u - 5 * a) * u + 8 * a) * u - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _slopes(t: Any, mode: str) -> list[Any]:
    """The derivative in t of each of _weights' weights."""
    if mode == "bilinear":
        return [t * 0 - 1, t * 0 + 1]
    a = _CUBIC_A

    def near(u: Any) -> Any:
        return (3 * (a + 2) * u - 2 * (a + 3)) * u

    def far(u: Any) -> Any:
        return (3 * a * u - 10 * a) * u + 8 * a

    return [far(t + 1), near(t), -near(1 - t), -far(2 - t)]


def _axis(g: Any, n: int, mode: str, padding: str, corners: bool, kind: Any) -> tuple[Any, ...]:
    """Grid values g (N, P) along an axis of n (the grid's own dtype ``kind``): the taps'
    positions (N, T, P) int64, where each is inside the input (N, T, P) bool, the fraction t
    (N, P) and the slope of t in g."""
    scale = (n - 1) / 2 if corners else n / 2
    # a narrower grid's (bfloat16's, float16's) position: each step rounded to it, as PyTorch's
    at = g if kind == g.dtype else g.astype(kind)
    c = (at + 1) / 2 * (n - 1) if corners else ((at + 1) * n - 1) / 2
    c = c.astype(g.dtype, copy=False)
    if mode == "bicubic":  # the fraction from the position itself; the padding on each tap
        low = xp.floor(c)
        pos = low[:, None, :] + xp.arange(-1, 3, dtype=c.dtype, like=c)[:, None]  # (N, 4, P)
        if padding != "zeros":
            pos = _padded(pos, n, padding, corners)[0]
        taps, t, slope = pos.astype(xp.int64), c - low, scale
    else:
        c, slope = _padded(c, n, padding, corners)
        slope = scale if slope is None else slope * scale
        if mode == "nearest":
            taps, t = xp.rint(c).astype(xp.int64)[:, None, :], c
        else:
            low = xp.floor(c)
            taps = low.astype(xp.int64)[:, None, :] + xp.arange(2, like=g)[:, None]  # (N, 2, P)
            t = c - low
    return taps, (taps >= 0) & (taps < n), t, slope


def _stacked(parts: list[Any], like: Any) -> Any:
    """Arrays (N, P) stacked into (N, T, P): one copy each, without np.stack's reshapes."""
    n, p = like.shape
    out = xp.empty((n, len(parts), p), dtype=like.dtype, like=like)
    for i, part in enumerate(parts):
        out[:, i] = part
    return out


def _outer(parts: list[Any], add: bool = False) -> Any:
    """The products (with ``add``, the sums) of one (N, T_d, P) part an axis, for every
    combination of taps (N, K, P), the first axis' tap varying fastest; arrays or Tensors."""
    dim = len(parts)
    out: Any = None
    for d, part in enumerate(parts):  # x, y (, z): x's taps the last of the K axes
        n, taps, p = part.shape
        shaped = part.reshape(n, *([1] * (dim - 1 - d)), taps, *([1] * d), p)
        out = shaped if out is None else (out + shaped if add else out * shaped)
    n, p = parts[0].shape[0], parts[0].shape[2]
    return out.reshape(n, -1, p)


class GridSampler2d(Function):
    """out[n, c, p] = sum_k w_k[n, p] * x[n, c, tap_k[n, p]]: x (N, C, H, W) read at grid
    (N, Ho, Wo, 2) (x, y from -1 to 1), the taps every pair of one tap along x and one along y,
    w_k the product of their weights (bilinear, nearest or bicubic), zero outside the input;
    the padding moves each position (border, reflection) or leaves it (zeros).

    grad_x: grad * w_k added back at each tap; grad_grid[..., d]: sum_k (sum_c grad * x at
    tap k) * dw_k/dt_d * dt_d/dgrid_d (zero for nearest), with t_d the position's fraction.
    """

    rule = (
        "grad_x = grad * w_k scattered to tap k; grad_grid_d = sum_k sum_c(grad * x[tap_k]) * "
        "dw_k/dt_d * dt_d/dgrid_d"
    )

    def forward(self, x: Any, grid: Any, *, mode: str, padding: str, corners: bool) -> Any:
        self.mode = mode
        n, c = x.shape[:2]
        sizes = x.shape[2:][::-1]  # along x, y (, z): W, H (, D)
        dim, out_shape = len(sizes), grid.shape[1:-1]
        p = math.prod(out_shape)
        work = grid.dtype if grid.dtype in (xp.float32, xp.float64) else xp.dtype(xp.float32)
        g = grid.reshape(n, p, dim).astype(work, copy=False)
        index: Any = None
        w: Any = None
        self.ts, self.slopes, self.insides = [], [], []
        stride = 1
        for d, size in enumerate(sizes):  # x, y (, z)
            taps, inside, t, slope = _axis(g[..., d], size, mode, padding, corners, grid.dtype)
            xp.maximum(taps, 0, out=taps)
            xp.minimum(taps, size - 1, out=taps)
            if stride > 1:
                taps *= stride
            index = taps if index is None else _outer([index, taps], add=True)  # (N, K, P)
            part = _stacked(_weights(t, mode), like=t) if mode != "nearest" else inside
            part = part * inside  # (N, T, P): zero outside the input
            w = part if w is None else _outer([w, part])  # (N, K, P)
            self.ts.append(t)
            self.slopes.append(slope)
            self.insides.append(inside.astype(work))
            stride *= size
        self.grid_used, self.index = g, index
        k = index.shape[1]
        # each output's taps' places in x's flat memory: (N, C, K*P)
        rows = xp.arange(0, n * c * stride, stride, like=index).reshape(n, c, 1)
        vals = xp.take(x.reshape(-1), index.reshape(n, 1, k * p) + rows)
        vals = vals.reshape(n, c, k, p).astype(work, copy=False)  # (N, C, K, P)
        out = xp.einsum("nckp,nkp->ncp", vals, w) if k > 1 else vals[:, :, 0] * w[:, :1]
        return out.reshape(n, c, *out_shape).astype(x.dtype, copy=False)

    def _fractions(self, grid: Tensor) -> list[Any]:
        """The fraction t along each axis as a Tensor of grid, so the gradients differentiate
        again in grid: t_d = grid_d * slope_d + (t_d - grid_d * slope_d), the second term
        held constant."""
        n, p = self.grid_used.shape[:2]
        out = []
        flat = grid.reshape(n, p, len(self.ts))
        for d, (t, slope) in enumerate(zip(self.ts, self.slopes, strict=True)):
            g = self.grid_used[..., d]
            out.append(flat[..., d] * _const(slope, t) + _const(t - g * slope, t))
        return out

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        x, grid = self.inputs
        need_x, need_g = self.needs_input_grad
        n, c = x.shape[:2]
        k, p = self.index.shape[1:]
        insides = [_const(inside, None) for inside in self.insides]  # (N, T, P) each
        if self.mode == "nearest":
            ts, per_axis = self.ts, insides
        else:
            ts = self._fractions(grid)
            per_axis = [
                stack(_weights(t, self.mode), 1) * m for t, m in zip(ts, insides, strict=True)
            ]
        w = _outer(per_axis)  # (N, K, P), zero outside the input
        g = grad.reshape(n, c, 1, p)
        index = _const(xp.broadcast_to(self.index.reshape(n, 1, k * p), (n, c, k * p)), None)
        gx = gg = None
        if need_x:
            parts = (g * w.unsqueeze(1)).reshape(n, c, k * p)  # (N, C, K*P)
            zeros = _const(xp.zeros((n, c, math.prod(x.shape[2:])), dtype=x._array.dtype,
                                    like=x._array), None)  # fmt: skip
            gx = zeros.scatter_add(2, index, parts.to(x.dtype)).reshape(x.shape)
        if need_g:
            if self.mode == "nearest":  # a step function: no gradient, as PyTorch's
                gg = grid * 0
            else:
                vals = x.reshape(n, c, -1).gather(2, index).reshape(n, c, k, p)
                along = (g * vals).sum(1)  # (N, K, P): sum_c grad * x at tap k
                slopes = [
                    stack(_slopes(t, self.mode), 1) * m for t, m in zip(ts, insides, strict=True)
                ]
                parts = []
                for d, slope in enumerate(self.slopes):
                    dw = _outer([slopes[e] if e == d else per_axis[e] for e in range(len(ts))])
                    parts.append((along * dw).sum(1) * _const(slope, self.ts[d]))  # (N, P)
                gg = stack(parts, -1).reshape(grid.shape).to(grid.dtype)
        return gx, gg


class GridSampler3d(GridSampler2d):
    """out[n, c, p] = sum_k w_k[n, p] * x[n, c, tap_k[n, p]]: x (N, C, D, H, W) read at grid
    (N, Do, Ho, Wo, 3) (x, y, z from -1 to 1), as GridSampler2d with one more axis (bilinear
    is trilinear; no bicubic)."""

    rule = (
        "grad_x = grad * w_k scattered to tap k; grad_grid_d = sum_k sum_c(grad * x[tap_k]) * "
        "dw_k/dt_d * dt_d/dgrid_d, over the three axes"
    )


def _const(values: Any, like: Any) -> Any:
    """values (an array, or a number broadcast like ``like``) as a Tensor outside the graph."""
    if not hasattr(values, "shape"):
        values = xp.full(like.shape, values, dtype=like.dtype, like=like)
    return tensor_type()._make(values)


def stack(parts: list[Any], dim: int) -> Any:
    """Tensors stacked along a new dim."""
    return Stack.apply(*parts, dim=dim % (parts[0].ndim + 1))
