"""The training recipes: each a short file with its data, model, loss and defaults.

A recipe module defines DESCRIPTION, TASK ('binary', 'multiclass' or 'regression'),
DEFAULTS (epochs, lr, batch_size, optimizer), data(seed, args), model() and loss(out, y);
recipes/train.py runs them all with one flat loop. A recipe may define its own train(),
plot_extra(model, x_train, y_train, out_dir, quiet) for more pictures, and one_step(settings)
for `chainrule graph`. The language-model recipes (names, gpt, adder) train by steps with
their own train(), set RESUMES (their loop keeps a checkpoint: --checkpoint-every, --resume)
and may define sample(run_dir, metrics, options) for `chainrule sample`.
"""

from __future__ import annotations

import importlib
from types import ModuleType

# command-line name -> module name, in the order `chainrule recipes` lists them
RECIPES = {
    "breast-cancer": "breast_cancer",
    "regression": "regression",
    "moons": "moons",
    "moons-scalar": "moons_scalar",
    "digits-mlp": "digits_mlp",
    "digits-cnn": "digits_cnn",
    "mnist": "mnist",
    "names": "names",
    "gpt": "gpt",
    "adder": "adder",
}
DEFAULT = "breast-cancer"


class RecipeError(ValueError):
    """A bad input to a recipe (an option's value, a data file, a run folder): the command
    line prints it in one line, before anything is written."""


def load(name: str) -> ModuleType:
    if name not in RECIPES:
        raise KeyError(f"unknown recipe {name!r}; known recipes: {', '.join(RECIPES)}")
    return importlib.import_module(f"{__name__}.{RECIPES[name]}")
