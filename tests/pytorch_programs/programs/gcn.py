"""A two-layer graph convolutional network (Kipf and Welling, as pytorch/examples' GCN) on a
generated graph of a few communities: the adjacency, with self-loops and symmetric
normalisation D^-1/2 (A + I) D^-1/2, is a sparse COO tensor, and each layer multiplies it with
the dense node features. Trained by Adam to fit the node labels of half the nodes; the graph
and the features follow from the node numbers, so both libraries see the same data."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def make_graph(nodes=60, classes=3, features=8):
    """Communities of consecutive labels: each node links to the next two of its class (a
    ring) and, every fifth node, to one of another class. Features: a weak, noisy hint of
    the label."""
    labels = torch.arange(nodes) % classes
    edges = set()
    for i in range(nodes):
        for step in (classes, 2 * classes):  # the next two nodes of i's class, around
            edges.add((i, (i + step) % nodes))
        if i % 5 == 0:
            edges.add((i, (i * 7 + 1) % nodes))
    edges |= {(j, i) for i, j in edges} | {(i, i) for i in range(nodes)}  # symmetric, loops
    edge_index = torch.tensor(sorted(edges)).t()  # (2, E)
    ones = torch.ones(edge_index.shape[1])
    adjacency = torch.sparse_coo_tensor(edge_index, ones, (nodes, nodes), check_invariants=True)
    degree = torch.sparse.sum(adjacency, 1).to_dense()  # (nodes,)
    scale = degree.pow(-0.5)
    weights = scale[edge_index[0]] * scale[edge_index[1]]  # D^-1/2 (A + I) D^-1/2, per edge
    adjacency = torch.sparse_coo_tensor(
        edge_index, weights, (nodes, nodes), check_invariants=True
    ).coalesce()
    grid = torch.arange(nodes * features, dtype=torch.float32).reshape(nodes, features)
    noise = torch.sin(grid * 1.7 + 0.3)
    hint = F.one_hot(labels, features).float() * 0.6
    return noise + hint, labels, adjacency


class GraphConvolution(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(in_features, out_features))
        self.bias = nn.Parameter(torch.zeros(out_features))
        bound = 1.0 / math.sqrt(out_features)
        nn.init.uniform_(self.weight, -bound, bound)

    def forward(self, x, adj):
        support = x @ self.weight  # (nodes, out)
        return torch.sparse.mm(adj, support) + self.bias


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
    accuracy = (predicted[test] == labels[test]).float().mean().item()
    if verbose:
        print(f"test accuracy {accuracy:.3f}")
    return {
        "losses": losses,
        "accuracy": accuracy,
        "nnz": adj._nnz(),
        "degree_sum": torch.sparse.sum(adj).item(),
    }


if __name__ == "__main__":
    main(verbose=True)
