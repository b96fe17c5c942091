"""makemore-style names: a bigram model by counting, the same bigram model as a single trained
layer over one-hot characters, then a character-level MLP over the last three letters
(embedding, a hidden layer with batch norm and tanh) trained with SGD on minibatches; each of
the counted and the MLP models samples names."""

import random

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

BLOCK_SIZE = 3  # how many characters we take to predict the next one


def build_dataset(words, stoi):
    X, Y = [], []
    for w in words:
        context = [0] * BLOCK_SIZE
        for ch in w + ".":
            ix = stoi[ch]
            X.append(context)
            Y.append(ix)
            context = context[1:] + [ix]
    return torch.tensor(X), torch.tensor(Y)


class NamesMLP(nn.Module):
    def __init__(self, vocab_size, n_embd=10, n_hidden=64):
        super().__init__()
        self.emb = nn.Embedding(vocab_size, n_embd)
        self.hidden = nn.Sequential(
            nn.Linear(n_embd * BLOCK_SIZE, n_hidden, bias=False),
            nn.BatchNorm1d(n_hidden),
            nn.Tanh(),
        )
        self.out = nn.Linear(n_hidden, vocab_size)
        with torch.no_grad():
            self.out.weight *= 0.1  # a less confident first guess

    def forward(self, x):
        emb = self.emb(x)  # (B, BLOCK_SIZE, n_embd)
        h = self.hidden(emb.view(emb.shape[0], -1))  # (B, n_hidden)
        return self.out(h)


def bigrams(words):
    for w in words:
        chs = ["."] + list(w) + ["."]
        yield from zip(chs, chs[1:], strict=False)


def main(path, seed=42, n_words=600, epochs=2, batch_size=64, init=None, verbose=False):
    words = open(path).read().splitlines()[:n_words]
    chars = sorted(set("".join(words)))
    stoi = {s: i + 1 for i, s in enumerate(chars)}
    stoi["."] = 0
    itos = {i: s for s, i in stoi.items()}
    vocab_size = len(itos)

    # the bigram model by counting, smoothed by one
    N = torch.zeros((vocab_size, vocab_size), dtype=torch.int32)
    for ch1, ch2 in bigrams(words):
        N[stoi[ch1], stoi[ch2]] += 1
    P = (N + 1).float()
    P /= P.sum(1, keepdims=True)
    log_likelihood = 0.0
    n = 0
    for ch1, ch2 in bigrams(words):
        prob = P[stoi[ch1], stoi[ch2]]
        log_likelihood += torch.log(prob)
        n += 1
    nll = -log_likelihood
    if verbose:
        print(f"{log_likelihood=}")
        print(f"{nll / n}")
    g = torch.Generator().manual_seed(2147483647)
    counted_samples = []
    for _ in range(10):
        out = []
        ix = 0
        while True:
            p = P[ix]
            ix = torch.multinomial(p, num_samples=1, replacement=True, generator=g).item()
            out.append(itos[ix])
            if ix == 0:
                break
        counted_samples.append("".join(out))

    # the same model learned: one linear layer over one-hot characters, gradient descent
    xs, ys = [], []
    for ch1, ch2 in bigrams(words):
        xs.append(stoi[ch1])
        ys.append(stoi[ch2])
    xs = torch.tensor(xs)
    ys = torch.tensor(ys)
    num = xs.nelement()
    W = torch.randn((vocab_size, vocab_size), generator=g, requires_grad=True)
    if init is not None:
        init([W])
    bigram_losses = []
    for _ in range(10):
        xenc = F.one_hot(xs, num_classes=vocab_size).float()  # (num, vocab_size)
        logits = xenc @ W  # log-counts
        counts = logits.exp()
        probs = counts / counts.sum(1, keepdims=True)
        loss = -probs[torch.arange(num), ys].log().mean() + 0.01 * (W**2).mean()
        bigram_losses.append(loss.item())
        W.grad = None
        loss.backward()
        W.data += -50 * W.grad

    random.seed(seed)
    random.shuffle(words)
    n1 = int(0.9 * len(words))
    Xtr, Ytr = build_dataset(words[:n1], stoi)
    Xdev, Ydev = build_dataset(words[n1:], stoi)
    if verbose:
        print(Xtr.shape, Ytr.shape, Xdev.shape, Ydev.shape)

    torch.manual_seed(seed)
    model = NamesMLP(vocab_size)
    if init is not None:
        init(model)
    print_every = 10
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[1], gamma=0.5)
    loader = DataLoader(TensorDataset(Xtr, Ytr), batch_size=batch_size, shuffle=False)

    losses = []
    lossi = []
    for epoch in range(epochs):
        model.train()
        for i, (xb, yb) in enumerate(loader):
            logits = model(xb)
            loss = F.cross_entropy(logits, yb)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
            lossi.append(loss.log10().item())
            if verbose and i % print_every == 0:
                print(f"epoch {epoch} step {i:4d}: {loss.item():.4f}")
        scheduler.step()

    model.eval()
    with torch.no_grad():
        dev_loss = F.cross_entropy(model(Xdev), Ydev).item()
        # how saturated the tanh layer is on the dev set
        h = model.hidden(model.emb(Xdev).view(Xdev.shape[0], -1))  # (N, n_hidden)
        saturated = (h.abs() > 0.97).float().mean().item()
        hist, edges = torch.histogram(h, bins=20, range=(-1.0, 1.0), density=True)
    if verbose:
        print(f"dev loss {dev_loss:.4f}, tanh saturated {saturated:.2%}")
        print(torch.tensor(lossi[:50]).view(-1, 10).mean(1))

    g = torch.Generator().manual_seed(2147483647 + 10)
    samples = []
    with torch.no_grad():
        for _ in range(20):
            out = []
            context = [0] * BLOCK_SIZE
            while True:
                logits = model(torch.tensor([context]))
                probs = F.softmax(logits, dim=1)
                ix = torch.multinomial(probs, num_samples=1, generator=g).item()
                context = context[1:] + [ix]
                if ix == 0 or len(out) >= 30:
                    break
                out.append(ix)
            samples.append("".join(itos[i] for i in out))
    if verbose:
        print("\n".join(samples))
    return {
        "nll": nll.item() / n,
        "bigram_losses": bigram_losses,
        "losses": losses,
        "lossi": lossi,
        "dev_loss": dev_loss,
        "saturated": saturated,
        "tanh_histogram": hist.tolist(),
        "samples": samples,
        "counted_samples": counted_samples,
    }


if __name__ == "__main__":
    import sys

    main(sys.argv[1], verbose=True)
