"""MNIST loaders, binarisation, scaling and the class-balanced subset."""

import gzip
import shutil

import numpy as np
import pytest

from bpetopics.images import (
    balanced_subset,
    binarize,
    default_data_root,
    load_binarized_mnist,
    load_mnist,
    load_scaled_mnist,
    read_idx,
    scale_images,
)
from bpetopics.images.sources import ImageSourceError

TRAIN_COUNTS = [5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949]
TEST_COUNTS = [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]


def test_mnist_train_matches_published_facts(mnist_train):
    X, y = mnist_train
    assert X.shape == (60000, 784) and X.dtype == np.float32
    assert y.shape == (60000,) and y.dtype == np.int64
    assert X.min() == 0.0 and X.max() == 1.0
    assert y[:10].tolist() == [5, 0, 4, 1, 9, 2, 1, 3, 1, 4]
    assert np.bincount(y).tolist() == TRAIN_COUNTS
    # the README's pixel statistics (mean/255 and std/255 of the raw uint8 pixels)
    assert X.mean(dtype=np.float64) == pytest.approx(0.1306604762738429, abs=1e-7)
    assert X.std(dtype=np.float64) == pytest.approx(0.3081078038564626, abs=1e-6)


def test_mnist_test_split(mnist_test):
    X, y = mnist_test
    assert X.shape == (10000, 784)
    assert np.bincount(y).tolist() == TEST_COUNTS


def test_uncompressed_idx_files_load_the_same(data_root, tmp_path, mnist_test):
    raw = tmp_path / "MNIST" / "raw"
    raw.mkdir(parents=True)
    for stem in ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"):
        with gzip.open(data_root / "mnist" / "MNIST" / "raw" / f"{stem}.gz") as src, \
                open(raw / stem, "wb") as dst:
            shutil.copyfileobj(src, dst)
    X, y = load_mnist("test", tmp_path)
    np.testing.assert_array_equal(X, mnist_test[0])
    np.testing.assert_array_equal(y, mnist_test[1])
    assert read_idx(raw / "t10k-images-idx3-ubyte").shape == (10000, 28, 28)


def test_data_root_from_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("BPETOPICS_DATA", str(tmp_path))
    assert default_data_root() == tmp_path
    assert default_data_root("/x/y") == type(tmp_path)("/x/y")
    with pytest.raises(FileNotFoundError, match="download=True"):
        load_mnist("train")  # empty root, nothing is downloaded unless asked
    with pytest.raises(ValueError):
        load_mnist("valid", tmp_path)


def test_balanced_subset_is_balanced_seeded_and_sorted():
    labels = np.repeat(np.arange(4), [50, 40, 30, 5])
    idx = balanced_subset(labels, 22, random_state=1)
    assert idx.size == 22 and np.all(np.diff(idx) > 0)
    counts = np.bincount(labels[idx], minlength=4)
    # 22 = 4 x 5 + 2; class 3 has exactly 5, so every class gets 5 or 6
    assert counts.sum() == 22 and counts.min() >= 5 and counts.max() <= 6
    np.testing.assert_array_equal(idx, balanced_subset(labels, 22, random_state=1))
    assert not np.array_equal(idx, balanced_subset(labels, 22, random_state=2))
    # a class too small to fill its quota: the shortfall comes from the others
    idx = balanced_subset(labels, 80, random_state=0)
    assert idx.size == 80 and len(set(idx.tolist())) == 80
    assert np.bincount(labels[idx])[3] == 5
    np.testing.assert_array_equal(balanced_subset(labels, 1000), np.arange(labels.size))


def test_mnist_limit_is_a_balanced_subset_of_the_full_split(data_root, mnist_test):
    X, y = load_mnist("test", data_root, limit=100, random_state=3)
    assert X.shape == (100, 784) and np.bincount(y).tolist() == [10] * 10
    # every row is the full split's row with that label (order preserved)
    Xf, yf = mnist_test
    idx = balanced_subset(yf, 100, np.random.default_rng([3, 1, 0]))
    np.testing.assert_array_equal(X, Xf[idx])
    X2, _ = load_mnist("test", data_root, limit=100, random_state=3)
    np.testing.assert_array_equal(X, X2)


def test_binarize_threshold_and_sampling():
    X = np.array([[0.0, 0.2, 0.5, 0.51, 1.0]], dtype=np.float32)
    np.testing.assert_array_equal(binarize(X), [[0, 0, 0, 1, 1]])
    big = np.tile(X, (20000, 1))
    s1 = binarize(big, "sample", random_state=0)
    np.testing.assert_array_equal(s1, binarize(big, "sample", random_state=0))
    assert set(np.unique(s1).tolist()) <= {0.0, 1.0} and s1.dtype == np.float32
    assert (s1[:, 0] == 0).all() and (s1[:, 4] == 1).all()
    # frequency of ones estimates the intensity: 4 sd of a Binomial(20000, p) mean
    np.testing.assert_allclose(s1.mean(0), X[0], atol=4 * np.sqrt(0.25 / 20000))
    with pytest.raises(ValueError):
        binarize(X, "otsu")


def test_load_binarized_mnist(data_root, mnist_test):
    Xb, y = load_binarized_mnist("test", data_root)
    np.testing.assert_array_equal(Xb, (mnist_test[0] > 0.5).astype(np.float32))
    Xs, ys = load_binarized_mnist("test", data_root, method="sample", limit=50, random_state=4)
    Xl, yl = load_mnist("test", data_root, limit=50, random_state=4)
    np.testing.assert_array_equal(ys, yl)  # the same images as load_mnist's subset
    assert ((Xs == 1) <= (Xl > 0)).all()  # a black pixel is never sampled as 1
    Xs2, _ = load_binarized_mnist("test", data_root, method="sample", limit=50, random_state=4)
    np.testing.assert_array_equal(Xs, Xs2)


def test_scale_images_is_seeded_and_bounded():
    X = np.ones((5000, 3), dtype=np.float32)
    Xs, f = scale_images(X, 2.5, random_state=0)
    assert f.shape == (5000,) and f.dtype == np.float32
    assert np.all(np.abs(f) <= 2.5)
    np.testing.assert_allclose(Xs, X * f[:, None])
    np.testing.assert_array_equal(f, scale_images(X, 2.5, random_state=0)[1])
    assert not np.array_equal(f, scale_images(X, 2.5, random_state=1)[1])
    # U(-s, s): mean 0, sd s / sqrt(3)
    assert abs(f.mean()) < 4 * 2.5 / np.sqrt(3 * 5000)
    assert f.std() == pytest.approx(2.5 / np.sqrt(3), rel=0.05)
    with pytest.raises(ValueError):
        scale_images(X, 0.0)


def test_load_scaled_mnist(data_root, mnist_test):
    Xs, y, f = load_scaled_mnist("test", data_root, s_max=3.0, random_state=7)
    assert Xs.shape == (10000, 784) and f.shape == (10000,)
    assert np.all(np.abs(f) <= 3.0) and np.abs(Xs).max() <= 3.0
    np.testing.assert_allclose(Xs, mnist_test[0] * f[:, None], rtol=1e-6)
    Xs2, _, f2 = load_scaled_mnist("test", data_root, s_max=3.0, random_state=7)
    np.testing.assert_array_equal(f, f2)
    # with a limit, each kept image keeps the factor it has in the full split
    Xl, yl, fl = load_scaled_mnist("test", data_root, s_max=3.0, limit=30, random_state=7)
    idx = balanced_subset(y, 30, np.random.default_rng([7, 1, 0]))
    np.testing.assert_array_equal(fl, f[idx])
    np.testing.assert_array_equal(yl, y[idx])


def test_download_path_offline_via_file_urls(data_root, tmp_path, monkeypatch, mnist_test):
    """download=True, exercised without a network: the first mirror is dead, the
    second is a file:// copy of the originals; md5 values are checked."""
    import bpetopics.images.datasets as ds

    raw = (data_root / "mnist" / "MNIST" / "raw").resolve()
    monkeypatch.setattr(ds, "MNIST_MIRRORS", (f"file://{tmp_path}/nowhere/", f"file://{raw}/"))
    root = tmp_path / "root"
    X, y = load_mnist("test", root, download=True)
    np.testing.assert_array_equal(X, mnist_test[0])
    assert sorted(p.name for p in (root / "MNIST" / "raw").iterdir()) == sorted(ds.MNIST_MD5)
    # a file whose md5 does not match is refused and not kept
    bad = tmp_path / "bad.gz"
    bad.write_bytes(b"not mnist")
    with pytest.raises(OSError, match="md5"):
        ds.download_file([f"file://{bad}"], tmp_path / "out.gz", ds.MNIST_MD5["t10k-labels-idx1-ubyte.gz"])
    assert not (tmp_path / "out.gz").exists()


def _mnist_copy(data_root, tmp_path):
    """The test split's files, copied where they can be damaged."""
    raw = tmp_path / "MNIST" / "raw"
    raw.mkdir(parents=True)
    for stem in ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"):
        shutil.copyfile(data_root / "mnist" / "MNIST" / "raw" / f"{stem}.gz", raw / f"{stem}.gz")
    return raw


def _refused(root, *fragments):
    with pytest.raises(ImageSourceError) as exc_info:
        load_mnist("test", root)
    message = str(exc_info.value)
    assert message and "\n" not in message and "download=True" in message, message
    for fragment in fragments:
        assert fragment in message, message


def test_damaged_mnist_files_are_one_line_naming_the_file(data_root, tmp_path):
    raw = _mnist_copy(data_root, tmp_path)
    images, labels = raw / "t10k-images-idx3-ubyte.gz", raw / "t10k-labels-idx1-ubyte.gz"
    good = images.read_bytes()
    images.write_bytes(good[:len(good) // 2])                                          # a truncated .gz
    _refused(tmp_path, "t10k-images-idx3-ubyte.gz is damaged")
    images.write_bytes(good)
    noise = np.random.default_rng(0).integers(0, 256, 10008, dtype=np.uint8).tobytes()
    labels.write_bytes(noise)                                                          # not gzip at all
    _refused(tmp_path, "t10k-labels-idx1-ubyte.gz is damaged")
    labels.write_bytes(gzip.compress(noise))                                           # gzip of noise
    _refused(tmp_path, "t10k-labels-idx1-ubyte.gz is not an unsigned-byte IDX file")
    labels.write_bytes(gzip.compress(bytes([0, 0, 8, 1, 0, 0, 39, 16]) + bytes(5000)))  # 10,000 said, 5,000 there
    _refused(tmp_path, "holds 5,000 bytes of values where its header says 10,000")
    labels.write_bytes(gzip.compress(bytes([0, 0, 8, 1, 0, 0, 39, 16]) + bytes(range(100)) * 100))
    _refused(tmp_path, "t10k-labels-idx1-ubyte.gz does not hold digit labels 0-9")


def test_images_train_on_a_truncated_mnist_ends_with_one_line(data_root, tmp_path):
    from click.testing import CliRunner

    from bpetopics.cli import main
    from tests.cli.conftest import one_line_error

    raw = _mnist_copy(data_root, tmp_path)
    shutil.copyfile(raw / "t10k-labels-idx1-ubyte.gz", raw / "train-labels-idx1-ubyte.gz")
    (raw / "train-images-idx3-ubyte.gz").write_bytes((raw / "t10k-images-idx3-ubyte.gz").read_bytes()[:5000])
    result = CliRunner().invoke(main, ["images", "train", "mnist", "--model", "gaussbpe", "--data-root",
                                       str(tmp_path), "--out", str(tmp_path / "run"), "--max-images", "20",
                                       "--epochs", "1", "--bits", "8", "--device", "cpu"])
    one_line_error(result, "train-images-idx3-ubyte.gz is damaged", "download=True")
    assert not (tmp_path / "run").exists()
