"""chainrule's random streams are PyTorch's, bit for bit: for each seed, every sampler
draws the numbers torch 2.13 draws on this CPU (compared as raw bits, not within a
tolerance), and leaves the generator in the same state (its 5056 state bytes compared
after every draw). A torch release that changes a stream fails here."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import chainrule as cr

torch = pytest.importorskip("torch")

SEEDS = (0, 42, 1337, 2147483647)
SIZES = (1, 3, 15, 16, 17, 100, 1000, 100_000)
DTYPES = (("float32", torch.float32, cr.float32), ("float64", torch.float64, cr.float64))


def bits(x: Any) -> np.ndarray:
    a = np.ascontiguousarray(x.detach().numpy() if hasattr(x, "detach") else x.numpy())
    return a.view(f"u{a.dtype.itemsize}") if a.dtype.kind == "f" else a


def same(theirs: Any, ours: Any) -> None:
    t, o = bits(theirs), bits(ours)
    assert t.dtype == o.dtype and t.shape == o.shape, (t.dtype, o.dtype, t.shape, o.shape)
    differ = int((t != o).sum())
    assert differ == 0, f"{differ} of {t.size} elements differ"


def same_state(tg: Any, cg: Any) -> None:
    t, o = tg.get_state().numpy(), cg.get_state().numpy()
    assert (t == o).all(), f"state bytes differ at {np.flatnonzero(t != o)[:8].tolist()}"


def twins(seed: int, draw: Callable[[Any, Any], Any]) -> None:
    """draw(lib, generator) on torch and on chainrule from the same seed, twice in a row
    (the second call continues the stream), compared with their generators' states."""
    tg, cg = torch.Generator().manual_seed(seed), cr.Generator().manual_seed(seed)
    for _ in range(2):
        same(draw(torch, tg), draw(cr, cg))
        same_state(tg, cg)


def dtype_of(lib: Any, name: str) -> Any:
    return getattr(lib, name)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("name", ["float32", "float64"])
def test_rand_randn_normal_uniform(seed: int, n: int, name: str) -> None:
    twins(seed, lambda lib, g: lib.rand(n, generator=g, dtype=dtype_of(lib, name)))
    twins(seed, lambda lib, g: lib.randn(n, generator=g, dtype=dtype_of(lib, name)))
    twins(
        seed, lambda lib, g: lib.empty(n, dtype=dtype_of(lib, name)).normal_(0.3, 1.7, generator=g)
    )
    twins(
        seed,
        lambda lib, g: lib.empty(n, dtype=dtype_of(lib, name)).uniform_(-0.3, 0.7, generator=g),
    )


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("name", ["float32", "float64"])
def test_one_uniform_per_element(seed: int, n: int, name: str) -> None:
    def empty(lib: Any) -> Any:
        return lib.empty(n, dtype=dtype_of(lib, name))

    twins(seed, lambda lib, g: empty(lib).bernoulli_(0.3, generator=g))
    p = torch.rand(n, generator=torch.Generator().manual_seed(5), dtype=dtype_of(torch, name))
    twins(seed, lambda lib, g: lib.bernoulli(lib.tensor(p.numpy()), generator=g))
    twins(seed, lambda lib, g: empty(lib).exponential_(2.5, generator=g))
    twins(seed, lambda lib, g: empty(lib).cauchy_(0.5, 2.0, generator=g))
    twins(seed, lambda lib, g: empty(lib).geometric_(0.3, generator=g))
    twins(seed, lambda lib, g: empty(lib).log_normal_(0.5, 0.7, generator=g))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("shape", [(1,), (27,), (5, 27), (3, 1000)])
@pytest.mark.parametrize("name", ["float32", "float64"])
def test_multinomial(seed: int, shape: tuple, name: str) -> None:
    w = torch.rand(shape, generator=torch.Generator().manual_seed(9), dtype=dtype_of(torch, name))
    for k, replacement in [(1, True), (1, False), (100, True)] + [(min(5, shape[-1]), False)]:
        twins(
            seed,
            lambda lib, g, k=k, r=replacement: lib.multinomial(
                lib.tensor(w.numpy()), k, r, generator=g
            ),
        )


@pytest.mark.parametrize("seed", SEEDS)
def test_non_contiguous_tensors_fill_in_memory_order(seed: int) -> None:
    twins(seed, lambda lib, g: lib.empty(20, 8).t().normal_(generator=g))
    twins(seed, lambda lib, g: lib.empty(20, 8).t().uniform_(-1, 1, generator=g))
    twins(seed, lambda lib, g: lib.empty(6, 5, 4).permute(2, 0, 1).exponential_(generator=g))


@pytest.mark.parametrize("seed", SEEDS)
def test_normal_forms_and_like_factories(seed: int) -> None:
    mean, std = np.linspace(-1, 1, 20, dtype=np.float32), np.linspace(0.5, 2, 20, dtype=np.float32)
    twins(seed, lambda lib, g: lib.normal(lib.tensor(mean), lib.tensor(std), generator=g))
    twins(seed, lambda lib, g: lib.normal(lib.tensor(mean), 2.0, generator=g))
    twins(seed, lambda lib, g: lib.normal(0.5, lib.tensor(std), generator=g))
    twins(seed, lambda lib, g: lib.normal(0.5, 2.0, (4, 5), generator=g))
    for name in ("rand_like", "randn_like"):
        torch.manual_seed(seed)
        cr.manual_seed(seed)
        same(getattr(torch, name)(torch.empty(4, 9)), getattr(cr, name)(cr.empty(4, 9)))


def test_one_stream_through_many_calls() -> None:
    """A mix of samplers on the global generator and on an explicit one: the small normal
    path keeps its second value in the generator for the next call, across other calls."""
    torch.manual_seed(7)
    cr.manual_seed(7)
    tg, cg = torch.Generator().manual_seed(3), cr.Generator().manual_seed(3)
    steps = [
        lambda lib, g: lib.randn(3),
        lambda lib, g: lib.randn(17, generator=g),
        lambda lib, g: lib.randn(1, dtype=lib.float64),
        lambda lib, g: lib.rand(5, generator=g),
        lambda lib, g: lib.randint(0, 9, (4,)),
        lambda lib, g: lib.randn(5),
        lambda lib, g: lib.multinomial(lib.ones(6), 2, generator=g),
        lambda lib, g: lib.randperm(9),
        lambda lib, g: lib.randn(2, 3, generator=g),
        lambda lib, g: lib.nn.functional.dropout(lib.ones(4, 5), 0.3),
    ]
    for step in steps:
        same(step(torch, tg), step(cr, cg))
        same_state(tg, cg)
        same(torch.get_rng_state(), cr.get_rng_state())


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("bounds", [(1e-3, 1e5), (-2.5e-9, 7.0), (100.0, 100.5), (-1.0, 1.0)])
def test_uniform_bounds_of_every_scale(seed: int, bounds: tuple) -> None:
    for name in ("float32", "float64"):
        twins(
            seed,
            lambda lib, g, d=name: lib.empty(1000, dtype=getattr(lib, d)).uniform_(
                *bounds, generator=g
            ),
        )


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("n", SIZES)
def test_integers_and_permutations(seed: int, n: int) -> None:
    for low, high in [
        (0, 10),
        (-5, 5),
        (0, 2**28 - 1),
        (0, 2**28),
        (0, 2**32 + 1),
        (-(2**40), 2**40),
    ]:
        twins(seed, lambda lib, g, a=low, b=high: lib.randint(a, b, (n,), generator=g))
    for name in ("int64", "int32", "int16", "uint8", "float32", "float64", "bool"):
        twins(seed, lambda lib, g, d=name: lib.empty(n, dtype=getattr(lib, d)).random_(generator=g))
    twins(seed, lambda lib, g: lib.empty(n, dtype=lib.int64).random_(3, 17, generator=g))
    twins(seed, lambda lib, g: lib.randperm(n, generator=g))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(
    "args", [(0.0, 0.02, -2.0, 2.0), (0.0, 1.0, 2.0, 3.0), (0.5, 2.0, -1.0, 3.0)]
)
def test_trunc_normal_is_torchs_rejection_sampler(seed: int, args: tuple) -> None:
    """Both of its branches: normal draws redrawn outside [a, b], and (under 30% of the
    mass inside) uniform candidates accepted by a second uniform."""
    for name in ("float32", "float64"):
        twins(
            seed,
            lambda lib, g, d=name: lib.nn.init.trunc_normal_(
                lib.empty(300, dtype=getattr(lib, d)), *args, generator=g
            ),
        )
