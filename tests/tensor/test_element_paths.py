"""The paths of makemore's loops on tensors that record nothing: multinomial's weight checks
row by row, element reads and writes by Python ints, and arithmetic on 0-d tensors, each
against PyTorch."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
import torch

import chainrule as cr
import chainrule.autograd.forward_ad as fwAD


@pytest.mark.parametrize(
    "bad", [[1.0, -0.5, 2.0], [0.0, 0.0, 0.0], [1.0, np.nan, 1.0], [1.0, np.inf, 1.0]]
)
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_multinomial_checks_every_row(bad, dtype) -> None:
    weights = [[0.2, 0.3, 0.5], bad, [1.0, 1.0, 1.0]]
    with pytest.raises(RuntimeError):
        torch.tensor(weights, dtype=getattr(torch, dtype)).multinomial(1)
    with pytest.raises(ValueError, match="multinomial: weights must be finite, non-negative"):
        cr.tensor(weights, dtype=getattr(cr, dtype)).multinomial(1)


def test_multinomial_takes_rows_that_sum_above_zero_and_no_rows() -> None:
    tiny = cr.tensor([[0.0, 1e-30, 0.0], [3.0, 0.0, 0.0]], dtype=cr.float64)
    assert cr.multinomial(tiny, 2, True).tolist() == [[1, 1], [0, 0]]
    assert cr.multinomial(cr.ones(0, 3), 1, True).shape == (0, 1)


def test_sampled_letters_are_torchs() -> None:
    """makemore's sampling loop: a row of P, one draw, .item(), until index 0."""
    counts = np.random.default_rng(0).integers(1, 50, (27, 27)).astype(np.float32)

    def names(lib) -> list[list[int]]:
        P = lib.tensor(counts)
        P /= P.sum(1, keepdims=True)
        g = lib.Generator().manual_seed(2147483647)
        out = []
        for _ in range(5):
            ix, name = 0, []
            while True:
                ix = lib.multinomial(P[ix], num_samples=1, replacement=True, generator=g).item()
                name.append(ix)
                if ix == 0:
                    break
            out.append(name)
        return out

    assert names(cr) == names(torch)


@pytest.fixture(params=[True, False], ids=["fast", "plain"])
def switch(request):
    """Each case with the speed tricks on, then off."""
    with contextlib.nullcontext() if request.param else cr.fastpath.disabled():
        yield request.param


def test_an_element_read_by_ints_is_a_view_as_torchs(switch) -> None:
    for lib in (cr, torch):
        N = lib.zeros((4, 5), dtype=lib.int32)
        e, row = N[1, 2], N[3]
        assert e.shape == () and row.shape == (5,) and not e.requires_grad
        assert e._base is N and row._base is N
        before = N._version
        e += 7  # through the view: N's element, and every view's version
        row[4] = 2
        assert N[1, 2].item() == 7 and N[3, 4].item() == 2 and N.sum().item() == 9
        assert N._version == e._version == row._version == before + 2
        assert N[-1, -1].item() == 2 and N[1][2].item() == 7


def test_an_element_of_a_tensor_that_requires_grad_records_its_node(switch) -> None:
    x = cr.tensor([[0.0, 1, 2], [3, 4, 5]], requires_grad=True)
    y = x[1, 2]
    assert y.requires_grad and y.grad_fn is not None
    y.backward()
    assert x.grad.tolist() == [[0, 0, 0], [0, 0, 1]]
    with cr.no_grad():
        z = x[0]
    assert not z.requires_grad and z.grad_fn is None and z._base is x


def test_an_element_out_of_range_is_refused_in_either_path(switch) -> None:
    P = cr.ones(3, 4)
    for index in [(3, 0), (0, -5), (0, 0, 0)]:
        with pytest.raises(IndexError):
            torch.ones(3, 4)[index]
        with pytest.raises(IndexError, match="getitem"):
            P[index]


def test_element_reads_inside_vmap_and_dual_levels_take_the_op(switch) -> None:
    x = cr.arange(12.0).reshape(3, 4)
    assert cr.func.vmap(lambda r: r[2])(x).tolist() == [2.0, 6.0, 10.0]
    with fwAD.dual_level():
        d = fwAD.make_dual(x, cr.ones(3, 4) * 2)
        assert fwAD.unpack_dual(d[1, 2]).tangent.item() == 2.0


def test_element_writes_by_ints_as_torchs(switch) -> None:
    for lib in (cr, torch):
        x = lib.zeros(3, 4)
        x[1] = lib.ones(4)
        x[2, 3] = 5.0
        x[0, 0] = lib.tensor(2.5)
        assert x.tolist() == [[2.5, 0, 0, 0], [1, 1, 1, 1], [0, 0, 0, 5.0]]
        with pytest.raises((IndexError, ValueError, RuntimeError)):
            x[3] = 1.0
        with pytest.raises((ValueError, RuntimeError)):
            x[1] = lib.ones(5)


def test_element_reads_reach_a_replaced_apply(monkeypatch) -> None:
    """The exporter's trace replaces Function.apply to see every op: an element read goes
    through it then, switch on or not."""
    from chainrule.autograd.primitive import Function

    seen = []
    plain = Function.__dict__["apply"].__func__

    def apply(cls, *inputs, **options):
        seen.append(cls.__name__)
        return plain(cls, *inputs, **options)

    monkeypatch.setattr(Function, "apply", classmethod(apply))
    x = cr.arange(6.0).reshape(2, 3)
    assert x[1, 2].item() == 5.0 and x[0].tolist() == [0.0, 1.0, 2.0]
    assert seen.count("GetItem") == 2
