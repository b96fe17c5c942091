"""nanoGPT's model.py run twice from one source, once over PyTorch and once over chainrule,
with the same weights: logits, loss, every gradient and AdamW steps agree; sampling runs."""

from __future__ import annotations

import os
import sys
from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr
from tests.tolerances import OP, tol
from tests.twins import copy_into

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))

import nanogpt  # noqa: E402

TORCH = nanogpt.build(torch, torch.nn, torch.nn.functional)
CHAINRULE = nanogpt.build(cr, cr.nn, cr.nn.functional)
# A GPT is a stack, but this one is small (2 layers of width 16) and stays within
# one op's tolerance of torch's, with 10x to spare when measured: a drift would show.


def _twins(dtype: str, **config: Any) -> tuple[Any, Any, nanogpt.GPTConfig]:
    """A torch GPT and a chainrule GPT holding its weights, in dtype."""
    cfg = nanogpt.GPTConfig(
        **{"block_size": 16, "vocab_size": 23, "n_layer": 2, "n_head": 2, "n_embd": 16, **config}
    )
    torch.manual_seed(0)
    theirs = TORCH.GPT(cfg)
    ours = CHAINRULE.GPT(cfg)
    if dtype == "float64":
        theirs, ours = theirs.double(), ours.double()
    copy_into(ours, theirs)
    return theirs, ours, cfg


def _batch(cfg: nanogpt.GPTConfig, b: int = 3, t: int = 11) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    idx = rng.integers(0, cfg.vocab_size, (b, t))
    targets = rng.integers(0, cfg.vocab_size, (b, t))
    targets[0, :4] = -1  # ignored, as nanoGPT's ignore_index=-1
    return idx, targets


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_logits_loss_and_every_gradient_as_torch(dtype: str, bias: bool) -> None:
    theirs, ours, cfg = _twins(dtype, bias=bias)
    assert ours.get_num_params() == theirs.get_num_params()
    names_t = [n for n, _ in theirs.named_parameters()]
    assert [n for n, _ in ours.named_parameters()] == names_t
    assert ours.transformer.wte.weight is ours.lm_head.weight  # tied
    idx, targets = _batch(cfg)
    logits_t, loss_t = theirs(torch.tensor(idx), torch.tensor(targets))
    logits_c, loss_c = ours(cr.tensor(idx), cr.tensor(targets))
    assert logits_c.dtype == np.dtype(dtype)
    np.testing.assert_allclose(logits_c.numpy(), logits_t.detach().numpy(), **tol(dtype, OP))
    np.testing.assert_allclose(loss_c.item(), loss_t.item(), **tol(dtype, OP))
    loss_t.backward()
    loss_c.backward()
    grads_t = {n: p.grad.numpy() for n, p in theirs.named_parameters()}
    for name, p in ours.named_parameters():
        assert p.grad is not None, name
        np.testing.assert_allclose(p.grad.numpy(), grads_t[name], **tol(dtype, OP), err_msg=name)
    # inference: the last position only
    with torch.no_grad(), cr.no_grad():
        last_t, none_t = theirs(torch.tensor(idx))
        last_c, none_c = ours(cr.tensor(idx))
    assert none_t is None and none_c is None and last_c.shape == (3, 1, cfg.vocab_size)
    np.testing.assert_allclose(last_c.numpy(), last_t.numpy(), **tol(dtype, OP))


def test_adamw_steps_as_torch() -> None:
    """nanoGPT's configure_optimizers (AdamW, decayed and undecayed groups), three steps."""
    theirs, ours, cfg = _twins("float64")
    opts = [m.configure_optimizers(0.1, 1e-2, (0.9, 0.95), "cpu") for m in (theirs, ours)]
    sizes = [[len(g["params"]) for g in opt.param_groups] for opt in opts]
    assert sizes[0] == sizes[1] == [4 * cfg.n_layer + 2, 8 * cfg.n_layer + 2]
    idx, targets = _batch(cfg)
    for _ in range(3):
        for opt, model, lib in zip(opts, (theirs, ours), (torch, cr), strict=True):
            _, loss = model(lib.tensor(idx), lib.tensor(targets))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
    after_t = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        want = after_t[name].detach().numpy()
        np.testing.assert_allclose(p.detach().numpy(), want, rtol=1e-9, atol=1e-11, err_msg=name)


def test_dropout_trains_reproducibly_under_a_seed() -> None:
    _, ours, cfg = _twins("float32", dropout=0.2)
    idx, targets = _batch(cfg)
    losses = []
    for _ in range(2):
        cr.manual_seed(5)
        _, loss = ours(cr.tensor(idx), cr.tensor(targets))
        losses.append(loss.item())
    assert losses[0] == losses[1]
    ours.eval()
    _, eval_loss = ours(cr.tensor(idx), cr.tensor(targets))
    assert eval_loss.item() != losses[0]


def test_generate_samples_under_a_seed() -> None:
    theirs, ours, cfg = _twins("float64")
    ours.eval()
    theirs.eval()
    start = np.array([[1, 2, 3], [4, 5, 6]])
    runs = []
    for _ in range(2):
        cr.manual_seed(7)
        runs.append(ours.generate(cr.tensor(start), 20, temperature=0.8, top_k=5).numpy())
    assert runs[0].shape == (2, 23)  # past block_size 16: the context is cropped
    np.testing.assert_array_equal(runs[0], runs[1])
    np.testing.assert_array_equal(runs[0][:, :3], start)
    assert runs[0].min() >= 0 and runs[0].max() < cfg.vocab_size
    # top_k=1 leaves one token to draw: the same as torch's, token for token
    greedy_c = ours.generate(cr.tensor(start), 20, top_k=1).numpy()
    greedy_t = theirs.generate(torch.tensor(start), 20, top_k=1).numpy()
    np.testing.assert_array_equal(greedy_c, greedy_t)
