"""chainrule.arguments: the shared argument checks, and their wording where they are used."""

import re

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn
from chainrule.arguments import is_int, positive_int


@pytest.mark.parametrize(
    "value, expected",
    [(3, True), (0, True), (-2, True), (np.int64(3), True), (np.uint8(1), True),
     (True, False), (False, False), (np.bool_(True), False), (1.0, False), ("1", False),
     (None, False), (np.float32(2), False)],
)  # fmt: skip
def test_is_int_takes_integers_but_not_bools(value, expected):
    assert is_int(value) is expected


@pytest.mark.parametrize("value", [1, 7, np.int64(7), np.int32(2)])
def test_positive_int_returns_a_python_int(value):
    out = positive_int(value, "n", "op")
    assert out == value and type(out) is int


@pytest.mark.parametrize("value", [0, -1, True, False, 1.0, 2.5, "3", None, np.float64(1)])
def test_positive_int_refuses_naming_the_op_argument_and_value(value):
    message = f"op: n must be a positive int; got {value!r}"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        positive_int(value, "n", "op")


def test_positive_int_with_zero_ok_takes_zero():
    assert positive_int(0, "n", "op", zero_ok=True) == 0
    with pytest.raises(ValueError, match=r"^op: n must be a non-negative int; got -1$"):
        positive_int(-1, "n", "op", zero_ok=True)
    with pytest.raises(ValueError, match=r"^op: n must be a non-negative int; got False$"):
        positive_int(False, "n", "op", zero_ok=True)


def test_positive_int_with_none_ok_takes_none():
    assert positive_int(None, "n", "op", none_ok=True) is None
    assert positive_int(2, "n", "op", none_ok=True) == 2
    with pytest.raises(ValueError, match=r"^op: n must be a positive int or None; got 0$"):
        positive_int(0, "n", "op", none_ok=True)


def _optimizer():
    return cr.optim.SGD([nn.Parameter(cr.zeros(1))], lr=0.1)


USES = {  # where the check is used: a call with a bool where a positive int belongs
    "conv2d groups": (
        lambda: nn.functional.conv2d(cr.zeros(1, 2, 3, 3), cr.zeros(2, 2, 1, 1), groups=True),
        "conv2d: groups must be a positive int; got True",
    ),
    "avg_pool2d divisor_override": (
        lambda: nn.functional.avg_pool2d(cr.zeros(1, 1, 2, 2), 2, divisor_override=True),
        "avg_pool2d: divisor_override must be a positive int; got True",
    ),
    "Conv2d in_channels": (
        lambda: nn.Conv2d(True, 2, 1),
        "Conv2d: in_channels must be a positive int; got True",
    ),
    "Conv1d out_channels": (
        lambda: nn.Conv1d(2, 0, 1),
        "Conv1d: out_channels must be a positive int; got 0",
    ),
    "Conv2d groups": (
        lambda: nn.Conv2d(2, 2, 1, groups=0),
        "Conv2d: groups must be a positive int; got 0",
    ),
    "Linear in_features": (
        lambda: nn.Linear(-1, 2),
        "Linear: in_features must be a non-negative int; got -1",
    ),
    "Linear out_features": (
        lambda: nn.Linear(2, 1.0),
        "Linear: out_features must be a non-negative int; got 1.0",
    ),
    "StepLR step_size": (
        lambda: cr.optim.lr_scheduler.StepLR(_optimizer(), step_size=True),
        "StepLR: step_size must be a positive int; got True",
    ),
    "CosineAnnealingLR T_max": (
        lambda: cr.optim.lr_scheduler.CosineAnnealingLR(_optimizer(), T_max=0),
        "CosineAnnealingLR: T_max must be a positive int; got 0",
    ),
    "RandomSampler num_samples": (
        lambda: cr.data.RandomSampler(range(3), num_samples=True),
        "RandomSampler: num_samples must be a positive int; got True",
    ),
    "WeightedRandomSampler num_samples": (
        lambda: cr.data.WeightedRandomSampler([1.0], 0),
        "WeightedRandomSampler: num_samples must be a positive int; got 0",
    ),
    "BatchSampler batch_size": (
        lambda: cr.data.BatchSampler(range(3), True, False),
        "BatchSampler: batch_size must be a positive int; got True",
    ),
    "DataLoader batch_size": (
        lambda: cr.data.DataLoader(range(3), batch_size=True),
        "DataLoader: batch_size must be a positive int or None; got True",
    ),
    "DataLoader num_workers": (
        lambda: cr.data.DataLoader(range(3), num_workers=False),
        "DataLoader: num_workers must be a non-negative int; got False",
    ),
}


@pytest.mark.parametrize("call, message", list(USES.values()), ids=list(USES))
def test_each_use_refuses_with_the_shared_wording(call, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        call()


@pytest.mark.parametrize(
    "make",
    [lambda: nn.Conv2d(np.int64(2), 4, 3, groups=np.int64(2)), lambda: nn.Linear(np.int64(3), 0)],
)
def test_layers_keep_numpy_integer_sizes_as_python_ints(make):
    layer = make()
    sizes = [v for k, v in vars(layer).items() if k.endswith(("channels", "features", "groups"))]
    assert sizes and all(type(v) is int for v in sizes)
