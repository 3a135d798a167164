"""Image data sets for the Table 1 experiments: MNIST, binarised MNIST, scaled MNIST.

CIFAR-10 lives in :mod:`bpetopics.images.cifar` and is re-exported here, so every
loader is reachable as ``bpetopics.images.datasets.load_*``.

Conventions shared by every loader
----------------------------------
- Images come back as a float32 array of shape (N, D) with values in [0, 1]
  (D = 784 for MNIST, 3072 for CIFAR-10) and integer labels of shape (N,) (int64).
- ``data_root`` defaults to the environment variable ``BPETOPICS_DATA``, else
  ``~/.cache/bpetopics``. Loaders look for the files in the usual layouts under it
  (torchvision's ``ROOT/MNIST/raw/*.gz``, also ``ROOT/mnist/MNIST/raw``, and the raw
  files directly in ``ROOT``); ``.gz`` or uncompressed IDX files both work.
- ``download=True`` fetches missing files from the standard URLs into ``data_root``
  (checked by md5). Nothing is ever downloaded unless asked.
- ``limit`` keeps a class-balanced random subset of that many images (seeded by
  ``random_state``), returned in the original order. Randomised transforms (scaling,
  dynamic binarisation) are drawn for the *whole* split first, so an image gets the
  same factor / sample whatever ``limit`` is.
- Seeds: ``random_state`` is an int (or None for fresh entropy). Each split and each
  use (subset, transform) gets its own stream, ``np.random.default_rng([seed, split,
  use])``, so the train and test factors are independent even with the same seed.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np

from bpetopics.images.loading import (
    ImageSourceError, balanced_subset, check_split, default_data_root, download_file, reading, split_rng,
)
from bpetopics.images.cifar import CIFAR10_CLASSES, load_cifar10

__all__ = [
    "default_data_root",
    "balanced_subset",
    "read_idx",
    "load_mnist",
    "binarize",
    "load_binarized_mnist",
    "scale_images",
    "load_scaled_mnist",
    "load_cifar10",
    "CIFAR10_CLASSES",
]

MNIST_FILES = {
    "train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
    "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"),
}
# md5 of the .gz files as published (the same values torchvision checks).
MNIST_MD5 = {
    "train-images-idx3-ubyte.gz": "f68b3c2dcbeaaa9fbdd348bbdeb94873",
    "train-labels-idx1-ubyte.gz": "d53e105ee54ea40749a09fcbcd1e9432",
    "t10k-images-idx3-ubyte.gz": "9fb629c4189551a2d022fa330f9573f3",
    "t10k-labels-idx1-ubyte.gz": "ec29112dd5afa0611ce80d1b7f02629c",
}
MNIST_MIRRORS = (
    "https://ossci-datasets.s3.amazonaws.com/mnist/",
    "http://yann.lecun.com/exdb/mnist/",
)


# --------------------------------------------------------------------------- MNIST
#: What a message about a damaged MNIST file tells the user to do.
MNIST_FIX = ("replace it with the published file: delete it and load with download=True "
             "(bpetopics.images.load_mnist), or copy an intact one there")


def read_idx(path, fix: str = MNIST_FIX) -> np.ndarray:
    """Parse an IDX file (``.gz`` or raw): big-endian magic, dims, then uint8 data.

    ImageSourceError (one line naming the file and ``fix``) for a file that cannot be
    read (a truncated gzip), is not an unsigned-byte IDX file, or holds more or fewer
    values than its header says.
    """
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    with reading(path, fix):
        with opener(path, "rb") as fh:
            data = fh.read()
    magic = int.from_bytes(data[0:4], "big")
    ndim = magic & 0xFF
    if len(data) < 4 or magic >> 8 != 0x08 or not 1 <= ndim <= 4:  # 0x08 = unsigned byte, MNIST's type
        raise ImageSourceError(f"{path} is not an unsigned-byte IDX file (magic {magic:#010x}): {fix}")
    offset = 4 + 4 * ndim
    shape = tuple(int.from_bytes(data[4 + 4 * i: 8 + 4 * i], "big") for i in range(ndim))
    size = int(np.prod(shape, dtype=object))
    if len(data) != offset + size:
        raise ImageSourceError(f"{path} holds {max(len(data) - offset, 0):,} bytes of values where its header "
                               f"says {size:,} (shape {shape}; truncated or damaged): {fix}")
    arr = np.frombuffer(data, dtype=np.uint8, count=size, offset=offset)
    return arr.reshape(shape)


def _mnist_dirs(root: Path):
    return [root / "MNIST" / "raw", root / "mnist" / "MNIST" / "raw", root / "mnist", root]


def _find_idx(root: Path, stem: str) -> Path | None:
    for d in _mnist_dirs(root):
        for name in (stem + ".gz", stem):
            if (d / name).is_file():
                return d / name
    return None


def _download_mnist(root: Path) -> None:
    raw = root / "MNIST" / "raw"
    for name, md5 in MNIST_MD5.items():
        if _find_idx(root, name[:-3]) is None:
            download_file([m + name for m in MNIST_MIRRORS], raw / name, md5)


def load_mnist(split="train", data_root=None, *, limit=None, random_state=0,
               download=False):
    """MNIST as (X, y): X float32 (N, 784) in [0, 1] (pixel / 255), y int64 (N,).

    Train has 60,000 images, test 10,000. ``limit`` keeps a class-balanced seeded
    subset (see the module docstring).
    """
    check_split(split)
    root = default_data_root(data_root)
    img_stem, lab_stem = MNIST_FILES[split]
    if download and (_find_idx(root, img_stem) is None or _find_idx(root, lab_stem) is None):
        _download_mnist(root)
    img_path, lab_path = _find_idx(root, img_stem), _find_idx(root, lab_stem)
    if img_path is None or lab_path is None:
        raise FileNotFoundError(
            f"MNIST {split} files not found under {root} (looked in "
            f"{', '.join(str(d) for d in _mnist_dirs(root))}); pass download=True, "
            "or set data_root / $BPETOPICS_DATA")
    images, labels = read_idx(img_path), read_idx(lab_path)
    if images.ndim != 3 or images.shape[1:] != (28, 28):
        raise ImageSourceError(f"{img_path} holds an array of shape {images.shape}, not 28 x 28 images: {MNIST_FIX}")
    if labels.ndim != 1 or (labels.size and labels.max() > 9):
        raise ImageSourceError(f"{lab_path} does not hold digit labels 0-9 (shape {labels.shape}): {MNIST_FIX}")
    if images.shape[0] != labels.shape[0]:
        raise ImageSourceError(f"{img_path} holds {images.shape[0]:,} images but {lab_path} {labels.shape[0]:,} "
                               f"labels: {MNIST_FIX}")
    idx = balanced_subset(labels, limit, split_rng(random_state, split, 0))
    X = images.reshape(images.shape[0], -1)[idx].astype(np.float32) / np.float32(255.0)
    return X, labels[idx].astype(np.int64)


# ------------------------------------------------------------------ binarised MNIST
def binarize(X, method="threshold", *, threshold=0.5, random_state=None) -> np.ndarray:
    """Binarise intensities in [0, 1] to float32 {0, 1}.

    ``method='threshold'``: x > threshold (fixed, deterministic: the default, so a
    held-out set is the same for every model). ``method='sample'``: dynamic
    binarisation, x_d ~ Bernoulli(intensity_d), drawn with ``random_state`` (an int,
    a numpy Generator, or None).
    """
    X = np.asarray(X, dtype=np.float32)
    if method == "threshold":
        return (X > threshold).astype(np.float32)
    if method == "sample":
        rng = random_state if isinstance(random_state, np.random.Generator) else (
            np.random.default_rng(random_state))
        return (rng.random(X.shape, dtype=np.float32) < X).astype(np.float32)
    raise ValueError(f"method must be 'threshold' or 'sample', got {method!r}")


def load_binarized_mnist(split="train", data_root=None, *, method="threshold",
                         threshold=0.5, limit=None, random_state=0, download=False):
    """Binarised MNIST as (X, y), X float32 {0, 1} (N, 784).

    Default: fixed threshold 0.5. ``method='sample'`` draws each pixel from
    Bernoulli(intensity), seeded per split (the whole split is sampled, then subset).
    """
    X, y = load_mnist(split, data_root, download=download)
    Xb = binarize(X, method, threshold=threshold, random_state=split_rng(random_state, split, 1))
    idx = balanced_subset(y, limit, split_rng(random_state, split, 0))
    return Xb[idx], y[idx]


# --------------------------------------------------------------------- scaled MNIST
def scale_images(X, s_max, random_state=None):
    """Multiply each image by its own factor s_n ~ U(-s_max, s_max).

    Returns ``(X_scaled, factors)``; X_scaled is float32 (N, D), factors float32 (N,).
    """
    if s_max <= 0:
        raise ValueError("s_max must be positive")
    X = np.asarray(X, dtype=np.float32)
    rng = random_state if isinstance(random_state, np.random.Generator) else (
        np.random.default_rng(random_state))
    factors = rng.uniform(-s_max, s_max, size=X.shape[0]).astype(np.float32)
    return X * factors[:, None], factors


def load_scaled_mnist(split="train", data_root=None, *, s_max=2.0, limit=None,
                      random_state=0, download=False):
    """Scaled MNIST (the paper's Sec. 5) as (X, y, factors).

    Each image in [0, 1] is multiplied by s_n ~ U(-s_max, s_max), so X lies in
    [-s_max, s_max]. The paper does not state its s_max; 2.0 is our default.
    Factors are drawn for the whole split (seeded per split), then subset.
    """
    X, y = load_mnist(split, data_root, download=download)
    Xs, factors = scale_images(X, s_max, random_state=split_rng(random_state, split, 2))
    idx = balanced_subset(y, limit, split_rng(random_state, split, 0))
    return Xs[idx], y[idx], factors[idx]
