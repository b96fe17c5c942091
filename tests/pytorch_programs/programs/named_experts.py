"""A small mixture of experts whose experts are keyed by the user's own labels (a ModuleDict,
some labels odd: markup, quotes, a line separator, a JavaScript word), trained by SGD with
its gradient norms, notes, embedding and graph logged to TensorBoard, then exported to ONNX
over the file an earlier export left."""

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.tensorboard import SummaryWriter

LABELS = ["<!--<script>", "</script>", 'a&b "quoted"', "line\u2028sep", "constructor"]


class Experts(nn.Module):
    def __init__(self):
        super().__init__()
        self.experts = nn.ModuleDict({label: nn.Linear(4, 3) for label in LABELS})
        self.head = nn.Linear(3, 2)

    def forward(self, x):
        mixed = sum(torch.tanh(expert(x)) for expert in self.experts.values())  # (n, 3)
        return self.head(mixed)  # (n, 2)


def main(log_dir, init=None, steps=5, onnx_path=None):
    torch.manual_seed(0)
    model = Experts()
    if init is not None:
        init(model)
    x = torch.linspace(-1, 1, 64).reshape(16, 4)
    y = (x[:, 0] + x[:, 3] > 0).long()
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    losses = []
    with SummaryWriter(log_dir) as writer:
        for step in range(steps):
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
            for name, p in model.named_parameters():
                writer.add_scalar(f"grad_norm/{name}", p.grad.norm().item(), step)
        for label in LABELS:
            writer.add_text(label, f"expert {label} trained for {steps} steps", steps)
        with torch.no_grad():
            points = model.experts[LABELS[0]](x)
        writer.add_embedding(points, metadata=[LABELS[i % len(LABELS)] for i in range(16)],
                             tag=LABELS[0])  # fmt: skip
        writer.add_graph(model, x)
    if onnx_path is not None:
        model.eval()
        torch.onnx.export(model, (x,), onnx_path, input_names=["x"], output_names=["logits"])
    return {"losses": losses}
