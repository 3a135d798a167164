"""CIFAR-10 from the shared JPEG tarball, an image tree, and (restricted) python batches."""

import io
import os
import pickle
import tarfile

import numpy as np
import pytest
from PIL import Image

from bpetopics.images import CIFAR10_CLASSES, load_cifar10
from bpetopics.images.cifar import RestrictedUnpickler
from bpetopics.images.sources import ImageSourceError


def _images(n, seed):
    return np.random.default_rng(seed).integers(0, 256, (n, 32, 32, 3), dtype=np.uint8)


def _png(arr):
    buf = io.BytesIO()
    Image.fromarray(arr).save(buf, format="PNG")  # lossless, so pixels compare exactly
    return buf.getvalue()


def _expected_row(arr):
    return arr.transpose(2, 0, 1).reshape(-1).astype(np.float32) / 255.0


def test_shared_jpeg_tarball_with_limit(data_root, tmp_path):
    X, y = load_cifar10("test", data_root, limit=20, random_state=0, cache_dir=tmp_path)
    assert X.shape == (20, 3072) and X.dtype == np.float32
    assert 0.0 <= X.min() and X.max() <= 1.0 and X.std() > 0.1
    assert np.bincount(y, minlength=10).tolist() == [2] * 10
    assert list(tmp_path.iterdir()) == []  # a partial read caches nothing
    X2, y2 = load_cifar10("test", data_root, limit=20, random_state=0, cache_dir=False)
    np.testing.assert_array_equal(X, X2)


def _write_tar(path, per_class, long_names=False):
    """A tarball like the shared one: <split>/<class>/<i>.png; returns the pixels."""
    pixels = {}
    with tarfile.open(path, "w:gz") as tf:
        for split in ("train", "test"):
            for c, cls in enumerate(CIFAR10_CLASSES[:3]):
                for i, arr in enumerate(_images(per_class, 10 * c + (split == "test"))):
                    # long names (> 100 chars) need pax headers: the archive then
                    # mixes plain ustar members with pax ones
                    stem = "x" * 120 if long_names and c == 2 else ""
                    name = f"{split}/{cls}/{stem}{i:04d}.png"
                    data = _png(arr)
                    info = tarfile.TarInfo(name)
                    info.size = len(data)
                    tf.addfile(info, io.BytesIO(data))
                    pixels[(split, c, i)] = arr
    return pixels


@pytest.mark.parametrize("long_names", [False, True])  # True: mixed ustar + pax members
def test_tarball_layout_labels_and_cache(tmp_path, long_names):
    root, cache = tmp_path / "data", tmp_path / "cache"
    (root / "cifar10").mkdir(parents=True)
    pixels = _write_tar(root / "cifar10" / "cifar10-jpeg.tar.gz", 4, long_names)
    X, y = load_cifar10("test", root, cache_dir=cache)
    assert X.shape == (12, 3072)
    assert y.tolist() == [0] * 4 + [1] * 4 + [2] * 4
    # channel-major rows: X[n].reshape(3, 32, 32) is the image in CHW
    np.testing.assert_array_equal(X[5], _expected_row(pixels[("test", 1, 1)]))
    assert len(list(cache.glob("cifar10-jpeg-test-*.npz"))) == 1
    Xc, yc = load_cifar10("test", root, cache_dir=cache)  # now from the cache
    np.testing.assert_array_equal(X, Xc)
    np.testing.assert_array_equal(y, yc)
    Xl, yl = load_cifar10("test", root, limit=6, random_state=1, cache_dir=cache)
    Xn, yn = load_cifar10("test", root, limit=6, random_state=1, cache_dir=False)
    np.testing.assert_array_equal(Xl, Xn)  # a cached and an uncached subset agree
    assert np.bincount(yl).tolist() == [2, 2, 2]
    Xt, _ = load_cifar10("train", root, cache_dir=False)
    np.testing.assert_array_equal(Xt[0], _expected_row(pixels[("train", 0, 0)]))


def test_image_tree(tmp_path):
    arrs = {}
    for c in (0, 9):
        folder = tmp_path / "cifar10" / "train" / CIFAR10_CLASSES[c]
        folder.mkdir(parents=True)
        for i, arr in enumerate(_images(3, c)):
            (folder / f"{i}.png").write_bytes(_png(arr))
            arrs[(c, i)] = arr
    X, y = load_cifar10("train", tmp_path)
    assert y.tolist() == [0, 0, 0, 9, 9, 9]
    np.testing.assert_array_equal(X[4], _expected_row(arrs[(9, 1)]))
    X2, y2 = load_cifar10("train", tmp_path, limit=2, random_state=0)
    assert sorted(y2.tolist()) == [0, 9]


def _write_batches(folder, n):
    folder.mkdir(parents=True)
    rng = np.random.default_rng(0)
    batches = {}
    for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
        batch = {"data": rng.integers(0, 256, (n, 3072), dtype=np.uint8),
                 "labels": rng.integers(0, 10, n).tolist(), "batch_label": name}
        (folder / name).write_bytes(pickle.dumps(batch, protocol=2))
        batches[name] = batch
    return batches


def test_python_batches_through_the_restricted_unpickler(tmp_path):
    batches = _write_batches(tmp_path / "cifar-10-batches-py", 7)
    X, y = load_cifar10("train", tmp_path)
    assert X.shape == (35, 3072)
    np.testing.assert_array_equal(X[7:14] * 255, batches["data_batch_2"]["data"])
    assert y[7:14].tolist() == batches["data_batch_2"]["labels"]
    Xt, yt = load_cifar10("test", tmp_path)
    np.testing.assert_array_equal(np.rint(Xt * 255), batches["test_batch"]["data"])


class _Evil:
    def __reduce__(self):
        return (os.system, ("echo pwned",))


def test_restricted_unpickler_refuses_code(tmp_path):
    with pytest.raises(pickle.UnpicklingError, match="not allowed"):
        RestrictedUnpickler(io.BytesIO(pickle.dumps({"data": _Evil()}))).load()
    folder = tmp_path / "cifar-10-batches-py"
    folder.mkdir()
    (folder / "test_batch").write_bytes(pickle.dumps({"data": _Evil(), "labels": []}))
    with pytest.raises(ImageSourceError, match=r"test_batch is damaged \(global .*system is not allowed\)"):
        load_cifar10("test", tmp_path)
    # numpy arrays of every protocol still load
    arr = np.arange(12, dtype=np.int16).reshape(3, 4)
    for protocol in (2, 4, 5):
        out = RestrictedUnpickler(io.BytesIO(pickle.dumps(arr, protocol=protocol))).load()
        np.testing.assert_array_equal(out, arr)


def test_missing_cifar_says_where_it_looked(tmp_path):
    with pytest.raises(FileNotFoundError, match="cifar10-jpeg.tar.gz"):
        load_cifar10("train", tmp_path)


def test_download_extracts_the_python_batches(tmp_path, monkeypatch):
    """download=True, offline: a file:// archive shaped like cifar-10-python.tar.gz."""
    import hashlib

    import bpetopics.images.cifar as cifar

    src = tmp_path / "src"
    batches = _write_batches(src / "cifar-10-batches-py", 3)
    archive = tmp_path / "cifar-10-python.tar.gz"
    with tarfile.open(archive, "w:gz") as tf:
        tf.add(src / "cifar-10-batches-py", arcname="cifar-10-batches-py")
    monkeypatch.setattr(cifar, "CIFAR10_URL", f"file://{archive}")
    monkeypatch.setattr(cifar, "CIFAR10_MD5", hashlib.md5(archive.read_bytes()).hexdigest())
    root = tmp_path / "root"
    X, y = load_cifar10("test", root, download=True)
    assert y.tolist() == batches["test_batch"]["labels"]
    assert (root / "cifar-10-batches-py" / "data_batch_5").is_file()


def _one_line(exc_info, *fragments):
    message = str(exc_info.value)
    assert message and "\n" not in message, message
    for fragment in fragments:
        assert fragment in message, message


def test_damaged_python_batches_are_one_line_naming_the_file(tmp_path):
    folder = tmp_path / "cifar-10-batches-py"
    batches = _write_batches(folder, 7)
    data = (folder / "data_batch_3").read_bytes()
    (folder / "data_batch_3").write_bytes(data[:len(data) // 2])                  # cut short
    with pytest.raises(ImageSourceError) as exc_info:
        load_cifar10("train", tmp_path)
    _one_line(exc_info, "data_batch_3 is damaged", "download=True")
    (folder / "data_batch_3").write_bytes(np.random.default_rng(1).integers(0, 256, 4000, np.uint8).tobytes())
    with pytest.raises(ImageSourceError) as exc_info:                                  # random bytes
        load_cifar10("train", tmp_path)
    _one_line(exc_info, "data_batch_3 is damaged")
    short = dict(batches["test_batch"], labels=batches["test_batch"]["labels"][:-1])   # a label missing
    (folder / "test_batch").write_bytes(pickle.dumps(short, protocol=2))
    with pytest.raises(ImageSourceError) as exc_info:
        load_cifar10("test", tmp_path)
    _one_line(exc_info, "test_batch holds 7 images and 6 labels")


def test_a_damaged_tarball_or_image_is_one_line_and_a_damaged_cache_is_rebuilt(tmp_path):
    root, cache = tmp_path / "data", tmp_path / "cache"
    (root / "cifar10").mkdir(parents=True)
    tar = root / "cifar10" / "cifar10-jpeg.tar.gz"
    _write_tar(tar, 2)
    X, y = load_cifar10("test", root, cache_dir=cache)
    (cached,) = cache.glob("*.npz")
    cached.write_bytes(cached.read_bytes()[:100])                  # a damaged cache is decoded again
    Xc, yc = load_cifar10("test", root, cache_dir=cache)
    np.testing.assert_array_equal(X, Xc)
    np.testing.assert_array_equal(y, yc)
    data = tar.read_bytes()
    tar.write_bytes(data[:len(data) // 2])
    with pytest.raises(ImageSourceError) as exc_info:
        load_cifar10("train", root, cache_dir=False)
    _one_line(exc_info, "cifar10-jpeg.tar.gz is damaged", "intact copy")
    tree = tmp_path / "tree" / "train" / "cat"
    tree.mkdir(parents=True)
    (tree / "0.png").write_bytes(_png(_images(1, 0)[0]))
    (tree / "1.png").write_bytes(b"not an image")
    with pytest.raises(ImageSourceError) as exc_info:
        load_cifar10("train", tmp_path / "tree")
    _one_line(exc_info, "1.png is damaged", "remove the file")
