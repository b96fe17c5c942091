"""Every factory and layer constructor names itself and the bad value: negative or float
sizes, arange's step of 0 (or pointing away from end), pooling windows of 0, as errors
raised where the value is given, never a bare NumPy message or a failure at first use."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule as cr

CASES = [
    ("zeros", lambda lib: lib.zeros(-1), r"^zeros: size must be non-negative ints; got \(-1,\)"),
    ("zeros float", lambda lib: lib.zeros(2.5), r"^zeros: size must be non-negative ints"),
    ("ones", lambda lib: lib.ones(2, -3), r"^ones: size must be non-negative ints; got \(2, -3\)"),
    ("empty", lambda lib: lib.empty(-1), r"^empty: size must be non-negative ints"),
    ("rand", lambda lib: lib.rand(1.5), r"^rand: size must be non-negative ints"),
    ("randn", lambda lib: lib.randn(-2), r"^randn: size must be non-negative ints"),
    ("full", lambda lib: lib.full((-1,), 2.0), r"^full: size must be non-negative ints"),
    ("eye", lambda lib: lib.eye(-1), r"^eye: n must be a non-negative int; got -1"),
    ("linspace", lambda lib: lib.linspace(0, 1, -1), r"^linspace: steps must be a non-negative"),
    ("arange 0", lambda lib: lib.arange(0, 5, 0), r"^arange: step must be nonzero and point"),
    ("arange away", lambda lib: lib.arange(0, 5, -1), r"^arange: step must be nonzero"),
    ("randint", lambda lib: lib.randint(5, 5, (2,)), r"^randint: expected low < high"),
    ("Embedding", lambda lib: lib.nn.Embedding(-1, 2), r"^Embedding: num_embeddings must be"),
    ("MaxPool2d", lambda lib: lib.nn.MaxPool2d(0), r"^MaxPool2d: kernel_size must be positive"),
    ("AvgPool2d", lambda lib: lib.nn.AvgPool2d(2, stride=0), r"^AvgPool2d: stride must be"),
    ("Linear", lambda lib: lib.nn.Linear(-1, 2), r"^Linear: in_features must be"),
]


# torch takes these at construction and refuses them at the first forward; chainrule at once
AT_FORWARD_IN_TORCH = {"MaxPool2d", "AvgPool2d"}


@pytest.mark.parametrize("name, make, pattern", CASES, ids=[c[0] for c in CASES])
def test_bad_sizes_are_named_errors(name, make, pattern) -> None:
    if name not in AT_FORWARD_IN_TORCH:
        with pytest.raises((ValueError, TypeError, RuntimeError)):
            make(torch)  # torch refuses it too
    else:
        with pytest.raises(RuntimeError):
            make(torch)(torch.ones(1, 1, 4, 4))
    with pytest.raises(ValueError, match=pattern):
        make(cr)


def test_sizes_take_what_torch_takes() -> None:
    assert cr.zeros(cr.tensor(3)).shape == torch.zeros(torch.tensor(3)).shape == (3,)
    assert cr.zeros(np.int64(2), 3).shape == (2, 3) and cr.ones((2, 0)).shape == (2, 0)
    assert cr.arange(5, 0, -1).tolist() == torch.arange(5, 0, -1).tolist()
    assert cr.arange(3, 3).shape == (0,) and cr.full((2,), 1.5).tolist() == [1.5, 1.5]
