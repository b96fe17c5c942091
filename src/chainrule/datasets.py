"""Ready datasets as seeded train/test splits of Tensors: scikit-learn's shipped ones and
MNIST-style IDX files read from a folder; the names list shipped with the package and a
character vocabulary for text. Nothing is ever downloaded.

Every loader returns a ``Split(x_train, y_train, x_test, y_test)`` of Tensors: float32
features, int64 class labels of shape (n,), float32 regression targets of shape (n, 1).
"""

from __future__ import annotations

import gzip
import math
import os
import struct
from collections.abc import Iterable
from importlib import resources
from pathlib import Path
from typing import Any, NamedTuple

from . import array
from .tensor import Tensor

xp = array.xp


class Split(NamedTuple):
    """A train/test split; unpacks as ``x_train, y_train, x_test, y_test = split``."""

    x_train: Tensor
    y_train: Tensor
    x_test: Tensor
    y_test: Tensor


def _sklearn() -> Any:
    try:
        import sklearn.datasets
        import sklearn.model_selection
    except ImportError as e:
        raise ImportError(
            "chainrule.datasets: this dataset needs scikit-learn; install it with "
            'pip install "chainrule[datasets]"'
        ) from e
    return sklearn


def _split(x: Any, y: Any, test_size: float, seed: int, classes: bool, standardize: bool) -> Split:
    """Shuffle and split (stratified by class for classification: int64 labels; float32
    targets otherwise), then standardise the features with the training part's mean and
    std, so nothing of the test part leaks into training."""
    sk = _sklearn()
    x_train, x_test, y_train, y_test = sk.model_selection.train_test_split(
        x, y, test_size=test_size, random_state=seed, stratify=y if classes else None
    )
    x_train, x_test = x_train.astype(xp.float64), x_test.astype(xp.float64)
    if standardize:
        mean, std = x_train.mean(0), x_train.std(0)
        std[std == 0] = 1  # a constant feature stays constant (zero) instead of becoming NaN
        x_train, x_test = (x_train - mean) / std, (x_test - mean) / std
    label = array.int64 if classes else array.float32
    return Split(
        *(
            Tensor._make(xp.ascontiguousarray(a, dtype=dt))
            for a, dt in [
                (x_train, array.float32),
                (y_train, label),
                (x_test, array.float32),
                (y_test, label),
            ]
        )
    )


def breast_cancer(test_size: float = 0.2, seed: int = 0, standardize: bool = True) -> Split:
    """Wisconsin breast cancer: 569 samples, 30 features, 2 classes (0 malignant, 1 benign).

    Stratified split; features standardised with the training part's statistics unless
    ``standardize=False``.
    """
    x, y = _sklearn().datasets.load_breast_cancer(return_X_y=True)
    return _split(x, y, test_size, seed, classes=True, standardize=standardize)


def digits(
    test_size: float = 0.2, seed: int = 0, standardize: bool = False, flatten: bool = True
) -> Split:
    """Handwritten digits: 1797 images of 8x8 pixels, 10 classes.

    Pixels are scaled from 0..16 to [0, 1] (``standardize=True`` standardises each pixel
    with the training part's statistics instead). Features are (n, 64), or (n, 1, 8, 8)
    with ``flatten=False`` for convolutions. Stratified split.
    """
    x, y = _sklearn().datasets.load_digits(return_X_y=True)
    split = _split(x / 16.0, y, test_size, seed, classes=True, standardize=standardize)
    if flatten:
        return split
    return split._replace(
        x_train=split.x_train.reshape(-1, 1, 8, 8), x_test=split.x_test.reshape(-1, 1, 8, 8)
    )


def moons(
    n_samples: int = 1000,
    noise: float = 0.1,
    seed: int = 0,
    test_size: float = 0.2,
    standardize: bool = False,
) -> Split:
    """Two interleaving half circles in 2-D, 2 classes: the classic toy problem.

    Drawn with ``seed``; stratified split; raw coordinates unless ``standardize``.
    """
    x, y = _sklearn().datasets.make_moons(n_samples=n_samples, noise=noise, random_state=seed)
    return _split(x, y, test_size, seed, classes=True, standardize=standardize)


def regression(
    n_samples: int = 1000,
    n_features: int = 10,
    noise: float = 10.0,
    seed: int = 0,
    test_size: float = 0.2,
    standardize: bool = True,
) -> Split:
    """A random linear regression problem (scikit-learn's make_regression) with Gaussian
    noise of std ``noise`` on the targets.

    Targets are float32 of shape (n, 1), to match a ``Linear(n_features, 1)`` output, and
    are left unscaled; ``standardize`` scales the features only.
    """
    x, y = _sklearn().datasets.make_regression(
        n_samples=n_samples, n_features=n_features, noise=noise, random_state=seed
    )
    return _split(x, y.reshape(-1, 1), test_size, seed, classes=False, standardize=standardize)


# -- IDX files (MNIST, Fashion-MNIST) ------------------------------------------------------

_IDX_FILES = (
    "train-images-idx3-ubyte",
    "train-labels-idx1-ubyte",
    "t10k-images-idx3-ubyte",
    "t10k-labels-idx1-ubyte",
)
# IDX type codes; the data is big-endian.
_IDX_TYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}
_MAX_DIMS = 64  # NumPy's most
_PIECE = 1 << 20  # bytes read at a time from a compressed file (each read allocates as much)


def read_idx(path: str | os.PathLike) -> Any:
    """Read one IDX file (raw, or gzip-compressed if its name ends in .gz) into an array.

    The sizes in the header are checked before anything is allocated for them: a raw file
    against its length on disk, a compressed one by reading no more than they say (and one
    byte), so a damaged or hostile file is refused without reading it whole."""
    path = Path(path)
    gz = path.suffix == ".gz"
    try:
        with gzip.open(path, "rb") if gz else open(path, "rb") as f:
            head = f.read(4)
            if len(head) < 4 or head[0] != 0 or head[1] != 0 or head[2] not in _IDX_TYPES:
                raise ValueError(
                    f"read_idx: {path} is not an IDX file (bad magic number {head.hex()})"
                )
            ndim, dtype = head[3], xp.dtype(_IDX_TYPES[head[2]])
            if ndim > _MAX_DIMS:
                raise ValueError(
                    f"read_idx: an array has at most {_MAX_DIMS} dims; got {ndim} in the header "
                    f"of {path}"
                )
            dims = f.read(4 * ndim)
            if len(dims) < 4 * ndim:
                raise ValueError(f"read_idx: {path} is truncated inside its header")
            shape = struct.unpack(f">{ndim}I", dims)
            size = math.prod(shape) * dtype.itemsize  # Python's ints: no overflow
            if gz:  # what the header says and one byte more, to tell a longer file
                raw = _read_at_most(f, size + 1)
                held = f"more than {size}" if len(raw) > size else str(len(raw))
            else:
                left = os.fstat(f.fileno()).st_size - 4 - 4 * ndim
                raw = f.read(size) if left == size else b""
                held = str(left)
    except (OSError, EOFError) as e:  # gzip's BadGzipFile is an OSError
        if not gz:
            raise
        raise ValueError(f"read_idx: {path} is not a readable gzip file ({e})") from None
    if len(raw) != size:
        raise ValueError(
            f"read_idx: {path} holds {held} data bytes; its header (shape {shape}, "
            f"{dtype.itemsize}-byte items) says {size}"
        )
    data = xp.frombuffer(raw, dtype=dtype).reshape(shape)
    return data.astype(dtype.newbyteorder("="))  # native byte order, and a writable copy


def _read_at_most(f: Any, n: int) -> bytes:
    """Up to ``n`` bytes of ``f``, read a piece at a time, so that only what the file holds
    is ever allocated, whatever ``n`` is."""
    pieces, got = [], 0
    while got < n:
        piece = f.read(min(n - got, _PIECE))
        if not piece:
            break
        pieces.append(piece)
        got += len(piece)
    return b"".join(pieces)


def _find_idx(root: Path, name: str, folders: tuple[str, ...]) -> Path | None:
    for folder in folders:
        for suffix in ("", ".gz"):
            candidate = root / folder / (name + suffix)
            if candidate.is_file():
                return candidate
    return None


def _idx_split(root: str | os.PathLike, name: str, flatten: bool) -> Split:
    root = Path(root)
    folders = (".", f"{name}/raw")  # the folder itself, or torchvision's layout under it
    found = {f: _find_idx(root, f, folders) for f in _IDX_FILES}
    missing = [f for f, p in found.items() if p is None]
    if missing:
        raise FileNotFoundError(
            f"{name.lower()}: IDX files missing under {root}: {', '.join(missing)} (each raw or "
            f"with .gz, in {root} or {root / name / 'raw'}); expected "
            f"{', '.join(_IDX_FILES)}. chainrule does not download them."
        )
    paths = [p for p in found.values() if p is not None]
    arrays = [read_idx(p) for p in paths]
    out = []
    for images, labels, path in [(*arrays[:2], paths[0]), (*arrays[2:], paths[2])]:
        if images.ndim != 3 or labels.ndim != 1 or len(images) != len(labels):
            raise ValueError(
                f"{name.lower()}: images of shape {images.shape} and labels of shape "
                f"{labels.shape} do not pair up (from {path})"
            )
        x = images.astype(array.float32) / 255.0  # pixels in [0, 1]
        x = x.reshape(len(x), -1) if flatten else x[:, None]  # (n, h*w) or (n, 1, h, w)
        out += [Tensor._make(x), Tensor._make(labels.astype(array.int64))]
    return Split(out[0], out[1], out[2], out[3])


def mnist(root: str | os.PathLike, flatten: bool = False) -> Split:
    """MNIST from the four IDX files in ``root`` (train-images-idx3-ubyte,
    train-labels-idx1-ubyte, t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte, each raw or
    .gz; also found under root/MNIST/raw). Never downloads.

    The split is the files' own (60000 train, 10000 test). Pixels are scaled to [0, 1];
    images are (n, 1, 28, 28), or (n, 784) with ``flatten``; labels int64.
    """
    return _idx_split(root, "MNIST", flatten)


def fashion_mnist(root: str | os.PathLike, flatten: bool = False) -> Split:
    """Fashion-MNIST, in MNIST's file names and format: as :func:`mnist` (also found under
    root/FashionMNIST/raw)."""
    return _idx_split(root, "FashionMNIST", flatten)


# -- text: the names list and a character vocabulary ---------------------------------------


def names() -> list[str]:
    """32,033 lowercase first names (a-z only; 29,494 distinct), the most common given in
    the United States in 2018 according to the Social Security Administration's public
    baby-name records, as collected for character-level language-model exercises
    (makemore). Shipped with the package (chainrule/assets/names.txt), in the file's order."""
    text = (resources.files("chainrule") / "assets" / "names.txt").read_text(encoding="utf-8")
    return text.split()


def _shown(text: str, limit: int = 60) -> str:
    """``text``'s repr, cut short for an error message."""
    return repr(text) if len(text) <= limit else repr(text[:limit]) + f"... ({len(text)} chars)"


class CharVocab:
    """A character-level vocabulary: index 0 is the token ``end`` (makemore's '.', which
    starts and ends every name), then each character of ``texts`` in sorted order;
    ``end=None`` has no such token (a text corpus, where '.' is a character like any other).

    >>> vocab = CharVocab(["emma", "ava"])
    >>> vocab.encode("ava"), vocab.decode([0, 2, 3, 3, 1, 0])
    ([1, 4, 1], '.emma.')
    """

    def __init__(self, texts: Iterable[str], end: str | None = ".") -> None:
        texts = list(texts)
        bad = [type(t).__name__ for t in texts if not isinstance(t, str)]
        if bad:
            raise TypeError(f"CharVocab: texts must be strings; got {', '.join(sorted(set(bad)))}")
        if end is not None and (not isinstance(end, str) or len(end) != 1):
            raise ValueError(f"CharVocab: end must be one character or None; got {end!r}")
        chars = sorted(set().union(*map(set, texts)))
        if end is not None and end in chars:
            raise ValueError(
                f"CharVocab: the end token {end!r} occurs in the texts; got texts holding "
                f"{end!r} (choose another end token, or end=None)"
            )
        self.end = end
        self.itos: dict[int, str] = dict(enumerate(([end] if end is not None else []) + chars))
        self.stoi: dict[str, int] = {s: i for i, s in self.itos.items()}

    def __len__(self) -> int:
        return len(self.itos)

    def __repr__(self) -> str:
        return f"CharVocab({len(self)} characters: {_shown(''.join(self.itos.values()))})"

    def encode(self, text: str) -> list[int]:
        """The index of each character of ``text``."""
        if not isinstance(text, str):
            raise TypeError(f"CharVocab.encode: expected a str; got {type(text).__name__}")
        try:
            return [self.stoi[s] for s in text]
        except KeyError:
            unknown = "".join(sorted(set(text) - self.stoi.keys()))
            raise ValueError(
                f"CharVocab.encode: characters not in the vocabulary: {unknown!r}; got "
                f"{_shown(text)} (the vocabulary: {_shown(''.join(self.itos.values()))})"
            ) from None

    def decode(self, ids: Iterable[int] | Tensor) -> str:
        """The characters of the indices ``ids`` (a list or a 1-D Tensor of them)."""
        values = ids.tolist() if isinstance(ids, Tensor) else list(ids)
        if not all(isinstance(i, int) and not isinstance(i, bool) for i in values):
            raise TypeError(f"CharVocab.decode: expected integer indices; got {values!r}")
        outside = [i for i in values if i not in self.itos]
        if outside:
            raise ValueError(
                f"CharVocab.decode: indices outside the vocabulary of {len(self)} characters; "
                f"got {outside}"
            )
        return "".join(self.itos[i] for i in values)
