"""What PyTorch's node of each name shows as ``_saved_*`` (``_saved_self``, ``_saved_result``,
``_saved_dim``...), read from chainrule's node of the same name: its inputs, its output and
its options. node.py asks; the ops know nothing of it.

A saved tensor is PyTorch's: an input only where the gradient that reads it is wanted (so
``(x * c)._saved_self`` is None for a constant c), a number as a 0-d tensor; refused once
written in place, and once backward has freed the graph. The other values stay after
backward, as PyTorch keeps them."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .. import array
from ..array.tensor_type import tensor_type
from . import saved_losses as losses
from . import saved_made as made
from . import saved_spatial as spatial

PREFIX = "_saved_"
FREED = "freed"  # a call's array once release has freed it (snapshot)

# A saved tensor: ("input", i, wanted_by) is input i, saved where input wanted_by (None:
# always) wants a gradient; ("input.mT", ...) its transpose; ("result",) the output;
# ("option", key[, i]) an array the node keeps (item i of a tuple it keeps); ("stat", key)
# layer norm's statistic of that key; ("lu", "P" | "L" | "U") a factor of linalg.lu's;
# ("optional", i) input i, None where not given; ("called", key[, wanted_by]) a call's array.
TensorSpec = tuple[Any, ...]


# The values are read from the node while it lives, and from what release keeps of it after
# (snapshot): its inputs' shapes (and strides, for the products), and the options it keeps.
OPTIONS = frozenset({
    "dims", "keepdim", "dim", "index", "dof", "reduce", "include_self", "lo", "hi", "coef",
    "scale", "input_scale", "approximate", "eps", "n", "slope", "p", "offset", "dim1", "dim2",
    "upper", "options", "k", "mode", "full", "geometry", "call", "beta", "threshold", "lambd",
    "rounding_mode", "size", "step", "out_shape", "widths", "reduction", "is_causal", "left",
    "alpha", "shifts", "accumulate", "value", "source_shape", "transpose", "unitriangular",
})  # fmt: skip


def _shape(fn: Any, i: int) -> tuple[int, ...]:
    if fn.inputs is None:
        return tuple(fn.__dict__["_kept"]["shapes"][i])
    return tuple(fn.inputs[i]._array.shape)


def _option(fn: Any, key: str) -> Any:
    return (fn.__dict__["_kept"] if fn.inputs is None else fn.__dict__)[key]


def _sizes(i: int) -> Callable[[Any], Any]:
    return lambda fn: _shape(fn, i)


def _strides(i: int) -> Callable[[Any], Any]:  # kept only for input i's own gradient
    def strides(fn: Any) -> tuple[int, ...]:
        if not fn.needs_input_grad[i]:
            return ()
        if fn.inputs is None:
            return tuple(fn.__dict__["_kept"]["strides"][i])
        return tuple(fn.inputs[i].stride())

    return strides


def _one(fn: Any) -> int:  # a constant: read the same after backward, with no snapshot
    return 1


def index_steps(fn: Any) -> list[tuple[str, int, Any, tuple]]:
    """The steps of the basic index an index's node takes (saved_made.index_steps), read
    while it lives and after release; of an advanced index, its basic parts' steps and last
    its own (saved_made.advanced_steps)."""
    index, shape = _option(fn, "index"), _shape(fn, 0)
    if type(fn).__name__ != "IndexBackward0":
        return made.index_steps(index, shape)
    steps, _, sizes = made.advanced_steps(index, shape)
    return [*steps, ("IndexBackward0", 0, None, sizes)]


def _index_step(*keys: str) -> dict[str, Callable[[Any], Any]]:
    """Values PyTorch's node for an index's last step saves (saved_made.step_values): the
    node's, whose name is that step's; where a method gave them (saved.record's: select's
    dim, narrow's slice, slice_copy's arguments, None where not given), as it gave them."""

    def read(key: str) -> Callable[[Any], Any]:
        def value(fn: Any) -> Any:
            if key in (call := made.call_of(fn)):
                return made.unsigned(call[key])
            steps = index_steps(fn)
            if not steps:  # a slice of a whole dim, which a method takes as a step
                return _shape(fn, 0)  # self_sym_sizes (the method gave the others)
            return made.step_values(steps[-1])[key]

        return value

    return {key: read(key) for key in keys}


def _opt(key: str) -> Callable[[Any], Any]:
    return lambda fn: _option(fn, key)


def record(out: Any, **call: Any) -> Any:
    """``out``, its node (where one was recorded) keeping the arguments of the call that
    PyTorch's node saves and the primitive does not keep (nll_loss's ignore_index, squeeze's
    dim): the one edit an op's Tensor method or function makes for its ``_saved_*``."""
    fn = out.grad_fn
    if fn is not None:
        fn.call = call
    return out


def called(key: str, default: Any = None) -> Callable[[Any], Any]:
    """An argument of the call that PyTorch's node saves and the primitive does not keep,
    which the Tensor method gave node.named (``default`` where the node was made otherwise)."""
    return lambda fn: made.call_of(fn).get(key, default)


def _exact(key: str) -> Callable[[Any], Any]:
    """An option PyTorch's kernel takes as an int where it is a whole number (elu's scale)."""

    def read(fn: Any) -> Any:
        value = _option(fn, key)
        return int(value) if value == 1 else value

    return read


def _dims(fn: Any) -> tuple[int, ...]:
    """The dims reduced, all of them where none were given (logsumexp's, as PyTorch's)."""
    dims = _option(fn, "dims")
    return tuple(range(len(_shape(fn, 0)))) if dims is None else tuple(dims)


def _correction(fn: Any) -> Any:
    """var's correction: the count reduced less the degrees of freedom the node keeps."""
    shape = _shape(fn, 0)
    dims = range(len(shape)) if _option(fn, "dims") is None else _option(fn, "dims")
    return math.prod(shape[d] for d in dims) - _option(fn, "dof")


def _geometry(key: str) -> Callable[[Any], Any]:
    """A convolution's stride, padding, dilation or groups; padding one number a dim, or
    the (before, after) pair where they differ (padding="same" of an even kernel, which
    PyTorch's node sees as an input padded beforehand)."""

    def read(fn: Any) -> Any:
        value = _option(fn, "geometry")[key]
        return tuple(p[0] if p[0] == p[1] else p for p in value) if key == "padding" else value

    return read


def _unpadded(fn: Any) -> tuple[int, ...]:
    """A convolution's output_padding: 0 for each spatial dim."""
    return (0,) * len(_option(fn, "geometry")["stride"])


def _bias_sizes(fn: Any) -> tuple[int, ...]:
    """The bias's sizes, (0,) where there is none (as PyTorch's)."""
    if fn.inputs is None:
        shape = fn.__dict__["_kept"]["shapes"][2]
    else:
        shape = None if fn.inputs[2] is None else fn.inputs[2]._array.shape
    return (0,) if shape is None else tuple(shape)


def _number(i: int) -> Callable[[Any], Any]:
    """Input i, a number (pow's base in 2 ** x): kept by the snapshot."""
    return lambda fn: fn.__dict__["_kept"]["numbers"][i] if fn.inputs is None else fn.inputs[i]


def _pad(fn: Any) -> tuple[int, ...]:
    """constant_pad_nd's pad: (before, after) per dim from the last, as F.pad takes it."""
    widths = _option(fn, "widths")
    first = next((d for d, w in enumerate(widths) if any(w)), len(widths))
    return tuple(n for w in reversed(widths[first:]) for n in w)


def _kept_dim(fn: Any) -> bool:
    """Whether a value chosen per line (median's, kthvalue's) keeps the dim it was chosen on."""
    return len(_option(fn, "out_shape")) == len(_shape(fn, 0)) > 0


def _moved(fn: Any) -> list[int]:
    return [i for i, d in enumerate(_option(fn, "dims")) if i != d]


def _swapped(i: int) -> Callable[[Any], Any]:
    """transpose's dim0 or dim1, as given (else the permute's two moved dims, in order)."""
    return lambda fn: (
        called(f"dim{i}", None)(fn) if called(f"dim{i}")(fn) is not None else _moved(fn)[i]
    )


_MM = {
    "self_sym_sizes": _sizes(0), "self_sym_strides": _strides(0),
    "mat2_sym_sizes": _sizes(1), "mat2_sym_strides": _strides(1),
}  # fmt: skip
_INDEXED = {"dim": called("dim"), "source_dim": lambda fn: len(_shape(fn, 1))}  # index_add's
_SCALED = {"alpha": _opt("alpha"), "beta": _opt("beta")}  # the add-products' scalars, as given
_REDUCED = {
    "dim": lambda fn: tuple(_option(fn, "dims")),
    "keepdim": lambda fn: _option(fn, "keepdim"),
}


def _dims_given(fn: Any) -> Any:
    """The dims of a sum or mean as its call gave them where it reduced every dim (None or
    (), kept by node.named), else the dims it reduced."""
    given = called("dim", ())(fn)
    return given if _option(fn, "dims") is None else tuple(_option(fn, "dims"))


_REDUCED_ALL = {"dim": lambda fn: () if _option(fn, "dims") is None else tuple(_option(fn, "dims"))}

_SPREAD = {  # var's and std's, alone or with the mean
    "correction": lambda fn: called("correction", _correction(fn))(fn),
    "dim": lambda fn: None if _option(fn, "dims") is None else tuple(_option(fn, "dims")),
    "keepdim": _opt("keepdim"),
}

# PyTorch's node name -> its saved values that are not tensors
VALUES: dict[str, dict[str, Callable[[Any], Any]]] = {
    "AddBackward0": {"alpha": _one},
    "AddcmulBackward0": {"value": _opt("value")},
    "AddcdivBackward0": {"value": _opt("value")},
    "LerpBackward0": {"weight": _number(2)},
    "SubBackward0": {"alpha": _one},
    "PowBackward0": {
        "exponent": lambda fn: _option(fn, "exponent") if fn.inputs is None else fn.inputs[1]
    },
    "SumBackward0": {"self_sym_sizes": _sizes(0)},
    "SumBackward1": {**_REDUCED, "dim": _dims_given, "self_sym_sizes": _sizes(0)},
    "NansumBackward0": {**_REDUCED, "dim": _dims_given},
    "MeanBackward0": {
        "self_sym_numel": lambda fn: math.prod(_shape(fn, 0)),
        "self_sym_sizes": _sizes(0),
    },
    "MeanBackward1": {
        **_REDUCED,
        "dim": _dims_given,
        "self_sym_numel": lambda fn: math.prod(_shape(fn, 0)),
        "self_sym_sizes": _sizes(0),
    },
    "MmBackward0": _MM,
    "Linear.MmBackward0": {
        "self_sym_sizes": _sizes(0),
        "self_sym_strides": _strides(0),
        "mat2_sym_sizes": lambda fn: _shape(fn, 1)[::-1],
        "mat2_sym_strides": lambda fn: _strides(1)(fn)[::-1],
    },  # fmt: skip
    "Linear.AddmmBackward0": {
        "alpha": _one,
        "beta": _one,
        "mat1_sym_sizes": _sizes(0),
        "mat1_sym_strides": _strides(0),
        # mat2 is the weight's transpose: its sizes and strides are the weight's, reversed
        "mat2_sym_sizes": lambda fn: _shape(fn, 1)[::-1],
        "mat2_sym_strides": lambda fn: _strides(1)(fn)[::-1],
    },  # fmt: skip
    "ViewBackward0": {"self_sym_sizes": _sizes(0)},
    "TransposeBackward0": {"dim0": _swapped(0), "dim1": _swapped(1)},
    "PermuteBackward0": {"dims": lambda fn: tuple(_option(fn, "dims"))},
    "SelectBackward0": _index_step("dim", "index", "self_sym_sizes"),
    "SliceBackward0": _index_step("dim", "end", "self_sym_sizes", "start", "step"),
    "SoftmaxBackward0": {"dim": lambda fn: _option(fn, "dim")},
    "LogSoftmaxBackward0": {"dim": lambda fn: _option(fn, "dim")},
    **dict.fromkeys(
        ("VarBackward0", "StdBackward0", "VarMeanBackward0", "StdMeanBackward0"), _SPREAD
    ),
    "ProdBackward1": {"dim": lambda fn: _option(fn, "dims")[0], "keepdim": _opt("keepdim")},
    **dict.fromkeys(
        ("ScatterReduceBackward0", "IndexReduceBackward0"),
        {"dim": _opt("dim"), "include_self": _opt("include_self"), "reduce": _opt("reduce")},
    ),
    "CdistBackward0": {"p": _opt("p")},
    "EuclideanDist.ViewBackward0": {"self_sym_sizes": _opt("out_shape")},  # cdist by products
    "SelectScatterBackward0": made.as_given("dim", "index"),
    "SliceScatterBackward0": made.as_given("dim", "start", "end", "step"),
    "MaskedScatterBackward0": {"source_sym_sizes": _opt("source_shape")},
    "UnbindBackward0": {"dim": _opt("dim")},
    "SplitBackward0": {
        "dim": _opt("dim"),
        "self_sym_sizes": _opt("self_sizes"),
        "split_size": _opt("split_size"),
    },
    "SplitWithSizesBackward0": {
        "dim": _opt("dim"),
        "self_sym_sizes": _opt("self_sizes"),
        "split_sizes": _opt("split_sizes"),
    },
    "UnsafeSplitBackward0": {
        "dim": _opt("dim"),
        "self_sym_sizes": _opt("self_sizes"),
        "split_size": _opt("split_size"),
    },
    "LogsumexpBackward0": {"dim": _dims, "keepdim": _opt("keepdim")},
    "AmaxBackward0": {**_REDUCED_ALL, "keepdim": _opt("keepdim")},
    "AminBackward0": {**_REDUCED_ALL, "keepdim": _opt("keepdim")},
    "ClampBackward1": {"max": _opt("hi"), "min": _opt("lo")},
    "EluBackward0": {
        # the node keeps alpha * scale; exact for elu (scale 1) and for selu's two constants
        "alpha": lambda fn: _option(fn, "coef") / _option(fn, "scale"),
        "input_scale": _exact("input_scale"),
        "scale": _exact("scale"),
    },
    "CeluBackward0": {"alpha": _opt("coef")},
    "HardtanhBackward0": {"max_val": called("max_val"), "min_val": called("min_val")},
    "AminmaxBackward0": {"dim": called("dim"), "keepdim": _opt("keepdim")},
    "IndexFillBackward0": {"dim": called("dim")},
    "CatBackward0": {"dim": _opt("dim")}, "StackBackward0": {"dim": _opt("dim")},
    "CumsumBackward0": {"dim": _opt("dim")}, "CumprodBackward0": {"dim": _opt("dim")},
    "LogcumsumexpBackward0": {"dim": _opt("dim")},
    "GatherBackward0": {"dim": _opt("dim"), "sparse_grad": lambda fn: False},
    "GeluBackward0": {"approximate": _opt("approximate")},
    "LogitBackward0": {"eps": _opt("eps")},
    "PolygammaBackward0": {"n": _opt("n")},
    "LeakyReluBackward0": {"negative_slope": _opt("slope")},
    "ExpandBackward0": {"self_sym_sizes": _sizes(0)},
    "DiagEmbedBackward0": {k: made.given_or_kept(k) for k in ("dim1", "dim2", "offset")},
    "LinalgVectorNormBackward0": {
        "dim": lambda fn: None if _option(fn, "dim") is None else tuple(_option(fn, "dim")),
        "keepdim": _opt("keepdim"),
        "ord": lambda fn: called("ord", _option(fn, "p"))(fn),
    },
    "NormBackward1": {  # at::norm's, which pairwise_distance calls: p a float
        "dim": lambda fn: None if _option(fn, "dim") is None else tuple(_option(fn, "dim")),
        "keepdim": _opt("keepdim"),
        "p": _opt("p"),
    },
    "LinalgSolveTriangularBackward0": {
        "left": lambda fn: _option(fn, "options")[1],
        "unitriangular": lambda fn: _option(fn, "options")[2],
        "upper": lambda fn: _option(fn, "options")[0],
    },
    "TriangularSolveBackward0": {k: _opt(k) for k in ("upper", "transpose", "unitriangular")},
    "CholeskySolveBackward0": {"upper": _opt("upper")},
    "CholeskyInverseBackward0": {"upper": _opt("upper")},
    "LinalgCholeskyExBackward0": {"upper": _opt("upper")},
    "CholeskyBackward0": {"upper": _opt("upper")}, "MvlgammaBackward0": {"p": _opt("p")},
    "LinalgLuSolveBackward0": {
        "adjoint": lambda fn: _option(fn, "options")[1],
        "left": lambda fn: _option(fn, "options")[0],
    },
    "LuUnpackBackward0": {
        "LU_data_sym_argsize_minus_1": lambda fn: _shape(fn, 0)[-1],
        "LU_data_sym_argsize_minus_2": lambda fn: _shape(fn, 0)[-2],
    },
    "Convolution.ConvolutionBackward0": {
        "bias_sym_sizes_opt": _bias_sizes,
        "dilation": _geometry("dilation"),
        "groups": _geometry("groups"),
        "output_padding": lambda fn: called("output_padding", _unpadded(fn))(fn),
        "padding": lambda fn: called("padding", _geometry("padding")(fn))(fn),
        "stride": _geometry("stride"),
        "transposed": lambda fn: False,
    },
    "ConvTranspose.ConvolutionBackward0": {
        "bias_sym_sizes_opt": _bias_sizes,
        "dilation": _geometry("dilation"),
        "groups": _geometry("groups"),
        "output_padding": lambda fn: called("output_padding", _unpadded(fn))(fn),
        "padding": _geometry("padding"),
        "stride": _geometry("stride"),
        "transposed": lambda fn: True,
    },
    "PowBackward2": {"self": _number(0)},
    "XlogyBackward2": {"other": _number(1)},
    **dict.fromkeys(
        ("Gather.SortBackward0", "Gather.SortBackward1", "Gather.TopkBackward0"),
        {"dim": _opt("dim"), "self_sym_sizes": _sizes(0)},
    ),
    **dict.fromkeys(
        ("Gather.MaxBackward0", "Gather.MinBackward0"),  # keepdim: else a view follows
        {"dim": _opt("dim"), "keepdim": lambda fn: True, "self_sym_sizes": _sizes(0)},
    ),
    "LinalgQrBackward0": {"mode": _opt("mode")},
    "LinalgLuBackward0": {"pivot": lambda fn: True},  # chainrule's LU always pivots
    "LinalgLuFactorExBackward0": {"pivot": lambda fn: True},
    "LinalgSvdBackward0": {
        "S_sym_argsize_minus_1": lambda fn: min(_shape(fn, 0)[-2:]),  # S's last size
        "full_matrices": _opt("full"),
    },
    "NativeLayerNormBackward0": {"normalized_shape": lambda fn: _shape(fn, 0)[-_option(fn, "k") :]},
    "RsubBackward1": {"alpha": _one},
    "SoftplusBackward0": {"beta": _opt("beta"), "threshold": _opt("threshold")},
    "SoftshrinkBackward0": {"lambd": _opt("lambd")},
    "HardshrinkBackward0": {"lambd": _opt("lambd")},
    # F.threshold's; the other piecewise ops this node stands for (prelu's x > 0) keep none
    "ThresholdBackward0": {"threshold": called("threshold", 0)},
    "DivBackward2": {"rounding_mode": _opt("rounding_mode")},
    # a tensor over a number (cross_entropy's), or times one (PyTorch's mul.Scalar)
    **dict.fromkeys(("DivBackward1", "MulBackward1"), {"other": called("other")}),
    "ClampMinBackward0": {"min": _opt("lo")},
    "ClampMaxBackward0": {"max": _opt("hi")},
    "SqueezeBackward0": {"self_sym_sizes": _sizes(0)},
    **dict.fromkeys(
        ("SqueezeBackward1", "SqueezeBackward2"),
        {"dim": made.unsigned_dims, "self_sym_sizes": _sizes(0)},
    ),
    "UnsqueezeBackward0": made.as_given("dim"),
    "GetItem.UnsqueezeBackward0": _index_step("dim"),  # an index's last None
    # matmul's and linear's one node, for PyTorch's product and the view after it
    **dict.fromkeys(
        ("MatMul.UnsafeViewBackward0", "Linear.UnsafeViewBackward0", "Linear.ViewBackward0")
        + ("MatMul.ViewBackward0",),  # tensordot's product, viewed as it is
        {"self_sym_sizes": made.product_sizes},
    ),
    **dict.fromkeys(  # a vector times a matrix: PyTorch's mm of it unsqueezed, squeezed
        ("MatMul.SqueezeBackward4", "Linear.SqueezeBackward4"),
        {"dim": lambda fn: 0, "self_sym_sizes": lambda fn: (1, *made.product_sizes(fn)[-1:])},
    ),
    "Reshape.UnsafeViewBackward0": {"self_sym_sizes": _sizes(0)},  # a copying reshape's
    "ReshapeAliasBackward0": {"self_sym_sizes": _sizes(0)},  # tensorinv's
    # an index standing for PyTorch's view of a copy (repeat_interleave's), or for its stack
    # of indexed pieces (combinations')
    "GetItem.ViewBackward0": {"self_sym_sizes": called("sizes")},
    "GetItem.StackBackward0": {"dim": called("dim")},
    "IndexPutBackward0": {"accumulate": lambda fn: fn.op == "ScatterAdd"},  # added, or written
    # the in-place overloads (squeeze_, transpose_...): the view's node, renamed
    "SqueezeBackward3": {"self_sym_sizes": _sizes(0)},
    **dict.fromkeys(  # quantile's last squeeze (of sizes it gives) is a reshape's node
        ("Reshape.SqueezeBackward4", "SqueezeBackward5"),
        {
            "dim": made.unsigned_dims,
            "self_sym_sizes": lambda fn: called("sizes")(fn) or _shape(fn, 0),
        },
    ),
    "UnsqueezeBackward1": {"dim": called("dim")},
    "TransposeBackward1": {"dim0": _swapped(0), "dim1": _swapped(1)},
    "AsStridedBackward1": {k: called(k) for k in ("size", "storage_offset", "stride")},
    **dict.fromkeys(  # a 0-d tensor's sort and topk: a reshape
        ("Reshape.SortBackward0", "Reshape.TopkBackward0"),
        {"dim": called("dim"), "self_sym_sizes": called("sizes")},
    ),
    "TrilBackward0": {"diagonal": called("diagonal")},
    "TriuBackward0": {"diagonal": called("diagonal")},
    "DiagonalBackward0": {
        "dim1": made.given_or_kept("dim1"),
        "dim2": made.given_or_kept("dim2"),
        "offset": _opt("offset"),
        "self_sym_sizes": _sizes(0),
    },
    "UnfoldBackward0": {
        "dimension": _opt("dim"),
        "self_sym_sizes": _sizes(0),
        "size": _opt("size"),
        "step": _opt("step"),
    },
    "ConstantPadNdBackward0": {"pad": _pad},
    "AsStridedBackward0": {k: called(k) for k in ("size", "storage_offset", "stride")},
    "NarrowCopyBackward0": {**made.as_given("dim", "length", "start"), "self_sym_sizes": _sizes(0)},
    "IndexSelectBackward0": {"dim": called("dim"), "self_sym_sizes": called("sizes")},
    "ScatterBackward0": {"dim": _opt("dim")},
    "ScatterAddBackward0": {"dim": called("dim")},
    "IndexCopyBackward0": _INDEXED, "IndexAddBackward0": {"alpha": _opt("alpha"), **_INDEXED},
    # the sizes its arrays index: its input's, less what its basic parts take first
    "IndexBackward0": {"self_sym_sizes": lambda fn: index_steps(fn)[-1][3]},
    "ScaledDotProductFlashAttentionForCpuBackward0": {
        "dropout_p": called("dropout_p", 0.0),
        "is_causal": _opt("is_causal"),
        "scale": called("scale"),
    },
    "MaxPool2DWithIndicesBackward0": {
        k: called(k) for k in ("ceil_mode", "dilation", "kernel_size", "padding", "stride")
    },
    # the spatial ops' and the losses' arguments, as their functions record them
    # (saved_spatial.py, saved_losses.py)
    **{
        name: {k: called(k) for k in keys.split()}
        for name, keys in {**spatial.ARGS, **losses.ARGS}.items()
    },
    "AvgPool2DBackward0": {
        k: called(k)
        for k in ("ceil_mode", "count_include_pad", "divisor_override", "kernel_size")
        + ("padding", "stride")
    },
    **dict.fromkeys(
        ("NllLossBackward0", "NllLoss2DBackward0"),
        {
            "ignore_index": lambda fn: made.unsigned(called("ignore_index", -100)(fn)),
            "reduction": lambda fn: ("none", "mean", "sum").index(_option(fn, "reduction")),
        },
    ),
    **dict.fromkeys(
        ("MedianBackward1", "NanmedianBackward1", "KthvalueBackward0", "ModeBackward0"),
        {"dim": _opt("dim"), "keepdim": _kept_dim, "self_sym_sizes": _sizes(0)},
    ),
    **dict.fromkeys(  # a 0-d input's, or a gather's squeezed (PyTorch's one node)
        ("MaxBackward0", "MinBackward0"),
        {"dim": called("dim"), "keepdim": called("keepdim"), "self_sym_sizes": called("sizes")},
    ),
    "CummaxBackward0": {"dim": _opt("dim")}, "CumminBackward0": {"dim": _opt("dim")},
    "LinalgSolveExBackward0": {"left": _opt("left")},
    "LinalgCrossBackward0": {"dim": _opt("dim")},
    "TraceBackward0": {"self_sym_sizes": _sizes(0)},
    "DiagonalScatterBackward0": {k: _opt(k) for k in ("dim1", "dim2", "offset")},
    "FlipBackward0": {"dims": called("dims")},
    "Rot90Backward0": {  # as given, PyTorch's negative values shown unsigned
        "dims": lambda fn: tuple(d % 2**64 for d in _option(fn, "dims")),
        "k": lambda fn: _option(fn, "k") % 2**64,
    },
    "PutBackward0": {"accumulate": _opt("accumulate")},
    "RollBackward0": {"dims": called("dims", ()), "shifts": _opt("shifts")},
    "AddmmBackward0": {
        **_SCALED,
        "mat1_sym_sizes": _sizes(1), "mat1_sym_strides": _strides(1),
        "mat2_sym_sizes": _sizes(2), "mat2_sym_strides": _strides(2),
    },
    "BaddbmmBackward0": _SCALED, "AddmvBackward0": _SCALED, "AddrBackward0": _SCALED,
    "AddbmmBackward0": {
        **_SCALED,
        "batch1_sym_argsize_0": lambda fn: _shape(fn, 1)[0],
        "batch1_sym_argsize_1": lambda fn: _shape(fn, 1)[1],
        "batch2_sym_argsize_2": lambda fn: _shape(fn, 2)[2],
    },
    # repeat's, glu's and the fills' arguments, as their methods record them (dims as given)
    "RepeatBackward0": {"repeats": called("repeats"), "self_sym_sizes": called("self_sym_sizes")},
    **dict.fromkeys(
        ("GluBackward0", "ScatterBackward1", "IndexFillBackward1"), {"dim": called("dim")}
    ),
}  # fmt: skip


_RESULT: dict[str, TensorSpec] = {"result": ("result",)}
_SELF: dict[str, TensorSpec] = {"self": ("input", 0, None)}

# PyTorch's node name -> its saved tensors
TENSORS: dict[str, dict[str, TensorSpec]] = {
    "MulBackward0": {"other": ("input", 1, 0), "self": ("input", 0, 1)},
    "DivBackward0": {"other": ("input", 1, None), "self": ("input", 0, 1)},
    "PowBackward0": _SELF,
    "NansumBackward0": _SELF,
    "MmBackward0": {"mat2": ("input", 1, 0), "self": ("input", 0, 1)},
    "LinalgCrossBackward0": {"self": ("input", 0, 1), "other": ("input", 1, 0)},
    "PutBackward0": {"index": ("option", "index"), "source": ("input", 1, None)},
    "AddmmBackward0": {"mat1": ("input", 1, 2), "mat2": ("input", 2, 1)},
    "BaddbmmBackward0": {"batch1": ("input", 1, 2), "batch2": ("input", 2, 1)},
    "AddmvBackward0": {"mat": ("input", 1, 2), "vec": ("input", 2, 1)},
    "AddrBackward0": {"vec1": ("input", 1, 2), "vec2": ("input", 2, 1)},
    "AddbmmBackward0": {"batch1": ("input", 1, 2), "batch2": ("input", 2, 1)},
    "Linear.MmBackward0": {"mat2": ("input.mT", 1, 0), "self": ("input", 0, 1)},
    "Linear.AddmmBackward0": {"mat1": ("input", 0, 1), "mat2": ("input.mT", 1, 0)},
    **dict.fromkeys(
        ("LogBackward0", "AbsBackward0", "SinBackward0", "CosBackward0", "AsinBackward0")
        + ("AcosBackward0", "AtanBackward0", "AsinhBackward0", "AcoshBackward0")
        + ("AtanhBackward0", "Log1PBackward0", "ErfBackward0", "ErfcBackward0")
        + ("ErfinvBackward0", "CoshBackward0", "SinhBackward0", "DigammaBackward0")
        + ("LgammaBackward0", "SincBackward0", "I0Backward0", "Log2Backward0", "Log10Backward0"),
        _SELF,
    ),
    **dict.fromkeys(
        ("MaximumBackward0", "MinimumBackward0", "Atan2Backward0"),
        {"other": ("input", 1, None), "self": ("input", 0, None)},
    ),
    **dict.fromkeys(
        ("ExpBackward0", "TanhBackward0", "SigmoidBackward0", "ReluBackward0", "SqrtBackward0")
        + ("SoftmaxBackward0", "LogSoftmaxBackward0", "ReciprocalBackward0", "TanBackward0")
        + ("Expm1Backward0", "Exp2Backward0"),
        _RESULT,
    ),
    **dict.fromkeys(
        ("VarBackward0", "VarMeanBackward0", "ClampBackward1", "EluBackward0", "CeluBackward0")
        + ("MishBackward0", "GeluBackward0", "LogitBackward0", "PolygammaBackward0")
        + ("LeakyReluBackward0", "HardswishBackward0", "HardsigmoidBackward0", "NanToNumBackward0")
        + ("SpecialEntrBackward0", "LinalgMatrixExpBackward0", "SiluBackward0"),
        _SELF,
    ),
    **dict.fromkeys(
        ("LogsumexpBackward0", "AmaxBackward0", "AminBackward0", "CumprodBackward0")
        + ("LogcumsumexpBackward0", "LinalgPinvBackward0", "SpecialI0EBackward0")
        + ("SpecialI1Backward0", "SpecialI1EBackward0", "SpecialLogNdtrBackward0")
        + ("SpecialErfcxBackward0", "CopysignBackward0", "CopysignBackward1")
        + ("LinalgVectorNormBackward0", "NormBackward1", "StdBackward0", "ProdBackward0")
        + ("ProdBackward1",),
        {**_SELF, **_RESULT},
    ),
    **dict.fromkeys(
        ("LogaddexpBackward0", "Logaddexp2Backward0", "FmaxBackward0", "FminBackward0")
        + ("XlogyBackward0", "SpecialXlog1PyBackward0", "FmodBackward1")
        + ("SpecialZetaBackward0", "IgammaBackward0", "IgammacBackward0"),
        {"other": ("input", 1, None), "self": ("input", 0, None)},
    ),
    "SpecialNdtriBackward0": _RESULT,
    "RsqrtBackward0": _RESULT,
    "AddcmulBackward0": {"tensor1": ("input", 1, 2), "tensor2": ("input", 2, 1)},
    "AddcdivBackward0": {"tensor1": ("input", 1, 2), "tensor2": ("input", 2, None)},
    "LerpBackward1": {
        "end": ("input", 1, 2), "self": ("input", 0, 2), "weight": ("input", 2, None)
    },
    "RemainderBackward1": {"other": ("input", 1, 1), "self": ("input", 0, 1)},
    "CdistBackward0": {"result": ("result",), "x1": ("input", 0, None), "x2": ("input", 1, None)},
    "MaskedScatterBackward0": {"mask": ("called", "mask")},
    "TakeBackward0": {"index": ("called", "index"), "self": ("input", 0, None)},
    "MaskedSelectBackward0": {"mask": ("called", "mask"), "self": ("input", 0, None)},
    "VdotBackward0": {"other": ("input", 1, 0), "self": ("input", 0, 1)},
    "BmmBackward0": {"mat2": ("input", 1, 0), "self": ("input", 0, 1)},
    "IndexFillBackward0": {"index": ("called", "index")},
    "AminmaxBackward0": {
        "max": ("made", None, lambda fn: fn.saved_result[1]),
        "min": ("made", None, lambda fn: fn.saved_result[0]),
        **_SELF,
    },
    "StdMeanBackward0": {"result0": ("made", None, lambda fn: fn.saved_result[0]), **_SELF},
    "LinalgInvExBackward0": {"inverse": ("result",)},
    "LinalgCholeskyExBackward0": {"L": ("result",)},
    "CholeskyBackward0": _RESULT, "MvlgammaBackward0": _SELF,
    "LinalgLuSolveBackward0": {
        "LU": ("input", 0, None), "pivots": ("option", "options", 2), "result": ("result",)
    },
    "HypotBackward0": {"other": ("input", 1, None), "result": ("result",), **_SELF},
    "LdexpBackward0": {"other": ("input", 1, None), "result": ("result",)},
    "PowBackward1": {"exponent": ("input", 1, None), "result": ("result",), **_SELF},
    "CholeskySolveBackward0": {"input2": ("input", 1, None), "result": ("result",), **_SELF},
    "CholeskyInverseBackward0": {"self": ("input", 1, None), "result": ("result",)},
    "LinalgSolveTriangularBackward0": {"result": ("result",), **_SELF},
    "LinalgHouseholderProductBackward0": {
        "input": ("input", 0, None), "tau": ("input", 1, None), "result": ("result",)
    },
    "DotBackward0": {"self": ("input", 0, 1), "tensor": ("input", 1, 0)},
    "MvBackward0": {"self": ("input", 0, 1), "vec": ("input", 1, 0)},
    "WhereBackward0": {"condition": ("input", 0, None)},
    "GatherBackward0": {"index": ("input", 1, None), **_SELF},
    "ScatterReduceBackward0": {
        "index": ("option", "index"), "result": ("result",), "self": ("input", 0, None),
        "src": ("input", 1, None),
    },
    "IndexReduceBackward0": {
        "index": ("called", "index"), "result": ("result",), "self": ("input", 0, None),
        "source": ("input", 1, None),
    },
    "LinalgQrBackward0": {"Q": ("option", "result", 0), "R": ("option", "result", 1)},
    "LinalgEighBackward0": {
        "eigenvalues": ("option", "result", 0), "eigenvectors": ("option", "result", 1),
    },
    "LinalgSvdBackward0": {
        "S": ("option", "result", 1), "U": ("made", 0, lambda fn: made.svd_part(fn, 0)),
        "Vh": ("made", 0, lambda fn: made.svd_part(fn, 2)),
    },
    "FrexpBackward0": {"exponent": ("option", "exponent")},
    **dict.fromkeys(
        ("Gather.SortBackward0", "Gather.SortBackward1", "Gather.TopkBackward0")
        + ("Gather.MaxBackward0", "Gather.MinBackward0"),
        {"indices": ("input", 1, None)},
    ),
    "MaxBackward1": {**_SELF, **_RESULT},
    "MinBackward1": {**_SELF, **_RESULT},
    "MaskedFillBackward0": {"mask": ("input", 0, None)},
    "MaskedFillBackward1": {"mask": ("input", 0, None)},
    "LinalgLuBackward0": {"L": ("lu", "L"), "P": ("lu", "P"), "U": ("lu", "U")},
    "LinalgLuFactorExBackward0": {"LU": ("option", "result", 0), "pivots": ("option", "result", 1)},
    "ClampBackward0": {"max": ("optional", 2), "min": ("optional", 1), **_SELF},
    "PowBackward2": {"exponent": ("input", 1, None), "result": ("result",)},
    "XlogyBackward2": _SELF,
    **dict.fromkeys(
        ("Convolution.ConvolutionBackward0", "ConvTranspose.ConvolutionBackward0"),
        {"input": ("input", 0, None), "weight": ("input", 1, None)},
    ),
    "NativeLayerNormBackward0": {
        "bias": ("optional", 2), "input": ("input", 0, None), "weight": ("optional", 1),
        "result1": ("stat", "mean"), "result2": ("stat", "rstd"),
    },
    **dict.fromkeys(
        ("SoftplusBackward0", "SoftshrinkBackward0", "HardshrinkBackward0", "ThresholdBackward0")
        + ("ClampMinBackward0", "ClampMaxBackward0", "HardtanhBackward0"),
        _SELF,
    ),
    "ClampMinBackward1": {"min": ("input", 1, None), **_SELF},
    "ClampMaxBackward1": {"max": ("input", 2, None), **_SELF},
    "AvgPool2DBackward0": _SELF,
    "NextafterBackward0": {"other": ("input", 1, None), "self": ("input", 0, None)},
    "DivBackward2": {"other": ("input", 1, None), "self": ("input", 0, 1)},
    "SgnBackward0": {"result": ("made", 0, lambda fn: array.xp.sign(fn.inputs[0]._array)), **_SELF},
    "LogSigmoidBackward0": {
        "buffer": ("made", 0, lambda fn: array.xp.exp(-abs(fn.inputs[0]._array))), **_SELF,
    },
    "IndexSelectBackward0": {"index": ("called", "index")},
    "ScatterBackward0": {"index": ("option", "index")},
    "ScatterAddBackward0": {"index": ("called", "index", 1)},
    "IndexAddBackward0": {"index": ("called", "index", 1), "source": ("input", 1, 1)},
    "IndexCopyBackward0": {"index": ("called", "index"), "source": ("input", 1, 1)},
    **dict.fromkeys(
        ("IndexBackward0", "IndexPutBackward0"), {"indices": ("made", None, made.indices)}
    ),
    **dict.fromkeys(
        ("Reshape.SortBackward0", "Reshape.TopkBackward0"), {"indices": ("called", "indices")}
    ),
    "ScaledDotProductFlashAttentionForCpuBackward0": {
        "attn_mask": ("optional", 3), "key": ("input", 1, None),
        "logsumexp": ("made", 0, made.attention_logsumexp),
        "output": ("made", 2, made.attention_output),
        "query": ("input", 0, None), "value": ("input", 2, None),
    },
    "MaxPool2DWithIndicesBackward0": {"result1": ("made", None, made.pool_indices), **_SELF},
    **spatial.TENSORS,
    **losses.TENSORS,
    "LinalgLstsqBackward0": {
        "b": ("called", "b"), "self": ("input", 0, None), "solution": ("called", "solution"),
    },
    **dict.fromkeys(
        ("MaxBackward0", "MinBackward0"), {"indices": ("called", "indices")}
    ),
    **dict.fromkeys(
        ("MedianBackward1", "NanmedianBackward1", "KthvalueBackward0", "ModeBackward0"),
        {"indices": ("made", None, lambda fn: made.chosen(fn))},
    ),
    **dict.fromkeys(
        ("CummaxBackward0", "CumminBackward0"),
        {"indices": ("made", None, lambda fn: made.chosen(fn)), **_SELF},
    ),
    **dict.fromkeys(
        ("MedianBackward0", "NanmedianBackward0"),
        {"result": ("made", 0, lambda fn: made.shared(fn)), **_SELF},
    ),
    **dict.fromkeys(("LinalgDetBackward0", "LinalgSolveExBackward0"), {
        "A": ("input", 0, None), "LU": ("made", 0, lambda fn: made.lu(fn)[0]),
        "pivots": ("made", 0, lambda fn: made.lu(fn)[1]), "result": ("result",),
    }),
    "LinalgSlogdetBackward0": {
        "A": ("input", 0, None), "LU": ("made", 0, lambda fn: made.lu(fn)[0]),
        "pivots": ("made", 0, lambda fn: made.lu(fn)[1]), "sign": ("made", 0, made.slogdet_sign),
    },
    "TriangularSolveBackward0": {
        "A": ("input", 1, None), "solution": ("made", None, made.solution), **_SELF
    },
    "GluBackward0": _SELF,
    **dict.fromkeys(("ScatterBackward1", "IndexFillBackward1"), {"index": ("called", "index")}),
}  # fmt: skip


def table_key(op: str, name: str) -> str:
    """The entry in the tables of a node of ``op`` named ``name``: the name, or "Op.Name" for
    an op whose node of that name stands for other work than PyTorch's op of the name
    (linear's is addmm of W.t(), einsum's one node PyTorch's last view of several; a
    transposed convolution's node is PyTorch's convolution of other inputs), or where the
    tables hold "Op.Name": a name that several ops' nodes take (sort's is a gather's). A _copy
    op's node (DiagonalBackward0_copy) saves what its view's does, where it is the view's op
    (not an index standing for a view that gave its input itself, or for a split's piece)."""
    if name.endswith("_copy") and (op != "GetItem" or name.startswith(("Select", "Slice"))):
        name = name.removesuffix("_copy")
    key = f"{op}.{name}"
    if op in ("Linear", "Einsum", "Convolution", "ConvTranspose") or key in VALUES:
        return key
    return name


def key_of(fn: Any) -> str:
    return table_key(getattr(fn, "op", ""), type(fn).__name__)


def shown(fn: Any) -> list[str]:
    """Every ``_saved_*`` the node has, for dir() (sorted, as PyTorch's dir lists them)."""
    key = key_of(fn)
    return sorted(PREFIX + k for k in {**VALUES.get(key, {}), **TENSORS.get(key, {})})


def snapshots(name: str) -> bool:
    """Whether a node of this name keeps a snapshot at release: its values read its inputs'
    shapes or its options (constants such as add's alpha need none)."""
    return any(get is not _one for get in VALUES.get(name, {}).values())


def snapshot(fn: Any) -> dict[str, Any]:
    """What release keeps for the saved values that are not tensors: the inputs' shapes,
    the products' strides, and the options among OPTIONS (release calls it only for the node
    types that ``snapshots``, so that other nodes pay nothing)."""
    inputs, own = fn.inputs, fn.__dict__
    # an array option (gather's index) is a saved tensor: freed, as PyTorch frees it
    kept = {k: v for k, v in own.items() if k in OPTIONS and not isinstance(v, array.ndarray)}
    if "call" in kept:  # the call's arrays (nll_loss's target) likewise: refused, not None
        kept["call"] = {
            k: FREED if isinstance(v, array.ndarray) else v for k, v in kept["call"].items()
        }
    kept["shapes"] = [getattr(getattr(x, "_array", None), "shape", None) for x in inputs]
    if type(fn).__name__ in ("MmBackward0", "AddmmBackward0"):  # Linear's: x, W (and b)
        kept["strides"] = [x.stride() if isinstance(x, tensor_type()) else () for x in inputs[:3]]
    if type(fn).__name__ == "PowBackward0":
        kept["exponent"] = inputs[1]
    if type(fn).__name__ in ("PowBackward2", "XlogyBackward2", "LerpBackward0"):
        kept["numbers"] = [None if isinstance(x, tensor_type()) else x for x in inputs]
    return kept


NUMBER = "number"  # an edge from an input that is no tensor (node.edges)
REFLECTED = frozenset({"MulBackward0", "AddBackward0"})


def reflected(fn: Any) -> bool:
    """Whether PyTorch's node holds the operands the other way round: a number first
    (``2 * x``), which PyTorch's reflected operator passes second (``x.mul(2)``)."""
    if type(fn).__name__ not in REFLECTED:
        return False
    if fn.inputs is None:
        return fn.__dict__["_edges"][0] is NUMBER  # type: ignore[no-any-return]
    return not isinstance(fn.inputs[0], tensor_type())
