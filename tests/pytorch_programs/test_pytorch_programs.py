"""Ordinary PyTorch programs (programs/, beside this file) run twice: on torch, and on
chainrule with ``import torch`` resolved to chainrule by an import hook, from the same initial
weights. Their losses must follow the same trajectory, and what they sample must be well
formed.

The programs: a GPT with its own attention (gpt), makemore's bigram and MLP name models
(names) and its recurrent one (names_rnn), a polynomial fit updated by hand (polyfit), an LSTM
forecaster trained by L-BFGS (forecast), a word-level language model (wordlm) and a critic of
custom autograd Functions trained with a gradient penalty (gradient_penalty). Random draws
(sampling, the GPT's prompt continuation) differ between the libraries, so only what follows
from the weights is compared; dropout is 0 and no loader shuffles."""

from __future__ import annotations

import importlib
import sys
from importlib import resources
from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr
from tests.pytorch_programs.programs.aliasing import run, torch_is_chainrule
from tests.tolerances import LAYER, tol

NAMES = str(resources.files("chainrule") / "assets" / "names.txt")


@pytest.fixture(autouse=True, scope="module")
def one_torch_thread() -> Any:
    """torch on one thread: these programs are small, and on a busy machine torch's second
    thread only waits (the L-BFGS program ran 4x slower on two)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


class Weights:
    """The initial weights of the torch run, given to the chainrule run. A program calls
    ``init(obj)`` right after making its model (a Module) or its loose parameters (a list of
    tensors): on torch, ``record`` keeps their values; on chainrule, ``replay`` writes the
    kept values, in the same order of calls."""

    def __init__(self) -> None:
        self.saved: list[Any] = []

    def record(self, obj: Any) -> None:
        if isinstance(obj, torch.nn.Module):
            self.saved.append({k: v.detach().numpy().copy() for k, v in obj.state_dict().items()})
        else:
            self.saved.append([t.detach().numpy().copy() for t in obj])

    def replay(self, obj: Any) -> None:
        values = self.saved.pop(0)
        if isinstance(obj, cr.nn.Module):
            obj.load_state_dict({k: cr.tensor(v) for k, v in values.items()})
        else:
            with cr.no_grad():
                for t, v in zip(obj, values, strict=True):
                    t.copy_(cr.tensor(v))


def twins(program: str, **kwargs: Any) -> tuple[dict, dict]:
    """The program's results on torch and on chainrule, from torch's initial weights."""
    weights = Weights()
    theirs = run(program, on_chainrule=False, init=weights.record, **kwargs)
    ours = run(program, on_chainrule=True, init=weights.replay, **kwargs)
    assert weights.saved == [], "the chainrule run made fewer models than the torch run"
    return theirs, ours


def assert_follows(ours: list[float], theirs: list[float], rtol: float, early: int = 3) -> None:
    """Step by step, ours within ``rtol`` of theirs over the first ``early`` steps and within
    ten times that after. Both libraries round each float op correctly but not in the same
    order (a matrix product's sums, a fused kernel against a composite), so one step's losses
    differ by a few ulp (float32: ~1e-7 relative, seen here up to 3e-7); every update feeds the
    difference into the next step's weights, and training can amplify it, so later steps get
    more room."""
    assert len(ours) == len(theirs) > early
    rel = np.abs(np.subtract(ours, theirs)) / np.abs(theirs)
    limit = np.where(np.arange(len(rel)) < early, rtol, 10 * rtol)
    bad = np.flatnonzero(rel > limit)
    assert bad.size == 0, (
        f"step {bad[0]}: loss {ours[bad[0]]!r} against torch's {theirs[bad[0]]!r} "
        f"(relative {rel[bad[0]]:.2e}, allowed {limit[bad[0]]:.0e})"
    )


# losses, relative: a step's loss is a layer deep in its error; assert_follows allows 10x
# after the early steps, where the two runs drift apart
F32 = tol(np.float32, LAYER)["rtol"]
F64 = tol(np.float64, LAYER)["rtol"]


def test_gpt_trains_checkpoints_and_samples(tmp_path) -> None:
    (tmp_path / "torch").mkdir()
    (tmp_path / "chainrule").mkdir()
    weights = Weights()
    theirs = run("gpt", False, out_dir=str(tmp_path / "torch"), init=weights.record)
    ours = run("gpt", True, out_dir=str(tmp_path / "chainrule"), init=weights.replay)
    assert_follows(ours["losses"], theirs["losses"], F32)
    assert ours["losses"][-1] < ours["losses"][0] - 0.2  # it learns
    for split in ("train", "val"):  # evaluated after training, in eval mode
        np.testing.assert_allclose(ours["eval"][split], theirs["eval"][split], rtol=10 * F32)
    assert (tmp_path / "chainrule" / "ckpt.pt").is_file()
    sample = ours["sample"]  # 40 characters drawn after the prompt, from the reloaded model
    assert len(sample) == 41 and sample[0] == "T" and set(sample) <= set(ours["vocab"])


def test_names_bigram_and_mlp_train_and_sample() -> None:
    theirs, ours = twins("names", path=NAMES)
    np.testing.assert_allclose(ours["nll"], theirs["nll"], rtol=1e-6)  # counted: no training
    assert_follows(ours["bigram_losses"], theirs["bigram_losses"], F32)
    assert_follows(ours["losses"], theirs["losses"], F32)
    np.testing.assert_allclose(ours["lossi"], np.log10(ours["losses"]), rtol=1e-6)
    np.testing.assert_allclose(ours["dev_loss"], theirs["dev_loss"], rtol=10 * F32)
    np.testing.assert_allclose(ours["saturated"], theirs["saturated"], atol=1e-3)
    np.testing.assert_allclose(ours["tanh_histogram"], theirs["tanh_histogram"], atol=1e-3)
    assert len(ours["counted_samples"]) == 10 and len(ours["samples"]) == 20
    assert ours["counted_samples"] == theirs["counted_samples"]  # torch's draws, exactly
    for name in ours["counted_samples"]:  # each ends at the first '.', as it is drawn
        assert name.endswith(".") and (name == "." or (name[:-1].isalpha() and name.islower()))
    for name in ours["samples"]:
        assert len(name) <= 30 and (name == "" or (name.isalpha() and name.islower()))
    assert sum(len(name) for name in ours["samples"]) > 40  # not mostly empty


def test_names_rnn_with_a_hand_written_gru_cell() -> None:
    theirs, ours = twins("names_rnn", path=NAMES)
    assert_follows(ours["losses"], theirs["losses"], F32)
    assert ours["losses"][-1] < ours["losses"][0] - 0.5
    assert len(ours["samples"]) == 8
    for name in ours["samples"]:  # cropped at the end token, or the longest name's length
        assert len(name) <= ours["max_len"] and (name == "" or (name.isalpha() and name.islower()))


def test_polyfit_by_hand_updates() -> None:
    theirs, ours = twins("polyfit")
    assert_follows(ours["layer_losses"], theirs["layer_losses"], F32)
    assert_follows(ours["tensor_losses"], theirs["tensor_losses"], F32)
    assert ours["layer_losses"][-1] < ours["layer_losses"][0]
    np.testing.assert_allclose(ours["layer_fit"], theirs["layer_fit"], rtol=10 * F32, atol=1e-6)
    np.testing.assert_allclose(ours["tensor_fit"], theirs["tensor_fit"], rtol=10 * F32, atol=1e-6)
    np.testing.assert_allclose(ours["r2"], theirs["r2"], rtol=10 * F32)
    assert_follows(ours["adam_losses"], theirs["adam_losses"], F32)
    assert ours["adam_losses"][-1] < 0.1 * ours["adam_losses"][0]
    np.testing.assert_allclose(ours["adam_fit"], theirs["adam_fit"], rtol=10 * F32, atol=1e-6)


@pytest.mark.parametrize("cells", [False, True], ids=["LSTM", "LSTMCell"])
def test_lstm_forecaster_with_lbfgs(cells: bool) -> None:
    # float64 throughout; L-BFGS's line search amplifies differences most of all (seen: 3e-11
    # relative by the sixth step, 2e-10 in the forecast)
    theirs, ours = twins("forecast", cells=cells, steps=4)
    assert_follows(ours["losses"], theirs["losses"], F64)
    assert_follows(ours["test_losses"], theirs["test_losses"], F64)
    assert ours["losses"][-1] < 0.05 * ours["losses"][0]
    assert ours["forecast"].shape == (3, 20) and ours["forecast"].dtype == np.float64
    np.testing.assert_allclose(ours["forecast"], theirs["forecast"], rtol=0, atol=1e-7)


def test_gradient_penalty_through_custom_functions() -> None:
    """Custom Functions (a saved output of two, mark_dirty of a slice, a once_differentiable
    loss) under a penalty on the inputs' gradient (create_graph): the penalty's backward
    differentiates the Functions' backward, through their saved outputs."""
    theirs, ours = twins("gradient_penalty")
    assert_follows(ours["losses"], theirs["losses"], F32)
    assert_follows(ours["penalties"], theirs["penalties"], F32)
    assert ours["losses"][-1] < 0.5 * ours["losses"][0]
    for g, t in zip(ours["grads"], theirs["grads"], strict=True):
        np.testing.assert_allclose(g, t, rtol=10 * F32, atol=1e-5)
    steps = len(ours["losses"])
    assert ours["grad_mode_in_loss_backward"] == theirs["grad_mode_in_loss_backward"]
    assert ours["grad_mode_in_loss_backward"] == [False] * steps


@pytest.mark.parametrize("model_type", ["LSTM", "GRU", "Transformer"])
def test_word_language_model(model_type: str) -> None:
    theirs, ours = twins("wordlm", model_type=model_type)
    assert_follows(ours["losses"], theirs["losses"], F32)
    np.testing.assert_allclose(ours["val_losses"], theirs["val_losses"], rtol=10 * F32)
    assert len(ours["generated"]) == 12 and set(ours["generated"]) <= set(ours["vocab"])
    np.testing.assert_allclose(ours["baseline"], theirs["baseline"], rtol=1e-6)
    assert ours["nearest"][0] == "lamp" and len(ours["nearest"]) == 4
    np.testing.assert_allclose(ours["lamp_keeper"], theirs["lamp_keeper"], atol=1e-4)


# -- the import hook ---------------------------------------------------------------------------


def test_the_alias_gives_chainrules_modules_and_gives_torch_back() -> None:
    real = {name: module for name, module in sys.modules.items() if name.split(".")[0] == "torch"}
    spec = cr.nn.functional.__spec__
    with torch_is_chainrule():
        import torch as aliased
        import torch.nn.functional as F
        from torch.optim.lr_scheduler import StepLR
        from torch.utils.data import DataLoader
        from torch.utils.data.sampler import RandomSampler

        assert aliased is cr and F is cr.nn.functional
        assert StepLR is cr.optim.lr_scheduler.StepLR and DataLoader is cr.data.DataLoader
        assert RandomSampler is cr.data.RandomSampler
        with pytest.raises(ModuleNotFoundError, match="chainrule.distributions"):
            importlib.import_module("torch.distributions")
    after = importlib.import_module("torch")
    assert after is torch and after.nn.functional.softmax is torch.nn.functional.softmax
    assert {n: m for n, m in sys.modules.items() if n.split(".")[0] == "torch"} == real
    assert (
        cr.nn.functional.__spec__ is spec and cr.nn.functional.__name__ == "chainrule.nn.functional"
    )


# -- fuller runs (pytest -m slow) ----------------------------------------------------------------

LONGER = [  # (program, arguments, the losses compared): about a minute in all
    ("gpt", {"steps": 150}, "losses"),
    ("names", {"path": NAMES, "n_words": 4000, "epochs": 4}, "losses"),
    ("names_rnn", {"path": NAMES, "n_words": 2000, "steps": 150}, "losses"),
    ("wordlm", {"model_type": "Transformer", "epochs": 10}, "losses"),
    ("polyfit", {"steps": 3000}, "layer_losses"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("program", "kwargs", "key"), LONGER, ids=[p for p, _, _ in LONGER])
def test_longer_float32_runs_stay_with_torch(
    program: str, kwargs: dict, key: str, tmp_path
) -> None:
    """Hundreds of steps in float32 (seen: within 1e-6 relative of torch at every step)."""
    if program == "gpt":
        kwargs = {**kwargs, "out_dir": str(tmp_path)}
    theirs, ours = twins(program, **kwargs)
    assert_follows(ours[key], theirs[key], F32)


@pytest.mark.slow
@pytest.mark.parametrize("cells", [False, True], ids=["LSTM", "LSTMCell"])
def test_longer_lbfgs_run_stays_with_torch(cells: bool) -> None:
    """Twelve L-BFGS steps: near the minimum, a last-bit difference can tip a line search
    another way (seen: 1e-2 relative by the twelfth step, 5e-13 over the first five), so
    the early steps are held tight and the last loss only to its size."""
    theirs, ours = twins("forecast", cells=cells, steps=12)
    assert_follows(ours["losses"][:5], theirs["losses"][:5], F64)
    np.testing.assert_allclose(ours["losses"][-1], theirs["losses"][-1], rtol=0.1)
