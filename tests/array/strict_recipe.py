"""Train a recipe for a few epochs through the command line's own training loop
(recipes/train.py) with ``--device DEVICE``, and print its history and final weights as
JSON: test_strict_backend runs it on the CPU and on the strict stand-in's CUDA device
(``CHAINRULE_ARRAY_BACKEND=strict``) and compares the two.

    python tests/array/strict_recipe.py RECIPE EPOCHS DEVICE OUT_DIR
"""

from __future__ import annotations

import json
import sys

import chainrule as cr
from chainrule import array
from chainrule.tools import recipes
from chainrule.tools.recipes.train import train


def main(name: str, epochs: int, device: str, out_dir: str) -> dict:
    recipe = recipes.load(name)
    settings = {**recipe.DEFAULTS, "seed": 0, "epochs": epochs, "device": device}
    arrays: set[str] = set()
    to = cr.nn.Module.to

    def watched(self: cr.nn.Module, *args: object, **kwargs: object) -> cr.nn.Module:
        out = to(self, *args, **kwargs)  # the arrays the model trains with, seen as it moves
        arrays.update(type(p._array).__module__ for p in self.parameters())
        return out

    cr.nn.Module.to = watched  # type: ignore[method-assign]
    metrics = train(recipe, name, settings, out_dir, quiet=True)
    weights = cr.load(f"{out_dir}/model.safetensors")
    return {
        "backend": array.ARRAY_BACKEND,
        "moved_to": sorted(arrays),
        "history": metrics["history"],
        "devices": sorted({str(t.device) for t in weights.values()}),
        "weights": {k: v.tolist() for k, v in weights.items()},
    }


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4])))
