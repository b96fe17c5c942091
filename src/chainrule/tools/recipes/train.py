"""The one training loop every tensor recipe shares, and what a run leaves behind:
a progress bar, metrics.json, curves.png and model.safetensors.

Under an MPI launcher (the command line has called init_process_group), the same loop
trains data-parallel: --batch-size is the global batch, split evenly over the ranks, the
learning rate is the one given (the averaged gradient is the global batch's), the metrics
are reduced over the ranks, and rank 0 alone shows progress and writes the files.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import numpy as np

import chainrule as cr
from chainrule import distributed as dist
from chainrule import nn, optim
from chainrule.data import DataLoader, DistributedSampler, TensorDataset
from chainrule.nn.parallel import DistributedDataParallel
from chainrule.tools.recipes import RecipeError
from chainrule.tools.run_files import file_in, replace_together

OPTIMIZERS = {"sgd": optim.SGD, "adam": optim.Adam, "adamw": optim.AdamW, "rmsprop": optim.RMSprop}


def evaluate(
    recipe: ModuleType, model: nn.Module, x: cr.Tensor, y: cr.Tensor
) -> tuple[float, float]:
    """(loss, metric) on a whole split: accuracy for classifiers, MSE for regression. Data-
    parallel, each rank takes every world-th example and the means are combined."""
    world = dist.get_world_size() if dist.is_initialized() else 1
    if world > 1:
        x, y = x[dist.get_rank() :: world], y[dist.get_rank() :: world]
    model.eval()
    with cr.no_grad():
        out = model(x)
        loss = recipe.loss(out, y).item()
        if recipe.TASK == "regression":
            metric = float(((out.reshape(-1) - y.reshape(-1)) ** 2).mean().item())
        elif recipe.TASK == "binary":
            metric = float(((out.reshape(-1) > 0) == (y.reshape(-1) > 0.5)).double().mean().item())
        else:
            metric = float((out.argmax(dim=1) == y).double().mean().item())
    model.train()
    if world > 1:  # the means over all the examples, from each rank's sums
        sums = cr.tensor([loss * len(y), metric * len(y), len(y)], dtype=cr.float64)
        dist.all_reduce(sums)
        loss, metric = (sums[:2] / sums[2]).tolist()
    return loss, metric


def train(
    recipe: ModuleType, name: str, settings: dict[str, Any], out_dir: str, quiet: bool
) -> dict:
    """Train ``recipe`` with ``settings`` (epochs, lr, batch_size, optimizer, seed, data_dir);
    write the run's files to ``out_dir`` and return the metrics."""
    from tqdm.auto import tqdm

    seed = settings["seed"]
    world = dist.get_world_size() if dist.is_initialized() else 1
    rank = dist.get_rank() if world > 1 else 0
    if settings["batch_size"] % world:
        raise RecipeError(
            f"train: --batch-size is the global batch, split evenly over the {world} "
            f"processes; got {settings['batch_size']}; give a multiple of {world}"
        )
    cr.manual_seed(seed)
    x_train, y_train, x_test, y_test = recipe.data(seed, settings)
    model = recipe.model()
    device = cr.device(settings.get("device") or "cpu")
    if device.type != "cpu":  # the model and the data there; the batches are drawn there
        model.to(device)
        splits = (x_train, y_train, x_test, y_test)
        x_train, y_train, x_test, y_test = (t.to(device) for t in splits)
    net, sampler = model, None
    dataset = TensorDataset(x_train, y_train)
    if world > 1:
        net = DistributedDataParallel(model)  # every rank starts from rank 0's weights
        sampler = DistributedSampler(dataset, seed=seed)
        cr.manual_seed(seed + rank)  # dropout's masks differ between the ranks
    opt = OPTIMIZERS[settings["optimizer"]](model.parameters(), lr=settings["lr"])
    batch = settings["batch_size"] // world
    loader = DataLoader(dataset, batch_size=batch, shuffle=sampler is None, sampler=sampler)
    writer = tensorboard_writer(settings, name, rank)
    monitor = None
    if settings.get("diagnostics"):  # about 100 recorded steps over the run
        every = max(1, settings["epochs"] * len(loader) // 100)
        monitor = cr.viz.Monitor(model, opt, every=every, writer=writer)
    metric_name = "test_mse" if recipe.TASK == "regression" else "test_accuracy"
    run = Progress(out_dir, name, settings, world)  # the checkpoint, when it is kept
    position = {"epoch": "count", "step_in_epoch": "count", "epoch_rng": "random state or null"}
    saved = run.load(model, opt, position) if settings.get("resume") else None
    if saved and not (
        1 <= saved["epoch"] <= settings["epochs"] + 1
        and len(saved["history"]) == saved["epoch"] - 1  # a row for each epoch done
        and (saved["epoch_rng"] is not None or not saved["step_in_epoch"])
    ):
        raise RecipeError(
            f"train: --resume: {run.path!r} holds epoch {saved['epoch']}, step "
            f"{saved['step_in_epoch']} in it, after {len(saved['history'])} rows of history, "
            f"which no run of {settings['epochs']} epochs checkpoints; the checkpoint was "
            "altered or damaged"
        )
    history: list[dict[str, Any]] = saved["history"] if saved else []
    start = time.perf_counter() - (saved["seconds"] if saved else 0.0)
    first = saved["epoch"] if saved else 1
    hidden = quiet or rank > 0
    bar = tqdm(range(first, settings["epochs"] + 1), desc=name, disable=hidden, leave=False)
    with run.interruptible():
        for epoch in bar:
            if sampler is not None:
                sampler.set_epoch(epoch)
            # The batches' order is drawn when the epoch starts: a run resumed mid-epoch
            # draws it again from the state saved then, passes over the batches it had
            # trained on, and goes on from the state saved after the last of them.
            here = saved if saved and saved["epoch"] == epoch else None
            skip = here["step_in_epoch"] if here else 0
            if here:
                cr.set_rng_state(here["epoch_rng"] if skip else here["rng"])
            epoch_rng = cr.get_rng_state()
            for step, (xb, yb) in enumerate(loader, start=1):
                if here and step <= skip:
                    if step == skip:
                        cr.set_rng_state(here["rng"])
                    continue
                loss = recipe.loss(net(xb), yb)
                opt.zero_grad()
                loss.backward()
                opt.step()
                if writer is not None:
                    at = (epoch - 1) * len(loader) + step
                    writer.add_scalar("loss/train_step", float(loss), at)
                    writer.add_scalar("lr", opt.param_groups[0]["lr"], at)
                run.step_done(
                    model, opt, history, start, epoch=epoch, step_in_epoch=step, epoch_rng=epoch_rng
                )
            train_loss, _ = evaluate(recipe, model, x_train, y_train)
            test_loss, metric = evaluate(recipe, model, x_test, y_test)
            history.append(
                {
                    "epoch": epoch,
                    "train_loss": train_loss,
                    "test_loss": test_loss,
                    metric_name: metric,
                }
            )
            bar.set_postfix(loss=f"{train_loss:.4f}", **{metric_name: f"{metric:.4f}"})
            if writer is not None:
                for key, value in history[-1].items():
                    if key != "epoch":
                        writer.add_scalar(f"epoch/{key}", value, epoch)
            if not math.isfinite(train_loss):  # diverged: later epochs cannot recover
                break
            run.save(model, opt, history, start, epoch=epoch + 1, step_in_epoch=0, epoch_rng=None)
    if not hidden:
        print_finished(bar)
    if writer is not None:
        writer.close()
    final = {k: v for k, v in history[-1].items() if k != "epoch"}
    metrics = {
        "recipe": name,
        "seed": seed,
        "epochs": settings["epochs"],
        "world_size": world,
        "seconds": round(time.perf_counter() - start, 3),
        "settings": {k: v for k, v in settings.items() if k not in ("seed", "resume")},
        "history": history,
        "final": final,
    }
    if rank > 0:
        return metrics
    if device.type != "cpu":  # the model file and the plots are made from the host
        model.cpu()
        x_train, y_train = x_train.cpu(), y_train.cpu()
    with outputs(out_dir) as folder:
        write_outputs(folder, metrics, model.state_dict(), quiet)
        if hasattr(recipe, "plot_extra"):
            recipe.plot_extra(model, x_train, y_train, folder, quiet)
        if monitor is not None:
            write_diagnostics(monitor, folder, quiet)
    return metrics


CHECKPOINT = "checkpoint.safetensors"


def print_finished(bar: Any) -> None:
    """Close a progress bar (leave=False: it goes, widget or text) and print its last state as
    a line of the output, which stays: in a terminal, and in a saved notebook, where a widget
    shows nothing once its kernel is gone."""
    bar.close()
    print(bar.format_meter(**bar.format_dict))


def tensorboard_writer(settings: dict[str, Any], name: str, rank: int) -> Any:
    """``--tensorboard [DIR]``'s SummaryWriter, on rank 0 only: DIR, or PyTorch's default
    ``runs/<date>_<host>_<recipe>``; None without the option."""
    where = settings.get("tensorboard")
    if where is None or rank > 0:
        return None
    from ...utils.tensorboard import SummaryWriter

    return SummaryWriter(log_dir=where or None, comment=f"_{name}")


def _but_device(settings: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in settings.items() if k != "device"}


class Interrupted(Exception):
    """Ctrl-C during training: the step in progress finished and the run was checkpointed."""


def _random_state(value: Any) -> bool:
    try:
        cr.Generator().set_state(value)  # a generator of its own: tried, then dropped
    except (ValueError, TypeError, AttributeError, OverflowError):
        return False
    return True


def _history(rows: Any) -> bool:
    return isinstance(rows, list) and all(
        isinstance(r, dict) and all(type(v) in (int, float, type(None)) for v in r.values())
        for r in rows
    )


# What each field of a checkpoint may be: (a test, the words for it).
FIELD_KINDS: dict[str, tuple[Any, str]] = {
    "count": (lambda v: type(v) is int and v >= 0, "an integer from 0"),
    "seconds": (lambda v: type(v) in (int, float) and 0 <= v < math.inf, "a number of seconds"),
    "history": (_history, "a list of rows of numbers"),
    "object": (lambda v: isinstance(v, dict), "an object"),
    "name": (lambda v: isinstance(v, str), "a string"),
    "random state": (_random_state, "a random state get_rng_state gives"),
    "random state or null": (lambda v: v is None or _random_state(v), "a random state or null"),
}
# What every checkpoint holds (the loops add their own position beside it), and its kind.
CHECKPOINT_FIELDS = {"recipe": "name", "settings": "object", "model": "object",
                     "optimizer": "object", "rng": "random state", "steps": "count",
                     "history": "history", "seconds": "seconds"}  # fmt: skip


class Progress:
    """The whole state of a run in out_dir/checkpoint.safetensors, written atomically
    every ``checkpoint_every`` steps, on Ctrl-C and wherever the loop asks (each epoch's
    end; a language model's last step): model, optimizer, the global random state, the
    steps done, the metrics so far, the seconds spent, and the loop's own position (the
    tensor recipes' epoch, step in it and random state at its start, which drew the
    batches' order; the language recipes' batch generator and scheduler). A run killed at
    any moment and resumed from it ends with the same model, byte for byte, as one never
    stopped. One process only: under mpiexec nothing is kept."""

    def __init__(self, out_dir: str, name: str, settings: dict[str, Any], world: int) -> None:
        self.path = os.path.join(out_dir, CHECKPOINT)
        self.name, self.world = name, world
        self.every = settings.get("checkpoint_every") or 0
        self.settings = {k: v for k, v in settings.items() if k in RUN_SETTINGS}
        self.steps = 0
        self.stop = False
        if world > 1 and (settings.get("resume") or self.every):
            raise RecipeError(
                f"train: --resume and --checkpoint-every keep one process's state; got "
                f"{world} processes (mpiexec -n {world})"
            )

    def load(
        self, model: nn.Module, opt: optim.Optimizer, position: dict[str, str]
    ) -> dict[str, Any] | None:
        """The saved state, put into model and opt; None (the run starts from the
        beginning) when the run was stopped before its first checkpoint, or had finished.
        Every field is checked before it is used (the loop's own: ``position``, field to its
        kind in FIELD_KINDS): the file may have been altered."""
        if not os.path.lexists(self.path):
            print(
                f"train: --resume: no checkpoint in {os.path.dirname(self.path)!r}; "
                "training from the beginning",
                file=sys.stderr,
            )
            return None
        # onto this run's device: a run may go on on another device than it began on
        try:
            state = cr.load(self.path, map_location=self.settings.get("device") or "cpu")
        except (OSError, ValueError) as e:
            raise RecipeError(f"train: --resume: the checkpoint cannot be loaded: {e}") from None
        fields = {**CHECKPOINT_FIELDS, **position}
        lacking = [k for k in fields if not isinstance(state, dict) or k not in state]
        if lacking:  # a model's state_dict, say, saved under the checkpoint's name
            held = sorted(map(str, state))[:6] if isinstance(state, dict) else type(state).__name__
            raise RecipeError(
                f"train: --resume: {self.path!r} is not a run's checkpoint (it lacks "
                f"{', '.join(lacking)}; it holds {held}); --resume goes on from the "
                "checkpoint.safetensors `chainrule train` writes: train without --resume, or "
                "give --out the folder of the run to continue"
            )
        for key, kind in fields.items():
            accepts, what = FIELD_KINDS[kind]
            if not accepts(state[key]):
                raise RecipeError(
                    f"train: --resume: {self.path!r} holds a {key} that is not {what}; got "
                    f"{str(state[key])[:200]}; the checkpoint was altered or damaged"
                )
        if state["recipe"] != self.name or _but_device(state["settings"]) != _but_device(
            self.settings
        ):
            raise RecipeError(
                f"train: --resume: {self.path!r} is a run of {state['recipe']} with "
                f"{state['settings']}; got {self.name} with {self.settings}"
            )
        for key, into in (("model", model), ("optimizer", opt)):
            try:
                into.load_state_dict(state[key])
            except (RuntimeError, ValueError, KeyError, TypeError, IndexError) as e:
                raise RecipeError(
                    f"train: --resume: {self.path!r} holds a {key} state this run's {key} does "
                    f"not take: {e}"
                ) from None
        self.steps = state["steps"]
        return state

    def save(
        self, model: nn.Module, opt: optim.Optimizer, history: list, start: float, **position: Any
    ) -> None:
        """Checkpoint now; ``position`` is the loop's own state (saveable by cr.save)."""
        if self.world > 1:
            return
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        cr.save(
            {
                "recipe": self.name,
                "settings": self.settings,
                "model": model.state_dict(),
                "optimizer": opt.state_dict(),
                "rng": cr.get_rng_state(),
                "steps": self.steps,
                "history": history,
                "seconds": time.perf_counter() - start,
                **position,
            },
            self.path,
        )

    def step_done(
        self, model: nn.Module, opt: optim.Optimizer, history: list, start: float, **position: Any
    ) -> None:
        """One more optimizer step done: checkpoint if it is time to, or if Ctrl-C asked (and
        then raise Interrupted)."""
        self.steps += 1
        if self.stop or (self.every and self.steps % self.every == 0):
            self.save(model, opt, history, start, **position)
        if self.stop:
            raise Interrupted(self.path)

    @contextlib.contextmanager
    def interruptible(self) -> Iterator[None]:
        """Ctrl-C asks the loop to finish its step and checkpoint (main thread only)."""
        if self.world > 1 or threading.current_thread() is not threading.main_thread():
            yield
            return

        def ask(signum: int, frame: Any) -> None:
            self.stop = True

        before = signal.signal(signal.SIGINT, ask)
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, before)


# The settings a resumed run must share with the checkpoint's (those the recipe has).
RUN_SETTINGS = (
    "epochs",
    "steps",
    "lr",
    "batch_size",
    "optimizer",
    "model",
    "seed",
    "data_dir",
    "data_file",
)


def write_diagnostics(monitor: cr.viz.Monitor, out_dir: str, quiet: bool) -> None:
    """diagnostics.json (every recorded series, by module name) and diagnostics.png (the
    four panels), each written atomically; the Monitor's hooks come out."""
    monitor.remove()
    monitor.to_json(os.path.join(out_dir, "diagnostics.json"))
    if pyplot(quiet) is not None:
        monitor.plot(os.path.join(out_dir, "diagnostics.png"))


# What a run writes into --out; a later run's set replaces every one of them.
OUTPUTS = (
    "metrics.json",
    "curves.png",
    "model.safetensors",
    "decision_boundary.png",
    "diagnostics.json",
    "diagnostics.png",
)


def check_out(out_dir: str, alone: bool = True) -> None:
    """--out must be a folder this run can make and write its files in: a file in the way,
    a missing folder below a file, a folder where writing fails (under /proc or /sys,
    read-only, immutable), or one holding a folder or a link leading out where a file of
    the run goes, is a usage error before any training. It is tried, not inferred
    from permissions (which let root write anywhere); the folders made for the try go
    again, so a run that fails early leaves nothing behind; but not when the process is not
    ``alone`` (an MPI job's ranks each try at once, and one must not remove the folder
    another is trying) and the try passed: the job writes there."""
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise RecipeError(f"train: --out {out_dir!r} is a file, not a folder")
    missing = []  # the folders the try makes, innermost first
    folder = os.path.abspath(out_dir)
    while not os.path.exists(folder):
        missing.append(folder)
        folder = os.path.dirname(folder)
    if not os.path.isdir(folder):
        raise RecipeError(f"train: cannot make the --out folder {out_dir!r}: {folder!r} is a file")
    try:
        os.makedirs(out_dir, exist_ok=True)
        # a file without a name in the folder (O_TMPFILE, where the system has it): a run
        # killed here leaves nothing in it
        with tempfile.TemporaryFile(dir=out_dir) as f:
            f.write(b"chainrule")
            f.flush()
    except OSError as e:
        alone = True  # nothing to keep for a job that stops here
        raise RecipeError(
            f"train: cannot write into the --out folder {out_dir!r}: {e.strerror or e}"
            + (f" ({e.filename})" if e.filename else "")
        ) from None
    finally:
        for made in missing if alone else ():
            with contextlib.suppress(OSError):
                os.rmdir(made)
    for name in (*OUTPUTS, CHECKPOINT):  # what the run writes there, at its end or on the way
        path = os.path.join(out_dir, name)
        try:  # a link leading out: a checkpoint is written through it
            file_in(out_dir, name, "train: --out")
        except ValueError as e:
            raise RecipeError(str(e)) from None
        if os.path.isdir(path):
            raise RecipeError(
                f"train: --out {out_dir!r} holds a folder where the run writes its {name}; got "
                f"{path!r}; move it away or give another --out"
            )


@contextlib.contextmanager
def outputs(out_dir: str) -> Iterator[str]:
    """Yields the folder to write a run's files into; on leaving, they replace the earlier
    run's as one set (run_files.replace_together: never new metrics beside an old
    model), its OUTPUTS this run did not write removed; then the run's checkpoint, no
    longer needed, goes."""
    os.makedirs(out_dir, exist_ok=True)
    with replace_together(out_dir, OUTPUTS) as folder:
        yield folder
    with contextlib.suppress(FileNotFoundError):
        os.remove(os.path.join(out_dir, CHECKPOINT))


def write_outputs(out_dir: str, metrics: dict, state: dict, quiet: bool) -> None:
    """metrics.json, model.safetensors and curves.png into out_dir (the folder
    :func:`outputs` gives)."""

    with open(os.path.join(out_dir, "metrics.json"), "w") as f:
        json.dump(strict_json(metrics), f, indent=2, allow_nan=False)
    cr.save(state, os.path.join(out_dir, "model.safetensors"))
    plot_curves(metrics, os.path.join(out_dir, "curves.png"), quiet)


def strict_json(value: Any) -> Any:
    """value with every NaN and infinity made None: JSON has no such numbers (Python would
    write NaN, which strict readers refuse), and a diverged run's metrics hold them."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: strict_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [strict_json(v) for v in value]
    return value


def pyplot(quiet: bool) -> Any:
    """matplotlib's pyplot (headless), or None with a note saying how to get plots."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        if not quiet:
            print('note: matplotlib is not installed, so no plots; pip install "chainrule[plot]"')
        return None
    return plt


def plot_curves(metrics: dict, path: str, quiet: bool) -> None:
    plt = pyplot(quiet)
    if plt is None:
        return
    hist = metrics["history"]
    epochs = [row["epoch"] for row in hist]
    metric = next(k for k in hist[0] if k.startswith("test_") and k != "test_loss")
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.8))
    ax1.plot(epochs, [r["train_loss"] for r in hist], label="train")
    ax1.plot(epochs, [r["test_loss"] for r in hist], label="test")
    ax1.set(xlabel="epoch", ylabel="loss", title=f"{metrics['recipe']}: loss")
    if max(r["train_loss"] for r in hist) > 50 * max(min(r["train_loss"] for r in hist), 1e-12):
        ax1.set_yscale("log")
    ax1.legend()
    ax2.plot(epochs, [r[metric] for r in hist], color="tab:green")
    label = metric.replace("_", " ")
    ax2.set(xlabel="epoch", ylabel=label, title=f"{metrics['recipe']}: {label}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def decision_boundary(
    predict: Any, x: np.ndarray, y: np.ndarray, path: str, title: str, quiet: bool
) -> None:
    """Plot a 2-D classifier's decision regions; ``predict`` maps (n, 2) points to scores."""
    plt = pyplot(quiet)
    if plt is None:
        return
    lo, hi = x.min(axis=0) - 0.5, x.max(axis=0) + 0.5
    gx, gy = np.meshgrid(np.linspace(lo[0], hi[0], 200), np.linspace(lo[1], hi[1], 200))
    scores = predict(np.c_[gx.ravel(), gy.ravel()].astype(np.float32)).reshape(gx.shape)
    fig, ax = plt.subplots(figsize=(5, 4.2))
    ax.contourf(gx, gy, scores > 0, alpha=0.35, cmap="coolwarm")
    ax.scatter(x[:, 0], x[:, 1], c=y, s=14, cmap="coolwarm", edgecolors="k", linewidths=0.3)
    ax.set(title=title, xlabel="x1", ylabel="x2")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
