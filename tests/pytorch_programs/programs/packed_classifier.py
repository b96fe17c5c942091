"""A classifier of token sequences of different lengths: the sequences are padded into one
batch, embedded, packed (unsorted, so the packing sorts them), read by a two-layer
bidirectional LSTM that runs each sequence only over its own steps, and classified from the
top layer's final states in both directions and the mean of its outputs over each sequence's
own steps. The label says whether a sequence holds more small tokens than large ones."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence

VOCAB = 12  # token 0 is the padding


def make_data(n=96, max_len=9, seed=0):
    rng = np.random.default_rng(seed)
    seqs = [rng.integers(1, VOCAB, rng.integers(1, max_len + 1)) for _ in range(n)]
    labels = [int((s < VOCAB // 2).sum() > (s >= VOCAB // 2).sum()) for s in seqs]
    return seqs, labels


def batchify(seqs, labels):
    tokens = pad_sequence([torch.tensor(s) for s in seqs], batch_first=True)  # (B, T)
    lengths = torch.tensor([len(s) for s in seqs])
    return tokens, lengths, torch.tensor(labels)


class Classifier(nn.Module):
    def __init__(self, embed=8, hidden=16, classes=2):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, embed, padding_idx=0)
        self.lstm = nn.LSTM(embed, hidden, num_layers=2, batch_first=True, bidirectional=True)
        self.head = nn.Linear(4 * hidden, classes)

    def forward(self, tokens, lengths):
        x = self.embed(tokens)  # (B, T, embed)
        packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        out, (h_n, c_n) = self.lstm(packed)
        padded, out_lengths = pad_packed_sequence(out, batch_first=True)  # (B, T, 2 * hidden)
        mean = padded.sum(dim=1) / out_lengths.unsqueeze(1).to(padded.dtype)
        last = torch.cat([h_n[-2], h_n[-1]], dim=1)  # (B, 2 * hidden): the top layer
        return self.head(torch.cat([last, mean], dim=1))


def main(seed=0, epochs=3, batch_size=16, init=None, verbose=False):
    torch.manual_seed(seed)
    seqs, labels = make_data()
    train = [
        batchify(seqs[i : i + batch_size], labels[i : i + batch_size])
        for i in range(0, 64, batch_size)
    ]
    test = batchify(seqs[64:], labels[64:])

    model = Classifier()
    if init is not None:
        init(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)

    losses = []
    for epoch in range(epochs):
        model.train()
        for tokens, lengths, y in train:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(tokens, lengths), y)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        if verbose:
            print(f"epoch {epoch}: loss {losses[-1]:.4f}")

    model.eval()
    with torch.no_grad():
        tokens, lengths, y = test
        logits = model(tokens, lengths)
        accuracy = (logits.argmax(dim=1) == y).float().mean().item()
    if verbose:
        print(f"test accuracy {accuracy:.3f}")
    return {"losses": losses, "logits": logits.numpy(), "accuracy": accuracy}


if __name__ == "__main__":
    main(verbose=True)
