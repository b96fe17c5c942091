"""Ready datasets: seeded, stratified splits from scikit-learn, and IDX files on disk."""

import gzip
import struct
import sys
import tracemalloc

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer

import chainrule as cr
from chainrule import datasets
from chainrule.datasets import Split, read_idx


def test_breast_cancer_split_and_standardisation():
    s = datasets.breast_cancer()
    assert isinstance(s, Split)
    assert s.x_train.shape == (455, 30) and s.x_test.shape == (114, 30)
    assert s.x_train.dtype == np.float32 and s.y_train.dtype == np.int64
    np.testing.assert_allclose(s.x_train.numpy().mean(0), 0, atol=1e-5)
    np.testing.assert_allclose(s.x_train.numpy().std(0), 1, atol=1e-4)
    assert abs(s.x_test.numpy().mean()) > 1e-4  # fitted on the training part only
    # Stratified: both parts keep the classes' proportion (357 benign of 569).
    assert abs(s.y_train.numpy().mean() - 357 / 569) < 0.005
    assert abs(s.y_test.numpy().mean() - 357 / 569) < 0.01


def test_breast_cancer_is_seeded_and_raw_on_request():
    a, b = datasets.breast_cancer(seed=1), datasets.breast_cancer(seed=1)
    c = datasets.breast_cancer()
    np.testing.assert_array_equal(a.x_train.numpy(), b.x_train.numpy())
    assert not np.array_equal(a.x_train.numpy(), c.x_train.numpy())
    raw = datasets.breast_cancer(test_size=0.5, standardize=False)
    assert len(raw.x_train) == 284 and len(raw.x_test) == 285
    x, _ = load_breast_cancer(return_X_y=True)
    rows = {tuple(r) for r in x.astype(np.float32)}
    assert all(tuple(r) in rows for r in raw.x_test.numpy())


def test_digits():
    s = datasets.digits()
    assert s.x_train.shape == (1437, 64) and s.y_test.shape == (360,)
    assert s.x_train.numpy().min() == 0 and s.x_train.numpy().max() == 1
    assert sorted(set(s.y_train.tolist())) == list(range(10))
    images = datasets.digits(flatten=False)
    assert images.x_test.shape == (360, 1, 8, 8)
    np.testing.assert_array_equal(images.x_test.numpy().reshape(360, 64), s.x_test.numpy())
    z = datasets.digits(standardize=True).x_train.numpy()
    assert np.isfinite(z).all() and abs(z.mean()) < 1e-5  # constant pixels stay 0, not NaN


def test_moons_and_regression():
    m = datasets.moons(n_samples=200, noise=0.2, seed=3)
    assert m.x_train.shape == (160, 2) and m.y_train.dtype == np.int64
    assert m.y_train.numpy().sum() == 80  # stratified: exactly half of each class
    np.testing.assert_array_equal(m.x_test.numpy(), datasets.moons(200, 0.2, 3).x_test.numpy())
    r = datasets.regression(n_samples=100, n_features=4, noise=0.5, seed=0)
    assert r.x_train.shape == (80, 4) and r.y_train.shape == (80, 1)
    assert r.y_train.dtype == np.float32
    np.testing.assert_allclose(r.x_train.numpy().mean(0), 0, atol=1e-5)
    # The targets are (nearly) linear in the features: least squares fits them.
    x = np.c_[r.x_train.numpy(), np.ones(80)]
    residual = np.linalg.lstsq(x, r.y_train.numpy(), rcond=None)[1]
    assert residual[0] / 80 < 1.0


def test_missing_scikit_learn_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn.datasets", None)
    with pytest.raises(ImportError, match=r'pip install "chainrule\[datasets\]"'):
        datasets.moons()


# -- IDX ----------------------------------------------------------------------------------


def idx_bytes(array, code=0x08, dtype=">u1"):
    head = bytes([0, 0, code, array.ndim]) + struct.pack(f">{array.ndim}I", *array.shape)
    return head + np.asarray(array, dtype=dtype).tobytes()


def write_mnist(folder, gz, rng, n_train=5, n_test=3):
    folder.mkdir(parents=True, exist_ok=True)
    data = {
        "train-images-idx3-ubyte": rng.integers(0, 256, (n_train, 4, 3)),
        "train-labels-idx1-ubyte": rng.integers(0, 10, n_train),
        "t10k-images-idx3-ubyte": rng.integers(0, 256, (n_test, 4, 3)),
        "t10k-labels-idx1-ubyte": rng.integers(0, 10, n_test),
    }
    for name, array in data.items():
        payload = idx_bytes(array)
        if gz:
            (folder / (name + ".gz")).write_bytes(gzip.compress(payload))
        else:
            (folder / name).write_bytes(payload)
    return data


@pytest.mark.parametrize("gz", [False, True])
def test_mnist_reads_idx_files(tmp_path, gz):
    data = write_mnist(tmp_path, gz, np.random.default_rng(0))
    s = datasets.mnist(tmp_path)
    assert s.x_train.shape == (5, 1, 4, 3) and s.x_test.shape == (3, 1, 4, 3)
    assert s.x_train.dtype == np.float32 and s.y_train.dtype == np.int64
    np.testing.assert_allclose(
        s.x_train.numpy()[:, 0], data["train-images-idx3-ubyte"] / 255, rtol=1e-6
    )
    np.testing.assert_array_equal(s.y_test.numpy(), data["t10k-labels-idx1-ubyte"])
    flat = datasets.mnist(str(tmp_path), flatten=True)
    assert flat.x_test.shape == (3, 12)


def test_fashion_mnist_in_torchvision_layout(tmp_path):
    data = write_mnist(tmp_path / "FashionMNIST" / "raw", True, np.random.default_rng(1))
    s = datasets.fashion_mnist(tmp_path)
    np.testing.assert_array_equal(s.y_train.numpy(), data["train-labels-idx1-ubyte"])
    with pytest.raises(FileNotFoundError):
        datasets.mnist(tmp_path)  # the MNIST/raw folder is another dataset's


def test_missing_files_are_listed(tmp_path):
    write_mnist(tmp_path, False, np.random.default_rng(0))
    (tmp_path / "t10k-labels-idx1-ubyte").unlink()
    with pytest.raises(
        FileNotFoundError,
        match="missing under .*: t10k-labels-idx1-ubyte "
        r"\(each raw or with \.gz.*expected train-images-idx3-ubyte, "
        "train-labels-idx1-ubyte, t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte",
    ):
        datasets.mnist(tmp_path)


def test_read_idx_types_and_damage(tmp_path):
    a = np.array([[-300, 2], [3, 32000]])
    (tmp_path / "a").write_bytes(idx_bytes(a, 0x0B, ">i2"))
    got = read_idx(tmp_path / "a")
    assert got.dtype == np.int16 and got.dtype.isnative
    np.testing.assert_array_equal(got, a)
    (tmp_path / "cut").write_bytes(idx_bytes(a, 0x0B, ">i2")[:-1])
    with pytest.raises(ValueError, match="holds 7 data bytes; its header .* says 8"):
        read_idx(tmp_path / "cut")
    (tmp_path / "foreign").write_bytes(b"PK\x03\x04 not an idx file")
    with pytest.raises(ValueError, match="is not an IDX file"):
        read_idx(tmp_path / "foreign")
    (tmp_path / "bad.gz").write_bytes(b"not gzip")
    with pytest.raises(ValueError, match="is not a readable gzip file"):
        read_idx(tmp_path / "bad.gz")


def peak_bytes(read):
    """The most memory Python held at once while ``read()`` ran (and what it raised)."""
    tracemalloc.start()
    try:
        with pytest.raises(ValueError) as caught:
            read()
        return tracemalloc.get_traced_memory()[1], str(caught.value)
    finally:
        tracemalloc.stop()


def test_a_compressed_file_longer_than_its_header_says_is_not_read_whole(tmp_path):
    path = tmp_path / "bomb.gz"
    with gzip.open(path, "wb") as f:  # 64 MiB of zeros after a header that says 10 bytes
        f.write(bytes([0, 0, 0x08, 1]) + struct.pack(">I", 10))
        for _ in range(64):
            f.write(bytes(1 << 20))
    peak, message = peak_bytes(lambda: read_idx(path))
    assert (
        "holds more than 10 data bytes; its header (shape (10,), 1-byte items) says 10" in message
    )
    assert peak < 8 << 20


@pytest.mark.parametrize("gz", [False, True])
def test_sizes_in_a_header_are_checked_before_allocating(tmp_path, gz):
    # (2**16,) * 4: 2**64 bytes, which NumPy's int64 product wraps to 0
    huge = bytes([0, 0, 0x08, 4]) + struct.pack(">4I", *[1 << 16] * 4)
    path = tmp_path / ("huge.gz" if gz else "huge")
    path.write_bytes(gzip.compress(huge + bytes(5)) if gz else huge + bytes(5))
    peak, message = peak_bytes(lambda: read_idx(path))
    assert (
        f"holds 5 data bytes; its header (shape {(1 << 16,) * 4}, 1-byte items) says {2**64}"
        in message
    )
    assert peak < 8 << 20
    many = bytes([0, 0, 0x08, 100]) + struct.pack(">100I", *[1] * 100) + bytes(1)
    path.write_bytes(gzip.compress(many) if gz else many)
    with pytest.raises(ValueError, match="read_idx: an array has at most 64 dims; got 100 in"):
        read_idx(path)


def test_a_missing_raw_file_is_not_called_a_gzip_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        read_idx(tmp_path / "absent")


def test_mismatched_images_and_labels(tmp_path):
    write_mnist(tmp_path, False, np.random.default_rng(0))
    (tmp_path / "train-labels-idx1-ubyte").write_bytes(idx_bytes(np.zeros(4)))
    with pytest.raises(ValueError, match=r"images of shape \(5, 4, 3\) and labels of shape \(4,\)"):
        datasets.mnist(tmp_path)
    assert cr.datasets is datasets
