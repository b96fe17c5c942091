"""The command line: `chainrule train RECIPE`, `chainrule recipes`, `chainrule graph RECIPE`,
`chainrule export RUN_DIR`.

Parsing and reporting only; the recipes and their training loop live in recipes/.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from . import allocator, recipes
from .autograd import fastpath

OUTPUTS = ("metrics.json", "curves.png", "model.safetensors", "decision_boundary.png")


def _positive(kind: type) -> Callable[[str], Any]:
    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a {kind.__name__}; got {text!r}") from None
        if value <= 0:
            raise argparse.ArgumentTypeError(f"must be positive; got {text}")
        return value

    parse.__name__ = kind.__name__
    return parse


def _recipe(text: str) -> str:
    if text not in recipes.RECIPES:
        raise argparse.ArgumentTypeError(
            f"unknown recipe {text!r}; known recipes: {', '.join(recipes.RECIPES)}"
        )
    return text


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="chainrule", description="Train and inspect chainrule models.")
    sub = p.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train", help="train a recipe and save its metrics, plots and model")
    t.add_argument("recipe", type=_recipe, help="a recipe name (see `chainrule recipes`)")
    t.add_argument("--epochs", type=_positive(int), help="passes over the training data")
    t.add_argument("--lr", type=_positive(float), help="learning rate")
    t.add_argument("--batch-size", type=_positive(int), help="examples per step")
    t.add_argument("--optimizer", choices=["sgd", "adam", "adamw", "rmsprop"])
    t.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    t.add_argument("--out", help="output folder (default runs/RECIPE)")
    t.add_argument("--data-dir", help="folder with MNIST-style IDX files (the mnist recipe)")
    t.add_argument("--quiet", action="store_true", help="no progress bar")
    sub.add_parser("recipes", help="list the recipes")
    g = sub.add_parser("graph", help="draw one training step of a recipe's model")
    g.add_argument("recipe", type=_recipe)
    g.add_argument("--out", required=True, help="FILE.svg, FILE.png or FILE.dot")
    g.add_argument("--data-dir", help="folder with MNIST-style IDX files (the mnist recipe)")
    e = sub.add_parser("export", help="write a trained run's model as an ONNX file")
    e.add_argument("run_dir", help="a folder `chainrule train` wrote")
    e.add_argument("--out", help="the ONNX file (default RUN_DIR/model.onnx)")
    e.add_argument("--data-dir", help="the mnist recipe's data, if not where the run found it")
    return p


def settings_for(recipe: object, args: argparse.Namespace) -> dict:
    """The recipe's defaults overridden by whatever was given on the command line."""
    settings = dict(recipe.DEFAULTS)  # type: ignore[attr-defined]
    for key in ("epochs", "lr", "batch_size", "optimizer"):
        if getattr(args, key, None) is not None:
            settings[key] = getattr(args, key)
    settings["seed"] = getattr(args, "seed", 0)
    settings["data_dir"] = getattr(args, "data_dir", None)
    return settings


def cmd_train(args: argparse.Namespace) -> int:
    # The command owns its process, so it may fix malloc's thresholds, which keeps each step
    # from page-faulting in the memory the last one freed (digits-cnn trains about 10% faster: see
    # docs/performance.md). It is a speed trick: CHAINRULE_FASTPATH=0 leaves malloc alone.
    if fastpath.enabled():
        allocator.steady_allocator()
    recipe = recipes.load(args.recipe)
    settings = settings_for(recipe, args)
    out_dir = args.out or os.path.join("runs", args.recipe)
    if hasattr(recipe, "train"):
        metrics = recipe.train(args.recipe, settings, out_dir, args.quiet)
    else:
        from .recipes.train import train

        metrics = train(recipe, args.recipe, settings, out_dir, args.quiet)
    final = metrics["final"]
    shown = {k: v for k, v in final.items() if k.startswith("test_") and k != "test_loss"}
    files = os.listdir(out_dir)
    print(f"wrote {out_dir}/: {', '.join(f for f in OUTPUTS if f in files)}")
    # The run ends with its final metrics, one line.
    print(
        ", ".join(f"{k.replace('_', ' ')}: {v:.4f}" for k, v in shown.items())
        + f"  (train loss {final['train_loss']:.4f}, {metrics['seconds']:.1f} s)"
    )
    return 0


def cmd_recipes() -> int:
    for name in recipes.RECIPES:
        recipe = recipes.load(name)
        mark = " (default)" if name == recipes.DEFAULT else ""
        print(f"{name:<14}{recipe.DESCRIPTION}{mark}")
    return 0


def cmd_graph(args: argparse.Namespace) -> int:
    import chainrule as cr

    from . import viz

    recipe = recipes.load(args.recipe)
    settings = settings_for(recipe, args)
    one_step = getattr(recipe, "one_step", None) or (lambda s: _one_step(recipe, s))
    root, params = one_step(settings)
    # Backward first (keeping the graph), so the drawing shows each parameter's grad norm.
    if isinstance(root, cr.Tensor):
        root.backward(retain_graph=True)
    else:
        root.backward()
    dot = viz.draw_graph(root, params=params)
    base, ext = os.path.splitext(args.out)
    if ext == ".dot":
        with open(args.out, "w") as f:
            f.write(dot.source)
    else:
        try:
            dot.render(base, format=ext.lstrip(".") or "svg", cleanup=True)
        except Exception as e:  # graphviz's ExecutableNotFound when `dot` is missing
            print(
                f"chainrule graph: could not render ({e}); install the system package "
                f"'graphviz' for the `dot` program, or ask for a .dot file",
                file=sys.stderr,
            )
            return 1
    print(f"graph of one {args.recipe} training step written to {args.out}")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    """Rebuild the run's model from its recipe and weights; export it with the batch axis
    free, traced on one example of the recipe's data."""
    import json

    import chainrule as cr

    from . import onnx

    with open(os.path.join(args.run_dir, "metrics.json")) as f:
        metrics = json.load(f)
    recipe: Any = recipes.load(metrics["recipe"])
    if not hasattr(recipe, "model"):
        print(
            f"chainrule export: the {metrics['recipe']} recipe's model runs on the scalar "
            f"engine, which has no ONNX export",
            file=sys.stderr,
        )
        return 2
    model = recipe.model()
    model.load_state_dict(cr.load(os.path.join(args.run_dir, "model.safetensors")))
    settings = {**metrics["settings"], "seed": metrics["seed"]}
    if args.data_dir:
        settings["data_dir"] = args.data_dir
    x = recipe.data(metrics["seed"], settings)[0]
    out = args.out or os.path.join(args.run_dir, "model.onnx")
    batch = {0: "batch"}
    onnx.export(
        model,
        cr.as_tensor(x[:1]),
        out,
        input_names=["input"],
        output_names=["output"],
        dynamic_axes={"input": batch, "output": batch},
    )
    print(f"{metrics['recipe']} model of {args.run_dir} written to {out}")
    return 0


def _one_step(recipe: object, settings: dict) -> tuple:
    import chainrule as cr

    cr.manual_seed(settings["seed"])
    x, y, _, _ = recipe.data(settings["seed"], settings)  # type: ignore[attr-defined]
    model = recipe.model()  # type: ignore[attr-defined]
    n = min(settings["batch_size"], 4)
    return recipe.loss(model(x[:n]), y[:n]), model  # type: ignore[attr-defined]


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        if args.command == "train":
            return cmd_train(args)
        if args.command == "recipes":
            return cmd_recipes()
        if args.command == "export":
            return cmd_export(args)
        return cmd_graph(args)
    except (FileNotFoundError, ImportError) as e:
        print(f"chainrule: {e}", file=sys.stderr)
        return 2
