"""A small CNN classifier of 8x8 blobs, logged for TensorBoard as PyTorch users log one: its
graph with add_graph, then the loss of each step and each block's weight histograms. The event
files are read back with TensorBoard's own reader: the graph's boxes (module scopes), its input
and output nodes, and the tags written."""

import tempfile

import numpy as np
import torch
from tensorboard.backend.event_processing import event_accumulator
from torch import nn
from torch.utils.tensorboard import SummaryWriter


class Block(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)
        self.norm = nn.BatchNorm2d(channels)

    def forward(self, x):
        return torch.relu(self.norm(self.conv(x))) + x  # a residual block


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(1, 4, 3, padding=1)
        self.blocks = nn.ModuleList([Block(4), Block(4)])
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(4 * 4 * 4, 2))

    def forward(self, image):
        x = nn.functional.max_pool2d(self.stem(image), 2)  # (N, 4, 4, 4)
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def main(seed=0, steps=6, init=None):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 2, 32)
    images = rng.standard_normal((32, 1, 8, 8)).astype(np.float32) * 0.3
    images[labels == 1, :, 2:6, 2:6] += 1.0  # class 1: a bright square in the middle
    x, y = torch.tensor(images), torch.tensor(labels)
    model = Net()
    if init is not None:
        init(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    log_dir = tempfile.mkdtemp()
    losses = []
    with SummaryWriter(log_dir) as writer:
        writer.add_graph(model, x[:4])
        for step in range(steps):
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
            writer.add_scalar("loss", loss.item(), step)
            for name, p in model.blocks.named_parameters():
                if name.endswith("conv.weight"):
                    writer.add_histogram(f"blocks/{name}", p.detach(), step)
    acc = event_accumulator.EventAccumulator(log_dir).Reload()
    graph = acc.Graph()
    scopes = set()
    for node in graph.node:
        parts = node.name.split("/")
        scopes |= {"/".join(parts[:k]) for k in range(1, len(parts))}
    io = {n.name: [d.size for d in n.attr["_output_shapes"].list.shape[0].dim]
          for n in graph.node if n.op == "IO Node"}  # fmt: skip
    tags = {kind: sorted(acc.Tags()[kind]) for kind in ("scalars", "histograms")}
    return {"losses": losses, "scopes": scopes, "io": io, "tags": tags}
