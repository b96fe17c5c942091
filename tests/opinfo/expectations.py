"""What the op database run expects beside agreement: chainrule's deliberate refusals (an op
and the reason its message gives) and the known disagreements, which run as strict expected
failures, so the list can only shrink."""

from __future__ import annotations

# ruff: noqa: E501  (the known disagreements are one line each, as a grep shows them)

# op (op_db's name, every variant of it) -> phrases of chainrule's refusal messages, each
# saying why it refuses what PyTorch computes.
REFUSALS: dict[str, tuple[str, ...]] = {
    # convolutions and pooling run on BLAS's floating-point products; integer images are
    # converted by the caller, as every model does
    "nn.functional.conv1d": ("needs a floating-point input",),
    "nn.functional.conv2d": ("needs a floating-point input",),
    "nn.functional.conv_transpose2d": ("needs a floating-point input",),
    "nn.functional.avg_pool2d": ("needs a floating-point input",),
    "nn.functional.max_pool2d": ("needs a floating-point input",),
    # cropping is slicing: pad only grows a tensor
    "nn.functional.pad": ("negative padding is not supported",),
    # einsum takes the explicit form of distinct letters, the one a reader can check by eye
    "einsum": ("only the explicit form", "one distinct letter a dim"),
    # chainrule has no sparse gradients: a dense one is always given
    "nn.functional.embedding": ("sparse gradients are not supported",),
}

# (op, form, dtype, samples, what is wrong): form and dtype "*" for every one the op has;
# samples by index, "*" for every one of the case. Written first by `python -m
# tests.opinfo.coverage --known`, which prints the list a run disagrees on.
Samples = int | tuple[int, ...] | str
# fmt: off
KNOWN: list[tuple[str, str, str, Samples, str]] = [
    ('arange', 'fn', 'int64', (10, 11, 14, 15, 18, 22, 23), 'out: shape (3,), PyTorch (2,)'),
    ('arange', 'fn', 'int32', (14, 18), 'out: Mismatched elements: 1 / 2 (50.0%)'),
    ('clamp_max', 'fn', 'float64', '*', 'grad[1]: Expected 1.5409961082440433 but got 0.0.'),
    ('clamp_min', 'fn', 'float64', (1, 2, 3, 4, 5, 6, 7, 8), 'grad[1]: Expected -1.084522342424021 but got 0.0.'),
    ('clamp', 'fn', 'float32', (5, 6), 'out: dtype float64, PyTorch float32'),
    ('clamp', 'fn', 'float64', (0, 1, 2, 3, 4, 6), 'grad[1]: Mismatched elements: 52 / 250 (20.8%)'),
    ('clamp', 'method', 'float32', (5, 6), 'out: dtype float64, PyTorch float32'),
    ('clamp', 'alias:clip', 'float32', (5, 6), 'out: dtype float64, PyTorch float32'),
    ('clamp', 'alias-method:clip', 'float32', (5, 6), 'out: dtype float64, PyTorch float32'),
    ('cumsum', 'fn', 'int32', 3, 'out: dtype int64, PyTorch int32'),
    ('cumsum', 'method', 'int32', 3, 'out: dtype int64, PyTorch int32'),
    ('cumprod', 'fn', 'int32', 9, 'out: dtype int64, PyTorch int32'),
    ('cumprod', 'method', 'int32', 9, 'out: dtype int64, PyTorch int32'),
    ('div.trunc_rounding', 'inplace', '*', '*', "internal error: TypeError: InPlace.div_() got an unexpected keyword argument 'rounding_mode'"),
    ('div.floor_rounding', 'fn', 'float64', '*', 'grad: RuntimeError: floor_divide: the derivative is not implemented (PyTorch has none either); got a'),
    ('div.floor_rounding', 'inplace', '*', '*', "internal error: TypeError: InPlace.div_() got an unexpected keyword argument 'rounding_mode'"),
    ('diag', 'fn', 'bool', 0, 'out: dtype int64, PyTorch bool'),
    ('diag', 'method', 'bool', 0, 'out: dtype int64, PyTorch bool'),
    ('linspace', 'fn', 'int64', (2, 5, 8, 11, 14, 17), 'out: Mismatched elements: 48 / 50 (96.0%)'),
    ('linspace', 'fn', 'int32', (2, 5, 8, 11, 14, 17), 'out: Mismatched elements: 48 / 50 (96.0%)'),
    ('linspace.tensor_overload', 'fn', 'int64', (6, 7, 8, 15, 16, 17, 24), 'out: Mismatched elements: 48 / 50 (96.0%)'),
    ('linspace.tensor_overload', 'fn', 'int32', (6, 7, 8, 15, 16, 17, 24), 'out: Mismatched elements: 48 / 50 (96.0%)'),
    ('var_mean', 'fn', '*', 8, "refuses: TypeError: var: unsupported operand type(s) for -: 'int' and 'NoneTyp"),
    ('var_mean.unbiased', '*', '*', '*', 'refuses: TypeError: var: dim must be an int or a tuple of ints; got bool'),
    ('std_mean', 'fn', '*', 8, "refuses: TypeError: var: unsupported operand type(s) for -: 'int' and 'NoneTyp"),
    ('std_mean.unbiased', '*', '*', '*', 'refuses: TypeError: std: dim must be an int or a tuple of ints; got bool'),
    ('softmax.with_dtype', '*', '*', '*', "refuses: TypeError: softmax: unexpected keyword arguments ['dtype']"),
    ('nn.functional.softmin.with_dtype', '*', '*', '*', "internal error: TypeError: softmin() got an unexpected keyword argument 'dtype'"),
    ('nn.functional.cosine_similarity', 'fn', '*', 7, 'out: Mismatched elements: 6 / 6 (100.0%)'),
    ('nn.functional.relu', 'inplace=True', 'float32', '*', 'input after: Expected 0.0 but got -0.06738138198852539.'),
    ('nn.functional.relu', 'inplace=True', 'float64', (1, 2, 3), 'input after: Mismatched elements: 1 / 5 (20.0%)'),
    ('nn.functional.relu', 'inplace=True', 'int64', (1, 2, 3), 'input after: Mismatched elements: 4 / 5 (80.0%)'),
    ('nn.functional.relu', 'inplace=True', 'int32', (1, 2, 3), 'input after: Mismatched elements: 4 / 5 (80.0%)'),
    ('nn.functional.conv_transpose2d', 'fn', 'float64', (2, 3), 'grad: ValueError: conv2dweightgrad: matmul: Input operand 1 has a mismatch in its core dimension 0, '),
    ('nn.functional.leaky_relu', 'inplace=True', '*', '*', 'input after: Mismatched elements: 50 / 100 (50.0%)'),
    ('nn.functional.avg_pool2d', 'fn', 'float32', (3, 4, 5), 'refuses: TypeError: avg_pool2d: padding must be an int or a tuple of 2 ints; g'),
    ('nn.functional.avg_pool2d', 'fn', 'float64', (3, 4, 5), 'refuses: TypeError: avg_pool2d: padding must be an int or a tuple of 2 ints; g'),
    ('nn.functional.avg_pool2d', 'fn', 'int64', '*', 'refuses: TypeError: avg_pool2d: needs a floating-point tensor; got dtype chain'),
    ('nn.functional.elu', 'inplace=True', 'float32', 0, 'input after: Mismatched elements: 13 / 20 (65.0%)'),
    ('nn.functional.elu', 'inplace=True', 'float64', (0, 2), 'input after: Mismatched elements: 11 / 20 (55.0%)'),
    ('nn.functional.prelu', 'fn', '*', 7, 'out: shape (1,), PyTorch ()'),
    ('nn.functional.celu', 'inplace=True', 'float32', 0, 'input after: Mismatched elements: 13 / 20 (65.0%)'),
    ('nn.functional.celu', 'inplace=True', 'float64', (0, 2), 'input after: Mismatched elements: 11 / 20 (55.0%)'),
    ('nn.functional.selu', 'inplace=True', '*', (0, 2), 'input after: Mismatched elements: 20 / 20 (100.0%)'),
    ('nn.functional.silu', 'inplace=True', '*', (0, 2), 'input after: Mismatched elements: 20 / 20 (100.0%)'),
    ('nn.functional.mish', 'inplace=True', '*', (0, 2), 'input after: Mismatched elements: 19 / 20 (95.0%)'),
    ('nn.functional.threshold', 'inplace=True', 'float32', '*', 'input after: Expected -7.407406330108643 but got -0.06738138198852539.'),
    ('nn.functional.threshold', 'inplace=True', 'float64', (1, 2, 3), 'input after: Mismatched elements: 2 / 5 (40.0%)'),
    ('nn.functional.threshold', 'inplace=True', 'int64', (1, 2, 3), 'input after: Mismatched elements: 4 / 5 (80.0%)'),
    ('nn.functional.threshold', 'inplace=True', 'int32', (1, 2, 3), 'input after: Mismatched elements: 4 / 5 (80.0%)'),
    ('to', 'method', '*', (0, 1, 2, 3, 4, 5, 6, 7), 'refuses: TypeError: to: expected'),
    ('topk', 'fn', 'int64', (0, 1, 2, 3, 4, 5, 6), 'out[1]: Mismatched elements: 20 / 150 (13.3%)'),
    ('topk', 'fn', 'int32', (0, 1, 2, 3, 4, 5, 6), 'out[1]: Mismatched elements: 20 / 150 (13.3%)'),
    ('topk', 'method', 'int64', (0, 1, 2, 3, 4, 5, 6), 'out[1]: Mismatched elements: 20 / 150 (13.3%)'),
    ('topk', 'method', 'int32', (0, 1, 2, 3, 4, 5, 6), 'out[1]: Mismatched elements: 20 / 150 (13.3%)'),
    ('nn.functional.batch_norm', 'fn', '*', (3, 4), 'refuses: ValueError: batch_norm: expected input of shape (N, C, *); got shape '),
    ('nn.functional.hardtanh', 'inplace=True', '*', (0, 1, 2, 4), 'input after: Mismatched elements: 22 / 25 (88.0%)'),
    ('nn.functional.relu6', 'inplace=True', 'float32', 0, 'input after: Mismatched elements: 14 / 20 (70.0%)'),
    ('nn.functional.relu6', 'inplace=True', 'float64', (0, 2), 'input after: Mismatched elements: 13 / 20 (65.0%)'),
    ('nn.functional.relu6', 'inplace=True', 'int64', 0, 'input after: Mismatched elements: 13 / 20 (65.0%)'),
    ('nn.functional.relu6', 'inplace=True', 'int32', 0, 'input after: Mismatched elements: 13 / 20 (65.0%)'),
    ('__ror__', '*', '*', '*', 'refuses: TypeError: expected 1 argument, got 2'),
    ('__rpow__', 'method', 'int64', (1, 2, 3, 4, 5, 6, 7), 'refuses: ValueError: pow: Integers to negative integer powers are not allowed;'),
    ('__rpow__', 'method', 'int32', (1, 2, 3, 4, 5, 6, 7), 'refuses: ValueError: pow: Integers to negative integer powers are not allowed;'),
    ('einsum', 'fn', 'int32', (0, 2), 'out: dtype int32, PyTorch int64'),
    ('gather', 'fn', '*', (4, 5, 6), 'refuses: ValueError: gather: index must be an integer tensor with 1 dims; got '),
    ('gather', 'method', '*', (4, 5, 6), 'refuses: ValueError: gather: index must be an integer tensor with 1 dims; got '),
    ('index_fill', 'fn', '*', (0, 1), 'out: shape (1,), PyTorch ()'),
    ('index_fill', 'method', '*', (0, 1), 'out: shape (1,), PyTorch ()'),
    ('index_fill', 'inplace', '*', (0, 1), "refuses: RuntimeError: index_fill_: the result's shape (1,) does not match the"),
    ('index_select', 'fn', '*', 0, 'internal error: IndexError: getitem: too many indices for array: array is 0-dimensional, but 1 were '),
    ('index_select', 'method', '*', 0, 'internal error: IndexError: getitem: too many indices for array: array is 0-dimensional, but 1 were '),
    ('index_add', 'fn', 'float32', (0, 1, 2), "refuses: ValueError: index_add: source must have shape (1,) (self's, with dim "),
    ('index_add', 'fn', 'float64', (0, 1, 2), "refuses: ValueError: index_add: source must have shape (1,) (self's, with dim "),
    ('index_add', 'fn', 'int64', (0, 1, 2), "refuses: ValueError: index_add: source must have shape (1,) (self's, with dim "),
    ('index_add', 'fn', 'int32', (0, 1, 2), "refuses: ValueError: index_add: source must have shape (1,) (self's, with dim "),
    ('index_add', 'fn', 'bool', (0, 1), "refuses: ValueError: index_add: source must have shape (1,) (self's, with dim "),
    ('index_add', 'method', 'float32', (0, 1, 2), "refuses: ValueError: index_add: source must have shape (1,) (self's, with dim "),
    ('index_add', 'method', 'float64', (0, 1, 2), "refuses: ValueError: index_add: source must have shape (1,) (self's, with dim "),
    ('index_add', 'method', 'int64', (0, 1, 2), "refuses: ValueError: index_add: source must have shape (1,) (self's, with dim "),
    ('index_add', 'method', 'int32', (0, 1, 2), "refuses: ValueError: index_add: source must have shape (1,) (self's, with dim "),
    ('index_add', 'method', 'bool', (0, 1), "refuses: ValueError: index_add: source must have shape (1,) (self's, with dim "),
    ('sort', 'fn', 'bool', 0, 'out[1]: Mismatched elements: 7999 / 8000 (100.0%)'),
    ('sort', 'method', 'bool', 0, 'out[1]: Mismatched elements: 7999 / 8000 (100.0%)'),
    ('scatter', 'fn', 'float32', (21, 22, 23, 24), 'refuses: ValueError: scatter: needs a tensor of'),
    ('scatter', 'fn', 'float64', (7, 8), 'refuses: ValueError: scatter: needs a tensor of'),
    ('scatter', 'fn', 'int64', (14, 15, 16, 17), 'refuses: ValueError: scatter: needs a tensor of'),
    ('scatter', 'fn', 'int32', (14, 15, 16, 17), 'refuses: ValueError: scatter: needs a tensor of'),
    ('scatter', 'fn', 'bool', (14, 15, 16, 17), 'refuses: ValueError: scatter: needs a tensor of'),
    ('scatter', 'method', 'float32', (21, 22, 23, 24), 'refuses: ValueError: scatter: needs a tensor of'),
    ('scatter', 'method', 'float64', (21, 22, 23, 24), 'refuses: ValueError: scatter: needs a tensor of'),
    ('scatter', 'method', 'int64', (14, 15, 16, 17), 'refuses: ValueError: scatter: needs a tensor of'),
    ('scatter', 'method', 'int32', (14, 15, 16, 17), 'refuses: ValueError: scatter: needs a tensor of'),
    ('scatter', 'method', 'bool', (14, 15, 16, 17), 'refuses: ValueError: scatter: needs a tensor of'),
    ('scatter', 'inplace', 'float32', (21, 22, 23, 24), 'refuses: ValueError: scatter: needs a tensor of'),
    ('scatter', 'inplace', 'float64', (21, 22, 23, 24), 'refuses: ValueError: scatter: needs a tensor of'),
    ('scatter', 'inplace', 'int64', (14, 15, 16, 17), 'refuses: ValueError: scatter: needs a tensor of'),
    ('scatter', 'inplace', 'int32', (14, 15, 16, 17), 'refuses: ValueError: scatter: needs a tensor of'),
    ('scatter', 'inplace', 'bool', (14, 15, 16, 17), 'refuses: ValueError: scatter: needs a tensor of'),
    ('normal.number_mean', 'fn', '*', 1, "internal error: TypeError: normal() got an unexpected keyword argument 'layout'"),
    ('scatter_add', 'fn', '*', 6, 'refuses: ValueError: scatter_add: needs a tensor of'),
    ('scatter_add', 'method', '*', 6, 'refuses: ValueError: scatter_add: needs a tensor of'),
    ('cat', 'fn', '*', 5, 'internal error: IndexError: cat: dim 1 is out of range for a tensor of shape (0,) (expected a dim in'),
    ('take_along_dim', 'fn', 'float64', (1, 2), 'grad: ValueError: indexadd: shapes (5, 2) cannot be broadcast together'),
    ('zero_', 'fn', 'bool', '*', "refuses: RuntimeError: fill_: the result's dtype int64 cannot be written into "),
    ('log_softmax.with_dtype', '*', '*', '*', "refuses: TypeError: log_softmax: unexpected keyword arguments ['dtype']"),
    ('norm', 'fn', 'float64', (1, 11), 'grad: RuntimeError: grad: output 0 does not require grad and has no grad_fn'),
    ('norm.nuc', '*', '*', '*', "internal error: TypeError: '<' not supported between instances of 'int' and 'str'"),
    ('norm.fro', 'fn', '*', (1, 2), "internal error: TypeError: '<' not supported between instances of 'int' and 'str'"),
    ('norm.fro', 'method', '*', (1, 2), "internal error: TypeError: '<' not supported between instances of 'int' and 'str'"),
    ('nn.functional.dropout', 'fn', '*', (14, 18), 'internal error: TypeError: The `like` argument must be an array-like that implements the `__array_fu'),
    ('std', 'fn', '*', 8, "refuses: TypeError: var: unsupported operand type(s) for -: 'int' and 'NoneTyp"),
    ('std', 'method', '*', 8, "refuses: TypeError: var: unsupported operand type(s) for -: 'int' and 'NoneTyp"),
    ('std.unbiased', '*', '*', '*', 'refuses: TypeError: std: dim must be an int or a tuple of ints; got bool'),
    ('var', 'fn', '*', 8, "refuses: TypeError: var: unsupported operand type(s) for -: 'int' and 'NoneTyp"),
    ('var', 'method', '*', 8, "refuses: TypeError: var: unsupported operand type(s) for -: 'int' and 'NoneTyp"),
    ('var.unbiased', '*', '*', '*', 'refuses: TypeError: var: dim must be an int or a tuple of ints; got bool'),
    ('prod', 'fn', 'float64', 10, 'grad: RuntimeError: grad: output 0 does not require grad and has no grad_fn'),
    ('prod', 'fn', 'int32', 19, 'out: dtype int64, PyTorch int32'),
    ('prod', 'fn', 'bool', 19, 'out: dtype int64, PyTorch bool'),
    ('prod', 'method', 'int32', 19, 'out: dtype int64, PyTorch int32'),
    ('prod', 'method', 'bool', 19, 'out: dtype int64, PyTorch bool'),
    ('argsort', 'fn', 'bool', 0, 'out: Mismatched elements: 7999 / 8000 (100.0%)'),
    ('argsort', 'method', 'bool', 0, 'out: Mismatched elements: 7999 / 8000 (100.0%)'),
    ('scatter_reduce.sum', 'fn', '*', (18, 19, 20), 'refuses: ValueError: scatter_reduce: needs a tensor of'),
    ('scatter_reduce.sum', 'method', '*', (18, 19, 20), 'refuses: ValueError: scatter_reduce: needs a tensor of'),
    ('scatter_reduce.prod', 'fn', '*', (18, 19, 20), 'refuses: ValueError: scatter_reduce: needs a tensor of'),
    ('scatter_reduce.prod', 'method', '*', (18, 19, 20), 'refuses: ValueError: scatter_reduce: needs a tensor of'),
    ('scatter_reduce.mean', 'fn', '*', (18, 19, 20), 'refuses: ValueError: scatter_reduce: needs a tensor of'),
    ('scatter_reduce.mean', 'method', '*', (18, 19, 20), 'refuses: ValueError: scatter_reduce: needs a tensor of'),
    ('scatter_reduce.amin', 'fn', '*', (18, 19, 20), 'refuses: ValueError: scatter_reduce: needs a tensor of'),
    ('scatter_reduce.amin', 'method', '*', (18, 19, 20), 'refuses: ValueError: scatter_reduce: needs a tensor of'),
    ('scatter_reduce.amax', 'fn', '*', (18, 19, 20), 'refuses: ValueError: scatter_reduce: needs a tensor of'),
    ('scatter_reduce.amax', 'method', '*', (18, 19, 20), 'refuses: ValueError: scatter_reduce: needs a tensor of'),
]
# fmt: on


def refusal(op: str, message: str) -> str | None:
    """The listed reason when chainrule's `message` is its deliberate refusal of `op` (op_db's
    full name: `nn.functional.pad.circular` is `nn.functional.pad`'s)."""
    for name, phrases in REFUSALS.items():
        if op == name or op.startswith(name + "."):
            for phrase in phrases:
                if phrase in message:
                    return f"refused: {phrase}"
    return None


def matches(entry: tuple[str, str, str, Samples, str], case_id: str) -> bool:
    op, form, dtype = case_id.split("|")
    return entry[0] == op and entry[1] in ("*", form) and entry[2] in ("*", dtype)


def known(case_id: str) -> dict[int | str, str]:
    """The known disagreements of one case (`op|form|dtype`), by sample index or "*"."""
    out: dict[int | str, str] = {}
    for entry in KNOWN:
        if matches(entry, case_id):
            samples = entry[3]
            for s in samples if isinstance(samples, tuple) else (samples,):
                out[s] = entry[4]
    return out
