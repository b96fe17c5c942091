"""PyTorch's operator database (op_db) run against chainrule: which entries have a chainrule
counterpart and in which forms, each sample through both, and the comparison of what comes
back. The lists of refusals and known disagreements live in expectations.py; pytest in
test_opinfo.py; the coverage table in coverage.py."""

from __future__ import annotations

import inspect
import itertools
import os
import random
import re
import traceback
import types
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np
import torch

import chainrule as cr
from tests.opinfo import draws, ties

DTYPES = (torch.float32, torch.float64, torch.int64, torch.int32, torch.bool)
BOUNDED_SAMPLES = 4  # per op, form and dtype in `make test`: ~60 s on two workers
BOUNDED_DEEP = 1  # of which get the second-derivative and large-draw checks there
SEED = 0


def full_samples() -> int:
    """Samples per op, form and dtype in the slow run (an environment variable, 25 unless set)."""
    return int(os.environ.get("CHAINRULE_OPINFO_SAMPLES", "25"))


@cache
def op_db() -> tuple[Any, ...]:
    """PyTorch's OpInfo entries, imported once per process (it takes seconds)."""
    guard = torch.backends.flags_frozen.__globals__  # the namespace torch.backends' guard reads
    flag = "__allow_nonbracketed_mutation_flag"
    allowed = guard[flag]
    from torch.testing._internal import common_utils
    from torch.testing._internal.common_methods_invocations import op_db as db

    # Importing PyTorch's test utilities freezes torch.backends' flags for the process (its
    # own suite's guard), and a later program in the same worker that sets
    # torch.backends.cudnn.benchmark then fails: put the guard back as it was.
    guard[flag] = allowed
    # Each sample iterator looks up the stack for a unittest method to name its seed after
    # (inspect.stack reads every frame's source: under pytest, most of the run's time); we
    # seed it ourselves, so there is nothing for it to find.
    common_utils.extract_test_fn = lambda: None
    return tuple(db)


def full_name(op: Any) -> str:
    """An entry's stable name: op_db holds several entries per op (`max.binary`, ...)."""
    return op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")


# empty* hold whatever memory held: only their shape and dtype are defined.
UNDEFINED_VALUES = {
    "empty",
    "empty_like",
    "empty_strided",
    "new_empty",
    "new_empty_strided",
    "empty_permuted",
}
# Ops whose results draw random numbers (or hold no defined values): only shape, dtype and
# loose moments compare.
RANDOM_OPS = {
    "bernoulli",
    "multinomial",
    "normal",
    "uniform",
    "exponential",
    "geometric",
    "log_normal",
    "cauchy",
    "rand",
    "randn",
    "rand_like",
    "randn_like",
    "randint_like",
    "randint",
    "randperm",
    "nn.functional.dropout",
    "nn.functional.dropout2d",
    "nn.functional.dropout3d",
    "nn.functional.alpha_dropout",
    "nn.functional.feature_alpha_dropout",
    "nn.functional.rrelu",
    "nn.functional.gumbel_softmax",
    *UNDEFINED_VALUES,
}  # by op_db's name, every variant of it


def _lookup(root: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        root = getattr(root, part, None)
        if root is None:
            return None
    return root


@dataclass(frozen=True)
class Form:
    """One way of calling an op on both sides: `fn`, `method`, `inplace`, `inplace=True`,
    `alias:<name>` or `alias-method:<name>`."""

    name: str
    torch_fn: Callable[..., Any]
    cr_fn: Callable[..., Any]
    is_method: bool = False
    writes_input: bool = False
    kwargs: tuple[tuple[str, Any], ...] = ()


def _unseeded(op: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """op_db's wrapper_set_seed (which seeds torch's generator to 42 around each call, so
    that every call draws alike) as a plain call."""
    return op(*args, **kwargs)


def _rebound(fn: Any, **names: Any) -> Any:
    """`fn` (a lambda of op_db's) with some of the names it reads bound to others."""
    scope = {**fn.__globals__, **names}
    return types.FunctionType(fn.__code__, scope, fn.__name__, fn.__defaults__, fn.__closure__)


def _as_chainrule(fn: Any) -> Any:
    """op_db's lambdas (`lambda self, cond, other: torch.where(cond, self, other)`) with
    chainrule where they name torch: the same call, argument order and all, on our side
    (seeding torch's generator there would only cost time)."""
    return _rebound(fn, torch=cr, wrapper_set_seed=_unseeded)


def _pair(torch_fn: Any, cr_fn: Any) -> Any:
    return _as_chainrule(torch_fn) if getattr(torch_fn, "__name__", "") == "<lambda>" else cr_fn


def _method(name: str) -> Any:
    """chainrule's Tensor method `name`, or None: looked up on the class and its bases only,
    since `type` itself has `__ror__` (for `int | None`) that every class would seem to have."""
    owner = next((k for k in cr.Tensor.__mro__ if name in vars(k)), None)
    return None if owner is None else getattr(cr.Tensor, name)


def _takes_inplace(fn: Any) -> bool:
    try:
        return "inplace" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def forms(op: Any) -> list[Form]:
    """Every form of `op` that chainrule has, paired with PyTorch's."""
    found: list[Form] = []
    method_name = op.name.split(".")[-1]
    cr_fn = _lookup(cr, op.name)
    if cr_fn is not None and callable(cr_fn):
        found.append(Form("fn", op.op, _pair(op.op, cr_fn)))
        if _takes_inplace(op.op) and _takes_inplace(cr_fn):
            found.append(
                Form("inplace=True", op.op, cr_fn, writes_input=True, kwargs=(("inplace", True),))
            )
    method, inplace = _method(method_name), _method(method_name + "_")
    if op.method_variant is not None and method is not None:
        found.append(
            Form(
                "method",
                op.method_variant,
                _pair(op.method_variant, method),
                True,
            )
        )
    if op.inplace_variant is not None and inplace is not None:
        found.append(
            Form(
                "inplace",
                op.inplace_variant,
                inplace,
                True,
                writes_input=True,
            )
        )
    for alias in op.aliases:
        cr_alias = _lookup(cr, alias.name)
        if cr_alias is not None and alias.op is not None and callable(cr_alias):
            found.append(Form(f"alias:{alias.name}", alias.op, cr_alias))
        short = alias.name.split(".")[-1]
        if alias.method_variant is not None and _method(short) is not None:
            found.append(Form(f"alias-method:{short}", alias.method_variant, _method(short), True))
    return found


def dtypes(op: Any) -> list[torch.dtype]:
    supported = op.supported_dtypes("cpu")
    return [d for d in DTYPES if d in supported]


@dataclass(frozen=True)
class Case:
    """One pytest case: an entry, one form of it, one dtype."""

    op: str
    form: str
    dtype: str

    @property
    def id(self) -> str:
        return f"{self.op}|{self.form}|{self.dtype}"


@cache
def cases() -> tuple[Case, ...]:
    """Every (entry, form, dtype) that chainrule has a counterpart for, in op_db's order."""
    out = []
    for op in op_db():
        for form in forms(op):
            for d in dtypes(op):
                out.append(Case(full_name(op), form.name, str(d).removeprefix("torch.")))
    return tuple(out)


@cache
def entry(name: str) -> Any:
    return next(op for op in op_db() if full_name(op) == name)


# --- converting a sample and its results -------------------------------------------------


def to_cr(value: Any) -> Any:
    """A sample's value for chainrule: tensors with the same values, dtype and requires_grad,
    torch dtypes, layouts and memory formats as chainrule's, through lists and tuples, and a
    module without parameters as chainrule's; other values as they are."""
    if isinstance(value, torch.Tensor):
        if value.layout != torch.strided:
            raise Unconverted(f"a {value.layout} tensor")
        array = value.detach().resolve_conj().numpy().copy()
        dtype = getattr(cr, str(value.dtype).removeprefix("torch."))
        return cr.tensor(array, dtype=dtype, requires_grad=value.requires_grad)
    if isinstance(value, (torch.dtype, torch.layout, torch.memory_format)):
        return getattr(cr, str(value).removeprefix("torch."), value)
    if isinstance(value, (list, tuple)) and not isinstance(value, torch.Size):
        return (
            type(value)(to_cr(v) for v in value)
            if type(value) in (list, tuple)
            else [to_cr(v) for v in value]
        )
    if isinstance(value, dict):
        return {k: to_cr(v) for k, v in value.items()}
    if isinstance(value, torch.nn.Module) and not list(value.parameters()):
        # a module holding no parameters (a distance_function): chainrule's of that name
        twin = getattr(cr.nn, type(value).__name__)()
        twin.__dict__.update({k: v for k, v in vars(value).items() if not k.startswith("_")})
        return twin
    return value


def _clone(value: Any) -> Any:
    """A sample's tensors (PyTorch's or chainrule's) copied, for the forms that write their
    input."""
    if isinstance(value, (torch.Tensor, cr.Tensor)):
        return value.detach().clone()
    if isinstance(value, (list, tuple)) and type(value) in (list, tuple):
        return type(value)(_clone(v) for v in value)
    if isinstance(value, dict):
        return {k: _clone(v) for k, v in value.items()}
    return value


def _leaves(value: Any, kind: type) -> list[Any]:
    if isinstance(value, kind):
        return [value]
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in _leaves(v, kind)]
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _leaves(v, kind)]
    return []


def _as_torch(value: Any) -> torch.Tensor:
    """A chainrule result as a dense torch tensor; bfloat16 through float32 (torch cannot
    take ml_dtypes' arrays), sparse through its dense form."""
    if getattr(value, "layout", None) not in (None, "strided", torch.strided):
        value = value.to_dense()
    array = np.array(value.detach().numpy(), copy=True)
    if array.dtype.name == "bfloat16":
        return torch.from_numpy(array.astype(np.float32)).to(torch.bfloat16)
    return torch.from_numpy(array)


def _dtype_name(dtype: Any) -> str:
    return str(dtype).removeprefix("torch.").removeprefix("chainrule.")


class Unconverted(Exception):
    """A sample holding what chainrule's tensors do not take (a sparse layout)."""


class Mismatch(Exception):
    """A chainrule answer that differs from PyTorch's (one line saying how)."""


Tolerances = dict[Any, dict[str, float]]  # by torch dtype; "shape_only" compares no values


def compare(got: Any, want: Any, tol: Tolerances, where: str = "out") -> None:
    """Raise Mismatch unless `got` (chainrule's) has `want`'s (PyTorch's) structure, shape,
    dtype and values: within `tol[dtype]` for floats, exact for integers and bools, NaN where
    NaN."""
    if isinstance(want, torch.Tensor):
        if not isinstance(got, cr.Tensor):
            raise Mismatch(f"{where}: a {type(got).__name__}, PyTorch gives a Tensor")
        if tuple(got.shape) != tuple(want.shape):
            raise Mismatch(f"{where}: shape {tuple(got.shape)}, PyTorch {tuple(want.shape)}")
        if _dtype_name(got.dtype) != _dtype_name(want.dtype):
            raise Mismatch(
                f"{where}: dtype {_dtype_name(got.dtype)}, PyTorch {_dtype_name(want.dtype)}"
            )
        if "shape_only" in tol:
            return
        want = want.detach().to_dense() if want.layout != torch.strided else want.detach()
        bound = tol.get(want.dtype, {"rtol": 0.0, "atol": 0.0})
        try:
            torch.testing.assert_close(
                _as_torch(got), want, equal_nan=True, check_stride=False, **bound
            )
        except AssertionError as err:
            lines = [ln.strip() for ln in str(err).splitlines() if ln.strip()]
            raise Mismatch(f"{where}: " + "; ".join(lines[1:4])) from None
        return
    if isinstance(want, (tuple, list)):
        if not isinstance(got, (tuple, list)) or len(got) != len(want):
            raise Mismatch(
                f"{where}: a {type(got).__name__}, PyTorch a {type(want).__name__} of {len(want)}"
            )
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            compare(g, w, tol, f"{where}[{i}]")
        return
    if isinstance(want, torch.dtype):
        if _dtype_name(got) != _dtype_name(want):
            raise Mismatch(f"{where}: {got!r}, PyTorch {want!r}")
        return
    if (
        isinstance(got, cr.Tensor)
        or type(got) is not type(want)
        and not (
            isinstance(want, float) and isinstance(got, (int, float)) and not isinstance(got, bool)
        )
    ):
        raise Mismatch(f"{where}: a {type(got).__name__}, PyTorch a {type(want).__name__}")
    bound = tol.get(torch.float64, {"rtol": 0.0, "atol": 0.0})
    if (
        isinstance(want, float)
        and not (
            (np.isnan(want) and np.isnan(got))
            or abs(got - want) <= bound["atol"] + bound["rtol"] * abs(want)
        )
        or not isinstance(want, float)
        and got != want
    ):
        raise Mismatch(f"{where}: {got!r}, PyTorch {want!r}")


def compare_random(got: Any, want: Any, undefined: bool) -> None:
    """Random outputs: structure, shape and dtype; the mean within a loose band of PyTorch's."""
    compare(got, want, {"shape_only": {}})
    for g, w in zip(_leaves(got, cr.Tensor), _leaves(want, torch.Tensor), strict=False):
        if undefined or not w.dtype.is_floating_point or w.numel() < 100:
            continue
        w = w.detach()
        gm, wm, ws = float(_as_torch(g).mean()), float(w.mean()), float(w.std())
        if not abs(gm - wm) <= 5 * ws / np.sqrt(w.numel()) + 0.1 * abs(wm) + 1e-3:
            raise Mismatch(f"out: mean {gm:.4g}, PyTorch {wm:.4g} (std {ws:.4g})")


# --- telling a refusal from an internal error ------------------------------------------------

INTERNAL_TYPES = (
    AttributeError,
    IndexError,
    KeyError,
    NameError,
    UnboundLocalError,
    ZeroDivisionError,
    AssertionError,
    RecursionError,
)
INTERNAL_MESSAGES = re.compile(
    "|".join(
        [
            r"operands could not be broadcast",
            r"object has no attribute",
            r"unsupported operand",
            r"arg is an empty sequence",
            r"unexpected keyword argument",
            r"positional argument",
            r"object is not (iterable|callable|subscriptable)",
            r"cannot reshape array",
            r"axis \S+ is out of bounds",
            r"not supported between",
            r"object cannot be interpreted",
            r"only integer scalar arrays",
            r"ufunc",
            r"setting an array element with a sequence",
            r"truth value of an array",
            r"has no len\(\)",
            r"must be real number, not",
            r"'NoneType'",
            r"could not convert",
            r"argument must be",
            r"invalid literal",
            r"non-broadcastable",
            r"zero-size array",
            r"takes from \d+ to \d+",
        ]
    )
)


OWN_MESSAGE = re.compile(r"^[\w.]+(\(\))?: ")  # chainrule's errors open with the op's name


def internal_error(err: BaseException) -> bool:
    """Whether `err` is a bug in chainrule (a NumPy or Python message escaping) rather than
    chainrule's own refusal with its own message."""
    if isinstance(err, INTERNAL_TYPES):
        return True
    if INTERNAL_MESSAGES.search(str(err)) and not OWN_MESSAGE.match(str(err)):
        return True
    frames = traceback.extract_tb(err.__traceback__)
    last = frames[-1].filename if frames else ""
    return "/numpy/" in last or "/site-packages/" in last and "chainrule" not in last


def describe(err: BaseException) -> str:
    frames = traceback.extract_tb(err.__traceback__)
    at = f" at {os.path.basename(frames[-1].filename)}:{frames[-1].lineno}" if frames else ""
    msg = str(err).splitlines()[0] if str(err) else ""
    return f"{type(err).__name__}: {msg[:160]}{at}"


# --- running one case --------------------------------------------------------------------


# The checks beyond the forward and first gradients, each with its own list of known
# disagreements in expectations.py: second derivatives, and random ops' large draws.
TWICE, DRAWS = "second derivative", "draws"


@dataclass
class Outcome:
    """What became of one sample: agreed, refused (PyTorch too, or a listed refusal) or a
    failure with its one-line reason; `grad` whether a gradient check ran; `deep` the later
    check (TWICE or DRAWS) that ran, and `check` the one that failed ("" the forward or first
    gradients, judged by KNOWN)."""

    key: str
    kind: str  # "agreed", "refused", "failed", "skipped" (a sample chainrule cannot hold)
    why: str = ""
    grad: bool = False
    grad_failed: bool = False
    deep: str = ""
    check: str = ""


@dataclass
class Tally:
    outcomes: list[Outcome] = field(default_factory=list)
    exhausted: bool = False


# torch.testing.assert_close's defaults (rtol, atol); integers and bools compare exactly
DEFAULT_TOLERANCES = {
    torch.float16: (1e-3, 1e-5),
    torch.bfloat16: (1.6e-2, 1e-5),
    torch.float32: (1.3e-6, 1e-5),
    torch.float64: (1e-7, 1e-7),
}


# Results of repeated matrix products, where two BLAS libraries' roundings grow apart
# (matrix_exp squares its Taylor polynomial up to 2^k times): each float32 result is as near
# the float64 answer as PyTorch's, but not within assert_close's default of PyTorch's.
SQUARED = {"matrix_exp": {torch.float32: (2e-5, 1e-5)}}


def tolerances(op: Any) -> Tolerances:
    """By floating dtype: assert_close's default, loosened only where the entry loosens it."""
    return {d: _tolerance(op, d) for d in DEFAULT_TOLERANCES}


def _tolerance(op: Any, dtype: torch.dtype) -> dict[str, float]:
    """The entry's toleranceOverride and precisionOverride decorators, whichever test they
    name, loosen assert_close's default for `dtype`."""
    rtol, atol = SQUARED.get(op.name, {}).get(dtype, DEFAULT_TOLERANCES[dtype])
    for info in getattr(op, "decorators", ()) or ():
        for dec in getattr(info, "decorators", (info,)):
            table = getattr(dec, "d", None)
            if isinstance(table, dict) and dtype in table:
                got = table[dtype]
                if hasattr(got, "atol"):
                    atol, rtol = max(atol, got.atol), max(rtol, got.rtol)
                elif isinstance(got, float):  # precisionOverride: an atol
                    atol = max(atol, got)
    return {"rtol": rtol, "atol": atol}


def _seed() -> None:
    """Every generator a sample or a random op draws from, to SEED. (torch.manual_seed also
    queues seeds for CUDA and XPU with a formatted stack each time: half the run's time.)"""
    torch.default_generator.manual_seed(SEED)
    cr.manual_seed(SEED)
    random.seed(SEED)
    np.random.seed(SEED)


def _samples(op: Any, dtype: torch.dtype, grad: bool, limit: int) -> tuple[list[Any], bool]:
    """The first `limit` samples, drawn before any runs so that each depends only on the op,
    the dtype and SEED; and whether they are all there are. (op_db's own per-sample seeding
    is off: it costs as much as the rest of the run.)"""
    _seed()
    it = iter(op.sample_inputs("cpu", dtype, requires_grad=grad, set_seed=False))
    samples = list(itertools.islice(it, limit))
    return samples, len(samples) < limit or next(it, None) is None


def _call(fn: Callable[..., Any], form: Form, sample_in: Any, args: Any, kwargs: Any) -> Any:
    return fn(sample_in, *args, **kwargs, **dict(form.kwargs))


def run_case(
    case: Case,
    limit: int,
    cr_override: Callable[..., Any] | None = None,
    deep: int | None = None,
) -> Tally:
    """Each of the first `limit` samples of `case` through PyTorch and chainrule, compared,
    the first `deep` (all unless set) also by second derivatives or large draws;
    `cr_override` stands in for chainrule's function (the meta-tests plant wrong ones)."""
    op = entry(case.op)
    form = next(f for f in forms(op) if f.name == case.form)
    if cr_override is not None:
        form = Form(
            form.name, form.torch_fn, cr_override, form.is_method, form.writes_input, form.kwargs
        )
    dtype = getattr(torch, case.dtype)
    grad = dtype == torch.float64 and op.supports_autograd and form.name == "fn"
    tol = tolerances(op)
    samples, exhausted = _samples(op, dtype, grad, limit)
    tally = Tally(exhausted=exhausted)
    for index, sample in enumerate(samples):
        key = f"{case.id}|{index}"
        more = deep is None or index < deep
        tally.outcomes.append(_run_sample(op, case, form, sample, key, grad, tol, more))
    return tally


def _run_sample(
    op: Any,
    case: Case,
    form: Form,
    sample: Any,
    key: str,
    grad: bool,
    tol: Tolerances,
    deep: bool,
) -> Outcome:
    from tests.opinfo.expectations import refusal

    if form.is_method and not isinstance(sample.input, torch.Tensor):
        return Outcome(key, "agreed", "no tensor to call a method on")
    # attention with dropout draws random numbers too
    drawn = op.name in RANDOM_OPS or bool(sample.kwargs.get("dropout_p", 0))
    if form.writes_input:
        sample_in, args, kwargs = _clone((sample.input, sample.args, sample.kwargs))
    else:
        sample_in, args, kwargs = sample.input, sample.args, sample.kwargs
    try:
        c_in, c_args, c_kwargs = to_cr((sample_in, list(args), dict(kwargs)))
    except Unconverted as err:
        return Outcome(key, "skipped", f"not run: the sample holds {err}")
    if (
        op.name == "as_strided"
        and isinstance(sample_in, torch.Tensor)
        and sample_in._base is not None
    ):
        # as_strided reads the memory its input views: the same view of the same memory
        place = (tuple(sample_in.shape), sample_in.stride(), sample_in.storage_offset())
        c_in = to_cr(sample_in._base).as_strided(*place).requires_grad_(sample_in.requires_grad)
    _seed()
    try:
        with warnings.catch_warnings():  # PyTorch's deprecation notes on op_db's own samples
            warnings.simplefilter("ignore")
            want = _call(form.torch_fn, form, sample_in, args, kwargs)
        torch_err = None
    except Exception as err:  # PyTorch refusing a sample: chainrule must refuse it too
        want, torch_err = None, err
    try:
        got = _call(form.cr_fn, form, c_in, c_args, c_kwargs)
    except Exception as err:
        if internal_error(err):
            return Outcome(key, "failed", "internal error: " + describe(err))
        if not OWN_MESSAGE.match(str(err)):
            return Outcome(key, "failed", "a refusal that names no op: " + describe(err))
        if torch_err is not None:
            return Outcome(key, "refused", "PyTorch refuses too: " + describe(err))
        reason = refusal(case.op, str(err))
        if reason is not None:
            return Outcome(key, "refused", reason)
        return Outcome(key, "failed", "refuses what PyTorch computes: " + describe(err))
    if torch_err is not None:
        return Outcome(key, "failed", "computes what PyTorch refuses: " + describe(torch_err))
    got = ties.sign_aligned(op.name, got, want)
    try:
        if drawn:
            compare_random(got, want, op.name in UNDEFINED_VALUES)
        else:
            compare(got, want, tol)
            if form.writes_input:
                compare(c_in, sample_in, tol, "input after")
    except Mismatch as err:
        if not ties.applies(op.name, args, kwargs):
            return Outcome(key, "failed", str(err))
        if not ties.same_but_for_ties(op.name, sample_in, args, kwargs, got, want):
            return Outcome(key, "failed", str(err))
        return Outcome(key, "agreed", "equal elements in another order, which PyTorch leaves open")
    torch_side, cr_side = (sample_in, args, kwargs), (c_in, c_args, c_kwargs)
    if drawn:
        if not deep or op.name in UNDEFINED_VALUES:
            return Outcome(key, "agreed")
        why = _check_draws(op, form, torch_side, cr_side)
        return Outcome(key, "failed" if why else "agreed", why, deep=DRAWS, check=why and DRAWS)
    if not grad:
        return Outcome(key, "agreed")
    why = _check_grad(torch_side, cr_side, want, got, tol)
    if why or not deep or not op.supports_gradgrad:
        return Outcome(key, "failed" if why else "agreed", why, grad=True, grad_failed=bool(why))
    why = _check_twice(op.name, form, torch_side, cr_side, tol)
    if why is None:
        return Outcome(key, "agreed", grad=True)
    return Outcome(key, "failed" if why else "agreed", why, True, deep=TWICE, check=why and TWICE)


def _check_grad(torch_side: Any, cr_side: Any, want: Any, got: Any, tol: Tolerances) -> str:
    """Gradients of every input that requires grad, for one seeded random upstream gradient
    per floating output: "" when equal, else what differs."""
    t_inputs = [t for t in _leaves(torch_side, torch.Tensor) if t.requires_grad]
    c_inputs = [t for t in _leaves(cr_side, cr.Tensor) if t.requires_grad]
    t_outs = [t for t in _leaves(want, torch.Tensor) if t.requires_grad]
    if not t_inputs or not t_outs:
        return ""
    c_outs = [
        c
        for c, t in zip(_leaves(got, cr.Tensor), _leaves(want, torch.Tensor), strict=False)
        if t.requires_grad
    ]
    if len(c_outs) != len(t_outs) or len(c_inputs) != len(t_inputs):
        return "grad: a different number of differentiable outputs or inputs"
    gen = torch.Generator().manual_seed(SEED)
    ups = [torch.randn(t.shape, dtype=t.dtype, generator=gen) for t in t_outs]
    wants = torch.autograd.grad(t_outs, t_inputs, ups, allow_unused=True)
    c_ups = [to_cr(u) for u in ups]
    try:
        gots = cr.grad(c_outs, c_inputs, c_ups, allow_unused=True, retain_graph=True)
    except Exception as err:
        return ("grad: internal error: " if internal_error(err) else "grad: ") + describe(err)
    wants = [torch.zeros_like(x) if w is None else w for w, x in zip(wants, t_inputs, strict=True)]
    for i, (g, w) in enumerate(zip(gots, wants, strict=True)):
        if g is None:
            g = cr.zeros(tuple(w.shape), dtype=cr.float64)
        try:
            compare(g, w, tol, f"grad[{i}]")
        except Mismatch as err:
            return str(err)
    return _reference_engine_agrees(c_outs, c_inputs, c_ups, wants, tol)


def _reference_engine_agrees(outs: list, inputs: list, ups: list, wants: Any, tol: Any) -> str:
    """The same gradients by autograd/reference.py's walk, with every speed trick off: ""
    when they are PyTorch's too, else what differs (the leaves' .grad is left as it was)."""
    from chainrule.autograd import reference

    leaves = [(i, x) for i, x in enumerate(inputs) if x.grad_fn is None]
    before = [x.grad for _, x in leaves]
    for _, x in leaves:
        x.grad = None
    try:
        with cr.autograd.fastpath.disabled():
            reference.backward(sum((o * u).sum() for o, u in zip(outs, ups, strict=True)))
        for i, x in leaves:
            got = cr.zeros(tuple(x.shape), dtype=x.dtype) if x.grad is None else x.grad
            compare(got, wants[i], tol, f"reference engine grad[{i}]")
    except Mismatch as err:
        return str(err)
    except Exception as err:
        return "reference engine: " + describe(err)
    finally:
        for (_, x), g in zip(leaves, before, strict=True):
            x.grad = g
    return ""


def _check_draws(op: Any, form: Form, torch_side: Any, cr_side: Any) -> str:
    """A random op's sample called many times on each side, each side seeded once:
    draws.compare's verdict, with chainrule's failures to draw again told as a failure."""

    def drawer(fn: Callable[..., Any], side: Any, kind: type) -> Callable[[], list[Any]]:
        def draw() -> list[Any]:
            out = _call(fn, form, *(_clone(side) if form.writes_input else side))
            # copies: an in-place op's result is its input, written again by the next call
            return [_as_torch(t).numpy() if kind is cr.Tensor else t.detach().clone().numpy()
                    for t in _leaves(out, kind)]  # fmt: skip

        return draw

    unseeded = form.torch_fn
    if isinstance(unseeded, types.FunctionType):  # op_db's lambda, seeding before each call
        unseeded = _rebound(unseeded, wrapper_set_seed=_unseeded)
    _seed()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return draws.compare(
                op.name,
                torch_side,
                drawer(unseeded, torch_side, torch.Tensor),
                drawer(form.cr_fn, cr_side, cr.Tensor),
            )
    except Exception as err:
        inside = "internal error: " if internal_error(err) else ""
        return f"draws: {inside}{describe(err)}"


def _check_twice(op: str, form: Form, torch_side: Any, cr_side: Any, tol: Tolerances) -> str | None:
    """Second derivatives: on each side the first derivatives recorded (create_graph) for one
    seeded random upstream gradient that requires grad too, then a seeded random projection
    of them differentiated again, by every input and by the upstream gradient: "" when equal
    to PyTorch's, else what differs; None where PyTorch cannot differentiate twice. A first
    derivative that chainrule does not record is a constant there (a zero second derivative),
    which a nonzero one of PyTorch's shows up."""
    t_inputs = [t for t in _leaves(torch_side, torch.Tensor) if t.requires_grad]
    c_inputs = [t for t in _leaves(cr_side, cr.Tensor) if t.requires_grad]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = _call(form.torch_fn, form, *torch_side)
    t_outs = [t for t in _leaves(want, torch.Tensor) if t.requires_grad]
    if not t_inputs or not t_outs:
        return ""
    gen = torch.Generator().manual_seed(SEED)
    t_ups = [torch.randn(t.shape, dtype=t.dtype, generator=gen).requires_grad_() for t in t_outs]
    ws = [torch.randn(t.shape, dtype=t.dtype, generator=gen) for t in t_inputs]
    c_ups = [to_cr(u) for u in t_ups]
    t_wrt, c_wrt = [*t_inputs, *t_ups], [*c_inputs, *c_ups]
    try:
        t_firsts = torch.autograd.grad(
            t_outs, t_inputs, t_ups, create_graph=True, allow_unused=True
        )
        t_seconds = _differentiate(t_firsts, ws, t_wrt, torch.autograd.grad)
    except RuntimeError:  # PyTorch cannot (its CPU attention's backward is not differentiable)
        return None
    step = "forward"
    try:
        got = ties.sign_aligned(op, _call(form.cr_fn, form, *cr_side), want)
        c_outs = [
            c
            for c, t in zip(_leaves(got, cr.Tensor), _leaves(want, torch.Tensor), strict=False)
            if t.requires_grad
        ]
        step = "first derivative with create_graph=True"
        c_firsts = cr.grad(c_outs, c_inputs, c_ups, create_graph=True, allow_unused=True)
        step = "differentiating the first derivative"
        c_seconds = _differentiate(c_firsts, [to_cr(w) for w in ws], c_wrt, cr.grad)
    except Exception as err:
        inside = "internal error: " if internal_error(err) else ""
        return f"{TWICE}: {step}: {inside}{describe(err)}"
    by = [f"input {i}" for i in range(len(t_inputs))] + [f"upstream {k}" for k in range(len(t_ups))]
    checks = [
        (f"first derivative by {by[i]}", c_firsts[i], t_firsts[i], t)
        for i, t in enumerate(t_inputs)
    ]
    checks += [
        (f"{TWICE} by {b}", *pair) for b, *pair in zip(by, c_seconds, t_seconds, t_wrt, strict=True)
    ]
    for name, g, w, like in checks:
        w = torch.zeros_like(like) if w is None else w.detach()
        g = cr.zeros(tuple(like.shape), dtype=cr.float64) if g is None else g
        try:
            compare(g, w, tol, name)
        except Mismatch as err:
            flat = [i for i, c in enumerate(c_firsts) if c is not None and not c.requires_grad]
            if flat:
                return f"{err} (chainrule recorded no graph of its derivative by {by[flat[0]]})"
            return str(err)
    return ""


def _differentiate(firsts: Any, ws: list[Any], wrt: list[Any], grad: Callable[..., Any]) -> Any:
    """The gradient of sum_i <w_i, first_i> by each of `wrt` (None where nothing depends on
    it): `grad` is torch.autograd.grad or cr.grad. First derivatives that record no graph are
    constants and drop out."""
    terms = [
        (f * w).sum() for f, w in zip(firsts, ws, strict=True) if f is not None and f.requires_grad
    ]
    if not terms:
        return [None] * len(wrt)
    return grad(sum(terms[1:], terms[0]), wrt, allow_unused=True)
