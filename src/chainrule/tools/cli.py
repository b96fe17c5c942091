"""The command line: `chainrule train RECIPE`, `chainrule recipes`, `chainrule graph RECIPE`,
`chainrule export RUN_DIR`, `chainrule sample RUN_DIR`.

Parsing and reporting only; the recipes and their training loop live in recipes/.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import shutil
import sys
from collections.abc import Callable, Sequence
from typing import Any

from .. import array, distributed, fastpath
from ..fastpath import allocator
from . import recipes
from .outputs import write_output
from .run_files import INCOMING, file_in, finish_replacing


def _positive(kind: type) -> Callable[[str], Any]:
    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a {kind.__name__}; got {text!r}") from None
        if not value > 0 or not math.isfinite(value):  # nan > 0 is False: nan is refused
            raise argparse.ArgumentTypeError(f"must be a positive finite number; got {text}")
        return value

    parse.__name__ = kind.__name__
    return parse


def _seed(text: str) -> int:
    """A seed every generator a recipe seeds takes (NumPy's legacy ones stop at 2**32)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an int; got {text!r}") from None
    if not 0 <= value < 2**32:
        raise argparse.ArgumentTypeError(f"must be an int from 0 to {2**32 - 1}; got {text}")
    return value


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
    t.add_argument("--steps", type=_positive(int), help="optimizer steps (names, gpt, adder)")
    t.add_argument("--lr", type=_positive(float), help="learning rate")
    t.add_argument("--batch-size", type=_positive(int), help="examples per step")
    t.add_argument("--optimizer", choices=["sgd", "adam", "adamw", "rmsprop"])
    t.add_argument("--seed", type=_seed, default=0, help="random seed (default 0)")
    t.add_argument("--out", help="output folder (default runs/RECIPE)")
    t.add_argument("--data-dir", help="folder with MNIST-style IDX files (the mnist recipe)")
    t.add_argument(
        "--model",
        help="the names recipe's model: bigram, mlp, rnn, gru, lstm or transformer (default)",
    )
    t.add_argument(
        "--data-file",
        help="a UTF-8 text to train on (the gpt recipe; default: "
        "some of Python's standard library)",
    )
    t.add_argument(
        "--device",
        help="where to train: cpu (the default), cuda or cuda:N (a GPU, "
        "through CuPy: pip install chainrule[cuda])",
    )
    t.add_argument("--quiet", action="store_true", help="no progress bar")
    t.add_argument(
        "--checkpoint-every",
        type=_positive(int),
        metavar="N",
        help="also checkpoint the whole run every N steps (it is at each epoch's end)",
    )
    t.add_argument(
        "--resume",
        action="store_true",
        help="continue the run checkpointed in --out, exactly where it stopped",
    )
    t.add_argument(
        "--tensorboard",
        nargs="?",
        const="",
        metavar="DIR",
        help="log the loss, the metrics and the learning rate (and with --diagnostics "
        "the layers' statistics) for TensorBoard, in DIR (default runs/<date>_<host>_"
        "RECIPE); needs pip install chainrule[tensorboard]",
    )
    t.add_argument(
        "--diagnostics",
        action="store_true",
        help="record each layer's activations, gradients and updates: diagnostics.png, "
        "diagnostics.json and warnings (not for moons-scalar, names, gpt and adder, which "
        "train with loops of their own; cr.viz.Monitor records any model in a script)",
    )
    sub.add_parser("recipes", help="list the recipes")
    g = sub.add_parser("graph", help="draw one training step of a recipe's model")
    g.add_argument("recipe", type=_recipe)
    g.add_argument(
        "--out",
        help="FILE.svg, FILE.png, FILE.pdf (drawn by graphviz's `dot` program) or FILE.dot "
        "(its source, which needs nothing)",
    )
    g.add_argument(
        "--rankdir",
        choices=["TB", "LR"],
        help="top to bottom or left to right (default: left to right, top to bottom for a "
        "graph more than 30 nodes deep)",
    )
    g.add_argument(
        "--html",
        metavar="FILE",
        help="a page that steps through the backward pass (one self-contained HTML file)",
    )
    g.add_argument("--data-dir", help="folder with MNIST-style IDX files (the mnist recipe)")
    e = sub.add_parser("export", help="write a trained run's model as an ONNX file")
    e.add_argument("run_dir", help="a folder `chainrule train` wrote")
    e.add_argument("--out", help="the ONNX file (default RUN_DIR/model.onnx)")
    e.add_argument("--data-dir", help="the mnist recipe's data, if not where the run found it")
    s = sub.add_parser("sample", help="print samples from a trained names or gpt run")
    s.add_argument("run_dir", help="a folder `chainrule train names|gpt` wrote")
    s.add_argument("--num", type=_positive(int), help="how many (default: 10 names, 1 text)")
    s.add_argument(
        "--max-new-tokens",
        type=_positive(int),
        help="characters to draw at most (default: 16 for names, 200 for gpt)",
    )
    s.add_argument(
        "--temperature",
        type=_positive(float),
        default=1.0,
        help="divides the logits: below 1 surer, above 1 more varied (default 1)",
    )
    s.add_argument("--top-k", type=_positive(int), help="draw among the k likeliest only")
    s.add_argument(
        "--greedy",
        action="store_true",
        help="take the likeliest token each time "
        "(as --top-k 1; --temperature and --top-k are then moot)",
    )
    s.add_argument("--prompt", help="text to continue (names: how the names begin)")
    s.add_argument("--seed", type=_seed, default=0, help="random seed (default 0)")
    return p


def settings_for(recipe: object, args: argparse.Namespace) -> dict:
    """The recipe's defaults overridden by whatever was given on the command line."""
    settings = dict(recipe.DEFAULTS)  # type: ignore[attr-defined]
    for key in ("epochs", "steps", "lr", "batch_size", "optimizer", "model", "data_file"):
        if getattr(args, key, None) is None:
            continue
        if key not in settings:
            option = "--" + key.replace("_", "-")
            known = ", ".join("--" + k.replace("_", "-") for k in settings)
            raise recipes.RecipeError(
                f"train: the {args.recipe} recipe has no option {option} (its options: {known}); "
                f"got {option} {getattr(args, key)}"
            )
        settings[key] = getattr(args, key)
    settings["seed"] = getattr(args, "seed", 0)
    settings["data_dir"] = getattr(args, "data_dir", None)
    if getattr(args, "tensorboard", None) is not None:
        settings["tensorboard"] = args.tensorboard
    try:  # checked now, before any training: CUDA without a GPU is the clear error
        device = getattr(args, "device", None) or "cpu"
        settings["device"] = str(array.resolve_device(device, "train --device"))
    except (ValueError, TypeError) as e:
        raise recipes.RecipeError(str(e)) from None
    if getattr(args, "resume", False) or getattr(args, "checkpoint_every", None):
        if hasattr(recipe, "train") and not getattr(recipe, "RESUMES", False):
            raise recipes.RecipeError(
                f"train: the {args.recipe} recipe trains with a loop of its own, which keeps "
                "no checkpoint; got --resume or --checkpoint-every"
            )
        settings["resume"] = args.resume
        settings["checkpoint_every"] = args.checkpoint_every
    return settings


def cmd_train(args: argparse.Namespace) -> int:
    # The command owns its process, so it may fix malloc's thresholds, which keeps each step
    # from page-faulting in the memory the last one freed (digits-cnn trains about 10% faster: see
    # docs/performance.md). It is a speed trick: CHAINRULE_FASTPATH=0 leaves malloc alone.
    if fastpath.enabled():
        allocator.steady_allocator()
    recipe = recipes.load(args.recipe)
    settings = settings_for(recipe, args)
    if args.diagnostics:
        if hasattr(recipe, "train"):
            raise recipes.RecipeError(
                f"train: the {args.recipe} recipe trains with a loop of its own (as "
                f"{', '.join(own_loops())} do), which records no diagnostics; got "
                "--diagnostics; hint: cr.viz.Monitor(model, optimizer) records any model's "
                "layers in a script of your own"
            )
        settings["diagnostics"] = True
    out_dir = args.out or os.path.join("runs", args.recipe)
    from .recipes.train import OUTPUTS, Interrupted, check_out, train

    # Started by an MPI launcher (mpiexec -n N, N > 1): train data-parallel, one rank each.
    world = distributed.launched_world_size()
    check_out(out_dir, alone=world == 1)  # now, not after the training it would throw away

    made_whole("train", out_dir)  # an earlier run killed while replacing its files
    earlier = {name for name in OUTPUTS if os.path.isfile(os.path.join(out_dir, name))}
    if world > 1:
        if hasattr(recipe, "train"):
            raise recipes.RecipeError(
                f"train: the {args.recipe} recipe trains in one process only; got {world} "
                f"processes (mpiexec -n {world})"
            )
        distributed.init_process_group()  # from here, a rank that fails takes all down
    try:
        if hasattr(recipe, "train"):  # a loop of its own: its tensors made on the device
            array.set_default_device(settings.get("device"))
            try:
                metrics = recipe.train(args.recipe, settings, out_dir, args.quiet)
            finally:
                array.set_default_device(None)
        else:
            metrics = train(recipe, args.recipe, settings, out_dir, args.quiet)
    except Interrupted as stopped:
        again = [a for a in args.argv if a != "--resume"]
        print(
            f"\ninterrupted: the run is saved in {stopped}; continue it with\n"
            f"  chainrule {shlex.join(again)} --resume",
            file=sys.stderr,
        )
        return 130
    if world > 1 and distributed.get_rank() > 0:
        return 0  # rank 0 reports
    final = metrics["final"]
    tests = [k for k in final if k.startswith("test_") and k != "test_loss"]
    keys = getattr(recipe, "SHOWN", tests)  # a language model's is its loss
    shown = {k: final[k] for k in keys}
    files = os.listdir(out_dir)
    print(f"wrote {out_dir}/: {', '.join(f for f in OUTPUTS if f in files)}")
    stale = ", ".join(f for f in OUTPUTS if f in earlier and f not in files)
    if stale:
        print(f"removed what an earlier run left there and this one did not write: {stale}")
    # The run ends with its final metrics, one line.
    print(
        ", ".join(f"{k.replace('_', ' ')}: {_number(v)}" for k, v in shown.items())
        + f"  (train loss {_number(final['train_loss'])}, {metrics['seconds']:.1f} s)"
    )
    if args.diagnostics:
        print(_diagnostics_warnings(out_dir))
    epoch = diverged(metrics)
    if epoch is not None:
        print(
            f"chainrule: train: the run diverged: the training loss was NaN or infinite at "
            f"epoch {epoch}; lower --lr (it was {settings['lr']}) or check the data",
            file=sys.stderr,
        )
        return 1
    return 0


def diverged(metrics: dict) -> int | None:
    """The first epoch whose training loss was NaN or infinite (None in metrics.json's
    strict JSON), or None if there is none."""
    for row in metrics.get("history", []):
        loss = row.get("train_loss", 0.0)
        if loss is None or isinstance(loss, float) and not math.isfinite(loss):
            return row.get("epoch", len(metrics["history"]))
    return None


def _number(v: Any) -> str:
    return "nan" if v is None else f"{v:.4f}"


def _diagnostics_warnings(out_dir: str) -> str:
    """The warnings the run's Monitor gave, as diagnostics.json holds them."""

    with open(os.path.join(out_dir, "diagnostics.json"), encoding="utf-8") as f:
        warnings = json.load(f)["warnings"]
    return "\n  ".join(["diagnostics: " + ("warnings:" if warnings else "no warnings"), *warnings])


def cmd_recipes() -> int:
    for name in recipes.RECIPES:
        recipe = recipes.load(name)
        mark = " (default)" if name == recipes.DEFAULT else ""
        print(f"{name:<14}{recipe.DESCRIPTION}{mark}")
    return 0


def cmd_graph(args: argparse.Namespace) -> int:
    import chainrule as cr

    from .. import viz

    if args.out is None and args.html is None:
        raise recipes.RecipeError("graph: give --out FILE (a drawing) or --html FILE (a page)")
    ext = "" if args.out is None else os.path.splitext(args.out)[1].lstrip(".") or "svg"
    _check_drawable(ext)  # before the step runs, and before any file is written
    recipe = recipes.load(args.recipe)
    settings = settings_for(recipe, args)
    one_step = getattr(recipe, "one_step", None) or (lambda s: _one_step(recipe, s))
    root, params = one_step(settings)
    if args.html is not None:  # the page runs the backward pass itself, keeping the graph
        viz.walkthrough(root, args.html, params=params, retain_graph=True)
        print(f"backward pass of one {args.recipe} training step written to {args.html}")
    elif isinstance(root, cr.Tensor):  # backward first, so the drawing shows grad norms
        root.backward(retain_graph=True)
    else:
        root.backward()
    if args.out is None:
        return 0
    dot = viz.draw_graph(root, params=params, rankdir=args.rankdir)
    if ext == "dot":
        write_output(args.out, dot.source, "graph")
    else:
        try:  # drawn in memory: render() would write the source beside (or over) --out
            image = dot.pipe(format=ext)
        except Exception as e:  # `dot` itself failed: nothing is written
            print(f"chainrule graph: `dot` could not draw the graph ({e})", file=sys.stderr)
            return 1
        write_output(args.out, image, "graph")
    print(f"graph of one {args.recipe} training step written to {args.out}")
    return 0


def own_loops() -> list[str]:
    """The recipes that train with a loop of their own rather than train.py's."""
    return [name for name in recipes.RECIPES if hasattr(recipes.load(name), "train")]


def _check_drawable(ext: str) -> None:
    """Refuse, before anything runs, a drawing graphviz cannot make here: a format it does
    not know, or any but .dot without its `dot` program."""
    if not ext or ext == "dot":
        return
    try:
        from graphviz import FORMATS
    except ImportError:
        raise recipes.RecipeError(
            "graph: drawing needs the graphviz Python package; pip install 'chainrule[viz]'"
        ) from None
    if ext not in FORMATS:
        raise recipes.RecipeError(
            f"graph: --out must end in a format graphviz draws (.svg, .png, .pdf, ...) or "
            f".dot; got .{ext}"
        )
    if shutil.which("dot") is None:
        raise recipes.RecipeError(
            f"graph: the `dot` program (Graphviz) is not installed, and it draws the .{ext} "
            "file; install the system package 'graphviz' (apt-get install graphviz, brew "
            "install graphviz), or ask for --out FILE.dot, the drawing's source"
        )


def cmd_export(args: argparse.Namespace) -> int:
    """Rebuild the run's model from its recipe and weights; export it with the batch axis
    free, traced on one example of the recipe's data (a language model: see
    _export_language)."""

    import chainrule as cr

    from .. import onnx
    from .recipes.language import load_weights

    metrics = read_metrics("export", args.run_dir)
    recipe: Any = recipes.load(metrics["recipe"])
    # by default beside the model, never through a link there leading out of the folder
    try:
        out = args.out or file_in(args.run_dir, "model.onnx", "export: RUN_DIR")
    except ValueError as e:
        raise recipes.RecipeError(str(e)) from None
    if "model" in metrics:  # a language run's metrics.json names its model's configuration
        vocab_path = _export_language(args.run_dir, metrics, out)
        print(f"{metrics['recipe']} model of {args.run_dir} written to {out}, its vocabulary "
              f"to {vocab_path}")  # fmt: skip
        return 0
    if not hasattr(recipe, "model"):
        reason = "runs on the scalar engine, which has no ONNX export"
        print(f"chainrule export: the {metrics['recipe']} recipe's model {reason}", file=sys.stderr)
        return 2
    settings = _run_settings(args.run_dir, metrics)
    if args.data_dir:
        settings["data_dir"] = args.data_dir
    model = load_weights(recipe.model(), args.run_dir, "export")
    x = recipe.data(settings["seed"], settings)[0]
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


def _export_language(run_dir: str, metrics: dict, out: str) -> str:
    """A names, gpt or adder run's model written to ``out``: token ids (batch, time), int64,
    to next-token logits (batch, time, vocab), float32, both axes free (time up to the block
    size); and beside it, OUT_STEM.vocab.json, all a program needs besides ONNX Runtime to
    draw text as `chainrule sample` does (examples/onnx_generate.py). Returns its path."""

    import numpy as np

    import chainrule as cr

    from .. import onnx
    from ..datasets import CharVocab
    from .recipes import gpt, names
    from .recipes.language import checked_vocab

    if metrics["recipe"] == "names":
        model: Any = names.rebuild(run_dir, metrics, "export")
        block_size, end = names.BLOCK_SIZE, True
    else:  # the gpt and adder recipes' model
        model = gpt.rebuild(run_dir, metrics, "export")
        block_size, end = model.config.block_size, False
    config = metrics["model"]
    if "vocab" in metrics or metrics["recipe"] != "adder":  # the adder's is its digits
        checked_vocab("export", run_dir, metrics, config["vocab_size"], end)
    # export's second forward is 3 times as long along time: it must fit the block too
    length = max(1, min(5, block_size // 3))
    tokens = np.random.default_rng(0).integers(0, config["vocab_size"], (2, length))
    free = {0: "batch", 1: "time"}
    onnx.export(model, cr.tensor(tokens, dtype=cr.int64), out, input_names=["tokens"],
                output_names=["logits"], dynamic_axes={"tokens": free, "logits": free})  # fmt: skip
    # `chainrule sample`'s defaults: gpt continues a line break, names start at the end token
    # and stop at it; the adder (digits, no sampler) is given the two numbers' 4 digits
    vocab = metrics.get("vocab", {"chars": "0123456789", "end": None})
    defaults = {
        "gpt": {"prompt": gpt.default_prompt(CharVocab(vocab["chars"], end=None)),
                "num": 1, "max_new_tokens": 200},
        "names": {"prompt": "", "num": 10, "max_new_tokens": names.BLOCK_SIZE},
    }.get(metrics["recipe"], {"prompt": None, "num": 1, "max_new_tokens": 3})  # fmt: skip
    path = os.path.splitext(out)[0] + ".vocab.json"
    text = json.dumps({"recipe": metrics["recipe"], "chars": vocab["chars"], "end": vocab["end"],
                       "block_size": block_size, "input": "tokens", "output": "logits",
                       **defaults}, indent=2, ensure_ascii=False)  # fmt: skip
    write_output(path, text, "export")
    return path


def _run_settings(run_dir: str, metrics: dict) -> dict:
    """A tensor recipe run's settings and seed, as metrics.json holds them, checked: a JSON
    object whose data_dir (where the mnist recipe reads) is a path or null, and a seed."""
    settings, seed = metrics.get("settings"), metrics.get("seed")
    where = os.path.join(run_dir, "metrics.json")
    if not isinstance(settings, dict) or type(settings.get("data_dir")) not in (str, type(None)):
        raise recipes.RecipeError(f"export: {where}'s settings must be an object whose data_dir "
                                  f"is a path or null; got {str(settings)[:200]}")  # fmt: skip
    if type(seed) is not int or not 0 <= seed < 2**32:
        raise recipes.RecipeError(f"export: {where}'s seed must be an int from 0 to "
                                  f"{2**32 - 1}; got {seed!r}")  # fmt: skip
    return {**settings, "seed": seed}


def cmd_sample(args: argparse.Namespace) -> int:
    """Rebuild a names or gpt run's model and print what it draws; every argument is
    checked before anything is printed."""

    metrics = read_metrics("sample", args.run_dir)
    name = metrics["recipe"]
    recipe: Any = recipes.load(name) if name in recipes.RECIPES else None
    if not hasattr(recipe, "sample"):
        samplers = [n for n in recipes.RECIPES if hasattr(recipes.load(n), "sample")]
        raise recipes.RecipeError(
            f"sample: RUN_DIR is a run of the {name} recipe, which cannot sample (only "
            f"{', '.join(samplers[:-1])} and {samplers[-1]} runs do); got {args.run_dir!r}"
        )
    if not os.path.isfile(os.path.join(args.run_dir, "model.safetensors")):
        raise recipes.RecipeError(
            f"sample: RUN_DIR holds no model.safetensors; got {args.run_dir!r}"
        )
    options = {
        k: getattr(args, k)
        for k in ("num", "max_new_tokens", "temperature", "top_k", "prompt", "seed")
    }
    if args.greedy:  # only the largest logit survives top-k 1: it is drawn with probability 1
        options["top_k"] = 1
    print(recipe.sample(args.run_dir, metrics, options))
    return 0


def made_whole(command: str, run_dir: str) -> None:
    """A run killed while replacing its files made whole, its manifest checked first: one
    that names anything but the folder's own files (a folder someone sent) is refused."""
    try:
        finish_replacing(run_dir)
    except ValueError as e:
        raise recipes.RecipeError(
            f"{command}: the run folder {run_dir!r} holds a half-done replacement of its files "
            f"that is refused: {e}; to keep the files the folder holds now, remove "
            f"{os.path.join(run_dir, INCOMING)!r}"
        ) from None


def read_metrics(command: str, run_dir: str) -> dict:
    """RUN_DIR's metrics.json (the folder made whole first), checked to be a run's: a JSON
    object naming a known recipe. What a recipe reads from it is checked by the recipe."""
    made_whole(command, run_dir)
    try:
        path = file_in(run_dir, "metrics.json", f"{command}: RUN_DIR")
        with open(path, encoding="utf-8") as f:
            metrics = json.load(f)
        recipe = metrics.get("recipe") if isinstance(metrics, dict) else None
        if not isinstance(recipe, str) or recipe not in recipes.RECIPES:
            raise ValueError(f"no known recipe in {str(metrics)[:80]!r}")
    except (OSError, ValueError, TypeError) as e:
        raise recipes.RecipeError(
            f"{command}: RUN_DIR is not a run `chainrule train` wrote ("
            f"{os.path.join(run_dir, 'metrics.json')} cannot be read: {type(e).__name__}: "
            f"{e}); got {run_dir!r}"
        ) from None
    return metrics


def _one_step(recipe: object, settings: dict) -> tuple:
    import chainrule as cr

    cr.manual_seed(settings["seed"])
    x, y, _, _ = recipe.data(settings["seed"], settings)  # type: ignore[attr-defined]
    model = recipe.model()  # type: ignore[attr-defined]
    n = min(settings["batch_size"], 4)
    return recipe.loss(model(x[:n]), y[:n]), model  # type: ignore[attr-defined]


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser().parse_args(argv)
    args.argv = argv  # the command as given: a run stopped by Ctrl-C says how to go on
    try:
        if args.command == "train":
            return cmd_train(args)
        if args.command == "recipes":
            return cmd_recipes()
        if args.command == "export":
            return cmd_export(args)
        if args.command == "sample":
            return cmd_sample(args)
        return cmd_graph(args)
    except (FileNotFoundError, ImportError, recipes.RecipeError) as e:
        print(f"chainrule: {e}", file=sys.stderr)
        return 2
