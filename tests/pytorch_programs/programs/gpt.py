"""A tiny character-level GPT: its own attention, MLP and block modules, trained with AdamW for
a few steps on a short text, then sampled from. A PyTorch program as written for PyTorch."""

import math
import os
from dataclasses import dataclass

import torch
import torch.nn as nn
from torch.nn import functional as F

TEXT = """\
The river ran low that summer, and the children walked along its bed collecting stones.
Some were smooth and grey, some striped with white, and a few were green as bottle glass.
Their grandmother kept the best of them in a jar on the kitchen window, where the light
came through in the evening and threw small coloured shapes across the table. Every year
the jar grew heavier, and every year somebody asked whether it was time to empty it, and
every year the answer was the same: not yet, there is still room for one more stone.
"""


@dataclass
class GPTConfig:
    vocab_size: int
    block_size: int = 32
    n_layer: int = 2
    n_head: int = 4
    n_embd: int = 32
    dropout: float = 0.0


class CausalSelfAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.qkv = nn.Linear(config.n_embd, 3 * config.n_embd)
        self.proj = nn.Linear(config.n_embd, config.n_embd)
        self.attn_drop = nn.Dropout(config.dropout)
        self.n_head = config.n_head
        mask = torch.tril(torch.ones(config.block_size, config.block_size))
        self.register_buffer("mask", mask.view(1, 1, config.block_size, config.block_size))

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        hs = C // self.n_head
        q = q.view(B, T, self.n_head, hs).transpose(1, 2)  # (B, nh, T, hs)
        k = k.view(B, T, self.n_head, hs).transpose(1, 2)  # (B, nh, T, hs)
        v = v.view(B, T, self.n_head, hs).transpose(1, 2)  # (B, nh, T, hs)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(hs)  # (B, nh, T, T)
        att = att.masked_fill(self.mask[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        att = self.attn_drop(att)
        y = att @ v  # (B, nh, T, hs)
        y = y.transpose(1, 2).contiguous().view(B, T, C)  # (B, T, C)
        return self.proj(y)


class MLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.fc = nn.Linear(config.n_embd, 4 * config.n_embd)
        self.proj = nn.Linear(4 * config.n_embd, config.n_embd)
        self.drop = nn.Dropout(config.dropout)

    def forward(self, x):
        return self.drop(self.proj(F.gelu(self.fc(x), approximate="tanh")))


class Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.ln1 = nn.LayerNorm(config.n_embd)
        self.attn = CausalSelfAttention(config)
        self.ln2 = nn.LayerNorm(config.n_embd)
        self.mlp = MLP(config)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        x = x + self.mlp(self.ln2(x))
        return x


class GPT(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.tok_emb = nn.Embedding(config.vocab_size, config.n_embd)
        self.pos_emb = nn.Parameter(torch.zeros(1, config.block_size, config.n_embd))
        self.blocks = nn.Sequential(*[Block(config) for _ in range(config.n_layer)])
        self.ln_f = nn.LayerNorm(config.n_embd)
        self.head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.head.weight = self.tok_emb.weight  # weight tying
        self.apply(self._init_weights)
        for name, p in self.named_parameters():
            if name.endswith("proj.weight"):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))

    def _init_weights(self, module):
        if isinstance(module, (nn.Linear, nn.Embedding)):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            torch.nn.init.zeros_(module.bias)

    def forward(self, idx, targets=None):
        B, T = idx.size()
        assert T <= self.config.block_size, f"sequence of {T} is longer than the block"
        x = self.tok_emb(idx) + self.pos_emb[:, :T, :]  # (B, T, C)
        x = self.ln_f(self.blocks(x))
        logits = self.head(x)  # (B, T, vocab_size)
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss

    def configure_optimizer(self, lr, weight_decay):
        decay = [p for p in self.parameters() if p.dim() >= 2]
        no_decay = [p for p in self.parameters() if p.dim() < 2]
        groups = [
            {"params": decay, "weight_decay": weight_decay},
            {"params": no_decay, "weight_decay": 0.0},
        ]
        return torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.95))

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None):
        for _ in range(max_new_tokens):
            idx_cond = idx[:, -self.config.block_size :]
            logits, _ = self(idx_cond)
            logits = logits[:, -1, :] / temperature
            if top_k is not None:
                v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                logits[logits < v[:, [-1]]] = -float("Inf")
            probs = F.softmax(logits, dim=-1)
            idx_next = torch.multinomial(probs, num_samples=1, generator=generator)
            idx = torch.cat((idx, idx_next), dim=1)
        return idx


def main(out_dir, seed=1337, steps=12, batch_size=8, init=None, verbose=False):
    torch.manual_seed(seed)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    chars = sorted(set(TEXT))
    stoi = {ch: i for i, ch in enumerate(chars)}
    itos = {i: ch for ch, i in stoi.items()}
    data = torch.tensor([stoi[c] for c in TEXT], dtype=torch.long)
    n = int(0.9 * len(data))
    train_data, val_data = data[:n], data[n:]
    config = GPTConfig(vocab_size=len(chars))

    def get_batch(split, step):
        # windows at evenly spaced offsets, moving along the text from step to step
        source = train_data if split == "train" else val_data
        span = len(source) - config.block_size - 1
        ix = (torch.arange(batch_size) * (span // batch_size) + step * 7) % span
        x = torch.stack([source[i : i + config.block_size] for i in ix])
        y = torch.stack([source[i + 1 : i + 1 + config.block_size] for i in ix])
        return x.to(device), y.to(device)

    model = GPT(config)
    if init is not None:
        init(model)
    model.to(device)
    n_params = sum(p.numel() for p in model.parameters())
    if verbose:
        print(f"{n_params / 1e3:.1f}K parameters")
    optimizer = model.configure_optimizer(lr=3e-3, weight_decay=0.1)

    @torch.no_grad()
    def estimate_loss():
        model.eval()
        out = {}
        for split in ["train", "val"]:
            losses = torch.zeros(2)
            for k in range(2):
                xb, yb = get_batch(split, k)
                _, loss = model(xb, yb)
                losses[k] = loss.item()
            out[split] = losses.mean().item()
        model.train()
        return out

    losses = []
    for it in range(steps):
        # a short warmup, then cosine decay
        lr = 3e-3 * min(1.0, (it + 1) / 4) * 0.5 * (1 + math.cos(math.pi * it / steps))
        for group in optimizer.param_groups:
            group["lr"] = lr
        xb, yb = get_batch("train", it)
        logits, loss = model(xb, yb)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        losses.append(loss.item())
        if verbose:
            print(f"step {it:3d} | loss {loss.item():.4f} | lr {lr:.2e} | norm {norm:.3f}")
    evaluated = estimate_loss()
    if verbose:
        print(f"train {evaluated['train']:.4f} val {evaluated['val']:.4f}")
    checkpoint = {
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "model_args": {"block_size": config.block_size, "n_embd": config.n_embd},
        "iter_num": steps,
    }
    torch.save(checkpoint, os.path.join(out_dir, "ckpt.pt"))
    xb, _ = get_batch("val", 0)
    with torch.no_grad():
        expected, _ = model(xb)

    # sample from the checkpoint, as a separate sampling script would
    checkpoint = torch.load(os.path.join(out_dir, "ckpt.pt"), map_location=device)
    config = GPTConfig(vocab_size=len(chars), **checkpoint["model_args"])
    model = GPT(config)
    state_dict = checkpoint["model"]
    unwanted_prefix = "_orig_mod."
    for k in list(state_dict.keys()):
        if k.startswith(unwanted_prefix):
            state_dict[k[len(unwanted_prefix) :]] = state_dict.pop(k)
    model.load_state_dict(state_dict)
    model.eval()
    model.to(device)
    with torch.no_grad():
        reloaded, _ = model(xb)
    assert torch.allclose(reloaded, expected), "the checkpoint does not give the trained model"

    g = torch.Generator().manual_seed(seed)
    context = torch.tensor([[stoi["T"]]], dtype=torch.long, device=device)
    out = model.generate(context, max_new_tokens=40, temperature=0.8, top_k=10, generator=g)
    sample = "".join(itos[i] for i in out[0].tolist())
    if verbose:
        print(sample)
    return {"losses": losses, "eval": evaluated, "sample": sample, "vocab": chars}


if __name__ == "__main__":
    main(".", verbose=True)
