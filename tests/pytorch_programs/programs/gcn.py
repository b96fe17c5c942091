"""A two-layer graph convolutional network (Kipf and Welling), written as pytorch/examples' GCN
is, on a generated graph of a few communities: the adjacency A + I, normalised to
D^-1/2 (A + I) D^-1/2 by sparse diagonal matrices, and the row-normalised bag-of-words features
are sparse COO tensors; each layer is a product of the sparse features (or the dense hidden
ones) with its weight, then torch.spmm with the adjacency. Trained by Adam to fit the labels of
half the nodes. The graph and the features follow from the node numbers, so both libraries see
the same data."""

import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def make_graph(nodes=60, classes=3, words=12):
    """Communities of one label: each node cites the next two of its class (around a ring)
    and, every fifth node, one of another class, some twice (a repeated entry, summed). Each
    node's words: a few that follow from its number, and one that hints at its label."""
    labels = np.arange(nodes) % classes
    edges = []
    for i in range(nodes):
        edges += [(i, (i + classes) % nodes), (i, (i + 2 * classes) % nodes)]
        if i % 5 == 0:
            edges += [(i, (i * 7 + 1) % nodes)] * (1 + i % 2)
    edges = np.array(edges + [(j, i) for i, j in edges], dtype=np.int32)  # (E, 2), symmetric
    adj = torch.sparse_coo_tensor(
        edges.T, torch.ones(len(edges)), (nodes, nodes), dtype=torch.int64, check_invariants=True
    )
    adj = torch.eye(nodes) + adj  # self-loops: dense + sparse is dense
    degree = torch.sum(adj, dim=1)
    degree = torch.diag(torch.sqrt(1 / degree)).to_sparse()  # D^-1/2, sparse
    adj = degree @ adj @ degree  # sparse @ dense @ sparse: dense

    grid = torch.arange(nodes * words, dtype=torch.float32).reshape(nodes, words)
    features = (torch.sin(grid * 1.7 + 0.3) > 0.6).float()
    features[torch.arange(nodes), torch.tensor(labels)] = 1.0  # the hint
    scale = torch.diag(1 / torch.sum(features, dim=1)).to_sparse()
    features = scale @ features  # each row sums to 1
    return features.to_sparse(), torch.tensor(labels), adj.to_sparse()


class GraphConvolution(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(in_features, out_features))
        self.bias = nn.Parameter(torch.zeros(out_features))
        bound = 1.0 / math.sqrt(out_features)
        nn.init.uniform_(self.weight, -bound, bound)

    def forward(self, x, adj):
        support = torch.mm(x, self.weight)  # (nodes, out); x sparse in the first layer
        return torch.spmm(adj, support) + self.bias


class GCN(nn.Module):
    def __init__(self, in_features, hidden, classes, dropout=0.0):
        super().__init__()
        self.gc1 = GraphConvolution(in_features, hidden)
        self.gc2 = GraphConvolution(hidden, classes)
        self.dropout = dropout

    def forward(self, x, adj):
        x = F.relu(self.gc1(x, adj))
        x = F.dropout(x, self.dropout, training=self.training)
        return F.log_softmax(self.gc2(x, adj), dim=1)


def main(seed=0, epochs=60, init=None, verbose=False):
    torch.manual_seed(seed)
    x, labels, adj = make_graph()
    model = GCN(x.shape[1], 16, int(labels.max()) + 1)
    if init is not None:
        init(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.02, weight_decay=5e-4)
    train = torch.arange(x.shape[0]) < x.shape[0] // 2
    test = ~train
    losses = []
    for epoch in range(epochs):
        model.train()
        optimizer.zero_grad()
        out = model(x, adj)
        loss = F.nll_loss(out[train], labels[train])
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        if verbose and epoch % 10 == 9:
            print(f"epoch {epoch + 1}: loss {loss.item():.4f}")
    model.eval()
    with torch.no_grad():
        predicted = model(x, adj).argmax(dim=1)
        hidden = torch.sparse.mm(adj, F.relu(model.gc1(x, adj)))  # one more hop
    accuracy = (predicted[test] == labels[test]).float().mean().item()
    if verbose:
        print(f"test accuracy {accuracy:.3f}")
    return {
        "losses": losses,
        "accuracy": accuracy,
        "nnz": (adj._nnz(), x._nnz()),
        "adjacency_sum": torch.sparse.sum(adj).item(),
        "hidden": hidden.numpy(),
    }


if __name__ == "__main__":
    main(verbose=True)
