"""A word-level language model saved whole and loaded back, as the word_language_model example
does: ``torch.save(model, f)``, then ``torch.load(f)`` with the default weights_only, inside
``torch.serialization.safe_globals`` naming the model's classes by PyTorch's module paths
(``torch.nn.modules.rnn.LSTM``). The same allow-list written with ``nn.LSTM``'s names loads too;
without it, the load is refused. An LSTM over embeddings trains a few steps first."""

import io

import torch
import torch.nn as nn
import torch.nn.functional as F

TEXT = """\
the keeper climbed the stairs to light the lamp .
the ships passed the coast while the lamp burned .
the storm broke the window and the keeper closed it .
"""


class RNNModel(nn.Module):
    def __init__(self, ntoken, ninp, nhid, nlayers):
        super().__init__()
        self.ntoken = ntoken
        self.drop = nn.Dropout(0.0)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers)
        self.decoder = nn.Linear(nhid, ntoken)
        self.norm = nn.LayerNorm(nhid)

    def forward(self, input):
        emb = self.drop(self.encoder(input))  # (T, B, ninp)
        output, _ = self.rnn(emb)  # (T, B, nhid)
        decoded = self.decoder(self.norm(self.drop(output)))  # (T, B, ntoken)
        return F.log_softmax(decoded.view(-1, self.ntoken), dim=1)


ALLOWED = [  # by PyTorch's module paths, as checkpoints name them
    RNNModel,
    torch.nn.modules.dropout.Dropout,
    torch.nn.modules.sparse.Embedding,
    torch.nn.modules.rnn.LSTM,
    torch.nn.modules.linear.Linear,
    torch.nn.modules.normalization.LayerNorm,
]
ALLOWED_BY_NN = [RNNModel, nn.Dropout, nn.Embedding, nn.LSTM, nn.Linear, nn.LayerNorm]


def main(init=lambda model: None, steps=4):
    words = TEXT.split()
    vocab = sorted(set(words))
    ids = torch.tensor([vocab.index(w) for w in words], dtype=torch.int64)
    data = ids[: len(ids) // 2 * 2].view(2, -1).t().contiguous()  # (T, 2)
    source, target = data[:-1], data[1:].reshape(-1)

    model = RNNModel(len(vocab), 8, 12, 2)
    init(model)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = F.nll_loss(model(source), target)
        loss.backward()
        opt.step()
        losses.append(loss.item())

    f = io.BytesIO()
    torch.save(model, f)
    model.eval()
    with torch.no_grad():
        before = F.nll_loss(model(source), target).item()

    after = []
    for allowed in (ALLOWED, ALLOWED_BY_NN):
        f.seek(0)
        with torch.serialization.safe_globals(allowed):
            loaded = torch.load(f)
        loaded.eval()
        with torch.no_grad():
            after.append(F.nll_loss(loaded(source), target).item())
        kinds = [type(m).__name__ for m in loaded.modules()]

    f.seek(0)
    try:
        torch.load(f)
        refused = False
    except Exception as e:  # pickle.UnpicklingError in both
        refused = "RNNModel" in str(e)
    return {
        "losses": losses,
        "before": before,
        "after": after,
        "kinds": kinds,
        "refused": refused,
        "out_proj": type(nn.MultiheadAttention(8, 2).out_proj).__name__,
    }
