"""The tensors PyTorch's nodes save that chainrule's nodes make as they are read (saved.py's
("made", ...) entries): an index's indices, nll_loss's total weight, max_pool2d's indices,
attention's logsumexp and output, the indices of a value chosen per line, det's LU factor.
Each reads what its node keeps (its inputs, its options, forward's arrays) while it lives."""

from __future__ import annotations

import math
from typing import Any

from .. import array

INT64_MAX = 2**63 - 1  # the end PyTorch records for a slice that runs to the end


def indices(fn: Any) -> tuple[Any, ...]:
    """An advanced index's indices as PyTorch's index keeps them: an array for each dim indexed
    by one, None for each dim sliced whole before the last array (of what the index's basic
    parts leave, which PyTorch takes first: advanced_steps)."""
    index = fn.index if type(fn.index) is tuple else (fn.index,)
    ndim = fn.inputs[0]._array.ndim
    if fn.op == "GetItem":
        _, index, sizes = advanced_steps(index, fn.inputs[0]._array.shape)
        ndim = len(sizes)
    parts: list[Any] = []
    taken = 0  # the dims the parts so far index (a mask its own)
    for k, part in enumerate(index):
        if part is Ellipsis:
            rest = sum(dims_taken(p) for p in index[k + 1 :])
            parts += [None] * (ndim - taken - rest)
            taken = ndim - rest
        elif part is not None:
            parts.append(None if isinstance(part, slice) else array.xp.asarray(part))
            taken += dims_taken(part)
    while parts and parts[-1] is None:
        parts.pop()
    return tuple(parts)


def total_weight(fn: Any) -> Any:
    """nll_loss's sum of the counted targets' weights (0 for reduction 'none'), a 0-d tensor."""
    _, target, per_element = fn.inputs
    if fn.reduction == "none" and fn.inputs[0]._array.ndim > 1:  # one target's: its weight
        total = 0
    else:
        total = target.size if per_element is None else per_element.sum()
    return array.xp.asarray(total, dtype=fn.inputs[0]._array.dtype)


def pool_indices(fn: Any) -> Any:
    """max_pool2d's indices (each maximum's row * W + column), from the offsets it keeps."""
    return fn.indices()


def attention_logsumexp(fn: Any) -> Any:
    """Attention's log of each query's sum of exp(scores) over the keys, (..., L)."""
    xp = array.xp
    q, k, _, mask = (getattr(x, "_array", x) for x in fn.inputs)
    scores = xp.matmul(q, xp.swapaxes(k, -1, -2)) * fn.scale  # (..., L, S)
    if fn.bias is not None:
        scores = scores + fn.bias
    if mask is not None and mask.dtype.kind == "f":
        scores = scores + mask
    top = scores.max(axis=-1, keepdims=True, initial=-xp.inf)  # (..., L, 1)
    with xp.errstate(invalid="ignore", divide="ignore"):
        return (xp.log(xp.exp(scores - top).sum(-1, keepdims=True)) + top)[..., 0]


def attention_output(fn: Any) -> Any:
    """Attention's output: the kept probabilities (after dropout) times the values."""
    p = fn.p if fn.keep is None else fn.p * fn.keep
    return array.xp.matmul(p, fn.inputs[2]._array)


def chosen(fn: Any) -> Any:
    """The indices a value chosen per line (median's, cummax's) came from, in the output's
    shape, as the op returns them."""
    return fn.where[fn.dim].reshape(fn.out_shape).astype(array.int64)


def shared(fn: Any) -> Any:
    """The value a whole tensor's median shares among the elements equal to it: one of them."""
    equal = fn.inputs[0]._array[fn.mask]
    return equal[0] if equal.size else array.xp.asarray(math.nan, dtype=equal.dtype)


def lu(fn: Any) -> tuple[Any, Any]:
    """getrf's LU factor and pivots (1-based, int32) of A, as PyTorch's solve keeps them; of
    A^T for det and slogdet (whose row-major A is A^T in LAPACK's order)."""
    from scipy.linalg import lu_factor

    a = array.to_host(fn.inputs[0]._array)
    if type(fn).__name__ != "LinalgSolveExBackward0":
        a = a.swapaxes(-1, -2)
    k = min(a.shape[-2:])
    lus = array.host.empty(a.shape, dtype=a.dtype)
    pivots = array.host.empty((*a.shape[:-2], k), dtype=array.host.int32)
    if a.size:
        flat = a.reshape(-1, *a.shape[-2:])  # (batch, n, n)
        for i, m in enumerate(flat):
            lu_i, piv_i = lu_factor(m, check_finite=False)
            lus.reshape(flat.shape)[i], pivots.reshape(-1, k)[i] = lu_i, piv_i + 1
    return lus, pivots


def slogdet_sign(fn: Any) -> Any:
    """slogdet's sign: the product of U's diagonal's signs, negated for an odd count of swaps."""
    factor, piv = lu(fn)
    xp = array.host
    diag = xp.diagonal(factor, axis1=-2, axis2=-1)  # (..., n)
    odd = (piv - 1 != xp.arange(factor.shape[-1], dtype=piv.dtype)).sum(-1) % 2 == 1
    return (xp.where(odd, -1, 1) * xp.prod(xp.sign(diag), axis=-1)).astype(factor.dtype)


def solution(fn: Any) -> Any:
    """triangular_solve's X, beside A's copy in its one output (ops/triangular.py)."""
    return fn.saved_result[..., : fn.inputs[0].shape[-1]]


def svd_part(fn: Any, i: int) -> Any:
    """U (i 0) or Vh (i 2) of the SVD the node keeps; of svdvals', which keeps S alone, made
    now (PyTorch's node computes them all)."""
    kept = fn.result[i]
    if kept is not None:
        return kept
    return array.xp.linalg.svd(fn.inputs[0]._array, full_matrices=fn.full)[i]


def product_sizes(fn: Any) -> tuple[int, ...]:
    """The sizes of the product PyTorch's matmul (or linear) views last, its
    UnsafeViewBackward0's self_sym_sizes: a batch of matrices times one matrix or vector is
    folded into one product, (batch * n, m); a vector times a batch of matrices, into the
    batch's transposes times the vector, (batch * m,); else one bmm, (batch, n, m)."""
    a, b = fn.inputs[0]._array.shape, fn.inputs[1]._array.shape
    if fn.op == "Linear":  # x @ W^T
        b = b[::-1]
    if len(b) <= 2 or math.prod(b[:-2]) == 1 and len(a) >= 3:
        return (math.prod(a[:-1]),) + b[-1:] * (len(b) > 1)
    if len(a) == 1:
        return (math.prod(b[:-2]) * b[-1],)
    batch = math.prod(array.host.broadcast_shapes(a[:-2], b[:-2]))
    return (batch, a[-2], b[-1])


def whole_dims(index: Any, shape: tuple[int, ...]) -> Any:
    """The index of a tensor of ``shape`` as PyTorch's graph takes it: in an index of
    several parts, a slice that takes the whole of its dim in order (``0:n``, ``:n`` for n
    past the end, ``0:``, ``::1``) is ``:``, which PyTorch skips (x[0:3, :] of a (3, 4)
    tensor is x[:, :], its alias). For the node's name and steps only: the op computes
    with the index as given."""
    if type(index) is not tuple or len(index) < 2:
        return index  # a slice alone is a step (arguments.index_arg)
    for part in index:  # most indexes have no slice with a bound: nothing to read
        if type(part) is slice and (part.start, part.stop, part.step) != (None, None, None):
            break
    else:
        return index
    ndim, out = len(shape), []
    counts = [dims_taken(i) for i in index]
    dim = 0  # the dim of shape the part takes: counted from the end after an Ellipsis
    for k, i in enumerate(index):
        if i is Ellipsis:
            dim = ndim - sum(counts[k + 1 :])
        elif _in_order(i):
            if i.stop is None or dim < ndim and i.stop >= shape[dim]:
                i = slice(None)
        dim += counts[k]
        out.append(i)
    return tuple(out)


def _in_order(part: Any) -> bool:
    """Whether an index part is a slice from the start by steps of 1 whose bounds are ints
    or None (a tensor bound is left to the op)."""
    if type(part) is not slice:
        return False
    start, stop, step = part.start, part.stop, part.step
    if not all(v is None or type(v) is int for v in (start, stop, step)):
        return False
    return start in (None, 0) and step in (None, 1)


def dims_taken(part: Any) -> int:
    """How many dims of the tensor an index's part takes: a mask its own, None, an Ellipsis
    and a bool none (an Ellipsis's are counted apart), anything else one."""
    if isinstance(part, array.ndarray) and part.dtype.kind == "b":
        return part.ndim
    return 0 if part is None or part is Ellipsis or isinstance(part, bool) else 1


def index_steps(index: Any, shape: tuple[int, ...]) -> list[tuple[str, int, Any, tuple]]:
    """The steps of a basic index of a tensor of ``shape``, as PyTorch takes them part by
    part, each its own node (x[1:, 0]: a slice, then a select): the node's name, the dim, the
    item (an int, a slice, None) and the sizes of the tensor it takes. A ``:`` takes no step
    (whole_dims writes so the parts PyTorch skips)."""
    return _walk(index, shape)[0]


def _walk(index: Any, shape: tuple[int, ...]) -> tuple[list[tuple[str, int, Any, tuple]], list]:
    """A basic index's steps (index_steps'), and the sizes of the tensor they make."""
    index = whole_dims(index if type(index) is tuple else (index,), shape)
    sizes, dim = list(shape), 0
    steps: list[tuple[str, int, Any, tuple]] = []
    for k, part in enumerate(index):
        if part is None:  # PyTorch's unsqueeze: a new dim of 1
            steps.append(("UnsqueezeBackward0", dim, None, tuple(sizes)))
            sizes.insert(dim, 1)
            dim += 1
        elif part is Ellipsis:  # the parts after it count from the input's last dim
            dim = len(sizes) - sum(p is not None and p is not Ellipsis for p in index[k + 1 :])
        elif isinstance(part, slice):
            if part != slice(None):
                steps.append(("SliceBackward0", dim, part, tuple(sizes)))
                sizes[dim] = len(range(*part.indices(sizes[dim])))
            dim += 1
        else:  # an int, or a 0-d integer tensor: PyTorch's select of its value
            steps.append(("SelectBackward0", dim, int(part), tuple(sizes)))
            del sizes[dim]
    return steps, sizes


def advanced_steps(index: tuple, shape: tuple[int, ...]) -> tuple[list, tuple, tuple]:
    """An index of index arrays beside basic parts (x[1:, idx]) as PyTorch takes it: the basic
    parts first, each its own step, then the arrays index what they leave. The basic steps
    (index_steps', each array a ``:`` of every dim it indexes), the arrays' index of their
    result (its integers gone, its slices and Nones ``:``) and that result's sizes. A lone
    bool is a new dim of 1 (a None) that an array of its one index (True) or of none (False)
    indexes."""
    basic: list[Any] = []
    advanced: list[Any] = []
    for part in index:
        if isinstance(part, bool) or getattr(part, "shape", None) == () and part.dtype == bool:
            basic.append(None)
            advanced.append(array.xp.zeros(int(part), dtype=array.int64))
        elif isinstance(part, array.ndarray) and part.ndim:
            basic += [_ALL] * dims_taken(part)
            advanced.append(part)
        elif part is Ellipsis:
            basic.append(part)
            advanced.append(part)
        elif part is None or isinstance(part, slice):
            basic.append(part)
            advanced.append(_ALL)
        else:  # an int, or a 0-d integer tensor: selected by the basic steps
            basic.append(part)
    steps, sizes = _walk(tuple(basic), shape)
    return steps, tuple(advanced), tuple(sizes)


_ALL = slice(None)


def step_values(step: tuple[str, int, Any, tuple]) -> dict[str, Any]:
    """What PyTorch's node of an index's step (index_steps') saves: a negative int shown
    unsigned, as PyTorch shows it; INT64_MAX where a slice runs to the end."""
    name, dim, item, sizes = step
    if name == "UnsqueezeBackward0":
        return {"dim": dim}
    if name == "SelectBackward0":
        return {"dim": dim, "index": item % 2**64, "self_sym_sizes": sizes}
    stop = INT64_MAX if item.stop is None else item.stop % 2**64
    start, by = (item.start or 0) % 2**64, item.step or 1
    return {"dim": dim, "end": stop, "self_sym_sizes": sizes, "start": start, "step": by}


def unsigned(given: Any) -> Any:
    """An int as PyTorch shows a saved one: a negative one unsigned (2^64 - 1 for -1); None
    stays None."""
    return None if given is None else given % 2**64


def unsigned_dims(fn: Any) -> Any:
    """A squeeze's dim as the call gave it (an int or a tuple), each shown unsigned."""
    dim = call_of(fn).get("dim")
    return tuple(unsigned(d) for d in dim) if isinstance(dim, (tuple, list)) else unsigned(dim)


def call_of(fn: Any) -> dict[str, Any]:
    """The call's arguments a node keeps (saved.record's), while it lives and after release."""
    return (fn.__dict__.get("_kept", {}) if fn.inputs is None else fn.__dict__).get("call", {})


def as_given(*keys: str) -> dict[str, Any]:
    """Saved values read from the call's arguments as given (node.named's, saved.record's),
    a negative int shown unsigned, as PyTorch shows it (select_scatter's dim -1 is 2^64 - 1),
    None where not given."""

    def read(key: str) -> Any:
        def value(fn: Any) -> Any:
            return unsigned(call_of(fn).get(key))

        return value

    return {key: read(key) for key in keys}


def given_or_kept(key: str) -> Any:
    """A dim saved as the call gave it (saved.record's), a negative one shown unsigned, as
    PyTorch shows it (diagonal's dim1 -2 is 2^64 - 2); else the one the node keeps."""

    def value(fn: Any) -> Any:
        given = call_of(fn).get(key)
        own = fn.__dict__.get("_kept", {}) if fn.inputs is None else fn.__dict__
        return own[key] if given is None else unsigned(given)

    return value


def lu_factors(result: tuple[Any, Any], part: str) -> Any:
    """P, L (unit lower, m x k) or U (upper, k x n), k = min(m, n), as linalg.lu gives them."""
    lu, pivots = result
    m, n = lu.shape[-2:]
    k = min(m, n)
    if part == "P":  # P[perm[i], i] = 1, perm LAPACK's 1-based row swaps applied in order
        swaps = pivots.reshape(-1, pivots.shape[-1]) - 1  # (batch, k)
        P = array.xp.zeros((swaps.shape[0], m, m), dtype=lu.dtype)  # (batch, m, m)
        for b, row_swaps in enumerate(swaps.tolist()):
            perm = list(range(m))
            for i, j in enumerate(row_swaps):
                perm[i], perm[j] = perm[j], perm[i]
            P[b, perm, range(m)] = 1
        return P.reshape(*pivots.shape[:-1], m, m)  # (..., m, m)
    if part == "L":
        return array.xp.tril(lu[..., :, :k], -1) + array.xp.eye(m, k, dtype=lu.dtype)
    return array.xp.triu(lu[..., :k, :])
