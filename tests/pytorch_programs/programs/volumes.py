"""A small volumetric segmenter and a signal and image head, trained together: Conv3d with
'same' padding and a reflect padding_mode, MaxPool3d with its indices undone by MaxUnpool3d,
a trilinear Upsample, ConvTranspose3d, AdaptiveAvgPool3d and AdaptiveMaxPool1d; a 1-D branch
(Conv1d, AvgPool1d, ConvTranspose1d, LPPool1d); a 2-D branch that warps its input by a
learned affine grid (affine_grid, grid_sample), shuffles pixels and channels and resizes
bicubically; then the misuses both libraries refuse."""

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


class Segmenter(nn.Module):
    def __init__(self):
        super().__init__()
        self.enter = nn.Conv3d(2, 4, 3, padding="same", padding_mode="reflect")
        self.pool = nn.MaxPool3d(2, return_indices=True)
        self.unpool = nn.MaxUnpool3d(2)
        self.down = nn.Conv3d(4, 4, (1, 3, 3), stride=(1, 2, 2), padding=(0, 1, 1), groups=2)
        self.up = nn.Upsample(scale_factor=(1, 2, 2), mode="trilinear", align_corners=False)
        self.widen = nn.ConvTranspose3d(8, 3, 3, stride=1, padding=1)
        self.summary = nn.AdaptiveAvgPool3d((1, 2, None))
        self.signal = nn.Sequential(
            nn.Conv1d(3, 4, 3, padding=1),
            nn.AvgPool1d(2, ceil_mode=True),
            nn.ConvTranspose1d(4, 2, 4, stride=2, padding=1),
        )
        self.energy = nn.LPPool1d(2, 3, stride=2)
        self.peaks = nn.AdaptiveMaxPool1d(3)
        self.theta = nn.Linear(4, 6)
        self.shuffle = nn.Sequential(nn.PixelUnshuffle(2), nn.ChannelShuffle(2), nn.PixelShuffle(2))

    def forward(self, volume, signal, image):
        h = torch.relu(self.enter(volume))  # (N, 4, 4, 8, 8)
        pooled, where = self.pool(h)  # (N, 4, 2, 4, 4)
        skip = self.unpool(pooled, where, output_size=h.shape)  # (N, 4, 4, 8, 8)
        coarse = self.up(torch.relu(self.down(h)))  # (N, 4, 4, 8, 8)
        logits = self.widen(torch.cat([skip, coarse], dim=1))  # (N, 3, 4, 8, 8)
        s = self.signal(signal)  # (N, 2, 16)
        feats = torch.cat([self.energy(s.abs() + 0.1), self.peaks(s)], dim=-1).mean(1)  # (N, 10)
        grid = F.affine_grid(
            self.theta(feats[:, :4]).view(-1, 2, 3) * 0.1
            + torch.tensor([[1.0, 0, 0], [0, 1.0, 0]]),
            list(image.shape),
            align_corners=False,
        )
        warped = F.grid_sample(image, grid, padding_mode="border", align_corners=False)
        warped = F.interpolate(self.shuffle(warped), size=(6, 10), mode="bicubic")
        return logits, self.summary(logits), warped


def main(seed=0, steps=6, init=None):
    rng = np.random.default_rng(seed)
    volume = torch.tensor(rng.standard_normal((2, 2, 4, 8, 8)), dtype=torch.float32)
    labels = torch.tensor(rng.integers(0, 3, (2, 4, 8, 8)))
    signal = torch.tensor(rng.standard_normal((2, 3, 16)), dtype=torch.float32)
    image = torch.tensor(rng.standard_normal((2, 4, 8, 8)), dtype=torch.float32)
    model = Segmenter()
    if init is not None:
        init(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(steps):
        logits, summary, warped = model(volume, signal, image)
        loss = F.cross_entropy(logits, labels) + summary.pow(2).mean() + warped.pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    with torch.no_grad():
        logits, summary, warped = model(volume, signal, image)
    unfolded = F.unfold(image[:1], 3, padding=1)
    report = {
        "summary": summary.numpy(),
        "warped": warped.numpy(),
        "round_trip": F.fold(unfolded, (8, 8), 3, padding=1).numpy(),
        "shapes": [list(logits.shape), list(unfolded.shape)],
    }
    mistakes = {
        "conv3d-on-4d-weight": lambda: F.conv3d(volume, torch.ones(2, 2, 3, 3)),
        "pool-padding-past-half": lambda: F.max_pool3d(volume, 2, padding=2),
        "unpool-too-small": lambda: F.max_unpool3d(
            *F.max_pool3d(volume, 2, return_indices=True), 2, output_size=(9, 8, 8)
        ),
        "trilinear-on-4d": lambda: F.interpolate(image, scale_factor=2, mode="trilinear"),
        "shuffle-indivisible": lambda: F.pixel_shuffle(image, 3),
        "grid-of-wrong-rank": lambda: F.grid_sample(
            image, torch.zeros(2, 4, 4, 3), align_corners=False
        ),
    }
    refused = {}
    for name, make in mistakes.items():
        try:
            make()
            refused[name] = False
        except (RuntimeError, TypeError, ValueError, NotImplementedError):
            refused[name] = True
    return {"losses": losses, "report": report, "refused": refused}
