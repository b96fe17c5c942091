"""TensorBoard logging with PyTorch's ``SummaryWriter``: scalars, histograms, images, figures,
text, hyperparameters, the graph and embeddings, as TensorBoard's own protobufs, written to event
files by TensorBoard's own event-file writer (the tensorboard package; ``pip install
chainrule[tensorboard]``). What TensorBoard shows of them is its business."""

from __future__ import annotations

import os
import socket
import struct
import time
import zlib
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import numpy as np

try:
    from google.protobuf import struct_pb2, text_format
    from tensorboard.compat.proto import (
        event_pb2,
        summary_pb2,
        tensor_pb2,
        tensor_shape_pb2,
    )
    from tensorboard.plugins.hparams import api_pb2 as hp_api
    from tensorboard.plugins.hparams import metadata as hp_metadata
    from tensorboard.plugins.hparams import plugin_data_pb2 as hp_data
    from tensorboard.plugins.projector.projector_config_pb2 import ProjectorConfig
    from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData
    from tensorboard.summary.writer.event_file_writer import EventFileWriter
except ImportError as err:  # the package is an extra
    raise ImportError(
        "chainrule.utils.tensorboard needs the tensorboard package; "
        "install it with: pip install chainrule[tensorboard]"
    ) from err

from ..tensor import Tensor
from ..tools.outputs import Output, write_outputs
from .tensorboard_graph import graph_def

__all__ = ["SummaryWriter"]

Summary = summary_pb2.Summary


def _numpy(x: Any) -> np.ndarray:
    """A Tensor, NumPy array or Python number as a host array (bfloat16 read as float32)."""
    if isinstance(x, Tensor):
        x = x.numpy(force=True)
    out = np.asarray(x)
    if out.dtype.kind == "V" or out.dtype.name == "bfloat16":
        out = out.astype(np.float32)
    return out


# ---------------------------------------------------------------------------------------
# Scalars and histograms


def _one_value(op: str, value: Any) -> float:
    a = _numpy(value)
    if a.size != 1:
        raise ValueError(f"{op}: the value must hold one element; got shape {tuple(a.shape)}")
    return float(a.reshape(()))


def _scalar(tag: str, value: float, new_style: bool = False, double: bool = False) -> Any:
    if not new_style:
        return Summary(value=[Summary.Value(tag=tag, simple_value=value)])
    if double:
        proto = tensor_pb2.TensorProto(double_val=[value], dtype="DT_DOUBLE")
    else:
        proto = tensor_pb2.TensorProto(float_val=[value], dtype="DT_FLOAT")
    meta = summary_pb2.SummaryMetadata(
        plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="scalars")
    )
    return Summary(value=[Summary.Value(tag=tag, tensor=proto, metadata=meta)])


def _tensorflow_bins() -> list[float]:
    """TensorFlow's default histogram edges: +-1e-12 growing by 10% up to 1e20 either side of
    0, so that every decade from tiny to huge gets the same relative resolution."""
    pos = []
    v = 1e-12
    while v < 1e20:
        pos.append(v)
        v *= 1.1
    return [-b for b in reversed(pos)] + [0.0] + pos


DEFAULT_BINS = _tensorflow_bins()


def _histogram(op: str, values: Any, bins: Any, max_bins: int | None) -> Any:
    """A HistogramProto of ``values``: np.histogram's counts, merged down to at most
    ``max_bins`` buckets, and trimmed to the buckets from the first to the last non-empty one.
    TensorBoard reads each bucket by its right edge, so an empty bucket is kept on the left
    whose right edge is the first bucket's left edge."""
    x = _numpy(values).astype(np.float64).reshape(-1)
    if x.size == 0:
        raise ValueError(f"{op}: the values are empty; got shape {tuple(_numpy(values).shape)}")
    counts, edges = np.histogram(x, bins=DEFAULT_BINS if bins == "tensorflow" else bins)
    if max_bins is not None and len(counts) > max_bins:
        k = len(counts) // max_bins  # merge k neighbouring buckets into one
        padded = np.pad(counts, (0, -len(counts) % k))
        counts = padded.reshape(-1, k).sum(axis=1)  # (ceil(n / k),)
        edges = np.concatenate([edges[:-1:k], edges[-1:]])
    full = np.flatnonzero(counts)
    if full.size == 0:
        raise ValueError(
            f"{op}: no value falls inside the bins; got values in [{x.min()}, {x.max()}] and "
            f"bins [{edges[0]}, {edges[-1]}]"
        )
    first, last = int(full[0]), int(full[-1])
    if first > 0:
        counts = counts[first - 1 : last + 1]
    else:
        counts = np.concatenate([[0], counts[: last + 1]])
    right_edges = edges[first : last + 2]
    return summary_pb2.HistogramProto(
        min=x.min(),
        max=x.max(),
        num=x.size,
        sum=x.sum(),
        sum_squares=x.dot(x),
        bucket_limit=right_edges.tolist(),
        bucket=counts.tolist(),
    )


# ---------------------------------------------------------------------------------------
# Images


def _grid(images: np.ndarray, ncols: int = 8) -> np.ndarray:
    """N images (N, C, H, W), C 1 or 3, tiled row by row on one 3-channel canvas."""
    if images.shape[1] == 1:
        images = np.repeat(images, 3, axis=1)  # (N, 3, H, W)
    n, c, h, w = images.shape
    if c != 3:
        raise ValueError(f"add_images: images must have 1 or 3 channels; got shape {images.shape}")
    ncols = min(n, ncols)
    nrows = -(-n // ncols)
    canvas = np.zeros((3, h * nrows, w * ncols), dtype=images.dtype)
    for i in range(n):
        r, q = divmod(i, ncols)
        canvas[:, r * h : (r + 1) * h, q * w : (q + 1) * w] = images[i]
    return canvas


def _to_hwc(op: str, img: np.ndarray, dataformats: str) -> np.ndarray:
    """An image in ``dataformats`` (a permutation of NCHW, CHW, HWC, HW, ...) as (H, W, C),
    gray as three channels and a batch as one grid."""
    fmt = dataformats.upper()
    if len(set(fmt)) != len(fmt) or not set(fmt) <= set("NCHW") or not {"H", "W"} <= set(fmt):
        raise ValueError(f"{op}: dataformats must be letters of NCHW, each once; got {fmt!r}")
    if img.ndim != len(fmt):
        raise ValueError(
            f"{op}: the image has {img.ndim} dims but dataformats {fmt!r} names {len(fmt)}; "
            f"got shape {tuple(img.shape)}"
        )
    if "N" in fmt:
        if "C" not in fmt:
            raise ValueError(f"{op}: a batch of images needs a C dim; got {fmt!r}")
        return _grid(img.transpose([fmt.index(d) for d in "NCHW"])).transpose(1, 2, 0)
    if "C" not in fmt:
        img = img.transpose([fmt.index(d) for d in "HW"])[..., None]  # (H, W, 1)
    else:
        img = img.transpose([fmt.index(d) for d in "HWC"])  # (H, W, C)
    if img.shape[2] == 1:
        img = np.repeat(img, 3, axis=2)  # (H, W, 3)
    if img.shape[2] not in (3, 4):
        raise ValueError(f"{op}: an image has 1, 3 or 4 channels; got shape {tuple(img.shape)}")
    return img


def _png(img: np.ndarray) -> bytes:
    """(H, W, C) uint8, C 1, 3 or 4, as PNG: 8 bits a sample, rows unfiltered, one zlib
    stream (the format's minimum, which every decoder reads)."""
    h, w, c = img.shape
    colour = {1: 0, 3: 2, 4: 6}[c]  # gray, RGB, RGBA

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = np.concatenate([np.zeros((h, 1), np.uint8), img.reshape(h, w * c)], axis=1)
    header = struct.pack(">IIBBBBB", w, h, 8, colour, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows.tobytes(), 6))
        + chunk(b"IEND", b"")
    )


def _image(op: str, tag: str, img_tensor: Any, dataformats: str) -> Any:
    img = _to_hwc(op, _numpy(img_tensor), dataformats)
    scale = 1 if img.dtype == np.uint8 else 255  # floats are in [0, 1]
    pixels = (img.astype(np.float32) * scale).clip(0, 255).astype(np.uint8)
    h, w, c = pixels.shape
    image = Summary.Image(height=h, width=w, colorspace=c, encoded_image_string=_png(pixels))
    return Summary(value=[Summary.Value(tag=tag, image=image)])


def _figure_chw(figure: Any, close: bool) -> np.ndarray:
    """A matplotlib figure drawn by Agg, as (3, H, W) uint8."""
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    rgba = np.asarray(canvas.buffer_rgba())  # (H, W, 4)
    if close:
        plt.close(figure)
    return rgba[:, :, :3].transpose(2, 0, 1)  # (3, H, W)


# ---------------------------------------------------------------------------------------
# Text and hyperparameters


def _text(tag: str, text: str) -> Any:
    meta = summary_pb2.SummaryMetadata(
        plugin_data=summary_pb2.SummaryMetadata.PluginData(
            plugin_name="text", content=TextPluginData(version=0).SerializeToString()
        )
    )
    proto = tensor_pb2.TensorProto(
        dtype="DT_STRING",
        string_val=[text.encode("utf-8")],
        tensor_shape=tensor_shape_pb2.TensorShapeProto(
            dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=1)]
        ),
    )
    return Summary(value=[Summary.Value(tag=tag + "/text_summary", metadata=meta, tensor=proto)])


def _hparams_summary(tag: str, **content: Any) -> Any:
    data = hp_data.HParamsPluginData(version=hp_metadata.PLUGIN_DATA_VERSION, **content)
    meta = summary_pb2.SummaryMetadata(
        plugin_data=summary_pb2.SummaryMetadata.PluginData(
            plugin_name=hp_metadata.PLUGIN_NAME, content=data.SerializeToString()
        )
    )
    return Summary(value=[Summary.Value(tag=tag, metadata=meta)])


def _hparams(hparams: dict, metrics: dict, discrete: dict | None) -> tuple[Any, Any, Any]:
    """The hparams plugin's three records: the experiment (every hyperparameter with its kind
    and domain, every metric), the session's start (the values) and its end."""
    discrete = discrete or {}
    if not isinstance(discrete, dict):
        raise TypeError(
            f"add_hparams: hparam_domain_discrete must be a dict; got {type(discrete).__name__}"
        )
    for k, domain in discrete.items():
        if k not in hparams or not isinstance(domain, list):
            raise TypeError(
                f"add_hparams: hparam_domain_discrete[{k!r}] must be a list of values of a key "
                f"of hparam_dict; got {domain!r} for keys {list(hparams)}"
            )
    start = hp_data.SessionStartInfo()
    infos = []
    for k, v in hparams.items():
        if v is None:
            continue
        if isinstance(v, Tensor | np.ndarray):
            v = _one_value("add_hparams", v)
        if isinstance(v, int | float):  # a bool too, a number to the dashboard as in PyTorch
            kind, field = "DATA_TYPE_FLOAT64", "number_value"
        elif isinstance(v, str):
            kind, field = "DATA_TYPE_STRING", "string_value"
        else:
            raise ValueError(
                f"add_hparams: hparam_dict[{k!r}] must be an int, float, str, bool or a "
                f"one-element tensor; got {type(v).__name__}"
            )
        setattr(start.hparams[k], field, v)
        domain = None
        if k in discrete:
            domain = struct_pb2.ListValue(
                values=[struct_pb2.Value(**{field: d}) for d in discrete[k]]
            )
        infos.append(
            hp_api.HParamInfo(name=k, type=hp_api.DataType.Value(kind), domain_discrete=domain)
        )
    metric_infos = [hp_api.MetricInfo(name=hp_api.MetricName(tag=k)) for k in metrics]
    experiment = hp_api.Experiment(hparam_infos=infos, metric_infos=metric_infos)
    end = hp_data.SessionEndInfo(status=hp_api.Status.Value("STATUS_SUCCESS"))
    return (
        _hparams_summary(hp_metadata.EXPERIMENT_TAG, experiment=experiment),
        _hparams_summary(hp_metadata.SESSION_START_INFO_TAG, session_start_info=start),
        _hparams_summary(hp_metadata.SESSION_END_INFO_TAG, session_end_info=end),
    )


# ---------------------------------------------------------------------------------------
# The writer


class SummaryWriter:
    """Writes records to event files in ``log_dir`` for TensorBoard, as PyTorch's writer does.

    ``log_dir`` defaults to ``runs/<month day_hour-minute-second>_<host><comment>``.
    ``purge_step``: a run restarted from step N after a crash says so, and TensorBoard hides
    the records at and after N from the earlier run. The event files are written in the
    background, at least every ``flush_secs`` seconds and whenever ``max_queue`` records wait.
    Values may be chainrule Tensors, NumPy arrays or Python numbers.
    """

    def __init__(
        self,
        log_dir: str | None = None,
        comment: str = "",
        purge_step: int | None = None,
        max_queue: int = 10,
        flush_secs: int = 120,
        filename_suffix: str = "",
    ) -> None:
        if not log_dir:
            stamp = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", f"{stamp}_{socket.gethostname()}{comment}")
        self.log_dir = str(log_dir)
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self._writers: dict[str, Any] | None = None  # log dir -> EventFileWriter
        self._projector = ProjectorConfig()  # the embeddings written so far
        self._writer()

    def _writer(self, log_dir: str | None = None) -> Any:
        """The event-file writer of ``log_dir`` (the run's own by default), opened on first
        use, and again after close."""
        if self._writers is None:
            self._writers = {}
        log_dir = self.log_dir if log_dir is None else log_dir
        if log_dir not in self._writers:
            self._writers[log_dir] = EventFileWriter(
                log_dir, self.max_queue, self.flush_secs, self.filename_suffix
            )
            if log_dir == self.log_dir and self.purge_step is not None:
                step, self.purge_step = self.purge_step, None
                self._event(event_pb2.Event(file_version="brain.Event:2"), step)
                start = event_pb2.SessionLog(status=event_pb2.SessionLog.START)
                self._event(event_pb2.Event(session_log=start), step)
        return self._writers[log_dir]

    def _event(
        self,
        event: Any,
        step: Any = None,
        walltime: float | None = None,
        log_dir: str | None = None,
    ) -> None:
        event.wall_time = time.time() if walltime is None else walltime
        if step is not None:
            event.step = int(step)
        self._writer(log_dir).add_event(event)

    def _summary(self, summary: Any, step: Any, walltime: float | None) -> None:
        self._event(event_pb2.Event(summary=summary), step, walltime)

    def get_logdir(self) -> str:
        """The directory the event files are written to."""
        return self.log_dir

    def add_scalar(
        self,
        tag: str,
        scalar_value: Any,
        global_step: int | None = None,
        walltime: float | None = None,
        new_style: bool = False,
        double_precision: bool = False,
    ) -> None:
        """One value of the series ``tag``; ``new_style`` writes it as a tensor (float32, or
        float64 with ``double_precision``) rather than the classic simple value."""
        value = _one_value("add_scalar", scalar_value)
        self._summary(_scalar(tag, value, new_style, double_precision), global_step, walltime)

    def add_scalars(
        self,
        main_tag: str,
        tag_scalar_dict: Mapping[str, Any],
        global_step: int | None = None,
        walltime: float | None = None,
    ) -> None:
        """Several series on one chart: each key is a run of its own, in the folder
        ``<log_dir>/<main_tag with / as _>_<key>``, holding the series ``main_tag``."""
        walltime = time.time() if walltime is None else walltime
        for key, value in tag_scalar_dict.items():
            run = _run_folder("add_scalars", f"{main_tag.replace('/', '_')}_{key}", f"key {key!r}")
            log_dir = f"{self.log_dir}/{run}"
            summary = _scalar(main_tag, _one_value("add_scalars", value))
            self._event(event_pb2.Event(summary=summary), global_step, walltime, log_dir)

    def add_histogram(
        self,
        tag: str,
        values: Any,
        global_step: int | None = None,
        bins: Any = "tensorflow",
        walltime: float | None = None,
        max_bins: int | None = None,
    ) -> None:
        """The distribution of ``values``, in ``bins`` as np.histogram takes them (a count, a
        sequence of edges, a method name) or TensorFlow's default edges."""
        hist = _histogram("add_histogram", values, bins, max_bins)
        self._summary(Summary(value=[Summary.Value(tag=tag, histo=hist)]), global_step, walltime)

    def add_image(
        self,
        tag: str,
        img_tensor: Any,
        global_step: int | None = None,
        walltime: float | None = None,
        dataformats: str = "CHW",
    ) -> None:
        """An image: floats in [0, 1] or uint8 in [0, 255], laid out as ``dataformats`` says
        (CHW, HWC, HW, ...); written as PNG."""
        self._summary(_image("add_image", tag, img_tensor, dataformats), global_step, walltime)

    def add_images(
        self,
        tag: str,
        img_tensor: Any,
        global_step: int | None = None,
        walltime: float | None = None,
        dataformats: str = "NCHW",
    ) -> None:
        """A batch of images, tiled eight to a row into one image."""
        self._summary(_image("add_images", tag, img_tensor, dataformats), global_step, walltime)

    def add_figure(
        self,
        tag: str,
        figure: Any,
        global_step: int | None = None,
        close: bool = True,
        walltime: float | None = None,
    ) -> None:
        """A matplotlib figure (or a list of them, tiled) as an image; ``close`` closes it."""
        if isinstance(figure, list):
            chw = np.stack([_figure_chw(f, close) for f in figure])  # (N, 3, H, W)
            self.add_image(tag, chw, global_step, walltime, dataformats="NCHW")
        else:
            self.add_image(tag, _figure_chw(figure, close), global_step, walltime)

    def add_text(
        self,
        tag: str,
        text_string: str,
        global_step: int | None = None,
        walltime: float | None = None,
    ) -> None:
        """Text (markdown) under ``tag``."""
        self._summary(_text(tag, text_string), global_step, walltime)

    def add_hparams(
        self,
        hparam_dict: dict,
        metric_dict: dict,
        hparam_domain_discrete: dict | None = None,
        run_name: str | None = None,
        global_step: int | None = None,
    ) -> None:
        """One trial's hyperparameters and the metrics it reached, for the HParams dashboard:
        written to a run of its own, ``<log_dir>/<run_name>`` (the time by default), with each
        metric also a scalar there."""
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError(
                "add_hparams: hparam_dict and metric_dict must be dicts; got "
                f"{type(hparam_dict).__name__} and {type(metric_dict).__name__}"
            )
        records = _hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        run = _run_folder("add_hparams", run_name or str(time.time()), "run_name")
        log_dir = os.path.join(self.log_dir, run)
        with SummaryWriter(log_dir=log_dir) as trial:
            for summary in records:
                trial._summary(summary, global_step, None)
            for k, v in metric_dict.items():
                trial.add_scalar(k, v, global_step)

    def add_graph(
        self,
        model: Any,
        input_to_model: Any = None,
        verbose: bool = False,
        use_strict_trace: bool = True,
    ) -> None:
        """The graph of ``model(*input_to_model)``, read from autograd's record of one forward
        pass and nested by module as PyTorch's (see ``graph_def``); ``verbose`` prints its
        nodes. ``use_strict_trace`` is accepted for PyTorch's signature: there is no tracer
        here to be strict."""
        graph = graph_def(model, input_to_model, verbose)
        self._event(event_pb2.Event(graph_def=graph.SerializeToString()))

    def add_embedding(
        self,
        mat: Any,
        metadata: Sequence[Any] | None = None,
        label_img: Any = None,
        global_step: int | None = None,
        tag: str = "default",
        metadata_header: Sequence[str] | None = None,
    ) -> None:
        """Points (one row of ``mat`` each) for the Projector, with a label (or a row of
        columns under ``metadata_header``) and an image each: written as tensors.tsv,
        metadata.tsv and sprite.png in ``<log_dir>/<step, 5 digits>/<tag>``, and listed in
        ``<log_dir>/projector_config.pbtxt``."""
        points = _numpy(mat)
        if points.ndim != 2:
            raise ValueError(
                f"add_embedding: mat must be 2-D (points, features); got shape {points.shape}"
            )
        step = 0 if global_step is None else global_step
        subdir = f"{str(step).zfill(5)}/{_encode(tag)}"
        path = os.path.join(self.log_dir, subdir)
        files: list[Output] = []  # checked whole before any is written
        info = ProjectorConfig().embeddings.add()
        info.tensor_name = f"{tag}:{str(step).zfill(5)}"
        info.tensor_path = f"{subdir}/tensors.tsv"
        if metadata is not None:
            if len(metadata) != points.shape[0]:
                raise ValueError(
                    f"add_embedding: metadata must have one entry per point; got {len(metadata)} "
                    f"entries for mat of shape {points.shape}"
                )
            if metadata_header:
                rows = [metadata_header, *metadata]
                lines = ["\t".join(_cell(e, k - 1) for e in row) for k, row in enumerate(rows)]
            else:
                lines = [_cell(e, k) for k, e in enumerate(metadata)]
            files.append((os.path.join(path, "metadata.tsv"), "\n".join(lines) + "\n"))
            info.metadata_path = f"{subdir}/metadata.tsv"
        if label_img is not None:
            imgs = _numpy(label_img)  # (N, C, H, W)
            if imgs.ndim != 4 or imgs.shape[0] != points.shape[0]:
                raise ValueError(
                    f"add_embedding: label_img must be (N, C, H, W) with one image per point; "
                    f"got shape {imgs.shape} for mat of shape {points.shape}"
                )
            files.append((os.path.join(path, "sprite.png"), _sprite(imgs)))
            info.sprite.image_path = f"{subdir}/sprite.png"
            info.sprite.single_image_dim.extend([imgs.shape[3], imgs.shape[2]])
        rows = ["\t".join(str(v) for v in row.tolist()) for row in points]
        files.append((os.path.join(path, "tensors.tsv"), "".join(r + "\n" for r in rows)))
        projector = ProjectorConfig()
        projector.CopyFrom(self._projector)
        projector.embeddings.append(info)
        config = text_format.MessageToString(projector)
        files.append((os.path.join(self.log_dir, "projector_config.pbtxt"), config))
        os.makedirs(path, exist_ok=True)
        write_outputs(files, "add_embedding")  # the old set, or the whole new one
        self._projector = projector

    def flush(self) -> None:
        """Write what waits to disk."""
        for w in (self._writers or {}).values():
            w.flush()

    def close(self) -> None:
        """Flush and close every event file; a later record opens new ones."""
        for w in (self._writers or {}).values():
            w.flush()
            w.close()
        self._writers = None

    def __enter__(self) -> SummaryWriter:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _run_folder(op: str, name: str, what: str) -> str:
    """``name`` as the folder of a run inside log_dir: nested folders (a/b) are runs as
    TensorBoard shows them, but one that leads out of log_dir (absolute, or through ..) is
    refused before anything is written."""
    parts = name.replace("\\", "/").split("/")
    if os.path.isabs(name) or ".." in parts or "\0" in name:
        raise ValueError(
            f"{op}: {what} must name a folder inside log_dir; got {name!r}; hint: leave out "
            f"'..', a leading '/' and NUL"
        )
    return name


def _encode(tag: str) -> str:
    """A tag as one folder name inside the step's: %, / and \\ written as %xx, as PyTorch
    does, and a tag that is all dots (the folder itself or its parent) as %2e each."""
    if not tag:
        raise ValueError("add_embedding: tag must not be empty; got ''")
    if tag.strip(".") == "":
        return "%2e" * len(tag)
    return tag.replace("%", "%25").replace("/", "%2f").replace("\\", "%5c")


def _cell(entry: Any, row: int) -> str:
    """A metadata entry as a cell of the projector's TSV, which has no escapes: a tab or a
    line break in it would move every cell after it, so it is refused."""
    text = str(entry)
    if any(c in text for c in "\t\n\r"):
        where = "metadata_header" if row < 0 else f"metadata[{row}]"
        raise ValueError(
            f"add_embedding: {where} holds a tab or a line break, which the projector's "
            f"metadata.tsv cannot hold; got {text!r}"
        )
    return text


def _sprite(imgs: np.ndarray) -> bytes:
    """The Projector's sprite: the images on a square grid, ceil(sqrt(N)) to a row, as PNG."""
    ncols = int(np.ceil(np.sqrt(imgs.shape[0])))
    grid = _grid(imgs, ncols).transpose(1, 2, 0)  # (H, W, 3)
    side = max(grid.shape[:2])
    square = np.zeros((side, side, 3))
    square[: grid.shape[0], : grid.shape[1]] = grid
    return _png((square * 255).clip(0, 255).astype(np.uint8))
