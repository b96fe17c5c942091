"""The legacy casts (byte, char, short, ...) and new_empty_strided, against PyTorch."""

from __future__ import annotations

import pytest
import torch

import chainrule as cr

CASTS = ["byte", "char", "short", "int", "long", "half", "float", "double", "bool"]


@pytest.mark.parametrize("name", CASTS)
def test_a_legacy_cast_gives_torchs_dtype_and_values(name: str) -> None:
    data = [[-3.7, 0.0, 2.5], [1.0, 130.2, -0.4]]
    ours = getattr(cr.tensor(data), name)()
    theirs = getattr(torch.tensor(data), name)()
    assert str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
    assert ours.tolist() == theirs.tolist()
    assert ours.type() == theirs.type().replace("torch.", "chainrule.")


def test_a_legacy_cast_keeps_a_memory_format() -> None:
    t = cr.zeros(2, 3, 4, 5).byte(memory_format=cr.channels_last)
    assert t.dtype == cr.uint8 and t.is_contiguous(memory_format=cr.channels_last)


@pytest.mark.parametrize(
    ("size", "stride"),
    [
        ((2, 3), (3, 1)),
        ((2, 3), (1, 2)),
        ((4,), (2,)),
        ((), ()),
        ((0, 3), (3, 1)),
        ((2, 2), (0, 1)),
    ],
)
def test_new_empty_strided_lies_as_torchs(size: tuple, stride: tuple) -> None:
    ours = cr.ones(3, dtype=cr.float64).new_empty_strided(size, stride)
    theirs = torch.ones(3, dtype=torch.float64).new_empty_strided(size, stride)
    assert ours.shape == theirs.shape and ours.dtype == cr.float64
    if ours.numel():
        assert ours.stride() == theirs.stride()
    ours.fill_(2.0)
    assert (ours == 2.0).all()


def test_new_empty_strided_takes_dtype_and_requires_grad() -> None:
    t = cr.zeros(2, dtype=cr.int64).new_empty_strided((2, 3), (1, 2), dtype=cr.float32,
                                                       requires_grad=True)  # fmt: skip
    assert t.dtype == cr.float32 and t.requires_grad and t.stride() == (1, 2)


def test_new_empty_strided_refuses_sizes_and_strides_of_different_lengths() -> None:
    with pytest.raises(ValueError, match=r"new_empty_strided: size and stride must have the same"):
        cr.zeros(2).new_empty_strided((2, 3), (1,))
