"""The Monitor: what happens inside training, layer by layer (activations, the gradients of
the layers' outputs, each parameter's gradient and update against its size), recorded
through module, tensor and optimizer hooks, and shown as courses draw it by hand (plot), in
words (summary) or as JSON. A chainrule.scalar.nn MLP is recorded through its own layers.
The statistics are taken on the host: a model on a CUDA device has what a recorded step
reads copied there (``numpy(force=True)``), which steps not recorded never pay."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import array, fastpath, nn
from ..arguments import positive_int
from ..autograd.mode import is_grad_enabled
from ..fastpath.rowsums import row_sums
from ..optim.optimizer import Optimizer
from ..scalar import nn as scalar_nn
from ..serialization import write_atomically
from ..tensor import Tensor
from .outputs import write_output

BINS = 50  # bins of every histogram
HIST_SAMPLE = 4096  # a histogram counts at most this many values of a tensor (a fixed sample)
PARAM_SAMPLE = 4096  # a parameter's ratios are measured on at most this many of its elements
SATURATION = 0.97  # tanh or sigmoid output beyond this fraction of its half-range: saturated
GUIDE = -3.0  # log10 of the update/data ratio courses aim for

# Warnings: a layer's latest recorded step, a weight's recent updates.
DEAD_WARNING = 0.10  # of a ReLU's units
SATURATED_WARNING = 0.10  # of a tanh's or sigmoid's outputs
HIGH_UPDATE = -1.5  # log10 update/data above (30x the guide): lr likely too high
LOW_UPDATE = -5.0  # below: likely too low
SHRINK_WARNING = 10.0  # gradients change this many times from the last hidden layer to the first

ACTIVATIONS = (nn.ReLU, nn.LeakyReLU, nn.Tanh, nn.Sigmoid, nn.GELU)
BOUNDED = {nn.Tanh: (-1.0, 1.0), nn.Sigmoid: (0.0, 1.0)}  # outputs within these ranges


# ---------------------------------------------------------------------------------------
# Statistics of one array. Standard deviations are the population's (ddof=0).


_ONES: dict[Any, np.ndarray] = {}  # per dtype, ones for x . 1, at most ONES_MAX of them
ONES_MAX = 1 << 16  # larger arrays are summed as dot products of ONES_MAX-long pieces


def moments(x: np.ndarray, total: float | None = None) -> tuple[float, float]:
    """(mean, std) of all of x, as Python floats, in x's dtype; ``total``, if given, is x's
    sum (as column_sums gives it), which saves a pass.

    With the fast path on, the sums are BLAS dot products (x . 1, with ones kept per dtype,
    and x . x); with it off, NumPy's sums. The variance is mean(x^2) - mean^2 where that
    difference keeps at least a tenth of mean(x^2) (so at most one digit is lost to
    cancellation); otherwise (mean >> std) it is taken from the centred values. Floats
    narrower than 32 bits are summed as float32 (a float16 sum of squares overflows past
    65504)."""
    f = x.ravel(order="K")  # in memory order: a view, also of a transposed array
    if f.dtype.itemsize < 4:
        f = f.astype(np.float32)
    n = f.size
    if n == 0:
        return math.nan, math.nan
    if fastpath.enabled():
        if total is None:
            ones = _ONES.get(f.dtype)
            if ones is None or ones.size < min(n, ONES_MAX):
                ones = _ONES[f.dtype] = np.ones(min(n, ONES_MAX), f.dtype)
            total = 0.0
            for start in range(0, n, ONES_MAX):
                piece = f[start : start + ONES_MAX]
                total += float(np.dot(piece, ones[: piece.size]))
        square = float(np.dot(f, f)) / n
    else:
        total = float(f.sum()) if total is None else total
        square = float((f * f).sum()) / n
    mean = total / n
    var = square - mean * mean
    if not var >= 0.1 * square:  # also NaN: the centred pass gives NaN where it should
        d = f - f.dtype.type(mean)
        var = float(np.dot(d, d)) / n
    return mean, math.sqrt(var)


RUN = 64  # a sample takes runs of this many neighbours: a few cache lines, not one per value


class Sampler:
    """Fixed random positions, one set per array size (seeded, the global generator left
    alone): a histogram of a large tensor counts the values at the same positions each step.
    The positions come in runs of RUN neighbours at random places, so that reading a
    sample of a weight out of cache costs limit / 16 cache misses rather than limit."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.positions: dict[int, np.ndarray] = {}  # per size, the sorted starts of the runs

    def __call__(self, x: np.ndarray, copy: bool = False) -> np.ndarray:
        """The sample of x, flat: x's own memory when x is small enough (a copy if
        ``copy``), else the values at the fixed positions (a new array)."""
        f = x.ravel(order="K")
        if f.size <= self.limit:
            return f.copy() if copy else f
        starts = self.positions.get(f.size)
        if starts is None:
            runs = self.limit // RUN
            starts = np.random.default_rng(f.size).choice(f.size // RUN, runs, replace=False)
            starts = self.positions[f.size] = np.sort(starts)
        if fastpath.enabled():  # whole runs taken as rows
            rows = f[: f.size // RUN * RUN].reshape(-1, RUN)
            return rows.take(starts, axis=0).reshape(-1)
        return f[(starts[:, None] * RUN + np.arange(RUN)).reshape(-1)]


def histogram(x: np.ndarray, bounds: tuple[float, float] | None = None) -> dict | None:
    """``{"lo", "hi", "counts"}``: BINS equal bins over ``bounds`` (else x's finite range);
    values outside fall into the end bins. None if x holds no finite value."""
    if x.size == 0:
        return None
    lo, hi = float(x.min()), float(x.max())
    if not (math.isfinite(lo) and math.isfinite(hi)):
        x = x[np.isfinite(x)]  # NaN and inf are left out
        if x.size == 0:
            return None
        lo, hi = float(x.min()), float(x.max())
    if bounds is not None:
        lo, hi = bounds
    # in float64 and scaled by the largest magnitude, so that huge values (a diverging run's
    # 1e38s) neither overflow the range nor the bins' index
    scale = max(abs(lo), abs(hi))
    if hi - lo <= scale * 1e-12:  # all values equal at their own scale: one bin around them
        half = max(0.5, scale * 1e-6)
        lo, hi = lo - half, lo + half
        scale = max(abs(lo), abs(hi))
    lo_s, hi_s = lo / scale, hi / scale
    idx = x.astype(np.float64) / scale - lo_s
    idx *= BINS / (hi_s - lo_s)
    np.clip(idx, 0, BINS, out=idx)  # values outside a given range fall into the end bins
    counts = np.bincount(idx.astype(np.intp), minlength=BINS + 1)  # the maximum: at BINS
    counts[BINS - 1] += counts[BINS]
    return {"lo": lo, "hi": hi, "counts": counts[:BINS].tolist()}


def column_sums(x: np.ndarray) -> np.ndarray:
    """Per unit (each position after the batch dim), the sum over the batch: the row sums
    of x's transpose, one BLAS product (in float32 for narrower floats); an unbatched 1-D x
    is a batch of one."""
    if x.ndim >= 2:
        rows = x.reshape(x.shape[0], math.prod(x.shape[1:]))  # (batch, units); batch may be 0
    else:
        rows = x.reshape(1, x.size)  # (batch, units)
    if rows.dtype.itemsize < 4:
        rows = rows.astype(np.float32)
    return row_sums(rows.T)[:, 0]


def dead_fraction(sums: np.ndarray) -> float:
    """The fraction of a ReLU's units that are exactly 0 for every example of the batch,
    from the column sums of its output: values are >= 0, so a sum is 0 only when all its
    values are (a NaN anywhere leaves the unit alive, as a NaN is not 0)."""
    if sums.size == 0:
        return 0.0
    return 1.0 - np.count_nonzero(sums) / sums.size


def saturated_fraction(x: np.ndarray, bounds: tuple[float, float]) -> float:
    """The fraction of outputs beyond SATURATION of the half-range from its centre (for tanh,
    |out| > 0.97)."""
    lo, hi = bounds
    if x.size == 0:
        return 0.0
    return np.count_nonzero(np.abs(x - (lo + hi) / 2) > SATURATION * (hi - lo) / 2) / x.size


def ratio(num: float, den: float) -> float | None:
    return num / den if den > 0 and math.isfinite(num) and math.isfinite(den) else None


def log10(value: float | None) -> float | None:
    return math.log10(value) if value is not None and value > 0 else None


# ---------------------------------------------------------------------------------------


def _tag(name: str, kind: str) -> str:
    """A layer's TensorBoard tag: its module name and kind (``1.ReLU``), so that the dashboard
    says what each index is; the kind alone for a model that is one layer."""
    return name if name == kind else f"{name}.{kind}"


class Monitor:
    """Record, every ``every`` steps, per layer with parameters and per activation module:
    the output's mean, std and histogram, the fraction of saturated (tanh, sigmoid) or dead
    (ReLU) units, and the same statistics of the gradient of the output; per parameter,
    std(grad) / std(data) and log10 of std(update) / std(data) around the update.

    A step is an optimizer step when ``optimizer`` is given (forwards in no_grad mode, as
    an evaluation runs, are not recorded then); without one, every forward of ``model`` is a
    step, and ``step()``, called after updating the parameters by hand, records the
    parameters' ratios (the update being the change since the previous ``step()``). On a
    ``chainrule.scalar.nn`` MLP or Layer, steps are the ``step()`` calls: every example the
    layers saw since the last one makes the batch, and their gradients are read at the call.

    Between recorded steps the layers' hooks are taken out, and the remaining ones (the
    model's forward pre-hook, the optimizer's step hooks) return at once. A module called
    more than once in a step is recorded at its last call. Histograms count a fixed random
    sample of at most HIST_SAMPLE values; a parameter's ratios use at most PARAM_SAMPLE of
    its elements (all of them in a small model). ``remove()`` (or the end of a ``with``
    block) takes every hook out.
    """

    def __init__(
        self, model: Any, optimizer: Optimizer | None = None, every: int = 1, writer: Any = None
    ) -> None:
        self.every = positive_int(every, "every", "Monitor")
        # a SummaryWriter (chainrule.utils.tensorboard's): each recorded step's histograms
        # and ratios go to TensorBoard as well, tagged by module name and kind
        # (activations/1.ReLU) and by parameter name (update_to_data_log10/0.weight)
        self.writer = writer
        if optimizer is not None and not isinstance(optimizer, Optimizer):
            raise TypeError(
                f"Monitor: optimizer must be a chainrule optimizer or None; got "
                f"{type(optimizer).__name__}"
            )
        self.model, self.optimizer = model, optimizer
        self.steps_done = 0  # steps so far (optimizer steps, forwards or step() calls)
        self.overflowed: dict[str, int] = {}  # "layer 2's activations": the first such step
        self.recorded: list[int] = []  # the steps recorded
        self.layers: dict[str, dict[str, Any]] = {}  # name -> series, in forward order
        self.params: dict[str, dict[str, Any]] = {}  # name -> series
        self._hist_sample = Sampler(HIST_SAMPLE)
        self._param_sample = Sampler(PARAM_SAMPLE)
        self._grad_samples: dict[str, np.ndarray] = {}  # the latest recorded weight grads
        self._before: dict[str, np.ndarray] = {}  # parameter samples before the update
        self._std: dict[str, float] = {}  # and their standard deviations
        self._handles: list[Any] = []  # the hooks in for as long as the Monitor is
        self._recorders: list[tuple[Any, Callable]] = []  # (layer, its forward hook)
        self._watching: list[Any] = []  # their handles while they are in
        self._named: dict[str, Any] = {}  # name -> Parameter (scalar: lists of Values)
        self._swapped: list[tuple[Any, type]] = []  # scalar layers and their own classes
        self._pending: dict[str, list] = {}  # scalar: each layer's outputs since step()
        self._step = 0  # the step being recorded
        self._recording = False
        if isinstance(model, nn.Module):
            if optimizer is None:
                self._named = dict(model.named_parameters())
            else:  # the model's parameters that the optimizer updates
                held = {id(p) for g in optimizer.param_groups for p in g["params"]}
                self._named = {n: p for n, p in model.named_parameters() if id(p) in held}
            self._attach_modules()
            if optimizer is None:
                self._snapshot()  # step() measures the update from here
        elif isinstance(model, scalar_nn.Module):
            if optimizer is not None:
                raise TypeError(
                    "Monitor: a scalar-engine model has no optimizer; got "
                    f"{type(optimizer).__name__}; update p.data by hand and call step()"
                )
            self._attach_scalar()
            self._snapshot()
            self._recording = True
        else:
            raise TypeError(
                "Monitor: model must be a chainrule.nn.Module or a chainrule.scalar.nn MLP "
                f"or Layer; got {type(model).__name__}"
            )

    # -- attaching -------------------------------------------------------------------------

    def _attach_modules(self) -> None:
        """The model's forward pre-hook, which decides at each forward whether the step is
        recorded, and the optimizer's step hooks stay in; the layers' forward hooks are in
        only during recorded steps (_watch), so between them the layers run as unwatched."""
        for name, m in self.model.named_modules():
            if isinstance(m, ACTIVATIONS) or any(True for _ in m.parameters(recurse=False)):
                self._recorders.append((m, self._recorder(name or type(m).__name__, m)))
        self._handles.append(self.model.register_forward_pre_hook(self._begin, prepend=True))
        if self.optimizer is not None:
            self._handles.append(self.optimizer.register_step_pre_hook(self._before_step))
            self._handles.append(self.optimizer.register_step_post_hook(self._after_step))

    def _begin(self, module: Any, args: tuple) -> None:
        """The model's forward begins: is this step recorded?"""
        if self.optimizer is None:
            self._step = self.steps_done
            self.steps_done += 1
            self._recording = self._step % self.every == 0
        else:
            self._step = self.steps_done
            self._recording = is_grad_enabled() and self._step % self.every == 0
        if self._recording and (not self.recorded or self.recorded[-1] != self._step):
            self.recorded.append(self._step)
        self._watch(self._recording)

    def _watch(self, on: bool) -> None:
        """Put the layers' forward hooks in (``on``) or take them out, if not so already."""
        if on and not self._watching:
            self._watching = [m.register_forward_hook(hook) for m, hook in self._recorders]
        elif not on and self._watching:
            for handle in self._watching:
                handle.remove()
            self._watching = []

    def _recorder(self, name: str, module: nn.Module) -> Callable:
        kind = type(module).__name__
        bounds = next((b for cls, b in BOUNDED.items() if isinstance(module, cls)), None)
        dead = isinstance(module, nn.ReLU)
        calls = [0]  # how many calls were recorded

        def hook(mod: Any, args: tuple, out: Any) -> None:
            if not self._recording:
                return
            t = out if isinstance(out, Tensor) else None
            if isinstance(out, (tuple, list)):  # an RNN's (output, state): the output
                t = next((o for o in out if isinstance(o, Tensor)), None)
            if t is None or not array.is_floating(t.dtype):
                return
            series = self._layer(name, kind, bounds, dead)
            i = self._slot(series, self._step)
            self._activation(series, i, t.numpy(force=True), bounds, name)
            calls[0] += 1
            if t.requires_grad and is_grad_enabled():
                t.register_hook(lambda g, call=calls[0]: gradient(series, i, g, call))

        def gradient(series: dict, i: int, g: Tensor, call: int) -> None:
            if call == calls[0]:  # the gradient of the call whose activation was recorded
                self._gradient(series, i, g.numpy(force=True), name)

        return hook

    def _attach_scalar(self) -> None:
        """Give each Layer a class of its own whose call also notes its outputs (the class
        is given back by remove()): scalar modules have no hooks, and a call goes through
        the class."""
        model = self.model
        if isinstance(model, scalar_nn.MLP):
            named = [(f"layers.{i}", layer) for i, layer in enumerate(model.layers)]
        elif isinstance(model, scalar_nn.Layer):
            named = [("layer", model)]
        else:
            raise TypeError(
                f"Monitor: a scalar-engine model must be an MLP or a Layer; got "
                f"{type(model).__name__}"
            )
        self._named = {}
        for name, layer in named:
            base = type(layer)
            pending = self._pending.setdefault(name, [])

            def call(layer: Any, x: Any, base: type = base, pending: list = pending) -> Any:
                out = base.__call__(layer, x)
                if self._recording:
                    pending.append(out if isinstance(out, list) else [out])
                return out

            own = {
                "__call__": call,
                "__module__": base.__module__,
                "__qualname__": base.__qualname__,
            }
            layer.__class__ = type(base.__name__, (base,), own)
            self._swapped.append((layer, base))
            relu = bool(layer.neurons) and layer.neurons[0].nonlin
            self._layer(name, "ReLU" if relu else "Linear", None, relu)
            self._named[f"{name}.weight"] = [n.w for n in layer.neurons]
            self._named[f"{name}.bias"] = [n.b for n in layer.neurons]

    # -- series: per name, a dict of lists, one entry per recorded step --------------------

    def _layer(self, name: str, kind: str, bounds: tuple | None, dead: bool) -> dict[str, Any]:
        """A layer's series, made the first time it is recorded (so in forward order)."""
        series = self.layers.get(name)
        if series is None:
            mark = ["saturated"] if bounds else ["dead"] if dead else []
            keys = ["act_mean", "act_std", "act_hist", *mark, "grad_mean", "grad_std", "grad_hist"]
            series = self.layers[name] = {"type": kind, "steps": [], **{k: [] for k in keys}}
        return series

    @staticmethod
    def _slot(series: dict[str, Any], step: int) -> int:
        """The index of ``step`` in ``series``, made if new (a step seen again, as a layer
        called twice, is recorded over). Every list after ``steps`` is a series."""
        steps = series["steps"]
        if not steps or steps[-1] != step:
            after = False
            for values in series.values():
                if after:
                    values.append(None)
                after = after or values is steps
            steps.append(step)
        return len(steps) - 1

    def _activation(
        self, series: dict, i: int, x: np.ndarray, bounds: tuple | None, name: str
    ) -> None:
        with np.errstate(all="ignore"):  # a diverging run's values: recorded, never a warning
            self._record_activation(series, i, x, bounds, name)

    def _record_activation(
        self, series: dict, i: int, x: np.ndarray, bounds: tuple | None, name: str
    ) -> None:
        total = None
        if "dead" in series:  # a ReLU: its column sums give the dead units and the mean
            sums = column_sums(x)
            series["dead"][i] = dead_fraction(sums)
            total = float(sums.sum(dtype=np.float64))
        series["act_mean"][i], series["act_std"][i] = moments(x, total)
        self._check_finite(series["act_mean"][i], series["act_std"][i], name, "activations")
        sample = self._hist_sample(x)
        series["act_hist"][i] = histogram(sample, bounds)
        if self.writer is not None:
            tag = _tag(name, series["type"])
            self._write_histogram(f"activations/{tag}", sample)
            if "dead" in series:
                self.writer.add_scalar(f"dead_fraction/{tag}", series["dead"][i], self._step)
        if bounds:
            series["saturated"][i] = saturated_fraction(x, bounds)

    def _gradient(self, series: dict, i: int, g: np.ndarray, name: str) -> None:
        with np.errstate(all="ignore"):
            series["grad_mean"][i], series["grad_std"][i] = moments(g)
            self._check_finite(series["grad_mean"][i], series["grad_std"][i], name, "gradients")
            sample = self._hist_sample(g)
            series["grad_hist"][i] = histogram(sample)
            if self.writer is not None:
                self._write_histogram(f"gradients/{_tag(name, series['type'])}", sample)

    def _write_histogram(self, tag: str, sample: np.ndarray) -> None:
        finite = sample[np.isfinite(sample)] if sample.dtype.kind == "f" else sample
        if finite.size:  # TensorBoard's histograms take finite values only
            self.writer.add_histogram(tag, finite.astype(np.float64), self._step)

    def _check_finite(self, mean: float, std: float, name: str, what: str) -> None:
        """Note the first step where a layer's values hold NaN or inf, or overflow their
        sums (a diverging run): the first of the warnings."""
        if not (math.isfinite(mean) and math.isfinite(std)):
            self.overflowed.setdefault(f"layer {name}'s {what}", self._step)

    # -- parameters ------------------------------------------------------------------------

    def _values(self, name: str) -> tuple[np.ndarray, np.ndarray | None]:
        """A parameter's sampled data (a copy) and gradient (None if it has none)."""
        p = self._named[name]
        if isinstance(p, Tensor):
            g = p.grad
            grad = None if g is None else self._param_sample(g.numpy(force=True), copy=True)
            return self._data(name), grad
        values = [v for row in p for v in (row if isinstance(row, list) else [row])]
        return (
            np.array([v.data for v in values], dtype=np.float64),
            np.array([v.grad for v in values], dtype=np.float64),
        )

    def _shape(self, name: str) -> list[int]:
        p = self._named[name]
        if isinstance(p, Tensor):
            return list(p.shape)
        return [len(p), len(p[0])] if p and isinstance(p[0], list) else [len(p)]

    def _data(self, name: str, copy: bool = True) -> np.ndarray:
        """A parameter's sampled data (a copy, or maybe its own memory if not ``copy``),
        without its gradient."""
        p = self._named[name]
        if isinstance(p, Tensor):
            return self._param_sample(p.numpy(force=True), copy=copy)
        return self._values(name)[0]

    def _snapshot(self) -> None:
        self._before = {name: self._data(name) for name in self._named}

    def _record_params(self, step: int) -> dict[str, np.ndarray]:
        """Each parameter's std(grad)/std(data) and gradient sample (for the histogram) at
        ``step``, the data as it was before the update where a snapshot holds it (step());
        returns the data samples."""
        data = {}
        for name in self._named:
            x, g = self._values(name)
            x = self._before.get(name, x)
            series = self.params.get(name)
            if series is None:
                series = self.params[name] = {
                    "shape": self._shape(name),
                    "steps": [],
                    "grad_data_ratio": [],
                    "update_log10": [],
                }
            i = self._slot(series, step)
            self._std[name] = std = moments(x)[1]
            if g is not None:
                series["grad_data_ratio"][i] = ratio(moments(g)[1], std)
                self._grad_samples[name] = g
            data[name] = x
        return data

    def _record_updates(self) -> None:
        """log10 std(data - data before) / std(data before) of each parameter, into the
        latest step of its series."""
        for name, before in self._before.items():
            change = self._data(name, copy=False) - before
            std = self._std[name]  # the data's before the update, as _record_params found it
            level = self.params[name]["update_log10"][-1] = log10(ratio(moments(change)[1], std))
            if self.writer is not None and level is not None:
                step = self.params[name]["steps"][-1]
                self.writer.add_scalar(f"update_to_data_log10/{name}", level, step)

    def _before_step(self, optimizer: Any, args: tuple, kwargs: dict) -> None:
        if self.steps_done % self.every == 0:
            with np.errstate(all="ignore"):  # overflowing statistics are recorded as such
                self._before = self._record_params(self.steps_done)
            if not self.recorded or self.recorded[-1] != self.steps_done:
                self.recorded.append(self.steps_done)

    def _after_step(self, optimizer: Any, args: tuple, kwargs: dict) -> None:
        if self._before:
            with np.errstate(all="ignore"):
                self._record_updates()
            self._before = {}
        self.steps_done += 1

    def step(self) -> None:
        """After updating the parameters by hand (no optimizer): record each parameter's
        gradient/data ratio and the update since the previous ``step()``; on the scalar
        engine, also the layers' outputs and gradients since then, and a step ends."""
        if self.optimizer is not None:
            raise RuntimeError(
                "Monitor.step: the optimizer's steps are recorded by its hooks; got a Monitor "
                f"made with {type(self.optimizer).__name__}; call step() only without one"
            )
        if self._swapped:  # scalar: this call ends a step
            self._step = self.steps_done
            self.steps_done += 1
            if self._recording:
                self._record_scalar_layers()
                self.recorded.append(self._step)
        if self._recording:
            with np.errstate(all="ignore"):
                self._record_params(self._step)  # against the data before the update
                self._record_updates()
        self._snapshot()
        if self._swapped:
            self._recording = self.steps_done % self.every == 0

    def _record_scalar_layers(self) -> None:
        for name, rows in self._pending.items():
            if not rows:
                continue
            series = self.layers[name]
            i = self._slot(series, self._step)
            values = np.array([[v.data for v in r] for r in rows])
            self._activation(series, i, values, None, name)
            self._gradient(series, i, np.array([[v.grad for v in r] for r in rows]), name)
            rows.clear()

    # -- reading ---------------------------------------------------------------------------

    def warnings(self) -> list[str]:
        """What looks wrong, in plain words: dead ReLUs, saturated tanh or sigmoid layers (at
        the latest recorded step), gradients that shrink or grow across the hidden layers,
        and weights whose recent updates are far from 1e-3 of their size."""
        out = [f"{what} overflowed at step {step} (NaN, inf or past the dtype's range)"
               for what, step in sorted(self.overflowed.items(), key=lambda kv: kv[1])]  # fmt: skip
        for name, s in self.layers.items():
            dead, sat = _last(s.get("dead")), _last(s.get("saturated"))
            if dead is not None and dead > DEAD_WARNING:
                out.append(f"layer {name} ({s['type']}): {dead:.0%} of units dead")
            if sat is not None and sat > SATURATED_WARNING:
                out.append(f"{s['type'].lower()} layer {name}: {sat:.0%} saturated")
        hidden = [s for s in self.layers.values() if s["type"] in _ACTIVATION_NAMES]
        if len(hidden) < 2:  # no activation modules: the layers with parameters but the last
            hidden = [s for s in self.layers.values() if s["type"] not in _ACTIVATION_NAMES][:-1]
        stds = [_last(s["grad_std"]) for s in hidden]
        if len(stds) >= 2 and stds[0] is not None and stds[-1] is not None:
            change = ratio(stds[-1], stds[0])
            if change is not None and change >= SHRINK_WARNING:
                out.append(f"gradients shrink {change:.0f}x from the last layer to the first")
            elif change is not None and change > 0 and 1 / change >= SHRINK_WARNING:
                out.append(f"gradients grow {1 / change:.0f}x from the last layer to the first")
        for name, s in self.params.items():
            recent = [v for v in s["update_log10"][-5:] if v is not None]
            if len(s["shape"]) < 2 or not recent:  # weights only: biases start at 0
                continue
            level = float(np.median(recent))
            if level > HIGH_UPDATE:
                out.append(
                    f"update/data about 1e{round(level)} on {name}: learning rate likely too high"
                )
            elif level < LOW_UPDATE:
                out.append(
                    f"update/data about 1e{round(level)} on {name}: it barely learns (learning "
                    "rate too low, or its gradient vanishes)"
                )
        return out

    def summary(self) -> str:
        """A plain-text table of the latest recorded step (layers, then parameters), and the
        warnings."""
        if not self.recorded:
            return "Monitor: nothing recorded yet"
        lines = [
            f"step {self.recorded[-1]} (recorded every {self.every}, "
            f"{len(self.recorded)} recorded of {self.steps_done})"
        ]
        rows = [["layer", "type", "act mean", "act std", "saturated/dead", "grad mean", "grad std"]]
        for name, s in self.layers.items():
            mark = ("saturated", "dead")
            frac = next((f"{_last(s[k]):.0%} {k}" for k in mark if _last(s.get(k)) is not None), "")
            rows.append(
                [
                    name,
                    s["type"],
                    *(_num(_last(s[k])) for k in ("act_mean", "act_std")),
                    frac,
                    *(_num(_last(s[k])) for k in ("grad_mean", "grad_std")),
                ]
            )
        lines += _table(rows)
        rows = [["parameter", "shape", "grad/data", "log10 update/data"]]
        for name, s in self.params.items():
            rows.append(
                [
                    name,
                    "x".join(map(str, s["shape"])),
                    _num(_last(s["grad_data_ratio"])),
                    _num(_last(s["update_log10"]), ".2f"),
                ]
            )
        if len(rows) > 1:
            lines += ["", *_table(rows)]
        warnings = self.warnings()
        lines += ["", "warnings:" if warnings else "no warnings"]
        lines += [f"  {w}" for w in warnings]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """Everything recorded: ``every``, ``steps_done``, ``recorded`` (the steps), ``layers``
        and ``parameters`` (name -> series, each list one entry per step in its ``steps``;
        a histogram is ``{"lo", "hi", "counts"}``, None where nothing was recorded), the
        latest weight-gradient histograms and the warnings. NaN and inf are None."""
        grads = {n: histogram(g) for n, g in self._grad_samples.items()}
        return _finite(
            {
                "every": self.every,
                "steps_done": self.steps_done,
                "recorded": self.recorded,
                "layers": self.layers,
                "parameters": self.params,
                "weight_grad_hist": grads,
                "warnings": self.warnings(),
            }
        )

    def to_json(self, path: str | os.PathLike) -> None:
        """Write ``to_dict()`` as strict JSON (no NaN or Infinity), atomically."""
        text = json.dumps(self.to_dict(), allow_nan=False)
        write_output(path, text, "Monitor.to_json")

    def plot(self, path: str | os.PathLike) -> None:
        """Draw the four panels courses draw by hand, for the latest recorded step: the
        activations' and the output gradients' histograms per layer (the activation
        modules, or without any the layers), the weight gradients' histograms, and log10
        update/data per weight over the steps with the 1e-3 guide; written atomically."""
        try:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            raise ImportError(
                'Monitor.plot: matplotlib is not installed; pip install "chainrule[plot]"'
            ) from None
        # names are the user's: no $ in one starts mathtext, no leading _ drops it (below)
        with matplotlib.rc_context({"text.parse_math": False}):
            fig = self._draw(plt)
        try:
            write_atomically(path, lambda tmp: fig.savefig(tmp, dpi=90, format="png"))
        finally:  # a failed write (a full disk) leaves no figure open in pyplot either
            plt.close(fig)

    def _draw(self, plt: Any) -> Any:
        """The four panels, as a figure."""
        shown = {n: s for n, s in self.layers.items() if s["type"] in _ACTIVATION_NAMES}
        shown = shown or self.layers
        weights = [n for n, s in self.params.items() if len(s["shape"]) >= 2] or list(self.params)
        fig, axes = plt.subplots(2, 2, figsize=(12, 7.5))
        for ax, key, title in (
            (axes[0, 0], "act_hist", "activation distribution"),
            (axes[0, 1], "grad_hist", "gradient distribution"),
        ):
            for name, s in shown.items():
                _density(ax, _last(s[key]), f"layer {name} ({s['type']})")
            ax.set_title(title)
        for name in weights:
            g = self._grad_samples.get(name)
            if g is not None:
                _density(axes[1, 0], histogram(g), f"{name} {tuple(self.params[name]['shape'])}")
        axes[1, 0].set_title("weights gradient distribution")
        ax = axes[1, 1]
        for name in weights:
            s = self.params[name]
            pts = [
                (k, v) for k, v in zip(s["steps"], s["update_log10"], strict=True) if v is not None
            ]
            if pts:
                ax.plot(*zip(*pts, strict=True), label=name)
        if self.recorded:
            ax.plot([self.recorded[0], self.recorded[-1]], [GUIDE, GUIDE], "k", label="1e-3")
        ax.set(title="update / data ratio", xlabel="step", ylabel="log10")
        for a in axes.flat:
            if lines := a.get_lines():  # every line is labelled, "_w.weight" too
                a.legend(lines, [line.get_label() for line in lines], fontsize=7)
        fig.tight_layout()
        return fig

    # -- detaching -------------------------------------------------------------------------

    def remove(self) -> None:
        """Take out every hook this Monitor put in (what it recorded stays)."""
        for handle in self._handles:
            handle.remove()
        self._handles.clear()
        self._watch(False)
        self._recorders.clear()
        for layer, base in self._swapped:
            layer.__class__ = base
        self._swapped.clear()
        self._recording = False

    def __enter__(self) -> Monitor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


_ACTIVATION_NAMES = {cls.__name__ for cls in ACTIVATIONS} | {"ReLU"}


def _last(values: list | None) -> Any:
    """The latest recorded value of a series (None if none)."""
    return values[-1] if values else None


def _num(value: float | None, spec: str = ".3g") -> str:
    return "-" if value is None or not math.isfinite(value) else format(value, spec)


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]


def _density(ax: Any, hist: dict | None, label: str) -> None:
    """A histogram as a density curve over its bin centres."""
    if not hist:
        return
    counts = np.asarray(hist["counts"], dtype=np.float64)
    width = (hist["hi"] - hist["lo"]) / len(counts)
    centres = hist["lo"] + width * (np.arange(len(counts)) + 0.5)
    ax.plot(centres, counts / max(counts.sum() * width, 1e-300), label=label)


def _finite(value: Any) -> Any:
    """``value`` with every float that is NaN or infinite made None, and NumPy numbers made
    Python's (so json.dumps with allow_nan=False takes it)."""
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, np.integer):
        return int(value)
    return value
