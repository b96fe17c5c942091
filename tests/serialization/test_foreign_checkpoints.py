"""Checkpoints other programs wrote: an optimizer state_dict saved by torch.optim loads into
chainrule's optimizer and keeps training as torch's does; float16 and bfloat16 safetensors
files (the common Hugging Face ones) load, and dtypes chainrule lacks are refused by name."""

from __future__ import annotations

import json
import struct

import ml_dtypes
import numpy as np
import pytest
import torch

import chainrule as cr

OPTIMIZERS = {
    "adam": ("Adam", {"lr": 0.05}),
    "adam-amsgrad-decay": ("Adam", {"lr": 0.05, "amsgrad": True, "weight_decay": 0.1}),
    "adamw": ("AdamW", {"lr": 0.05, "betas": (0.8, 0.95), "weight_decay": 0.2}),
    "sgd-momentum": ("SGD", {"lr": 0.05, "momentum": 0.9}),
    "sgd-nesterov-decay": ("SGD", {"lr": 0.05, "momentum": 0.9, "nesterov": True,
                                   "weight_decay": 0.01}),
    "rmsprop-centered": ("RMSprop", {"lr": 0.01, "momentum": 0.5, "centered": True}),
}  # fmt: skip


def loss_of(w, b, x, y):
    """A loss whose gradient changes from step to step: (x w^T + b - y)^2 + w^4."""
    return ((x @ w.T + b - y) ** 2).mean() + 0.1 * (w**4).sum()


def as_is(value):
    return value


def converted(value):
    return cr.tensor(value.numpy()) if isinstance(value, torch.Tensor) else value


@pytest.mark.parametrize("convert", ["tensors", "cr.save", "torch tensors as they are"])
@pytest.mark.parametrize("kind", list(OPTIMIZERS))
def test_a_torch_optimizer_state_dict_keeps_training_as_in_torch(kind, convert, tmp_path):
    name, options = OPTIMIZERS[kind]
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((8, 3)).astype(np.float32), rng.standard_normal((8, 2))
    y = y.astype(np.float32)
    w = torch.tensor(rng.standard_normal((2, 3)).astype(np.float32), requires_grad=True)
    b = torch.zeros(2, requires_grad=True)
    opt = getattr(torch.optim, name)([w, b], **options)

    def torch_step():
        opt.zero_grad()
        loss_of(w, b, torch.tensor(x), torch.tensor(y)).backward()
        opt.step()

    for _ in range(4):
        torch_step()
    saved = opt.state_dict()
    fix = as_is if convert == "torch tensors as they are" else converted
    state = {
        "state": {i: {k: fix(v) for k, v in s.items()} for i, s in saved["state"].items()},
        "param_groups": saved["param_groups"],
    }
    if convert == "cr.save":
        cr.save(state, tmp_path / "optimizer.safetensors")
        state = cr.load(tmp_path / "optimizer.safetensors")
    cw = cr.tensor(w.detach().numpy(), requires_grad=True)
    cb = cr.tensor(b.detach().numpy(), requires_grad=True)
    copt = getattr(cr.optim, name)([cw, cb], **options)
    copt.load_state_dict(state)
    for _ in range(6):
        torch_step()
        copt.zero_grad()
        loss_of(cw, cb, cr.tensor(x), cr.tensor(y)).backward()
        copt.step()
        np.testing.assert_allclose(cw.numpy(), w.detach().numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(cb.numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)
    for key, buffer in opt.state_dict()["state"][0].items():  # the buffers moved on as torch's
        ours = copt.state_dict()["state"][0][key]
        if key == "step":
            assert ours == int(buffer) == 10
        else:
            np.testing.assert_allclose(ours.numpy(), buffer.numpy(), rtol=1e-5, atol=1e-7)


# -- half-precision safetensors files --------------------------------------------------------


def write_by_hand(path, tensors: dict[str, tuple[str, tuple, bytes]]) -> None:
    """A safetensors file as the format describes it: the header's length (8 bytes, little
    endian), the JSON header (dtype, shape, data_offsets per tensor), then the bytes."""
    header, data = {}, b""
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {"dtype": dtype, "shape": list(shape),
                        "data_offsets": [len(data), len(data) + len(raw)]}  # fmt: skip
        data += raw
    text = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(text)) + text + data)


def test_half_precision_files_by_hand_load_as_float16_and_bfloat16(tmp_path) -> None:
    values = np.array([[1.0, -2.5, 3.140625], [0.0, 65504.0, -1e-3]])
    half = values.astype(np.float16)
    brain = values.astype(ml_dtypes.bfloat16)
    path = tmp_path / "hf.safetensors"
    write_by_hand(path, {"model.embed.weight": ("BF16", (2, 3), brain.tobytes()),
                         "model.norm.weight": ("F16", (2, 3), half.tobytes())})  # fmt: skip
    back = cr.load(path)
    assert back["model.norm.weight"].dtype == cr.float16
    assert back["model.embed.weight"].dtype == cr.bfloat16
    np.testing.assert_array_equal(back["model.norm.weight"].numpy(), half)
    np.testing.assert_array_equal(back["model.embed.weight"].float().numpy(),
                                  brain.astype(np.float32))  # fmt: skip


def test_half_precision_files_from_the_safetensors_package_load(tmp_path) -> None:
    import safetensors.torch

    weights = {"a": torch.randn(4, 5, generator=torch.Generator().manual_seed(0)),
               "b": torch.arange(6.0).reshape(2, 3)}  # fmt: skip
    path = tmp_path / "torch.safetensors"
    safetensors.torch.save_file({"a.bf16": weights["a"].bfloat16(),
                                 "b.f16": weights["b"].half()}, path)  # fmt: skip
    back = cr.load(path)
    expected = weights["a"].bfloat16().float().numpy()
    np.testing.assert_array_equal(back["a.bf16"].float().numpy(), expected)
    np.testing.assert_array_equal(back["b.f16"].numpy(), weights["b"].half().numpy())
    # and back again: chainrule's own file of them, read by torch
    cr.save(back, tmp_path / "again.safetensors")
    again = safetensors.torch.load_file(tmp_path / "again.safetensors")
    assert again["a.bf16"].dtype == torch.bfloat16 and again["b.f16"].dtype == torch.float16
    assert torch.equal(again["a.bf16"], weights["a"].bfloat16())
    assert torch.equal(again["b.f16"], weights["b"].half())


def test_a_half_precision_state_dict_loads_into_a_model(tmp_path) -> None:
    import safetensors.torch

    torch.manual_seed(0)
    layer = torch.nn.Linear(3, 2)
    state = {k: v.detach().bfloat16() for k, v in layer.state_dict().items()}
    safetensors.torch.save_file(state, tmp_path / "linear.safetensors")
    ours = cr.nn.Linear(3, 2)
    ours.load_state_dict(cr.load(tmp_path / "linear.safetensors"))
    assert ours.weight.dtype == cr.float32  # the model keeps its dtype; the values are cast
    np.testing.assert_array_equal(ours.weight.numpy(), state["weight"].float().numpy())


@pytest.mark.parametrize("dtype", ["F8_E4M3", "F8_E5M2", "C64", "XYZ"])
def test_a_dtype_chainrule_lacks_is_refused_by_name(dtype, tmp_path) -> None:
    path = tmp_path / "f8.safetensors"
    write_by_hand(path, {"fine": ("F32", (1,), b"\0\0\0\0"), "w": (dtype, (2,), b"\1\2")})
    with pytest.raises(ValueError, match=rf"load: .*f8.safetensors: tensor 'w' has dtype {dtype}"):
        cr.load(path)
