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
    ('arange', 'fn', 'int64', (10, 11, 14, 15, 18, 22, 23), "arange with float ends and an integer dtype: length from the cast ends, PyTorch's from the float ones"),
    ('arange', 'fn', 'int32', (14, 18), "arange with float ends and an integer dtype: length from the cast ends, PyTorch's from the float ones"),
    ('clamp_max', 'fn', 'float64', '*', 'no gradient to a tensor max (0 where PyTorch passes it); a (5,1) bound broadcast in backward fails in NumPy'),
    ('clamp_min', 'fn', 'float64', (1, 2, 3, 4, 5, 6, 7, 8), 'no gradient to a tensor min (0 where PyTorch passes it); a (5,1) bound broadcast in backward fails in NumPy'),
    ('clamp', 'fn', 'float32', (5, 6), 'a float32 input with an int32 min comes back float64'),
    ('clamp', 'fn', 'float64', (0, 1, 2, 3, 4, 6), 'no gradient to a tensor min/max where it binds'),
    ('clamp', 'method', 'float32', (5, 6), 'a float32 input with an int32 min comes back float64'),
    ('clamp', 'alias:clip', 'float32', (5, 6), 'a float32 input with an int32 min comes back float64'),
    ('clamp', 'alias-method:clip', 'float32', (5, 6), 'a float32 input with an int32 min comes back float64'),
    ('cumsum', 'fn', 'int32', 3, 'dtype=int32 keyword ignored: the result is int64'),
    ('cumsum', 'method', 'int32', 3, 'dtype=int32 keyword ignored: the result is int64'),
    ('cumprod', 'fn', 'int32', 9, 'dtype=int32 keyword ignored: the result is int64'),
    ('cumprod', 'method', 'int32', 9, 'dtype=int32 keyword ignored: the result is int64'),
    ('div.trunc_rounding', 'inplace', '*', '*', 'div_ takes no rounding_mode keyword (a Python TypeError)'),
    ('div.floor_rounding', 'fn', 'float64', '*', 'div_ takes no rounding_mode keyword; floor division refuses backward where PyTorch gives zeros'),
    ('div.floor_rounding', 'inplace', '*', '*', 'div_ takes no rounding_mode keyword; floor division refuses backward where PyTorch gives zeros'),
    ('diag', 'fn', 'bool', 0, "a bool vector's diagonal matrix comes back int64"),
    ('diag', 'method', 'bool', 0, "a bool vector's diagonal matrix comes back int64"),
    ('linspace', 'fn', 'int64', (2, 5, 8, 11, 14, 17), 'integer linspace rounds each step, PyTorch truncates the float steps'),
    ('linspace', 'fn', 'int32', (2, 5, 8, 11, 14, 17), 'integer linspace rounds each step, PyTorch truncates the float steps'),
    ('linspace.tensor_overload', 'fn', 'int64', (6, 7, 8, 15, 16, 17, 24), 'integer linspace rounds each step, PyTorch truncates the float steps'),
    ('linspace.tensor_overload', 'fn', 'int32', (6, 7, 8, 15, 16, 17, 24), 'integer linspace rounds each step, PyTorch truncates the float steps'),
    ('var_mean', 'fn', '*', 8, "correction=None is not read as PyTorch's default of 1 (a Python TypeError inside)"),
    ('var_mean.unbiased', '*', '*', '*', 'the positional unbiased flag (var_mean(x, True)) is taken for dim and refused'),
    ('std_mean', 'fn', '*', 8, "correction=None is not read as PyTorch's default of 1 (a Python TypeError inside)"),
    ('std_mean.unbiased', '*', '*', '*', 'the positional unbiased flag (std_mean(x, True)) is taken for dim and refused'),
    ('softmax.with_dtype', '*', '*', '*', 'no dtype= keyword'),
    ('nn.functional.softmin.with_dtype', '*', '*', '*', 'no dtype= keyword (a Python TypeError)'),
    ('nn.functional.cosine_similarity', 'fn', '*', 7, 'inputs broadcast against each other ((1,2,3) and (2,1,3), dim=-2) give other values'),
    ('nn.functional.relu', 'inplace=True', 'float32', '*', 'inplace=True leaves the input unchanged (returns a new tensor)'),
    ('nn.functional.relu', 'inplace=True', 'float64', (1, 2, 3), 'inplace=True leaves the input unchanged (returns a new tensor)'),
    ('nn.functional.relu', 'inplace=True', 'int64', (1, 2, 3), 'inplace=True leaves the input unchanged (returns a new tensor)'),
    ('nn.functional.relu', 'inplace=True', 'int32', (1, 2, 3), 'inplace=True leaves the input unchanged (returns a new tensor)'),
    ('nn.functional.conv_transpose2d', 'fn', 'float64', (2, 3), "weight gradient with groups=2, stride, dilation and output_padding fails in NumPy's matmul"),
    ('nn.functional.leaky_relu', 'inplace=True', '*', '*', 'inplace=True leaves the input unchanged (returns a new tensor)'),
    ('nn.functional.avg_pool2d', 'fn', 'float32', (3, 4, 5), "padding given as a 1-tuple refused; int64 input averaged without PyTorch's integer division"),
    ('nn.functional.avg_pool2d', 'fn', 'float64', (3, 4, 5), "padding given as a 1-tuple refused; int64 input averaged without PyTorch's integer division"),
    ('nn.functional.avg_pool2d', 'fn', 'int64', '*', "padding given as a 1-tuple refused; int64 input averaged without PyTorch's integer division"),
    ('nn.functional.elu', 'inplace=True', 'float32', 0, 'inplace=True leaves the input unchanged (returns a new tensor)'),
    ('nn.functional.elu', 'inplace=True', 'float64', (0, 2), 'inplace=True leaves the input unchanged (returns a new tensor)'),
    ('nn.functional.prelu', 'fn', '*', 7, '0-d input with a (1,) weight gives shape (1,), PyTorch ()'),
    ('nn.functional.celu', 'inplace=True', 'float32', 0, 'inplace=True leaves the input unchanged (returns a new tensor)'),
    ('nn.functional.celu', 'inplace=True', 'float64', (0, 2), 'inplace=True leaves the input unchanged (returns a new tensor)'),
    ('nn.functional.selu', 'inplace=True', '*', (0, 2), 'inplace=True leaves the input unchanged (returns a new tensor)'),
    ('nn.functional.silu', 'inplace=True', '*', (0, 2), 'inplace=True leaves the input unchanged (returns a new tensor)'),
    ('nn.functional.mish', 'inplace=True', '*', (0, 2), 'inplace=True leaves the input unchanged (returns a new tensor)'),
    ('nn.functional.threshold', 'inplace=True', 'float32', '*', 'inplace=True leaves the input unchanged (returns a new tensor)'),
    ('nn.functional.threshold', 'inplace=True', 'float64', (1, 2, 3), 'inplace=True leaves the input unchanged (returns a new tensor)'),
    ('nn.functional.threshold', 'inplace=True', 'int64', (1, 2, 3), 'inplace=True leaves the input unchanged (returns a new tensor)'),
    ('nn.functional.threshold', 'inplace=True', 'int32', (1, 2, 3), 'inplace=True leaves the input unchanged (returns a new tensor)'),
    ('to', 'method', '*', (0, 1, 2, 3, 4, 5, 6, 7), 'to(device, dtype, non_blocking, copy) positionally refused'),
    ('topk', 'fn', 'int64', (0, 1, 2, 3, 4, 5, 6), 'ties in integer inputs give other indices'),
    ('topk', 'fn', 'int32', (0, 1, 2, 3, 4, 5, 6), 'ties in integer inputs give other indices'),
    ('topk', 'method', 'int64', (0, 1, 2, 3, 4, 5, 6), 'ties in integer inputs give other indices'),
    ('topk', 'method', 'int32', (0, 1, 2, 3, 4, 5, 6), 'ties in integer inputs give other indices'),
    ('nn.functional.batch_norm', 'fn', '*', (3, 4), 'a 1-D empty input (0,) refused, PyTorch normalises it'),
    ('nn.functional.hardtanh', 'inplace=True', '*', (0, 1, 2, 4), 'inplace=True leaves the input unchanged (returns a new tensor)'),
    ('nn.functional.relu6', 'inplace=True', 'float32', 0, 'inplace=True leaves the input unchanged (returns a new tensor)'),
    ('nn.functional.relu6', 'inplace=True', 'float64', (0, 2), 'inplace=True leaves the input unchanged (returns a new tensor)'),
    ('nn.functional.relu6', 'inplace=True', 'int64', 0, 'inplace=True leaves the input unchanged (returns a new tensor)'),
    ('nn.functional.relu6', 'inplace=True', 'int32', 0, 'inplace=True leaves the input unchanged (returns a new tensor)'),
    ('__rpow__', 'method', 'int64', (1, 2, 3, 4, 5, 6, 7), 'a 0-d integer base to a negative integer power refused (PyTorch computes 0)'),
    ('__rpow__', 'method', 'int32', (1, 2, 3, 4, 5, 6, 7), 'a 0-d integer base to a negative integer power refused (PyTorch computes 0)'),
    ('einsum', 'fn', 'int32', (0, 2), "an int32 sum over all letters ('i->') stays int32, PyTorch promotes to int64"),
    ('gather', 'fn', '*', (4, 5, 6), 'an empty uint8 or 0-d index refused or an internal NumPy AxisError'),
    ('gather', 'method', '*', (4, 5, 6), 'an empty uint8 or 0-d index refused or an internal NumPy AxisError'),
    ('index_fill', 'fn', '*', (0, 1), '0-d self gives shape (1,), PyTorch ()'),
    ('index_fill', 'method', '*', (0, 1), '0-d self gives shape (1,), PyTorch ()'),
    ('index_fill', 'inplace', '*', (0, 1), '0-d self gives shape (1,), PyTorch ()'),
    ('index_select', 'fn', '*', 0, '0-d self: NumPy IndexError'),
    ('index_select', 'method', '*', 0, '0-d self: NumPy IndexError'),
    ('index_add', 'fn', 'float32', (0, 1, 2), '0-d self and source refused (source must have shape (1,))'),
    ('index_add', 'fn', 'float64', (0, 1, 2), '0-d self and source refused (source must have shape (1,))'),
    ('index_add', 'fn', 'int64', (0, 1, 2), '0-d self and source refused (source must have shape (1,))'),
    ('index_add', 'fn', 'int32', (0, 1, 2), '0-d self and source refused (source must have shape (1,))'),
    ('index_add', 'fn', 'bool', (0, 1), '0-d self and source refused (source must have shape (1,))'),
    ('index_add', 'method', 'float32', (0, 1, 2), '0-d self and source refused (source must have shape (1,))'),
    ('index_add', 'method', 'float64', (0, 1, 2), '0-d self and source refused (source must have shape (1,))'),
    ('index_add', 'method', 'int64', (0, 1, 2), '0-d self and source refused (source must have shape (1,))'),
    ('index_add', 'method', 'int32', (0, 1, 2), '0-d self and source refused (source must have shape (1,))'),
    ('index_add', 'method', 'bool', (0, 1), '0-d self and source refused (source must have shape (1,))'),
    ('sort', 'fn', 'bool', 0, 'ties in a bool input give other indices'),
    ('sort', 'method', 'bool', 0, 'ties in a bool input give other indices'),
    ('scatter', 'fn', 'float32', (21, 22, 23, 24), '0-d self, index and src refused'),
    ('scatter', 'fn', 'float64', (7, 8), '0-d self, index and src refused'),
    ('scatter', 'fn', 'int64', (14, 15, 16, 17), '0-d self, index and src refused'),
    ('scatter', 'fn', 'int32', (14, 15, 16, 17), '0-d self, index and src refused'),
    ('scatter', 'fn', 'bool', (14, 15, 16, 17), '0-d self, index and src refused'),
    ('scatter', 'method', 'float32', (21, 22, 23, 24), '0-d self, index and src refused'),
    ('scatter', 'method', 'float64', (21, 22, 23, 24), '0-d self, index and src refused'),
    ('scatter', 'method', 'int64', (14, 15, 16, 17), '0-d self, index and src refused'),
    ('scatter', 'method', 'int32', (14, 15, 16, 17), '0-d self, index and src refused'),
    ('scatter', 'method', 'bool', (14, 15, 16, 17), '0-d self, index and src refused'),
    ('scatter', 'inplace', 'float32', (21, 22, 23, 24), '0-d self, index and src refused'),
    ('scatter', 'inplace', 'float64', (21, 22, 23, 24), '0-d self, index and src refused'),
    ('scatter', 'inplace', 'int64', (14, 15, 16, 17), '0-d self, index and src refused'),
    ('scatter', 'inplace', 'int32', (14, 15, 16, 17), '0-d self, index and src refused'),
    ('scatter', 'inplace', 'bool', (14, 15, 16, 17), '0-d self, index and src refused'),
    ('normal.number_mean', 'fn', '*', 1, 'no layout= keyword (a Python TypeError)'),
    ('scatter_add', 'fn', '*', 6, '0-d self, index and src refused'),
    ('scatter_add', 'method', '*', 6, '0-d self, index and src refused'),
    ('cat', 'fn', '*', 5, 'a legacy empty (0,) tensor beside (5,5) at dim=1: IndexError, PyTorch skips it'),
    ('take_along_dim', 'fn', 'float64', (1, 2), 'gradient with an index broadcast against the input fails in NumPy'),
    ('zero_', 'fn', 'bool', '*', 'zero_ of a bool tensor refused (fills int64 0)'),
    ('log_softmax.with_dtype', '*', '*', '*', 'no dtype= keyword'),
    ('norm', 'fn', 'float64', (1, 11), "norm with p=0 has no grad_fn: PyTorch's zero gradient is refused"),
    ('norm.nuc', '*', '*', '*', "p='nuc' compared with ints: a Python TypeError"),
    ('norm.fro', 'fn', '*', (1, 2), "p='fro' with a dim compared with ints: a Python TypeError"),
    ('norm.fro', 'method', '*', (1, 2), "p='fro' with a dim compared with ints: a Python TypeError"),
    ('nn.functional.dropout', 'fn', '*', (14, 18), 'dropout of a 0-d tensor: NumPy TypeError (`like` argument)'),
    ('std', 'fn', '*', 8, "correction=None is not read as PyTorch's default of 1 (a Python TypeError inside)"),
    ('std', 'method', '*', 8, "correction=None is not read as PyTorch's default of 1 (a Python TypeError inside)"),
    ('std.unbiased', '*', '*', '*', 'the positional unbiased flag (std(x, True)) is taken for dim and refused'),
    ('var', 'fn', '*', 8, "correction=None is not read as PyTorch's default of 1 (a Python TypeError inside)"),
    ('var', 'method', '*', 8, "correction=None is not read as PyTorch's default of 1 (a Python TypeError inside)"),
    ('var.unbiased', '*', '*', '*', 'the positional unbiased flag (var(x, True)) is taken for dim and refused'),
    ('prod', 'fn', 'float64', 10, 'prod of an empty tensor has no grad_fn: PyTorch gives a zero gradient'),
    ('prod', 'fn', 'int32', 19, 'the dtype= keyword (int32, bool) ignored: the result is int64'),
    ('prod', 'fn', 'bool', 19, 'the dtype= keyword (int32, bool) ignored: the result is int64'),
    ('prod', 'method', 'int32', 19, 'the dtype= keyword (int32, bool) ignored: the result is int64'),
    ('prod', 'method', 'bool', 19, 'the dtype= keyword (int32, bool) ignored: the result is int64'),
    ('argsort', 'fn', 'bool', 0, 'ties in a bool input give other indices'),
    ('argsort', 'method', 'bool', 0, 'ties in a bool input give other indices'),
    ('scatter_reduce.sum', 'fn', '*', (18, 19, 20), '0-d self, index and src refused'),
    ('scatter_reduce.sum', 'method', '*', (18, 19, 20), '0-d self, index and src refused'),
    ('scatter_reduce.prod', 'fn', '*', (18, 19, 20), '0-d self, index and src refused'),
    ('scatter_reduce.prod', 'method', '*', (18, 19, 20), '0-d self, index and src refused'),
    ('scatter_reduce.mean', 'fn', '*', (18, 19, 20), '0-d self, index and src refused'),
    ('scatter_reduce.mean', 'method', '*', (18, 19, 20), '0-d self, index and src refused'),
    ('scatter_reduce.amin', 'fn', '*', (18, 19, 20), '0-d self, index and src refused'),
    ('scatter_reduce.amin', 'method', '*', (18, 19, 20), '0-d self, index and src refused'),
    ('scatter_reduce.amax', 'fn', '*', (18, 19, 20), '0-d self, index and src refused'),
    ('scatter_reduce.amax', 'method', '*', (18, 19, 20), '0-d self, index and src refused'),
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


# The known disagreements of the checks beyond the forward and first gradients (harness.TWICE,
# harness.DRAWS), in KNOWN's form and run the same way: second derivatives against PyTorch's,
# and random ops' large draws (support, mean and variance) against PyTorch's own.
# fmt: off
KNOWN_SECOND_DERIVATIVES: list[tuple[str, str, str, Samples, str]] = [
]
KNOWN_DRAWS: list[tuple[str, str, str, Samples, str]] = [
]
# fmt: on


def known_later(check: str, case_id: str) -> dict[int | str, str]:
    """The known disagreements of one case in a later check ("second derivative" or
    "draws"), by sample index or "*", as known() gives KNOWN's."""
    entries = KNOWN_SECOND_DERIVATIVES if check == "second derivative" else KNOWN_DRAWS
    out: dict[int | str, str] = {}
    for entry in entries:
        if matches(entry, case_id):
            samples = entry[3]
            for s in samples if isinstance(samples, tuple) else (samples,):
                out[s] = entry[4]
    return out
