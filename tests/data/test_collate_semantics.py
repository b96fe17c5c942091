"""default_collate against PyTorch's where NumPy strings, Tensors mixed with NumPy arrays,
and samples of different shapes meet it."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch.utils.data import default_collate as torch_collate

import chainrule as cr
from chainrule.data import DataLoader, default_collate

REFUSED_ARRAYS = {
    "str": [np.array(["a", "bb"]), np.array(["c", "d"])],
    "0-d str": [np.array("a"), np.array("b")],
    "bytes": [np.array([b"a"]), np.array([b"b"])],
    "object": [np.array([1, "a"], dtype=object), np.array([2, "b"], dtype=object)],
    "datetime": [np.array(["2020-01-01"], dtype="datetime64[D]")] * 2,
}


@pytest.mark.parametrize("name", list(REFUSED_ARRAYS))
def test_arrays_of_strings_objects_and_dates_are_refused_as_by_torch(name) -> None:
    batch = REFUSED_ARRAYS[name]
    with pytest.raises(TypeError):
        torch_collate(batch)
    with pytest.raises(TypeError) as caught:
        default_collate(batch)
    assert str(caught.value).startswith("default_collate: a batch must hold tensors")
    assert str(caught.value).endswith(f"found an array of dtype {batch[0].dtype}")


def test_numpy_string_scalars_come_back_as_strings_as_from_torch() -> None:
    for batch in ([np.str_("a"), np.str_("bc")], [np.bytes_(b"a"), np.bytes_(b"b")]):
        ours, theirs = default_collate(batch), torch_collate(batch)
        assert isinstance(ours, list) and ours == theirs == batch
    samples = [(np.float32(i), np.str_(f"name{i}")) for i in range(3)]
    x, names = next(iter(DataLoader(samples, batch_size=3)))
    assert x.tolist() == [0.0, 1.0, 2.0] and names == ["name0", "name1", "name2"]


def test_a_tensor_among_arrays_is_its_array_as_in_torch() -> None:
    ours = default_collate([np.arange(3.0), cr.tensor([4.0, 5.0, 6.0], dtype=cr.float64)])
    theirs = torch_collate([np.arange(3.0), torch.tensor([4.0, 5.0, 6.0], dtype=torch.float64)])
    assert isinstance(ours, cr.Tensor) and ours.dtype == cr.float64
    assert np.array_equal(ours.numpy(), theirs.numpy())


def test_an_array_among_tensors_is_refused_as_by_torch() -> None:
    with pytest.raises(TypeError):
        torch_collate([torch.zeros(2), np.zeros(2)])
    with pytest.raises(
        TypeError,
        match="default_collate: expected a Tensor as element 1 of the batch, as element 0 is; "
        "got numpy.ndarray",
    ):
        default_collate([cr.zeros(2), np.zeros(2)])


@pytest.mark.parametrize("kind", ["numpy", "tensor", "tensor with grad", "mixed"])
def test_samples_of_different_shapes_are_refused_naming_the_shapes(kind) -> None:
    a, b = np.zeros((2, 3)), np.zeros((3, 2))
    batch = {
        "numpy": [a, a, b],
        "tensor": [cr.tensor(a), cr.tensor(a), cr.tensor(b)],
        "tensor with grad": [cr.tensor(a, requires_grad=True), cr.tensor(a), cr.tensor(b)],
        "mixed": [a, cr.tensor(a), cr.tensor(b)],
    }[kind]
    with pytest.raises(RuntimeError, match=r"got \[2, 3\] at entry 0 and \[3, 2\] at entry 2"):
        torch_collate([torch.as_tensor(np.asarray(x)) for x in batch])
    with pytest.raises(
        ValueError,
        match=r"default_collate: the samples of a batch differ in shape; got shape \(2, 3\) at "
        r"entry 0 and \(3, 2\) at entry 2",
    ):
        default_collate(batch)
