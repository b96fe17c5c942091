"""Seeded PyTorch code whose every number comes from the random generator: makemore's first
lecture (three uniforms from a seeded Generator, a 27x27 table of normals, 20 names sampled
letter by letter with multinomial from a bigram table), a nanoGPT-sized model's initial
weights after ``torch.manual_seed(1337)`` (its own ``_init_weights``, dropout on), and a
DataLoader's shuffled order over two epochs. The same program on PyTorch and on chainrule
gives the same numbers, bit for bit."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

LETTERS = ".abcdefghijklmnopqrstuvwxyz"


def makemore() -> dict:
    g = torch.Generator().manual_seed(2147483647)
    p = torch.rand(3, generator=g)
    p = p / p.sum()
    drawn = torch.multinomial(p, num_samples=100, replacement=True, generator=g)
    g = torch.Generator().manual_seed(2147483647)
    W = torch.randn((27, 27), generator=g, requires_grad=True)
    counts = (W.detach() * 3).exp()
    P = counts / counts.sum(1, keepdims=True)
    names = []
    g = torch.Generator().manual_seed(2147483647)
    for _ in range(20):
        out, ix = [], 0
        while True:
            ix = torch.multinomial(P[ix], num_samples=1, replacement=True, generator=g).item()
            out.append(LETTERS[ix])
            if ix == 0:
                break
        names.append("".join(out))
    return {
        "p": p.tolist(),
        "drawn": drawn.tolist(),
        "W": W.detach().numpy().copy(),
        "names": names,
    }


class Block(nn.Module):
    def __init__(self, n_embd: int, n_head: int, dropout: float) -> None:
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = nn.Linear(n_embd, 3 * n_embd)
        self.proj = nn.Linear(n_embd, n_embd)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.fc = nn.Linear(n_embd, 4 * n_embd)
        self.fc_proj = nn.Linear(4 * n_embd, n_embd)
        self.drop = nn.Dropout(dropout)
        self.n_head = n_head

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape
        q, k, v = self.attn(self.ln_1(x)).split(C, dim=2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, dropout_p=0.2, is_causal=True)
        x = x + self.drop(self.proj(y.transpose(1, 2).contiguous().view(B, T, C)))
        return x + self.drop(self.fc_proj(F.gelu(self.fc(self.ln_2(x)))))


class TinyGPT(nn.Module):
    def __init__(self, vocab: int = 65, n_embd: int = 64, n_head: int = 4, n_layer: int = 2):
        super().__init__()
        self.wte = nn.Embedding(vocab, n_embd)
        self.wpe = nn.Embedding(32, n_embd)
        self.blocks = nn.ModuleList(Block(n_embd, n_head, 0.2) for _ in range(n_layer))
        self.ln_f = nn.LayerNorm(n_embd)
        self.lm_head = nn.Linear(n_embd, vocab, bias=False)
        self.apply(self._init_weights)
        for name, p in self.named_parameters():
            if name.endswith("fc_proj.weight"):
                torch.nn.init.normal_(p, mean=0.0, std=0.02 / (2 * n_layer) ** 0.5)

    def _init_weights(self, module: nn.Module) -> None:
        if isinstance(module, nn.Linear):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                torch.nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1]))
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.ln_f(x))


def nanogpt() -> dict:
    torch.manual_seed(1337)
    model = TinyGPT()
    weights = {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}
    idx = torch.randint(0, 65, (2, 16))
    model.train()
    logits = model(idx)  # dropout masks drawn from the global generator
    return {"weights": weights, "idx": idx.tolist(), "logits": logits.detach().numpy().copy()}


def shuffled() -> dict:
    torch.manual_seed(42)
    data = TensorDataset(torch.arange(50), torch.randn(50, 3))
    loader = DataLoader(data, batch_size=8, shuffle=True)
    epochs = [[batch[0].tolist() for batch in loader] for _ in range(2)]
    return {"epochs": epochs, "after": torch.rand(2).tolist()}


def main() -> dict:
    return {"makemore": makemore(), "nanogpt": nanogpt(), "shuffled": shuffled()}
