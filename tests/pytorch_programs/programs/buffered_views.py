"""A regression net trained in a DataParallel wrapper (one device: it runs the module), its
evaluation written into preallocated buffers with out= (matmul, add, sum, max, sort, the
buffers resized to zero elements and reused), its batches laid out by the *_copy functions,
and its targets reshaped in place (unsqueeze_, t_, squeeze_)."""

import torch
import torch.nn.parallel.distributed  # noqa: F401  (DistributedDataParallel's module)
from torch.nn.parallel import DataParallel


def main(seed=0, steps=60, init=None):
    torch.manual_seed(seed)
    x = torch.randn(64, 3, 4)  # (N, C, L)
    target = torch.randn(4, 64)  # laid out (L, N) by its producer
    target.t_()  # (N, L), in place: the same memory
    target.unsqueeze_(1)  # (N, 1, L)

    net = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    if init is not None:
        init(net)
    model = DataParallel(net)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for _ in range(steps):
        xs = torch.permute_copy(x, (0, 2, 1))  # (N, L, C), contiguous
        pred = torch.transpose_copy(model(xs), 1, 2)  # (N, 1, L)
        loss = torch.nn.functional.mse_loss(pred, target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())

    # evaluation into buffers: no graph, so out= is allowed
    w = torch.t_copy(net[0].weight.detach())  # (C, 8)
    hidden = torch.empty(0)
    summed = torch.empty(0)
    best = (torch.empty(0), torch.empty(0, dtype=torch.long))
    with torch.no_grad():
        torch.matmul(torch.permute_copy(x, (0, 2, 1)), w, out=hidden)  # (N, L, 8)
        torch.add(hidden, net[0].bias, out=hidden)
        torch.sum(hidden, 1, out=summed)  # (N, 8)
        torch.max(summed, 1, out=best)
        ranked, order = torch.sort(summed[:, 0], descending=True)
        summed.resize_(0)  # reused for another shape, without the resize warning
        torch.sum(hidden, (0, 1), out=summed)  # (8,)
    pieces = torch.split_copy(hidden, 16)
    squeezed = torch.squeeze_copy(target, 1)
    target.squeeze_(1)
    return {
        "losses": losses,
        "hidden": hidden.numpy().copy(),
        "summed": summed.numpy().copy(),
        "best": best[0].numpy().copy(),
        "where": best[1].numpy().copy(),
        "order": order.numpy().copy(),
        "ranked": ranked.numpy().copy(),
        "pieces": [tuple(p.shape) for p in pieces],
        "same": bool(torch.equal(squeezed, target)),
        "contiguous": [xs.is_contiguous(), pred.is_contiguous(), target.is_contiguous()],
    }
