"""Every random op of chainrule inside vmap, in each randomness mode ('error', 'same',
'different'), on batched and unbatched inputs, mapped along dim 0 and dim 1, against
torch.func.vmap from the same seed: bit-identical values (and the generator left in the
same state) where PyTorch draws, chainrule's own refusal where PyTorch refuses. Then nested
vmaps (each mix of modes) and chunk_size."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
import torch.func as tf

import chainrule as cr
import chainrule.func as cf
from chainrule.batching import Refused

B = 3  # examples; each of shape (6,)
MODES = ("error", "same", "different")


def _nn(lib: Any) -> Any:
    return lib.nn.functional


FILLS = {
    "uniform_": (),
    "normal_": (),
    "bernoulli_": (0.3,),
    "exponential_": (),
    "random_": (0, 10),
    "cauchy_": (),
    "log_normal_": (),
    "geometric_": (0.3,),
}


def _fill(name: str, args: tuple, batched: bool) -> Callable[[Any, Any, Any], Any]:
    def draw(lib: Any, a: Any, c: Any) -> Any:
        if batched:
            return getattr(a.clone(), name)(*args)
        return a + getattr(c.clone(), name)(*args)

    return draw


# name -> draw(lib, a, c): a the mapped input (batched), c a tensor from outside (unbatched)
OPS: dict[str, Callable[[Any, Any, Any], Any]] = {
    # in-place fills of a batched tensor, and of one not batched
    **{f"{fill}(batched)": _fill(fill, args, True) for fill, args in FILLS.items()},
    **{f"{fill}(unbatched)": _fill(fill, args, False) for fill, args in FILLS.items()},
    "bernoulli_(p batched)": lambda lib, a, c: a.clone().bernoulli_(a.abs() / 10),
    "bernoulli_(p unbatched)": lambda lib, a, c: a.clone().bernoulli_(c.abs() / 2),
    "bernoulli_(unbatched, p batched)": lambda lib, a, c: c.clone().bernoulli_(a.abs() / 10),
    # draws from a tensor's values
    "bernoulli(batched)": lambda lib, a, c: lib.bernoulli(a * 0 + 0.4),
    "bernoulli(unbatched)": lambda lib, a, c: a + lib.bernoulli(c * 0 + 0.4),
    "bernoulli(batched, number p)": lambda lib, a, c: lib.bernoulli(a, 0.3),
    "bernoulli(unbatched, number p)": lambda lib, a, c: a + c.bernoulli(0.3),
    "multinomial(batched, replaced)": lambda lib, a, c: lib.multinomial(a.abs() + 0.1, 4, True),
    "multinomial(batched)": lambda lib, a, c: lib.multinomial(a.abs() + 0.1, 3),
    "multinomial(batched, one)": lambda lib, a, c: lib.multinomial(a.abs() + 0.1, 1),
    "multinomial(batched 2-d)": lambda lib, a, c: lib.multinomial(a.reshape(2, 3).abs() + 0.1, 2),
    "multinomial(unbatched, replaced)": (
        lambda lib, a, c: lib.multinomial(c.abs() + 0.1, 4, True) + a[:1].long()
    ),
    "multinomial(unbatched)": lambda lib, a, c: lib.multinomial(c.abs() + 0.1, 3) + a[:1].long(),
    "multinomial(unbatched 2-d)": (
        lambda lib, a, c: lib.multinomial(c.reshape(2, 3).abs() + 0.1, 2, True) + a[:1].long()
    ),
    "normal(mean batched)": lambda lib, a, c: lib.normal(a, 2.0),
    "normal(std batched)": lambda lib, a, c: lib.normal(1.0, a.abs() + 1),
    "normal(both batched)": lambda lib, a, c: lib.normal(a, a.abs() + 1),
    "normal(mean batched, std not)": lambda lib, a, c: lib.normal(a, c.abs() + 1),
    "normal(mean unbatched)": lambda lib, a, c: a + lib.normal(c, 2.0),
    "normal(both unbatched)": lambda lib, a, c: a + lib.normal(c, c.abs() + 1),
    # factories and *_likes
    "rand": lambda lib, a, c: a + lib.rand(6, dtype=lib.float64),
    "randn": lambda lib, a, c: a + lib.randn(6, dtype=lib.float64),
    "randint": lambda lib, a, c: a + lib.randint(0, 10, (6,)),
    "randperm": lambda lib, a, c: a + lib.randperm(6),
    "normal(numbers)": lambda lib, a, c: a + lib.normal(0.0, 2.0, (6,), dtype=lib.float64),
    "rand_like(batched)": lambda lib, a, c: lib.rand_like(a),
    "rand_like(unbatched)": lambda lib, a, c: a + lib.rand_like(c),
    "randn_like(batched)": lambda lib, a, c: lib.randn_like(a),
    "randn_like(unbatched)": lambda lib, a, c: a + lib.randn_like(c),
    "randint_like(batched)": lambda lib, a, c: lib.randint_like(a, 7),
    "randint_like(unbatched)": lambda lib, a, c: a + lib.randint_like(c, 7),
    # dropouts
    "dropout": lambda lib, a, c: _nn(lib).dropout(a + 1, 0.5),
    "dropout(unbatched)": lambda lib, a, c: a + _nn(lib).dropout(c + 1, 0.5),
    "dropout(inplace)": lambda lib, a, c: _nn(lib).dropout(a + 1, 0.5, inplace=True),
    "dropout1d": lambda lib, a, c: _nn(lib).dropout1d(a.reshape(2, 3) + 1, 0.5),
    "dropout1d(unbatched)": (
        lambda lib, a, c: a + _nn(lib).dropout1d(c.reshape(2, 3) + 1, 0.5).reshape(6)
    ),
    "dropout2d": lambda lib, a, c: _nn(lib).dropout2d(a.reshape(1, 2, 3, 1) + 1, 0.5),
    "dropout3d": lambda lib, a, c: _nn(lib).dropout3d(a.reshape(2, 3, 1, 1) + 1, 0.5),
    "dropout3d(unbatched)": (
        lambda lib, a, c: a + _nn(lib).dropout3d(c.reshape(2, 3, 1, 1) + 1, 0.5).reshape(6)
    ),
    "alpha_dropout": lambda lib, a, c: _nn(lib).alpha_dropout(a + 1, 0.5, True),
    "alpha_dropout(unbatched)": lambda lib, a, c: a + _nn(lib).alpha_dropout(c + 1, 0.5, True),
    "feature_alpha_dropout": (
        lambda lib, a, c: _nn(lib).feature_alpha_dropout(a.reshape(2, 3, 1) + 1, 0.5, True)
    ),
    "feature_alpha_dropout(unbatched)": lambda lib, a, c: (
        a + _nn(lib).feature_alpha_dropout(c.reshape(2, 3, 1) + 1, 0.5, True).reshape(6)
    ),
    "Dropout module": lambda lib, a, c: lib.func.functional_call(lib.nn.Dropout(0.5), {}, (a + 1,)),
}


def _run(fn: Callable, lib: Any, func: Any, vmapped: Callable[[Callable], Callable], x: Any) -> Any:
    """The vmapped draw from seed 0, and three numbers drawn after it; or the exception."""
    lib.manual_seed(0)
    c = lib.tensor(np.linspace(-1.0, 1.0, 6))
    try:
        out = vmapped(lambda a: fn(lib, a, c))(lib.tensor(x))
    except (RuntimeError, ValueError) as err:
        return err
    return out.detach().numpy(), lib.rand(3, dtype=lib.float64).numpy()


def _agree(fn: Callable, make: Callable[[Any], Callable[[Callable], Callable]], x: Any) -> str:
    """'agree' (equal bits, equal state after) or 'both refuse', asserted against torch."""
    ours, theirs = _run(fn, cr, cf, make(cf), x), _run(fn, torch, tf, make(tf), x)
    if isinstance(theirs, Exception):
        assert isinstance(ours, Exception), f"torch refuses ({theirs}); chainrule draws"
        assert isinstance(ours, (Refused, ValueError)), f"not chainrule's own refusal: {ours!r}"
        assert not isinstance(ours, Refused) or str(ours).startswith("vmap: ")
        return "both refuse"
    assert not isinstance(ours, Exception), f"torch draws; chainrule refuses: {ours}"
    (values, after), (want, want_after) = ours, theirs
    assert values.dtype == want.dtype and values.shape == want.shape
    np.testing.assert_array_equal(values, want)
    np.testing.assert_array_equal(after, want_after)  # the same numbers taken
    return "agree"


def _examples(in_dims: int) -> Any:
    x = np.arange(B * 6, dtype=np.float64).reshape(B, 6) / 10 - 0.5
    return np.ascontiguousarray(x.T) if in_dims == 1 else x


FAST = {("uniform_(unbatched)", "different", 0), ("multinomial(unbatched)", "different", 1)}
FAST |= {("normal(both batched)", "same", 0), ("feature_alpha_dropout", "different", 1)}
FAST |= {("bernoulli(unbatched)", "different", 0), ("randperm", "error", 0)}
FAST |= {("bernoulli(batched, number p)", "different", 1)}


def _cases() -> list[Any]:
    cases = []
    for name in OPS:
        for mode in MODES:
            for in_dims in (0, 1):
                marks: list[Any] = [] if (name, mode, in_dims) in FAST else [pytest.mark.slow]
                cases.append(pytest.param(name, mode, in_dims, marks=marks))
    return cases


@pytest.mark.parametrize(("name", "mode", "in_dims"), _cases())
def test_a_random_op_in_vmap_draws_or_refuses_as_torch(name: str, mode: str, in_dims: int) -> None:
    make = lambda func: lambda f: func.vmap(f, in_dims, randomness=mode)  # noqa: E731
    _agree(OPS[name], make, _examples(in_dims))


def test_the_matrix_runs_and_refuses_where_torch_does() -> None:
    """A few outcomes pinned: the in-place fill of a tensor not batched is refused at
    'different' (PyTorch: "Cannot ask for different inplace randomness on an unbatched
    tensor"), drawn once at 'same'; a draw from a batched tensor is refused at 'same'."""
    x = _examples(0)
    for mode, want in (("different", "both refuse"), ("same", "agree"), ("error", "both refuse")):
        make = lambda func, mode=mode: lambda f: func.vmap(f, randomness=mode)  # noqa: E731
        assert _agree(OPS["normal_(unbatched)"], make, x) == want
    make = lambda func: lambda f: func.vmap(f, randomness="same")  # noqa: E731
    assert _agree(OPS["multinomial(batched)"], make, x) == "both refuse"
    with pytest.raises(Refused, match=r"^vmap: cauchy_ with randomness='different' on a tensor"):
        cf.vmap(lambda a: a + cr.ones(6).cauchy_(), randomness="different")(cr.zeros(B, 6))
    with pytest.raises(Refused, match=r"^vmap: called random operation .* got geometric_"):
        cf.vmap(lambda a: a + cr.ones(6).geometric_(0.5))(cr.zeros(B, 6))
    inner = cf.vmap(lambda a: a.clone().bernoulli_(0.5), randomness="different")
    nested = cf.vmap(inner, randomness="same")
    with pytest.raises(Refused, match=r"^vmap: bernoulli_ of a number p on a tensor batched"):
        nested(cr.zeros(2, B, 6))


# -- nested vmaps and chunks ------------------------------------------------------------------

NESTINGS = [("same", "different"), ("different", "same"), ("different", "different")]
NESTINGS += [("same", "same")]
# PyTorch refuses an in-place bernoulli_ of a number p on a tensor batched at an inner level
# of randomness 'different' (its other fills it draws); chainrule refuses it too


def _nested_cases() -> list[Any]:
    cases = []
    for name in OPS:
        for outer, inner in NESTINGS:
            fast = (name, outer, inner) == ("dropout", "different", "same")
            cases.append(pytest.param(name, outer, inner, marks=[] if fast else [pytest.mark.slow]))
    return cases


@pytest.mark.parametrize(("name", "outer", "inner"), _nested_cases())
def test_nested_vmaps_draw_as_torch(name: str, outer: str, inner: str) -> None:
    def make(func: Any) -> Callable[[Callable], Callable]:
        return lambda f: func.vmap(func.vmap(f, randomness=inner), randomness=outer)

    x = np.arange(2 * B * 6, dtype=np.float64).reshape(2, B, 6) / 10 - 0.5
    _agree(OPS[name], make, x)


def _chunk_cases() -> list[Any]:
    fast = {("rand", "same"), ("randperm", "different")}
    return [
        pytest.param(name, mode, marks=[] if (name, mode) in fast else [pytest.mark.slow])
        for name in OPS
        for mode in ("same", "different")
    ]


@pytest.mark.parametrize(("name", "mode"), _chunk_cases())
def test_chunks_draw_as_torch(name: str, mode: str) -> None:
    """chunk_size=2 of 3 examples: at 'same' every chunk draws from the state vmap began
    with, as torch's chunks do; at 'different' the chunks draw one after the other."""
    make = lambda func: lambda f: func.vmap(f, randomness=mode, chunk_size=2)  # noqa: E731
    _agree(OPS[name], make, _examples(0))
