"""A pool's call is checked and planned once per input shape, dtype and arguments: a call with
the same ones reuses the plan, and what it would refuse is refused still, however often the
equal plain ints were seen before (2.0 == 2, True == 1, [2, 2] == (2, 2) as keys)."""

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule.nn import pooling

F = cr.nn.functional


def test_a_second_call_reuses_the_plan_and_agrees_with_torch():
    x = np.random.default_rng(0).standard_normal((2, 3, 5, 5)).astype(np.float32)
    pooling._PLANS.clear()
    first = F.max_pool2d(cr.tensor(x), 3, stride=2, padding=1, ceil_mode=True)
    assert len(pooling._PLANS) == 1
    again = F.max_pool2d(cr.tensor(x), 3, stride=2, padding=1, ceil_mode=True)
    assert len(pooling._PLANS) == 1
    want = torch.nn.functional.max_pool2d(torch.tensor(x), 3, 2, 1, ceil_mode=True)
    np.testing.assert_array_equal(first.numpy(), want.numpy())
    np.testing.assert_array_equal(again.numpy(), want.numpy())
    F.max_pool2d(cr.tensor(x[:, :, :4]), 3, stride=2, padding=1, ceil_mode=True)  # a new shape
    assert len(pooling._PLANS) == 2


@pytest.mark.parametrize("kernel", [2.0, (2.0, 2)])
def test_a_float_kernel_is_refused_after_the_int_one_was_parsed(kernel):
    x = cr.randn(1, 1, 4, 4)
    F.max_pool2d(x, 2)
    with pytest.raises(TypeError, match="max_pool2d: kernel_size must be an int"):
        F.max_pool2d(x, kernel)


def test_lists_are_parsed_each_time_as_before():
    x = np.random.default_rng(1).standard_normal((1, 2, 6, 6)).astype(np.float32)
    got = F.avg_pool2d(cr.tensor(x), [2, 3], stride=[2, 2])
    want = torch.nn.functional.avg_pool2d(torch.tensor(x), [2, 3], stride=2)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


def test_too_large_a_padding_is_refused_each_time():
    x = cr.randn(1, 1, 4, 4)
    for _ in range(2):
        with pytest.raises(ValueError, match="padding must be between 0 and half"):
            F.max_pool2d(x, 2, padding=2)


def test_a_bool_kernel_is_refused_after_the_int_one_was_planned():
    x = cr.randn(1, 1, 4, 4)
    F.avg_pool2d(x, 1)
    with pytest.raises(TypeError, match="avg_pool2d: kernel_size must be an int"):
        F.avg_pool2d(x, True)


@pytest.mark.parametrize("divisor", [None, 2])
@pytest.mark.parametrize("dtype", [np.float64, np.int64])
def test_another_dtype_is_planned_again(dtype, divisor):
    """The plan holds the weights in the input's dtype, and an integer's divisors."""
    x = np.random.default_rng(2).integers(-9, 9, (2, 3, 5, 6)).astype(np.float32)
    kw = dict(count_include_pad=False, divisor_override=divisor)
    F.avg_pool2d(cr.tensor(x), 3, 2, 1, **kw)
    got = F.avg_pool2d(cr.tensor(x.astype(dtype)), 3, 2, 1, **kw)
    want = torch.nn.functional.avg_pool2d(torch.tensor(x.astype(dtype)), 3, 2, 1, **kw)
    assert got.dtype == getattr(cr, str(want.dtype).removeprefix("torch."))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)
