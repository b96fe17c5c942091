"""Train a recipe for a few epochs through the recipes' own code (data, model, loss, the
optimizer table and evaluate, over a shuffling DataLoader, as recipes/train.py's loop) and
print its history and final weights as JSON: test_strict_backend runs it under NumPy and
under CHAINRULE_ARRAY_BACKEND=strict and compares the two.

The loop is train's without its files: saving is serialization's, which works on the host.

    python tests/strict_recipe.py RECIPE EPOCHS
"""

from __future__ import annotations

import json
import sys

import chainrule as cr
from chainrule import backend, recipes
from chainrule.data import DataLoader, TensorDataset
from chainrule.recipes.train import OPTIMIZERS, evaluate


def main(name: str, epochs: int) -> dict:
    recipe = recipes.load(name)
    settings = {**recipe.DEFAULTS, "seed": 0, "epochs": epochs}
    cr.manual_seed(0)
    x_train, y_train, x_test, y_test = recipe.data(0, settings)
    model = recipe.model()
    opt = OPTIMIZERS[settings["optimizer"]](model.parameters(), lr=settings["lr"])
    loader = DataLoader(
        TensorDataset(x_train, y_train), batch_size=settings["batch_size"], shuffle=True
    )
    history = []
    for _ in range(epochs):
        for xb, yb in loader:
            loss = recipe.loss(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
        history.append([*evaluate(recipe, model, x_train, y_train),
                        *evaluate(recipe, model, x_test, y_test)])  # fmt: skip
    arrays = [type(p._array).__module__ + "." + type(p._array).__name__ for p in model.parameters()]
    return {
        "backend": backend.ARRAY_BACKEND,
        "array_types": sorted(set(arrays)),
        "history": history,
        "weights": {k: v.tolist() for k, v in model.state_dict().items()},
    }


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], int(sys.argv[2]))))
