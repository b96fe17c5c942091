"""makemore's recurrent names model: a Dataset of names padded to one length (targets -1 past
the end, ignored by the loss), a GRU cell written by hand and unrolled over the name, AdamW,
and names sampled with a temperature until the end token."""

import torch
import torch.nn as nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, Dataset


class CharDataset(Dataset):
    def __init__(self, words, chars, max_word_length):
        self.words = words
        self.chars = chars
        self.max_word_length = max_word_length
        self.stoi = {ch: i + 1 for i, ch in enumerate(chars)}
        self.itos = {i: s for s, i in self.stoi.items()}  # inverse mapping

    def __len__(self):
        return len(self.words)

    def get_vocab_size(self):
        return len(self.chars) + 1  # all the possible characters and the special 0 token

    def encode(self, word):
        return torch.tensor([self.stoi[w] for w in word], dtype=torch.long)

    def decode(self, ix):
        return "".join(self.itos[i] for i in ix)

    def __getitem__(self, idx):
        word = self.words[idx]
        ix = self.encode(word)
        x = torch.zeros(self.max_word_length + 1, dtype=torch.long)
        y = torch.zeros(self.max_word_length + 1, dtype=torch.long)
        x[1 : 1 + len(ix)] = ix
        y[: len(ix)] = ix
        y[len(ix) + 1 :] = -1  # index -1 will mask the loss at the inactive locations
        return x, y


class GRUCell(nn.Module):
    """The update gate z blends the previous hidden state with a candidate; the reset gate r
    decides how much of the previous state the candidate sees."""

    def __init__(self, n_embd, n_hidden):
        super().__init__()
        self.xh_to_z = nn.Linear(n_embd + n_hidden, n_hidden)
        self.xh_to_r = nn.Linear(n_embd + n_hidden, n_hidden)
        self.xh_to_hbar = nn.Linear(n_embd + n_hidden, n_hidden)

    def forward(self, xt, hprev):
        xh = torch.cat([xt, hprev], dim=1)
        r = F.sigmoid(self.xh_to_r(xh))
        hprev_reset = r * hprev
        xhr = torch.cat([xt, hprev_reset], dim=1)
        hbar = F.tanh(self.xh_to_hbar(xhr))
        z = F.sigmoid(self.xh_to_z(xh))
        return (1 - z) * hprev + z * hbar


class RNN(nn.Module):
    def __init__(self, vocab_size, block_size, n_embd=16, n_hidden=32):
        super().__init__()
        self.block_size = block_size
        self.start = nn.Parameter(torch.zeros(1, n_hidden))  # the starting hidden state
        self.wte = nn.Embedding(vocab_size, n_embd)
        self.cell = GRUCell(n_embd, n_hidden)
        self.lm_head = nn.Linear(n_hidden, vocab_size)

    def forward(self, idx, targets=None):
        b, t = idx.size()
        emb = self.wte(idx)  # (b, t, n_embd)
        hprev = self.start.expand((b, -1))
        hiddens = []
        for i in range(t):
            xt = emb[:, i, :]  # (b, n_embd)
            hprev = self.cell(xt, hprev)
            hiddens.append(hprev)
        hidden = torch.stack(hiddens, 1)  # (b, t, n_hidden)
        logits = self.lm_head(hidden)
        loss = None
        if targets is not None:
            loss = F.cross_entropy(
                logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1
            )
        return logits, loss


@torch.no_grad()
def generate(model, idx, max_new_tokens, temperature=1.0, generator=None):
    for _ in range(max_new_tokens):
        idx_cond = idx if idx.size(1) <= model.block_size else idx[:, -model.block_size :]
        logits, _ = model(idx_cond)
        logits = logits[:, -1, :] / temperature
        probs = F.softmax(logits, dim=-1)
        idx_next = torch.multinomial(probs, num_samples=1, generator=generator)
        idx = torch.cat((idx, idx_next), dim=1)
    return idx


def main(path, seed=3407, n_words=256, steps=12, batch_size=32, init=None, verbose=False):
    torch.manual_seed(seed)
    words = [w.strip() for w in open(path).read().splitlines()[:n_words] if w.strip()]
    chars = sorted(set("".join(words)))
    max_word_length = max(len(w) for w in words)
    dataset = CharDataset(words, chars, max_word_length)
    vocab_size = dataset.get_vocab_size()
    block_size = max_word_length + 1

    model = RNN(vocab_size, block_size)
    if init is not None:
        init(model)
    if verbose:
        print(f"model #params: {sum(p.numel() for p in model.parameters())}")
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.01, betas=(0.9, 0.99))
    loader = DataLoader(dataset, batch_size=batch_size, shuffle=False)

    losses = []
    step = 0
    while step < steps:
        for X, Y in loader:
            logits, loss = model(X, Y)
            model.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
            if verbose:
                print(f"step {step} | loss {loss.item():.4f}")
            step += 1
            if step == steps:
                break

    g = torch.Generator().manual_seed(seed)
    X_init = torch.zeros(8, 1, dtype=torch.long)
    X_samp = generate(model, X_init, block_size - 1, temperature=0.9, generator=g)
    samples = []
    for i in range(X_samp.size(0)):
        row = X_samp[i, 1:].tolist()  # the first token is the start token
        crop_index = row.index(0) if 0 in row else len(row)
        samples.append(dataset.decode(row[:crop_index]))
    if verbose:
        print("\n".join(samples))
    return {"losses": losses, "samples": samples, "max_len": max_word_length}


if __name__ == "__main__":
    import sys

    main(sys.argv[1], verbose=True)
