"""Three small models of the layers beyond the basics, trained by Adam: a frame tagger read
out by CTC (Linear, Hardswish, RMSNorm, channel dropout at p=0, CTCLoss); a bag-of-words
ranker (EmbeddingBag with offsets, Bilinear, MarginRankingLoss, TripletMarginLoss, KLDivLoss);
and a patch classifier (InstanceNorm2d with running statistics, GroupNorm,
LocalResponseNorm, Hardsigmoid gates, MultiLabelSoftMarginLoss, MultiMarginLoss). Then the
misuses both libraries refuse."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Tagger(nn.Module):
    def __init__(self, features=6, hidden=16, classes=5):
        super().__init__()
        self.inp = nn.Linear(features, hidden)
        self.act = nn.Hardswish()
        self.norm = nn.RMSNorm(hidden)
        self.drop = nn.Dropout1d(0.0)
        self.out = nn.Linear(hidden, classes)

    def forward(self, x):  # (T, N, features) -> (T, N, classes) log-probabilities
        h = self.norm(self.act(self.inp(x)))  # (T, N, hidden)
        h = self.drop(h.permute(1, 2, 0)).permute(2, 0, 1)  # channels in dim 1 for dropout1d
        return self.out(h).log_softmax(2)


class Ranker(nn.Module):
    def __init__(self, words=30, dim=8):
        super().__init__()
        self.bag = nn.EmbeddingBag(words, dim, mode="mean", padding_idx=0)
        self.score = nn.Bilinear(dim, dim, 1)

    def forward(self, text, offsets, query):
        doc = self.bag(text, offsets)  # (B, dim)
        return doc, self.score(doc, query).squeeze(1)  # (B, dim), (B,)


class Patches(nn.Module):
    def __init__(self, channels=4, classes=3):
        super().__init__()
        self.inorm = nn.InstanceNorm2d(channels, affine=True, track_running_stats=True)
        self.gnorm = nn.GroupNorm(2, channels)
        self.lrn = nn.LocalResponseNorm(3, alpha=0.5)
        self.gate = nn.Hardsigmoid()
        self.head = nn.Linear(channels, classes)

    def forward(self, x):  # (N, C, H, W) -> (N, classes)
        h = self.lrn(self.gnorm(self.inorm(x)))
        return self.head((h * self.gate(h)).mean((2, 3)))


def main(seed=0, steps=12, init=None):
    rng = np.random.default_rng(seed)
    frames = torch.tensor(rng.standard_normal((9, 3, 6)), dtype=torch.float32)
    targets = torch.tensor([[1, 2, 2, 3], [4, 1, 0, 0], [3, 3, 1, 0]])
    lengths, target_lengths = torch.tensor([9, 7, 8]), torch.tensor([4, 2, 3])
    text = torch.tensor(rng.integers(0, 30, 20))
    offsets = torch.tensor([0, 5, 9, 9, 14])
    query = torch.tensor(rng.standard_normal((5, 8)), dtype=torch.float32)
    order = torch.tensor([1.0, -1.0, 1.0, -1.0])
    prior = torch.tensor(rng.dirichlet(np.ones(8), 5), dtype=torch.float32)
    images = torch.tensor(rng.standard_normal((6, 4, 5, 5)), dtype=torch.float32)
    labels = torch.tensor(rng.integers(0, 2, (6, 3)), dtype=torch.float32)
    classes = torch.tensor([0, 2, 1, 1, 0, 2])

    models = [Tagger(), Ranker(), Patches()]
    for model in models:
        if init is not None:
            init(model)
    tagger, ranker, patches = models
    params = [p for m in models for p in m.parameters()]
    optimizer = torch.optim.Adam(params, lr=0.02)
    ctc, rank = nn.CTCLoss(), nn.MarginRankingLoss(margin=0.1)
    triplet, kl = nn.TripletMarginLoss(margin=0.5), nn.KLDivLoss(reduction="batchmean")
    soft, multi = nn.MultiLabelSoftMarginLoss(), nn.MultiMarginLoss(margin=0.5)
    losses = []
    for _ in range(steps):
        doc, scores = ranker(text, offsets, query)
        logits = patches(images)
        loss = (
            ctc(tagger(frames), targets, lengths, target_lengths)
            + rank(scores[:4], scores[1:], order)
            + triplet(doc[:3], doc[1:4], doc[2:5])
            + kl(doc.log_softmax(1), prior)
            + soft(logits, labels)
            + multi(logits, classes)
        )
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())

    patches.eval()
    with torch.no_grad():
        report = {
            "tagger": tagger(frames).numpy(),
            "scores": ranker(text, offsets, query)[1].numpy(),
            "patches": patches(images).numpy(),
            "running_mean": patches.inorm.running_mean.numpy(),
            "running_var": patches.inorm.running_var.numpy(),
            "distance": F.pairwise_distance(query[:2], query[2:4]).numpy(),
        }

    mistakes = {
        "groups-not-dividing": lambda: nn.GroupNorm(3, 4),
        "multi-margin-p3": lambda: F.multi_margin_loss(logits, classes, p=3),
        "bag-offsets-not-from-0": lambda: ranker.bag(text, torch.tensor([1, 5])),
        "mean-bag-with-weights": lambda: F.embedding_bag(
            text, ranker.bag.weight, offsets, per_sample_weights=torch.ones(20)
        ),
        "triplet-margin-0": lambda: nn.TripletMarginWithDistanceLoss(margin=0.0),
    }
    refused = {}
    for name, make in mistakes.items():
        try:
            make()
            refused[name] = False
        except (RuntimeError, TypeError, ValueError, IndexError):
            refused[name] = True
    return {"losses": losses, "report": report, "refused": refused}
