"""A word language model as PyTorch's examples write it (word_language_model: Embedding, a
2-layer LSTM with dropout, a Linear decoder, log_softmax and NLLLoss, truncated
backpropagation through time with repackage_hidden, clip_grad_norm_ and the hand-written
SGD update p.data.add_(p.grad, alpha=-lr)), written once and run on torch and on chainrule
from the same weights: the log-probabilities, the loss, the hidden state and every
parameter's gradient agree over two truncated-BPTT steps, and so do the weights after each
update."""

from __future__ import annotations

import contextlib
import types
from typing import Any

import numpy as np
import pytest
import torch as real_torch

import chainrule as cr
from tests.twins import copy_into

NTOKEN, NINP, NHID, NLAYERS = 30, 8, 12, 2
BATCH, BPTT, CLIP, LR = 4, 6, 0.1, 20.0


def word_language_model(torch: Any) -> types.SimpleNamespace:
    """The example's model and helpers, with ``torch`` the module that plays torch (torch
    itself or chainrule)."""
    nn = torch.nn
    F = torch.nn.functional

    class RNNModel(nn.Module):
        """Container module with an encoder, a recurrent module, and a decoder."""

        def __init__(self, ntoken: int, ninp: int, nhid: int, nlayers: int, dropout: float = 0.5):
            super().__init__()
            self.ntoken = ntoken
            self.drop = nn.Dropout(dropout)
            self.encoder = nn.Embedding(ntoken, ninp)
            self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout)
            self.decoder = nn.Linear(nhid, ntoken)
            self.init_weights()
            self.nhid = nhid
            self.nlayers = nlayers

        def init_weights(self) -> None:
            initrange = 0.1
            nn.init.uniform_(self.encoder.weight, -initrange, initrange)
            nn.init.zeros_(self.decoder.bias)
            nn.init.uniform_(self.decoder.weight, -initrange, initrange)

        def forward(self, input: Any, hidden: Any) -> tuple[Any, Any]:
            emb = self.drop(self.encoder(input))  # (L, N, ninp)
            output, hidden = self.rnn(emb, hidden)  # (L, N, nhid)
            output = self.drop(output)
            decoded = self.decoder(output)  # (L, N, ntoken)
            decoded = decoded.view(-1, self.ntoken)  # (L * N, ntoken)
            return F.log_softmax(decoded, dim=1), hidden

        def init_hidden(self, bsz: int) -> tuple[Any, Any]:
            dtype = next(self.parameters()).dtype
            return (
                torch.zeros(self.nlayers, bsz, self.nhid, dtype=dtype),
                torch.zeros(self.nlayers, bsz, self.nhid, dtype=dtype),
            )

    def repackage_hidden(h: Any) -> Any:
        """Wraps hidden states in new Tensors, to detach them from their history."""
        if isinstance(h, torch.Tensor):
            return h.detach()
        return tuple(repackage_hidden(v) for v in h)

    def batchify(data: Any, bsz: int) -> Any:
        nbatch = data.size(0) // bsz
        data = data[: nbatch * bsz]  # trim off what would not fit evenly
        return data.view(bsz, -1).transpose(0, 1).contiguous()  # (nbatch, bsz)

    def get_batch(source: Any, i: int) -> tuple[Any, Any]:
        seq_len = min(BPTT, len(source) - 1 - i)
        data = source[i : i + seq_len]  # (seq_len, bsz)
        target = source[i + 1 : i + 1 + seq_len].view(-1)  # (seq_len * bsz,)
        return data, target

    def train(model: Any, corpus: Any, steps: int) -> list[dict[str, Any]]:
        """``steps`` truncated-BPTT steps of the example's loop; what each step computed,
        as arrays."""
        model.train()
        criterion = nn.NLLLoss()
        train_data = batchify(corpus, BATCH)
        hidden = model.init_hidden(BATCH)
        seen = []
        for i in range(0, steps * BPTT, BPTT):
            data, targets = get_batch(train_data, i)
            hidden = repackage_hidden(hidden)
            model.zero_grad()
            output, hidden = model(data, hidden)
            loss = criterion(output, targets)
            loss.backward()
            grads = {k: p.grad.detach().numpy().copy() for k, p in model.named_parameters()}
            torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP)
            for p in model.parameters():
                p.data.add_(p.grad, alpha=-LR)
            seen.append(
                {
                    "output": output.detach().numpy(),
                    "loss": loss.item(),
                    "hidden": [h.detach().numpy() for h in hidden],
                    "grads": grads,
                    "clipped": {k: p.grad.numpy().copy() for k, p in model.named_parameters()},
                    "weights": {k: p.detach().numpy().copy() for k, p in model.named_parameters()},
                }
            )
        return seen

    return types.SimpleNamespace(RNNModel=RNNModel, train=train)


def twin_models(dropout: float):
    real_torch.manual_seed(0)
    theirs = word_language_model(real_torch).RNNModel(NTOKEN, NINP, NHID, NLAYERS, dropout)
    ours = word_language_model(cr).RNNModel(NTOKEN, NINP, NHID, NLAYERS, dropout)
    copy_into(ours, theirs)
    return ours, theirs


@pytest.mark.parametrize("fast", [True, False], ids=["fastpath", "plain"])
def test_two_truncated_bptt_steps_match_torch(fast):
    ours, theirs = twin_models(dropout=0.0)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    corpus = np.random.default_rng(0).integers(0, NTOKEN, 2 * BPTT * BATCH + BATCH)
    with cr.autograd.fastpath.disabled() if not fast else contextlib.nullcontext():
        ours_seen = word_language_model(cr).train(ours, cr.tensor(corpus), 2)
    theirs_seen = word_language_model(real_torch).train(theirs, real_torch.tensor(corpus), 2)
    for step, (a, b) in enumerate(zip(ours_seen, theirs_seen, strict=True)):
        tol = dict(rtol=1e-4, atol=1e-6, err_msg=f"step {step}")
        np.testing.assert_allclose(a["output"], b["output"], **tol)
        assert a["loss"] == pytest.approx(b["loss"], rel=1e-5)
        for h, g in zip(a["hidden"], b["hidden"], strict=True):
            np.testing.assert_allclose(h, g, **tol)
        for key in ("grads", "clipped", "weights"):
            assert list(a[key]) == list(b[key])
            for name in a[key]:
                np.testing.assert_allclose(a[key][name], b[key][name], **tol | {"err_msg": name})
    # the clipping did something: the gradients' total norm was above CLIP
    total = np.sqrt(sum((g**2).sum() for g in theirs_seen[0]["grads"].values()))
    assert total > CLIP


def test_with_dropout_the_model_in_eval_mode_matches_torch():
    ours, theirs = twin_models(dropout=0.2)
    ours.eval()
    theirs.eval()
    corpus = np.random.default_rng(1).integers(0, NTOKEN, (BPTT, BATCH))
    out, (h, c) = ours(cr.tensor(corpus), ours.init_hidden(BATCH))
    out_t, (h_t, c_t) = theirs(real_torch.tensor(corpus), theirs.init_hidden(BATCH))
    for a, b in [(out, out_t), (h, h_t), (c, c_t)]:
        np.testing.assert_allclose(a.numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)
