"""An LSTM that learns to continue sine waves: trained on phase-shifted waves with L-BFGS (a
closure that recomputes the loss, strong Wolfe line search) in double precision, then asked to
forecast beyond the data by feeding its own predictions back. The LSTM is nn.LSTM, or two
nn.LSTMCell stepped through time by hand."""

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim


def make_waves(n_waves=12, length=60, period=20.0):
    t = np.arange(length)
    phase = np.arange(n_waves)[:, None] * 1.7
    return np.sin((t[None, :] + phase) * 2 * np.pi / period)  # (n_waves, length)


class Forecaster(nn.Module):
    def __init__(self, hidden=24, num_layers=2):
        super().__init__()
        self.lstm = nn.LSTM(
            input_size=1, hidden_size=hidden, num_layers=num_layers, batch_first=True
        )
        self.linear = nn.Linear(hidden, 1)

    def forward(self, x, future=0):
        out, state = self.lstm(x.unsqueeze(-1))  # (B, T, hidden)
        pred = self.linear(out).squeeze(-1)  # (B, T)
        outputs = [pred]
        last = pred[:, -1:]  # (B, 1)
        for _ in range(future):
            out, state = self.lstm(last.unsqueeze(-1), state)
            last = self.linear(out).squeeze(-1)
            outputs.append(last)
        return torch.cat(outputs, dim=1)


class CellForecaster(nn.Module):
    """The same forecaster stepped by hand: two LSTM cells, one time step at a time."""

    def __init__(self, hidden=24):
        super().__init__()
        self.hidden = hidden
        self.lstm1 = nn.LSTMCell(1, hidden)
        self.lstm2 = nn.LSTMCell(hidden, hidden)
        self.linear = nn.Linear(hidden, 1)

    def forward(self, x, future=0):
        outputs = []
        h_t = torch.zeros(x.size(0), self.hidden, dtype=torch.double)
        c_t = torch.zeros(x.size(0), self.hidden, dtype=torch.double)
        h_t2 = torch.zeros(x.size(0), self.hidden, dtype=torch.double)
        c_t2 = torch.zeros(x.size(0), self.hidden, dtype=torch.double)
        for input_t in x.chunk(x.size(1), dim=1):  # each (B, 1)
            h_t, c_t = self.lstm1(input_t, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        for _ in range(future):  # feed the prediction back as the next input
            h_t, c_t = self.lstm1(output, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        return torch.stack(outputs, 1).squeeze(2)  # (B, T + future)


def main(cells=False, seed=0, steps=6, future=20, init=None, verbose=False):
    np.random.seed(seed)
    torch.manual_seed(seed)
    data = make_waves()
    train, test = data[3:], data[:3]
    inputs = torch.from_numpy(train[:, :-1])
    targets = torch.from_numpy(train[:, 1:])
    test_inputs = torch.from_numpy(test[:, :-1])
    test_targets = torch.from_numpy(test[:, 1:])

    model = (CellForecaster() if cells else Forecaster()).double()
    if init is not None:
        init(model)
    criterion = nn.MSELoss()
    optimizer = optim.LBFGS(
        model.parameters(), lr=0.8, max_iter=10, history_size=10, line_search_fn="strong_wolfe"
    )

    losses = []
    test_losses = []
    for i in range(steps):

        def closure():
            optimizer.zero_grad()
            loss = criterion(model(inputs), targets)
            loss.backward()
            return loss

        loss = optimizer.step(closure)
        losses.append(loss.item())
        with torch.no_grad():
            pred = model(test_inputs, future=future)
            test_loss = criterion(pred[:, :-future], test_targets)
            test_losses.append(test_loss.item())
        if verbose:
            print(f"step {i}: train {loss.item():.6f} test {test_loss.item():.6f}")
    forecast = pred[:, -future:].numpy()
    if verbose:
        print(f"forecast of the first wave: {pred[0, -future:].round(decimals=3).tolist()}")
    return {"losses": losses, "test_losses": test_losses, "forecast": forecast}


if __name__ == "__main__":
    main(verbose=True)
    main(cells=True, verbose=True)
