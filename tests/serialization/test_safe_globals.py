"""Restricted loading as PyTorch's: a model saved whole loads with weights_only=True only
when every class and function its pickle names is allowed (safe_globals, add_safe_globals);
anything else is refused by name and none of its code runs."""

import io
import pickle
import sys

import pytest
import torch

import chainrule as cr
from tests.serialization.test_saved_semantics import evaluate, wordlm


def _allowed(lib, prog):
    return [prog.RNNModel, lib.nn.Dropout, lib.nn.Linear, lib.nn.LSTM, lib.nn.Embedding]


@pytest.mark.parametrize("lib", [torch, cr], ids=["torch", "chainrule"])
def test_a_whole_model_loads_inside_safe_globals(tmp_path, monkeypatch, lib):
    prog = wordlm(lib)
    monkeypatch.setitem(sys.modules, prog.__name__, prog)
    lib.manual_seed(0)
    corpus = prog.Corpus(prog.TEXT)
    val = prog.batchify(corpus.valid, 2)
    model = prog.RNNModel("LSTM", len(corpus.dictionary), 16, 16, 2, tie_weights=True)
    path = tmp_path / "model.pt"
    lib.save(model, path)
    unsafe = lib.serialization.get_unsafe_globals_in_checkpoint(path)
    assert f"{prog.__name__}.RNNModel" in unsafe and len(unsafe) == 5  # the model and 4 layers
    with lib.serialization.safe_globals(_allowed(lib, prog)):
        assert all(e in lib.serialization.get_safe_globals() for e in _allowed(lib, prog))
        with open(path, "rb") as f:
            back = lib.load(f)
    assert prog.RNNModel not in lib.serialization.get_safe_globals()  # gone with the block
    assert type(back) is prog.RNNModel and back.decoder.weight is back.encoder.weight
    assert evaluate(prog, back, val) == evaluate(prog, model, val)
    with lib.serialization.safe_globals(_allowed(lib, prog)[1:]):  # the model's class left out
        with pytest.raises(pickle.UnpicklingError, match="RNNModel"):
            lib.load(path)


@pytest.mark.parametrize("lib", [torch, cr], ids=["torch", "chainrule"])
def test_add_safe_globals_lasts_until_cleared(tmp_path, lib):
    path = tmp_path / "linear.pt"
    lib.save(lib.nn.Linear(2, 3), path)
    with pytest.raises(pickle.UnpicklingError, match="Linear"):
        lib.load(path)
    before = lib.serialization.get_safe_globals()  # torch's own modules register some
    lib.serialization.add_safe_globals([lib.nn.Linear])
    try:
        assert isinstance(lib.load(path), lib.nn.Linear)
        assert lib.load(path).weight.shape == (3, 2)
        lib.serialization.clear_safe_globals()
        assert lib.serialization.get_safe_globals() == []
        with pytest.raises(pickle.UnpicklingError):
            lib.load(path)
    finally:
        lib.serialization.clear_safe_globals()
        lib.serialization.add_safe_globals(before)


class Payload:
    """A class whose unpickling would write a file: a pickle that names it must run nothing."""

    ran: list[str] = []

    def __reduce__(self):
        return (Payload.ran.append, ("ran",))


def test_a_hostile_pickle_is_refused_before_any_of_it_runs(tmp_path):
    model = cr.nn.Linear(2, 2)
    model.extra = Payload()  # what an attacker adds to a model file
    path = tmp_path / "hostile.pt"
    cr.save(model, path)
    with cr.serialization.safe_globals([cr.nn.Linear]):
        with pytest.raises(pickle.UnpicklingError, match=r"builtins\.getattr|list\.append"):
            cr.load(path)
    assert Payload.ran == []
    names = cr.serialization.get_unsafe_globals_in_checkpoint(path)
    assert "chainrule.nn.layers.Linear" in names and Payload.ran == []
    # an os.system call, as a hand-made pickle would carry it
    raw = io.BytesIO(b"chainrule pickled object\nLinear\n" + b"cposix\nsystem\n(S'touch x'\ntR.")
    with pytest.raises(pickle.UnpicklingError, match=r"posix\.system"):
        cr.load(raw)
    raw.seek(0)
    assert cr.serialization.get_unsafe_globals_in_checkpoint(raw) == ["posix.system"]


def test_a_state_dict_needs_no_allow_list_and_names_nothing(tmp_path):
    model = cr.nn.Sequential(cr.nn.Linear(2, 3), cr.nn.BatchNorm1d(3))
    path = tmp_path / "state.pt"
    cr.save(model.state_dict(), path)
    assert cr.serialization.get_unsafe_globals_in_checkpoint(path) == []
    assert set(cr.load(path)) == set(model.state_dict())


class Holder(cr.nn.Module):
    """A module holding a buffer of every dtype, a dtype and a Size."""

    def __init__(self):
        super().__init__()
        kinds = [cr.float16, cr.bfloat16, cr.float32, cr.float64, cr.int8, cr.int16, cr.int32]
        for i, dtype in enumerate([*kinds, cr.int64, cr.uint8, cr.bool]):
            self.register_buffer(f"b{i}", cr.zeros(2, dtype=dtype))
        self.dtype_attr, self.shape_attr = cr.float64, cr.Size([2, 3])


def test_tensors_of_every_dtype_pickled_inside_a_model_need_no_allow_list(tmp_path):
    path = tmp_path / "holder.pt"
    cr.save(Holder(), path)
    assert cr.serialization.get_unsafe_globals_in_checkpoint(path) == [f"{__name__}.Holder"]
    with cr.serialization.safe_globals([Holder]):
        back = cr.load(path)
    assert back.dtype_attr is cr.float64 and back.b1.dtype == cr.bfloat16


def test_entries_that_are_not_classes_or_functions_are_refused():
    with pytest.raises(TypeError, match="add_safe_globals: each entry must be a class"):
        cr.serialization.add_safe_globals([3])
    cr.serialization.add_safe_globals([(Payload, "somewhere.Payload")])
    try:
        assert cr.serialization.get_safe_globals() == [(Payload, "somewhere.Payload")]
    finally:
        cr.serialization.clear_safe_globals()


def test_an_explicit_pickle_module_is_refused_with_weights_only(tmp_path):
    path = tmp_path / "m.pt"
    cr.save(cr.nn.Linear(1, 1), path)
    with pytest.raises(RuntimeError, match="explicit pickle_module"):
        cr.load(path, pickle_module=pickle)
