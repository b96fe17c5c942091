"""cr.save / cr.load: safetensors files, nested structures, atomic writes, damaged files."""

import json
import pickle
import struct

import numpy as np
import pytest
import safetensors.numpy
import safetensors.torch
import torch

import chainrule as cr
from chainrule import serialization
from chainrule.optim import SGD, Adam


def weights():
    rng = np.random.default_rng(0)
    return {
        "0.weight": cr.tensor(rng.standard_normal((4, 3)).astype(np.float32)),
        "0.bias": cr.tensor(rng.standard_normal(4)),
        "steps": cr.tensor(np.int64(7)),
        "mask": cr.tensor([True, False]),
        "empty": cr.zeros(0, 3),
    }


def assert_tensors_equal(a, b):
    assert isinstance(a, cr.Tensor) and isinstance(b, cr.Tensor)
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_state_dict_round_trip_and_readable_by_safetensors(tmp_path):
    sd = weights()
    path = tmp_path / "model.safetensors"
    cr.save(sd, path)
    back = cr.load(path)
    assert list(back) == list(sd)
    for key in sd:
        assert_tensors_equal(back[key], sd[key])
    back["0.weight"].numpy()[0, 0] = 5.0  # loaded arrays are writable and the caller's own
    plain = safetensors.numpy.load_file(path)
    assert set(plain) == set(sd)
    np.testing.assert_array_equal(plain["0.bias"], sd["0.bias"].numpy())
    assert torch.equal(
        safetensors.torch.load_file(path)["0.weight"], torch.tensor(sd["0.weight"].numpy())
    )


def test_nested_structure_round_trip(tmp_path):
    obj = {
        "state": {0: {"step": 3, "exp_avg": cr.ones(2)}, 2: {}},
        "param_groups": [
            {
                "lr": 0.1,
                "betas": (0.9, 0.999),
                "amsgrad": False,
                "name": None,
                "params": [0, 1, 2],
                "tag": "a.b",
            }
        ],
        "array": np.arange(3),
        "big_endian": np.arange(4, dtype=">f4")[::2],
        "scalar": np.float32(0.5),
        "nan": float("nan"),
        "tuple": ((), [], {}),
        '{"tensor": "x"}': '{"tensor": "x"}',  # strings that look like our encoding
    }
    cr.save(obj, tmp_path / "f")
    back = cr.load(tmp_path / "f")
    assert list(back) == list(obj)
    assert list(back["state"]) == [0, 2] and back["state"][2] == {}
    assert back["state"][0]["step"] == 3
    assert_tensors_equal(back["state"][0]["exp_avg"], obj["state"][0]["exp_avg"])
    assert back["param_groups"] == obj["param_groups"]
    assert isinstance(back["param_groups"][0]["betas"], tuple)
    assert isinstance(back["array"], np.ndarray) and back["array"].tolist() == [0, 1, 2]
    assert back["big_endian"].tolist() == [0, 2] and back["big_endian"].dtype == np.float32
    assert back["scalar"] == 0.5 and np.isnan(back["nan"])
    assert back["tuple"] == ((), [], {})
    assert back['{"tensor": "x"}'] == '{"tensor": "x"}'
    cr.save(cr.arange(3), tmp_path / "t")
    assert_tensors_equal(cr.load(tmp_path / "t"), cr.arange(3))


def test_model_state_dict_round_trip(tmp_path):
    nn = cr.nn
    cr.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    cr.save(model.state_dict(), tmp_path / "m.safetensors")
    cr.manual_seed(1)
    other = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    other.load_state_dict(cr.load(tmp_path / "m.safetensors"))
    x = cr.randn(5, 3)
    np.testing.assert_array_equal(other(x).numpy(), model(x).numpy())
    assert set(safetensors.numpy.load_file(tmp_path / "m.safetensors")) == {
        "0.weight",
        "0.bias",
        "2.weight",
        "2.bias",
    }


@pytest.mark.parametrize(
    "make",
    [
        lambda p: Adam(p, lr=0.05, amsgrad=True),
        lambda p: SGD(p, lr=0.1, momentum=0.9, nesterov=True),
    ],
)
def test_training_resumes_identically_after_save_and_load(tmp_path, make):
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((16, 3)), rng.standard_normal((16, 2))
    init = {"weight": rng.standard_normal((3, 2)), "bias": np.zeros(2)}

    def train(params, opt, steps):
        for _ in range(steps):
            r = x @ params["weight"].numpy() + params["bias"].numpy() - y  # (16, 2)
            params["weight"].grad = cr.tensor(x.T @ r / 8)
            params["bias"].grad = cr.tensor(r.sum(0) / 8)
            opt.step()

    straight = {k: cr.tensor(v, requires_grad=True) for k, v in init.items()}
    train(straight, make(list(straight.values())), 10)

    params = {k: cr.tensor(v, requires_grad=True) for k, v in init.items()}
    opt = make(list(params.values()))
    train(params, opt, 4)
    cr.save({"model": params, "optimizer": opt.state_dict()}, tmp_path / "ckpt")
    ckpt = cr.load(tmp_path / "ckpt")
    resumed = {k: v.requires_grad_() for k, v in ckpt["model"].items()}
    opt2 = make(list(resumed.values()))
    opt2.load_state_dict(ckpt["optimizer"])
    train(resumed, opt2, 6)
    for k in init:
        np.testing.assert_array_equal(resumed[k].numpy(), straight[k].numpy())


def test_failed_write_leaves_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "model.safetensors"
    cr.save(weights(), path)
    before = path.read_bytes()

    def broken_write(f, payload):
        f.write(payload[: len(payload) // 2])
        raise OSError("disk full")

    monkeypatch.setattr(serialization, "_write", broken_write)
    with pytest.raises(OSError, match="disk full"):
        cr.save({"w": cr.ones(1000)}, path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["model.safetensors"]

    monkeypatch.undo()
    monkeypatch.setattr(serialization.os, "fsync", lambda fd: (_ for _ in ()).throw(OSError("io")))
    with pytest.raises(OSError, match="io"):
        cr.save({"w": cr.ones(3)}, path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["model.safetensors"]


def test_unsavable_objects_touch_nothing(tmp_path):
    with pytest.raises(TypeError, match="dict keys must be str or int; got float"):
        cr.save({1.5: 1}, tmp_path / "x")
    with pytest.raises(ValueError, match="same dotted name 'a.b'"):
        cr.save({"a.b": cr.ones(1), "a": {"b": cr.ones(1)}}, tmp_path / "x")
    with pytest.raises(TypeError, match="save: cannot save 'z' of dtype complex128; a safetensors"):
        cr.save({"z": np.ones(2, dtype=complex)}, tmp_path / "x")
    assert list(tmp_path.iterdir()) == []


def rewrite_header(path, edit):
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n])
    edit(header)
    text = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(text)) + text + raw[8 + n :])


def test_damaged_files_raise_value_error_naming_the_path(tmp_path):
    good = tmp_path / "good"
    cr.save({"state": {0: {"m": cr.ones(4)}}, "lr": 0.1}, good)
    raw = good.read_bytes()
    cases = {
        "truncated": raw[:-5],
        "header_cut": raw[:12],
        "empty": b"",
        "pickle": pickle.dumps({"a": 1}),
        "text": b"hello, this is not a safetensors file at all",
        "flipped": raw[:-1] + bytes([raw[-1] ^ 1]),
    }
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(ValueError, match=f"load: .*{name}"):
            cr.load(tmp_path / name)
    with pytest.raises(ValueError, match="altered or damaged"):
        cr.load(tmp_path / "flipped")

    def point_elsewhere(header):
        structure = header["__metadata__"]["chainrule.structure"]
        header["__metadata__"]["chainrule.structure"] = structure.replace("state.0.m", "zz")

    def bad_json(header):
        header["__metadata__"]["chainrule.structure"] = "{not json"

    def too_deep(header):
        header["__metadata__"]["chainrule.structure"] = '{"list": [' * 100000 + "]}" * 100000

    for edit in (point_elsewhere, bad_json, too_deep):
        (tmp_path / "tampered").write_bytes(raw)
        rewrite_header(tmp_path / "tampered", edit)
        # the whole-file digest catches each before the structure is read
        with pytest.raises(ValueError, match="tampered was altered or damaged"):
            cr.load(tmp_path / "tampered")
    assert cr.load(good)["lr"] == 0.1


def test_foreign_safetensors_file_loads_by_name(tmp_path):
    safetensors.numpy.save_file({"a": np.ones(2, np.float32), "b.c": np.zeros(1)}, tmp_path / "f")
    back = cr.load(tmp_path / "f")
    assert set(back) == {"a", "b.c"} and isinstance(back["a"], cr.Tensor)
    assert back["a"].dtype == np.float32


def test_save_and_load_stream_the_tensors_holding_at_most_one_copy(tmp_path):
    """A save writes each array from its own memory (no copy of the data); a load reads
    each tensor into its own array (the data once, nothing beside it). Peaks measured with
    tracemalloc, which sees NumPy's and Python's allocations."""
    import tracemalloc

    rng = np.random.default_rng(0)
    state = {f"{i}.weight": cr.tensor(rng.standard_normal(1 << 20, dtype=np.float32))
             for i in range(8)}  # 32 MiB  # fmt: skip
    state["half"] = cr.ones(10).bfloat16()
    size = sum(t.numel() * t.element_size() for t in state.values())
    tracemalloc.start()
    try:
        cr.save(state, tmp_path / "big.safetensors")
        saving = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        back = cr.load(tmp_path / "big.safetensors")
        loading = tracemalloc.get_traced_memory()[1] - saving
    finally:
        tracemalloc.stop()
    assert saving < 0.25 * size and loading < 1.5 * size  # before: 3 and 2 times the data
    assert back["half"].dtype == cr.bfloat16
    np.testing.assert_array_equal(back["7.weight"].numpy(), state["7.weight"].numpy())


@pytest.mark.slow  # heavy; `make test-all` runs it
def test_the_checkpoint_memory_benchmark_runs(capsys):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parents[2] / "benchmarks"))
    import checkpoint_memory

    results = checkpoint_memory.main(["--mb", "4"])
    assert set(results) == {"save", "load"} and results["load"]["traced"] >= 1.0
    assert "tracemalloc" in capsys.readouterr().out


def test_file_objects_seekable_or_not(tmp_path):
    import io

    buffer = io.BytesIO()
    buffer.write(b"ahead")  # load reads from the position it is given
    cr.save(weights(), buffer)
    buffer.seek(5)
    assert_tensors_equal(cr.load(buffer)["0.weight"], weights()["0.weight"])

    class Pipe:  # read() only, as a pipe or a socket offers
        def __init__(self, data: bytes) -> None:
            self.data = io.BytesIO(data)

        def read(self, n: int = -1) -> bytes:
            return self.data.read(n)

    assert_tensors_equal(cr.load(Pipe(buffer.getvalue()[5:]))["0.bias"], weights()["0.bias"])
    with pytest.raises(ValueError, match="load: the file object is not a readable safetensors"):
        cr.load(Pipe(buffer.getvalue()[5:-3]))
