"""A word-level language model: a dictionary built from the text, the corpus batchified into
columns, truncated backpropagation through time over bptt-long chunks with the hidden state
detached between them, gradient clipping and a plain SGD update by hand, with the learning rate
annealed when validation stops improving. The model is an LSTM, a GRU or a Transformer encoder;
it then generates words."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

TEXT = """\
the old lighthouse keeper climbed the stairs every night to light the lamp .
the lamp burned until morning and the ships passed safely along the coast .
one winter the storm broke the window at the top of the tower .
the keeper climbed the stairs with a board and nails and closed the window .
the wind blew all night but the lamp kept burning behind the board .
in the morning the ships came home and the sailors thanked the keeper .
the keeper went down the stairs and slept until the evening came again .
then he climbed the stairs once more to light the lamp for the night .
"""


class Dictionary:
    def __init__(self):
        self.word2idx = {}
        self.idx2word = []

    def add_word(self, word):
        if word not in self.word2idx:
            self.idx2word.append(word)
            self.word2idx[word] = len(self.idx2word) - 1
        return self.word2idx[word]

    def __len__(self):
        return len(self.idx2word)


class Corpus:
    def __init__(self, text):
        self.dictionary = Dictionary()
        lines = text.strip().split("\n")
        self.train = self.tokenize(lines[:-2])
        self.valid = self.tokenize(lines[-2:])

    def tokenize(self, lines):
        ids = []
        for line in lines:
            for word in line.split() + ["<eos>"]:
                ids.append(self.dictionary.add_word(word))
        return torch.tensor(ids, dtype=torch.int64)


def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    data = data.narrow(0, 0, nbatch * bsz)  # trim off the remainder
    return data.view(bsz, -1).t().contiguous()  # (nbatch, bsz)


def get_batch(source, i, bptt):
    seq_len = min(bptt, len(source) - 1 - i)
    data = source[i : i + seq_len]
    target = source[i + 1 : i + 1 + seq_len].reshape(-1)
    return data, target


class RNNModel(nn.Module):
    def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers, dropout=0.0, tie_weights=False):
        super().__init__()
        self.ntoken = ntoken
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn_type = rnn_type
        self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        if tie_weights:
            assert nhid == ninp, "tied weights need nhid == emsize"
            self.decoder.weight = self.encoder.weight
        self.init_weights()
        self.nhid = nhid
        self.nlayers = nlayers

    def init_weights(self):
        initrange = 0.1
        nn.init.uniform_(self.encoder.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -initrange, initrange)

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))  # (T, B, ninp)
        output, hidden = self.rnn(emb, hidden)  # (T, B, nhid)
        output = self.drop(output)
        decoded = self.decoder(output).view(-1, self.ntoken)  # (T * B, ntoken)
        return F.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        if self.rnn_type == "LSTM":
            return (
                weight.new_zeros(self.nlayers, bsz, self.nhid),
                weight.new_zeros(self.nlayers, bsz, self.nhid),
            )
        return weight.new_zeros(self.nlayers, bsz, self.nhid)


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, dropout=0.1, max_len=500):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        pe = pe.unsqueeze(0).transpose(0, 1)  # (max_len, 1, d_model)
        self.register_buffer("pe", pe)

    def forward(self, x):
        x = x + self.pe[: x.size(0), :]
        return self.dropout(x)


class TransformerModel(nn.Module):
    def __init__(self, ntoken, ninp, nhead, nhid, nlayers, dropout=0.0):
        super().__init__()
        self.model_type = "Transformer"
        self.src_mask = None
        self.pos_encoder = PositionalEncoding(ninp, dropout)
        encoder_layers = nn.TransformerEncoderLayer(ninp, nhead, nhid, dropout)
        self.transformer_encoder = nn.TransformerEncoder(
            encoder_layers, nlayers, enable_nested_tensor=False
        )
        self.encoder = nn.Embedding(ntoken, ninp)
        self.ninp = ninp
        self.decoder = nn.Linear(ninp, ntoken)
        self.init_weights()

    def init_weights(self):
        initrange = 0.1
        nn.init.uniform_(self.encoder.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -initrange, initrange)

    def forward(self, src, has_mask=True):
        if has_mask:
            if self.src_mask is None or self.src_mask.size(0) != len(src):
                self.src_mask = nn.Transformer.generate_square_subsequent_mask(len(src))
        else:
            self.src_mask = None
        src = self.encoder(src) * math.sqrt(self.ninp)  # (T, B, ninp)
        src = self.pos_encoder(src)
        output = self.transformer_encoder(src, self.src_mask)
        output = self.decoder(output)  # (T, B, ntoken)
        return F.log_softmax(output, dim=-1)


def repackage_hidden(h):
    """Wraps hidden states in new Tensors, to detach them from their history."""
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


def main(
    model_type="LSTM",
    seed=1111,
    epochs=3,
    lr=5.0,
    bptt=8,
    batch_size=4,
    n_words=12,
    init=None,
    verbose=False,
):
    torch.manual_seed(seed)
    corpus = Corpus(TEXT)
    train_data = batchify(corpus.train, batch_size)
    val_data = batchify(corpus.valid, 2)
    ntokens = len(corpus.dictionary)
    if model_type == "Transformer":
        model = TransformerModel(ntokens, 16, 2, 32, 2)
    else:
        model = RNNModel(model_type, ntokens, 16, 16, 2, tie_weights=True)
    if init is not None:
        init(model)
    criterion = nn.NLLLoss()

    def evaluate(data_source):
        model.eval()
        total_loss = 0.0
        if model_type != "Transformer":
            hidden = model.init_hidden(2)
        with torch.no_grad():
            for i in range(0, data_source.size(0) - 1, bptt):
                data, targets = get_batch(data_source, i, bptt)
                if model_type == "Transformer":
                    output = model(data)
                    output = output.view(-1, ntokens)
                else:
                    output, hidden = model(data, hidden)
                    hidden = repackage_hidden(hidden)
                total_loss += len(data) * criterion(output, targets).item()
        return total_loss / (len(data_source) - 1)

    def train():
        model.train()
        losses = []
        if model_type != "Transformer":
            hidden = model.init_hidden(batch_size)
        for i in range(0, train_data.size(0) - 1, bptt):
            data, targets = get_batch(train_data, i, bptt)
            model.zero_grad()
            if model_type == "Transformer":
                output = model(data)
                output = output.view(-1, ntokens)
            else:
                hidden = repackage_hidden(hidden)
                output, hidden = model(data, hidden)
            loss = criterion(output, targets)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
            for p in model.parameters():
                p.data.add_(p.grad, alpha=-lr)
            losses.append(loss.item())
        return losses

    # the loss to beat: every word predicted by its frequency in the training text
    counts = torch.bincount(corpus.train, minlength=ntokens).float() + 1  # add-one smoothing
    unigram = -(counts / counts.sum()).log()
    baseline = unigram[val_data.view(-1)].mean().item()
    if verbose:
        print(f"unigram baseline {baseline:.2f}")

    best_val_loss = None
    train_losses, val_losses = [], []
    for epoch in range(1, epochs + 1):
        train_losses += train()
        val_loss = evaluate(val_data)
        val_losses.append(val_loss)
        if verbose:
            print(
                f"| end of epoch {epoch:3d} | valid loss {val_loss:5.2f} | "
                f"valid ppl {math.exp(val_loss):8.2f} | lr {lr:.2f}"
            )
        if not best_val_loss or val_loss < best_val_loss:
            best_val_loss = val_loss
        else:
            lr /= 4.0  # anneal the learning rate if no improvement was seen

    # the nearest words to "lamp" by the cosine of their embeddings
    with torch.no_grad():
        emb = F.normalize(model.encoder.weight, dim=1)  # (ntokens, ninp)
        query = corpus.dictionary.word2idx["lamp"]
        sims = emb @ emb[query]  # (ntokens,)
        nearest = [corpus.dictionary.idx2word[i] for i in sims.topk(4).indices.tolist()]
        lamp_keeper = F.cosine_similarity(
            model.encoder.weight[query],
            model.encoder.weight[corpus.dictionary.word2idx["keeper"]],
            dim=0,
        ).item()
    if verbose:
        print(f"nearest to lamp: {nearest}, cos(lamp, keeper) = {lamp_keeper:.3f}")

    # generate text from the trained model, one word at a time
    model.eval()
    temperature = 1.0
    input = torch.randint(ntokens, (1, 1), dtype=torch.long)
    if model_type != "Transformer":
        hidden = model.init_hidden(1)
    generated = []
    with torch.no_grad():
        for _ in range(n_words):
            if model_type == "Transformer":
                output = model(input, False)
                word_weights = output[-1].squeeze().div(temperature).exp().cpu()
                word_idx = torch.multinomial(word_weights, 1)[0]
                word_tensor = torch.Tensor([[word_idx]]).long()
                input = torch.cat([input, word_tensor], 0)
            else:
                output, hidden = model(input, hidden)
                word_weights = output.squeeze().div(temperature).exp().cpu()
                word_idx = torch.multinomial(word_weights, 1)[0]
                input.fill_(word_idx)
            generated.append(corpus.dictionary.idx2word[word_idx])
    if verbose:
        print(" ".join(generated))
    return {
        "losses": train_losses,
        "val_losses": val_losses,
        "generated": generated,
        "baseline": baseline,
        "nearest": nearest,
        "lamp_keeper": lamp_keeper,
        "vocab": corpus.dictionary.idx2word,
    }


if __name__ == "__main__":
    for model_type in ("LSTM", "GRU", "Transformer"):
        main(model_type, verbose=True)
