"""Pixels kept as bytes: an 8-bit image set stored with byte(), centred into signed bytes with
char(), its labels as shorts, features made with the legacy casts (float(), half(), double(),
type(), type_as) and new_* buffers (new_zeros, new_full, new_empty_strided, new_tensor), a
small classifier trained on them, and what the image kept in each storage type."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def main(seed=0, steps=15, init=None):
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    raw = torch.tensor(rng.uniform(0, 255, (24, 16)))  # float64 intensities
    pixels = raw.byte()  # uint8, truncated as C casts do
    centred = (pixels.short() - 128).char()  # int8 in [-128, 127]
    labels = torch.tensor(rng.integers(0, 3, 24)).short().long()
    features = centred.float() / 128.0
    model = nn.Sequential(nn.Linear(16, 12), nn.Tanh(), nn.Linear(12, 3))
    if init is not None:
        init(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.3)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(features), labels)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())

    # a column-major buffer for the logits, written through, read back in row order
    logits = model(features).detach()
    buffer = logits.new_empty_strided((24, 3), (1, 24))
    buffer.copy_(logits)
    counts = labels.new_zeros(3).index_add_(0, labels, labels.new_ones(24))
    return {
        "losses": losses,
        "logits": buffer.numpy().copy(),
        "buffer_stride": buffer.stride(),
        "counts": counts.tolist(),
        "types": [t.type().split(".")[-1] for t in (pixels, centred, labels.short(), features)],
        "dtypes": [
            str(t.dtype).split(".")[-1]
            for t in (
                pixels,
                centred,
                features.half(),
                features.double(),
                features.type_as(pixels),
                features.type(torch.int16),
                features.new_full((2,), 7),
                pixels.new_tensor([1.5, 2.5]),
            )
        ],
        "pixels": pixels[:2].tolist(),
        "centred": centred[:2].tolist(),
    }
