"""chainrule.utils.tensorboard.SummaryWriter against PyTorch's: each kind of record is written by
both writers, read back by TensorBoard's own EventAccumulator, and compared."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("tensorboard")

import torch  # noqa: E402
from tensorboard.backend.event_processing import event_accumulator as ea  # noqa: E402
from tensorboard.util import tensor_util  # noqa: E402
from torch.utils.tensorboard import SummaryWriter as TorchWriter  # noqa: E402

import chainrule as cr  # noqa: E402
from chainrule.utils.tensorboard import SummaryWriter  # noqa: E402


def load(log_dir: Path | str) -> ea.EventAccumulator:
    """Every record of the run in ``log_dir``, as TensorBoard reads it (nothing sampled away)."""
    guidance = {kind: 0 for kind in ea.DEFAULT_SIZE_GUIDANCE}
    return ea.EventAccumulator(str(log_dir), size_guidance=guidance).Reload()


def both(tmp_path: Path, write: Callable[[Any], None]) -> tuple[Path, Path]:
    """``write(writer)`` with our writer and with PyTorch's, each in a folder of its own."""
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    with SummaryWriter(str(ours)) as w:
        write(w)
    with TorchWriter(str(theirs)) as w:
        write(w)
    return ours, theirs


def scalars(acc: ea.EventAccumulator, tag: str) -> list[tuple[int, float]]:
    return [(e.step, e.value) for e in acc.Scalars(tag)]


# -- scalars ------------------------------------------------------------------------------


def test_scalars_equal_torchs(tmp_path: Path) -> None:
    values = [cr.tensor(2.5), np.float32(1.25), 0.5, cr.tensor([[0.125]]), 7]

    def write(w: Any) -> None:
        for step, v in enumerate(values):
            if isinstance(v, cr.Tensor) and not isinstance(w, SummaryWriter):
                v = torch.tensor(v.numpy())  # PyTorch's writer gets the same value as its tensor
            w.add_scalar("loss", v, step * 10)
        w.add_scalar("lr", 0.1, 3, walltime=1234.5)

    ours, theirs = map(load, both(tmp_path, write))
    assert scalars(ours, "loss") == scalars(theirs, "loss")
    assert scalars(ours, "loss") == [(0, 2.5), (10, 1.25), (20, 0.5), (30, 0.125), (40, 7.0)]
    assert [e.wall_time for e in ours.Scalars("lr")] == [1234.5]
    assert ours.Tags()["scalars"] == theirs.Tags()["scalars"] == ["loss", "lr"]


@pytest.mark.parametrize("double", [False, True])
def test_new_style_scalars_equal_torchs(tmp_path: Path, double: bool) -> None:
    def write(w: Any) -> None:
        w.add_scalar("x", 1 / 3, 1, new_style=True, double_precision=double)

    ours, theirs = map(load, both(tmp_path, write))
    [a], [b] = ours.Tensors("x"), theirs.Tensors("x")
    assert a.tensor_proto == b.tensor_proto
    assert tensor_util.make_ndarray(a.tensor_proto).dtype == (np.float64 if double else np.float32)
    assert ours.SummaryMetadata("x") == theirs.SummaryMetadata("x")


def test_scalar_of_many_values_is_refused(tmp_path: Path) -> None:
    with SummaryWriter(str(tmp_path)) as w:
        with pytest.raises(ValueError, match=r"add_scalar: .* one element; got shape \(3,\)"):
            w.add_scalar("x", cr.ones(3))


def test_tensors_that_require_grad_or_are_bfloat16_are_read_as_numbers(tmp_path: Path) -> None:
    w_ = cr.tensor([0.5, -1.25, 3.0], requires_grad=True)
    with SummaryWriter(str(tmp_path)) as w:
        w.add_scalar("loss", (w_ * 2).sum(), 0)
        w.add_histogram("bf16", w_.detach().to(cr.bfloat16), 0)
        w.add_histogram("f32", np.array([0.5, -1.25, 3.0], np.float32), 0)
    acc = load(tmp_path)
    assert scalars(acc, "loss") == [(0, 4.5)]
    assert acc.Histograms("bf16")[0].histogram_value == acc.Histograms("f32")[0].histogram_value


def test_add_scalars_writes_a_run_per_key_as_torch(tmp_path: Path) -> None:
    def write(w: Any) -> None:
        for step in range(3):
            w.add_scalars("run/loss", {"train": 1.0 / (step + 1), "test": step}, step)

    ours, theirs = both(tmp_path, write)
    subruns = sorted(p.name for p in ours.iterdir() if p.is_dir())
    assert subruns == sorted(p.name for p in theirs.iterdir() if p.is_dir())
    assert subruns == ["run_loss_test", "run_loss_train"]
    for sub in subruns:
        a, b = load(ours / sub), load(theirs / sub)
        assert scalars(a, "run/loss") == scalars(b, "run/loss")
    assert scalars(load(ours / "run_loss_test"), "run/loss") == [(0, 0.0), (1, 1.0), (2, 2.0)]


@pytest.mark.parametrize(
    ("write", "message"),
    [
        (
            lambda w, out: w.add_scalars("loss", {f"a/../../../{out.name}": 1.0}),
            "add_scalars: key 'a/../../../outside' must name a folder inside log_dir; got "
            "'loss_a/../../../outside'",
        ),
        (
            lambda w, out: w.add_hparams({"lr": 0.1}, {"m": 1.0}, run_name=str(out)),
            "add_hparams: run_name must name a folder inside log_dir; got '/",
        ),
        (
            lambda w, out: w.add_hparams({"lr": 0.1}, {"m": 1.0}, run_name="../x"),
            "add_hparams: run_name must name a folder inside log_dir; got '../x'",
        ),
    ],
)
def test_a_run_folder_outside_log_dir_is_refused_before_writing(
    tmp_path: Path, write: Any, message: str
) -> None:
    log_dir, out = tmp_path / "logs" / "run", tmp_path / "outside"
    with SummaryWriter(str(log_dir)) as w:
        before = sorted(str(p) for p in tmp_path.rglob("*"))
        with pytest.raises(ValueError, match=re.escape(message)):
            write(w, out)
        assert sorted(str(p) for p in tmp_path.rglob("*")) == before
    assert not out.exists()


def test_nested_add_scalars_keys_stay_runs_inside_log_dir(tmp_path: Path) -> None:
    with SummaryWriter(str(tmp_path)) as w:
        w.add_scalars("loss", {"train/a": 1.0}, 0)
    assert scalars(load(tmp_path / "loss_train" / "a"), "loss") == [(0, 1.0)]


def test_an_embedding_tag_of_dots_is_a_folder_of_its_own_and_an_empty_one_is_refused(
    tmp_path: Path,
) -> None:
    with SummaryWriter(str(tmp_path)) as w:
        w.add_embedding(np.eye(2), tag="..")
        w.add_embedding(np.eye(2), tag=".")
        with pytest.raises(ValueError, match="add_embedding: tag must not be empty; got ''"):
            w.add_embedding(np.eye(2), tag="")
    assert sorted(os.listdir(tmp_path / "00000")) == ["%2e", "%2e%2e"]
    assert not (tmp_path / "tensors.tsv").exists()


def test_purge_step_hides_the_steps_a_restart_rewrites(tmp_path: Path) -> None:
    def runs(writer: Any, folder: Path) -> list[tuple[int, float]]:
        with writer(str(folder)) as w:
            for step in range(6):
                w.add_scalar("x", step, step)
        # The reader takes the files in name order, the time in seconds first: a second
        # apart, the restart's file comes second for both writers (in one second, torch's
        # names then compare by a process-wide counter, which sorts ".10" before ".9")
        time.sleep(1.05)
        with writer(str(folder), purge_step=3) as w:
            for step in range(3, 5):
                w.add_scalar("x", 10 + step, step)
        return scalars(load(folder), "x")

    ours = runs(SummaryWriter, tmp_path / "ours")
    assert ours == runs(TorchWriter, tmp_path / "theirs")
    assert ours == [(0, 0), (1, 1), (2, 2), (3, 13), (4, 14)]


def test_default_log_dir_is_torchs_pattern(tmp_path: Path, monkeypatch: Any) -> None:
    import re
    import socket

    monkeypatch.chdir(tmp_path)
    w = SummaryWriter(comment="_lr0.1")
    w.close()
    pattern = rf"runs/[A-Z][a-z]{{2}}\d\d_\d\d-\d\d-\d\d_{re.escape(socket.gethostname())}_lr0\.1"
    assert re.fullmatch(pattern, w.get_logdir().replace(os.sep, "/"))
    theirs = TorchWriter(comment="_lr0.1")
    theirs.close()
    assert re.fullmatch(pattern, theirs.get_logdir().replace(os.sep, "/"))
    assert (tmp_path / w.get_logdir()).is_dir()


def test_close_flushes_and_a_later_record_opens_a_new_file(tmp_path: Path) -> None:
    w = SummaryWriter(str(tmp_path), filename_suffix=".v1")
    w.add_scalar("x", 1.0, 0)
    w.flush()
    assert scalars(load(tmp_path), "x") == [(0, 1.0)]
    w.close()
    w.close()  # twice is harmless
    w.add_scalar("x", 2.0, 1)
    w.close()
    files = sorted(p.name for p in tmp_path.iterdir())
    assert len(files) == 2 and all(f.startswith("events.out.tfevents.") for f in files)
    assert all(f.endswith(".v1") for f in files)
    assert scalars(load(tmp_path), "x") == [(0, 1.0), (1, 2.0)]


def test_importing_chainrule_leaves_tensorboard_unimported() -> None:
    code = (
        "import sys, chainrule, chainrule.utils\n"
        "assert 'tensorboard' not in sys.modules, 'imported'\n"
        "chainrule.utils.tensorboard.SummaryWriter\n"
        "assert 'tensorboard' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_without_tensorboard_the_error_says_how_to_install_it() -> None:
    code = (
        "import sys\n"
        "sys.modules['tensorboard'] = None  # as if it were not installed\n"
        "try:\n"
        "    import chainrule.utils.tensorboard\n"
        "except ImportError as err:\n"
        "    print(err)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert "pip install chainrule[tensorboard]" in out.stdout


# -- histograms ---------------------------------------------------------------------------

HISTOGRAMS = {
    "tensorflow bins": dict(bins="tensorflow"),
    "tensorflow bins, at most 30": dict(bins="tensorflow", max_bins=30),
    "10 bins": dict(bins=10),
    "edges": dict(bins=[-3.0, -1.0, 0.0, 0.5, 4.0]),
    "auto, at most 4": dict(bins="auto", max_bins=4),
}


@pytest.mark.parametrize("options", HISTOGRAMS.values(), ids=list(HISTOGRAMS))
def test_histograms_equal_torchs(tmp_path: Path, options: dict) -> None:
    rng = np.random.default_rng(0)
    values = [
        rng.normal(size=1000),
        rng.uniform(-2, 2, size=(7, 9)).astype(np.float32),
        np.array([1.5]),
    ]

    def write(w: Any) -> None:
        for step, v in enumerate(values):
            w.add_histogram("w", v, step, **options)
        w.add_histogram("t", cr.tensor(values[0]) if isinstance(w, SummaryWriter) else values[0])

    ours, theirs = map(load, both(tmp_path, write))
    for tag in ("w", "t"):
        a, b = ours.Histograms(tag), theirs.Histograms(tag)
        assert [e.step for e in a] == [e.step for e in b]
        for x, y in zip(a, b, strict=True):
            assert x.histogram_value == y.histogram_value
    first = ours.Histograms("w")[0].histogram_value
    assert (first.num, first.min, first.max) == (1000, values[0].min(), values[0].max())
    assert sum(first.bucket) == 1000 or options.get("bins") == [-3.0, -1.0, 0.0, 0.5, 4.0]


def test_histogram_of_nothing_is_refused(tmp_path: Path) -> None:
    with SummaryWriter(str(tmp_path)) as w:
        with pytest.raises(ValueError, match=r"add_histogram: the values are empty; got shape"):
            w.add_histogram("w", np.zeros((0, 3)))


# -- images -------------------------------------------------------------------------------


def pixels(event: Any) -> np.ndarray:
    """An image record's PNG, decoded (by Pillow, which matplotlib brings), as (H, W, C)."""
    import io

    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(event.encoded_image_string)))


rng_images = np.random.default_rng(1)
IMAGES = {
    "CHW float": (rng_images.random((3, 5, 7)), "CHW"),
    "CHW gray": (rng_images.random((1, 4, 6)), "CHW"),
    "HWC uint8": (rng_images.integers(0, 256, (5, 4, 3)).astype(np.uint8), "HWC"),
    "HW out of range": (rng_images.normal(size=(6, 3)), "HW"),
    "HWC rgba": (rng_images.random((3, 4, 4)).astype(np.float32), "HWC"),
    "NCHW batch of 10": (rng_images.random((10, 1, 3, 2)), "NCHW"),
    "NHWC": (rng_images.random((3, 2, 4, 3)), "NHWC"),
}


@pytest.mark.parametrize("img, fmt", IMAGES.values(), ids=list(IMAGES))
def test_images_equal_torchs(tmp_path: Path, img: np.ndarray, fmt: str) -> None:
    def write(w: Any) -> None:
        add = w.add_images if "N" in fmt else w.add_image
        add("img", cr.tensor(img) if isinstance(w, SummaryWriter) else img, 2, dataformats=fmt)

    ours, theirs = map(load, both(tmp_path, write))
    [a], [b] = ours.Images("img"), theirs.Images("img")
    assert (a.step, a.width, a.height) == (b.step, b.width, b.height)
    np.testing.assert_array_equal(pixels(a), pixels(b))


def test_image_pixels_are_the_values_scaled_to_bytes(tmp_path: Path) -> None:
    img = np.linspace(-0.5, 1.5, 2 * 3 * 4).reshape(3, 2, 4)  # (C, H, W)
    with SummaryWriter(str(tmp_path)) as w:
        w.add_image("img", img)
    [event] = load(tmp_path).Images("img")
    expected = (img.transpose(1, 2, 0).astype(np.float32) * 255).clip(0, 255).astype(np.uint8)
    assert (event.height, event.width) == (2, 4)
    np.testing.assert_array_equal(pixels(event), expected)


def test_image_layout_errors_name_the_shape(tmp_path: Path) -> None:
    with SummaryWriter(str(tmp_path)) as w:
        with pytest.raises(ValueError, match=r"add_image: .* 2 dims .* 'CHW' .* \(4, 5\)"):
            w.add_image("img", np.zeros((4, 5)))
        with pytest.raises(ValueError, match=r"add_image: dataformats .*; got 'CHH'"):
            w.add_image("img", np.zeros((1, 4, 5)), dataformats="CHH")


def test_figure_is_its_agg_drawing(tmp_path: Path) -> None:
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def figure() -> Any:
        fig, ax = plt.subplots(figsize=(2, 1.5), dpi=50)
        ax.plot([0, 1, 2], [1, 0, 1])
        return fig

    def write(w: Any) -> None:
        w.add_figure("fig", figure(), 0)
        w.add_figure("figs", [figure(), figure()], 1)
        fig = figure()
        w.add_figure("open", fig, 2, close=False)
        assert plt.fignum_exists(fig.number)
        plt.close(fig)

    ours, theirs = map(load, both(tmp_path, write))
    for tag in ("fig", "figs", "open"):
        [a], [b] = ours.Images(tag), theirs.Images(tag)
        np.testing.assert_array_equal(pixels(a), pixels(b))
    assert (ours.Images("fig")[0].width, ours.Images("figs")[0].width) == (100, 200)
    assert plt.get_fignums() == []


# -- text and hyperparameters -------------------------------------------------------------


def test_text_equals_torchs(tmp_path: Path) -> None:
    def write(w: Any) -> None:
        w.add_text("notes", "**lr** = 0.1, ünïcode", 3)

    ours, theirs = map(load, both(tmp_path, write))
    [a], [b] = ours.Tensors("notes/text_summary"), theirs.Tensors("notes/text_summary")
    assert a.step == b.step == 3
    assert a.tensor_proto == b.tensor_proto
    assert tensor_util.make_ndarray(a.tensor_proto).tolist() == ["**lr** = 0.1, ünïcode".encode()]
    assert ours.SummaryMetadata("notes/text_summary") == theirs.SummaryMetadata(
        "notes/text_summary"
    )


def test_hparams_equal_torchs(tmp_path: Path) -> None:
    from tensorboard.plugins.hparams import plugin_data_pb2

    hparams = {"lr": 0.01, "layers": 3, "optimizer": "adam", "bn": True, "skip": None}
    discrete = {"optimizer": ["adam", "sgd"], "layers": [2, 3]}

    def write(w: Any) -> None:
        w.add_hparams(hparams, {"hp/accuracy": 0.9, "hp/loss": 0.25}, discrete, "trial", 5)

    ours, theirs = (load(p / "trial") for p in both(tmp_path, write))
    content = ours.PluginTagToContent("hparams")
    assert sorted(content) == ["_hparams_/experiment", "_hparams_/session_end_info",
                               "_hparams_/session_start_info"]  # fmt: skip
    theirs_content = theirs.PluginTagToContent("hparams")
    for tag, data in content.items():
        a, b = plugin_data_pb2.HParamsPluginData(), plugin_data_pb2.HParamsPluginData()
        a.ParseFromString(data)
        b.ParseFromString(theirs_content[tag])
        assert a == b, tag
    assert scalars(ours, "hp/loss") == scalars(theirs, "hp/loss") == [(5, 0.25)]


def test_a_tensor_hyperparameter_is_its_number(tmp_path: Path) -> None:
    from tensorboard.plugins.hparams import plugin_data_pb2

    with SummaryWriter(str(tmp_path)) as w:
        w.add_hparams({"wd": cr.tensor([0.5])}, {"hp/loss": cr.tensor(0.25)}, run_name="t")
    acc = load(tmp_path / "t")
    data = plugin_data_pb2.HParamsPluginData()
    data.ParseFromString(acc.PluginTagToContent("hparams")["_hparams_/session_start_info"])
    assert data.session_start_info.hparams["wd"].number_value == 0.5
    assert scalars(acc, "hp/loss") == [(0, 0.25)]


def test_hparams_errors_name_the_kinds() -> None:
    w = SummaryWriter.__new__(SummaryWriter)  # no folder: the checks come first
    with pytest.raises(TypeError, match=r"add_hparams: .* dicts; got list and dict"):
        w.add_hparams([], {})
    with pytest.raises(ValueError, match=r"add_hparams: hparam_dict\['f'\] .*; got object"):
        w.add_hparams({"f": object()}, {})


# -- the graph ----------------------------------------------------------------------------


class Net(cr.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = cr.nn.Linear(6, 4)
        self.fc2 = cr.nn.Linear(4, 2)

    def forward(self, x: cr.Tensor) -> cr.Tensor:
        h = x.reshape(x.shape[0], -1)  # (N, 6): before the first parameter
        return self.fc2(cr.relu(self.fc1(h)))


def test_graph_has_the_parameters_ops_and_input(tmp_path: Path, capsys: Any) -> None:
    model = Net()
    x = cr.randn(5, 2, 3)
    with SummaryWriter(str(tmp_path)) as w:
        w.add_graph(model, x, verbose=True)
    graph = load(tmp_path).Graph()
    nodes = {n.name: n for n in graph.node}
    params = [f"Net/Linear[fc{i}]/{p}/{p}" for i in (1, 2) for p in ("weight", "bias")]
    assert set(params) < set(nodes)
    assert nodes["input/x"].op == nodes["output/output.1"].op == "IO Node"
    assert {nodes[p].op for p in params} == {"prim::GetAttr"}
    ops = [n.op for n in graph.node if n.op.startswith("aten::")]
    assert ops == ["aten::reshape", "aten::linear", "aten::relu", "aten::linear"]
    assert list(nodes["Net/reshape"].input) == ["input/x"]
    last = nodes["Net/Linear[fc2]/linear"]
    assert list(last.input) == ["Net/relu", *params[2:]]
    [shape] = last.attr["_output_shapes"].list.shape
    assert [d.size for d in shape.dim] == [5, 2]
    assert x.grad_fn is None and not x.requires_grad  # the caller's input is untouched
    assert "Net/relu = aten::relu(Net/Linear[fc1]/linear)" in capsys.readouterr().out


def test_graph_of_a_model_without_a_tensor_output_is_refused(tmp_path: Path) -> None:
    with SummaryWriter(str(tmp_path)) as w:
        with pytest.raises(TypeError, match=r"add_graph: .*; got float"):
            w.add_graph(lambda x: 1.0, cr.ones(2))


# -- embeddings ---------------------------------------------------------------------------


def test_embedding_files_equal_torchs(tmp_path: Path) -> None:
    mat = np.arange(12.0).reshape(4, 3) / 8

    def write(w: Any) -> None:
        w.add_embedding(cr.tensor(mat) if isinstance(w, SummaryWriter) else mat, list("abcd"))
        rows = [["a", 1], ["b", 2], ["c", 3], ["d", 4]]
        w.add_embedding(mat, rows, global_step=3, tag="by/row", metadata_header=["name", "n"])

    ours, theirs = both(tmp_path, write)
    for name in ("projector_config.pbtxt", "00000/default/tensors.tsv",
                 "00000/default/metadata.tsv", "00003/by%2frow/metadata.tsv"):  # fmt: skip
        assert (ours / name).read_text() == (theirs / name).read_text(), name
    assert (ours / "00003/by%2frow/metadata.tsv").read_text().splitlines()[0] == "name\tn"


def test_embedding_sprite_equals_torchs(tmp_path: Path) -> None:
    from PIL import Image

    imgs = np.random.default_rng(2).random((5, 3, 2, 2))

    def write(w: Any) -> None:
        w.add_embedding(np.ones((5, 2)), label_img=cr.tensor(imgs) if isinstance(
            w, SummaryWriter) else torch.tensor(imgs))  # fmt: skip

    ours, theirs = both(tmp_path, write)
    a, b = (np.asarray(Image.open(p / "00000/default/sprite.png")) for p in (ours, theirs))
    assert a.shape == (6, 6, 3)  # 3 images a row, 2 rows, on a square
    np.testing.assert_array_equal(a, b)
    assert (ours / "projector_config.pbtxt").read_text() == (
        theirs / "projector_config.pbtxt"
    ).read_text()


def test_the_writer_reads_nothing_back_from_log_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No name, path or size is taken from the files already in log_dir: an old projector
    config naming a file outside is replaced, never read, as PyTorch's writer does."""
    import builtins
    import io

    from google.protobuf import text_format
    from tensorboard.plugins.projector.projector_config_pb2 import ProjectorConfig

    config = tmp_path / "projector_config.pbtxt"
    config.write_text('embeddings { tensor_name: "x" tensor_path: "../../../etc/passwd" }\n')
    read: list[str] = []
    real_open = builtins.open

    def spy(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if not any(c in mode for c in "wxa+"):
            read.append(os.fspath(file) if isinstance(file, (str, os.PathLike)) else "fd")
        return real_open(file, mode, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", spy)
    monkeypatch.setattr(io, "open", spy)  # TensorBoard's gfile opens through io
    with SummaryWriter(str(tmp_path), purge_step=3) as w:
        w.add_scalar("loss", 1.0, 3)
        w.add_text("note", "hello", 3)
        w.add_hparams({"lr": 0.1}, {"m": 1.0}, run_name="trial")
        w.add_embedding(np.eye(2), metadata=["a", "b"])
    monkeypatch.undo()
    assert [f for f in read if str(tmp_path) in f] == []
    written = text_format.Parse(config.read_text(), ProjectorConfig())
    assert [e.tensor_path for e in written.embeddings] == ["00000/default/tensors.tsv"]


def test_embedding_sprite_of_tall_images_is_square(tmp_path: Path) -> None:
    from PIL import Image

    with SummaryWriter(str(tmp_path)) as w:
        w.add_embedding(np.ones((5, 2)), label_img=np.ones((5, 1, 4, 2)))
    sprite = np.asarray(Image.open(tmp_path / "00000/default/sprite.png"))
    assert sprite.shape == (8, 8, 3)  # the grid is 8 high and 6 wide
    assert sprite[:4, :6].min() == 255  # the first row of three images
    assert sprite[:, 6:].max() == 0 and sprite[4:, 4:].max() == 0  # the padding, the empty cell


# -- a PyTorch program, on chainrule ------------------------------------------------------


def training_program(log_dir: str) -> None:
    """An ordinary PyTorch training loop that logs to TensorBoard; run as it is on torch, and on
    chainrule with ``import torch`` aliased."""
    import torch
    from torch.utils.tensorboard import SummaryWriter

    torch.manual_seed(0)
    x = torch.randn(32, 3)
    y = x @ torch.tensor([[1.0], [-2.0], [0.5]]) + 0.1
    model = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with SummaryWriter(log_dir) as writer:
        writer.add_graph(model, x)
        for step in range(5):
            loss = torch.nn.functional.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            writer.add_scalar("loss/train", loss.item(), step)
            writer.add_scalars(
                "norms", {"w0": model[0].weight.norm(), "w2": model[2].weight.norm()}, step
            )
            for name, p in model.named_parameters():
                writer.add_histogram(name, p.detach(), step)
        writer.add_image("weights", model[0].weight.detach().sigmoid(), 4, dataformats="HW")
        writer.add_text("summary", f"final loss {loss.item():.3f}", 4)
        writer.add_hparams({"lr": 0.1}, {"hp/loss": loss.item()}, run_name="hp")


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch's add_graph: jit.trace
@pytest.mark.filterwarnings("ignore::torch.jit.TracerWarning")
def test_a_pytorch_program_logs_the_same_records_on_chainrule(tmp_path: Path) -> None:
    from tests.pytorch_programs.programs.aliasing import torch_is_chainrule

    training_program(str(tmp_path / "torch"))
    with torch_is_chainrule():
        training_program(str(tmp_path / "chainrule"))

    def records(run: Path) -> dict[str, list[tuple[str, list[int]]]]:
        acc = load(run)
        steps = {
            "scalars": acc.Scalars, "histograms": acc.Histograms, "images": acc.Images,
            "tensors": acc.Tensors,
        }  # fmt: skip
        out: dict[str, list[tuple[str, list[int]]]] = {
            kind: [(tag, [e.step for e in read(tag)]) for tag in sorted(acc.Tags()[kind])]
            for kind, read in steps.items()
        }
        out["graph"] = [("graph", [int(acc.Tags()["graph"])])]
        return out

    for sub in ("", "norms_w0", "norms_w2", "hp"):
        ours, theirs = records(tmp_path / "chainrule" / sub), records(tmp_path / "torch" / sub)
        assert ours == theirs, sub
    ours = records(tmp_path / "chainrule")
    assert ours["scalars"] == [("loss/train", [0, 1, 2, 3, 4])]
    assert [tag for tag, _ in ours["histograms"]] == ["0.bias", "0.weight", "2.bias", "2.weight"]
    # the libraries draw different initial weights from one seed: the losses only both fall
    for run in ("chainrule", "torch"):
        losses = [v for _, v in scalars(load(tmp_path / run), "loss/train")]
        assert np.all(np.diff(losses) < 0), run


# -- TensorBoard itself, in a browser -----------------------------------------------------

CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.skipif(
    not (CHROMIUM.exists() and CHROMEDRIVER.exists()),
    reason="needs Chromium and its driver: apt-get install chromium chromium-driver",
)
def test_tensorboard_shows_the_runs_loss_in_a_browser(tmp_path: Path) -> None:
    import urllib.request

    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    with SummaryWriter(str(tmp_path / "logs" / "run1")) as w:
        for step in range(3):
            w.add_scalar("train/loss_curve", 1.0 / (step + 1), step)
    port = free_port()
    tensorboard = Path(sys.executable).with_name("tensorboard")
    server = subprocess.Popen(
        [str(tensorboard), "--logdir", str(tmp_path / "logs"), "--host", "127.0.0.1",
         "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    driver = None
    try:
        deadline = time.monotonic() + 60
        while True:  # until the server answers
            try:
                with urllib.request.urlopen(f"{url}/data/runs", timeout=2) as reply:
                    if b"run1" in reply.read():
                        break
            except OSError:
                pass
            assert server.poll() is None, "tensorboard exited"
            assert time.monotonic() < deadline, "tensorboard did not answer within 60 s"
            time.sleep(0.3)
        options = webdriver.ChromeOptions()
        options.binary_location = str(CHROMIUM)
        for flag in ("--headless", "--no-sandbox", "--disable-gpu",
                     "--disable-background-networking", "--disable-component-update",
                     "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
                     f"--user-data-dir={tmp_path / 'profile'}"):  # fmt: skip
            options.add_argument(flag)
        service = webdriver.ChromeService(executable_path=str(CHROMEDRIVER))
        driver = webdriver.Chrome(options=options, service=service)
        driver.get(f"{url}/#scalars")
        WebDriverWait(driver, 60).until(
            lambda d: "train/loss_curve" in d.find_element(By.TAG_NAME, "body").text
        )
        assert "run1" in driver.find_element(By.TAG_NAME, "body").text
    finally:
        if driver is not None:
            driver.quit()
        server.kill()
        server.wait()
